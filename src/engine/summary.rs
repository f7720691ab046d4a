//! LLM fold summaries: requested in `maintain`, accepted later, never awaited by `assemble`.

use super::gate::model_managed;
use super::state::{Event, HOUR_MS};
use super::{Session, SummaryRequest, MAX_SUMMARY_CHARS, SUMMARY_GRACE_MS};
use crate::error::Result;
use crate::fold;

impl Session {
    /// For `maintain`: an LLM summary worth preparing ahead of the next fold, if any (see the
    /// module doc). Issuing one is journaled; at most one is pending.
    pub fn summary_request(&mut self, now_ms: f64) -> Option<SummaryRequest> {
        self.summary_request_inner(now_ms).ok().flatten()
    }

    pub(super) fn summary_request_inner(&mut self, now_ms: f64) -> Result<Option<SummaryRequest>> {
        let sc = self.cfg.summary.clone();
        if !sc.use_llm || sc.max_calls_per_hour == 0 || !now_ms.is_finite() {
            return Ok(None);
        }
        if !model_managed(&self.cfg, self.st.model.as_deref())
            || !self.st.pinned
            || self.st.breaker_tripped()
        {
            return Ok(None);
        }
        if let Some(p) = &self.st.pending_summary {
            if now_ms > p.at + sc.timeout_ms as f64 + SUMMARY_GRACE_MS {
                let id = p.id.clone();
                self.emit(Event::SummaryDone {
                    id,
                    ok: false,
                    text: String::new(),
                })?;
            } else {
                return Ok(None);
            }
        }
        let recent = self
            .st
            .summary_times
            .iter()
            .filter(|t| **t > now_ms - HOUR_MS)
            .count();
        if recent >= sc.max_calls_per_hour as usize {
            return Ok(None);
        }
        let count = self.st.recorded();
        let cuts = self.view().live_cuts(count);
        let Ok(c) = self.candidate(count, &cuts) else {
            return Ok(None);
        };
        let from = self.st.live_from;
        // Ask once a region big enough for a priced fold exists but the fold does not pay yet
        // (it would have happened at assemble otherwise): the summary is then ready for the fold
        // that comes when it pays, or for a host `compact()`. Asking earlier (at half a fold) was
        // measured on the corpus: 21 summariser calls at miss price and +19 % input cost, with no
        // fold made cheaper.
        let foreseeable = self.cfg.min_fold_tokens;
        if self.st.tokens(fold::span_w(&self.st.records, from, c)) < foreseeable {
            return Ok(None);
        }
        if let Some(r) = &self.st.ready_summary {
            // Already have one; refresh only when the region grew by another minFoldTokens (a
            // fold uses a summary covering at least half of its region).
            if r.from == from
                && self.st.tokens(fold::span_w(&self.st.records, r.to, c)) < foreseeable
            {
                return Ok(None);
            }
        }
        let fold_id = self.next_fold_id();
        let protected = fold::protected_groups(&self.st.records, from, c);
        let digests = super::policy::digests_outside(&self.st.records, from, c, &protected);
        let cap = fold::fold_cap_chars(self.cfg.fold_record_budget);
        let (system, prompt) = crate::fold::prompt::summary_prompt(&fold_id, &digests, cap);
        let id = format!("{fold_id}:{from}-{c}#{}", self.st.seq);
        let (max_tokens, timeout_ms) = (sc.max_tokens, sc.timeout_ms);
        self.emit(Event::SummaryReq {
            id: id.clone(),
            from,
            to: c,
            at: now_ms,
        })?;
        Ok(Some(SummaryRequest {
            id,
            from,
            to: c,
            system,
            prompt,
            max_tokens,
            timeout_ms,
        }))
    }

    /// The answer to a [`SummaryRequest`]: `ok` with non-blank text makes it ready for the fold
    /// covering exactly its range; anything else counts as failed (extractive fallback).
    /// Unknown or stale ids are ignored.
    pub fn accept_summary(&mut self, request_id: &str, text: &str, ok: bool, _now_ms: f64) {
        if !matches!(self.st.pending_summary.as_ref(), Some(p) if p.id == request_id) {
            return;
        }
        let ok = ok && !text.trim().is_empty();
        let text = if ok {
            fold::truncate_chars(text.trim(), MAX_SUMMARY_CHARS).to_string()
        } else {
            String::new()
        };
        // Cannot fail for a pending id; an error would only mean the summary is lost.
        let _ = self.emit(Event::SummaryDone {
            id: request_id.to_string(),
            ok,
            text,
        });
    }
}
