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
//! * Deterministic: the same message gives the same digest; [`render_extractive`](crate::fold::record::render_extractive) and
//!   [`summary_prompt`](crate::fold::prompt::summary_prompt) give the same bytes for the same digests.
//! * Truncation cuts at whitespace where there is any, so an identifier is never cut in half.
//!
//! The scanners are small hand-written tokenizers (no regex crate in the core).

use crate::config::Config;
use crate::message::{field, Fields, Part, Role};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Bounded per-message extract kept in session state (≤ 1,500 chars of text): the facts a fold
/// record needs. Computed once when a message is first seen. Written without its empty members
/// (a missing member reads as empty): most messages fill a few of them, and a long session's
/// snapshot holds one digest per message.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
#[serde(rename_all = "camelCase", default)]
pub struct Digest {
    /// Raw role string (`user`, `assistant`, `toolResult`, …).
    pub role: Str,
    /// One-line gist of the visible text (≤ [`GIST_CHARS`]); for a tool result, its first lines.
    #[serde(skip_serializing_if = "str::is_empty")]
    pub text: Str,
    /// File paths named by tool arguments or path-looking tokens (≤ [`MAX_FILES`]).
    #[serde(skip_serializing_if = "<[Str]>::is_empty")]
    pub files: Box<[Str]>,
    /// Shell commands: `$ cmd` on the call, `$ cmd → outcome` on the result (≤ [`MAX_COMMANDS`]).
    #[serde(skip_serializing_if = "<[Str]>::is_empty")]
    pub commands: Box<[Str]>,
    /// Error lines (≤ [`MAX_ERRORS`]).
    #[serde(skip_serializing_if = "<[Str]>::is_empty")]
    pub errors: Box<[Str]>,
    /// Exact identifiers: URLs, UUIDs, hex hashes, code symbols, numbers (≤ [`MAX_IDENTIFIERS`]).
    #[serde(skip_serializing_if = "<[Str]>::is_empty")]
    pub identifiers: Box<[Str]>,
    /// Artifact ids (40-hex) found after the word `artifact` (≤ [`MAX_ARTIFACTS`]).
    #[serde(skip_serializing_if = "<[Str]>::is_empty")]
    pub artifacts: Box<[Str]>,
    /// User text verbatim, runtime churn collapsed (≤ [`USER_TEXT_CHARS`], head + tail).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub user_text: Option<Str>,
    /// Tool name (tool result), or the first call's name (assistant).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_name: Option<Str>,
    /// Tool-call ids of an assistant message.
    #[serde(skip_serializing_if = "<[Str]>::is_empty")]
    pub call_ids: Box<[Str]>,
    /// `toolCallId` of a tool result.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result_id: Option<Str>,
    /// A protected read (`Config.protected_reads`): the engine keeps this result verbatim.
    /// Only set on the tool result; the engine must keep (or re-create) its call as well.
    #[serde(skip_serializing_if = "crate::is_false")]
    pub protected: bool,
}

/// A [`Digest`] while [`digest`] collects it (growable strings and lists), made immutable once.
#[derive(Default)]
struct DigestBuf {
    role: String,
    text: String,
    files: Vec<String>,
    commands: Vec<String>,
    errors: Vec<String>,
    identifiers: Vec<String>,
    artifacts: Vec<String>,
    user_text: Option<String>,
    tool_name: Option<String>,
    call_ids: Vec<String>,
    result_id: Option<String>,
    protected: bool,
}

impl DigestBuf {
    fn finish(self) -> Digest {
        Digest {
            role: self.role.into(),
            text: self.text.into(),
            files: boxed_list(self.files),
            commands: boxed_list(self.commands),
            errors: boxed_list(self.errors),
            identifiers: boxed_list(self.identifiers),
            artifacts: boxed_list(self.artifacts),
            user_text: self.user_text.map(Str::from),
            tool_name: self.tool_name.map(Str::from),
            call_ids: boxed_list(self.call_ids),
            result_id: self.result_id.map(Str::from),
            protected: self.protected,
        }
    }
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
        if let Some(s) = field(args, k).and_then(Value::as_str) {
            let s = s.trim();
            if !s.is_empty() && s.chars().count() <= ITEM_CHARS {
                out.push(s.to_string());
            }
        }
    }
    for k in PATHS_KEYS {
        if let Some(Value::Array(items)) = field(args, k) {
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
        .find_map(|k| field(args, k).and_then(Value::as_str))
}

/// True for a `read` of a protected workspace file: the tool is `read` (or `read_file`), and
/// the basename of its path equals an entry of `cfg.protected_reads`, case-insensitively.
pub fn is_protected_read(tool_name: &str, args: &Value, cfg: &Config) -> bool {
    if !is_any_of(tool_name, &["read", "read_file"]) {
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
    let shellish = is_any_of(
        tool_name,
        &["sh", "run", "terminal", "run_command", "process"],
    ) || {
        let t = tool_name.to_ascii_lowercase();
        ["exec", "bash", "shell"].iter().any(|p| t.contains(p))
    };
    if !shellish {
        return None;
    }
    field(args, "command")
        .or_else(|| field(args, "cmd"))
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
            // The leading number (its chars are ASCII: byte index = char index).
            let mut end = 0;
            for (i, c) in rest.char_indices() {
                if !(c.is_ascii_digit() || (i == 0 && c == '-')) {
                    break;
                }
                end = i + 1;
            }
            if let Ok(n) = rest[..end].parse::<i64>() {
                return Some(n);
            }
        }
    }
    None
}

/// Digest one message. `call_args`: for a toolResult, the (name, arguments) of its call if known
/// (to name files read and commands run).
pub fn digest(m: &Fields, cfg: &Config, call_args: Option<(&str, &Value)>) -> Digest {
    let mut d = DigestBuf {
        role: m.role_str().to_string(),
        ..DigestBuf::default()
    };
    let mut files = Bounded::new(MAX_FILES);
    let mut commands = Bounded::new(MAX_COMMANDS);
    let mut errors = Bounded::new(MAX_ERRORS);
    let mut idents = IdentCollector::default();
    match m.role() {
        Role::User => {
            let mut text = collapse_owned(m.text());
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
            d.text = gist(&text);
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
            let text = collapse_owned(m.text());
            d.text = gist(&text);
            let calls = m.tool_calls();
            d.call_ids = Vec::with_capacity(calls.len());
            for c in &calls {
                d.call_ids.push(c.id.to_string());
            }
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
            d.text = gist(&text);
            if let Some((name, args)) = call_args {
                for p in arg_paths(args) {
                    files.push(p);
                }
                d.protected = is_protected_read(name, args, cfg);
                if let Some(cmd) = shell_command(name, args) {
                    let exit = m.details_exit_code();
                    commands.push(format!(
                        "{} → {}",
                        command_label(cmd),
                        command_outcome(&text, m.is_error(), exit)
                    ));
                }
            }
            let shell = call_args.is_some_and(|(n, a)| shell_command(n, a).is_some());
            // File and web contents are data, not outcomes: their "error" lines are code or
            // prose. Scan them only when the tool itself failed.
            let name = d.tool_name.as_deref().unwrap_or("");
            let content_tool = is_any_of(name, CONTENT_TOOLS);
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
            let runtime = m.custom_type() == Some("openclaw.runtime-context");
            let text = if runtime {
                RUNTIME_MARKER.to_string()
            } else {
                collapse_owned(m.text())
            };
            d.text = gist(&text);
            if let Some(cmd) = m.command() {
                let exit = m.exit_code();
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
    d.finish()
}

/// `clip(&one_line(text), GIST_CHARS)`, one-lining only as much of `text` as the clip can keep:
/// the clip of a one-lined prefix longer than `GIST_CHARS` chars is the clip of the whole line
/// (it reads the first `GIST_CHARS - 1` chars and whether there are more), and a tool result can
/// be megabytes.
fn gist(text: &str) -> String {
    // Room for what the loop keeps (a short text's line is at most its length): grown piece by
    // piece, the line of a tool result was copied into larger buffers seven times.
    let mut line = String::with_capacity(text.len().min(2 * GIST_CHARS));
    let mut chars = 0usize;
    for w in text.split_whitespace() {
        if chars > GIST_CHARS {
            break;
        }
        if !line.is_empty() {
            line.push(' ');
            chars += 1;
        }
        line.push_str(w);
        chars += w.chars().count();
    }
    // `chars` is the line's length: a line that fits is its own clip.
    if chars <= GIST_CHARS {
        return line;
    }
    clip(&line, GIST_CHARS)
}

/// Whether `s` is one of `names`, ASCII case-insensitively (no lowered copy of `s`).
#[inline(never)]
fn is_any_of(s: &str, names: &[&str]) -> bool {
    names.iter().any(|n| n.eq_ignore_ascii_case(s))
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

mod boxed;
mod churn;
#[cfg(test)]
mod oracle_tests;
#[cfg(test)]
mod render_tests;
mod scan;
#[cfg(test)]
mod tests;

use crate::text::{clip, head_tail, one_line};
pub use boxed::{boxed_list, Str};
pub use churn::*;
pub use scan::*;
use scan::{scan_paths, IdentCollector};
