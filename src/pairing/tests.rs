use super::*;
use crate::Message;
use proptest::prelude::*;

fn kinds(r: &[Repair]) -> Vec<(&str, &str, usize)> {
    r.iter()
        .map(|x| (x.kind.as_str(), x.call_id.as_str(), x.position))
        .collect()
}

fn u() -> Shape {
    Shape::user()
}
fn a(ids: &[&str]) -> Shape {
    Shape::call(ids)
}
fn r(id: &str) -> Shape {
    Shape::result(id)
}

/// Checks every invariant of `repair` on one sequence.
fn check(seq: &[Shape]) {
    for open in [false, true] {
        let rep = repair(seq, open);
        let resolved = rep.resolve(seq);
        let v = violations_with(&resolved, open);
        assert!(
            v.is_empty(),
            "open={open} seq={seq:?}\nslots={:?}\nviolations={v:?}",
            rep.slots
        );
        if !open {
            assert!(violations(&resolved).is_empty());
        }
        let mut seen = vec![0u32; seq.len()];
        for s in &rep.slots {
            if let Slot::Orig(i) = s {
                seen[*i] += 1;
            }
        }
        assert!(
            seen.iter().all(|&c| c == 1),
            "positions not exactly once: {seen:?}"
        );
        let before = violations_with(seq, open);
        assert_eq!(
            before.is_empty(),
            rep.repairs.is_empty(),
            "seq={seq:?} before={before:?} repairs={:?}",
            rep.repairs
        );
        if before.is_empty() {
            let ident: Vec<Slot> = (0..seq.len()).map(Slot::Orig).collect();
            assert_eq!(rep.slots, ident);
        }
        // Every synthetic message is accounted for by a repair of the matching kind.
        let synth_results = rep
            .slots
            .iter()
            .filter(|s| matches!(s, Slot::SyntheticResult { .. }))
            .count();
        let synth_calls = rep
            .slots
            .iter()
            .filter(|s| matches!(s, Slot::SyntheticCall { .. }))
            .count();
        let missing = rep
            .repairs
            .iter()
            .filter(|x| x.kind == "missing_result")
            .count();
        let orphans = rep
            .repairs
            .iter()
            .filter(|x| x.kind == "orphan_result" || x.kind == "duplicate_result")
            .count();
        assert_eq!(synth_results, missing);
        assert_eq!(synth_calls, orphans);
        // Non-result messages keep their relative order.
        let anchors: Vec<usize> = rep
            .slots
            .iter()
            .filter_map(|s| match s {
                Slot::Orig(i) if seq[*i].role != ShapeRole::ToolResult => Some(*i),
                _ => None,
            })
            .collect();
        assert!(anchors.windows(2).all(|w| w[0] < w[1]));
    }
    if violations(seq).is_empty() {
        for i in cut_points(seq) {
            assert!(violations(&seq[..i]).is_empty(), "cut {i} head of {seq:?}");
            assert!(violations(&seq[i..]).is_empty(), "cut {i} tail of {seq:?}");
        }
    }
}

#[test]
fn valid_sequence_untouched() {
    let seq = vec![
        u(),
        a(&["x", "y"]),
        r("y"),
        r("x"),
        a(&[]),
        u(),
        a(&["z"]),
        r("z"),
        a(&[]),
    ];
    assert!(violations(&seq).is_empty());
    let rep = repair(&seq, false);
    assert!(rep.is_identity());
    assert_eq!(
        rep.slots,
        (0..seq.len()).map(Slot::Orig).collect::<Vec<_>>()
    );
    // Users, and assistants after complete groups (the long-tool-loop fold points).
    assert_eq!(cut_points(&seq), vec![0, 1, 4, 5, 6, 8]);
    check(&seq);
}

#[test]
fn missing_result_gets_synthetic_error() {
    let seq = vec![u(), a(&["x", "y"]), r("x"), u()];
    assert_eq!(kinds(&violations(&seq)), vec![("missing_result", "y", 1)]);
    let rep = repair(&seq, false);
    assert_eq!(
        rep.slots,
        vec![
            Slot::Orig(0),
            Slot::Orig(1),
            Slot::Orig(2),
            Slot::SyntheticResult {
                call_id: "y".into(),
                tool_name: "t".into()
            },
            Slot::Orig(3)
        ]
    );
    assert_eq!(kinds(&rep.repairs), vec![("missing_result", "y", 1)]);
    check(&seq);
}

#[test]
fn trailing_open_call_left_alone_only_when_asked() {
    let seq = vec![u(), a(&["x"])];
    assert!(repair(&seq, true).is_identity());
    assert!(violations_with(&seq, true).is_empty());
    let rep = repair(&seq, false);
    assert_eq!(kinds(&rep.repairs), vec![("missing_result", "x", 1)]);
    // An open group that is not last is always closed.
    let seq = vec![u(), a(&["x"]), u()];
    assert_eq!(
        kinds(&repair(&seq, true).repairs),
        vec![("missing_result", "x", 1)]
    );
    check(&seq);
}

#[test]
fn orphan_gets_synthetic_call_before_it() {
    let seq = vec![u(), r("ghost"), a(&[])];
    assert_eq!(
        kinds(&violations(&seq)),
        vec![("orphan_result", "ghost", 1)]
    );
    let rep = repair(&seq, false);
    assert_eq!(
        rep.slots,
        vec![
            Slot::Orig(0),
            Slot::SyntheticCall {
                call_id: "ghost".into(),
                tool_name: "t".into()
            },
            Slot::Orig(1),
            Slot::Orig(2)
        ]
    );
    check(&seq);
}

#[test]
fn orphan_inside_a_group_moves_after_the_run() {
    let seq = vec![u(), a(&["x", "y"]), r("x"), r("ghost"), r("y")];
    let rep = repair(&seq, false);
    assert_eq!(
        rep.slots,
        vec![
            Slot::Orig(0),
            Slot::Orig(1),
            Slot::Orig(2),
            Slot::Orig(4),
            Slot::SyntheticCall {
                call_id: "ghost".into(),
                tool_name: "t".into()
            },
            Slot::Orig(3)
        ]
    );
    assert_eq!(kinds(&rep.repairs), vec![("orphan_result", "ghost", 3)]);
    check(&seq);
}

#[test]
fn displaced_result_is_moved_to_its_call() {
    // A user message slipped between the call and its result.
    let seq = vec![u(), a(&["x"]), u(), r("x")];
    assert_eq!(
        kinds(&violations(&seq)),
        vec![("missing_result", "x", 1), ("moved_result", "x", 3)]
    );
    let rep = repair(&seq, false);
    assert_eq!(
        rep.slots,
        vec![Slot::Orig(0), Slot::Orig(1), Slot::Orig(3), Slot::Orig(2)]
    );
    assert_eq!(kinds(&rep.repairs), vec![("moved_result", "x", 3)]);
    // Result before its call.
    let seq = vec![u(), r("x"), a(&["x"]), u()];
    let rep = repair(&seq, false);
    assert_eq!(
        rep.slots,
        vec![Slot::Orig(0), Slot::Orig(2), Slot::Orig(1), Slot::Orig(3)]
    );
    check(&seq);
}

#[test]
fn duplicate_result_is_kept_and_reported() {
    let seq = vec![u(), a(&["x"]), r("x"), r("x"), u()];
    assert_eq!(kinds(&violations(&seq)), vec![("duplicate_result", "x", 3)]);
    let rep = repair(&seq, false);
    assert_eq!(
        rep.slots,
        vec![
            Slot::Orig(0),
            Slot::Orig(1),
            Slot::Orig(2),
            Slot::SyntheticCall {
                call_id: "x".into(),
                tool_name: "t".into()
            },
            Slot::Orig(3),
            Slot::Orig(4)
        ]
    );
    assert_eq!(kinds(&rep.repairs), vec![("duplicate_result", "x", 3)]);
    check(&seq);
}

#[test]
fn repeated_id_in_one_message_needs_two_results() {
    let seq = vec![u(), a(&["x", "x"]), r("x")];
    assert_eq!(kinds(&violations(&seq)), vec![("missing_result", "x", 1)]);
    check(&seq);
    assert!(violations(&[u(), a(&["x", "x"]), r("x"), r("x")]).is_empty());
}

#[test]
fn other_roles_break_groups() {
    let seq = vec![u(), a(&["x"]), Shape::other(), r("x")];
    assert!(!violations(&seq).is_empty());
    check(&seq);
}

#[test]
fn shape_of_real_messages() {
    let m = Message::from_json(
        r#"{"role":"assistant","content":[{"type":"text","text":"hi"},{"type":"toolCall","id":"c1","name":"read","arguments":{}},{"type":"toolCall","id":"c2","name":"exec","arguments":{}}]}"#,
    )
    .unwrap();
    let s = Shape::of(&m);
    assert_eq!(s.role, ShapeRole::Assistant);
    assert_eq!(*s.call_ids, ["c1", "c2"]);
    assert_eq!(*s.call_names, ["read", "exec"]);
    let rep = repair(&[Shape::user(), s.clone()], false);
    assert_eq!(
        rep.slots[3],
        Slot::SyntheticResult {
            call_id: "c2".into(),
            tool_name: "exec".into()
        }
    );
    let t = Message::from_json(
        r#"{"role":"toolResult","toolCallId":"c1","toolName":"read","content":"x"}"#,
    )
    .unwrap();
    assert_eq!(Shape::of(&t).result_id.as_deref(), Some("c1"));
    let t = Message::from_json(r#"{"role":"toolResult","content":"x"}"#).unwrap();
    assert_eq!(Shape::of(&t).result_id.as_deref(), Some(""));
    let f = Message::from_json(
        r#"{"role":"assistant","stopReason":"aborted","content":[{"type":"toolCall","id":"c9","name":"exec","arguments":{}}]}"#,
    )
    .unwrap();
    let fs = Shape::of(&f);
    assert_eq!(
        (fs.role, fs.has_calls()),
        (ShapeRole::Assistant, false),
        "failed turns are dropped by the host"
    );
    // Its recorded result becomes a self-contained orphan group; no synthetic result for c9.
    let r9 = Message::from_json(
        r#"{"role":"toolResult","toolCallId":"c9","toolName":"exec","content":"aborted"}"#,
    )
    .unwrap();
    let rep = repair(&[Shape::user(), fs.clone(), Shape::of(&r9)], false);
    assert_eq!(kinds(&rep.repairs), vec![("orphan_result", "c9", 2)]);
    assert!(repair(&[Shape::user(), fs], false).is_identity());
    let b = Message::from_json(r#"{"role":"bashExecution","command":"ls"}"#).unwrap();
    assert_eq!(Shape::of(&b).role, ShapeRole::Other);
    let u = Message::from_json(r#"{"role":"user","content":"q"}"#).unwrap();
    assert_eq!(Shape::of(&u).role, ShapeRole::User);
}

#[test]
fn synthetic_messages_have_openclaw_shape() {
    let r = synthetic_result_json("call_1", "read", 1_700_000_000_123.0);
    assert_eq!(
        r,
        r#"{"role":"toolResult","toolCallId":"call_1","toolName":"read","content":[{"type":"text","text":"[cachefold] tool result missing from history; the call's outcome is unknown."}],"isError":true,"timestamp":1700000000123}"#
    );
    let m = Message::from_json(&r).unwrap();
    assert_eq!(m.tool_call_id(), Some("call_1"));
    assert!(m.is_error());
    let c = synthetic_call_json("call_\"2", "exec", 5.5);
    let m = Message::from_json(&c).unwrap();
    let calls = m.tool_calls();
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].id, "call_\"2");
    assert_eq!(calls[0].name, "exec");
    assert_eq!(m.raw()["stopReason"], "toolUse");
    assert_eq!(m.raw()["model"], "cachefold-repair");
    assert_eq!(m.raw()["usage"]["cost"]["total"], 0);
    assert_eq!(m.timestamp(), Some(5.5));
    assert!(c.starts_with(r#"{"role":"assistant","content":[{"type":"toolCall","id":"call_\"2","name":"exec","arguments":{}}],"stopReason":"toolUse","timestamp":5.5,"api":"openai-completions","provider":"cachefold""#));
    assert!(synthetic_result_json("a", "b", f64::NAN).ends_with(r#""timestamp":0}"#));
}

#[test]
fn cut_points_skip_open_groups() {
    // A user message inside an open (broken) group is not a cut point.
    let seq = vec![u(), a(&["x"]), u(), r("x"), u()];
    assert_eq!(cut_points(&seq), vec![0, 1, 4]);
    assert_eq!(cut_points(&[]), Vec::<usize>::new());
}

/// Repair and validation are linear in the number of stray results: 200,000 results whose
/// calls come later (or never) were each a scan of the whole sequence before (about 10^10
/// steps here, minutes).
#[test]
fn pairing_200k_stray_results_is_linear() {
    let n = 100_000;
    let mut seq = Vec::with_capacity(4 * n);
    for i in 0..n {
        seq.push(r(&format!("late{i}")));
        seq.push(r(&format!("orphan{i}")));
        seq.push(u());
    }
    for i in 0..n {
        seq.push(Shape::call(&[&format!("late{i}")]));
    }
    let v = violations(&seq);
    // Each late call is also reported missing its result where it stands.
    assert_eq!(v.len(), 3 * n);
    assert_eq!(v.iter().filter(|x| x.kind == "moved_result").count(), n);
    let fixed = repair(&seq, false);
    assert_eq!(fixed.repairs.len(), 2 * n);
    assert!(violations(&fixed.resolve(&seq)).is_empty());
}

// ---- property tests ----------------------------------------------------------------

const IDS: &[&str] = &["a", "b", "c", "d", "e"];

/// Random record shapes: users (weight `user_weight`), others, calls of up to 3 of `ids`
/// (empty ones too), and results of one of `ids` or of `foreign` (a call never made).
pub(crate) fn shapes(
    ids: &'static [&'static str],
    user_weight: u32,
    foreign: &'static str,
) -> impl Strategy<Value = Shape> {
    prop_oneof![
        user_weight => Just(Shape::user()),
        1 => Just(Shape::other()),
        1 => Just(Shape::call(&[])),
        3 => proptest::collection::vec(0..ids.len(), 1..=3).prop_map(move |v| {
            let picked: Vec<&str> = v.into_iter().map(|i| ids[i]).collect();
            Shape::call(&picked)
        }),
        4 => (0..ids.len() + 1).prop_map(move |i| Shape::result(ids.get(i).copied().unwrap_or(foreign))),
    ]
}

fn shape_strategy() -> impl Strategy<Value = Shape> {
    shapes(IDS, 2, "foreign")
}

/// A valid sequence built from groups, so cut points are exercised on realistic input.
fn valid_strategy() -> impl Strategy<Value = Vec<Shape>> {
    let group = prop_oneof![
        Just(vec![Shape::user()]),
        Just(vec![Shape::other()]),
        Just(vec![Shape::call(&[])]),
        (
            proptest::collection::vec(0..IDS.len(), 1..=3),
            any::<bool>()
        )
            .prop_map(|(v, rev)| {
                let ids: Vec<&str> = v.into_iter().map(|i| IDS[i]).collect();
                let mut g = vec![Shape::call(&ids)];
                let mut res: Vec<Shape> = ids.iter().map(|i| Shape::result(i)).collect();
                if rev {
                    res.reverse();
                }
                g.extend(res);
                g
            }),
    ];
    proptest::collection::vec(group, 0..12).prop_map(|gs| gs.into_iter().flatten().collect())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    /// Pushing shapes one at a time gives, after every push, the cut points of the whole
    /// prefix, and `clean` says whether a user message appended there would be one.
    #[test]
    fn cut_scan_matches_cut_points_of_every_prefix(seq in proptest::collection::vec(shape_strategy(), 0..60)) {
        let mut scan = CutScan::default();
        for k in 0..=seq.len() {
            prop_assert_eq!(scan.len(), k);
            prop_assert_eq!(scan.cuts().to_vec(), cut_points_of(&seq[..k]));
            let mut with_user = seq[..k].to_vec();
            with_user.push(Shape::user());
            prop_assert_eq!(scan.clean(), cut_points_of(&with_user).last() == Some(&k));
            if let Some(s) = seq.get(k) {
                scan.push(s);
            }
        }
    }

    #[test]
    fn repair_always_yields_valid_sequences(seq in proptest::collection::vec(shape_strategy(), 0..16)) {
        check(&seq);
    }

    /// The linear repair and validation give exactly the answers of the quadratic ones,
    /// on short and long sequences (ids reused across groups, strays before and after
    /// their calls, duplicates, orphans, trailing open groups).
    #[test]
    fn linear_pairing_matches_the_quadratic_oracle(seq in proptest::collection::vec(shape_strategy(), 0..60), open in any::<bool>()) {
        prop_assert_eq!(repair(&seq, open), oracle::repair_quadratic(&seq, open));
        prop_assert_eq!(violations_with(&seq, open), oracle::violations_with_quadratic(&seq, open));
    }

    #[test]
    fn repaired_sequences_cut_cleanly(seq in proptest::collection::vec(shape_strategy(), 0..16)) {
        let resolved = repair(&seq, false).resolve(&seq);
        for i in cut_points(&resolved) {
            prop_assert!(matches!(resolved[i].role, ShapeRole::User | ShapeRole::Assistant));
            prop_assert!(violations(&resolved[..i]).is_empty());
            prop_assert!(violations(&resolved[i..]).is_empty());
        }
        // Repair is idempotent: a repaired sequence needs nothing more.
        prop_assert!(repair(&resolved, false).is_identity());
    }

    #[test]
    fn valid_sequences_are_untouched_and_cut_cleanly(seq in valid_strategy()) {
        prop_assert!(violations(&seq).is_empty());
        check(&seq);
        prop_assert!(cut_points(&seq).iter().all(|&i| matches!(seq[i].role, ShapeRole::User | ShapeRole::Assistant)));
        // In a valid sequence every user message is a cut point, and so is every assistant
        // message after the first message (all earlier groups are complete).
        let expected = seq
            .iter()
            .enumerate()
            .filter(|(i, s)| s.role == ShapeRole::User || (s.role == ShapeRole::Assistant && *i > 0))
            .count();
        prop_assert_eq!(cut_points(&seq).len(), expected);
    }
}
