//! S1a / S1b: OpenClaw legacy context engine (S1b adds cache-ttl pruning).

use super::{clip_chars, last_chars, retext, Ctx, Strategy};
use crate::bench::store::M;
use crate::bench::summarize::SerializeOpts;
use ::cachefold::message::Role;
use std::collections::BTreeMap;

/// OpenClaw legacy context engine (S1a; S1b with cache-ttl pruning).
pub struct Legacy {
    prune: bool,
    /// `agents.defaults.compaction.reserveTokens` after OpenClaw's 20,000 floor.
    pub reserve: u64,
    /// `keepRecentTokens`.
    pub keep_recent: u64,
    /// Pruning TTL (ms).
    pub ttl_ms: f64,
    pub(super) summary: Option<M>,
    summary_text: String,
    first_kept: usize,
    /// hist index → (projected message, hard-cleared).
    proj: BTreeMap<usize, (M, bool)>,
    last_ms: Option<f64>,
    prune_rounds: u64,
    soft_trims: u64,
    hard_clears: u64,
}

impl Legacy {
    /// S1a (`prune = false`) or S1b (`prune = true`).
    pub fn new(prune: bool) -> Legacy {
        Legacy {
            prune,
            reserve: 20_000,
            keep_recent: 20_000,
            ttl_ms: 5.0 * 60_000.0,
            summary: None,
            summary_text: String::new(),
            first_kept: 0,
            proj: BTreeMap::new(),
            last_ms: None,
            prune_rounds: 0,
            soft_trims: 0,
            hard_clears: 0,
        }
    }

    /// Index in the history where the verbatim part starts.
    pub fn first_kept(&self) -> usize {
        self.first_kept
    }

    /// The context as the host would send it: summary, then the kept history with projections.
    /// Each entry carries its history index (`None` for the summary).
    fn view(&self, hist: &[M]) -> Vec<(Option<usize>, M)> {
        let mut v: Vec<(Option<usize>, M)> = Vec::new();
        if let Some(s) = &self.summary {
            v.push((None, s.clone()));
        }
        for (i, m) in hist.iter().enumerate().skip(self.first_kept) {
            match self.proj.get(&i) {
                Some((p, _)) => v.push((Some(i), p.clone())),
                None => v.push((Some(i), m.clone())),
            }
        }
        v
    }

    /// Compact when the estimate passes `window − reserve`. Returns true when it folded.
    pub fn maybe_compact(&mut self, ctx: &mut Ctx, hist: &[M]) -> bool {
        // The chars of `view(hist)`, without building it.
        let chars = self.summary.as_ref().map_or(0, |s| s.chars)
            + hist
                .iter()
                .enumerate()
                .skip(self.first_kept)
                .map(|(i, m)| self.proj.get(&i).map_or(m.chars, |(p, _)| p.chars))
                .sum::<u64>();
        let est = (ctx.static_chars + chars).div_ceil(4);
        if est <= ctx.window.saturating_sub(self.reserve) {
            return false;
        }
        // Walk back from the end until ~keep_recent tokens are kept, then move forward to the
        // first message that may start the kept part (never a tool result).
        let mut j = hist.len();
        let mut kept = 0u64;
        while j > self.first_kept && kept < self.keep_recent {
            j -= 1;
            kept += hist.get(j).map_or(0, |m| m.est_tokens());
        }
        while j < hist.len() && hist.get(j).is_some_and(|m| m.role() == Role::ToolResult) {
            j += 1;
        }
        if j <= self.first_kept || j >= hist.len() {
            return false;
        }
        let to_sum: Vec<M> = hist.get(self.first_kept..j).unwrap_or(&[]).to_vec();
        let prev = (!self.summary_text.is_empty()).then(|| self.summary_text.clone());
        let text = ctx.summarize(&to_sum, prev.as_deref(), 8_000, SerializeOpts::FULL);
        let body = format!("The conversation history before this point was compacted into the following summary:\n\n<summary>\n{text}\n</summary>");
        self.summary = ctx.store.user_text(&body, ctx.now_ms);
        self.summary_text = text;
        self.first_kept = j;
        self.proj = self.proj.split_off(&j);
        ctx.folds += 1;
        true
    }

    /// OpenClaw's client-side cache-TTL pruning round (`pruneExpiredCacheTtlToolResults`).
    fn prune_round(&mut self, ctx: &mut Ctx, hist: &[M]) {
        let Some(last) = self.last_ms else { return };
        if ctx.now_ms - last < self.ttl_ms {
            return;
        }
        let view = self.view(hist);
        let cutoff = view
            .iter()
            .enumerate()
            .filter(|(_, (_, m))| m.role() == Role::Assistant)
            .map(|(i, _)| i)
            .rev()
            .nth(2);
        let start = view.iter().position(|(_, m)| m.role() == Role::User);
        let (Some(cutoff), Some(start)) = (cutoff, start) else {
            return;
        };
        let char_window = (ctx.window * 4) as f64;
        let mut total: u64 = view.iter().map(|(_, m)| m.chars).sum();
        if (total as f64) / char_window < 0.3 {
            return;
        }
        self.prune_rounds += 1;
        let mut eligible: Vec<(usize, u64)> = Vec::new();
        for (vi, (hi, m)) in view.iter().enumerate() {
            if vi < start || vi >= cutoff || m.role() != Role::ToolResult {
                continue;
            }
            let Some(hi) = *hi else { continue };
            match self.proj.get(&hi) {
                Some((_, true)) => continue,
                Some((p, false)) => {
                    eligible.push((hi, p.chars));
                    continue;
                }
                None => {}
            }
            let text = m.msg().text();
            let n = text.chars().count();
            if n <= 4_000 {
                eligible.push((hi, m.chars));
                continue;
            }
            let projected = format!(
                "{}\n...\n{}\n\n[Tool result trimmed: kept first 1500 chars and last 1500 chars of {n} chars.]",
                clip_chars(&text, 1_500),
                last_chars(&text, 1_500)
            );
            let p = retext(ctx, m, &projected, Vec::new());
            total = total + p.chars - m.chars;
            eligible.push((hi, p.chars));
            self.proj.insert(hi, (p, false));
            self.soft_trims += 1;
        }
        let prunable: u64 = eligible.iter().map(|(_, c)| c).sum();
        if (total as f64) / char_window >= 0.5 && prunable >= 50_000 {
            for (hi, chars) in eligible {
                if (total as f64) / char_window < 0.5 {
                    break;
                }
                let Some(src) = hist.get(hi) else { continue };
                let cleared = retext(ctx, src, "[Old tool result content cleared]", Vec::new());
                total = (total + cleared.chars).saturating_sub(chars);
                self.proj.insert(hi, (cleared, true));
                self.hard_clears += 1;
            }
        }
    }
}

impl Strategy for Legacy {
    fn id(&self) -> &'static str {
        if self.prune {
            "S1b"
        } else {
            "S1a"
        }
    }
    fn label(&self) -> &'static str {
        if self.prune {
            "OpenClaw legacy + cache-ttl pruning"
        } else {
            "OpenClaw legacy (DeepSeek default)"
        }
    }
    fn assemble(&mut self, ctx: &mut Ctx, hist: &[M]) -> Vec<M> {
        self.maybe_compact(ctx, hist);
        if self.prune {
            self.prune_round(ctx, hist);
        }
        self.last_ms = Some(ctx.now_ms);
        self.view(hist).into_iter().map(|(_, m)| m).collect()
    }
    fn counters(&self) -> BTreeMap<String, u64> {
        let mut c = BTreeMap::new();
        if self.prune {
            c.insert("pruneRounds".into(), self.prune_rounds);
            c.insert("softTrims".into(), self.soft_trims);
            c.insert("hardClears".into(), self.hard_clears);
        }
        c
    }
}
