//! The "Mentions:" list of a shrunk result's omitted part: the exact names it holds, written
//! as the text writes them (`socket.assigns`, `Spotter.Services.Renderer`, `src/a.rs`,
//! `E0308`), the ones that recur first, none that the head or tail already shows, separated by
//! one space (`SEPARATOR`). Bare numbers (line numbers of a listing, sizes, counts) are not
//! listed: on the replay bench they took room that names used better (recall 0.9193 instead
//! of 0.9159 with the space separator alone, at 0.2 % less input).
//!
//! A name is a run of word characters (letters, digits, `_ . / - : @ # ~ + % = ? &`), trimmed
//! of edge punctuation and split at a single `:` (`src/a.rs:12:5` gives `src/a.rs`), that looks
//! like something a later answer quotes verbatim: a path, a URL, a `snake_case`, `camelCase`,
//! dotted or `::` name, a code with digits, an `E…` code in capitals (`ENOENT`), a hex hash, a
//! number of ≥ 3 digits ([`is_anchor`]: the replay bench's anchor definition, one copy for
//! both). Plain words never qualify. Work is linear: at most `SCAN_BYTES` of the part are read and at most
//! `MAX_NAMES` distinct names counted.

use std::collections::BTreeMap;

/// Bytes of the omitted part read (a 100 MB output stays cheap).
const SCAN_BYTES: usize = 2 << 20;
/// Between two names of the list: one char (a name never holds a space), so more names fit
/// in the same chars, and fewer tokens than `", "`.
pub(super) const SEPARATOR: &str = " ";
/// Distinct names counted.
const MAX_NAMES: usize = 8_192;
/// Longer tokens (base64, minified code) are not names.
const MAX_NAME_BYTES: usize = 120;

fn word_char(c: char) -> bool {
    c.is_alphanumeric()
        || matches!(
            c,
            '_' | '.' | '/' | '-' | ':' | '@' | '#' | '~' | '+' | '%' | '=' | '?' | '&'
        )
}

fn edge(c: char) -> bool {
    matches!(
        c,
        '.' | ':' | '-' | '#' | '~' | '+' | '=' | '?' | '&' | '%' | '@'
    )
}

/// Calls `f` with every name of `text`, in order (repeats included).
// `dyn`: one copy of the scanner in the wasm module for both callers.
fn each_name<'a>(text: &'a str, f: &mut dyn FnMut(&'a str)) {
    for raw in text.split(|c: char| !word_char(c)) {
        if raw.len() < 3 || raw.len() > MAX_NAME_BYTES {
            continue;
        }
        let t = raw.trim_matches(edge);
        if t.starts_with("http://") || t.starts_with("https://") {
            if t.len() > 10 {
                f(t);
            }
            continue;
        }
        if t.contains("::") {
            if t.chars().any(char::is_alphabetic) {
                f(t);
            }
            continue;
        }
        for p in t.split(':') {
            let p = p.trim_matches(edge);
            if p.len() >= 3 && is_anchor(p) {
                f(p);
            }
        }
    }
}

/// True when `w` (a piece of a word, already trimmed and split at `:`) is a name: the
/// definition of an *anchor* of the replay bench's recall metric (`crates/bench`, `anchors.rs`
/// calls this function), so the list holds exactly what the metric, and a later answer, would
/// quote.
pub fn is_anchor(w: &str) -> bool {
    let has_alpha = w.chars().any(char::is_alphabetic);
    let digits = w.chars().filter(char::is_ascii_digit).count();
    // Numbers with ≥ 3 digits (ids, ports, sizes, line numbers).
    if !has_alpha {
        return digits >= 3
            && w.chars()
                .all(|c| c.is_ascii_digit() || matches!(c, '.' | ',' | '_'));
    }
    // File paths.
    if w.contains('/') && w.len() >= 4 && w.chars().filter(|c| c.is_alphanumeric()).count() >= 3 {
        return true;
    }
    // Commit-like hex.
    if w.len() >= 7
        && w.len() <= 64
        && w.chars().all(|c| c.is_ascii_hexdigit())
        && digits > 0
        && digits < w.len()
    {
        return true;
    }
    // file.ext
    if let Some((stem, ext)) = w.rsplit_once('.') {
        if !stem.is_empty()
            && (1..=6).contains(&ext.len())
            && ext.chars().all(|c| c.is_ascii_alphanumeric())
            && ext.chars().any(|c| c.is_ascii_alphabetic())
            && stem.chars().any(char::is_alphanumeric)
        {
            return true;
        }
    }
    // Identifiers: snake_case, camelCase / PascalCase with an inner capital, or letters+digits.
    if w.len() >= 4 {
        let chars: Vec<char> = w.chars().collect();
        if w.contains('_') && chars.iter().filter(|c| c.is_alphabetic()).count() >= 3 {
            return true;
        }
        let inner_cap = chars
            .windows(2)
            .any(|p| matches!(p, [a, b] if a.is_lowercase() && b.is_uppercase()));
        if inner_cap {
            return true;
        }
        // Error codes and versions: E0308, TS2345, ENOENT-like codes with digits, v1.2.3.
        if digits > 0
            && chars.first().is_some_and(|c| c.is_ascii_alphabetic())
            && w.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '-')
        {
            return true;
        }
        if w.len() >= 5
            && w.chars().all(|c| c.is_ascii_uppercase() || c == '_')
            && w.starts_with('E')
        {
            return true;
        }
    }
    false
}

/// The names of `omitted` not already in `shown`, bare numbers left out, most frequent first
/// (then first seen), within `max_chars` (each name counts its chars plus one for the
/// `SEPARATOR`; a name is never cut, a shorter one may still fit after a longer one did
/// not).
pub(super) fn mentions(omitted: &str, shown: &[&str], max_chars: usize) -> Vec<String> {
    let mut end = omitted.len().min(SCAN_BYTES);
    while !omitted.is_char_boundary(end) {
        end -= 1;
    }
    let mut seen: Vec<&str> = Vec::new();
    for s in shown {
        each_name(s, &mut |n| seen.push(n));
    }
    seen.sort_unstable();
    // name → (count, first index)
    let mut counts: BTreeMap<&str, (u32, u32)> = BTreeMap::new();
    each_name(&omitted[..end], &mut |n| {
        if !n.chars().any(char::is_alphabetic) || seen.binary_search(&n).is_ok() {
            return;
        }
        let next = counts.len() as u32;
        if let Some(e) = counts.get_mut(n) {
            e.0 += 1;
        } else if counts.len() < MAX_NAMES {
            counts.insert(n, (1, next));
        }
    });
    let mut ranked: Vec<(&str, (u32, u32))> = counts.into_iter().collect();
    ranked.sort_unstable_by_key(|(_, (count, first))| (std::cmp::Reverse(*count), *first));
    let sep = SEPARATOR.chars().count();
    let mut out = Vec::new();
    let mut used = 0usize;
    for (n, _) in ranked {
        let len = n.chars().count() + sep;
        if used + len <= max_chars {
            used += len;
            out.push(n.to_string());
        }
    }
    out
}
