//! Readers that turn recorded agent sessions into one neutral [`Transcript`].
//!
//! Three on-disk formats are understood (the replay bench and the engine's replay tests use
//! them; the SQLite container OpenClaw ≥ 2026.7 uses holds pi-shaped lines, so it goes through
//! [`parse_pi_lines`] after the bench has decompressed the rows):
//!
//! | format | reader | what one LLM call is |
//! |---|---|---|
//! | pi / OpenClaw session JSONL | [`parse_pi`] | one `message` entry with `role:"assistant"` |
//! | Claude Code JSONL | [`parse_claude_code`] | all `assistant` lines sharing one `requestId` |
//! | Reasonix transcript JSONL | [`parse_reasonix`] | one `assistant_final` line |
//!
//! Every message comes out in OpenClaw's `AgentMessage` shape wrapped in [`Message`]:
//! `user {content:[text…], timestamp}`, `assistant {content:[text|thinking|toolCall{id,name,
//! arguments}], usage{input,output,cacheRead,cacheWrite}, stopReason, timestamp}` and
//! `toolResult {toolCallId, toolName, content:[text], isError, timestamp}`. pi messages are
//! kept byte-for-byte (they already have that shape); the other formats are converted.
//!
//! Invariants:
//! - never panics and never fails on a bad line: unparsable or unusable lines are skipped and
//!   counted in [`Transcript::skipped_lines`]. Only text that yields no recognisable entry at
//!   all is an error;
//! - `calls[k].assistant_index` indexes an assistant message in `messages`, strictly
//!   increasing in `k`; the history that call saw is `messages[..assistant_index]`;
//! - recorded compactions are kept aside in [`Transcript::compactions`] (index = number of
//!   messages before it), never inserted into `messages`, so strategies replay raw history;
//! - deterministic: same text → same transcript. No I/O.

use crate::error::{Error, Result};
use crate::message::{Message, Role, Usage};
use serde_json::{json, Map, Value};
use std::collections::{BTreeMap, BTreeSet};

/// A recorded session in neutral form.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Transcript {
    /// Which reader produced it: `"pi"`, `"claude-code"` or `"reasonix"`.
    pub format: String,
    /// Messages in context order (OpenClaw `AgentMessage` JSON).
    pub messages: Vec<Message>,
    /// One entry per recorded LLM call, in order.
    pub calls: Vec<Call>,
    /// Recorded compactions: (number of messages before it, summary text). Not in `messages`.
    pub compactions: Vec<(usize, String)>,
    /// Lines that were not JSON, or JSON of a shape no rule could use (UI events are not
    /// counted: they are recognised and ignored on purpose).
    pub skipped_lines: u64,
}

/// One recorded LLM request.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    /// Index in `messages` of the assistant message this call produced; the call's history
    /// is `messages[..assistant_index]`.
    pub assistant_index: usize,
    /// When the call was made (ms since the Unix epoch; 0 when the source has no time).
    pub timestamp_ms: f64,
    /// Provider usage as recorded (Anthropic- or DeepSeek-style mapped onto [`Usage`]).
    pub usage: Option<Usage>,
    /// Recorded output tokens (0 when unknown).
    pub output_tokens: u64,
}

impl Transcript {
    fn new(format: &str) -> Transcript {
        Transcript {
            format: format.to_string(),
            ..Transcript::default()
        }
    }

    /// Push an assistant message and register it as one call.
    fn push_call(&mut self, raw: Value, usage: Option<Usage>) {
        let ts = raw.get("timestamp").and_then(Value::as_f64).unwrap_or(0.0);
        if let Ok(m) = Message::from_value(raw) {
            let output_tokens = usage.map(|u| u.output).unwrap_or(0);
            self.calls.push(Call {
                assistant_index: self.messages.len(),
                timestamp_ms: ts,
                usage,
                output_tokens,
            });
            self.messages.push(m);
        }
    }

    fn push(&mut self, raw: Value) {
        if let Ok(m) = Message::from_value(raw) {
            self.messages.push(m);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Format detection

/// Detect the format from the file name and the first recognisable lines, then parse.
///
/// Rules, first match wins: a `.sqlite`/`.db` name is refused here (the bench opens those);
/// any of the first 64 JSON lines with `role:"_meta"` or a Reasonix role plus `turn` →
/// Reasonix; with `uuid`/`parentUuid`/`requestId` or a Claude Code line type → Claude Code;
/// with `type:"session"` or `type:"message"` + `message` → pi.
pub fn parse_auto(file_name: &str, text: &str) -> Result<Transcript> {
    let lower = file_name.to_ascii_lowercase();
    if lower.ends_with(".sqlite") || lower.ends_with(".db") {
        return Err(Error::Input(format!(
            "{file_name}: SQLite transcripts are read by the bench, not as text"
        )));
    }
    match detect(text) {
        Some("reasonix") => parse_reasonix(text),
        Some("claude-code") => parse_claude_code(text),
        Some("pi") => parse_pi(text),
        _ => {
            if text.trim().is_empty() {
                Ok(Transcript::new("pi"))
            } else {
                Err(Error::Input(format!(
                    "{file_name}: no pi, Claude Code or Reasonix entries found"
                )))
            }
        }
    }
}

/// The format name `parse_auto` would pick, if any.
pub fn detect(text: &str) -> Option<&'static str> {
    for line in text.lines().filter(|l| !l.trim().is_empty()).take(64) {
        let Ok(v) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        let role = v.get("role").and_then(Value::as_str).unwrap_or("");
        let ty = v.get("type").and_then(Value::as_str).unwrap_or("");
        if role == "_meta"
            || (v.get("turn").is_some()
                && matches!(role, "user" | "assistant_final" | "tool" | "done"))
        {
            return Some("reasonix");
        }
        if v.get("uuid").is_some()
            || v.get("parentUuid").is_some()
            || v.get("requestId").is_some()
            || matches!(
                ty,
                "progress" | "file-history-snapshot" | "queue-operation" | "summary"
            )
        {
            return Some("claude-code");
        }
        if ty == "session" || (ty == "message" && v.get("message").is_some()) {
            return Some("pi");
        }
    }
    None
}

// ---------------------------------------------------------------------------------------------
// pi / OpenClaw

/// Parse a pi (OpenClaw) session JSONL file.
///
/// Entries: `session` header (ignored), `message` (user / assistant / toolResult kept verbatim;
/// `bashExecution` rendered as the user text pi sends the model; `custom` messages with a
/// string or text content kept as user text), `custom_message` and `branch_summary` (sent to
/// the model as user text by pi), `compaction` (recorded aside), everything else ignored.
/// Version ≥ 2 files carry `id`/`parentId`: the active branch (the chain ending at the last
/// entry) is replayed; files without ids are replayed in file order.
pub fn parse_pi(text: &str) -> Result<Transcript> {
    let mut skipped = 0u64;
    let mut values = Vec::new();
    for line in text.lines() {
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<Value>(line) {
            Ok(v) if v.is_object() => values.push(v),
            _ => skipped += 1,
        }
    }
    let mut t = parse_pi_values(values)?;
    t.skipped_lines += skipped;
    Ok(t)
}

/// Parse pi entries that are already JSON lines (one entry per string), e.g. the
/// `event_json` column of OpenClaw's `transcript_events` table in `seq` order.
pub fn parse_pi_lines<'a>(lines: impl IntoIterator<Item = &'a str>) -> Result<Transcript> {
    let mut skipped = 0u64;
    let mut values = Vec::new();
    for line in lines {
        match serde_json::from_str::<Value>(line) {
            Ok(v) if v.is_object() => values.push(v),
            _ => skipped += 1,
        }
    }
    let mut t = parse_pi_values(values)?;
    t.skipped_lines += skipped;
    Ok(t)
}

/// Parse already-decoded pi entries.
pub fn parse_pi_values(entries: Vec<Value>) -> Result<Transcript> {
    let mut t = Transcript::new("pi");
    let entries = active_branch(entries);
    for e in entries {
        let ty = e.get("type").and_then(Value::as_str).unwrap_or("");
        let entry_ts = e
            .get("timestamp")
            .and_then(Value::as_str)
            .and_then(parse_iso_ms);
        match ty {
            "message" => {
                let Some(m) = e.get("message").filter(|m| m.is_object()) else {
                    t.skipped_lines += 1;
                    continue;
                };
                let mut m = m.clone();
                if m.get("timestamp").and_then(Value::as_f64).is_none() {
                    if let (Some(ts), Some(obj)) = (entry_ts, m.as_object_mut()) {
                        obj.insert("timestamp".into(), json!(ts as u64));
                    }
                }
                let role = m
                    .get("role")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string();
                match role.as_str() {
                    "assistant" => {
                        let usage = Message::from_value(m.clone())
                            .ok()
                            .and_then(|mm| mm.usage());
                        t.push_call(m, usage);
                    }
                    "user" | "toolResult" => t.push(m),
                    "bashExecution" => {
                        let ts = m.get("timestamp").cloned().unwrap_or(Value::Null);
                        t.push(user_text(&bash_execution_text(&m), ts));
                    }
                    "custom" | "branchSummary" | "compactionSummary" => {
                        let text = Message::from_value(m.clone())
                            .map(|mm| mm.text())
                            .unwrap_or_default();
                        if text.is_empty() {
                            t.skipped_lines += 1;
                        } else {
                            let ts = m.get("timestamp").cloned().unwrap_or(Value::Null);
                            t.push(user_text(&text, ts));
                        }
                    }
                    _ => t.skipped_lines += 1,
                }
            }
            "compaction" => {
                let summary = e
                    .get("summary")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string();
                t.compactions.push((t.messages.len(), summary));
            }
            "custom_message" | "branch_summary" => {
                let text = match (e.get("content"), e.get("summary")) {
                    (Some(c), _) => content_text(c),
                    (None, Some(Value::String(s))) => s.clone(),
                    _ => String::new(),
                };
                if !text.is_empty() {
                    let ts = entry_ts.map(|x| json!(x as u64)).unwrap_or(Value::Null);
                    t.push(user_text(&text, ts));
                }
            }
            // Header, model/thinking switches, labels, session info, custom state: not context.
            _ => {}
        }
    }
    Ok(t)
}

/// With `id`/`parentId` on the entries, keep the chain that ends at the last entry with an id
/// (pi's "leaf"); entries without an id (the header) stay in front. Without ids: unchanged.
fn active_branch(entries: Vec<Value>) -> Vec<Value> {
    let id_of = |v: &Value| v.get("id").and_then(Value::as_str).map(str::to_string);
    let has_parent_links = entries.iter().any(|v| v.get("parentId").is_some());
    if !has_parent_links {
        return entries;
    }
    let mut by_id: BTreeMap<String, usize> = BTreeMap::new();
    for (i, v) in entries.iter().enumerate() {
        if v.get("type").and_then(Value::as_str) == Some("session") {
            continue;
        }
        if let Some(id) = id_of(v) {
            by_id.entry(id).or_insert(i);
        }
    }
    let Some(leaf) = entries.iter().rposition(|v| {
        v.get("type").and_then(Value::as_str) != Some("session") && id_of(v).is_some()
    }) else {
        return entries;
    };
    let mut keep = BTreeSet::new();
    let mut cur = Some(leaf);
    while let Some(i) = cur {
        if !keep.insert(i) {
            break; // cycle guard
        }
        cur = entries
            .get(i)
            .and_then(|v| v.get("parentId"))
            .and_then(Value::as_str)
            .and_then(|p| by_id.get(p).copied());
    }
    entries
        .into_iter()
        .enumerate()
        .filter(|(i, v)| {
            keep.contains(i) || v.get("type").and_then(Value::as_str) == Some("session")
        })
        .map(|(_, v)| v)
        .collect()
}

/// What pi sends the model for a user-run `!command` (bashExecutionToText).
fn bash_execution_text(m: &Value) -> String {
    let cmd = m.get("command").and_then(Value::as_str).unwrap_or("");
    let out = m.get("output").and_then(Value::as_str).unwrap_or("");
    let mut s = format!("Ran `{cmd}`\n");
    if out.is_empty() {
        s.push_str("(no output)");
    } else {
        s.push_str("```\n");
        s.push_str(out);
        s.push_str("\n```");
    }
    if m.get("cancelled").and_then(Value::as_bool) == Some(true) {
        s.push_str("\n\n(command cancelled)");
    } else if let Some(code) = m
        .get("exitCode")
        .and_then(Value::as_i64)
        .filter(|c| *c != 0)
    {
        s.push_str(&format!("\n\nCommand exited with code {code}"));
    }
    s
}

fn user_text(text: &str, ts: Value) -> Value {
    json!({"role": "user", "content": [{"type": "text", "text": text}], "timestamp": ts})
}

/// Text of a string content or of the text parts of a content array.
fn content_text(c: &Value) -> String {
    match c {
        Value::String(s) => s.clone(),
        Value::Array(items) => {
            let mut out = String::new();
            for p in items {
                let t = match p {
                    Value::String(s) => Some(s.as_str()),
                    _ => p.get("text").and_then(Value::as_str),
                };
                if let Some(t) = t {
                    if !out.is_empty() {
                        out.push('\n');
                    }
                    out.push_str(t);
                }
            }
            out
        }
        _ => String::new(),
    }
}

// ---------------------------------------------------------------------------------------------
// Claude Code

/// Parse a Claude Code transcript JSONL file (main session or subagent file).
///
/// - The conversation is the `parentUuid` chain ending at the last `user`/`assistant` line
///   (a `compact_boundary` continues through `logicalParentUuid`). Side lines are kept when
///   their nearest user/assistant ancestor is on the chain and they are tool results (parallel
///   tool calls hang their results off the call line, not off the chain) or belong to the
///   same request as a kept assistant line. Abandoned branches (edited / retried prompts) drop out.
/// - `assistant` lines with the same `requestId` (Claude Code writes one line per content
///   block, interleaved with tool results) become **one** assistant message = one call; its
///   results follow it in the order they were written.
/// - `progress`, `system`, `file-history-snapshot`, `queue-operation` and `summary` lines are
///   UI events and are ignored. The `isCompactSummary` user line is recorded as a compaction.
/// - `tool_use`/`tool_result` blocks become `toolCall` parts and `toolResult` messages; usage
///   `input_tokens/cache_read_input_tokens/cache_creation_input_tokens/output_tokens` maps to
///   `input/cacheRead/cacheWrite/output`.
pub fn parse_claude_code(text: &str) -> Result<Transcript> {
    let mut t = Transcript::new("claude-code");
    let mut lines: Vec<Value> = Vec::new();
    let mut seen_uuid = BTreeSet::new();
    for line in text.lines() {
        if line.trim().is_empty() {
            continue;
        }
        let Ok(v) = serde_json::from_str::<Value>(line) else {
            t.skipped_lines += 1;
            continue;
        };
        if !v.is_object() {
            t.skipped_lines += 1;
            continue;
        }
        // Resumed sessions re-write earlier lines: keep the first copy of each uuid.
        if let Some(u) = v.get("uuid").and_then(Value::as_str) {
            if !seen_uuid.insert(u.to_string()) {
                continue;
            }
        }
        lines.push(v);
    }
    let ty = |v: &Value| {
        v.get("type")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    let is_msg = |v: &Value| {
        matches!(
            v.get("type").and_then(Value::as_str),
            Some("user" | "assistant")
        )
    };

    let include = cc_included_lines(&lines);

    let mut tool_names: BTreeMap<String, String> = BTreeMap::new();
    // (requestId key, message index, call index) of the most recent assistant message.
    let mut open: Option<(String, usize, usize)> = None;
    for (i, v) in lines.iter().enumerate() {
        if !is_msg(v) {
            let known = matches!(
                ty(v).as_str(),
                "progress"
                    | "system"
                    | "file-history-snapshot"
                    | "queue-operation"
                    | "summary"
                    | "custom-title"
                    | "tag"
            );
            if !known && !v.get("type").is_some_and(Value::is_string) {
                t.skipped_lines += 1;
            }
            continue;
        }
        if !include.contains(&i) {
            continue;
        }
        let Some(msg) = v.get("message").filter(|m| m.is_object()) else {
            t.skipped_lines += 1;
            continue;
        };
        let ts = v
            .get("timestamp")
            .and_then(Value::as_str)
            .and_then(parse_iso_ms)
            .map(|x| x as u64);
        let ts_val = ts.map(|x| json!(x)).unwrap_or(Value::Null);
        if ty(v) == "assistant" {
            let key = v
                .get("requestId")
                .and_then(Value::as_str)
                .or_else(|| msg.get("id").and_then(Value::as_str))
                .unwrap_or("")
                .to_string();
            let parts = cc_assistant_parts(msg.get("content"), &mut tool_names);
            let usage = cc_usage(msg.get("usage"));
            let stop = msg
                .get("stop_reason")
                .and_then(Value::as_str)
                .map(cc_stop_reason);
            let merge = matches!(&open, Some((k, _, _)) if !key.is_empty() && *k == key);
            if merge {
                if let Some((_, mi, ci)) = open.clone() {
                    cc_merge_assistant(&mut t, mi, ci, parts, usage, stop);
                }
            } else {
                let mut raw = json!({"role": "assistant", "content": parts});
                if let Some(obj) = raw.as_object_mut() {
                    if let Some(model) = msg.get("model") {
                        obj.insert("model".into(), model.clone());
                    }
                    if let Some(u) = usage {
                        obj.insert("usage".into(), usage_json(&u));
                    }
                    obj.insert(
                        "stopReason".into(),
                        stop.map(Value::from).unwrap_or(Value::Null),
                    );
                    obj.insert("timestamp".into(), ts_val);
                }
                let mi = t.messages.len();
                let ci = t.calls.len();
                t.push_call(raw, usage);
                open = Some((key, mi, ci));
            }
            continue;
        }
        // user line
        if v.get("isCompactSummary").and_then(Value::as_bool) == Some(true) {
            t.compactions.push((
                t.messages.len(),
                content_text(msg.get("content").unwrap_or(&Value::Null)),
            ));
            continue;
        }
        let mut text_parts: Vec<Value> = Vec::new();
        match msg.get("content") {
            Some(Value::String(s)) => text_parts.push(json!({"type": "text", "text": s})),
            Some(Value::Array(items)) => {
                for p in items {
                    match p.get("type").and_then(Value::as_str).unwrap_or("") {
                        "tool_result" => {
                            let id = p
                                .get("tool_use_id")
                                .and_then(Value::as_str)
                                .unwrap_or("")
                                .to_string();
                            let name = tool_names.get(&id).cloned().unwrap_or_default();
                            let text = content_text(p.get("content").unwrap_or(&Value::Null));
                            let is_error =
                                p.get("is_error").and_then(Value::as_bool).unwrap_or(false);
                            t.push(json!({"role": "toolResult", "toolCallId": id, "toolName": name,
                                "content": [{"type": "text", "text": text}], "isError": is_error, "timestamp": ts_val.clone()}));
                        }
                        "text" => {
                            let s = p.get("text").and_then(Value::as_str).unwrap_or("");
                            text_parts.push(json!({"type": "text", "text": s}));
                        }
                        "image" => {
                            let src = p.get("source").unwrap_or(&Value::Null);
                            let data = src.get("data").and_then(Value::as_str).unwrap_or("");
                            let mime = src
                                .get("media_type")
                                .and_then(Value::as_str)
                                .unwrap_or("image/png");
                            text_parts
                                .push(json!({"type": "image", "data": data, "mimeType": mime}));
                        }
                        _ => {}
                    }
                }
            }
            _ => {
                t.skipped_lines += 1;
                continue;
            }
        }
        if !text_parts.is_empty() {
            t.push(json!({"role": "user", "content": text_parts, "timestamp": ts_val}));
            open = None;
        }
    }
    Ok(t)
}

/// Indices of the user/assistant lines that form the replayed conversation (see
/// [`parse_claude_code`]). Files without uuids: every user/assistant line.
fn cc_included_lines(lines: &[Value]) -> BTreeSet<usize> {
    let is_msg = |v: &Value| {
        matches!(
            v.get("type").and_then(Value::as_str),
            Some("user" | "assistant")
        )
    };
    let uuid = |v: &Value| v.get("uuid").and_then(Value::as_str).map(str::to_string);
    let mut by_uuid: BTreeMap<String, usize> = BTreeMap::new();
    for (i, v) in lines.iter().enumerate() {
        if let Some(u) = uuid(v) {
            by_uuid.insert(u, i);
        }
    }
    let parent_of = |i: usize| -> Option<usize> {
        let v = lines.get(i)?;
        let p = v
            .get("parentUuid")
            .and_then(Value::as_str)
            .or_else(|| v.get("logicalParentUuid").and_then(Value::as_str))?;
        by_uuid.get(p).copied()
    };
    let all_msgs: BTreeSet<usize> = (0..lines.len())
        .filter(|&i| lines.get(i).is_some_and(is_msg))
        .collect();
    let Some(&leaf) = all_msgs.iter().next_back() else {
        return all_msgs;
    };
    if by_uuid.is_empty() {
        return all_msgs;
    }
    let mut chain = BTreeSet::new();
    let mut cur = Some(leaf);
    while let Some(i) = cur {
        if !chain.insert(i) {
            break;
        }
        // A compact boundary's `logicalParentUuid` may name a line the file no longer holds
        // (the spotter sessions do): the earlier conversation then continues from the last
        // user/assistant line written before the break.
        cur = parent_of(i).or_else(|| {
            all_msgs
                .range(..i)
                .next_back()
                .copied()
                .filter(|j| !chain.contains(j))
        });
    }
    // Nearest user/assistant ancestor of a line.
    let msg_ancestor = |i: usize| -> Option<usize> {
        let mut cur = parent_of(i);
        let mut steps = 0usize;
        while let Some(j) = cur {
            if lines.get(j).is_some_and(is_msg) {
                return Some(j);
            }
            steps += 1;
            if steps > lines.len() {
                return None;
            }
            cur = parent_of(j);
        }
        None
    };
    let req = |i: usize| {
        lines
            .get(i)
            .and_then(|v| v.get("requestId"))
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    let chain_reqs: BTreeSet<String> = chain.iter().filter_map(|&i| req(i)).collect();
    let mut out = BTreeSet::new();
    for &i in &all_msgs {
        if chain.contains(&i) {
            out.insert(i);
            continue;
        }
        let Some(v) = lines.get(i) else { continue };
        let is_tool_result = v
            .get("message")
            .and_then(|m| m.get("content"))
            .and_then(Value::as_array)
            .is_some_and(|a| {
                a.iter()
                    .any(|p| p.get("type").and_then(Value::as_str) == Some("tool_result"))
            });
        let same_request = req(i).is_some_and(|r| chain_reqs.contains(&r));
        let anchored = msg_ancestor(i).is_some_and(|a| chain.contains(&a) || out.contains(&a));
        if anchored && (is_tool_result || same_request) {
            out.insert(i);
        }
    }
    out
}

fn cc_assistant_parts(
    content: Option<&Value>,
    tool_names: &mut BTreeMap<String, String>,
) -> Vec<Value> {
    let mut parts = Vec::new();
    match content {
        Some(Value::String(s)) => parts.push(json!({"type": "text", "text": s})),
        Some(Value::Array(items)) => {
            for p in items {
                match p.get("type").and_then(Value::as_str).unwrap_or("") {
                    "text" => parts.push(json!({"type": "text", "text": p.get("text").and_then(Value::as_str).unwrap_or("")})),
                    "thinking" => parts.push(json!({"type": "thinking", "thinking": p.get("thinking").and_then(Value::as_str).unwrap_or("")})),
                    "tool_use" => {
                        let id = p.get("id").and_then(Value::as_str).unwrap_or("").to_string();
                        let name = p.get("name").and_then(Value::as_str).unwrap_or("").to_string();
                        tool_names.insert(id.clone(), name.clone());
                        let args = p.get("input").cloned().unwrap_or_else(|| Value::Object(Map::new()));
                        parts.push(json!({"type": "toolCall", "id": id, "name": name, "arguments": args}));
                    }
                    _ => {}
                }
            }
        }
        _ => {}
    }
    parts
}

fn cc_merge_assistant(
    t: &mut Transcript,
    mi: usize,
    ci: usize,
    parts: Vec<Value>,
    usage: Option<Usage>,
    stop: Option<&str>,
) {
    let Some(m) = t.messages.get(mi) else { return };
    let mut raw = m.raw().clone();
    if let Some(obj) = raw.as_object_mut() {
        if let Some(Value::Array(c)) = obj.get_mut("content") {
            c.extend(parts);
        }
        // Claude Code repeats the request's usage on every line; the last line carries the
        // final output count, so take the maximum output and the latest input fields.
        let merged = match (
            Message::from_value(Value::Object(obj.clone()))
                .ok()
                .and_then(|x| x.usage()),
            usage,
        ) {
            (Some(a), Some(b)) => Some(Usage {
                output: a.output.max(b.output),
                ..b
            }),
            (a, b) => b.or(a),
        };
        if let Some(u) = merged {
            obj.insert("usage".into(), usage_json(&u));
            if let Some(c) = t.calls.get_mut(ci) {
                c.usage = Some(u);
                c.output_tokens = u.output;
            }
        }
        if let Some(s) = stop {
            obj.insert("stopReason".into(), Value::from(s));
        }
    }
    if let (Ok(nm), Some(slot)) = (Message::from_value(raw), t.messages.get_mut(mi)) {
        *slot = nm;
    }
}

fn cc_usage(u: Option<&Value>) -> Option<Usage> {
    let u = u.filter(|u| u.is_object())?;
    let g = |k: &str| u.get(k).and_then(Value::as_f64).unwrap_or(0.0).max(0.0) as u64;
    Some(Usage {
        input: g("input_tokens"),
        cache_read: g("cache_read_input_tokens"),
        cache_write: g("cache_creation_input_tokens"),
        output: g("output_tokens"),
    })
}

fn cc_stop_reason(s: &str) -> &str {
    match s {
        "tool_use" => "toolUse",
        "end_turn" | "stop_sequence" => "stop",
        "max_tokens" => "length",
        other => other,
    }
}

fn usage_json(u: &Usage) -> Value {
    json!({"input": u.input, "output": u.output, "cacheRead": u.cache_read, "cacheWrite": u.cache_write})
}

// ---------------------------------------------------------------------------------------------
// Reasonix

/// Parse a Reasonix transcript JSONL file.
///
/// `user` → user message; `assistant_final` → assistant message (one call) whose `toolCall`
/// parts are the `tool` lines that follow it (Reasonix logs a call and its result together
/// as one `tool` line with `tool`, `args` (JSON text) and `content` = result); each `tool`
/// line also yields the `toolResult`. Call ids are not recorded, so they are synthesised as
/// `rx<n>` (n counts tool lines in the file). Usage: `prompt_cache_hit_tokens` → `cacheRead`,
/// `prompt_cache_miss_tokens` → `input`, `completion_tokens` → `output`. `_meta`, `done`,
/// `status`, `tool_start` and `error` lines are ignored.
pub fn parse_reasonix(text: &str) -> Result<Transcript> {
    let mut t = Transcript::new("reasonix");
    let mut n_tool = 0u64;
    // Index of the assistant message that `tool` lines attach to, while only its results follow.
    let mut open: Option<(usize, usize)> = None;
    for line in text.lines() {
        if line.trim().is_empty() {
            continue;
        }
        let Ok(v) = serde_json::from_str::<Value>(line) else {
            t.skipped_lines += 1;
            continue;
        };
        let role = v.get("role").and_then(Value::as_str).unwrap_or("");
        let ts = v
            .get("ts")
            .and_then(Value::as_str)
            .and_then(parse_iso_ms)
            .map(|x| json!(x as u64))
            .unwrap_or(Value::Null);
        let content = v.get("content").map(content_text).unwrap_or_default();
        match role {
            "user" => {
                t.push(user_text(&content, ts));
                open = None;
            }
            "assistant_final" => {
                let usage = v.get("usage").filter(|u| u.is_object()).map(|u| {
                    let g =
                        |k: &str| u.get(k).and_then(Value::as_f64).unwrap_or(0.0).max(0.0) as u64;
                    let prompt = g("prompt_tokens");
                    let hit = g("prompt_cache_hit_tokens");
                    let miss = if u.get("prompt_cache_miss_tokens").is_some() {
                        g("prompt_cache_miss_tokens")
                    } else {
                        prompt.saturating_sub(hit)
                    };
                    Usage {
                        input: miss,
                        cache_read: hit,
                        cache_write: 0,
                        output: g("completion_tokens"),
                    }
                });
                let mut parts = Vec::new();
                if !content.is_empty() {
                    parts.push(json!({"type": "text", "text": content}));
                }
                if let Some(r) = v
                    .get("reasoning")
                    .and_then(Value::as_str)
                    .filter(|r| !r.is_empty())
                {
                    parts.insert(0, json!({"type": "thinking", "thinking": r}));
                }
                let mut raw = json!({"role": "assistant", "content": parts});
                if let Some(obj) = raw.as_object_mut() {
                    if let Some(m) = v.get("model") {
                        obj.insert("model".into(), m.clone());
                    }
                    if let Some(u) = usage {
                        obj.insert("usage".into(), usage_json(&u));
                    }
                    obj.insert("stopReason".into(), Value::from("stop"));
                    obj.insert("timestamp".into(), ts);
                }
                open = Some((t.messages.len(), t.calls.len()));
                t.push_call(raw, usage);
            }
            "tool" => {
                let Some((mi, _)) = open else {
                    t.skipped_lines += 1;
                    continue;
                };
                n_tool += 1;
                let id = format!("rx{n_tool}");
                let name = v
                    .get("tool")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string();
                let args = match v.get("args") {
                    Some(Value::String(s)) => serde_json::from_str::<Value>(s)
                        .unwrap_or_else(|_| Value::String(s.clone())),
                    Some(other) => other.clone(),
                    None => Value::Object(Map::new()),
                };
                if let Some(m) = t.messages.get(mi) {
                    let mut raw = m.raw().clone();
                    if let Some(Value::Array(c)) = raw.get_mut("content") {
                        c.push(
                            json!({"type": "toolCall", "id": id, "name": name, "arguments": args}),
                        );
                    }
                    if let Some(obj) = raw.as_object_mut() {
                        obj.insert("stopReason".into(), Value::from("toolUse"));
                    }
                    if let (Ok(nm), Some(slot)) = (Message::from_value(raw), t.messages.get_mut(mi))
                    {
                        *slot = nm;
                    }
                }
                let is_error = content.starts_with("ERROR:");
                t.push(json!({"role": "toolResult", "toolCallId": id, "toolName": name,
                    "content": [{"type": "text", "text": content}], "isError": is_error, "timestamp": ts}));
            }
            "_meta" | "done" | "status" | "tool_start" | "error" | "assistant_delta"
            | "tool_call_delta" => {}
            _ => t.skipped_lines += 1,
        }
    }
    Ok(t)
}

// ---------------------------------------------------------------------------------------------
// Helpers

/// Parse an RFC 3339 UTC-or-offset timestamp (`2025-12-08T23:22:54.411Z`,
/// `2026-04-21T13:22:22+02:00`) into ms since the Unix epoch. `None` when malformed.
pub fn parse_iso_ms(s: &str) -> Option<f64> {
    let b = s.trim().as_bytes();
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        let sl = b.get(r)?;
        if sl.is_empty() || !sl.iter().all(u8::is_ascii_digit) {
            return None;
        }
        std::str::from_utf8(sl).ok()?.parse().ok()
    };
    let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    if b.get(4) != Some(&b'-')
        || b.get(7) != Some(&b'-')
        || !matches!(b.get(10), Some(b'T' | b't' | b' '))
    {
        return None;
    }
    let (h, mi, se) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || se > 60 {
        return None;
    }
    let mut i = 19;
    let mut frac_ms = 0.0;
    if b.get(i) == Some(&b'.') {
        let start = i + 1;
        i = start;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        let digits = std::str::from_utf8(b.get(start..i)?).ok()?;
        if !digits.is_empty() {
            frac_ms = format!("0.{digits}").parse::<f64>().ok()? * 1000.0;
        }
    }
    let offset_min: i64 = match b.get(i) {
        None | Some(b'Z' | b'z') => 0,
        Some(sign @ (b'+' | b'-')) => {
            let oh = num(i + 1..i + 3)?;
            let om = if b.get(i + 3) == Some(&b':') {
                num(i + 4..i + 6)?
            } else {
                num(i + 3..i + 5).unwrap_or(0)
            };
            let o = oh * 60 + om;
            if *sign == b'+' {
                o
            } else {
                -o
            }
        }
        _ => return None,
    };
    let days = days_from_civil(y, mo, d);
    let secs = days * 86_400 + h * 3600 + mi * 60 + se - offset_min * 60;
    Some(secs as f64 * 1000.0 + frac_ms)
}

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// True when `m` is an assistant message (a recorded call's output).
pub fn is_assistant(m: &Message) -> bool {
    m.role() == Role::Assistant
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso_timestamps() {
        assert_eq!(parse_iso_ms("1970-01-01T00:00:00Z"), Some(0.0));
        assert_eq!(
            parse_iso_ms("2025-11-20T23:33:50.805Z"),
            Some(1_763_681_630_805.0)
        );
        assert_eq!(
            parse_iso_ms("2025-11-21T01:33:50.805+02:00"),
            Some(1_763_681_630_805.0)
        );
        assert_eq!(parse_iso_ms("garbage"), None);
        assert_eq!(parse_iso_ms("2025-13-01T00:00:00Z"), None);
    }

    #[test]
    fn pi_basic_and_bad_lines() {
        let text = concat!(
            r#"{"type":"session","id":"s","timestamp":"2025-11-20T23:33:50.805Z"}"#,
            "\n{not json\n",
            r#"{"type":"message","timestamp":"2025-11-20T23:33:51.000Z","message":{"role":"user","content":[{"type":"text","text":"hi"}],"timestamp":1}}"#,
            "\n",
            r#"{"type":"message","message":{"role":"assistant","content":[{"type":"toolCall","id":"c1","name":"read","arguments":{"path":"a"}}],"usage":{"input":1,"output":7,"cacheRead":2,"cacheWrite":0},"stopReason":"toolUse","timestamp":2}}"#,
            "\n",
            r#"{"type":"message","message":{"role":"toolResult","toolCallId":"c1","toolName":"read","content":[{"type":"text","text":"x"}],"isError":false,"timestamp":3}}"#,
            "\n",
            r#"{"type":"compaction","summary":"S","firstKeptEntryIndex":1,"tokensBefore":10}"#,
            "\n"
        );
        let t = parse_auto("x.jsonl", text).unwrap();
        assert_eq!(t.format, "pi");
        assert_eq!(t.messages.len(), 3);
        assert_eq!(t.skipped_lines, 1);
        assert_eq!(t.calls.len(), 1);
        assert_eq!(t.calls[0].assistant_index, 1);
        assert_eq!(t.calls[0].output_tokens, 7);
        assert_eq!(t.compactions, vec![(3, "S".to_string())]);
    }
}
