//! What the engine remembers about one host message: the record the session state keeps per
//! message and the fold building blocks ([`crate::fold`]) read. Pure data over the lower
//! layers (a [`Shape`] from [`crate::pairing`], a [`Digest`] from [`crate::digest`]), so that
//! `fold` does not import `engine`.

use crate::digest::{Digest, Str};
use crate::pairing::Shape;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Number, Value};
use std::fmt;

/// What the engine remembers about one host message (never the message itself).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MsgRecord {
    /// Hash of the message JSON text (its session's `fingerprint::HashAlgo`).
    pub h: MsgHash,
    /// Weighted characters of the JSON text ([`crate::tokens::weighted_chars`]).
    pub w: u64,
    /// Pairing skeleton.
    pub shape: Shape,
    /// The message's `timestamp` exactly as the host wrote it (numbers keep their text).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ts: Option<Ts>,
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

/// A record's [`MsgRecord::h`]: the content hash of one host message's JSON text
/// ([`crate::engine::fingerprint::HashAlgo`]), written and read as lowercase hex: XXH3-128 (16
/// bytes, 32 hex chars) in sessions this release starts, SHA-1 (20 bytes, 40 hex chars) in
/// sessions an earlier release started, which keep it (see `HashAlgo`); or none (written
/// `""`: a record standing for no host message). 21 bytes inline instead of a hex string and its
/// 24-byte `String`: a long session keeps one per message. The two algorithms never compare
/// equal.
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum MsgHash {
    /// No host message.
    #[default]
    None,
    /// XXH3-128 (big-endian bytes, as `xxhash_rust` writes the hash's hex).
    Xxh3([u8; 16]),
    /// SHA-1 (sessions an earlier release started).
    Sha1([u8; 20]),
}

/// Lowercase hex digits.
const HEX: &[u8; 16] = b"0123456789abcdef";

/// The value of one lowercase hex char (uppercase is refused: it would not be written back as
/// it was read).
fn nibble(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        _ => None,
    }
}

/// The bytes of `N` hex pairs.
fn unhex<const N: usize>(b: &[u8]) -> Option<[u8; N]> {
    let mut out = [0u8; N];
    for (k, o) in out.iter_mut().enumerate() {
        *o = (nibble(*b.get(2 * k)?)? << 4) | nibble(*b.get(2 * k + 1)?)?;
    }
    Some(out)
}

impl MsgHash {
    /// The XXH3-128 of `bytes`.
    pub fn xxh3(bytes: &[u8]) -> MsgHash {
        MsgHash::Xxh3(xxhash_rust::xxh3::xxh3_128(bytes).to_be_bytes())
    }

    /// The SHA-1 of `bytes`.
    pub fn sha1(bytes: &[u8]) -> MsgHash {
        use sha1::{Digest as _, Sha1};
        MsgHash::Sha1(Sha1::digest(bytes).into())
    }

    /// Its bytes (none for [`MsgHash::None`]).
    pub fn bytes(&self) -> &[u8] {
        match self {
            MsgHash::None => &[],
            MsgHash::Xxh3(b) => b,
            MsgHash::Sha1(b) => b,
        }
    }

    /// The hash of 32 (XXH3-128) or 40 (SHA-1) lowercase hex chars, `""` for none; anything
    /// else is `None` (it would not be written back as it was read).
    pub fn from_hex(hex: &str) -> Option<MsgHash> {
        let b = hex.as_bytes();
        match b.len() {
            0 => Some(MsgHash::None),
            32 => unhex(b).map(MsgHash::Xxh3),
            40 => unhex(b).map(MsgHash::Sha1),
            _ => None,
        }
    }

    /// Its text: lowercase hex, or `""` for none.
    pub fn hex(&self) -> String {
        self.hex_of(20)
    }

    /// Its first 16 hex chars: the key of an output message for output-prefix comparison (64
    /// bits: a collision inside one session is vanishingly unlikely and only affects a
    /// statistic).
    pub fn short_key(&self) -> String {
        self.hex_of(8)
    }

    fn hex_of(&self, bytes: usize) -> String {
        self.hex_in(bytes, &mut [0; 40]).to_string()
    }

    /// The text of its first `bytes` bytes (all of them when it has fewer), written in `buf`
    /// (`""` for none): a snapshot writes one per record without a `String` each.
    fn hex_in<'a>(&self, bytes: usize, buf: &'a mut [u8; 40]) -> &'a str {
        let h = self.bytes();
        let n = bytes.min(h.len());
        for (k, &x) in h[..n].iter().enumerate() {
            buf[2 * k] = HEX[usize::from(x >> 4)];
            buf[2 * k + 1] = HEX[usize::from(x & 15)];
        }
        std::str::from_utf8(&buf[..2 * n]).unwrap_or_default()
    }
}

impl PartialEq<str> for MsgHash {
    /// Whether `hex` is its text.
    fn eq(&self, hex: &str) -> bool {
        self.hex_in(20, &mut [0; 40]) == hex
    }
}

impl PartialEq<&str> for MsgHash {
    fn eq(&self, hex: &&str) -> bool {
        *self == **hex
    }
}

impl PartialEq<String> for MsgHash {
    fn eq(&self, hex: &String) -> bool {
        *self == **hex
    }
}

impl PartialEq<MsgHash> for String {
    fn eq(&self, h: &MsgHash) -> bool {
        *h == **self
    }
}

impl fmt::Debug for MsgHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.hex(), f)
    }
}

impl fmt::Display for MsgHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.hex())
    }
}

impl Serialize for MsgHash {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.hex_in(20, &mut [0; 40]))
    }
}

impl<'de> Deserialize<'de> for MsgHash {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<MsgHash, D::Error> {
        let hex = String::deserialize(d)?;
        MsgHash::from_hex(&hex).ok_or_else(|| {
            serde::de::Error::custom("a message hash is 32 or 40 lowercase hex chars or empty")
        })
    }
}

/// A record's [`MsgRecord::ts`]: the host's numeric `timestamp` as a `serde_json::Number`,
/// which keeps its exact text (`1.50`, a 20-digit integer) and is written back byte for byte
/// (24 bytes; a `serde_json::Value` with the crate's features is several times that). Only
/// numbers are recorded (ingest keeps a `timestamp` that is a number). Read through `Value`
/// (code the module has already; a `Number` reader of its own made it 2 KB larger).
#[derive(Clone, PartialEq, Eq)]
pub struct Ts(Number);

impl Ts {
    /// The timestamp of a number (its text, as the host wrote it).
    pub fn of(n: &Number) -> Ts {
        Ts(n.clone())
    }

    /// The number (its text unchanged).
    pub fn number(&self) -> Number {
        self.0.clone()
    }

    /// The number as `Value::as_f64` reads it.
    pub fn as_f64(&self) -> Option<f64> {
        self.0.as_f64()
    }
}

impl fmt::Debug for Ts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0.as_str())
    }
}

impl Serialize for Ts {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(s)
    }
}

impl<'de> Deserialize<'de> for Ts {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Ts, D::Error> {
        match Value::deserialize(d)? {
            Value::Number(n) => Ok(Ts(n)),
            _ => Err(serde::de::Error::custom("a timestamp is a number")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A record written, read and written again is the same bytes: the hash as its hex text
    /// (or `""`), a timestamp's number text however it was written.
    #[test]
    fn a_record_reads_back_byte_identical() {
        for ts in [
            "1763700001000",
            "1.50",
            "-0",
            "1E+5",
            "12345678901234567890123",
        ] {
            for h in [
                "06b05ab6733a618578af5f94892f3950",
                "a9993e364706816aba3e25717850c26c9cd0d89d",
                "",
            ] {
                let json = format!(
                    r#"{{"h":"{h}","w":7,"shape":{{"role":"assistant","callIds":["c1"]}},"ts":{ts},"digest":{{"role":"assistant","files":["a.rs"],"callIds":["c1"]}},"q":"too_deep"}}"#
                );
                let r: MsgRecord = serde_json::from_str(&json).unwrap();
                // The bytes a record with a `Value` timestamp wrote (serde_json writes an
                // exponent's `E` as `e`).
                let as_before =
                    serde_json::to_string(&serde_json::from_str::<Value>(&json).unwrap());
                assert_eq!(serde_json::to_string(&r).unwrap(), as_before.unwrap());
                assert_eq!(r.h, h);
                assert_eq!(r.h.hex(), h);
                assert_eq!(r.h.short_key(), &h[..h.len().min(16)]);
            }
        }
        let r: MsgRecord =
            serde_json::from_str(r#"{"h":"","w":1,"shape":{},"ts":1.5,"digest":{}}"#).unwrap();
        assert_eq!(r.ts.as_ref().and_then(Ts::as_f64), Some(1.5));
        assert_eq!(
            r.ts.as_ref().map(Ts::number),
            serde_json::json!(1.5).as_number().cloned()
        );
        assert!(MsgHash::from_hex("A9993E364706816ABA3E25717850C26C9CD0D89D").is_none());
        assert!(
            serde_json::from_str::<MsgRecord>(r#"{"h":"abc","w":1,"shape":{},"digest":{}}"#)
                .is_err()
        );
    }

    /// What the record list of a long session costs per message, inline.
    #[test]
    fn a_record_is_small() {
        assert!(std::mem::size_of::<MsgRecord>() <= 336);
    }
}
