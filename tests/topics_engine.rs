//! Topics used by the engine: turns segmented at commit and journaled (restart-safe), folds that
//! freeze the boundaries they use, cut at topic boundaries and render one section per topic,
//! recovery plans by turn and topic id, pins applied at the next fold, and the append-only
//! invariant with topics on (property test).

mod engine_support;

use cachefold::config::Config;
use cachefold::engine::{CommitInput, FoldReport, Session};
use engine_support::*;
use proptest::prelude::*;

/// Subjects of distinct tasks (a cue word, a file, identifiers of their own).
const SUBJECTS: [(&str, &str); 4] = [
    (
        "fix the parser in src/parse.rs, tokenizer_state breaks on quotes",
        "src/parse.rs",
    ),
    (
        "new task: add a billing export to billing/export.py with invoice_totals",
        "billing/export.py",
    ),
    (
        "moving on, tune the nginx config deploy/nginx.conf worker_connections",
        "deploy/nginx.conf",
    ),
    (
        "switch to the docs: rewrite docs/install.md install_steps section",
        "docs/install.md",
    ),
];

/// One turn about `subject`: user, a read with a result of `size` chars, a reply.
fn topic_turn(k: usize, subject: usize, size: usize) -> Vec<String> {
    let (text, path) = SUBJECTS[subject % SUBJECTS.len()];
    let ts = T0 + k as u64 * 60_000;
    let id = format!("call_{k}");
    let body: String = format!("{path} line {k} ")
        .repeat(size / 20 + 1)
        .chars()
        .take(size)
        .collect();
    let prompt = if k > 0 && k % 3 != 0 {
        format!("continue with {path}, step {k}")
    } else {
        format!("{text} (step {k})")
    };
    vec![
        user(&prompt, ts),
        calls(&[(&id, "read", path)], ts + 1),
        result(&id, "read", &body, ts + 2),
        assistant(&format!("done with {path} step {k}"), ts + 3),
    ]
}

struct Run {
    s: Session,
    msgs: Vec<String>,
    journal: String,
    outs: Vec<Vec<String>>,
    declared: Vec<bool>,
    folds: Vec<FoldReport>,
}

fn run(cfg: Config, subjects: &[usize], size: usize) -> Run {
    run_with(cfg, subjects, size, 20_000, None)
}

/// [`run`] with the host's token budget, and `summary`: every summary request `maintain`
/// would make is answered with this text right after the commit.
fn run_with(
    cfg: Config,
    subjects: &[usize],
    size: usize,
    budget: u64,
    summary: Option<&str>,
) -> Run {
    let mut r = Run {
        s: Session::new(cfg, "topics"),
        msgs: Vec::new(),
        journal: String::new(),
        outs: Vec::new(),
        declared: Vec::new(),
        folds: Vec::new(),
    };
    for (k, &subj) in subjects.iter().enumerate() {
        let t = topic_turn(k, subj, size);
        r.msgs.push(t[0].clone());
        let p = shim(&mut r.s, &r.msgs, DS, Some(budget));
        r.declared
            .push(!p.report.folds.is_empty() || p.report.condensed.is_some());
        r.outs.push(resolve(&p, &r.msgs));
        r.folds.extend(p.report.folds.iter().cloned());
        r.msgs.extend(t[1..].iter().cloned());
        let now = (T0 + k as u64 * 60_000) as f64;
        r.s.commit_turn(&CommitInput {
            advancement_key: format!("k{k}"),
            messages: t,
            now_ms: now,
            context_window: None,
        })
        .unwrap();
        if let Some(text) = summary {
            if let Some(q) = r.s.summary_request(now + 1.0) {
                r.s.accept_summary(&q.id, text, true, now + 2.0);
            }
        }
        r.journal.push_str(&r.s.take_journal());
    }
    r
}

/// Every output is a prefix of the next unless the assemble declared a fold or condensation.
fn assert_append_only(r: &Run) {
    for (k, w) in r.outs.windows(2).enumerate() {
        if !r.declared[k + 1] {
            assert!(
                w[1].len() >= w[0].len() && w[1][..w[0].len()] == w[0][..],
                "turn {}: output is not an extension",
                k + 1
            );
        }
    }
}

fn small_topics() -> Config {
    Config {
        tail_tokens: 1_500,
        ..small()
    }
}

#[test]
fn turns_get_ids_and_topics_and_survive_a_restart() {
    let subjects = [0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3];
    let r = run(small_topics(), &subjects, 600);
    let ts = &r.s.state().topics;
    assert_eq!(ts.seg.turn_count(), 12);
    assert_eq!(ts.starts.len(), 12);
    assert_eq!(ts.starts[0], 0, "t1 starts at the first message");
    assert!(ts.starts.windows(2).all(|w| w[0] < w[1]), "{:?}", ts.starts);
    assert_eq!(ts.starts[3], 12, "each turn has 4 messages");
    assert!(ts.seg.topics().len() >= 3, "{:?}", ts.seg.topics());
    // Journal only, and snapshot + empty journal: the same topics.
    let (j, rep) = Session::restore(small_topics(), "topics", None, &r.journal).unwrap();
    assert!(rep.stopped.is_none(), "{rep:?}");
    assert_eq!(j.state().topics, *ts);
    let snap = r.s.snapshot();
    let (sn, _) = Session::restore(small_topics(), "topics", Some(&snap), "").unwrap();
    assert_eq!(sn.state().topics, *ts);
    assert_eq!(sn.snapshot(), snap);
}

#[test]
fn topics_off_segments_nothing_and_keeps_snapshots_as_before() {
    let mut cfg = small_topics();
    cfg.topics.enabled = false;
    let r = run(cfg, &[0, 0, 1, 1], 300);
    assert_eq!(r.s.state().topics.seg.turn_count(), 0);
    let snap = r.s.snapshot();
    assert!(
        !snap.contains("\"topics\":{"),
        "{}",
        &snap[snap.find("\"topics\":{").unwrap_or(0)..][..200]
    );
    assert!(!r.journal.contains("{\"turn\":"));
    let v = r.s.view().topics_view();
    assert!(
        v["text"].as_str().unwrap().contains("topics are off"),
        "{v}"
    );
}

#[test]
fn an_old_snapshot_without_topics_loads() {
    let mut cfg = small_topics();
    cfg.topics.enabled = false;
    let r = run(cfg, &[0, 1], 300);
    let snap = r.s.snapshot();
    assert!(!snap.contains("\"topics\":{"));
    let (s, _) = Session::restore(small_topics(), "topics", Some(&snap), "").unwrap();
    assert!(s.state().topics.is_empty());
}

#[test]
fn folds_freeze_their_boundaries_and_render_one_section_per_topic() {
    let subjects = [0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3, 0, 0, 0];
    let r = run(small_topics(), &subjects, 5_000);
    let st = r.s.state();
    assert!(!st.segs.is_empty(), "the run folds");
    let frozen = st.topics.seg.frozen_through();
    assert!(frozen >= 1, "a fold froze the turns it covers");
    // Every frozen turn starts at or before the end of the folded region, and the turn whose
    // start the last fold used is frozen too.
    assert!(st.topics.starts[frozen as usize - 1] <= st.live_from);
    if let Some(k) = st.topics.starts.iter().position(|s| *s == st.live_from) {
        assert!(frozen as usize > k, "the boundary at the cut is frozen");
    }
    let multi: Vec<&str> = st
        .segs
        .iter()
        .map(|s| s.json.as_str())
        .filter(|j| j.contains("Topics folded here"))
        .collect();
    assert!(
        !multi.is_empty(),
        "a record spans topics: {:?}",
        st.segs.iter().map(|s| &s.json).collect::<Vec<_>>()
    );
    let rec = multi[0];
    assert!(
        rec.contains("T1 ") && rec.contains("recover {\\\"id\\\":\\\"T1\\\"}"),
        "{rec}"
    );
    assert!(
        rec.contains("src/parse.rs"),
        "closed topic keeps its exact identifiers: {rec}"
    );
    assert!(rec.contains("in detail"), "{rec}");
}

#[test]
fn cuts_prefer_topic_boundaries() {
    let subjects = [0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3, 0, 0, 0];
    let on = run(small_topics(), &subjects, 5_000);
    let st = on.s.state();
    let bounds = st.topics.boundary_records();
    let at_boundary = st.segs.iter().filter(|s| bounds.contains(&s.to)).count();
    assert!(
        at_boundary >= 1,
        "segments {:?} boundaries {bounds:?}",
        st.segs.iter().map(|s| (s.from, s.to)).collect::<Vec<_>>()
    );
}

#[test]
fn recover_plans_name_fold_lines_for_turns_and_topics() {
    let subjects = [0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3, 0, 0, 0];
    let r = run(small_topics(), &subjects, 5_000);
    let s = &r.s;
    let st = s.state();
    let f1 = &st.segs[0];
    let p = s.view().recover_plan("t2").unwrap();
    let (a, b) = st.topics.turn_range(2, st.recorded()).unwrap();
    assert_eq!(
        (p["from"].as_u64().unwrap(), p["to"].as_u64().unwrap()),
        (a as u64, b as u64)
    );
    if b <= f1.to {
        assert_eq!(p["parts"][0]["fold"], f1.id.as_str());
        assert_eq!(
            p["parts"][0]["lines"][0].as_u64().unwrap(),
            (a - f1.from + 1) as u64
        );
        assert_eq!(
            p["parts"][0]["lines"][1].as_u64().unwrap(),
            (b - f1.from) as u64
        );
    }
    let t1 = s.view().recover_plan("T1").unwrap();
    assert_eq!(t1["from"], 0);
    assert!(t1["note"].as_str().unwrap().contains("T1 t1–"));
    // The last turn is live: nothing to read from a fold.
    let last = format!("t{}", st.topics.seg.turn_count());
    let l = s.view().recover_plan(&last).unwrap();
    assert_eq!(l["parts"].as_array().unwrap().len(), 0);
    assert!(l["inContext"].as_u64().unwrap() >= 1, "{l}");
    for bad in ["t0", "t999", "T999", "x1", "t-1", ""] {
        let e = s.view().recover_plan(bad).unwrap_err();
        assert_eq!(e.code(), "CACHEFOLD_INVALID_ID", "{bad}");
    }
}

#[test]
fn topics_and_preview_views_account_for_the_prompt() {
    let subjects = [0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3];
    let r = run(small_topics(), &subjects, 5_000);
    let v = r.s.view().topics_view();
    let topics = v["details"]["topics"].as_array().unwrap();
    assert_eq!(topics.len(), r.s.state().topics.seg.topics().len());
    assert_eq!(topics[0]["first"], "t1");
    assert!(
        topics
            .iter()
            .any(|t| t["state"] == "folded" || t["state"] == "partly folded"),
        "{v}"
    );
    assert_eq!(topics.last().unwrap()["state"], "live");
    let p = r.s.view().preview();
    let segs = p["details"]["segments"].as_array().unwrap();
    assert_eq!(segs.len(), r.s.state().segs.len());
    assert_eq!(p["details"]["live"]["from"], r.s.state().live_from);
    assert!(p["text"].as_str().unwrap().contains("live tail"));
}

#[test]
fn a_pin_keeps_a_live_turn_verbatim_at_the_next_fold_only() {
    let subjects = [0, 0, 0, 1, 1, 1];
    let mut r = run(small_topics(), &subjects, 300);
    assert!(r.s.state().segs.is_empty(), "nothing folded yet");
    let before = r.s.take_journal();
    assert!(before.is_empty());
    let ans = r.s.pin_turn("t2").unwrap();
    assert_eq!(ans["details"]["pinned"], true, "{ans}");
    let j = r.s.take_journal();
    assert!(j.contains("\"pinTurn\""), "{j}");
    // The pin changes no output by itself: assembling the same messages sends the same bytes.
    let same = shim(&mut r.s, &r.msgs, DS, Some(20_000));
    let now = resolve(&same, &r.msgs);
    let last = r.outs.last().unwrap();
    assert!(same.report.folds.is_empty());
    assert_eq!(
        &now[..last.len()],
        &last[..],
        "the pin moved no byte already sent"
    );
    // Grow until a fold covers t2: its 4 messages are kept verbatim after the record.
    let (a, b) =
        r.s.state()
            .topics
            .turn_range(2, r.s.state().recorded())
            .unwrap();
    let mut k = subjects.len();
    while r.s.state().live_from < b && k < 40 {
        let t = topic_turn(k, 2, 5_000);
        r.msgs.push(t[0].clone());
        shim(&mut r.s, &r.msgs, DS, Some(20_000));
        r.msgs.extend(t[1..].iter().cloned());
        r.s.commit_turn(&CommitInput {
            advancement_key: format!("k{k}"),
            messages: t,
            now_ms: (T0 + k as u64 * 60_000) as f64,
            context_window: None,
        })
        .unwrap();
        k += 1;
    }
    let st = r.s.state();
    let seg = st
        .segs
        .iter()
        .find(|s| s.from <= a && s.to >= b)
        .expect("a fold covers t2");
    for i in a..b {
        assert!(
            seg.protected.contains(&i),
            "message {i} of t2 kept: {:?}",
            seg.protected
        );
    }
    // Pinning a folded turn changes nothing.
    let again = r.s.pin_turn("t1").unwrap();
    assert!(
        again["text"].as_str().unwrap().contains("already folded"),
        "{again}"
    );
    assert!(r.s.pin_turn("t0").is_err());
    assert!(r.s.pin_turn("T1").is_err());
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 24,
        failure_persistence: Some(Box::new(proptest::test_runner::FileFailurePersistence::Direct(
            "proptest-regressions/topics_engine.txt",
        ))),
        ..ProptestConfig::default()
    })]

    /// With topics on, every output is a prefix of the next unless a fold was declared, and a
    /// turn's topic never changes once a fold froze it.
    #[test]
    fn append_only_and_frozen_topics_hold(subjects in prop::collection::vec(0usize..4, 4..18), size in 500usize..6_000) {
        let cfg = small_topics();
        let mut s = Session::new(cfg, "p");
        let mut msgs: Vec<String> = Vec::new();
        let mut prev: Option<Vec<String>> = None;
        let mut frozen_topics: Vec<(u32, u32)> = Vec::new();
        for (k, &subj) in subjects.iter().enumerate() {
            let t = topic_turn(k, subj, size);
            msgs.push(t[0].clone());
            let p = shim(&mut s, &msgs, DS, Some(20_000));
            let out = resolve(&p, &msgs);
            let declared = !p.report.folds.is_empty() || p.report.condensed.is_some();
            if let Some(prev) = &prev {
                if !declared {
                    prop_assert!(out.len() >= prev.len() && out[..prev.len()] == prev[..], "turn {k}: output is not an extension");
                }
            }
            prev = Some(out);
            msgs.extend(t[1..].iter().cloned());
            s.commit_turn(&CommitInput { advancement_key: format!("k{k}"), messages: t, now_ms: (T0 + k as u64 * 60_000) as f64, context_window: None }).unwrap();
            let seg = &s.state().topics.seg;
            for &(turn, topic) in &frozen_topics {
                prop_assert_eq!(seg.topic_of(cachefold::topics::TurnId(turn)).map(|t| t.id.0), Some(topic), "frozen turn t{} moved", turn);
            }
            // Whatever a layer-2 answer says about any turn, the boundaries the folds used (a
            // topic starting at a segment's end) stay where they are.
            let st = s.state();
            let used: Vec<u32> = st.segs.iter().filter_map(|g| {
                st.topics.starts.iter().position(|x| *x == g.to).map(|k| k as u32 + 1)
            }).filter(|k| seg.boundaries().contains(&cachefold::topics::TurnId(*k))).collect();
            let mut probe = seg.clone();
            for t in 1..=probe.turn_count() {
                let answer = cachefold::topics::llm::Answer { label: format!("probe {t}"), is_new_topic: t % 2 == 0 };
                probe.apply_llm(cachefold::topics::TurnId(t), &answer);
            }
            for k in &used {
                prop_assert!(probe.boundaries().contains(&cachefold::topics::TurnId(*k)), "boundary t{} used by a fold moved", k);
            }
            for turn in 1..=seg.frozen_through() {
                prop_assert_eq!(probe.topic_of(cachefold::topics::TurnId(turn)).map(|t| t.id), seg.topic_of(cachefold::topics::TurnId(turn)).map(|t| t.id));
            }
            for turn in 1..=seg.frozen_through() {
                if !frozen_topics.iter().any(|(t, _)| *t == turn) {
                    frozen_topics.push((turn, seg.topic_of(cachefold::topics::TurnId(turn)).unwrap().id.0));
                }
            }
        }
    }

    /// The same with layer 2 on through the engine: answers of every kind (new topic, same
    /// topic, malformed, failed) arriving after the next assemble never break append-only or
    /// move a frozen turn's topic, and a replay of the journal gives the same topics.
    #[test]
    fn layer2_keeps_append_only_and_frozen_topics(subjects in prop::collection::vec(0usize..4, 4..14), size in 500usize..6_000, kinds in prop::collection::vec(0u8..4, 14)) {
        let mut s = Session::new(llm_cfg(60), "p");
        let mut msgs: Vec<String> = Vec::new();
        let mut prev: Option<Vec<String>> = None;
        let mut frozen_topics: Vec<(u32, u32)> = Vec::new();
        let mut waiting: Option<(String, u32)> = None;
        let mut journal = String::new();
        for (k, &subj) in subjects.iter().enumerate() {
            let now = (T0 + k as u64 * 60_000) as f64;
            let t = topic_turn(k, subj, size);
            msgs.push(t[0].clone());
            let p = shim(&mut s, &msgs, DS, Some(20_000));
            let out = resolve(&p, &msgs);
            let declared = !p.report.folds.is_empty() || p.report.condensed.is_some();
            if let Some(prev) = &prev {
                if !declared {
                    prop_assert!(out.len() >= prev.len() && out[..prev.len()] == prev[..], "turn {k}: output is not an extension");
                }
            }
            prev = Some(out);
            if let Some((id, turn)) = waiting.take() {
                let kind = kinds[turn as usize % kinds.len()];
                let text = match kind {
                    0 => format!("{{\"label\":\"L{turn}\",\"isNewTopic\":true}}"),
                    1 => format!("{{\"label\":\"L{turn}\",\"isNewTopic\":false}}"),
                    _ => "nothing useful".to_string(),
                };
                s.accept_topic(&id, &text, kind != 3, now - 5.0);
            }
            msgs.extend(t[1..].iter().cloned());
            s.commit_turn(&CommitInput { advancement_key: format!("k{k}"), messages: t, now_ms: now, context_window: None }).unwrap();
            if let Some(q) = s.topic_request(now + 10.0) {
                waiting = Some((q.id, q.turn[1..].parse().unwrap()));
            }
            journal.push_str(&s.take_journal());
            let seg = &s.state().topics.seg;
            for &(turn, topic) in &frozen_topics {
                prop_assert_eq!(seg.topic_of(cachefold::topics::TurnId(turn)).map(|t| t.id.0), Some(topic), "frozen turn t{} moved", turn);
            }
            for turn in 1..=seg.frozen_through() {
                if !frozen_topics.iter().any(|(t, _)| *t == turn) {
                    frozen_topics.push((turn, seg.topic_of(cachefold::topics::TurnId(turn)).unwrap().id.0));
                }
            }
        }
        let (r, rep) = Session::restore(llm_cfg(60), "p", None, &journal).unwrap();
        prop_assert!(rep.stopped.is_none());
        prop_assert_eq!(&r.state().topics, &s.state().topics);
    }
}

#[test]
fn a_fold_over_many_topics_stays_bounded_and_names_the_rest() {
    let cfg = Config {
        tail_tokens: 1_000,
        min_fold_tokens: 5_000,
        fold_record_budget: 2_000,
        expected_remaining_calls: 100,
        ..Config::default()
    };
    let mut s = Session::new(cfg, "many");
    let mut msgs: Vec<String> = Vec::new();
    for k in 0..40usize {
        let ts = T0 + k as u64 * 60_000;
        let id = format!("call_{k}");
        let path = format!("src/area_{k}/module_{k}.rs");
        let t = vec![
            user(
                &format!("new task: rewrite {path}, helper_fn_{k} returns wrong_value_{k}"),
                ts,
            ),
            calls(&[(&id, "read", &path)], ts + 1),
            result(
                &id,
                "read",
                &format!("fn helper_fn_{k}() {{}}\n").repeat(200),
                ts + 2,
            ),
            assistant(&format!("rewrote {path}"), ts + 3),
        ];
        msgs.push(t[0].clone());
        shim(&mut s, &msgs, DS, Some(200_000));

        msgs.extend(t[1..].iter().cloned());
        s.commit_turn(&CommitInput {
            advancement_key: format!("k{k}"),
            messages: t,
            now_ms: ts as f64,
            context_window: None,
        })
        .unwrap();
    }
    let st = s.state();
    assert!(
        st.topics.seg.topics().len() >= 20,
        "{}",
        st.topics.seg.topics().len()
    );
    let seg = st.segs.first().expect("a fold");
    let text: serde_json::Value = serde_json::from_str(&seg.json).unwrap();
    let text = text["content"][0]["text"].as_str().unwrap();
    let listed = text.lines().filter(|l| l.starts_with("- T")).count();
    assert!(text.contains("more closed topics"), "{text}");
    assert!((2..20).contains(&listed), "{listed} topics listed:\n{text}");
    assert!(
        text.chars().count() < 4 * 2_000,
        "{} chars",
        text.chars().count()
    );
}

#[test]
fn a_pin_survives_a_restart_from_snapshot_plus_journal() {
    let mut r = run(small_topics(), &[0, 0, 1, 1], 300);
    let snap = r.s.snapshot();
    r.s.pin_turn("t3").unwrap();
    let tail = r.s.take_journal();
    assert!(tail.contains("\"pinTurn\""), "{tail}");
    let (back, rep) = Session::restore(small_topics(), "topics", Some(&snap), &tail).unwrap();
    assert!(rep.stopped.is_none(), "{rep:?}");
    assert_eq!(back.state().topics.pins, vec![3]);
    assert_eq!(back.state(), r.s.state());
    // A journal line pinning a turn the session never had is refused, not applied.
    let (mut other, _) = Session::restore(small_topics(), "topics", Some(&snap), "").unwrap();
    assert!(other.pin_turn("t5").is_err());
    assert!(other.take_journal().is_empty());
}

/// Moving a priced cut to a topic boundary never turns a fold that pays into a skipped one:
/// with topics on, the first fold comes no later than with topics off, whatever the region's
/// size against `minFoldTokens` (a boundary just past the live start left too little to fold,
/// and the fold waited a turn, then took an LLM summary instead: seen in the real-OpenClaw e2e).
#[test]
fn a_topic_boundary_never_delays_a_fold() {
    let subjects = [0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3, 0, 0, 0, 1, 1, 1];
    // Without the check, 17 of these 96 settings folded a turn later or never.
    let mut compared = 0;
    for tail in [1_000, 1_500, 3_000] {
        for size in [2_500, 3_500, 5_000, 8_000] {
            for min_fold in (1_000..5_000).step_by(500) {
                let cfg = |on: bool| {
                    let mut c = Config {
                        min_fold_tokens: min_fold,
                        tail_tokens: tail,
                        ..small()
                    };
                    c.topics.enabled = on;
                    c
                };
                let first = |r: &Run| r.declared.iter().position(|d| *d);
                let off = run(cfg(false), &subjects, size);
                let on = run(cfg(true), &subjects, size);
                if let Some(f_off) = first(&off) {
                    compared += 1;
                    let f_on = first(&on);
                    assert!(
                        f_on.is_some_and(|f| f <= f_off),
                        "tail {tail} size {size} minFold {min_fold}: first fold at turn {f_on:?} with topics, {f_off} without"
                    );
                }
            }
        }
    }
    // A setting where topics off never folds compares nothing: 46 of the 96 fold (measured).
    assert!(
        compared >= 40,
        "only {compared} of 96 settings folded without topics"
    );
}

/// A closed-topic line names the topic's whole turn range, also when its first turns were
/// folded by an earlier record: a turn id read off the line reaches every turn of the topic.
#[test]
fn closed_topic_lines_name_the_whole_topic() {
    let subjects = [
        0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 3, 3, 3,
    ];
    let mut checked = 0;
    for (size, tail) in [
        (2_500, 1_000),
        (5_000, 1_000),
        (8_000, 1_000),
        (5_000, 3_000),
    ] {
        let cfg = Config {
            tail_tokens: tail,
            ..small()
        };
        let r = run(cfg, &subjects, size);
        let st = r.s.state();
        for seg in &st.segs {
            let text: String = serde_json::from_str::<serde_json::Value>(&seg.json)
                .ok()
                .and_then(|v| {
                    v["content"]
                        .as_str()
                        .map(str::to_string)
                        .or_else(|| v["content"][0]["text"].as_str().map(str::to_string))
                })
                .unwrap_or_default();
            // A topic that goes on after a record is named by the turns folded so far only.
            for line in text
                .lines()
                .filter(|l| l.starts_with("- T") && !l.contains("goes on after"))
            {
                let Some(id) = line[2..].split(' ').next() else {
                    continue;
                };
                let Some(n) = cachefold::topics::TopicId::parse(id) else {
                    continue;
                };
                let t = st
                    .topics
                    .seg
                    .topic(n)
                    .expect("a topic the record names exists");
                let whole = format!("{}–{}", t.first, t.last);
                assert!(
                    line.contains(&whole),
                    "size {size}: {line:?} misses {whole}"
                );
                checked += 1;
            }
        }
    }
    assert!(checked >= 2, "closed-topic lines were rendered ({checked})");
}

/// A fold whose record is an LLM summary keeps the closed topics' lines (label, turn range,
/// recover id, exact identifiers) after the summary text, within the record's cap.
#[test]
fn summary_records_keep_the_closed_topics_lines() {
    let subjects = [0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3, 0, 0, 0, 1, 1, 1];
    // Few expected calls: the fold pays only after a summary was asked for and answered.
    let cfg = Config {
        tail_tokens: 1_500,
        min_fold_tokens: 1_500,
        expected_remaining_calls: 12,
        ..small()
    };
    let r = run_with(
        cfg.clone(),
        &subjects,
        8_000,
        200_000,
        Some("SUMMARY-TEXT of the work"),
    );
    let st = r.s.state();
    let used: Vec<&FoldReport> = r.folds.iter().filter(|f| f.used_summary).collect();
    assert!(!used.is_empty(), "a fold used a summary: {:?}", r.folds);
    let mut spanning = 0;
    for f in used {
        // The report carries the record's text (the segment may have been condensed since).
        let text = &f.summary;
        assert!(text.contains("SUMMARY-TEXT"), "{text}");
        let first = st.topics.topic_at(f.from).unwrap().id;
        let last = st.topics.topic_at(f.to - 1).unwrap().id;
        if first == last {
            assert!(!text.contains("Topics folded here"), "{text}");
            continue;
        }
        spanning += 1;
        let (s_at, t_at) = (
            text.find("SUMMARY-TEXT").unwrap(),
            text.find("Topics folded here").expect("topic lines"),
        );
        assert!(s_at < t_at, "the topic lines follow the summary: {text}");
        assert!(
            text.contains(&format!("- {first} "))
                && text.contains(&format!("recover {{\"id\":\"{first}\"}}")),
            "the first closed topic has its line: {text}"
        );
        assert!(
            text.contains(&format!("- {last} ")),
            "the last topic is named: {text}"
        );
        let cap = cachefold::fold::fold_cap_chars(cfg.fold_record_budget);
        assert!(
            text.chars().count() <= cap + 400,
            "{} chars",
            text.chars().count()
        );
    }
    assert!(spanning >= 1, "a summary record spans topics");
    // The same run replayed from its journal gives the same records.
    let (j, rep) = Session::restore(cfg, "topics", None, &r.journal).unwrap();
    assert!(rep.stopped.is_none(), "{rep:?}");
    assert_eq!(j.state().segs, st.segs);
    assert_append_only(&r);
}

/// An emergency fold moves its cut forward to a topic boundary when one lies within half a
/// `tailTokens` of it and leaves at least `minFoldTokens` to fold; without topics the same
/// session cuts elsewhere.
#[test]
fn emergency_folds_prefer_topic_boundaries() {
    let subjects = [0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3];
    let mut checked = 0;
    for (size, budget) in [
        (5_000, 3_000),
        (5_000, 4_000),
        (5_000, 5_000),
        (8_000, 6_000),
    ] {
        let cfg = |on: bool, min_fold: u64| {
            // Folds never pay on price (one call expected): only the emergency rule folds.
            let mut c = Config {
                tail_tokens: 1_000,
                min_fold_tokens: min_fold,
                expected_remaining_calls: 1,
                ..small()
            };
            c.topics.enabled = on;
            c
        };
        let on = run_with(cfg(true, 300), &subjects, size, budget, None);
        let off = run_with(cfg(false, 300), &subjects, size, budget, None);
        assert_append_only(&on);
        // A boundary that leaves less than minFoldTokens to fold is not a cut: the emergency
        // folds then cut where they cut without topics.
        let cuts = |r: &Run| r.folds.iter().map(|f| (f.from, f.to)).collect::<Vec<_>>();
        let big = run_with(cfg(true, 100_000), &subjects, size, budget, None);
        let big_off = run_with(cfg(false, 100_000), &subjects, size, budget, None);
        assert_eq!(cuts(&big), cuts(&big_off), "size {size} budget {budget}");
        let st = on.s.state();
        let bounds = st.topics.boundary_records();
        let em: Vec<&FoldReport> = on
            .folds
            .iter()
            .filter(|f| f.reason.as_str() == "emergency")
            .collect();
        assert!(!em.is_empty(), "size {size}: emergency folds");
        for f in &em {
            assert!(
                st.topics.seg.frozen_through() >= st.topics.turn_at(f.to).unwrap().0,
                "the boundary the fold used is frozen"
            );
        }
        let at_b = em.iter().filter(|f| bounds.contains(&f.to)).count();
        let off_at_b = off
            .folds
            .iter()
            .filter(|f| f.reason.as_str() == "emergency" && bounds.contains(&f.to))
            .count();
        assert!(
            at_b > off_at_b,
            "size {size}: {at_b} emergency cuts at topic boundaries with topics, {off_at_b} without; {:?} {:?}",
            em.iter().map(|f| (f.from, f.to)).collect::<Vec<_>>(),
            bounds
        );
        checked += 1;
    }
    assert_eq!(checked, 4);
}

// ---- layer 2: the optional host-LLM topic check in `maintain` ---------------------------------

fn llm_cfg(max: u32) -> Config {
    let mut c = small_topics();
    c.topics.use_llm = true;
    c.topics.max_calls_per_hour = max;
    c
}

/// What `maintain` does after each commit: ask, then answer with `script(turn)` (`None`: the
/// call failed). Returns the turns asked about and the statuses.
struct L2 {
    r: Run,
    asked: Vec<(u32, String)>,
}

fn run_l2(
    cfg: Config,
    subjects: &[usize],
    size: usize,
    script: impl Fn(u32) -> Option<String>,
) -> L2 {
    run_l2_at(cfg, subjects, size, false, script)
}

/// `late`: each answer arrives after the next turn's assemble (which may fold and freeze the
/// turn asked about), as when the host LLM is slow.
fn run_l2_at(
    cfg: Config,
    subjects: &[usize],
    size: usize,
    late: bool,
    script: impl Fn(u32) -> Option<String>,
) -> L2 {
    let mut r = Run {
        s: Session::new(cfg, "topics"),
        msgs: Vec::new(),
        journal: String::new(),
        outs: Vec::new(),
        declared: Vec::new(),
        folds: Vec::new(),
    };
    let mut asked = Vec::new();
    let mut waiting: Option<(String, u32)> = None;
    let answer_now = |s: &mut Session, id: &str, turn: u32, now: f64| {
        let ans = script(turn);
        let status = s.accept_topic(id, ans.as_deref().unwrap_or(""), ans.is_some(), now);
        (turn, status)
    };
    for (k, &subj) in subjects.iter().enumerate() {
        let t = topic_turn(k, subj, size);
        r.msgs.push(t[0].clone());
        let p = shim(&mut r.s, &r.msgs, DS, Some(20_000));
        r.outs.push(resolve(&p, &r.msgs));
        r.msgs.extend(t[1..].iter().cloned());
        let now = (T0 + k as u64 * 60_000) as f64;
        if let Some((id, turn)) = waiting.take() {
            asked.push(answer_now(&mut r.s, &id, turn, now - 5.0));
        }
        r.s.commit_turn(&CommitInput {
            advancement_key: format!("k{k}"),
            messages: t,
            now_ms: now,
            context_window: None,
        })
        .unwrap();
        if let Some(q) = r.s.topic_request(now + 10.0) {
            let turn: u32 = q.turn[1..].parse().unwrap();
            assert_eq!(q.max_tokens, 60);
            assert!(
                q.prompt.contains(&format!("Newest turn {}", q.turn)),
                "{}",
                q.prompt
            );
            // A second ask while one is pending gets nothing.
            assert!(r.s.topic_request(now + 11.0).is_none());
            if late {
                waiting = Some((q.id, turn));
            } else {
                asked.push(answer_now(&mut r.s, &q.id, turn, now + 20.0));
            }
        }
        r.journal.push_str(&r.s.take_journal());
    }
    L2 { r, asked }
}

fn answer(label: &str, new_topic: bool) -> Option<String> {
    Some(format!(
        "```json\n{{\"label\": \"{label}\", \"isNewTopic\": {new_topic}}}\n```"
    ))
}

#[test]
fn layer2_is_off_by_default() {
    assert!(!Config::default().topics.use_llm);
    let l = run_l2(small_topics(), &[0, 0, 1], 300, |_| answer("x", true));
    assert!(l.asked.is_empty());
    assert!(!l.r.journal.contains("topicReq"));
}

#[test]
fn layer2_labels_a_topic_and_adds_a_boundary_and_a_restart_gives_the_same_topics() {
    // t1 opens T1: a malformed answer leaves it unlabelled, so t2 (same topic by layer 1) is
    // checked too; the answer there says it is a new topic: a boundary at t2.
    let l = run_l2(llm_cfg(6), &[0, 0, 0, 1, 1], 300, |turn| match turn {
        1 => Some("I think it is about parsing.".into()),
        2 => answer("Quote handling in the lexer", true),
        4 => answer("Billing export", true),
        _ => answer("Billing export", false),
    });
    let st = l.r.s.state();
    let ts = &st.topics;
    assert_eq!(l.asked[0], (1, "malformed".to_string()), "{:?}", l.asked);
    assert_eq!(l.asked[1], (2, "applied".to_string()), "{:?}", l.asked);
    assert_eq!(ts.llm_malformed, 1);
    assert!(ts.llm_ok >= 1);
    let t2 = ts.seg.topic_of(cachefold::topics::TurnId(2)).unwrap();
    assert_eq!(t2.first.0, 2, "{:?}", ts.seg.topics());
    assert_eq!(t2.label.as_deref(), Some("Quote handling in the lexer"));
    assert_eq!(t2.cause, cachefold::topics::Cause::Llm);
    assert!(ts
        .seg
        .topic_of(cachefold::topics::TurnId(1))
        .unwrap()
        .label
        .is_none());
    // The billing turn (t4) is checked (it opens a topic, or layer 1 was unsure); the answer
    // confirms a boundary there and labels it; t5 continues it.
    assert!(l.asked.iter().any(|(t, _)| *t == 4), "{:?}", l.asked);
    let t4 = ts.seg.topic_of(cachefold::topics::TurnId(4)).unwrap();
    assert_eq!(t4.first.0, 4);
    assert_eq!(t4.label.as_deref(), Some("Billing export"));
    assert_eq!(
        ts.seg.topic_of(cachefold::topics::TurnId(5)).unwrap().id,
        t4.id
    );
    assert!(l.r.journal.contains("\"topicReq\":{"));
    assert!(l.r.journal.contains("\"topicDone\":{"));
    // Journal only, and snapshot + empty journal: the same topics, labels included.
    let (j, rep) = Session::restore(llm_cfg(6), "topics", None, &l.r.journal).unwrap();
    assert!(rep.stopped.is_none(), "{rep:?}");
    assert_eq!(j.state().topics, *ts);
    let snap = l.r.s.snapshot();
    let (sn, _) = Session::restore(llm_cfg(6), "topics", Some(&snap), "").unwrap();
    assert_eq!(sn.state().topics, *ts);
    assert_eq!(sn.snapshot(), snap);
    // A journal written without layer 2 (no topic events) loads with layer 2 on, and the
    // same layer-1 topics.
    let old = run(small_topics(), &[0, 0, 0, 1, 1], 300);
    let (o, rep) = Session::restore(llm_cfg(6), "topics", None, &old.journal).unwrap();
    assert!(rep.stopped.is_none(), "{rep:?}");
    assert_eq!(o.state().topics, old.s.state().topics);
    assert_ne!(o.state().topics.seg, ts.seg, "layer 2 changed the topics");
}

#[test]
fn layer2_honours_the_hourly_cap_and_failures_change_nothing() {
    // Every answer fails: no topic gets a label, so every turn is worth a check.
    let l = run_l2(llm_cfg(2), &[0, 0, 0, 0, 0], 300, |_| None);
    let st = l.r.s.state();
    assert_eq!(l.asked.len(), 2, "{:?}", l.asked);
    assert!(l.asked.iter().all(|(_, s)| s == "failed"));
    assert_eq!(st.topics.llm_failed, 2);
    assert_eq!(st.topics.llm_times.len(), 2);
    let base = run(small_topics(), &[0, 0, 0, 0, 0], 300);
    assert_eq!(
        st.topics.seg,
        base.s.state().topics.seg,
        "failed checks change no topic"
    );
    // An hour later the cap allows one more (about the newest turn only).
    let mut s = l.r.s;
    let later = (T0 + 5 * 60_000) as f64 + 3_700_000.0;
    let q = s.topic_request(later).expect("the hour passed");
    assert_eq!(q.turn, "t5");
    // A stale or unknown id is ignored.
    assert_eq!(
        s.accept_topic("t1#1", &answer("x", true).unwrap(), true, later),
        "ignored"
    );
    assert!(
        s.topic_request(later + 1.0).is_none(),
        "one pending at a time"
    );
    // A lost call frees the slot after its timeout, counted as failed; the turn is not asked again.
    assert!(s.topic_request(later + 200_000.0).is_none());
    assert_eq!(s.state().topics.llm_failed, 3);
    assert!(s.state().topics.llm_pending.is_none());
}

#[test]
fn layer2_never_moves_a_frozen_boundary() {
    // Large turns fold; checks keep coming; every answer says "new topic" with a label.
    let subjects = [0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3];
    // Answers come late: after the next assemble, which may fold over the turn asked about.
    let l = run_l2_at(llm_cfg(60), &subjects, 5_000, true, |t| {
        answer(&format!("L{t}"), t % 2 == 0)
    });
    let st = l.r.s.state();
    assert!(!st.segs.is_empty(), "the run folds");
    assert!(l.asked.len() >= 3, "{:?}", l.asked);
    // Replaying the journal event by event: once a turn is frozen, its topic id, and the
    // first turn of that topic, never change afterwards.
    let mut seen: Vec<(u32, u32, u32)> = Vec::new(); // (turn, topic id, topic first)
    let mut text = String::new();
    for line in l.r.journal.lines() {
        text.push_str(line);
        text.push('\n');
        let (s, _) = Session::restore(llm_cfg(60), "topics", None, &text).unwrap();
        let ts = &s.state().topics;
        for (turn, id, first) in &seen {
            let t = ts.seg.topic_of(cachefold::topics::TurnId(*turn)).unwrap();
            assert_eq!((t.id.0, t.first.0), (*id, *first), "frozen t{turn} moved");
        }
        for k in 1..=ts.seg.frozen_through() {
            if !seen.iter().any(|(t, _, _)| *t == k) {
                let t = ts.seg.topic_of(cachefold::topics::TurnId(k)).unwrap();
                seen.push((k, t.id.0, t.first.0));
            }
        }
    }
    assert!(!seen.is_empty(), "some turns froze");
}
