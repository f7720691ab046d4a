//! DeepSeek-strict tool-call pairing: validation, repair and safe cut points.
//!
//! DeepSeek (like the OpenAI chat API it mirrors, but stricter in practice) rejects a request
//! with HTTP 400 unless every assistant message that carries tool calls is followed
//! *immediately* by exactly one tool result per call id (in any order among themselves), and no
//! tool result stands anywhere else. Every peer plugin has broken this rule at some point
//! (docs/peers.md), so the engine runs [`repair`] as a final pass over whatever it assembled.
//!
//! The module works on [`Shape`]s — the pairing-relevant skeleton of a message — so it is cheap
//! and easy to fuzz. Invariants (checked by the property tests at the bottom):
//!
//! * [`repair`] never drops a message: every input position appears exactly once in
//!   [`Repaired::slots`]; only synthetic messages are added.
//! * After [`repair`], [`violations`] of the resolved sequence is empty (with
//!   `leave_trailing_open`, only the trailing open group may lack results, see
//!   [`violations_with`]).
//! * A sequence without violations is returned unchanged, with no repairs.
//! * Every change is reported as a [`Repair`]; nothing is fixed silently.
//! * For a valid sequence, cutting at any index from [`cut_points`] leaves both halves valid.
//!
//! Groups are matched by call *occurrence*, not by id alone: an assistant message that calls
//! the same id twice needs two results with that id, and two different assistant messages may
//! reuse an id (each group is checked locally, which is what the provider does).

use crate::digest::Str;
use crate::message::{Fields, Role};
use crate::object_of;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The pairing-relevant role of a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum ShapeRole {
    /// `user`: opens a new turn; the only place a fold may cut.
    User,
    /// `assistant`, with or without tool calls.
    Assistant,
    /// `toolResult`.
    ToolResult,
    /// Anything else (`bashExecution`, `custom`, summaries, unknown roles). The host sends these
    /// to the model as non-tool messages, so they break a tool group like a user message does.
    #[default]
    Other,
}

/// Pairing skeleton of one message (written without its empty members, which read back empty).
/// Its strings and lists are immutable once made ([`Str`], boxed slices): a session keeps one
/// shape per message.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Shape {
    /// Role class.
    pub role: ShapeRole,
    /// Tool-call ids of an assistant message, in call order (duplicates kept; a missing id is `""`).
    #[serde(skip_serializing_if = "<[Str]>::is_empty")]
    pub call_ids: Box<[Str]>,
    /// `toolCallId` of a tool result (a missing id is `Some("")`: it can only be an orphan).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result_id: Option<Str>,
    /// `toolName` of a tool result; for an assistant, the first call's name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_name: Option<Str>,
    /// Tool names parallel to `call_ids` (addition to the contract: synthetic results are named
    /// after their call). Shorter than `call_ids` is tolerated; missing names become `tool_name`
    /// or `"unknown"`.
    #[serde(skip_serializing_if = "<[Str]>::is_empty")]
    pub call_names: Box<[Str]>,
}

impl Shape {
    /// Pairing skeleton of a host message.
    ///
    /// An assistant message that ended with `stopReason` `error` or `aborted` gets no call ids:
    /// the host drops such a message (with its tool calls) before the request is built
    /// (`@openclaw/ai` `transformMessages` → `resolveFailedAssistantReplay`), so its calls never
    /// reach the provider. Results recorded for them are orphans and get a synthetic call, and
    /// no synthetic result is made for them (it would be an orphan once the host drops the call).
    pub fn of(m: &Fields) -> Shape {
        match m.role() {
            Role::User => Shape {
                role: ShapeRole::User,
                ..Shape::default()
            },
            Role::Assistant if failed_turn(m) => Shape {
                role: ShapeRole::Assistant,
                ..Shape::default()
            },
            Role::Assistant => {
                let calls = m.tool_calls();
                Shape {
                    role: ShapeRole::Assistant,
                    call_ids: calls.iter().map(|c| Str::from(c.id)).collect(),
                    result_id: None,
                    tool_name: calls.first().map(|c| Str::from(c.name)),
                    call_names: calls.iter().map(|c| Str::from(c.name)).collect(),
                }
            }
            Role::ToolResult => Shape {
                role: ShapeRole::ToolResult,
                call_ids: Box::default(),
                result_id: Some(Str::from(m.tool_call_id().unwrap_or(""))),
                tool_name: m.tool_name().map(Str::from),
                call_names: Box::default(),
            },
            _ => Shape {
                role: ShapeRole::Other,
                ..Shape::default()
            },
        }
    }

    /// A user message.
    pub fn user() -> Shape {
        Shape {
            role: ShapeRole::User,
            ..Shape::default()
        }
    }

    /// An assistant message calling `ids` (tool names `"t"`); `&[]` is a plain text reply.
    pub fn call(ids: &[&str]) -> Shape {
        Shape {
            role: ShapeRole::Assistant,
            call_ids: ids.iter().map(|&s| Str::from(s)).collect(),
            result_id: None,
            tool_name: ids.first().map(|_| Str::from("t")),
            call_names: ids.iter().map(|_| Str::from("t")).collect(),
        }
    }

    /// A tool result for `id` (tool name `"t"`).
    pub fn result(id: &str) -> Shape {
        Shape {
            role: ShapeRole::ToolResult,
            call_ids: Box::default(),
            result_id: Some(Str::from(id)),
            tool_name: Some(Str::from("t")),
            call_names: Box::default(),
        }
    }

    /// Any other message.
    pub fn other() -> Shape {
        Shape {
            role: ShapeRole::Other,
            ..Shape::default()
        }
    }

    /// True for an assistant message with at least one tool call.
    pub fn has_calls(&self) -> bool {
        self.role == ShapeRole::Assistant && !self.call_ids.is_empty()
    }

    /// Name of call number `k` of this assistant message.
    fn call_name(&self, k: usize) -> String {
        self.call_names
            .get(k)
            .or(self.tool_name.as_ref())
            .map_or_else(|| "unknown".to_string(), Str::to_string)
    }

    fn rid(&self) -> &str {
        self.result_id.as_deref().unwrap_or("")
    }
}

/// True for an assistant turn the host will not replay (`stopReason` `error` or `aborted`).
pub fn failed_turn(m: &Fields) -> bool {
    m.role() == Role::Assistant && matches!(m.stop_reason(), Some("error") | Some("aborted"))
}

/// One element of a repaired sequence.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Slot {
    /// The input message at this position, unchanged.
    Orig(usize),
    /// A synthetic error tool result ([`synthetic_result_json`]) for a call whose result is missing.
    SyntheticResult {
        /// Call id answered.
        call_id: String,
        /// Tool name of the call.
        tool_name: String,
    },
    /// A synthetic assistant tool call ([`synthetic_call_json`]) placed before a result whose
    /// call is not in the sequence (orphan) or whose call already has a result (duplicate).
    SyntheticCall {
        /// Call id (the result's `toolCallId`).
        call_id: String,
        /// Tool name (the result's `toolName`, or `"unknown"`).
        tool_name: String,
    },
}

crate::enums::string_enum! {
    /// The kind of one pairing problem (reports and logs spell it as the string).
    pub enum RepairKind {
        /// An assistant tool call without its result: a synthetic error result is added.
        MissingResult = "missing_result",
        /// A result whose call is nowhere in the sequence: a synthetic call is placed before it.
        OrphanResult = "orphan_result",
        /// A result separated from its call's group: moved back into it.
        MovedResult = "moved_result",
        /// A second result for a call that already has one.
        DuplicateResult = "duplicate_result",
    }
}

/// One pairing problem, found by [`violations`] or fixed by [`repair`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Repair {
    /// What was wrong.
    pub kind: RepairKind,
    /// The call id concerned.
    pub call_id: String,
    /// Input position: the assistant message for `missing_result`, the tool result otherwise.
    pub position: usize,
}

/// Output of [`repair`].
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Repaired {
    /// The repaired order: every input position exactly once, plus synthetic messages.
    pub slots: Vec<Slot>,
    /// Every change made, in input order of discovery (missing results last).
    pub repairs: Vec<Repair>,
}

impl Repaired {
    /// The shapes of the repaired sequence (for validation and tests). Positions outside `seq`
    /// resolve to [`ShapeRole::Other`] (cannot happen for a `Repaired` made from `seq`).
    pub fn resolve(&self, seq: &[Shape]) -> Vec<Shape> {
        let mut out = Vec::with_capacity(self.slots.len());
        for s in &self.slots {
            out.push(match s {
                Slot::Orig(i) => seq.get(*i).cloned().unwrap_or_default(),
                Slot::SyntheticResult { call_id, tool_name } => Shape {
                    role: ShapeRole::ToolResult,
                    result_id: Some(Str::from(call_id.as_str())),
                    tool_name: Some(Str::from(tool_name.as_str())),
                    ..Shape::default()
                },
                Slot::SyntheticCall { call_id, tool_name } => Shape {
                    role: ShapeRole::Assistant,
                    call_ids: Box::new([Str::from(call_id.as_str())]),
                    tool_name: Some(Str::from(tool_name.as_str())),
                    call_names: Box::new([Str::from(tool_name.as_str())]),
                    result_id: None,
                },
            });
        }
        out
    }

    /// True when nothing had to change.
    pub fn is_identity(&self) -> bool {
        self.repairs.is_empty()
    }
}

fn rep(kind: RepairKind, call_id: &str, position: usize) -> Repair {
    Repair {
        kind,
        call_id: call_id.to_string(),
        position,
    }
}

/// DeepSeek rule: each assistant message with tool calls is followed immediately by exactly one
/// result per call id (any order among them), and no result stands anywhere else.
///
/// Reports `missing_result` (at the assistant's position, once per unanswered call),
/// `duplicate_result` (a second result for a call of the current group), `moved_result`
/// (a result whose id is called somewhere else in `seq`) and `orphan_result` (no call anywhere).
/// Empty iff the sequence is valid.
pub fn violations(seq: &[Shape]) -> Vec<Repair> {
    violations_with(seq, false)
}

/// [`violations`], optionally tolerating a tool-call group still open at the very end of `seq`
/// (`leave_trailing_open`: the host is about to append its results).
pub fn violations_with(seq: &[Shape], leave_trailing_open: bool) -> Vec<Repair> {
    let mut out = Vec::new();
    // Every id called anywhere in `seq`, built at the first stray result.
    let mut called: Option<Vec<&str>> = None;
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
                    } else if called
                        .get_or_insert_with(|| called_ids(seq))
                        .binary_search(&id)
                        .is_ok()
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
pub fn repair<S: std::borrow::Borrow<Shape>>(seq: &[S], leave_trailing_open: bool) -> Repaired {
    let seq: Vec<&Shape> = seq.iter().map(S::borrow).collect();
    repair_shapes(&seq, leave_trailing_open)
}

/// [`repair`] over borrowed shapes (the engine's records hold them: no copy per message).
fn repair_shapes(seq: &[&Shape], leave_trailing_open: bool) -> Repaired {
    let n = seq.len();
    // assigned[r] = Some((assistant position, call index)) for matched results.
    let mut assigned: Vec<Option<(usize, usize)>> = vec![None; n];
    // answered[p][k]: call k of assistant p has a result.
    let mut answered: Vec<Vec<bool>> = Vec::with_capacity(n);
    for s in seq {
        answered.push(vec![false; s.call_ids.len()]);
    }
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
    // The unanswered call occurrences of each id, ordered by (assistant position, call index),
    // so each stray result is placed in O(log n) instead of a scan of the whole sequence (a
    // sorted vector per id: built in that order, searched by bisection).
    let mut free: std::collections::BTreeMap<&str, Vec<(usize, usize)>> = Default::default();
    for (p, s) in seq.iter().enumerate() {
        if !s.has_calls() {
            continue;
        }
        for (k, id) in s.call_ids.iter().enumerate() {
            if !answered[p][k] {
                free.entry(id.as_str()).or_default().push((p, k));
            }
        }
    }
    let mut unmatched: Vec<usize> = Vec::new();
    for r in 0..n {
        if seq[r].role != ShapeRole::ToolResult || assigned[r].is_some() {
            continue;
        }
        let id = seq[r].rid();
        let found = free.get_mut(&id).and_then(|set| {
            let before = set.partition_point(|&x| x < (r, 0));
            let p = match before {
                0 => set.get(set.partition_point(|&x| x < (r + 1, 0)))?.0,
                b => set[b - 1].0,
            };
            // The first unanswered occurrence of `id` in that message.
            let first = set.partition_point(|&x| x < (p, 0));
            Some(set.remove(first))
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
    let called = called_ids(seq.iter().copied());
    for &r in &unmatched {
        let id = seq[r].rid();
        repairs.push(rep(
            if called.binary_search(&id).is_ok() {
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
    // `unmatched` is ascending: walk it once alongside the anchors.
    let mut u = 0;
    while u < unmatched.len() && unmatched[u] < first_anchor {
        orphan_group(&mut slots, unmatched[u]);
        u += 1;
    }
    let mut anchors: Vec<usize> = Vec::new();
    for (i, s) in seq.iter().enumerate() {
        if s.role != ShapeRole::ToolResult {
            anchors.push(i);
        }
    }
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
        while u < unmatched.len() && unmatched[u] < next {
            orphan_group(&mut slots, unmatched[u]);
            u += 1;
        }
    }
    repairs.extend(missing);
    debug_assert_eq!(
        slots.iter().filter(|s| matches!(s, Slot::Orig(_))).count(),
        n
    );
    Repaired { slots, repairs }
}

/// Every call id of every assistant message in `seq`, ascending (for `binary_search`).
fn called_ids<'a>(seq: impl IntoIterator<Item = &'a Shape>) -> Vec<&'a str> {
    let mut ids: Vec<&str> = Vec::new();
    for x in seq {
        if x.has_calls() {
            for id in &x.call_ids {
                ids.push(id);
            }
        }
    }
    ids.sort_unstable();
    ids.dedup();
    ids
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

/// Text of every synthetic tool result.
pub const SYNTHETIC_RESULT_TEXT: &str =
    "[cachefold] tool result missing from history; the call's outcome is unknown.";

/// Model name on synthetic assistant messages (lets readers tell them apart).
pub const SYNTHETIC_MODEL: &str = "cachefold-repair";

/// JSON number for a timestamp: integral milliseconds print without a fraction (as the host
/// writes `Date.now()`); non-finite becomes 0.
fn ts_value(t: f64) -> Value {
    if !t.is_finite() {
        return Value::from(0);
    }
    if t.fract() == 0.0 && t.abs() < 9.0e15 {
        return Value::from(t as i64);
    }
    Value::from(t)
}

/// OpenClaw `toolResult` answering `call_id` with an error (`isError: true`).
pub fn synthetic_result_json(call_id: &str, tool_name: &str, timestamp: f64) -> String {
    let v = object_of([
        ("role", "toolResult".into()),
        ("toolCallId", call_id.into()),
        ("toolName", tool_name.into()),
        (
            "content",
            Value::Array(vec![object_of([
                ("type", "text".into()),
                ("text", SYNTHETIC_RESULT_TEXT.into()),
            ])]),
        ),
        ("isError", true.into()),
        ("timestamp", ts_value(timestamp)),
    ]);
    crate::to_json(&v)
}

/// OpenClaw assistant message with one `toolCall` (empty arguments), for an orphan result.
pub fn synthetic_call_json(call_id: &str, tool_name: &str, timestamp: f64) -> String {
    let zero = || Value::from(0);
    let v = object_of([
        ("role", "assistant".into()),
        (
            "content",
            Value::Array(vec![object_of([
                ("type", "toolCall".into()),
                ("id", call_id.into()),
                ("name", tool_name.into()),
                ("arguments", object_of([])),
            ])]),
        ),
        ("stopReason", "toolUse".into()),
        ("timestamp", ts_value(timestamp)),
        ("api", "openai-completions".into()),
        ("provider", "cachefold".into()),
        ("model", SYNTHETIC_MODEL.into()),
        (
            "usage",
            object_of([
                ("input", zero()),
                ("output", zero()),
                ("cacheRead", zero()),
                ("cacheWrite", zero()),
                ("totalTokens", zero()),
                (
                    "cost",
                    object_of([
                        ("input", zero()),
                        ("output", zero()),
                        ("cacheRead", zero()),
                        ("cacheWrite", zero()),
                        ("total", zero()),
                    ]),
                ),
            ]),
        ),
    ]);
    crate::to_json(&v)
}

/// Positions where a fold may cut: index `i` such that `seq[i]` is a User message, or an Assistant
/// message after complete tool groups, and no tool-call group is open before it (so `[..i]` and
/// `[i..]` are both pairing-valid on their own: an assistant call and its results are never
/// separated).
///
/// Meant for repaired sequences. On an invalid sequence it still never returns an index inside
/// an unanswered group, but results standing after the cut for calls before it are not checked.
pub fn cut_points(seq: &[Shape]) -> Vec<usize> {
    cut_points_of(seq)
}

/// [`cut_points`] over shapes held elsewhere (the fold records), without copying them.
pub fn cut_points_of<'a>(seq: impl IntoIterator<Item = &'a Shape>) -> Vec<usize> {
    let mut out = Vec::new();
    let mut pending: Vec<&str> = Vec::new();
    for (i, s) in seq.into_iter().enumerate() {
        match s.role {
            ShapeRole::ToolResult => {
                if let Some(k) = pending.iter().position(|p| *p == s.rid()) {
                    pending.remove(k);
                }
            }
            ShapeRole::User => {
                if pending.is_empty() {
                    out.push(i);
                }
                pending.clear();
            }
            ShapeRole::Assistant => {
                // Between two complete tool groups of one long agent turn: without these, a
                // turn of 100+ tool calls (the Claude Code corpus sessions have 3-4 user
                // prompts in 140 calls) could never be folded. The call and its results stay
                // together on one side of the cut either way.
                if pending.is_empty() && i > 0 {
                    out.push(i);
                }
                pending.clear();
                if s.has_calls() {
                    pending.extend(s.call_ids.iter().map(Str::as_str));
                }
            }
            ShapeRole::Other => {
                pending.clear();
            }
        }
    }
    out
}

/// [`cut_points_of`] one shape at a time: feed a sequence with [`CutScan::push`] and the cut
/// points found so far are exactly `cut_points_of` of the shapes pushed (each push is O(calls
/// open), independent of the sequence's length). Used to keep the cut points of a growing
/// history without rescanning it ([`crate::fold::CutCache`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CutScan {
    /// Shapes pushed.
    n: usize,
    /// Call ids of the open tool-call group (same bookkeeping as `cut_points_of`).
    pending: Vec<String>,
    /// Cut points among the shapes pushed, ascending.
    cuts: Vec<usize>,
}

impl CutScan {
    /// Shapes pushed so far.
    pub fn len(&self) -> usize {
        self.n
    }

    /// No shape pushed yet.
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// [`cut_points_of`] of the shapes pushed so far.
    pub fn cuts(&self) -> &[usize] {
        &self.cuts
    }

    /// No tool-call group is open after the shapes pushed: a user message pushed next would be
    /// a cut point.
    pub fn clean(&self) -> bool {
        self.pending.is_empty()
    }

    /// Append one shape (index [`CutScan::len`]).
    pub fn push(&mut self, s: &Shape) {
        let i = self.n;
        self.n += 1;
        match s.role {
            ShapeRole::ToolResult => {
                if let Some(k) = self.pending.iter().position(|p| p == s.rid()) {
                    self.pending.remove(k);
                }
            }
            ShapeRole::User => {
                if self.pending.is_empty() {
                    self.cuts.push(i);
                }
                self.pending.clear();
            }
            ShapeRole::Assistant => {
                if self.pending.is_empty() && i > 0 {
                    self.cuts.push(i);
                }
                self.pending.clear();
                if s.has_calls() {
                    self.pending.extend(s.call_ids.iter().map(Str::to_string));
                }
            }
            ShapeRole::Other => {
                self.pending.clear();
            }
        }
    }
}

#[cfg(test)]
mod oracle;

#[cfg(test)]
pub(crate) mod tests;
