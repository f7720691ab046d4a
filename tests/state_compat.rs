//! State written by release 0.1.0 still loads: users upgrade in place, so a session's snapshot
//! and journal, and a lesson file, written by the previous build must restore to the same state.
//!
//! `tests/fixtures/state-0.1.0/` was written by the 0.1.0 wasm build through the plugin (95
//! turns with folds and topics: `snapshot.json` and the journal written after it, header line
//! included, as `js/store.js` keeps them), with what that build itself made of them: the replay
//! report, the snapshot after replay (`restored-snapshot.json`, with its SHA-1 as that build
//! printed it), a stamped lesson file and its parse.

use cachefold::engine::Session;
use cachefold::lessons::Lesson;
use cachefold::Config;
use serde_json::Value;

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/state-0.1.0");
const SESSION: &str = "fixture-session";

fn read(name: &str) -> String {
    std::fs::read_to_string(format!("{DIR}/{name}")).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn config() -> Config {
    Config::from_json(&read("config.json")).unwrap()
}

/// The journal's event lines (the store's header line dropped, as `js/store.js` does).
fn journal_body() -> String {
    let raw = read("journal.jsonl");
    let (header, body) = raw.split_once('\n').unwrap();
    assert!(header.contains(r#""cachefold":"journal""#), "{header}");
    body.to_string()
}

/// The previous release wrote every member of a record's shape and digest and its `protected`
/// flag; this one leaves out those that hold their default (an empty list or text, `null`,
/// `false`), which read back as that default. `v` (a whole snapshot of the previous release)
/// without them: what this release writes for the same state.
fn without_defaults(mut v: Value) -> Value {
    let empty = |x: &Value| match x {
        Value::Null | Value::Bool(false) => true,
        Value::Array(a) => a.is_empty(),
        Value::String(s) => s.is_empty(),
        _ => false,
    };
    let records = v["records"].as_array_mut().expect("records");
    assert!(!records.is_empty());
    for r in records {
        let r = r.as_object_mut().expect("a record");
        if r.get("protected") == Some(&Value::Bool(false)) {
            r.remove("protected");
        }
        for part in ["shape", "digest"] {
            let m = r[part].as_object_mut().expect(part);
            // `role` is always written (a shape's and a digest's role are never defaults).
            m.retain(|k, x| k == "role" || !empty(x));
        }
    }
    v
}

fn json(text: &str) -> Value {
    serde_json::from_str(text).unwrap()
}

#[test]
fn snapshot_and_journal_of_the_previous_release_restore_to_the_same_state() {
    let snapshot = read("snapshot.json");
    let (s, report) =
        Session::restore(config(), SESSION, Some(&snapshot), &journal_body()).unwrap();
    let report = serde_json::to_value(&report).unwrap();
    let want: Value = serde_json::from_str(&read("replay-report.json")).unwrap();
    assert_eq!(report, want, "every journal line applies, none is ignored");
    // What the previous release wrote after the same replay (its SHA-1 recorded by that build).
    let previous = read("restored-snapshot.json");
    assert_eq!(
        cachefold::fingerprint_hex(previous.as_bytes()),
        read("restored-snapshot.sha1").trim()
    );
    let text = s.try_snapshot().unwrap();
    assert_eq!(
        json(&text),
        without_defaults(json(&previous)),
        "the state after replay is what the previous release had, member for member"
    );
    assert!(text.len() < previous.len());
}

#[test]
fn a_snapshot_of_the_previous_release_restores_member_for_member() {
    let snapshot = read("snapshot.json");
    let (s, report) = Session::restore(config(), SESSION, Some(&snapshot), "").unwrap();
    assert_eq!(report.applied, 0);
    let text = s.try_snapshot().unwrap();
    assert_eq!(json(&text), without_defaults(json(&snapshot)));
    // This release's snapshot writes back byte identical.
    let (again, _) = Session::restore(config(), SESSION, Some(&text), "").unwrap();
    assert_eq!(again.try_snapshot().unwrap(), text);
}

#[test]
fn a_lesson_file_of_the_previous_release_parses_and_renders_the_same() {
    let text = read("lesson.md");
    let lesson = Lesson::parse(&text).unwrap();
    let want: Value = serde_json::from_str(&read("lesson.json")).unwrap();
    assert_eq!(serde_json::to_value(&lesson).unwrap(), want);
    assert_eq!(lesson.render(), text);
}

/// A session of the previous release (one calibration point per commit) continued by this one:
/// the new commit journals every call's point (`calibMore`, a field the old lines lack and load
/// without), its line is the same on every run, and the old journal plus the new lines restore
/// to the live state.
#[test]
fn a_journal_of_the_previous_release_continues_with_per_call_calibration() {
    use cachefold::engine::{CommitInput, Drive};
    use serde_json::json;

    let usage = |input: u64| json!({"input": input, "output": 10, "cacheRead": 0, "cacheWrite": 0});
    let asst = |k: usize, input: u64| {
        json!({"role": "assistant", "content": [{"type": "toolCall", "id": format!("c{k}"), "name": "read",
            "arguments": {"path": format!("f{k}.txt")}}], "model": "deepseek-v4-flash", "stopReason": "toolUse",
            "timestamp": 1_795_700_000_000u64 + k as u64, "usage": usage(input)})
        .to_string()
    };
    let res = |k: usize| {
        json!({"role": "toolResult", "toolCallId": format!("c{k}"), "toolName": "read",
            "content": [{"type": "text", "text": "x".repeat(3_000 * (k + 1))}], "isError": false,
            "timestamp": 1_795_700_000_000u64 + k as u64})
        .to_string()
    };
    let hist = vec![
        json!({"role": "user", "content": "continue", "timestamp": 1_795_700_000_000u64})
            .to_string(),
    ];
    let mut turn = hist.clone();
    for k in 0..3 {
        turn.push(asst(k, 20_000 + 1_000 * k as u64));
        turn.push(res(k));
    }
    let run = || {
        let (mut s, _) = Session::restore(
            config(),
            SESSION,
            Some(&read("snapshot.json")),
            &journal_body(),
        )
        .unwrap();
        let inp = cachefold::engine::AssembleInput {
            count: 0,
            model: Some("deepseek/deepseek-v4-flash".into()),
            now_ms: 1_795_700_000_000.0,
            ..Default::default()
        };
        s.drive(inp, Drive::Assemble, |i| hist[i as usize].clone())
            .unwrap();
        s.commit_turn(&CommitInput {
            advancement_key: "after-upgrade".into(),
            messages: turn.clone(),
            now_ms: 1_795_700_001_000.0,
            context_window: None,
        })
        .unwrap();
        let lines = s.take_journal();
        (s.try_snapshot().unwrap(), lines)
    };
    let (live, lines) = run();
    assert_eq!(
        run(),
        (live.clone(), lines.clone()),
        "same input, same lines"
    );
    let commit = lines
        .lines()
        .find(|l| l.contains(r#""commit""#))
        .expect("a commit line");
    assert!(commit.contains(r#""calibMore":[["#), "{commit}");
    let journal = format!("{}{lines}", journal_body());
    let (restored, report) =
        Session::restore(config(), SESSION, Some(&read("snapshot.json")), &journal).unwrap();
    assert_eq!((report.ignored_bytes, report.stopped), (0, None));
    assert_eq!(restored.try_snapshot().unwrap(), live);
}
