//! Message builders and a shim-like driver shared by the engine test files.
#![allow(dead_code)]

use cachefold::config::Config;
use cachefold::engine::{AssembleInput, AssemblePlan, Drive, IndexedJson, Session};
use serde_json::json;

pub const T0: u64 = 1_763_000_000_000;

/// A config that folds small sessions (tail 1,000, regions from 500 tokens, 100 expected calls).
pub fn small() -> Config {
    Config {
        tail_tokens: 1_000,
        min_fold_tokens: 500,
        fold_record_budget: 4_000,
        expected_remaining_calls: 100,
        ..Config::default()
    }
}

pub fn user(text: &str, ts: u64) -> String {
    json!({"role": "user", "content": [{"type": "text", "text": text}], "timestamp": ts})
        .to_string()
}

pub fn assistant(text: &str, ts: u64) -> String {
    json!({"role": "assistant", "content": [{"type": "thinking", "thinking": "hmm"}, {"type": "text", "text": text}],
        "api": "openai-completions", "provider": "deepseek", "model": "deepseek-flash", "stopReason": "stop", "timestamp": ts,
        "usage": {"input": 100, "output": 10, "cacheRead": 0, "cacheWrite": 0}})
    .to_string()
}

/// Assistant with tool calls `(id, name, path)`.
pub fn calls(cs: &[(&str, &str, &str)], ts: u64) -> String {
    let parts: Vec<_> = cs
        .iter()
        .map(|(id, name, path)| json!({"type": "toolCall", "id": id, "name": name, "arguments": {"path": path}}))
        .collect();
    json!({"role": "assistant", "content": parts, "api": "openai-completions", "provider": "deepseek", "model": "deepseek-flash",
        "stopReason": "toolUse", "timestamp": ts, "usage": {"input": 100, "output": 10, "cacheRead": 0, "cacheWrite": 0}})
    .to_string()
}

pub fn result(id: &str, name: &str, text: &str, ts: u64) -> String {
    json!({"role": "toolResult", "toolCallId": id, "toolName": name, "content": [{"type": "text", "text": text}], "isError": false, "timestamp": ts})
        .to_string()
}

pub fn input(
    msgs: &[String],
    idx: &[u32],
    model: Option<&str>,
    budget: Option<u64>,
) -> AssembleInput {
    AssembleInput {
        count: msgs.len() as u32,
        messages: idx
            .iter()
            .map(|&i| IndexedJson {
                index: i,
                json: msgs[i as usize].clone(),
            })
            .collect(),
        model: model.map(str::to_string),
        token_budget: budget,
        now_ms: T0 as f64,
        system_prompt_addition: None,
        context_window: None,
        last_request_ms: None,
        known: Vec::new(),
        prompt_pending: false,
    }
}

pub fn all(n: usize) -> Vec<u32> {
    (0..n as u32).collect()
}

/// need → assemble → (needFull → assemble with everything): the engine's own driver, the one
/// js/engine.js, the replay and the bench use.
pub fn shim(
    s: &mut Session,
    msgs: &[String],
    model: Option<&str>,
    budget: Option<u64>,
) -> AssemblePlan {
    s.drive(input(msgs, &[], model, budget), Drive::Assemble, |i| {
        msgs[i as usize].clone()
    })
    .expect("assemble")
    .plan
}

/// The output as message JSON.
pub fn resolve(p: &AssemblePlan, msgs: &[String]) -> Vec<String> {
    p.order
        .iter()
        .map(|&i| {
            if i >= 0 {
                msgs[i as usize].clone()
            } else {
                p.synthetic[(-i - 1) as usize].clone()
            }
        })
        .collect()
}

/// A turn: user prompt, an assistant calling `read` on `path` with a result of `size` chars, and a reply.
pub fn turn(msgs: &mut Vec<String>, k: usize, path: &str, size: usize) {
    let ts = T0 + k as u64 * 60_000;
    let id = format!("call_{k}");
    msgs.push(user(&format!("please do step {k}"), ts));
    msgs.push(calls(&[(&id, "read", path)], ts + 1));
    let body: String = format!("line {k} ")
        .repeat(size / 7 + 1)
        .chars()
        .take(size)
        .collect();
    msgs.push(result(&id, "read", &body, ts + 2));
    msgs.push(assistant(&format!("done with step {k}"), ts + 3));
}

pub const DS: Option<&str> = Some("deepseek/deepseek-v4-flash");
