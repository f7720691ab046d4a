//! [`Fields`] read straight from the text against the accessors it replaced: the same questions
//! asked of the whole [`Value`] tree (`field` look-ups), kept here as the oracle. Messages are
//! generated as text, so that repeated members, members of the wrong type, numbers in every
//! form and unknown members all occur.

use super::*;
use proptest::prelude::*;

/// The tree accessors [`Fields`] replaced, as they read a parsed message.
mod tree {
    use super::*;

    fn s<'a>(v: &'a Value, k: &str) -> Option<&'a str> {
        field(v, k).and_then(Value::as_str)
    }

    pub fn role_str(v: &Value) -> &str {
        s(v, "role").unwrap_or("")
    }

    fn part_of(v: &Value) -> Part<'_> {
        let ty = s(v, "type").unwrap_or("");
        let t = |k: &str| s(v, k).unwrap_or("");
        match ty {
            "text" => Part::Text(t("text")),
            "thinking" => Part::Thinking(t("thinking")),
            "toolCall" => Part::ToolCall(ToolCall {
                id: t("id"),
                name: t("name"),
                arguments: field(v, "arguments").unwrap_or(&Value::Null),
            }),
            "image" => Part::Image {
                mime_type: t("mimeType"),
                data_len: t("data").len(),
            },
            other => Part::Other(other),
        }
    }

    pub fn parts(v: &Value) -> Vec<Part<'_>> {
        match field(v, "content") {
            Some(Value::String(s)) => vec![Part::Text(s)],
            Some(Value::Array(items)) => items.iter().map(part_of).collect(),
            _ => Vec::new(),
        }
    }

    pub fn text(v: &Value) -> String {
        let mut out: Vec<&str> = Vec::new();
        for p in parts(v) {
            if let Part::Text(t) = p {
                out.push(t);
            }
        }
        out.extend(s(v, "summary"));
        out.extend(s(v, "output"));
        out.join("\n")
    }

    pub fn usage(v: &Value) -> Option<Usage> {
        let u = field(v, "usage")?;
        let g = |k: &str| field(u, k).and_then(Value::as_f64).unwrap_or(0.0).max(0.0) as u64;
        Some(Usage {
            input: g("input"),
            cache_read: g("cacheRead"),
            cache_write: g("cacheWrite"),
            output: g("output"),
        })
    }

    pub fn str_of<'a>(v: &'a Value, k: &str) -> Option<&'a str> {
        s(v, k)
    }

    pub fn i64_of(v: &Value, k: &str) -> Option<i64> {
        field(v, k).and_then(Value::as_i64)
    }
}

/// Every accessor of `f` answers what the tree accessors answer on `v`.
fn assert_reads_like(f: &Fields, v: &Value) -> std::result::Result<(), TestCaseError> {
    let role = tree::role_str(v);
    prop_assert_eq!(f.role_str(), role);
    prop_assert_eq!(f.role(), Role::parse(role));
    prop_assert_eq!(f.parts(), tree::parts(v));
    prop_assert_eq!(f.text(), tree::text(v));
    let calls: Vec<ToolCall> = if role == "assistant" {
        tree::parts(v)
            .into_iter()
            .filter_map(|p| match p {
                Part::ToolCall(c) => Some(c),
                _ => None,
            })
            .collect()
    } else {
        Vec::new()
    };
    prop_assert_eq!(f.tool_calls(), calls);
    let call_id = tree::str_of(v, "toolCallId").filter(|_| role == "toolResult");
    prop_assert_eq!(f.tool_call_id(), call_id);
    prop_assert_eq!(f.tool_name(), tree::str_of(v, "toolName"));
    let is_error = field(v, "isError")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    prop_assert_eq!(f.is_error(), is_error);
    prop_assert_eq!(f.usage(), tree::usage(v));
    let ts = field(v, "timestamp").and_then(Value::as_number);
    prop_assert_eq!(f.timestamp_number(), ts);
    prop_assert_eq!(f.timestamp(), ts.and_then(Number::as_f64));
    prop_assert_eq!(f.stop_reason(), tree::str_of(v, "stopReason"));
    prop_assert_eq!(f.model(), v.get("model").and_then(Value::as_str));
    prop_assert_eq!(f.custom_type(), tree::str_of(v, "customType"));
    prop_assert_eq!(f.command(), tree::str_of(v, "command"));
    prop_assert_eq!(f.exit_code(), tree::i64_of(v, "exitCode"));
    let details = field(v, "details").and_then(|d| tree::i64_of(d, "exitCode"));
    prop_assert_eq!(f.details_exit_code(), details);
    Ok(())
}

/// JSON text of a scalar, including the forms a host writes (escapes, big and float numbers).
fn scalar() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("null".to_string()),
        Just("true".to_string()),
        Just("false".to_string()),
        Just("0".to_string()),
        Just("-3".to_string()),
        Just("1700000000000".to_string()),
        Just("12345678901234567890".to_string()),
        Just("1.50".to_string()),
        Just("-1.25e-7".to_string()),
        Just("1e+21".to_string()),
        Just("4.0".to_string()),
        "[a-z é]{0,12}".prop_map(|s| serde_json::to_string(&s).unwrap()),
        Just(r#""line\nnext \"q\" \\ \u00e9 \ud83d\ude00""#.to_string()),
        prop::sample::select(vec![
            "user",
            "assistant",
            "toolResult",
            "custom",
            "bashExecution",
            "text",
            "thinking",
            "toolCall",
            "image",
            "error",
            "aborted",
            "openclaw.runtime-context",
        ])
        .prop_map(|s| format!("\"{s}\"")),
    ]
}

/// Member names a message or part may carry: the ones read, and others.
const NAMES: &[&str] = &[
    "role",
    "content",
    "toolCallId",
    "toolName",
    "isError",
    "summary",
    "output",
    "usage",
    "timestamp",
    "stopReason",
    "model",
    "customType",
    "command",
    "exitCode",
    "details",
    "type",
    "text",
    "thinking",
    "id",
    "name",
    "arguments",
    "mimeType",
    "data",
    "input",
    "cacheRead",
    "cacheWrite",
    "__openclaw",
    "x",
];

/// JSON text of any value, nested a few levels, objects with repeated members.
fn json_text() -> impl Strategy<Value = String> {
    scalar().prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(|xs| format!("[{}]", xs.join(","))),
            prop::collection::vec((prop::sample::select(NAMES), inner), 0..7).prop_map(|ms| {
                let ms: Vec<String> = ms.iter().map(|(k, v)| format!("\"{k}\":{v}")).collect();
                format!("{{{}}}", ms.join(","))
            }),
        ]
    })
}

/// A message: an object of members drawn mostly from the ones a message is read for (the first
/// 15 of [`NAMES`]), so that a member is often repeated, with JSON blanks.
fn message_text() -> impl Strategy<Value = String> {
    let name = prop_oneof![
        4 => prop::sample::select(&NAMES[..15]),
        1 => prop::sample::select(NAMES),
    ];
    let member = (name, json_text());
    (prop::collection::vec(member, 0..14), prop::bool::ANY).prop_map(|(ms, spaced)| {
        let sep = if spaced { " ,\n\t" } else { "," };
        let ms: Vec<String> = ms.iter().map(|(k, v)| format!("\"{k}\":{v}")).collect();
        if spaced {
            format!(" \r\n{{ {} }} ", ms.join(sep))
        } else {
            format!("{{{}}}", ms.join(sep))
        }
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2_000))]

    /// Read from text and read from a tree, a message answers every question as the tree did.
    #[test]
    fn fields_read_like_the_tree(s in message_text()) {
        let v: Value = serde_json::from_str(&s).unwrap();
        let f = Fields::from_json(&s).unwrap();
        assert_reads_like(&f, &v)?;
        prop_assert_eq!(&Fields::deserialize(&v).unwrap(), &f);
        prop_assert_eq!(parse_host(&s), HostMessage::Exact(f));
    }
}

/// Hand-picked shapes: a string content, a repeated member whose last value has another type,
/// a part that is not an object, numbers where strings are read, a huge image.
#[test]
fn fields_read_like_the_tree_on_edge_shapes() {
    let data = "A".repeat(100_000);
    let cases = [
        r#"{"role":"user","content":"plain","timestamp":1700000000000}"#.to_string(),
        r#"{"role":"user","role":5,"content":"a","content":7}"#.to_string(),
        r#"{"role":"assistant","content":[1,"x",null,{"type":"toolCall","id":"c","name":"n"},{"type":"text","text":{"no":1}},[]],"stopReason":"error"}"#.to_string(),
        r#"{"role":"toolResult","toolCallId":"c","toolName":7,"isError":"true","details":{"exitCode":2,"exitCode":1.5},"usage":null}"#.to_string(),
        r#"{"role":"bashExecution","command":"ls","exitCode":-1,"output":"ok","summary":"s","timestamp":"1"}"#.to_string(),
        format!(r#"{{"role":"user","content":[{{"type":"image","mimeType":"image/png","data":"{data}"}},{{"type":"text","text":"see"}}]}}"#),
        r#"{"content":[{"text":"before the type","type":"text"}],"usage":{"input":-5,"cacheRead":1e3,"output":"9"}}"#.to_string(),
        r#"{"role":"custom","customType":"openclaw.runtime-context","content":"x","model":"m","model":"deepseek"}"#.to_string(),
    ];
    for s in &cases {
        let v: Value = serde_json::from_str(s).unwrap();
        let f = Fields::from_json(s).unwrap();
        assert_reads_like(&f, &v).unwrap_or_else(|e| panic!("{s}: {e}"));
        assert_eq!(Fields::deserialize(&v).unwrap(), f, "{s}");
    }
}
