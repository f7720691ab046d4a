//! Per-message digests and fold-record rendering.
//!
//! A [`Digest`] is the bounded extract of one message that a fold record needs: the files it
//! touched, commands and their outcomes, error lines, exact identifiers (hashes, UUIDs, URLs,
//! code symbols, numbers), artifact ids, and — for user messages — the user's words verbatim.
//! Digests are computed once, when a message is first seen, and kept in session state, so the
//! engine can render a fold record later without the folded messages.
//!
//! Invariants:
//! * Bounded: `text` ≤ [`GIST_CHARS`], `user_text` ≤ [`USER_TEXT_CHARS`] (together ≤ 1,500
//!   chars), each list capped (see the `MAX_*` constants), each list item ≤ [`ITEM_CHARS`].
//! * Thinking blocks never enter a digest: a fold may drop old reasoning.
//! * Deterministic: the same message gives the same digest; [`render_extractive`] and
//!   [`summary_prompt`] give the same bytes for the same digests.
//! * Truncation cuts at whitespace where there is any, so an identifier is never cut in half.
//!
//! The scanners are small hand-written tokenizers (no regex crate in the core).

use crate::config::Config;
use crate::message::{Message, Part, Role};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashSet};

/// Bounded per-message extract kept in session state (≤ 1,500 chars of text): the facts a fold
/// record needs. Computed once when a message is first seen.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
#[serde(rename_all = "camelCase", default)]
pub struct Digest {
    /// Raw role string (`user`, `assistant`, `toolResult`, …).
    pub role: String,
    /// One-line gist of the visible text (≤ [`GIST_CHARS`]); for a tool result, its first lines.
    pub text: String,
    /// File paths named by tool arguments or path-looking tokens (≤ [`MAX_FILES`]).
    pub files: Vec<String>,
    /// Shell commands: `$ cmd` on the call, `$ cmd → outcome` on the result (≤ [`MAX_COMMANDS`]).
    pub commands: Vec<String>,
    /// Error lines (≤ [`MAX_ERRORS`]).
    pub errors: Vec<String>,
    /// Exact identifiers: URLs, UUIDs, hex hashes, code symbols, numbers (≤ [`MAX_IDENTIFIERS`]).
    pub identifiers: Vec<String>,
    /// Artifact ids (40-hex) found after the word `artifact` (≤ [`MAX_ARTIFACTS`]).
    pub artifacts: Vec<String>,
    /// User text verbatim, runtime churn collapsed (≤ [`USER_TEXT_CHARS`], head + tail).
    pub user_text: Option<String>,
    /// Tool name (tool result), or the first call's name (assistant).
    pub tool_name: Option<String>,
    /// Tool-call ids of an assistant message.
    pub call_ids: Vec<String>,
    /// `toolCallId` of a tool result.
    pub result_id: Option<String>,
    /// A protected read (`Config.protected_reads`): the engine keeps this result verbatim.
    /// Only set on the tool result; the engine must keep (or re-create) its call as well.
    pub protected: bool,
}

/// Gist length.
pub const GIST_CHARS: usize = 300;
/// Verbatim user text bound (head + tail beyond it).
pub const USER_TEXT_CHARS: usize = 1_200;
/// Longest list item.
pub const ITEM_CHARS: usize = 200;
/// Files per digest.
pub const MAX_FILES: usize = 12;
/// Commands per digest.
pub const MAX_COMMANDS: usize = 6;
/// Error lines per digest.
pub const MAX_ERRORS: usize = 5;
/// Identifiers per digest.
pub const MAX_IDENTIFIERS: usize = 16;
/// Artifact ids per digest.
pub const MAX_ARTIFACTS: usize = 8;

/// Argument keys that name a file.
const PATH_KEYS: &[&str] = &[
    "path",
    "file_path",
    "filePath",
    "file",
    "filename",
    "target_file",
    "notebook_path",
];
/// Argument keys holding lists of files.
const PATHS_KEYS: &[&str] = &["paths", "files"];

/// Tools whose result is file or web content: error-looking lines in it are data.
const CONTENT_TOOLS: &[&str] = &[
    "read",
    "read_file",
    "web_fetch",
    "web_search",
    "memory_get",
    "memory_search",
    "browser",
];

/// `(tool name, arguments)` → the file paths the call names.
fn arg_paths(args: &Value) -> Vec<String> {
    let mut out = Vec::new();
    for k in PATH_KEYS {
        if let Some(s) = args.get(*k).and_then(Value::as_str) {
            let s = s.trim();
            if !s.is_empty() && s.chars().count() <= ITEM_CHARS {
                out.push(s.to_string());
            }
        }
    }
    for k in PATHS_KEYS {
        if let Some(Value::Array(items)) = args.get(*k) {
            for s in items.iter().filter_map(Value::as_str) {
                let s = s.trim();
                if !s.is_empty() && s.chars().count() <= ITEM_CHARS {
                    out.push(s.to_string());
                }
            }
        }
    }
    out
}

fn path_arg(args: &Value) -> Option<&str> {
    PATH_KEYS
        .iter()
        .find_map(|k| args.get(*k).and_then(Value::as_str))
}

/// True for a `read` of a protected workspace file: the tool is `read` (or `read_file`), and
/// the basename of its path equals an entry of `cfg.protected_reads`, case-insensitively.
pub fn is_protected_read(tool_name: &str, args: &Value, cfg: &Config) -> bool {
    let t = tool_name.to_ascii_lowercase();
    if t != "read" && t != "read_file" {
        return false;
    }
    let Some(path) = path_arg(args) else {
        return false;
    };
    let base = path.trim().rsplit(['/', '\\']).next().unwrap_or("");
    !base.is_empty()
        && cfg
            .protected_reads
            .iter()
            .any(|p| p.eq_ignore_ascii_case(base))
}

/// Whether a call runs a shell command (and which): tool name looks like a shell and `command`
/// (or `cmd`) is a string.
fn shell_command<'a>(tool_name: &str, args: &'a Value) -> Option<&'a str> {
    let t = tool_name.to_ascii_lowercase();
    let shellish = matches!(
        t.as_str(),
        "exec" | "bash" | "shell" | "sh" | "run" | "terminal" | "run_command" | "process"
    ) || t.contains("exec")
        || t.contains("bash")
        || t.contains("shell");
    if !shellish {
        return None;
    }
    args.get("command")
        .or_else(|| args.get("cmd"))
        .and_then(Value::as_str)
}

fn command_label(cmd: &str) -> String {
    format!("$ {}", clip(&one_line(cmd), ITEM_CHARS - 2))
}

/// Outcome of a shell command from its result: `exit N`, `aborted`, `timed out`, `error` or
/// `ok`, followed by the first error line when it failed.
fn command_outcome(text: &str, is_error: bool, details_exit: Option<i64>) -> String {
    let code = details_exit.or_else(|| find_exit_code(text));
    let lower = text.to_ascii_lowercase();
    let mut out = match code {
        Some(c) => format!("exit {c}"),
        None if lower.contains("command aborted") => "aborted".to_string(),
        None if lower.contains("timed out") => "timed out".to_string(),
        None if is_error => "error".to_string(),
        None => "ok".to_string(),
    };
    let failed = is_error || code.is_some_and(|c| c != 0) || out == "aborted" || out == "timed out";
    if failed {
        if let Some(e) = error_lines(text, 1).into_iter().next() {
            out.push_str(": ");
            out.push_str(&clip(&e, 120));
        }
    }
    out
}

/// `exited with code N`, `exit code N`, `exit code: N`, `exit status N`.
fn find_exit_code(text: &str) -> Option<i64> {
    let lower = text.to_ascii_lowercase();
    for pat in ["exited with code", "exit code", "exit status", "exitcode"] {
        // The last mention wins: the host appends it at the end of the output.
        if let Some(pos) = lower.rfind(pat) {
            let rest = &lower[pos + pat.len()..];
            let rest = rest.trim_start_matches([' ', ':', '=', '\t']);
            let num: String = rest
                .chars()
                .enumerate()
                .take_while(|(i, c)| c.is_ascii_digit() || (*i == 0 && *c == '-'))
                .map(|(_, c)| c)
                .collect();
            if let Ok(n) = num.parse::<i64>() {
                return Some(n);
            }
        }
    }
    None
}

/// Digest one message. `call_args`: for a toolResult, the (name, arguments) of its call if known
/// (to name files read and commands run).
pub fn digest(m: &Message, cfg: &Config, call_args: Option<(&str, &Value)>) -> Digest {
    let mut d = Digest {
        role: m.role_str().to_string(),
        ..Digest::default()
    };
    let mut files = Bounded::new(MAX_FILES);
    let mut commands = Bounded::new(MAX_COMMANDS);
    let mut errors = Bounded::new(MAX_ERRORS);
    let mut idents = IdentCollector::default();
    match m.role() {
        Role::User => {
            let mut text = collapse_churn(&m.text());
            let images = m
                .parts()
                .iter()
                .filter(|p| matches!(p, Part::Image { .. }))
                .count();
            if images > 0 {
                if !text.is_empty() {
                    text.push('\n');
                }
                text.push_str(&format!(
                    "[{images} image{} attached]",
                    if images == 1 { "" } else { "s" }
                ));
            }
            d.text = clip(&one_line(&text), GIST_CHARS);
            for e in error_lines(&text, MAX_ERRORS) {
                errors.push(e);
            }
            scan_paths(&text, &mut files);
            idents.scan(&text);
            d.artifacts = artifact_ids(&text);
            if !text.trim().is_empty() {
                d.user_text = Some(head_tail(text.trim(), USER_TEXT_CHARS));
            }
        }
        Role::Assistant => {
            let text = collapse_churn(&m.text());
            d.text = clip(&one_line(&text), GIST_CHARS);
            let calls = m.tool_calls();
            d.call_ids = calls.iter().map(|c| c.id.to_string()).collect();
            d.tool_name = calls.first().map(|c| c.name.to_string());
            for c in &calls {
                for p in arg_paths(c.arguments) {
                    files.push(p);
                }
                if let Some(cmd) = shell_command(c.name, c.arguments) {
                    commands.push(command_label(cmd));
                    scan_paths(cmd, &mut files);
                }
                // Short string arguments only: long ones are file contents or patches.
                if let Value::Object(map) = c.arguments {
                    for v in map.values().filter_map(Value::as_str) {
                        if v.chars().count() <= 300 {
                            idents.scan(v);
                        }
                    }
                }
            }
            scan_paths(&text, &mut files);
            idents.scan(&text);
            d.artifacts = artifact_ids(&text);
        }
        Role::ToolResult => {
            let text = m.text();
            d.result_id = m.tool_call_id().map(str::to_string);
            d.tool_name = m
                .tool_name()
                .map(str::to_string)
                .or_else(|| call_args.map(|(n, _)| n.to_string()));
            d.text = clip(&one_line(&text), GIST_CHARS);
            if let Some((name, args)) = call_args {
                for p in arg_paths(args) {
                    files.push(p);
                }
                d.protected = is_protected_read(name, args, cfg);
                if let Some(cmd) = shell_command(name, args) {
                    let exit = m
                        .raw()
                        .get("details")
                        .and_then(|v| v.get("exitCode"))
                        .and_then(Value::as_i64);
                    commands.push(format!(
                        "{} → {}",
                        command_label(cmd),
                        command_outcome(&text, m.is_error(), exit)
                    ));
                }
            }
            let name = d.tool_name.clone().unwrap_or_default();
            let shell = call_args.is_some_and(|(n, a)| shell_command(n, a).is_some());
            // File and web contents are data, not outcomes: their "error" lines are code or
            // prose. Scan them only when the tool itself failed.
            let content_tool = CONTENT_TOOLS.iter().any(|t| t.eq_ignore_ascii_case(&name));
            let errs = if content_tool && !m.is_error() {
                Vec::new()
            } else {
                error_lines(&text, MAX_ERRORS)
            };
            // A failed shell command already reports its outcome under commands.
            if errs.is_empty() && m.is_error() && !shell {
                if let Some(first) = text.lines().map(str::trim).find(|l| !l.is_empty()) {
                    errors.push(clip(&one_line(first), ITEM_CHARS));
                }
            }
            for e in errs {
                errors.push(e);
            }
            // A read's content is the file itself: paths inside it are noise, not "touched".
            if !call_args.is_some_and(|(n, _)| n.eq_ignore_ascii_case("read")) {
                scan_paths(&text, &mut files);
            }
            idents.scan(&text);
            d.artifacts = artifact_ids(&text);
        }
        _ => {
            let runtime = m.raw().get("customType").and_then(Value::as_str)
                == Some("openclaw.runtime-context");
            let text = if runtime {
                RUNTIME_MARKER.to_string()
            } else {
                collapse_churn(&m.text())
            };
            d.text = clip(&one_line(&text), GIST_CHARS);
            if let Some(cmd) = m.raw().get("command").and_then(Value::as_str) {
                let exit = m.raw().get("exitCode").and_then(Value::as_i64);
                commands.push(format!(
                    "{} → {}",
                    command_label(cmd),
                    command_outcome(&text, false, exit)
                ));
            }
            for e in error_lines(&text, MAX_ERRORS) {
                errors.push(e);
            }
            scan_paths(&text, &mut files);
            idents.scan(&text);
            d.artifacts = artifact_ids(&text);
        }
    }
    d.files = files.items;
    d.commands = commands.items;
    d.errors = errors.items;
    d.identifiers = idents.finish(MAX_IDENTIFIERS);
    d
}

// ---- bounded, de-duplicated lists -----------------------------------------------------------

struct Bounded {
    items: Vec<String>,
    cap: usize,
}

impl Bounded {
    fn new(cap: usize) -> Bounded {
        Bounded {
            items: Vec::new(),
            cap,
        }
    }
    fn push(&mut self, s: String) {
        if self.items.len() < self.cap && !s.is_empty() && !self.items.contains(&s) {
            self.items.push(s);
        }
    }
}

// ---- text helpers ----------------------------------------------------------------------------

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

/// Byte offset of char index `n` (or the end).
fn byte_at(s: &str, n: usize) -> usize {
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

/// Lines that report an error (contain error / failed / failure / panic / traceback /
/// exception / fatal, case-insensitive), skipping all-clear lines such as `0 failed`.
/// At most `max`, each one-lined and ≤ [`ITEM_CHARS`].
pub fn error_lines(text: &str, max: usize) -> Vec<String> {
    const KEYS: &[&str] = &[
        "error",
        "failed",
        "failure",
        "panic",
        "traceback",
        "exception",
        "fatal",
    ];
    const CLEAR: &[&str] = &[
        " 0 failed",
        "0 errors",
        "no errors",
        "errors: 0",
        "0 failures",
        "error: 0",
    ];
    let mut out: Vec<String> = Vec::new();
    for line in text.lines() {
        if out.len() >= max {
            break;
        }
        let l = line.trim();
        if l.is_empty() || l.len() > 4_000 {
            continue;
        }
        let lower = l.to_ascii_lowercase();
        if !KEYS.iter().any(|k| lower.contains(k)) || CLEAR.iter().any(|c| lower.contains(c)) {
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

/// File extensions that make a bare name (`main.rs`) count as a file.
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

fn has_known_ext(name: &str) -> bool {
    match name.rsplit_once('.') {
        Some((stem, ext)) if !stem.is_empty() => {
            let e = ext.to_ascii_lowercase();
            EXTENSIONS.contains(&e.as_str())
        }
        _ => false,
    }
}

/// Trim quotes, brackets and trailing punctuation around a token; drop a `key=` prefix and a
/// `:line[:col]` suffix.
fn clean_token(tok: &str) -> &str {
    let mut t = tok.trim_matches(|c: char| "\"'`([{<".contains(c) || ")]}>,;!?\"'`".contains(c));
    if let Some((_, v)) = t.split_once('=') {
        t = v.trim_matches(|c: char| "\"'`".contains(c));
    }
    t = t.trim_end_matches(['.', ':', ',', ';', ')', ']', '}', '\'', '"', '`']);
    // `src/x.rs:12:5` → `src/x.rs`
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

/// Path-looking token: path characters only, and either a leading `/`, `./`, `../`, `~/` with
/// two or more segments or a known extension, or any separator plus a known extension or
/// three or more segments. Excludes URLs, `and/or`, `1/2`, slash commands like `/help`.
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

fn scan_paths(text: &str, out: &mut Bounded) {
    for tok in text.split(|c: char| c.is_whitespace() || c == '|' || c == ',') {
        if out.items.len() >= out.cap {
            return;
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
struct IdentCollector {
    seen: Vec<(IdClass, String)>,
}

/// Candidates collected per digest before ranking (bounds work on huge tool outputs).
const IDENT_SCAN_CAP: usize = 256;

impl IdentCollector {
    fn add(&mut self, class: IdClass, s: &str) {
        if self.seen.len() < 1_024 && !self.seen.iter().any(|(_, x)| x == s) {
            self.seen.push((class, s.to_string()));
        }
    }

    fn scan(&mut self, text: &str) {
        self.scan_capped(text, IDENT_SCAN_CAP);
    }

    fn scan_capped(&mut self, text: &str, cap: usize) {
        for tok in text.split(|c: char| c.is_whitespace()) {
            if self.seen.len() >= cap {
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
                continue; // files are listed separately
            }
            for piece in tok.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-')) {
                let piece = piece.trim_matches('-');
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
    }

    fn finish(mut self, max: usize) -> Vec<String> {
        // Stable: equal classes keep first-seen order.
        self.seen.sort_by_key(|(c, _)| *c);
        self.seen.into_iter().take(max).map(|(_, s)| s).collect()
    }
}

/// `http(s)://…` inside a token, trailing punctuation removed.
fn url_in(tok: &str) -> Option<&str> {
    let start = tok.find("https://").or_else(|| tok.find("http://"))?;
    let u = &tok[start..];
    let u = u.split(['"', '\'', '`', '<', '>', '|']).next().unwrap_or(u);
    let u = u.trim_end_matches(['.', ',', ';', ':', ')', ']', '}', '!', '?']);
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

// ---- churn -----------------------------------------------------------------------------------

/// Marker for a collapsed `<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>` block or runtime-context message.
pub const RUNTIME_MARKER: &str = "[openclaw runtime context omitted]";

const BEGIN_CTX: &str = "<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>";
const END_CTX: &str = "<<<END_OPENCLAW_INTERNAL_CONTEXT>>>";
const LEGACY_HEADER: &str = "OpenClaw runtime context (internal):";
const EVENT_MARKER: &str = "[Internal task completion event]";
const CHILD_BEGIN: &str = "<<<BEGIN_UNTRUSTED_CHILD_RESULT>>>";
const CHILD_END: &str = "<<<END_UNTRUSTED_CHILD_RESULT>>>";
/// OpenClaw's inbound-context provenance marker (`src/auto-reply/reply/inbound-context-marker.ts`).
const INBOUND_MARKER: &str = "⟦openclaw:ctx⟧";

/// Collapse OpenClaw runtime churn (untrusted-metadata blocks, direct-chat wrappers, child-completion
/// injections) — used only when rendering fold records.
///
/// Recognised (markers as in OpenClaw 2026.9 `dist/`):
/// * `<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>` … `<<<END_OPENCLAW_INTERNAL_CONTEXT>>>` (nested,
///   standalone marker lines; an unterminated block runs to the end) → one marker line, naming
///   the task and status when the block carries a task-completion event;
/// * legacy `OpenClaw runtime context (internal):` headers and `[Internal task completion
///   event]` blocks (with `<<<BEGIN_UNTRUSTED_CHILD_RESULT>>>` … and the `Action:` paragraph);
/// * inbound metadata: a line `Label (untrusted metadata):` (older hosts), `Label
///   (untrusted, …):`, or `Label: ⟦openclaw:ctx⟧` (current hosts), followed by a fenced
///   ```` ```json ```` block or a paragraph → `[Label omitted]`; `Context: ⟦openclaw:ctx⟧`
///   swallows the rest of the text, as OpenClaw's own stripper does;
/// * `Delivery: … \`message\` tool …` hint lines → removed.
///
/// Consecutive identical markers merge. Text without markers is returned unchanged.
pub fn collapse_churn(text: &str) -> String {
    if !(text.contains("<<<")
        || text.contains("untrusted")
        || text.contains(INBOUND_MARKER)
        || text.contains(EVENT_MARKER)
        || text.contains(LEGACY_HEADER)
        || text.contains("Delivery:"))
    {
        return text.to_string();
    }
    let lines: Vec<&str> = text.split('\n').collect();
    let mut out: Vec<String> = Vec::new();
    let push_marker = |out: &mut Vec<String>, m: String| {
        if out.last() != Some(&m) {
            out.push(m);
        }
    };
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        let t = line.trim();
        if t == BEGIN_CTX {
            let mut depth = 1;
            let mut j = i + 1;
            while j < lines.len() {
                let tj = lines[j].trim();
                if tj == BEGIN_CTX {
                    depth += 1;
                } else if tj == END_CTX {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                j += 1;
            }
            let end = j.min(lines.len());
            push_marker(
                &mut out,
                event_marker(&lines[i + 1..end]).unwrap_or_else(|| RUNTIME_MARKER.to_string()),
            );
            i = end + 1;
            continue;
        }
        if t == END_CTX {
            i += 1;
            continue;
        }
        if t == LEGACY_HEADER || t == EVENT_MARKER {
            let end = legacy_event_end(&lines, i);
            push_marker(
                &mut out,
                event_marker(&lines[i..end]).unwrap_or_else(|| RUNTIME_MARKER.to_string()),
            );
            i = end;
            continue;
        }
        if t == format!("Context: {INBOUND_MARKER}") {
            push_marker(&mut out, "[Context omitted]".to_string());
            break;
        }
        if let Some(label) = metadata_label(t) {
            let end = metadata_block_end(&lines, i);
            push_marker(&mut out, format!("[{label} omitted]"));
            i = end;
            continue;
        }
        if t.starts_with("Delivery:") && t.contains("`message` tool") {
            i += 1;
            continue;
        }
        out.push(line.to_string());
        i += 1;
    }
    out.join("\n")
}

/// `Label (untrusted metadata):`, `Label (untrusted, …):`, `Label: ⟦openclaw:ctx⟧` → `Label`.
fn metadata_label(t: &str) -> Option<String> {
    if let Some(head) = t.strip_suffix(INBOUND_MARKER) {
        let label = head.trim_end().trim_end_matches(':').trim();
        return if label.is_empty() {
            None
        } else {
            Some(label.to_string())
        };
    }
    let body = t.strip_suffix(':')?;
    let open = body.rfind(" (untrusted")?;
    if !body.ends_with(')') {
        return None;
    }
    let label = body[..open].trim();
    if label.is_empty() || label.len() > 120 {
        return None;
    }
    Some(label.to_string())
}

/// Index after a metadata block starting at header line `h`: a fenced ```json block through
/// its closing fence, otherwise the paragraph; blank lines after it are swallowed.
fn metadata_block_end(lines: &[&str], h: usize) -> usize {
    let mut j = h + 1;
    if lines.get(j).map(|l| l.trim()) == Some("```json") {
        j += 1;
        while j < lines.len() && lines[j].trim() != "```" {
            j += 1;
        }
        j += 1;
    } else {
        while j < lines.len() && !lines[j].trim().is_empty() {
            j += 1;
        }
    }
    while j < lines.len() && lines[j].trim().is_empty() {
        j += 1;
    }
    j.min(lines.len())
}

/// First index ≥ `from` whose trimmed line satisfies `pred`.
fn find_line(lines: &[&str], from: usize, pred: impl Fn(&str) -> bool) -> Option<usize> {
    (from..lines.len()).find(|&k| pred(lines[k].trim()))
}

/// First blank line after `k` (or the end).
fn paragraph_end(lines: &[&str], k: usize) -> usize {
    find_line(lines, k + 1, str::is_empty).unwrap_or(lines.len())
}

/// First non-blank line at or after `k` (or the end).
fn skip_blank(lines: &[&str], k: usize) -> usize {
    find_line(lines, k, |t| !t.is_empty()).unwrap_or(lines.len())
}

/// End of one task-completion event whose marker line is `ev`: through the untrusted child
/// result and the `Action:`/`Instruction:` paragraph when present, else the event's first
/// paragraph (OpenClaw's own stripper uses the same landmarks).
fn event_block_end(lines: &[&str], ev: usize) -> usize {
    if let Some(b) = find_line(lines, ev + 1, |t| t == CHILD_BEGIN) {
        if let Some(e) = find_line(lines, b + 1, |t| t == CHILD_END) {
            let action = find_line(lines, e + 1, |t| t == "Action:" || t == "Instruction:");
            return paragraph_end(lines, action.unwrap_or(e));
        }
    }
    paragraph_end(lines, ev)
}

/// End (exclusive line index) of a legacy runtime-context header or task-completion block
/// starting at line `start`; chained events (`---` separators) are included.
fn legacy_event_end(lines: &[&str], start: usize) -> usize {
    let n = lines.len();
    let ev = find_line(lines, start, |t| t == EVENT_MARKER).filter(|&e| e <= start + 4);
    let Some(ev) = ev else {
        // A header without an event: just the header paragraph.
        return skip_blank(lines, paragraph_end(lines, start));
    };
    let mut end = event_block_end(lines, ev);
    loop {
        let k = skip_blank(lines, end);
        if k < n && lines[k].trim() == "---" {
            let e = skip_blank(lines, k + 1);
            if e < n && lines[e].trim() == EVENT_MARKER {
                end = event_block_end(lines, e);
                continue;
            }
        }
        break;
    }
    skip_blank(lines, end).max(start + 1)
}

/// `[openclaw task completion: <task> (<status>)]` when the lines hold a completion event.
fn event_marker(lines: &[&str]) -> Option<String> {
    if !lines
        .iter()
        .any(|l| l.trim() == EVENT_MARKER || l.trim().starts_with("A background task completed"))
    {
        return None;
    }
    let field = |k: &str| {
        lines
            .iter()
            .find_map(|l| l.trim().strip_prefix(k).map(|v| clip(&one_line(v), 80)))
    };
    let task = field("task: ").unwrap_or_else(|| "unnamed task".to_string());
    Some(match field("status: ") {
        Some(s) => format!("[openclaw task completion: {task} ({s})]"),
        None => format!("[openclaw task completion: {task}]"),
    })
}

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

const S_GOAL: usize = 0;
const S_USER: usize = 1;
const S_DECISIONS: usize = 2;
const S_FILES: usize = 3;
const S_COMMANDS: usize = 4;
const S_ERRORS: usize = 5;
const S_OPEN: usize = 6;
const S_ARTIFACTS: usize = 7;
const S_IDENTS: usize = 8;

/// Record items per section, unbounded (before fitting), de-duplicated per section in first-seen
/// order.
fn collect_sections(digests: &[&Digest]) -> Vec<Vec<String>> {
    let mut s: Vec<Vec<String>> = vec![Vec::new(); SECTIONS.len()];
    let mut seen: Vec<HashSet<String>> = vec![HashSet::new(); SECTIONS.len()];
    let mut push = |k: usize, x: String| {
        if !x.is_empty() && !seen[k].contains(&x) {
            seen[k].insert(x.clone());
            s[k].push(x);
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
        push(S_GOAL, clip(&one_line(goal), GIST_CHARS));
    }
    for d in digests {
        if let Some(u) = &d.user_text {
            push(S_USER, u.trim().replace('\n', "\n  "));
        }
        if d.role == "assistant" && !d.text.is_empty() {
            push(S_DECISIONS, clip(&d.text, ITEM_CHARS));
        }
        for f in &d.files {
            push(S_FILES, f.clone());
        }
        for e in &d.errors {
            push(S_ERRORS, e.clone());
        }
        for a in &d.artifacts {
            push(
                S_ARTIFACTS,
                format!("{a} (cachefold_recover {{\"id\":\"{a}\"}})"),
            );
        }
        for i in &d.identifiers {
            push(S_IDENTS, i.clone());
        }
    }
    // Commands: a result's `$ cmd → outcome` replaces the call's bare `$ cmd`.
    let all: Vec<&String> = digests.iter().flat_map(|d| d.commands.iter()).collect();
    let answered: HashSet<&str> = all
        .iter()
        .filter(|o| o.contains(" → "))
        .filter_map(|o| o.split(" → ").next())
        .collect();
    for c in &all {
        if !c.contains(" → ") && answered.contains(c.as_str()) {
            continue;
        }
        push(S_COMMANDS, (*c).clone());
    }
    // Open threads: the last user request, and the last assistant note if it came after it.
    let last_user = digests.iter().rposition(|d| d.user_text.is_some());
    if let Some(i) = last_user {
        if let Some(u) = digests[i].user_text.as_deref() {
            push(
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
            push(
                S_OPEN,
                format!(
                    "last assistant note: {}",
                    clip(&digests[j].text, ITEM_CHARS)
                ),
            );
        }
    }
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

/// Exact char length of section `k` in [`render`]'s output with `count` items of `body` chars.
fn section_len(k: usize, count: usize, body: usize) -> usize {
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
const USER_SHARE: f64 = 0.6;

/// The sections being fitted, with every item's char count and each section's body length kept
/// in step with the items, so the record's length is known in O(1) after each change and
/// fitting is linear in the number of items (a fold of a 100,000-message session has tens of
/// thousands of them).
struct Fitter {
    s: Vec<Vec<String>>,
    /// Char count of each item, parallel to `s`.
    lens: Vec<Vec<usize>>,
    /// Sum of `lens[k]`.
    body: Vec<usize>,
    /// Header chars + its newline.
    head: usize,
}

impl Fitter {
    fn new(header: &str, s: Vec<Vec<String>>) -> Fitter {
        let lens: Vec<Vec<usize>> = s
            .iter()
            .map(|items| items.iter().map(|i| i.chars().count()).collect())
            .collect();
        let body = lens.iter().map(|l| l.iter().sum()).collect();
        Fitter {
            s,
            lens,
            body,
            head: header.chars().count() + 1,
        }
    }

    fn section(&self, k: usize) -> usize {
        section_len(k, self.s[k].len(), self.body[k])
    }

    /// Exact char length of [`render`]'s output.
    fn total(&self) -> usize {
        self.head + (0..SECTIONS.len()).map(|k| self.section(k)).sum::<usize>()
    }

    /// Shorten the longest user items (head + tail at whitespace, not below 120 chars; ties go
    /// to the earliest) until the record fits `max_chars` and the user section fits `user_cap`,
    /// or nothing is left to shorten.
    fn shrink_user(&mut self, max_chars: usize, user_cap: usize) {
        let mut heap: BinaryHeap<(usize, Reverse<usize>)> = self.lens[S_USER]
            .iter()
            .enumerate()
            .map(|(i, &n)| (n, Reverse(i)))
            .collect();
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
    fn drop_section(&mut self, k: usize, max_chars: usize, keep: usize) {
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
            self.s[k].drain(..dropped);
            self.lens[k].drain(..dropped);
        }
        self.body[k] = body;
    }
}

/// Fit sections into `max_chars`, least important first: decisions, identifiers, commands,
/// open threads; then user text is shortened to at most 60 % of the budget (so a chatty span
/// cannot push out every file and error); then errors, files and artifacts, first down to their
/// most recent 5 / 10 / 5 items, then entirely; then the goal; then user text is shortened
/// further and, last, the oldest user items are dropped.
fn fit(header: &str, s: Vec<Vec<String>>, max_chars: usize) -> Vec<Vec<String>> {
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
    let mut outline: Vec<String> = digests
        .iter()
        .enumerate()
        .filter_map(|(i, d)| {
            let who = match (d.role.as_str(), d.tool_name.as_deref()) {
                ("toolResult", Some(t)) => format!("tool {t}"),
                ("assistant", Some(t)) if !d.call_ids.is_empty() => format!("assistant → {t}"),
                (r, _) => r.to_string(),
            };
            let body = if let Some(u) = &d.user_text {
                one_line(u)
            } else {
                d.text.clone()
            };
            let extra = d
                .commands
                .first()
                .map(|c| format!(" [{c}]"))
                .unwrap_or_default();
            if body.is_empty() && extra.is_empty() {
                None
            } else {
                Some(format!(
                    "{}. {who}: {}{extra}",
                    i + 1,
                    clip(&body, GIST_CHARS)
                ))
            }
        })
        .collect();
    // Keep the outline within budget: drop from the oldest entries after the first.
    let mut size: usize = outline.iter().map(|l| l.chars().count() + 1).sum();
    let mut dropped = 0;
    while size > budget && outline.len() - dropped > 1 {
        size -= outline[1 + dropped].chars().count() + 1;
        dropped += 1;
    }
    if dropped > 0 {
        outline.drain(1..1 + dropped);
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

#[cfg(test)]
#[path = "digest_oracle.rs"]
mod oracle;

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    fn msg(v: Value) -> Message {
        Message::from_value(v).unwrap()
    }

    const HEX40: &str = "0123456789abcdef0123456789abcdef01234567";

    #[test]
    fn user_digest_keeps_text_verbatim_and_collapses_churn() {
        let cfg = Config::default();
        let text = "Conversation info (untrusted metadata):\n```json\n{\"chat_id\":\"123\"}\n```\n\nPlease fix `src/engine.rs` so fold_decision is called; keep commit 9fceb02 and never touch Cargo.lock.\nSee https://github.com/acme/repo/issues/4739.";
        let d = digest(
            &msg(json!({"role":"user","content":text,"timestamp":1})),
            &cfg,
            None,
        );
        assert_eq!(d.role, "user");
        let u = d.user_text.as_deref().unwrap();
        assert!(
            u.starts_with("[Conversation info omitted]\nPlease fix `src/engine.rs`"),
            "{u}"
        );
        assert!(u.contains("never touch Cargo.lock."));
        assert!(!u.contains("chat_id"));
        assert_eq!(d.files, vec!["src/engine.rs", "Cargo.lock"]);
        assert_eq!(
            d.identifiers,
            vec![
                "https://github.com/acme/repo/issues/4739",
                "9fceb02",
                "fold_decision"
            ]
        );
        assert!(d.text.starts_with("[Conversation info omitted] Please fix"));
    }

    #[test]
    fn long_user_text_is_head_and_tail() {
        let cfg = Config::default();
        let words: Vec<String> = (0..600).map(|i| format!("word{i}")).collect();
        let text = words.join(" ");
        let d = digest(
            &msg(
                json!({"role":"user","content":[{"type":"text","text":text},{"type":"image","data":"AAAA","mimeType":"image/png"}]}),
            ),
            &cfg,
            None,
        );
        let u = d.user_text.unwrap();
        assert!(
            u.chars().count() <= USER_TEXT_CHARS,
            "{}",
            u.chars().count()
        );
        assert!(u.starts_with("word0 word1 "));
        assert!(
            u.ends_with("word599\n[1 image attached]"),
            "{}",
            &u[u.len() - 40..]
        );
        assert!(u.contains(" chars omitted] … "));
        // Cut at whitespace: every word in the output is a whole word from the input.
        for w in u.split_whitespace() {
            assert!(
                w.starts_with("word")
                    || ["…", "chars", "omitted]", "[1", "image", "attached]"].contains(&w)
                    || w.starts_with('['),
                "{w}"
            );
            if let Some(n) = w.strip_prefix("word") {
                assert!(n.parse::<u32>().unwrap() < 600);
            }
        }
        assert!(d.text.chars().count() <= GIST_CHARS);
    }

    #[test]
    fn assistant_digest_skips_thinking_and_reads_calls() {
        let cfg = Config::default();
        let m = msg(json!({"role":"assistant","content":[
            {"type":"thinking","thinking":"secret reasoning about /etc/shadow and SECRET_TOKEN"},
            {"type":"text","text":"I'll run the tests, then edit lib.rs."},
            {"type":"toolCall","id":"call_1","name":"exec","arguments":{"command":"cd /work/main && cargo test --lib pairing","workdir":"/work/main"}},
            {"type":"toolCall","id":"call_2","name":"edit","arguments":{"path":"src/lib.rs","oldText":"a_b_c","newText":"d_e_f"}}
        ]}));
        let d = digest(&m, &cfg, None);
        assert_eq!(d.call_ids, vec!["call_1", "call_2"]);
        assert_eq!(d.tool_name.as_deref(), Some("exec"));
        assert_eq!(
            d.commands,
            vec!["$ cd /work/main && cargo test --lib pairing"]
        );
        assert_eq!(d.files, vec!["/work/main", "src/lib.rs", "lib.rs"]);
        assert_eq!(d.text, "I'll run the tests, then edit lib.rs.");
        let all = serde_json::to_string(&d).unwrap();
        assert!(
            !all.contains("shadow") && !all.contains("SECRET_TOKEN"),
            "thinking leaked: {all}"
        );
        assert!(d.identifiers.contains(&"a_b_c".to_string()));
    }

    #[test]
    fn exec_result_gets_outcome_and_errors() {
        let cfg = Config::default();
        let args = json!({"command":"cargo test"});
        let out = "   Compiling cachefold\nerror[E0425]: cannot find value `x` in this scope\n --> src/cost.rs:10:5\n\nCommand exited with code 101";
        let m = msg(
            json!({"role":"toolResult","toolCallId":"call_1","toolName":"exec","content":[{"type":"text","text":out}],"isError":true}),
        );
        let d = digest(&m, &cfg, Some(("exec", &args)));
        assert_eq!(d.result_id.as_deref(), Some("call_1"));
        assert_eq!(d.tool_name.as_deref(), Some("exec"));
        assert_eq!(
            d.commands,
            vec!["$ cargo test → exit 101: error[E0425]: cannot find value `x` in this scope"]
        );
        assert_eq!(
            d.errors,
            vec!["error[E0425]: cannot find value `x` in this scope"]
        );
        assert_eq!(d.files, vec!["src/cost.rs"]);
        assert!(!d.protected);
        // Success, details.exitCode wins over text.
        let ok = msg(
            json!({"role":"toolResult","toolCallId":"c","toolName":"bash","content":"test result: ok. 14 passed; 0 failed","details":{"exitCode":0}}),
        );
        let d = digest(&ok, &cfg, Some(("bash", &args)));
        assert_eq!(d.commands, vec!["$ cargo test → exit 0"]);
        assert!(d.errors.is_empty(), "{:?}", d.errors);
        let plain =
            msg(json!({"role":"toolResult","toolCallId":"c","toolName":"bash","content":"done"}));
        assert_eq!(
            digest(&plain, &cfg, Some(("bash", &args))).commands,
            vec!["$ cargo test → ok"]
        );
        let aborted = msg(
            json!({"role":"toolResult","toolCallId":"c","toolName":"bash","content":"Debugger attached.\n\nCommand aborted","isError":true}),
        );
        assert_eq!(
            digest(&aborted, &cfg, Some(("bash", &args))).commands,
            vec!["$ cargo test → aborted"]
        );
        // An error result with no keyword line reports its first line.
        let e = msg(
            json!({"role":"toolResult","toolCallId":"c","toolName":"edit","content":"Could not find the exact text in a.ts.","isError":true}),
        );
        assert_eq!(
            digest(&e, &cfg, None).errors,
            vec!["Could not find the exact text in a.ts."]
        );
    }

    #[test]
    fn content_tools_report_errors_only_when_they_fail() {
        let cfg = Config::default();
        let args = json!({"path":"src/err.rs"});
        let code = "fn f() -> Result<(), Error> {\n    panic!(\"boom\");\n}";
        let ok =
            msg(json!({"role":"toolResult","toolCallId":"c","toolName":"read","content":code}));
        assert!(digest(&ok, &cfg, Some(("read", &args))).errors.is_empty());
        let failed = msg(
            json!({"role":"toolResult","toolCallId":"c","toolName":"read","content":"ENOENT: no such file, error opening src/err.rs","isError":true}),
        );
        assert_eq!(
            digest(&failed, &cfg, Some(("read", &args))).errors,
            vec!["ENOENT: no such file, error opening src/err.rs"]
        );
        // A failed shell command's bare exit line is not repeated as an error.
        let sh = json!({"command":"false"});
        let bare = msg(
            json!({"role":"toolResult","toolCallId":"c","toolName":"exec","content":"Command exited with code 1","isError":true}),
        );
        let d = digest(&bare, &cfg, Some(("exec", &sh)));
        assert!(d.errors.is_empty(), "{:?}", d.errors);
        assert_eq!(d.commands, vec!["$ false → exit 1"]);
    }

    #[test]
    fn goal_skips_slash_commands_and_one_word_replies() {
        let cfg = Config::default();
        let ds: Vec<Digest> = [
            "/mode",
            "ok",
            "Port the selector to the theme API, keep the tests green",
        ]
        .iter()
        .map(|t| digest(&msg(json!({"role":"user","content":t})), &cfg, None))
        .collect();
        let refs: Vec<&Digest> = ds.iter().collect();
        let out = render_extractive("g", &refs, 10_000);
        assert!(
            out.contains("## Goal\n- Port the selector to the theme API, keep the tests green\n"),
            "{out}"
        );
        assert!(
            out.contains("## User constraints and instructions\n- /mode\n- ok\n- Port"),
            "{out}"
        );
        let only: Vec<&Digest> = ds[..1].iter().collect();
        assert!(render_extractive("g", &only, 10_000).contains("## Goal\n- /mode\n"));
    }

    #[test]
    fn chatty_user_text_leaves_room_for_files() {
        let cfg = Config::default();
        let mut ds: Vec<Digest> = (0..40)
            .map(|i| digest(&msg(json!({"role":"user","content":format!("request {i}: {}", "please refactor the module carefully ".repeat(20))})), &cfg, None))
            .collect();
        let args = json!({"path":"src/keep_me.rs"});
        ds.push(digest(
            &msg(json!({"role":"toolResult","toolCallId":"c","toolName":"edit","content":"ok"})),
            &cfg,
            Some(("edit", &args)),
        ));
        let refs: Vec<&Digest> = ds.iter().collect();
        let out = render_extractive("u", &refs, 6_000);
        assert!(out.chars().count() <= 6_000);
        assert!(out.contains("- src/keep_me.rs"), "{out}");
        assert!(
            out.contains("request 39:") && out.contains("request 0:"),
            "user items are shortened, not dropped"
        );
    }

    #[test]
    fn protected_reads() {
        let cfg = Config::default();
        assert!(is_protected_read(
            "read",
            &json!({"path":"AGENTS.md"}),
            &cfg
        ));
        assert!(is_protected_read(
            "Read",
            &json!({"file_path":"/ws/agents.MD"}),
            &cfg
        ));
        assert!(is_protected_read(
            "read",
            &json!({"filePath":"C:\\ws\\SOUL.md"}),
            &cfg
        ));
        assert!(!is_protected_read(
            "read",
            &json!({"path":"docs/AGENTS.md.bak"}),
            &cfg
        ));
        assert!(!is_protected_read(
            "exec",
            &json!({"path":"AGENTS.md"}),
            &cfg
        ));
        assert!(!is_protected_read("read", &json!({}), &cfg));
        assert!(!is_protected_read("read", &json!("AGENTS.md"), &cfg));
        let m = msg(
            json!({"role":"toolResult","toolCallId":"c","toolName":"read","content":"# Agents\nsee src/other.rs"}),
        );
        let args = json!({"path":"AGENTS.md"});
        let d = digest(&m, &cfg, Some(("read", &args)));
        assert!(d.protected);
        assert_eq!(
            d.files,
            vec!["AGENTS.md"],
            "paths inside a read's content are not touched files"
        );
        let none = Config {
            protected_reads: vec![],
            ..Config::default()
        };
        assert!(!digest(&m, &none, Some(("read", &args))).protected);
    }

    #[test]
    fn artifact_ids_after_the_word_artifact() {
        let t = format!("[cachefold] read output 51266 chars shrunk; artifact {HEX40} (recover with cachefold_recover)\nartifact:\n{HEX40}");
        assert_eq!(artifact_ids(&t), vec![HEX40.to_string()]);
        let up = HEX40.to_ascii_uppercase();
        assert_eq!(
            artifact_ids(&format!("Artifact id={up}")),
            vec![HEX40.to_string()]
        );
        assert!(
            artifact_ids(&format!("commit {HEX40}")).is_empty(),
            "needs the word artifact"
        );
        assert!(artifact_ids(&format!("artifact {}", &HEX40[..39])).is_empty());
        assert!(artifact_ids(&format!("artifact {HEX40}0")).is_empty());
        let m = msg(
            json!({"role":"toolResult","toolCallId":"c","toolName":"read","content":format!("[cachefold] artifact {HEX40}")}),
        );
        assert_eq!(
            digest(&m, &Config::default(), None).artifacts,
            vec![HEX40.to_string()]
        );
    }

    #[test]
    fn identifier_classes() {
        let mut c = IdentCollector::default();
        c.scan("ids: 550e8400-e29b-41d4-a716-446655440000 commit a1b2c3d4e5 and deadbeefcafe, port 8080, \
                year 42, fn fold_decision(), type FoldCandidate, word Hello, url <https://x.dev/a?b=1>. \
                camelCase getElementById __init__ ABC123 MAX_TOKENS v1.2.3");
        let ids = c.finish(100);
        assert_eq!(
            ids,
            vec![
                "https://x.dev/a?b=1",
                "550e8400-e29b-41d4-a716-446655440000",
                "a1b2c3d4e5",
                "fold_decision",
                "FoldCandidate",
                "camelCase",
                "getElementById",
                "__init__",
                "MAX_TOKENS",
                "8080",
            ]
        );
        let mut c = IdentCollector::default();
        c.scan("deadbeefcafe is only letters; Hello World; ok 12");
        assert!(c.finish(10).is_empty());
        // Bounded.
        let mut c = IdentCollector::default();
        let many: Vec<String> = (0..1000).map(|i| format!("sym_{i}")).collect();
        c.scan(&many.join(" "));
        assert_eq!(c.finish(MAX_IDENTIFIERS).len(), MAX_IDENTIFIERS);
    }

    #[test]
    fn path_detection() {
        for p in [
            "src/main.rs",
            "./run.sh",
            "../x/y",
            "/etc/hosts",
            "~/notes/todo",
            "Cargo.toml",
            "a/b/c",
            "C:\\Users\\me\\x.txt",
            "packages/coding-agent/src/tui/theme-selector.ts",
        ] {
            assert!(is_path_like(p), "{p}");
        }
        for p in [
            "and/or",
            "n/a",
            "1/2",
            "/help",
            "/tmp",
            "e.g.",
            "v1.2.3",
            "http://x.com/a.rs",
            "hello",
            "a//b",
            "2026/11/23",
            "x.y",
            ".env",
        ] {
            assert!(!is_path_like(p), "{p}");
        }
        assert_eq!(clean_token("(`src/x.rs:12:5`),"), "src/x.rs");
        assert_eq!(clean_token("path=\"a/b.rs\""), "a/b.rs");
    }

    #[test]
    fn error_line_rules() {
        let t = "ok line\nTraceback (most recent call last):\nValueError: bad\ntest result: ok. 3 passed; 0 failed\nthread 'main' panicked at src/a.rs\nBUILD FAILED\nno errors found";
        assert_eq!(
            error_lines(t, 10),
            vec![
                "Traceback (most recent call last):",
                "ValueError: bad",
                "thread 'main' panicked at src/a.rs",
                "BUILD FAILED"
            ]
        );
        assert_eq!(error_lines(t, 2).len(), 2);
        let long = format!("error: {}", "x ".repeat(400));
        assert!(error_lines(&long, 1)[0].chars().count() <= ITEM_CHARS);
    }

    #[test]
    fn churn_internal_context_blocks() {
        let t = "Fix the bug.\n<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>\nOpenClaw runtime context for the immediately preceding user message.\nThis context is runtime-generated, not user-authored. Keep internal details private.\nactive exec sessions: 2\n<<<END_OPENCLAW_INTERNAL_CONTEXT>>>\nThanks";
        assert_eq!(
            collapse_churn(t),
            "Fix the bug.\n[openclaw runtime context omitted]\nThanks"
        );
        // Nested and unterminated.
        let n = "a\n<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>\n<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>\nx\n<<<END_OPENCLAW_INTERNAL_CONTEXT>>>\ny\n<<<END_OPENCLAW_INTERNAL_CONTEXT>>>\nb";
        assert_eq!(
            collapse_churn(n),
            "a\n[openclaw runtime context omitted]\nb"
        );
        assert_eq!(
            collapse_churn("a\n<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>\nrest\nof text"),
            "a\n[openclaw runtime context omitted]"
        );
        // Inline mention (not a standalone line) is user text, kept.
        let inline = "what does <<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>> mean?";
        assert_eq!(collapse_churn(inline), inline);
        // Completion event inside a block: task and status survive.
        let ev = "<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>\nA background task completed. Keep internal details private and use its result to reply in your normal assistant voice.\n[Internal task completion event]\nsource: subagent\nsession_key: agent:main:sub:1\nsession_id: 42\ntype: subagent\ntask: refactor parser\nstatus: completed successfully\n\nchild output here\n<<<END_OPENCLAW_INTERNAL_CONTEXT>>>";
        assert_eq!(
            collapse_churn(ev),
            "[openclaw task completion: refactor parser (completed successfully)]"
        );
    }

    #[test]
    fn churn_legacy_completion_events() {
        let t = "before\n\nOpenClaw runtime context (internal):\nThis context is runtime-generated, not user-authored. Keep internal details private.\n\n[Internal task completion event]\nsource: subagent\ntask: scan repo\nstatus: ok\n\n<<<BEGIN_UNTRUSTED_CHILD_RESULT>>>\nfound 3 files\n\nwith blank lines\n<<<END_UNTRUSTED_CHILD_RESULT>>>\n\nAction:\nReply to the user.\n\n---\n\n[Internal task completion event]\ntask: second\nstatus: failed\n\n<<<BEGIN_UNTRUSTED_CHILD_RESULT>>>\nboom\n<<<END_UNTRUSTED_CHILD_RESULT>>>\n\nAction:\nReply.\n\nafter";
        assert_eq!(
            collapse_churn(t),
            "before\n\n[openclaw task completion: scan repo (ok)]\nafter"
        );
        let bare = "[Internal task completion event]\ntask: t\nstatus: done\n\nresult text";
        assert_eq!(
            collapse_churn(bare),
            "[openclaw task completion: t (done)]\nresult text"
        );
    }

    #[test]
    fn churn_inbound_metadata_blocks() {
        let old = "Conversation info (untrusted metadata):\n```json\n{\n  \"message_id\": \"77\"\n}\n```\n\nSender (untrusted metadata):\n```json\n{\"name\":\"Ann\"}\n```\n\nhello there";
        assert_eq!(
            collapse_churn(old),
            "[Conversation info omitted]\n[Sender omitted]\nhello there"
        );
        let new = "Conversation info: ⟦openclaw:ctx⟧\n```json\n{\"chat_id\":\"1\"}\n```\n\nChat history since last reply: ⟦openclaw:ctx⟧\n[Ann] hi\n[Bob] yo\n\nDelivery: to send a message, use the `message` tool.\nactual question?";
        assert_eq!(collapse_churn(new), "[Conversation info omitted]\n[Chat history since last reply omitted]\nactual question?");
        let hist = "Chat history since last reply (untrusted, for context):\n```json\n[]\n```\nq";
        assert_eq!(
            collapse_churn(hist),
            "[Chat history since last reply omitted]\nq"
        );
        assert_eq!(
            collapse_churn("q\nContext: ⟦openclaw:ctx⟧\nanything\nelse"),
            "q\n[Context omitted]"
        );
        // User text that merely mentions the words is kept.
        let plain = "Is this untrusted (really)?\nDelivery: tomorrow";
        assert_eq!(collapse_churn(plain), plain);
    }

    fn sample_digests() -> Vec<Digest> {
        let cfg = Config::default();
        let args = json!({"command":"cargo test"});
        vec![
            digest(
                &msg(
                    json!({"role":"user","content":"Build the cost model in src/cost.rs. Never use the regex crate. Ticket 550e8400-e29b-41d4-a716-446655440000."}),
                ),
                &cfg,
                None,
            ),
            digest(
                &msg(
                    json!({"role":"assistant","content":[{"type":"text","text":"Plan: write price_for first."},{"type":"toolCall","id":"c1","name":"exec","arguments":{"command":"cargo test"}}]}),
                ),
                &cfg,
                None,
            ),
            digest(
                &msg(
                    json!({"role":"toolResult","toolCallId":"c1","toolName":"exec","content":format!("error: linker failed\nCommand exited with code 1\n[cachefold] artifact {HEX40}"),"isError":true}),
                ),
                &cfg,
                Some(("exec", &args)),
            ),
            digest(
                &msg(json!({"role":"user","content":"Also keep DS_BLOCK = 128."})),
                &cfg,
                None,
            ),
        ]
    }

    #[test]
    fn render_has_header_sections_and_merged_commands() {
        let ds = sample_digests();
        let refs: Vec<&Digest> = ds.iter().collect();
        let out = render_extractive("f-000001", &refs, 10_000);
        let first = out.lines().next().unwrap();
        assert_eq!(
            first,
            "[cachefold fold f-000001] Earlier conversation folded to save context. Exact text: call cachefold_recover with {\"id\":\"f-000001\"}; search with cachefold_search."
        );
        for s in [
            "## Goal",
            "## User constraints and instructions",
            "## Decisions",
            "## Files touched",
            "## Commands and outcomes",
            "## Errors",
            "## Open threads",
            "## Artifacts",
            "## Identifiers",
        ] {
            assert!(out.contains(s), "missing {s}:\n{out}");
        }
        assert!(out.contains("- Build the cost model in src/cost.rs. Never use the regex crate."));
        assert!(out.contains("- Also keep DS_BLOCK = 128."));
        assert!(
            out.contains("- $ cargo test → exit 1: error: linker failed\n"),
            "{out}"
        );
        assert!(
            !out.contains("- $ cargo test\n"),
            "bare command must merge into its outcome:\n{out}"
        );
        assert!(out.contains(&format!(
            "- {HEX40} (cachefold_recover {{\"id\":\"{HEX40}\"}})"
        )));
        assert!(out.contains("550e8400-e29b-41d4-a716-446655440000"));
        assert!(out.contains("last user request: Also keep DS_BLOCK = 128."));
        assert!(out.contains("last command failed: $ cargo test → exit 1"));
        // Deterministic.
        assert_eq!(out, render_extractive("f-000001", &refs, 10_000));
        assert!(out.chars().count() <= 10_000);
    }

    #[test]
    fn render_drops_low_priority_first_and_keeps_user_text() {
        let ds = sample_digests();
        let refs: Vec<&Digest> = ds.iter().collect();
        let full = render_extractive("f1", &refs, 100_000);
        let header = fold_header("f1").chars().count();
        let tight = render_extractive("f1", &refs, header + 260);
        assert!(
            tight.chars().count() <= header + 260,
            "{}",
            tight.chars().count()
        );
        assert!(tight.contains("Never use the regex crate."), "{tight}");
        assert!(tight.contains("Also keep DS_BLOCK = 128."), "{tight}");
        assert!(!tight.contains("## Decisions"), "{tight}");
        assert!(full.contains("## Decisions"));
        // Smaller than the header: just the header.
        assert_eq!(
            render_extractive("f1", &refs, 5),
            format!("{}\n", fold_header("f1"))
        );
        assert_eq!(
            render_extractive("f1", &[], 1000),
            format!("{}\n", fold_header("f1"))
        );
    }

    #[test]
    fn summary_prompt_asks_for_sections_verbatim() {
        let ds = sample_digests();
        let refs: Vec<&Digest> = ds.iter().collect();
        let (sys, user) = summary_prompt("f9", &refs, 2_000);
        assert!(sys.contains("exactly"));
        assert!(user.contains("at most 2000 characters"));
        for s in SECTIONS {
            assert!(user.contains(&format!("## {s}\n")), "{s}");
        }
        assert!(user.contains("verbatim"));
        assert!(user.contains("550e8400-e29b-41d4-a716-446655440000"));
        assert!(user.contains("1. user: Build the cost model"));
        assert!(user.contains("2. assistant → exec: Plan: write price_for first. [$ cargo test]"));
        assert_eq!(summary_prompt("f9", &refs, 2_000), (sys, user));
    }

    /// Proptest counterexample: section headers were counted one char short, so a record
    /// with many sections overran its budget by a few chars.
    #[test]
    fn regression_budget_counts_section_headers_exactly() {
        let cfg = Config::default();
        let big = format!("error: boom src/main.rs https://a.b/c \n Sender (untrusted metadata): fold_decision artifact {HEX40} \n {}", "A AAaA 0aa-aA0aAaAaAaa ".repeat(40));
        let ts = [big.as_str(), "", "fold_decision error: boom fold_decision artifact 0123456789abcdef0123456789abcdef01234567 fold_decision"];
        let ds: Vec<Digest> = ts
            .iter()
            .enumerate()
            .map(|(i, t)| digest(&msg(json!({"role": if i % 2 == 0 { "user" } else { "assistant" }, "content": t})), &cfg, None))
            .collect();
        let refs: Vec<&Digest> = ds.iter().collect();
        let full = render_extractive("fid", &refs, usize::MAX);
        let s = collect_sections(&refs);
        assert_eq!(
            full.chars().count(),
            Fitter::new(&fold_header("fid"), s).total()
        );
        for max in (0..full.chars().count() + 10).step_by(7) {
            let out = render_extractive("fid", &refs, max);
            assert!(
                out.chars().count() <= max.max(fold_header("fid").chars().count() + 1),
                "max {max}: {}",
                out.chars().count()
            );
        }
    }

    #[test]
    fn clip_and_head_tail_bounds() {
        assert_eq!(clip("hello world", 20), "hello world");
        assert_eq!(clip("hello wonderful world", 12), "hello…");
        assert_eq!(clip("abcdefghij", 5), "abcd…");
        assert_eq!(clip("abc", 0), "");
        let s = "x".repeat(5000);
        assert!(head_tail(&s, 1200).chars().count() <= 1200);
        let s = "ä ".repeat(3000);
        assert!(head_tail(&s, 500).chars().count() <= 500);
    }

    #[test]
    fn custom_and_bash_execution_roles() {
        let cfg = Config::default();
        let rc = msg(
            json!({"role":"custom","customType":"openclaw.runtime-context","content":"secret runtime stuff"}),
        );
        assert_eq!(digest(&rc, &cfg, None).text, RUNTIME_MARKER);
        let b =
            msg(json!({"role":"bashExecution","command":"ls -la","output":"total 0","exitCode":2}));
        let d = digest(&b, &cfg, None);
        assert_eq!(d.commands, vec!["$ ls -la → exit 2"]);
        assert_eq!(d.role, "bashExecution");
    }

    fn arb_text() -> impl Strategy<Value = String> {
        let atoms = prop_oneof![
            Just("src/main.rs".to_string()),
            Just("error: boom".to_string()),
            Just("fold_decision".to_string()),
            Just(format!("artifact {HEX40}")),
            Just("https://a.b/c".to_string()),
            Just("\n".to_string()),
            Just("<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>".to_string()),
            Just("Sender (untrusted metadata):".to_string()),
            Just("```json".to_string()),
            Just("你好".to_string()),
            "[a-zA-Z0-9 _./-]{0,40}",
        ];
        proptest::collection::vec(atoms, 0..80).prop_map(|v| v.join(" "))
    }

    fn arb_digest() -> impl Strategy<Value = Digest> {
        let pick = |pool: &'static [&'static str], n: usize| {
            proptest::collection::vec(proptest::sample::select(pool), 0..n)
                .prop_map(|v| v.into_iter().map(str::to_string).collect::<Vec<_>>())
        };
        const WORDS: &[&str] = &[
            "src/a.rs",
            "src/b.rs",
            "Cargo.toml",
            "x_y",
            "fold_decision",
            "42",
            HEX40,
            "https://a.b/c",
            "",
        ];
        const CMDS: &[&str] = &[
            "$ cargo test",
            "$ cargo test → exit 1",
            "$ cargo test → ok",
            "$ ls",
            "$ ls → exit 0",
            "$ make → timed out",
            "$ make",
        ];
        const ERRS: &[&str] = &[
            "error: boom",
            "error[E0308]: mismatched types",
            "panicked at src/a.rs:3",
            "boom",
        ];
        let user = prop_oneof![
            Just(None),
            Just(Some("ok".to_string())),
            Just(Some("/mode".to_string())),
            "[a-z ]{0,60}".prop_map(Some),
            ("[a-z]{1,12}", 5usize..400).prop_map(|(w, n)| Some(format!("{w} ").repeat(n))),
            (1usize..30).prop_map(|n| Some(format!("line one\n{}", "keep it short. ".repeat(n)))),
        ];
        (
            0..3usize,
            prop_oneof![
                Just(String::new()),
                "[a-z ]{1,40}",
                (1usize..60).prop_map(|n| "note ".repeat(n))
            ],
            (
                pick(WORDS, 6),
                pick(CMDS, 4),
                pick(ERRS, 3),
                pick(WORDS, 10),
                pick(&[HEX40, "0123456789abcdef0123456789abcdef01234567"], 2),
            ),
            user,
        )
            .prop_map(
                |(role, text, (files, commands, errors, identifiers, artifacts), user_text)| {
                    Digest {
                        role: ["user", "assistant", "toolResult"][role].to_string(),
                        text,
                        files,
                        commands,
                        errors,
                        identifiers,
                        artifacts,
                        user_text: if role == 0 { user_text } else { None },
                        ..Digest::default()
                    }
                },
            )
    }

    /// Fold-record building is linear: 200,000 digests (a 100,000-message fold has about as
    /// many items) fitted into a small record. The quadratic builder recomputed the record's
    /// length and shifted the section once per dropped item: about 10^11 steps here, hours.
    #[test]
    fn fold_record_of_200k_digests_is_linear() {
        let ds: Vec<Digest> = (0..200_000)
            .map(|i| Digest {
                role: if i % 2 == 0 { "user" } else { "assistant" }.to_string(),
                text: format!("decision {i}"),
                files: vec![format!("src/m{i}.rs")],
                commands: vec![format!("$ run {i}"), format!("$ run {i} → exit {}", i % 3)],
                errors: vec![format!("error: e{i}")],
                identifiers: vec![format!("id_{i}")],
                user_text: (i % 2 == 0).then(|| format!("step {i}: {}", "word ".repeat(i % 50))),
                ..Digest::default()
            })
            .collect();
        let refs: Vec<&Digest> = ds.iter().collect();
        let out = render_extractive("f1", &refs, 8_000);
        assert!(out.chars().count() <= 8_000);
        assert!(out.contains("step 199998"), "the newest user text is kept");
        let (_, user) = summary_prompt("f1", &refs, 2_000);
        assert!(user.contains("1. user: step 0"));
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

        #[test]
        fn digests_are_bounded(t in arb_text(), role in 0..4usize) {
            let cfg = Config::default();
            let args = json!({"command": t.clone(), "path": "a/b.rs"});
            let m = match role {
                0 => json!({"role":"user","content":t}),
                1 => json!({"role":"assistant","content":[{"type":"text","text":t},{"type":"toolCall","id":"c","name":"exec","arguments":args}]}),
                2 => json!({"role":"toolResult","toolCallId":"c","toolName":"exec","content":t,"isError":true}),
                _ => json!({"role":"custom","content":t}),
            };
            let d = digest(&msg(m), &cfg, Some(("exec", &args)));
            prop_assert!(d.text.chars().count() <= GIST_CHARS);
            prop_assert!(d.user_text.as_ref().map_or(0, |u| u.chars().count()) <= USER_TEXT_CHARS);
            prop_assert!(d.files.len() <= MAX_FILES && d.commands.len() <= MAX_COMMANDS);
            prop_assert!(d.errors.len() <= MAX_ERRORS && d.identifiers.len() <= MAX_IDENTIFIERS);
            prop_assert!(d.artifacts.len() <= MAX_ARTIFACTS);
            prop_assert!(d.commands.iter().chain(&d.errors).chain(&d.files).all(|x| x.chars().count() <= 2 * ITEM_CHARS));
        }

        #[test]
        fn render_respects_budget_and_keeps_identifiers_whole(ts in proptest::collection::vec(arb_text(), 0..8), max in 0usize..3000) {
            let cfg = Config::default();
            let ds: Vec<Digest> = ts.iter().enumerate().map(|(i, t)| {
                let role = if i % 2 == 0 { "user" } else { "assistant" };
                digest(&msg(json!({"role": role, "content": t})), &cfg, None)
            }).collect();
            let refs: Vec<&Digest> = ds.iter().collect();
            let out = render_extractive("fid", &refs, max);
            let header = fold_header("fid").chars().count() + 1;
            prop_assert!(out.chars().count() <= max.max(header), "{} > {}", out.chars().count(), max);
            prop_assert!(out.starts_with(&fold_header("fid")));
            if let Some(pos) = out.find("\n## Identifiers\n") {
                let line = out[pos + 16..].lines().next().unwrap_or("");
                let all: Vec<&String> = ds.iter().flat_map(|d| d.identifiers.iter()).collect();
                for id in line.split(", ") {
                    prop_assert!(all.iter().any(|x| x.as_str() == id), "cut identifier {id:?}");
                }
            }
        }

        /// The linear record builder renders exactly what the quadratic one did, on digests
        /// with duplicates, commands with and without outcomes, long user text and budgets from
        /// nothing to everything.
        #[test]
        fn linear_builder_matches_the_quadratic_oracle(ds in proptest::collection::vec(arb_digest(), 0..60), max in 0usize..6000) {
            let refs: Vec<&Digest> = ds.iter().collect();
            for m in [max, max / 8, max * 4, usize::MAX] {
                prop_assert_eq!(
                    render_extractive("f3", &refs, m),
                    oracle::render_extractive_quadratic("f3", &refs, m)
                );
            }
            prop_assert_eq!(summary_prompt("f3", &refs, max / 4), oracle::summary_prompt_quadratic("f3", &refs, max / 4));
        }

        #[test]
        fn text_without_markers_is_unchanged(t in "[a-zA-Z0-9 \n:()`.,-]{0,200}") {
            prop_assume!(!t.contains("untrusted") && !t.contains("Delivery:"));
            prop_assert_eq!(collapse_churn(&t), t);
        }
    }
}
