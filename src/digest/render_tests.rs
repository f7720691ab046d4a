//! Fold-record rendering from digests: sections, budgets, the summary prompt, and the linear
//! builder against its quadratic oracle.

use super::tests::msg;
use super::tests::HEX40;
use super::*;
use crate::fold::oracle;
use crate::fold::prompt::summary_prompt;
use crate::fold::record::*;
use crate::text::*;
use proptest::prelude::*;
use serde_json::json;

fn sample_digests() -> Vec<Digest> {
    let cfg = Config::default();
    let args = json!({"command":"cargo test"});
    vec![
        digest(
            &msg(
                json!({"role":"user","content":"Build the cost model in src/cost.rs. Never use the regex crate. Ticket 550e8400-e29b-41d4-a716-446655440000."}),
            ),
            &cfg,
            None,
        ),
        digest(
            &msg(
                json!({"role":"assistant","content":[{"type":"text","text":"Plan: write price_for first."},{"type":"toolCall","id":"c1","name":"exec","arguments":{"command":"cargo test"}}]}),
            ),
            &cfg,
            None,
        ),
        digest(
            &msg(
                json!({"role":"toolResult","toolCallId":"c1","toolName":"exec","content":format!("error: linker failed\nCommand exited with code 1\n[cachefold] artifact {HEX40}"),"isError":true}),
            ),
            &cfg,
            Some(("exec", &args)),
        ),
        digest(
            &msg(json!({"role":"user","content":"Also keep DS_BLOCK = 128."})),
            &cfg,
            None,
        ),
    ]
}

#[test]
fn render_has_header_sections_and_merged_commands() {
    let ds = sample_digests();
    let refs: Vec<&Digest> = ds.iter().collect();
    let out = render_extractive("f-000001", &refs, 10_000);
    let first = out.lines().next().unwrap();
    assert_eq!(
        first,
        "[cachefold fold f-000001] Earlier conversation folded to save context. Exact text: call cachefold_recover with {\"id\":\"f-000001\"}; search with cachefold_search."
    );
    for s in [
        "## Goal",
        "## User constraints and instructions",
        "## Decisions",
        "## Files touched",
        "## Commands and outcomes",
        "## Errors",
        "## Open threads",
        "## Artifacts",
        "## Identifiers",
    ] {
        assert!(out.contains(s), "missing {s}:\n{out}");
    }
    assert!(out.contains("- Build the cost model in src/cost.rs. Never use the regex crate."));
    assert!(out.contains("- Also keep DS_BLOCK = 128."));
    assert!(
        out.contains("- $ cargo test → exit 1: error: linker failed\n"),
        "{out}"
    );
    assert!(
        !out.contains("- $ cargo test\n"),
        "bare command must merge into its outcome:\n{out}"
    );
    assert!(out.contains(&format!(
        "- {HEX40} (cachefold_recover {{\"id\":\"{HEX40}\"}})"
    )));
    assert!(out.contains("550e8400-e29b-41d4-a716-446655440000"));
    assert!(out.contains("last user request: Also keep DS_BLOCK = 128."));
    assert!(out.contains("last command failed: $ cargo test → exit 1"));
    // Deterministic.
    assert_eq!(out, render_extractive("f-000001", &refs, 10_000));
    assert!(out.chars().count() <= 10_000);
}

#[test]
fn render_drops_low_priority_first_and_keeps_user_text() {
    let ds = sample_digests();
    let refs: Vec<&Digest> = ds.iter().collect();
    let full = render_extractive("f1", &refs, 100_000);
    let header = fold_header("f1").chars().count();
    let tight = render_extractive("f1", &refs, header + 260);
    assert!(
        tight.chars().count() <= header + 260,
        "{}",
        tight.chars().count()
    );
    assert!(tight.contains("Never use the regex crate."), "{tight}");
    assert!(tight.contains("Also keep DS_BLOCK = 128."), "{tight}");
    assert!(!tight.contains("## Decisions"), "{tight}");
    assert!(full.contains("## Decisions"));
    // Smaller than the header: just the header.
    assert_eq!(
        render_extractive("f1", &refs, 5),
        format!("{}\n", fold_header("f1"))
    );
    assert_eq!(
        render_extractive("f1", &[], 1000),
        format!("{}\n", fold_header("f1"))
    );
}

#[test]
fn summary_prompt_asks_for_sections_verbatim() {
    let ds = sample_digests();
    let refs: Vec<&Digest> = ds.iter().collect();
    let (sys, user) = summary_prompt("f9", &refs, 2_000);
    assert!(sys.contains("exactly"));
    assert!(user.contains("at most 2000 characters"));
    for s in SECTIONS {
        assert!(user.contains(&format!("## {s}\n")), "{s}");
    }
    assert!(user.contains("verbatim"));
    assert!(user.contains("550e8400-e29b-41d4-a716-446655440000"));
    assert!(user.contains("1. user: Build the cost model"));
    assert!(user.contains("2. assistant → exec: Plan: write price_for first. [$ cargo test]"));
    assert_eq!(summary_prompt("f9", &refs, 2_000), (sys, user));
}

/// Proptest counterexample: section headers were counted one char short, so a record
/// with many sections overran its budget by a few chars.
#[test]
fn regression_budget_counts_section_headers_exactly() {
    let cfg = Config::default();
    let big = format!("error: boom src/main.rs https://a.b/c \n Sender (untrusted metadata): fold_decision artifact {HEX40} \n {}", "A AAaA 0aa-aA0aAaAaAaa ".repeat(40));
    let ts = [big.as_str(), "", "fold_decision error: boom fold_decision artifact 0123456789abcdef0123456789abcdef01234567 fold_decision"];
    let ds: Vec<Digest> = ts
        .iter()
        .enumerate()
        .map(|(i, t)| {
            digest(
                &msg(json!({"role": if i % 2 == 0 { "user" } else { "assistant" }, "content": t})),
                &cfg,
                None,
            )
        })
        .collect();
    let refs: Vec<&Digest> = ds.iter().collect();
    let full = render_extractive("fid", &refs, usize::MAX);
    let s = collect_sections(&refs);
    assert_eq!(
        full.chars().count(),
        Fitter::new(&fold_header("fid"), s).total()
    );
    for max in (0..full.chars().count() + 10).step_by(7) {
        let out = render_extractive("fid", &refs, max);
        assert!(
            out.chars().count() <= max.max(fold_header("fid").chars().count() + 1),
            "max {max}: {}",
            out.chars().count()
        );
    }
}

#[test]
fn clip_and_head_tail_bounds() {
    assert_eq!(clip("hello world", 20), "hello world");
    assert_eq!(clip("hello wonderful world", 12), "hello…");
    assert_eq!(clip("abcdefghij", 5), "abcd…");
    assert_eq!(clip("abc", 0), "");
    let s = "x".repeat(5000);
    assert!(head_tail(&s, 1200).chars().count() <= 1200);
    let s = "ä ".repeat(3000);
    assert!(head_tail(&s, 500).chars().count() <= 500);
}

fn arb_text() -> impl Strategy<Value = String> {
    let atoms = prop_oneof![
        Just("src/main.rs".to_string()),
        Just("error: boom".to_string()),
        Just("fold_decision".to_string()),
        Just(format!("artifact {HEX40}")),
        Just("https://a.b/c".to_string()),
        Just("\n".to_string()),
        Just("<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>".to_string()),
        Just("Sender (untrusted metadata):".to_string()),
        Just("```json".to_string()),
        Just("你好".to_string()),
        "[a-zA-Z0-9 _./-]{0,40}",
    ];
    proptest::collection::vec(atoms, 0..80).prop_map(|v| v.join(" "))
}

fn arb_digest() -> impl Strategy<Value = Digest> {
    let pick = |pool: &'static [&'static str], n: usize| {
        proptest::collection::vec(proptest::sample::select(pool), 0..n)
            .prop_map(|v| v.into_iter().map(str::to_string).collect::<Vec<_>>())
    };
    const WORDS: &[&str] = &[
        "src/a.rs",
        "src/b.rs",
        "Cargo.toml",
        "x_y",
        "fold_decision",
        "42",
        HEX40,
        "https://a.b/c",
        "",
    ];
    const CMDS: &[&str] = &[
        "$ cargo test",
        "$ cargo test → exit 1",
        "$ cargo test → ok",
        "$ ls",
        "$ ls → exit 0",
        "$ make → timed out",
        "$ make",
    ];
    const ERRS: &[&str] = &[
        "error: boom",
        "error[E0308]: mismatched types",
        "panicked at src/a.rs:3",
        "boom",
    ];
    let user = prop_oneof![
        Just(None),
        Just(Some("ok".to_string())),
        Just(Some("/mode".to_string())),
        "[a-z ]{0,60}".prop_map(Some),
        ("[a-z]{1,12}", 5usize..400).prop_map(|(w, n)| Some(format!("{w} ").repeat(n))),
        (1usize..30).prop_map(|n| Some(format!("line one\n{}", "keep it short. ".repeat(n)))),
    ];
    (
        0..3usize,
        prop_oneof![
            Just(String::new()),
            "[a-z ]{1,40}",
            (1usize..60).prop_map(|n| "note ".repeat(n))
        ],
        (
            pick(WORDS, 6),
            pick(CMDS, 4),
            pick(ERRS, 3),
            pick(WORDS, 10),
            pick(&[HEX40, "0123456789abcdef0123456789abcdef01234567"], 2),
        ),
        user,
    )
        .prop_map(
            |(role, text, (files, commands, errors, identifiers, artifacts), user_text)| Digest {
                role: ["user", "assistant", "toolResult"][role].into(),
                text: text.into(),
                files: boxed_list(files),
                commands: boxed_list(commands),
                errors: boxed_list(errors),
                identifiers: boxed_list(identifiers),
                artifacts: boxed_list(artifacts),
                user_text: if role == 0 {
                    user_text.map(Str::from)
                } else {
                    None
                },
                ..Digest::default()
            },
        )
}

/// Fold-record building is linear: 200,000 digests (a 100,000-message fold has about as
/// many items) fitted into a small record. The quadratic builder recomputed the record's
/// length and shifted the section once per dropped item: about 10^11 steps here, hours.
#[test]
fn fold_record_of_200k_digests_is_linear() {
    let ds: Vec<Digest> = (0..200_000)
        .map(|i| Digest {
            role: if i % 2 == 0 { "user" } else { "assistant" }.into(),
            text: format!("decision {i}").into(),
            files: boxed_list(vec![format!("src/m{i}.rs")]),
            commands: boxed_list(vec![
                format!("$ run {i}"),
                format!("$ run {i} → exit {}", i % 3),
            ]),
            errors: boxed_list(vec![format!("error: e{i}")]),
            identifiers: boxed_list(vec![format!("id_{i}")]),
            user_text: (i % 2 == 0).then(|| format!("step {i}: {}", "word ".repeat(i % 50)).into()),
            ..Digest::default()
        })
        .collect();
    let refs: Vec<&Digest> = ds.iter().collect();
    let out = render_extractive("f1", &refs, 8_000);
    assert!(out.chars().count() <= 8_000);
    assert!(out.contains("step 199998"), "the newest user text is kept");
    let (_, user) = summary_prompt("f1", &refs, 2_000);
    assert!(user.contains("1. user: step 0"));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn digests_are_bounded(t in arb_text(), role in 0..4usize) {
        let cfg = Config::default();
        let args = json!({"command": t.clone(), "path": "a/b.rs"});
        let m = match role {
            0 => json!({"role":"user","content":t}),
            1 => json!({"role":"assistant","content":[{"type":"text","text":t},{"type":"toolCall","id":"c","name":"exec","arguments":args}]}),
            2 => json!({"role":"toolResult","toolCallId":"c","toolName":"exec","content":t,"isError":true}),
            _ => json!({"role":"custom","content":t}),
        };
        let d = digest(&msg(m), &cfg, Some(("exec", &args)));
        prop_assert!(d.text.chars().count() <= GIST_CHARS);
        prop_assert!(d.user_text.as_ref().map_or(0, |u| u.chars().count()) <= USER_TEXT_CHARS);
        prop_assert!(d.files.len() <= MAX_FILES && d.commands.len() <= MAX_COMMANDS);
        prop_assert!(d.errors.len() <= MAX_ERRORS && d.identifiers.len() <= MAX_IDENTIFIERS);
        prop_assert!(d.artifacts.len() <= MAX_ARTIFACTS);
        prop_assert!(d.commands.iter().chain(&d.errors).chain(&d.files).all(|x| x.chars().count() <= 2 * ITEM_CHARS));
    }

    #[test]
    fn render_respects_budget_and_keeps_identifiers_whole(ts in proptest::collection::vec(arb_text(), 0..8), max in 0usize..3000) {
        let cfg = Config::default();
        let ds: Vec<Digest> = ts.iter().enumerate().map(|(i, t)| {
            let role = if i % 2 == 0 { "user" } else { "assistant" };
            digest(&msg(json!({"role": role, "content": t})), &cfg, None)
        }).collect();
        let refs: Vec<&Digest> = ds.iter().collect();
        let out = render_extractive("fid", &refs, max);
        let header = fold_header("fid").chars().count() + 1;
        prop_assert!(out.chars().count() <= max.max(header), "{} > {}", out.chars().count(), max);
        prop_assert!(out.starts_with(&fold_header("fid")));
        if let Some(pos) = out.find("\n## Identifiers\n") {
            let line = out[pos + 16..].lines().next().unwrap_or("");
            let all: Vec<&Str> = ds.iter().flat_map(|d| d.identifiers.iter()).collect();
            for id in line.split(", ") {
                prop_assert!(all.iter().any(|x| x.as_str() == id), "cut identifier {id:?}");
            }
        }
    }

    /// The linear record builder renders exactly what the quadratic one did, on digests
    /// with duplicates, commands with and without outcomes, long user text and budgets from
    /// nothing to everything.
    #[test]
    fn linear_builder_matches_the_quadratic_oracle(ds in proptest::collection::vec(arb_digest(), 0..60), max in 0usize..6000) {
        let refs: Vec<&Digest> = ds.iter().collect();
        for m in [max, max / 8, max * 4, usize::MAX] {
            prop_assert_eq!(
                render_extractive("f3", &refs, m),
                oracle::render_extractive_quadratic("f3", &refs, m)
            );
        }
        prop_assert_eq!(summary_prompt("f3", &refs, max / 4), oracle::summary_prompt_quadratic("f3", &refs, max / 4));
    }

    #[test]
    fn text_without_markers_is_unchanged(t in "[a-zA-Z0-9 \n:()`.,-]{0,200}") {
        prop_assume!(!t.contains("untrusted") && !t.contains("Delivery:"));
        prop_assert_eq!(collapse_churn(&t), t);
    }
}
