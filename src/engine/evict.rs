//! Front eviction: the host dropped a run of old messages and sent the rest unchanged.
//!
//! Some hosts cap the history they hand to the engine (OpenClaw did so in the e2e at a 128K
//! window after about 240 messages: the list it passed kept its newest messages and lost the
//! oldest ones, the pinned head included). Taken for a rewrite, that would re-pin the session
//! on every later turn and lose the head for good. Recognised as an eviction, the session
//! keeps its structure: everything the engine emits for the evicted part (the head, the fold
//! records) is its own copy, so the output bytes do not change.

/// The host dropped the `len` oldest recorded messages it still sent and puts `prelude` messages
/// of its own (seen: one, a transformed evicted message) in front of the rest.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Eviction {
    /// Recorded messages gone.
    pub len: u32,
    /// Unrecorded host messages in front of the kept ones.
    pub prelude: u32,
    /// Recorded messages the host still sends unchanged after the prelude: every one from `len`
    /// on, or fewer when the host also rewrote a later one in the same call (seen: OpenClaw
    /// merging a `/compact` and the user message after it into one message while it evicted).
    /// The history then diverges at host index `prelude + kept`, in what the host kept.
    pub kept: u32,
}

/// Most unrecorded host messages accepted in front of the kept history.
pub const MAX_PRELUDE: usize = 2;
/// Fewest recorded messages the host must still send for a change to count as an eviction.
pub const MIN_KEPT: usize = 4;
/// Candidate offsets tried when the first kept message occurs more than once.
const MAX_CANDIDATES: usize = 8;

/// The eviction that explains `incoming` (the host's whole list) against `recorded` (the
/// records the host was sending, in order), if any: after at most [`MAX_PRELUDE`] unrecorded
/// messages, incoming continues with recorded `len..` in order, over at least [`MIN_KEPT`]
/// messages, and either matches every recorded message from there on (possibly followed by new
/// messages) or departs from them at some later point (`kept` says where: the host rewrote a
/// message it kept, which the caller handles as a divergence of its own). More messages must be
/// gone than were put in front: `len <= prelude` is a rewrite in place (an edited first message
/// looks like one message evicted and one put in front), not an eviction. Of several
/// candidates, the one with the longest run wins.
pub fn detect<H: PartialEq>(recorded: &[H], incoming: &[H]) -> Option<Eviction> {
    for p in 0..=MAX_PRELUDE.min(incoming.len()) {
        let Some(first) = incoming.get(p) else { break };
        let best = recorded
            .iter()
            .enumerate()
            .filter(|(_, h)| *h == first)
            .take(MAX_CANDIDATES)
            .map(|(len, _)| len)
            .filter(|&len| len > p)
            .map(|len| {
                let run = recorded[len..]
                    .iter()
                    .zip(&incoming[p..])
                    .take_while(|(r, i)| r == i)
                    .count();
                (len, run)
            })
            .filter(|&(_, run)| run >= MIN_KEPT)
            .max_by_key(|&(len, run)| (run, std::cmp::Reverse(len)));
        if let Some((len, run)) = best {
            return Some(Eviction {
                len: len as u32,
                prelude: p as u32,
                kept: run as u32,
            });
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(s: &str) -> Vec<&str> {
        s.split(' ').filter(|x| !x.is_empty()).collect()
    }

    fn kept(len: u32, prelude: u32, kept: u32) -> Option<Eviction> {
        Some(Eviction { len, prelude, kept })
    }

    /// An eviction that keeps every recorded message from `len` on (`rec` has `n`).
    fn ev(len: u32, prelude: u32, n: u32) -> Option<Eviction> {
        kept(len, prelude, n - len)
    }

    #[test]
    fn front_evictions_with_and_without_a_prelude() {
        let rec = ids("a b c d e f g h");
        assert_eq!(detect(&rec, &ids("c d e f g h i")), ev(2, 0, 8));
        assert_eq!(
            detect(&rec, &ids("x c d e f g h")),
            ev(2, 1, 8),
            "a transformed message in front"
        );
        assert_eq!(detect(&rec, &ids("x y e f g h i j")), ev(4, 2, 8));
    }

    #[test]
    fn rewrites_are_not_evictions() {
        let rec = ids("a b c d e f g h");
        assert_eq!(
            detect(&rec, &ids("a b c d e f g h i")),
            None,
            "plain append"
        );
        assert_eq!(detect(&rec, &ids("a x c d e f g h")), None, "edit");
        assert_eq!(
            detect(&rec, &ids("x b c d e f g h")),
            None,
            "first message edited in place"
        );
        assert_eq!(
            detect(&rec, &ids("x y c d e f g h")),
            None,
            "two messages edited in place"
        );
        assert_eq!(
            detect(&rec, &ids("x a b c d e f g h")),
            None,
            "a message put in front"
        );
        assert_eq!(
            detect(&rec, &ids("c d x f g h")),
            None,
            "eviction plus an edit before four kept messages"
        );
        assert_eq!(
            detect(&rec, &ids("x y z g h")),
            None,
            "too little kept to tell"
        );
        assert_eq!(
            detect(&rec, &ids("p q r e f g h")),
            None,
            "prelude longer than allowed"
        );
        assert_eq!(detect(&rec, &ids("a b c")), None, "truncation");
        assert_eq!(detect(&rec, &ids("x y")), None, "another branch");
        assert_eq!(detect(&rec, &[]), None);
        assert_eq!(detect(&[], &ids("a")), None);
    }

    /// The e2e `compact` cell: OpenClaw evicted its oldest messages and, in the same call,
    /// merged a `/compact` and the user message after it into one message. Taken for a rewrite,
    /// that re-pinned the session and dropped the pinned head (the fact of turn 0) for good.
    #[test]
    fn an_eviction_with_a_later_rewrite_keeps_the_run_before_it() {
        let rec = ids("a b c d e f g h i j");
        assert_eq!(
            detect(&rec, &ids("x c d e f g M j k")),
            kept(2, 1, 5),
            "kept c..g, then the host's merged message"
        );
        assert_eq!(detect(&rec, &ids("c d e f M")), kept(2, 0, 4));
        assert_eq!(
            detect(&rec, &ids("c d e M")),
            None,
            "three kept messages are too few to tell"
        );
        // Of two candidate runs the longer one wins.
        let rec = ids("a c d e f b c d e f g h");
        assert_eq!(detect(&rec, &ids("c d e f g h n")), kept(6, 0, 6));
    }

    #[test]
    fn repeated_hashes_try_every_candidate() {
        // "b" occurs twice; only the second explains the incoming list.
        let rec = ids("a b x b y z w v");
        assert_eq!(detect(&rec, &ids("b y z w v n")), ev(3, 0, 8));
    }
}
