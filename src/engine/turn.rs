//! Turn accounting: `commitTurn` (usage, calibration, call rows, idempotent advancement keys)
//! and the host's `compact()` without a message list.

use super::gate::{host_turn_threshold, model_managed};
use super::state::{ArtifactNote, CallRow, CommitStatus, Event, OutKey};
use super::{
    state, AssembleInput, AssembleReport, CommitInput, CommitOutcome, CompactAnswer, CompactInput,
    Op, Session, LOW_SAVING_DIVISOR,
};
use crate::cost;
use crate::digest::Digest;
use crate::error::{Error, Result};
use crate::message::Fields;
use crate::pairing::{Shape, ShapeRole};
use crate::record::{MsgHash, MsgRecord};

impl Session {
    /// A tool result was shrunk to a preview plus an artifact (`tool_result_persist` or the
    /// tool-result middleware): counted in stats, listed for fold records.
    pub fn note_artifact(
        &mut self,
        artifact_id: &str,
        tool_name: &str,
        original_chars: u64,
        now_ms: f64,
    ) -> Result<()> {
        let note = ArtifactNote {
            id: artifact_id.to_string(),
            tool: tool_name.to_string(),
            chars: original_chars,
            at: if now_ms.is_finite() { now_ms } else { 0.0 },
        };
        self.emit(Event::Artifact { note })
    }

    /// Host `compact()` without a message list: fold at the next assemble.
    pub fn request_fold(&mut self, _now_ms: f64) -> Result<()> {
        if self.st.force_fold {
            return Ok(());
        }
        self.emit(Event::ForceFold { on: true })
    }

    /// Host `compact()` without a message list (every path of OpenClaw 2026.9.6: pre-turn
    /// preflight, in-run overflow recovery, `/compact`; see docs/host-integration.md): decide
    /// now whether the next assemble will fold, record the request, and project the result.
    ///
    /// The projection runs the fold rules, forced as for `compact(force)`, on a copy of the
    /// session over the recorded history plus one stand-in message the size of the last
    /// committed turn (its messages are recorded only at the next assemble): its start is a cut
    /// point, and so is its end, since the host holds the next turn apart
    /// ([`AssembleInput::prompt_pending`]). The next assemble folds over the real messages with
    /// the same rules and can also cut inside that turn, so `tokens_after` is an upper bound of
    /// what it sends.
    pub fn compact_request(&mut self, input: &CompactInput) -> Result<CompactAnswer> {
        self.prepared.borrow_mut().clear();
        let model = input
            .model
            .clone()
            .filter(|m| !m.trim().is_empty())
            .or_else(|| self.st.model.clone());
        self.note_limits(input.context_window, None)?;
        let host_threshold = self.st.window.and_then(host_turn_threshold);
        // `estimate`: the core's estimate of the next call, where it has one (a managed model, a
        // recorded history). It `fits` when it and the host's own projection are under the
        // host's trigger.
        let nothing = |reason: &str, estimate: Option<u64>| CompactAnswer {
            pending: false,
            tokens_before: estimate.unwrap_or(0),
            tokens_after: estimate.unwrap_or(0),
            host_threshold,
            fits: estimate
                .zip(host_threshold)
                .is_some_and(|(before, t)| before.max(input.current_token_count.unwrap_or(0)) < t),
            already_compacted: false,
            reason: Some(reason.to_string()),
            summary: None,
        };
        if !model_managed(&self.cfg, model.as_deref()) {
            return Ok(nothing("model not managed by cachefold", None));
        }
        if !self.st.pinned {
            return Ok(nothing("no history recorded yet", None));
        }
        let mut sim = self.fork()?;
        let mut count = sim.st.recorded();
        if let Some(&turn_w) = self.st.turn_ws.last() {
            sim.st.records.push(MsgRecord {
                h: MsgHash::default(),
                w: turn_w,
                shape: Shape {
                    role: ShapeRole::User,
                    ..Shape::default()
                },
                ts: None,
                protected: false,
                digest: Digest::default(),
                q: None,
            });
            count += 1;
        }
        let ai = AssembleInput {
            count,
            model: model.clone(),
            token_budget: self.st.budget.or(input.token_budget),
            now_ms: input.now_ms,
            prompt_pending: true,
            ..AssembleInput::default()
        };
        let mut report = AssembleReport::default();
        let mut writes = Vec::new();
        sim.fold_phase(
            count,
            &ai,
            model.as_deref(),
            Op::Compact { force: true },
            &mut report,
            &mut writes,
        )?;
        let before = report.tokens_before;
        let after = sim.view().estimate(count);
        if report.folds.is_empty() && report.condensed.is_none() {
            return Ok(nothing(
                report
                    .skipped
                    .as_deref()
                    .unwrap_or("no cut point after the head"),
                Some(before),
            ));
        }
        // A fold that saves next to nothing (the history is already folded down to the live
        // tail) would only add a record and a cache break: say so instead.
        if after.saturating_add(before / LOW_SAVING_DIVISOR) > before {
            return Ok(CompactAnswer {
                already_compacted: true,
                ..nothing(
                    "already compacted: a fold now would save under 5 %",
                    Some(before),
                )
            });
        }
        if !self.st.force_fold {
            self.emit(Event::ForceFold { on: true })?;
        }
        Ok(CompactAnswer {
            pending: true,
            tokens_before: before,
            tokens_after: after,
            host_threshold,
            fits: false,
            already_compacted: false,
            reason: None,
            summary: report.fold.map(|f| f.summary),
        })
    }

    /// Record a finished turn: usage per call with the predicted hit, calibration, idempotent by
    /// `advancementKey` (a second call answers `duplicate` and journals nothing).
    pub fn commit_turn(&mut self, input: &CommitInput) -> Result<CommitOutcome> {
        if self.st.commit_keys.contains(&input.advancement_key) {
            return Ok(CommitOutcome {
                status: CommitStatus::Duplicate,
            });
        }
        // A message the core cannot read (quarantined at assemble) is not an assistant call.
        let mut msgs: Vec<Fields> = Vec::with_capacity(input.messages.len());
        let mut ws: Vec<u64> = Vec::with_capacity(input.messages.len());
        for j in &input.messages {
            let host = crate::message::parse_host(j);
            msgs.push(host.message().cloned().unwrap_or_default());
            ws.push(host.weight(j));
        }
        let stat = self.st.static_tokens();
        let mut asst: Vec<usize> = Vec::new();
        for (k, m) in msgs.iter().enumerate() {
            if m.role_str() == "assistant" && m.usage().is_some() {
                asst.push(k);
            }
        }
        let out_w: u64 = state::keys_w(&self.st.out);
        let mut rows = Vec::with_capacity(asst.len());
        let (mut cost_usd, mut uncached_usd) = (0.0, 0.0);
        for (j, &k) in asst.iter().enumerate() {
            let u = msgs[k].usage().unwrap_or_default();
            let shared_w = match self.st.turn.shared.get(j) {
                Some(s) => *s,
                // Tool-loop call without its own assemble: the previous call's prompt (output +
                // turn messages before the previous assistant message) is the shared prefix.
                None if j > 0 => out_w + ws[..asst[j - 1]].iter().sum::<u64>(),
                None => 0,
            };
            let predicted = cost::floor_block(stat + self.st.tokens(shared_w), cost::DS_BLOCK);
            let model = msgs[k]
                .model()
                .map(str::to_string)
                .or_else(|| self.st.model.clone());
            let p = cost::price_for(&self.cfg, model.as_deref(), input.now_ms);
            cost_usd += cost::cost_usd(&p, u.cache_read, u.input + u.cache_write, u.output);
            uncached_usd += cost::cost_usd(&p, 0, u.prompt(), u.output);
            rows.push(CallRow {
                at: input.now_ms,
                model,
                input: u.input,
                cache_read: u.cache_read,
                cache_write: u.cache_write,
                output: u.output,
                predicted,
            });
        }
        let (calib, calib_more) = self.calibration_points(&msgs, &ws, &asst);
        // With one assemble for the whole turn, the last request was output + turn messages
        // up to the last call; with one assemble per call the output already holds them.
        let mut req_add = Vec::new();
        match asst.last() {
            Some(&k) if self.st.turn.shared.len() <= 1 => {
                req_add.reserve(k);
                let algo = self.hash_algo();
                for (j, w) in input.messages[..k].iter().zip(&ws) {
                    let key = algo.hash(j).short_key();
                    req_add.push(OutKey(key, *w));
                }
            }
            _ => {}
        }
        if !(cost_usd.is_finite() && uncached_usd.is_finite()) {
            return Err(Error::Internal("non-finite cost".into()));
        }
        self.note_limits(input.context_window, None)?;
        self.emit(Event::Commit {
            key: input.advancement_key.clone(),
            rows,
            calib,
            calib_more,
            req_add,
            cost_usd,
            uncached_usd,
            turn_w: ws.iter().sum(),
        })?;
        // Topics are an optimisation: the turn is committed whatever happens to them (a
        // refused `turn` event changes nothing, see `SessionState::apply`).
        let _ = self.push_topic_turn(input);
        Ok(CommitOutcome {
            status: CommitStatus::Committed,
        })
    }

    /// Calibration points `[weighted chars, prompt tokens]` of the turn's calls `asst` (indices
    /// into the turn's messages `msgs`, weights `ws`): the first call, then the later ones.
    ///
    /// A call's prompt is the output assembled for it plus the turn messages the host appended
    /// after it: with one assemble for the whole turn, the first output and every turn message
    /// before the call; with one assemble per call (one output recorded per call), that call's
    /// output, which already holds them. When the outputs do not map one to one onto the calls
    /// (a restore mid-turn, a host that re-assembles some calls only), only the first call is a
    /// point, as before.
    fn calibration_points(
        &self,
        msgs: &[Fields],
        ws: &[u64],
        asst: &[usize],
    ) -> (Option<[u64; 2]>, Vec<[u64; 2]>) {
        let Some(first_w) = self.st.turn.first_w else {
            return (None, Vec::new());
        };
        let prompt = |k: usize| msgs[k].usage().map_or(0, |u| u.prompt());
        let point = |x: u64, k: usize| {
            let y = prompt(k);
            (y > 0).then_some([x, y])
        };
        let calib = asst
            .first()
            .and_then(|&k| point(first_w + ws[..k].iter().sum::<u64>(), k));
        let turn = &self.st.turn;
        let per_call = turn.shared.len() > 1 && turn.out_ws.len() == asst.len();
        let mut more = Vec::new();
        if turn.shared.len() <= 1 || per_call {
            for (j, &k) in asst.iter().enumerate().skip(1) {
                let x = if per_call {
                    turn.out_ws[j]
                } else {
                    first_w + ws[..k].iter().sum::<u64>()
                };
                more.extend(point(x, k));
            }
        }
        (calib, more)
    }

    // ---- summaries -----------------------------------------------------------------------------
}
