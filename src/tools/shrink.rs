//! Oversized tool results become a header, a head/tail preview and a content-addressed artifact.
//!
//! One transform serves both places OpenClaw lets a plugin rewrite a tool result: the agent
//! tool-result middleware (before the model sees the result) and `tool_result_persist` (the
//! stored transcript). Both call [`process_tool_result`] on the same content, so they produce
//! the same bytes; when the middleware already ran, the persist hook sees our header
//! ([`is_shrunk`]) and leaves the content alone. That keeps the model's view in the current
//! turn equal to the replayed transcript in later turns: no prefix-cache break of our own.
//!
//! Shape of a shrunk text (one text part replaces all text parts; images and unknown parts stay
//! where they were):
//! ```text
//! [cachefold] read output 48,213 chars, 1,204 lines → artifact <40 hex>. Shown: lines 1-61 and 1,150-1,204. Rest: cachefold_recover {"id":"<40 hex>","lines":[62,261]}
//! <head: about 70 % of persist.previewChars, ends at a line boundary>
//! [cachefold] … 1,088 lines omitted (lines 62-1,149, 44,180 chars) …
//! <tail: about 30 %, starts at a line boundary>
//! ```
//!
//! Decisions:
//! - Size is counted in Unicode scalar values ("chars") of the text parts joined by `\n`; this
//!   joined text is the artifact. Images are kept as they are and do not count: their base64
//!   is not text the model reads, and a preview could not shrink it.
//! - Thresholds: `persist.thresholds[tool]`, else `persist.defaultThreshold`. A result is shrunk
//!   only when its text is strictly longer than the threshold.
//! - A head or tail that cannot end on a line boundary (one huge line) is cut at a char boundary.
//! - Results of our own tools (`cachefold_*`, also when wrapped by `tool_call`) are never shrunk:
//!   a recovered range must not turn into another artifact.
//! - Anything that is not a tool result with text content passes through untouched.
//!
//! Work is linear in the text size (one pass each for chars, lines and SHA-1); a 100 MB output
//! is never copied more than once.

use crate::config::Config;
use crate::error::{Error, Result};
use crate::tools::details::{compact_details, details_oversized};
use serde::Serialize;
use serde_json::{Map, Value};

/// First characters of every shrunk text.
pub const HEADER_PREFIX: &str = "[cachefold] ";
/// Length of an artifact id (lowercase hex SHA-1).
pub const ARTIFACT_ID_LEN: usize = 40;
/// Lines suggested by the header's recovery hint.
const HINT_LINES: u64 = 200;
/// Chars suggested by the hint when the text is a single line.
const HINT_CHARS: u64 = 8_000;
/// How far into a text we look for our own tools' markers (tool_call wraps results in JSON
/// whose first few hundred chars name the tool).
const OWN_TOOL_SCAN: usize = 2_048;

/// A tool result rewritten to header + preview, and the artifact that holds the full text.
#[derive(Debug, Clone, PartialEq, Serialize, crate::json::out::ToJson)]
#[serde(rename_all = "camelCase")]
pub struct ShrinkOutcome {
    /// The rewritten message (same keys as the input; only `content` changed).
    pub message: Value,
    /// Lowercase hex SHA-1 of `artifact_text`.
    pub artifact_id: String,
    /// The full original text (text parts joined by `\n`).
    pub artifact_text: String,
    /// Chars of `artifact_text`.
    pub original_chars: u64,
    /// Tool name used for the threshold and the header.
    pub tool_name: String,
    /// Lines of `artifact_text` (a final `\n` does not start a new line).
    pub original_lines: u64,
}

/// Everything [`process_tool_result`] did to one result.
#[derive(Debug, Clone, PartialEq, Serialize, crate::json::out::ToJson)]
#[serde(rename_all = "camelCase")]
pub struct Processed {
    /// `"none"`, `"details"` (only details compacted) or `"shrink"` (content shrunk; details
    /// compacted too when `details_compacted`).
    pub action: String,
    /// The rewritten message, absent when nothing changed. Serialised as JSON *text* under
    /// `messageJson` (`serde_json` numbers with `arbitrary_precision` do not survive
    /// serde-wasm-bindgen, and JSON text keeps every byte as the core wrote it).
    #[serde(rename = "messageJson", serialize_with = "json_text")]
    #[to_json(with = "json_text_out")]
    pub message: Option<Value>,
    /// Artifact id when shrunk.
    pub artifact_id: Option<String>,
    /// Full original text when shrunk (the artifact to store).
    pub artifact_text: Option<String>,
    /// Chars of the original text when shrunk.
    pub original_chars: Option<u64>,
    /// Lines of the original text when shrunk.
    pub original_lines: Option<u64>,
    /// Chars of the rewritten text when shrunk.
    pub shrunk_chars: Option<u64>,
    /// True when `details` was replaced by a bounded copy.
    pub details_compacted: bool,
    /// Tool name used.
    pub tool_name: String,
    /// Artifact id of an already-shrunk result (the middleware ran before the persist hook).
    pub already_shrunk: Option<String>,
}

fn json_text_out(v: &Option<Value>, out: &mut String) {
    match v {
        Some(v) => crate::json::out::string(out, &crate::json::out::to_string(v)),
        None => out.push_str("null"),
    }
}

fn json_text<S: serde::Serializer>(
    v: &Option<Value>,
    s: S,
) -> std::result::Result<S::Ok, S::Error> {
    match v {
        Some(v) => s.serialize_some(&serde_json::to_string(v).map_err(serde::ser::Error::custom)?),
        None => s.serialize_none(),
    }
}

/// Threshold in chars for `tool_name`.
pub fn threshold_for(cfg: &Config, tool_name: &str) -> u64 {
    cfg.persist
        .thresholds
        .get(tool_name)
        .copied()
        .unwrap_or(cfg.persist.default_threshold)
}

/// Lowercase hex SHA-1 of the UTF-8 text: the artifact's name.
pub fn artifact_id(text: &str) -> String {
    crate::fingerprint_hex(text.as_bytes())
}

/// Accepts exactly 40 lowercase hex digits; anything else (path separators, `..`, uppercase,
/// other lengths, non-ASCII) is [`Error::InvalidId`].
pub fn validate_artifact_id(id: &str) -> Result<()> {
    if id.len() == ARTIFACT_ID_LEN
        && id
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    {
        return Ok(());
    }
    let shown: String = id.chars().take(48).collect();
    Err(Error::InvalidId(format!(
        "artifact id must be 40 lowercase hex digits, got {shown:?}"
    )))
}

/// The artifact id in our header when `text` is a result we already shrunk.
pub fn is_shrunk(text: &str) -> Option<String> {
    let rest = text.strip_prefix(HEADER_PREFIX)?;
    let line = rest.split('\n').next().unwrap_or("");
    let at = line.find(" → artifact ")?;
    let id = line
        .get(at + " → artifact ".len()..)?
        .get(..ARTIFACT_ID_LEN)?;
    validate_artifact_id(id).ok()?;
    Some(id.to_string())
}

/// Content-only shrink (the contract form): `None` when under the threshold, already shrunk,
/// one of our own tools, disabled, or not a tool result with text.
pub fn shrink_tool_result(
    cfg: &Config,
    tool_name: &str,
    message: &Value,
) -> Result<Option<ShrinkOutcome>> {
    let p = process_tool_result(cfg, tool_name, message.clone(), false)?;
    Ok(match (p.message, p.artifact_id, p.artifact_text) {
        (Some(message), Some(artifact_id), Some(artifact_text)) => Some(ShrinkOutcome {
            message,
            artifact_id,
            artifact_text,
            original_chars: p.original_chars.unwrap_or(0),
            tool_name: p.tool_name,
            original_lines: p.original_lines.unwrap_or(0),
        }),
        _ => None,
    })
}

/// Shrink oversized text content and, when `compact` is set, replace oversized `details` by a
/// bounded copy. Takes the message by value so a 100 MB text moves into the artifact instead
/// of being copied.
///
/// `message` is a `toolResult` message (persist hook) or a bare `{content, details}` result
/// (middleware: no `role`). `tool_name` may be empty; then `message.toolName` is used.
pub fn process_tool_result(
    cfg: &Config,
    tool_name: &str,
    mut message: Value,
    compact: bool,
) -> Result<Processed> {
    let tool = resolve_tool_name(tool_name, &message);
    let mut out = Processed {
        action: "none".into(),
        message: None,
        artifact_id: None,
        artifact_text: None,
        original_chars: None,
        original_lines: None,
        shrunk_chars: None,
        details_compacted: false,
        tool_name: tool.clone(),
        already_shrunk: None,
    };
    let Some(obj) = message.as_object_mut() else {
        return Err(Error::Input("tool result must be a JSON object".into()));
    };
    match obj.get("role").and_then(Value::as_str) {
        None | Some("toolResult") => {}
        Some(_) => return Ok(out),
    }
    if !cfg.persist.enabled {
        return Ok(out);
    }
    let mut changed = false;
    if compact {
        if let Some(d) = obj.get("details") {
            if details_oversized(d) {
                let c = compact_details(d);
                obj.insert("details".into(), c);
                out.details_compacted = true;
                changed = true;
            }
        }
    }
    if let Some(content) = obj.get_mut("content") {
        match shrink_content(cfg, &tool, content)? {
            ContentResult::Unchanged => {}
            ContentResult::AlreadyShrunk(id) => out.already_shrunk = Some(id),
            ContentResult::Shrunk {
                id,
                text,
                chars,
                lines,
                shrunk_chars,
            } => {
                out.artifact_id = Some(id);
                out.artifact_text = Some(text);
                out.original_chars = Some(chars);
                out.original_lines = Some(lines);
                out.shrunk_chars = Some(shrunk_chars);
                changed = true;
            }
        }
    }
    if out.artifact_id.is_some() {
        out.action = "shrink".into();
    } else if out.details_compacted {
        out.action = "details".into();
    }
    if changed {
        out.message = Some(message);
    }
    Ok(out)
}

fn resolve_tool_name(given: &str, message: &Value) -> String {
    let raw = if given.trim().is_empty() {
        message
            .get("toolName")
            .and_then(Value::as_str)
            .unwrap_or("")
    } else {
        given
    };
    // Host-provided; it lands in our header line, so keep it printable and short.
    let clean: String = raw.chars().filter(|c| !c.is_control()).take(64).collect();
    if clean.trim().is_empty() {
        "tool".into()
    } else {
        clean
    }
}

enum ContentResult {
    Unchanged,
    AlreadyShrunk(String),
    Shrunk {
        id: String,
        text: String,
        chars: u64,
        lines: u64,
        shrunk_chars: u64,
    },
}

fn shrink_content(cfg: &Config, tool: &str, content: &mut Value) -> Result<ContentResult> {
    // Look first (borrowing), move the text out only once we know we shrink.
    let texts: Vec<&str> = match content {
        Value::String(s) => vec![s.as_str()],
        Value::Array(parts) => parts.iter().filter_map(text_of).collect(),
        _ => return Ok(ContentResult::Unchanged),
    };
    let Some(first) = texts.first().copied() else {
        return Ok(ContentResult::Unchanged);
    };
    if let Some(id) = is_shrunk(first) {
        return Ok(ContentResult::AlreadyShrunk(id));
    }
    let threshold = threshold_for(cfg, tool);
    // Joined by '\n': one separator between consecutive parts.
    let bytes = texts.iter().map(|t| t.len() as u64).sum::<u64>() + texts.len() as u64 - 1;
    // UTF-8 bytes ≥ chars: under the threshold in bytes means under it in chars (no count needed).
    if bytes <= threshold || is_own_tool(tool, first) {
        return Ok(ContentResult::Unchanged);
    }
    let chars =
        texts.iter().map(|t| t.chars().count() as u64).sum::<u64>() + texts.len() as u64 - 1;
    if chars <= threshold {
        return Ok(ContentResult::Unchanged);
    }
    let full = take_text(content);
    debug_assert_eq!(full.chars().count() as u64, chars);
    let id = artifact_id(&full);
    let lines = count_lines(&full);
    let rendered = render(tool, &id, &full, chars, lines, cfg.persist.preview_chars);
    let shrunk_chars = rendered.chars().count() as u64;
    replace_text(content, rendered);
    Ok(ContentResult::Shrunk {
        id,
        text: full,
        chars,
        lines,
        shrunk_chars,
    })
}

fn text_of(part: &Value) -> Option<&str> {
    if part.get("type").and_then(Value::as_str) == Some("text") {
        part.get("text").and_then(Value::as_str)
    } else {
        None
    }
}

/// Moves the text out of `content`: the text parts joined by `\n` (the first part's string is
/// reused, so a single-part 100 MB text is never copied).
fn take_text(content: &mut Value) -> String {
    match content {
        Value::String(s) => std::mem::take(s),
        Value::Array(parts) => {
            let mut out: Option<String> = None;
            for p in parts.iter_mut() {
                if text_of(p).is_none() {
                    continue;
                }
                if let Some(Value::String(t)) = p.get_mut("text") {
                    match out.as_mut() {
                        None => out = Some(std::mem::take(t)),
                        Some(o) => {
                            o.push('\n');
                            o.push_str(t);
                        }
                    }
                }
            }
            out.unwrap_or_default()
        }
        _ => String::new(),
    }
}

/// Replace all text parts by one part holding `text`, at the position of the first one.
fn replace_text(content: &mut Value, text: String) {
    match content {
        Value::String(s) => *s = text,
        Value::Array(parts) => {
            let mut text = Some(text);
            let mut out = Vec::with_capacity(parts.len());
            for p in parts.drain(..) {
                if text_of(&p).is_some() {
                    if let Some(t) = text.take() {
                        let mut part = Map::new();
                        part.insert("type".into(), Value::String("text".into()));
                        part.insert("text".into(), Value::String(t));
                        out.push(Value::Object(part));
                    }
                } else {
                    out.push(p);
                }
            }
            *parts = out;
        }
        _ => {}
    }
}

fn is_own_tool(tool: &str, text: &str) -> bool {
    if tool.starts_with("cachefold_") {
        return true;
    }
    let head = prefix_chars(text, OWN_TOOL_SCAN);
    [
        "[cachefold_recover]",
        "[cachefold_search]",
        "[cachefold_stats]",
        ":cachefold:cachefold_",
    ]
    .iter()
    .any(|m| head.contains(m))
}

fn prefix_chars(s: &str, n: usize) -> &str {
    match s.char_indices().nth(n) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

/// Lines of `s`: newline count, plus one when the text does not end with a newline.
pub fn count_lines(s: &str) -> u64 {
    if s.is_empty() {
        return 0;
    }
    let n = s.bytes().filter(|b| *b == b'\n').count() as u64;
    if s.ends_with('\n') {
        n
    } else {
        n + 1
    }
}

/// 1-based line of byte offset `at` (the line the char at `at` belongs to).
fn line_at(s: &str, at: usize) -> u64 {
    1 + s
        .as_bytes()
        .get(..at)
        .map_or(0, |b| b.iter().filter(|c| **c == b'\n').count()) as u64
}

/// Byte end of the head: the longest prefix of at most `budget` chars that ends right after a
/// newline, or exactly `budget` chars when no newline falls inside the budget.
fn head_end(s: &str, budget: usize) -> usize {
    let mut last_nl = None;
    for (n, (i, c)) in s.char_indices().enumerate() {
        if n == budget {
            return last_nl.unwrap_or(i);
        }
        if c == '\n' {
            last_nl = Some(i + 1);
        }
    }
    s.len()
}

/// Byte start of the tail: the longest suffix of at most `budget` chars that starts a line, or
/// exactly `budget` chars when no line starts inside the budget.
fn tail_start(s: &str, budget: usize) -> usize {
    let bytes = s.as_bytes();
    let mut best_line_start = None;
    let mut hard_cut = s.len();
    for (n, (i, _)) in s.char_indices().rev().enumerate() {
        // s[i..] holds n + 1 chars.
        if n + 1 > budget {
            return best_line_start.unwrap_or(hard_cut);
        }
        hard_cut = i;
        if i == 0 || bytes.get(i - 1) == Some(&b'\n') {
            best_line_start = Some(i);
        }
    }
    0
}

fn render(tool: &str, id: &str, full: &str, chars: u64, lines: u64, preview_chars: u64) -> String {
    let budget = preview_chars as usize;
    // The mentions line is extra: at most a fifth of the preview, 800 chars by default.
    let mentions_budget = MENTIONS_CHARS.min(preview_chars as usize / 5);
    let head_budget = budget * 7 / 10;
    let tail_budget = budget - head_budget;
    let h_end = head_end(full, head_budget);
    // Text longer than the threshold ≥ previewChars = head + tail budgets: they cannot overlap,
    // but clamp anyway so a bad config can never slice backwards.
    let t_start = tail_start(full, tail_budget).max(h_end);
    let head = full.get(..h_end).unwrap_or("");
    let tail = full.get(t_start..).unwrap_or("");
    let omitted = full.get(h_end..t_start).unwrap_or("");
    let omitted_chars = omitted.chars().count() as u64;
    let head_lines = count_lines(head);
    let first_omitted = line_at(full, h_end);
    let last_omitted = if t_start > 0 {
        line_at(full, t_start - 1)
    } else {
        1
    };
    let tail_first = line_at(full, t_start);

    let mut out = String::with_capacity(budget + 600);
    out.push_str(HEADER_PREFIX);
    out.push_str(&format!(
        "{tool} output {} chars, {} {} → artifact {id}. ",
        group(chars),
        group(lines),
        if lines == 1 { "line" } else { "lines" }
    ));
    let hint = if lines > 1 {
        let a = first_omitted;
        let b = (a + HINT_LINES - 1).min(last_omitted.max(a));
        format!(r#"{{"id":"{id}","lines":[{a},{b}]}}"#)
    } else {
        let a = head.chars().count() as u64;
        let b = (a + HINT_CHARS).min(a + omitted_chars);
        format!(r#"{{"id":"{id}","chars":[{a},{b}]}}"#)
    };
    if lines > 1 {
        out.push_str(&format!(
            "Shown: lines 1-{} and {}-{}. ",
            group(head_lines.max(1)),
            group(tail_first),
            group(lines)
        ));
    } else {
        out.push_str("Shown: start and end. ");
    }
    out.push_str("Rest: cachefold_recover ");
    out.push_str(&hint);
    out.push('\n');
    out.push_str(head);
    if !head.ends_with('\n') {
        out.push('\n');
    }
    out.push_str(HEADER_PREFIX);
    if lines > 1 {
        let n = last_omitted.saturating_sub(first_omitted) + 1;
        out.push_str(&format!(
            "… {} {} omitted (lines {}-{}, {} chars) …",
            group(n),
            if n == 1 { "line" } else { "lines" },
            group(first_omitted),
            group(last_omitted),
            group(omitted_chars)
        ));
    } else {
        out.push_str(&format!("… {} chars omitted …", group(omitted_chars)));
    }
    // Which exact names the omitted part holds, so the model knows what to recover (and what
    // exists at all). Bounded: about 5 % of the preview. The replay bench found most lost
    // anchors in shrunk outputs before this line existed.
    let mentions = crate::digest::anchor_index(omitted, mentions_budget);
    if !mentions.is_empty() {
        out.push_str(" Mentions: ");
        out.push_str(&mentions.join(", "));
    }
    out.push('\n');
    out.push_str(tail);
    out
}

/// Budget of the "Mentions:" list on the omitted-part marker line.
const MENTIONS_CHARS: usize = 800;

/// `48213` → `48,213`.
pub fn group(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn numbered(n: usize, width: usize) -> String {
        (1..=n)
            .map(|i| format!("line {i:05} {}\n", "x".repeat(width)))
            .collect()
    }

    fn result(tool: &str, text: &str) -> Value {
        json!({"role": "toolResult", "toolCallId": "c1", "toolName": tool, "content": [{"type": "text", "text": text}], "isError": false, "timestamp": 1})
    }

    fn text0(m: &Value) -> &str {
        m["content"][0]["text"].as_str().unwrap()
    }

    #[test]
    fn thresholds_per_tool_and_default() {
        let cfg = Config::default();
        assert_eq!(threshold_for(&cfg, "read"), 12_000);
        assert_eq!(threshold_for(&cfg, "exec"), 4_000);
        assert_eq!(threshold_for(&cfg, "bash"), 4_000);
        assert_eq!(threshold_for(&cfg, "web_fetch"), 4_000);
        assert_eq!(threshold_for(&cfg, "grep"), 8_000);
        for (tool, limit) in [
            ("read", 12_000usize),
            ("exec", 4_000),
            ("web_fetch", 4_000),
            ("grep", 8_000),
        ] {
            let at = "a".repeat(limit);
            assert!(
                shrink_tool_result(&cfg, tool, &result(tool, &at))
                    .unwrap()
                    .is_none(),
                "{tool} at threshold"
            );
            let over = "a".repeat(limit + 1);
            let o = shrink_tool_result(&cfg, tool, &result(tool, &over))
                .unwrap()
                .expect(tool);
            assert_eq!(o.original_chars, limit as u64 + 1);
            assert_eq!(o.artifact_text, over);
        }
        let c = Config::from_json(
            r#"{"persist":{"thresholds":{"grep":500},"defaultThreshold":9000,"previewChars":400}}"#,
        )
        .unwrap();
        assert!(
            shrink_tool_result(&c, "grep", &result("grep", &"g".repeat(501)))
                .unwrap()
                .is_some()
        );
        assert!(
            shrink_tool_result(&c, "read", &result("read", &"g".repeat(9000)))
                .unwrap()
                .is_none()
        );
        let off = Config::from_json(r#"{"persist":{"enabled":false}}"#).unwrap();
        assert!(
            shrink_tool_result(&off, "exec", &result("exec", &"g".repeat(90_000)))
                .unwrap()
                .is_none()
        );
    }

    #[test]
    fn header_preview_and_marker() {
        let cfg = Config::default();
        let text = numbered(1_000, 40);
        let o = shrink_tool_result(&cfg, "read", &result("read", &text))
            .unwrap()
            .unwrap();
        let t = text0(&o.message);
        let id = artifact_id(&text);
        assert_eq!(o.artifact_id, id);
        let first = t.lines().next().unwrap();
        assert!(
            first.starts_with("[cachefold] read output 52,000 chars, 1,000 lines → artifact "),
            "{first}"
        );
        assert!(
            first.contains(&format!(
                r#"cachefold_recover {{"id":"{id}","lines":[54,253]}}"#
            )),
            "{first}"
        );
        assert!(
            first.contains("Shown: lines 1-53 and 978-1,000."),
            "{first}"
        );
        // 52-char lines. Head: 53 lines (2,756 ≤ 2,800 chars); tail: 23 lines (1,196 ≤ 1,200), 978..=1000.
        let body: Vec<&str> = t.lines().skip(1).collect();
        assert_eq!(body[0], text.lines().next().unwrap());
        assert_eq!(body[52], text.lines().nth(52).unwrap());
        assert!(
            body[53].starts_with(
                "[cachefold] … 924 lines omitted (lines 54-977, 48,048 chars) … Mentions: 00054, "
            ),
            "{}",
            body[53]
        );
        assert!(
            body[53].chars().count() < 80 + MENTIONS_CHARS,
            "mentions are bounded"
        );
        assert_eq!(body[54], text.lines().nth(977).unwrap());
        assert_eq!(*body.last().unwrap(), text.lines().last().unwrap());
        assert!(t.ends_with('\n'));
        // Line-snapped: every preview body line is a whole original line or our marker.
        for l in &body {
            assert!(
                l.starts_with("[cachefold] …") || text.lines().any(|x| x == *l),
                "{l}"
            );
        }
        assert_eq!(is_shrunk(t), Some(id));
        assert!(t.chars().count() < 4_500 + MENTIONS_CHARS);
    }

    #[test]
    fn mentions_list_exact_names_of_the_omitted_part() {
        let mut text = String::from("start\n");
        for i in 0..400 {
            text.push_str(&format!(
                "line {i}: nothing to see here, just filler text for the preview\n"
            ));
        }
        text.push_str(
            "error[E0308]: mismatched types in src/engine/fold_rules.rs at fn apply_fold_step\n",
        );
        text.push_str("commit 9fceb02d0ae598e95dc970b74767f19372d61af8 by deploy_bot\n");
        for i in 0..400 {
            text.push_str(&format!(
                "tail filler {i} more padding to exceed the threshold comfortably ok\n"
            ));
        }
        let m = result("exec", &text);
        let out = shrink_tool_result(&Config::default(), "exec", &m)
            .unwrap()
            .unwrap();
        let t = text0(&out.message);
        let marker = t.lines().find(|l| l.contains(" omitted (lines ")).unwrap();
        for name in [
            "src/engine/fold_rules.rs",
            "apply_fold_step",
            "9fceb02d0ae598e95dc970b74767f19372d61af8",
            "deploy_bot",
        ] {
            assert!(marker.contains(name), "{name} missing from {marker}");
        }
    }

    #[test]
    fn deterministic_bytes() {
        let cfg = Config::default();
        let text = numbered(3_000, 17) + "no trailing newline";
        let m = result("exec", &text);
        let a = serde_json::to_string(
            &shrink_tool_result(&cfg, "exec", &m)
                .unwrap()
                .unwrap()
                .message,
        )
        .unwrap();
        let b = serde_json::to_string(
            &shrink_tool_result(&cfg, "exec", &m)
                .unwrap()
                .unwrap()
                .message,
        )
        .unwrap();
        assert_eq!(a, b);
        // Bare middleware result {content, details} gives the same text.
        let bare = json!({"content": [{"type": "text", "text": text}], "details": {"exitCode": 0}});
        let c = shrink_tool_result(&cfg, "exec", &bare).unwrap().unwrap();
        let persisted: Value = serde_json::from_str(&a).unwrap();
        assert_eq!(text0(&c.message), text0(&persisted));
        assert_eq!(c.message["details"], json!({"exitCode": 0}));
    }

    #[test]
    fn already_shrunk_is_left_alone() {
        let cfg = Config::default();
        let text = numbered(500, 30);
        let o = shrink_tool_result(&cfg, "exec", &result("exec", &text))
            .unwrap()
            .unwrap();
        assert!(shrink_tool_result(&cfg, "exec", &o.message)
            .unwrap()
            .is_none());
        let p = process_tool_result(&cfg, "exec", o.message.clone(), true).unwrap();
        assert_eq!(p.action, "none");
        assert_eq!(p.already_shrunk, Some(o.artifact_id));
    }

    #[test]
    fn single_huge_line_uses_char_cuts() {
        let cfg = Config::default();
        let text = "y".repeat(50_000);
        let o = shrink_tool_result(&cfg, "exec", &result("exec", &text))
            .unwrap()
            .unwrap();
        let t = text0(&o.message);
        let first = t.lines().next().unwrap();
        assert!(first.contains(r#""chars":[2800,10800]"#), "{first}");
        let body: Vec<&str> = t.lines().skip(1).collect();
        assert_eq!(body[0].len(), 2_800);
        assert_eq!(body[1], "[cachefold] … 46,000 chars omitted …");
        assert_eq!(body[2].len(), 1_200);
    }

    #[test]
    fn images_and_unknown_parts_kept_and_not_counted() {
        let cfg = Config::default();
        let img = json!({"type": "image", "data": "A".repeat(100_000), "mimeType": "image/png"});
        let m = json!({"role": "toolResult", "toolName": "read", "content": [img.clone(), {"type": "text", "text": "small"}]});
        assert!(shrink_tool_result(&cfg, "read", &m).unwrap().is_none());
        let big = numbered(400, 40);
        let m = json!({"role": "toolResult", "toolName": "read", "content": [
            {"type": "text", "text": big}, img.clone(), {"type": "hologram", "x": 1}, {"type": "text", "text": "part two"}]});
        let o = shrink_tool_result(&cfg, "read", &m).unwrap().unwrap();
        assert_eq!(o.artifact_text, format!("{big}\npart two"));
        let parts = o.message["content"].as_array().unwrap();
        assert_eq!(parts.len(), 3);
        assert_eq!(parts[1], img);
        assert_eq!(parts[2], json!({"type": "hologram", "x": 1}));
        assert!(parts[0]["text"].as_str().unwrap().ends_with("part two"));
    }

    #[test]
    fn string_content_and_odd_shapes() {
        let cfg = Config::default();
        let big = numbered(300, 40);
        let m = json!({"role": "toolResult", "toolName": "exec", "content": big});
        let o = shrink_tool_result(&cfg, "", &m).unwrap().unwrap();
        assert_eq!(o.tool_name, "exec");
        assert!(o.message["content"]
            .as_str()
            .unwrap()
            .starts_with("[cachefold] exec output"));
        for odd in [
            json!({"role": "assistant", "content": big}),
            json!({"role": "toolResult", "content": {"weird": big}}),
            json!({"role": "toolResult", "content": [{"type": "text", "text": 5}]}),
            json!({"role": "toolResult"}),
        ] {
            assert!(
                shrink_tool_result(&cfg, "exec", &odd).unwrap().is_none(),
                "{odd}"
            );
        }
        assert_eq!(
            shrink_tool_result(&cfg, "exec", &json!([1]))
                .unwrap_err()
                .code(),
            "CACHEFOLD_INPUT"
        );
    }

    #[test]
    fn multibyte_text_counts_chars_not_bytes() {
        let cfg = Config::default();
        // 3,000 chars, 9,000 bytes: under exec's 4,000-char threshold.
        let m = result("exec", &"語".repeat(3_000));
        assert!(shrink_tool_result(&cfg, "exec", &m).unwrap().is_none());
        // Same with two parts: the message must come back unchanged.
        let m2 = json!({"role": "toolResult", "content": [{"type": "text", "text": "語\n語".repeat(700)}, {"type": "text", "text": "é".repeat(1_000)}]});
        let p = process_tool_result(&cfg, "exec", m2.clone(), true).unwrap();
        assert_eq!(p.action, "none");
        assert!(p.message.is_none());
        let o = shrink_tool_result(&cfg, "exec", &result("exec", &"語\n".repeat(2_500)))
            .unwrap()
            .unwrap();
        assert_eq!(o.original_chars, 5_000);
        assert!(text0(&o.message).is_char_boundary(0));
    }

    #[test]
    fn own_tools_never_shrunk() {
        let cfg = Config::default();
        let big = format!(
            "[cachefold_recover] artifact x lines 1-900\n{}",
            numbered(900, 20)
        );
        assert!(shrink_tool_result(
            &cfg,
            "cachefold_recover",
            &result("cachefold_recover", &big)
        )
        .unwrap()
        .is_none());
        let wrapped = format!(
            r#"{{"tool":{{"id":"openclaw:cachefold:cachefold_recover"}},"result":{{"content":[{{"type":"text","text":{}}}]}}}}"#,
            serde_json::to_string(&big).unwrap()
        );
        assert!(
            shrink_tool_result(&cfg, "tool_call", &result("tool_call", &wrapped))
                .unwrap()
                .is_none()
        );
    }

    #[test]
    fn details_compacted_only_when_oversized() {
        let cfg = Config::default();
        let m = json!({"role": "toolResult", "toolName": "exec", "content": [{"type": "text", "text": "ok"}], "details": {"aggregated": "z".repeat(20_000), "exitCode": 0}});
        let p = process_tool_result(&cfg, "exec", m.clone(), true).unwrap();
        assert_eq!(p.action, "details");
        let d = &p.message.as_ref().unwrap()["details"];
        assert_eq!(d["exitCode"], 0);
        assert!(serde_json::to_string(d).unwrap().len() <= 4_096);
        let p = process_tool_result(&cfg, "exec", m, false).unwrap();
        assert_eq!(p.action, "none");
    }

    #[test]
    fn id_validation() {
        assert!(validate_artifact_id(&artifact_id("x")).is_ok());
        for bad in [
            "../x",
            "/etc/passwd",
            "A9993E364706816ABA3E25717850C26C9CD0D89D",
            "a9993e364706816aba3e25717850c26c9cd0d89",
            "a9993e364706816aba3e25717850c26c9cd0d89d0",
            "a9993e364706816aba3e25717850c26c9cd0d8/d",
            "a9993e364706816aba3e25717850c26c9cd0d8éd",
            "a9993e364706816aba3e25717850c26c9cd0d8\0d",
            "",
            "..",
        ] {
            assert_eq!(
                validate_artifact_id(bad).unwrap_err().code(),
                "CACHEFOLD_INVALID_ID",
                "{bad:?}"
            );
        }
        assert_eq!(
            artifact_id("abc"),
            "a9993e364706816aba3e25717850c26c9cd0d89d"
        );
    }

    #[test]
    fn grouping() {
        assert_eq!(group(0), "0");
        assert_eq!(group(999), "999");
        assert_eq!(group(1_000), "1,000");
        assert_eq!(group(48_213), "48,213");
        assert_eq!(group(104_857_600), "104,857,600");
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(200))]
        /// Preview = exact head prefix + marker + exact tail suffix, both line-snapped unless a
        /// single line is longer than its budget; omitted counts add up; same input, same bytes.
        #[test]
        fn preview_reassembles(lines in proptest::collection::vec("[a-zé語 ]{0,120}", 1..300), trailing_nl: bool, preview in 200u64..2_000) {
            let mut text = lines.join("\n");
            if trailing_nl { text.push('\n'); }
            let threshold = preview;
            let cfg = Config::from_json(&format!(r#"{{"persist":{{"defaultThreshold":{threshold},"previewChars":{preview},"thresholds":{{}}}}}}"#)).unwrap();
            let m = result("x", &text);
            let out = shrink_tool_result(&cfg, "x", &m).unwrap();
            let chars = text.chars().count() as u64;
            proptest::prop_assert_eq!(out.is_some(), chars > threshold);
            let Some(o) = out else { return Ok(()) };
            proptest::prop_assert_eq!(&o.artifact_text, &text);
            let again = shrink_tool_result(&cfg, "x", &m).unwrap().unwrap();
            proptest::prop_assert_eq!(serde_json::to_string(&again.message).unwrap(), serde_json::to_string(&o.message).unwrap());
            let t = text0(&o.message).to_string();
            proptest::prop_assert_eq!(is_shrunk(&t), Some(artifact_id(&text)));
            let body = &t[t.find('\n').unwrap() + 1..];
            let mpos = body.find("\n[cachefold] … ").map(|p| p + 1).or_else(|| body.starts_with("[cachefold] … ").then_some(0)).unwrap();
            let head = &body[..mpos];
            let after = &body[mpos..];
            let tail = &after[after.find('\n').unwrap() + 1..];
            // The renderer adds one '\n' after a head that was cut mid-line.
            let head_text = if text.starts_with(head) { head } else { head.strip_suffix('\n').unwrap() };
            proptest::prop_assert!(text.starts_with(head_text));
            proptest::prop_assert!(text.ends_with(tail));
            proptest::prop_assert!(head_text.chars().count() as u64 <= preview * 7 / 10);
            proptest::prop_assert!(tail.chars().count() as u64 <= preview - preview * 7 / 10);
            let omitted = chars - head_text.chars().count() as u64 - tail.chars().count() as u64;
            let marker = after.split('\n').next().unwrap();
            proptest::prop_assert!(marker.contains(&format!("{} chars", group(omitted))), "{} vs {}", marker, omitted);
            // Line-snapped whenever the text has a line break inside each budget.
            let head_budget_text: String = text.chars().take((preview * 7 / 10) as usize).collect();
            if head_budget_text.contains('\n') { proptest::prop_assert!(head_text.ends_with('\n')); }
            let tail_budget = (preview - preview * 7 / 10) as usize;
            let rev: String = text.chars().rev().take(tail_budget + 1).collect();
            if rev.chars().skip(1).any(|c| c == '\n') && !tail.is_empty() {
                let start = text.len() - tail.len();
                proptest::prop_assert!(start == 0 || text.as_bytes()[start - 1] == b'\n');
            }
        }
    }

    #[test]
    fn tail_and_head_boundaries() {
        let s = "ab\ncd\nef\n";
        assert_eq!(head_end(s, 4), 3);
        assert_eq!(head_end(s, 100), s.len());
        assert_eq!(head_end("abcdef", 3), 3);
        assert_eq!(tail_start(s, 4), 6); // "ef\n"
        assert_eq!(tail_start("abcdef", 2), 4);
        assert_eq!(tail_start(s, 100), 0);
        assert_eq!(count_lines(""), 0);
        assert_eq!(count_lines("a"), 1);
        assert_eq!(count_lines("a\n"), 1);
        assert_eq!(count_lines("a\nb"), 2);
    }
}
