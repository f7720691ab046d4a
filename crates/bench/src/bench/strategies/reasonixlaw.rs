//! S2: ReasoniXlaw-like prefix-stable engine.

use super::{clip_chars, retext, Ctx, Strategy};
use crate::bench::store::M;
use crate::bench::summarize::SerializeOpts;
use ::cachefold::message::{Part, Role};
use std::collections::BTreeMap;

/// ReasoniXlaw-like prefix-stable engine.
pub struct ReasoniXlaw {
    prefix: Vec<M>,
    tail: Vec<M>,
    summary_text: String,
    summary: Option<M>,
    ingested: usize,
    locked: bool,
    stuck: u32,
    paused: bool,
    trims: u64,
    compactions: u64,
}

impl Default for ReasoniXlaw {
    fn default() -> Self {
        Self::new()
    }
}

impl ReasoniXlaw {
    /// Defaults: prefixLockCount 2, recentKeepCount 8, tailTokenBudget 16,384, compactRatio 0.8,
    /// outputReservedTokens 32,768, maxSummaryTokens 2,000, toolResultTrimChars 2,000.
    pub fn new() -> ReasoniXlaw {
        ReasoniXlaw {
            prefix: Vec::new(),
            tail: Vec::new(),
            summary_text: String::new(),
            summary: None,
            ingested: 0,
            locked: false,
            stuck: 0,
            paused: false,
            trims: 0,
            compactions: 0,
        }
    }

    /// ReasoniXlaw's estimator: 0.25 per char (1.5 above U+2E80), +4 per message, +10 per tool call.
    fn est(msgs: &[M]) -> u64 {
        let mut t = 0f64;
        for m in msgs {
            t += 4.0;
            for p in m.msg().parts() {
                match p {
                    Part::Text(s) | Part::Thinking(s) => {
                        t += s
                            .chars()
                            .map(|c| if c as u32 >= 0x2E80 { 1.5 } else { 0.25 })
                            .sum::<f64>()
                    }
                    Part::ToolCall(c) => {
                        t += 10.0
                            + (c.name.len()
                                + serde_json::to_string(c.arguments).map_or(0, |s| s.len()))
                                as f64
                                * 0.25
                    }
                    _ => {}
                }
            }
        }
        t.ceil() as u64
    }

    fn compose(&self) -> Vec<M> {
        let mut v = self.prefix.clone();
        if let Some(s) = &self.summary {
            v.push(s.clone());
        }
        v.extend(self.tail.iter().cloned());
        v
    }

    fn trim_in_place(&mut self, ctx: &mut Ctx) {
        let end = self.tail.len().saturating_sub(8);
        for i in 0..end {
            let Some(m) = self.tail.get(i).cloned() else {
                continue;
            };
            if m.role() != Role::ToolResult {
                continue;
            }
            let text = m.msg().text();
            let n = text.chars().count();
            if n <= 2_000 || text.contains("[reasonixlaw: trimmed") {
                continue;
            }
            let t = format!(
                "{}\n[reasonixlaw: trimmed tool result, original {n} chars, kept 2000]",
                clip_chars(&text, 2_000)
            );
            let nm = retext(ctx, &m, &t, Vec::new());
            if let Some(slot) = self.tail.get_mut(i) {
                *slot = nm;
                self.trims += 1;
            }
        }
    }

    fn compact(&mut self, ctx: &mut Ctx, threshold: u64) {
        // Tail selection: newest → oldest, ≥ 8 messages, more while within 16,384 tokens.
        let n = self.tail.len();
        let mut b = n;
        let mut tokens = 0u64;
        while b > 0 {
            let t = self
                .tail
                .get(b - 1)
                .map_or(0, |m| Self::est(std::slice::from_ref(m)));
            if n - b >= 8 && tokens + t > 16_384 {
                break;
            }
            tokens += t;
            b -= 1;
        }
        // findSafeBoundary: never start the kept tail on a tool result.
        while b > 0
            && self
                .tail
                .get(b)
                .is_some_and(|m| m.role() == Role::ToolResult)
        {
            b -= 1;
        }
        if b == 0 {
            return;
        }
        let dropped: Vec<M> = self.tail.get(..b).unwrap_or(&[]).to_vec();
        let opts = SerializeOpts {
            per_message: 500,
            per_result: 500,
        };
        let new_summary = ctx.summarize(&dropped, None, 4_000, opts);
        let merged = if (self.summary_text.len() + new_summary.len()) / 4 <= 2_000 {
            if self.summary_text.is_empty() {
                new_summary
            } else {
                format!("{}\n\n{}", self.summary_text, new_summary)
            }
        } else {
            // LLM merge of old + new summaries (one more summariser call), bounded to 2,000 tokens.
            let prompt = format!(
                "Merge these two conversation summaries into one, keeping every concrete fact.\n\n<old>\n{}\n</old>\n\n<new>\n{}\n</new>",
                self.summary_text, new_summary
            );
            let mut m = String::from(clip_chars(&self.summary_text, 3_000));
            m.push_str("\n\n");
            m.push_str(clip_chars(&new_summary, 4_900));
            ctx.record_summary_call(&prompt, &m);
            m
        };
        self.summary_text = merged;
        self.summary = ctx.store.user_text(
            &format!(
                "<compaction-summary>\n{}\n</compaction-summary>",
                self.summary_text
            ),
            ctx.now_ms,
        );
        self.tail = self.tail.split_off(b);
        self.compactions += 1;
        ctx.folds += 1;
        if Self::est(&self.compose()) > threshold {
            self.stuck += 1;
            if self.stuck >= 2 {
                self.paused = true;
            }
        } else {
            self.stuck = 0;
        }
    }
}

impl Strategy for ReasoniXlaw {
    fn id(&self) -> &'static str {
        "S2"
    }
    fn label(&self) -> &'static str {
        "ReasoniXlaw-like (locked prefix, in-place trims)"
    }
    fn assemble(&mut self, ctx: &mut Ctx, hist: &[M]) -> Vec<M> {
        if !self.locked {
            let k = hist.len().min(2);
            self.prefix = hist.get(..k).unwrap_or(&[]).to_vec();
            self.tail = hist.get(k..).unwrap_or(&[]).to_vec();
            self.ingested = hist.len();
            self.locked = k == 2;
        } else if hist.len() > self.ingested {
            self.tail
                .extend(hist.get(self.ingested..).unwrap_or(&[]).iter().cloned());
            self.ingested = hist.len();
        }
        let threshold = ((ctx.window as f64) * 0.8) as u64;
        let threshold = threshold.saturating_sub(32_768);
        if Self::est(&self.compose()) > threshold {
            self.trim_in_place(ctx);
            if Self::est(&self.compose()) > threshold && !self.paused {
                self.compact(ctx, threshold);
            }
        }
        self.compose()
    }
    fn counters(&self) -> BTreeMap<String, u64> {
        let mut c = BTreeMap::new();
        c.insert("inPlaceTrims".into(), self.trims);
        c.insert("compactions".into(), self.compactions);
        c.insert("paused".into(), u64::from(self.paused));
        c
    }
}
