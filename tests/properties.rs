//! Property tests over randomly generated sessions (proptest).
//!
//! `replay_invariants` (10,000 cases by default; `CACHEFOLD_PROPTEST_CASES` overrides): users,
//! assistants with 0–3 tool calls, results of 10..20,000 chars (skewed small), protected reads
//! sometimes, small tail/budget/record budgets so folds, emergencies and condensations happen.
//! Every call is checked by `replay::replay` (append-only outside declared folds, head and
//! earlier records unchanged across a fold, pairing, completeness, budget after an emergency,
//! idempotent assemble and commit, journal-only and snapshot+journal restore equal to the live
//! state). On top: the journal cut at a random byte restores without error to the state after
//! the complete lines before the cut (a prefix of the event sequence), and at a random call
//! boundary to exactly that call's snapshot; the restored session keeps working.
//!
//! `divergence_invariants` (a tenth as many cases): the host history is rewritten in place,
//! truncated, compacted or branched between turns; the engine must never fail, and every
//! output stays pairing-valid and complete (every host index in the output or inside one of
//! the current fold segments).
//!
//! A failing case panics with its regression JSON; save it under `tests/regressions/` (see
//! `regressions_replay`).

mod engine_support;

use cachefold::config::Config;
use cachefold::engine::{AssembleInput, Session};
use cachefold::message::Message;
use cachefold::pairing::{self, Shape};
use cachefold_bench::replay::transcript::Call;
use cachefold_bench::replay::{replay, ReplayOptions, SummaryMode, UsageMode};
use engine_support::*;
use proptest::prelude::*;
use serde::{Deserialize, Serialize};
use serde_json::json;

fn cases(default: u32) -> u32 {
    std::env::var("CACHEFOLD_PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct CallSpec {
    exec: bool,
    protected: bool,
    size: usize,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct TurnSpec {
    user_len: usize,
    /// Assistant steps; each calls 1..=3 tools.
    steps: Vec<Vec<CallSpec>>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Knobs {
    prefix_lock: u32,
    tail: u64,
    min_fold: u64,
    record_budget: u64,
    expected: u64,
    budget: u64,
    reassemble: bool,
    summaries: u8,
    /// `divergence_invariants`: the host holds the prompt apart (`AssembleInput::prompt_pending`),
    /// as OpenClaw does: each assemble's list ends where the last turn ended.
    #[serde(default)]
    held: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Case {
    knobs: Knobs,
    turns: Vec<TurnSpec>,
}

/// 10..20,000 chars, skewed small (most tool output is short; the rare huge one forces
/// emergencies) so 10,000 sessions run in well under a minute even in a debug build.
fn size() -> impl Strategy<Value = usize> {
    prop_oneof![20 => 10usize..200, 4 => 200usize..2_000, 1 => 2_000usize..20_000]
}

fn call_spec() -> impl Strategy<Value = CallSpec> {
    (any::<bool>(), prop::bool::weighted(0.1), size()).prop_map(|(exec, protected, size)| {
        CallSpec {
            exec,
            protected,
            size,
        }
    })
}

fn turn_spec() -> impl Strategy<Value = TurnSpec> {
    (
        1usize..200,
        prop::collection::vec(prop::collection::vec(call_spec(), 1..=3), 0..=3),
    )
        .prop_map(|(user_len, steps)| TurnSpec { user_len, steps })
}

fn knobs() -> impl Strategy<Value = Knobs> {
    (
        0u32..5,
        1_000u64..2_000,
        0u64..1_500,
        200u64..3_000,
        0u64..60,
        2_000u64..10_000,
        any::<bool>(),
        0u8..3,
        any::<bool>(),
    )
        .prop_map(
            |(
                prefix_lock,
                tail,
                min_fold,
                record_budget,
                expected,
                budget,
                reassemble,
                summaries,
                held,
            )| Knobs {
                prefix_lock,
                tail,
                min_fold,
                record_budget,
                expected,
                budget,
                reassemble,
                summaries,
                held,
            },
        )
}

fn case() -> impl Strategy<Value = Case> {
    (knobs(), prop::collection::vec(turn_spec(), 1..8))
        .prop_map(|(knobs, turns)| Case { knobs, turns })
}

fn body(seed: usize, n: usize) -> String {
    // Mostly prose with the occasional path, error line and hex id (realistic tool output; an
    // identifier in every word makes digesting 3x slower for no extra coverage).
    let words = [
        "the",
        "result",
        "of",
        "step",
        "was",
        "fine",
        "and",
        "value",
        "is",
        "ok",
        "src/main.rs",
        "then",
        "more",
        "text",
        "Error: boom\n",
        "0x1f2e9a",
        "lines",
        "follow",
        "here",
        "done.\n",
    ];
    let mut s = String::with_capacity(n + 16);
    let mut k = seed;
    while s.len() < n {
        s.push_str(words[k % words.len()]);
        s.push(' ');
        k = k.wrapping_mul(31).wrapping_add(7);
    }
    s.truncate(n);
    s
}

/// Messages and calls of a generated session.
fn build(c: &Case) -> (Vec<Message>, Vec<Call>) {
    let mut msgs: Vec<String> = Vec::new();
    let mut calls = Vec::new();
    let mut ts = T0;
    let mut id = 0usize;
    let push_asst = |msgs: &mut Vec<String>, calls: &mut Vec<Call>, m: String, ts: u64| {
        calls.push(Call {
            assistant_index: msgs.len(),
            timestamp_ms: ts as f64,
            usage: None,
            output_tokens: 10,
        });
        msgs.push(m);
    };
    for (t, turn) in c.turns.iter().enumerate() {
        ts += 60_000;
        msgs.push(user(&body(t, turn.user_len), ts));
        for step in &turn.steps {
            ts += 1_000;
            let specs: Vec<(String, &str, String)> = step
                .iter()
                .map(|cs| {
                    id += 1;
                    let name = if cs.exec { "exec" } else { "read" };
                    let path = if cs.protected {
                        "/ws/AGENTS.md".to_string()
                    } else {
                        format!("src/f{id}.rs")
                    };
                    (format!("call_{id}"), name, path)
                })
                .collect();
            let refs: Vec<(&str, &str, &str)> = specs
                .iter()
                .map(|(a, b, p)| (a.as_str(), *b, p.as_str()))
                .collect();
            push_asst(&mut msgs, &mut calls, engine_support::calls(&refs, ts), ts);
            for ((cid, name, _), cs) in specs.iter().zip(step) {
                ts += 10;
                msgs.push(result(cid, name, &body(id + cs.size, cs.size), ts));
            }
        }
        ts += 1_000;
        push_asst(
            &mut msgs,
            &mut calls,
            assistant(&format!("turn {t} done"), ts),
            ts,
        );
    }
    (
        msgs.iter()
            .map(|j| Message::from_json(j).unwrap())
            .collect(),
        calls,
    )
}

fn config(k: &Knobs) -> Config {
    Config {
        prefix_lock_count: k.prefix_lock,
        tail_tokens: k.tail,
        min_fold_tokens: k.min_fold,
        fold_record_budget: k.record_budget,
        expected_remaining_calls: k.expected,
        ..Config::default()
    }
}

fn options(k: &Knobs) -> ReplayOptions {
    ReplayOptions {
        model: Some("deepseek/deepseek-v4-flash".into()),
        token_budget: Some(k.budget),
        reassemble_each_call: k.reassemble,
        echo_tool_loop: false,
        summaries: [SummaryMode::Off, SummaryMode::Echo, SummaryMode::Fail]
            [k.summaries as usize % 3],
        usage: UsageMode::Simulated {
            static_tokens: 300,
            tokens_per_weighted_char: 0.3,
        },
        check: true,
        check_idempotent: true,
        check_journal: true,
        keep_resolved: false,
        checkpoint_turn: None,
        max_violations: 5,
    }
}

/// Everything `regressions_replay` needs to re-run a case.
fn regression_json(c: &Case) -> String {
    serde_json::to_string(&json!({"property": "replay_invariants", "case": c})).unwrap()
}

/// Runs one case; `Err` carries a description.
fn check_case(c: &Case, cut_frac: f64, checkpoint_frac: f64) -> Result<(), String> {
    let (msgs, calls) = build(c);
    let cfg = config(&c.knobs);
    let mut opts = options(&c.knobs);
    opts.checkpoint_turn = Some((c.turns.len() as f64 * checkpoint_frac) as usize);
    let out = replay(&msgs, &calls, &cfg, &opts);
    if !out.violations.is_empty() || !out.errors.is_empty() {
        return Err(format!(
            "violations {:?} errors {:?}",
            out.violations, out.errors
        ));
    }
    // Crash-truncated journal at a byte: a prefix of the event sequence.
    let j = &out.journal;
    let cut = ((j.len() as f64) * cut_frac) as usize;
    let cut = (0..=cut)
        .rev()
        .find(|&b| j.is_char_boundary(b))
        .unwrap_or(0);
    let (r, rep) =
        Session::restore(cfg.clone(), "replay", None, &j[..cut]).map_err(|e| e.to_string())?;
    let complete = j[..cut].matches('\n').count() as u64
        + u64::from(!j[..cut].ends_with('\n') && j[cut..].starts_with('\n') && cut > 0);
    if r.state().seq != complete {
        return Err(format!(
            "cut at {cut}/{}: restored seq {} but {complete} complete lines ({rep:?})",
            j.len(),
            r.state().seq
        ));
    }
    let (exact, _) = Session::restore(
        cfg.clone(),
        "replay",
        None,
        &j[..j[..cut].rfind('\n').map_or(0, |p| p + 1)],
    )
    .map_err(|e| e.to_string())?;
    if complete == exact.state().seq && r.state() != exact.state() {
        return Err(format!(
            "cut at {cut}: torn-line restore differs from the line-boundary restore"
        ));
    }
    // The restored session keeps working on the full history.
    let mut r = r;
    let jsons: Vec<String> = msgs.iter().map(Message::to_json).collect();
    let p = shim(
        &mut r,
        &jsons,
        Some("deepseek/deepseek-v4-flash"),
        Some(c.knobs.budget),
    );
    let resolved = resolve(&p, &jsons);
    let shapes: Vec<Shape> = resolved
        .iter()
        .map(|m| Shape::of(&Message::from_json(m).unwrap()))
        .collect();
    if !pairing::violations_with(&shapes, true).is_empty() {
        return Err("restored session produced an invalid pairing".into());
    }
    // A call boundary restores to exactly that call's snapshot.
    match out.checkpoints.first() {
        Some((len, snap)) => {
            let (r, _) = Session::restore(cfg.clone(), "replay", None, &j[..*len])
                .map_err(|e| e.to_string())?;
            if &r.snapshot() != snap {
                return Err(format!(
                    "checkpoint at {len}: journal prefix restore differs from the live snapshot"
                ));
            }
        }
        None => return Err("no checkpoint taken".into()),
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(10_000), failure_persistence: None, max_shrink_iters: 2_000, ..ProptestConfig::default() })]

    #[test]
    fn replay_invariants(c in case(), cut in 0.0f64..1.0, cp in 0.0f64..1.0) {
        if let Err(e) = check_case(&c, cut, cp) {
            panic!("{e}\nregression: {}", regression_json(&c));
        }
    }
}

// ---- divergence ---------------------------------------------------------------------------------

#[derive(Debug, Clone, Serialize, Deserialize)]
enum Mutation {
    None,
    /// Rewrite message at position `frac` of the history in place (same role and ids).
    Rewrite(f64),
    /// Truncate to `frac` of the history.
    Truncate(f64),
    /// Replace messages after `frac` with a compaction summary.
    Compact(f64),
    /// Switch the model id.
    Model,
    /// The host drops the oldest `frac` of the history, puts `front` messages of its own in
    /// front of the rest (0-2), and, with `edit`, rewrites a kept message at that fraction of
    /// what is left (OpenClaw evicting and merging two messages in one call).
    Evict {
        frac: f64,
        front: u8,
        edit: Option<f64>,
    },
    /// The host's pre-turn `compact()` (no message list) before the assemble.
    Preflight,
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        6 => Just(Mutation::None),
        2 => (0.0f64..1.0).prop_map(Mutation::Rewrite),
        1 => (0.0f64..1.0).prop_map(Mutation::Truncate),
        1 => (0.0f64..1.0).prop_map(Mutation::Compact),
        1 => Just(Mutation::Model),
        2 => (0.0f64..0.6, 0u8..3, prop::option::of(0.0f64..1.0))
            .prop_map(|(frac, front, edit)| Mutation::Evict { frac, front, edit }),
        1 => Just(Mutation::Preflight),
    ]
}

fn rewrite(m: &str) -> String {
    let mut v: serde_json::Value = serde_json::from_str(m).unwrap();
    if let Some(parts) = v.get_mut("content").and_then(|c| c.as_array_mut()) {
        for p in parts {
            if let Some(t) = p.get_mut("text") {
                *t = json!(format!("{} (rewritten)", t.as_str().unwrap_or("")));
            }
        }
    }
    v.to_string()
}

fn check_divergence(c: &Case, muts: &[Mutation]) -> Result<(), String> {
    let (msgs, _) = build(c);
    let cfg = config(&c.knobs);
    let mut s = Session::new(cfg.clone(), "d");
    let mut journal = String::new();
    let mut hist: Vec<String> = Vec::new();
    let mut model = "deepseek/deepseek-v4-flash";
    let all: Vec<String> = msgs.iter().map(Message::to_json).collect();
    // Turn boundaries: user messages.
    let starts: Vec<usize> = (0..all.len())
        .filter(|&i| msgs[i].role_str() == "user")
        .chain([all.len()])
        .collect();
    for (t, w) in starts.windows(2).enumerate() {
        hist.extend(all[w[0]..w[1]].iter().cloned());
        match muts.get(t).unwrap_or(&Mutation::None) {
            Mutation::None => {}
            Mutation::Rewrite(f) => {
                let i = ((hist.len() as f64) * f) as usize % hist.len();
                hist[i] = rewrite(&hist[i]);
            }
            Mutation::Truncate(f) => hist.truncate(((hist.len() as f64) * f) as usize),
            Mutation::Compact(f) => {
                hist.truncate(((hist.len() as f64) * f) as usize);
                hist.push(
                    json!({"role": "compactionSummary", "summary": "s", "tokensBefore": 1, "timestamp": T0})
                        .to_string(),
                );
            }
            Mutation::Model => {
                model = if model.ends_with("flash") {
                    "deepseek/deepseek-v4-pro"
                } else {
                    "deepseek/deepseek-v4-flash"
                }
            }
            Mutation::Preflight => {}
            Mutation::Evict { frac, front, edit } => {
                let n = ((hist.len() as f64) * frac) as usize;
                hist.drain(..n.min(hist.len()));
                for k in 0..*front {
                    hist.insert(
                        k as usize,
                        json!({"role": "user", "content": [{"type": "text", "text": format!("(host front {k})")}], "timestamp": T0})
                            .to_string(),
                    );
                }
                if let Some(f) = edit {
                    let kept = hist.len() - *front as usize;
                    if kept > 0 {
                        let i = *front as usize + ((kept as f64) * f) as usize % kept;
                        hist[i] = rewrite(&hist[i]);
                    }
                }
            }
        }
        if let Some(Mutation::Preflight) = muts.get(t) {
            s.compact_request(&cachefold::engine::CompactInput {
                model: Some(model.to_string()),
                token_budget: Some(c.knobs.budget),
                current_token_count: None,
                context_window: None,
                now_ms: T0 as f64,
            })
            .map_err(|e| format!("turn {t}: compact: {e}"))?;
        }
        let held = |i: AssembleInput| AssembleInput {
            prompt_pending: c.knobs.held,
            ..i
        };
        let need = s.need(hist.len() as u32);
        let mut p = s
            .assemble(&held(input(
                &hist,
                &need,
                Some(model),
                Some(c.knobs.budget),
            )))
            .map_err(|e| format!("turn {t}: {e}"))?;
        if p.need_full {
            p = s
                .assemble(&held(input(
                    &hist,
                    &(0..hist.len() as u32).collect::<Vec<_>>(),
                    Some(model),
                    Some(c.knobs.budget),
                )))
                .map_err(|e| format!("turn {t}: {e}"))?;
        }
        journal.push_str(&s.take_journal());
        let out = resolve(&p, &hist);
        let shapes: Vec<Shape> = out
            .iter()
            .map(|m| Shape::of(&Message::from_json(m).unwrap()))
            .collect();
        if !pairing::violations_with(&shapes, true).is_empty() {
            return Err(format!("turn {t}: invalid pairing"));
        }
        // Every host message is sent or folded (segments are in record indices); the host's own
        // front messages of an eviction (before `skip`) are neither recorded nor sent.
        let st = s.state();
        for i in 0..hist.len() as u32 {
            let Some(r) = st.rec_of(i) else { continue };
            let folded = st.segs.iter().any(|g| g.from <= r && r < g.to);
            if !folded && !p.order.contains(&(i as i64)) {
                return Err(format!("turn {t}: host {i} (record {r}) dropped"));
            }
        }
        s.commit_turn(&cachefold::engine::CommitInput {
            advancement_key: format!("t{t}"),
            messages: all[w[0]..w[1]].to_vec(),
            now_ms: T0 as f64,
            context_window: None,
        })
        .map_err(|e| e.to_string())?;
        journal.push_str(&s.take_journal());
    }
    let (r, _) = Session::restore(cfg, "d", None, &journal).map_err(|e| e.to_string())?;
    if r.snapshot() != s.snapshot() {
        return Err("journal restore differs".into());
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(10_000) / 10, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn divergence_invariants(c in case(), muts in prop::collection::vec(mutation(), 0..9)) {
        if let Err(e) = check_divergence(&c, &muts) {
            panic!("{e}\nregression: {}", serde_json::to_string(&json!({"property": "divergence_invariants", "case": c, "mutations": muts})).unwrap());
        }
    }
}

// ---- kept counterexamples ---------------------------------------------------------------------

/// Every `tests/regressions/*.json` (minimised counterexamples and hand-written edge cases)
/// still passes.
#[test]
fn regressions_replay() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/regressions");
    let mut n = 0;
    for e in std::fs::read_dir(&dir).expect("tests/regressions exists") {
        let path = e.unwrap().path();
        if path.extension().is_none_or(|x| x != "json") {
            continue;
        }
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let c: Case = serde_json::from_value(v["case"].clone())
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let res = match v["property"].as_str() {
            Some("divergence_invariants") => {
                let muts: Vec<Mutation> = serde_json::from_value(v["mutations"].clone()).unwrap();
                check_divergence(&c, &muts)
            }
            _ => {
                let cut = v["cut"].as_f64().unwrap_or(0.5);
                let cp = v["checkpoint"].as_f64().unwrap_or(0.5);
                check_case(&c, cut, cp)
            }
        };
        if let Err(e) = res {
            panic!("{}: {e}", path.display());
        }
        n += 1;
    }
    assert!(n > 0, "no regression cases found");
}
