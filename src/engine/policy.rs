//! Fold policy: when a fold pays, where it cuts, what its record holds, emergency and forced
//! folds, condensation. See the module docs of [`super`] for the rules.

use super::state::{self, Event, FoldReason, MsgRecord, Segment};
use super::{
    AssembleInput, AssembleReport, CondenseReport, FoldReport, FoldWrite, Op, Prepared, Session,
    EMERGENCY_HEADROOM, LOW_SAVING_DIVISOR,
};
use crate::digest::Digest;
use crate::error::Result;
use crate::{cost, fold, tokens};

/// [`Session::candidate`]'s answer when no cut leaves a tail within `tailTokens`.
const LAST_TURN_OVER_TAIL: &str = "the last turn alone exceeds tailTokens";

/// What does not change within one round of the fold policy.
pub(super) struct Round {
    /// Host messages in the prompt (records, in record space).
    pub count: u32,
    /// The model's price row.
    pub price: cost::Price,
    /// Calls expected to reuse the prefix (the cost model's horizon).
    pub expected: f64,
    /// Prompt size (tokens) above which folds are due.
    pub thr: u64,
    /// The provider's cache terms now: write premium, minimum length, expired after an idle gap.
    pub terms: cost::CacheTerms,
    /// When the end of the history (`count`) is a turn boundary an emergency fold may cut at
    /// ([`super::View::end_is_cut`]): the prompt size it is the last resort against, the host's
    /// budget or its pre-turn trigger, whichever is lower ([`super::View::hard_limit`]).
    pub end_cut: Option<u64>,
}

/// What a rule of the fold policy decided, from the state alone; [`Session::apply_step`]
/// applies it.
pub(super) enum Step {
    /// Nothing to do; the reason, when there is one, becomes the report's `skipped`.
    Skip(Option<String>),
    /// Append this fold (`before`: the prompt estimate it was decided at).
    Fold {
        p: Prepared,
        reason: FoldReason,
        decision: cost::FoldDecision,
        before: u64,
    },
    /// Replace every segment by this condensed one.
    Condense {
        seg: Segment,
        report: CondenseReport,
    },
    /// Clear the forced-fold request: nothing is left to fold.
    ClearForce,
}

impl Session {
    /// The provider's cache terms for `model` at `now_ms` ([`crate::providers::terms`]); the
    /// last request is the later of the last committed call (its row's time) and the last
    /// request this process planned for it, and `other_ms`, the last request another session
    /// sent on the model (the host also sends requests no turn is committed for, some as
    /// sessions of their own with this session's prefix).
    pub(super) fn cache_terms(
        &self,
        model: Option<&str>,
        now_ms: f64,
        other_ms: Option<f64>,
    ) -> cost::CacheTerms {
        let profile = crate::providers::profile_for(&self.cfg, model);
        let last = [
            self.st.rows.last().map(|r| r.at),
            self.last_request_ms,
            other_ms,
        ]
        .into_iter()
        .flatten()
        .filter(|t| t.is_finite())
        .reduce(f64::max);
        crate::providers::terms(profile.as_ref(), now_ms, last)
    }

    /// The inputs of the fold rules for one assemble over `count` records.
    pub(super) fn round(&self, count: u32, input: &AssembleInput, model: Option<&str>) -> Round {
        Round {
            count,
            price: cost::price_for(&self.cfg, model, input.now_ms),
            expected: self.view().expected_calls(),
            thr: self.view().threshold(input),
            terms: self.cache_terms(model, input.now_ms, input.last_request_ms),
            end_cut: self
                .view()
                .end_is_cut(count, input.prompt_pending)
                .then(|| self.view().hard_limit(input)),
        }
    }

    /// The priced candidate: earliest cut whose tail fits `tailTokens` (None when the live tail
    /// already fits, or when even the last group does not).
    pub(super) fn candidate(
        &self,
        count: u32,
        cuts: &[u32],
    ) -> std::result::Result<u32, &'static str> {
        let fits = |w: u64| self.st.tokens(w) <= self.cfg.tail_tokens;
        if fits(fold::span_w(&self.st.records, self.st.live_from, count)) {
            return Err("live tail within tailTokens");
        }
        for (&c, w) in cuts.iter().zip(tails_w(&self.st.records, cuts, count)) {
            if fits(w) {
                return Ok(c);
            }
        }
        Err(LAST_TURN_OVER_TAIL)
    }

    /// `Some(reason)` when folding `[from, to)` cannot pay even with an empty record (the
    /// decision is monotone in the record size), so the record need not be rendered.
    pub(super) fn cannot_pay(
        &self,
        count: u32,
        from: u32,
        to: u32,
        before: u64,
        r: &Round,
    ) -> Option<String> {
        let protected_w = picked_w(&self.st.records, &self.kept_verbatim(from, to));
        let cand = cost::FoldCandidate {
            context_tokens: before,
            unchanged_prefix_tokens: self.st.static_tokens()
                + self.st.tokens(self.view().prefix_w()),
            new_record_tokens: 0,
            after_tokens: self
                .st
                .tokens(protected_w + fold::span_w(&self.st.records, to, count)),
            summary_input_tokens: 0,
            summary_output_tokens: 0,
        };
        let d = cost::fold_decision_with(&cand, &r.price, r.expected, &r.terms);
        (!d.pays).then_some(d.reason)
    }

    pub(super) fn prepare(&self, id: &str, from: u32, to: u32, summary: Option<&str>) -> Prepared {
        let key = (
            id.to_string(),
            from,
            to,
            summary.map(|s| crate::fingerprint_hex(s.as_bytes())),
        );
        if let Some((_, p)) = self.prepared.borrow().iter().find(|(k, _)| *k == key) {
            return p.clone();
        }
        let p = self.prepare_uncached(id, from, to, summary);
        self.prepared.borrow_mut().push((key, p.clone()));
        p
    }

    pub(super) fn prepare_uncached(
        &self,
        id: &str,
        from: u32,
        to: u32,
        summary: Option<&str>,
    ) -> Prepared {
        let recs = &self.st.records;
        let protected = self.kept_verbatim(from, to);
        let digests = digests_outside(recs, from, to, &protected);
        let region_w = fold::span_w(recs, from, to);
        let cap = fold::cap_for_region(fold::fold_cap_chars(self.cfg.fold_record_budget), region_w);
        let text = match summary.filter(|s| !s.trim().is_empty()) {
            None => self.topic_record(id, from, to, &protected, cap),
            // An LLM summary keeps the closed topics' lines (within a quarter of the cap).
            Some(_) => Some(fold::fold_text(
                id,
                &digests,
                summary,
                &self.summary_topics(from, to, &protected, cap / 4),
                cap,
            )),
        }
        .unwrap_or_else(|| fold::fold_text(id, &digests, summary, "", cap));
        let json = fold::record_json(&text, fold::record_ts(recs, from).as_ref());
        let w = tokens::weighted_chars(&json);
        let protected_w = picked_w(recs, &protected);
        Prepared {
            seg: Segment {
                id: id.to_string(),
                from,
                to,
                protected,
                key: self.msg_hash(&json).short_key(),
                json,
                w,
                protected_w,
                covers: vec![id.to_string()],
                summary: summary.is_some(),
            },
            text,
        }
    }

    /// Prompt estimate if `p` were appended now.
    pub(super) fn estimate_with(&self, count: u32, p: &Prepared) -> u64 {
        let w = self.view().prefix_w()
            + p.seg.w
            + p.seg.protected_w
            + fold::span_w(&self.st.records, p.seg.to, count);
        self.st.static_tokens() + self.st.tokens(w)
    }

    pub(super) fn candidate_price(
        &self,
        count: u32,
        p: &Prepared,
        before: u64,
    ) -> cost::FoldCandidate {
        let stat = self.st.static_tokens();
        cost::FoldCandidate {
            context_tokens: before,
            unchanged_prefix_tokens: stat + self.st.tokens(self.view().prefix_w()),
            new_record_tokens: self.st.tokens(p.seg.w),
            after_tokens: self
                .st
                .tokens(p.seg.protected_w + fold::span_w(&self.st.records, p.seg.to, count)),
            summary_input_tokens: 0,
            summary_output_tokens: 0,
        }
    }

    pub(super) fn next_fold_id(&self) -> String {
        format!("f{}", self.st.counters.folds + 1)
    }

    pub(super) fn ready_summary_for(&self, to_max: u32, cuts: &[u32]) -> Option<(u32, String)> {
        let s = self.st.ready_summary.as_ref()?;
        (s.from == self.st.live_from && s.to <= to_max && cuts.binary_search(&s.to).is_ok())
            .then(|| (s.to, s.text.clone()))
    }

    /// The fold policy for one assemble: rounds of the priced, emergency and condensation
    /// rules, each planned from the state alone ([`Session::plan_priced`],
    /// [`Session::plan_emergency`], [`Session::plan_condense`] take `&self`) and applied by
    /// [`Session::apply_step`], the one place the policy changes the state (through events).
    pub(super) fn fold_phase(
        &mut self,
        count: u32,
        input: &AssembleInput,
        model: Option<&str>,
        op: Op,
        report: &mut AssembleReport,
        writes: &mut Vec<FoldWrite>,
    ) -> Result<()> {
        let round = self.round(count, input, model);
        report.budget_tokens = self.view().budget(input);
        report.threshold_tokens = round.thr;
        report.tokens_before = self.view().estimate(count);
        let forced = op == (Op::Compact { force: true }) || self.st.force_fold;
        report.forced = forced;
        // Iterate to a fixpoint: a fold or condensation changes the prefix and so the next
        // rule's inputs; stopping early would let a repeated assemble fold again (found by the
        // property tests). Each round either advances `liveFrom` or leaves one segment, so at
        // most a handful of rounds run; 8 is a safety cap.
        let mut force_now = forced;
        for _round in 0..8 {
            let folds_before = report.folds.len();
            let condenses_before = self.st.counters.condenses;
            let step = self.plan_priced(&round, force_now);
            self.apply_step(&round, step, report, writes)?;
            let (over, step) = self.plan_emergency(&round, force_now);
            report.emergency |= over && !force_now;
            self.apply_step(&round, step, report, writes)?;
            let step = self.plan_condense(&round);
            self.apply_step(&round, step, report, writes)?;
            force_now = false;
            let changed = report.folds.len() != folds_before
                || self.st.counters.condenses != condenses_before;
            if !changed {
                break;
            }
        }
        Ok(())
    }

    /// The priced rule: fold the live tail down to `tailTokens` when the cost model says the
    /// fold pays back (never when forced: the emergency rule handles forced folds).
    pub(super) fn plan_priced(&self, r: &Round, forced: bool) -> Step {
        if forced {
            return Step::Skip(None);
        }
        if self.st.breaker_tripped() {
            return Step::Skip(Some(
                "circuit breaker: 3 consecutive folds saved < 5 %".into(),
            ));
        }
        let count = r.count;
        let before = self.view().estimate(count);
        let cuts = self.view().live_cuts(count);
        // After an idle gap past the provider's cache lifetime the next request misses from its
        // first token anyway, so a fold then breaks nothing: the live tail goes down to
        // `tailTokens` now, also when the region is under `minFoldTokens`; and when the last
        // turn alone exceeds `tailTokens`, or the prompt is over the threshold with the tail
        // already within it (an emergency is due), everything before the last turn is folded,
        // deeper than the emergency rule's low-water mark, which would otherwise fold later on
        // a live cache. Over the threshold that deepest cut is taken also when the tail is
        // just over `tailTokens`: folding only down to it would leave the prompt over the
        // threshold and an emergency fold would follow in the same request.
        let free = r.terms.expired;
        let deepest = cuts.last().copied().filter(|_| free);
        let mut tries = match (self.candidate(count, &cuts), deepest) {
            (Err(why), Some(last)) if why == LAST_TURN_OVER_TAIL || before > r.thr => vec![last],
            // The deepest cut can fail to pay where the candidate pays (a prompt left under
            // the provider's minimum cacheable length): the candidate is tried next.
            (Ok(c), Some(last)) if before > r.thr => vec![last, self.topic_cut(count, &cuts, c)],
            (Err(why), _) => return Step::Skip(Some(why.into())),
            (Ok(c), _) => vec![self.topic_cut(count, &cuts, c)],
        };
        // The deepest cut inside the live tail can still leave the prompt over the host's hard
        // limit (the last turn alone outgrows it): the emergency rule would then fold the end of
        // the list in the same request, a second record and an emergency after a free rewrite.
        // When the end is a cut, the free fold goes there at once.
        if let (Some(last), Some(hard)) = (deepest, r.end_cut) {
            if tries.first() == Some(&last)
                && self.estimate_with(
                    count,
                    &self.prepare(&self.next_fold_id(), self.st.live_from, last, None),
                ) > hard
            {
                tries.insert(0, count);
            }
        }
        tries.dedup();
        let mut skipped = String::new();
        for c in tries {
            match self.priced_at(r, &cuts, before, c) {
                Ok(step) => return step,
                Err(why) => skipped = why,
            }
        }
        Step::Skip(Some(skipped))
    }

    /// The priced fold of `[liveFrom, c)`, or why it is skipped (after an idle gap past the
    /// cache lifetime, `minFoldTokens` does not apply).
    fn priced_at(
        &self,
        r: &Round,
        cuts: &[u32],
        before: u64,
        c: u32,
    ) -> std::result::Result<Step, String> {
        let (count, free) = (r.count, r.terms.expired);
        let id = self.next_fold_id();
        let live = self.st.live_from;
        let region = self.st.tokens(fold::span_w(&self.st.records, live, c));
        if region < self.cfg.min_fold_tokens && !free {
            return Err(format!(
                "region {region} tokens < minFoldTokens {}",
                self.cfg.min_fold_tokens
            ));
        }
        if let Some(why) = self.cannot_pay(count, live, c, before, r) {
            // Not even a zero-size record would pay: skip rendering one.
            return Err(why);
        }
        let p = self.prepare(&id, live, c, None);
        let d = cost::fold_decision_with(
            &self.candidate_price(count, &p, before),
            &r.price,
            r.expected,
            &r.terms,
        );
        if !d.pays {
            return Err(d.reason);
        }
        // The fold is decided at the candidate cut; a ready summary for [liveFrom, to) with
        // to <= c moves the cut back to `to` (the rest stays live for the next fold), provided
        // it covers at least half of the candidate region.
        let with_summary = self.ready_summary_for(c, cuts).filter(|(to, _)| {
            2 * self.st.tokens(fold::span_w(&self.st.records, live, *to)) >= region
        });
        let (p, decision) = match with_summary {
            Some((to, text)) => {
                let ps = self.prepare(&id, live, to, Some(&text));
                let ds = cost::fold_decision_with(
                    &self.candidate_price(count, &ps, before),
                    &r.price,
                    r.expected,
                    &r.terms,
                );
                (ps, ds)
            }
            None => (p, d),
        };
        Ok(Step::Fold {
            p,
            reason: FoldReason::Priced,
            decision,
            before,
        })
    }

    /// The emergency rule (and a forced fold): over the threshold, fold whatever the price,
    /// down to a low-water mark. Also tells whether the prompt is over the threshold.
    pub(super) fn plan_emergency(&self, r: &Round, forced: bool) -> (bool, Step) {
        let (count, thr) = (r.count, r.thr);
        let est = self.view().estimate(count);
        let emergency = est > thr;
        if !(emergency || forced) {
            return (emergency, Step::Skip(None));
        }
        let cuts = self.view().live_cuts(count);
        // The end of the list (`r.end_cut`): the last resort of an emergency, taken only when no
        // cut inside the live tail brings the prompt under the host's hard limit, so the last
        // turn stays verbatim whenever the host can go on without folding it (a prompt over the
        // fold threshold but under that limit keeps it, as before). `end_cut` holds for the whole
        // assemble; a fold of an earlier round may have reached the end already (a pinned head
        // over the threshold keeps every round an emergency).
        let end = r.end_cut.filter(|_| emergency && count > self.st.live_from);
        let Some(last) = cuts.last().copied().or(end.map(|_| count)) else {
            // Nothing to fold: clear the request so it does not linger.
            let step = if forced && self.st.force_fold {
                Step::ClearForce
            } else {
                Step::Skip(None)
            };
            return (emergency, step);
        };
        let id = self.next_fold_id();
        let mut chosen: Option<Prepared> = None;
        if forced && !emergency {
            let c = match self.candidate(count, &cuts) {
                Ok(c) => self.topic_cut(count, &cuts, c),
                Err(_) => last,
            };
            let summary = self.ready_summary_for(c, &cuts);
            chosen = Some(match summary {
                Some((to, text)) => self.prepare(&id, self.st.live_from, to, Some(&text)),
                None => self.prepare(&id, self.st.live_from, c, None),
            });
        } else {
            let stat = self.st.static_tokens();
            let fixed = self.view().prefix_w();
            // Hysteresis: an emergency fold goes down to a low-water mark, not just under the
            // threshold. Cutting the minimum made the next turn's growth cross the threshold
            // again, so every turn folded (and missed the cache after the new record) in the
            // 48K-window e2e run. The low-water mark leaves EMERGENCY_HEADROOM of the room
            // above the fixed prefix free for later turns.
            let floor = stat + self.st.tokens(fixed);
            let low =
                floor + ((thr.saturating_sub(floor)) as f64 * (1.0 - EMERGENCY_HEADROOM)) as u64;
            let tails = tails_w(&self.st.records, &cuts, count);
            'targets: for target in [low, thr] {
                for (&c, &tail) in cuts.iter().zip(&tails) {
                    // Lower bound without the record: skip cuts that cannot fit anyway.
                    let lb = stat + self.st.tokens(fixed + tail);
                    if lb > target && c != last {
                        continue;
                    }
                    let summary = self
                        .ready_summary_for(c, &cuts)
                        .filter(|(to, _)| *to == c)
                        .map(|(_, t)| t);
                    let p = self.prepare(&id, self.st.live_from, c, summary.as_deref());
                    let sent = self.estimate_with(count, &p);
                    // The last cut is taken over the threshold as before, unless the end is a
                    // cut too and this one still leaves the prompt over the host's hard limit.
                    let forced_last =
                        c == last && target == thr && end.map_or(true, |hard| sent <= hard);
                    if sent <= target || forced_last {
                        chosen = Some(self.emergency_at_topic(count, &cuts, &id, target, p));
                        break 'targets;
                    }
                }
            }
            if chosen.is_none() && end.is_some_and(|hard| est > hard) {
                chosen = Some(self.prepare(&id, self.st.live_from, count, None));
            }
        }
        let Some(p) = chosen else {
            return (emergency, Step::Skip(None));
        };
        let decision = cost::fold_decision_with(
            &self.candidate_price(count, &p, est),
            &r.price,
            r.expected,
            &r.terms,
        );
        let reason = if forced {
            FoldReason::Compact
        } else {
            FoldReason::Emergency
        };
        let step = Step::Fold {
            p,
            reason,
            decision,
            before: est,
        };
        (emergency, step)
    }

    /// The emergency fold `p` moved to a topic boundary just after its cut
    /// ([`Session::topic_emergency_cut`]) when the prompt still ends under `target` there.
    fn emergency_at_topic(
        &self,
        count: u32,
        cuts: &[u32],
        id: &str,
        target: u64,
        p: Prepared,
    ) -> Prepared {
        let Some(b) = self.topic_emergency_cut(count, cuts, p.seg.to) else {
            return p;
        };
        let summary = self
            .ready_summary_for(b, cuts)
            .filter(|(to, _)| *to == b)
            .map(|(_, t)| t);
        let q = self.prepare(id, self.st.live_from, b, summary.as_deref());
        if self.estimate_with(count, &q) <= target {
            q
        } else {
            p
        }
    }

    /// Budget of all fold records together: `foldRecordBudget`, but at most a quarter of the
    /// threshold, so that in a small window the records cannot crowd out the live tail.
    pub(super) fn record_budget(&self, thr: u64) -> u64 {
        self.cfg.fold_record_budget.min((thr / 4).max(1_000))
    }

    /// Apply what a rule planned: the report, the fold regions for the shim, and the event.
    pub(super) fn apply_step(
        &mut self,
        r: &Round,
        step: Step,
        report: &mut AssembleReport,
        writes: &mut Vec<FoldWrite>,
    ) -> Result<()> {
        match step {
            Step::Skip(None) => Ok(()),
            Step::Skip(Some(why)) => {
                report.skipped = Some(why);
                Ok(())
            }
            Step::ClearForce => self.emit(Event::ForceFold { on: false }),
            Step::Condense { seg, report: cr } => {
                writes.push(FoldWrite {
                    fold_id: seg.id.clone(),
                    from: seg.from,
                    to: seg.to,
                });
                report.condensed = Some(cr);
                self.emit(Event::Condense { seg: Box::new(seg) })
            }
            Step::Fold {
                p,
                reason,
                decision,
                before,
            } => {
                let count = r.count;
                let after = self.estimate_with(count, &p);
                let region_w = fold::span_w(&self.st.records, p.seg.from, p.seg.to);
                let folded_w = region_w.saturating_sub(p.seg.protected_w);
                let folded_tokens = self.st.tokens(folded_w);
                let saved = before.saturating_sub(after);
                let low = saved.saturating_mul(LOW_SAVING_DIVISOR) < before;
                let fr = FoldReport {
                    id: p.seg.id.clone(),
                    from: p.seg.from,
                    to: p.seg.to,
                    reason,
                    protected: p.seg.protected.len() as u32,
                    record_tokens: self.st.tokens(p.seg.w),
                    folded_tokens,
                    tokens_before: before,
                    tokens_after: after,
                    used_summary: p.seg.summary,
                    summary: p.text,
                    decision,
                    price_key: r.price.key.clone(),
                    expected_calls: r.expected,
                };
                writes.push(FoldWrite {
                    fold_id: p.seg.id.clone(),
                    from: p.seg.from,
                    to: p.seg.to,
                });
                self.emit(Event::Fold {
                    seg: Box::new(p.seg),
                    reason,
                    folded_w,
                    folded_tokens,
                    low,
                })?;
                report.fold = Some(fr.clone());
                report.folds.push(fr);
                Ok(())
            }
        }
    }

    /// The condensation rule: with two or more segments, when the records exceed their budget
    /// or the prompt its threshold, replace every segment by one condensed record, unless
    /// (under pressure only) that would not shrink the records or bring the prompt under.
    pub(super) fn plan_condense(&self, r: &Round) -> Step {
        if self.st.segs.len() < 2 {
            return Step::Skip(None);
        }
        let (count, thr) = (r.count, r.thr);
        let records_tokens = self.st.tokens(state::segs_w(&self.st.segs));
        let before = self.view().estimate(count);
        let record_budget = self.record_budget(thr);
        // After an idle gap past the provider's cache lifetime the next request misses from its
        // first token anyway: condensing then breaks nothing, so it is done when it shrinks.
        if records_tokens <= record_budget && before <= thr && !r.terms.expired {
            return Step::Skip(None);
        }
        let (Some(first), Some(_)) = (self.st.segs.first(), self.st.segs.last()) else {
            return Step::Skip(None);
        };
        let from = first.from;
        let to = self.st.live_from;
        let id = format!("c{}", self.st.counters.condenses + 1);
        let recs = &self.st.records;
        let mut protected: Vec<u32> = Vec::new();
        let mut protected_w = 0;
        let mut covers: Vec<String> = Vec::new();
        for s in &self.st.segs {
            protected.extend_from_slice(&s.protected);
            protected_w += s.protected_w;
            for c in &s.covers {
                covers.push(c.clone());
            }
        }
        covers.dedup();
        let digests = digests_outside(recs, from, to, &protected);
        // No topic lines here: in the real-OpenClaw A/B (48K window) a per-topic list in
        // condensed records changed which condensations paid and cost 10 % more input than
        // topics off; the fold ids a condensed record covers and `cachefold_topics` reach them.
        let text = fold::condensed_text(
            &id,
            &covers,
            &digests,
            fold::condensed_cap_chars(self.cfg.fold_record_budget),
        );
        let json = fold::record_json(&text, fold::record_ts(recs, from).as_ref());
        let w = tokens::weighted_chars(&json);
        let old_w = state::segs_w(&self.st.segs);
        let over_records = records_tokens > record_budget;
        // After an idle gap the condensation breaks nothing: it is done whenever it shrinks.
        let still_over = !r.terms.expired
            && before.saturating_sub(self.st.tokens(old_w)) + self.st.tokens(w) > thr;
        if !over_records && (w >= old_w || still_over) {
            // Under pressure only (prompt over the threshold): a condensation that does not
            // shrink the records, or does not bring the prompt under the threshold, would break
            // the cache after the head for nothing: the next fold is appended instead. (In the
            // 48K e2e run, where OpenClaw's system prompt alone nearly fills the pre-prompt
            // budget, condensing every turn cost more than appending.)
            return Step::Skip(None);
        }
        let merged = self.st.segs.len() as u32;
        let key = self.msg_hash(&json).short_key();
        let seg = Segment {
            id,
            from,
            to,
            protected,
            key,
            json,
            w,
            protected_w,
            covers,
            summary: false,
        };
        let stat = self.st.static_tokens();
        let head_w = fold::span_w(recs, 0, self.st.head_len);
        let tail_w = fold::span_w(recs, to, count);
        let after = stat + self.st.tokens(head_w + w + protected_w + tail_w);
        let cand = cost::FoldCandidate {
            context_tokens: before,
            unchanged_prefix_tokens: stat + self.st.tokens(head_w),
            new_record_tokens: self.st.tokens(w),
            after_tokens: self.st.tokens(protected_w + tail_w),
            summary_input_tokens: 0,
            summary_output_tokens: 0,
        };
        let decision = cost::fold_decision_with(&cand, &r.price, r.expected, &r.terms);
        Step::Condense {
            report: CondenseReport {
                id: seg.id.clone(),
                merged,
                records_tokens_before: records_tokens,
                record_tokens: self.st.tokens(w),
                tokens_before: before,
                tokens_after: after,
                decision,
            },
            seg,
        }
    }

    // ---- output --------------------------------------------------------------------------------
}

/// [`fold::span_w`]`(records, c, to)` for every `c` of the ascending `cuts`, in one pass from
/// the end: a fold of a long session weighs tens of thousands of cuts, and a sum per cut made
/// the first fold of a 100,000-message session quadratic.
pub(super) fn tails_w(records: &[MsgRecord], cuts: &[u32], to: u32) -> Vec<u64> {
    let end = (to as usize).min(records.len());
    let mut out = vec![0; cuts.len()];
    let (mut pos, mut acc) = (end, 0u64);
    for (k, &c) in cuts.iter().enumerate().rev() {
        let a = (c as usize).min(end);
        if a < pos {
            for r in &records[a..pos] {
                acc += r.w;
            }
            pos = a;
        }
        out[k] = acc;
    }
    out
}

/// The digests of the records `[from, to)` outside `protected` (ascending).
pub(super) fn digests_outside<'a>(
    records: &'a [MsgRecord],
    from: u32,
    to: u32,
    protected: &[u32],
) -> Vec<&'a Digest> {
    let mut out = Vec::new();
    for i in from..to {
        if protected.binary_search(&i).is_err() {
            if let Some(r) = records.get(i as usize) {
                out.push(&r.digest);
            }
        }
    }
    out
}

/// Weighted chars of the records at the indices `idx` (those that exist).
fn picked_w(records: &[MsgRecord], idx: &[u32]) -> u64 {
    let mut w = 0;
    for &i in idx {
        if let Some(r) = records.get(i as usize) {
            w += r.w;
        }
    }
    w
}
