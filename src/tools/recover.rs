//! Bounded ranges out of an artifact or a folded region (`cachefold_recover`).
//!
//! Units:
//! - `lines: [start, end]`, 1-based and inclusive. Line *k* is the text after the (k−1)-th
//!   `\n` up to (not including) the k-th; a final `\n` does not start a line. The returned text
//!   is exactly the bytes from the start of line `start` to the end of the last returned line,
//!   without its terminating newline.
//! - `chars: [start, end)`, 0-based Unicode scalar offsets, half-open.
//!
//! Output is capped at `max_chars` (default [`DEFAULT_MAX_CHARS`]): a line range stops at the
//! last whole line that fits; when even the first line is longer than the cap, the answer
//! switches to a char range inside that line. `remaining` counts units after the returned
//! range to the end of the text, and [`render`] says which call fetches the next range.
//! Out-of-range requests are clamped, never errors.

use crate::error::{Error, Result};
use crate::tools::shrink::{group, validate_artifact_id};
use serde::Serialize;
use serde_json::Value;

/// Default cap on returned chars.
pub const DEFAULT_MAX_CHARS: u64 = 8_000;
/// Largest cap a caller may ask for.
pub const MAX_MAX_CHARS: u64 = 32_000;

/// What to return.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RangeSpec {
    /// 1-based inclusive line range.
    pub lines: Option<(u64, u64)>,
    /// 0-based half-open char range (wins over `lines` when both are given).
    pub chars: Option<(u64, u64)>,
    /// Cap on returned chars (0 = default; clamped to [`MAX_MAX_CHARS`]).
    pub max_chars: u64,
}

/// One recovered range.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Recovered {
    /// The exact text of the range.
    pub text: String,
    /// First unit returned (line number, or char offset).
    pub start: u64,
    /// Lines: last line returned (inclusive; `start - 1` when empty). Chars: end offset (exclusive).
    pub end: u64,
    /// Units in the whole text.
    pub total: u64,
    /// `"lines"` or `"chars"`.
    pub unit: String,
    /// Units after `end` to the end of the text.
    pub remaining: u64,
}

/// Where a recover id points (serialised as `{"kind":"artifact"|"fold"|"condensed","id":…}`).
///
/// Kinds are told apart by the *whole* shape of the id, never by its first letter: a
/// content-addressed artifact id is a hex digest and starts with `f` or `c` one time in eight.
/// The shapes are disjoint (a digest is 40 chars, the others at most 10), so a new kind (turn
/// ids `t<k>`, topic ids) only needs a new shape in [`ID_SHAPES`] that no other shape matches.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", content = "id", rename_all = "lowercase")]
pub enum RecoverTarget {
    /// A content-addressed artifact (40 lowercase hex).
    Artifact(String),
    /// A folded region, `f<k>`.
    Fold(String),
    /// A condensed range (every fold merged into one record), `c<k>`; stored like a fold.
    Condensed(String),
    /// A committed turn, `t<k>`: its messages, read from the folds that hold them.
    Turn(String),
    /// A topic, `T<n>`: the messages of its turns, read from the folds that hold them.
    Topic(String),
}

impl RecoverTarget {
    /// The id.
    pub fn id(&self) -> &str {
        match self {
            RecoverTarget::Artifact(s)
            | RecoverTarget::Fold(s)
            | RecoverTarget::Condensed(s)
            | RecoverTarget::Turn(s)
            | RecoverTarget::Topic(s) => s,
        }
    }
}

/// Every id shape `cachefold_recover` accepts, for error messages.
pub const ID_SHAPES: &str =
    "an artifact id (40 lowercase hex digits), a fold id (`f` + 1-9 digits), a condensed id (`c` + 1-9 digits), a turn id (`t` + 1-9 digits) or a topic id (`T` + 1-9 digits)";

/// `prefix` followed by 1-9 ASCII digits, exactly.
fn numbered(id: &str, prefix: char) -> bool {
    id.strip_prefix(prefix)
        .is_some_and(|d| !d.is_empty() && d.len() <= 9 && d.bytes().all(|b| b.is_ascii_digit()))
}

/// Parse a `cachefold_recover` id by its full shape (see [`RecoverTarget`]).
pub fn parse_target(id: &str) -> Result<RecoverTarget> {
    if validate_artifact_id(id).is_ok() {
        return Ok(RecoverTarget::Artifact(id.to_string()));
    }
    if numbered(id, 'f') {
        return Ok(RecoverTarget::Fold(id.to_string()));
    }
    if numbered(id, 'c') {
        return Ok(RecoverTarget::Condensed(id.to_string()));
    }
    if numbered(id, 't') && !id[1..].bytes().all(|b| b == b'0') {
        return Ok(RecoverTarget::Turn(id.to_string()));
    }
    if numbered(id, 'T') && !id[1..].bytes().all(|b| b == b'0') {
        return Ok(RecoverTarget::Topic(id.to_string()));
    }
    Err(Error::InvalidId(format!(
        "id must be {ID_SHAPES}, got {}",
        crate::quoted(&short(id))
    )))
}

fn short(s: &str) -> String {
    crate::text::head_chars(s, 48).to_string()
}

fn cap(spec: &RangeSpec) -> u64 {
    if spec.max_chars == 0 {
        DEFAULT_MAX_CHARS
    } else {
        spec.max_chars.min(MAX_MAX_CHARS)
    }
}

/// The range `spec` asks for, bounded (see the module docs).
pub fn recover_range(text: &str, spec: &RangeSpec) -> Recovered {
    let max = cap(spec);
    if let Some((s, e)) = spec.chars {
        return char_range(text, s, e, max);
    }
    let (s, e) = spec.lines.unwrap_or((1, u64::MAX));
    line_range(text, s.max(1), e, max)
}

fn char_range(text: &str, start: u64, end: u64, max: u64) -> Recovered {
    let total = text.chars().count() as u64;
    let s = start.min(total);
    let e = end.max(s).min(total).min(s.saturating_add(max));
    let out = slice_chars(text, s, e);
    Recovered {
        text: out.to_string(),
        start: s,
        end: e,
        total,
        unit: "chars".into(),
        remaining: total - e,
    }
}

/// `text[s..e)` in chars, by one scan.
fn slice_chars(text: &str, s: u64, e: u64) -> &str {
    let mut b_start = text.len();
    let mut b_end = text.len();
    for (n, (i, _)) in text.char_indices().enumerate() {
        let n = n as u64;
        if n == s {
            b_start = i;
        }
        if n == e {
            b_end = i;
            break;
        }
    }
    text.get(b_start..b_end.max(b_start)).unwrap_or("")
}

fn line_range(text: &str, start: u64, end: u64, max: u64) -> Recovered {
    let total = crate::tools::shrink::count_lines(text);
    if start > total || end < start {
        let s = start.min(total + 1);
        return Recovered {
            text: String::new(),
            start: s,
            end: s - 1,
            total,
            unit: "lines".into(),
            remaining: total.saturating_sub(s - 1),
        };
    }
    // Byte offset of the start of line `start`.
    let bytes = text.as_bytes();
    let mut line = 1u64;
    let mut b = 0usize;
    if start > 1 {
        for (i, c) in bytes.iter().enumerate() {
            if *c == b'\n' {
                line += 1;
                if line == start {
                    b = i + 1;
                    break;
                }
            }
        }
    }
    let want_end = end.min(total);
    let mut used = 0u64; // chars taken so far, including separators between lines
    let mut last = start - 1;
    let mut out_end = b; // byte end of returned text
    let rest = text.get(b..).unwrap_or("");
    let mut off = 0usize; // byte offset of `piece` within `rest`
    for (k, piece) in rest.split('\n').enumerate() {
        let ln = start + k as u64;
        if ln > want_end {
            break;
        }
        let sep = u64::from(ln > start);
        let n = piece.chars().count() as u64;
        if used + sep + n > max {
            break;
        }
        used += sep + n;
        last = ln;
        out_end = b + off + piece.len();
        off += piece.len() + 1;
    }
    if last < start {
        // The first line alone is over the cap: return a char range inside it instead.
        let char_start = text.get(..b).map_or(0, |p| p.chars().count() as u64);
        return char_range(text, char_start, char_start.saturating_add(max), max);
    }
    Recovered {
        text: text.get(b..out_end).unwrap_or("").to_string(),
        start,
        end: last,
        total,
        unit: "lines".into(),
        remaining: total - last,
    }
}

/// `RangeSpec` from the tool's params `{lines?: [start, end], chars?: [start, end], maxChars?}`.
/// Numbers may be integers or integral floats ≥ 0; anything else is an [`Error::Input`] that
/// names the parameter, so the model can correct its call.
pub fn spec_from_params(params: &Value) -> Result<RangeSpec> {
    let pair = |key: &str| -> Result<Option<(u64, u64)>> {
        match params.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Array(a)) if a.len() == 2 => {
                let n = |v: &Value| {
                    count(v).ok_or_else(|| {
                        Error::Input(format!(
                            "`{key}` must be two non-negative integers [start, end]"
                        ))
                    })
                };
                Ok(Some((n(&a[0])?, n(&a[1])?)))
            }
            Some(_) => Err(Error::Input(format!(
                "`{key}` must be two non-negative integers [start, end]"
            ))),
        }
    };
    let max_chars = match params.get("maxChars") {
        None | Some(Value::Null) => 0,
        Some(v) => {
            count(v).ok_or_else(|| Error::Input("`maxChars` must be a positive integer".into()))?
        }
    };
    Ok(RangeSpec {
        lines: pair("lines")?,
        chars: pair("chars")?,
        max_chars,
    })
}

fn count(v: &Value) -> Option<u64> {
    let f = v.as_f64()?;
    // 9e15 < 2^53: every integer below it is exact in f64.
    (f >= 0.0 && f.fract() == 0.0 && f < 9.0e15).then_some(f as u64)
}

/// Details of a recover answer (small; for `details` of the tool result).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AnswerDetails {
    /// The id asked for.
    pub id: String,
    /// `"lines"` or `"chars"`.
    pub unit: String,
    /// First unit returned.
    pub start: u64,
    /// See [`Recovered::end`].
    pub end: u64,
    /// Units in the whole text.
    pub total: u64,
    /// Units after `end`.
    pub remaining: u64,
}

/// The whole tool answer: rendered text plus small details.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Answer {
    /// Tool result text (header line + range).
    pub text: String,
    /// Tool result details.
    pub details: AnswerDetails,
}

/// Recover from `text` what the tool params ask for, rendered for the model.
pub fn answer(id: &str, text: &str, params: &Value) -> Result<Answer> {
    let spec = spec_from_params(params)?;
    let r = recover_range(text, &spec);
    let rendered = render(id, &r, spec.max_chars);
    Ok(Answer {
        text: rendered,
        details: AnswerDetails {
            id: id.to_string(),
            unit: r.unit,
            start: r.start,
            end: r.end,
            total: r.total,
            remaining: r.remaining,
        },
    })
}

/// The tool's answer: one header line, then the text.
///
/// ```text
/// [cachefold_recover] <id> lines 41-240 of 1,204 (964 more). Next: cachefold_recover {"id":"<id>","lines":[241,440]}
/// <text>
/// ```
pub fn render(id: &str, r: &Recovered, max_chars: u64) -> String {
    let max = if max_chars == 0 {
        DEFAULT_MAX_CHARS
    } else {
        max_chars.min(MAX_MAX_CHARS)
    };
    let mut out = String::with_capacity(r.text.len() + 200);
    out.push_str("[cachefold_recover] ");
    out.push_str(id);
    let empty = if r.unit == "lines" {
        r.end < r.start
    } else {
        r.end <= r.start
    };
    if empty {
        out.push_str(&format!(
            " has {} {}; nothing in the requested range.",
            group(r.total),
            r.unit
        ));
    } else if r.unit == "lines" {
        out.push_str(&format!(
            " lines {}-{} of {}",
            group(r.start),
            group(r.end),
            group(r.total)
        ));
    } else {
        out.push_str(&format!(
            " chars {}-{} of {}",
            group(r.start),
            group(r.end),
            group(r.total)
        ));
    }
    if !empty {
        if r.remaining == 0 {
            out.push_str(" (end of text).");
        } else if r.unit == "lines" {
            let a = r.end + 1;
            out.push_str(&format!(
                " ({} more). Next: cachefold_recover {{\"id\":\"{id}\",\"lines\":[{a},{}]}}",
                group(r.remaining),
                a + (r.end - r.start)
            ));
        } else {
            let a = r.end;
            out.push_str(&format!(
                " ({} more). Next: cachefold_recover {{\"id\":\"{id}\",\"chars\":[{a},{}]}}",
                group(r.remaining),
                a + max
            ));
        }
    }
    out.push('\n');
    out.push_str(&r.text);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: &str = "one\ntwo\nthree\n\nfive";

    fn lines(s: u64, e: u64, max: u64) -> Recovered {
        recover_range(
            T,
            &RangeSpec {
                lines: Some((s, e)),
                chars: None,
                max_chars: max,
            },
        )
    }

    #[test]
    fn line_ranges_are_exact() {
        let r = lines(2, 3, 0);
        assert_eq!(r.text, "two\nthree");
        assert_eq!((r.start, r.end, r.total, r.remaining), (2, 3, 5, 2));
        assert_eq!(r.unit, "lines");
        let r = lines(1, 5, 0);
        assert_eq!(r.text, T);
        assert_eq!(r.remaining, 0);
        let r = lines(4, 4, 0);
        assert_eq!(r.text, "");
        assert_eq!((r.start, r.end), (4, 4));
        let r = lines(5, 99, 0);
        assert_eq!(r.text, "five");
        // Trailing newline does not start a line.
        let r = recover_range(
            "a\nb\n",
            &RangeSpec {
                lines: Some((2, 9)),
                ..Default::default()
            },
        );
        assert_eq!((r.text.as_str(), r.total, r.end), ("b", 2, 2));
        let r = recover_range("a\nb\n", &RangeSpec::default());
        assert_eq!(r.text, "a\nb");
    }

    #[test]
    fn line_ranges_respect_the_cap() {
        // "one"(3) + "\ntwo"(4) = 7; + "\nthree"(6) = 13.
        let r = lines(1, 5, 12);
        assert_eq!(r.text, "one\ntwo");
        assert_eq!((r.end, r.remaining), (2, 3));
        let text = render("f3", &r, 12);
        assert!(text.starts_with("[cachefold_recover] f3 lines 1-2 of 5 (3 more). Next: cachefold_recover {\"id\":\"f3\",\"lines\":[3,4]}\none\ntwo"), "{text}");
    }

    #[test]
    fn huge_first_line_switches_to_chars() {
        let t = format!("short\n{}\nafter", "z".repeat(100));
        let r = recover_range(
            &t,
            &RangeSpec {
                lines: Some((2, 3)),
                chars: None,
                max_chars: 30,
            },
        );
        assert_eq!(r.unit, "chars");
        assert_eq!((r.start, r.end), (6, 36));
        assert_eq!(r.text, "z".repeat(30));
        assert_eq!(r.remaining, t.chars().count() as u64 - 36);
    }

    #[test]
    fn char_ranges_are_exact() {
        let t = "héllo wörld";
        let r = recover_range(
            t,
            &RangeSpec {
                chars: Some((1, 5)),
                lines: Some((1, 1)),
                max_chars: 0,
            },
        );
        assert_eq!(r.text, "éllo");
        assert_eq!((r.start, r.end, r.total, r.remaining), (1, 5, 11, 6));
        let r = recover_range(
            t,
            &RangeSpec {
                chars: Some((6, 999)),
                ..Default::default()
            },
        );
        assert_eq!(r.text, "wörld");
        assert_eq!(r.remaining, 0);
        let r = recover_range(
            t,
            &RangeSpec {
                chars: Some((0, 999)),
                lines: None,
                max_chars: 3,
            },
        );
        assert_eq!(r.text, "hél");
        assert!(render("x", &r, 3).contains(r#""chars":[3,6]"#));
        let r = recover_range(
            t,
            &RangeSpec {
                chars: Some((50, 60)),
                ..Default::default()
            },
        );
        assert_eq!(
            (r.text.as_str(), r.start, r.end, r.remaining),
            ("", 11, 11, 0)
        );
        let r = recover_range(
            t,
            &RangeSpec {
                chars: Some((5, 2)),
                ..Default::default()
            },
        );
        assert_eq!(r.text, "");
    }

    #[test]
    fn out_of_range_lines() {
        let r = lines(9, 12, 0);
        assert_eq!(r.text, "");
        assert_eq!((r.start, r.end, r.remaining), (6, 5, 0));
        assert!(render("f1", &r, 0).contains("has 5 lines; nothing in the requested range."));
        let r = lines(0, 1, 0);
        assert_eq!(r.text, "one");
        let r = lines(3, 2, 0);
        assert_eq!(r.text, "");
        let r = recover_range("", &RangeSpec::default());
        assert_eq!((r.total, r.remaining, r.text.as_str()), (0, 0, ""));
    }

    #[test]
    fn caps() {
        let big = "x\n".repeat(100_000);
        let r = recover_range(&big, &RangeSpec::default());
        assert!(r.text.chars().count() as u64 <= DEFAULT_MAX_CHARS);
        assert_eq!(r.end, 4_000); // 4,000 × "x" + 3,999 separators = 7,999
        let r = recover_range(
            &big,
            &RangeSpec {
                max_chars: 1_000_000,
                ..Default::default()
            },
        );
        assert!(r.text.chars().count() as u64 <= MAX_MAX_CHARS);
    }

    #[test]
    fn params_and_answer() {
        let t = "a\nb\nc";
        let a = answer("f1", t, &serde_json::json!({"id": "f1", "lines": [2, 3]})).unwrap();
        assert_eq!(
            a.text,
            "[cachefold_recover] f1 lines 2-3 of 3 (end of text).\nb\nc"
        );
        assert_eq!(
            (a.details.start, a.details.end, a.details.remaining),
            (2, 3, 0)
        );
        let a = answer(
            "f1",
            t,
            &serde_json::json!({"chars": [0.0, 1], "maxChars": null}),
        )
        .unwrap();
        assert_eq!(a.details.unit, "chars");
        for bad in [
            serde_json::json!({"lines": [1]}),
            serde_json::json!({"lines": [-1, 2]}),
            serde_json::json!({"chars": "0-5"}),
            serde_json::json!({"maxChars": 1.5}),
        ] {
            assert_eq!(
                answer("f1", t, &bad).unwrap_err().code(),
                "CACHEFOLD_INPUT",
                "{bad}"
            );
        }
        assert_eq!(
            serde_json::to_string(&parse_target("f2").unwrap()).unwrap(),
            r#"{"kind":"fold","id":"f2"}"#
        );
    }

    #[test]
    fn targets() {
        assert_eq!(
            parse_target("f12").unwrap(),
            RecoverTarget::Fold("f12".into())
        );
        let id = crate::tools::shrink::artifact_id("x");
        assert_eq!(
            parse_target(&id).unwrap(),
            RecoverTarget::Artifact(id.clone())
        );
        assert_eq!(
            parse_target("t3").unwrap(),
            RecoverTarget::Turn("t3".into())
        );
        assert_eq!(
            serde_json::to_string(&parse_target("T2").unwrap()).unwrap(),
            r#"{"kind":"topic","id":"T2"}"#
        );
        for bad in [
            "f",
            "f1a",
            "f../x",
            "../x",
            "/etc/passwd",
            "F1",
            "f1234567890",
            &id.to_uppercase(),
            "ｆ1",
        ] {
            assert_eq!(
                parse_target(bad).unwrap_err().code(),
                "CACHEFOLD_INVALID_ID",
                "{bad}"
            );
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(300))]
        /// Line and char ranges equal a naive slice of the text, within the cap, with `remaining`
        /// consistent; `next` ranges tile the text.
        #[test]
        fn ranges_equal_naive(lines in proptest::collection::vec("[a-zé語]{0,30}", 0..40), trailing_nl: bool,
                              s in 0u64..45, len in 0u64..45, max in 1u64..200) {
            let mut text = lines.join("\n");
            if trailing_nl && !text.is_empty() { text.push('\n'); }
            let all: Vec<&str> = if text.is_empty() { vec![] } else { text.strip_suffix('\n').unwrap_or(&text).split('\n').collect() };
            let r = recover_range(&text, &RangeSpec { lines: Some((s, s + len)), chars: None, max_chars: max });
            proptest::prop_assert!(r.text.chars().count() as u64 <= max);
            if r.unit == "lines" {
                proptest::prop_assert_eq!(r.total, all.len() as u64);
                let lo = (r.start.max(1) - 1) as usize;
                let hi = (r.end as usize).min(all.len());
                let expect = if lo < hi { all[lo..hi].join("\n") } else { String::new() };
                proptest::prop_assert_eq!(&r.text, &expect);
                proptest::prop_assert_eq!(r.remaining, r.total - r.end.min(r.total));
            } else {
                // Fallback: the first requested line is longer than the cap.
                let chars: Vec<char> = text.chars().collect();
                proptest::prop_assert_eq!(r.total, chars.len() as u64);
                proptest::prop_assert!(all[(s.max(1) - 1) as usize].chars().count() as u64 > max);
                let expect: String = chars[r.start as usize..r.end as usize].iter().collect();
                proptest::prop_assert_eq!(&r.text, &expect);
                proptest::prop_assert_eq!(r.remaining, chars.len() as u64 - r.end);
            }
            let c = recover_range(&text, &RangeSpec { chars: Some((s, s + len)), lines: None, max_chars: max });
            let chars: Vec<char> = text.chars().collect();
            let a = (s as usize).min(chars.len());
            let b = ((s + len) as usize).min(chars.len()).min(a + max as usize).max(a);
            proptest::prop_assert_eq!(c.text, chars[a..b].iter().collect::<String>());
        }
    }

    /// Proptest counterexample (kept): when the first requested line is over the cap, the
    /// answer is a char range and `total` counts chars, not lines.
    #[test]
    fn regression_long_line_fallback_counts_chars() {
        let text = "\n\n\n語éé語語語éaééa語aaa語éaaa語ééa語aaa";
        let r = recover_range(
            text,
            &RangeSpec {
                lines: Some((4, 4)),
                chars: None,
                max_chars: 1,
            },
        );
        assert_eq!(
            (r.unit.as_str(), r.start, r.end, r.total, r.remaining),
            ("chars", 3, 4, 31, 27)
        );
        assert_eq!(r.text, "語");
    }

    #[test]
    fn matches_a_naive_split() {
        let t = "alpha\n\nbeta\ngamma\ndelta\n";
        let all: Vec<&str> = t.strip_suffix('\n').unwrap().split('\n').collect();
        for s in 1..=6u64 {
            for e in s..=6u64 {
                let r = recover_range(
                    t,
                    &RangeSpec {
                        lines: Some((s, e)),
                        ..Default::default()
                    },
                );
                let lo = (s - 1) as usize;
                let hi = (e as usize).min(all.len());
                let expect = if lo < all.len() {
                    all[lo..hi].join("\n")
                } else {
                    String::new()
                };
                assert_eq!(r.text, expect, "{s}-{e}");
            }
        }
    }
}
