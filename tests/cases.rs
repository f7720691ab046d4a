//! The engine cases of `tests/cases/*.json` on the native core. `tests/js/cases.test.mjs` runs
//! the same files through the shipped wasm; see `tests/cases/README.md` for the format.
use cachefold::config::Config;
use cachefold::engine::{AssembleInput, AssemblePlan, CommitInput, Drive, Session};
use serde_json::json;
use serde_json::Value;
use std::path::Path;

const T0: u64 = 1_763_900_000_000;

/// Expand the message shorthands of the case format; `pos` is the message's history index.
fn expand(v: &Value, pos: usize) -> Value {
    let ts = json!(T0 + 1000 * pos as u64);
    let text = |t: &Value| -> String {
        match t {
            Value::String(s) => s.clone(),
            Value::Object(o) if o.contains_key("$repeat") => {
                let unit = o["$repeat"].as_str().expect("$repeat string");
                unit.repeat(o["times"].as_u64().expect("times") as usize)
            }
            other => panic!("bad text {other}"),
        }
    };
    let Some(o) = v.as_object() else {
        panic!("message must be an object: {v}")
    };
    if let Some(t) = o.get("$user") {
        return json!({"role": "user", "content": [{"type": "text", "text": text(t)}], "timestamp": ts});
    }
    if let Some(t) = o.get("$reply") {
        return json!({"role": "assistant", "content": [{"type": "text", "text": text(t)}], "stopReason": "stop", "timestamp": ts,
            "usage": {"input": 0, "output": 10, "cacheRead": 0, "cacheWrite": 0}});
    }
    if let Some(c) = o.get("$call") {
        return json!({"role": "assistant", "content": [{"type": "toolCall", "id": c[0], "name": c[1], "arguments": c[2]}],
            "stopReason": "toolUse", "timestamp": ts, "usage": {"input": 0, "output": 10, "cacheRead": 0, "cacheWrite": 0}});
    }
    if let Some(r) = o.get("$result") {
        return json!({"role": "toolResult", "toolCallId": r[0], "toolName": r[1], "content": [{"type": "text", "text": text(&r[2])}],
            "isError": false, "timestamp": ts});
    }
    v.clone()
}

/// Independent of the core's own validator: every assistant tool call is followed at once by
/// results for exactly its ids, and no result appears anywhere else.
fn pairing_valid(out: &[Value]) -> Result<(), String> {
    let mut k = 0;
    while k < out.len() {
        let m = &out[k];
        match m["role"].as_str() {
            Some("toolResult") => return Err(format!("orphan result at {k}")),
            Some("assistant") => {
                let mut ids: Vec<String> = m["content"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter(|p| p["type"] == "toolCall")
                    .map(|p| p["id"].as_str().unwrap_or_default().to_string())
                    .collect();
                k += 1;
                while !ids.is_empty() {
                    let r = out.get(k).ok_or("call without result at end")?;
                    if r["role"] != "toolResult" {
                        return Err(format!("call without result before {k}"));
                    }
                    let id = r["toolCallId"].as_str().unwrap_or_default();
                    let at = ids
                        .iter()
                        .position(|x| x == id)
                        .ok_or(format!("foreign result at {k}"))?;
                    ids.remove(at);
                    k += 1;
                }
            }
            _ => k += 1,
        }
    }
    Ok(())
}

fn resolve(plan: &AssemblePlan, history: &[String]) -> Vec<String> {
    plan.order
        .iter()
        .map(|&i| {
            if i >= 0 {
                history[i as usize].clone()
            } else {
                plan.synthetic[(-i - 1) as usize].clone()
            }
        })
        .collect()
}

fn run_case(path: &Path) -> Result<(), String> {
    let case: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let cfg = Config::from_json(&case["config"].to_string()).map_err(|e| e.to_string())?;
    let mut s = Session::new(cfg, case["name"].as_str().unwrap());
    let mut history: Vec<String> = Vec::new();
    let mut prev: Option<(Vec<String>, u32)> = None;
    let mut folds_total = 0u64;
    for (t, turn) in case["turns"].as_array().unwrap().iter().enumerate() {
        let at = |msg: String| format!("turn {t}: {msg}");
        if let Some(rep) = turn.get("replace").and_then(Value::as_object) {
            for (k, v) in rep {
                let i: usize = k.parse().unwrap();
                history[i] = expand(v, i).to_string();
            }
        }
        if let Some(i) = turn["remove"].as_u64() {
            history.remove(i as usize);
        }
        if let Some(n) = turn["evict"].as_u64() {
            history.drain(..n as usize);
        }
        for (k, m) in turn["front"].as_array().into_iter().flatten().enumerate() {
            history.insert(k, expand(m, k).to_string());
        }
        let before = history.len();
        for m in turn["append"].as_array().into_iter().flatten() {
            history.push(expand(m, history.len()).to_string());
        }
        let head = AssembleInput {
            count: history.len() as u32,
            model: case["model"].as_str().map(String::from),
            token_budget: case["tokenBudget"].as_u64(),
            now_ms: (T0 + 1000 * history.len() as u64) as f64,
            ..AssembleInput::default()
        };
        let plan = s
            .drive(head, Drive::Assemble, |i| history[i as usize].clone())
            .map_err(|e| at(e.to_string()))?
            .plan;
        let out = resolve(&plan, &history);
        let values: Vec<Value> = out
            .iter()
            .map(|j| serde_json::from_str(j).unwrap())
            .collect();
        folds_total += plan.report.folds.len() as u64;
        let e = &turn["expect"];
        let check = |ok: bool, what: &str| {
            if ok {
                Ok(())
            } else {
                Err(at(what.to_string()))
            }
        };
        if let Some(n) = e["folds"].as_u64() {
            check(
                plan.report.folds.len() as u64 == n,
                &format!("folds {} != {n}", plan.report.folds.len()),
            )?;
        }
        if let Some(b) = e["passthrough"].as_bool() {
            check(
                plan.passthrough == b,
                &format!("passthrough {} != {b}", plan.passthrough),
            )?;
        }
        if e["pairingValid"] == true {
            pairing_valid(&values).map_err(&at)?;
        }
        if e["extendsPrevious"] == true {
            let (p, _) = prev
                .as_ref()
                .ok_or_else(|| at("no previous output".into()))?;
            check(
                out.len() >= p.len() && out[..p.len()] == p[..],
                "previous output is not a prefix",
            )?;
        }
        if e["headUnchanged"] == true {
            let (p, head_len) = prev
                .as_ref()
                .ok_or_else(|| at("no previous output".into()))?;
            let h = *head_len as usize;
            check(
                out.len() >= h && p.len() >= h && out[..h] == p[..h],
                "pinned head changed",
            )?;
        }
        for needle in e["contains"].as_array().into_iter().flatten() {
            let n = needle.as_str().unwrap();
            check(
                out.iter().any(|j| j.contains(n)),
                &format!("output lacks {n:?}"),
            )?;
        }
        if let Some(a) = e["divergence"].as_str() {
            let got = plan
                .report
                .divergence
                .as_ref()
                .map(|d| d.action.to_string());
            check(
                got.as_deref() == Some(a),
                &format!("divergence {got:?} != {a}"),
            )?;
        }
        if let Some(n) = e["repairsAtLeast"].as_u64() {
            check(
                plan.report.repairs.len() as u64 >= n,
                &format!("repairs {} < {n}", plan.report.repairs.len()),
            )?;
        }
        if let Some(n) = e["maxTokensAfter"].as_u64() {
            check(
                plan.report.tokens_after <= n,
                &format!("tokensAfter {} > {n}", plan.report.tokens_after),
            )?;
        }
        let commit = CommitInput {
            advancement_key: format!("turn-{t}"),
            messages: history[before..].to_vec(),
            now_ms: (T0 + 1000 * history.len() as u64) as f64,
            ..CommitInput::default()
        };
        s.commit_turn(&commit).map_err(|e| at(e.to_string()))?;
        let _ = s.take_journal();
        prev = Some((out, plan.report.head_len));
    }
    if let Some(n) = case["expectOverall"]["foldsAtLeast"].as_u64() {
        if folds_total < n {
            return Err(format!("folds over the session {folds_total} < {n}"));
        }
    }
    Ok(())
}

#[test]
fn every_case_passes_on_the_native_core() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cases");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    assert!(files.len() >= 5, "cases found: {}", files.len());
    let failures: Vec<String> = files
        .iter()
        .filter_map(|f| run_case(f).err().map(|e| format!("{}: {e}", f.display())))
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
