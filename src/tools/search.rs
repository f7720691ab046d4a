//! Line search over a session's artifacts and folded history (`cachefold_search`).
//!
//! Every hit names a document id and a 1-based line, which is exactly what `cachefold_recover`
//! takes, plus a snippet of at most [`SNIPPET_CHARS`] chars. Hits come in document order, then
//! line order, and stop at `max_hits`.
//!
//! Case: smart case, as in ripgrep: a query with no uppercase letter matches case-insensitively,
//! one with an uppercase letter matches exactly; a regex starting with `(?i)` is always
//! case-insensitive.
//!
//! Regex (`regex: true`) is a small subset, matched per line in linear time (a Thompson-style
//! state-set simulation, so no pattern can make it backtrack exponentially):
//! literals, `.`, `[abc]`, `[a-z]`, `[^…]`, `\d \w \s \D \W \S`, escaped punctuation
//! (`\.`, `\(`, …), `\t \n \r`, the quantifiers `*` `+` `?` on one atom (a lazy `?` suffix is
//! accepted and means the same for a yes/no match), `^` and `$` line anchors, and top-level
//! alternation `a|b`. Groups, `{m,n}`, backreferences and lookaround are rejected with an
//! [`Error::Input`] that lists what is supported. No `regex` crate: it would add ~300 KB of wasm
//! for a feature used rarely.

use crate::error::{Error, Result};
use serde::Serialize;

/// Longest snippet, in chars.
pub const SNIPPET_CHARS: usize = 160;
/// Chars of context kept before the match in a snippet.
const SNIPPET_LEAD: usize = 40;
/// Longest accepted query, in chars.
pub const MAX_QUERY_CHARS: usize = 1_000;

/// One searchable document.
#[derive(Debug, Clone, Copy)]
pub struct Doc<'a> {
    /// Artifact id or fold id.
    pub id: &'a str,
    /// `"artifact"` or `"fold"`.
    pub kind: &'a str,
    /// Full text.
    pub text: &'a str,
}

/// One matching line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, crate::json::out::ToJson)]
#[serde(rename_all = "camelCase")]
pub struct Hit {
    /// Document id (pass it to `cachefold_recover`).
    pub id: String,
    /// Document kind.
    pub kind: String,
    /// 1-based line number.
    pub line: u64,
    /// The line around the match, at most [`SNIPPET_CHARS`] chars (`…` marks cuts).
    pub snippet: String,
}

/// Up to `max_hits` matching lines, in document then line order.
pub fn search(docs: &[Doc], query: &str, regex: bool, max_hits: usize) -> Result<Vec<Hit>> {
    if query.is_empty() {
        return Err(Error::Input("search query must not be empty".into()));
    }
    if query.chars().count() > MAX_QUERY_CHARS {
        return Err(Error::Input(format!(
            "search query is longer than {MAX_QUERY_CHARS} chars"
        )));
    }
    let matcher = if regex {
        Matcher::Regex(Regex::parse(query)?)
    } else {
        Matcher::literal(query)
    };
    let mut hits = Vec::new();
    if max_hits == 0 {
        return Ok(hits);
    }
    for doc in docs {
        for (i, line) in doc.text.split('\n').enumerate() {
            if let Some(at) = matcher.find(line) {
                hits.push(Hit {
                    id: doc.id.to_string(),
                    kind: doc.kind.to_string(),
                    line: i as u64 + 1,
                    snippet: snippet(line, at),
                });
                if hits.len() >= max_hits {
                    return Ok(hits);
                }
            }
        }
    }
    Ok(hits)
}

/// A searchable document owned by the caller (the binding's wire form).
#[derive(Debug, Clone, Default, PartialEq)]
#[cfg_attr(test, derive(serde::Deserialize))]
pub struct OwnedDoc {
    /// Artifact id or fold id.
    pub id: String,
    /// `"artifact"` or `"fold"`.
    pub kind: String,
    /// Full text.
    pub text: String,
}

/// The whole tool answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, crate::json::out::ToJson)]
pub struct Answer {
    /// Rendered text for the model.
    pub text: String,
    /// The hits (for `details`).
    pub hits: Vec<Hit>,
    /// True when more than `max_hits` lines matched.
    pub more: bool,
}

/// Search and render: asks for one hit more than `max_hits` to tell whether more exist.
pub fn answer(docs: &[OwnedDoc], query: &str, regex: bool, max_hits: usize) -> Result<Answer> {
    let mut refs: Vec<Doc> = Vec::with_capacity(docs.len());
    for d in docs {
        refs.push(Doc {
            id: &d.id,
            kind: &d.kind,
            text: &d.text,
        });
    }
    let mut hits = search(&refs, query, regex, max_hits.saturating_add(1))?;
    let more = hits.len() > max_hits;
    hits.truncate(max_hits);
    Ok(Answer {
        text: render(query, &hits, docs.len(), more),
        hits,
        more,
    })
}

/// The tool's answer text: a summary line, then one line per hit.
///
/// ```text
/// [cachefold_search] 2 hits for "timeout" in 5 documents (more: raise maxHits or narrow the query).
/// <id> line 41 (artifact): …snippet…
/// ```
pub fn render(query: &str, hits: &[Hit], docs_searched: usize, more: bool) -> String {
    let q = crate::text::head_chars(query, 80);
    let mut out = format!(
        "[cachefold_search] {} {} for {} in {} {}",
        hits.len(),
        if hits.len() == 1 { "hit" } else { "hits" },
        crate::json::out::quoted(q),
        docs_searched,
        if docs_searched == 1 {
            "document"
        } else {
            "documents"
        }
    );
    if more {
        out.push_str(" (more exist: raise maxHits or narrow the query)");
    }
    out.push('.');
    if !hits.is_empty() {
        out.push_str(
            " Read around a hit: cachefold_recover {\"id\":<id>,\"lines\":[<line-20>,<line+20>]}",
        );
    }
    for h in hits {
        out.push_str(&format!(
            "\n{} line {} ({}): {}",
            h.id, h.line, h.kind, h.snippet
        ));
    }
    out
}

/// At most SNIPPET_CHARS chars of `line` around char offset `at`.
fn snippet(line: &str, at: usize) -> String {
    let line = line.strip_suffix('\r').unwrap_or(line);
    let total = line.chars().count();
    if total <= SNIPPET_CHARS {
        return line.to_string();
    }
    let start = at.saturating_sub(SNIPPET_LEAD).min(total - SNIPPET_CHARS);
    let mut body_len = SNIPPET_CHARS;
    let lead = start > 0;
    if lead {
        body_len -= 1;
    }
    let trail = start + body_len < total;
    if trail {
        body_len -= 1;
    }
    let mut out = String::with_capacity(SNIPPET_CHARS * 4);
    if lead {
        out.push('…');
    }
    let body = &line[crate::text::byte_at(line, start)..];
    out.push_str(crate::text::head_chars(body, body_len));
    if trail {
        out.push('…');
    }
    out
}

/// The chars of `s`.
fn chars_of(s: &str) -> Vec<char> {
    let mut out = Vec::with_capacity(s.len());
    for c in s.chars() {
        out.push(c);
    }
    out
}

// Simple one-to-one folding; multi-char lowercase forms (e.g. 'İ') keep the original.
use crate::text::lower_char as fold;

enum Matcher {
    Literal { needle: String, insensitive: bool },
    Regex(Regex),
}

impl Matcher {
    fn literal(q: &str) -> Matcher {
        let insensitive = !q.chars().any(char::is_uppercase);
        let needle = if insensitive {
            crate::text::lower(q)
        } else {
            q.to_string()
        };
        Matcher::Literal {
            needle,
            insensitive,
        }
    }

    /// Char offset of the first match in `line`.
    fn find(&self, line: &str) -> Option<usize> {
        match self {
            Matcher::Literal {
                needle,
                insensitive,
            } => {
                if *insensitive {
                    // Folding is char-for-char, so offsets in the folded line are offsets in `line`.
                    let folded = crate::text::lower(line);
                    crate::text::find(&folded, needle).map(|b| folded[..b].chars().count())
                } else {
                    crate::text::find(line, needle).map(|b| line[..b].chars().count())
                }
            }
            Matcher::Regex(r) => r.find(line),
        }
    }
}

// ---- the regex subset ------------------------------------------------------------------------

#[derive(Debug, Clone, PartialEq)]
enum Atom {
    Char(char),
    Any,
    Class {
        negated: bool,
        items: Vec<ClassItem>,
    },
}

#[derive(Debug, Clone, PartialEq)]
enum ClassItem {
    Range(char, char),
    Digit(bool),
    Word(bool),
    Space(bool),
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Rep {
    One,
    Opt,
    Star,
}

#[derive(Debug, Clone, PartialEq)]
struct Branch {
    items: Vec<(Atom, Rep)>,
    start_anchor: bool,
    end_anchor: bool,
}

#[derive(Debug, Clone, PartialEq)]
struct Regex {
    branches: Vec<Branch>,
    insensitive: bool,
}

const SUPPORTED: &str = "supported regex syntax: literals, `.`, `[...]`, `[^...]`, `\\d \\w \\s \\D \\W \\S`, escaped punctuation, `* + ?`, `^ $`, top-level `|`, and a leading `(?i)`";

fn unsupported(what: &str) -> Error {
    Error::Input(format!("unsupported regex syntax: {what}; {SUPPORTED}"))
}

impl Regex {
    fn parse(pattern: &str) -> Result<Regex> {
        let (forced, body) = match pattern.strip_prefix("(?i)") {
            Some(rest) => (true, rest),
            None => (false, pattern),
        };
        let insensitive = forced || !has_uppercase_literal(body);
        let chars = chars_of(body);
        let mut branches = Vec::new();
        let mut cur = Branch {
            items: Vec::new(),
            start_anchor: false,
            end_anchor: false,
        };
        let mut i = 0;
        while i < chars.len() {
            let c = chars[i];
            i += 1;
            let atom = match c {
                '|' => {
                    branches.push(std::mem::replace(
                        &mut cur,
                        Branch {
                            items: Vec::new(),
                            start_anchor: false,
                            end_anchor: false,
                        },
                    ));
                    continue;
                }
                '^' if cur.items.is_empty() && !cur.start_anchor => {
                    cur.start_anchor = true;
                    continue;
                }
                '$' if i == chars.len() || chars.get(i) == Some(&'|') => {
                    cur.end_anchor = true;
                    continue;
                }
                '^' | '$' => return Err(unsupported("`^` or `$` inside a pattern")),
                '(' | ')' => return Err(unsupported("groups `( )`")),
                '{' | '}' => {
                    return Err(unsupported("`{m,n}` repetition (escape braces as `\\{`)"))
                }
                '*' | '+' | '?' => return Err(unsupported("a quantifier with nothing to repeat")),
                '.' => Atom::Any,
                '[' => {
                    let (atom, next) = parse_class(&chars, i)?;
                    i = next;
                    atom
                }
                '\\' => {
                    let Some(&e) = chars.get(i) else {
                        return Err(unsupported("a trailing `\\`"));
                    };
                    i += 1;
                    escape_atom(e)?
                }
                other => Atom::Char(other),
            };
            let mut rep = Rep::One;
            match chars.get(i) {
                Some('*') => {
                    rep = Rep::Star;
                    i += 1;
                }
                Some('+') => {
                    // a+ == a a*
                    cur.items.push((atom.clone(), Rep::One));
                    rep = Rep::Star;
                    i += 1;
                }
                Some('?') => {
                    rep = Rep::Opt;
                    i += 1;
                }
                _ => {}
            }
            if rep != Rep::One && chars.get(i) == Some(&'?') {
                i += 1; // lazy marker: same yes/no answer
            }
            if matches!(chars.get(i), Some('*' | '+')) {
                return Err(unsupported("stacked quantifiers"));
            }
            cur.items.push((atom, rep));
        }
        branches.push(cur);
        Ok(Regex {
            branches,
            insensitive,
        })
    }

    /// Char offset where the leftmost match (over all branches) starts.
    fn find(&self, line: &str) -> Option<usize> {
        let line = line.strip_suffix('\r').unwrap_or(line);
        let chars = chars_of(line);
        self.branches
            .iter()
            .filter_map(|b| self.find_branch(b, &chars))
            .min()
    }

    /// State-set simulation: `states[k]` = earliest start of a thread about to match item k.
    fn find_branch(&self, b: &Branch, line: &[char]) -> Option<usize> {
        let n = b.items.len();
        let mut cur: Vec<Option<usize>> = vec![None; n + 1];
        let mut next: Vec<Option<usize>> = vec![None; n + 1];
        for pos in 0..=line.len() {
            if pos == 0 || !b.start_anchor {
                add(&mut cur, b, 0, pos);
            }
            if let Some(start) = cur[n] {
                if !b.end_anchor || pos == line.len() {
                    return Some(start);
                }
            }
            let Some(&c) = line.get(pos) else { break };
            next.iter_mut().for_each(|s| *s = None);
            for (k, (slot, (atom, rep))) in cur.iter().zip(b.items.iter()).enumerate() {
                let Some(start) = *slot else { continue };
                if self.atom_matches(atom, c) {
                    match rep {
                        Rep::Star => add(&mut next, b, k, start),
                        Rep::One | Rep::Opt => add(&mut next, b, k + 1, start),
                    }
                }
            }
            std::mem::swap(&mut cur, &mut next);
        }
        None
    }

    fn atom_matches(&self, atom: &Atom, c: char) -> bool {
        match atom {
            Atom::Any => true,
            Atom::Char(x) => *x == c || (self.insensitive && fold(*x) == fold(c)),
            Atom::Class { negated, items } => {
                let hit = items
                    .iter()
                    .any(|it| class_item_matches(it, c, self.insensitive));
                hit != *negated
            }
        }
    }
}

/// Activate state `k` with thread start `start` (earliest start wins) and follow skippable items.
fn add(states: &mut [Option<usize>], b: &Branch, k: usize, start: usize) {
    let mut k = k;
    loop {
        match states.get(k) {
            Some(Some(s)) if *s <= start => return,
            Some(_) => {}
            None => return,
        }
        if let Some(slot) = states.get_mut(k) {
            *slot = Some(start);
        }
        match b.items.get(k) {
            Some((_, Rep::Opt | Rep::Star)) => k += 1,
            _ => return,
        }
    }
}

fn class_item_matches(it: &ClassItem, c: char, insensitive: bool) -> bool {
    match it {
        ClassItem::Range(a, z) => {
            let inside = |x: char| *a <= x && x <= *z;
            inside(c)
                || (insensitive && (inside(fold(c)) || crate::text::upper_chars(c).any(inside)))
        }
        ClassItem::Digit(neg) => c.is_ascii_digit() != *neg,
        ClassItem::Word(neg) => (c.is_alphanumeric() || c == '_') != *neg,
        ClassItem::Space(neg) => c.is_whitespace() != *neg,
    }
}

fn perl_class(e: char) -> Option<ClassItem> {
    Some(match e {
        'd' => ClassItem::Digit(false),
        'D' => ClassItem::Digit(true),
        'w' => ClassItem::Word(false),
        'W' => ClassItem::Word(true),
        's' => ClassItem::Space(false),
        'S' => ClassItem::Space(true),
        _ => return None,
    })
}

fn escaped_char(e: char) -> Result<char> {
    match e {
        't' => Ok('\t'),
        'n' => Ok('\n'),
        'r' => Ok('\r'),
        c if c.is_ascii_punctuation() || c == ' ' => Ok(c),
        c => Err(unsupported(&format!("`\\{c}`"))),
    }
}

fn escape_atom(e: char) -> Result<Atom> {
    if let Some(item) = perl_class(e) {
        return Ok(Atom::Class {
            negated: false,
            items: vec![item],
        });
    }
    Ok(Atom::Char(escaped_char(e)?))
}

/// Parse a class starting after `[`; returns the atom and the index after `]`.
fn parse_class(chars: &[char], mut i: usize) -> Result<(Atom, usize)> {
    let mut negated = false;
    if chars.get(i) == Some(&'^') {
        negated = true;
        i += 1;
    }
    let mut items = Vec::new();
    let mut first = true;
    loop {
        let Some(&c) = chars.get(i) else {
            return Err(unsupported("an unclosed `[`"));
        };
        i += 1;
        if c == ']' && !first {
            break;
        }
        first = false;
        let lo = if c == '\\' {
            let Some(&e) = chars.get(i) else {
                return Err(unsupported("a trailing `\\`"));
            };
            i += 1;
            if let Some(item) = perl_class(e) {
                items.push(item);
                continue;
            }
            escaped_char(e)?
        } else {
            c
        };
        // Range `a-z` (a `-` before `]` is literal).
        if chars.get(i) == Some(&'-') && chars.get(i + 1).is_some_and(|x| *x != ']') {
            let mut hi = chars.get(i + 1).copied().unwrap_or(lo);
            i += 2;
            if hi == '\\' {
                let Some(&e) = chars.get(i) else {
                    return Err(unsupported("a trailing `\\`"));
                };
                i += 1;
                hi = escaped_char(e)?;
            }
            if hi < lo {
                return Err(Error::Input(format!("invalid class range `{lo}-{hi}`")));
            }
            items.push(ClassItem::Range(lo, hi));
        } else {
            items.push(ClassItem::Range(lo, lo));
        }
    }
    Ok((Atom::Class { negated, items }, i))
}

/// Uppercase letters that are literals (not `\D`, `\W`, `\S` escapes) decide smart case.
fn has_uppercase_literal(p: &str) -> bool {
    let mut prev_backslash = false;
    for c in p.chars() {
        if prev_backslash {
            prev_backslash = false;
            continue;
        }
        if c == '\\' {
            prev_backslash = true;
            continue;
        }
        if c.is_uppercase() {
            return true;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(p: &str, line: &str) -> Option<usize> {
        Regex::parse(p).unwrap().find(line)
    }

    #[test]
    fn regex_subset() {
        assert_eq!(m("abc", "xxabcxx"), Some(2));
        assert_eq!(m("a.c", "a-c"), Some(0));
        assert_eq!(m("ab*c", "ac"), Some(0));
        assert_eq!(m("ab*c", "abbbc"), Some(0));
        assert_eq!(m("ab+c", "ac"), None);
        assert_eq!(m("ab+c", "xabbc"), Some(1));
        assert_eq!(m("colou?r", "color"), Some(0));
        assert_eq!(m("colou?r", "colour"), Some(0));
        assert_eq!(m("^err", "an err"), None);
        assert_eq!(m("^err", "err: x"), Some(0));
        assert_eq!(m("done$", "done."), None);
        assert_eq!(m("done$", "all done"), Some(4));
        assert_eq!(m("^$", ""), Some(0));
        assert_eq!(m("[0-9]+ms", "took 125ms"), Some(5));
        assert_eq!(m("[^a-z ]", "abc def!"), Some(7));
        assert_eq!(m(r"\d\d:\d\d", "at 12:30"), Some(3));
        assert_eq!(m(r"\w+\.rs", "see src/lib.rs"), Some(8));
        assert_eq!(m(r"a\s+b", "a \t b"), Some(0));
        assert_eq!(m(r"\(x\)", "f(x)"), Some(1));
        assert_eq!(m("cat|dog", "hotdog"), Some(3));
        assert_eq!(m("cat|dog", "dog cat"), Some(0));
        assert_eq!(m(".*x", "abcx"), Some(0));
        assert_eq!(m("a.*?b", "a--b"), Some(0));
        assert_eq!(m("[-a]", "x-"), Some(1));
        assert_eq!(m("[]a]", "x]"), Some(1));
        assert_eq!(m("line\\r?$", "line\r"), Some(0));
    }

    #[test]
    fn smart_case() {
        assert_eq!(m("error", "An ERROR here"), Some(3));
        assert_eq!(m("Error", "An ERROR here"), None);
        assert_eq!(m("(?i)Error", "An ERROR here"), Some(3));
        assert_eq!(m(r"\D+", "ABC"), Some(0));
        assert_eq!(m("[a-c]x", "BX"), Some(0));
        let docs = [Doc {
            id: "d",
            kind: "artifact",
            text: "Foo\nfoo",
        }];
        assert_eq!(search(&docs, "foo", false, 10).unwrap().len(), 2);
        assert_eq!(search(&docs, "Foo", false, 10).unwrap().len(), 1);
        assert_eq!(search(&docs, "ÉTÉ", false, 10).unwrap().len(), 0);
        let docs = [Doc {
            id: "d",
            kind: "artifact",
            text: "Été\nété",
        }];
        assert_eq!(search(&docs, "été", false, 10).unwrap().len(), 2);
    }

    #[test]
    fn rejects_unsupported() {
        for p in [
            "(a)", "a{2}", "*a", "a**", "[abc", "\\", "a\\b", "a^b", "[z-a]", "a$b",
        ] {
            let e = Regex::parse(p).unwrap_err();
            assert_eq!(e.code(), "CACHEFOLD_INPUT", "{p}");
        }
        assert!(Regex::parse("a\\{2\\}").is_ok());
    }

    #[test]
    fn linear_time_on_nasty_patterns() {
        let line = "a".repeat(20_000);
        let p = "a*a*a*a*a*a*a*a*a*a*b";
        assert_eq!(m(p, &line), None);
        assert_eq!(m(".*.*.*.*.*.*c", &line), None);
    }

    #[test]
    fn hits_are_bounded_ordered_and_recoverable() {
        let a = (1..=100)
            .map(|i| format!("row {i} {}", if i % 10 == 0 { "timeout" } else { "ok" }))
            .collect::<Vec<_>>()
            .join("\n");
        let b = "first\nsecond timeout\n";
        let docs = [
            Doc {
                id: "f1",
                kind: "fold",
                text: b,
            },
            Doc {
                id: "a1",
                kind: "artifact",
                text: &a,
            },
        ];
        let hits = search(&docs, "timeout", false, 5).unwrap();
        assert_eq!(hits.len(), 5);
        assert_eq!(
            (hits[0].id.as_str(), hits[0].line, hits[0].kind.as_str()),
            ("f1", 2, "fold")
        );
        assert_eq!((hits[1].id.as_str(), hits[1].line), ("a1", 10));
        assert_eq!(hits[4].line, 40);
        // The line number addresses the same line through recover.
        let r = crate::tools::recover::recover_range(
            &a,
            &crate::tools::recover::RangeSpec {
                lines: Some((40, 40)),
                ..Default::default()
            },
        );
        assert_eq!(r.text, hits[4].snippet);
        let all = search(&docs, "timeout", false, 1_000).unwrap();
        assert_eq!(all.len(), 11);
        assert!(search(&docs, "timeout", false, 0).unwrap().is_empty());
        assert_eq!(
            search(&docs, "", false, 5).unwrap_err().code(),
            "CACHEFOLD_INPUT"
        );
        let text = render("timeout", &hits, 2, true);
        assert!(
            text.starts_with(
                "[cachefold_search] 5 hits for \"timeout\" in 2 documents (more exist"
            ),
            "{text}"
        );
        assert!(text.contains("\nf1 line 2 (fold): second timeout"));
    }

    #[test]
    fn answer_reports_more() {
        let docs = vec![OwnedDoc {
            id: "f1".into(),
            kind: "fold".into(),
            text: "x\nx\nx".into(),
        }];
        let a = answer(&docs, "x", false, 2).unwrap();
        assert_eq!((a.hits.len(), a.more), (2, true));
        let a = answer(&docs, "x", false, 3).unwrap();
        assert_eq!((a.hits.len(), a.more), (3, false));
        assert!(a
            .text
            .starts_with("[cachefold_search] 3 hits for \"x\" in 1 document."));
    }

    #[test]
    fn snippets_are_bounded_around_the_match() {
        let line = format!("{}NEEDLE{}", "a".repeat(500), "b".repeat(500));
        let docs = [Doc {
            id: "x",
            kind: "artifact",
            text: &line,
        }];
        let h = &search(&docs, "NEEDLE", false, 1).unwrap()[0];
        assert_eq!(h.snippet.chars().count(), SNIPPET_CHARS);
        assert!(h.snippet.starts_with('…') && h.snippet.ends_with('…'));
        assert!(h.snippet.contains("NEEDLE"));
        let h = &search(&docs, "^a+N", true, 1).unwrap()[0];
        assert!(h.snippet.starts_with("aaa"), "{}", h.snippet);
    }
}
