//! The digest's byte-level scanners and searcher-free searches against the code they replaced
//! (kept here as the oracles): the same digests, on generated texts.

use super::tests::HEX40;
use super::*;
use serde_json::json;

/// The scanners as they were written before the byte-level rewrite (char searches, a lowered
/// copy of the extension, `one_line` over the whole text): the oracle the rewrite must equal.
mod before_bytes {
    use super::super::scan::EXTENSIONS_FOR_TESTS as EXTENSIONS;
    use crate::digest::{ITEM_CHARS, MAX_ARTIFACTS};

    pub fn artifact_ids(text: &str) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        let lower = text.to_ascii_lowercase();
        let mut from = 0;
        while let Some(pos) = lower[from..].find("artifact") {
            let start = from + pos + "artifact".len();
            let line_end = lower[start..]
                .find('\n')
                .map(|i| start + i)
                .unwrap_or(lower.len());
            if let Some(id) = first_hex40(&lower[start..line_end]) {
                if !out.iter().any(|x| x == id) && out.len() < MAX_ARTIFACTS {
                    out.push(id.to_string());
                }
            }
            from = start;
        }
        out
    }

    fn first_hex40(s: &str) -> Option<&str> {
        let b = s.as_bytes();
        let mut i = 0;
        while i < b.len() {
            if b[i].is_ascii_hexdigit() {
                let start = i;
                while i < b.len() && b[i].is_ascii_hexdigit() {
                    i += 1;
                }
                if i - start == 40
                    && (start == 0 || !b[start - 1].is_ascii_alphanumeric())
                    && (i == b.len() || !b[i].is_ascii_alphanumeric())
                {
                    return s.get(start..i);
                }
            } else {
                i += 1;
            }
        }
        None
    }

    pub fn has_known_ext(name: &str) -> bool {
        match name.rsplit_once('.') {
            Some((stem, ext)) if !stem.is_empty() => {
                let e = ext.to_ascii_lowercase();
                EXTENSIONS.contains(&e.as_str())
            }
            _ => false,
        }
    }

    pub fn clean_token(tok: &str) -> &str {
        let mut t = tok.trim_matches(|c: char| {
            matches!(
                c,
                '"' | '\''
                    | '`'
                    | '('
                    | '['
                    | '{'
                    | '<'
                    | ')'
                    | ']'
                    | '}'
                    | '>'
                    | ','
                    | ';'
                    | '!'
                    | '?'
            )
        });
        if let Some((_, v)) = t.split_once('=') {
            t = v.trim_matches(|c: char| matches!(c, '"' | '\'' | '`'));
        }
        t = t.trim_end_matches(|c: char| {
            matches!(
                c,
                '.' | ':' | ',' | ';' | ')' | ']' | '}' | '\'' | '"' | '`'
            )
        });
        loop {
            match t.rsplit_once(':') {
                Some((head, tail))
                    if !tail.is_empty()
                        && tail.bytes().all(|b| b.is_ascii_digit())
                        && !head.is_empty() =>
                {
                    t = head
                }
                _ => break,
            }
        }
        t
    }

    pub fn is_path_like(t: &str) -> bool {
        let n = t.chars().count();
        if !(3..=ITEM_CHARS).contains(&n) || t.contains("://") {
            return false;
        }
        if !t
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._-/\\~@+%:".contains(c))
        {
            return false;
        }
        // The segment rules after these tests are the scan's own (`path_shape`).
        super::super::scan::path_shape(t)
    }
}

fn token_strategy() -> impl proptest::strategy::Strategy<Value = String> {
    use proptest::prelude::*;
    let piece = prop_oneof![
        Just("src".to_string()),
        Just("main.RS".to_string()),
        Just(".rs".to_string()),
        Just("a.Json".to_string()),
        Just("Dockerfile".to_string()),
        Just("x.dockerfile".to_string()),
        Just("é.rs".to_string()),
        Just("ü".to_string()),
        Just("https://".to_string()),
        Just("12".to_string()),
        "[a-zA-Z0-9_]{0,6}",
        "[ -~]{0,4}",
        prop::sample::select(vec![
            "/", "\\", ".", ":", "::", "=", "\"", "'", "`", "(", ")", "[", "]", "{", "}", "<", ">",
            ",", ";", "!", "?", "~/", "./", "../", "C:\\", ":12", ":3:4", "..", "-", "@", "+", "%",
        ])
        .prop_map(str::to_string),
    ];
    proptest::collection::vec(piece, 0..8).prop_map(|v| v.concat())
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(4_000))]
    #[test]
    fn byte_scanners_equal_the_char_scanners(tok in token_strategy()) {
        proptest::prop_assert_eq!(super::scan::clean_token(&tok), before_bytes::clean_token(&tok));
        // The segment rules are shared (`path_shape`); the extension test they use is compared here.
        proptest::prop_assert_eq!(super::scan::has_known_ext(&tok), before_bytes::has_known_ext(&tok), "{:?}", tok);
        proptest::prop_assert_eq!(is_path_like(&tok), before_bytes::is_path_like(&tok), "{:?}", tok);
        let cleaned = super::scan::clean_token(&tok);
        proptest::prop_assert_eq!(is_path_like(cleaned), before_bytes::is_path_like(cleaned), "{:?}", cleaned);
    }

    #[test]
    fn artifact_ids_equal_the_lowered_copy_scan(
        parts in proptest::collection::vec(
            proptest::prop_oneof![
                proptest::strategy::Just("artifact ".to_string()),
                proptest::strategy::Just("ARTIFACT: ".to_string()),
                proptest::strategy::Just("ArTiFaCt".to_string()),
                // Near misses and overlaps for the skipping search.
                proptest::strategy::Just("artifac".to_string()),
                proptest::strategy::Just("aRtI".to_string()),
                proptest::strategy::Just("fact".to_string()),
                proptest::strategy::Just("T".to_string()),
                proptest::strategy::Just("artiartifact".to_string()),
                proptest::strategy::Just("\u{54}\u{c1}".to_string()),
                proptest::strategy::Just("\n".to_string()),
                proptest::strategy::Just("é".to_string()),
                proptest::strategy::Just(HEX40.to_string()),
                proptest::strategy::Just(HEX40.to_ascii_uppercase()),
                proptest::strategy::Just("0123456789ABCDEFabcdef0123456789abcdef01".to_string()),
                "[0-9a-fA-Fx -]{0,8}",
            ],
            0..14,
        ),
    ) {
        let text = parts.concat();
        proptest::prop_assert_eq!(artifact_ids(&text), before_bytes::artifact_ids(&text));
    }

    #[test]
    fn identifier_scan_skips_change_nothing(
        toks in proptest::collection::vec(
            proptest::prop_oneof![
                token_strategy(),
                "[a-z]{0,9}",
                "[a-zA-Z0-9_:/.-]{0,12}",
                proptest::strategy::Just("http://example.com/a_b".to_string()),
                proptest::strategy::Just("abcdefab-abcd-abcd-abcd-abcdefabcdef".to_string()),
                proptest::strategy::Just("ab-cdef12".to_string()),
                proptest::strategy::Just("x\u{b}y".to_string()),
                proptest::strategy::Just("42;".to_string()),
                proptest::strategy::Just("a1-b2-c3".to_string()),
                proptest::strategy::Just("ab:cd".to_string()),
                "[0-9a-f;:_()-]{0,8}",
                "[a-z]{0,3}[A-Z_-][a-z0-9é]{0,3}",
            ],
            0..40,
        ),
        seps in proptest::collection::vec(
            proptest::sample::select(vec![
                " ", "\n", "\t", "\u{b}", "\u{c}", "\r\n", "\u{a0}", "  ", "é ", "\u{85}", "\u{2028}",
                "\u{3000}", "\u{1f}",
            ]),
            40,
        ),
    ) {
        let mut text = String::new();
        for (t, s) in toks.iter().zip(&seps) {
            text.push_str(t);
            text.push_str(s);
        }
        let mut fast = IdentCollector::default();
        fast.scan(&text);
        let mut all = IdentCollector::default();
        all.scan_unfiltered(&text);
        proptest::prop_assert_eq!(fast.finish(usize::MAX), all.finish(usize::MAX), "{:?}", text);
    }

    #[test]
    fn gist_equals_the_clip_of_the_whole_line(
        words in proptest::collection::vec("[a-zé]{0,12}|[ \n\t]{1,3}", 0..120),
    ) {
        let text = words.concat();
        proptest::prop_assert_eq!(gist(&text), clip(&one_line(&text), GIST_CHARS));
    }
}

#[test]
fn gist_of_long_texts_equals_the_clip_of_the_whole_line() {
    let mut met = 0;
    for n in [0usize, 1, 150, 299, 300, 301, 302, 303, 600, 5_000] {
        for unit in ["a ", "ab\n", "é  ", "word ", "x"] {
            let text = unit.repeat(n);
            assert_eq!(
                gist(&text),
                clip(&one_line(&text), GIST_CHARS),
                "{unit:?} × {n}"
            );
            met += 1;
        }
    }
    assert_eq!(met, 50);
}
/// The searches line by line (a lowered copy of each trimmed line, `str::contains` per word):
/// the oracle of [`error_lines`], which lowers the whole text once and reads no line of a text
/// without a key, and of the churn and shell tests.
mod before_searches {
    use crate::digest::scan::{ERROR_CLEAR, ERROR_KEYS};
    use crate::digest::ITEM_CHARS;
    use crate::text::{clip, one_line};

    pub fn error_lines(text: &str, max: usize) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for line in text.lines() {
            if out.len() >= max {
                break;
            }
            let l = line.trim();
            let lower = l.to_ascii_lowercase();
            if l.is_empty()
                || l.len() > 4_000
                || !ERROR_KEYS.iter().any(|k| lower.contains(k))
                || ERROR_CLEAR.iter().any(|c| lower.contains(c))
            {
                continue;
            }
            let item = clip(&one_line(l), ITEM_CHARS);
            if !out.contains(&item) {
                out.push(item);
            }
        }
        out
    }

    /// `collapse_churn`'s test for markers.
    pub fn has_churn(text: &str) -> bool {
        text.contains("<<<")
            || text.contains("untrusted")
            || text.contains("⟦openclaw:ctx⟧")
            || text.contains("[Internal task completion event]")
            || text.contains("OpenClaw runtime context (internal):")
            || text.contains("Delivery:")
    }

    /// `shell_command`'s test of the tool name.
    pub fn shellish(tool_name: &str) -> bool {
        let t = tool_name.to_ascii_lowercase();
        matches!(
            t.as_str(),
            "exec" | "bash" | "shell" | "sh" | "run" | "terminal" | "run_command" | "process"
        ) || t.contains("exec")
            || t.contains("bash")
            || t.contains("shell")
    }
}

/// Texts made of the searched words, their near misses and case variants.
fn search_text_strategy() -> impl proptest::strategy::Strategy<Value = String> {
    use proptest::prelude::*;
    let piece = prop_oneof![
        prop::sample::select(vec![
            "error",
            "ERROR",
            "Errors: 0",
            "eRr",
            "errorr",
            "failed",
            " 0 failed",
            "0 FAILED",
            "fail",
            "Failure",
            "0 failures",
            "panic",
            "PANI",
            "traceback",
            "trace",
            "exception",
            "fatal",
            "fata",
            "no errors",
            "no error",
            "error: 0",
            "0 errors",
            "<<<",
            "<<",
            "<",
            "untrusted",
            "untruste",
            "UNTRUSTED",
            "⟦openclaw:ctx⟧",
            "⟦openclaw:ctx",
            "⟦",
            "[Internal task completion event]",
            "[Internal task",
            "OpenClaw runtime context (internal):",
            "OpenClaw runtime",
            "Delivery:",
            "Delivery",
            "delivery:",
            "exec",
            "EXEC",
            "exe",
            "bash",
            "Bash",
            "bas",
            "shell",
            "SHELL",
            "shel",
            "sh",
            "run",
            "terminal",
            "run_command",
            "process",
            "é",
            "İ",
            "K",
            "ſ",
            "\n",
            "\r\n",
            " ",
            "\t",
        ])
        .prop_map(str::to_string),
        "[a-zA-Z0-9 :<]{0,6}",
    ];
    proptest::collection::vec(piece, 0..12).prop_map(|v| v.concat())
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(4_000))]
    #[test]
    fn searches_over_a_lowered_text_equal_the_searches_line_by_line(text in search_text_strategy()) {
        for max in [1, MAX_ERRORS, usize::MAX] {
            proptest::prop_assert_eq!(
                error_lines(&text, max),
                before_searches::error_lines(&text, max),
                "{:?}", text
            );
        }
        let args = json!({"command": "ls"});
        proptest::prop_assert_eq!(
            shell_command(&text, &args).is_some(),
            before_searches::shellish(&text),
            "{:?}", text
        );
        // Text without markers is handed back unchanged (not collapsed).
        if !before_searches::has_churn(&text) {
            proptest::prop_assert_eq!(collapse_churn(&text), text.clone());
        }
    }
}
