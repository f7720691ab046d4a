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
//! Regex (`regex: true`) is the `regex` crate's syntax, matched per line in linear time (no
//! pattern can make it backtrack exponentially); an invalid pattern is an [`Error::Input`].
//! `regex` rather than `regex-lite`: the smart case above needs Unicode case folding (`été`
//! finds `Été`), which `regex-lite` does not do. A literal query that smart case makes exact is
//! a plain substring search.

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
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
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
    let matcher = Matcher::new(query, regex)?;
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
#[derive(Debug, Clone, Default, PartialEq, serde::Deserialize)]
pub struct OwnedDoc {
    /// Artifact id or fold id.
    pub id: String,
    /// `"artifact"` or `"fold"`.
    pub kind: String,
    /// Full text.
    pub text: String,
}

/// The whole tool answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
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
        crate::quoted(q),
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

/// One line matcher, with smart case: a literal query with an uppercase letter (or none that
/// has a case) is a plain substring search; the rest go through the regex engine (a literal
/// escaped, case-insensitive when smart case says so).
enum Matcher {
    Exact(String),
    Regex(regex::Regex),
}

impl Matcher {
    fn new(query: &str, regex: bool) -> Result<Matcher> {
        let (pattern, insensitive) = if regex {
            // A leading `(?i)` is the regex's own flag; otherwise smart case.
            (query.to_string(), !has_uppercase_literal(query))
        } else if query.chars().any(char::is_uppercase) || !query.chars().any(char::is_alphabetic) {
            return Ok(Matcher::Exact(query.to_string()));
        } else {
            (regex::escape(query), true)
        };
        regex::RegexBuilder::new(&pattern)
            .case_insensitive(insensitive)
            .build()
            .map(Matcher::Regex)
            .map_err(|e| Error::Input(format!("invalid search regex: {e}")))
    }

    /// Char offset of the first match in `line`.
    fn find(&self, line: &str) -> Option<usize> {
        let at = match self {
            Matcher::Exact(q) => line.find(q.as_str())?,
            Matcher::Regex(r) => r.find(line)?.start(),
        };
        Some(line[..at].chars().count())
    }
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
        Matcher::new(p, true).unwrap().find(line)
    }

    #[test]
    fn regex_matches_per_line() {
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
    fn rejects_invalid_patterns() {
        for p in ["(a", "a{2", "*a", "[abc", "\\", "[z-a]"] {
            let e = Matcher::new(p, true).err().expect(p);
            assert_eq!(e.code(), "CACHEFOLD_INPUT", "{p}");
            assert!(e.to_string().contains("invalid search regex"), "{e}");
        }
        assert_eq!(m("(a|b)c{2}", "xbcc"), Some(1));
        assert_eq!(m("a\\{2\\}", "a{2}"), Some(0));
        // A literal query is never a pattern.
        assert_eq!(Matcher::new("(a", false).unwrap().find("x(a"), Some(1));
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
