//! Scanners over message text: error lines, artifact ids, paths, exact identifiers.
//! Small tokenizers of the digest's own rules, over bytes (every message is scanned once at
//! ingest; the `regex` crate serves the cold paths).

use super::{Bounded, ITEM_CHARS, MAX_ARTIFACTS};
use crate::text::{clip, one_line};

/// What makes a line an error line for [`error_lines`] (case-insensitive).
pub(super) const ERROR_KEYS: &[&str] = &[
    "error",
    "failed",
    "failure",
    "panic",
    "traceback",
    "exception",
    "fatal",
];

/// All-clear lines [`error_lines`] skips although they hold an [`ERROR_KEYS`] word.
pub(super) const ERROR_CLEAR: &[&str] = &[
    " 0 failed",
    "0 errors",
    "no errors",
    "errors: 0",
    "0 failures",
    "error: 0",
];

/// Lines that report an error (contain error / failed / failure / panic / traceback /
/// exception / fatal, case-insensitive), skipping all-clear lines such as `0 failed`.
/// At most `max`, each one-lined and ≤ [`ITEM_CHARS`].
pub fn error_lines(text: &str, max: usize) -> Vec<String> {
    // One lowered copy of the whole text: ASCII lowercasing keeps every byte offset, so the
    // copy's lines and their trims are the text's. Most outputs hold no key at all; their lines
    // are never read one by one.
    let lower = text.to_ascii_lowercase();
    let has = |hay: &str, keys: &[&str]| keys.iter().any(|k| hay.contains(k));
    let mut out: Vec<String> = Vec::new();
    if !has(&lower, ERROR_KEYS) {
        return out;
    }
    for (line, low) in text.lines().zip(lower.lines()) {
        if out.len() >= max {
            break;
        }
        let (l, low) = (line.trim(), low.trim());
        if l.is_empty() || l.len() > 4_000 || !has(low, ERROR_KEYS) || has(low, ERROR_CLEAR) {
            continue;
        }
        let item = clip(&one_line(l), ITEM_CHARS);
        if !out.contains(&item) {
            out.push(item);
        }
    }
    out
}

// ---- artifacts -------------------------------------------------------------------------------

/// 40-hex ids that follow the word `artifact` on the same line (our shrink header reads
/// `[cachefold] … artifact <40-hex>`), lowercase, first-seen order, at most [`MAX_ARTIFACTS`].
pub fn artifact_ids(text: &str) -> Vec<String> {
    const WORD: &[u8] = b"artifact";
    // Matched case-insensitively in place (no lowered copy of a possibly large text): ASCII case
    // never changes a byte offset, and hex digits and the id's boundaries are case-blind.
    let b = text.as_bytes();
    let mut out: Vec<String> = Vec::new();
    let mut from = 0;
    // The next 'a' or 'A' (memchr's word-at-a-time search), then the word there.
    while let Some(pos) = memchr::memchr2(b'a', b'A', &b[from..]) {
        let at = from + pos;
        if !b[at..]
            .get(..WORD.len())
            .is_some_and(|w| w.eq_ignore_ascii_case(WORD))
        {
            from = at + 1;
            continue;
        }
        let start = at + WORD.len();
        let line_end = b[start..]
            .iter()
            .position(|&c| c == b'\n')
            .map(|i| start + i)
            .unwrap_or(b.len());
        if let Some(id) = first_hex40(&text[start..line_end]) {
            let id = id.to_ascii_lowercase();
            if !out.contains(&id) && out.len() < MAX_ARTIFACTS {
                out.push(id);
            }
        }
        from = start;
    }
    out
}

/// First run of exactly 40 hex digits, bounded by non-hex characters.
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

// ---- paths -----------------------------------------------------------------------------------

/// The extension list, for the scanner tests' oracle.
#[cfg(test)]
pub(super) const EXTENSIONS_FOR_TESTS: &[&str] = EXTENSIONS;

/// File extensions that make a bare name (`main.rs`) count as a file (lowercase: compared
/// case-insensitively).
const EXTENSIONS: &[&str] = &[
    "rs",
    "toml",
    "lock",
    "md",
    "txt",
    "json",
    "jsonl",
    "yaml",
    "yml",
    "ts",
    "tsx",
    "js",
    "jsx",
    "mjs",
    "cjs",
    "py",
    "go",
    "java",
    "kt",
    "swift",
    "c",
    "h",
    "cc",
    "cpp",
    "hpp",
    "cs",
    "rb",
    "php",
    "sh",
    "bash",
    "zsh",
    "ps1",
    "sql",
    "css",
    "scss",
    "html",
    "htm",
    "xml",
    "csv",
    "tsv",
    "log",
    "ini",
    "cfg",
    "conf",
    "env",
    "wasm",
    "proto",
    "graphql",
    "vue",
    "svelte",
    "lua",
    "zig",
    "ex",
    "exs",
    "erl",
    "hs",
    "ml",
    "scala",
    "dart",
    "r",
    "ipynb",
    "gradle",
    "mk",
    "cmake",
    "dockerfile",
    "patch",
    "diff",
    "pdf",
    "png",
    "jpg",
    "jpeg",
    "gif",
    "svg",
    "zip",
    "gz",
    "tar",
    "db",
    "sqlite",
];

pub(super) fn has_known_ext(name: &str) -> bool {
    // The last '.' (an ASCII byte: never inside a multi-byte char), with a non-empty stem; the
    // extension compared case-insensitively with the lowercase list, without a lowered copy.
    match name.bytes().rposition(|b| b == b'.') {
        Some(dot) if dot > 0 => {
            let ext = &name[dot + 1..];
            EXTENSIONS.iter().any(|e| e.eq_ignore_ascii_case(ext))
        }
        _ => false,
    }
}

/// Trim quotes, brackets and trailing punctuation around a token; drop a `key=` prefix and a
/// `:line[:col]` suffix.
pub(super) fn clean_token(tok: &str) -> &str {
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
    // '=' and ':' are ASCII: a byte search finds them as the char search would, without setting
    // up a searcher per token (this runs for every word of every message).
    if let Some(eq) = t.bytes().position(|b| b == b'=') {
        t = t[eq + 1..].trim_matches(|c: char| matches!(c, '"' | '\'' | '`'));
    }
    t = t.trim_end_matches(|c: char| {
        matches!(
            c,
            '.' | ':' | ',' | ';' | ')' | ']' | '}' | '\'' | '"' | '`'
        )
    });
    // `src/x.rs:12:5` → `src/x.rs`
    loop {
        match t.bytes().rposition(|b| b == b':') {
            Some(colon)
                if colon > 0
                    && colon + 1 < t.len()
                    && t.as_bytes()[colon + 1..].iter().all(u8::is_ascii_digit) =>
            {
                t = &t[..colon]
            }
            _ => break,
        }
    }
    t
}

/// Path-looking token: path characters only, and either a leading `/`, `./`, `../`, `~/` with
/// two or more segments or a known extension, or any separator plus a known extension or
/// three or more segments. Excludes URLs, `and/or`, `1/2`, slash commands like `/help`.
pub fn is_path_like(t: &str) -> bool {
    // Path characters only (all ASCII, so the length in bytes is the length in chars), checked
    // byte by byte first: most words fail here or on the length, before any substring search.
    let b = t.as_bytes();
    if !b
        .iter()
        .all(|c| c.is_ascii_alphanumeric() || b"._-/\\~@+%:".contains(c))
    {
        return false;
    }
    if !(3..=ITEM_CHARS).contains(&b.len()) {
        return false;
    }
    // Without a separator or a '.', neither the segment rules nor a known extension can hold.
    if !b.iter().any(|c| matches!(c, b'/' | b'\\' | b'.')) || t.contains("://") {
        return false;
    }
    path_shape(t)
}

/// The rules of [`is_path_like`] past its character, length and separator tests: `:` only as a
/// Windows drive, a letter somewhere, and the segment rules.
pub(super) fn path_shape(t: &str) -> bool {
    // ':' only as a Windows drive (`C:\…`).
    if let Some(i) = t.find(':') {
        if i != 1 || t.matches(':').count() > 1 {
            return false;
        }
    }
    if !t.chars().any(|c| c.is_ascii_alphabetic()) {
        return false;
    }
    let segs: Vec<&str> = t.split(['/', '\\']).collect();
    let last = segs.last().copied().unwrap_or("");
    if segs.len() == 1 {
        return has_known_ext(t) && !t.starts_with('.');
    }
    let inner_empty = segs
        .iter()
        .skip(1)
        .take(segs.len().saturating_sub(2))
        .any(|s| s.is_empty());
    if inner_empty {
        return false;
    }
    let rooted = t.starts_with('/')
        || t.starts_with("./")
        || t.starts_with("../")
        || t.starts_with("~/")
        || t.get(1..3) == Some(":\\");
    let nonempty = segs.iter().filter(|s| !s.is_empty()).count();
    if has_known_ext(last) {
        return true;
    }
    if rooted {
        return nonempty >= 2;
    }
    nonempty >= 3
        && segs
            .iter()
            .all(|s| !s.is_empty() && !s.bytes().all(|b| b.is_ascii_digit()))
}

pub(super) fn scan_paths(text: &str, out: &mut Bounded) {
    for tok in text.split(|c: char| c.is_whitespace() || c == '|' || c == ',') {
        if out.items.len() >= out.cap {
            return;
        }
        // A path holds a '/', '\' or '.' (and `clean_token` returns a part of `tok`).
        if !tok.bytes().any(|b| matches!(b, b'/' | b'\\' | b'.')) {
            continue;
        }
        let t = clean_token(tok);
        if is_path_like(t) {
            out.push(t.to_string());
        }
    }
}

/// Exact identifiers of a text (paths first, then URLs, UUIDs, hashes, code symbols, numbers
/// with ≥ 3 digits), deduplicated, in first-seen order within each class, joined with `, ` and
/// bounded by `max_chars` (an identifier is never cut). Used for the "mentions" line of a shrunk
/// tool result: the model sees which names live in the omitted part and can recover exactly
/// that range. Scans at most `ANCHOR_SCAN_BYTES` so a 100 MB output stays linear and cheap.
pub fn anchor_index(text: &str, max_chars: usize) -> Vec<String> {
    let mut end = text.len().min(ANCHOR_SCAN_BYTES);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let text = &text[..end];
    let mut paths = Bounded::new(64);
    scan_paths(text, &mut paths);
    let mut ids = IdentCollector { seen: Vec::new() };
    ids.scan_capped(text, 1_024);
    let mut out = Vec::new();
    let mut used = 0usize;
    for a in paths.items.into_iter().chain(ids.finish(1_024)) {
        let n = a.chars().count();
        if n > 120 || out.contains(&a) {
            continue;
        }
        if used + n + 2 > max_chars {
            continue; // a shorter one may still fit
        }
        used += n + 2;
        out.push(a);
    }
    out
}

/// Bytes of a text [`anchor_index`] scans.
pub const ANCHOR_SCAN_BYTES: usize = 2 << 20;

// ---- identifiers -----------------------------------------------------------------------------

/// Identifier class, most valuable first.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
enum IdClass {
    Url,
    Uuid,
    Hash,
    Symbol,
    Number,
}

/// Collects identifier candidates in first-seen order; [`IdentCollector::finish`] ranks them by
/// class and keeps the first `max`.
#[derive(Default)]
pub(super) struct IdentCollector {
    seen: Vec<(IdClass, String)>,
}

/// [`BYTE_CLASSES`]: ASCII whitespace (`char::is_whitespace` of ASCII: tab, line feed,
/// vertical tab, form feed, carriage return, space).
const WHITE: u8 = 1;
/// [`BYTE_CLASSES`]: a digit, an uppercase letter or one of `_ - : / \ .`.
const MARK: u8 = 2;
/// [`BYTE_CLASSES`]: `[A-Za-z0-9_]`, what an identifier piece is made of.
const PIECE: u8 = 4;
/// [`BYTE_CLASSES`]: `:`.
const COLON: u8 = 8;
/// [`BYTE_CLASSES`]: a byte of a non-ASCII char (its char is read to know whether it is
/// whitespace; it is never part of a run).
const HIGH: u8 = 16;

/// Whether `word` holds 3 or more `[A-Za-z0-9_]` in a row.
fn has_piece_run(word: &[u8]) -> bool {
    let mut run = 0;
    word.iter().any(|&c| {
        run = if BYTE_CLASSES[usize::from(c)] & PIECE != 0 {
            run + 1
        } else {
            0
        };
        run >= 3
    })
}

/// What [`IdentCollector::scan_capped`] notes of each byte (indexed by any `u8`: no bounds
/// check in its loops).
static BYTE_CLASSES: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut k = 0;
    while k < 256 {
        let c = k as u8;
        if matches!(c, b'\t'..=b'\r' | b' ') {
            t[k] = WHITE;
        }
        if c.is_ascii_digit()
            || c.is_ascii_uppercase()
            || matches!(c, b'_' | b'-' | b':' | b'/' | b'\\' | b'.')
        {
            t[k] |= MARK;
        }
        if c.is_ascii_alphanumeric() || c == b'_' {
            t[k] |= PIECE;
        }
        if c == b':' {
            t[k] |= COLON;
        }
        if !c.is_ascii() {
            t[k] = HIGH;
        }
        k += 1;
    }
    t
};

/// Candidates collected per digest before ranking (bounds work on huge tool outputs).
const IDENT_SCAN_CAP: usize = 256;

impl IdentCollector {
    fn add(&mut self, class: IdClass, s: &str) {
        if self.seen.len() < 1_024 && !self.seen.iter().any(|(_, x)| x == s) {
            self.seen.push((class, s.to_string()));
        }
    }

    pub(super) fn scan(&mut self, text: &str) {
        self.scan_capped(text, IDENT_SCAN_CAP);
    }

    fn scan_capped(&mut self, text: &str, cap: usize) {
        // The words of `text` (`split_whitespace`'s), each read once to note what it holds. A
        // word can give an identifier only when it holds a digit, an uppercase letter or one of
        // `_ - : / \ .` (`MARK`: no URL without ':', no path without '/', '\' or '.', and a piece
        // of lowercase letters only is of no class), and when it holds ':' (a URL) or a run of 3
        // or more `[A-Za-z0-9_]` (every class of [`IdentCollector::add_pieces`] is such a run or
        // holds one, and a path is not added). Most words of prose and code fail (`let`, `42;`,
        // `x()`) and are never cut out and handed over one by one. The loop over a word's ASCII
        // bytes only ORs their classes; the run is looked for afterwards, in a marked word
        // without ':' (as one test per byte it cost more than the rest of the scan).
        let (b, n) = (text.as_bytes(), text.len());
        // The char at byte `i` (a char boundary: `i` moves by whole chars).
        let char_at = |i: usize| text.get(i..).and_then(|t| t.chars().next());
        let mut i = 0;
        loop {
            // Whitespace up to the next word.
            loop {
                while i < n && BYTE_CLASSES[usize::from(b[i])] & WHITE != 0 {
                    i += 1;
                }
                if i >= n {
                    return;
                }
                if b[i].is_ascii() {
                    break;
                }
                match char_at(i) {
                    Some(ch) if ch.is_whitespace() => i += ch.len_utf8(),
                    Some(_) => break,
                    None => return,
                }
            }
            // The word: up to the next whitespace. Its ASCII bytes' classes are ORed; a
            // non-ASCII byte stops the byte loop to read its char.
            let start = i;
            let mut classes = 0u8;
            loop {
                while i < n {
                    let k = BYTE_CLASSES[usize::from(b[i])];
                    if k & (WHITE | HIGH) != 0 {
                        break;
                    }
                    classes |= k;
                    i += 1;
                }
                if i >= n || b[i].is_ascii() {
                    break; // the end, or ASCII whitespace
                }
                match char_at(i) {
                    Some(ch) if ch.is_whitespace() => break,
                    Some(ch) => i += ch.len_utf8(),
                    None => return,
                }
            }
            let word = &b[start..i];
            if classes & MARK != 0
                && word.len() >= 3
                && (classes & COLON != 0 || has_piece_run(word))
            {
                if self.seen.len() >= cap {
                    return;
                }
                if let Some(tok) = text.get(start..i) {
                    self.add_word(tok);
                }
            }
        }
    }

    /// One word of [`IdentCollector::scan_capped`] that passed its tests.
    fn add_word(&mut self, tok: &str) {
        if let Some(u) = url_in(tok) {
            self.add(IdClass::Url, u);
            return;
        }
        // A path holds a '/', '\' or '.', and `clean_token` returns a part of `tok`: without one
        // of them in `tok` it is no path.
        if tok.bytes().any(|b| matches!(b, b'/' | b'\\' | b'.')) && is_path_like(clean_token(tok)) {
            return; // files are listed separately
        }
        self.add_pieces(tok);
    }

    /// The identifiers in the parts of `tok` (split at characters no identifier holds): UUIDs
    /// whole, anything else by its `-`-separated parts.
    fn add_pieces(&mut self, tok: &str) {
        for piece in tok.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-')) {
            let piece = piece.trim_matches(|c: char| c == '-');
            if piece.is_empty() {
                continue;
            }
            if is_uuid(piece) {
                self.add(IdClass::Uuid, piece);
                continue;
            }
            for sub in piece.split('-') {
                if let Some(class) = classify(sub) {
                    self.add(class, sub);
                }
            }
        }
    }

    /// [`IdentCollector::scan`] without its early skips (what it was before them): the oracle of
    /// the test that the skips change no digest.
    #[cfg(test)]
    pub(super) fn scan_unfiltered(&mut self, text: &str) {
        for tok in text.split(|c: char| c.is_whitespace()) {
            if self.seen.len() >= IDENT_SCAN_CAP {
                return;
            }
            if tok.is_empty() {
                continue;
            }
            if let Some(u) = url_in(tok) {
                self.add(IdClass::Url, u);
                continue;
            }
            if is_path_like(clean_token(tok)) {
                continue;
            }
            self.add_pieces(tok);
        }
    }

    pub(super) fn finish(mut self, max: usize) -> Vec<String> {
        // Stable: equal classes keep first-seen order.
        self.seen.sort_by_key(|(c, _)| *c);
        self.seen.truncate(max);
        let mut out = Vec::with_capacity(self.seen.len());
        for (_, s) in self.seen {
            out.push(s);
        }
        out
    }
}

/// `http(s)://…` inside a token, trailing punctuation removed.
fn url_in(tok: &str) -> Option<&str> {
    // Most tokens hold no ':' at all: no substring searcher is set up for them.
    if !tok.as_bytes().contains(&b':') {
        return None;
    }
    let start = tok.find("https://").or_else(|| tok.find("http://"))?;
    let u = &tok[start..];
    let u = u.split(['"', '\'', '`', '<', '>', '|']).next().unwrap_or(u);
    let u = u.trim_end_matches(|c: char| {
        matches!(c, '.' | ',' | ';' | ':' | ')' | ']' | '}' | '!' | '?')
    });
    if u.len() > 10 && u.chars().count() <= ITEM_CHARS {
        Some(u)
    } else {
        None
    }
}

fn is_uuid(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 36
        && b.iter().enumerate().all(|(i, c)| {
            if matches!(i, 8 | 13 | 18 | 23) {
                *c == b'-'
            } else {
                c.is_ascii_hexdigit()
            }
        })
}

/// Hash (≥ 7 hex digits with a digit and a letter), number (≥ 3 digits), or code symbol
/// (`snake_case` with a letter, ≥ 4 chars; or `camelCase`/`CamelCase` with an inner
/// lower→upper step, ≥ 4 chars).
fn classify(s: &str) -> Option<IdClass> {
    let n = s.len();
    if !(3..=100).contains(&n) {
        return None;
    }
    let b = s.as_bytes();
    if b.iter().all(u8::is_ascii_digit) {
        return Some(IdClass::Number);
    }
    if n >= 7
        && b.iter().all(u8::is_ascii_hexdigit)
        && b.iter().any(u8::is_ascii_digit)
        && b.iter().any(u8::is_ascii_alphabetic)
    {
        return Some(IdClass::Hash);
    }
    if n < 4 || !(b[0].is_ascii_alphabetic() || b[0] == b'_') {
        return None;
    }
    let letters = b.iter().any(u8::is_ascii_alphabetic);
    if b.contains(&b'_') && letters && b.iter().any(|c| *c != b'_') && !b.iter().all(|c| *c == b'_')
    {
        // Not just leading/trailing underscores around a word (`__init__` is still a symbol).
        return Some(IdClass::Symbol);
    }
    let camel = b
        .windows(2)
        .any(|w| w[0].is_ascii_lowercase() && w[1].is_ascii_uppercase());
    if camel && b.iter().all(u8::is_ascii_alphanumeric) {
        return Some(IdClass::Symbol);
    }
    None
}
