//! What the engine remembers about one host message: the record the session state keeps per
//! message and the fold building blocks ([`crate::fold`]) read. Pure data over the lower
//! layers (a [`Shape`] from [`crate::pairing`], a [`Digest`] from [`crate::digest`]), so that
//! `fold` does not import `engine`.

use crate::digest::{Digest, Str};
use crate::pairing::Shape;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// What the engine remembers about one host message (never the message itself).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MsgRecord {
    /// SHA-1 of the message JSON text (the engine's `fingerprint::message_hash`).
    pub h: String,
    /// Weighted characters of the JSON text ([`crate::tokens::weighted_chars`]).
    pub w: u64,
    /// Pairing skeleton.
    pub shape: Shape,
    /// The message's `timestamp` exactly as the host wrote it (numbers keep their text).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ts: Option<Value>,
    /// An assistant message with a tool call reading a protected file: its whole group
    /// survives folds verbatim.
    #[serde(default, skip_serializing_if = "crate::is_false")]
    pub protected: bool,
    /// Bounded extract for fold records.
    pub digest: Digest,
    /// Quarantined: why the host's JSON could not be read exactly (`lone_surrogate`,
    /// `too_deep`, `not_object`, `invalid_json`; see [`crate::message::parse_host`]). The hash
    /// and weight are of the host's exact bytes; the shape and digest come from the sanitised
    /// message, or are opaque (role `Other`, empty digest) when nothing could be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub q: Option<Str>,
}
