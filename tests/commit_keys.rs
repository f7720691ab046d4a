//! `commitTurn` idempotency holds for any retry: every advancement key of the session is
//! remembered (as an 8-byte hash), across snapshots and journal replay, and the snapshot stays
//! small. It used to keep only the last 1,000 keys, so a retry 1,500 turns late committed the
//! turn twice.

mod engine_support;

use cachefold::config::Config;
use cachefold::engine::{CommitInput, Session};
use engine_support::*;

fn key(i: usize) -> String {
    // The shape of the host's keys: a run id and an entry id.
    format!("run-{:08x}:entry-{i}", i * 2_654_435_761 % 4_294_967_291)
}

fn commit(s: &mut Session, i: usize) -> String {
    let c = CommitInput {
        advancement_key: key(i),
        messages: vec![assistant(&format!("reply {i}"), T0 + i as u64)],
        now_ms: (T0 + i as u64) as f64,
        context_window: None,
    };
    s.commit_turn(&c).unwrap().status.to_string()
}

#[test]
fn a_retry_1500_turns_late_is_still_a_duplicate() {
    let mut s = Session::new(Config::default(), "keys");
    let mut journal = String::new();
    for i in 0..1_500 {
        assert_eq!(commit(&mut s, i), "committed");
        journal.push_str(&s.take_journal());
    }
    let calls = s.view().stats()["calls"].clone();
    for i in [0, 1, 499, 500, 1_499] {
        assert_eq!(commit(&mut s, i), "duplicate", "key {i}");
    }
    assert!(s.take_journal().is_empty(), "a duplicate journals nothing");
    assert_eq!(s.view().stats()["calls"], calls, "no usage counted twice");
    // The same after a restore from the journal, and from a snapshot.
    let (mut r, _) = Session::restore(Config::default(), "keys", None, &journal).unwrap();
    assert_eq!(commit(&mut r, 0), "duplicate");
    let (mut r, _) = Session::restore(Config::default(), "keys", Some(&s.snapshot()), "").unwrap();
    assert_eq!(commit(&mut r, 0), "duplicate");
    assert_eq!(commit(&mut r, 1_500), "committed");
}

#[test]
fn snapshots_with_verbatim_keys_still_load() {
    let mut s = Session::new(Config::default(), "old");
    commit(&mut s, 7);
    let snap = s.snapshot();
    let v: serde_json::Value = serde_json::from_str(&snap).unwrap();
    assert!(v["commitKeys"].is_string(), "packed hashes");
    // The format before: the last keys verbatim.
    let mut old = v.clone();
    old["commitKeys"] = serde_json::json!([key(3), key(7)]);
    let (mut r, _) =
        Session::restore(Config::default(), "old", Some(&old.to_string()), "").unwrap();
    assert_eq!(commit(&mut r, 3), "duplicate");
    assert_eq!(commit(&mut r, 7), "duplicate");
    assert_eq!(commit(&mut r, 8), "committed");
}

#[test]
fn snapshot_at_10000_turns_stays_small() {
    let mut s = Session::new(Config::default(), "big");
    for i in 0..10_000 {
        commit(&mut s, i);
        s.take_journal();
    }
    let snap = s.snapshot();
    let v: serde_json::Value = serde_json::from_str(&snap).unwrap();
    let keys = v["commitKeys"].as_str().unwrap().len();
    println!(
        "snapshot at 10,000 turns: {} bytes, commitKeys {keys} bytes",
        snap.len()
    );
    assert_eq!(keys, 16 * 10_000);
    assert!(snap.len() < 400_000, "{}", snap.len());
    assert_eq!(commit(&mut s, 0), "duplicate");
}
