//! The prompt's measures the fold rules start from: the budget and the thresholds it answers
//! to, the weight and estimate of the layout, the calls a fold is priced over, and the cut
//! points at the end and inside the live tail. They read the state and config only, so they are
//! answers of the session's read-only [`View`]; the rules in `policy.rs` decide from them.

use super::gate::host_turn_threshold;
use super::{AssembleInput, View, DEFAULT_BUDGET};
use crate::fold;
use crate::pairing::ShapeRole;
use crate::record::MsgHash;

/// Bounds of [`View::expected_calls`] without `expectedRemainingCalls`.
const EXPECTED_CALLS_MIN: u64 = 4;
const EXPECTED_CALLS_MAX: u64 = 200;

impl View<'_> {
    /// The token budget folds answer to: the config's, else the host's for this call.
    ///
    /// OpenClaw hands the pre-prompt assemble `window − reserve` (22.6K of a 48K window,
    /// measured) and the tool-loop assembles nearly the whole window (47.6K). Answering to the
    /// largest budget seen was measured worse in the 48K e2e run (0.90× legacy's input cost
    /// instead of 0.57×): prompts grew into the host's pre-compaction memory flush, which
    /// rewrites the system prompt. So the pre-prompt budget governs folds, and the in-loop
    /// assembles, with their larger budgets, never fold mid-turn.
    pub(super) fn budget(&self, input: &AssembleInput) -> u64 {
        if self.cfg.token_budget > 0 {
            return self.cfg.token_budget;
        }
        input
            .token_budget
            .filter(|b| *b > 0)
            .unwrap_or(DEFAULT_BUDGET)
    }

    /// The prompt size (static + messages) above which folds are due: `compactRatio × budget`,
    /// lowered so that the turn to come, grown as the recent turns grew, still ends under the
    /// host's pre-turn threshold (see [`host_turn_threshold`]); otherwise the host would find the
    /// last call of a large turn over its threshold and call `compact()` before the next turn.
    /// Never lowered below half the ratio's figure: a turn that alone fills the window cannot
    /// be made room for by folding every turn.
    pub(super) fn threshold(&self, input: &AssembleInput) -> u64 {
        let base = (self.cfg.compact_ratio * self.budget(input) as f64)
            .floor()
            .max(0.0) as u64;
        match self.st.window.and_then(host_turn_threshold) {
            Some(host) => {
                let growth = self
                    .st
                    .tokens(self.st.turn_ws.iter().copied().max().unwrap_or(0));
                base.min(host.saturating_sub(growth).max(base / 2))
            }
            None => base,
        }
    }

    /// Weighted chars of head + segments (records and kept messages).
    pub(super) fn prefix_w(&self) -> u64 {
        let mut w = fold::span_w(&self.st.records, 0, self.st.head_len);
        for s in &self.st.segs {
            w += s.w + s.protected_w;
        }
        w
    }

    pub(super) fn layout_w(&self, count: u32) -> u64 {
        self.prefix_w() + fold::span_w(&self.st.records, self.st.live_from, count)
    }

    pub(super) fn estimate(&self, count: u32) -> u64 {
        self.st.static_tokens() + self.st.tokens(self.layout_w(count))
    }

    /// Calls the fold pricing expects to come: `expectedRemainingCalls` when set, else the
    /// calls so far (committed calls or assistant records, whichever is more) within
    /// [`EXPECTED_CALLS_MIN`, `EXPECTED_CALLS_MAX`]. Runs on every assemble, so it stops
    /// counting where the answer is known: no count once the committed calls reach the cap,
    /// and assistant records only up to the cap (a long session's answer costs at most the
    /// walk to its 200th assistant record, not a walk of the whole history).
    pub(super) fn expected_calls(&self) -> f64 {
        if self.cfg.expected_remaining_calls > 0 {
            return self.cfg.expected_remaining_calls as f64;
        }
        let calls = self.st.totals.calls;
        let assistants = if calls >= EXPECTED_CALLS_MAX {
            0
        } else {
            self.st
                .records
                .iter()
                .filter(|r| r.shape.role == ShapeRole::Assistant)
                .take(EXPECTED_CALLS_MAX as usize)
                .count() as u64
        };
        calls
            .max(assistants)
            .clamp(EXPECTED_CALLS_MIN, EXPECTED_CALLS_MAX) as f64
    }

    /// The prompt size past which the host cannot go on with what it has: its budget, or its
    /// pre-turn trigger when the window is known (the host compacts the whole history there).
    pub(super) fn hard_limit(&self, input: &AssembleInput) -> u64 {
        let budget = self.budget(input);
        self.st
            .window
            .and_then(host_turn_threshold)
            .map_or(budget, |t| t.min(budget))
    }

    /// Whether `count`, the end of the recorded history, is a cut point for an emergency fold:
    /// the host holds the current turn apart (`prompt_pending`), the history is all recorded,
    /// and it ends with an assistant reply that leaves no call open, or with
    /// [`Session::compact_request`]'s stand-in for a whole committed turn (a user record with
    /// the default hash, which no host message has). A fold to there keeps the pinned head and
    /// the earlier records as they are; without it, a last turn over the host's trigger on its
    /// own could only go by the host's compaction, which replaces the whole history, head
    /// included.
    pub(super) fn end_is_cut(&self, count: u32, prompt_pending: bool) -> bool {
        let recs = &self.st.records;
        prompt_pending
            && count as usize == recs.len()
            && recs.last().is_some_and(|r| match r.shape.role {
                ShapeRole::Assistant => r.shape.call_ids.is_empty(),
                ShapeRole::User => r.h == MsgHash::default(),
                _ => false,
            })
            && self.st.cuts.first_at_least(recs, count) == Some(count)
    }

    /// Boundaries strictly inside the live tail: `live_from < c < count`.
    pub(super) fn live_cuts(&self, count: u32) -> Vec<u32> {
        let live = self.st.live_from;
        self.st.cuts.between(&self.st.records, live, count)
    }
}
