//! The hand-written decoders against the derived ones they replaced (kept under `cfg(test)`
//! as the oracle): on snapshots and journal events of generated sessions, and on every
//! single-field mutation of them, both accept with equal values or both reject.

use super::*;
use crate::config::Config;
use crate::engine::{AssembleInput, CommitInput, IndexedJson, Session};
use crate::json;
use proptest::prelude::*;
use serde::de::DeserializeOwned;
use std::fmt::Debug;

const T0: u64 = 1_763_000_000_000;
const MODEL: &str = "deepseek/deepseek-v4-flash";

fn agree<T: FromJson + DeserializeOwned + PartialEq + Debug>(text: &str) -> bool {
    match (
        serde_json::from_str::<T>(text),
        crate::json::from_str::<T>(text),
    ) {
        (Ok(a), Ok(b)) => {
            assert_eq!(a, b, "{text}");
            true
        }
        (Err(_), Err(_)) => false,
        // The one known difference: serde also reads a struct from an array of its field
        // values in declaration order, a form no writer of ours produces; it is refused.
        (Ok(_), Err(e)) if e.message() == "expected an object, got array" => false,
        (a, b) => panic!("decoders disagree on {text}:\nserde {a:?}\njson {b:?}"),
    }
}

fn user(text: &str, ts: u64) -> String {
    json!({"role": "user", "content": [{"type": "text", "text": text}], "timestamp": ts})
        .to_string()
}

fn reply(text: &str, ts: u64, cached: u64) -> String {
    json!({"role": "assistant", "content": [{"type": "text", "text": text}], "model": "deepseek-v4-flash",
        "stopReason": "stop", "timestamp": ts, "usage": {"input": 100, "output": 10, "cacheRead": cached, "cacheWrite": 0}})
    .to_string()
}

fn call(id: &str, path: &str, ts: u64) -> String {
    json!({"role": "assistant", "content": [{"type": "toolCall", "id": id, "name": "read", "arguments": {"path": path, "limit": 2.5}}],
        "stopReason": "toolUse", "timestamp": ts, "usage": {"input": 90, "output": 5, "cacheRead": 64, "cacheWrite": 0}})
    .to_string()
}

fn result(id: &str, text: &str, ts: u64) -> String {
    json!({"role": "toolResult", "toolCallId": id, "toolName": "read", "content": [{"type": "text", "text": text}], "isError": false, "timestamp": ts})
        .to_string()
}

fn assemble(s: &mut Session, msgs: &[String], budget: u64, now: f64) {
    let input = AssembleInput {
        count: msgs.len() as u32,
        messages: msgs
            .iter()
            .enumerate()
            .map(|(i, m)| IndexedJson {
                index: i as u32,
                json: m.clone(),
            })
            .collect(),
        model: Some(MODEL.into()),
        token_budget: Some(budget),
        now_ms: now,
        system_prompt_addition: None,
        context_window: Some(budget * 2),
    };
    s.assemble(&input).expect("assemble");
}

/// A session of `turns` turns with tool results of `size` chars, folding under `budget`,
/// with summaries, an artifact note, a forced fold and a divergence in the tail.
fn session(turns: usize, size: usize, budget: u64) -> (Session, String) {
    let cfg = Config {
        tail_tokens: 1_000,
        min_fold_tokens: 500,
        fold_record_budget: 4_000,
        expected_remaining_calls: 100,
        ..Config::default()
    };
    let mut cfg = cfg;
    cfg.topics.use_llm = true;
    let mut s = Session::new(cfg, "oracle");
    let mut msgs: Vec<String> = Vec::new();
    let mut journal = String::new();
    for k in 0..turns {
        let ts = T0 + k as u64 * 60_000;
        let now = ts as f64 + 0.25;
        let start = msgs.len();
        msgs.push(user(&format!("step {k}: read src/m{k}.rs"), ts));
        let id = format!("call_{k}");
        msgs.push(call(&id, &format!("src/m{k}.rs"), ts + 1));
        let body = format!("fn f{k}() {{}} // error: line {k}\n").repeat(size / 30 + 1);
        msgs.push(result(&id, &body, ts + 2));
        assemble(&mut s, &msgs, budget, now);
        msgs.push(reply(&format!("done {k}"), ts + 3, 128 * k as u64));
        assemble(&mut s, &msgs, budget, now + 1.0);
        let turn = CommitInput {
            advancement_key: format!("k{k}"),
            messages: msgs[start..].to_vec(),
            now_ms: now + 2.0,
            context_window: Some(budget * 2),
        };
        s.commit_turn(&turn).expect("commit");
        if k % 3 == 1 {
            s.note_artifact(&"ab".repeat(20), "read", size as u64, now)
                .expect("note");
        }
        if let Some(req) = s.summary_request(now + 3.0) {
            s.accept_summary(&req.id, "summary text", k % 2 == 0, now + 4.0);
        }
        if let Some(q) = s.topic_request(now + 4.5) {
            let text = match k % 3 {
                0 => r#"{"label":"step work","isNewTopic":true}"#,
                1 => "not an answer",
                _ => r#"{"label":"more","isNewTopic":false}"#,
            };
            s.accept_topic(&q.id, text, k % 5 != 4, now + 4.6);
        }
        if k % 4 == 2 {
            s.request_fold(now + 5.0).expect("request fold");
        }
        if k == turns / 2 && msgs.len() > 2 {
            // The host rewrote the last message: a divergence in the live tail.
            let last = msgs.len() - 1;
            msgs[last] = reply("rewritten", ts + 3, 0);
        }
        journal.push_str(&s.take_journal());
    }
    (s, journal)
}

/// Every value path of `v` (JSON pointers), objects and arrays included.
fn paths(v: &Value, at: String, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                let p = format!("{at}/{}", k.replace('~', "~0").replace('/', "~1"));
                out.push(p.clone());
                paths(x, p, out);
            }
        }
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                let p = format!("{at}/{i}");
                out.push(p.clone());
                paths(x, p, out);
            }
        }
        _ => {}
    }
}

/// `v` with the value at `path` removed (object member) or replaced by mutation `op`.
fn mutate(v: &Value, path: &str, op: usize) -> Value {
    let mut v = v.clone();
    let (parent, key) = path.rsplit_once('/').unwrap_or(("", path));
    let key = key.replace("~1", "/").replace("~0", "~");
    let replacement = [
        Value::Null,
        json!("x"),
        json!(1.5),
        json!(-1),
        json!(true),
        json!(7),
        json!([]),
        json!({}),
    ];
    match v.pointer_mut(parent) {
        Some(Value::Object(m)) => {
            if op == replacement.len() {
                m.remove(&key);
            } else if op == replacement.len() + 1 {
                m.insert("zzUnknown".into(), json!(1));
            } else {
                m.insert(key, replacement[op].clone());
            }
        }
        Some(Value::Array(a)) => {
            if let Ok(i) = key.parse::<usize>() {
                if op >= replacement.len() {
                    a.remove(i);
                } else {
                    a[i] = replacement[op].clone();
                }
            }
        }
        _ => {}
    }
    v
}

fn event_bodies(journal: &str) -> Vec<String> {
    journal
        .lines()
        .map(|l| {
            let at = l.find("\"e\":").expect("event") + 4;
            l[at..l.len() - 1].to_string()
        })
        .collect()
}

#[test]
fn snapshot_and_events_decode_as_before() {
    let (s, journal) = session(14, 3_000, 6_000);
    let snap = s.try_snapshot().expect("snapshot");
    assert!(agree::<SessionState>(&snap));
    let st = SessionState::from_snapshot(&snap).expect("snapshot");
    assert_eq!(&st, s.state());
    assert!(st.counters.folds > 0, "the session folds");
    let bodies = event_bodies(&journal);
    let mut kinds = std::collections::BTreeSet::new();
    for b in &bodies {
        assert!(agree::<Event>(b));
        kinds.insert(b.split('"').nth(1).unwrap_or("").to_string());
    }
    for k in [
        "env",
        "ingest",
        "pin",
        "fold",
        "out",
        "commit",
        "artifact",
        "diverge",
        "topicReq",
        "topicDone",
    ] {
        assert!(kinds.contains(k), "no {k} event in {kinds:?}");
    }
    // Old forms: verbatim commit keys, fields added later absent.
    let mut v: Value = serde_json::from_str(&snap).unwrap();
    v["commitKeys"] = json!(["k0", "k1"]);
    for k in ["calibGuard", "turnWs", "window", "budget"] {
        v.as_object_mut().unwrap().remove(k);
    }
    assert!(agree::<SessionState>(&v.to_string()));
    // An unknown fold reason is refused, never counted as some other kind.
    let fold = bodies.iter().find(|b| b.starts_with("{\"fold\"")).unwrap();
    let bad = fold.replacen("\"reason\":\"", "\"reason\":\"z", 1);
    assert!(!agree::<Event>(&bad));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn mutated_snapshots_and_events_decode_as_before(
        turns in 1usize..10,
        size in 200usize..4_000,
        budget in 3_000u64..40_000,
        picks in proptest::collection::vec((any::<prop::sample::Index>(), 0usize..10), 40),
    ) {
        let (s, journal) = session(turns, size, budget);
        let snap: Value = serde_json::from_str(&s.try_snapshot().unwrap()).unwrap();
        let mut all = Vec::new();
        paths(&snap, String::new(), &mut all);
        for (i, op) in &picks {
            agree::<SessionState>(&mutate(&snap, &all[i.index(all.len())], *op).to_string());
        }
        for body in event_bodies(&journal) {
            let e: Value = serde_json::from_str(&body).unwrap();
            let mut all = Vec::new();
            paths(&e, String::new(), &mut all);
            for (i, op) in picks.iter().take(4) {
                agree::<Event>(&mutate(&e, &all[i.index(all.len())], *op).to_string());
            }
        }
    }
}
