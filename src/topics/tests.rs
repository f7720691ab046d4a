use super::llm::{self, Answer, RateLimit};
use super::*;
use proptest::prelude::*;

fn user(text: &str) -> Digest {
    Digest {
        role: "user".into(),
        text: crate::text::clip(text, 300).into(),
        user_text: Some(text.into()),
        ..Digest::default()
    }
}

fn call(tool: &str, file: &str) -> Digest {
    Digest {
        role: "assistant".into(),
        tool_name: Some(tool.into()),
        files: Box::new([file.into()]),
        ..Digest::default()
    }
}

fn turn(text: &str, tool: &str, file: &str) -> Vec<Digest> {
    vec![user(text), call(tool, file)]
}

fn inputs(turns: &[Vec<Digest>]) -> Vec<TurnInput<'_>> {
    turns
        .iter()
        .map(|d| TurnInput {
            digests: d,
            at_ms: None,
        })
        .collect()
}

/// Two clearly different tasks, three turns each.
fn two_tasks() -> Vec<Vec<Digest>> {
    vec![
        turn(
            "Fix the tokenizer crash in src/lexer.rs when the input has a tab",
            "read",
            "src/lexer.rs",
        ),
        turn(
            "The lexer still panics on tabs inside string literals in lexer.rs",
            "edit",
            "src/lexer.rs",
        ),
        turn(
            "Add a lexer test for tabs in string literals",
            "edit",
            "tests/lexer_tabs.rs",
        ),
        turn(
            "New task: write the deployment docs for the kubernetes helm chart",
            "write",
            "docs/deploy.md",
        ),
        turn(
            "Mention the helm values for ingress and the kubernetes namespace in deploy.md",
            "edit",
            "docs/deploy.md",
        ),
        turn(
            "Add a helm upgrade example to the deployment docs",
            "edit",
            "docs/deploy.md",
        ),
    ]
}

#[test]
fn ids_render_and_parse() {
    assert_eq!(TurnId(3).to_string(), "t3");
    assert_eq!(TopicId(2).to_string(), "T2");
    assert_eq!(TurnId::parse("t12"), Some(TurnId(12)));
    assert_eq!(TopicId::parse("T1"), Some(TopicId(1)));
    assert_eq!(TurnId::parse("t0"), None);
    assert_eq!(TurnId::parse("T3"), None);
    assert_eq!(TopicId::parse("Tx"), None);
}

#[test]
fn finds_the_task_switch() {
    let turns = two_tasks();
    let s = Segmenter::segment(Params::default(), &inputs(&turns));
    assert_eq!(s.boundaries(), vec![TurnId(4)], "{:#?}", s.topics());
    assert_eq!(s.topic_of(TurnId(3)).map(|t| t.id), Some(TopicId(1)));
    assert_eq!(s.topic_of(TurnId(6)).map(|t| t.id), Some(TopicId(2)));
    let t2 = s.topic(TopicId(2)).unwrap();
    assert_eq!((t2.first, t2.last, t2.turns()), (TurnId(4), TurnId(6), 3));
    assert!(
        t2.keywords
            .iter()
            .any(|k| k == "helm" || k == "kubernetes" || k == "deploy.md"),
        "{:?}",
        t2.keywords
    );
}

#[test]
fn continuation_cues_hold_a_topic() {
    let mut turns = two_tasks();
    turns.truncate(3);
    turns.push(turn("yes, continue", "bash", "Cargo.toml"));
    turns.push(turn("try again", "bash", "Cargo.toml"));
    let s = Segmenter::segment(Params::default(), &inputs(&turns));
    assert_eq!(s.topics().len(), 1, "{:#?}", s.topics());
}

#[test]
fn idle_gap_and_cues_score() {
    assert!(cue("New task: port the CLI") > 0.0);
    assert!(cue("ok do it") < 0.0);
    assert!(cue("continue") < 0.0);
    assert_eq!(cue("Explain the cache model"), 0.0);
}

#[test]
fn freeze_pins_boundaries_against_llm_answers() {
    let turns = two_tasks();
    let mut s = Segmenter::segment(Params::default(), &inputs(&turns));
    s.freeze_through(TurnId(4));
    let before = s.topics().to_vec();
    let no = Answer {
        label: "docs".into(),
        is_new_topic: false,
    };
    assert_eq!(s.apply_llm(TurnId(4), &no), Applied::Frozen);
    let yes = Answer {
        label: "x".into(),
        is_new_topic: true,
    };
    assert_eq!(s.apply_llm(TurnId(2), &yes), Applied::Frozen);
    assert_eq!(s.boundaries(), vec![TurnId(4)]);
    // Only an empty label is filled in.
    assert_eq!(s.topic(TopicId(2)).unwrap().label.as_deref(), Some("docs"));
    assert_eq!(before.len(), s.topics().len());
    // Past the frozen prefix boundaries may move.
    assert_eq!(s.apply_llm(TurnId(5), &yes), Applied::BoundaryAdded);
    assert_eq!(s.boundaries(), vec![TurnId(4), TurnId(5)]);
    assert_eq!(s.topic_of(TurnId(5)).unwrap().id, TopicId(3));
    assert_eq!(s.apply_llm(TurnId(5), &no), Applied::BoundaryRemoved);
    assert_eq!(s.boundaries(), vec![TurnId(4)]);
    // Ids are never reused.
    assert_eq!(s.apply_llm(TurnId(6), &yes), Applied::BoundaryAdded);
    assert_eq!(s.topic_of(TurnId(6)).unwrap().id, TopicId(4));
    assert_eq!(s.apply_llm(TurnId(99), &yes), Applied::Unknown);
    // Freezing never goes back.
    s.freeze_through(TurnId(2));
    assert_eq!(s.frozen_through(), 4);
}

#[test]
fn llm_prompt_and_answers() {
    let turns = two_tasks();
    let s = Segmenter::segment(Params::default(), &inputs(&turns[..4]));
    let q = s.llm_query(&turns[3]).unwrap();
    assert_eq!((q.turn, q.topic), (TurnId(4), TopicId(2)));
    assert_eq!(q.tools, vec!["write".to_string()]);
    let (sys, user) = llm::prompt(&q);
    assert!(sys.contains("isNewTopic"));
    assert!(user.contains("t4") && user.contains("helm"), "{user}");
    let a = llm::parse_answer(
        "```json\n{\"label\": \"Helm \\\"deploy\\\" docs\", \"isNewTopic\": true}\n```",
    )
    .unwrap();
    assert_eq!(
        a,
        Answer {
            label: "Helm deploy docs".into(),
            is_new_topic: true
        }
    );
    let b = llm::parse_answer("Sure. {\"is_new_topic\": \"no\", \"label\": \"lexer {tabs}\"} done")
        .unwrap();
    assert_eq!(
        b,
        Answer {
            label: "lexer {tabs}".into(),
            is_new_topic: false
        }
    );
    assert_eq!(llm::parse_answer("{\"label\": \"x\"}"), None);
    assert_eq!(llm::parse_answer("no json"), None);
    assert_eq!(llm::parse_answer("{{{"), None);
}

#[test]
fn rate_limit_per_hour() {
    let mut r = RateLimit::default();
    let h = 3_600_000.0;
    assert!(!r.allow(0.0, 0));
    for i in 0..3 {
        assert!(r.allow(f64::from(i), 3));
        r.record(f64::from(i), 3);
    }
    assert!(!r.allow(10.0, 3));
    assert!(r.allow(h + 1.0, 3));
    assert!(!r.allow(f64::NAN, 3));
    r.record(h + 2.0, 3);
    assert!(r.calls.len() <= 3);
}

#[test]
fn state_roundtrips_through_json() {
    let turns = two_tasks();
    let s = Segmenter::segment(Params::default(), &inputs(&turns));
    let text = serde_json::to_string(&s).unwrap();
    let back: Segmenter = serde_json::from_str(&text).unwrap();
    assert_eq!(back, s);
    // A missing or partial state parses to defaults (journal forward-compatibility).
    let empty: Segmenter = serde_json::from_str("{}").unwrap();
    assert_eq!(empty.turn_count(), 0);
}

// ---------------------------------------------------------------------------------------------
// Properties

const VOCAB: &[&str] = &[
    "lexer",
    "parser",
    "tokens",
    "helm",
    "deploy",
    "kubernetes",
    "cache",
    "prefix",
    "fold",
    "journal",
    "snapshot",
    "recover",
    "bench",
    "corpus",
    "window",
    "pricing",
    "tabs",
    "docs",
    "continue",
    "yes",
    "new task",
    "moving on",
    "unrelated",
    "try again",
    "ok",
];
const FILES: &[&str] = &[
    "src/lexer.rs",
    "src/parser.rs",
    "docs/deploy.md",
    "src/cache.rs",
    "README.md",
];
const TOOLS: &[&str] = &["read", "edit", "bash", "write"];

fn arb_turn() -> impl Strategy<Value = (Vec<Digest>, Option<u32>)> {
    (
        prop::collection::vec(0..VOCAB.len(), 0..8),
        prop::collection::vec((0..TOOLS.len(), 0..FILES.len()), 0..3),
        prop::option::of(0u32..10_000),
    )
        .prop_map(|(words, calls, gap)| {
            let text: Vec<&str> = words.iter().map(|i| VOCAB[*i]).collect();
            let mut d = vec![user(&text.join(" "))];
            for (t, f) in calls {
                d.push(call(TOOLS[t], FILES[f]));
            }
            (d, gap)
        })
}

fn timed(turns: &[(Vec<Digest>, Option<u32>)]) -> Vec<TurnInput<'_>> {
    let mut at = 0f64;
    turns
        .iter()
        .map(|(d, gap)| {
            at += f64::from(gap.unwrap_or(1)) * 1_000.0;
            TurnInput {
                digests: d,
                at_ms: gap.map(|_| at),
            }
        })
        .collect()
}

fn small_params() -> Params {
    Params {
        max_vocab: 16,
        topic_terms: 8,
        threshold: 0.7,
        ..Params::default()
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// Incremental == batch on every prefix, and resuming from serialised state changes nothing.
    #[test]
    fn incremental_equals_batch(turns in prop::collection::vec(arb_turn(), 1..40), cut in 0usize..40) {
        let inp = timed(&turns);
        let batch = Segmenter::segment(small_params(), &inp);
        let cut = cut.min(inp.len());
        let mut s = Segmenter::segment(small_params(), &inp[..cut]);
        let text = serde_json::to_string(&s).unwrap();
        s = serde_json::from_str(&text).unwrap();
        for t in &inp[cut..] {
            s.push_turn(*t);
        }
        prop_assert_eq!(&s, &batch);
        // The topics of a prefix are the batch topics restricted to it (layer 1 looks back only).
        let prefix = Segmenter::segment(small_params(), &inp[..cut]);
        for k in 1..=cut as u32 {
            prop_assert_eq!(
                prefix.topic_of(TurnId(k)).map(|t| t.id),
                batch.topic_of(TurnId(k)).map(|t| t.id)
            );
        }
    }

    /// Frozen turns keep their topic whatever comes later: more turns and layer-2 answers.
    #[test]
    fn frozen_boundaries_never_move(
        turns in prop::collection::vec(arb_turn(), 2..40),
        freeze in 1u32..40,
        answers in prop::collection::vec((1u32..60, any::<bool>()), 0..20),
    ) {
        let inp = timed(&turns);
        let half = inp.len() / 2;
        let mut s = Segmenter::segment(small_params(), &inp[..half.max(1)]);
        s.freeze_through(TurnId(freeze));
        let frozen = s.frozen_through();
        let pinned: Vec<(u32, TopicId, String)> = (1..=frozen)
            .map(|k| {
                let t = s.topic_of(TurnId(k)).unwrap();
                (k, t.id, t.first.to_string())
            })
            .collect();
        for (i, t) in inp[half.max(1)..].iter().enumerate() {
            s.push_turn(*t);
            if let Some((k, yes)) = answers.get(i) {
                s.apply_llm(TurnId(*k), &Answer { label: format!("l{k}"), is_new_topic: *yes });
            }
        }
        for (k, yes) in &answers {
            s.apply_llm(TurnId(*k), &Answer { label: String::new(), is_new_topic: *yes });
        }
        for (k, id, first) in &pinned {
            let t = s.topic_of(TurnId(*k)).unwrap();
            prop_assert_eq!(t.id, *id);
            prop_assert_eq!(&t.first.to_string(), first);
        }
        // The frozen turns' topic starts never move and no boundary appears inside them.
        let b_in: Vec<TurnId> = s.boundaries().into_iter().filter(|b| b.0 <= frozen).collect();
        let expect: Vec<TurnId> = pinned.iter().filter(|(k, _, f)| f == &format!("t{k}") && *k > 1).map(|(k, _, _)| TurnId(*k)).collect();
        prop_assert_eq!(b_in, expect);
    }

    /// Topics tile the turns, ids are unique, and the state stays bounded.
    #[test]
    fn topics_tile_and_state_is_bounded(
        turns in prop::collection::vec(arb_turn(), 1..60),
        answers in prop::collection::vec((1u32..60, any::<bool>()), 0..10),
    ) {
        let inp = timed(&turns);
        let p = small_params();
        let mut s = Segmenter::new(p.clone());
        for (i, t) in inp.iter().enumerate() {
            s.push_turn(*t);
            if let Some((k, yes)) = answers.get(i) {
                s.apply_llm(TurnId(*k), &Answer { label: "x".into(), is_new_topic: *yes });
            }
            prop_assert!(s.df.len() <= p.max_vocab.max(16));
            prop_assert!(s.topic_vocab.len() <= p.topic_terms.max(8));
            prop_assert!(s.recent.len() <= p.window.max(1));
            prop_assert!(s.recent.iter().all(|b| b.len() <= terms::MAX_TURN_TERMS));
            prop_assert!(s.topics.iter().all(|t| t.keywords.len() <= terms::MAX_KEYWORDS
                && t.preview.chars().count() <= PREVIEW_CHARS + 3));
        }
        let ts = s.topics();
        prop_assert_eq!(ts.first().map(|t| t.first), Some(TurnId(1)));
        prop_assert_eq!(ts.last().map(|t| t.last), Some(TurnId(s.turn_count())));
        for w in ts.windows(2) {
            prop_assert_eq!(w[1].first.0, w[0].last.0 + 1);
        }
        // Unique ids (creation order: a layer-2 split gets the next number wherever it lands).
        let ids: std::collections::BTreeSet<TopicId> = ts.iter().map(|t| t.id).collect();
        prop_assert_eq!(ids.len(), ts.len());
        for t in ts {
            prop_assert!(t.first <= t.last);
        }
    }
}

proptest! {
    /// Capping a weight map in place keeps what capping its pairs as a vector keeps.
    #[test]
    fn cap_weights_keeps_the_heaviest_pairs(
        m in proptest::collection::btree_map(0u32..400, 0u8..12, 0..120),
        n in 0usize..130,
    ) {
        let mut map: Weights = m.iter().map(|(k, w)| (*k, f64::from(*w) / 4.0)).collect();
        let mut want: Vec<(u32, f64)> = map.iter().map(|(k, w)| (*k, *w)).collect();
        terms::keep_heaviest(&mut want, n);
        cap_weights(&mut map, n);
        let got: Vec<(u32, f64)> = map.into_iter().collect();
        prop_assert_eq!(got, want);
    }
}
