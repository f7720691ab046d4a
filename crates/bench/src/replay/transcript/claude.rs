//! Claude Code transcript JSONL (main session or subagent file).

#[allow(unused_imports)]
use super::*;

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
    let (values, skipped) = json_objects(non_blank(text));
    t.skipped_lines += skipped;
    for v in values {
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

pub(super) fn usage_json(u: &Usage) -> Value {
    json!({"input": u.input, "output": u.output, "cacheRead": u.cache_read, "cacheWrite": u.cache_write})
}
