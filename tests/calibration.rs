//! Token-estimate calibration from committed turns: every call of a turn is a calibration point,
//! so a session whose first turn is a long tool loop estimates its prompts from its own usage
//! (not the default 0.3 tokens per weighted char) from the second turn on, and the
//! `minFoldTokens` gate judges regions by that estimate.

mod engine_support;

use cachefold::config::{Config, Mode};
use cachefold::engine::{AssemblePlan, CommitInput, Drive, Session};
use cachefold::tokens::weighted_chars;
use engine_support::*;
use serde_json::Value;

/// The provider's real prompt size in this test: 10,000 static tokens plus 0.15 tokens per
/// weighted char of messages (half the engine's default slope).
const STATIC: f64 = 10_000.0;
const SLOPE: f64 = 0.15;
/// Calls in the first turn, and chars of each tool result.
const CALLS: usize = 12;
const SIZE: usize = 8_000;

fn real_prompt(before: &[String]) -> u64 {
    let w: u64 = before.iter().map(|m| weighted_chars(m)).sum();
    (STATIC + SLOPE * w as f64).round() as u64
}

/// `msg` (an assistant message) with the usage the provider reports for a prompt of `before`.
fn with_usage(msg: &str, before: &[String]) -> String {
    let mut v: Value = serde_json::from_str(msg).unwrap();
    v["usage"]["input"] = real_prompt(before).into();
    v.to_string()
}

fn cfg() -> Config {
    Config {
        mode: Mode::Always,
        tail_tokens: 1_000,
        min_fold_tokens: 18_000,
        expected_remaining_calls: 100,
        ..Config::default()
    }
}

fn assemble(s: &mut Session, msgs: &[String]) -> AssemblePlan {
    s.drive(
        input(msgs, &[], DS, Some(1_000_000)),
        Drive::Assemble,
        |i| msgs[i as usize].clone(),
    )
    .expect("assemble")
    .plan
}

/// One committed turn of `CALLS` tool calls reading `SIZE` chars each, then a final answer.
/// `per_call`: the host re-assembles before every call (`ownsCompaction`), else it assembles
/// once and appends the turn's messages itself. Returns the history with the next user prompt.
fn long_first_turn(s: &mut Session, per_call: bool) -> Vec<String> {
    let mut msgs = vec![user("please refactor the parser", T0)];
    let p = assemble(s, &msgs[..0]);
    assert!(p.report.folds.is_empty());
    for c in 0..CALLS {
        let ts = T0 + 1 + 3 * c as u64;
        if per_call && c > 0 {
            let p = assemble(s, &msgs);
            assert!(p.report.folds.is_empty(), "call {c}: {:?}", p.report.fold);
        }
        let id = format!("call_{c}");
        let path = format!("src/f{c}.rs");
        msgs.push(with_usage(&calls(&[(&id, "read", &path)], ts), &msgs));
        let body: String = format!("fn item_{c}() {{}} ")
            .repeat(SIZE / 16 + 1)
            .chars()
            .take(SIZE)
            .collect();
        msgs.push(result(&id, "read", &body, ts + 1));
    }
    if per_call {
        assert!(assemble(s, &msgs).report.folds.is_empty());
    }
    msgs.push(with_usage(&assistant("done", T0 + 100), &msgs));
    let c = CommitInput {
        advancement_key: "t1".into(),
        messages: msgs.clone(),
        now_ms: (T0 + 101) as f64,
        context_window: None,
    };
    s.commit_turn(&c).expect("commit");
    msgs.push(user("now add tests", T0 + 60_000));
    msgs
}

fn check(per_call: bool) {
    let mut s = Session::new(cfg(), "s1");
    let msgs = long_first_turn(&mut s, per_call);
    let st = s.view().stats();
    let cal = &st["calibration"];
    assert_eq!(cal["samples"], CALLS as u64 + 1, "one point per call");
    assert_eq!(cal["trusted"], true, "calibrated after the first turn");
    let b = cal["tokensPerWeightedChar"].as_f64().unwrap();
    assert!((b - SLOPE).abs() < 0.1 * SLOPE, "slope {b}");

    // The region before the tail is ~88K weighted chars: ~26.5K tokens at the default slope
    // (one point per turn: the gate passed and a priced fold f1 over [3, 25) was admitted),
    // ~13K real, under minFoldTokens.
    let p = assemble(&mut s, &msgs[..msgs.len() - 1]);
    assert!(p.report.folds.is_empty(), "{:?}", p.report.fold);
    let why = p.report.skipped.clone().unwrap_or_default();
    assert!(why.contains("< minFoldTokens"), "{why}");
    // `estimatedTokens` counts the messages only.
    let real = real_prompt(&msgs[..msgs.len() - 1]) as f64 - STATIC;
    let est = p.estimated_tokens as f64;
    assert!(
        (est - real).abs() < 0.05 * real,
        "estimate {est} vs real {real}"
    );
}

/// Regression (bench session entireio bc_b1ad8ffbac, 1.105x legacy on DeepSeek): one
/// calibration point per committed turn left the session on the default slope through its
/// second turn, which over-estimated a ~20K-token region as 26K and admitted a fold under
/// `minFoldTokens` that cost more than it saved.
#[test]
fn a_long_first_turn_calibrates_the_estimate_when_the_host_assembles_once() {
    check(false);
}

#[test]
fn a_long_first_turn_calibrates_the_estimate_when_the_host_assembles_every_call() {
    check(true);
}

/// A screenshot (about 1.4 MB of base64) in a user message and in a tool result weighs one image
/// each, not 1.4 million chars: no fold of a prompt that fits, and both images reach the model
/// in the turn they arrive and on later turns.
#[test]
fn screenshots_count_as_images_not_as_their_base64() {
    let data = "iVBORw0KGgo".repeat(130_000);
    let shot = |role_user: bool, ts: u64| -> String {
        let img = serde_json::json!({"type": "image", "data": data, "mimeType": "image/png"});
        if role_user {
            serde_json::json!({"role": "user", "content": [{"type": "text", "text": "what is wrong on this page?"}, img], "timestamp": ts})
        } else {
            serde_json::json!({"role": "toolResult", "toolCallId": "call_shot", "toolName": "browser", "content": [{"type": "text", "text": "screenshot taken"}, img], "isError": false, "timestamp": ts})
        }
        .to_string()
    };
    let mut s = Session::new(cfg(), "s-shots");
    let mut msgs = Vec::new();
    for k in 0..3 {
        turn(&mut msgs, k, "src/a.rs", 2_000);
    }
    let ts = T0 + 10 * 60_000;
    msgs.push(shot(true, ts));
    msgs.push(calls(
        &[("call_shot", "browser", "http://localhost:3000")],
        ts + 1,
    ));
    msgs.push(shot(false, ts + 2));
    let images = msgs.len() - 3;
    let budget = Some(60_000);
    for extra in 0..3 {
        if extra > 0 {
            turn(&mut msgs, 10 + extra, "src/b.rs", 2_000);
        }
        let p = shim(&mut s, &msgs, Some("anthropic/claude-sonnet-4-6"), budget);
        assert!(
            p.report.folds.is_empty(),
            "turn +{extra}: folded {:?}",
            p.report.folds
        );
        assert!(
            p.estimated_tokens < 20_000,
            "turn +{extra}: estimate {} for ~8K tokens of text and two images",
            p.estimated_tokens
        );
        let out = resolve(&p, &msgs);
        for i in [images, images + 2] {
            assert!(
                out.contains(&msgs[i]),
                "turn +{extra}: image message {i} not sent as it was"
            );
        }
    }
}
