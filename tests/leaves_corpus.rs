//! Pairing repair, digests and fold records over the real pi sessions of the replay corpus
//! (`../shared/corpus` next to the checkout, or `$CACHEFOLD_CORPUS`); when it is absent the test
//! fails under CI and prints that it was skipped elsewhere (`tests/prereq`).
//!
//! Real histories carry real pairing damage (before-compaction.jsonl has 454 calls but 448
//! results), so this checks the repair invariants on data no generator wrote.
use cachefold::digest::{digest, Digest};
use cachefold::fold::record::{fold_header, render_extractive};
use cachefold::pairing::{cut_points, repair, violations, Shape};
use cachefold::{Config, Message};
use std::collections::BTreeMap;

mod prereq;

/// `message` entries of a pi session JSONL file, in file order.
fn pi_messages(text: &str) -> Vec<Message> {
    text.lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter_map(|e| e.get("message").cloned())
        .filter_map(|m| Message::from_value(m).ok())
        .collect()
}

#[test]
fn corpus_pairing_and_digests() {
    let Some(root) = prereq::corpus("corpus_pairing_and_digests") else {
        return;
    };
    let cfg = Config::default();
    for rel in [
        "pi-mono/before-compaction.jsonl",
        "pi-mono/large-session.jsonl",
    ] {
        let text = std::fs::read_to_string(root.join(rel)).unwrap();
        let msgs = pi_messages(&text);
        assert!(msgs.len() > 300, "{rel}: {} messages", msgs.len());
        let shapes: Vec<Shape> = msgs.iter().map(|m| Shape::of(m)).collect();
        let before = violations(&shapes);
        for open in [false, true] {
            let rep = repair(&shapes, open);
            let resolved = rep.resolve(&shapes);
            assert!(
                cachefold::pairing::violations_with(&resolved, open).is_empty(),
                "{rel}"
            );
            let mut seen = vec![0u8; shapes.len()];
            for s in &rep.slots {
                if let cachefold::pairing::Slot::Orig(i) = s {
                    seen[*i] += 1;
                }
            }
            assert!(
                seen.iter().all(|&c| c == 1),
                "{rel}: a message was dropped or duplicated"
            );
            let before_open = cachefold::pairing::violations_with(&shapes, open);
            assert_eq!(
                before_open.is_empty(),
                rep.repairs.is_empty(),
                "{rel}: repairs must be reported"
            );
            // Every cut of the repaired history leaves two valid halves.
            for c in cut_points(&resolved) {
                assert!(
                    violations(&resolved[..c]).is_empty() && violations(&resolved[c..]).is_empty(),
                    "{rel}: cut {c}"
                );
            }
        }
        let mut kinds: BTreeMap<String, usize> = BTreeMap::new();
        for v in &before {
            *kinds.entry(v.kind.to_string()).or_default() += 1;
        }
        eprintln!(
            "{rel}: {} messages, violations before repair: {kinds:?}",
            msgs.len()
        );

        // Digests with call arguments resolved, then one fold record over everything.
        let mut calls: BTreeMap<String, (String, serde_json::Value)> = BTreeMap::new();
        let mut ds: Vec<Digest> = Vec::new();
        for m in &msgs {
            for c in m.tool_calls() {
                calls.insert(c.id.to_string(), (c.name.to_string(), c.arguments.clone()));
            }
            let args = m
                .tool_call_id()
                .and_then(|id| calls.get(id))
                .map(|(n, a)| (n.as_str(), a));
            let d = digest(m, &cfg, args);
            assert!(d.text.chars().count() <= 300);
            assert!(d.user_text.as_ref().map_or(0, |u| u.chars().count()) <= 1_200);
            ds.push(d);
        }
        let with_cmd = ds
            .iter()
            .filter(|d| d.commands.iter().any(|c| c.contains(" → ")))
            .count();
        assert!(
            with_cmd > 50,
            "{rel}: only {with_cmd} commands with outcomes"
        );
        assert!(
            ds.iter().filter(|d| !d.files.is_empty()).count() > 50,
            "{rel}"
        );
        let refs: Vec<&Digest> = ds.iter().collect();
        for max in [600usize, 4_000, 16_000] {
            let rec = render_extractive("f-corpus", &refs, max);
            assert!(
                rec.chars().count() <= max.max(fold_header("f-corpus").chars().count() + 1),
                "{rel}: {max}"
            );
            assert!(rec.starts_with("[cachefold fold f-corpus]"));
        }
        let rec = render_extractive("f-corpus", &refs, 16_000);
        assert!(
            rec.contains("## User constraints and instructions"),
            "{rel}"
        );
        assert!(rec.contains("## Files touched"), "{rel}");
    }
}
