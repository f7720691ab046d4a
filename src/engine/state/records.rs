//! The state's record types: what the engine remembers per message, segment, call and turn,
//! and the outcome kinds its events carry (stable strings in the journal and in reports).
//! Pure data: the state ([`super::SessionState`]) holds them, events ([`super::Event`]) carry them.

use crate::enums::string_enum;
pub use crate::record::MsgRecord;
use serde::Deserialize;
use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeMap;

string_enum! {
    /// What a divergence did to the recorded history (journal `diverge.action`, report
    /// `divergence.action`).
    #[derive(Default)]
    pub enum DivergeAction {
        /// Records from the first differing index on were dropped (divergence in the live tail).
        Truncate = "truncate",
        /// Fresh structure over the incoming history (divergence inside the head or a fold).
        Repin = "repin",
        /// Nothing changed in the records.
        #[default]
        None = "none",
        /// The host stopped sending its oldest messages; the records stay (`base` moved).
        Evict = "evict",
    }
}

string_enum! {
    /// Why a fold was made (journal `fold.reason`, report `fold.reason`). A journal line with
    /// a reason not listed here is refused like any unreadable line (replay stops there and
    /// reports it): counting it under one of these would make the stats lie.
    pub enum FoldReason {
        /// The cost model said the fold pays for itself.
        Priced = "priced",
        /// Over the emergency threshold: folded whatever the price.
        Emergency = "emergency",
        /// Requested by the host (`compact`) or forced.
        Compact = "compact",
        /// Live messages the host evicted, folded so the session keeps them in a record.
        Evicted = "evicted",
    }
}

string_enum! {
    /// Outcome of `commit_turn`, as the host's `commitTurn` contract spells it.
    pub enum CommitStatus {
        /// The turn was recorded.
        Committed = "committed",
        /// The advancement key was already recorded: nothing changed.
        Duplicate = "duplicate",
    }
}

/// A tool call waiting for its result: name and bounded arguments.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CallArg {
    /// Call id.
    pub id: String,
    /// Tool name.
    pub name: String,
    /// Arguments, reduced to short scalar fields (paths, commands, numbers).
    pub args: Value,
}

/// One fold segment of the output: a synthetic record message followed by the protected host
/// messages of the region, in host order.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Segment {
    /// `f<k>` for a fold, `c<k>` for a condensed record.
    pub id: String,
    /// First host index covered.
    pub from: u32,
    /// One past the last host index covered.
    pub to: u32,
    /// Host indices kept verbatim after the record.
    pub protected: Vec<u32>,
    /// The record message JSON (`{"role":"user","content":[{"type":"text","text":…}],"timestamp":…}`).
    pub json: String,
    /// Output key of `json` ([`crate::record::MsgHash::short_key`] of its SHA-1).
    pub key: String,
    /// Weighted characters of `json`.
    pub w: u64,
    /// Weighted characters of the protected messages.
    pub protected_w: u64,
    /// Fold ids whose raw messages back this segment (itself for a fold).
    pub covers: Vec<String>,
    /// Record text came from an LLM summary.
    #[serde(default)]
    pub summary: bool,
}

/// Key of one output message: short content hash and weighted characters.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct OutKey(pub String, pub u64);

/// Usage of one model call, with the engine's predicted cache hit.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CallRow {
    /// When the turn was committed (ms).
    pub at: f64,
    /// Model id of the call, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Uncached input tokens.
    pub input: u64,
    /// Cached input tokens (reported hit).
    pub cache_read: u64,
    /// Cache-write tokens.
    pub cache_write: u64,
    /// Output tokens.
    pub output: u64,
    /// Predicted hit: `floor_block(static + shared prefix, 128)`.
    pub predicted: u64,
}

/// Running totals over every committed call.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Totals {
    /// Model calls.
    pub calls: u64,
    /// Uncached input tokens.
    pub input: u64,
    /// Cached input tokens.
    pub cache_read: u64,
    /// Cache-write tokens.
    pub cache_write: u64,
    /// Output tokens.
    pub output: u64,
    /// Predicted hit tokens.
    pub predicted: u64,
    /// Sum over calls of |predicted − reported hit|.
    pub predicted_abs_err: u64,
    /// USD actually spent (price table).
    pub cost_usd: f64,
    /// USD the same calls would have cost with no cache hit at all.
    pub uncached_usd: f64,
}

/// Event counters for stats.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Counters {
    /// Folds made (ids `f1..`).
    pub folds: u64,
    /// Of which priced / emergency / compact.
    pub priced_folds: u64,
    /// Emergency folds.
    pub emergency_folds: u64,
    /// Host- or force-requested folds.
    pub compact_folds: u64,
    /// Weighted characters folded away (records and kept messages subtracted).
    pub folded_w: u64,
    /// Estimated tokens removed from the prompt by folds (at fold time).
    pub folded_tokens: u64,
    /// Condensations (ids `c1..`).
    pub condenses: u64,
    /// Pairing repairs in assembled outputs (counted when an output changes).
    pub repairs: u64,
    /// Re-pins after a divergence inside the head or a folded region.
    pub repins: u64,
    /// Divergences by cause code.
    pub divergences: BTreeMap<String, u64>,
    /// Artifacts noted.
    pub artifacts: u64,
    /// Summary requests issued.
    pub summaries_requested: u64,
    /// Summaries received.
    pub summaries_ok: u64,
    /// Summaries failed or timed out.
    pub summaries_failed: u64,
    /// Folds that used an LLM summary.
    pub summaries_used: u64,
}

/// Accumulator for the turn in progress (reset by `commit_turn`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct TurnAcc {
    /// Per distinct assembled output this turn: weighted chars shared with the previous request.
    pub shared: Vec<u64>,
    /// Weighted chars of the first output assembled this turn.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_w: Option<u64>,
    /// Weighted chars of each distinct output assembled this turn (one per model call when
    /// the host assembles every call), for the per-call calibration points at commit.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub out_ws: Vec<u64>,
}

/// A summary request handed to JS and not yet answered.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PendingSummary {
    /// Request id.
    pub id: String,
    /// First host index summarised.
    pub from: u32,
    /// One past the last.
    pub to: u32,
    /// When it was issued (ms).
    pub at: f64,
}

/// A summary ready for the fold that covers exactly `[from, to)`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReadySummary {
    /// Request id.
    pub id: String,
    /// First host index summarised.
    pub from: u32,
    /// One past the last.
    pub to: u32,
    /// Summary text (bounded).
    pub text: String,
}

/// A tool result the host-side middleware shrank to a preview plus an artifact.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ArtifactNote {
    /// Artifact id (SHA-1 hex).
    pub id: String,
    /// Tool that produced it.
    pub tool: String,
    /// Original size in characters.
    pub chars: u64,
    /// When (ms).
    pub at: f64,
}

/// Range and last point of the calibration observations (the engine trusts the fit only once
/// the observed sizes spread; see `SessionState::calibrated`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct CalibGuard {
    /// Smallest weighted-char count observed.
    pub lo: u64,
    /// Largest.
    pub hi: u64,
    /// Last `[weighted chars, prompt tokens]`.
    pub last: Option<[u64; 2]>,
}

/// The last divergence seen, for stats.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DivergenceNote {
    /// First differing index.
    pub at: u32,
    /// Cause code.
    pub cause: String,
    /// What was done.
    pub action: DivergeAction,
}
