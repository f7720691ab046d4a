//! The one deterministic summariser every summarising strategy uses, and the summariser
//! request each summary costs.
//!
//! Outputs of real summariser calls are unknown for most folds, so the bench replaces the LLM
//! by a deterministic *extractive* summary with the sections good compaction prompts ask for
//! (pi / OpenClaw, Reasonix, ReasoniXlaw): Goal, User instructions (verbatim), Files,
//! Commands, Errors, Decisions/notes, Identifiers. It is bounded by `max_chars` and its size is
//! what the bench bills as summariser output. Because every strategy uses the same function,
//! differences between strategies come from *what* they summarise and *how often*, not from
//! summary quality.
//!
//! The summariser call itself is simulated as its own request (own cache state): a fixed
//! system prompt, then one user message holding the serialised conversation the strategy
//! would send (see [`serialize`]), output = the summary.

use super::anchors;
use super::store::M;
use crate::message::{Part, Role};
use std::collections::BTreeSet;

/// System prompt of the simulated summariser call (pi/OpenClaw-style compaction prompt).
pub const SUMMARIZER_SYSTEM: &str = "You are a context summarization assistant. Your task is to read a conversation between a user and an AI coding assistant, then produce a structured summary following the exact format specified.

Do NOT continue the conversation. Do NOT respond to any questions in the conversation. ONLY output the structured summary.

Use this format:

## Goal
[What is the user trying to accomplish?]

## Constraints & Preferences
- [Requirements and instructions the user stated, verbatim where possible]

## Progress
### Done
- [Completed tasks and changes]
### In Progress
- [Current work]
### Blocked
- [Issues preventing progress, if any]

## Key Decisions
- [Decision]: [Rationale]

## Next Steps
1. [What should happen next]

## Critical Context
- [Data, file paths, identifiers, error messages and commands needed to continue, copied exactly]

Keep each section concise. Preserve exact file paths, function names, error messages and identifiers.";

/// How a strategy feeds messages to its summariser.
#[derive(Debug, Clone, Copy)]
pub struct SerializeOpts {
    /// Max chars kept per message (`usize::MAX` = whole message).
    pub per_message: usize,
    /// Max chars kept per tool result (applied after `per_message`).
    pub per_result: usize,
}

impl SerializeOpts {
    /// Whole messages (pi / OpenClaw `serializeConversation`).
    pub const FULL: SerializeOpts = SerializeOpts { per_message: usize::MAX, per_result: usize::MAX };
}

fn clip(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while end > 0 && !s.is_char_boundary(end) {
        end -= 1;
    }
    s.get(..end).unwrap_or("")
}

/// Serialise messages for a summariser prompt: `[User]: …`, `[Assistant]: …`,
/// `[Assistant tool calls]: name(args)`, `[Tool result]: …`, blocks separated by blank lines.
pub fn serialize(msgs: &[M], opts: SerializeOpts) -> String {
    let mut out = String::new();
    for m in msgs {
        let block = match m.role() {
            Role::Assistant => {
                let mut text = String::new();
                let mut thinking = String::new();
                let mut calls = Vec::new();
                for p in m.msg.parts() {
                    match p {
                        Part::Text(t) => text.push_str(t),
                        Part::Thinking(t) => thinking.push_str(t),
                        Part::ToolCall(c) => calls.push(format!("{}({})", c.name, serde_json::to_string(c.arguments).unwrap_or_default())),
                        _ => {}
                    }
                }
                let mut b = String::new();
                if !thinking.is_empty() {
                    b.push_str(&format!("[Assistant thinking]: {}\n", clip(&thinking, opts.per_message)));
                }
                if !text.is_empty() {
                    b.push_str(&format!("[Assistant]: {}\n", clip(&text, opts.per_message)));
                }
                if !calls.is_empty() {
                    b.push_str(&format!("[Assistant tool calls]: {}\n", clip(&calls.join("; "), opts.per_message)));
                }
                b
            }
            Role::ToolResult => {
                let t = m.msg.text();
                format!("[Tool result]: {}\n", clip(clip(&t, opts.per_message), opts.per_result))
            }
            _ => format!("[User]: {}\n", clip(&m.msg.text(), opts.per_message)),
        };
        if !block.is_empty() {
            out.push_str(&block);
            out.push('\n');
        }
    }
    out
}

/// The summariser request's user prompt.
pub fn summary_prompt(conversation: &str, previous: Option<&str>) -> String {
    match previous {
        Some(p) if !p.is_empty() => format!(
            "<conversation>\n{conversation}</conversation>\n\n<previous-summary>\n{p}\n</previous-summary>\n\nUpdate the previous summary with the new conversation above. Keep everything from the previous summary that is still relevant."
        ),
        _ => format!("<conversation>\n{conversation}</conversation>\n\nSummarize the conversation above."),
    }
}

fn first_line(s: &str, max: usize) -> String {
    clip(s.lines().find(|l| !l.trim().is_empty()).unwrap_or("").trim(), max).to_string()
}

/// Deterministic extractive summary of `msgs` (plus a previous summary to carry forward),
/// bounded by `max_chars`.
pub fn extractive(msgs: &[M], previous: Option<&str>, max_chars: usize) -> String {
    let mut goal = String::new();
    let mut users: Vec<String> = Vec::new();
    let mut files: BTreeSet<String> = BTreeSet::new();
    let mut commands: Vec<String> = Vec::new();
    let mut errors: Vec<String> = Vec::new();
    let mut notes: Vec<String> = Vec::new();
    let mut idents: Vec<String> = Vec::new();
    let mut seen_ident = BTreeSet::new();
    for m in msgs {
        match m.role() {
            Role::User => {
                let t = m.msg.text();
                let t = t.trim();
                if t.is_empty() {
                    continue;
                }
                if goal.is_empty() {
                    goal = clip(t, 400).to_string();
                }
                users.push(clip(t, 300).to_string());
            }
            Role::Assistant => {
                for p in m.msg.parts() {
                    match p {
                        Part::Text(t) if !t.trim().is_empty() => notes.push(first_line(t, 200)),
                        Part::ToolCall(c) => {
                            for k in ["path", "file_path", "file", "filePath"] {
                                if let Some(f) = c.arguments.get(k).and_then(|v| v.as_str()) {
                                    files.insert(clip(f, 200).to_string());
                                }
                            }
                            for k in ["command", "cmd"] {
                                if let Some(cmd) = c.arguments.get(k).and_then(|v| v.as_str()) {
                                    commands.push(first_line(cmd, 160));
                                }
                            }
                        }
                        _ => {}
                    }
                }
            }
            Role::ToolResult => {
                let t = m.msg.text();
                if m.msg.is_error() {
                    errors.push(first_line(&t, 200));
                } else if let Some(l) = t.lines().find(|l| {
                    let l = l.to_ascii_lowercase();
                    l.contains("error") || l.contains("failed") || l.contains("panicked")
                }) {
                    errors.push(clip(l.trim(), 200).to_string());
                }
                for a in anchors::extract(clip(&t, 4_000)).into_iter().take(8) {
                    if seen_ident.insert(a.clone()) {
                        idents.push(a);
                    }
                }
            }
            _ => {}
        }
    }
    let mut s = String::new();
    let mut push_section = |title: &str, items: &[String], budget: usize, s: &mut String| {
        if items.is_empty() {
            return;
        }
        let mut sec = format!("## {title}\n");
        // Keep the most recent items when over budget: later facts supersede earlier ones.
        let mut chosen: Vec<&String> = Vec::new();
        let mut used = 0usize;
        for it in items.iter().rev() {
            if used + it.len() + 3 > budget {
                break;
            }
            used += it.len() + 3;
            chosen.push(it);
        }
        chosen.reverse();
        for it in chosen {
            sec.push_str("- ");
            sec.push_str(it);
            sec.push('\n');
        }
        sec.push('\n');
        s.push_str(&sec);
    };
    if let Some(p) = previous.filter(|p| !p.is_empty()) {
        s.push_str("## Earlier summary\n");
        s.push_str(clip(p, max_chars / 3));
        s.push_str("\n\n");
    }
    if !goal.is_empty() {
        s.push_str("## Goal\n");
        s.push_str(&goal);
        s.push_str("\n\n");
    }
    let rest = max_chars.saturating_sub(s.len());
    let files: Vec<String> = files.into_iter().collect();
    commands.dedup();
    errors.dedup();
    notes.dedup();
    push_section("User instructions (verbatim)", &users, rest * 30 / 100, &mut s);
    push_section("Files touched", &files, rest * 15 / 100, &mut s);
    push_section("Commands", &commands, rest * 12 / 100, &mut s);
    push_section("Errors", &errors, rest * 13 / 100, &mut s);
    push_section("Decisions and notes", &notes, rest * 15 / 100, &mut s);
    push_section("Identifiers", &idents, rest * 15 / 100, &mut s);
    clip(&s, max_chars).trim_end().to_string()
}
