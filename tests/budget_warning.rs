//! A prompt that stays over the whole budget after every possible fold (a huge result in the
//! current turn, which cannot be folded) is reported with a warning instead of silently.

mod engine_support;

use cachefold::config::Config;
use cachefold::engine::Session;
use engine_support::*;

const DS: Option<&str> = Some("deepseek-v4-flash");

#[test]
fn a_huge_result_in_the_current_turn_warns() {
    let mut s = Session::new(Config::default(), "huge");
    let mut msgs = Vec::new();
    for k in 0..6 {
        msgs.push(user(&format!("step {k}: look at src/m{k}.rs"), T0 + 10 * k));
        msgs.push(assistant(&format!("done {k}"), T0 + 10 * k + 1));
    }
    msgs.push(user("read the big log", T0 + 100));
    msgs.push(calls(&[("c1", "read", "big.log")], T0 + 101));
    msgs.push(result("c1", "read", &"x1 y2 z3 ".repeat(500_000), T0 + 102));
    let p = shim(&mut s, &msgs, DS, Some(100_000));
    let r = p.report;
    assert!(r.tokens_after > r.budget_tokens, "{r:?}");
    let w = r.warning.clone().expect("warning");
    assert!(
        w.contains("exceeds the budget of 100000 tokens even after folding"),
        "{w}"
    );
    assert!(
        w.contains(&format!("estimated prompt {} tokens", r.tokens_after)),
        "{w}"
    );
    let json = serde_json::to_value(&r.warning).unwrap();
    assert!(json.is_string());
}

#[test]
fn no_warning_within_budget() {
    let mut s = Session::new(Config::default(), "small");
    let mut msgs = Vec::new();
    for k in 0..6 {
        msgs.push(user(&format!("step {k}"), T0 + 10 * k));
        msgs.push(assistant(&format!("done {k}"), T0 + 10 * k + 1));
    }
    let p = shim(&mut s, &msgs, DS, Some(100_000));
    assert_eq!(p.report.warning, None);
    let text = serde_json::to_string(&p.report).unwrap();
    assert!(
        !text.contains("\"warning\""),
        "absent when there is nothing to say"
    );
}
