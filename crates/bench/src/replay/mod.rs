//! Replay a recorded session through a [`Session`] call by call, exactly as the JS shim drives
//! it, and check the engine's invariants on every call. Used by the corpus and property tests
//! and by the bench (strategy S3).
//!
//! Turn structure (OpenClaw durable path, docs/host-integration.md): the calls that share the
//! same last user message `u` form one turn. The first call of a turn assembles history
//! `[0, u)` (the host passes the current prompt separately and appends the turn's messages
//! after the returned ones); with [`ReplayOptions::reassemble_each_call`] (`ownsCompaction`)
//! every later call re-assembles `[0, assistant_index)`. Each assemble follows the shim:
//! `need(count)` → assemble with those indices → on `needFull`, again with every index. After a
//! turn's last call, `commit_turn(messages[u, next u))`; then, as in `maintain`,
//! `summary_request` answered by a deterministic stand-in for the host LLM.
//!
//! Invariants checked (each failure is a [`Violation`], never a panic):
//! * `pairing`: the resolved output has no tool-pairing violation (strict: no trailing open
//!   group either);
//! * `completeness`: every host index `< count` is in the output or in a declared fold range,
//!   none twice, none out of range;
//! * `append_only`: the previous output is a prefix of the new one, unless the report declares
//!   a fold/condensation (then the declared `stablePrefix`, covering at least the head, must be
//!   unchanged), a divergence, an environment change or a passthrough switch;
//! * `budget`: after an emergency fold the estimate is under the threshold, or no boundary is
//!   left to cut at;
//! * `idempotent_assemble` / `idempotent_commit`: repeating a call changes nothing and journals
//!   nothing;
//! * `pairing_echo` (with [`ReplayOptions::echo_tool_loop`]): the answer to the tool-loop echo
//!   pairs strictly too;
//! * `journal`: restoring from the journal alone, and from a mid-session snapshot plus the rest
//!   of the journal, gives the live snapshot text.

mod driver;
pub mod transcript;

use driver::Driver;

use crate::replay::transcript::Call;
use ::cachefold::config::Config;
use ::cachefold::engine::{AssembleInput, AssemblePlan, CommitInput, Drive, IndexedJson, Session};
use ::cachefold::message::{Message, Role};
use ::cachefold::pairing::{self, Shape};
use ::cachefold::tokens;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeSet;

/// How the host LLM answers summary requests during a replay.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum SummaryMode {
    /// `maintain` never asks.
    #[default]
    Off,
    /// A deterministic summary (the request's range and the first lines of its prompt).
    Echo,
    /// Every call fails (extractive fallback).
    Fail,
}

/// Which usage `commit_turn` sees for each replayed call.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum UsageMode {
    /// The usage recorded in the transcript. Only meaningful while the engine sends what the
    /// original agent sent: after a fold the recorded prompt sizes describe another prompt and
    /// would corrupt the engine's calibration.
    Recorded,
    /// Usage of the prompt actually replayed: `prompt = static + round(k · weighted chars)`,
    /// hit = `floor_block(static + k · weighted chars shared with the previous call's prompt,
    /// 128)` (the DS-unit model with the strict rule of docs/cache-model.md), output as
    /// recorded. Written into the assistant message before any later history contains it.
    Simulated {
        /// System prompt + tool schemas (the corpus files do not contain them).
        static_tokens: u64,
        /// Tokens per weighted char.
        tokens_per_weighted_char: f64,
    },
}

impl Default for UsageMode {
    fn default() -> Self {
        UsageMode::Simulated {
            static_tokens: 6_000,
            tokens_per_weighted_char: 0.3,
        }
    }
}

/// Replay settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ReplayOptions {
    /// Model id passed to every assemble (`None`: the recorded assistant message's `model`).
    pub model: Option<String>,
    /// Host token budget passed to assemble.
    pub token_budget: Option<u64>,
    /// Re-assemble before every call of a turn (`ownsCompaction: true`).
    pub reassemble_each_call: bool,
    /// Summary stand-in.
    pub summaries: SummaryMode,
    /// Also re-assemble before every later call of a turn the way OpenClaw's tool loop does
    /// with `ownsCompaction`: our first output of the turn plus the turn's messages so far
    /// (the echo), on a copy of the session, checked for strict pairing only (its indices are
    /// not host indices).
    pub echo_tool_loop: bool,
    /// Usage fed to `commit_turn`.
    pub usage: UsageMode,
    /// Run the per-call invariant checks.
    pub check: bool,
    /// Repeat every assemble and commit and require identical, journal-free results.
    pub check_idempotent: bool,
    /// Restore checks at the end (journal only, and mid snapshot + rest).
    pub check_journal: bool,
    /// Keep the resolved output JSON of every call in the outcome (memory: whole prompts).
    pub keep_resolved: bool,
    /// Keep `(journal length, snapshot)` after this turn (0-based; clamped to the last turn),
    /// for restore checks at a call boundary (property tests).
    pub checkpoint_turn: Option<usize>,
    /// Stop collecting violations after this many.
    pub max_violations: usize,
}

impl Default for ReplayOptions {
    fn default() -> Self {
        ReplayOptions {
            model: None,
            token_budget: None,
            reassemble_each_call: false,
            summaries: SummaryMode::Off,
            echo_tool_loop: false,
            usage: UsageMode::default(),
            check: true,
            check_idempotent: false,
            check_journal: true,
            keep_resolved: false,
            checkpoint_turn: None,
            max_violations: 50,
        }
    }
}

/// One model call as replayed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CallOutcome {
    /// Index of the recorded assistant message this call produced.
    pub assistant_index: usize,
    /// First message of the call's turn (its user prompt).
    pub turn_start: usize,
    /// Host history length assembled for this call (`None`: no assemble, the turn's earlier
    /// output is reused, as the host does when `ownsCompaction` is false).
    pub history: Option<usize>,
    /// The plan in force for this call.
    pub order: Vec<i64>,
    /// Its synthetic messages.
    pub synthetic: Vec<String>,
    /// Engine estimate (messages only).
    pub estimated_tokens: u64,
    /// Weighted chars of the prompt's messages: output plus the turn's messages before the call
    /// that the host appends.
    pub prompt_w: u64,
    /// `needFull` round trips.
    pub need_full: u32,
    /// The report of this call's assemble (`None` when it reused an earlier plan).
    pub report: Option<::cachefold::engine::AssembleReport>,
    /// Resolved output (with `keep_resolved`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resolved: Option<Vec<String>>,
}

/// One invariant failure.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Violation {
    /// Call number (position in `calls`).
    pub call: usize,
    /// Invariant name.
    pub kind: String,
    /// What was seen.
    pub detail: String,
}

/// Result of [`replay`].
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReplayOutcome {
    /// Per call.
    pub calls: Vec<CallOutcome>,
    /// Invariant failures.
    pub violations: Vec<Violation>,
    /// Output changes attributed to pairing repairs of malformed host history (a result that
    /// shows up later than a synthetic stand-in did): declared, not violations.
    pub repair_shifts: u64,
    /// Engine errors (the shim would pass history through).
    pub errors: Vec<String>,
    /// `Session::view().stats()` at the end.
    pub stats: Value,
    /// Journal written.
    pub journal: String,
    /// Final snapshot.
    pub snapshot: String,
    /// `(journal bytes, snapshot)` after [`ReplayOptions::checkpoint_turn`].
    #[serde(skip)]
    pub checkpoints: Vec<(usize, String)>,
}

/// Resolve a plan to message JSON (host messages serialised from `messages`).
pub fn resolve(messages: &[Message], order: &[i64], synthetic: &[String]) -> Vec<String> {
    order
        .iter()
        .map(|&i| {
            if i >= 0 {
                messages
                    .get(i as usize)
                    .map(Message::to_json)
                    .unwrap_or_default()
            } else {
                synthetic
                    .get((-i - 1) as usize)
                    .cloned()
                    .unwrap_or_default()
            }
        })
        .collect()
}

/// Host history length assembled before a call (`None`: no assemble, the turn's earlier output
/// is reused). The first call of a turn is the pre-prompt assemble of `[0, u)`; with
/// `ownsCompaction` (`reassemble`) every later call re-assembles `[0, a)`, as does a first call
/// with tool traffic between its prompt and the call (`in_loop`: a prompt typed during a
/// parallel tool batch, which the host delivers inside its tool loop, so the call after it is a
/// tool-loop call).
pub fn history_for_call(
    first: bool,
    in_loop: bool,
    reassemble: bool,
    u: usize,
    a: usize,
) -> Option<usize> {
    if reassemble && (!first || in_loop) {
        Some(a)
    } else if first {
        Some(u)
    } else {
        None
    }
}

/// Calls of a transcript grouped into turns: `(turn start u, [call positions])`.
pub fn turns(messages: &[Message], calls: &[Call]) -> Vec<(usize, Vec<usize>)> {
    let mut out: Vec<(usize, Vec<usize>)> = Vec::new();
    for (k, c) in calls.iter().enumerate() {
        let a = c.assistant_index.min(messages.len());
        let u = (0..a)
            .rev()
            .find(|&i| messages[i].role_str() == "user")
            .unwrap_or(0);
        match out.last_mut() {
            Some((lu, ks)) if *lu == u => ks.push(k),
            _ => out.push((u, vec![k])),
        }
    }
    out
}

/// Replay `messages` with the recorded `calls` (see the module doc).
pub fn replay(
    messages: &[Message],
    calls: &[Call],
    cfg: &Config,
    opts: &ReplayOptions,
) -> ReplayOutcome {
    let jsons: Vec<String> = messages.iter().map(Message::to_json).collect();
    let ws = jsons.iter().map(|j| tokens::weighted_chars(j)).collect();
    let shapes = messages.iter().map(|m| Shape::of(m)).collect();
    let mut d = Driver {
        messages,
        jsons,
        shapes,
        ws,
        opts,
        s: Session::new(cfg.clone(), "replay"),
        out: ReplayOutcome::default(),
        prev: None,
        folded: Vec::new(),
        mid: None,
        prev_prompt: Vec::new(),
    };
    let turns = turns(messages, calls);
    let mid_turn = turns.len() / 2;
    for (t, (u, ks)) in turns.iter().enumerate() {
        let mut current: Option<(AssemblePlan, usize)> = None;
        let mut first_of_turn: Option<(AssemblePlan, usize)> = None;
        let mut last_now = 0.0;
        for (j, &k) in ks.iter().enumerate() {
            let c = &calls[k];
            let a = c.assistant_index.min(messages.len());
            let now = if c.timestamp_ms.is_finite() {
                c.timestamp_ms
            } else {
                0.0
            };
            last_now = now;
            let model = opts.model.clone().or_else(|| {
                d.messages
                    .get(a)
                    .and_then(|m| m.raw().get("model"))
                    .and_then(Value::as_str)
                    .map(str::to_string)
            });
            let model_for_echo = model.clone();
            let in_loop = d
                .messages
                .get(*u..a)
                .unwrap_or(&[])
                .iter()
                .any(|m| m.role() != Role::User);
            let history = history_for_call(j == 0, in_loop, opts.reassemble_each_call, *u, a);
            let mut need_full = 0;
            let mut report = None;
            if let Some(h) = history {
                if let Some((plan, retries)) = d.assemble(k, h, model, now) {
                    need_full = retries;
                    if opts.check {
                        d.check(k, h, &plan);
                    }
                    report = Some(plan.report.clone());
                    if j == 0 {
                        first_of_turn = Some((plan.clone(), h));
                    }
                    current = Some((plan, h));
                }
            }
            let (order, synthetic, est, hist_len) = match &current {
                Some((p, h)) => (p.order.clone(), p.synthetic.clone(), p.estimated_tokens, *h),
                None => ((0..*u as i64).collect(), Vec::new(), 0, *u),
            };
            let out_w: u64 = order
                .iter()
                .map(|&i| {
                    if i >= 0 {
                        d.ws.get(i as usize).copied().unwrap_or(0)
                    } else {
                        synthetic
                            .get((-i - 1) as usize)
                            .map(|s| tokens::weighted_chars(s))
                            .unwrap_or(0)
                    }
                })
                .sum();
            let turn_w: u64 =
                d.ws.get(hist_len.max(*u)..a)
                    .map(|s| s.iter().sum())
                    .unwrap_or(0);
            if let UsageMode::Simulated {
                static_tokens,
                tokens_per_weighted_char,
            } = opts.usage
            {
                d.simulate_usage(
                    &order,
                    &synthetic,
                    hist_len.max(*u),
                    a,
                    static_tokens,
                    tokens_per_weighted_char,
                );
            }
            if opts.echo_tool_loop && j > 0 && opts.check {
                if let Some((first, h)) = &first_of_turn {
                    d.echo(k, first, *h, a, model_for_echo.clone(), now);
                }
            }
            let resolved = opts
                .keep_resolved
                .then(|| resolve(messages, &order, &synthetic));
            d.out.calls.push(CallOutcome {
                assistant_index: a,
                turn_start: *u,
                history,
                order,
                synthetic,
                estimated_tokens: est,
                prompt_w: out_w + turn_w,
                need_full,
                report,
                resolved,
            });
        }
        // commit the turn
        let end = turns
            .get(t + 1)
            .map(|(nu, _)| *nu)
            .unwrap_or(messages.len());
        let commit = CommitInput {
            advancement_key: format!("turn-{u}"),
            messages: d.jsons[*u..end.max(*u)].to_vec(),
            now_ms: last_now,
            context_window: None,
        };
        match d.s.commit_turn(&commit) {
            Ok(o) if o.status == "committed" => {}
            Ok(o) => d.violate(
                ks[0],
                "idempotent_commit",
                format!("first commit answered {}", o.status),
            ),
            Err(e) => d.out.errors.push(format!("commit turn {u}: {e}")),
        }
        d.drain();
        if opts.check_idempotent {
            match d.s.commit_turn(&commit) {
                Ok(o) if o.status == "duplicate" => {}
                Ok(o) => d.violate(
                    ks[0],
                    "idempotent_commit",
                    format!("second commit answered {}", o.status),
                ),
                Err(e) => d.violate(ks[0], "idempotent_commit", e.to_string()),
            }
            let j = d.s.take_journal();
            if !j.is_empty() {
                d.violate(
                    ks[0],
                    "idempotent_commit",
                    "duplicate commit journaled".into(),
                );
                d.out.journal.push_str(&j);
            }
        }
        // maintain
        if opts.summaries != SummaryMode::Off {
            if let Some(req) = d.s.summary_request(last_now) {
                let (text, ok) = match opts.summaries {
                    SummaryMode::Echo => (echo_summary(&req.prompt, req.from, req.to), true),
                    _ => (String::new(), false),
                };
                d.s.accept_summary(&req.id, &text, ok, last_now);
            }
            d.drain();
        }
        if opts
            .checkpoint_turn
            .map(|c| c.min(turns.len().saturating_sub(1)))
            == Some(t)
        {
            d.out
                .checkpoints
                .push((d.out.journal.len(), d.s.snapshot()));
        }
        if t == mid_turn && opts.check_journal {
            d.mid = Some((d.out.journal.len(), d.s.snapshot()));
        }
    }
    d.out.snapshot = d.s.snapshot();
    d.out.stats = d.s.view().stats();
    if opts.check_journal {
        let last = calls.len();
        match Session::restore(cfg.clone(), "replay", None, &d.out.journal) {
            Ok((r, rep)) => {
                if r.snapshot() != d.out.snapshot {
                    d.violate(
                        last,
                        "journal",
                        format!("journal-only restore differs from live state ({rep:?})"),
                    );
                }
            }
            Err(e) => d.violate(last, "journal", e.to_string()),
        }
        if let Some((len, snap)) = d.mid.clone() {
            let rest = d.out.journal.get(len..).unwrap_or("").to_string();
            match Session::restore(cfg.clone(), "replay", Some(&snap), &rest) {
                Ok((r, _)) if r.snapshot() == d.out.snapshot => {}
                Ok(_) => d.violate(
                    last,
                    "journal",
                    "snapshot + rest restore differs from live state".into(),
                ),
                Err(e) => d.violate(last, "journal", e.to_string()),
            }
        }
    }
    d.out
}

/// The deterministic stand-in summary used by [`SummaryMode::Echo`].
pub fn echo_summary(prompt: &str, from: u32, to: u32) -> String {
    let mut s = format!("Summary of host messages {from}-{to}.\n");
    for line in prompt.lines().filter(|l| !l.trim().is_empty()).take(12) {
        s.push_str(::cachefold::fold::truncate_chars(line, 160));
        s.push('\n');
    }
    s
}

/// Unique host indices mentioned by a plan (helper for tests).
pub fn host_indices(order: &[i64]) -> BTreeSet<i64> {
    order.iter().copied().filter(|i| *i >= 0).collect()
}
