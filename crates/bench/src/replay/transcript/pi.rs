//! pi / OpenClaw session JSONL (and the rows of OpenClaw's SQLite store, which hold the same lines).

#[allow(unused_imports)]
use super::*;

/// Parse a pi (OpenClaw) session JSONL file.
///
/// Entries: `session` header (ignored), `message` (user / assistant / toolResult kept verbatim;
/// `bashExecution` rendered as the user text pi sends the model; `custom` messages with a
/// string or text content kept as user text), `custom_message` and `branch_summary` (sent to
/// the model as user text by pi), `compaction` (recorded aside), everything else ignored.
/// Version ≥ 2 files carry `id`/`parentId`: the active branch (the chain ending at the last
/// entry) is replayed; files without ids are replayed in file order.
pub fn parse_pi(text: &str) -> Result<Transcript> {
    let (values, skipped) = json_objects(non_blank(text));
    let mut t = parse_pi_values(values)?;
    t.skipped_lines += skipped;
    Ok(t)
}

/// Parse pi entries that are already JSON lines (one entry per string), e.g. the
/// `event_json` column of OpenClaw's `transcript_events` table in `seq` order.
pub fn parse_pi_lines<'a>(lines: impl IntoIterator<Item = &'a str>) -> Result<Transcript> {
    let (values, skipped) = json_objects(lines);
    let mut t = parse_pi_values(values)?;
    t.skipped_lines += skipped;
    Ok(t)
}

/// An assistant message OpenClaw authored itself: provider `openclaw` with model
/// `gateway-injected` or `delivery-mirror`, or a message carrying a delivery-mirror marker.
fn transcript_only(m: &Value) -> bool {
    let s = |k: &str| m.get(k).and_then(Value::as_str);
    (s("provider") == Some("openclaw")
        && matches!(s("model"), Some("gateway-injected" | "delivery-mirror")))
        || m.get("openclawDeliveryMirror")
            .and_then(|v| v.get("kind"))
            .and_then(Value::as_str)
            .is_some()
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
                    // Replies OpenClaw writes itself (slash-command answers, `chat.inject`,
                    // channel delivery mirrors) are transcript-only: no model call, and the host
                    // never sends them to a provider (`isTranscriptOnlyOpenClawAssistantMessage`).
                    "assistant" if transcript_only(&m) => {}
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

pub(super) fn user_text(text: &str, ts: Value) -> Value {
    json!({"role": "user", "content": [{"type": "text", "text": text}], "timestamp": ts})
}

/// Text of a string content or of the text parts of a content array.
pub(super) fn content_text(c: &Value) -> String {
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
