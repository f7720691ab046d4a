//! Session API behaviour: gating, need/needFull, pinning, folds (priced, emergency, forced,
//! condensed, with summaries), divergence policy, commit, restore, errors.

mod engine_support;

use cachefold::config::{Config, Mode};
use cachefold::engine::{CommitInput, Session};
use cachefold::message::Message;
use cachefold::pairing::{self, Shape};
use engine_support::*;
use serde_json::Value;

fn session(cfg: Config) -> Session {
    Session::new(cfg, "s1")
}

fn shapes(out: &[String]) -> Vec<Shape> {
    out.iter()
        .map(|j| Shape::of(&Message::from_json(j).unwrap()))
        .collect()
}

#[test]
fn passthrough_outside_target_models() {
    let mut s = session(Config::default());
    let mut msgs = Vec::new();
    for k in 0..3 {
        turn(&mut msgs, k, "a.txt", 500);
    }
    let p = shim(&mut s, &msgs, Some("mistral/mistral-large"), None);
    assert!(p.passthrough);
    assert_eq!(p.order, (0..msgs.len() as i64).collect::<Vec<_>>());
    assert!(p.synthetic.is_empty() && p.fold_writes.is_empty());
    assert!(p.estimated_tokens > 0);
    // Missing model id: auto passes through, always manages.
    let p = shim(&mut session(Config::default()), &msgs, None, None);
    assert!(p.passthrough);
    let p = shim(
        &mut session(Config {
            mode: Mode::Always,
            ..Config::default()
        }),
        &msgs,
        None,
        None,
    );
    assert!(!p.passthrough);
    let p = shim(
        &mut session(Config {
            mode: Mode::Off,
            ..Config::default()
        }),
        &msgs,
        DS,
        None,
    );
    assert!(p.passthrough);
}

#[test]
fn need_asks_for_everything_until_pinned_then_a_few() {
    let mut s = session(Config::default());
    let mut msgs = Vec::new();
    for k in 0..10 {
        turn(&mut msgs, k, "a.txt", 100);
    }
    assert_eq!(s.need(0), Vec::<u32>::new());
    assert_eq!(s.need(40), all(40));
    let p = shim(&mut s, &msgs[..20], DS, None);
    assert!(!p.need_full && p.report.pinned);
    assert_eq!(
        p.report.head_len, 3,
        "head = 2 messages extended over the tool call's results"
    );
    let need = s.need(40);
    // head 0..3, last recorded 19, new 20..40, at most 4 spot checks.
    for i in (0..3).chain(19..40) {
        assert!(need.contains(&i), "{i} missing from {need:?}");
    }
    assert!(need.len() <= 4 + 21 + 4, "{need:?}");
    // Shrunk history: everything.
    assert_eq!(s.need(10), all(10));
}

#[test]
fn missing_indices_answer_need_full_without_changing_state() {
    let mut s = session(Config::default());
    let mut msgs = Vec::new();
    turn(&mut msgs, 0, "a.txt", 100);
    turn(&mut msgs, 1, "a.txt", 100);
    let snap = s.snapshot();
    let p = s.assemble(&input(&msgs, &[0, 1], DS, None)).unwrap();
    assert!(p.need_full);
    assert_eq!(s.snapshot(), snap);
    assert!(s.take_journal().is_empty());
    let p = s
        .assemble(&input(&msgs, &all(msgs.len()), DS, None))
        .unwrap();
    assert!(!p.need_full);
}

#[test]
fn repeated_assemble_is_idempotent_and_journals_nothing() {
    let mut s = session(small());
    let mut msgs = Vec::new();
    for k in 0..8 {
        turn(&mut msgs, k, "a.txt", 2_000);
        let need = s.need(msgs.len() as u32);
        let inp = input(&msgs, &need, DS, None);
        let p1 = s.assemble(&inp).unwrap();
        let p1 = if p1.need_full {
            s.assemble(&input(&msgs, &all(msgs.len()), DS, None))
                .unwrap()
        } else {
            p1
        };
        s.take_journal();
        let p2 = s.assemble(&inp).unwrap();
        assert!(!p2.need_full, "same input must not need more");
        assert_eq!(
            (&p1.order, &p1.synthetic, p1.estimated_tokens),
            (&p2.order, &p2.synthetic, p2.estimated_tokens)
        );
        assert!(p2.fold_writes.is_empty());
        assert!(
            s.take_journal().is_empty(),
            "turn {k}: second assemble journaled"
        );
    }
    assert!(s.state().counters.folds > 0, "the scenario folds");
}

#[test]
fn head_extends_over_a_tool_group() {
    let mut s = session(Config::default());
    let msgs = vec![
        user("hi", T0),
        calls(&[("c1", "read", "x.md"), ("c2", "exec", "ls")], T0 + 1),
        result("c1", "read", "x", T0 + 2),
        result("c2", "exec", "y", T0 + 3),
        assistant("ok", T0 + 4),
        user("next", T0 + 5),
    ];
    let p = shim(&mut s, &msgs, DS, None);
    // The lock count (2) ends inside the call's group; the head extends over both results.
    assert_eq!(p.report.head_len, 4);
}

/// Folds are appended: head and earlier records stay byte-identical; protected reads survive
/// verbatim after their record; records carry the first folded message's timestamp.
#[test]
fn folds_append_and_keep_protected_reads() {
    let mut s = session(small());
    let mut msgs = Vec::new();
    let mut prev: Option<Vec<String>> = None;
    let mut writes = Vec::new();
    for k in 0..24 {
        let path = if k == 3 {
            "/ws/AGENTS.md"
        } else {
            "src/lib.rs"
        };
        turn(&mut msgs, k, path, 2_000);
        let p = shim(&mut s, &msgs, DS, None);
        let out = resolve(&p, &msgs);
        assert!(pairing::violations(&shapes(&out)).is_empty());
        writes.extend(p.fold_writes.clone());
        if let Some(prev) = &prev {
            let keep = match p.report.stable_prefix {
                Some(k) => k as usize,
                None => prev.len(),
            };
            assert_eq!(&out[..keep], &prev[..keep], "turn {k}: prefix changed");
            assert!(keep >= p.report.head_len as usize);
        }
        prev = Some(out);
    }
    let st = s.state();
    assert!(
        st.segs.len() >= 2,
        "expected several folds, got {:?}",
        st.segs.len()
    );
    assert!(!writes.is_empty());
    assert_eq!(writes[0].fold_id, "f1");
    assert_eq!(writes[0].from, st.head_len);
    for w in writes.windows(2) {
        assert!(w[1].from >= w[0].to || w[1].fold_id.starts_with('c'));
    }
    // Record shape and timestamp.
    let seg = &st.segs[0];
    let v: Value = serde_json::from_str(&seg.json).unwrap();
    assert_eq!(v["role"], "user");
    assert_eq!(v["content"][0]["type"], "text");
    let first: Value = serde_json::from_str(&msgs[seg.from as usize]).unwrap();
    assert_eq!(v["timestamp"], first["timestamp"]);
    // The AGENTS.md read (turn 3: indices 13, 14) is kept verbatim.
    let out = prev.unwrap();
    assert!(
        out.contains(&msgs[13]) && out.contains(&msgs[14]),
        "protected group dropped"
    );
    let agents_pos = out.iter().position(|m| *m == msgs[13]).unwrap();
    assert!(
        Message::from_json(&out[agents_pos - 1]).unwrap().role_str() == "user"
            || out[agents_pos - 1] == msgs[12]
    );
}

#[test]
fn emergency_fold_gets_under_the_threshold() {
    let cfg = Config {
        tail_tokens: 20_000,
        min_fold_tokens: 50_000,
        ..Config::default()
    };
    let mut s = session(cfg);
    let mut msgs = Vec::new();
    let mut emergencies = 0;
    for k in 0..30 {
        turn(&mut msgs, k, "big.log", 6_000);
        let p = shim(&mut s, &msgs, DS, Some(20_000));
        let r = &p.report;
        assert!(
            !r.over_budget,
            "turn {k}: still over ({} > {})",
            r.tokens_after, r.threshold_tokens
        );
        if r.emergency {
            emergencies += 1;
            assert_eq!(r.fold.as_ref().unwrap().reason, "emergency");
            assert!(r.tokens_after <= r.threshold_tokens);
        }
    }
    assert!(emergencies > 0);
}

#[test]
fn forced_compact_and_fold_request() {
    let mut s = session(Config::default());
    let mut msgs = Vec::new();
    for k in 0..6 {
        turn(&mut msgs, k, "a.txt", 1_000);
    }
    let p = shim(&mut s, &msgs, DS, None);
    assert!(
        p.report.folds.is_empty(),
        "nothing pays at default thresholds"
    );
    let need = s.need(msgs.len() as u32);
    let p = s.compact(&input(&msgs, &need, DS, None), true).unwrap();
    assert_eq!(
        p.report.fold.as_ref().map(|f| f.reason.as_str()),
        Some("compact")
    );
    assert_eq!(p.fold_writes.len(), 1);
    // A fold request without messages is honoured by the next assemble.
    for k in 6..12 {
        turn(&mut msgs, k, "a.txt", 1_000);
    }
    s.request_fold(0.0).unwrap();
    assert!(s.state().force_fold);
    let p = shim(&mut s, &msgs, DS, None);
    assert_eq!(
        p.report.fold.as_ref().map(|f| f.reason.as_str()),
        Some("compact")
    );
    assert!(!s.state().force_fold);
}

#[test]
fn breaker_stops_priced_folds_after_three_low_saving_folds() {
    let mut s = session(Config {
        expected_remaining_calls: 200,
        ..small()
    });
    let mut msgs = Vec::new();
    // A big head keeps every later fold small relative to the estimate.
    msgs.push(user(&"context ".repeat(20_000), T0));
    msgs.push(assistant("ok", T0 + 1));
    for k in 0..3 {
        turn(&mut msgs, 2 * k, "a.txt", 300);
        turn(&mut msgs, 2 * k + 1, "a.txt", 300);
        shim(&mut s, &msgs, DS, Some(1_000_000));
        let need = s.need(msgs.len() as u32);
        let p = s
            .compact(&input(&msgs, &need, DS, Some(1_000_000)), true)
            .unwrap();
        assert!(p.report.fold.is_some(), "turn {k}: forced fold");
    }
    assert!(s.state().breaker_tripped());
    for k in 6..16 {
        turn(&mut msgs, k, "a.txt", 2_000);
        let p = shim(&mut s, &msgs, DS, Some(1_000_000));
        assert!(p.report.folds.is_empty(), "priced fold despite the breaker");
        assert!(p.report.breaker_tripped);
    }
}

#[test]
fn records_condense_when_over_their_budget() {
    let cfg = Config {
        fold_record_budget: 400,
        ..small()
    };
    let mut s = session(cfg);
    let mut msgs = Vec::new();
    let mut condensed = 0;
    for k in 0..30 {
        turn(&mut msgs, k, "a.txt", 2_000);
        let p = shim(&mut s, &msgs, DS, None);
        if let Some(c) = &p.report.condensed {
            condensed += 1;
            assert!(c.merged >= 2);
            assert_eq!(
                p.report.stable_prefix,
                Some(p.report.head_len),
                "condense keeps only the head"
            );
            assert!(
                p.fold_writes.iter().any(|w| w.fold_id == c.id),
                "condensed range stored"
            );
        }
        assert!(s.state().segs.len() <= 2 || p.report.condensed.is_none());
    }
    assert!(condensed > 0);
}

#[test]
fn divergence_in_tail_truncates_in_head_repins() {
    let mut s = session(small());
    let mut msgs = Vec::new();
    for k in 0..12 {
        turn(&mut msgs, k, "a.txt", 2_000);
        shim(&mut s, &msgs, DS, None);
    }
    let live = s.state().live_from as usize;
    let folds = s.state().segs.len();
    assert!(folds > 0 && live + 2 < msgs.len());
    // tool_result_persist rewrote the last result in place.
    let n = msgs.len();
    msgs[n - 2] = result(&format!("call_{}", 11), "read", "rewritten", T0);
    let need = s.need(n as u32);
    let p = s.assemble(&input(&msgs, &need, DS, None)).unwrap();
    assert!(p.need_full, "spot check must see the rewrite");
    let p = s.assemble(&input(&msgs, &all(n), DS, None)).unwrap();
    let d = p.report.divergence.as_ref().unwrap();
    assert_eq!(
        (d.at as usize, d.cause.as_str(), d.action.as_str()),
        (n - 2, "host_rewrite", "truncate")
    );
    assert_eq!(
        s.state().segs.len(),
        folds,
        "folds survive a tail divergence"
    );
    assert_eq!(
        s.state().records[n - 2].h,
        cachefold::engine::fingerprint::message_hash(&msgs[n - 2])
    );
    // Now the head changes: re-pin.
    msgs[1] = assistant("a different first answer", T0 + 1);
    let p = shim(&mut s, &msgs, DS, None);
    let d = p.report.divergence.as_ref().unwrap();
    assert_eq!((d.at, d.action.as_str()), (1, "repin"));
    assert_eq!(s.state().counters.repins, 1);
    assert!(s.state().pinned);
    let out = resolve(&p, &msgs);
    assert!(pairing::violations(&shapes(&out)).is_empty());
    assert_eq!(s.state().counters.divergences.get("host_rewrite"), Some(&1));
}

#[test]
fn host_compaction_and_branch_reset_causes() {
    let mut s = session(Config::default());
    let mut msgs = Vec::new();
    for k in 0..6 {
        turn(&mut msgs, k, "a.txt", 200);
    }
    shim(&mut s, &msgs, DS, None);
    // The host compacted: a summary replaces everything after the head.
    let mut compacted = msgs[..4].to_vec();
    compacted.push(serde_json::json!({"role": "compactionSummary", "summary": "earlier work", "tokensBefore": 5000, "timestamp": T0}).to_string());
    compacted.push(user("go on", T0 + 9));
    let p = shim(&mut s, &compacted, DS, None);
    assert_eq!(
        p.report.divergence.as_ref().unwrap().cause,
        "host_compaction"
    );
    // Shorter history without a summary: branch reset.
    let p = shim(&mut s, &compacted[..3], DS, None);
    assert_eq!(p.report.divergence.as_ref().unwrap().cause, "branch_reset");
    assert_eq!(p.order.len(), 3);
}

#[test]
fn model_change_is_counted_not_acted_on() {
    let mut s = session(Config {
        mode: Mode::Always,
        ..Config::default()
    });
    let mut msgs = Vec::new();
    turn(&mut msgs, 0, "a.txt", 200);
    let a = shim(&mut s, &msgs, Some("deepseek/deepseek-v4-flash"), None);
    let b = shim(&mut s, &msgs, Some("deepseek/deepseek-v4-pro"), None);
    assert_eq!(b.report.env_changes, vec!["model_changed".to_string()]);
    assert_eq!(a.order, b.order);
    assert_eq!(
        s.state().counters.divergences.get("model_changed"),
        Some(&1)
    );
}

#[test]
fn commit_is_idempotent_and_records_usage() {
    let mut s = session(Config::default());
    let mut msgs = Vec::new();
    turn(&mut msgs, 0, "a.txt", 200);
    shim(&mut s, &msgs, DS, None);
    s.take_journal();
    let mut turn_msgs = Vec::new();
    turn(&mut turn_msgs, 1, "a.txt", 200);
    let c = CommitInput {
        advancement_key: "k1".into(),
        messages: turn_msgs.clone(),
        now_ms: T0 as f64,
        context_window: None,
    };
    assert_eq!(s.commit_turn(&c).unwrap().status, "committed");
    assert!(!s.take_journal().is_empty());
    assert_eq!(s.commit_turn(&c).unwrap().status, "duplicate");
    assert!(s.take_journal().is_empty());
    let st = s.view().stats();
    assert_eq!(st["calls"], 2, "two assistant messages with usage");
    assert_eq!(st["promptTokens"], 200);
    assert_eq!(
        st["calibration"]["samples"], 2,
        "one calibration point per call"
    );
    for key in [
        "hitPct",
        "predictedHits",
        "folds",
        "repairs",
        "divergences",
        "savedUsd",
        "artifacts",
        "calibration",
    ] {
        assert!(st.get(key).is_some(), "stats lacks {key}");
    }
    // A message the core cannot read is skipped (it is no assistant call); the turn commits.
    let bad = CommitInput {
        advancement_key: "k2".into(),
        messages: vec!["{".into()],
        now_ms: 0.0,
        context_window: None,
    };
    assert_eq!(s.commit_turn(&bad).unwrap().status, "committed");
    assert_eq!(s.commit_turn(&bad).unwrap().status, "duplicate");
}

#[test]
fn summaries_are_requested_accepted_and_used() {
    // Few expected calls: a fold pays only well after its region becomes eligible, which leaves
    // turns for the summary to be prepared in `maintain`.
    let cfg = Config {
        min_fold_tokens: 1_500,
        expected_remaining_calls: 12,
        ..small()
    };
    let mut s = session(cfg.clone());
    let mut msgs = Vec::new();
    let mut used = false;
    let mut requested = 0;
    for k in 0..20 {
        turn(&mut msgs, k, "a.txt", 2_000);
        let p = shim(&mut s, &msgs, DS, None);
        if let Some(f) = &p.report.fold {
            if f.used_summary {
                used = true;
                assert!(f.summary.contains("SUMMARY-TEXT"));
            }
        }
        if let Some(req) = s.summary_request(T0 as f64 + k as f64) {
            requested += 1;
            assert!(
                req.to > req.from
                    && !req.prompt.is_empty()
                    && req.max_tokens == cfg.summary.max_tokens
            );
            assert!(
                s.summary_request(T0 as f64).is_none(),
                "one pending at a time"
            );
            s.accept_summary(&req.id, "SUMMARY-TEXT of the work", true, T0 as f64);
            assert!(s.state().ready_summary.is_some());
        }
    }
    assert!(requested > 0 && used, "requested {requested}, used {used}");
    assert!(s.view().stats()["summaries"]["used"].as_u64().unwrap() >= 1);
}

#[test]
fn summary_failures_rate_limit_and_timeouts() {
    let cfg = Config {
        min_fold_tokens: 100_000,
        summary: cachefold::config::SummaryConfig {
            max_calls_per_hour: 2,
            ..Default::default()
        },
        ..small()
    };
    let mut s = session(Config {
        min_fold_tokens: 1_500,
        ..cfg
    });
    let mut msgs = Vec::new();
    for k in 0..8 {
        turn(&mut msgs, k, "a.txt", 2_000);
    }
    // Fold nothing yet: a huge budget and a tail that does not fit, but no pay-off without
    // remaining calls.
    let mut s2 = Session::new(
        Config {
            expected_remaining_calls: 1,
            min_fold_tokens: 1_500,
            summary: cachefold::config::SummaryConfig {
                max_calls_per_hour: 2,
                ..Default::default()
            },
            ..small()
        },
        "s2",
    );
    shim(&mut s2, &msgs, DS, None);
    let now = T0 as f64;
    let r1 = s2.summary_request(now).expect("first request");
    s2.accept_summary(&r1.id, "", true, now); // blank text counts as failure
    assert!(s2.state().ready_summary.is_none());
    let r2 = s2.summary_request(now + 1.0).expect("second request");
    // Timed out: a later request replaces it, but the hourly cap (2) is reached.
    assert!(s2.summary_request(now + 2.0).is_none(), "still pending");
    assert!(
        s2.summary_request(now + r2.timeout_ms as f64 + 120_000.0)
            .is_none(),
        "rate limited"
    );
    assert_eq!(s2.state().counters.summaries_failed, 2);
    let r3 = s2
        .summary_request(now + 3_700_000.0)
        .expect("an hour later");
    s2.accept_summary("unknown-id", "text", true, now);
    assert!(s2
        .state()
        .pending_summary
        .as_ref()
        .is_some_and(|p| p.id == r3.id));
    let _ = &mut s;
}

#[test]
fn restore_from_journal_snapshot_and_torn_tail() {
    let mut s = session(small());
    let mut msgs = Vec::new();
    let mut journal = String::new();
    let mut mid = None;
    for k in 0..14 {
        turn(&mut msgs, k, "a.txt", 2_000);
        shim(&mut s, &msgs, DS, None);
        let c = CommitInput {
            advancement_key: format!("t{k}"),
            messages: msgs[msgs.len() - 4..].to_vec(),
            now_ms: T0 as f64,
            context_window: None,
        };
        s.commit_turn(&c).unwrap();
        s.note_artifact(&"a".repeat(40), "exec", 9_000, T0 as f64)
            .unwrap();
        journal.push_str(&s.take_journal());
        if k == 6 {
            mid = Some((s.snapshot(), journal.len()));
        }
    }
    let live = s.snapshot();
    let (r, rep) = Session::restore(small(), "s1", None, &journal).unwrap();
    assert_eq!(r.snapshot(), live);
    assert_eq!((rep.ignored_bytes, rep.stopped.clone()), (0, None));
    let (snap, at) = mid.unwrap();
    let (r, _) = Session::restore(small(), "s1", Some(&snap), &journal[at..]).unwrap();
    assert_eq!(r.snapshot(), live);
    // The whole journal after a snapshot: included lines are skipped.
    let (r, rep) = Session::restore(small(), "s1", Some(&snap), &journal).unwrap();
    assert_eq!(r.snapshot(), live);
    assert!(rep.skipped > 0);
    // Torn tail: everything before it applies.
    let cut = journal.len() - 5;
    let (r, rep) = Session::restore(small(), "s1", None, &journal[..cut]).unwrap();
    assert_eq!(rep.stopped.as_deref(), Some("torn"));
    assert_eq!(r.state().seq, s.state().seq - 1);
    // Corrupt line in the middle: replay stops there.
    let lines: Vec<&str> = journal.lines().collect();
    let mut bad = String::new();
    for (i, l) in lines.iter().enumerate() {
        bad.push_str(&if i == 10 {
            l.replacen("\"seq\":11", "\"seq\":12", 1)
        } else {
            l.to_string()
        });
        bad.push('\n');
    }
    let (r, rep) = Session::restore(small(), "s1", None, &bad).unwrap();
    assert_eq!(r.state().seq, 10);
    assert_eq!(rep.stopped.as_deref(), Some("sequence"));
    // Bad snapshot or another session's snapshot: errors.
    assert_eq!(
        Session::restore(small(), "s1", Some("{nope"), "")
            .unwrap_err()
            .code(),
        "CACHEFOLD_STATE"
    );
    assert_eq!(
        Session::restore(small(), "other", Some(&live), "")
            .unwrap_err()
            .code(),
        "CACHEFOLD_STATE"
    );
    assert_eq!(s.view().stats()["artifacts"], 14);
}

#[test]
fn bad_input_is_an_error_never_a_panic() {
    let mut s = session(Config::default());
    // A message the core cannot read is quarantined, not an error (tests/bad_messages.rs).
    let msgs = vec![user("a", T0), "not json".to_string()];
    let p = s.assemble(&input(&msgs, &[0, 1], DS, None)).unwrap();
    assert_eq!(p.report.quarantined[0].reason, "invalid_json");
    assert_eq!(p.order, vec![0, 1]);
    let mut inp = input(&msgs, &[0], DS, None);
    inp.messages[0].index = 7;
    assert!(s.assemble(&inp).is_err());
    let mut inp = input(&msgs, &[0, 0], DS, None);
    inp.count = 2;
    assert!(s.assemble(&inp).is_err());
    let arr = vec!["[1,2]".to_string()];
    let p = s.assemble(&input(&arr, &[0], DS, None)).unwrap();
    assert!(p.need_full || p.report.divergence.is_some() || !p.report.quarantined.is_empty());
}

#[test]
fn malformed_history_is_repaired_never_dropped() {
    let mut s = session(Config::default());
    let msgs = vec![
        user("hi", T0),
        assistant("ok", T0 + 1),
        user("go", T0 + 2),
        calls(&[("c1", "exec", "ls"), ("c2", "exec", "pwd")], T0 + 3),
        result("c2", "exec", "out", T0 + 4),
        user("and?", T0 + 5),
        result("zz", "exec", "orphan", T0 + 6),
        assistant("done", T0 + 7),
    ];
    let p = shim(&mut s, &msgs, DS, None);
    let out = resolve(&p, &msgs);
    assert!(pairing::violations(&shapes(&out)).is_empty(), "{out:#?}");
    for i in 0..msgs.len() as i64 {
        assert!(p.order.contains(&i), "host {i} dropped");
    }
    let kinds: Vec<&str> = p.report.repairs.iter().map(|r| r.kind.as_str()).collect();
    assert!(
        kinds.contains(&"missing_result") && kinds.contains(&"orphan_result"),
        "{kinds:?}"
    );
    // Synthetic messages have fixed timestamps: the same plan next time.
    let again = shim(&mut s, &msgs, DS, None);
    assert_eq!(again.synthetic, p.synthetic);
}

/// With ownsCompaction, OpenClaw re-runs assemble inside the tool loop with the messages we
/// returned. That echo must change nothing: no re-pin, no journal, the same context; and the
/// next turn's real history continues after the existing fold (found in the 48K e2e run, where
/// every turn re-folded from the head).
#[test]
fn tool_loop_reassembly_over_our_own_output_changes_nothing() {
    let mut s = session(small());
    let mut msgs = Vec::new();
    let mut last_out: Vec<String> = Vec::new();
    let mut folded = false;
    for k in 0..12 {
        turn(&mut msgs, k, "a.txt", 1_500);
        let p = shim(&mut s, &msgs, DS, Some(200_000));
        let out = resolve(&p, &msgs);
        if folded {
            assert!(
                p.report.divergence.is_none(),
                "turn {k}: {:?}",
                p.report.divergence
            );
            // Append-only across turns unless this turn folded again.
            if p.report.folds.is_empty() && p.report.condensed.is_none() {
                assert_eq!(
                    &out[..last_out.len()],
                    &last_out[..],
                    "turn {k}: prefix changed"
                );
            }
        }
        folded |= !p.report.folds.is_empty();
        s.take_journal();
        // The tool loop: the host hands our output back, twice.
        for _ in 0..2 {
            let echo = shim(&mut s, &out, DS, Some(200_000));
            assert_eq!(
                resolve(&echo, &out),
                out,
                "turn {k}: the echo must come back unchanged"
            );
            assert!(echo.report.divergence.is_none() && echo.report.folds.is_empty());
            assert!(s.take_journal().is_empty(), "turn {k}: the echo journaled");
        }
        last_out = out;
    }
    assert!(folded, "the scenario folds");
    assert_eq!(s.state().counters.repins, 0);
}

#[test]
fn known_synthetic_texts_are_left_out_and_the_plan_is_otherwise_the_same() {
    let (mut with_known, mut plain) = (session(small()), session(small()));
    let mut msgs = Vec::new();
    let mut held: std::collections::HashMap<String, String> = Default::default();
    let mut left_out = 0;
    for k in 0..24 {
        turn(&mut msgs, k, "src/lib.rs", 2_000);
        let p = shim(&mut plain, &msgs, DS, None);
        let mut head = input(&msgs, &[], DS, None);
        head.known = held.keys().cloned().collect();
        let q = with_known
            .drive(head, cachefold::engine::Drive::Assemble, |i| {
                msgs[i as usize].clone()
            })
            .expect("assemble")
            .plan;
        assert_eq!(p.synthetic_keys.len(), p.synthetic.len(), "turn {k}");
        assert_eq!(q.synthetic_keys, p.synthetic_keys, "turn {k}");
        assert_eq!(
            (&q.order, q.estimated_tokens, &q.report),
            (&p.order, p.estimated_tokens, &p.report),
            "turn {k}"
        );
        for ((text, key), full) in q.synthetic.iter().zip(&q.synthetic_keys).zip(&p.synthetic) {
            assert!(!key.is_empty(), "turn {k}: a synthetic text without a key");
            if text.is_empty() {
                assert_eq!(
                    held.get(key),
                    Some(full),
                    "turn {k}: left out a text not held"
                );
                left_out += 1;
            } else {
                assert_eq!(text, full, "turn {k}");
                assert!(!held.contains_key(key), "turn {k}: sent a held text");
            }
        }
        held = p
            .synthetic_keys
            .iter()
            .cloned()
            .zip(p.synthetic.iter().cloned())
            .collect();
    }
    assert!(!held.is_empty(), "no fold record in 24 turns");
    assert!(left_out > 0, "no text was left out");
}

/// A session an earlier release started hashes its messages with SHA-1, and keeps doing so: the
/// host's next messages compare with its records (no divergence, no re-pin), the tool loop's
/// echo of its output is still recognised, and it assembles exactly what the same session
/// started by this release (XXH3) assembles.
#[test]
fn a_session_started_with_sha1_hashes_continues_with_them() {
    use cachefold::engine::fingerprint::{head_fingerprint, message_hash, HashAlgo};
    let mut s = session(small());
    let mut msgs = Vec::new();
    let mut out = Vec::new();
    for k in 0..8 {
        turn(&mut msgs, k, "a.txt", 1_500);
        out = resolve(&shim(&mut s, &msgs, DS, Some(200_000)), &msgs);
    }
    s.take_journal();
    let st = s.state();
    assert!(
        !st.segs.is_empty() && st.pinned,
        "the scenario folds and pins"
    );
    assert_eq!(s.hash_algo(), HashAlgo::Xxh3);
    // The same state as the previous release wrote it: every record's hash and every output
    // key of SHA-1, the head fingerprint over them, snapshot version 1.
    let mut text = s.try_snapshot().unwrap();
    assert!(text.starts_with(r#"{"v":2,"#), "{}", &text[..40]);
    text = text.replacen(r#"{"v":2,"#, r#"{"v":1,"#, 1);
    for j in msgs.iter().chain(&out) {
        let (new, old) = (message_hash(j).hex(), HashAlgo::Sha1.hash(j).hex());
        text = text.replace(&new, &old).replace(&new[..16], &old[..16]);
    }
    let head = st.head_len as usize;
    let old_head = msgs[..head]
        .iter()
        .map(|j| HashAlgo::Sha1.hash(j))
        .collect::<Vec<_>>();
    text = text.replace(&st.head_fp, &head_fingerprint(&old_head));
    for j in &msgs {
        assert!(
            !text.contains(&message_hash(j).short_key()),
            "an XXH3 key left"
        );
    }
    let (mut old, report) = Session::restore(small(), "s1", Some(&text), "").unwrap();
    assert_eq!(report.applied, 0);
    assert_eq!(old.hash_algo(), HashAlgo::Sha1);
    for k in 8..14 {
        turn(&mut msgs, k, "a.txt", 1_500);
        let p = shim(&mut s, &msgs, DS, Some(200_000));
        let q = shim(&mut old, &msgs, DS, Some(200_000));
        assert!(
            q.report.divergence.is_none(),
            "turn {k}: {:?}",
            q.report.divergence
        );
        let out = resolve(&q, &msgs);
        assert_eq!(out, resolve(&p, &msgs), "turn {k}: the same context");
        assert_eq!(q.report.folds.len(), p.report.folds.len());
        old.take_journal();
        let echo = shim(&mut old, &out, DS, Some(200_000));
        assert_eq!(
            resolve(&echo, &out),
            out,
            "turn {k}: the echo comes back unchanged"
        );
        assert!(
            echo.report.divergence.is_none(),
            "turn {k}: the echo is not history"
        );
        assert!(
            old.take_journal().is_empty(),
            "turn {k}: the echo journaled"
        );
    }
    let st = old.state();
    assert_eq!(st.counters.repins, 0);
    assert_eq!(st.records.len(), msgs.len());
    for (r, j) in st.records.iter().zip(&msgs) {
        assert_eq!(r.h, HashAlgo::Sha1.hash(j));
    }
    assert!(old.try_snapshot().unwrap().starts_with(r#"{"v":1,"#));
}
