//! The streamed pi reader ([`PiReader`], typed entries) gives the transcript the reader gave
//! when every line was kept as a `serde_json::Value` (the oracle below is that reader,
//! unchanged), on crafted transcripts: every entry type, branches, cycles and malformed lines.

use super::*;

/// The reader before [`PiReader`]: every line decoded into a JSON value and kept, the
/// message cloned out of its entry.
fn oracle_lines<'a>(lines: impl IntoIterator<Item = &'a str>) -> Transcript {
    let (values, skipped) = json_objects(lines);
    let mut t = oracle_values(values);
    t.skipped_lines += skipped;
    t
}

fn oracle_values(entries: Vec<Value>) -> Transcript {
    let mut t = Transcript::new("pi");
    let entries = oracle_branch(entries);
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
            _ => {}
        }
    }
    t
}

fn oracle_branch(entries: Vec<Value>) -> Vec<Value> {
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
            break;
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

#[path = "../../../tests/rng/mod.rs"]
mod rng;
use rng::Rng;

/// One crafted message object (as JSON text), any role the reader knows and some it does not.
fn message(r: &mut Rng, k: usize) -> String {
    let ts = r.pick(&[r#","timestamp":1700000000000"#, r#","timestamp":"x""#, ""]);
    let usage = r.pick(&[
        r#","usage":{"input":3,"output":7,"cacheRead":20,"cacheWrite":0}"#,
        r#","usage":{"input":3}"#,
        r#","usage":null"#,
        "",
    ]);
    match r.below(12) {
        0 | 1 => format!(
            r#"{{"role":"user","content":[{{"type":"text","text":"task {k} src/main.rs"}}]{ts}}}"#
        ),
        2 => format!(r#"{{"role":"user","content":"plain {k}"{ts}}}"#),
        3 | 4 => format!(
            r#"{{"role":"assistant","content":[{{"type":"thinking","thinking":"hm {k}"}},{{"type":"toolCall","id":"c{k}","name":"read","arguments":{{"path":"a{k}.rs"}}}}]{usage},"stopReason":"toolUse"{ts}}}"#
        ),
        5 => format!(
            r#"{{"role":"assistant","content":[{{"type":"text","text":"done {k}"}}],"provider":"{}","model":"{}"{usage}{ts}}}"#,
            r.pick(&["openclaw", "deepseek"]),
            r.pick(&["gateway-injected", "delivery-mirror", "deepseek-v4-flash"])
        ),
        6 => format!(
            r#"{{"role":"assistant","content":[{{"type":"text","text":"sent"}}],"openclawDeliveryMirror":{}{ts}}}"#,
            r.pick(&[r#"{"kind":"channel-final"}"#, r#"{"kind":3}"#, "{}"])
        ),
        7 => format!(
            r#"{{"role":"toolResult","toolCallId":"c{k}","toolName":"read","content":[{{"type":"text","text":"fn main() {{}} {k}"}}],"isError":false{ts}}}"#
        ),
        8 => format!(
            r#"{{"role":"bashExecution","command":"ls {k}","output":"{}","exitCode":{},"cancelled":{}{ts}}}"#,
            r.pick(&["", "a\nb"]),
            r.pick(&["0", "2", "null"]),
            r.pick(&["true", "false"])
        ),
        9 => format!(
            r#"{{"role":"{}","content":{}{ts}}}"#,
            r.pick(&["custom", "branchSummary", "compactionSummary"]),
            r.pick(&[r#""note""#, r#"[{"type":"text","text":"n"}]"#, "[]", "null"])
        ),
        10 => format!(
            r#"{{"role":"{}","content":"x"{ts}}}"#,
            r.pick(&["system", "", "tool"])
        ),
        _ => format!(r#"{{"content":"no role"{ts}}}"#),
    }
}

/// One crafted line: an entry of any type (with or without ids), or a malformed line.
fn line(r: &mut Rng, k: usize, ids: usize, linked: bool) -> String {
    let id = |r: &mut Rng| -> String {
        match r.below(6) {
            0 => String::new(),
            1 => format!(r#","id":{}"#, r.below(5)),
            _ => format!(r#","id":"e{}""#, r.below(ids.max(1))),
        }
    };
    let parent = |r: &mut Rng| -> String {
        match r.below(6) {
            0 | 1 => String::new(),
            2 => r#","parentId":null"#.to_string(),
            3 => r#","parentId":7"#.to_string(),
            _ => format!(r#","parentId":"e{}""#, r.below(ids.max(1))),
        }
    };
    let ets = r.pick(&[
        r#","timestamp":"2026-01-01T00:00:01.500Z""#,
        r#","timestamp":"garbage""#,
        r#","timestamp":5"#,
        "",
    ]);
    let (i, p) = if linked {
        (id(r), parent(r))
    } else {
        (String::new(), String::new())
    };
    match r.below(16) {
        0..=6 => format!(
            r#"{{"type":"message"{i}{p}{ets},"message":{}}}"#,
            message(r, k)
        ),
        7 => format!(
            r#"{{"type":"message"{i}{p},"message":{}}}"#,
            r.pick(&["null", "\"m\"", "[1]", "3"])
        ),
        8 => format!(
            r#"{{"type":"compaction"{i}{p},"summary":{},"firstKeptEntryIndex":1}}"#,
            r.pick(&[r#""S""#, "4", "null"])
        ),
        9 => format!(
            r#"{{"type":"{}"{i}{p}{ets}{}{}}}"#,
            r.pick(&["custom_message", "branch_summary"]),
            r.pick(&[
                r#","content":"hello""#,
                r#","content":[{"type":"text","text":"a"},"b",{"x":1}]"#,
                r#","content":null"#,
                ""
            ]),
            r.pick(&[r#","summary":"sum""#, r#","summary":1"#, ""])
        ),
        10 => format!(
            r#"{{"type":"{}"{i}{p}{ets},"cwd":"/w"}}"#,
            r.pick(&["session", "model_change", "label", "custom"])
        ),
        11 => format!(
            r#"{{"type":{}{i}{p},"message":{}}}"#,
            r.pick(&["1", "null", "[]"]),
            message(r, k)
        ),
        // A key given twice: a JSON value keeps the last one.
        12 => format!(
            r#"{{"type":"compaction","type":"message"{i}{p},"message":{},"message":{}}}"#,
            message(r, k),
            message(r, k + 1)
        ),
        // Whitespace in front, an escaped key, unknown nested fields.
        13 => format!(
            r#"  {{"typ\u0065":"message"{i}{p},"extra":{{"a":[1,{{"b":null}}]}},"message":{}}}"#,
            message(r, k)
        ),
        14 => format!(r#"[{{"type":"message","message":{}}}]"#, message(r, k)),
        _ => r
            .pick(&[
                "{not json",
                "",
                "   ",
                "42",
                "null",
                "\"text\"",
                r#"{"type":"message","message":{"role":"user","content":"x"}} trailing"#,
                r#"{"type":"message","message":{"role":"user","content":"x"}"#,
                "\u{a0}{\"type\":\"session\"}",
                "{}",
            ])
            .to_string(),
    }
}

#[test]
fn streamed_reader_gives_the_value_readers_transcript() {
    let mut r = Rng::new(0x5eed);
    let mut linked = 0;
    let mut calls = 0;
    let mut skipped = 0;
    for case in 0..1500 {
        let n = r.below(40);
        let ids = 1 + r.below(30);
        // Half the sessions are files without ids (replayed in file order).
        let with_ids = case % 2 == 0;
        let lines: Vec<String> = (0..n).map(|k| line(&mut r, k, ids, with_ids)).collect();
        let want = oracle_lines(lines.iter().map(String::as_str));
        let got = parse_pi_lines(lines.iter().map(String::as_str)).unwrap();
        assert_eq!(got, want, "case {case}:\n{}", lines.join("\n"));
        // The value entry point (decoded objects) agrees too.
        let (values, bad) = json_objects(lines.iter().map(String::as_str));
        let mut via_values = parse_pi_values(values).unwrap();
        via_values.skipped_lines += bad;
        assert_eq!(via_values, want, "case {case} (values)");
        linked += usize::from(lines.iter().any(|l| l.contains("\"parentId\"")));
        calls += want.calls.len();
        skipped += want.skipped_lines;
    }
    // The generator reaches branches, calls and skipped lines.
    assert!(
        linked > 600 && calls > 2000 && skipped > 4000,
        "{linked} {calls} {skipped}"
    );
}

#[test]
fn streamed_reader_keeps_the_last_of_a_repeated_key_and_refuses_arrays() {
    let lines = [
        r#"{"type":"compaction","type":"message","message":{"role":"user","content":"a","timestamp":1},"message":{"role":"user","content":"b","timestamp":2}}"#,
        r#"[{"type":"message","message":{"role":"user","content":"c","timestamp":3}}]"#,
        r#"["message", null, null, null, {"role":"user","content":"d","timestamp":4}]"#,
    ];
    let t = parse_pi_lines(lines).unwrap();
    assert_eq!(t.messages.len(), 1);
    assert_eq!(t.messages[0].text(), "b");
    assert_eq!(t.skipped_lines, 2);
    assert_eq!(t, oracle_lines(lines));
}

#[test]
fn reader_counts_lines_and_skips_as_it_goes() {
    let mut r = PiReader::default();
    r.push_line(r#"{"type":"session","id":"s"}"#);
    r.push_line("{oops");
    r.push_line(r#"{"type":"message","message":{"role":"assistant","content":[{"type":"text","text":"x"}],"usage":{"input":1,"output":2,"cacheRead":0,"cacheWrite":0},"timestamp":9}}"#);
    assert_eq!(r.lines(), 3);
    let t = r.finish().unwrap();
    assert_eq!(
        (t.messages.len(), t.calls.len(), t.skipped_lines),
        (1, 1, 1)
    );
    assert_eq!(t.calls[0].output_tokens, 2);
    assert_eq!(t.calls[0].timestamp_ms, 9.0);
}
