//! A long session's first assemble (ingest everything, then fold inside the lock) stays linear
//! in the history: 100,000 messages fold in seconds even in a debug build. The fold-record
//! builder and pairing repair were quadratic (109 s at 100,000 messages in release wasm).

mod engine_support;

use cachefold::config::Config;
use cachefold::engine::Session;
use engine_support::*;

fn history(n: usize) -> Vec<String> {
    let body = "fn x() { let y = 42; }\n".repeat(60);
    let mut out = Vec::with_capacity(n);
    let mut k = 0;
    while out.len() < n {
        let id = format!("call_{k}");
        let ts = T0 + 10 * k as u64;
        let path = format!("src/module_{}.rs", k % 37);
        out.push(user(
            &format!("step {k}: please look at {path} and fix the failing test {k}"),
            ts,
        ));
        out.push(calls(&[(&id, "read", &path)], ts + 1));
        out.push(result(
            &id,
            "read",
            &format!("// file body {k}\n{body}"),
            ts + 2,
        ));
        out.push(assistant(
            &format!("Done with step {k}; the fix is in place and tests pass."),
            ts + 3,
        ));
        k += 1;
    }
    out.truncate(n);
    out
}

#[test]
fn first_assemble_of_100k_messages_folds_in_linear_time() {
    let n: usize = std::env::var("CACHEFOLD_FOLD_SCALING_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100_000);
    let budget: u64 = std::env::var("CACHEFOLD_FOLD_SCALING_BUDGET")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000_000);
    let msgs = history(n);
    let mut s = Session::new(Config::default(), "long");
    let p = shim(&mut s, &msgs, Some("deepseek-v4-flash"), Some(budget));
    let report = p.report;
    assert_eq!(report.folds.len(), 1, "{report:?}");
    assert!(report.tokens_after < budget);
    assert!(p.order.len() + p.synthetic.len() < 100);
}
