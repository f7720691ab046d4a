//! The fold-record builder as it was before it was made linear, kept as the test oracle: the
//! linear builder in `digest.rs` must render exactly the same bytes.
#![allow(dead_code)]

use super::record::*;
use crate::digest::Digest;
use crate::digest::{GIST_CHARS, ITEM_CHARS};
use crate::text::{clip, head_tail, one_line};

/// Record items per section, unbounded (before fitting).
fn collect_sections(digests: &[&Digest]) -> Vec<Vec<String>> {
    let mut s: Vec<Vec<String>> = vec![Vec::new(); SECTIONS.len()];
    let push = |v: &mut Vec<String>, x: String| {
        if !x.is_empty() && !v.contains(&x) {
            v.push(x);
        }
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
        push(&mut s[S_GOAL], clip(&one_line(goal), GIST_CHARS));
    }
    for d in digests {
        if let Some(u) = &d.user_text {
            push(&mut s[S_USER], u.trim().replace('\n', "\n  "));
        }
        if d.role == "assistant" && !d.text.is_empty() {
            push(&mut s[S_DECISIONS], clip(&d.text, ITEM_CHARS));
        }
        for f in &d.files {
            push(&mut s[S_FILES], f.to_string());
        }
        for e in &d.errors {
            push(&mut s[S_ERRORS], e.to_string());
        }
        for a in &d.artifacts {
            push(
                &mut s[S_ARTIFACTS],
                format!("{a} (cachefold_recover {{\"id\":\"{a}\"}})"),
            );
        }
        for i in &d.identifiers {
            push(&mut s[S_IDENTS], i.to_string());
        }
    }
    // Commands: a result's `$ cmd → outcome` replaces the call's bare `$ cmd`.
    let all: Vec<&crate::digest::Str> = digests.iter().flat_map(|d| d.commands.iter()).collect();
    for c in &all {
        let bare = c.split(" → ").next().unwrap_or(c);
        let has_outcome = c.contains(" → ");
        if !has_outcome
            && all
                .iter()
                .any(|o| o.contains(" → ") && o.split(" → ").next() == Some(bare))
        {
            continue;
        }
        push(&mut s[S_COMMANDS], c.to_string());
    }
    // Open threads: the last user request, and the last assistant note if it came after it.
    let last_user = digests.iter().rposition(|d| d.user_text.is_some());
    if let Some(i) = last_user {
        if let Some(u) = digests[i].user_text.as_deref() {
            push(
                &mut s[S_OPEN],
                format!("last user request: {}", clip(&one_line(u), ITEM_CHARS)),
            );
        }
    }
    let last_note = digests
        .iter()
        .rposition(|d| d.role == "assistant" && !d.text.is_empty());
    if let Some(j) = last_note {
        if last_user.map_or(true, |i| j > i) {
            push(
                &mut s[S_OPEN],
                format!(
                    "last assistant note: {}",
                    clip(&digests[j].text, ITEM_CHARS)
                ),
            );
        }
    }
    // A failing last command is an open thread too.
    if let Some(c) = s[S_COMMANDS].last() {
        if c.contains(" → ") && !c.ends_with("→ ok") && !c.ends_with("→ exit 0") {
            let c = format!("last command failed: {c}");
            push(&mut s[S_OPEN], c);
        }
    }
    s
}

fn section_header_len(k: usize) -> usize {
    // "\n## Title\n"
    SECTIONS[k].chars().count() + 5
}

fn render(header: &str, s: &[Vec<String>]) -> String {
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

/// Exact char length of [`render`]'s output.
fn total_len(header: &str, s: &[Vec<String>]) -> usize {
    let mut n = header.chars().count() + 1;
    for (k, items) in s.iter().enumerate() {
        if items.is_empty() {
            continue;
        }
        n += section_header_len(k);
        let body: usize = items.iter().map(|i| i.chars().count()).sum();
        n += if k == S_IDENTS {
            // "a, b, c\n"
            body + 2 * (items.len() - 1) + 1
        } else {
            // "- item\n" each
            body + 3 * items.len()
        };
    }
    n
}

/// Share of the budget user constraints may keep while other facts still have to be dropped.
const USER_SHARE: f64 = 0.6;

/// Chars of the user-constraints section.
fn user_len(s: &[Vec<String>]) -> usize {
    if s[S_USER].is_empty() {
        0
    } else {
        section_header_len(S_USER)
            + s[S_USER]
                .iter()
                .map(|u| u.chars().count() + 3)
                .sum::<usize>()
    }
}

/// Shorten the longest user items (head + tail at whitespace, not below 120 chars) until the
/// record fits `max_chars` and the user section fits `user_cap`, or nothing is left to shorten.
fn shrink_user(header: &str, s: &mut [Vec<String>], max_chars: usize, user_cap: usize) {
    loop {
        let excess = total_len(header, s)
            .saturating_sub(max_chars)
            .max(user_len(s).saturating_sub(user_cap));
        if excess == 0 {
            return;
        }
        let longest = s[S_USER]
            .iter()
            .enumerate()
            .map(|(i, u)| (u.chars().count(), usize::MAX - i))
            .max();
        let Some((len, rev)) = longest else { return };
        let idx = usize::MAX - rev;
        if len <= 120 {
            return;
        }
        let shorter = head_tail(&s[S_USER][idx], len.saturating_sub(excess).max(120));
        if shorter.chars().count() >= len {
            return;
        }
        s[S_USER][idx] = shorter;
    }
}

/// Drop items of section `k` until the record fits or `keep` items are left (identifiers from
/// the lowest-ranked end, everything else oldest first).
fn drop_section(header: &str, s: &mut [Vec<String>], k: usize, max_chars: usize, keep: usize) {
    while total_len(header, s) > max_chars && s[k].len() > keep {
        if k == S_IDENTS {
            s[k].pop();
        } else {
            s[k].remove(0);
        }
    }
}

/// Fit sections into `max_chars`, least important first: decisions, identifiers, commands,
/// open threads; then user text is shortened to at most 60 % of the budget (so a chatty span
/// cannot push out every file and error); then errors, files and artifacts, first down to their
/// most recent 5 / 10 / 5 items, then entirely; then the goal; then user text is shortened
/// further and, last, the oldest user items are dropped. Lengths are recomputed after every
/// change: a record has at most a few hundred items.
fn fit(header: &str, s: &mut [Vec<String>], max_chars: usize) {
    for k in [S_DECISIONS, S_IDENTS, S_COMMANDS, S_OPEN] {
        drop_section(header, s, k, max_chars, 0);
    }
    if total_len(header, s) > max_chars {
        shrink_user(
            header,
            s,
            usize::MAX,
            (max_chars as f64 * USER_SHARE) as usize,
        );
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
        drop_section(header, s, k, max_chars, keep);
    }
    shrink_user(header, s, max_chars, usize::MAX);
    drop_section(header, s, S_USER, max_chars, 0);
}

/// Deterministic extractive fold record body: sections Goal / User constraints and instructions
/// (verbatim user text) / Decisions / Files touched / Commands and outcomes / Errors / Open threads /
/// Artifacts (ids, with how to recover) / Identifiers. Bounded by `max_chars`.
///
/// Starts with [`fold_header`]. Length (in chars) ≤ `max(max_chars, header + 1)`: when over
/// budget, whole items are dropped (least important first, see `fit`), never cut
/// mid-identifier; user text is only ever shortened head + tail at whitespace, and its items
/// are dropped last.
pub fn render_extractive_quadratic(fold_id: &str, digests: &[&Digest], max_chars: usize) -> String {
    let header = fold_header(fold_id);
    let mut s = collect_sections(digests);
    fit(&header, &mut s, max_chars);
    render(&header, &s)
}

/// LLM summary request built from digests: (system prompt, user prompt). The user prompt asks for the
/// same sections and says exact identifiers must be copied verbatim.
///
/// The material is the extractive record (allowed 4x the output budget, at least 8,000 chars)
/// followed by a chronological outline of the folded messages (gists, bounded to the same
/// size, oldest entries shortened first). The model's answer is the record body; the engine
/// prepends [`fold_header`].
pub fn summary_prompt_quadratic(
    fold_id: &str,
    digests: &[&Digest],
    max_chars: usize,
) -> (String, String) {
    let system =
        "You write fold records for a coding agent's context manager. A span of an earlier \
conversation is being removed from the context window; your record replaces it, and the agent will \
rely on it to continue the work. Be factual and terse. Never invent facts, never add advice, never \
address the user. Copy file paths, commands, error messages, ids, hashes, URLs, numbers and code \
symbols exactly, character for character. Quote the user's instructions and constraints verbatim."
            .to_string();
    let budget = (max_chars * 4).max(8_000);
    let material = render_extractive_quadratic(fold_id, digests, budget);
    let mut outline: Vec<String> = digests
        .iter()
        .enumerate()
        .filter_map(|(i, d)| super::prompt::outline_line(i, d))
        .collect();
    // Keep the outline within budget: drop from the oldest entries after the first.
    let mut size: usize = outline.iter().map(|l| l.chars().count() + 1).sum();
    while size > budget && outline.len() > 1 {
        let removed = outline.remove(1);
        size -= removed.chars().count() + 1;
    }
    let mut user = format!(
        "Write the fold record for fold {fold_id} in at most {max_chars} characters, plain text, with these \
sections in this order (omit a section only if it would be empty):\n"
    );
    for s in SECTIONS {
        user.push_str("## ");
        user.push_str(s);
        user.push('\n');
    }
    user.push_str(
        "\nRules: copy exact identifiers (paths, commands, ids, hashes, URLs, numbers, symbols) verbatim; \
quote user instructions and constraints verbatim; list artifact ids with how to recover them \
(cachefold_recover {\"id\":\"<id>\"}); under Open threads, say what was unfinished at the end of the span. \
Do not include this prompt's headings beyond the sections above.\n\n### Extracted facts\n",
    );
    user.push_str(&material);
    user.push_str("\n### Chronological outline\n");
    for l in &outline {
        user.push_str(l);
        user.push('\n');
    }
    (system, user)
}
