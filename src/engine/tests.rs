use super::history::bound_args;
use super::policy::tails_w;
use super::state::MsgRecord;
use super::*;
use crate::config::Mode;
use crate::fold;
use crate::pairing::Shape;
use crate::pairing::ShapeRole;
use serde_json::Value;

/// A reservation that cannot be had (more than the address space) is skipped, never a
/// panic or an abort; small ingests reserve nothing.
#[test]
fn reserve_heap_never_fails() {
    reserve_heap(usize::MAX / 2);
    reserve_heap(usize::MAX);
    reserve_heap(RESERVE_FROM_BYTES - 1);
    reserve_heap(RESERVE_FROM_BYTES);
}

#[test]
fn tails_match_span_sums() {
    let recs: Vec<MsgRecord> = (0..9u64)
        .map(|w| MsgRecord {
            h: crate::record::MsgHash::default(),
            w: w * w + 1,
            shape: Shape::default(),
            ts: None,
            protected: false,
            digest: Digest::default(),
            q: None,
        })
        .collect();
    for to in [0, 4, 9, 20] {
        for cuts in [vec![], vec![0], vec![1, 3, 3, 8], vec![2, 5, 12, 30]] {
            let want: Vec<u64> = cuts.iter().map(|&c| fold::span_w(&recs, c, to)).collect();
            assert_eq!(tails_w(&recs, &cuts, to), want, "to {to} cuts {cuts:?}");
        }
    }
}

/// `expected_calls` on every assemble used to count the assistant records of the whole
/// history (a 100K-call replay spent a quarter of its time there). Its answer is capped, so
/// it now stops where the answer is known: the same answer as the full count at every size
/// (the speed is the replay bench's, `tests/js/replay-scale.mjs`, not a timed test).
#[test]
fn expected_calls_stops_counting_at_its_cap() {
    let rec = |role: ShapeRole| MsgRecord {
        h: crate::record::MsgHash::default(),
        w: 1,
        shape: Shape {
            role,
            ..Shape::default()
        },
        ts: None,
        protected: false,
        digest: Digest::default(),
        q: None,
    };
    let full = |s: &Session| {
        let a =
            s.st.records
                .iter()
                .filter(|r| r.shape.role == ShapeRole::Assistant)
                .count() as u64;
        s.st.totals.calls.max(a).clamp(4, 200) as f64
    };
    let mut s = Session::new(Config::default(), "t");
    for n in 0..700u64 {
        // Assistant, result, result: the 200th assistant is record 597.
        let role = if n % 3 == 0 {
            ShapeRole::Assistant
        } else {
            ShapeRole::ToolResult
        };
        s.st.records.push(rec(role));
        for calls in [0, 3, 150, 199, 200, 5_000] {
            s.st.totals.calls = calls;
            assert_eq!(s.view().expected_calls(), full(&s), "n {n} calls {calls}");
        }
    }
}

#[test]
fn globs() {
    assert!(glob_match("*deepseek*", "DeepSeek/deepseek-flash"));
    assert!(glob_match("deepseek-*", "deepseek-v4-pro"));
    assert!(!glob_match("deepseek-*", "openai/gpt-5"));
    assert!(glob_match("*", ""));
    assert!(glob_match("a*b*c", "aXbYc"));
    assert!(!glob_match("a*b*c", "aXbY"));
}

#[test]
fn gating() {
    let mut cfg = Config::default();
    assert!(model_managed(&cfg, Some("deepseek/deepseek-flash")));
    assert!(!model_managed(&cfg, Some("mistral/mistral-large")));
    assert!(!model_managed(&cfg, None));
    cfg.mode = Mode::Always;
    assert!(model_managed(&cfg, None));
    cfg.mode = Mode::Off;
    assert!(!model_managed(&cfg, Some("deepseek-flash")));
}

#[test]
fn bounded_args_drop_bodies() {
    let big = "x".repeat(600);
    let v = bound_args(&json!({"path": "a.md", "content": big, "n": 3, "o": {"x": 1}}));
    assert_eq!(v, json!({"path": "a.md", "n": 3}));
    assert_eq!(bound_args(&json!("str")), Value::Null);
}

/// The snapshot's bytes are the snapshot's text, with no record, one, and more than the buffer
/// sized up front holds.
#[test]
fn snapshot_bytes_are_the_snapshot_text() {
    let mut s = Session::new(Config::default(), "t");
    for n in 0..3u64 {
        assert_eq!(
            s.try_snapshot_bytes().unwrap(),
            s.try_snapshot().unwrap().into_bytes()
        );
        for _ in 0..n {
            let mut r = MsgRecord {
                h: crate::record::MsgHash::from_hex(&"0".repeat(40)).unwrap(),
                w: n,
                ..Default::default()
            };
            // Longer than the per-record estimate: the buffer grows.
            r.digest.text = "é\"\n".repeat(SNAPSHOT_BYTES_PER_RECORD * 10).into();
            s.st.records.push(r);
        }
    }
    let sized = 3 * SNAPSHOT_BYTES_PER_RECORD + SNAPSHOT_BYTES_BASE;
    assert!(s.try_snapshot_bytes().unwrap().len() > sized);
}
