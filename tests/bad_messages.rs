//! One host message the core cannot parse must not disable the session (issue 10, "nothing
//! stuck"): it is quarantined (hash of the exact bytes, weight, opaque or sanitised shape), the
//! rest of the history stays managed and keeps folding, and the host's object stays in the
//! output untouched.

mod engine_support;

use cachefold::engine::fingerprint::message_hash;
use cachefold::engine::{CommitInput, Session};
use cachefold::message::Message;
use cachefold::pairing::{self, Shape};
use engine_support::*;

/// A tool result whose text was cut inside an emoji, as `JSON.stringify` writes it.
fn lone_surrogate(id: &str, ts: u64) -> String {
    let good = result(id, "read", "cut here: XX", ts);
    good.replace("XX", "\\ud83d")
}

/// A tool result with `details` nested 130 deep (serde_json stops at 128).
/// A tool result whose `details.exitCode` (a member the core reads) is nested past serde_json's
/// limit. Deep values in members the core skips do not quarantine a message (src/message.rs).
fn deep_details(id: &str, ts: u64) -> String {
    let good = result(id, "read", "deep", ts);
    let nested = format!("{}\"x\"{}", "[".repeat(130), "]".repeat(130));
    format!(
        "{},\"details\":{{\"exitCode\":{nested}}}}}",
        &good[..good.len() - 1]
    )
}

/// Run a 40-turn session whose turn 2 has its tool result replaced by `bad` (or, with
/// `extra`, gets `bad` as an extra message after the result); every turn must be managed,
/// folds must keep happening, and the bad message must be in the output or a folded range.
fn survives(label: &str, bad: impl Fn(&str, u64) -> String, extra: bool) {
    let mut s = Session::new(small(), "bad");
    let mut msgs: Vec<String> = Vec::new();
    let mut bad_index = None;
    let mut folds = 0;
    let mut quarantined = 0;
    let mut folded: Vec<(u32, u32)> = Vec::new();
    for k in 0..40usize {
        turn(&mut msgs, k, "a.txt", 2_000);
        if k == 2 {
            let n = msgs.len();
            let b = bad(&format!("call_{k}"), T0 + 2);
            if extra {
                msgs.insert(n - 1, b);
                bad_index = Some(n - 1);
            } else {
                msgs[n - 2] = b;
                bad_index = Some(n - 2);
            }
        }
        let need = s.need(msgs.len() as u32);
        let mut p = s
            .assemble(&input(&msgs, &need, DS, None))
            .unwrap_or_else(|e| panic!("{label}: turn {k}: {e}"));
        if p.need_full {
            p = s
                .assemble(&input(&msgs, &all(msgs.len()), DS, None))
                .unwrap_or_else(|e| panic!("{label}: turn {k} (full): {e}"));
        }
        assert!(!p.passthrough, "{label}: turn {k} passed through");
        assert!(p.report.managed, "{label}: turn {k}");
        folds += p.report.folds.len();
        quarantined += p.report.quarantined.len();
        for q in &p.report.quarantined {
            let bi = bad_index.unwrap();
            assert_eq!(q.index as usize, bi, "{label}");
            assert_eq!(
                q.hash,
                message_hash(&msgs[bi]),
                "{label}: hash of the exact bytes"
            );
        }
        for w in &p.fold_writes {
            folded.push((w.from, w.to));
        }
        // Host objects untouched; synthetic messages are valid JSON the host can parse.
        for syn in &p.synthetic {
            serde_json::from_str::<serde_json::Value>(syn)
                .unwrap_or_else(|e| panic!("{label}: synthetic message is not valid JSON: {e}"));
            assert!(
                !syn.contains("\\ud83d"),
                "{label}: lone surrogate in a record"
            );
        }
        let out = resolve(&p, &msgs);
        if let Some(bi) = bad_index {
            let present = p.order.contains(&(bi as i64));
            let in_fold = folded
                .iter()
                .any(|(a, b)| (*a as usize) <= bi && bi < (*b as usize));
            assert!(present || in_fold, "{label}: turn {k}: bad message lost");
            if present {
                assert!(out.contains(&msgs[bi]), "{label}: host bytes changed");
            }
        }
        // The output pairs strictly (the bad message is never taken for something it is not).
        let shapes: Vec<Shape> = out
            .iter()
            .map(|j| {
                cachefold::message::parse_host(j)
                    .message()
                    .map_or_else(Shape::other, Shape::of)
            })
            .collect();
        let v = pairing::violations(&shapes);
        assert!(v.is_empty(), "{label}: turn {k}: {v:?}");
        let c = s.commit_turn(&CommitInput {
            advancement_key: format!("t{k}"),
            messages: msgs[msgs.len() - 4..].to_vec(),
            now_ms: T0 as f64,
            context_window: None,
        });
        assert!(c.is_ok(), "{label}: commit {k}: {c:?}");
    }
    assert_eq!(quarantined, 1, "{label}: quarantined once");
    assert!(folds >= 3, "{label}: only {folds} folds");
    assert_eq!(s.view().stats()["quarantined"], 1, "{label}");
    // Restoring from the journal gives the same state.
    let (r, _) = Session::restore(small(), "bad", Some(&s.snapshot()), "").unwrap();
    assert_eq!(r.snapshot(), s.snapshot());
}

#[test]
fn lone_surrogate_in_a_tool_result_is_quarantined_and_folds_continue() {
    survives("surrogate", lone_surrogate, false);
}

#[test]
fn deeply_nested_details_are_quarantined_and_folds_continue() {
    survives("deep", deep_details, false);
}

#[test]
fn null_and_number_messages_are_quarantined_and_folds_continue() {
    survives("null", |_, _| "null".to_string(), true);
    survives("number", |_, _| "12345678901234567890".to_string(), true);
    // What the shim sends for a BigInt/cycle it could not stringify: a placeholder string.
    survives(
        "placeholder",
        |_, _| "\"[cachefold: unserializable]\"".to_string(),
        true,
    );
}

#[test]
fn quarantined_tool_result_keeps_its_pairing() {
    // The result with a lone surrogate still answers its call: no synthetic result, no orphan.
    let mut s = Session::new(small(), "pair");
    let mut msgs = Vec::new();
    turn(&mut msgs, 0, "a.txt", 100);
    msgs[2] = lone_surrogate("call_0", T0 + 2);
    msgs.push(user("next", T0 + 10));
    let p = shim(&mut s, &msgs, DS, None);
    assert!(p.report.repairs.is_empty(), "{:?}", p.report.repairs);
    assert_eq!(p.report.quarantined.len(), 1);
    assert_eq!(p.report.quarantined[0].reason, "lone_surrogate");
    let m = Message::from_json(&msgs[1]).unwrap();
    assert_eq!(m.tool_calls()[0].id, "call_0");
}

#[test]
fn compact_works_with_a_quarantined_message() {
    let mut s = Session::new(small(), "compact");
    let mut msgs = Vec::new();
    for k in 0..6 {
        turn(&mut msgs, k, "a.txt", 300);
    }
    msgs.insert(5, "null".into());
    let p = s
        .compact(&input(&msgs, &all(msgs.len()), DS, None), true)
        .expect("compact");
    assert!(p.report.fold.is_some(), "{:?}", p.report.skipped);
}
