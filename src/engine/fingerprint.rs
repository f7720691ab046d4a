//! Content identity of host messages and detection of history divergence.
//!
//! The canonical serialisation of a host message is the JSON text the shim produced with
//! `JSON.stringify` (the host's own key order, numbers as written). Its hash is the message's
//! identity ([`MsgHash`], written as lowercase hex): XXH3-128 in sessions this release starts,
//! SHA-1 in sessions an earlier release started ([`HashAlgo`]: a session keeps the algorithm of
//! its records, so its recorded hashes, output keys and head fingerprint stay comparable). The
//! identity detects change, not tampering: a host that could craft two messages with one hash
//! could as well send anything. The pinned head's fingerprint is the SHA-1 over the
//! newline-joined per-message hashes, so one hash covers the whole head while the engine stores
//! only per-message hashes (16 or 20 bytes a message instead of the text).
//!
//! Divergence: the first index where incoming history differs from what the engine recorded,
//! with a cause code ([`Cause`]). Invariants:
//! * [`first_divergence`] only compares indices that are both recorded and supplied; a shorter
//!   incoming history is reported at its own length when everything before agrees.
//! * [`classify`] is total: every combination yields a cause, `unknown` as the fallback.

use crate::engine::by_index::ByIndex;
use crate::fingerprint_hex;
use crate::pairing::{Shape, ShapeRole};
use crate::record::MsgHash;

/// The hash of a message's JSON text a session keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HashAlgo {
    /// XXH3-128: every session this release starts. 6-13× faster than SHA-1 in the module (the
    /// first ingest of 100,000 messages hashed 63 MB in 30-65 ms of CPU against ~400 ms).
    Xxh3,
    /// SHA-1: a session an earlier release started keeps it, so that its recorded hashes still
    /// compare with the host's messages.
    Sha1,
}

impl HashAlgo {
    /// The algorithm of a session holding `records`: that of its first hashed record, XXH3 when
    /// none is hashed yet (a new session).
    pub fn of(records: &[crate::record::MsgRecord]) -> HashAlgo {
        match records.iter().map(|r| r.h).find(|h| *h != MsgHash::None) {
            Some(MsgHash::Sha1(_)) => HashAlgo::Sha1,
            _ => HashAlgo::Xxh3,
        }
    }

    /// The hash of one message's JSON text (its bytes; [`MsgHash::hex`] is the text reports
    /// and state files hold).
    pub fn hash(self, json: &str) -> MsgHash {
        match self {
            HashAlgo::Xxh3 => MsgHash::xxh3(json.as_bytes()),
            HashAlgo::Sha1 => MsgHash::sha1(json.as_bytes()),
        }
    }
}

/// The hash of one message's JSON text in a session this release starts ([`HashAlgo::Xxh3`]).
pub fn message_hash(json: &str) -> MsgHash {
    HashAlgo::Xxh3.hash(json)
}

/// Fingerprint of the pinned head: SHA-1 over the per-message hashes (hex) joined by `\n`.
pub fn head_fingerprint<'a>(hashes: impl IntoIterator<Item = &'a MsgHash>) -> String {
    let mut joined = String::new();
    for (k, h) in hashes.into_iter().enumerate() {
        if k > 0 {
            joined.push('\n');
        }
        joined.push_str(&h.hex());
    }
    fingerprint_hex(joined.as_bytes())
}

/// Why the incoming history no longer matches the recorded one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Cause {
    /// The host compacted: a `compactionSummary`/`branchSummary` message stands at or after
    /// the divergence.
    HostCompaction,
    /// The history got shorter, or its very first message differs (new branch / reset).
    BranchReset,
    /// A recorded message changed in place (same role and tool ids), e.g. `tool_result_persist`.
    HostRewrite,
    /// The model id changed (the provider cache is per model).
    ModelChanged,
    /// `systemPromptAddition` changed: everything after the system prompt's stable block misses.
    SystemPromptAdditionChanged,
    /// Anything else.
    Unknown,
}

impl Cause {
    /// Stable snake_case code (reports, stats, journal).
    pub fn code(self) -> &'static str {
        match self {
            Cause::HostCompaction => "host_compaction",
            Cause::BranchReset => "branch_reset",
            Cause::HostRewrite => "host_rewrite",
            Cause::ModelChanged => "model_changed",
            Cause::SystemPromptAdditionChanged => "system_prompt_addition_changed",
            Cause::Unknown => "unknown",
        }
    }
}

/// First index `< min(count, recorded_len)` whose supplied hash differs from the recorded
/// one (`same(i, hash)`: whether recorded message `i < recorded_len` has that hash); when none differs but `count < recorded_len`,
/// `Some(count)` (the history shrank). Indices not in `incoming` are not compared, and
/// `recorded` is asked only for the supplied ones: an assemble that supplies the new messages
/// and a few spot checks costs that many lookups, not a walk of the whole history.
pub fn first_divergence(
    recorded_len: usize,
    same: impl Fn(u32, &MsgHash) -> bool,
    incoming: &ByIndex<MsgHash>,
    count: u32,
) -> Option<u32> {
    let upto = (count as usize).min(recorded_len);
    for (&i, h) in incoming.below(upto as u32) {
        if !same(i, h) {
            return Some(i);
        }
    }
    if (count as usize) < recorded_len {
        return Some(count);
    }
    None
}

/// Classify a divergence at `at`.
///
/// * `roles_from_at`: role strings of the incoming messages at indices `>= at` (as supplied);
/// * `recorded_shape` / `incoming_shape`: the pairing skeletons at `at` when both exist.
///
/// Order of rules: a host summary role at/after the divergence → `host_compaction`; the
/// history shrank or differs from index 0 → `branch_reset`; same skeleton at `at` →
/// `host_rewrite` (the message was rewritten in place); else `unknown`.
pub fn classify(
    at: u32,
    count: u32,
    recorded_len: u32,
    roles_from_at: &[&str],
    recorded_shape: Option<&Shape>,
    incoming_shape: Option<&Shape>,
) -> Cause {
    if roles_from_at
        .iter()
        .any(|r| *r == "compactionSummary" || *r == "branchSummary")
    {
        return Cause::HostCompaction;
    }
    if count < recorded_len || at == 0 {
        return Cause::BranchReset;
    }
    match (recorded_shape, incoming_shape) {
        (Some(a), Some(b)) if same_skeleton(a, b) => Cause::HostRewrite,
        _ => Cause::Unknown,
    }
}

fn same_skeleton(a: &Shape, b: &Shape) -> bool {
    a.role == b.role
        && a.call_ids == b.call_ids
        && a.result_id == b.result_id
        && (a.role != ShapeRole::Other || a.tool_name == b.tool_name)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reference values are the C library's (libxxhash 0.8.1 `XXH3_128bits`, its canonical
    /// big-endian text; the 1,000-byte input takes the long-input path) and SHA-1's test vector.
    #[test]
    fn hashes_are_xxh3_128_of_the_text_or_sha1_in_older_sessions() {
        assert_eq!(message_hash("abc"), "06b05ab6733a618578af5f94892f3950");
        assert_eq!(
            message_hash("abc").hex(),
            "06b05ab6733a618578af5f94892f3950"
        );
        assert_eq!(message_hash("abc").short_key(), "06b05ab6733a6185");
        assert_eq!(
            message_hash(&"x".repeat(1_000)).hex(),
            "50a1af5a5f2dcf01c0a4877b962cba82"
        );
        let sha1 = HashAlgo::Sha1.hash("abc");
        assert_eq!(sha1, "a9993e364706816aba3e25717850c26c9cd0d89d");
        assert_eq!(sha1.short_key(), "a9993e364706816a");
        for h in [message_hash("abc"), sha1, MsgHash::None] {
            assert_eq!(MsgHash::from_hex(&h.hex()), Some(h));
        }
        assert_ne!(
            MsgHash::from_hex("a9993e364706816aba3e25717850c26c"),
            Some(sha1)
        );
        // A session's algorithm is that of its first hashed record.
        let rec = |h| crate::record::MsgRecord {
            h,
            ..Default::default()
        };
        assert_eq!(HashAlgo::of(&[]), HashAlgo::Xxh3);
        assert_eq!(HashAlgo::of(&[rec(MsgHash::None)]), HashAlgo::Xxh3);
        assert_eq!(
            HashAlgo::of(&[rec(MsgHash::None), rec(sha1), rec(message_hash("y"))]),
            HashAlgo::Sha1
        );
        assert_eq!(
            HashAlgo::of(&[rec(message_hash("y")), rec(sha1)]),
            HashAlgo::Xxh3
        );
        let (x, y) = (message_hash("x"), message_hash("y"));
        let a = head_fingerprint([&x, &y]);
        assert_eq!(a, fingerprint_hex(format!("{x}\n{y}").as_bytes()));
        assert_ne!(a, head_fingerprint([&y, &x]));
        assert_eq!(head_fingerprint([]), fingerprint_hex(b""));
    }

    #[test]
    fn divergence_points() {
        let [a, b, c, d] = ["a", "b", "c", "d"].map(message_hash);
        let rec = [a, b, c];
        let first_divergence = |inc: &ByIndex<MsgHash>, count| {
            first_divergence(rec.len(), |i, h| rec[i as usize] == *h, inc, count)
        };
        let mut inc = ByIndex::new();
        inc.insert(0, a);
        inc.insert(2, c);
        inc.insert(3, d);
        assert_eq!(first_divergence(&inc, 4), None);
        inc.insert(1, message_hash("B"));
        assert_eq!(first_divergence(&inc, 4), Some(1));
        let mut short = ByIndex::new();
        short.insert(0, a);
        assert_eq!(first_divergence(&short, 1), Some(1));
        assert_eq!(first_divergence(&ByIndex::new(), 0), Some(0));
    }

    #[test]
    fn causes() {
        let r = Shape::result("c1");
        let u = Shape::user();
        assert_eq!(
            classify(5, 9, 9, &["user", "compactionSummary"], None, None),
            Cause::HostCompaction
        );
        assert_eq!(classify(3, 3, 9, &[], None, None), Cause::BranchReset);
        assert_eq!(
            classify(0, 9, 9, &["user"], Some(&u), Some(&u)),
            Cause::BranchReset
        );
        assert_eq!(
            classify(4, 9, 9, &["toolResult"], Some(&r), Some(&r)),
            Cause::HostRewrite
        );
        assert_eq!(
            classify(4, 9, 9, &["user"], Some(&r), Some(&u)),
            Cause::Unknown
        );
        assert_eq!(
            Cause::SystemPromptAdditionChanged.code(),
            "system_prompt_addition_changed"
        );
    }
}
