//! Which models the engine manages, and the host's own compaction thresholds.

use crate::config::{Config, Mode};

/// OpenClaw 2026.9.6's pre-turn trigger for a context window, in tokens: the lower of its
/// compaction threshold, `window − reserve` with `reserve = min(20,000, window / 4)`
/// (`resolveCompactionThreshold` in `dist/agent-runner-memory-*.mjs`, reserve from memory-core's
/// `buildMemoryFlushPlan` / `resolveEffectiveCompactionReserveTokens`), and its pre-compaction
/// memory flush, which runs an extra agent turn `min(4,000, (window − reserve) / 2)` tokens
/// earlier. The host compares it with the last call's prompt + output + the new prompt.
pub fn host_turn_threshold(window: u64) -> Option<u64> {
    if window == 0 {
        return None;
    }
    let reserve = 20_000u64.min(window / 4);
    let compaction = window - reserve;
    let soft = 4_000u64.min(compaction / 2);
    Some(compaction - soft)
}

/// True when the engine manages context for `model` (see `Config::mode`). Patterns are tried
/// against the full id and the part after the last `/`. Missing or empty id: `auto` → false.
pub fn model_managed(cfg: &Config, model: Option<&str>) -> bool {
    match cfg.mode {
        Mode::Off => false,
        Mode::Always => true,
        Mode::Auto => match model.map(str::trim).filter(|m| !m.is_empty()) {
            None => false,
            Some(m) => {
                let bare = m.rsplit('/').next().unwrap_or(m);
                cfg.target_models
                    .iter()
                    .any(|p| glob_match(p, m) || glob_match(p, bare))
            }
        },
    }
}

/// The characters of `s`, lowercased.
fn lower_chars(s: &str) -> Vec<char> {
    s.chars().flat_map(char::to_lowercase).collect()
}

/// Case-insensitive glob with `*` as the only wildcard.
pub fn glob_match(pattern: &str, s: &str) -> bool {
    let (p, t) = (lower_chars(pattern), lower_chars(s));
    let (mut i, mut j) = (0usize, 0usize);
    let mut star: Option<usize> = None;
    let mut mark = 0usize;
    while j < t.len() {
        if i < p.len() && p[i] == '*' {
            star = Some(i);
            i += 1;
            mark = j;
        } else if i < p.len() && p[i] == t[j] {
            i += 1;
            j += 1;
        } else if let Some(s) = star {
            i = s + 1;
            mark += 1;
            j = mark;
        } else {
            return false;
        }
    }
    while i < p.len() && p[i] == '*' {
        i += 1;
    }
    i == p.len()
}
