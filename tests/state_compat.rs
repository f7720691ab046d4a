//! State written by release 0.1.0 still loads: users upgrade in place, so a session's snapshot
//! and journal, and a lesson file, written by the previous build must restore to the same state.
//!
//! `tests/fixtures/state-0.1.0/` was written by the 0.1.0 wasm build through the plugin (95
//! turns with folds and topics: `snapshot.json` and the journal written after it, header line
//! included, as `js/store.js` keeps them), with what that build itself made of them: the replay
//! report, the SHA-1 of the snapshot after replay, a stamped lesson file and its parse.

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

#[test]
fn snapshot_and_journal_of_the_previous_release_restore_to_the_same_state() {
    let snapshot = read("snapshot.json");
    let (s, report) =
        Session::restore(config(), SESSION, Some(&snapshot), &journal_body()).unwrap();
    let report = serde_json::to_value(&report).unwrap();
    let want: Value = serde_json::from_str(&read("replay-report.json")).unwrap();
    assert_eq!(report, want, "every journal line applies, none is ignored");
    let text = s.try_snapshot().unwrap();
    assert_eq!(
        cachefold::fingerprint_hex(text.as_bytes()),
        read("restored-snapshot.sha1").trim(),
        "the state after replay is byte for byte what the previous release had"
    );
}

#[test]
fn a_snapshot_of_the_previous_release_writes_back_byte_identical() {
    let snapshot = read("snapshot.json");
    let (s, report) = Session::restore(config(), SESSION, Some(&snapshot), "").unwrap();
    assert_eq!(report.applied, 0);
    assert_eq!(s.try_snapshot().unwrap(), snapshot);
}

#[test]
fn a_lesson_file_of_the_previous_release_parses_and_renders_the_same() {
    let text = read("lesson.md");
    let lesson = Lesson::parse(&text).unwrap();
    let want: Value = serde_json::from_str(&read("lesson.json")).unwrap();
    assert_eq!(serde_json::to_value(&lesson).unwrap(), want);
    assert_eq!(lesson.render(), text);
}
