//! The host's `AgentMessage`, mirrored as a lossless view.
//!
//! A [`Message`] keeps the exact JSON value the host sent (key order and number text
//! preserved: `serde_json` is built with `preserve_order` and `arbitrary_precision`), so
//! unknown roles, part types and fields round-trip unchanged. Typed access goes through
//! [`Message::role`] and [`Message::parts`], which mirror OpenClaw's shapes:
//!
//! | role | fields read |
//! |---|---|
//! | `user` | `content` (string or text/image parts), `timestamp` |
//! | `assistant` | `content` (text, thinking, toolCall parts), `usage`, `model`, `stopReason` |
//! | `toolResult` | `toolCallId`, `toolName`, `content`, `isError`, `details` |
//! | `bashExecution`, `custom`, `branchSummary`, `compactionSummary` | `summary`, `content`, `customType` |
//! | anything else | nothing: passed through as it came |

use crate::error::{Error, Result};
use serde_json::Value;

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

/// A host message kept byte-exact, with typed accessors.
#[derive(Debug, Clone, PartialEq)]
pub struct Message {
    raw: Value,
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
        Ok(Message { raw })
    }

    /// The exact JSON value.
    pub fn raw(&self) -> &Value {
        &self.raw
    }

    /// Serialise back; byte-identical to the input for `JSON.stringify` output.
    pub fn to_json(&self) -> String {
        serde_json::to_string(&self.raw).unwrap_or_default()
    }

    /// The role (missing role → `Other("")`).
    pub fn role(&self) -> Role {
        Role::parse(self.raw.get("role").and_then(Value::as_str).unwrap_or(""))
    }

    /// Raw role string.
    pub fn role_str(&self) -> &str {
        self.raw.get("role").and_then(Value::as_str).unwrap_or("")
    }

    /// `timestamp` as milliseconds, when present and numeric.
    pub fn timestamp(&self) -> Option<f64> {
        self.raw.get("timestamp").and_then(Value::as_f64)
    }

    /// Content parts. A string `content` is one text part; missing content is no parts.
    pub fn parts(&self) -> Vec<Part<'_>> {
        match self.raw.get("content") {
            Some(Value::String(s)) => vec![Part::Text(s)],
            Some(Value::Array(items)) => items.iter().map(part_of).collect(),
            _ => Vec::new(),
        }
    }

    /// Tool calls of an assistant message, in order.
    pub fn tool_calls(&self) -> Vec<ToolCall<'_>> {
        if self.role() != Role::Assistant {
            return Vec::new();
        }
        self.parts()
            .into_iter()
            .filter_map(|p| match p {
                Part::ToolCall(c) => Some(c),
                _ => None,
            })
            .collect()
    }

    /// `toolCallId` of a tool result.
    pub fn tool_call_id(&self) -> Option<&str> {
        if self.role() != Role::ToolResult {
            return None;
        }
        self.raw.get("toolCallId").and_then(Value::as_str)
    }

    /// `toolName` of a tool result.
    pub fn tool_name(&self) -> Option<&str> {
        self.raw.get("toolName").and_then(Value::as_str)
    }

    /// `isError` of a tool result.
    pub fn is_error(&self) -> bool {
        self.raw
            .get("isError")
            .and_then(Value::as_bool)
            .unwrap_or(false)
    }

    /// All visible text (text parts, and `summary`/string `content` of custom roles), joined by newlines.
    pub fn text(&self) -> String {
        let mut out = String::new();
        for p in self.parts() {
            if let Part::Text(t) = p {
                if !out.is_empty() {
                    out.push('\n');
                }
                out.push_str(t);
            }
        }
        if let Some(Value::String(s)) = self.raw.get("summary") {
            if !out.is_empty() {
                out.push('\n');
            }
            out.push_str(s);
        }
        if let Some(Value::String(s)) = self.raw.get("output") {
            if !out.is_empty() {
                out.push('\n');
            }
            out.push_str(s);
        }
        out
    }

    /// Usage of an assistant message: (input, cacheRead, cacheWrite, output), missing fields as 0.
    pub fn usage(&self) -> Option<Usage> {
        let u = self.raw.get("usage")?;
        let g = |k: &str| u.get(k).and_then(Value::as_f64).unwrap_or(0.0).max(0.0) as u64;
        Some(Usage {
            input: g("input"),
            cache_read: g("cacheRead"),
            cache_write: g("cacheWrite"),
            output: g("output"),
        })
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

fn part_of(v: &Value) -> Part<'_> {
    let ty = v.get("type").and_then(Value::as_str).unwrap_or("");
    let s = |k: &str| v.get(k).and_then(Value::as_str).unwrap_or("");
    match ty {
        "text" => Part::Text(s("text")),
        "thinking" => Part::Thinking(s("thinking")),
        "toolCall" => Part::ToolCall(ToolCall {
            id: s("id"),
            name: s("name"),
            arguments: v.get("arguments").unwrap_or(&Value::Null),
        }),
        "image" => Part::Image {
            mime_type: s("mimeType"),
            data_len: s("data").len(),
        },
        other => Part::Other(other),
    }
}

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
}
