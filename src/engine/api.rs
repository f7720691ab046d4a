//! The engine's API types, as JS sees them (camelCase JSON).

use crate::cost;
pub use crate::engine::state::{CommitStatus, DivergeAction, FoldReason};
use crate::error::{Error, Result};
pub use crate::pairing::RepairKind;
use serde::{Deserialize, Serialize};

/// One supplied host message.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct IndexedJson {
    /// Host index.
    pub index: u32,
    /// `JSON.stringify` of the host message.
    pub json: String,
}

/// Input of [`Session::assemble`](crate::engine::Session::assemble) and [`Session::compact`](crate::engine::Session::compact).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct AssembleInput {
    /// Host history length.
    pub count: u32,
    /// The indices [`Session::need`](crate::engine::Session::need) asked for (or all of them).
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
    /// When another session of this process last sent a request on this model, ms since the
    /// epoch (the host's background requests, such as a skill review, run as sessions of their
    /// own and send this session's prefix): the provider's cache lifetime runs from the latest
    /// of this, the session's own last request and its last committed call.
    pub last_request_ms: Option<f64>,
    /// Keys ([`AssemblePlan::synthetic_keys`]) of synthetic messages whose texts the caller
    /// holds from an earlier plan of this session: the plan leaves those texts out (`""`).
    pub known: Vec<String>,
    /// The host passes the current turn apart from `messages` (OpenClaw's `assemble.prompt`;
    /// it appends the prompt and the turn's tool calls after the returned messages). A list that
    /// then ends with an assistant reply and no open call ends where the last turn ended, so an
    /// emergency fold may take that whole turn, as its last resort: when no earlier cut brings
    /// the prompt under the host's budget or pre-turn trigger.
    pub prompt_pending: bool,
}

/// Input of [`Session::compact_request`](crate::engine::Session::compact_request): the host's `compact()`, which carries no messages.
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

/// Answer of [`Session::compact_request`](crate::engine::Session::compact_request).
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
    /// Nothing folds and no compaction is needed: the core's estimate of the next call and the
    /// host's projection (`currentTokenCount`, when given) are both under `host_threshold`. The
    /// shim then declines in the host's words instead of handing the call to the host's
    /// compaction, whose summary would replace the history (exact text lost, the cached prefix
    /// broken) for a context that needs no room. False when the core has no estimate (a model it
    /// does not manage, no history recorded) or a fold is pending.
    pub fits: bool,
    /// Nothing folds because a fold now would save under 5 % (the history is folded down to its
    /// live tail, or little of it lies before the tail). With `fits`, the shim answers in the
    /// host's own words for this case ("already compacted: …", which OpenClaw reports as
    /// "Compaction skipped") rather than telling it apart by `reason`'s text.
    pub already_compacted: bool,
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

/// Output of [`Session::assemble`](crate::engine::Session::assemble).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AssemblePlan {
    /// Output order: `i >= 0` is host index `i`, `i < 0` is `synthetic[-i-1]`.
    pub order: Vec<i64>,
    /// Synthetic message JSON (fold records, pairing repairs); `""` for a text the caller
    /// said it holds ([`AssembleInput::known`]).
    pub synthetic: Vec<String>,
    /// The key of each `synthetic` entry (the output key of its text), for the caller to keep
    /// the text by; empty when the plan gives none (an echo).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub synthetic_keys: Vec<String>,
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
    /// `truncate` | `repin` | `evict`.
    pub action: DivergeAction,
    /// Where the incoming messages from `at` on were found among the recorded ones (the first
    /// three, `null` for one not recorded): the shape of the change for logs and the doctor.
    #[serde(default)]
    pub found: Vec<Option<u32>>,
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
    pub reason: FoldReason,
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
    pub kind: RepairKind,
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

/// A host message the core could not read exactly (see [`MsgRecord::q`](crate::record::MsgRecord::q)). It stays in the
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

/// Input of [`Session::commit_turn`](crate::engine::Session::commit_turn).
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

/// Output of [`Session::commit_turn`](crate::engine::Session::commit_turn).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CommitOutcome {
    /// `committed` | `duplicate`.
    pub status: CommitStatus,
}

/// An LLM summary for JS to run in `maintain`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SummaryRequest {
    /// Pass back to [`Session::accept_summary`](crate::engine::Session::accept_summary).
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

// ---- the inputs from the binding's parts -----------------------------------------------------

impl AssembleInput {
    /// The input from its JSON header (every field but `messages`) and the supplied messages
    /// as parallel lists of host indices and message JSON texts.
    pub fn from_parts(header: &str, indices: Vec<u32>, jsons: Vec<String>) -> Result<Self> {
        let mut input: AssembleInput = serde_json::from_str(header)?;
        if indices.len() != jsons.len() {
            return Err(Error::Input(format!(
                "{} indices for {} messages",
                indices.len(),
                jsons.len()
            )));
        }
        input.messages = Vec::with_capacity(jsons.len());
        for (index, json) in indices.into_iter().zip(jsons) {
            input.messages.push(IndexedJson { index, json });
        }
        Ok(input)
    }
}

impl CommitInput {
    /// The input from its JSON header (every field but `messages`) and the turn's message
    /// JSON texts.
    pub fn from_parts(header: &str, messages: Vec<String>) -> Result<Self> {
        let mut input: CommitInput = serde_json::from_str(header)?;
        input.messages = messages;
        Ok(input)
    }
}
