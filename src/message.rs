//! The host's `AgentMessage`: the members the core reads, and a lossless view for the bench.
//!
//! The engine reads a message's [`Fields`], decoded straight from its JSON text
//! ([`Fields::from_json`], [`parse_host`]; the visitors are in `decode.rs`). A [`Message`] keeps
//! the exact JSON value as well (key order and number text preserved by [`serde_json::Value`]),
//! so unknown roles, part types and fields round-trip unchanged. Typed access goes through
//! [`Fields::role`] and [`Fields::parts`], which mirror OpenClaw's shapes:
//!
//! | role | fields read |
//! |---|---|
//! | `user` | `content` (string or text/image parts), `timestamp` |
//! | `assistant` | `content` (text, thinking, toolCall parts), `usage`, `model`, `stopReason` |
//! | `toolResult` | `toolCallId`, `toolName`, `content`, `isError`, `details` |
//! | `bashExecution`, `custom`, `branchSummary`, `compactionSummary` | `summary`, `content`, `customType` |
//! | anything else | nothing: passed through as it came |

use crate::error::{Error, Result};
use crate::tokens;
use serde::de::{Deserialize, IgnoredAny};
use serde_json::{Number, Value};

/// Message role, with the custom roles OpenClaw defines and a catch-all.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Role {
    /// `user`
    User,
    /// `assistant`
    Assistant,
    /// `toolResult`
    ToolResult,
    /// `bashExecution`
    BashExecution,
    /// `custom`
    Custom,
    /// `branchSummary`
    BranchSummary,
    /// `compactionSummary`
    CompactionSummary,
    /// Any other role string (or a missing role, as the empty string).
    Other(String),
}

impl Default for Role {
    /// A message without a `role` string.
    fn default() -> Role {
        Role::Other(String::new())
    }
}

impl Role {
    fn parse(s: &str) -> Role {
        match s {
            "user" => Role::User,
            "assistant" => Role::Assistant,
            "toolResult" => Role::ToolResult,
            "bashExecution" => Role::BashExecution,
            "custom" => Role::Custom,
            "branchSummary" => Role::BranchSummary,
            "compactionSummary" => Role::CompactionSummary,
            other => Role::Other(other.to_string()),
        }
    }
}

/// One content part, borrowed from the message.
#[derive(Debug, Clone, PartialEq)]
pub enum Part<'a> {
    /// `{type:"text", text}`
    Text(&'a str),
    /// `{type:"thinking", thinking}`
    Thinking(&'a str),
    /// `{type:"toolCall", id, name, arguments}`
    ToolCall(ToolCall<'a>),
    /// `{type:"image", data, mimeType}`: only the size of `data` is exposed.
    Image {
        /// `mimeType`
        mime_type: &'a str,
        /// Length of the base64 `data` string.
        data_len: usize,
    },
    /// Unknown part type (kept verbatim in the raw message).
    Other(&'a str),
}

/// A tool call inside an assistant message.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall<'a> {
    /// Call id, matched by a later `toolResult.toolCallId`.
    pub id: &'a str,
    /// Tool name.
    pub name: &'a str,
    /// Arguments object (or whatever the host put there).
    pub arguments: &'a Value,
}

/// The members of a host message the core reads, decoded straight from its JSON text by
/// [`Fields::from_json`] (or from a [`Value`] tree, for a [`Message`]).
///
/// Only these members are decoded; every other member is skipped by the parser (its syntax
/// still checked) without building a value for it: image data, reasoning, a tool's `details`
/// beyond `exitCode`, the host's bookkeeping. Each member reads as a [`Value`] tree would answer
/// it: a member of another JSON type than the one read is absent (`as_str` on a number), and a
/// repeated member takes its last value.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Fields {
    role: Role,
    content: Content,
    tool_call_id: Option<String>,
    tool_name: Option<String>,
    is_error: bool,
    summary: Option<String>,
    output: Option<String>,
    usage: Option<Usage>,
    timestamp: Option<Number>,
    stop_reason: Option<String>,
    model: Option<String>,
    custom_type: Option<String>,
    command: Option<String>,
    exit_code: Option<i64>,
    details_exit_code: Option<i64>,
}

/// `content`: a string, a list of parts, or anything else (no parts).
#[derive(Debug, Clone, PartialEq, Default)]
enum Content {
    #[default]
    None,
    Text(String),
    Parts(Vec<PartBuf>),
}

/// One part as decoded (what [`Part`] borrows from).
#[derive(Debug, Clone, PartialEq)]
enum PartBuf {
    Text(String),
    Thinking(String),
    ToolCall {
        id: String,
        name: String,
        arguments: Value,
    },
    Image {
        mime_type: String,
        data_len: usize,
    },
    Other(String),
}

impl Fields {
    /// Decode the members the core reads from one message's JSON text (as produced by
    /// `JSON.stringify`). The text must be one JSON object; every member is syntax-checked.
    pub fn from_json(s: &str) -> Result<Fields> {
        let bad = |e: serde_json::Error| Error::Input(format!("message is not valid JSON: {e}"));
        if !is_object_text(s) {
            return Err(Error::Input("message must be a JSON object".into()));
        }
        let mut de = serde_json::Deserializer::from_str(s);
        let f = Fields::deserialize(&mut de).map_err(bad)?;
        de.end().map_err(bad)?;
        Ok(f)
    }

    /// The role (missing role → `Other("")`).
    pub fn role(&self) -> Role {
        self.role.clone()
    }

    /// Raw role string.
    pub fn role_str(&self) -> &str {
        match &self.role {
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::ToolResult => "toolResult",
            Role::BashExecution => "bashExecution",
            Role::Custom => "custom",
            Role::BranchSummary => "branchSummary",
            Role::CompactionSummary => "compactionSummary",
            Role::Other(s) => s,
        }
    }

    /// `timestamp` as milliseconds, when present and numeric.
    pub fn timestamp(&self) -> Option<f64> {
        self.timestamp.as_ref().and_then(Number::as_f64)
    }

    /// `timestamp` as the host wrote it, when numeric.
    pub fn timestamp_number(&self) -> Option<&Number> {
        self.timestamp.as_ref()
    }

    /// Content parts. A string `content` is one text part; missing content is no parts.
    pub fn parts(&self) -> Vec<Part<'_>> {
        match &self.content {
            Content::Text(s) => vec![Part::Text(s)],
            Content::Parts(items) => items.iter().map(PartBuf::part).collect(),
            Content::None => Vec::new(),
        }
    }

    /// Image parts: how many, and the bytes of their base64 `data` in all.
    pub fn images(&self) -> (u64, u64) {
        let Content::Parts(items) = &self.content else {
            return (0, 0);
        };
        items.iter().fold((0, 0), |(n, bytes), p| match p {
            PartBuf::Image { data_len, .. } => (n + 1, bytes + *data_len as u64),
            _ => (n, bytes),
        })
    }

    /// Tool calls of an assistant message, in order.
    pub fn tool_calls(&self) -> Vec<ToolCall<'_>> {
        if self.role != Role::Assistant {
            return Vec::new();
        }
        let mut calls = Vec::new();
        for p in self.parts() {
            if let Part::ToolCall(c) = p {
                calls.push(c);
            }
        }
        calls
    }

    /// `toolCallId` of a tool result.
    pub fn tool_call_id(&self) -> Option<&str> {
        if self.role != Role::ToolResult {
            return None;
        }
        self.tool_call_id.as_deref()
    }

    /// `toolName` of a tool result.
    pub fn tool_name(&self) -> Option<&str> {
        self.tool_name.as_deref()
    }

    /// `isError` of a tool result.
    pub fn is_error(&self) -> bool {
        self.is_error
    }

    /// `stopReason` of an assistant message.
    pub fn stop_reason(&self) -> Option<&str> {
        self.stop_reason.as_deref()
    }

    /// `model` of an assistant message.
    pub fn model(&self) -> Option<&str> {
        self.model.as_deref()
    }

    /// `customType` of a custom message.
    pub fn custom_type(&self) -> Option<&str> {
        self.custom_type.as_deref()
    }

    /// `command` of a `bashExecution` message.
    pub fn command(&self) -> Option<&str> {
        self.command.as_deref()
    }

    /// `exitCode` of a `bashExecution` message (an integer).
    pub fn exit_code(&self) -> Option<i64> {
        self.exit_code
    }

    /// `details.exitCode` of a tool result (an integer).
    pub fn details_exit_code(&self) -> Option<i64> {
        self.details_exit_code
    }

    /// All visible text (text parts, and `summary`/string `content` of custom roles), joined by newlines.
    pub fn text(&self) -> String {
        let mut out = String::new();
        let mut add = |t: &str| {
            if !out.is_empty() {
                out.push('\n');
            }
            out.push_str(t);
        };
        for p in self.parts() {
            if let Part::Text(t) = p {
                add(t);
            }
        }
        for t in [&self.summary, &self.output].into_iter().flatten() {
            add(t);
        }
        out
    }

    /// Usage of an assistant message: (input, cacheRead, cacheWrite, output), missing fields as 0.
    pub fn usage(&self) -> Option<Usage> {
        self.usage
    }
}

impl PartBuf {
    fn part(&self) -> Part<'_> {
        match self {
            PartBuf::Text(s) => Part::Text(s),
            PartBuf::Thinking(s) => Part::Thinking(s),
            PartBuf::ToolCall {
                id,
                name,
                arguments,
            } => Part::ToolCall(ToolCall {
                id,
                name,
                arguments,
            }),
            PartBuf::Image {
                mime_type,
                data_len,
            } => Part::Image {
                mime_type,
                data_len: *data_len,
            },
            PartBuf::Other(ty) => Part::Other(ty),
        }
    }
}

/// A host message kept byte-exact (the [`Value`] tree, key order and number text preserved),
/// with the [`Fields`] the core reads. The replay bench and the tests hold messages this way;
/// the engine reads [`Fields`] straight from the text.
#[derive(Debug, Clone, PartialEq)]
pub struct Message {
    raw: Value,
    fields: Fields,
}

impl std::ops::Deref for Message {
    type Target = Fields;
    fn deref(&self) -> &Fields {
        &self.fields
    }
}

impl Message {
    /// Parse one message from JSON text (as produced by `JSON.stringify`).
    pub fn from_json(s: &str) -> Result<Message> {
        let raw: Value = serde_json::from_str(s)
            .map_err(|e| Error::Input(format!("message is not valid JSON: {e}")))?;
        Message::from_value(raw)
    }

    /// Wrap a JSON value; it must be an object.
    pub fn from_value(raw: Value) -> Result<Message> {
        if !raw.is_object() {
            return Err(Error::Input("message must be a JSON object".into()));
        }
        let fields = Fields::deserialize(&raw)
            .map_err(|e| Error::Input(format!("message is not readable: {e}")))?;
        Ok(Message { raw, fields })
    }

    /// An empty object (role `Other("")`): stands in for a message that cannot be read.
    pub fn empty() -> Message {
        Message {
            raw: Value::Object(serde_json::Map::new()),
            fields: Fields::default(),
        }
    }

    /// The exact JSON value.
    pub fn raw(&self) -> &Value {
        &self.raw
    }

    /// The members the core reads.
    pub fn fields(&self) -> &Fields {
        &self.fields
    }

    /// Serialise back; byte-identical to the input for `JSON.stringify` output.
    pub fn to_json(&self) -> String {
        crate::to_json(&self.raw)
    }
}

/// Token usage the host reports on an assistant message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    /// Uncached input tokens.
    pub input: u64,
    /// Cached input tokens.
    pub cache_read: u64,
    /// Tokens written to cache (not billed extra on DeepSeek).
    pub cache_write: u64,
    /// Output tokens.
    pub output: u64,
}

impl Usage {
    /// Whole prompt: input + cacheRead + cacheWrite.
    pub fn prompt(&self) -> u64 {
        self.input + self.cache_read + self.cache_write
    }
}

/// Deepest array/object nesting [`parse_host`] keeps; deeper values become a placeholder
/// string. Half of `serde_json`'s recursion limit (128), so a sanitised text always parses.
pub const MAX_DEPTH: usize = 64;

/// Placeholder for a value nested deeper than [`MAX_DEPTH`].
pub const TOO_DEEP: &str = "[cachefold: nested too deep]";

/// A host message as the core can read it.
#[derive(Debug, Clone, PartialEq)]
pub enum HostMessage {
    /// Read exactly.
    Exact(Fields),
    /// Read after [`sanitize_json`] (lone UTF-16 surrogates → U+FFFD, values nested deeper
    /// than [`MAX_DEPTH`] → [`TOO_DEEP`]); the reason is `lone_surrogate`, `too_deep` or both
    /// joined by `+`. Role, ids and pairing fields are the host's; texts are safe to render.
    Sanitised(Fields, String),
    /// Nothing the core can read as a message (`not_object`, `invalid_json`): opaque.
    Opaque(String),
}

impl HostMessage {
    /// The readable message, if any.
    pub fn message(&self) -> Option<&Fields> {
        match self {
            HostMessage::Exact(m) | HostMessage::Sanitised(m, _) => Some(m),
            HostMessage::Opaque(_) => None,
        }
    }

    /// The message's weight for token estimates: [`tokens::message_weight`] of `json`, the host's
    /// text this was read from, its images counted by part, not by data (an opaque message by
    /// its text).
    pub fn weight(&self, json: &str) -> u64 {
        let (n, bytes) = self.message().map_or((0, 0), Fields::images);
        tokens::message_weight(json, n, bytes)
    }

    /// Why the message was quarantined (`None` when it was read exactly).
    pub fn quarantine(&self) -> Option<&str> {
        match self {
            HostMessage::Exact(_) => None,
            HostMessage::Sanitised(_, r) | HostMessage::Opaque(r) => Some(r),
        }
    }
}

/// Read one host message (JSON text from `JSON.stringify`) without ever failing: exactly when
/// possible, else sanitised, else opaque. The caller keeps the host's bytes; this only decides
/// what the core may read from them.
///
/// Only the members the core reads ([`Fields`]) must decode: a lone surrogate or a deep value in
/// a member it skips (an image's data, a tool's `details`) leaves the message exact.
pub fn parse_host(s: &str) -> HostMessage {
    if !is_object_text(s) {
        let valid = serde_json::from_str::<IgnoredAny>(s).is_ok();
        return HostMessage::Opaque(if valid { "not_object" } else { "invalid_json" }.into());
    }
    if let Ok(f) = Fields::from_json(s) {
        return HostMessage::Exact(f);
    }
    let (clean, surrogates, deep) = sanitize_json(s, MAX_DEPTH);
    let reason = match (surrogates, deep) {
        (true, true) => "lone_surrogate+too_deep",
        (true, false) => "lone_surrogate",
        (false, true) => "too_deep",
        (false, false) => "",
    };
    match Fields::from_json(&clean) {
        Ok(f) if !reason.is_empty() => HostMessage::Sanitised(f, reason.to_string()),
        _ => HostMessage::Opaque("invalid_json".into()),
    }
}

/// Whether JSON text `s` is an object (its first non-blank byte opens one). Tested before
/// decoding: under `arbitrary_precision` a number reaches a visitor as a map.
fn is_object_text(s: &str) -> bool {
    s.trim_start_matches([' ', '\t', '\n', '\r'])
        .starts_with('{')
}

/// `s` with every lone UTF-16 surrogate escape (`\ud83d` not followed by a low surrogate, or
/// a low surrogate on its own) replaced by `\ufffd`, and every array or object nested deeper
/// than `max_depth` replaced by the string [`TOO_DEEP`]. Returns (text, replaced a surrogate,
/// replaced a deep value). Linear; valid JSON stays valid, anything else stays invalid.
pub fn sanitize_json(s: &str, max_depth: usize) -> (String, bool, bool) {
    let b = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    let (mut surrogates, mut deep) = (false, false);
    let mut depth = 0usize;
    let mut i = 0usize;
    let mut copied = 0usize; // bytes of `s` before `i` not yet copied
    let hex4 = |at: usize| -> Option<u32> {
        let h = s.get(at..at + 4)?;
        if h.bytes().all(|c| c.is_ascii_hexdigit()) {
            u32::from_str_radix(h, 16).ok()
        } else {
            None
        }
    };
    while i < b.len() {
        match b[i] {
            b'"' => {
                // A string: scan to its end, fixing lone surrogate escapes.
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    if b[i] != b'\\' {
                        i += 1;
                        continue;
                    }
                    if b.get(i + 1) != Some(&b'u') {
                        i += 2;
                        continue;
                    }
                    let Some(u) = hex4(i + 2) else {
                        i += 2;
                        continue;
                    };
                    let high = (0xD800..0xDC00).contains(&u);
                    let low = (0xDC00..0xE000).contains(&u);
                    if high
                        && s.get(i + 6..i + 8) == Some("\\u")
                        && hex4(i + 8).is_some_and(|l| (0xDC00..0xE000).contains(&l))
                    {
                        i += 12;
                    } else if high || low {
                        out.push_str(&s[copied..i]);
                        out.push_str("\\ufffd");
                        surrogates = true;
                        i += 6;
                        copied = i;
                    } else {
                        i += 6;
                    }
                }
                i += 1;
            }
            b'[' | b'{' if depth >= max_depth => {
                // Skip the whole value (strings inside may hold brackets).
                out.push_str(&s[copied..i]);
                let mut d = 0usize;
                let mut in_str = false;
                while i < b.len() {
                    let c = b[i];
                    if in_str {
                        if c == b'\\' {
                            i += 1;
                        } else if c == b'"' {
                            in_str = false;
                        }
                    } else if c == b'"' {
                        in_str = true;
                    } else if c == b'[' || c == b'{' {
                        d += 1;
                    } else if c == b']' || c == b'}' {
                        d -= 1;
                        if d == 0 {
                            i += 1;
                            break;
                        }
                    }
                    i += 1;
                }
                out.push('"');
                out.push_str(TOO_DEEP);
                out.push('"');
                deep = true;
                copied = i.min(b.len());
            }
            b'[' | b'{' => {
                depth += 1;
                i += 1;
            }
            b']' | b'}' => {
                depth = depth.saturating_sub(1);
                i += 1;
            }
            _ => i += 1,
        }
    }
    out.push_str(s.get(copied..).unwrap_or(""));
    (out, surrogates, deep)
}

/// Member `key` of `v` when it is an object (`None` otherwise): what `Value::get` answers, found
/// by comparing the keys in order. Tool arguments and usage objects have a handful of members
/// and the core reads a few fixed ones; `Value::get` hashes the key with SipHash
/// (`preserve_order` maps are `IndexMap`s) on every call. A parsed object holds each key once
/// (a repeated key keeps its first place and its last value), so both find the same member.
#[inline(never)]
pub fn field<'a>(v: &'a Value, key: &str) -> Option<&'a Value> {
    let map = v.as_object()?;
    map.iter().find(|(k, _)| k.as_str() == key).map(|(_, v)| v)
}

mod decode;

#[cfg(test)]
mod oracle_tests;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_unknown_fields_byte_for_byte() {
        let src = r#"{"role":"weird","zeta":1,"alpha":{"b":[1.5,1e+21,-1.25e-7,12345678901234567890]},"content":[{"type":"hologram","x":"\u001f é"}],"__openclaw":{"runId":"r"}}"#;
        let m = Message::from_json(src).unwrap();
        assert_eq!(m.role(), Role::Other("weird".into()));
        assert_eq!(m.parts(), vec![Part::Other("hologram")]);
        assert_eq!(m.to_json(), src);
    }

    #[test]
    fn typed_views() {
        let a = Message::from_json(
            r#"{"role":"assistant","content":[{"type":"thinking","thinking":"hm"},{"type":"toolCall","id":"c1","name":"read","arguments":{"path":"a.txt"}}],"usage":{"input":10,"cacheRead":90,"cacheWrite":0,"output":5}}"#,
        )
        .unwrap();
        let calls = a.tool_calls();
        assert_eq!(calls.len(), 1);
        assert_eq!(calls[0].id, "c1");
        assert_eq!(calls[0].arguments["path"], "a.txt");
        assert_eq!(a.usage().unwrap().prompt(), 100);
        let r = Message::from_json(r#"{"role":"toolResult","toolCallId":"c1","toolName":"read","content":[{"type":"text","text":"hi"}],"isError":false}"#).unwrap();
        assert_eq!(r.tool_call_id(), Some("c1"));
        assert_eq!(r.text(), "hi");
        let u =
            Message::from_json(r#"{"role":"user","content":"plain","timestamp":1700000000000}"#)
                .unwrap();
        assert_eq!(u.text(), "plain");
        assert_eq!(u.timestamp(), Some(1.7e12));
    }

    /// `field` finds what `Value::get` finds: in order, a repeated key (its first place and
    /// last value), a missing key, a key that is a prefix of another, and no object at all.
    #[test]
    fn field_is_value_get() {
        let v: Value = serde_json::from_str(
            r#"{"role":"user","rolex":1,"content":"a","role":"assistant","":null,"é":[1]}"#,
        )
        .unwrap();
        for key in ["role", "rolex", "rol", "content", "", "é", "missing"] {
            assert_eq!(field(&v, key), v.get(key), "{key}");
        }
        assert_eq!(field(&v, "role"), Some(&Value::from("assistant")));
        for not_object in [
            Value::Null,
            Value::from("role"),
            serde_json::json!(["role"]),
        ] {
            assert_eq!(field(&not_object, "role"), None);
        }
    }

    #[test]
    fn rejects_non_objects() {
        assert_eq!(
            Message::from_json("[1]").unwrap_err().code(),
            "CACHEFOLD_INPUT"
        );
        assert_eq!(
            Message::from_json("{").unwrap_err().code(),
            "CACHEFOLD_INPUT"
        );
    }

    #[test]
    fn host_messages_never_fail_to_read() {
        // A lone high surrogate (text cut inside an emoji), as JSON.stringify writes it.
        let cut = r#"{"role":"toolResult","toolCallId":"c1","toolName":"read","content":[{"type":"text","text":"ok \ud83d"}]}"#;
        assert!(Message::from_json(cut).is_err());
        let h = parse_host(cut);
        assert_eq!(h.quarantine(), Some("lone_surrogate"));
        let m = h.message().unwrap();
        assert_eq!(m.tool_call_id(), Some("c1"));
        assert_eq!(m.text(), "ok \u{fffd}");
        // A valid pair and other escapes are untouched; a lone low surrogate is replaced.
        let pair = r#"{"role":"user","content":"\ud83d\ude00 \n \\ud83d \udc00x"}"#;
        let (clean, sur, deep) = sanitize_json(pair, MAX_DEPTH);
        assert_eq!(
            clean,
            r#"{"role":"user","content":"\ud83d\ude00 \n \\ud83d \ufffdx"}"#
        );
        assert!(sur && !deep);
        // Nesting past serde_json's limit in a member the core reads (tool call arguments).
        let deep_args = format!(
            r#"{{"role":"assistant","content":[{{"type":"toolCall","id":"c2","name":"t","arguments":{}"x]"{}}}]}}"#,
            "[".repeat(130),
            "]".repeat(130)
        );
        assert!(Message::from_json(&deep_args).is_err());
        let h = parse_host(&deep_args);
        assert_eq!(h.quarantine(), Some("too_deep"));
        let calls = h.message().unwrap().tool_calls();
        assert_eq!((calls[0].id, calls[0].name), ("c2", "t"));
        // In members it skips (a tool's details, an unknown member), neither deep nesting nor a
        // lone surrogate keeps a message from being read exactly.
        let skipped = format!(
            r#"{{"role":"toolResult","toolCallId":"c3","details":{{"exitCode":1,"x":{}"x]"{}}},"y":"\ud83d","content":"ok"}}"#,
            "[".repeat(130),
            "]".repeat(130)
        );
        assert!(Message::from_json(&skipped).is_err());
        let h = parse_host(&skipped);
        assert_eq!(h.quarantine(), None);
        let m = h.message().unwrap();
        assert_eq!((m.tool_call_id(), m.text().as_str()), (Some("c3"), "ok"));
        assert_eq!(m.details_exit_code(), Some(1));
        // Not a message at all.
        for (j, why) in [
            ("null", "not_object"),
            ("42", "not_object"),
            ("\"12345678901234567890n\"", "not_object"),
            ("{", "invalid_json"),
        ] {
            assert_eq!(parse_host(j), HostMessage::Opaque(why.into()), "{j}");
        }
        assert_eq!(parse_host(r#"{"role":"user"}"#).quarantine(), None);
    }
}
