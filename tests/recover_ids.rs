//! Every id the product prints is accepted by the tool it names (issue 10, "nothing lost").
//!
//! * Artifact ids are hex digests: one in eight starts with `f`, one in eight with `c`. They
//!   must never be taken for fold (`f<k>`) or condensed (`c<k>`) ids.
//! * A long simulated session (shrunk tool outputs, folds, condensations) is driven like the
//!   shim drives it; every id found in what the core renders (fold records, condensed records,
//!   shrink headers, search answers, stats) must parse with `recover::parse_target` to the
//!   kind of document that was stored under it.

mod engine_support;

use cachefold::config::Config;
use cachefold::engine::Session;
use cachefold::tools::recover::{parse_target, RecoverTarget};
use cachefold::tools::search::{self, OwnedDoc};
use cachefold::tools::shrink::{artifact_id, process_tool_result};
use engine_support::*;
use serde_json::Value;
use std::collections::BTreeMap;

#[test]
fn artifact_ids_are_told_apart_by_their_whole_shape() {
    let mut by_first: BTreeMap<char, usize> = BTreeMap::new();
    for k in 0..4_000 {
        let id = artifact_id(&format!("tool output number {k}"));
        *by_first.entry(id.chars().next().unwrap()).or_default() += 1;
        assert_eq!(
            parse_target(&id).unwrap_or_else(|e| panic!("{id}: {e}")),
            RecoverTarget::Artifact(id.clone()),
            "{id}"
        );
    }
    assert!(by_first[&'f'] > 100 && by_first[&'c'] > 100, "{by_first:?}");
    // All-digit-looking digests behind an `f`/`c` are still artifacts (40 chars).
    let f_digits = format!("f{}", "1".repeat(39));
    assert_eq!(
        parse_target(&f_digits).unwrap(),
        RecoverTarget::Artifact(f_digits.clone())
    );
    assert_eq!(
        parse_target("f7").unwrap(),
        RecoverTarget::Fold("f7".into())
    );
    assert_eq!(
        parse_target("c12").unwrap(),
        RecoverTarget::Condensed("c12".into())
    );
    assert_eq!(
        parse_target("t1").unwrap(),
        RecoverTarget::Turn("t1".into())
    );
    assert_eq!(
        parse_target("T12").unwrap(),
        RecoverTarget::Topic("T12".into())
    );
    for bad in [
        "",
        "f",
        "c",
        "t",
        "t0",
        "T0",
        "t1a",
        "T-1",
        "t1234567890",
        "f1a",
        "c1a",
        "fc1",
        "F1",
        "C1",
        "f0123456789",
        "../f1",
        "f 1",
    ] {
        assert!(parse_target(bad).is_err(), "{bad:?}");
    }
}

/// Ids named in `text`: after `"id":"`, in a fold header, in a condensed record's cover list,
/// in a shrink header (`→ artifact <id>`) and at the start of a search hit line.
fn ids_in(text: &str, out: &mut Vec<String>) {
    let word = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_ascii_alphanumeric())
            .collect()
    };
    let mut rest = text;
    while let Some(p) = rest.find("\"id\":\"") {
        rest = &rest[p + 6..];
        out.push(word(rest));
    }
    for marker in ["[cachefold fold ", "→ artifact "] {
        let mut rest = text;
        while let Some(p) = rest.find(marker) {
            rest = &rest[p + marker.len()..];
            out.push(word(rest));
        }
    }
    let mut rest = text;
    while let Some(p) = rest.find("(Condensed from folds ") {
        rest = &rest[p + "(Condensed from folds ".len()..];
        let list = rest.split(')').next().unwrap_or("");
        out.extend(list.split(", ").map(|s| word(s.trim())));
    }
    for line in text.lines() {
        if let Some((id, _)) = line.split_once(" line ") {
            if line.contains(" (fold)") || line.contains(" (artifact)") {
                out.push(id.to_string());
            }
        }
    }
}

fn texts_of(json: &str) -> Vec<String> {
    let v: Value = serde_json::from_str(json).unwrap();
    let mut out = Vec::new();
    if let Some(parts) = v.get("content").and_then(Value::as_array) {
        for p in parts {
            if let Some(t) = p.get("text").and_then(Value::as_str) {
                out.push(t.to_string());
            }
        }
    }
    out
}

#[test]
fn every_rendered_id_is_accepted_by_recover() {
    let cfg = Config {
        tail_tokens: 1_000,
        min_fold_tokens: 500,
        fold_record_budget: 400,
        expected_remaining_calls: 100,
        ..Config::default()
    };
    let mut s = Session::new(cfg.clone(), "ids");
    let mut msgs: Vec<String> = Vec::new();
    // Stored documents: id -> kind, as the shim stores them.
    let mut stored: BTreeMap<String, &'static str> = BTreeMap::new();
    let mut docs: Vec<OwnedDoc> = Vec::new();
    let mut rendered: Vec<String> = Vec::new();
    let mut condensations = 0;
    for k in 0..60usize {
        let ts = T0 + k as u64 * 60_000;
        let id = format!("call_{k}");
        msgs.push(user(&format!("please inspect part {k}"), ts));
        msgs.push(calls(&[(&id, "read", &format!("src/part{k}.rs"))], ts + 1));
        // A distinct big output each turn, shrunk as tool_result_persist does.
        let body: String = (0..900)
            .map(|l| format!("part {k} line {l} value {}\n", l * 7 + k))
            .collect();
        let raw = serde_json::from_str(&result(&id, "read", &body, ts + 2)).unwrap();
        let p = process_tool_result(&cfg, "read", raw, false).unwrap();
        let aid = p.artifact_id.clone().expect("shrunk");
        stored.insert(aid.clone(), "artifact");
        docs.push(OwnedDoc {
            id: aid.clone(),
            kind: "artifact".into(),
            text: p.artifact_text.clone().unwrap(),
        });
        s.note_artifact(&aid, "read", body.chars().count() as u64, ts as f64)
            .unwrap();
        msgs.push(p.message.unwrap().to_string());
        msgs.push(assistant(&format!("part {k} inspected"), ts + 3));
        let plan = shim(&mut s, &msgs, DS, None);
        for w in &plan.fold_writes {
            stored.insert(w.fold_id.clone(), "fold");
            let text: String = msgs[w.from as usize..w.to as usize]
                .iter()
                .map(|m| format!("{m}\n"))
                .collect();
            docs.push(OwnedDoc {
                id: w.fold_id.clone(),
                kind: "fold".into(),
                text,
            });
        }
        if plan.report.condensed.is_some() {
            condensations += 1;
        }
        for f in &plan.report.folds {
            rendered.push(f.summary.clone());
        }
        for syn in &plan.synthetic {
            rendered.extend(texts_of(syn));
        }
        for out in resolve(&plan, &msgs) {
            rendered.extend(texts_of(&out));
        }
    }
    assert!(condensations > 0, "the session must condense");
    for q in ["part 3 line", "value", "src/part1"] {
        let a = search::answer(&docs, q, false, 50).unwrap();
        rendered.push(a.text.clone());
        for h in &a.hits {
            rendered.push(format!("{} line {} ({}): x", h.id, h.line, h.kind));
        }
    }
    rendered.push(s.view().stats().to_string());

    let mut ids = Vec::new();
    for t in &rendered {
        ids_in(t, &mut ids);
    }
    ids.sort();
    ids.dedup();
    ids.retain(|i| !i.is_empty() && !i.starts_with("call_"));
    assert!(ids.iter().any(|i| i.starts_with('c') && i.len() < 10));
    assert!(ids.iter().any(|i| i.len() == 40));
    let mut bad = Vec::new();
    for id in &ids {
        match parse_target(id) {
            Ok(t) => {
                let kind = match t {
                    RecoverTarget::Artifact(_) => "artifact",
                    RecoverTarget::Fold(_) | RecoverTarget::Condensed(_) => "fold",
                    // Turn and topic ids are resolved by the session's own state.
                    RecoverTarget::Turn(_) | RecoverTarget::Topic(_) => {
                        if let Err(e) = s.view().recover_plan(id) {
                            bad.push(format!("{id}: {e}"));
                        }
                        continue;
                    }
                };
                if stored.get(id.as_str()) != Some(&kind) {
                    bad.push(format!(
                        "{id}: parsed as {kind}, stored as {:?}",
                        stored.get(id.as_str())
                    ));
                }
            }
            Err(e) => bad.push(format!("{id}: {e}")),
        }
    }
    assert!(
        bad.is_empty(),
        "{} of {} ids rejected:\n{}",
        bad.len(),
        ids.len(),
        bad.join("\n")
    );
}
