//! Anchor extraction for the offline retention metric R (docs/cache-model.md (a)).
//!
//! An *anchor* is a token a later answer might need verbatim: a file path, an identifier
//! (snake_case, camelCase, dotted or `::` paths), an error code, a number with ≥ 3 digits, a
//! URL or a commit-like hex string. Extraction is a single pass over the text: split on
//! characters that cannot be part of such a token, trim trailing punctuation, classify.
//! Plain English words never qualify (no `_`, no inner capital, no digit, no `/`), so the
//! metric follows concrete facts, not vocabulary.
//!
//! The same extractor runs on the recorded output (what was *needed*) and on the assembled
//! request (what was *present*), so "present" means "the same anchor token occurs in the
//! request": a trimmed text that cuts an anchor in half does not count as retaining it.
//!
//! The classification of one piece ([`is_anchor`]) lives in the core
//! (`cachefold::tools::shrink::names`): the "Mentions:" list of a shrunk tool output uses the
//! same definition, and there is one copy of it.

use ::cachefold::tools::shrink::names::is_anchor;
use std::collections::HashMap;

/// Interned anchor id.
pub type AnchorId = u32;

/// Interner shared by one replay job.
#[derive(Default, Clone)]
pub struct Interner {
    ids: HashMap<String, AnchorId>,
    /// The first id this interner hands out (ids below belong to the interner it continues).
    first: AnchorId,
}

impl Interner {
    /// An interner whose ids start at `first`: it continues one that handed out `first` ids
    /// (a replay job's own anchors after its session's, without copying the session's).
    pub fn after(first: AnchorId) -> Interner {
        Interner {
            ids: HashMap::new(),
            first,
        }
    }

    /// Id of `s`, creating it.
    pub fn id(&mut self, s: &str) -> AnchorId {
        if let Some(&i) = self.ids.get(s) {
            return i;
        }
        let i = self.first + self.ids.len() as AnchorId;
        self.ids.insert(s.to_string(), i);
        i
    }

    /// Id of `s` if it was seen.
    pub fn get(&self, s: &str) -> Option<AnchorId> {
        self.ids.get(s).copied()
    }

    /// Ids handed out (those of the interner it continues included).
    pub fn len(&self) -> usize {
        self.first as usize + self.ids.len()
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Anchor → the messages holding it (their indices, ascending), for dense anchor ids: one
/// array of every holder, grouped by anchor, and where each anchor's group starts. A long
/// session's messages hold about 16 anchors each; a map of one list per anchor held 3× more.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Holders {
    /// `starts[a] .. starts[a + 1]` is anchor `a`'s group in `items`.
    starts: Vec<u32>,
    items: Vec<u32>,
}

impl Holders {
    /// Holders of the anchors `< anchors` among `messages` (message `i`'s anchor ids, each
    /// once); ids at or above `anchors` are left out.
    pub fn new<'a>(
        anchors: usize,
        messages: impl Iterator<Item = &'a [AnchorId]> + Clone,
    ) -> Holders {
        let mut starts = vec![0u32; anchors + 1];
        for ids in messages.clone() {
            for &a in ids {
                if let Some(n) = starts.get_mut(a as usize + 1) {
                    *n += 1;
                }
            }
        }
        for k in 1..starts.len() {
            starts[k] += starts[k - 1];
        }
        let mut fill: Vec<u32> = starts.clone();
        let mut items = vec![0u32; starts.last().copied().unwrap_or(0) as usize];
        for (i, ids) in messages.enumerate() {
            for &a in ids {
                if (a as usize) < anchors {
                    let at = &mut fill[a as usize];
                    items[*at as usize] = i as u32;
                    *at += 1;
                }
            }
        }
        Holders { starts, items }
    }

    /// Indices of the messages holding anchor `a`, ascending (empty for an unknown anchor).
    pub fn get(&self, a: AnchorId) -> &[u32] {
        let a = a as usize;
        match (self.starts.get(a), self.starts.get(a + 1)) {
            (Some(&from), Some(&to)) => self.items.get(from as usize..to as usize).unwrap_or(&[]),
            _ => &[],
        }
    }
}

fn is_word_char(c: char) -> bool {
    c.is_alphanumeric()
        || matches!(
            c,
            '_' | '.' | '/' | '-' | ':' | '@' | '#' | '~' | '+' | '%' | '=' | '?' | '&'
        )
}

/// Anchors of `text`, deduplicated, in order of first occurrence.
pub fn extract(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for raw in text.split(|c: char| !is_word_char(c)) {
        if raw.len() < 3 {
            continue;
        }
        for cand in candidates(raw) {
            if seen.insert(cand.clone()) {
                out.push(cand);
            }
        }
    }
    out
}

/// The anchors inside one raw word (a URL is taken whole; otherwise the word is trimmed and
/// split at `:` so `src/a.rs:12:5` yields the path and not the position).
fn candidates(raw: &str) -> Vec<String> {
    let mut out = Vec::new();
    let trimmed = raw.trim_matches(|c: char| {
        matches!(
            c,
            '.' | ':' | '-' | '#' | '~' | '+' | '=' | '?' | '&' | '%' | '@'
        )
    });
    if trimmed.starts_with("http://") || trimmed.starts_with("https://") {
        if trimmed.len() > 10 {
            out.push(trimmed.to_string());
        }
        return out;
    }
    for part in trimmed.split(':') {
        let p = part.trim_matches(|c: char| {
            matches!(c, '.' | '-' | '#' | '~' | '+' | '=' | '?' | '&' | '%' | '@')
        });
        if p.len() >= 3 && is_anchor(p) {
            out.push(p.to_string());
        }
    }
    // Rust/C++ paths (`crate::module::Item`) are kept whole as well.
    if trimmed.contains("::") && trimmed.len() >= 6 && trimmed.chars().any(char::is_alphabetic) {
        out.push(trimmed.to_string());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The compact holder table answers as a map of per-anchor lists built message by message.
    #[test]
    fn holders_list_every_message_holding_an_anchor_in_order() {
        let messages: Vec<Vec<AnchorId>> =
            vec![vec![3, 0], vec![], vec![0, 1, 7], vec![3], vec![1, 0]];
        let h = Holders::new(5, messages.iter().map(Vec::as_slice));
        let mut map: HashMap<AnchorId, Vec<u32>> = HashMap::new();
        for (i, ids) in messages.iter().enumerate() {
            for a in ids {
                map.entry(*a).or_default().push(i as u32);
            }
        }
        for a in 0..5 {
            assert_eq!(
                h.get(a),
                map.get(&a).map_or(&[][..], Vec::as_slice),
                "anchor {a}"
            );
        }
        assert_eq!(h.get(0), &[0, 2, 4]);
        assert_eq!(h.get(2), &[] as &[u32]);
        // An id past the table (7 here) and an unknown one are held by no message.
        assert!(h.get(7).is_empty() && h.get(u32::MAX).is_empty());
        assert!(Holders::default().get(0).is_empty());
    }

    #[test]
    fn finds_the_usual_suspects() {
        let a = extract("error[E0308]: mismatched types at src/bench/cache.rs:120:5 in fn block_hashes; see https://doc.rust-lang.org/x.html commit 1a2b3c4d port 18789 parseClaudeCode the and");
        for want in [
            "E0308",
            "src/bench/cache.rs",
            "block_hashes",
            "https://doc.rust-lang.org/x.html",
            "1a2b3c4d",
            "18789",
            "parseClaudeCode",
        ] {
            assert!(a.iter().any(|x| x == want), "{want} missing from {a:?}");
        }
        for not in ["the", "and", "error", "mismatched"] {
            assert!(
                !a.iter().any(|x| x == not),
                "{not} should not be an anchor: {a:?}"
            );
        }
    }
}
