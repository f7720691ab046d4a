//! Small text helpers shared by digests, fold records and previews: whitespace folding and
//! cuts that never split a word or an identifier.

/// Whitespace runs collapsed to one space, trimmed.
pub fn one_line(s: &str) -> String {
    let mut out = String::with_capacity(s.len().min(4096));
    for w in s.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(w);
    }
    out
}

/// The strings of `v` borrowed.
pub fn strs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

/// The first `n` chars of `s` (all of `s` when it is shorter).
pub fn head_chars(s: &str, n: usize) -> &str {
    &s[..byte_at(s, n)]
}

/// Byte offset of char index `n` (or the end).
pub fn byte_at(s: &str, n: usize) -> usize {
    s.char_indices().nth(n).map(|(i, _)| i).unwrap_or(s.len())
}

/// At most `max` chars, cut at the last whitespace (if one is in the second half) and ended with
/// `…`, so a word or identifier is not cut in half.
pub fn clip(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    if max == 0 {
        return String::new();
    }
    let keep = max - 1; // room for the ellipsis
    let end = byte_at(s, keep);
    let head = &s[..end];
    let min_keep = byte_at(s, keep / 2);
    let cut = match head.rfind(char::is_whitespace) {
        Some(i) if i >= min_keep => i,
        _ => end,
    };
    format!("{}…", s[..cut].trim_end())
}

/// At most about `max` chars: two thirds head, one third tail, joined by an omission note;
/// both cuts at whitespace where possible.
pub fn head_tail(s: &str, max: usize) -> String {
    let total = s.chars().count();
    if total <= max {
        return s.to_string();
    }
    let note_room = 32;
    let budget = max.saturating_sub(note_room).max(2);
    let head_n = budget * 2 / 3;
    let tail_n = budget - head_n;
    // Head: cut back to whitespace (within the last 40 %).
    let hend = byte_at(s, head_n);
    let hmin = byte_at(s, head_n * 6 / 10);
    let hcut = match s[..hend].rfind(char::is_whitespace) {
        Some(i) if i >= hmin => i,
        _ => hend,
    };
    // Tail: move forward to whitespace (within the first 40 %).
    let tstart = byte_at(s, total - tail_n);
    let tmax = byte_at(s, total - tail_n * 6 / 10);
    let tcut = match s[tstart..].find(char::is_whitespace) {
        Some(i) if tstart + i <= tmax => tstart + i,
        _ => tstart,
    };
    let head = s[..hcut].trim_end();
    let tail = s[tcut..].trim_start();
    let omitted = total - head.chars().count() - tail.chars().count();
    format!("{head} … [{omitted} chars omitted] … {tail}")
}

/// Append `x`, then drop the oldest entries beyond `max` (a short bounded queue).
pub fn push_bounded<T>(v: &mut Vec<T>, x: T, max: usize) {
    v.push(x);
    if v.len() > max {
        let extra = v.len() - max;
        v.drain(..extra);
    }
}
