//! The lessons classifier on hand-labelled real requests (`tests/lessons/first-requests.json`,
//! taken from the shared corpus; see the file's attribution). Injection happens only for a
//! confident code-gen classification, so precision and recall are measured for that decision.
//! `cargo test --test lessons_classifier -- --nocapture` prints the figures and the misses.

use cachefold::lessons::classify::{classify, Class};
use serde_json::Value;

fn items() -> Vec<Value> {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/lessons/first-requests.json"
    ))
    .unwrap();
    let doc: Value = serde_json::from_str(&text).unwrap();
    assert!(
        doc["attribution"].as_str().unwrap().contains("MIT")
            || doc["license"] == "MIT (per source repository)"
    );
    doc["items"].as_array().unwrap().clone()
}

#[test]
fn labelled_set_is_large_enough_and_clean() {
    let items = items();
    assert!(items.len() >= 60, "{}", items.len());
    for it in &items {
        let label = it["label"].as_str().unwrap();
        assert!(["code-gen", "exploration", "qa", "other"].contains(&label));
        assert!(it["source"].as_str().is_some_and(|s| s.ends_with(".jsonl")));
        assert!(!it["text"].as_str().unwrap().is_empty());
    }
}

#[test]
fn precision_and_recall_of_injection() {
    let items = items();
    let (mut tp, mut fp, mut fn_, mut tn) = (0, 0, 0, 0);
    let mut class_hits = 0;
    for it in &items {
        let text = it["text"].as_str().unwrap();
        let want = it["label"].as_str().unwrap();
        let c = classify(text);
        if c.class.as_str() == want {
            class_hits += 1;
        }
        let inject = c.class == Class::CodeGen && c.confident;
        let src = it["source"].as_str().unwrap();
        let head: String = text.chars().take(90).collect::<String>().replace('\n', " ");
        match (inject, want == "code-gen") {
            (true, true) => tp += 1,
            (true, false) => {
                fp += 1;
                println!("FALSE INJECT ({want}) {src}: {head}");
            }
            (false, true) => {
                fn_ += 1;
                println!(
                    "missed ({:?}, confident {}) {src}: {head}",
                    c.class, c.confident
                );
            }
            (false, false) => tn += 1,
        }
    }
    let precision = tp as f64 / (tp + fp).max(1) as f64;
    let recall = tp as f64 / (tp + fn_).max(1) as f64;
    println!(
        "lessons classifier on {} labelled requests: inject precision {:.3} ({tp}/{}), recall {:.3} ({tp}/{}), tn {tn}; 4-class accuracy {:.3}",
        items.len(),
        precision,
        tp + fp,
        recall,
        tp + fn_,
        class_hits as f64 / items.len() as f64
    );
    // Precision first: a false injection costs its tokens on every call of a session.
    assert!(precision >= 0.9, "precision {precision}");
    assert!(recall >= 0.5, "recall {recall}");
}

/// The gate the shim asks before reading any lesson file agrees with `decide` on every labelled
/// request: it refuses exactly the requests `decide` refuses, with the same reason, and a
/// session already under way is refused before any classification.
#[test]
fn gate_agrees_with_decide() {
    use cachefold::lessons::select::{decide, gate, DecideInput};
    for it in items() {
        let request = it["text"].as_str().unwrap();
        let input: DecideInput = serde_json::from_value(serde_json::json!({
            "request": request, "maxTokens": 200, "lessons": [], "inputs": [], "nowIso": "2026-11-26T00:00:00Z"
        }))
        .unwrap();
        let d = decide(&input);
        match gate(request, 0) {
            Some(g) => {
                assert_eq!(g.reason, d.reason, "{request}");
                assert_eq!(g.classification.as_ref(), Some(&d.classification));
            }
            None => assert!(
                d.classification.class == Class::CodeGen && d.classification.confident,
                "{request}"
            ),
        }
        let g = gate(request, 3).unwrap();
        assert_eq!(
            (g.reason.as_str(), g.classification),
            ("session already under way", None)
        );
    }
}
