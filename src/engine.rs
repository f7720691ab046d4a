//! The session engine: the API `src/wasm.rs` binds and the JS shim drives.
//!
//! One [`Session`] per host session. Each call validates what the host sent, decides, and
//! records its decisions as journal events ([`crate::journal::Event`]) applied through
//! [`SessionState::apply`]; [`Session::take_journal`] hands the new lines to JS.
//!
//! ## Output shape and the append-only rule
//! `assemble` returns a plan: host indices plus synthetic messages. After `k` folds the output is
//! `head + seg_1 + … + seg_k + live tail`, where the head is the first `prefixLockCount` host
//! messages extended to the next pairing boundary (pinned for the session), each segment is a
//! fold record (a synthetic user message with a fixed timestamp) followed by the protected
//! tool-call groups of its region (host objects), and the live tail is host
//! `[liveFrom, count)`. Between two calls, the earlier output is a prefix of the later one
//! unless a fold (then head and earlier segments are unchanged, `report.stablePrefix`), a
//! condensation (head unchanged), a divergence or a passthrough switch happened in between;
//! every such event is declared in the report.
//!
//! ## When to fold
//! The rules below run to a fixpoint on every assemble (a fold or condensation changes the
//! inputs of the next rule; stopping early would make a repeated assemble fold again).
//! * **Priced**: candidate cut `c` = earliest boundary after `liveFrom` whose live tail
//!   `[c, count)` fits `tailTokens` (none when the live tail already fits or the last group
//!   alone does not); the region `[liveFrom, c)` must reach `minFoldTokens`;
//!   [`cost::fold_decision`] must say it pays within the expected remaining calls (config, else
//!   calls so far clamped to 4..200). When it pays and a ready LLM summary covers exactly
//!   `[liveFrom, to)` with `to <= c` and at least half the region's tokens, the cut moves to
//!   `to` and the record uses the summary. Three consecutive folds saving less than 5 % of the
//!   estimate trip a breaker that stops priced folds (and summary requests) until a fold saves.
//! * **Emergency**: static + message estimate over `compactRatio × budget` (budget = config,
//!   else host, else 128,000) → fold at the smallest boundary that gets under, down to keeping
//!   only the last boundary group, whatever the price (the price is reported).
//! * **Forced**: `compact(force)` or a pending `request_fold`: the priced candidate cut if any,
//!   else the last boundary.
//! * **Condense**: when all records exceed `foldRecordBudget`, or the prompt is still over the
//!   threshold and condensing shrinks the records, all segments become one (`c<k>`), declared
//!   with its price; JS stores the whole condensed range under `c<k>`.
//!
//! Token estimates: weighted chars of the message JSON through [`tokens::Calibration`], fed by
//! `commit_turn`. The fit is used once its observations spread (≥ 2 samples over ≥ 2,000
//! weighted chars and 10 %); before that, the default slope and the last residual as static
//! (a one-point fit through the origin reads a 12K-token system prompt as 2 tokens per char).

//! ## Divergence policy
//! The engine compares supplied indices with recorded hashes. With only the `need()` subset a
//! mismatch answers `needFull` (no state change); with full history it finds the first differing
//! index `d` and its cause: `d` in the live tail → drop records from `d` and re-ingest (folds
//! stay valid); `d` inside the head or a folded region → re-pin (fresh structure over the
//! incoming history; counters survive). Model or system-prompt-addition changes are counted,
//! not acted on (the cache is gone either way; folding again would only cost more).

use crate::config::{Config, Mode};
use crate::cost;
use crate::digest::{self, Digest};
use crate::error::{Error, Result};
use crate::fingerprint::{self, Cause};
use crate::fold;
use crate::journal::{self, Event, ReplayReport};
use crate::message::Message;
use crate::pairing::{self, Shape, ShapeRole, Slot};
use crate::state::{
    ArtifactNote, CallArg, CallRow, MsgRecord, OutKey, Segment, SessionState, HOUR_MS,
};
use crate::tokens;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};

/// Share of the room between the fixed prefix (static + head + records) and the emergency
/// threshold that an emergency fold leaves free (hysteresis, see `emergency_step`).
const EMERGENCY_HEADROOM: f64 = 0.45;

/// Token budget when neither the config nor the host gives one.
pub const DEFAULT_BUDGET: u64 = 128_000;
/// A fold saving less than 1/20 (5 %) of the estimate counts as low for the breaker.
const LOW_SAVING_DIVISOR: u64 = 20;
/// Spot checks per assemble among recorded, not otherwise supplied indices.
const SPOT_CHECKS: u32 = 4;
/// Summary text kept at most (chars).
const MAX_SUMMARY_CHARS: usize = 24_000;
/// A pending summary is given up this long after its own timeout.
const SUMMARY_GRACE_MS: f64 = 60_000.0;

// ---- API types (camelCase JSON as seen by JS) ---------------------------------------------------

/// One supplied host message.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct IndexedJson {
    /// Host index.
    pub index: u32,
    /// `JSON.stringify` of the host message.
    pub json: String,
}

/// Input of [`Session::assemble`] and [`Session::compact`].
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct AssembleInput {
    /// Host history length.
    pub count: u32,
    /// The indices [`Session::need`] asked for (or all of them).
    pub messages: Vec<IndexedJson>,
    /// Model id (`provider/model` or bare).
    pub model: Option<String>,
    /// The host's token budget.
    pub token_budget: Option<u64>,
    /// Now, ms since the epoch.
    pub now_ms: f64,
    /// The `systemPromptAddition` in force (only hashed).
    pub system_prompt_addition: Option<String>,
    /// The model's context window, when the host says (`runtimeContext.modelContextWindow`).
    pub context_window: Option<u64>,
}

/// Input of [`Session::compact_request`]: the host's `compact()`, which carries no messages.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct CompactInput {
    /// Model id (`provider/model` or bare).
    pub model: Option<String>,
    /// The host's `tokenBudget` for the compaction (the context window on the pre-turn path).
    pub token_budget: Option<u64>,
    /// The host's projection of the next prompt (`currentTokenCount`).
    pub current_token_count: Option<u64>,
    /// The model's context window, when known.
    pub context_window: Option<u64>,
    /// Now, ms since the epoch.
    pub now_ms: f64,
}

/// Answer of [`Session::compact_request`].
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CompactAnswer {
    /// A fold is recorded and the next assemble emits it.
    pub pending: bool,
    /// Prompt estimate (static + messages) of the next call without the fold.
    pub tokens_before: u64,
    /// With the fold (equal to `tokens_before` when nothing folds).
    pub tokens_after: u64,
    /// The host's pre-turn compaction threshold, when the window is known.
    pub host_threshold: Option<u64>,
    /// Why nothing folds (when `pending` is false).
    pub reason: Option<String>,
    /// The record the fold will append (the host's `CompactResult.summary`).
    pub summary: Option<String>,
}

/// A range of host messages JS must store for recovery under `foldId`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FoldWrite {
    /// Fold id (`f<k>`, or `c<k>` for a condensation).
    pub fold_id: String,
    /// First host index.
    pub from: u32,
    /// One past the last.
    pub to: u32,
}

/// Output of [`Session::assemble`].
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AssemblePlan {
    /// Output order: `i >= 0` is host index `i`, `i < 0` is `synthetic[-i-1]`.
    pub order: Vec<i64>,
    /// Synthetic message JSON (fold records, pairing repairs).
    pub synthetic: Vec<String>,
    /// Messages-only token estimate of the output.
    pub estimated_tokens: u64,
    /// Call again with every index (divergence or missing indices); nothing was changed.
    pub need_full: bool,
    /// Unmanaged model or mode off: `order` is `0..count`, as the legacy engine.
    pub passthrough: bool,
    /// Ranges JS must store before returning.
    pub fold_writes: Vec<FoldWrite>,
    /// What happened.
    pub report: AssembleReport,
}

/// Divergence details.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DivergenceReport {
    /// First differing index.
    pub at: u32,
    /// Cause code.
    pub cause: String,
    /// `truncate` | `repin`.
    pub action: String,
}

/// One fold made by this call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FoldReport {
    /// `f<k>`.
    pub id: String,
    /// First host index folded.
    pub from: u32,
    /// One past the last.
    pub to: u32,
    /// `priced` | `emergency` | `compact`.
    pub reason: String,
    /// Host indices kept verbatim after the record.
    pub protected: u32,
    /// Estimated tokens of the record.
    pub record_tokens: u64,
    /// Estimated tokens removed (region minus kept messages).
    pub folded_tokens: u64,
    /// Prompt estimate (static + messages) before.
    pub tokens_before: u64,
    /// After.
    pub tokens_after: u64,
    /// Record text came from an LLM summary.
    pub used_summary: bool,
    /// The record text (the host's `CompactResult.summary`).
    pub summary: String,
    /// The cost model's view (also for forced/emergency folds, where it was not binding).
    pub decision: cost::FoldDecision,
    /// Price row used.
    pub price_key: String,
    /// Expected remaining calls used.
    pub expected_calls: f64,
}

/// A condensation made by this call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CondenseReport {
    /// `c<k>`.
    pub id: String,
    /// Segments merged.
    pub merged: u32,
    /// Estimated tokens of the records before.
    pub records_tokens_before: u64,
    /// Estimated tokens of the new record.
    pub record_tokens: u64,
    /// Prompt estimate before / after.
    pub tokens_before: u64,
    /// After.
    pub tokens_after: u64,
    /// Its price (declared; condensation is not optional once over budget).
    pub decision: cost::FoldDecision,
}

/// One pairing repair in the output.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RepairReport {
    /// `missing_result` | `orphan_result` | `moved_result` | `duplicate_result`.
    pub kind: String,
    /// Call id.
    pub call_id: String,
    /// Output layout position concerned.
    pub position: u32,
}

/// Everything an assemble decided, for logs, tests and the bench.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AssembleReport {
    /// Model managed (not passthrough).
    pub managed: bool,
    /// Head pinned.
    pub pinned: bool,
    /// Head length.
    pub head_len: u32,
    /// First live host index.
    pub live_from: u32,
    /// Host count.
    pub count: u32,
    /// New messages recorded by this call.
    pub ingested: u32,
    /// Required indices that were not supplied (first 64), with `needFull`.
    pub missing: Vec<u32>,
    /// Divergence handled by this call.
    pub divergence: Option<DivergenceReport>,
    /// `model_changed` / `system_prompt_addition_changed`.
    pub env_changes: Vec<String>,
    /// The last fold of this call (JS reads `fold.summary`).
    pub fold: Option<FoldReport>,
    /// Every fold of this call (at most a priced one and an emergency one).
    pub folds: Vec<FoldReport>,
    /// Condensation, if any.
    pub condensed: Option<CondenseReport>,
    /// Over the threshold before folding.
    pub emergency: bool,
    /// `compact(force)` or a pending fold request.
    pub forced: bool,
    /// Still over the threshold after everything possible.
    pub over_budget: bool,
    /// Set when the estimate still exceeds the whole budget after every possible fold (a huge
    /// result in the current turn): what to tell the user.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warning: Option<String>,
    /// Prompt estimate (static + messages) before folds.
    pub tokens_before: u64,
    /// After.
    pub tokens_after: u64,
    /// `compactRatio × budget`.
    pub threshold_tokens: u64,
    /// Budget used.
    pub budget_tokens: u64,
    /// With a fold or condensation: leading output entries unchanged from the previous output.
    pub stable_prefix: Option<u32>,
    /// Pairing repairs in this output.
    pub repairs: Vec<RepairReport>,
    /// Why no priced fold happened (when one was considered).
    pub skipped: Option<String>,
    /// Priced folds stopped by the breaker.
    pub breaker_tripped: bool,
    /// Host messages ingested by this call that the core could not read exactly.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub quarantined: Vec<QuarantineReport>,
}

/// A host message the core could not read exactly (see [`MsgRecord::q`]). It stays in the
/// output as the host's own object; the core manages the rest of the session around it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct QuarantineReport {
    /// Host index.
    pub index: u32,
    /// `lone_surrogate`, `too_deep` (or both, joined by `+`), `not_object`, `invalid_json`.
    pub reason: String,
    /// SHA-1 of the exact JSON text the host sent.
    pub hash: String,
}

/// Input of [`Session::commit_turn`].
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct CommitInput {
    /// Host idempotency key.
    pub advancement_key: String,
    /// The turn's messages (`JSON.stringify` each), admitted user entry through terminal entry.
    pub messages: Vec<String>,
    /// Now, ms.
    pub now_ms: f64,
    /// The model's context window (`runtimeContext.modelContextWindow`), when the host says.
    pub context_window: Option<u64>,
}

/// Output of [`Session::commit_turn`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CommitOutcome {
    /// `committed` | `duplicate`.
    pub status: String,
}

/// An LLM summary for JS to run in `maintain`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SummaryRequest {
    /// Pass back to [`Session::accept_summary`].
    pub id: String,
    /// First host index summarised.
    pub from: u32,
    /// One past the last.
    pub to: u32,
    /// System prompt.
    pub system: String,
    /// User prompt.
    pub prompt: String,
    /// Output cap.
    pub max_tokens: u32,
    /// Give up after.
    pub timeout_ms: u64,
}

// ---- gating -----------------------------------------------------------------------------------

/// OpenClaw 2026.9.6's pre-turn trigger for a context window, in tokens: the lower of its
/// compaction threshold, `window − reserve` with `reserve = min(20,000, window / 4)`
/// (`resolveCompactionThreshold` in `dist/agent-runner-memory-*.mjs`, reserve from memory-core's
/// `buildMemoryFlushPlan` / `resolveEffectiveCompactionReserveTokens`), and its pre-compaction
/// memory flush, which runs an extra agent turn `min(4,000, (window − reserve) / 2)` tokens
/// earlier. The host compares it with the last call's prompt + output + the new prompt.
pub fn host_turn_threshold(window: u64) -> Option<u64> {
    if window == 0 {
        return None;
    }
    let reserve = 20_000u64.min(window / 4);
    let compaction = window - reserve;
    let soft = 4_000u64.min(compaction / 2);
    Some(compaction - soft)
}

/// True when the engine manages context for `model` (see `Config::mode`). Patterns are tried
/// against the full id and the part after the last `/`. Missing or empty id: `auto` → false.
pub fn model_managed(cfg: &Config, model: Option<&str>) -> bool {
    match cfg.mode {
        Mode::Off => false,
        Mode::Always => true,
        Mode::Auto => match model.map(str::trim).filter(|m| !m.is_empty()) {
            None => false,
            Some(m) => {
                let bare = m.rsplit('/').next().unwrap_or(m);
                cfg.target_models
                    .iter()
                    .any(|p| glob_match(p, m) || glob_match(p, bare))
            }
        },
    }
}

/// Case-insensitive glob with `*` as the only wildcard.
pub fn glob_match(pattern: &str, s: &str) -> bool {
    let p: Vec<char> = pattern.to_lowercase().chars().collect();
    let t: Vec<char> = s.to_lowercase().chars().collect();
    let (mut i, mut j) = (0usize, 0usize);
    let mut star: Option<usize> = None;
    let mut mark = 0usize;
    while j < t.len() {
        if i < p.len() && p[i] == '*' {
            star = Some(i);
            i += 1;
            mark = j;
        } else if i < p.len() && p[i] == t[j] {
            i += 1;
            j += 1;
        } else if let Some(s) = star {
            i = s + 1;
            mark += 1;
            j = mark;
        } else {
            return false;
        }
    }
    while i < p.len() && p[i] == '*' {
        i += 1;
    }
    i == p.len()
}

// ---- session ----------------------------------------------------------------------------------

/// Where an output entry comes from, before pairing repair.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Src {
    Host(u32),
    Seg(usize),
}

/// An output rendered from a layout.
struct Built {
    order: Vec<i64>,
    synthetic: Vec<String>,
    keys: Vec<OutKey>,
    w: u64,
    repairs: Vec<RepairReport>,
    /// Layout position each output entry stems from (a synthetic repair: the entry before it).
    origin: Vec<usize>,
}

/// A record prepared for a fold (not yet applied).
#[derive(Debug, Clone)]
struct Prepared {
    seg: Segment,
    text: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Assemble,
    Compact { force: bool },
}

/// One host session: config, state and the journal lines not yet taken.
#[derive(Debug, Clone)]
pub struct Session {
    cfg: Config,
    st: SessionState,
    pending: String,
    /// Records rendered during the current call, by (fold id, from, to, summary hash): the fold
    /// rules run to a fixpoint and would otherwise render the same record repeatedly. Cleared
    /// at the start of every assemble (records of a range never change within one call).
    prepared: RefCell<BTreeMap<PreparedKey, Prepared>>,
}

type PreparedKey = (String, u32, u32, Option<String>);

impl Session {
    /// A new, empty session.
    pub fn new(config: Config, session_id: &str) -> Session {
        Session {
            cfg: config,
            st: SessionState::new(session_id),
            pending: String::new(),
            prepared: RefCell::default(),
        }
    }

    /// Rebuild from an optional snapshot (JSON text) plus the journal text written after it.
    /// A torn or corrupt tail is ignored (reported), never an error unless the snapshot itself
    /// is bad or belongs to another session.
    pub fn restore(
        config: Config,
        session_id: &str,
        snapshot: Option<&str>,
        journal: &str,
    ) -> Result<(Session, ReplayReport)> {
        let mut st = match snapshot.map(str::trim).filter(|s| !s.is_empty()) {
            Some(s) => serde_json::from_str::<SessionState>(s)
                .map_err(|e| Error::State(format!("snapshot: {e}")))?,
            None => SessionState::new(session_id),
        };
        if st.session_id != session_id {
            return Err(Error::State(format!(
                "snapshot belongs to session {:?}",
                st.session_id
            )));
        }
        let report = journal::replay(&mut st, journal);
        Ok((
            Session {
                cfg: config,
                st,
                pending: String::new(),
                prepared: RefCell::default(),
            },
            report,
        ))
    }

    /// The whole state as JSON (includes `seq`).
    pub fn snapshot(&self) -> String {
        self.try_snapshot().unwrap_or_default()
    }

    /// The snapshot, or an error (never an empty text that would replace the journal).
    pub fn try_snapshot(&self) -> Result<String> {
        let text = serde_json::to_string(&self.st)
            .map_err(|e| Error::Internal(format!("snapshot: {e}")))?;
        if text.is_empty() {
            return Err(Error::Internal("snapshot: empty".into()));
        }
        Ok(text)
    }

    /// Journal lines produced since the last call (newline-terminated).
    pub fn take_journal(&mut self) -> String {
        std::mem::take(&mut self.pending)
    }

    /// Read-only state (tests, bench).
    pub fn state(&self) -> &SessionState {
        &self.st
    }

    /// The config in use.
    pub fn config(&self) -> &Config {
        &self.cfg
    }

    fn emit(&mut self, e: Event) -> Result<()> {
        self.st.apply(&e)?;
        let line = journal::encode_line(self.st.seq, &e)?;
        self.pending.push_str(&line);
        Ok(())
    }

    /// Calibration is trusted once it has seen prompts of clearly different sizes: a two-point
    /// fit needs spread, and `Calibration` fits one point (or equal sizes) through the origin,
    /// which makes the first turn (≈ 12K static tokens over a few hundred chars of history) read
    /// as 2 tokens per char, 6.7× too high. Until then: default slope, static = residual of the
    /// last observation.
    fn calibrated(&self) -> bool {
        let g = &self.st.calib_guard;
        self.st.calibration.samples() >= 2 && g.hi.saturating_sub(g.lo) >= (g.lo / 10).max(2_000)
    }

    /// Estimated tokens of `w` weighted chars of messages.
    fn tokens(&self, w: u64) -> u64 {
        if self.calibrated() {
            self.st.calibration.tokens(w)
        } else {
            (w as f64 * tokens::DEFAULT_SLOPE).round() as u64
        }
    }

    /// Estimated static prompt (system prompt + tools).
    fn static_tokens(&self) -> u64 {
        if self.calibrated() {
            return self.st.calibration.static_tokens();
        }
        match self.st.calib_guard.last {
            Some([x, y]) => y.saturating_sub((x as f64 * tokens::DEFAULT_SLOPE).round() as u64),
            None => 0,
        }
    }

    // ---- need ----------------------------------------------------------------------------------

    /// Which host indices the engine needs stringified for an `assemble` over `count` messages:
    /// every index until the head is pinned (usually the first turn or two) or when the history
    /// got shorter; afterwards the head, the last recorded index (boundary check), every new
    /// index, and up to 4 spot checks among recorded ones.
    ///
    /// The spot checks depend only on `count` and the head (`count-2`, `count-3`, where
    /// `tool_result_persist` rewrites land, plus two positions hashed from `count`), so a
    /// repeated assemble with the same input never needs more than the first one was given:
    /// same input, same output.
    pub fn need(&self, count: u32) -> Vec<u32> {
        let rc = self.st.recorded();
        if count == 0 {
            return Vec::new();
        }
        if rc == 0 || count < rc || !self.st.pinned {
            return (0..count).collect();
        }
        let head = self.st.head_len.min(rc);
        let mut set: BTreeSet<u32> = (0..head).collect();
        set.insert(rc - 1);
        set.extend(rc..count);
        set.extend(
            self.spot_checks(head, count)
                .into_iter()
                .filter(|i| *i < rc),
        );
        set.into_iter().collect()
    }

    /// Up to [`SPOT_CHECKS`] indices in `[head, count)`.
    fn spot_checks(&self, head: u32, count: u32) -> Vec<u32> {
        if count <= head {
            return Vec::new();
        }
        let span = u64::from(count - head);
        let mut out: Vec<u32> = [2u32, 3]
            .iter()
            .filter_map(|k| count.checked_sub(*k))
            .filter(|i| *i >= head)
            .collect();
        for k in 0..u64::from(SPOT_CHECKS - 2) {
            let r = splitmix(u64::from(count).wrapping_mul(4).wrapping_add(k));
            out.push(head + (r % span) as u32);
        }
        out
    }

    // ---- assemble ------------------------------------------------------------------------------

    /// Build the context for the next model call. Idempotent: the same input twice gives the
    /// same plan and journals nothing the second time.
    pub fn assemble(&mut self, input: &AssembleInput) -> Result<AssemblePlan> {
        self.run(input, Op::Assemble)
    }

    /// Host `compact()`: fold now (`force`) if there is anything to fold; without `force`, the
    /// usual priced/emergency rules.
    pub fn compact(&mut self, input: &AssembleInput, force: bool) -> Result<AssemblePlan> {
        self.run(input, Op::Compact { force })
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
    /// committed turn (its messages are recorded only at the next assemble; its user message
    /// is a cut point). The next assemble folds over the real messages with the same rules and
    /// can also cut inside that turn, so `tokens_after` is an upper bound of what it sends.
    pub fn compact_request(&mut self, input: &CompactInput) -> Result<CompactAnswer> {
        self.prepared.borrow_mut().clear();
        let model = input
            .model
            .clone()
            .filter(|m| !m.trim().is_empty())
            .or_else(|| self.st.model.clone());
        self.note_limits(input.context_window, None)?;
        let host_threshold = self.st.window.and_then(host_turn_threshold);
        let nothing = |reason: &str, before: u64| CompactAnswer {
            pending: false,
            tokens_before: before,
            tokens_after: before,
            host_threshold,
            reason: Some(reason.to_string()),
            summary: None,
        };
        if !model_managed(&self.cfg, model.as_deref()) {
            return Ok(nothing("model not managed by cachefold", 0));
        }
        if !self.st.pinned {
            return Ok(nothing("no history recorded yet", 0));
        }
        let mut sim = self.clone();
        sim.pending.clear();
        let mut count = sim.st.recorded();
        if let Some(&turn_w) = self.st.turn_ws.back() {
            sim.st.records.push(MsgRecord {
                h: String::new(),
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
        let after = sim.estimate(count);
        if report.folds.is_empty() && report.condensed.is_none() {
            return Ok(nothing(
                report
                    .skipped
                    .as_deref()
                    .unwrap_or("no cut point after the head"),
                before,
            ));
        }
        // A fold that saves next to nothing (the history is already folded down to the live
        // tail) would only add a record and a cache break: say so instead.
        if after.saturating_add(before / LOW_SAVING_DIVISOR) > before {
            return Ok(nothing(
                "already compacted: a fold now would save under 5 %",
                before,
            ));
        }
        if !self.st.force_fold {
            self.emit(Event::ForceFold { on: true })?;
        }
        Ok(CompactAnswer {
            pending: true,
            tokens_before: before,
            tokens_after: after,
            host_threshold,
            reason: None,
            summary: report.fold.map(|f| f.summary),
        })
    }

    fn need_full_plan(&self, count: u32, missing: Vec<u32>, managed: bool) -> AssemblePlan {
        let mut report = AssembleReport {
            count,
            managed,
            pinned: self.st.pinned,
            head_len: self.st.head_len,
            live_from: self.st.live_from,
            ..Default::default()
        };
        report.missing = missing.into_iter().take(64).collect();
        AssemblePlan {
            order: (0..i64::from(count)).collect(),
            need_full: true,
            passthrough: true,
            report,
            ..Default::default()
        }
    }

    fn run(&mut self, input: &AssembleInput, op: Op) -> Result<AssemblePlan> {
        self.prepared.borrow_mut().clear();
        let count = input.count;
        let mut given: BTreeMap<u32, &str> = BTreeMap::new();
        for m in &input.messages {
            if m.index >= count {
                return Err(Error::Input(format!(
                    "message index {} out of range (count {count})",
                    m.index
                )));
            }
            if given.insert(m.index, m.json.as_str()).is_some() {
                return Err(Error::Input(format!(
                    "message index {} supplied twice",
                    m.index
                )));
            }
        }
        let model = input
            .model
            .clone()
            .filter(|m| !m.trim().is_empty())
            .or_else(|| self.st.model.clone());
        let managed = model_managed(&self.cfg, model.as_deref());
        let missing: Vec<u32> = self
            .need(count)
            .into_iter()
            .filter(|i| !given.contains_key(i))
            .collect();
        if !missing.is_empty() {
            return Ok(self.need_full_plan(count, missing, managed));
        }
        let hashes: BTreeMap<u32, String> = given
            .iter()
            .map(|(i, j)| (*i, fingerprint::message_hash(j)))
            .collect();
        let full = given.len() == count as usize;

        // With ownsCompaction, OpenClaw re-runs assemble inside the tool loop with the messages
        // we returned (measured in the e2e runs: count 14 → our 6-message output, then 6, 6, 6).
        // Taking that echo for the real history would re-pin the session, and the next turn's
        // real history would then re-fold everything after the head (a cache break each turn).
        if managed && full {
            if let Some(plan) = self.echo_plan(count, &hashes, &given) {
                return Ok(plan);
            }
        }

        // Divergence first: with partial input nothing may change before we know.
        let divergence = {
            let rec: Vec<&str> = self.st.records.iter().map(|r| r.h.as_str()).collect();
            fingerprint::first_divergence(&rec, &hashes, count)
        };
        if divergence.is_some() && !full {
            let missing = (0..count).filter(|i| !given.contains_key(i)).collect();
            return Ok(self.need_full_plan(count, missing, managed));
        }

        let mut report = AssembleReport {
            count,
            managed,
            ..Default::default()
        };
        self.env(&model, input.system_prompt_addition.as_deref(), &mut report)?;
        // The pre-prompt budget (the turn's first assemble): the tool loop's are near the
        // whole window and would make the journal flap between the two.
        let budget = (op == Op::Assemble && self.st.turn.shared.is_empty())
            .then_some(input.token_budget)
            .flatten();
        self.note_limits(input.context_window, budget)?;

        if let Some(d) = divergence {
            self.diverge(d, count, &given, &mut report)?;
        }

        // Ingest new messages.
        let start = self.st.recorded();
        for i in start..count {
            let json = given
                .get(&i)
                .copied()
                .ok_or_else(|| Error::Internal(format!("index {i} not supplied")))?;
            if let Some(reason) = self.ingest(i, json)? {
                report.quarantined.push(QuarantineReport {
                    index: i,
                    reason,
                    hash: fingerprint::message_hash(json),
                });
            }
            report.ingested += 1;
        }
        if !self.st.pinned {
            self.try_pin()?;
        }

        let mut writes = Vec::new();
        if managed && self.st.pinned {
            self.fold_phase(count, input, model.as_deref(), op, &mut report, &mut writes)?;
        }

        let layout = if managed && self.st.pinned {
            self.layout(count)
        } else {
            (0..count).map(Src::Host).collect()
        };
        let built = self.build(&layout, managed)?;
        report.stable_prefix = self.stable_prefix(&report, &layout, &built);
        report.repairs = built.repairs.clone();
        report.pinned = self.st.pinned;
        report.head_len = self.st.head_len;
        report.live_from = self.st.live_from;
        report.breaker_tripped = self.st.breaker_tripped();
        let est = self.tokens(built.w);
        if report.budget_tokens == 0 {
            report.budget_tokens = self.budget(input);
            report.threshold_tokens = self.threshold(input);
            report.tokens_before = self.static_tokens() + est;
        }
        report.tokens_after = self.static_tokens() + est;
        report.over_budget = managed && report.tokens_after > report.threshold_tokens;
        if managed && report.tokens_after > report.budget_tokens {
            report.warning = Some(format!(
                "estimated prompt {} tokens exceeds the budget of {} tokens even after folding \
                 (the live tail from message {} cannot be folded: the current turn alone is too \
                 large); the provider may reject the request",
                report.tokens_after, report.budget_tokens, report.live_from
            ));
        }
        self.record_output(&built)?;
        Ok(AssemblePlan {
            order: built.order,
            synthetic: built.synthetic,
            estimated_tokens: est,
            need_full: false,
            passthrough: !managed,
            fold_writes: writes,
            report,
        })
    }

    /// `Some(plan)` when the incoming messages begin with exactly our last output and that
    /// output differs from the recorded history (it holds a fold record or skips messages):
    /// the host handed our assembled context back. The answer is that context unchanged plus
    /// whatever the host appended, with no state change (so assemble stays idempotent).
    ///
    /// What the host appended is not ours to trust: when the user typed while parallel tools
    /// ran, a user message can stand between a call and its last results, and the last result
    /// would reach the provider separated from its call (a 400 on DeepSeek). So the echoed list
    /// goes through the same strict [`pairing::repair`] as every other output (our own part is
    /// already valid, so repairs only ever touch what was appended).
    fn echo_plan(
        &self,
        count: u32,
        hashes: &BTreeMap<u32, String>,
        given: &BTreeMap<u32, &str>,
    ) -> Option<AssemblePlan> {
        let out = &self.st.out;
        if out.is_empty() || (count as usize) < out.len() {
            return None;
        }
        let differs_from_history = out.len() < self.st.records.len()
            || out
                .iter()
                .zip(&self.st.records)
                .any(|(k, r)| fingerprint::short_key(&r.h) != k.0);
        if !differs_from_history {
            return None;
        }
        for (i, k) in out.iter().enumerate() {
            let h = hashes.get(&(i as u32))?;
            if fingerprint::short_key(h) != k.0 {
                return None;
            }
        }
        let out_w: u64 = out.iter().map(|k| k.1).sum();
        let mut report = AssembleReport {
            count,
            managed: true,
            pinned: self.st.pinned,
            head_len: self.st.head_len,
            live_from: self.st.live_from,
            skipped: Some(
                "the host passed our assembled context back (tool-loop re-assembly): unchanged"
                    .into(),
            ),
            ..Default::default()
        };
        let (order, synthetic, syn_w) = echo_repair(count, given, &mut report);
        let appended_w: u64 = (out.len() as u32..count)
            .filter_map(|i| given.get(&i))
            .map(|j| tokens::weighted_chars(j))
            .sum();
        Some(AssemblePlan {
            order,
            synthetic,
            estimated_tokens: self.tokens(out_w + appended_w + syn_w),
            report,
            ..Default::default()
        })
    }

    /// The token budget folds answer to: the config's, else the host's for this call.
    ///
    /// OpenClaw hands the pre-prompt assemble `window − reserve` (22.6K of a 48K window,
    /// measured) and the tool-loop assembles nearly the whole window (47.6K). Answering to the
    /// largest budget seen was measured worse in the 48K e2e run (0.90× legacy's input cost
    /// instead of 0.57×): prompts grew into the host's pre-compaction memory flush, which
    /// rewrites the system prompt. So the pre-prompt budget governs folds, and the in-loop
    /// assembles, with their larger budgets, never fold mid-turn.
    fn budget(&self, input: &AssembleInput) -> u64 {
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
    fn threshold(&self, input: &AssembleInput) -> u64 {
        let base = (self.cfg.compact_ratio * self.budget(input) as f64)
            .floor()
            .max(0.0) as u64;
        match self.st.window.and_then(host_turn_threshold) {
            Some(host) => {
                let growth = self.tokens(self.st.turn_ws.iter().copied().max().unwrap_or(0));
                base.min(host.saturating_sub(growth).max(base / 2))
            }
            None => base,
        }
    }

    /// Journal the host's limits when they change.
    fn note_limits(&mut self, window: Option<u64>, budget: Option<u64>) -> Result<()> {
        let window = window.filter(|w| *w > 0 && Some(*w) != self.st.window);
        let budget = budget.filter(|b| *b > 0 && Some(*b) != self.st.budget);
        if window.is_none() && budget.is_none() {
            return Ok(());
        }
        self.emit(Event::Limits { window, budget })
    }

    fn env(
        &mut self,
        model: &Option<String>,
        spa: Option<&str>,
        report: &mut AssembleReport,
    ) -> Result<()> {
        let spa_hash = spa.map(fingerprint::message_hash);
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
                action: "none".into(),
            })?;
        }
        Ok(())
    }

    fn diverge(
        &mut self,
        d: u32,
        count: u32,
        given: &BTreeMap<u32, &str>,
        report: &mut AssembleReport,
    ) -> Result<()> {
        let rc = self.st.recorded();
        let mut roles: Vec<String> = Vec::new();
        let mut incoming_shape: Option<Shape> = None;
        for (&i, json) in given.range(d..) {
            let host = crate::message::parse_host(json);
            let m = host.message();
            roles.push(m.map_or("", Message::role_str).to_string());
            if i == d {
                incoming_shape = Some(m.map_or_else(Shape::other, Shape::of));
            }
        }
        let role_refs: Vec<&str> = roles.iter().map(String::as_str).collect();
        let recorded_shape = self.st.records.get(d as usize).map(|r| r.shape.clone());
        let cause = fingerprint::classify(
            d,
            count,
            rc,
            &role_refs,
            recorded_shape.as_ref(),
            incoming_shape.as_ref(),
        );
        let in_tail = !self.st.pinned || (d >= self.st.head_len && d >= self.st.live_from);
        let action = if in_tail { "truncate" } else { "repin" };
        report.divergence = Some(DivergenceReport {
            at: d,
            cause: cause.code().into(),
            action: action.into(),
        });
        self.emit(Event::Diverge {
            at: d,
            cause: cause.code().into(),
            action: action.into(),
        })
    }

    /// Record host message `i`. Never fails on the message itself: one the core cannot read
    /// exactly is quarantined (see [`MsgRecord::q`]) and the rest of the session stays managed.
    fn ingest(&mut self, i: u32, json: &str) -> Result<Option<String>> {
        let host = crate::message::parse_host(json);
        let w = tokens::weighted_chars(json);
        let h = fingerprint::message_hash(json);
        let q = host.quarantine().map(str::to_string);
        let Some(m) = host.message() else {
            let rec = MsgRecord {
                h,
                w,
                shape: Shape::other(),
                ts: None,
                protected: false,
                digest: Digest::default(),
                q: q.clone(),
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
        let call_args = calls
            .iter()
            .map(|c| CallArg {
                id: c.id.to_string(),
                name: c.name.to_string(),
                args: bound_args(c.arguments),
            })
            .collect();
        let ts = m.raw().get("timestamp").filter(|v| v.is_number()).cloned();
        let rec = MsgRecord {
            h,
            w,
            shape,
            ts,
            protected,
            digest: dg,
            q: q.clone(),
        };
        self.emit(Event::Ingest {
            i,
            rec: Box::new(rec),
            calls: call_args,
        })?;
        Ok(q)
    }

    fn try_pin(&mut self) -> Result<()> {
        let p = self.cfg.prefix_lock_count;
        let Some(h) = fold::boundaries(&self.st.records)
            .into_iter()
            .find(|c| *c >= p)
        else {
            return Ok(());
        };
        let fp = fingerprint::head_fingerprint(
            self.st
                .records
                .iter()
                .take(h as usize)
                .map(|r| r.h.as_str()),
        );
        self.emit(Event::Pin { len: h, fp })
    }

    // ---- folds ---------------------------------------------------------------------------------

    /// Weighted chars of head + segments (records and kept messages).
    fn prefix_w(&self) -> u64 {
        fold::span_w(&self.st.records, 0, self.st.head_len)
            + self
                .st
                .segs
                .iter()
                .map(|s| s.w + s.protected_w)
                .sum::<u64>()
    }

    fn layout_w(&self, count: u32) -> u64 {
        self.prefix_w() + fold::span_w(&self.st.records, self.st.live_from, count)
    }

    fn estimate(&self, count: u32) -> u64 {
        self.static_tokens() + self.tokens(self.layout_w(count))
    }

    fn expected_calls(&self) -> f64 {
        if self.cfg.expected_remaining_calls > 0 {
            return self.cfg.expected_remaining_calls as f64;
        }
        let assistants = self
            .st
            .records
            .iter()
            .filter(|r| r.shape.role == ShapeRole::Assistant)
            .count() as u64;
        self.st.totals.calls.max(assistants).clamp(4, 200) as f64
    }

    /// Boundaries strictly inside the live tail: `live_from < c < count`.
    fn live_cuts(&self, count: u32) -> Vec<u32> {
        let live = self.st.live_from;
        let recs = self
            .st
            .records
            .get(..count as usize)
            .unwrap_or(&self.st.records);
        fold::boundaries(recs)
            .into_iter()
            .filter(|c| *c > live && *c < count)
            .collect()
    }

    /// The priced candidate: earliest cut whose tail fits `tailTokens` (None when the live tail
    /// already fits, or when even the last group does not).
    fn candidate(&self, count: u32, cuts: &[u32]) -> std::result::Result<u32, &'static str> {
        let fits = |w: u64| self.tokens(w) <= self.cfg.tail_tokens;
        if fits(fold::span_w(&self.st.records, self.st.live_from, count)) {
            return Err("live tail within tailTokens");
        }
        cuts.iter()
            .zip(tails_w(&self.st.records, cuts, count))
            .find(|(_, w)| fits(*w))
            .map(|(c, _)| *c)
            .ok_or("the last turn alone exceeds tailTokens")
    }

    /// `Some(reason)` when folding `[from, to)` cannot pay even with an empty record (the
    /// decision is monotone in the record size), so the record need not be rendered.
    fn cannot_pay(
        &self,
        count: u32,
        from: u32,
        to: u32,
        before: u64,
        price: &cost::Price,
        expected: f64,
    ) -> Option<String> {
        let protected_w: u64 = fold::protected_groups(&self.st.records, from, to)
            .iter()
            .filter_map(|i| self.st.records.get(*i as usize))
            .map(|r| r.w)
            .sum();
        let cand = cost::FoldCandidate {
            context_tokens: before,
            unchanged_prefix_tokens: self.static_tokens() + self.tokens(self.prefix_w()),
            new_record_tokens: 0,
            after_tokens: self.tokens(protected_w + fold::span_w(&self.st.records, to, count)),
            summary_input_tokens: 0,
            summary_output_tokens: 0,
        };
        let d = cost::fold_decision(&cand, price, expected);
        (!d.pays).then_some(d.reason)
    }

    fn prepare(&self, id: &str, from: u32, to: u32, summary: Option<&str>) -> Prepared {
        let key = (
            id.to_string(),
            from,
            to,
            summary.map(fingerprint::message_hash),
        );
        if let Some(p) = self.prepared.borrow().get(&key) {
            return p.clone();
        }
        let p = self.prepare_uncached(id, from, to, summary);
        self.prepared.borrow_mut().insert(key, p.clone());
        p
    }

    fn prepare_uncached(&self, id: &str, from: u32, to: u32, summary: Option<&str>) -> Prepared {
        let recs = &self.st.records;
        let protected = fold::protected_groups(recs, from, to);
        let digests: Vec<&Digest> = (from..to)
            .filter(|i| protected.binary_search(i).is_err())
            .filter_map(|i| recs.get(i as usize).map(|r| &r.digest))
            .collect();
        let region_w = fold::span_w(recs, from, to);
        let cap = fold::cap_for_region(fold::fold_cap_chars(self.cfg.fold_record_budget), region_w);
        let text = fold::fold_text(id, &digests, summary, cap);
        let json = fold::record_json(&text, fold::record_ts(recs, from));
        let w = tokens::weighted_chars(&json);
        let protected_w = protected
            .iter()
            .filter_map(|i| recs.get(*i as usize))
            .map(|r| r.w)
            .sum();
        Prepared {
            seg: Segment {
                id: id.to_string(),
                from,
                to,
                protected,
                key: fingerprint::short_key(&fingerprint::message_hash(&json)),
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
    fn estimate_with(&self, count: u32, p: &Prepared) -> u64 {
        let w = self.prefix_w()
            + p.seg.w
            + p.seg.protected_w
            + fold::span_w(&self.st.records, p.seg.to, count);
        self.static_tokens() + self.tokens(w)
    }

    fn candidate_price(&self, count: u32, p: &Prepared, before: u64) -> cost::FoldCandidate {
        let stat = self.static_tokens();
        cost::FoldCandidate {
            context_tokens: before,
            unchanged_prefix_tokens: stat + self.tokens(self.prefix_w()),
            new_record_tokens: self.tokens(p.seg.w),
            after_tokens: self
                .tokens(p.seg.protected_w + fold::span_w(&self.st.records, p.seg.to, count)),
            summary_input_tokens: 0,
            summary_output_tokens: 0,
        }
    }

    fn next_fold_id(&self) -> String {
        format!("f{}", self.st.counters.folds + 1)
    }

    fn ready_summary_for(&self, to_max: u32, cuts: &[u32]) -> Option<(u32, String)> {
        let s = self.st.ready_summary.as_ref()?;
        (s.from == self.st.live_from && s.to <= to_max && cuts.binary_search(&s.to).is_ok())
            .then(|| (s.to, s.text.clone()))
    }

    #[allow(clippy::too_many_arguments)]
    fn fold_phase(
        &mut self,
        count: u32,
        input: &AssembleInput,
        model: Option<&str>,
        op: Op,
        report: &mut AssembleReport,
        writes: &mut Vec<FoldWrite>,
    ) -> Result<()> {
        let price = cost::price_for(&self.cfg, model, input.now_ms);
        let expected = self.expected_calls();
        let thr = self.threshold(input);
        report.budget_tokens = self.budget(input);
        report.threshold_tokens = thr;
        let before = self.estimate(count);
        report.tokens_before = before;
        let forced = op == (Op::Compact { force: true }) || self.st.force_fold;
        report.forced = forced;
        // Iterate to a fixpoint: a fold or condensation changes the prefix and so the next
        // rule's inputs; stopping early would let a repeated assemble fold again (found by the
        // property tests). Each round either advances `liveFrom` or leaves one segment, so at
        // most a handful of rounds run; 8 is a safety cap.
        let mut force_now = forced;
        for _round in 0..8 {
            let before = self.estimate(count);
            let folds_before = report.folds.len();
            let condenses_before = self.st.counters.condenses;
            self.priced_step(count, &price, expected, before, force_now, report, writes)?;
            self.emergency_step(count, &price, expected, thr, force_now, report, writes)?;
            self.condense_step(count, thr, &price, expected, report, writes)?;
            force_now = false;
            let changed = report.folds.len() != folds_before
                || self.st.counters.condenses != condenses_before;
            if !changed {
                break;
            }
        }
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn priced_step(
        &mut self,
        count: u32,
        price: &cost::Price,
        expected: f64,
        before: u64,
        forced: bool,
        report: &mut AssembleReport,
        writes: &mut Vec<FoldWrite>,
    ) -> Result<()> {
        let (price, expected) = (price.clone(), expected);
        if !forced {
            if self.st.breaker_tripped() {
                report.skipped = Some("circuit breaker: 3 consecutive folds saved < 5 %".into());
            } else {
                let cuts = self.live_cuts(count);
                match self.candidate(count, &cuts) {
                    Err(why) => report.skipped = Some(why.into()),
                    Ok(c) => {
                        let id = self.next_fold_id();
                        let live = self.st.live_from;
                        let region = self.tokens(fold::span_w(&self.st.records, live, c));
                        if region < self.cfg.min_fold_tokens {
                            report.skipped = Some(format!(
                                "region {region} tokens < minFoldTokens {}",
                                self.cfg.min_fold_tokens
                            ));
                        } else if let Some(why) =
                            self.cannot_pay(count, live, c, before, &price, expected)
                        {
                            // Not even a zero-size record would pay: skip rendering one.
                            report.skipped = Some(why);
                        } else {
                            let p = self.prepare(&id, live, c, None);
                            let d = cost::fold_decision(
                                &self.candidate_price(count, &p, before),
                                &price,
                                expected,
                            );
                            if !d.pays {
                                report.skipped = Some(d.reason);
                            } else {
                                // The fold is decided at the candidate cut; a ready summary for
                                // [liveFrom, to) with to <= c moves the cut back to `to` (the rest
                                // stays live for the next fold), provided it covers at least half
                                // of the candidate region.
                                let with_summary =
                                    self.ready_summary_for(c, &cuts).filter(|(to, _)| {
                                        2 * self.tokens(fold::span_w(&self.st.records, live, *to))
                                            >= region
                                    });
                                match with_summary {
                                    Some((to, text)) => {
                                        let ps = self.prepare(&id, live, to, Some(&text));
                                        let ds = cost::fold_decision(
                                            &self.candidate_price(count, &ps, before),
                                            &price,
                                            expected,
                                        );
                                        self.apply_fold(
                                            count, ps, "priced", ds, &price, expected, before,
                                            report, writes,
                                        )?;
                                    }
                                    None => self.apply_fold(
                                        count, p, "priced", d, &price, expected, before, report,
                                        writes,
                                    )?,
                                }
                            }
                        }
                    }
                }
            }
        }

        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn emergency_step(
        &mut self,
        count: u32,
        price: &cost::Price,
        expected: f64,
        thr: u64,
        forced: bool,
        report: &mut AssembleReport,
        writes: &mut Vec<FoldWrite>,
    ) -> Result<()> {
        let (price, expected) = (price.clone(), expected);
        let est = self.estimate(count);
        let emergency = est > thr;
        report.emergency |= emergency && !forced;
        if emergency || forced {
            let cuts = self.live_cuts(count);
            if let Some(&last) = cuts.last() {
                let id = self.next_fold_id();
                let mut chosen: Option<Prepared> = None;
                if forced && !emergency {
                    let c = self.candidate(count, &cuts).unwrap_or(last);
                    let summary = self.ready_summary_for(c, &cuts);
                    chosen = Some(match summary {
                        Some((to, text)) => self.prepare(&id, self.st.live_from, to, Some(&text)),
                        None => self.prepare(&id, self.st.live_from, c, None),
                    });
                } else {
                    let stat = self.static_tokens();
                    let fixed = self.prefix_w();
                    // Hysteresis: an emergency fold goes down to a low-water mark, not just under
                    // the threshold. Cutting the minimum made the next turn's growth cross the
                    // threshold again, so every turn folded (and missed the cache after the new
                    // record) in the 48K-window e2e run. The low-water mark leaves
                    // EMERGENCY_HEADROOM of the room above the fixed prefix free for later turns.
                    let floor = stat + self.tokens(fixed);
                    let low = floor
                        + ((thr.saturating_sub(floor)) as f64 * (1.0 - EMERGENCY_HEADROOM)) as u64;
                    let tails = tails_w(&self.st.records, &cuts, count);
                    for target in [low, thr] {
                        for (&c, &tail) in cuts.iter().zip(&tails) {
                            // Lower bound without the record: skip cuts that cannot fit anyway.
                            let lb = stat + self.tokens(fixed + tail);
                            if lb > target && c != last {
                                continue;
                            }
                            let summary = self
                                .ready_summary_for(c, &cuts)
                                .filter(|(to, _)| *to == c)
                                .map(|(_, t)| t);
                            let p = self.prepare(&id, self.st.live_from, c, summary.as_deref());
                            if self.estimate_with(count, &p) <= target
                                || (c == last && target == thr)
                            {
                                chosen = Some(p);
                                break;
                            }
                        }
                        if chosen.is_some() {
                            break;
                        }
                    }
                }
                if let Some(p) = chosen {
                    let d = cost::fold_decision(
                        &self.candidate_price(count, &p, est),
                        &price,
                        expected,
                    );
                    let reason = if forced { "compact" } else { "emergency" };
                    self.apply_fold(count, p, reason, d, &price, expected, est, report, writes)?;
                }
            } else if forced && self.st.force_fold {
                // Nothing to fold: clear the request so it does not linger.
                self.emit(Event::ForceFold { on: false })?;
            }
        }

        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn condense_step(
        &mut self,
        count: u32,
        thr: u64,
        price: &cost::Price,
        expected: f64,
        report: &mut AssembleReport,
        writes: &mut Vec<FoldWrite>,
    ) -> Result<()> {
        if self.st.segs.len() >= 2 {
            let records_tokens = self.tokens(self.st.segs.iter().map(|s| s.w).sum());
            let est = self.estimate(count);
            let budget = self.record_budget(thr);
            if records_tokens > budget || est > thr {
                self.condense(
                    count,
                    est,
                    records_tokens,
                    budget,
                    thr,
                    price,
                    expected,
                    report,
                    writes,
                )?;
            }
        }
        Ok(())
    }

    /// Budget of all fold records together: `foldRecordBudget`, but at most a quarter of the
    /// threshold, so that in a small window the records cannot crowd out the live tail.
    fn record_budget(&self, thr: u64) -> u64 {
        self.cfg.fold_record_budget.min((thr / 4).max(1_000))
    }

    #[allow(clippy::too_many_arguments)]
    fn apply_fold(
        &mut self,
        count: u32,
        p: Prepared,
        reason: &str,
        decision: cost::FoldDecision,
        price: &cost::Price,
        expected: f64,
        before: u64,
        report: &mut AssembleReport,
        writes: &mut Vec<FoldWrite>,
    ) -> Result<()> {
        let after = self.estimate_with(count, &p);
        let region_w = fold::span_w(&self.st.records, p.seg.from, p.seg.to);
        let folded_w = region_w.saturating_sub(p.seg.protected_w);
        let folded_tokens = self.tokens(folded_w);
        let saved = before.saturating_sub(after);
        let low = saved.saturating_mul(LOW_SAVING_DIVISOR) < before;
        let fr = FoldReport {
            id: p.seg.id.clone(),
            from: p.seg.from,
            to: p.seg.to,
            reason: reason.to_string(),
            protected: p.seg.protected.len() as u32,
            record_tokens: self.tokens(p.seg.w),
            folded_tokens,
            tokens_before: before,
            tokens_after: after,
            used_summary: p.seg.summary,
            summary: p.text,
            decision,
            price_key: price.key.clone(),
            expected_calls: expected,
        };
        writes.push(FoldWrite {
            fold_id: p.seg.id.clone(),
            from: p.seg.from,
            to: p.seg.to,
        });
        self.emit(Event::Fold {
            seg: Box::new(p.seg),
            reason: reason.to_string(),
            folded_w,
            folded_tokens,
            low,
        })?;
        report.fold = Some(fr.clone());
        report.folds.push(fr);
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn condense(
        &mut self,
        count: u32,
        before: u64,
        records_tokens: u64,
        record_budget: u64,
        thr: u64,
        price: &cost::Price,
        expected: f64,
        report: &mut AssembleReport,
        writes: &mut Vec<FoldWrite>,
    ) -> Result<()> {
        let (Some(first), Some(_)) = (self.st.segs.first(), self.st.segs.last()) else {
            return Ok(());
        };
        let from = first.from;
        let to = self.st.live_from;
        let id = format!("c{}", self.st.counters.condenses + 1);
        let recs = &self.st.records;
        let protected: Vec<u32> = self
            .st
            .segs
            .iter()
            .flat_map(|s| s.protected.iter().copied())
            .collect();
        let protected_w = self.st.segs.iter().map(|s| s.protected_w).sum();
        let mut covers: Vec<String> = self
            .st
            .segs
            .iter()
            .flat_map(|s| s.covers.iter().cloned())
            .collect();
        covers.dedup();
        let digests: Vec<&Digest> = (from..to)
            .filter(|i| protected.binary_search(i).is_err())
            .filter_map(|i| recs.get(i as usize).map(|r| &r.digest))
            .collect();
        let text = fold::condensed_text(
            &id,
            &covers,
            &digests,
            fold::condensed_cap_chars(self.cfg.fold_record_budget),
        );
        let json = fold::record_json(&text, fold::record_ts(recs, from));
        let w = tokens::weighted_chars(&json);
        let old_w: u64 = self.st.segs.iter().map(|s| s.w).sum();
        let over_records = records_tokens > record_budget;
        if !over_records
            && (w >= old_w || before.saturating_sub(self.tokens(old_w)) + self.tokens(w) > thr)
        {
            // Under pressure only (prompt over the threshold): a condensation that does not
            // shrink the records, or does not bring the prompt under the threshold, would break
            // the cache after the head for nothing: the next fold is appended instead. (In the
            // 48K e2e run, where OpenClaw's system prompt alone nearly fills the pre-prompt
            // budget, condensing every turn cost more than appending.)
            return Ok(());
        }
        let merged = self.st.segs.len() as u32;
        let key = fingerprint::short_key(&fingerprint::message_hash(&json));
        let seg = Segment {
            id: id.clone(),
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
        let stat = self.static_tokens();
        let head_w = fold::span_w(recs, 0, self.st.head_len);
        let tail_w = fold::span_w(recs, to, count);
        let after = stat + self.tokens(head_w + w + protected_w + tail_w);
        let cand = cost::FoldCandidate {
            context_tokens: before,
            unchanged_prefix_tokens: stat + self.tokens(head_w),
            new_record_tokens: self.tokens(w),
            after_tokens: self.tokens(protected_w + tail_w),
            summary_input_tokens: 0,
            summary_output_tokens: 0,
        };
        let decision = cost::fold_decision(&cand, price, expected);
        writes.push(FoldWrite {
            fold_id: id.clone(),
            from,
            to,
        });
        report.condensed = Some(CondenseReport {
            id,
            merged,
            records_tokens_before: records_tokens,
            record_tokens: self.tokens(w),
            tokens_before: before,
            tokens_after: after,
            decision,
        });
        self.emit(Event::Condense { seg: Box::new(seg) })
    }

    // ---- output --------------------------------------------------------------------------------

    fn layout(&self, count: u32) -> Vec<Src> {
        let mut out: Vec<Src> = (0..self.st.head_len.min(count)).map(Src::Host).collect();
        for (k, s) in self.st.segs.iter().enumerate() {
            out.push(Src::Seg(k));
            out.extend(s.protected.iter().map(|i| Src::Host(*i)));
        }
        out.extend((self.st.live_from..count).map(Src::Host));
        out
    }

    fn build(&self, layout: &[Src], repair: bool) -> Result<Built> {
        let recs = &self.st.records;
        let rec = |i: u32| {
            recs.get(i as usize)
                .ok_or_else(|| Error::Internal(format!("no record for host index {i}")))
        };
        let slots: Vec<Slot>;
        let mut repairs = Vec::new();
        if repair {
            let mut shapes = Vec::with_capacity(layout.len());
            for s in layout {
                shapes.push(match s {
                    Src::Host(i) => rec(*i)?.shape.clone(),
                    Src::Seg(_) => Shape::user(),
                });
            }
            // History given to assemble never holds the current turn (the host appends that after
            // our output, measured in the e2e runs), so a trailing call without results is a
            // dangling one from a failed turn: repair it, or DeepSeek rejects the request.
            let r = pairing::repair(&shapes, false);
            repairs = r
                .repairs
                .iter()
                .map(|x| RepairReport {
                    kind: x.kind.clone(),
                    call_id: x.call_id.clone(),
                    position: x.position as u32,
                })
                .collect();
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
                            if let Some(t) = r.ts.as_ref().and_then(Value::as_f64) {
                                last_ts = t;
                            }
                            b.order.push(i64::from(*i));
                            b.origin.push(p);
                            b.keys.push(OutKey(fingerprint::short_key(&r.h), r.w));
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
            b.keys.push(OutKey(
                fingerprint::short_key(&fingerprint::message_hash(&json_key)),
                w,
            ));
            b.w += w;
            b.synthetic.push(json_key);
            b.order.push(-(b.synthetic.len() as i64));
            b.origin.push(last_pos);
        }
        Ok(b)
    }

    /// With a fold or condensation this call: number of leading output entries that stem from
    /// layout positions before the first changed segment.
    fn stable_prefix(&self, report: &AssembleReport, layout: &[Src], built: &Built) -> Option<u32> {
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

    fn record_output(&mut self, built: &Built) -> Result<()> {
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
        let shared: u64 = self
            .st
            .req
            .iter()
            .zip(&built.keys)
            .take_while(|(a, b)| a == b)
            .map(|(a, _)| a.1)
            .sum();
        self.emit(Event::Out {
            keep: keep as u32,
            add: built.keys[keep..].to_vec(),
            shared,
            repairs: built.repairs.len() as u32,
        })
    }

    // ---- commit --------------------------------------------------------------------------------

    /// Record a finished turn: usage per call with the predicted hit, calibration, idempotent by
    /// `advancementKey` (a second call answers `duplicate` and journals nothing).
    pub fn commit_turn(&mut self, input: &CommitInput) -> Result<CommitOutcome> {
        if self.st.commit_keys.contains(&input.advancement_key) {
            return Ok(CommitOutcome {
                status: "duplicate".into(),
            });
        }
        // A message the core cannot read (quarantined at assemble) is not an assistant call.
        let msgs: Vec<Message> = input
            .messages
            .iter()
            .map(|j| {
                crate::message::parse_host(j)
                    .message()
                    .cloned()
                    .unwrap_or_else(Message::empty)
            })
            .collect();
        let ws: Vec<u64> = input
            .messages
            .iter()
            .map(|j| tokens::weighted_chars(j))
            .collect();
        let stat = self.static_tokens();
        let asst: Vec<usize> = (0..msgs.len())
            .filter(|&k| msgs[k].role_str() == "assistant" && msgs[k].usage().is_some())
            .collect();
        let out_w: u64 = self.st.out.iter().map(|k| k.1).sum();
        let first_w = self.st.turn.first_w;
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
            let predicted = cost::floor_block(stat + self.tokens(shared_w), cost::DS_BLOCK);
            let model = msgs[k]
                .raw()
                .get("model")
                .and_then(Value::as_str)
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
        let calib = match (first_w, asst.first()) {
            (Some(fw), Some(&k)) => {
                let y = msgs[k].usage().map(|u| u.prompt()).unwrap_or(0);
                (y > 0).then(|| [fw + ws[..k].iter().sum::<u64>(), y])
            }
            _ => None,
        };
        // With one assemble for the whole turn, the last request was output + turn messages
        // up to the last call; with one assemble per call the output already holds them.
        let req_add = match asst.last() {
            Some(&k) if self.st.turn.shared.len() <= 1 => input.messages[..k]
                .iter()
                .zip(&ws)
                .map(|(j, w)| OutKey(fingerprint::short_key(&fingerprint::message_hash(j)), *w))
                .collect(),
            _ => Vec::new(),
        };
        if !(cost_usd.is_finite() && uncached_usd.is_finite()) {
            return Err(Error::Internal("non-finite cost".into()));
        }
        self.note_limits(input.context_window, None)?;
        self.emit(Event::Commit {
            key: input.advancement_key.clone(),
            rows,
            calib,
            req_add,
            cost_usd,
            uncached_usd,
            turn_w: ws.iter().sum(),
        })?;
        Ok(CommitOutcome {
            status: "committed".into(),
        })
    }

    // ---- summaries -----------------------------------------------------------------------------

    /// For `maintain`: an LLM summary worth preparing ahead of the next fold, if any (see the
    /// module doc). Issuing one is journaled; at most one is pending.
    pub fn summary_request(&mut self, now_ms: f64) -> Option<SummaryRequest> {
        self.summary_request_inner(now_ms).ok().flatten()
    }

    fn summary_request_inner(&mut self, now_ms: f64) -> Result<Option<SummaryRequest>> {
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
        let cuts = self.live_cuts(count);
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
        if self.tokens(fold::span_w(&self.st.records, from, c)) < foreseeable {
            return Ok(None);
        }
        if let Some(r) = &self.st.ready_summary {
            // Already have one; refresh only when the region grew by another minFoldTokens (a
            // fold uses a summary covering at least half of its region).
            if r.from == from && self.tokens(fold::span_w(&self.st.records, r.to, c)) < foreseeable
            {
                return Ok(None);
            }
        }
        let fold_id = self.next_fold_id();
        let protected = fold::protected_groups(&self.st.records, from, c);
        let digests: Vec<&Digest> = (from..c)
            .filter(|i| protected.binary_search(i).is_err())
            .filter_map(|i| self.st.records.get(i as usize).map(|r| &r.digest))
            .collect();
        let cap = fold::fold_cap_chars(self.cfg.fold_record_budget);
        let (system, prompt) = digest::summary_prompt(&fold_id, &digests, cap);
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

    // ---- stats ---------------------------------------------------------------------------------

    /// Session statistics (JSON object, camelCase).
    pub fn stats(&self) -> Value {
        let t = &self.st.totals;
        let c = &self.st.counters;
        let prompt = t.input + t.cache_read + t.cache_write;
        let pct = |a: u64, b: u64| {
            if b == 0 {
                0.0
            } else {
                round2(a as f64 * 100.0 / b as f64)
            }
        };
        let records_w: u64 = self.st.segs.iter().map(|s| s.w).sum();
        json!({
            "sessionId": self.st.session_id,
            "seq": self.st.seq,
            "model": self.st.model,
            "managed": model_managed(&self.cfg, self.st.model.as_deref()),
            "calls": t.calls,
            "promptTokens": prompt,
            "inputTokens": t.input,
            "cacheRead": t.cache_read,
            "cacheWrite": t.cache_write,
            "outputTokens": t.output,
            "predictedHits": t.predicted,
            "hitPct": pct(t.cache_read, prompt),
            "predictedHitPct": pct(t.predicted, prompt),
            "predictionErrorPct": pct(t.predicted_abs_err, prompt),
            "folds": {
                "count": c.folds,
                "priced": c.priced_folds,
                "emergency": c.emergency_folds,
                "compact": c.compact_folds,
                "tokensFolded": c.folded_tokens,
                "condensed": c.condenses,
                "segments": self.st.segs.len(),
                "recordTokens": self.tokens(records_w),
            },
            "repairs": c.repairs,
            "divergences": c.divergences,
            "lastDivergence": self.st.last_divergence,
            "repins": c.repins,
            "calibration": {
                "samples": self.st.calibration.samples(),
                "meanAbsErrorPct": round2(self.st.calibration.mean_abs_error_pct()),
                "staticTokens": self.static_tokens(),
                "trusted": self.calibrated(),
                "tokensPerWeightedChar": self.st.calibration.slope_b(),
            },
            "costUsd": round6(t.cost_usd),
            "uncachedUsd": round6(t.uncached_usd),
            "savedUsd": round6(t.uncached_usd - t.cost_usd),
            "artifacts": c.artifacts,
            "summaries": {
                "requested": c.summaries_requested,
                "ok": c.summaries_ok,
                "failed": c.summaries_failed,
                "used": c.summaries_used,
                "pending": self.st.pending_summary.is_some(),
            },
            "breaker": { "lowSavingStreak": self.st.breaker_low, "tripped": self.st.breaker_tripped() },
            "pinned": self.st.pinned,
            "headLen": self.st.head_len,
            "liveFrom": self.st.live_from,
            "recorded": self.st.records.len(),
            "quarantined": self.st.records.iter().filter(|r| r.q.is_some()).count(),
            "recentCalls": self.st.rows.len(),
        })
    }

    /// The recent per-call rows (oldest first) with their price: prompt, reported hit and miss,
    /// predicted hit, the cost and the cost of the same call with no cache hit (USD).
    pub fn call_rows(&self) -> Value {
        let rows: Vec<Value> = self
            .st
            .rows
            .iter()
            .map(|r| {
                let p = cost::price_for(&self.cfg, r.model.as_deref(), r.at);
                let prompt = r.input + r.cache_read + r.cache_write;
                json!({
                    "at": r.at,
                    "model": r.model,
                    "prompt": prompt,
                    "hit": r.cache_read,
                    "miss": r.input + r.cache_write,
                    "output": r.output,
                    "predicted": r.predicted,
                    "costUsd": round6(cost::cost_usd(&p, r.cache_read, r.input + r.cache_write, r.output)),
                    "uncachedUsd": round6(cost::cost_usd(&p, 0, prompt, r.output)),
                })
            })
            .collect();
        Value::Array(rows)
    }
}

/// [`fold::span_w`]`(records, c, to)` for every `c` of the ascending `cuts`, in one pass from
/// the end: a fold of a long session weighs tens of thousands of cuts, and a sum per cut made
/// the first fold of a 100,000-message session quadratic.
fn tails_w(records: &[MsgRecord], cuts: &[u32], to: u32) -> Vec<u64> {
    let end = (to as usize).min(records.len());
    let mut out = vec![0; cuts.len()];
    let (mut pos, mut acc) = (end, 0u64);
    for (k, &c) in cuts.iter().enumerate().rev() {
        let a = (c as usize).min(end);
        if a < pos {
            acc += records[a..pos].iter().map(|r| r.w).sum::<u64>();
            pos = a;
        }
        out[k] = acc;
    }
    out
}

/// Strict pairing repair of an echoed list (see `Session::echo_plan`): the plan order, the
/// synthetic messages and their weighted chars. Identity (`0..count`, nothing synthetic) when
/// the list already pairs.
fn echo_repair(
    count: u32,
    given: &BTreeMap<u32, &str>,
    report: &mut AssembleReport,
) -> (Vec<i64>, Vec<String>, u64) {
    let mut shapes = Vec::with_capacity(count as usize);
    let mut ts: Vec<f64> = Vec::with_capacity(count as usize);
    for i in 0..count {
        let host = given.get(&i).map(|j| crate::message::parse_host(j));
        let m = host.as_ref().and_then(|h| h.message());
        shapes.push(m.map_or_else(Shape::other, Shape::of));
        ts.push(m.and_then(Message::timestamp).unwrap_or(f64::NAN));
    }
    let r = pairing::repair(&shapes, false);
    if r.is_identity() {
        return ((0..i64::from(count)).collect(), Vec::new(), 0);
    }
    report.repairs = r
        .repairs
        .iter()
        .map(|x| RepairReport {
            kind: x.kind.clone(),
            call_id: x.call_id.clone(),
            position: x.position as u32,
        })
        .collect();
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

fn round2(x: f64) -> f64 {
    if x.is_finite() {
        (x * 100.0).round() / 100.0
    } else {
        0.0
    }
}

fn round6(x: f64) -> f64 {
    if x.is_finite() {
        (x * 1e6).round() / 1e6
    } else {
        0.0
    }
}

/// SplitMix64 finaliser: deterministic spread for spot-check positions.
fn splitmix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Tool arguments reduced to what a digest of the result needs: top-level scalars, strings of
/// at most 512 chars (paths, commands). Bounds the journal: a `write` call's file body never
/// enters state twice.
fn bound_args(args: &Value) -> Value {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tails_match_span_sums() {
        let recs: Vec<MsgRecord> = (0..9u64)
            .map(|w| MsgRecord {
                h: String::new(),
                w: w * w + 1,
                shape: Shape::default(),
                ts: None,
                protected: false,
                digest: Digest::default(),
                q: None,
            })
            .collect();
        for to in [0, 4, 9, 20] {
            for cuts in [vec![], vec![0], vec![1, 3, 3, 8], vec![2, 5, 12, 30]] {
                let want: Vec<u64> = cuts.iter().map(|&c| fold::span_w(&recs, c, to)).collect();
                assert_eq!(tails_w(&recs, &cuts, to), want, "to {to} cuts {cuts:?}");
            }
        }
    }

    #[test]
    fn globs() {
        assert!(glob_match("*deepseek*", "DeepSeek/deepseek-flash"));
        assert!(glob_match("deepseek-*", "deepseek-v4-pro"));
        assert!(!glob_match("deepseek-*", "openai/gpt-5"));
        assert!(glob_match("*", ""));
        assert!(glob_match("a*b*c", "aXbYc"));
        assert!(!glob_match("a*b*c", "aXbY"));
    }

    #[test]
    fn gating() {
        let mut cfg = Config::default();
        assert!(model_managed(&cfg, Some("deepseek/deepseek-flash")));
        assert!(!model_managed(&cfg, Some("openai/gpt-5")));
        assert!(!model_managed(&cfg, None));
        cfg.mode = Mode::Always;
        assert!(model_managed(&cfg, None));
        cfg.mode = Mode::Off;
        assert!(!model_managed(&cfg, Some("deepseek-flash")));
    }

    #[test]
    fn bounded_args_drop_bodies() {
        let big = "x".repeat(600);
        let v = bound_args(&json!({"path": "a.md", "content": big, "n": 3, "o": {"x": 1}}));
        assert_eq!(v, json!({"path": "a.md", "n": 3}));
        assert_eq!(bound_args(&json!("str")), Value::Null);
    }
}
