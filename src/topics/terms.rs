//! Turn → bounded bag of weighted terms (the layer-1 features), and the text views of a
//! digest that previews and the layer-2 prompt use.
//!
//! Terms are hashed (FNV-1a, 32 bits) so state never holds vocabulary text; the few strings
//! kept for labels are chosen here, capped by [`MAX_KEYWORDS`].

use crate::digest::Digest;
use std::collections::BTreeMap;

/// Terms kept per turn (highest weight first, ties by hash).
pub const MAX_TURN_TERMS: usize = 96;
/// Keywords kept per topic for its heuristic label.
pub const MAX_KEYWORDS: usize = 6;
/// Longest term (chars); longer tokens are noise (hashes of blobs, base64).
const MAX_TERM_CHARS: usize = 40;

/// Weights by where a term was seen: the user's words define a topic, paths and identifiers
/// pin it, the assistant's prose and tool output only colour it.
const W_USER: f64 = 2.0;
const W_ASSISTANT: f64 = 0.7;
const W_RESULT: f64 = 0.3;
const W_FILE: f64 = 2.5;
const W_DIR: f64 = 1.0;
const W_IDENT: f64 = 1.2;
const W_COMMAND: f64 = 0.8;
const W_TOOL: f64 = 0.3;

/// English and agent-chat filler that carries no topic.
const STOP: &[&str] = &[
    "about",
    "above",
    "after",
    "again",
    "all",
    "also",
    "and",
    "any",
    "are",
    "because",
    "been",
    "before",
    "being",
    "but",
    "can",
    "could",
    "did",
    "does",
    "doing",
    "done",
    "each",
    "few",
    "for",
    "from",
    "further",
    "get",
    "got",
    "had",
    "has",
    "have",
    "having",
    "her",
    "here",
    "him",
    "his",
    "how",
    "into",
    "its",
    "just",
    "let",
    "lets",
    "like",
    "make",
    "more",
    "most",
    "need",
    "needs",
    "not",
    "now",
    "off",
    "once",
    "only",
    "other",
    "our",
    "out",
    "over",
    "own",
    "please",
    "same",
    "see",
    "should",
    "some",
    "such",
    "than",
    "that",
    "the",
    "their",
    "them",
    "then",
    "there",
    "these",
    "they",
    "this",
    "those",
    "through",
    "too",
    "under",
    "until",
    "use",
    "used",
    "using",
    "very",
    "was",
    "way",
    "were",
    "what",
    "when",
    "where",
    "which",
    "while",
    "who",
    "why",
    "will",
    "with",
    "would",
    "yes",
    "you",
    "your",
    "okay",
    "thanks",
    "sure",
    "want",
    "think",
    "know",
    "look",
    "one",
    "two",
    "new",
    "file",
    "files",
    "it's",
    "don",
    "i'm",
    "we're",
    "there's",
    "that's",
    "thing",
    "things",
    "something",
    "still",
    "ok",
    "run",
    "check",
    "try",
    "work",
    "good",
    "great",
    "right",
    "well",
    "yeah",
    "may",
    "might",
    "must",
    "shall",
    "via",
    "per",
    "etc",
    "line",
    "lines",
    "true",
    "false",
    "null",
    "none",
];

/// FNV-1a over the term's bytes.
pub fn hash(term: &str) -> u32 {
    let mut h: u32 = 0x811c_9dc5;
    for b in term.bytes() {
        h ^= u32::from(b);
        h = h.wrapping_mul(0x0100_0193);
    }
    h
}

fn is_cjk(c: char) -> bool {
    matches!(c as u32, 0x3040..=0x30ff | 0x3400..=0x4dbf | 0x4e00..=0x9fff | 0xac00..=0xd7af)
}

/// Lowercased words of `text` worth a term: 3..=40 chars, not all digits, not filler; CJK
/// characters one by one (no segmenter in the core).
pub fn words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let flush = |cur: &mut String, out: &mut Vec<String>| {
        let n = cur.chars().count();
        if (3..=MAX_TERM_CHARS).contains(&n)
            && !cur.chars().all(|c| c.is_ascii_digit() || c == '_')
            && !STOP.contains(&cur.as_str())
        {
            out.push(std::mem::take(cur));
        } else {
            cur.clear();
        }
    };
    for c in text.chars() {
        if is_cjk(c) {
            flush(&mut cur, &mut out);
            out.push(c.to_string());
        } else if c.is_alphanumeric() || c == '_' {
            cur.extend(c.to_lowercase());
        } else {
            flush(&mut cur, &mut out);
        }
    }
    flush(&mut cur, &mut out);
    out
}

/// The bounded term bag of one completed turn plus the facts the cue rules need (the session
/// journal's `turn` event carries it, so a replay pushes exactly what the live session did).
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct TurnTerms {
    /// (term hash, weight), sorted by hash, at most [`MAX_TURN_TERMS`].
    pub bag: Vec<(u32, f64)>,
    /// Distinct terms the user's own words contributed.
    pub user_terms: usize,
    /// Tool names used in the turn (ascending, each once).
    pub tools: Vec<String>,
    /// The user's text (first user digest), for cue rules and previews.
    pub user_text: String,
    /// Candidate label words: the heaviest user/file terms as text, at most [`MAX_KEYWORDS`].
    pub keywords: Vec<(u32, String)>,
}

/// Order of term weights: heaviest first, ties by smaller hash.
pub(crate) fn heavier(a: &(u32, f64), b: &(u32, f64)) -> std::cmp::Ordering {
    b.1.total_cmp(&a.1).then(a.0.cmp(&b.0))
}

/// Sort `(hash, weight)` pairs with distinct hashes heaviest first (ties by smaller hash).
/// Over distinct hashes the order is total, so an unstable sort gives the one sorted order.
pub(crate) fn sort_heaviest(v: &mut [(u32, f64)]) {
    v.sort_unstable_by(heavier);
}

/// A test for `retain`: whether a pair is among the `n` heaviest of `pairs` (distinct hashes;
/// ties by smaller hash). The order is total over distinct hashes, so the kept pairs are those
/// not after the n-th.
pub(crate) fn among_heaviest(mut pairs: Vec<(u32, f64)>, n: usize) -> impl Fn(&(u32, f64)) -> bool {
    sort_heaviest(&mut pairs);
    let last = n.checked_sub(1).and_then(|i| pairs.get(i).copied());
    move |e| last.map_or(n > 0, |last| heavier(e, &last).is_le())
}

/// Keep the `n` heaviest of `(hash, weight)` pairs in ascending, duplicate-free hash order
/// (ties by smaller hash), leaving that order: what sorting by weight, keeping `n` and
/// sorting back by hash gives.
pub(crate) fn keep_heaviest(v: &mut Vec<(u32, f64)>, n: usize) {
    if v.len() <= n {
        return;
    }
    let keep = among_heaviest(v.clone(), n);
    v.retain(keep);
}

/// The user's words of a digest: the verbatim user text when kept, else the gist.
pub fn user_words_of(d: &Digest) -> &str {
    d.user_text.as_deref().unwrap_or(&d.text)
}

/// Terms of one turn (its messages' digests, in order).
pub fn turn_terms(digests: &[Digest]) -> TurnTerms {
    let mut w: BTreeMap<u32, f64> = BTreeMap::new();
    // Label candidates: weight and the term's first text.
    let mut label_w: BTreeMap<u32, (f64, String)> = BTreeMap::new();
    let mut user_set: Vec<u64> = Vec::new();
    let mut t = TurnTerms::default();
    let mut add = |term: &str, weight: f64, label: bool, w: &mut BTreeMap<u32, f64>| {
        let h = hash(term);
        *w.entry(h).or_insert_with(|| 0.0) += weight;
        if label {
            label_w
                .entry(h)
                .or_insert_with(|| (0.0, term.to_string()))
                .0 += weight;
        }
        h
    };
    for d in digests {
        match d.role.as_str() {
            "user" => {
                let text = user_words_of(d);
                if t.user_text.is_empty() {
                    t.user_text = crate::text::clip(text.trim(), 600);
                }
                for word in words(text) {
                    user_set.push(u64::from(add(&word, W_USER, true, &mut w)));
                }
            }
            "assistant" => {
                for word in words(&d.text) {
                    add(&word, W_ASSISTANT, false, &mut w);
                }
            }
            _ => {
                for word in words(&d.text) {
                    add(&word, W_RESULT, false, &mut w);
                }
            }
        }
        for f in &d.files {
            let f = f.trim_end_matches(['/', '\\']);
            let mut parts = f.rsplit(['/', '\\']);
            if let Some(base) = parts.next().filter(|b| !b.is_empty()) {
                add(&base.to_lowercase(), W_FILE, true, &mut w);
            }
            if let Some(dir) = parts
                .next()
                .filter(|d| d.len() > 1 && *d != "src" && *d != "..")
            {
                add(&dir.to_lowercase(), W_DIR, false, &mut w);
            }
        }
        for id in &d.identifiers {
            if id.chars().count() <= MAX_TERM_CHARS && !id.chars().all(|c| c.is_ascii_digit()) {
                add(&id.to_lowercase(), W_IDENT, false, &mut w);
            }
        }
        for c in &d.commands {
            let cmd = c.trim_start_matches('$').trim();
            let cmd = cmd.split('→').next().unwrap_or("");
            for word in words(cmd).into_iter().take(2) {
                add(&word, W_COMMAND, false, &mut w);
            }
        }
        if let Some(tool) = &d.tool_name {
            if d.role == "assistant" {
                add(&format!("tool:{tool}"), W_TOOL, false, &mut w);
                if let Err(i) = t.tools.binary_search_by(|x| x.as_str().cmp(tool)) {
                    t.tools.insert(i, tool.to_string());
                }
            }
        }
    }
    user_set.sort_unstable();
    user_set.dedup();
    t.user_terms = user_set.len();
    let mut v: Vec<(u32, f64)> = w.into_iter().collect();
    keep_heaviest(&mut v, MAX_TURN_TERMS);
    t.bag = v;
    let mut lw: Vec<(u32, f64)> = Vec::with_capacity(label_w.len());
    for (h, (w, _)) in label_w.iter() {
        lw.push((*h, *w));
    }
    sort_heaviest(&mut lw);
    lw.truncate(MAX_KEYWORDS * 3);
    t.keywords = Vec::with_capacity(lw.len());
    for (h, _) in lw {
        if let Some((_, s)) = label_w.get(&h) {
            t.keywords.push((h, s.clone()));
        }
    }
    t
}

/// A one-line text view of a digest (role-tagged), ≤ `max` chars: for previews and prompts.
pub fn digest_line(d: &Digest, max: usize) -> String {
    let body = match d.role.as_str() {
        "user" => user_words_of(d).to_string(),
        "assistant" => {
            let tools = d
                .tool_name
                .as_deref()
                .map(|t| format!(" [{t}]"))
                .unwrap_or_default();
            format!("{}{tools}", d.text)
        }
        _ => d.text.to_string(),
    };
    crate::text::clip(&crate::text::one_line(&body), max)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_drop_filler_digits_and_split_cjk() {
        assert_eq!(
            words("Please fix the parser_v2 in 2024, then 修复"),
            vec!["fix", "parser_v2", "修", "复"]
        );
    }

    proptest::proptest! {
        /// Keeping the heaviest in place is sorting by weight, truncating and sorting back.
        #[test]
        fn keep_heaviest_is_sort_truncate_sort(
            m in proptest::collection::btree_map(0u32..400, 0u8..12, 0..120),
            n in 0usize..130,
        ) {
            let v: Vec<(u32, f64)> = m.iter().map(|(k, w)| (*k, f64::from(*w) / 4.0)).collect();
            let mut want = v.clone();
            want.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
            want.truncate(n);
            want.sort_by_key(|e| e.0);
            let mut got = v;
            keep_heaviest(&mut got, n);
            proptest::prop_assert_eq!(got, want);
        }
    }

    #[test]
    fn bag_is_bounded_and_sorted() {
        let text: String = (0..500).map(|i| format!("word{i} ")).collect();
        let d = Digest {
            role: "user".into(),
            user_text: Some(text.into()),
            ..Digest::default()
        };
        let t = turn_terms(&[d]);
        assert!(t.bag.len() <= MAX_TURN_TERMS);
        assert!(t.bag.windows(2).all(|w| w[0].0 < w[1].0));
        assert!(t.keywords.len() <= MAX_KEYWORDS * 3);
    }
}
