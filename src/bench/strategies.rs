//! The context strategies the bench compares, each a model of a real implementation's
//! behaviour (numbers from the implementations, see docs/peers.md §1-§3 and OpenClaw's
//! `docs/concepts/{compaction,session-pruning}.md` and `tool-result-truncation.ts`).
//!
//! | id | models | what it sends for call k |
//! |---|---|---|
//! | S0 | naive full history | every message so far, verbatim |
//! | S1a | OpenClaw legacy, pruning off (the DeepSeek default) | `[summary] + history[first_kept..]`; when the chars/4 estimate of static prefix + context exceeds `window − max(reserve, 20,000)`, older history is summarised and ~20,000 recent estimated tokens are kept, cut only before a user/assistant message so call/result pairs stay together |
//! | S1b | S1a + `contextPruning.mode: cache-ttl` (ttl 5 min) | as S1a; when ≥ 5 min passed since the previous request and the estimate is ≥ 30 % of the window, tool results older than the 3rd-last assistant and after the first user message are soft-trimmed (> 4,000 chars → first 1,500 + `...` + last 1,500 + note), and if still ≥ 50 % with ≥ 50,000 prunable chars, hard-cleared to `[Old tool result content cleared]` until under 50 %. Projections persist for later requests |
//! | S2 | ReasoniXlaw 0.1.1 | first 2 messages locked, `<compaction-summary>` user message right after them, append-only tail; when the estimate exceeds `0.8·window − 32,768`, tool results outside the last 8 messages are trimmed **in place** to 2,000 chars; if still over, the tail is cut (≥ 8 messages, more while ≤ 16,384 tokens, walked back off tool results) and the dropped part summarised (500 chars per message), summaries merged (concatenated while ≤ 2,000 tokens, else one merge call); 2 consecutive useless compactions pause it. The prefix/tail seam bug (a locked tool call whose result is summarised away) is reproduced, not fixed |
//! | S2c | context-safe 0.4.6 | ingest: results over 12,000 (`read`), 4,000 (`exec`/`bash`/`web_fetch`) or 8,000 chars become a notice + 4,000-char preview (70 % head / 30 % tail, line-snapped) pointing at an artifact file; canonical copy: when unprotected old tool-result chars×2 + thinking chars ≥ 100,000, they become `[pruned]` / thinking is dropped, durably (protected: a semantic tail from the last 5 messages grown to ≥ 6,000 chars and ≥ 2 text messages, ≤ 24,000; reads of bootstrap files); assemble-time budget `window·4·0.75` chars; a session-index **assistant message at index 0**, ≤ 900 chars, re-rendered every call (goals = last user messages, conclusions = last final replies, artifacts, prune count: it changes about once per turn); host compaction (S1a rules) still runs |
//! | S2f | ContextFold 1.0.0 | a `[Context Summary — …]` **user message first**, then a fixed assistant "Understood…" reply, then the last 5 turns in full (tool results over 500 tokens trimmed to 60 % head + 30 % tail); older turns are summarised per turn once (200 chars per result, 100 per argument) and rendered as per-turn lines for the current sub-topic (last 3 older turns) and one-line labels for the rest, so the block changes every turn; over `window − 10,000` tool results are dropped while their calls stay |
//! | S3 | cachefold | the real engine through `crate::replay`, with `crate::tools::shrink` applied to tool results at ingest (the middleware) |
//!
//! Estimates follow each implementation: chars/4 for OpenClaw, context-safe and ContextFold
//! (Latin), ReasoniXlaw's 0.25/char + 4/message + 10/tool call.

use super::render::Slot;
use super::store::{self, Store, M};
use super::summarize::{self, SerializeOpts};
use crate::message::{Part, Role};
use std::collections::{BTreeMap, BTreeSet};

/// An extra model request a strategy makes (a summariser call).
#[derive(Debug, Clone)]
pub struct ExtraCall {
    /// System prompt (`None`: the bench summariser's [`summarize::SUMMARIZER_SYSTEM`]).
    pub system: Option<String>,
    /// Messages after the summariser system prompt.
    pub prompt: Vec<M>,
    /// What the summariser wrote.
    pub output: M,
}

/// Everything a strategy may use besides the history.
pub struct Ctx<'a> {
    /// Message factory.
    pub store: &'a mut Store,
    /// Context window (token budget) in tokens.
    pub window: u64,
    /// Chars of the static prefix (for chars/4 estimates that include the system prompt).
    pub static_chars: u64,
    /// Summariser calls made during this call's assembly.
    pub extra: Vec<ExtraCall>,
    /// Folds whose summariser input would not fit the window.
    pub fold_failures: u64,
    /// Folds / compactions performed.
    pub folds: u64,
    /// Time of the call being assembled.
    pub now_ms: f64,
}

impl Ctx<'_> {
    /// Summarise `msgs` with the shared deterministic summariser and record the summariser call.
    pub fn summarize(
        &mut self,
        msgs: &[M],
        previous: Option<&str>,
        max_chars: usize,
        opts: SerializeOpts,
    ) -> String {
        let text = summarize::extractive(msgs, previous, max_chars);
        let conversation = summarize::serialize(msgs, opts);
        let prompt = summarize::summary_prompt(&conversation, previous);
        self.record_summary_call(&prompt, &text);
        text
    }

    /// Record one summariser request with an explicit prompt and output.
    pub fn record_summary_call(&mut self, prompt: &str, output: &str) {
        if (prompt.len() as u64 + summarize::SUMMARIZER_SYSTEM.len() as u64) / 4 > self.window {
            self.fold_failures += 1;
        }
        let p = self.store.user_text(prompt, self.now_ms);
        let o = self.store.assistant_text(output, self.now_ms);
        if let (Some(prompt), Some(output)) = (p, o) {
            self.extra.push(ExtraCall {
                system: None,
                prompt: vec![prompt],
                output,
            });
        }
    }
}

/// A context strategy under test.
pub trait Strategy: Send {
    /// Short id (`S0`, `S1a`, …).
    fn id(&self) -> &'static str;
    /// One-line description for reports.
    fn label(&self) -> &'static str;
    /// Transform a message when it enters the history (tool-output middleware / persist hooks).
    fn ingest(&mut self, _ctx: &mut Ctx, m: M, _index: usize) -> M {
        m
    }
    /// The simulated outcome of the call that produced assistant message `assistant_index`
    /// (called after the call, before that message is ingested).
    fn observe(&mut self, _assistant_index: usize, _hit: u64, _miss: u64, _output: u64) {}
    /// The messages to send for the next call, given the ingested history so far.
    fn assemble(&mut self, ctx: &mut Ctx, hist: &[M]) -> Vec<M>;
    /// Strategy-specific counters for the report (name → value).
    fn counters(&self) -> BTreeMap<String, u64> {
        BTreeMap::new()
    }
}

fn est_sum(msgs: &[M]) -> u64 {
    msgs.iter().map(|m| m.chars).sum::<u64>()
}

/// Replace a tool result's text (no-op for other roles), keeping origin and credit.
fn retext(ctx: &mut Ctx, m: &M, text: &str, credit: Vec<usize>) -> M {
    let v = store::with_text(&m.msg, text);
    ctx.store
        .make_value(v, m.origin, credit)
        .unwrap_or_else(|| m.clone())
}

fn clip_chars(s: &str, n: usize) -> &str {
    match s.char_indices().nth(n) {
        Some((i, _)) => s.get(..i).unwrap_or(s),
        None => s,
    }
}

fn last_chars(s: &str, n: usize) -> &str {
    let total = s.chars().count();
    if total <= n {
        return s;
    }
    match s.char_indices().nth(total - n) {
        Some((i, _)) => s.get(i..).unwrap_or(s),
        None => s,
    }
}

// ---------------------------------------------------------------------------------------------
// S0

/// S0: naive full history.
pub struct Naive;

impl Strategy for Naive {
    fn id(&self) -> &'static str {
        "S0"
    }
    fn label(&self) -> &'static str {
        "naive full history"
    }
    fn assemble(&mut self, _ctx: &mut Ctx, hist: &[M]) -> Vec<M> {
        hist.to_vec()
    }
}

// ---------------------------------------------------------------------------------------------
// S1a / S1b

/// OpenClaw legacy context engine (S1a; S1b with cache-ttl pruning).
pub struct Legacy {
    prune: bool,
    /// `agents.defaults.compaction.reserveTokens` after OpenClaw's 20,000 floor.
    pub reserve: u64,
    /// `keepRecentTokens`.
    pub keep_recent: u64,
    /// Pruning TTL (ms).
    pub ttl_ms: f64,
    summary: Option<M>,
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
        let view: Vec<M> = self.view(hist).into_iter().map(|(_, m)| m).collect();
        let est = (ctx.static_chars + est_sum(&view)).div_ceil(4);
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
            let text = m.msg.text();
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

// ---------------------------------------------------------------------------------------------
// S2: ReasoniXlaw

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
            for p in m.msg.parts() {
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
            let text = m.msg.text();
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

// ---------------------------------------------------------------------------------------------
// S2c: context-safe

/// Bootstrap files whose reads context-safe never prunes.
const CS_PROTECTED: &[&str] = &[
    "agents.md",
    "soul.md",
    "memory.md",
    "tools.md",
    "user.md",
    "identity.md",
    "heartbeat.md",
    "bootstrap.md",
    "boot.md",
    "dreams.md",
    "claude.md",
];

/// context-safe-like engine (persist externalisation, durable prune, session index first).
pub struct ContextSafe {
    host: Legacy,
    /// hist index → canonical replacement (pruned).
    pruned: BTreeMap<usize, M>,
    artifacts: Vec<String>,
    /// call id → (tool name, protected read)
    calls: BTreeMap<String, bool>,
    externalised: u64,
    prunes: u64,
}

impl Default for ContextSafe {
    fn default() -> Self {
        Self::new()
    }
}

impl ContextSafe {
    /// Defaults of context-safe 0.4.6.
    pub fn new() -> ContextSafe {
        ContextSafe {
            host: Legacy::new(false),
            pruned: BTreeMap::new(),
            artifacts: Vec::new(),
            calls: BTreeMap::new(),
            externalised: 0,
            prunes: 0,
        }
    }

    fn limit(tool: &str) -> usize {
        match tool {
            "read" | "Read" => 12_000,
            "exec" | "bash" | "Bash" | "web_fetch" | "WebFetch" => 4_000,
            _ => 8_000,
        }
    }

    /// 70 % head / 30 % tail of `budget` chars, each snapped to a line boundary.
    fn preview(text: &str, budget: usize) -> String {
        let head = clip_chars(text, budget * 7 / 10);
        let head = match head.rfind('\n') {
            Some(i) if i > head.len() / 2 => head.get(..i).unwrap_or(head),
            _ => head,
        };
        let tail = last_chars(text, budget * 3 / 10);
        let tail = match tail.find('\n') {
            Some(i) if i < tail.len() / 2 => tail.get(i + 1..).unwrap_or(tail),
            _ => tail,
        };
        format!("{head}\n...\n{tail}")
    }

    fn semantic_tail_start(canon: &[M]) -> usize {
        let n = canon.len();
        let mut start = n.saturating_sub(5);
        let text_msgs = |s: usize| {
            canon
                .get(s..)
                .unwrap_or(&[])
                .iter()
                .filter(|m| {
                    matches!(m.role(), Role::User | Role::Assistant)
                        && !m.msg.text().trim().is_empty()
                })
                .count()
        };
        let chars = |s: usize| {
            canon
                .get(s..)
                .unwrap_or(&[])
                .iter()
                .map(|m| m.chars)
                .sum::<u64>()
        };
        while start > 0
            && (chars(start) < 6_000 || text_msgs(start) < 2)
            && chars(start - 1) <= 24_000
        {
            start -= 1;
        }
        start
    }

    fn index_message(&self, ctx: &mut Ctx, view: &[M]) -> Option<M> {
        let budget = 900usize.min(180usize.max((ctx.window as f64 * 0.72) as usize));
        let users: Vec<String> = view
            .iter()
            .filter(|m| m.role() == Role::User)
            .rev()
            .take(3)
            .map(|m| clip_chars(m.msg.text().lines().next().unwrap_or("").trim(), 120).to_string())
            .collect();
        // Conclusions: the final replies of turns (assistant messages without tool calls), so the
        // index changes about once per turn, as the peer survey observed ("nearly every turn").
        let concl: Vec<String> = view
            .iter()
            .filter(|m| m.role() == Role::Assistant && m.msg.tool_calls().is_empty())
            .filter_map(|m| {
                let t = m
                    .msg
                    .parts()
                    .into_iter()
                    .filter_map(|p| {
                        if let Part::Text(t) = p {
                            Some(t.to_string())
                        } else {
                            None
                        }
                    })
                    .collect::<Vec<_>>()
                    .join(" ");
                let t = t.trim().to_string();
                (!t.is_empty()).then(|| clip_chars(&t, 150).to_string())
            })
            .rev()
            .take(2)
            .collect();
        let mut s = String::from("[context-safe session index]\n");
        s.push_str(&format!("Goals: {}\n", users.join(" | ")));
        s.push_str(&format!("Conclusions: {}\n", concl.join(" | ")));
        let arts: Vec<&String> = self.artifacts.iter().rev().take(3).collect();
        if !arts.is_empty() {
            s.push_str(&format!(
                "Artifacts: {}\n",
                arts.iter()
                    .map(|a| a.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        s.push_str(&format!("Boundary: {} results pruned\n", self.pruned.len()));
        let s = clip_chars(&s, budget).to_string();
        ctx.store.assistant_text(&s, ctx.now_ms)
    }
}

impl Strategy for ContextSafe {
    fn id(&self) -> &'static str {
        "S2c"
    }
    fn label(&self) -> &'static str {
        "context-safe-like (index first, [pruned] rewrites)"
    }
    fn ingest(&mut self, ctx: &mut Ctx, m: M, index: usize) -> M {
        if m.role() == Role::Assistant {
            for c in m.msg.tool_calls() {
                let path = c
                    .arguments
                    .get("path")
                    .or_else(|| c.arguments.get("file_path"))
                    .and_then(|v| v.as_str())
                    .unwrap_or("");
                let base = path
                    .rsplit(['/', '\\'])
                    .next()
                    .unwrap_or("")
                    .to_ascii_lowercase();
                let protected =
                    c.name.eq_ignore_ascii_case("read") && CS_PROTECTED.contains(&base.as_str());
                self.calls.insert(c.id.to_string(), protected);
            }
            return m;
        }
        if m.role() != Role::ToolResult {
            return m;
        }
        let tool = m.msg.tool_name().unwrap_or("").to_string();
        let text = m.msg.text();
        if text.chars().count() <= Self::limit(&tool) {
            return m;
        }
        let id = m.msg.tool_call_id().unwrap_or("");
        let h = super::tokenizer::hash128(id.as_bytes());
        let path = format!(
            "~/.openclaw/artifacts/context-safe/{tool}/{}-{tool}-{:012x}.json",
            ctx.now_ms as u64,
            (h >> 80) as u64
        );
        let body = format!(
            "[context-safe] {tool} output excluded from context; saved to {path}. Read the saved file with offset/limit, or rerun the tool with narrower arguments.\n\n{}",
            Self::preview(&text, 4_000)
        );
        self.artifacts.push(path);
        self.externalised += 1;
        retext(ctx, &m, &body, vec![index])
    }
    fn assemble(&mut self, ctx: &mut Ctx, hist: &[M]) -> Vec<M> {
        // Host compaction (ownsCompaction: false) on the host transcript.
        let before = self.host.first_kept();
        if self.host.maybe_compact(ctx, hist) && self.host.first_kept() != before {
            self.pruned.clear();
        }
        let first = self.host.first_kept();
        let hist_kept = hist.get(first..).unwrap_or(&[]);
        // Canonical view with durable prunes.
        let canon: Vec<M> = hist_kept
            .iter()
            .enumerate()
            .map(|(i, m)| {
                self.pruned
                    .get(&(i + first))
                    .cloned()
                    .unwrap_or_else(|| m.clone())
            })
            .collect();
        let tail_start = Self::semantic_tail_start(&canon);
        let protected_result = |m: &M, calls: &BTreeMap<String, bool>| {
            m.msg
                .tool_call_id()
                .is_some_and(|id| calls.get(id).copied().unwrap_or(false))
        };
        let mut gain = 0u64;
        for (i, m) in canon.iter().enumerate().take(tail_start) {
            if self.pruned.contains_key(&(i + first)) {
                continue;
            }
            match m.role() {
                Role::ToolResult if !protected_result(m, &self.calls) => gain += 2 * m.chars,
                Role::Assistant => {
                    gain += m
                        .msg
                        .parts()
                        .iter()
                        .map(|p| {
                            if let Part::Thinking(t) = p {
                                t.chars().count() as u64
                            } else {
                                0
                            }
                        })
                        .sum::<u64>()
                }
                _ => {}
            }
        }
        if gain >= 100_000 {
            self.prunes += 1;
            for (i, m) in canon.iter().enumerate().take(tail_start) {
                let hi = i + first;
                if self.pruned.contains_key(&hi) {
                    continue;
                }
                match m.role() {
                    Role::ToolResult if !protected_result(m, &self.calls) => {
                        let p = retext(ctx, m, "[pruned]", Vec::new());
                        self.pruned.insert(hi, p);
                    }
                    Role::Assistant
                        if m.msg.parts().iter().any(|p| matches!(p, Part::Thinking(_))) =>
                    {
                        if let Some(p) = ctx.store.make_value(
                            store::without_thinking(&m.msg),
                            m.origin,
                            m.credit.clone(),
                        ) {
                            self.pruned.insert(hi, p);
                        }
                    }
                    _ => {}
                }
            }
        }
        let mut view: Vec<M> = Vec::new();
        if let Some(s) = &self.host.summary {
            view.push(s.clone());
        }
        view.extend(hist_kept.iter().enumerate().map(|(i, m)| {
            self.pruned
                .get(&(i + first))
                .cloned()
                .unwrap_or_else(|| m.clone())
        }));
        // Assemble-time policy: per-result cap and total budget (chars).
        let budget = (ctx.window as f64 * 4.0 * 0.75) as u64;
        let base_cap = ctx.window as f64 * 2.0 * 0.5;
        for slot in view.iter_mut() {
            if slot.role() != Role::ToolResult {
                continue;
            }
            let tool = slot.msg.tool_name().unwrap_or("");
            let scale = match tool {
                "read" | "Read" => 1.2,
                "web_fetch" | "WebFetch" => 0.8,
                "exec" | "bash" | "Bash" | "process" => 0.65,
                _ => 1.0,
            };
            let scale = if slot.msg.text().starts_with("[context-safe]") {
                0.5
            } else {
                scale
            };
            let cap = (base_cap * scale).max(160.0) as usize;
            if slot.msg.text().chars().count() > cap {
                let t = format!(
                    "{}\n[context-safe: truncated to {cap} chars]",
                    clip_chars(&slot.msg.text(), cap)
                );
                *slot = retext(ctx, slot, &t, slot.credit.clone());
            }
        }
        let mut total: u64 = view.iter().map(|m| m.chars).sum();
        if total > budget {
            let prio = |m: &M| -> u8 {
                let t = m.msg.tool_name().unwrap_or("");
                if m.msg.text().starts_with("[context-safe]") {
                    0
                } else if matches!(t, "exec" | "bash" | "Bash" | "process") {
                    1
                } else if matches!(t, "web_fetch" | "WebFetch") {
                    2
                } else if matches!(t, "read" | "Read") {
                    4
                } else {
                    3
                }
            };
            let mut order: Vec<usize> = (0..view.len())
                .filter(|&i| view.get(i).is_some_and(|m| m.role() == Role::ToolResult))
                .collect();
            order.sort_by_key(|&i| (view.get(i).map_or(9, prio), i));
            for i in order {
                if total <= budget {
                    break;
                }
                let Some(m) = view.get(i).cloned() else {
                    continue;
                };
                let r = retext(
                    ctx,
                    &m,
                    "[compacted: tool output removed to fit the context budget]",
                    Vec::new(),
                );
                total = (total + r.chars).saturating_sub(m.chars);
                if let Some(slot) = view.get_mut(i) {
                    *slot = r;
                }
            }
        }
        let mut out = Vec::with_capacity(view.len() + 1);
        if let Some(ix) = self.index_message(ctx, &view) {
            out.push(ix);
        }
        out.extend(view);
        out
    }
    fn counters(&self) -> BTreeMap<String, u64> {
        let mut c = BTreeMap::new();
        c.insert("externalised".into(), self.externalised);
        c.insert("prunes".into(), self.prunes);
        c.insert("prunedMessages".into(), self.pruned.len() as u64);
        c
    }
}

// ---------------------------------------------------------------------------------------------
// S2f: ContextFold

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
            .map(|m| m.msg.text())
            .unwrap_or_default();
        let mut tools: Vec<String> = Vec::new();
        let mut reply = String::new();
        for m in msgs {
            if m.role() == Role::Assistant {
                for p in m.msg.parts() {
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
                Role::User => s.push_str(&format!("user: {}\n", m.msg.text())),
                Role::Assistant => {
                    for p in m.msg.parts() {
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
                    s.push_str(&format!("result: {}\n", clip_chars(&m.msg.text(), 200)))
                }
                _ => {}
            }
        }
        s
    }

    fn trim_result(ctx: &mut Ctx, m: &M) -> M {
        // toolResultMaxTokens 500 ≈ 2,000 chars: 60 % head + 30 % tail.
        let text = m.msg.text();
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

/// Distinct tool names in a history (for reports).
pub fn tool_names(hist: &[M]) -> BTreeSet<String> {
    hist.iter()
        .filter_map(|m| m.msg.tool_name().map(str::to_string))
        .collect()
}
