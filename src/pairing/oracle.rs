//! Pairing validation and repair as they were before they were made linear, kept as the test
//! oracle: the linear versions in `pairing.rs` must give exactly the same answers.
#![allow(dead_code)]

use super::{rep, Repair, RepairKind, Repaired, Shape, ShapeRole, Slot};
use crate::digest::Str;

/// DeepSeek rule: each assistant message with tool calls is followed immediately by exactly one
/// result per call id (any order among them), and no result stands anywhere else.
///
/// Reports `missing_result` (at the assistant's position, once per unanswered call),
/// `duplicate_result` (a second result for a call of the current group), `moved_result`
/// (a result whose id is called somewhere else in `seq`) and `orphan_result` (no call anywhere).
/// Empty iff the sequence is valid.
pub fn violations_quadratic(seq: &[Shape]) -> Vec<Repair> {
    violations_with_quadratic(seq, false)
}

/// [`violations`], optionally tolerating a tool-call group still open at the very end of `seq`
/// (`leave_trailing_open`: the host is about to append its results).
pub fn violations_with_quadratic(seq: &[Shape], leave_trailing_open: bool) -> Vec<Repair> {
    let mut out = Vec::new();
    // Open group: (assistant position, call ids still unanswered, all call ids of the group).
    let mut open: Option<(usize, Vec<&str>, &[Str])> = None;
    let close = |open: &mut Option<(usize, Vec<&str>, &[Str])>, out: &mut Vec<Repair>| {
        if let Some((p, pending, _)) = open.take() {
            for id in pending {
                out.push(rep(RepairKind::MissingResult, id, p));
            }
        }
    };
    for (i, s) in seq.iter().enumerate() {
        match s.role {
            ShapeRole::ToolResult => {
                let id = s.rid();
                let matched = match open.as_mut() {
                    Some((_, pending, _)) => match pending.iter().position(|p| *p == id) {
                        Some(k) => {
                            pending.remove(k);
                            true
                        }
                        None => false,
                    },
                    None => false,
                };
                if !matched {
                    let in_group = open
                        .as_ref()
                        .is_some_and(|(_, _, all)| all.iter().any(|c| c == id));
                    let kind = if in_group {
                        RepairKind::DuplicateResult
                    } else if seq
                        .iter()
                        .any(|x| x.has_calls() && x.call_ids.iter().any(|c| c == id))
                    {
                        RepairKind::MovedResult
                    } else {
                        RepairKind::OrphanResult
                    };
                    out.push(rep(kind, id, i));
                }
            }
            _ => {
                close(&mut open, &mut out);
                if s.has_calls() {
                    open = Some((i, s.call_ids.iter().map(Str::as_str).collect(), &s.call_ids));
                }
            }
        }
    }
    if !leave_trailing_open {
        close(&mut open, &mut out);
    }
    out
}

/// Repair a sequence so that [`violations`] of the result is empty. Never drops a message.
///
/// Algorithm (deterministic):
/// 1. Results standing in the contiguous run right after an assistant message are matched to
///    that message's calls (one result per call occurrence) and stay where they are.
/// 2. Every other result is matched to an unanswered occurrence of its id in the nearest
///    *preceding* assistant message, else the nearest *following* one, and is moved to the end
///    of that message's result run (`moved_result`).
/// 3. A result left unmatched keeps its relative position and gets a synthetic assistant call
///    with its id inserted right before it (`duplicate_result` when its id is called somewhere
///    in `seq` but every occurrence already has a result, `orphan_result` otherwise). Keeping a
///    duplicate (rather than dropping it) preserves whatever the tool returned; the synthetic
///    call makes it a self-contained group that the provider accepts. If it stood inside
///    another group's run it is placed after that run, so the run stays contiguous.
/// 4. Each call occurrence still unanswered gets a synthetic error result appended to its run
///    (`missing_result`), in call order — except, with `leave_trailing_open`, the calls of an
///    assistant message that is the last non-result message with nothing unmatched after it:
///    the host appends those results itself.
///
/// Non-result messages keep their relative order.
pub fn repair_quadratic(seq: &[Shape], leave_trailing_open: bool) -> Repaired {
    let n = seq.len();
    // assigned[r] = Some((assistant position, call index)) for matched results.
    let mut assigned: Vec<Option<(usize, usize)>> = vec![None; n];
    // answered[p][k]: call k of assistant p has a result.
    let mut answered: Vec<Vec<bool>> = seq.iter().map(|s| vec![false; s.call_ids.len()]).collect();
    let mut repairs = Vec::new();

    // Phase 1: in-place results.
    for (p, s) in seq.iter().enumerate() {
        if !s.has_calls() {
            continue;
        }
        let mut r = p + 1;
        while let Some(res) = seq.get(r) {
            if res.role != ShapeRole::ToolResult {
                break;
            }
            if let Some(k) = free_call(s, &answered[p], res.rid()) {
                answered[p][k] = true;
                assigned[r] = Some((p, k));
            }
            r += 1;
        }
    }

    // Phase 2: stray results move to the nearest preceding, else following, unanswered call.
    let mut unmatched: Vec<usize> = Vec::new();
    for r in 0..n {
        if seq[r].role != ShapeRole::ToolResult || assigned[r].is_some() {
            continue;
        }
        let id = seq[r].rid();
        let before = (0..r)
            .rev()
            .find_map(|p| free_call(&seq[p], &answered[p], id).map(|k| (p, k)));
        let found = before.or_else(|| {
            (r + 1..n).find_map(|p| free_call(&seq[p], &answered[p], id).map(|k| (p, k)))
        });
        match found {
            Some((p, k)) => {
                answered[p][k] = true;
                assigned[r] = Some((p, k));
                repairs.push(rep(RepairKind::MovedResult, id, r));
            }
            None => unmatched.push(r),
        }
    }
    for &r in &unmatched {
        let id = seq[r].rid();
        let called = seq
            .iter()
            .any(|x| x.has_calls() && x.call_ids.iter().any(|c| c == id));
        repairs.push(rep(
            if called {
                RepairKind::DuplicateResult
            } else {
                RepairKind::OrphanResult
            },
            id,
            r,
        ));
    }

    // The trailing open group: last non-result message, an assistant with calls, and no
    // unmatched result after it (one would have to stand after the group's synthetic call).
    let last_anchor = (0..n).rev().find(|&i| seq[i].role != ShapeRole::ToolResult);
    let trailing_open = match last_anchor {
        Some(a) if leave_trailing_open && seq[a].has_calls() => !unmatched.iter().any(|&r| r > a),
        _ => false,
    };

    // Results per assistant, in input order.
    let mut block: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (r, a) in assigned.iter().enumerate() {
        if let Some((p, _)) = a {
            block[*p].push(r);
        }
    }

    let mut slots = Vec::with_capacity(n + 4);
    let mut missing = Vec::new();
    let orphan_group = |slots: &mut Vec<Slot>, r: usize| {
        let s = &seq[r];
        slots.push(Slot::SyntheticCall {
            call_id: s.rid().to_string(),
            tool_name: s.tool_name.as_deref().unwrap_or("unknown").to_string(),
        });
        slots.push(Slot::Orig(r));
    };
    // Unmatched results before the first non-result message.
    let first_anchor = (0..n)
        .find(|&i| seq[i].role != ShapeRole::ToolResult)
        .unwrap_or(n);
    for &r in unmatched.iter().filter(|&&r| r < first_anchor) {
        orphan_group(&mut slots, r);
    }
    let anchors: Vec<usize> = (0..n)
        .filter(|&i| seq[i].role != ShapeRole::ToolResult)
        .collect();
    for (ai, &a) in anchors.iter().enumerate() {
        slots.push(Slot::Orig(a));
        let s = &seq[a];
        for &r in &block[a] {
            slots.push(Slot::Orig(r));
        }
        if s.has_calls() && !(trailing_open && Some(a) == last_anchor) {
            for (k, done) in answered[a].iter().enumerate() {
                if !done {
                    let id = &s.call_ids[k];
                    slots.push(Slot::SyntheticResult {
                        call_id: id.to_string(),
                        tool_name: s.call_name(k),
                    });
                    missing.push(rep(RepairKind::MissingResult, id, a));
                }
            }
        }
        let next = anchors.get(ai + 1).copied().unwrap_or(n);
        for &r in unmatched.iter().filter(|&&r| r > a && r < next) {
            orphan_group(&mut slots, r);
        }
    }
    repairs.extend(missing);
    debug_assert_eq!(
        slots.iter().filter(|s| matches!(s, Slot::Orig(_))).count(),
        n
    );
    Repaired { slots, repairs }
}

/// First unanswered call of `s` with id `id`.
fn free_call(s: &Shape, answered: &[bool], id: &str) -> Option<usize> {
    if !s.has_calls() {
        return None;
    }
    s.call_ids
        .iter()
        .zip(answered)
        .position(|(c, done)| !done && c == id)
}
