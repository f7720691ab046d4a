//! Reasonix transcript JSONL.

#[allow(unused_imports)]
use super::*;

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
    let (values, skipped) = json_objects(non_blank(text));
    t.skipped_lines += skipped;
    for v in values {
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
