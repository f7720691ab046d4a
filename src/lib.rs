//! # cachefold core
//!
//! (architecture map: filled in below as modules land)
#![deny(missing_docs)]

pub mod config;
pub mod error;
pub mod message;

#[cfg(target_arch = "wasm32")]
mod wasm;

pub use config::Config;
pub use error::{Error, Result};
pub use message::{Message, Part, Role, ToolCall, Usage};

use sha1::{Digest as _, Sha1};

/// Lowercase hex SHA-1 of `bytes` (fingerprints and content-addressed artifact names).
pub fn fingerprint_hex(bytes: &[u8]) -> String {
    let digest = Sha1::digest(bytes);
    let mut s = String::with_capacity(40);
    for b in digest {
        s.push(char::from_digit(u32::from(b >> 4), 16).unwrap_or('0'));
        s.push(char::from_digit(u32::from(b & 15), 16).unwrap_or('0'));
    }
    s
}

/// A file-system-safe name for a host-provided identifier (session ids): keeps
/// `[A-Za-z0-9_-]` (at most 64 of them) and always appends 12 hex digits of the SHA-1 of the
/// full original, so distinct ids never collide and `..`, `/`, `\`, NUL or an empty id can
/// never name anything outside the parent directory.
pub fn safe_name(id: &str) -> String {
    let mut kept: String = id.chars().filter(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_').take(64).collect();
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
        assert_eq!(fingerprint_hex(b"abc"), "a9993e364706816aba3e25717850c26c9cd0d89d");
    }

    #[test]
    fn safe_names_cannot_escape() {
        for id in ["../../etc", "/abs/path", "a\\b", "", "..", "x\0y", "ünï/cödé"] {
            let n = safe_name(id);
            assert!(n.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_'), "{n}");
            assert!(!n.is_empty() && n.len() <= 77);
        }
        assert_ne!(safe_name("a/b"), safe_name("a\\b"));
        assert_eq!(safe_name("0b8c-uuid"), safe_name("0b8c-uuid"));
    }
}
pub mod pairing;
pub mod transcript;
#[cfg(feature = "bench")]
pub mod bench;
pub mod cost;
pub mod tokens;
