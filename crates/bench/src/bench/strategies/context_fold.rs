//! S2f: ContextFold-like engine.

use super::{clip_chars, est_sum, last_chars, retext, Ctx, Strategy};
use crate::bench::render::Slot;
use crate::bench::store::M;
use ::cachefold::message::{Part, Role};
use std::collections::BTreeMap;

/// ContextFold-like engine (summary block first, last 5 turns).
pub struct ContextFold {
    /// Per-turn summaries by turn start index (the user message id stands in for the turn id).
    summaries: BTreeMap<usize, String>,
    summarised_turns: u64,
    dropped_results: u64,
}

impl Default for ContextFold {
    fn default() -> Self {
        Self::new()
    }
}

impl ContextFold {
    /// Defaults of ContextFold 1.0.0 code: preserveRecentTurns 5, toolResultMaxTokens 500,
    /// sameTopicMaxTurns 3, systemPromptReserve 10,000.
    pub fn new() -> ContextFold {
        ContextFold {
            summaries: BTreeMap::new(),
            summarised_turns: 0,
            dropped_results: 0,
        }
    }

    /// Turn starts: index of each user message (messages before the first user form turn 0).
    fn turn_starts(hist: &[M]) -> Vec<usize> {
        let mut v = vec![0usize];
        for (i, m) in hist.iter().enumerate() {
            if i > 0 && m.role() == Role::User {
                v.push(i);
            }
        }
        v
    }

    fn turn_line(msgs: &[M]) -> String {
        let user = msgs
            .iter()
            .find(|m| m.role() == Role::User)
            .map(|m| m.msg().text())
            .unwrap_or_default();
        let mut tools: Vec<String> = Vec::new();
        let mut reply = String::new();
        for m in msgs {
            if m.role() == Role::Assistant {
                for p in m.msg().parts() {
                    match p {
                        Part::ToolCall(c) if !tools.iter().any(|t| t == c.name) => {
                            tools.push(c.name.to_string())
                        }
                        Part::Text(t) if !t.trim().is_empty() => {
                            reply = t.trim().lines().next().unwrap_or("").to_string()
                        }
                        _ => {}
                    }
                }
            }
        }
        let user = user.trim().lines().next().unwrap_or("").to_string();
        format!(
            "{} → [{}] → {}",
            clip_chars(&user, 100),
            tools.join(", "),
            clip_chars(&reply, 140)
        )
    }

    fn turn_input(msgs: &[M]) -> String {
        let mut s = String::new();
        for m in msgs {
            match m.role() {
                Role::User => s.push_str(&format!("user: {}\n", m.msg().text())),
                Role::Assistant => {
                    for p in m.msg().parts() {
                        match p {
                            Part::Text(t) => s.push_str(&format!("assistant: {t}\n")),
                            Part::ToolCall(c) => {
                                let a = serde_json::to_string(c.arguments).unwrap_or_default();
                                s.push_str(&format!("tool {}({})\n", c.name, clip_chars(&a, 100)));
                            }
                            _ => {}
                        }
                    }
                }
                Role::ToolResult => {
                    s.push_str(&format!("result: {}\n", clip_chars(&m.msg().text(), 200)))
                }
                _ => {}
            }
        }
        s
    }

    fn trim_result(ctx: &mut Ctx, m: &M) -> M {
        // toolResultMaxTokens 500 ≈ 2,000 chars: 60 % head + 30 % tail.
        let text = m.msg().text();
        if m.role() != Role::ToolResult || text.chars().count() <= 2_000 {
            return m.clone();
        }
        let t = format!(
            "{}\n... [trimmed] ...\n{}",
            clip_chars(&text, 1_200),
            last_chars(&text, 600)
        );
        retext(ctx, m, &t, Vec::new())
    }
}

impl Strategy for ContextFold {
    fn id(&self) -> &'static str {
        "S2f"
    }
    fn label(&self) -> &'static str {
        "ContextFold-like (summary block first, 5 turns)"
    }
    fn assemble(&mut self, ctx: &mut Ctx, hist: &[M]) -> Vec<M> {
        let starts = Self::turn_starts(hist);
        let keep_from_turn = starts.len().saturating_sub(5);
        let Some(&recent_start) = starts.get(keep_from_turn) else {
            return hist.to_vec();
        };
        // Summarise turns that left the window and have no cached summary (one call per batch).
        let mut todo: Vec<(usize, usize)> = Vec::new();
        for t in 0..keep_from_turn {
            let (Some(&s), e) = (
                starts.get(t),
                starts.get(t + 1).copied().unwrap_or(hist.len()),
            ) else {
                continue;
            };
            if !self.summaries.contains_key(&s) {
                todo.push((s, e));
            }
        }
        if !todo.is_empty() {
            let mut prompt = String::from("Summarize each conversation turn below in one line (what the user asked, what was done, the outcome).\n\n");
            let mut out = String::new();
            for (s, e) in &todo {
                let msgs = hist.get(*s..*e).unwrap_or(&[]);
                prompt.push_str(&format!("### Turn {s}\n{}\n", Self::turn_input(msgs)));
                let line = Self::turn_line(msgs);
                out.push_str(&format!("Turn {s}: {line}\n"));
                self.summaries.insert(*s, line);
                self.summarised_turns += 1;
            }
            ctx.record_summary_call(&prompt, &out);
        }
        let mut block = String::new();
        if keep_from_turn > 0 {
            let older: Vec<usize> = starts.iter().take(keep_from_turn).copied().collect();
            let chunks: Vec<&[usize]> = older.chunks(3).collect();
            block.push_str(&format!(
                "[Context Summary — {} topics, {} earlier turns]\n",
                chunks.len(),
                older.len()
            ));
            for (ci, chunk) in chunks.iter().enumerate() {
                if ci + 1 < chunks.len() {
                    let first = chunk
                        .first()
                        .and_then(|s| self.summaries.get(s))
                        .map(|l| clip_chars(l, 80).to_string())
                        .unwrap_or_default();
                    block.push_str(&format!(
                        "• Topic {} ({} turns): {}\n",
                        ci + 1,
                        chunk.len(),
                        first
                    ));
                } else {
                    block.push_str(&format!("• Topic {} (current):\n", ci + 1));
                    for s in chunk.iter() {
                        if let Some(l) = self.summaries.get(s) {
                            block.push_str(&format!("  - {l}\n"));
                        }
                    }
                }
            }
        }
        let mut out: Vec<M> = Vec::new();
        if !block.is_empty() {
            if let Some(u) = ctx.store.user_text(&block, ctx.now_ms) {
                out.push(u);
            }
            if let Some(a) = ctx.store.assistant_text(
                "Understood. I have the context summary; continuing with the recent conversation.",
                ctx.now_ms,
            ) {
                out.push(a);
            }
        }
        let recent: Vec<M> = hist
            .get(recent_start..)
            .unwrap_or(&[])
            .iter()
            .map(|m| Self::trim_result(ctx, m))
            .collect();
        let budget = ctx.window.saturating_sub(10_000);
        let mut total = (ctx.static_chars + est_sum(&out) + est_sum(&recent)).div_ceil(4);
        let mut kept: Vec<M> = Vec::with_capacity(recent.len());
        for m in recent.iter() {
            if total > budget && m.role() == Role::ToolResult && m.slot == Slot::UserBlock {
                total = total.saturating_sub(m.est_tokens());
                self.dropped_results += 1;
                continue;
            }
            kept.push(m.clone());
        }
        out.extend(kept);
        out
    }
    fn counters(&self) -> BTreeMap<String, u64> {
        let mut c = BTreeMap::new();
        c.insert("summarisedTurns".into(), self.summarised_turns);
        c.insert("droppedResults".into(), self.dropped_results);
        c
    }
}
