//! The session state and the only code that mutates it: [`SessionState::apply`].
//!
//! The state is event-sourced. Live calls in [`crate::engine`] decide, build an
//! [`crate::engine::journal::Event`] carrying every computed value, apply it here and append it to
//! the journal; `restore` applies the same events. Because `apply` reads nothing but the state
//! and the event (no config, no clock, no hashing), live state and replayed state are equal by
//! construction, byte for byte in [`SessionState`]'s JSON (the snapshot).
//!
//! Invariants kept by `apply` (and checked by the property tests):
//! * `records[i]` describes host index `i`; records are only appended or truncated;
//! * `head_len <= live_from <= records.len()` once pinned (the live tail may be empty);
//! * segments are ordered, disjoint and cover `[head_len, live_from)` exactly
//!   (`segs[k].to == segs[k+1].from`), each `protected` index lies inside its segment;
//! * everything bounded that grows per call: call rows (500), commit keys (1,000),
//!   open calls (64), artifact notes (256), summary timestamps (one hour).

pub use crate::engine::topics::{TopicPending, TopicState};
use crate::error::Result;
use crate::pairing::ShapeRole;
use crate::tokens::{Calibration, DEFAULT_SLOPE};
use serde::{Deserialize, Serialize};

/// Number of leading keys `a` and `b` share.
fn common_prefix(a: &[OutKey], b: &[OutKey]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

/// [`SessionState::req_same`]: the length of the common prefix of `req` and `out`, or `None`
/// when not known yet (after a restore: the first `out` event compares them). A cache: states
/// are equal whatever it holds.
#[derive(Debug, Clone, Default)]
pub struct ReqSame(Option<usize>);

impl PartialEq for ReqSame {
    fn eq(&self, _: &ReqSame) -> bool {
        true
    }
}

/// Version of the snapshot format a new session writes: 2 since its records' hashes are
/// XXH3-128 (32 hex chars; [`crate::engine::fingerprint::HashAlgo`]). A snapshot keeps the
/// version it was started with: a session of version 1 (SHA-1 hashes) reads and continues as
/// it was.
pub const STATE_VERSION: u32 = 2;
/// Per-call usage rows kept (older calls only count in the running totals).
pub const MAX_CALL_ROWS: usize = 500;
/// Tool calls remembered until their result arrives (to name the file a result belongs to).
pub const MAX_OPEN_CALLS: usize = 64;
/// Artifact notes kept.
pub const MAX_ARTIFACTS: usize = 256;
/// Committed turns whose size is kept for the growth projection (`View::threshold`).
pub const MAX_TURN_WS: usize = 4;
/// Rolling window of the summary rate limit.
pub const HOUR_MS: f64 = 3_600_000.0;

/// Whole session state; its JSON is the snapshot.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionState {
    /// Snapshot format version.
    pub v: u32,
    /// Number of events applied.
    pub seq: u64,
    /// Host session id.
    pub session_id: String,
    /// Model id of the last assemble.
    pub model: Option<String>,
    /// SHA-1 of the last `systemPromptAddition`.
    pub spa: Option<String>,

    /// One record per host index seen.
    pub records: Vec<MsgRecord>,
    /// Cut boundaries of `records`, extended as they grow (derived, never serialized).
    #[serde(skip)]
    pub cuts: crate::fold::CutCache,
    /// Head pinned.
    pub pinned: bool,
    /// Pinned head length.
    pub head_len: u32,
    /// Head fingerprint ([`crate::engine::fingerprint::head_fingerprint`]).
    pub head_fp: String,
    /// Fold segments in output order.
    pub segs: Vec<Segment>,
    /// First host index of the live tail.
    pub live_from: u32,
    /// Calls waiting for results.
    pub open_calls: Vec<CallArg>,
    /// Keys of the last assembled output.
    pub out: Vec<OutKey>,
    /// Keys of the last request as the engine predicts it was sent.
    pub req: Vec<OutKey>,
    /// Length of the common prefix of `req` and `out`, when known (derived, never serialized).
    #[serde(skip)]
    pub req_same: ReqSame,
    /// Turn in progress.
    pub turn: TurnAcc,
    /// Token estimator fit.
    pub calibration: Calibration,
    /// Spread of the calibration points.
    #[serde(default)]
    pub calib_guard: CalibGuard,
    /// Advancement keys already committed (every one of the session, as 8-byte hashes).
    pub commit_keys: CommitKeys,
    /// Recent per-call usage rows.
    pub rows: Vec<CallRow>,
    /// Totals over all calls.
    pub totals: Totals,
    /// Counters.
    pub counters: Counters,
    /// Consecutive folds that saved less than 5 % of the estimate (3 stop priced folds).
    pub breaker_low: u32,
    /// Summary request in flight.
    pub pending_summary: Option<PendingSummary>,
    /// Summary ready for the next fold.
    pub ready_summary: Option<ReadySummary>,
    /// Issue times of summary requests within the last hour.
    pub summary_times: Vec<f64>,
    /// Recent artifact notes.
    pub artifacts: Vec<ArtifactNote>,
    /// The host asked for a fold (`compact` without messages): done at the next assemble.
    pub force_fold: bool,
    /// Last divergence.
    pub last_divergence: Option<DivergenceNote>,
    /// Weighted chars each of the last [`MAX_TURN_WS`] committed turns added.
    #[serde(default)]
    pub turn_ws: Vec<u64>,
    /// Model context window (tokens), as the host last reported it.
    #[serde(default)]
    pub window: Option<u64>,
    /// Token budget of the last pre-prompt assemble.
    #[serde(default)]
    pub budget: Option<u64>,
    /// Leading records the host no longer sends (it evicted them, see `engine::evict`): host
    /// index `h` is record `h + base`.
    #[serde(default)]
    pub base: u32,
    /// Leading host messages the engine neither records nor sends: what the host put in front
    /// of the history it kept after an eviction (a transformed evicted message). Host index
    /// `h >= skip` is record `h - skip + base`.
    #[serde(default)]
    pub skip: u32,
    /// The pinned head's message JSON, kept (when small) so the head can still be sent after
    /// the host evicted it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub head_json: Vec<String>,
    /// Topics of the committed turns, their first records and the pinned turns (absent from
    /// snapshots of sessions without topics).
    #[serde(default, skip_serializing_if = "TopicState::is_empty")]
    pub topics: TopicState,
}

impl SessionState {
    /// Calibration is trusted once it has seen prompts of clearly different sizes: a two-point
    /// fit needs spread, and `Calibration` fits one point (or equal sizes) through the origin,
    /// which makes the first turn (≈ 12K static tokens over a few hundred chars of history) read
    /// as 2 tokens per char, 6.7× too high. Until then: default slope, static = residual of the
    /// last observation.
    pub fn calibrated(&self) -> bool {
        let g = &self.calib_guard;
        self.calibration.samples() >= 2 && g.hi.saturating_sub(g.lo) >= (g.lo / 10).max(2_000)
    }

    /// Estimated tokens of `w` weighted chars of messages.
    pub fn tokens(&self, w: u64) -> u64 {
        if self.calibrated() {
            self.calibration.tokens(w)
        } else {
            (w as f64 * DEFAULT_SLOPE).round() as u64
        }
    }

    /// Estimated static prompt (system prompt + tools).
    pub fn static_tokens(&self) -> u64 {
        if self.calibrated() {
            return self.calibration.static_tokens();
        }
        match self.calib_guard.last {
            Some([x, y]) => y.saturating_sub((x as f64 * DEFAULT_SLOPE).round() as u64),
            None => 0,
        }
    }

    /// Read a snapshot (the JSON text of a state).
    pub fn from_snapshot(text: &str) -> serde_json::Result<SessionState> {
        serde_json::from_str(text)
    }

    /// Fresh state of a new session.
    pub fn new(session_id: &str) -> SessionState {
        SessionState {
            v: STATE_VERSION,
            seq: 0,
            session_id: session_id.to_string(),
            model: None,
            spa: None,
            records: Vec::new(),
            cuts: Default::default(),
            req_same: ReqSame::default(),
            pinned: false,
            head_len: 0,
            head_fp: String::new(),
            segs: Vec::new(),
            live_from: 0,
            open_calls: Vec::new(),
            out: Vec::new(),
            req: Vec::new(),
            turn: TurnAcc::default(),
            calibration: Calibration::default(),
            calib_guard: CalibGuard::default(),
            commit_keys: CommitKeys::default(),
            rows: Vec::new(),
            totals: Totals::default(),
            counters: Counters::default(),
            breaker_low: 0,
            pending_summary: None,
            ready_summary: None,
            summary_times: Vec::new(),
            artifacts: Vec::new(),
            force_fold: false,
            last_divergence: None,
            turn_ws: Vec::new(),
            window: None,
            budget: None,
            base: 0,
            skip: 0,
            head_json: Vec::new(),
            topics: TopicState::default(),
        }
    }

    /// Host messages the records account for: the `skip` prelude plus records from `base` on.
    pub fn host_recorded(&self) -> u32 {
        self.recorded().saturating_sub(self.base) + self.skip
    }

    /// Host index of record `r`, or `None` for a record the host no longer sends.
    pub fn host_of(&self, r: u32) -> Option<u32> {
        (r >= self.base).then(|| r - self.base + self.skip)
    }

    /// Record index of host index `h`, or `None` inside the unrecorded prelude.
    pub fn rec_of(&self, h: u32) -> Option<u32> {
        (h >= self.skip).then(|| h - self.skip + self.base)
    }

    /// Number of recorded host messages.
    pub fn recorded(&self) -> u32 {
        u32::try_from(self.records.len()).unwrap_or(u32::MAX)
    }

    /// Priced folds are stopped after 3 consecutive low-saving folds.
    pub fn breaker_tripped(&self) -> bool {
        self.breaker_low >= 3
    }

    /// Apply one event. On error the state is unchanged and `seq` is not advanced (replay
    /// stops there).
    /// The event is consumed: its record moves into the state (no copy per ingested message).
    pub fn apply(&mut self, mut e: Event) -> Result<()> {
        self.check(&e)?;
        // The events of every turn here; the others in a function of their own (`apply_rare`),
        // so that replaying a journal runs a small function per line.
        match &mut e {
            Event::Ingest { rec, calls, .. } => {
                match rec.shape.role {
                    ShapeRole::Assistant => {
                        for c in std::mem::take(calls) {
                            self.open_calls.push(c);
                            if self.open_calls.len() > MAX_OPEN_CALLS {
                                self.open_calls.remove(0);
                            }
                        }
                    }
                    ShapeRole::ToolResult => {
                        if let Some(id) = &rec.shape.result_id {
                            if let Some(k) = self.open_calls.iter().position(|c| &c.id == id) {
                                self.open_calls.remove(k);
                            }
                        }
                    }
                    _ => {}
                }
                self.records.push(std::mem::take(&mut **rec));
            }
            Event::Out {
                keep,
                add,
                shared,
                repairs,
            } => {
                let keep = *keep as usize;
                // The common prefix of `req` and the kept keys: known from the last event when
                // it ends inside them (the kept keys did not change), else compared from there.
                let known = self.req_same.0.map_or(0, |n| n.min(keep));
                self.out.truncate(keep);
                self.out.extend_from_slice(add);
                // `req` becomes `out`: only the part after their common prefix is copied
                // (usually the keys just added), not the whole output on every event.
                let same = match self.req_same.0 {
                    Some(n) if n < keep => n,
                    _ => known + common_prefix(&self.req[known..], &self.out[known..]),
                };
                debug_assert_eq!(same, common_prefix(&self.req, &self.out));
                self.req.truncate(same);
                self.req.extend_from_slice(&self.out[same..]);
                self.req_same.0 = Some(self.out.len());
                self.turn.shared.push(*shared);
                let w = keys_w(&self.out);
                self.turn.first_w.get_or_insert(w);
                crate::text::push_bounded(&mut self.turn.out_ws, w, MAX_CALL_ROWS);
                self.counters.repairs += u64::from(*repairs);
            }
            Event::Commit { .. } => self.apply_commit(&e),
            _ => self.apply_rare(&mut e),
        }
        self.seq += 1;
        Ok(())
    }

    /// [`SessionState::apply`] of the events that are not written every turn.
    #[inline(never)]
    fn apply_rare(&mut self, e: &mut Event) {
        match e {
            Event::Env { model, spa } => {
                self.model = model.clone();
                self.spa = spa.clone();
            }
            Event::Diverge { at, cause, action } => {
                *self
                    .counters
                    .divergences
                    .entry(cause.clone())
                    .or_insert_with(|| 0) += 1;
                self.last_divergence = Some(DivergenceNote {
                    at: *at,
                    cause: cause.clone(),
                    action: *action,
                });
                match action {
                    DivergeAction::Truncate => self.truncate(*at),
                    DivergeAction::Repin => self.repin(),
                    DivergeAction::None | DivergeAction::Evict => {}
                }
            }
            Event::Evict { len, skip } => {
                self.base += *len;
                self.skip = *skip;
            }
            Event::Pin { len, fp, json } => {
                self.head_json = json.clone();
                self.pinned = true;
                self.head_len = *len;
                self.head_fp = fp.clone();
                self.live_from = self.live_from.max(*len);
            }
            Event::Fold {
                seg,
                reason,
                folded_w,
                folded_tokens,
                low,
            } => {
                self.live_from = seg.to;
                self.counters.folds += 1;
                match reason {
                    FoldReason::Priced => self.counters.priced_folds += 1,
                    FoldReason::Emergency => self.counters.emergency_folds += 1,
                    FoldReason::Compact | FoldReason::Evicted => self.counters.compact_folds += 1,
                }
                self.counters.folded_w += *folded_w;
                self.counters.folded_tokens += *folded_tokens;
                if seg.summary {
                    self.counters.summaries_used += 1;
                }
                self.breaker_low = if *low {
                    self.breaker_low.saturating_add(1)
                } else {
                    0
                };
                self.drop_summaries_before(seg.to);
                self.force_fold = false;
                self.topics.freeze_before(seg.to);
                self.segs.push((**seg).clone());
            }
            Event::Condense { seg } => {
                self.counters.condenses += 1;
                self.segs.clear();
                self.segs.push((**seg).clone());
            }
            Event::SummaryReq { id, from, to, at } => {
                self.summary_times.retain(|t| *t > *at - HOUR_MS);
                self.summary_times.push(*at);
                self.pending_summary = Some(PendingSummary {
                    id: id.clone(),
                    from: *from,
                    to: *to,
                    at: *at,
                });
                self.counters.summaries_requested += 1;
            }
            Event::SummaryDone { id, ok, text } => {
                if let Some(p) = self.pending_summary.take() {
                    if &p.id == id && *ok {
                        self.counters.summaries_ok += 1;
                        self.ready_summary = Some(ReadySummary {
                            id: id.clone(),
                            from: p.from,
                            to: p.to,
                            text: text.clone(),
                        });
                    } else {
                        self.counters.summaries_failed += 1;
                    }
                }
            }
            Event::Artifact { note } => {
                self.counters.artifacts += 1;
                crate::text::push_bounded(&mut self.artifacts, note.clone(), MAX_ARTIFACTS);
            }
            Event::ForceFold { on } => self.force_fold = *on,
            Event::Turn { from, at, terms } => self.topics.push(*from, *at, terms),
            Event::PinTurn { turn } => self.topics.pin(*turn),
            Event::TopicReq { id, turn, at } => self.topics.llm_asked(id, *turn, *at),
            Event::TopicDone { id, ok, answer } => {
                self.topics.llm_answered(id, *ok, answer.as_ref())
            }
            Event::Limits { window, budget } => {
                if window.is_some() {
                    self.window = *window;
                }
                if budget.is_some() {
                    self.budget = *budget;
                }
            }
            Event::Ingest { .. } | Event::Out { .. } | Event::Commit { .. } => {}
        }
    }

    /// [`SessionState::apply`] of a committed turn.
    #[inline(never)]
    fn apply_commit(&mut self, e: &Event) {
        let Event::Commit {
            key,
            rows,
            calib,
            calib_more,
            req_add,
            cost_usd,
            uncached_usd,
            turn_w,
        } = e
        else {
            return;
        };
        if *turn_w > 0 {
            crate::text::push_bounded(&mut self.turn_ws, *turn_w, MAX_TURN_WS);
        }
        self.commit_keys.insert(key);
        for r in rows {
            let t = &mut self.totals;
            t.calls += 1;
            t.input += r.input;
            t.cache_read += r.cache_read;
            t.cache_write += r.cache_write;
            t.output += r.output;
            t.predicted += r.predicted;
            t.predicted_abs_err += r.predicted.abs_diff(r.cache_read);
            crate::text::push_bounded(&mut self.rows, r.clone(), MAX_CALL_ROWS);
        }
        self.totals.cost_usd += *cost_usd;
        self.totals.uncached_usd += *uncached_usd;
        for [x, y] in calib.iter().chain(calib_more.iter()) {
            self.calibration.observe(*x, *y);
            let g = &mut self.calib_guard;
            g.lo = if g.last.is_none() { *x } else { g.lo.min(*x) };
            g.hi = g.hi.max(*x);
            g.last = Some([*x, *y]);
        }
        // The common prefix grows only if `req` was a prefix of `out`.
        let before = self.req.len();
        self.req.extend_from_slice(req_add);
        if let Some(n) = self.req_same.0.filter(|&n| n == before) {
            self.req_same.0 =
                Some(n + common_prefix(&self.req[n..], self.out.get(n..).unwrap_or_default()));
        }
        debug_assert!(self
            .req_same
            .0
            .map_or(true, |n| n == common_prefix(&self.req, &self.out)));
        self.turn = TurnAcc::default();
    }

    fn truncate(&mut self, at: u32) {
        self.records.truncate(at as usize);
        self.cuts.invalidate();
        if !self.pinned {
            self.live_from = 0;
        }
        if self.ready_summary.as_ref().is_some_and(|s| s.to > at) {
            self.ready_summary = None;
        }
        if self.pending_summary.as_ref().is_some_and(|s| s.to > at) {
            self.pending_summary = None;
            self.counters.summaries_failed += 1;
        }
    }

    /// Fresh structure over the incoming history; counters, calibration, usage rows, commit
    /// keys, artifact notes and the last output (for hit prediction) survive.
    fn repin(&mut self) {
        self.records.clear();
        self.cuts.invalidate();
        self.base = 0;
        self.skip = 0;
        self.head_json.clear();
        self.pinned = false;
        self.head_len = 0;
        self.head_fp.clear();
        self.segs.clear();
        self.live_from = 0;
        self.open_calls.clear();
        self.ready_summary = None;
        if self.pending_summary.take().is_some() {
            self.counters.summaries_failed += 1;
        }
        self.breaker_low = 0;
        self.force_fold = false;
        self.counters.repins += 1;
    }

    fn drop_summaries_before(&mut self, to: u32) {
        if self.ready_summary.as_ref().is_some_and(|s| s.from < to) {
            self.ready_summary = None;
        }
        if self.pending_summary.as_ref().is_some_and(|s| s.from < to) {
            self.pending_summary = None;
            self.counters.summaries_failed += 1;
        }
    }
}

/// Weighted chars of the output entries `keys`.
pub fn keys_w(keys: &[OutKey]) -> u64 {
    let mut w = 0;
    for k in keys {
        w += k.1;
    }
    w
}

/// Weighted chars of the records of `segs` (their kept messages not included).
pub fn segs_w(segs: &[Segment]) -> u64 {
    let mut w = 0;
    for s in segs {
        w += s.w;
    }
    w
}

mod check;
mod commit_keys;
mod event;
mod records;
pub use commit_keys::CommitKeys;
pub use event::Event;
pub use records::*;

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(names: &str) -> Vec<OutKey> {
        names.chars().map(|c| OutKey(c.to_string(), 1)).collect()
    }

    fn out(keep: u32, add: &str) -> Event {
        Event::Out {
            keep,
            add: keys(add),
            shared: 0,
            repairs: 0,
        }
    }

    fn commit(req_add: &str) -> Event {
        Event::Commit {
            key: format!("k{req_add}"),
            rows: vec![],
            calib: None,
            calib_more: vec![],
            req_add: keys(req_add),
            cost_usd: 0.0,
            uncached_usd: 0.0,
            turn_w: 0,
        }
    }

    /// `req` after an `out` event is `out`, and after a commit `req` plus the commit's keys,
    /// whatever the remembered common prefix says (also after a restore, which forgets it).
    #[test]
    fn the_request_keys_follow_the_output_keys() {
        let events = [
            out(0, "abc"),
            commit("x"),
            out(3, "d"),
            out(2, "ef"),
            commit(""),
            out(4, "g"),
            commit("gh"),
            out(5, "hi"),
            out(1, ""),
            commit("bz"),
            out(1, "bc"),
        ];
        let mut st = SessionState::new("s");
        let (mut want_out, mut want_req) = (Vec::new(), Vec::new());
        for (k, e) in events.into_iter().enumerate() {
            match &e {
                Event::Out { keep, add, .. } => {
                    want_out.truncate(*keep as usize);
                    want_out.extend_from_slice(add);
                    want_req = want_out.clone();
                }
                Event::Commit { req_add, .. } => want_req.extend_from_slice(req_add),
                _ => unreachable!(),
            }
            st.apply(e).unwrap();
            assert_eq!(
                (&st.out, &st.req),
                (&want_out, &want_req),
                "after event {k}"
            );
            if k % 3 == 2 {
                // A restored state: the common prefix is compared again.
                st = SessionState::from_snapshot(&crate::to_json(&st)).unwrap();
                assert_eq!(st.req_same.0, None);
            }
        }
    }
}
