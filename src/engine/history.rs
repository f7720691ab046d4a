//! History: what the host sent against what was recorded (divergence), ingest of new
//! messages, pinning the head, and the host limits learned on the way.

use super::by_index::ByIndex;
use super::fingerprint::Cause;
use super::state::{CallArg, DivergeAction, Event, FoldReason};
use super::{
    evict, fingerprint, AssembleInput, AssembleReport, DivergenceReport, FoldWrite, Session,
};
use crate::digest::{Digest, Str};
use crate::error::Result;
use crate::message::Fields;
use crate::pairing::Shape;
use crate::record::{MsgHash, MsgRecord, Ts};
use crate::{cost, digest};
use serde_json::Value;

impl Session {
    /// Journal the host's limits when they change.
    pub(super) fn note_limits(&mut self, window: Option<u64>, budget: Option<u64>) -> Result<()> {
        let window = window.filter(|w| *w > 0 && Some(*w) != self.st.window);
        let budget = budget.filter(|b| *b > 0 && Some(*b) != self.st.budget);
        if window.is_none() && budget.is_none() {
            return Ok(());
        }
        self.emit(Event::Limits { window, budget })
    }

    pub(super) fn env(
        &mut self,
        model: &Option<String>,
        spa: Option<&str>,
        report: &mut AssembleReport,
    ) -> Result<()> {
        let spa_hash = spa.map(|s| crate::fingerprint_hex(s.as_bytes()));
        if *model == self.st.model && spa_hash == self.st.spa {
            return Ok(());
        }
        let mut causes = Vec::new();
        if self.st.model.is_some() && *model != self.st.model {
            causes.push(Cause::ModelChanged);
        }
        if spa_hash != self.st.spa && (self.st.spa.is_some() || !self.st.out.is_empty()) {
            causes.push(Cause::SystemPromptAdditionChanged);
        }
        self.emit(Event::Env {
            model: model.clone(),
            spa: spa_hash,
        })?;
        for c in causes {
            report.env_changes.push(c.code().to_string());
            self.emit(Event::Diverge {
                at: 0,
                cause: c.code().to_string(),
                action: DivergeAction::None,
            })?;
        }
        Ok(())
    }

    pub(super) fn diverge(
        &mut self,
        d: u32,
        count: u32,
        given: &ByIndex<&str>,
        report: &mut AssembleReport,
    ) -> Result<()> {
        let rc = self.st.host_recorded();
        let mut roles: Vec<String> = Vec::new();
        let mut incoming_shape: Option<Shape> = None;
        for (&i, json) in given.from(d) {
            let host = crate::message::parse_host(json);
            let m = host.message();
            roles.push(m.map_or("", Fields::role_str).to_string());
            if i == d {
                incoming_shape = Some(m.map_or_else(Shape::other, Shape::of));
            }
        }
        let role_refs = crate::text::strs(&roles);
        let recorded_shape = self
            .st
            .rec_of(d)
            .and_then(|r| self.st.records.get(r as usize))
            .map(|r| r.shape.clone());
        let cause = fingerprint::classify(
            d,
            count,
            rc,
            &role_refs,
            recorded_shape.as_ref(),
            incoming_shape.as_ref(),
        );
        // Inside the unrecorded prelude nothing can be kept: a fresh structure.
        let dr = self.st.rec_of(d).unwrap_or(0);
        let in_tail = !self.st.pinned
            || (d >= self.st.skip && dr >= self.st.head_len && dr >= self.st.live_from);
        let action = if in_tail {
            DivergeAction::Truncate
        } else {
            DivergeAction::Repin
        };
        let mut found = Vec::new();
        for i in d..count.min(d + 3) {
            let h = given.get(&i).map(|j| self.msg_hash(j));
            found.push(h.and_then(|h| {
                self.st
                    .records
                    .iter()
                    .position(|r| r.h == h)
                    .map(|k| k as u32)
            }));
        }
        report.divergence = Some(DivergenceReport {
            at: d,
            cause: cause.code().into(),
            action,
            found,
        });
        self.emit(Event::Diverge {
            at: dr,
            cause: cause.code().into(),
            action,
        })
    }

    /// Record host message `i`. Never fails on the message itself: one the core cannot read
    /// exactly is quarantined (see [`MsgRecord::q`]) and the rest of the session stays managed.
    /// `h` is the message's [`Session::msg_hash`] (the caller has it already).
    pub(super) fn ingest(&mut self, i: u32, json: &str, h: MsgHash) -> Result<Option<String>> {
        let host = crate::message::parse_host(json);
        let w = host.weight(json);
        let q = host.quarantine().map(str::to_string);
        let Some(m) = host.message() else {
            let rec = MsgRecord {
                h,
                w,
                shape: Shape::other(),
                ts: None,
                protected: false,
                digest: Digest::default(),
                q: q.as_deref().map(Str::from),
            };
            self.emit(Event::Ingest {
                i,
                rec: Box::new(rec),
                calls: Vec::new(),
            })?;
            return Ok(q);
        };
        let shape = Shape::of(m);
        let calls = m.tool_calls();
        let protected = calls
            .iter()
            .any(|c| digest::is_protected_read(c.name, c.arguments, &self.cfg));
        let dg = {
            let call = m
                .tool_call_id()
                .and_then(|id| self.st.open_calls.iter().rev().find(|c| c.id == id));
            digest::digest(m, &self.cfg, call.map(|c| (c.name.as_str(), &c.args)))
        };
        let mut call_args = Vec::with_capacity(calls.len());
        for c in &calls {
            call_args.push(CallArg {
                id: c.id.to_string(),
                name: c.name.to_string(),
                args: bound_args(c.arguments),
            });
        }
        let ts = m.timestamp_number().map(Ts::of);
        let rec = MsgRecord {
            h,
            w,
            shape,
            ts,
            protected,
            digest: dg,
            q: q.as_deref().map(Str::from),
        };
        self.emit(Event::Ingest {
            i,
            rec: Box::new(rec),
            calls: call_args,
        })?;
        Ok(q)
    }

    pub(super) fn try_pin(&mut self, given: &ByIndex<&str>) -> Result<()> {
        let p = self.cfg.prefix_lock_count;
        let Some(h) = self.st.cuts.first_at_least(&self.st.records, p) else {
            return Ok(());
        };
        let fp =
            fingerprint::head_fingerprint(self.st.records.iter().take(h as usize).map(|r| &r.h));
        // Keep the head's bytes (when small) so it can still be sent after a host eviction.
        let mut json: Vec<String> = Vec::new();
        for i in 0..h {
            if let Some(j) = given.get(&i) {
                json.push(j.to_string());
            }
        }
        let mut bytes = 0;
        for j in &json {
            bytes += j.len();
        }
        let keep = json.len() == h as usize && self.st.base == 0 && bytes <= HEAD_COPY_MAX_BYTES;
        let json = if keep { json } else { Vec::new() };
        self.emit(Event::Pin { len: h, fp, json })
    }

    /// Handle a divergence at host index 0 that is a front eviction (see [`super::evict`]): fold
    /// the evicted part of the live tail (its records render from digests), then move `base`.
    /// The output keeps its bytes: the head goes out from its kept copy, fold records are ours,
    /// protected groups the host no longer has are left out. Answers [`Evicted::No`] (nothing
    /// done) when this is not an eviction the session can absorb; the caller then re-pins as
    /// before. When the host also rewrote a message it kept ([`Evicted::ThenDiverges`]), the
    /// caller handles that divergence next, in what the eviction left.
    pub(super) fn try_evict(
        &mut self,
        hashes: &ByIndex<MsgHash>,
        count: u32,
        input: &AssembleInput,
        model: Option<&str>,
        report: &mut AssembleReport,
        writes: &mut Vec<FoldWrite>,
    ) -> Result<Evicted> {
        if !self.st.pinned {
            return Ok(Evicted::No);
        }
        let base = self.st.base as usize;
        let rec: Vec<MsgHash> = self.st.records[base..].iter().map(|r| r.h).collect();
        let mut inc: Vec<MsgHash> = Vec::new();
        for i in 0..count {
            if let Some(h) = hashes.get(&i) {
                inc.push(*h);
            }
        }
        if inc.len() != count as usize {
            return Ok(Evicted::No);
        }
        let Some(ev) = evict::detect(&rec, &inc) else {
            return Ok(Evicted::No);
        };
        let new_base = self.st.base + ev.len;
        if ev.len == 0 && ev.prelude == self.st.skip {
            return Ok(Evicted::No);
        }
        if ev.len > 0 && self.st.head_len > self.st.base && self.st.head_json.is_empty() {
            return Ok(Evicted::No);
        }
        let whole = ev.kept as usize == rec.len() - ev.len as usize;
        if self.st.live_from < new_base {
            // The host dropped messages that are still live: fold them (and up to the next cut).
            let rcount = self.st.recorded();
            let cuts = self.view().live_cuts(rcount);
            let Some(&cut) = cuts.iter().find(|c| **c >= new_base) else {
                return Ok(Evicted::No);
            };
            let round = self.round(rcount, input, model);
            let before = self.view().estimate(rcount);
            let id = self.next_fold_id();
            let p = self.prepare(&id, self.st.live_from, cut, None);
            let decision = cost::fold_decision_with(
                &self.candidate_price(rcount, &p, before),
                &round.price,
                round.expected,
                &round.terms,
            );
            let step = super::policy::Step::Fold {
                p,
                reason: FoldReason::Evicted,
                decision,
                before,
            };
            self.apply_step(&round, step, report, writes)?;
        }
        report.divergence = Some(DivergenceReport {
            at: 0,
            cause: "host_evicted".into(),
            action: DivergeAction::Evict,
            found: vec![Some(new_base)],
        });
        self.emit(Event::Diverge {
            at: self.st.base,
            cause: "host_evicted".into(),
            action: DivergeAction::Evict,
        })?;
        self.emit(Event::Evict {
            len: ev.len,
            skip: ev.prelude,
        })?;
        Ok(if whole {
            Evicted::Whole
        } else {
            Evicted::ThenDiverges(ev.prelude + ev.kept)
        })
    }

    // ---- folds ---------------------------------------------------------------------------------
}

/// What [`Session::try_evict`] made of a divergence at the front of the history.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Evicted {
    /// Not an eviction the session can absorb.
    No,
    /// An eviction; the host still sends every recorded message after it, unchanged.
    Whole,
    /// An eviction; the host changed what it kept from this host index on (a divergence of its
    /// own, in the history the eviction left).
    ThenDiverges(u32),
}

/// Largest pinned head (bytes of message JSON) whose copy the session keeps.
const HEAD_COPY_MAX_BYTES: usize = 64 * 1024;

/// Tool arguments reduced to what a digest of the result needs: top-level scalars, strings of
/// at most 512 chars (paths, commands). Bounds the journal: a `write` call's file body never
/// enters state twice.
pub(super) fn bound_args(args: &Value) -> Value {
    let Some(obj) = args.as_object() else {
        return Value::Null;
    };
    let mut out = serde_json::Map::new();
    for (k, v) in obj {
        let keep = match v {
            Value::String(s) => s.chars().count() <= 512,
            Value::Number(_) | Value::Bool(_) => true,
            _ => false,
        };
        if keep {
            out.insert(k.clone(), v.clone());
        }
    }
    Value::Object(out)
}
