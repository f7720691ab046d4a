//! Front eviction: the host dropped a run of old messages and sent the rest unchanged.
//!
//! Some hosts cap the history they hand to the engine (OpenClaw did so in the e2e at a 128K
//! window after about 240 messages: the list it passed kept its newest messages and lost the
//! oldest ones, the pinned head included). Taken for a rewrite, that would re-pin the session
//! on every later turn and lose the head for good. Recognised as an eviction, the session
//! keeps its structure: everything the engine emits for the evicted part (the head, the fold
//! records) is its own copy, so the output bytes do not change.

/// `len` recorded messages from `at` on are gone; recorded `at + len..` is incoming `at..`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Eviction {
    /// First evicted index (recorded `..at` and incoming `..at` are the same messages).
    pub at: u32,
    /// Messages evicted.
    pub len: u32,
}

/// Candidate offsets tried when the first incoming message after `at` occurs more than once.
const MAX_CANDIDATES: usize = 8;

/// The eviction that explains `incoming` against `recorded` (message hashes in order), if any:
/// the histories agree up to `at`, then incoming continues with recorded `at + len` and matches
/// every recorded message after it (at least one), possibly followed by new messages.
pub fn detect(recorded: &[&str], incoming: &[&str]) -> Option<Eviction> {
    let at = recorded
        .iter()
        .zip(incoming)
        .position(|(r, i)| r != i)
        .unwrap_or(recorded.len().min(incoming.len()));
    let first = incoming.get(at)?;
    let tail = &recorded[at.min(recorded.len())..];
    tail.iter()
        .enumerate()
        .skip(1)
        .filter(|(_, h)| *h == first)
        .take(MAX_CANDIDATES)
        .map(|(len, _)| len)
        .find(|&len| {
            let kept = &tail[len..];
            incoming.len() >= at + kept.len()
                && kept.iter().zip(&incoming[at..]).all(|(r, i)| r == i)
        })
        .map(|len| Eviction {
            at: at as u32,
            len: len as u32,
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(s: &str) -> Vec<&str> {
        s.split(' ').filter(|x| !x.is_empty()).collect()
    }

    #[test]
    fn front_and_after_prelude() {
        let rec = ids("a b c d e f");
        assert_eq!(
            detect(&rec, &ids("c d e f g")),
            Some(Eviction { at: 0, len: 2 })
        );
        assert_eq!(
            detect(&rec, &ids("a d e f")),
            Some(Eviction { at: 1, len: 2 })
        );
        assert_eq!(
            detect(&rec, &ids("a b f g h")),
            Some(Eviction { at: 2, len: 3 })
        );
    }

    #[test]
    fn rewrites_are_not_evictions() {
        let rec = ids("a b c d e f");
        assert_eq!(detect(&rec, &ids("a b c d e f g")), None, "plain append");
        assert_eq!(detect(&rec, &ids("a x c d e f")), None, "edit");
        assert_eq!(detect(&rec, &ids("c d x f")), None, "eviction plus an edit");
        assert_eq!(detect(&rec, &ids("a b c")), None, "truncation");
        assert_eq!(detect(&rec, &ids("x y")), None, "another branch");
        assert_eq!(detect(&rec, &[]), None);
        assert_eq!(detect(&[], &ids("a")), None);
    }

    #[test]
    fn repeated_hashes_try_every_candidate() {
        // "b" occurs twice after the cut; only the second explains the incoming list.
        let rec = ids("a b x b y z");
        assert_eq!(
            detect(&rec, &ids("b y z n")),
            Some(Eviction { at: 0, len: 3 })
        );
    }
}
