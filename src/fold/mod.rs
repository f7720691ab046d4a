//! Fold building blocks: where a fold may cut, what it keeps verbatim, and the record message
//! that replaces the rest.
//!
//! A fold turns host messages `[from, to)` of the live tail into one *segment*: a synthetic
//! user message (the record) followed by the region's protected tool-call groups, verbatim and
//! in host order. Segments are appended, never rewritten (a condensation replaces all of them at
//! once and is declared as such). Invariants:
//! * `from` and `to` are boundaries ([`boundaries`]): no tool-call group straddles either, so
//!   the head, every segment and the live tail are each pairing-valid on their own;
//! * a protected group is an assistant message whose tool call reads a protected file
//!   ([`crate::digest::is_protected_read`]) together with all of its results;
//! * the record JSON is a pure function of (id, range, digests, summary, timestamp of the first
//!   folded message), so replaying the same decision yields the same bytes.

mod cuts;
#[cfg(test)]
pub(crate) mod oracle;
pub mod prompt;
pub mod record;

pub use cuts::CutCache;

use crate::digest::{Digest, Str};
use crate::pairing::{self, Shape, ShapeRole};
use crate::record::MsgRecord;
#[cfg(test)]
use serde_json::json;
use serde_json::{Map, Value};

/// Cut boundaries of the recorded history: [`pairing::cut_points`] (user messages with no
/// tool-call group open before them) plus `records.len()` itself when no group is open at the
/// end (the next message, whatever it is, starts cleanly).
pub fn boundaries(records: &[MsgRecord]) -> Vec<u32> {
    // A sentinel user message: it is a cut point iff nothing is open at the end.
    let sentinel = Shape::user();
    let shapes = records
        .iter()
        .map(|r| &r.shape)
        .chain(std::iter::once(&sentinel));
    let cuts = pairing::cut_points_of(shapes);
    let mut out = Vec::with_capacity(cuts.len());
    for c in cuts {
        if let Ok(c) = u32::try_from(c) {
            out.push(c);
        }
    }
    out
}

/// Sum of weighted characters of `records[from..to]` (clamped to the slice).
pub fn span_w(records: &[MsgRecord], from: u32, to: u32) -> u64 {
    let (a, b) = clamp(records.len(), from, to);
    let mut w = 0;
    for r in &records[a..b] {
        w += r.w;
    }
    w
}

fn clamp(len: usize, from: u32, to: u32) -> (usize, usize) {
    let b = (to as usize).min(len);
    let a = (from as usize).min(b);
    (a, b)
}

/// Host indices of the protected groups inside `[from, to)`, ascending. A group (an assistant
/// message with tool calls plus the run of its results right after it) is protected when the
/// assistant's record says so or any of its results' digests does.
pub fn protected_groups(records: &[MsgRecord], from: u32, to: u32) -> Vec<u32> {
    let (a, b) = clamp(records.len(), from, to);
    let mut out = Vec::new();
    let mut i = a;
    while i < b {
        let r = &records[i];
        if !r.shape.has_calls() {
            i += 1;
            continue;
        }
        let mut j = i + 1;
        while j < b && records[j].shape.role == ShapeRole::ToolResult {
            let id = records[j].shape.result_id.as_deref().unwrap_or("");
            if !r.shape.call_ids.iter().any(|c| c == id) {
                break;
            }
            j += 1;
        }
        if r.protected || records[i + 1..j].iter().any(|x| x.digest.protected) {
            for k in i..j {
                out.push(k as u32);
            }
        }
        i = j;
    }
    out
}

/// Per-fold record cap in characters: an eighth of `foldRecordBudget` at the default estimator
/// slope (0.3 tokens per weighted char), within 1,500..12,000. With the default budget of 16,000
/// tokens that is 6,666 chars (≈ 2,000 tokens), so about eight folds fit before condensing.
pub fn fold_cap_chars(fold_record_budget: u64) -> usize {
    ((fold_record_budget as f64 / 0.3 / 8.0) as usize).clamp(1_500, 12_000)
}

/// Condensed record cap: a quarter of `foldRecordBudget` (≈ 4,000 tokens by default, so six
/// more folds fit before the next condensation), within 2,000..24,000 chars.
pub fn condensed_cap_chars(fold_record_budget: u64) -> usize {
    ((fold_record_budget as f64 / 0.3 / 4.0) as usize).clamp(2_000, 24_000)
}

/// A record never needs more than a quarter of the text it replaces (a fold that keeps more
/// rarely pays); at least 600 chars so a tiny emergency fold still names what it dropped.
pub fn cap_for_region(cap: usize, region_w: u64) -> usize {
    cap.min(((region_w / 4) as usize).max(600))
}

/// The `[n]`-char prefix of `s` (on a char boundary).
pub fn truncate_chars(s: &str, n: usize) -> &str {
    match s.char_indices().nth(n) {
        Some((k, _)) => &s[..k],
        None => s,
    }
}

/// Deterministic section of exact identifiers taken from the digests (appended to LLM
/// summaries so ids, paths and artifact names survive paraphrase). Bounded by `max_chars`.
pub fn identifier_section(digests: &[&Digest], max_chars: usize) -> String {
    let mut files: Vec<&str> = Vec::new();
    let mut commands: Vec<&str> = Vec::new();
    let mut artifacts: Vec<&str> = Vec::new();
    let mut ids: Vec<&str> = Vec::new();
    let mut errors: Vec<&str> = Vec::new();
    fn add<'a>(v: &mut Vec<&'a str>, items: &'a [Str], cap: usize) {
        for s in items {
            if v.len() >= cap {
                return;
            }
            if !v.contains(&s.as_str()) {
                v.push(s.as_str());
            }
        }
    }
    for d in digests {
        add(&mut files, &d.files, 60);
        add(&mut commands, &d.commands, 30);
        add(&mut artifacts, &d.artifacts, 60);
        add(&mut ids, &d.identifiers, 80);
        add(&mut errors, &d.errors, 12);
    }
    let mut out = String::from("## Exact identifiers (verbatim from the folded messages)\n");
    for (title, list) in [
        ("Files", &files),
        ("Commands", &commands),
        ("Artifacts", &artifacts),
        ("Identifiers", &ids),
        ("Errors", &errors),
    ] {
        if list.is_empty() {
            continue;
        }
        out.push_str(title);
        out.push_str(":\n");
        for s in list.iter() {
            out.push_str("- ");
            out.push_str(truncate_chars(s, 300));
            out.push('\n');
        }
    }
    truncate_chars(&out, max_chars).to_string()
}

/// Record text of a fold: with an LLM summary, [`record::fold_header`] + the summary + the
/// `topics` section (may be empty) + the identifier section; else
/// [`record::render_extractive`] (which starts with the same header). At most about
/// `max_chars` + header.
pub fn fold_text(
    id: &str,
    digests: &[&Digest],
    summary: Option<&str>,
    topics: &str,
    max_chars: usize,
) -> String {
    match summary.map(str::trim).filter(|s| !s.is_empty()) {
        Some(s) => {
            let mut out = record::fold_header(id);
            out.push('\n');
            let ids_cap = (max_chars / 3).max(300);
            let room = max_chars.saturating_sub(ids_cap + topics.chars().count());
            out.push_str(truncate_chars(s, room.max(300)));
            out.push_str("\n\n");
            if !topics.is_empty() {
                out.push_str(topics);
                out.push('\n');
            }
            out.push_str(&identifier_section(digests, ids_cap));
            out
        }
        None => record::render_extractive(id, digests, max_chars),
    }
}

/// Record text of a condensation over every folded message (its own id `c<k>`; JS stores the
/// whole condensed range under that id, and the covered fold ids stay recoverable too).
pub fn condensed_text(
    id: &str,
    covers: &[String],
    digests: &[&Digest],
    max_chars: usize,
) -> String {
    let mut out = record::render_extractive(id, digests, max_chars);
    if !covers.is_empty() {
        out.push_str(&format!("\n(Condensed from folds {}.)", covers.join(", ")));
    }
    out
}

/// The record as an OpenClaw user message. `ts` is the first folded message's timestamp value
/// (kept as the host wrote it; `0` when no message had one).
pub fn record_json(text: &str, ts: Option<&Value>) -> String {
    let mut m = Map::new();
    m.insert("role".into(), "user".into());
    m.insert(
        "content".into(),
        Value::Array(vec![crate::object_of([
            ("type", "text".into()),
            ("text", text.into()),
        ])]),
    );
    m.insert(
        "timestamp".into(),
        ts.cloned().unwrap_or_else(|| Value::from(0)),
    );
    crate::to_json(&Value::Object(m))
}

/// Timestamp for a record over `[from, ..)`: the first folded message's, else the nearest
/// earlier one's.
pub fn record_ts(records: &[MsgRecord], from: u32) -> Option<Value> {
    let (a, _) = clamp(records.len(), from, from);
    records[a..]
        .iter()
        .find_map(|r| r.ts.as_ref())
        .or_else(|| records[..a].iter().rev().find_map(|r| r.ts.as_ref()))
        .map(crate::record::Ts::number)
        .map(Value::Number)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truncation_is_char_safe() {
        assert_eq!(truncate_chars("héllo", 2), "hé");
        assert_eq!(truncate_chars("hé", 9), "hé");
        assert_eq!(cap_for_region(10_000, 100_000), 10_000);
        assert_eq!(cap_for_region(10_000, 20_000), 5_000);
        assert_eq!(cap_for_region(10_000, 100), 600);
    }

    #[test]
    fn record_json_shape() {
        let j = record_json("x \"y\"", Some(&json!(1700000000123u64)));
        assert_eq!(
            j,
            r#"{"role":"user","content":[{"type":"text","text":"x \"y\""}],"timestamp":1700000000123}"#
        );
        assert!(record_json("x", None).ends_with(r#""timestamp":0}"#));
    }
}
