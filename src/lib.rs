//! # cachefold core
//!
//! The pure core of an OpenClaw context engine for prefix-caching providers (DeepSeek first).
//! It decides what the model sees on every call so that the request bytes of call N+1 begin
//! with the request bytes of call N, folds old history only when a cost model says it pays,
//! and shrinks oversized tool output before the model first sees it.
//!
//! ## Data flow
//!
//! ```text
//! OpenClaw ──assemble(messages)──▶ js/engine.js ──need(count)──────────▶ engine::Session
//!                                   (stringifies only the indices asked)  │ fingerprint, digest,
//!                                  ◀──plan: host indices + synthetic msgs─┘ fold?, pairing repair
//!          ◀── host objects in plan order (bytes untouched)
//! js/store.js ◀── journal lines / snapshot / fold regions (the core never touches files)
//! tool_result_persist / middleware ──▶ tools::shrink ──▶ artifact text + preview
//! ```
//!
//! ## The I/O-free contract
//!
//! Nothing under `src/` reads files, the clock or the environment (`tests/purity.rs` enforces
//! it); the replay bench and the Node addon are crates of their own (`crates/bench`,
//! `crates/native`). Time arrives as `now_ms`, configuration as a
//! [`Config`], host messages as JSON text; what must be stored leaves as data (journal lines,
//! snapshot text, artifact text with its content address). The same code therefore runs in
//! wasm inside OpenClaw, natively in the bench, and under property tests.
//!
//! ## Invariants
//!
//! * **Append-only**: the assembled output of call N is a prefix of call N+1's unless a fold
//!   or a host-caused divergence is declared in the report.
//! * **Pinned head**: the first `prefixLockCount` messages (extended to a pairing cut point)
//!   never change or move; they are fingerprinted with SHA-1.
//! * **Folds are appended**: head + fold segment 1..k + live tail; fold k+1 leaves head and
//!   segments 1..k byte-identical.
//! * **Atomic tool groups**: an assistant tool call and its results are never separated; every
//!   output passes [`pairing::repair`], which never drops a message.
//! * **Lossless**: folded regions and shrunk outputs are stored by the shim and recoverable by
//!   id and range.
//!
//! ## Modules
//!
//! `docs/architecture.md` describes the rooms, the data flow and which invariant each test
//! guards.
//!
//! | module | job |
//! |---|---|
//! | [`config`], [`error`] | every key and default with validation; the one error enum with stable codes |
//! | [`message`] | lossless mirror of OpenClaw's `AgentMessage` with typed views |
//! | [`text`] | whitespace folding and word-safe cuts |
//! | [`cost`], [`tokens`] | price table, DeepSeek block arithmetic, the fold cost model; token estimates |
//! | [`pairing`] | DeepSeek-strict tool-call pairing: validate, repair, cut points |
//! | [`digest`] | bounded per-message extracts, scanners, runtime-churn collapse |
//! | [`record`] | what the engine keeps per host message (hash, weight, shape, digest) |
//! | [`fold`] | cut boundaries, protected groups, fold records, the summary prompt |
//! | [`engine`] | the session: API, gating, history/divergence, fold policy, output, turns, state, journal |
//! | [`tools`] | tool-output safety and recovery: shrink, details, defaults, recover, search |
//! | [`topics`] | incremental topic segmentation of completed turns: stable `t<k>` / `T<n>` ids, frozen boundaries, layer-2 prompt/parser (used by the engine's folds, see `engine::topics`) |
//! | [`lessons`] | workspace lessons: parse/render, classify the first request, select, stale, redact, capture |
#![deny(missing_docs)]

pub mod config;
mod enums;
pub mod error;
pub mod message;

#[cfg(target_arch = "wasm32")]
mod wasm;

pub use config::Config;
pub use error::{Error, Result};
pub use message::{Message, Part, Role, ToolCall, Usage};

/// `v` as compact JSON text. The core's types serialise infallibly (plain structs, string or
/// integer map keys), so a failure here is a bug in a `Serialize` impl.
pub fn to_json<T: serde::Serialize + ?Sized>(v: &T) -> String {
    serde_json::to_string(v).expect("the core's types serialise to JSON")
}

/// `!b`: the `skip_serializing_if` of a `false` flag (state files leave it out; it reads back as
/// `false`).
pub(crate) fn is_false(b: &bool) -> bool {
    !*b
}

/// `s` as a JSON string literal (how error messages quote a value).
pub fn quoted(s: &str) -> String {
    to_json(s)
}

/// A JSON object of `members`, in order.
pub fn object_of<const N: usize>(members: [(&str, serde_json::Value); N]) -> serde_json::Value {
    serde_json::Value::Object(
        members
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect(),
    )
}

/// Lowercase hex SHA-1 of `bytes` (fingerprints and content-addressed artifact names): the text
/// of a [`record::MsgHash`], which writes its 40 chars.
pub fn fingerprint_hex(bytes: &[u8]) -> String {
    record::MsgHash::sha1(bytes).hex()
}

/// A file-system-safe name for a host-provided identifier (session ids): keeps
/// `[A-Za-z0-9_-]` (at most 64 of them) and always appends 12 hex digits of the SHA-1 of the
/// full original, so distinct ids never collide and `..`, `/`, `\`, NUL or an empty id can
/// never name anything outside the parent directory.
pub fn safe_name(id: &str) -> String {
    let mut kept = String::new();
    for c in id
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
        .take(64)
    {
        kept.push(c);
    }
    if kept.is_empty() {
        kept.push_str("session");
    }
    let h = fingerprint_hex(id.as_bytes());
    format!("{kept}-{}", &h[..12])
}

#[cfg(test)]
mod lib_tests {
    use super::*;

    #[test]
    fn sha1_known_vector() {
        assert_eq!(
            fingerprint_hex(b"abc"),
            "a9993e364706816aba3e25717850c26c9cd0d89d"
        );
    }

    #[test]
    fn safe_names_cannot_escape() {
        for id in [
            "../../etc",
            "/abs/path",
            "a\\b",
            "",
            "..",
            "x\0y",
            "ünï/cödé",
        ] {
            let n = safe_name(id);
            assert!(
                n.chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_'),
                "{n}"
            );
            assert!(!n.is_empty() && n.len() <= 77);
        }
        assert_ne!(safe_name("a/b"), safe_name("a\\b"));
        assert_eq!(safe_name("0b8c-uuid"), safe_name("0b8c-uuid"));
    }
}
pub mod chart;
pub mod cost;
pub mod digest;
pub mod engine;
pub mod fold;
pub mod lessons;
pub mod pairing;
pub mod providers;
pub mod record;
pub mod text;
pub mod tokens;
pub mod tools;
pub mod topics;
