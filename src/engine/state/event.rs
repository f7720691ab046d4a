//! The journal's events: one state change each, with every value the change needs inside
//! (nothing is recomputed on replay), and their JSON form. The line format and replay are
//! [`crate::engine::journal`]'s; [`super::SessionState::apply`] is the only reader.

use super::records::{
    ArtifactNote, CallArg, CallRow, DivergeAction, FoldReason, MsgRecord, OutKey, Segment,
};
use crate::topics::llm::Answer;
use crate::topics::terms::TurnTerms;
use serde::{Deserialize, Serialize};

/// One state change. Every value the change needs is inside (nothing is recomputed on replay).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
// Externally tagged (`{"commit":{…}}`): an internally tagged enum buffers its content, which
// breaks `serde_json`'s `arbitrary_precision` numbers (f64 fields fail to parse back).
#[serde(rename_all = "camelCase")]
pub enum Event {
    /// Model id / system-prompt-addition hash changed.
    Env {
        /// Model id.
        model: Option<String>,
        /// SHA-1 of `systemPromptAddition`.
        spa: Option<String>,
    },
    /// Incoming history diverged from the recorded one.
    Diverge {
        /// First differing index.
        at: u32,
        /// Cause code ([`crate::engine::fingerprint::Cause::code`]).
        cause: String,
        /// `truncate` (drop records from `at`), `repin` (fresh structure) or `none`.
        action: DivergeAction,
    },
    /// A new host message.
    Ingest {
        /// Host index (must equal the number of records).
        i: u32,
        /// What is kept about it (boxed: the largest variant).
        rec: Box<MsgRecord>,
        /// Its tool calls (assistant only), bounded, kept until their results arrive.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        calls: Vec<CallArg>,
    },
    /// The head got pinned.
    Pin {
        /// Head length.
        len: u32,
        /// Head fingerprint.
        fp: String,
        /// The head's message JSON (empty when too large to keep).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        json: Vec<String>,
    },
    /// The host stopped sending the `len` oldest messages it still sent (a front eviction),
    /// and now puts `skip` messages of its own in front of the rest.
    Evict {
        /// Messages evicted.
        len: u32,
        /// Leading host messages the engine neither records nor sends.
        #[serde(default)]
        skip: u32,
    },
    /// A fold appended a segment.
    Fold {
        /// The segment.
        seg: Box<Segment>,
        /// `priced` | `emergency` | `compact`.
        reason: FoldReason,
        /// Weighted chars removed from the prompt.
        #[serde(rename = "foldedW")]
        folded_w: u64,
        /// Estimated tokens removed from the prompt.
        #[serde(rename = "foldedTokens")]
        folded_tokens: u64,
        /// Saved less than 5 % of the estimate (circuit breaker).
        low: bool,
    },
    /// All segments were condensed into one.
    Condense {
        /// The replacing segment.
        seg: Box<Segment>,
    },
    /// The assembled output changed.
    Out {
        /// Keys of the previous output kept.
        keep: u32,
        /// Keys appended.
        add: Vec<OutKey>,
        /// Weighted chars shared with the previous request (hit prediction).
        shared: u64,
        /// Pairing repairs in this output.
        repairs: u32,
    },
    /// A turn was committed.
    Commit {
        /// Advancement key.
        key: String,
        /// One row per assistant message with usage.
        rows: Vec<CallRow>,
        /// Calibration point `[weighted chars, prompt tokens]`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        calib: Option<[u64; 2]>,
        /// Calibration points of the turn's later calls, in call order (absent in journals of
        /// 0.1.x, which calibrated from the first call only).
        #[serde(default, rename = "calibMore", skip_serializing_if = "Vec::is_empty")]
        calib_more: Vec<[u64; 2]>,
        /// Turn messages that were part of the last request (hit prediction).
        #[serde(default, rename = "reqAdd")]
        req_add: Vec<OutKey>,
        /// USD spent by the turn's calls.
        #[serde(default, rename = "costUsd")]
        cost_usd: f64,
        /// USD the calls would have cost uncached.
        #[serde(default, rename = "uncachedUsd")]
        uncached_usd: f64,
        /// Weighted chars of the turn's messages (how much a turn adds to the next prompt).
        #[serde(default, rename = "turnW")]
        turn_w: u64,
    },
    /// A summary request was handed out.
    SummaryReq {
        /// Request id.
        id: String,
        /// First host index.
        from: u32,
        /// One past the last.
        to: u32,
        /// Issue time (ms).
        at: f64,
    },
    /// A summary came back (or failed).
    SummaryDone {
        /// Request id.
        id: String,
        /// Usable text.
        ok: bool,
        /// The text (bounded).
        text: String,
    },
    /// A tool result was shrunk to an artifact.
    Artifact {
        /// The note.
        note: ArtifactNote,
    },
    /// The host's limits as last seen: the model's context window (from which the host derives
    /// its pre-turn compaction threshold) and the pre-prompt token budget.
    Limits {
        /// Model context window (tokens).
        #[serde(default)]
        window: Option<u64>,
        /// Token budget of the last pre-prompt assemble.
        #[serde(default)]
        budget: Option<u64>,
    },
    /// Fold at the next assemble (host compaction request without messages).
    ForceFold {
        /// Set or cleared.
        on: bool,
    },
    /// A committed turn entered topic segmentation (`topics.enabled`).
    Turn {
        /// Record index of the turn's first message.
        from: u32,
        /// Time of the turn (ms), for the idle-gap rule.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        at: Option<f64>,
        /// The turn's terms (bounded; the segmenter's whole input).
        terms: Box<TurnTerms>,
    },
    /// A turn is kept verbatim by the folds that cover it from now on (`cachefold_pin`).
    PinTurn {
        /// Turn number (`t<k>`).
        turn: u32,
    },
    /// A layer-2 topic check (`topics.useLlm`) was handed out.
    TopicReq {
        /// Request id.
        id: String,
        /// Turn number asked about (`t<k>`).
        turn: u32,
        /// Issue time (ms).
        at: f64,
    },
    /// A layer-2 topic check came back: the parsed answer, or none (failed or malformed).
    TopicDone {
        /// Request id.
        id: String,
        /// The call returned text.
        ok: bool,
        /// The parsed answer (applied with `Segmenter::apply_llm`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        answer: Option<Answer>,
    },
}
