//! Reads every corpus session when `../shared/corpus` next to the checkout (or
//! `$CACHEFOLD_CORPUS`) exists and checks the readers' counts against the corpus README;
//! without it the test fails under CI and prints that it was skipped elsewhere (`tests/prereq`).
mod prereq;

use cachefold_bench::replay::transcript::parse_auto;

#[test]
fn corpus_sessions_parse() {
    let Some(root) = prereq::corpus("corpus_sessions_parse") else {
        return;
    };
    for (rel, min_calls) in [
        ("pi-mono/before-compaction.jsonl", 400usize),
        ("pi-mono/large-session.jsonl", 400),
        (
            "claude-code-spotter/4d5611e5-241a-462a-8d15-5122611a9569.jsonl",
            130,
        ),
        (
            "claude-code-spotter/8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl",
            130,
        ),
        ("reasonix-tau-bench/t01_address_happy.reasonix.r1.jsonl", 3),
    ] {
        let text = std::fs::read_to_string(root.join(rel)).unwrap();
        let t = parse_auto(rel, &text).unwrap();
        let results = t
            .messages
            .iter()
            .filter(|m| m.role_str() == "toolResult")
            .count();
        eprintln!(
            "{rel}: fmt={} msgs={} calls={} results={} compactions={} skipped={}",
            t.format,
            t.messages.len(),
            t.calls.len(),
            results,
            t.compactions.len(),
            t.skipped_lines
        );
        assert!(t.calls.len() >= min_calls, "{rel}: {} calls", t.calls.len());
    }
}
