//! Strict pairing of the tool-loop echo (issue 10, replaying the entireio-cli corpus).
//!
//! With `ownsCompaction`, OpenClaw re-assembles inside the tool loop with the context we
//! returned plus what it appended. When the user typed while parallel tools ran, what it
//! appends is `user text, result of the second call`: the last message of that history is a
//! tool result separated from its call. The echo answer must pair strictly like every other
//! output (found as entireio-cli/b7_bf94398dc9_1: one assistant message with five calls, three
//! results, the user's text, two more results).

mod engine_support;

use cachefold::config::Config;
use cachefold::engine::Session;
use cachefold::message::Message;
use cachefold::pairing::{self, Shape};
use engine_support::*;

fn strict(out: &[String]) -> Vec<pairing::Repair> {
    let shapes: Vec<Shape> = out
        .iter()
        .map(|j| Shape::of(&Message::from_json(j).unwrap()))
        .collect();
    pairing::violations(&shapes)
}

#[test]
fn echoed_context_with_a_result_after_the_users_text_pairs_strictly() {
    let cfg = Config {
        tail_tokens: 1_000,
        min_fold_tokens: 500,
        fold_record_budget: 4_000,
        expected_remaining_calls: 100,
        ..Config::default()
    };
    let mut s = Session::new(cfg, "echo");
    let mut msgs = Vec::new();
    for k in 0..3 {
        turn(&mut msgs, k, "a.txt", 3_000);
    }
    msgs.push(user("go", T0 + 500_000));
    msgs.push(calls(
        &[("t1", "read", "a"), ("t2", "read", "b")],
        T0 + 500_001,
    ));
    msgs.push(result("t1", "read", "one", T0 + 500_002));
    // First call of the turn the user's text starts: history ends inside the open group.
    let p = shim(&mut s, &msgs, DS, None);
    assert!(
        !p.report.folds.is_empty(),
        "the context holds a fold record"
    );
    let out = resolve(&p, &msgs);
    assert!(strict(&out).is_empty());
    // Tool-loop re-assembly: our context, the user's text, then the second result (last).
    let mut echo = out.clone();
    echo.push(user("and make sure this is tested", T0 + 500_003));
    echo.push(result("t2", "read", "two", T0 + 500_004));
    let p2 = shim(&mut s, &echo, DS, None);
    let out2 = resolve(&p2, &echo);
    let v = strict(&out2);
    assert!(v.is_empty(), "{v:?}");
    // Nothing dropped, our context unchanged, the repair declared.
    assert_eq!(out2[..out.len()], out[..]);
    assert!(out2.contains(echo.last().unwrap()));
    assert_eq!(p2.report.repairs.len(), 1);
    // Same input, same plan.
    let p3 = shim(&mut s, &echo, DS, None);
    assert_eq!((p3.order, p3.synthetic), (p2.order, p2.synthetic));
}
