//! Fold records: the extractive record of a folded region, rendered from its digests in fixed
//! sections and fitted to a character budget.

use crate::digest::{Digest, Str, GIST_CHARS, ITEM_CHARS};
use crate::text::{clip, head_tail, one_line};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashSet};

// ---- fold records ----------------------------------------------------------------------------

/// First line of every fold record: says what happened and how to get the exact text back.
pub fn fold_header(fold_id: &str) -> String {
    format!(
        "[cachefold fold {fold_id}] Earlier conversation folded to save context. Exact text: call cachefold_recover with {{\"id\":\"{fold_id}\"}}; search with cachefold_search."
    )
}

/// Section titles, in output order.
pub const SECTIONS: [&str; 9] = [
    "Goal",
    "User constraints and instructions",
    "Decisions",
    "Files touched",
    "Commands and outcomes",
    "Errors",
    "Open threads",
    "Artifacts",
    "Identifiers",
];

pub(crate) const S_GOAL: usize = 0;
pub(crate) const S_USER: usize = 1;
pub(crate) const S_DECISIONS: usize = 2;
pub(crate) const S_FILES: usize = 3;
pub(crate) const S_COMMANDS: usize = 4;
pub(crate) const S_ERRORS: usize = 5;
pub(crate) const S_OPEN: usize = 6;
pub(crate) const S_ARTIFACTS: usize = 7;
pub(crate) const S_IDENTS: usize = 8;

/// Items per section, each value kept once where it first came (a long fold repeats the same
/// files and identifiers tens of thousands of times: a repeat is not copied).
struct Sections {
    s: Vec<Vec<String>>,
    seen: Vec<HashSet<String>>,
}

impl Sections {
    fn push_str(&mut self, k: usize, x: &str) {
        if !x.is_empty() && !self.seen[k].contains(x) {
            self.seen[k].insert(x.to_string());
            self.s[k].push(x.to_string());
        }
    }

    fn push(&mut self, k: usize, x: String) {
        if !x.is_empty() && !self.seen[k].contains(&x) {
            self.seen[k].insert(x.clone());
            self.s[k].push(x);
        }
    }
}

/// Record items per section, unbounded (before fitting), de-duplicated per section in first-seen
/// order.
pub(crate) fn collect_sections(digests: &[&Digest]) -> Vec<Vec<String>> {
    let mut sec = Sections {
        s: vec![Vec::new(); SECTIONS.len()],
        seen: vec![HashSet::new(); SECTIONS.len()],
    };
    // Goal: the first user message that states something (not a bare `/command` or a
    // one-word reply), else the first user message.
    let substantive =
        |u: &&str| (!u.starts_with('/') || u.contains('\n')) && u.split_whitespace().count() >= 3;
    let goal = digests
        .iter()
        .filter_map(|d| d.user_text.as_deref())
        .find(substantive)
        .or_else(|| digests.iter().find_map(|d| d.user_text.as_deref()));
    if let Some(goal) = goal {
        sec.push(S_GOAL, clip(&one_line(goal), GIST_CHARS));
    }
    for d in digests {
        if let Some(u) = &d.user_text {
            sec.push(S_USER, u.trim().replace('\n', "\n  "));
        }
        if d.role == "assistant" && !d.text.is_empty() {
            sec.push(S_DECISIONS, clip(&d.text, ITEM_CHARS));
        }
        for f in &d.files {
            sec.push_str(S_FILES, f);
        }
        for e in &d.errors {
            sec.push_str(S_ERRORS, e);
        }
        for a in &d.artifacts {
            sec.push(
                S_ARTIFACTS,
                format!("{a} (cachefold_recover {{\"id\":\"{a}\"}})"),
            );
        }
        for i in &d.identifiers {
            sec.push_str(S_IDENTS, i);
        }
    }
    // Commands: a result's `$ cmd → outcome` replaces the call's bare `$ cmd`.
    let mut all: Vec<&Str> = Vec::new();
    let mut answered: Vec<&str> = Vec::new();
    for d in digests {
        for o in &d.commands {
            all.push(o);
            if let Some((cmd, _)) = o.split_once(" → ") {
                answered.push(cmd);
            }
        }
    }
    answered.sort_unstable();
    answered.dedup();
    for c in &all {
        if !c.contains(" → ") && answered.binary_search(&c.as_str()).is_ok() {
            continue;
        }
        sec.push_str(S_COMMANDS, c);
    }
    // Open threads: the last user request, and the last assistant note if it came after it.
    let last_user = digests.iter().rposition(|d| d.user_text.is_some());
    if let Some(i) = last_user {
        if let Some(u) = digests[i].user_text.as_deref() {
            sec.push(
                S_OPEN,
                format!("last user request: {}", clip(&one_line(u), ITEM_CHARS)),
            );
        }
    }
    let last_note = digests
        .iter()
        .rposition(|d| d.role == "assistant" && !d.text.is_empty());
    if let Some(j) = last_note {
        if last_user.map_or(true, |i| j > i) {
            sec.push(
                S_OPEN,
                format!(
                    "last assistant note: {}",
                    clip(&digests[j].text, ITEM_CHARS)
                ),
            );
        }
    }
    let mut s = sec.s;
    // A failing last command is an open thread too.
    let failed = s[S_COMMANDS]
        .last()
        .filter(|c| c.contains(" → ") && !c.ends_with("→ ok") && !c.ends_with("→ exit 0"))
        .map(|c| format!("last command failed: {c}"));
    if let Some(c) = failed {
        if !s[S_OPEN].contains(&c) {
            s[S_OPEN].push(c);
        }
    }
    s
}

pub(crate) fn section_header_len(k: usize) -> usize {
    // "\n## Title\n"
    SECTIONS[k].chars().count() + 5
}

pub(crate) fn render(header: &str, s: &[Vec<String>]) -> String {
    let mut out = String::from(header);
    out.push('\n');
    for (k, items) in s.iter().enumerate() {
        if items.is_empty() {
            continue;
        }
        out.push_str("\n## ");
        out.push_str(SECTIONS[k]);
        out.push('\n');
        if k == S_IDENTS {
            out.push_str(&items.join(", "));
            out.push('\n');
        } else {
            for it in items {
                out.push_str("- ");
                out.push_str(it);
                out.push('\n');
            }
        }
    }
    out
}

/// Exact char length of section `k` in [`render`]'s output with `count` items of `body` chars.
pub(crate) fn section_len(k: usize, count: usize, body: usize) -> usize {
    if count == 0 {
        0
    } else if k == S_IDENTS {
        // "a, b, c\n"
        section_header_len(k) + body + 2 * (count - 1) + 1
    } else {
        // "- item\n" each
        section_header_len(k) + body + 3 * count
    }
}

/// Share of the budget user constraints may keep while other facts still have to be dropped.
pub(crate) const USER_SHARE: f64 = 0.6;

/// The sections being fitted, with every item's char count and each section's body length kept
/// in step with the items, so the record's length is known in O(1) after each change and
/// fitting is linear in the number of items (a fold of a 100,000-message session has tens of
/// thousands of them).
pub(crate) struct Fitter {
    s: Vec<Vec<String>>,
    /// Char count of each item, parallel to `s`.
    lens: Vec<Vec<usize>>,
    /// Sum of `lens[k]`.
    body: Vec<usize>,
    /// Header chars + its newline.
    head: usize,
}

impl Fitter {
    pub(crate) fn new(header: &str, s: Vec<Vec<String>>) -> Fitter {
        let mut lens: Vec<Vec<usize>> = Vec::with_capacity(s.len());
        let mut body: Vec<usize> = Vec::with_capacity(s.len());
        for items in &s {
            let mut l = Vec::with_capacity(items.len());
            let mut sum = 0;
            for i in items {
                let n = i.chars().count();
                l.push(n);
                sum += n;
            }
            lens.push(l);
            body.push(sum);
        }
        Fitter {
            s,
            lens,
            body,
            head: header.chars().count() + 1,
        }
    }

    pub(crate) fn section(&self, k: usize) -> usize {
        section_len(k, self.s[k].len(), self.body[k])
    }

    /// Exact char length of [`render`]'s output.
    pub(crate) fn total(&self) -> usize {
        let mut n = self.head;
        for k in 0..SECTIONS.len() {
            n += self.section(k);
        }
        n
    }

    /// Shorten the longest user items (head + tail at whitespace, not below 120 chars; ties go
    /// to the earliest) until the record fits `max_chars` and the user section fits `user_cap`,
    /// or nothing is left to shorten.
    pub(crate) fn shrink_user(&mut self, max_chars: usize, user_cap: usize) {
        let mut items = Vec::with_capacity(self.lens[S_USER].len());
        for (i, &n) in self.lens[S_USER].iter().enumerate() {
            items.push((n, Reverse(i)));
        }
        let mut heap: BinaryHeap<(usize, Reverse<usize>)> = BinaryHeap::from(items);
        loop {
            let excess = self
                .total()
                .saturating_sub(max_chars)
                .max(self.section(S_USER).saturating_sub(user_cap));
            if excess == 0 {
                return;
            }
            let Some(&(len, Reverse(idx))) = heap.peek() else {
                return;
            };
            if len <= 120 {
                return;
            }
            let shorter = head_tail(&self.s[S_USER][idx], len.saturating_sub(excess).max(120));
            let n = shorter.chars().count();
            if n >= len {
                return;
            }
            heap.pop();
            heap.push((n, Reverse(idx)));
            self.s[S_USER][idx] = shorter;
            self.lens[S_USER][idx] = n;
            self.body[S_USER] -= len - n;
        }
    }

    /// Drop items of section `k` until the record fits or `keep` items are left (identifiers
    /// from the lowest-ranked end, everything else oldest first).
    pub(crate) fn drop_section(&mut self, k: usize, max_chars: usize, keep: usize) {
        let others = self.total() - self.section(k);
        let mut count = self.s[k].len();
        let mut body = self.body[k];
        let mut dropped = 0;
        while others + section_len(k, count, body) > max_chars && count > keep {
            let at = if k == S_IDENTS { count - 1 } else { dropped };
            body -= self.lens[k][at];
            count -= 1;
            dropped += 1;
        }
        if dropped == 0 {
            return;
        }
        if k == S_IDENTS {
            self.s[k].truncate(count);
            self.lens[k].truncate(count);
        } else {
            let n = dropped.min(self.s[k].len());
            self.s[k].drain(..n);
            let n = dropped.min(self.lens[k].len());
            self.lens[k].drain(..n);
        }
        self.body[k] = body;
    }
}

/// Fit sections into `max_chars`, least important first: decisions, identifiers, commands,
/// open threads; then user text is shortened to at most 60 % of the budget (so a chatty span
/// cannot push out every file and error); then errors, files and artifacts, first down to their
/// most recent 5 / 10 / 5 items, then entirely; then the goal; then user text is shortened
/// further and, last, the oldest user items are dropped.
pub(crate) fn fit(header: &str, s: Vec<Vec<String>>, max_chars: usize) -> Vec<Vec<String>> {
    let mut f = Fitter::new(header, s);
    for k in [S_DECISIONS, S_IDENTS, S_COMMANDS, S_OPEN] {
        f.drop_section(k, max_chars, 0);
    }
    if f.total() > max_chars {
        f.shrink_user(usize::MAX, (max_chars as f64 * USER_SHARE) as usize);
    }
    for (k, keep) in [
        (S_ERRORS, 5),
        (S_FILES, 10),
        (S_ARTIFACTS, 5),
        (S_ERRORS, 0),
        (S_FILES, 0),
        (S_ARTIFACTS, 0),
        (S_GOAL, 0),
    ] {
        f.drop_section(k, max_chars, keep);
    }
    f.shrink_user(max_chars, usize::MAX);
    f.drop_section(S_USER, max_chars, 0);
    f.s
}

/// Deterministic extractive fold record body: sections Goal / User constraints and instructions
/// (verbatim user text) / Decisions / Files touched / Commands and outcomes / Errors / Open threads /
/// Artifacts (ids, with how to recover) / Identifiers. Bounded by `max_chars`.
///
/// Starts with [`fold_header`]. Length (in chars) ≤ `max(max_chars, header + 1)`: when over
/// budget, whole items are dropped (least important first, see `fit`), never cut
/// mid-identifier; user text is only ever shortened head + tail at whitespace, and its items
/// are dropped last.
pub fn render_extractive(fold_id: &str, digests: &[&Digest], max_chars: usize) -> String {
    let header = fold_header(fold_id);
    let s = fit(&header, collect_sections(digests), max_chars);
    render(&header, &s)
}
