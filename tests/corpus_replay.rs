//! Every corpus session replays through `replay::replay` call by call with zero invariant
//! violations (pairing, completeness, append-only, budget, idempotence, journal restore).
//!
//! The corpus lives next to the repository (`../shared/corpus` relative to the crate, i.e.
//! the `shared/corpus` folder beside the checkout, or `$CACHEFOLD_CORPUS`); when it is absent
//! the tests fail under CI and print that they were skipped elsewhere (`tests/prereq`).

mod prereq;

use cachefold::config::Config;
use cachefold_bench::replay::transcript::parse_auto;
use cachefold_bench::replay::{replay, ReplayOptions, SummaryMode};
use std::path::{Path, PathBuf};

fn sessions(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for sub in [
        "pi-mono",
        "claude-code-spotter",
        "reasonix-tau-bench",
        "entireio-cli",
    ] {
        let rd = std::fs::read_dir(root.join(sub))
            .unwrap_or_else(|e| panic!("corpus folder {sub}: {e}"));
        let mut files: Vec<PathBuf> = rd
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.is_file() && p.extension().is_some_and(|x| x == "jsonl"))
            .collect();
        files.sort();
        out.extend(files);
    }
    out
}

fn run(opts: &ReplayOptions, cfg: &Config, label: &str) {
    let Some(root) = prereq::corpus(&format!("corpus_replay [{label}]")) else {
        return;
    };
    let files = sessions(&root);
    assert!(
        files.len() >= 50,
        "expected the whole corpus, found {} files",
        files.len()
    );
    let mut total_calls = 0;
    let mut total_folds = 0u64;
    let mut failures = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        let name = f.strip_prefix(&root).unwrap().display().to_string();
        let t = match parse_auto(&name, &text) {
            Ok(t) => t,
            Err(e) => panic!("{name}: {e}"),
        };
        let out = replay(&t.messages, &t.calls, cfg, opts);
        total_calls += out.calls.len();
        let folds = out.stats["folds"]["count"].as_u64().unwrap_or(0);
        total_folds += folds;
        eprintln!(
            "[{label}] {name}: msgs={} calls={} folds={} condensed={} repairs={} repairShifts={} divergences={} hit%pred={} journal={}B",
            t.messages.len(),
            out.calls.len(),
            folds,
            out.stats["folds"]["condensed"],
            out.stats["repairs"],
            out.repair_shifts,
            out.stats["divergences"],
            out.stats["predictedHitPct"],
            out.journal.len()
        );
        if !out.violations.is_empty() || !out.errors.is_empty() {
            failures.push(format!(
                "{name}: {:?} {:?}",
                &out.violations[..out.violations.len().min(5)],
                &out.errors[..out.errors.len().min(5)]
            ));
        }
        assert_eq!(
            out.calls.len(),
            t.calls.len(),
            "{name}: every call replayed"
        );
    }
    eprintln!(
        "[{label}] {} sessions, {total_calls} calls, {total_folds} folds",
        files.len()
    );
    assert!(
        failures.is_empty(),
        "invariant violations:\n{}",
        failures.join("\n")
    );
}

/// Defaults as shipped (DeepSeek flash, 128K budget, one assemble per turn).
#[test]
fn corpus_replays_with_defaults() {
    let opts = ReplayOptions {
        model: Some("deepseek/deepseek-v4-flash".into()),
        summaries: SummaryMode::Echo,
        check_idempotent: true,
        ..ReplayOptions::default()
    };
    run(&opts, &Config::default(), "defaults");
}

/// `ownsCompaction` tool loop (assemble before every call), a small budget that forces
/// emergency folds and condensation, and failing summaries.
#[test]
fn corpus_replays_tight_budget_tool_loop() {
    let cfg = Config {
        tail_tokens: 4_000,
        min_fold_tokens: 2_000,
        fold_record_budget: 3_000,
        ..Config::default()
    };
    let opts = ReplayOptions {
        model: Some("deepseek/deepseek-v4-flash".into()),
        token_budget: Some(32_000),
        reassemble_each_call: true,
        summaries: SummaryMode::Fail,
        ..ReplayOptions::default()
    };
    run(&opts, &cfg, "tight");
}

/// `ownsCompaction` as OpenClaw runs it: later calls of a turn re-assemble our own output plus
/// the messages appended since (the echo). Every answer pairs strictly, including when the
/// user typed while parallel tools ran (entireio-cli: a user message between a call's results).
#[test]
fn corpus_replays_tool_loop_echo_strictly() {
    let cfg = Config {
        tail_tokens: 1_500,
        min_fold_tokens: 1_000,
        fold_record_budget: 3_000,
        ..Config::default()
    };
    let opts = ReplayOptions {
        model: Some("deepseek/deepseek-v4-flash".into()),
        token_budget: Some(24_000),
        echo_tool_loop: true,
        summaries: SummaryMode::Fail,
        ..ReplayOptions::default()
    };
    run(&opts, &cfg, "echo");
}
