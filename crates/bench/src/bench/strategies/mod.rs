//! The context strategies the bench compares, each a model of a real implementation's
//! behaviour (numbers from the implementations, see docs/peers.md and OpenClaw's
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
//! | S3 | cachefold | the real engine through `crate::replay`, with `::cachefold::tools::shrink` applied to tool results at ingest (the middleware) |
//!
//! Estimates follow each implementation: chars/4 for OpenClaw, context-safe and ContextFold
//! (Latin), ReasoniXlaw's 0.25/char + 4/message + 10/tool call.

mod context_fold;
mod context_safe;
mod legacy;
mod naive;
mod reasonixlaw;

pub use context_fold::ContextFold;
pub use context_safe::ContextSafe;
pub use legacy::Legacy;
pub use naive::Naive;
pub use reasonixlaw::ReasoniXlaw;

use super::store::{self, Store, M};
use super::summarize::{self, SerializeOpts};
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

    /// Record one summariser request with an explicit prompt and output. Its messages are
    /// [detached](Store::detached): the store does not keep a summariser prompt (the whole
    /// summarised history, once per fold) after its call is billed.
    pub fn record_summary_call(&mut self, prompt: &str, output: &str) {
        if (prompt.len() as u64 + summarize::SUMMARIZER_SYSTEM.len() as u64) / 4 > self.window {
            self.fold_failures += 1;
        }
        self.extra.push(ExtraCall {
            system: None,
            prompt: vec![Store::detached_user_text(prompt, self.now_ms)],
            output: Store::detached_assistant_text(output, self.now_ms),
        });
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
fn retext(ctx: &mut Ctx, m: &M, text: &str, credit: impl Into<store::Credit>) -> M {
    let v = store::with_text(&m.msg(), text);
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

/// Distinct tool names in a history (for reports).
pub fn tool_names(hist: &[M]) -> BTreeSet<String> {
    hist.iter()
        .filter_map(|m| m.msg().tool_name().map(str::to_string))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msg(store: &mut Store, role: &str, text: &str) -> M {
        store
            .make_value(
                serde_json::json!({"role": role, "content": [{"type": "text", "text": text}], "timestamp": 1}),
                None,
                Vec::new(),
            )
            .unwrap()
    }

    /// A summariser call is billed with its prompt and answer, but the strategy's store does
    /// not keep them: a long session folds its whole history into summariser prompts, and a
    /// store that kept them held that history once more per fold.
    #[test]
    fn a_summariser_call_leaves_nothing_in_the_store() {
        let mut store = Store::default();
        let msgs = vec![
            msg(&mut store, "user", "fix src/main.rs parse_args"),
            msg(&mut store, "assistant", "reading src/main.rs"),
        ];
        let kept = store.len();
        let mut ctx = Ctx {
            store: &mut store,
            window: 1_000_000,
            static_chars: 0,
            extra: Vec::new(),
            fold_failures: 0,
            folds: 0,
            now_ms: 9.0,
        };
        let text = ctx.summarize(&msgs, Some("earlier"), 2_000, SerializeOpts::FULL);
        ctx.record_summary_call("a prompt", "an answer");
        let extra = std::mem::take(&mut ctx.extra);
        assert_eq!(extra.len(), 2);
        assert_eq!(store.len(), kept, "no summariser prompt or answer kept");
        // The call billed is the one a kept prompt made: the same messages.
        let conversation = summarize::serialize(&msgs, SerializeOpts::FULL);
        let prompt = summarize::summary_prompt(&conversation, Some("earlier"));
        let first = &extra[0];
        assert_eq!(first.prompt.len(), 1);
        assert_eq!(
            first.prompt[0].json(),
            store.user_text(&prompt, 9.0).unwrap().json()
        );
        assert_eq!(
            first.output.json(),
            store.assistant_text(&text, 9.0).unwrap().json()
        );
        assert!(first.system.is_none());
        assert_eq!(extra[1].prompt[0].msg().text(), "a prompt");
    }
}
