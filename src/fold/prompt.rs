//! The LLM summary prompt for a folded region (built from digests, never the raw transcript).

use super::record::*;
use crate::digest::{Digest, GIST_CHARS};
use crate::text::{clip, one_line};

/// LLM summary request built from digests: (system prompt, user prompt). The user prompt asks for the
/// same sections and says exact identifiers must be copied verbatim.
///
/// The material is the extractive record (allowed 4x the output budget, at least 8,000 chars)
/// followed by a chronological outline of the folded messages (gists, bounded to the same
/// size, oldest entries shortened first). The model's answer is the record body; the engine
/// prepends [`fold_header`].
pub fn summary_prompt(fold_id: &str, digests: &[&Digest], max_chars: usize) -> (String, String) {
    let system =
        "You write fold records for a coding agent's context manager. A span of an earlier \
conversation is being removed from the context window; your record replaces it, and the agent will \
rely on it to continue the work. Be factual and terse. Never invent facts, never add advice, never \
address the user. Copy file paths, commands, error messages, ids, hashes, URLs, numbers and code \
symbols exactly, character for character. Quote the user's instructions and constraints verbatim."
            .to_string();
    let budget = (max_chars * 4).max(8_000);
    let material = render_extractive(fold_id, digests, budget);
    let mut outline: Vec<String> = Vec::new();
    for (i, d) in digests.iter().enumerate() {
        if let Some(line) = outline_line(i, d) {
            outline.push(line);
        }
    }
    // Keep the outline within budget: drop from the oldest entries after the first.
    let mut size: usize = 0;
    for l in &outline {
        size += l.chars().count() + 1;
    }
    let mut dropped = 0;
    while size > budget && outline.len() - dropped > 1 {
        size -= outline[1 + dropped].chars().count() + 1;
        dropped += 1;
    }
    if dropped > 0 {
        let mut rest = outline.split_off(1 + dropped);
        outline.truncate(1);
        outline.append(&mut rest);
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

/// The outline line of digest `i` (1-based number, who, gist, first command), or `None` when it
/// has neither text nor a command.
pub(super) fn outline_line(i: usize, d: &Digest) -> Option<String> {
    let who = match (d.role.as_str(), d.tool_name.as_deref()) {
        ("toolResult", Some(t)) => format!("tool {t}"),
        ("assistant", Some(t)) if !d.call_ids.is_empty() => format!("assistant → {t}"),
        (r, _) => r.to_string(),
    };
    let body = if let Some(u) = &d.user_text {
        one_line(u)
    } else {
        d.text.to_string()
    };
    let extra = d
        .commands
        .first()
        .map(|c| format!(" [{c}]"))
        .unwrap_or_default();
    if body.is_empty() && extra.is_empty() {
        return None;
    }
    Some(format!(
        "{}. {who}: {}{extra}",
        i + 1,
        clip(&body, GIST_CHARS)
    ))
}
