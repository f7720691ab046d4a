//! The set of advancement keys `commit_turn` recorded (idempotent commits), packed as hashes.

use serde::{Deserialize, Serialize};

/// Every advancement key `commit_turn` has recorded in a session, so a retry is recognised
/// however late the host makes it. Each key is kept as the first 8 bytes of its SHA-1 (a
/// collision among a million keys has odds of about 1 in 30 million), sorted; the snapshot
/// holds them as one string of 16 hex digits per key (160 KB at 10,000 turns, beside the
/// megabytes of message records such a session has). Snapshots written before this kept the
/// last 1,000 keys verbatim (a JSON array); they load into the same set.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CommitKeys(Vec<u64>);

impl CommitKeys {
    fn hash(key: &str) -> u64 {
        let h = crate::fingerprint_hex(key.as_bytes());
        u64::from_str_radix(&h[..16], 16).unwrap_or(0)
    }

    /// True when `key` was recorded.
    pub fn contains(&self, key: &str) -> bool {
        self.0.binary_search(&Self::hash(key)).is_ok()
    }

    /// Record `key` (a second insert changes nothing).
    pub fn insert(&mut self, key: &str) {
        let h = Self::hash(key);
        if let Err(at) = self.0.binary_search(&h) {
            self.0.insert(at, h);
        }
    }

    /// Number of keys recorded.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// True when no key was recorded.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl CommitKeys {
    /// The packed form: 16 hex digits per key.
    fn packed(&self) -> String {
        use std::fmt::Write as _;
        let mut out = String::with_capacity(16 * self.0.len());
        for h in &self.0 {
            let _ = write!(out, "{h:016x}");
        }
        out
    }
}

impl Serialize for CommitKeys {
    fn serialize<S: serde::Serializer>(&self, ser: S) -> std::result::Result<S::Ok, S::Error> {
        ser.serialize_str(&self.packed())
    }
}

impl CommitKeys {
    /// The packed form: 16 hex digits per key.
    fn from_packed(s: &str) -> std::result::Result<CommitKeys, String> {
        if s.len() % 16 != 0 || !s.is_ascii() {
            return Err("commitKeys: not 16-hex-digit hashes".to_string());
        }
        let mut v = Vec::with_capacity(s.len() / 16);
        for k in 0..s.len() / 16 {
            v.push(u64::from_str_radix(&s[16 * k..16 * k + 16], 16).map_err(|e| e.to_string())?);
        }
        v.sort_unstable();
        v.dedup();
        Ok(CommitKeys(v))
    }
}

impl<'de> Deserialize<'de> for CommitKeys {
    fn deserialize<D: serde::Deserializer<'de>>(de: D) -> std::result::Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Form {
            Packed(String),
            Verbatim(Vec<String>),
        }
        let mut keys = CommitKeys::default();
        match Form::deserialize(de)? {
            Form::Packed(s) => {
                keys = CommitKeys::from_packed(&s).map_err(serde::de::Error::custom)?;
            }
            Form::Verbatim(list) => {
                for k in &list {
                    keys.insert(k);
                }
            }
        }
        Ok(keys)
    }
}
