//! Lessons: a workspace's conventions, learned once and injected only where they pay.
//!
//! A lesson is a small Markdown file with a frontmatter (see [`Lesson`]); project lessons live
//! in `<workspace>/.cachefold/lessons/` (meant to be committed), personal ones in
//! `<stateDir>/lessons/`, unpromoted candidates in `_candidates/` below either. The shim
//! (`js/lessons.js`) reads and writes the files and gathers fingerprint inputs; this module
//! parses, validates, renders, hashes, classifies, selects and redacts.
//!
//! | module | job |
//! |---|---|
//! | this file | [`Lesson`]: parse, validate, render; fingerprint hashing and staleness |
//! | [`redact`] | secrets never reach a lesson file, an injection or the decision log |
//! | [`classify`] | the first request → code-gen / exploration / qa / other, with confidence |
//! | [`select`] | the session's one decision: which lessons, the exact `systemPromptAddition` |
//! | [`capture`] | candidates from the session's digests (deterministic), LLM prompt and parsing |
//!
//! Cache rule: the addition is decided once per session (first assemble) and the shim replays
//! the recorded text byte for byte for the rest of the session; nothing here depends on time
//! or on state that changes mid-session.

pub mod capture;
pub mod classify;
pub mod redact;
pub mod select;

use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};

/// Longest lesson file accepted.
pub const MAX_FILE_BYTES: usize = 8 * 1024;
/// Most body lines.
pub const MAX_BODY_LINES: usize = 12;
/// Longest body line (characters); longer lines are rejected, not clipped.
pub const MAX_LINE_CHARS: usize = 240;
/// Longest description.
pub const MAX_DESCRIPTION_CHARS: usize = 200;
/// Most fingerprint entries.
pub const MAX_FINGERPRINT: usize = 16;

/// One lesson (a file's frontmatter and body).
#[derive(Serialize, Clone, Debug, PartialEq, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Lesson {
    /// `[a-z0-9][a-z0-9._-]{0,63}`; also the file name (`<name>.md`).
    pub name: String,
    /// One line: what the lesson is about (used for relevance).
    pub description: String,
    /// What it depends on: `path` (a file), `dir/` (a directory listing) or `file#a.b` (a
    /// JSON field), relative to the workspace.
    pub fingerprint: Vec<String>,
    /// ISO 8601 time of capture.
    pub captured_at: String,
    /// SHA-1 over the fingerprint inputs when captured (empty: never hashed).
    pub fingerprint_hash: String,
    /// 12-hex hash per fingerprint entry (same order), to say which input changed.
    pub fingerprint_parts: Vec<String>,
    /// Provenance: session id.
    pub session: String,
    /// Provenance: turn (message) id within the session.
    pub turn: String,
    /// Candidates only: the lesson this note refreshes.
    pub refresh_of: String,
    /// A few short lines.
    pub body: Vec<String>,
}

/// True for a valid lesson name.
pub fn valid_name(name: &str) -> bool {
    let b = name.as_bytes();
    !b.is_empty()
        && b.len() <= 64
        && (b[0].is_ascii_lowercase() || b[0].is_ascii_digit())
        && b.iter().all(|c| {
            c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, b'.' | b'_' | b'-')
        })
        && !name.contains("..")
}

/// A lesson name from free text (`"Test Runner!"` → `test-runner`), or `lesson`.
pub fn slug(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars().flat_map(char::to_lowercase) {
        if c.is_ascii_alphanumeric() {
            out.push(c);
        } else if !out.is_empty() && !out.ends_with('-') {
            out.push('-');
        }
        if out.len() >= 48 {
            break;
        }
    }
    let out = out.trim_matches(|c: char| c == '-').to_string();
    if out.is_empty() {
        "lesson".to_string()
    } else {
        out
    }
}

fn valid_fingerprint_entry(e: &str) -> bool {
    let path = e.split('#').next().unwrap_or("");
    !e.is_empty()
        && e.len() <= 200
        && !path.is_empty()
        && !path.starts_with('/')
        && !path.starts_with('\\')
        && !path.contains(':')
        && !path.split(['/', '\\']).any(|seg| seg == "..")
        && !e.chars().any(char::is_control)
}

fn unquote(v: &str) -> String {
    let v = v.trim();
    let b = v.as_bytes();
    if b.len() >= 2 && (b[0] == b'"' || b[0] == b'\'') && b[b.len() - 1] == b[0] {
        v[1..v.len() - 1].to_string()
    } else {
        v.to_string()
    }
}

fn inline_list(v: &str) -> Option<Vec<String>> {
    let v = v.trim();
    let inner = v.strip_prefix('[')?.strip_suffix(']')?;
    let mut out = Vec::new();
    for s in inner.split(',') {
        let s = unquote(s);
        if !s.is_empty() {
            out.push(s);
        }
    }
    Some(out)
}

impl Lesson {
    /// Parse a lesson file. Every problem is an `Input` error naming what is wrong; the shim
    /// logs it and skips the file.
    pub fn parse(text: &str) -> Result<Lesson> {
        let bad = |m: String| Error::Input(m);
        if text.len() > MAX_FILE_BYTES {
            return Err(bad(format!("lesson file over {MAX_FILE_BYTES} bytes")));
        }
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let mut lines = text.lines();
        if lines.next().map(str::trim_end) != Some("---") {
            return Err(bad("no frontmatter (the first line must be ---)".into()));
        }
        let mut l = Lesson::default();
        let mut list_key: Option<String> = None;
        let mut closed = false;
        for (n, line) in lines.by_ref().enumerate() {
            let lineno = n + 2;
            if line.trim_end() == "---" {
                closed = true;
                break;
            }
            if line.trim().is_empty() || line.trim_start().starts_with('#') {
                continue;
            }
            let t = line.trim_start();
            if let Some(item) = t
                .strip_prefix("- ")
                .or(if t == "-" { Some("") } else { None })
            {
                match list_key.as_deref() {
                    Some("fingerprint") => l.fingerprint.push(unquote(item)),
                    Some("fingerprint-parts") => l.fingerprint_parts.push(unquote(item)),
                    Some(_) => {}
                    None => return Err(bad(format!("line {lineno}: list item outside a list"))),
                }
                continue;
            }
            let Some((k, v)) = t.split_once(':') else {
                return Err(bad(format!("line {lineno}: expected `key: value`")));
            };
            let key = k.trim().to_ascii_lowercase();
            if key.is_empty()
                || !key
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b == b'-' || b == b'_')
            {
                return Err(bad(format!("line {lineno}: bad key {}", crate::quoted(k))));
            }
            let key = key.replace('_', "-");
            list_key = None;
            let v = v.trim();
            match key.as_str() {
                "fingerprint" | "fingerprint-parts" => {
                    let items = if v.is_empty() {
                        list_key = Some(key.clone());
                        Vec::new()
                    } else {
                        inline_list(v).unwrap_or_else(|| vec![unquote(v)])
                    };
                    if key == "fingerprint" {
                        l.fingerprint = items;
                    } else {
                        l.fingerprint_parts = items;
                    }
                }
                "name" => l.name = unquote(v),
                "description" => l.description = unquote(v),
                "captured-at" => l.captured_at = unquote(v),
                "fingerprint-hash" => l.fingerprint_hash = unquote(v),
                "session" => l.session = unquote(v),
                "turn" => l.turn = unquote(v),
                "refresh-of" => l.refresh_of = unquote(v),
                // Unknown keys (future fields, editor metadata) are ignored; lists under them too.
                _ => {
                    if v.is_empty() {
                        list_key = Some(key.clone());
                    }
                }
            }
        }
        if !closed {
            return Err(bad("frontmatter is not closed with ---".into()));
        }
        let mut body: Vec<String> = Vec::new();
        for s in lines {
            let s = s.trim_end();
            // Leading blank lines are dropped.
            if !body.is_empty() || !s.is_empty() {
                body.push(s.to_string());
            }
        }
        l.body = body;
        while l.body.last().is_some_and(|s| s.is_empty()) {
            l.body.pop();
        }
        l.validate()?;
        Ok(l)
    }

    /// Field checks shared by parsing, capture and LLM proposals.
    pub fn validate(&self) -> Result<()> {
        let bad = |m: String| Err(Error::Input(m));
        if !valid_name(&self.name) {
            return bad(format!(
                "name {} must match [a-z0-9][a-z0-9._-]{{0,63}}",
                crate::quoted(&self.name)
            ));
        }
        if self.description.trim().is_empty() {
            return bad("description is missing".into());
        }
        if self.description.chars().count() > MAX_DESCRIPTION_CHARS
            || self.description.contains('\n')
        {
            return bad(format!(
                "description must be one line of at most {MAX_DESCRIPTION_CHARS} characters"
            ));
        }
        if self.fingerprint.len() > MAX_FINGERPRINT {
            return bad(format!("more than {MAX_FINGERPRINT} fingerprint entries"));
        }
        if let Some(e) = self
            .fingerprint
            .iter()
            .find(|e| !valid_fingerprint_entry(e))
        {
            return bad(format!(
                "fingerprint entry {} must be a relative path inside the workspace",
                crate::quoted(e)
            ));
        }
        if !self.fingerprint_hash.is_empty()
            && (self.fingerprint_hash.len() != 40
                || !self.fingerprint_hash.bytes().all(|b| b.is_ascii_hexdigit()))
        {
            return bad("fingerprint-hash must be 40 hex digits".into());
        }
        if self.body.iter().all(|s| s.trim().is_empty()) {
            return bad("body is empty".into());
        }
        if self.body.len() > MAX_BODY_LINES {
            return bad(format!("body has more than {MAX_BODY_LINES} lines"));
        }
        if self.body.iter().any(|s| s.chars().count() > MAX_LINE_CHARS) {
            return bad(format!(
                "a body line is longer than {MAX_LINE_CHARS} characters"
            ));
        }
        for (k, v) in [
            ("session", &self.session),
            ("turn", &self.turn),
            ("captured-at", &self.captured_at),
        ] {
            if v.len() > 200 || v.contains('\n') {
                return bad(format!("{k} must be one short line"));
            }
        }
        if !self.refresh_of.is_empty() && !valid_name(&self.refresh_of) {
            return bad("refresh-of must be a lesson name".into());
        }
        Ok(())
    }

    /// The file text: frontmatter and body, secrets redacted, byte-deterministic.
    pub fn render(&self) -> String {
        let r = redact::redact;
        let q = |s: &str| -> String {
            let s = r(s);
            if s.is_empty()
                || s.contains(": ")
                || s.starts_with(['"', '\'', '[', '-', '#', ' '])
                || s.ends_with([':', ' '])
            {
                format!("\"{}\"", s.replace('"', "'"))
            } else {
                s
            }
        };
        let mut out = String::from("---\n");
        out.push_str(&format!("name: {}\n", self.name));
        out.push_str(&format!("description: {}\n", q(&self.description)));
        if self.fingerprint.is_empty() {
            out.push_str("fingerprint: []\n");
        } else {
            out.push_str("fingerprint:\n");
            for e in &self.fingerprint {
                out.push_str(&format!("  - {}\n", q(e)));
            }
        }
        if !self.captured_at.is_empty() {
            out.push_str(&format!("captured-at: {}\n", q(&self.captured_at)));
        }
        if !self.fingerprint_hash.is_empty() {
            out.push_str(&format!("fingerprint-hash: {}\n", self.fingerprint_hash));
        }
        if !self.fingerprint_parts.is_empty() {
            out.push_str(&format!(
                "fingerprint-parts: [{}]\n",
                self.fingerprint_parts.join(", ")
            ));
        }
        if !self.session.is_empty() {
            out.push_str(&format!("session: {}\n", q(&self.session)));
        }
        if !self.turn.is_empty() {
            out.push_str(&format!("turn: {}\n", q(&self.turn)));
        }
        if !self.refresh_of.is_empty() {
            out.push_str(&format!("refresh-of: {}\n", self.refresh_of));
        }
        out.push_str("---\n");
        for line in &self.body {
            out.push_str(&r(line));
            out.push('\n');
        }
        out
    }

    /// Record the hash of `inputs` (fingerprint inputs gathered now) on the lesson.
    pub fn stamp(&mut self, inputs: &[FpInput]) {
        let (hash, parts) = fingerprint_hash(&self.fingerprint, inputs);
        self.fingerprint_hash = hash;
        self.fingerprint_parts = parts;
    }

    /// Compare the recorded hash with `inputs`.
    pub fn staleness(&self, inputs: &[FpInput]) -> Staleness {
        if self.fingerprint.is_empty() {
            return Staleness::default();
        }
        if self.fingerprint_hash.is_empty() {
            return Staleness {
                stale: true,
                changed: vec![Change {
                    entry: String::new(),
                    what: "never hashed (no fingerprint-hash)".into(),
                }],
            };
        }
        let (hash, parts) = fingerprint_hash(&self.fingerprint, inputs);
        if hash == self.fingerprint_hash {
            return Staleness::default();
        }
        let mut changed = Vec::new();
        for (k, e) in self.fingerprint.iter().enumerate() {
            let old = self.fingerprint_parts.get(k);
            if old.is_some_and(|o| *o == parts[k]) {
                continue;
            }
            let missing = input_for(inputs, e).is_none();
            let what = match (old, missing) {
                (_, true) => "missing now".to_string(),
                (Some(o), false) if o == MISSING_PART => "appeared".to_string(),
                (Some(_), false) => "changed".to_string(),
                (None, false) => "changed (no per-entry hash recorded)".to_string(),
            };
            changed.push(Change {
                entry: e.clone(),
                what,
            });
        }
        if changed.is_empty() {
            changed.push(Change {
                entry: String::new(),
                what: "fingerprint inputs changed".into(),
            });
        }
        Staleness {
            stale: true,
            changed,
        }
    }
}

/// One gathered fingerprint input: `content` is `None` when the file, directory or JSON field
/// does not exist. The shim makes the content: a file's bytes (latin-1 mapped, so every byte
/// counts), a directory's sorted entry names one per line, a JSON field's canonical JSON.
#[derive(Serialize, Clone, Debug, PartialEq, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct FpInput {
    /// The fingerprint entry as written in the lesson.
    pub entry: String,
    /// Its content, or `None` when absent.
    pub content: Option<String>,
}

/// The per-entry part recorded for a missing input.
pub const MISSING_PART: &str = "000000000000";

fn input_for<'a>(inputs: &'a [FpInput], entry: &str) -> Option<&'a str> {
    inputs
        .iter()
        .find(|i| i.entry == entry)
        .and_then(|i| i.content.as_deref())
}

/// `(SHA-1 over the per-entry parts, the 12-hex part per entry)` for `entries`.
pub fn fingerprint_hash(entries: &[String], inputs: &[FpInput]) -> (String, Vec<String>) {
    let mut parts: Vec<String> = Vec::with_capacity(entries.len());
    for e in entries {
        parts.push(match input_for(inputs, e) {
            Some(c) => crate::fingerprint_hex(format!("{e}\n{c}").as_bytes())[..12].to_string(),
            None => MISSING_PART.to_string(),
        });
    }
    (crate::fingerprint_hex(parts.join("\n").as_bytes()), parts)
}

/// Whether a lesson's fingerprint still matches.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
#[serde(rename_all = "camelCase")]
pub struct Staleness {
    /// The lesson must not be injected.
    pub stale: bool,
    /// What changed.
    pub changed: Vec<Change>,
}

/// One changed fingerprint input.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
#[serde(rename_all = "camelCase")]
pub struct Change {
    /// The entry (empty when unknown).
    pub entry: String,
    /// `changed`, `missing now`, `appeared`, …
    pub what: String,
}

/// A refresh note for a stale lesson: a candidate with the new hash, the old body and a line
/// saying what changed, to be verified and promoted (or removed) by the user.
pub fn refresh_note(
    old: &Lesson,
    staleness: &Staleness,
    inputs: &[FpInput],
    now_iso: &str,
) -> Lesson {
    let mut c = old.clone();
    c.refresh_of = old.name.clone();
    c.captured_at = now_iso.to_string();
    c.stamp(inputs);
    let mut what: Vec<String> = Vec::with_capacity(staleness.changed.len());
    for ch in &staleness.changed {
        what.push(if ch.entry.is_empty() {
            ch.what.clone()
        } else {
            format!("{} {}", ch.entry, ch.what)
        });
    }
    c.body.retain(|l| !l.starts_with("- REFRESH:"));
    let note = crate::text::clip(
        &format!(
            "- REFRESH: {}; verify the lines above, then promote or rm",
            what.join(", ")
        ),
        MAX_LINE_CHARS,
    );
    if c.body.len() >= MAX_BODY_LINES {
        c.body.truncate(MAX_BODY_LINES - 1);
    }
    c.body.push(note);
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "---\nname: testing\ndescription: Test runner + file convention\nfingerprint:\n  - package.json#scripts.test\n  - tests/\ncaptured-at: 2026-05-05\n---\n- vitest, tests/**/*.test.ts, run via `npm test`\n- import style: .js suffix even for .ts source (ESM-NodeNext)\n";

    fn inputs(test_script: &str, listing: Option<&str>) -> Vec<FpInput> {
        vec![
            FpInput {
                entry: "package.json#scripts.test".into(),
                content: Some(test_script.into()),
            },
            FpInput {
                entry: "tests/".into(),
                content: listing.map(str::to_string),
            },
        ]
    }

    #[test]
    fn parses_the_rfc_example() {
        let l = Lesson::parse(SAMPLE).unwrap();
        assert_eq!(l.name, "testing");
        assert_eq!(l.description, "Test runner + file convention");
        assert_eq!(l.fingerprint, vec!["package.json#scripts.test", "tests/"]);
        assert_eq!(l.captured_at, "2026-05-05");
        assert_eq!(l.body.len(), 2);
    }

    #[test]
    fn render_round_trips() {
        let mut l = Lesson::parse(SAMPLE).unwrap();
        l.stamp(&inputs("\"vitest\"", Some("a.test.ts")));
        l.session = "s-1".into();
        l.turn = "m12".into();
        let text = l.render();
        let back = Lesson::parse(&text).unwrap();
        assert_eq!(back, l);
        assert_eq!(back.render(), text);
        // Inline lists and quoted values parse too.
        let inline =
            "---\nname: x\ndescription: \"a: b\"\nfingerprint: [Cargo.toml, 'src/']\n---\nbody\n";
        let l = Lesson::parse(inline).unwrap();
        assert_eq!(l.description, "a: b");
        assert_eq!(l.fingerprint, vec!["Cargo.toml", "src/"]);
        assert_eq!(Lesson::parse(&l.render()).unwrap(), l);
    }

    #[test]
    fn bad_files_are_rejected_with_a_reason() {
        let cases = [
            ("no frontmatter", "name: x\n"),
            ("not closed", "---\nname: x\ndescription: d\n"),
            (
                "must match",
                "---\nname: ../etc\ndescription: d\n---\nbody\n",
            ),
            (
                "must match",
                "---\nname: Big Name\ndescription: d\n---\nbody\n",
            ),
            ("description is missing", "---\nname: x\n---\nbody\n"),
            ("body is empty", "---\nname: x\ndescription: d\n---\n\n"),
            (
                "relative path",
                "---\nname: x\ndescription: d\nfingerprint: [/etc/passwd]\n---\nb\n",
            ),
            (
                "relative path",
                "---\nname: x\ndescription: d\nfingerprint: [../x]\n---\nb\n",
            ),
            (
                "40 hex",
                "---\nname: x\ndescription: d\nfingerprint-hash: zz\n---\nb\n",
            ),
            ("expected `key: value`", "---\nname x\n---\nb\n"),
            ("list item outside", "---\n- a\n---\nb\n"),
            (
                "more than",
                &format!("---\nname: x\ndescription: d\n---\n{}", "l\n".repeat(13)),
            ),
        ];
        for (want, text) in cases {
            let e = Lesson::parse(text).unwrap_err().to_string();
            assert!(e.contains(want), "{text:?}: {e}");
        }
        assert!(Lesson::parse(&"x".repeat(MAX_FILE_BYTES + 1)).is_err());
    }

    #[test]
    fn render_redacts_secrets() {
        let mut l = Lesson::parse(SAMPLE).unwrap();
        l.body.push(
            "- deploy with `API_TOKEN=ghp_0123456789abcdefghijABCDEFGHIJ make deploy`".into(),
        );
        l.description = "uses sk-abcdefghijklmnopqrstuvwxyz".into();
        let text = l.render();
        assert!(!text.contains("ghp_0123456789"), "{text}");
        assert!(!text.contains("sk-abcdefghijklmnop"), "{text}");
        assert!(Lesson::parse(&text).is_ok());
    }

    #[test]
    fn staleness_names_what_changed() {
        let mut l = Lesson::parse(SAMPLE).unwrap();
        assert!(
            l.staleness(&inputs("\"vitest\"", Some("a"))).stale,
            "never hashed"
        );
        let fresh = inputs("\"vitest\"", Some("a.test.ts\nb.test.ts"));
        l.stamp(&fresh);
        assert_eq!(l.staleness(&fresh), Staleness::default());
        let s = l.staleness(&inputs("\"vitest run\"", Some("a.test.ts\nb.test.ts")));
        assert!(s.stale);
        assert_eq!(
            s.changed,
            vec![Change {
                entry: "package.json#scripts.test".into(),
                what: "changed".into()
            }]
        );
        let s = l.staleness(&inputs("\"vitest\"", None));
        assert_eq!(
            s.changed,
            vec![Change {
                entry: "tests/".into(),
                what: "missing now".into()
            }]
        );
        // No fingerprint: nothing to go stale.
        let mut p = l.clone();
        p.fingerprint.clear();
        assert!(!p.staleness(&[]).stale);
        // The refresh note carries the new hash and says what changed.
        let now = inputs("\"vitest run\"", Some("a.test.ts\nb.test.ts"));
        let s = l.staleness(&now);
        let note = refresh_note(&l, &s, &now, "2026-06-01T00:00:00Z");
        assert_eq!(note.refresh_of, "testing");
        assert!(!note.staleness(&now).stale);
        assert!(note
            .body
            .last()
            .unwrap()
            .contains("package.json#scripts.test changed"));
        assert!(Lesson::parse(&note.render()).is_ok());
    }

    #[test]
    fn names_and_slugs() {
        assert!(
            valid_name("testing")
                && valid_name("ts-imports.v2")
                && !valid_name("")
                && !valid_name("A")
        );
        assert!(!valid_name("a..b") && !valid_name("-x") && !valid_name(&"a".repeat(65)));
        assert_eq!(slug("Test Runner!"), "test-runner");
        assert_eq!(slug("!!!"), "lesson");
        assert!(valid_name(&slug("Ünïcode cödé")));
    }
}
