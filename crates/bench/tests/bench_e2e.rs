//! The whole bench, end to end: the binary on the demo session (o200k, so no download is
//! needed), and the library on a fixture. Checks determinism, report shape and metric identities.

use cachefold_bench::bench::{self, cache, prefix, run, tokenizer::Tokenizer};
use cachefold_bench::replay::transcript::parse_auto;
use std::process::Command;

fn out_dir(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("cachefold-bench-e2e-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn binary_demo_is_deterministic_and_complete() {
    let dir = out_dir("demo");
    let run_once = |tag: &str| {
        let json = dir.join(format!("{tag}.json"));
        let svg = dir.join(format!("{tag}.svg"));
        let out = Command::new(env!("CARGO_BIN_EXE_cachefold-bench"))
            .args([
                "--demo",
                "--o200k",
                "--quiet",
                "--strategy",
                "S0,S1a,S2f,S3",
                "--window",
                "200000",
                "--json",
            ])
            .arg(&json)
            .arg("--svg")
            .arg(&svg)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        (
            String::from_utf8(out.stdout).unwrap(),
            std::fs::read_to_string(json).unwrap(),
            std::fs::read_to_string(svg).unwrap(),
        )
    };
    let (md1, json1, svg1) = run_once("a");
    let (_, json2, svg2) = run_once("b");
    assert_eq!(json1, json2, "same input, same bytes");
    assert_eq!(svg1, svg2);
    for row in [
        "| S0 naive full history |",
        "| S1a OpenClaw legacy",
        "| S2f ContextFold-like",
        "| S3 cachefold",
    ] {
        assert!(md1.contains(row), "missing {row} in\n{md1}");
    }
    assert!(md1.contains("tokenizer `o200k`"));
    assert!(svg1.starts_with("<svg") && svg1.trim_end().ends_with("</svg>"));
    assert_eq!(svg1.matches("<path").count(), 8, "4 strategies × 2 panels");
    let v: serde_json::Value = serde_json::from_str(&json1).unwrap();
    let totals = v["totals"].as_array().unwrap();
    assert_eq!(totals.len(), 4);
    assert!(
        v["header"]["sessions"][0]["calls"].as_u64().unwrap() >= 150,
        "the demo has ≥ 150 calls"
    );
    let s0 = &totals[0];
    assert_eq!(s0["strategy"], "S0");
    assert!((s0["derived"]["costVsS0"].as_f64().unwrap() - 1.0).abs() < 1e-12);
    assert_eq!(
        s0["derived"]["recall"].as_f64().unwrap(),
        1.0,
        "S0 keeps everything: R = 1 by construction"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn binary_rejects_bad_arguments() {
    for args in [
        vec!["--strategy", "S9"],
        vec!["--price", "free"],
        vec!["--cache", "lru"],
        vec!["--bogus"],
        vec!["/nonexistent/session.jsonl"],
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_cachefold-bench"))
            .args(&args)
            .arg("--o200k")
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
    }
}

#[test]
fn library_metrics_identities_on_a_fixture() {
    let tok = Tokenizer::o200k().unwrap();
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/claude_code_small.jsonl"
    ))
    .unwrap();
    let t = parse_auto("cc.jsonl", &text).unwrap();
    let prep = run::prepare(&tok, "cc", &t);
    let glue = run::Glue::new(&tok);
    let sp = run::static_prefix(&tok, prefix::Profile::Pi);
    let opts = run::Options {
        window: 1_000_000,
        cache: cache::Params::ds_strict(),
        price: "deepseek-flash-peak".into(),
        warm_static: false,
        price_row: None,
    };
    for id in bench::ALL_STRATEGIES {
        let mut s = bench::strategy(id).unwrap();
        let mut calls = 0;
        let r = run::run_job(&tok, &glue, &sp, &prep, s.as_mut(), &opts, &mut |k| {
            calls = k
        });
        let m = &r.metrics;
        assert_eq!(calls, 4);
        assert_eq!(m.calls, 4);
        assert_eq!(m.hit_tokens + m.miss_tokens, m.prompt_tokens, "{id}");
        assert_eq!(
            m.ceiling_tokens + m.remainder_tokens + m.novel_tokens,
            m.prompt_tokens,
            "{id}"
        );
        assert!(
            m.hit_tokens <= m.ceiling_tokens,
            "{id}: strict hits never beat the ceiling"
        );
        assert!(
            m.first_hit == 0 && m.first_prompt as usize > sp.tokens.len(),
            "{id}: a cold start"
        );
        assert!(
            m.cost.headline > 0.0 && (m.cost.headline - m.cost.flash_peak).abs() < 1e-12,
            "{id}"
        );
    }
}
