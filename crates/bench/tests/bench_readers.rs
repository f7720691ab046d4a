//! Readers on small hand-written fixtures (tests/fixtures/): pi (old and v3 branched),
//! Claude Code (requestId grouping, progress skipping, parallel results, abandoned branch,
//! compact boundary), Reasonix, and OpenClaw's SQLite store with a zstd row.

use cachefold::message::Role;
use cachefold::pairing::{self, Shape};
use cachefold_bench::bench::sqlite;
use cachefold_bench::replay::transcript::{
    detect, parse_auto, parse_claude_code, parse_pi, parse_pi_lines, parse_reasonix, Transcript,
};
use serde_json::Value;

fn fixture(name: &str) -> String {
    std::fs::read_to_string(format!(
        "{}/tests/fixtures/{name}",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap()
}

fn roles(t: &Transcript) -> Vec<String> {
    t.messages
        .iter()
        .map(|m| m.role_str().to_string())
        .collect()
}

fn assert_calls_point_at_assistants(t: &Transcript) {
    let mut last = None;
    for c in &t.calls {
        assert_eq!(t.messages[c.assistant_index].role(), Role::Assistant);
        if let Some(l) = last {
            assert!(c.assistant_index > l, "calls must be strictly increasing");
        }
        last = Some(c.assistant_index);
    }
}

#[test]
fn pi_old_format() {
    let text = fixture("pi_small.jsonl");
    assert_eq!(detect(&text), Some("pi"));
    let t = parse_pi(&text).unwrap();
    assert_eq!(t.format, "pi");
    assert_eq!(
        roles(&t),
        [
            "user",
            "assistant",
            "toolResult",
            "assistant",
            "user",
            "user",
            "assistant",
            "assistant",
            "toolResult"
        ]
    );
    assert_eq!(t.skipped_lines, 1, "one non-JSON line");
    assert_eq!(
        t.calls.len(),
        4,
        "every assistant message is a call, the aborted one too"
    );
    assert_calls_point_at_assistants(&t);
    assert_eq!(t.calls[0].output_tokens, 42);
    let u = t.calls[0].usage.unwrap();
    assert_eq!((u.input, u.cache_read, u.cache_write), (10, 1000, 5));
    assert_eq!(t.calls[0].timestamp_ms, 1_765_231_203_000.0);
    // Compaction recorded aside, at the number of messages before it.
    assert_eq!(t.compactions.len(), 1);
    assert_eq!(t.compactions[0].0, 4);
    assert!(t.compactions[0].1.starts_with("## Goal"));
    // bashExecution becomes the user text pi sends.
    let bash = t.messages[4].text();
    assert!(
        bash.starts_with("Ran `cargo test`\n```\ntest result: FAILED\n```"),
        "{bash}"
    );
    assert!(bash.ends_with("Command exited with code 101"));
    // pi messages are kept byte-for-byte.
    let line = text.lines().nth(2).unwrap();
    let v: Value = serde_json::from_str(line).unwrap();
    assert_eq!(
        t.messages[1].to_json(),
        serde_json::to_string(&v["message"]).unwrap()
    );
}

#[test]
fn pi_v3_active_branch() {
    let t = parse_auto("x.jsonl", &fixture("pi_branch.jsonl")).unwrap();
    let texts: Vec<String> = t.messages.iter().map(|m| m.text()).collect();
    assert_eq!(
        texts,
        [
            "first question",
            "first answer",
            "edited question",
            "extension context",
            "edited answer"
        ]
    );
    assert_eq!(t.calls.len(), 2);
    assert_calls_point_at_assistants(&t);
}

#[test]
fn claude_code_grouping_and_chain() {
    let text = fixture("claude_code_small.jsonl");
    assert_eq!(detect(&text), Some("claude-code"));
    let t = parse_claude_code(&text).unwrap();
    assert_eq!(t.format, "claude-code");
    assert_eq!(
        t.skipped_lines, 1,
        "the broken line, not the progress/system/snapshot lines"
    );
    assert_eq!(
        roles(&t),
        [
            "user",
            "assistant",
            "toolResult",
            "toolResult",
            "assistant",
            "user",
            "assistant",
            "user",
            "assistant"
        ]
    );
    // One call per requestId: R1 (3 lines) is one assistant message with thinking + 2 calls.
    assert_eq!(t.calls.len(), 4);
    assert_calls_point_at_assistants(&t);
    let a = &t.messages[1];
    let calls = a.tool_calls();
    assert_eq!(calls.iter().map(|c| c.id).collect::<Vec<_>>(), ["T1", "T2"]);
    assert_eq!(calls[0].name, "Read");
    assert_eq!(
        calls[1].arguments["command"],
        "mix test test/parser_test.exs"
    );
    assert!(matches!(a.parts()[0], cachefold::Part::Thinking(_)));
    assert_eq!(
        t.calls[0].output_tokens, 120,
        "the last line of the request carries the final output count"
    );
    let u = t.calls[0].usage.unwrap();
    assert_eq!((u.input, u.cache_read, u.cache_write), (3, 9000, 100));
    assert_eq!(a.raw()["stopReason"], "toolUse");
    // Parallel results: T1 hangs off the call line (a side branch) and is kept.
    assert_eq!(t.messages[2].tool_call_id(), Some("T1"));
    assert_eq!(t.messages[2].tool_name(), Some("Read"));
    assert_eq!(t.messages[3].tool_call_id(), Some("T2"));
    assert!(t.messages[3].is_error());
    assert_eq!(t.messages[3].text(), "1 test, 1 failure");
    // The abandoned prompt is gone, the edited one kept.
    assert_eq!(t.messages[5].text(), "Actually, make it trim both ends.");
    // Compact boundary: the chain continues before it; the summary is recorded, not inserted.
    assert_eq!(t.compactions.len(), 1);
    assert_eq!(t.compactions[0].0, 7);
    assert!(t.compactions[0].1.contains("parser trims input"));
    assert_eq!(t.messages[7].text(), "continue with the docs");
    assert_eq!(
        t.calls[3].timestamp_ms,
        cachefold_bench::replay::transcript::parse_iso_ms("2026-02-12T17:00:02.000Z").unwrap()
    );
    // Pairing-valid as read.
    let shapes: Vec<Shape> = t.messages.iter().map(|m| Shape::of(m)).collect();
    assert!(pairing::violations(&shapes).is_empty());
}

#[test]
fn reasonix_calls_and_tools() {
    let text = fixture("reasonix_small.jsonl");
    assert_eq!(detect(&text), Some("reasonix"));
    let t = parse_reasonix(&text).unwrap();
    assert_eq!(
        roles(&t),
        [
            "user",
            "assistant",
            "toolResult",
            "toolResult",
            "assistant",
            "user",
            "assistant"
        ]
    );
    assert_eq!(t.skipped_lines, 1);
    assert_eq!(t.calls.len(), 3);
    assert_calls_point_at_assistants(&t);
    let u = t.calls[0].usage.unwrap();
    assert_eq!((u.cache_read, u.input, u.output), (640, 73, 98));
    let calls = t.messages[1].tool_calls();
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0].arguments["orderId"], "o_1002");
    assert_eq!(calls[1].arguments, &Value::String("not json at all".into()));
    assert_eq!(t.messages[2].tool_call_id(), Some(calls[0].id));
    assert!(t.messages[3].is_error());
    let shapes: Vec<Shape> = t.messages.iter().map(|m| Shape::of(m)).collect();
    assert!(pairing::violations(&shapes).is_empty());
}

#[test]
fn auto_detection_and_errors() {
    assert!(parse_auto("empty.jsonl", "").unwrap().messages.is_empty());
    assert_eq!(
        parse_auto("x.jsonl", "not json\n{}\n[1,2]")
            .unwrap_err()
            .code(),
        "CACHEFOLD_INPUT"
    );
    assert_eq!(
        parse_auto("x.sqlite", "whatever").unwrap_err().code(),
        "CACHEFOLD_INPUT"
    );
    // Never panics on junk.
    for junk in [
        "\u{0}",
        "{\"type\":\"message\"}",
        "{\"type\":\"message\",\"message\":5}",
        "{\"role\":\"tool\",\"turn\":1}",
        "{\"uuid\":1,\"type\":\"assistant\",\"message\":[]}",
    ] {
        let _ = parse_auto("j.jsonl", junk);
        let _ = parse_pi(junk);
        let _ = parse_claude_code(junk);
        let _ = parse_reasonix(junk);
    }
}

fn temp_db(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "cachefold-bench-test-{}-{name}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir.join("openclaw-agent.sqlite")
}

#[test]
fn sqlite_store_with_zstd_row() {
    let path = temp_db("zstd");
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch(
        "CREATE TABLE transcript_events (
           session_id TEXT NOT NULL, seq INTEGER NOT NULL, event_json TEXT, created_at INTEGER NOT NULL,
           event_zstd BLOB, event_utf8_bytes INTEGER, navigation_json TEXT, PRIMARY KEY (session_id, seq));",
    )
    .unwrap();
    let pi = fixture("pi_small.jsonl");
    let lines: Vec<&str> = pi.lines().filter(|l| l.starts_with('{')).collect();
    // Session s1: every pi line, the big assistant line stored compressed (as OpenClaw does).
    for (seq, l) in lines.iter().enumerate() {
        if seq == 2 {
            let z = zstd::bulk::compress(l.as_bytes(), 1).unwrap();
            conn.execute(
                "INSERT INTO transcript_events (session_id, seq, event_json, created_at, event_zstd, event_utf8_bytes) VALUES ('s1', ?1, NULL, 0, ?2, ?3)",
                rusqlite::params![seq as i64, z, l.len() as i64],
            )
            .unwrap();
        } else {
            conn.execute(
                "INSERT INTO transcript_events (session_id, seq, event_json, created_at) VALUES ('s1', ?1, ?2, 0)",
                rusqlite::params![seq as i64, l],
            )
            .unwrap();
        }
    }
    // Session s0: one corrupt compressed row and one message; inserted out of seq order.
    conn.execute(
        "INSERT INTO transcript_events (session_id, seq, event_json, created_at) VALUES ('s0', 2, ?1, 0)",
        [r#"{"type":"message","message":{"role":"assistant","content":[{"type":"text","text":"hi"}],"timestamp":2}}"#],
    )
    .unwrap();
    conn.execute(
        "INSERT INTO transcript_events (session_id, seq, event_json, created_at, event_zstd, event_utf8_bytes) VALUES ('s0', 1, NULL, 0, X'00112233', 40)",
        [],
    )
    .unwrap();
    drop(conn);

    let ro =
        rusqlite::Connection::open_with_flags(&path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .unwrap();
    let sessions = sqlite::read_sessions(&ro, None).unwrap();
    assert_eq!(
        sessions
            .iter()
            .map(|s| s.session_id.as_str())
            .collect::<Vec<_>>(),
        ["s0", "s1"]
    );
    assert_eq!(sessions[0].bad_rows, 1);
    assert_eq!(sessions[0].transcript.calls.len(), 1);
    let s1 = &sessions[1];
    assert_eq!(s1.bad_rows, 0);
    let direct = parse_pi_lines(lines.iter().copied()).unwrap();
    assert_eq!(s1.transcript, direct, "rows in seq order are the pi lines");
    assert_eq!(s1.transcript.calls.len(), 4);
    let only = sqlite::read_sessions(&ro, Some("s1")).unwrap();
    assert_eq!(only.len(), 1);
    // Not an OpenClaw store.
    let other = rusqlite::Connection::open_in_memory().unwrap();
    assert_eq!(
        sqlite::read_sessions(&other, None).err().map(|e| e.code()),
        Some("CACHEFOLD_INPUT")
    );
    let _ = std::fs::remove_dir_all(path.parent().unwrap());
}

#[test]
fn sqlite_legacy_schema_without_zstd_columns() {
    let path = temp_db("legacy");
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch(
        "CREATE TABLE transcript_events (session_id TEXT NOT NULL, seq INTEGER NOT NULL, event_json TEXT NOT NULL, created_at INTEGER NOT NULL);",
    )
    .unwrap();
    for (seq, l) in fixture("pi_branch.jsonl").lines().enumerate() {
        conn.execute(
            "INSERT INTO transcript_events VALUES ('b', ?1, ?2, 0)",
            rusqlite::params![seq as i64, l],
        )
        .unwrap();
    }
    let s = sqlite::read_sessions(&conn, None).unwrap();
    assert_eq!(s.len(), 1);
    assert_eq!(s[0].transcript.messages.len(), 5);
    let _ = std::fs::remove_dir_all(path.parent().unwrap());
}

#[test]
fn zstd_decoder_checks_length() {
    let z = zstd::bulk::compress(b"{\"a\":1}", 1).unwrap();
    assert_eq!(
        sqlite::decode_zstd(&z, Some(7)).as_deref(),
        Some("{\"a\":1}")
    );
    assert_eq!(sqlite::decode_zstd(&z, Some(8)), None);
    assert_eq!(sqlite::decode_zstd(b"junk", Some(4)), None);
}

#[test]
fn sqlite_sessions_are_handed_over_one_at_a_time() {
    let path = temp_db("each");
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch(
        "CREATE TABLE transcript_events (session_id TEXT NOT NULL, seq INTEGER NOT NULL, event_json TEXT NOT NULL, created_at INTEGER NOT NULL);",
    )
    .unwrap();
    let pi = fixture("pi_small.jsonl");
    let lines: Vec<&str> = pi.lines().filter(|l| l.starts_with('{')).collect();
    for (seq, l) in lines.iter().enumerate() {
        conn.execute(
            "INSERT INTO transcript_events VALUES ('s1', ?1, ?2, 0)",
            rusqlite::params![seq as i64, l],
        )
        .unwrap();
    }
    // s0: a message, a row that is not JSON and one that is JSON but no object (both skipped
    // lines, as parse_pi_lines counts them).
    for (seq, l) in [
        r#"{"type":"message","message":{"role":"assistant","content":[{"type":"text","text":"hi"}],"timestamp":2}}"#,
        "not json",
        "[1, 2]",
    ]
    .iter()
    .enumerate()
    {
        conn.execute(
            "INSERT INTO transcript_events VALUES ('s0', ?1, ?2, 0)",
            rusqlite::params![seq as i64, l],
        )
        .unwrap();
    }
    let mut seen = Vec::new();
    sqlite::for_each_session(&conn, &|_| true, &mut |s| {
        seen.push((
            s.session_id.clone(),
            s.transcript.skipped_lines,
            s.transcript,
        ));
        Ok(())
    })
    .unwrap();
    let ids: Vec<(&str, u64)> = seen.iter().map(|(i, k, _)| (i.as_str(), *k)).collect();
    assert_eq!(ids, [("s0", 2), ("s1", 0)]);
    assert_eq!(seen[1].2, parse_pi_lines(lines.iter().copied()).unwrap());
    // The first session is handed over before the next is read: an error there stops the read.
    let mut calls = 0;
    let err = sqlite::for_each_session(&conn, &|_| true, &mut |_| {
        calls += 1;
        Err(cachefold::error::Error::Input("enough".into()))
    });
    assert_eq!(calls, 1);
    assert_eq!(
        err.err().map(|e| e.to_string()).as_deref(),
        Some("invalid input: enough")
    );
    let _ = std::fs::remove_dir_all(path.parent().unwrap());
}
