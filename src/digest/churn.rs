//! Runtime churn: blocks the host injects into messages and changes from call to call
//! (runtime context, task-completion events, metadata), collapsed so digests stay stable.

use crate::text::{clip, one_line};

// ---- churn -----------------------------------------------------------------------------------

/// Marker for a collapsed `<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>` block or runtime-context message.
pub const RUNTIME_MARKER: &str = "[openclaw runtime context omitted]";

const BEGIN_CTX: &str = "<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>";
const END_CTX: &str = "<<<END_OPENCLAW_INTERNAL_CONTEXT>>>";
const LEGACY_HEADER: &str = "OpenClaw runtime context (internal):";
const EVENT_MARKER: &str = "[Internal task completion event]";
const CHILD_BEGIN: &str = "<<<BEGIN_UNTRUSTED_CHILD_RESULT>>>";
const CHILD_END: &str = "<<<END_UNTRUSTED_CHILD_RESULT>>>";
/// OpenClaw's inbound-context provenance marker (`src/auto-reply/reply/inbound-context-marker.ts`).
const INBOUND_MARKER: &str = "⟦openclaw:ctx⟧";

/// What a text holds when [`collapse_churn`] has anything to collapse (each marker's start).
pub(super) const TRIGGERS: &[&str] = &[
    "<<<",
    "untrusted",
    INBOUND_MARKER,
    EVENT_MARKER,
    LEGACY_HEADER,
    "Delivery:",
];

/// Collapse OpenClaw runtime churn (untrusted-metadata blocks, direct-chat wrappers, child-completion
/// injections) — used only when rendering fold records.
///
/// Recognised (markers as in OpenClaw 2026.9 `dist/`):
/// * `<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>` … `<<<END_OPENCLAW_INTERNAL_CONTEXT>>>` (nested,
///   standalone marker lines; an unterminated block runs to the end) → one marker line, naming
///   the task and status when the block carries a task-completion event;
/// * legacy `OpenClaw runtime context (internal):` headers and `[Internal task completion
///   event]` blocks (with `<<<BEGIN_UNTRUSTED_CHILD_RESULT>>>` … and the `Action:` paragraph);
/// * inbound metadata: a line `Label (untrusted metadata):` (older hosts), `Label
///   (untrusted, …):`, or `Label: ⟦openclaw:ctx⟧` (current hosts), followed by a fenced
///   ```` ```json ```` block or a paragraph → `[Label omitted]`; `Context: ⟦openclaw:ctx⟧`
///   swallows the rest of the text, as OpenClaw's own stripper does;
/// * `Delivery: … \`message\` tool …` hint lines → removed.
///
/// Consecutive identical markers merge. Text without markers is returned unchanged.
pub fn collapse_churn(text: &str) -> String {
    collapse_owned(text.to_string())
}

/// [`collapse_churn`] of a text the caller owns: one without markers (most) is handed back,
/// not copied.
pub(super) fn collapse_owned(text: String) -> String {
    if !TRIGGERS.iter().any(|t| text.contains(t)) {
        return text;
    }
    let mut lines: Vec<&str> = Vec::new();
    for l in text.split('\n') {
        lines.push(l);
    }
    let mut out: Vec<String> = Vec::new();
    let push_marker = |out: &mut Vec<String>, m: String| {
        if out.last() != Some(&m) {
            out.push(m);
        }
    };
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        let t = line.trim();
        if t == BEGIN_CTX {
            let mut depth = 1;
            let mut j = i + 1;
            while j < lines.len() {
                let tj = lines[j].trim();
                if tj == BEGIN_CTX {
                    depth += 1;
                } else if tj == END_CTX {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                j += 1;
            }
            let end = j.min(lines.len());
            push_marker(
                &mut out,
                event_marker(&lines[i + 1..end]).unwrap_or_else(|| RUNTIME_MARKER.to_string()),
            );
            i = end + 1;
            continue;
        }
        if t == END_CTX {
            i += 1;
            continue;
        }
        if t == LEGACY_HEADER || t == EVENT_MARKER {
            let end = legacy_event_end(&lines, i);
            push_marker(
                &mut out,
                event_marker(&lines[i..end]).unwrap_or_else(|| RUNTIME_MARKER.to_string()),
            );
            i = end;
            continue;
        }
        if t == format!("Context: {INBOUND_MARKER}") {
            push_marker(&mut out, "[Context omitted]".to_string());
            break;
        }
        if let Some(label) = metadata_label(t) {
            let end = metadata_block_end(&lines, i);
            push_marker(&mut out, format!("[{label} omitted]"));
            i = end;
            continue;
        }
        if t.starts_with("Delivery:") && t.contains("`message` tool") {
            i += 1;
            continue;
        }
        out.push(line.to_string());
        i += 1;
    }
    out.join("\n")
}

/// `Label (untrusted metadata):`, `Label (untrusted, …):`, `Label: ⟦openclaw:ctx⟧` → `Label`.
fn metadata_label(t: &str) -> Option<String> {
    if let Some(head) = t.strip_suffix(INBOUND_MARKER) {
        let label = head.trim_end().trim_end_matches(':').trim();
        return if label.is_empty() {
            None
        } else {
            Some(label.to_string())
        };
    }
    let body = t.strip_suffix(':')?;
    let open = body.rfind(" (untrusted")?;
    if !body.ends_with(')') {
        return None;
    }
    let label = body[..open].trim();
    if label.is_empty() || label.len() > 120 {
        return None;
    }
    Some(label.to_string())
}

/// Index after a metadata block starting at header line `h`: a fenced ```json block through
/// its closing fence, otherwise the paragraph; blank lines after it are swallowed.
fn metadata_block_end(lines: &[&str], h: usize) -> usize {
    let mut j = h + 1;
    if lines.get(j).map(|l| l.trim()) == Some("```json") {
        j += 1;
        while j < lines.len() && lines[j].trim() != "```" {
            j += 1;
        }
        j += 1;
    } else {
        while j < lines.len() && !lines[j].trim().is_empty() {
            j += 1;
        }
    }
    while j < lines.len() && lines[j].trim().is_empty() {
        j += 1;
    }
    j.min(lines.len())
}

/// First index ≥ `from` whose trimmed line satisfies `pred`.
fn find_line(lines: &[&str], from: usize, pred: impl Fn(&str) -> bool) -> Option<usize> {
    (from..lines.len()).find(|&k| pred(lines[k].trim()))
}

/// First blank line after `k` (or the end).
fn paragraph_end(lines: &[&str], k: usize) -> usize {
    find_line(lines, k + 1, str::is_empty).unwrap_or(lines.len())
}

/// First non-blank line at or after `k` (or the end).
fn skip_blank(lines: &[&str], k: usize) -> usize {
    find_line(lines, k, |t| !t.is_empty()).unwrap_or(lines.len())
}

/// End of one task-completion event whose marker line is `ev`: through the untrusted child
/// result and the `Action:`/`Instruction:` paragraph when present, else the event's first
/// paragraph (OpenClaw's own stripper uses the same landmarks).
fn event_block_end(lines: &[&str], ev: usize) -> usize {
    if let Some(b) = find_line(lines, ev + 1, |t| t == CHILD_BEGIN) {
        if let Some(e) = find_line(lines, b + 1, |t| t == CHILD_END) {
            let action = find_line(lines, e + 1, |t| t == "Action:" || t == "Instruction:");
            return paragraph_end(lines, action.unwrap_or(e));
        }
    }
    paragraph_end(lines, ev)
}

/// End (exclusive line index) of a legacy runtime-context header or task-completion block
/// starting at line `start`; chained events (`---` separators) are included.
fn legacy_event_end(lines: &[&str], start: usize) -> usize {
    let n = lines.len();
    let ev = find_line(lines, start, |t| t == EVENT_MARKER).filter(|&e| e <= start + 4);
    let Some(ev) = ev else {
        // A header without an event: just the header paragraph.
        return skip_blank(lines, paragraph_end(lines, start));
    };
    let mut end = event_block_end(lines, ev);
    loop {
        let k = skip_blank(lines, end);
        if k < n && lines[k].trim() == "---" {
            let e = skip_blank(lines, k + 1);
            if e < n && lines[e].trim() == EVENT_MARKER {
                end = event_block_end(lines, e);
                continue;
            }
        }
        break;
    }
    skip_blank(lines, end).max(start + 1)
}

/// `[openclaw task completion: <task> (<status>)]` when the lines hold a completion event.
fn event_marker(lines: &[&str]) -> Option<String> {
    if !lines
        .iter()
        .any(|l| l.trim() == EVENT_MARKER || l.trim().starts_with("A background task completed"))
    {
        return None;
    }
    let field = |k: &str| {
        lines
            .iter()
            .find_map(|l| l.trim().strip_prefix(k).map(|v| clip(&one_line(v), 80)))
    };
    let task = field("task: ").unwrap_or_else(|| "unnamed task".to_string());
    Some(match field("status: ") {
        Some(s) => format!("[openclaw task completion: {task} ({s})]"),
        None => format!("[openclaw task completion: {task}]"),
    })
}
