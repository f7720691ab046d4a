//! The set of advancement keys `commit_turn` recorded (idempotent commits), packed as hashes.

use crate::json::Value;
use crate::json::{DResult, DecodeError, FromJson};
#[cfg(test)]
use serde::Deserialize;
use serde::Serialize;

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

impl crate::json::out::ToJson for CommitKeys {
    fn write_json(&self, out: &mut String) {
        crate::json::out::string(out, &self.packed());
    }
}

impl CommitKeys {
    /// The packed form: 16 hex digits per key.
    fn packed(&self) -> String {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        let mut out = String::with_capacity(16 * self.0.len());
        for h in &self.0 {
            for i in (0..16).rev() {
                out.push(HEX[((h >> (4 * i)) & 15) as usize] as char);
            }
        }
        out
    }
}

impl Serialize for CommitKeys {
    fn serialize<S: serde::Serializer>(&self, ser: S) -> std::result::Result<S::Ok, S::Error> {
        let mut out = String::with_capacity(16 * self.0.len());
        for h in &self.0 {
            out.push_str(&format!("{h:016x}"));
        }
        ser.serialize_str(&out)
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
        crate::sort::sort_dedup_u64(&mut v);
        Ok(CommitKeys(v))
    }
}

impl FromJson for CommitKeys {
    fn from_json(v: Value) -> DResult<Self> {
        match v {
            Value::String(s) => CommitKeys::from_packed(&s).map_err(DecodeError::new),
            Value::Array(_) => {
                let mut keys = CommitKeys::default();
                for k in Vec::<String>::from_json(v)? {
                    keys.insert(&k);
                }
                Ok(keys)
            }
            v => Err(DecodeError::expected("a string or an array of strings", &v)),
        }
    }
}

#[cfg(test)]
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
