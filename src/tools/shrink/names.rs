//! The "Mentions:" list of a shrunk result's omitted part: the exact names it holds, written
//! as the text writes them (`socket.assigns`, `Spotter.Services.Renderer`, `src/a.rs`,
//! `E0308`), the ones that recur first, none that the head or tail already shows, separated by
//! one space ([`SEPARATOR`]). Bare numbers (line numbers of a listing, sizes, counts) are not
//! listed: on the replay bench they took room that names used better (recall 0.9193 instead
//! of 0.9159 with the space separator alone, at 0.2 % less input).
//!
//! A name is a run of word characters (letters, digits, `_ . / - : @ # ~ + % = ? &`), trimmed
//! of edge punctuation and split at a single `:` (`src/a.rs:12:5` gives `src/a.rs`), that looks
//! like something a later answer quotes verbatim: a path, a URL, a `snake_case`, `camelCase`,
//! dotted or `::` name, a code with digits, a hex hash, a number of ≥ 3 digits. Plain words
//! never qualify. Work is linear: at most [`SCAN_BYTES`] of the part are read and at most
//! [`MAX_NAMES`] distinct names counted.

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
            if is_name(p) {
                f(p);
            }
        }
    }
}

fn is_name(w: &str) -> bool {
    let b = w.as_bytes();
    if b.len() < 3 {
        return false;
    }
    let digits = b.iter().filter(|c| c.is_ascii_digit()).count();
    if !w.chars().any(char::is_alphabetic) {
        return digits >= 3 && b.iter().all(|c| c.is_ascii_digit() || b".,_".contains(c));
    }
    if w.contains('/') {
        return b.len() >= 4 && w.chars().filter(|c| c.is_alphanumeric()).count() >= 3;
    }
    if (7..=64).contains(&b.len()) && b.iter().all(u8::is_ascii_hexdigit) && digits > 0 {
        return digits < b.len();
    }
    if let Some((stem, ext)) = w.rsplit_once('.') {
        if !stem.is_empty()
            && (1..=6).contains(&ext.len())
            && ext.bytes().all(|c| c.is_ascii_alphanumeric())
            && ext.bytes().any(|c| c.is_ascii_alphabetic())
            && stem.chars().any(char::is_alphanumeric)
        {
            return true;
        }
    }
    if b.len() < 4 {
        return false;
    }
    (w.contains('_') && w.chars().filter(|c| c.is_alphabetic()).count() >= 3)
        || w.chars()
            .zip(w.chars().skip(1))
            .any(|(a, c)| a.is_lowercase() && c.is_uppercase())
        || (digits > 0
            && b[0].is_ascii_alphabetic()
            && b.iter()
                .all(|c| c.is_ascii_alphanumeric() || b".-".contains(c)))
}

/// The names of `omitted` not already in `shown`, bare numbers left out, most frequent first
/// (then first seen), within `max_chars` (each name counts its chars plus one for the
/// [`SEPARATOR`]; a name is never cut, a shorter one may still fit after a longer one did
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
