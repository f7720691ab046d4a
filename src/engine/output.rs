//! Output: the layout (head, fold segments, live tail) rendered to a plan, pairing repair,
//! and the record of what was sent (the prefix the next call must begin with).

use super::by_index::ByIndex;
use super::state::{Event, OutKey};
use super::{AssembleReport, Built, RepairReport, Session, Src};
use crate::error::{Error, Result};
use crate::message::Fields;
use crate::pairing::{Shape, Slot};
use crate::record::Ts;
use crate::{pairing, tokens};

impl Session {
    pub(super) fn layout(&self, count: u32) -> Vec<Src> {
        let mut out: Vec<Src> = Vec::new();
        push_hosts(&mut out, 0, self.st.head_len.min(count));
        let base = self.st.base;
        for (k, s) in self.st.segs.iter().enumerate() {
            out.push(Src::Seg(k));
            // Protected messages the host evicted are gone: their record still names them.
            for &i in &s.protected {
                if i >= base {
                    out.push(Src::Host(i));
                }
            }
        }
        push_hosts(&mut out, self.st.live_from, count);
        out
    }

    pub(super) fn build(&self, layout: &[Src], repair: bool) -> Result<Built> {
        let recs = &self.st.records;
        let rec = |i: u32| {
            recs.get(i as usize)
                .ok_or_else(|| Error::Internal(format!("no record for host index {i}")))
        };
        let slots: Vec<Slot>;
        let mut repairs = Vec::new();
        if repair {
            let user = Shape::user();
            let mut shapes: Vec<&Shape> = Vec::with_capacity(layout.len());
            for s in layout {
                shapes.push(match s {
                    Src::Host(i) => &rec(*i)?.shape,
                    Src::Seg(_) => &user,
                });
            }
            // History given to assemble never holds the current turn (the host appends that after
            // our output, measured in the e2e runs), so a trailing call without results is a
            // dangling one from a failed turn: repair it, or DeepSeek rejects the request.
            let r = pairing::repair(&shapes, false);
            repairs = repair_reports(&r.repairs);
            slots = r.slots;
        } else {
            slots = (0..layout.len()).map(Slot::Orig).collect();
        }
        let mut b = Built {
            order: Vec::with_capacity(slots.len()),
            synthetic: Vec::new(),
            keys: Vec::with_capacity(slots.len()),
            w: 0,
            repairs,
            origin: Vec::with_capacity(slots.len()),
        };
        let mut last_ts = 0.0f64;
        let mut last_pos = 0usize;
        for slot in slots {
            let (json_key, w) = match slot {
                Slot::Orig(p) => {
                    last_pos = p;
                    match layout.get(p) {
                        Some(Src::Host(i)) => {
                            let r = rec(*i)?;
                            if let Some(t) = r.ts.as_ref().and_then(Ts::as_f64) {
                                last_ts = t;
                            }
                            if *i < self.st.base {
                                // An evicted head message: our copy, the same bytes.
                                let j = self.st.head_json.get(*i as usize).ok_or_else(|| {
                                    Error::Internal(format!("no copy of evicted message {i}"))
                                })?;
                                b.synthetic.push(j.clone());
                                b.order.push(-(b.synthetic.len() as i64));
                            } else {
                                b.order.push(i64::from(*i - self.st.base + self.st.skip));
                            }
                            b.origin.push(p);
                            b.keys.push(OutKey(r.h.short_key(), r.w));
                            b.w += r.w;
                            continue;
                        }
                        Some(Src::Seg(k)) => {
                            let s = self
                                .st
                                .segs
                                .get(*k)
                                .ok_or_else(|| Error::Internal("segment index".into()))?;
                            b.keys.push(OutKey(s.key.clone(), s.w));
                            b.w += s.w;
                            b.synthetic.push(s.json.clone());
                            b.order.push(-(b.synthetic.len() as i64));
                            b.origin.push(p);
                            continue;
                        }
                        None => {
                            return Err(Error::Internal("repair slot outside the layout".into()))
                        }
                    }
                }
                Slot::SyntheticResult { call_id, tool_name } => {
                    let j = pairing::synthetic_result_json(&call_id, &tool_name, last_ts);
                    let w = tokens::weighted_chars(&j);
                    (j, w)
                }
                Slot::SyntheticCall { call_id, tool_name } => {
                    let j = pairing::synthetic_call_json(&call_id, &tool_name, last_ts);
                    let w = tokens::weighted_chars(&j);
                    (j, w)
                }
            };
            b.keys.push(OutKey(self.msg_hash(&json_key).short_key(), w));
            b.w += w;
            b.synthetic.push(json_key);
            b.order.push(-(b.synthetic.len() as i64));
            b.origin.push(last_pos);
        }
        Ok(b)
    }

    /// With a fold or condensation this call: number of leading output entries that stem from
    /// layout positions before the first changed segment.
    pub(super) fn stable_prefix(
        &self,
        report: &AssembleReport,
        layout: &[Src],
        built: &Built,
    ) -> Option<u32> {
        if report.folds.is_empty() && report.condensed.is_none() {
            return None;
        }
        let first_changed_seg = if report.condensed.is_some() {
            0
        } else {
            self.st.segs.len().saturating_sub(report.folds.len())
        };
        let pos = layout
            .iter()
            .position(|s| matches!(s, Src::Seg(k) if *k >= first_changed_seg))
            .unwrap_or(layout.len());
        Some(built.origin.iter().take_while(|o| **o < pos).count() as u32)
    }

    pub(super) fn record_output(&mut self, built: &Built) -> Result<()> {
        let keep = self
            .st
            .out
            .iter()
            .zip(&built.keys)
            .take_while(|(a, b)| a == b)
            .count();
        // Unchanged output: nothing to journal, except for the first assemble of a turn, which
        // must leave its shared-prefix entry (one per model call) even when it equals the last
        // output (an empty first history, a turn with no new history).
        if keep == self.st.out.len() && keep == built.keys.len() && !self.st.turn.shared.is_empty()
        {
            return Ok(());
        }
        let mut shared = 0u64;
        for (a, b) in self.st.req.iter().zip(&built.keys) {
            if a != b {
                break;
            }
            shared += a.1;
        }
        self.emit(Event::Out {
            keep: keep as u32,
            add: built.keys[keep..].to_vec(),
            shared,
            repairs: built.repairs.len() as u32,
        })
    }

    // ---- commit --------------------------------------------------------------------------------
}

/// Strict pairing repair of an echoed list (see `Session::echo_plan`): the plan order, the
/// synthetic messages and their weighted chars. Identity (`0..count`, nothing synthetic) when
/// the list already pairs.
pub(super) fn echo_repair(
    count: u32,
    given: &ByIndex<&str>,
    report: &mut AssembleReport,
) -> (Vec<i64>, Vec<String>, u64) {
    let mut shapes = Vec::with_capacity(count as usize);
    let mut ts: Vec<f64> = Vec::with_capacity(count as usize);
    for i in 0..count {
        let host = given.get(&i).map(|j| crate::message::parse_host(j));
        let m = host.as_ref().and_then(|h| h.message());
        shapes.push(m.map_or_else(Shape::other, Shape::of));
        ts.push(m.and_then(Fields::timestamp).unwrap_or(f64::NAN));
    }
    let r = pairing::repair(&shapes, false);
    if r.is_identity() {
        return (identity_order(count), Vec::new(), 0);
    }
    report.repairs = repair_reports(&r.repairs);
    let (mut order, mut synthetic, mut w) = (Vec::new(), Vec::new(), 0u64);
    let mut last_ts = 0.0f64;
    for slot in r.slots {
        let j = match slot {
            Slot::Orig(p) => {
                if let Some(t) = ts.get(p).copied().filter(|t| t.is_finite()) {
                    last_ts = t;
                }
                order.push(p as i64);
                continue;
            }
            Slot::SyntheticResult { call_id, tool_name } => {
                pairing::synthetic_result_json(&call_id, &tool_name, last_ts)
            }
            Slot::SyntheticCall { call_id, tool_name } => {
                pairing::synthetic_call_json(&call_id, &tool_name, last_ts)
            }
        };
        w += tokens::weighted_chars(&j);
        synthetic.push(j);
        order.push(-(synthetic.len() as i64));
    }
    (order, synthetic, w)
}

/// The pairing repairs as reported.
fn repair_reports(repairs: &[pairing::Repair]) -> Vec<RepairReport> {
    let mut out = Vec::with_capacity(repairs.len());
    for x in repairs {
        out.push(RepairReport {
            kind: x.kind,
            call_id: x.call_id.clone(),
            position: x.position as u32,
        });
    }
    out
}

/// Host messages `[from, to)` appended to a layout.
pub(super) fn push_hosts(layout: &mut Vec<Src>, from: u32, to: u32) {
    for i in from..to {
        layout.push(Src::Host(i));
    }
}

/// The plan order that sends host messages `0..count` as they are.
pub(super) fn identity_order(count: u32) -> Vec<i64> {
    (0..i64::from(count)).collect()
}
