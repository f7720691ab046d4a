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

use ::cachefold::error::{Error, Result};
use ::cachefold::message::{Message, Role, Usage};
use serde_json::json;
use serde_json::{Map, Value};
use std::collections::{BTreeMap, BTreeSet};

mod claude;
mod pi;
mod reasonix;

pub use claude::parse_claude_code;
use claude::usage_json;
use pi::{content_text, user_text};
pub use pi::{parse_pi, parse_pi_lines, parse_pi_values, PiReader};
pub use reasonix::parse_reasonix;

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
        if let Ok(m) = Message::from_value(raw) {
            self.push_call_message(m, usage);
        }
    }

    /// [`Transcript::push_call`] of a message already wrapped.
    fn push_call_message(&mut self, m: Message, usage: Option<Usage>) {
        let ts = m
            .raw()
            .get("timestamp")
            .and_then(Value::as_f64)
            .unwrap_or(0.0);
        self.calls.push(Call {
            assistant_index: self.messages.len(),
            timestamp_ms: ts,
            usage,
            output_tokens: usage.map(|u| u.output).unwrap_or(0),
        });
        self.messages.push(m);
    }

    fn push(&mut self, raw: Value) {
        if let Ok(m) = Message::from_value(raw) {
            self.messages.push(m);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Format detection

/// The JSON objects among `lines`, in order, and how many lines were not one (each reader
/// counts those in [`Transcript::skipped_lines`]).
pub(crate) fn json_objects<'a>(lines: impl IntoIterator<Item = &'a str>) -> (Vec<Value>, u64) {
    let mut skipped = 0u64;
    let mut values = Vec::new();
    for line in lines {
        match serde_json::from_str::<Value>(line) {
            Ok(v) if v.is_object() => values.push(v),
            _ => skipped += 1,
        }
    }
    (values, skipped)
}

/// The lines of a JSONL file that are not blank.
pub(crate) fn non_blank(text: &str) -> impl Iterator<Item = &str> {
    text.lines().filter(|l| !l.trim().is_empty())
}

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

    #[test]
    fn pi_host_written_replies_are_not_calls() {
        let lines = [
            r#"{"type":"message","message":{"role":"user","content":"hi","timestamp":1}}"#,
            r#"{"type":"message","message":{"role":"assistant","content":[{"type":"text","text":"hello"}],"provider":"fake","model":"m","usage":{"input":5,"output":2,"cacheRead":0,"cacheWrite":0},"timestamp":2}}"#,
            r#"{"type":"message","message":{"role":"user","content":"/cachefold","timestamp":3}}"#,
            r#"{"type":"message","message":{"role":"assistant","content":[{"type":"text","text":"cachefold: active"}],"provider":"openclaw","model":"gateway-injected","timestamp":4}}"#,
            r#"{"type":"message","message":{"role":"assistant","content":[{"type":"text","text":"sent"}],"openclawDeliveryMirror":{"kind":"channel-final"},"timestamp":5}}"#,
        ];
        let t = parse_pi_lines(lines).unwrap();
        assert_eq!(t.calls.len(), 1);
        assert_eq!(t.messages.len(), 3);
        assert_eq!(t.skipped_lines, 0);
    }
}
