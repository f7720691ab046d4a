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

use super::store::M;
use ::cachefold::message::{Part, Role};

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
    pub const FULL: SerializeOpts = SerializeOpts {
        per_message: usize::MAX,
        per_result: usize::MAX,
    };
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
                for p in m.msg().parts() {
                    match p {
                        Part::Text(t) => text.push_str(t),
                        Part::Thinking(t) => thinking.push_str(t),
                        Part::ToolCall(c) => calls.push(format!(
                            "{}({})",
                            c.name,
                            serde_json::to_string(c.arguments).unwrap_or_default()
                        )),
                        _ => {}
                    }
                }
                let mut b = String::new();
                if !thinking.is_empty() {
                    b.push_str(&format!(
                        "[Assistant thinking]: {}\n",
                        clip(&thinking, opts.per_message)
                    ));
                }
                if !text.is_empty() {
                    b.push_str(&format!("[Assistant]: {}\n", clip(&text, opts.per_message)));
                }
                if !calls.is_empty() {
                    b.push_str(&format!(
                        "[Assistant tool calls]: {}\n",
                        clip(&calls.join("; "), opts.per_message)
                    ));
                }
                b
            }
            Role::ToolResult => {
                let t = m.msg().text();
                format!(
                    "[Tool result]: {}\n",
                    clip(clip(&t, opts.per_message), opts.per_result)
                )
            }
            _ => format!("[User]: {}\n", clip(&m.msg().text(), opts.per_message)),
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

/// Deterministic extractive summary of `msgs` (plus a previous summary carried forward),
/// bounded by `max_chars`: the engine's own fold-record renderer
/// (`::cachefold::fold::record::render_extractive` over per-message digests), so every strategy's summary
/// has the same sections and the same density as cachefold's extractive records.
pub fn extractive(msgs: &[M], previous: Option<&str>, max_chars: usize) -> String {
    let cfg = ::cachefold::config::Config::default();
    let mut calls: std::collections::HashMap<String, (String, serde_json::Value)> =
        std::collections::HashMap::new();
    let mut digests: Vec<::cachefold::digest::Digest> = Vec::with_capacity(msgs.len());
    for m in msgs {
        if m.role() == Role::Assistant {
            for c in m.msg().tool_calls() {
                calls.insert(c.id.to_string(), (c.name.to_string(), c.arguments.clone()));
            }
        }
        let args = m
            .msg()
            .tool_call_id()
            .and_then(|id| calls.get(id))
            .map(|(n, a)| (n.as_str(), a));
        digests.push(::cachefold::digest::digest(&m.msg(), &cfg, args));
    }
    let refs: Vec<&::cachefold::digest::Digest> = digests.iter().collect();
    let carried = previous
        .filter(|p| !p.is_empty())
        .map(|p| clip(p, max_chars / 3).to_string());
    let budget = max_chars.saturating_sub(carried.as_ref().map_or(0, |c| c.len() + 24));
    let body = ::cachefold::fold::record::render_extractive("summary", &refs, budget.max(200));
    match carried {
        Some(c) => format!("## Earlier summary\n{c}\n\n{body}"),
        None => body,
    }
}
