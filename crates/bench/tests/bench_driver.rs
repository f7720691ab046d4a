//! The shared replay driver (`bench::driver`, used by `cachefold-bench` and the native addon)
//! and the SQLite store listing the addon's `replay --since` builds on.

use cachefold_bench::bench::driver::{Driver, Progress, Settings};
use cachefold_bench::bench::{sqlite, tokenizer::Tokenizer};
use cachefold_bench::replay::transcript::{parse_pi, Transcript};
use std::sync::Arc;

fn fixture(name: &str) -> String {
    std::fs::read_to_string(format!(
        "{}/tests/fixtures/{name}",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap()
}

fn sessions() -> Vec<(String, Transcript)> {
    vec![
        (
            "small".into(),
            parse_pi(&fixture("pi_small.jsonl")).unwrap(),
        ),
        (
            "branch".into(),
            parse_pi(&fixture("pi_branch.jsonl")).unwrap(),
        ),
        ("demo".into(), cachefold_bench::bench::demo::session()),
    ]
}

/// Run the driver on `workers` threads; returns the JSON report and the final progress.
fn replay(workers: usize, settings: Settings) -> (String, (u64, u64)) {
    let progress = Arc::new(Progress::default());
    let d = Driver::new(
        Tokenizer::o200k().unwrap(),
        &sessions(),
        settings,
        progress.clone(),
    )
    .unwrap();
    let (done0, total) = d.progress();
    assert_eq!(done0, 0);
    assert_eq!(d.sessions().len(), 3);
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| d.work());
        }
    });
    let json = cachefold_bench::bench::report::json(&d.report());
    (json, (progress.get().0, total))
}

#[test]
fn same_report_whatever_the_worker_count() {
    let (one, p1) = replay(1, Settings::default());
    let (three, p3) = replay(3, Settings::default());
    assert_eq!(one, three, "job order must not change any figure");
    let v: serde_json::Value = serde_json::from_str(&one).unwrap();
    // Every strategy replays every replayed call of every session (assistant messages without
    // content are dropped, as pi-ai drops them), and progress counts them all.
    let calls: u64 = v["header"]["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["calls"].as_u64().unwrap())
        .sum();
    let recorded: u64 = sessions().iter().map(|(_, t)| t.calls.len() as u64).sum();
    assert!(calls > 100 && calls <= recorded, "{calls} of {recorded}");
    // Eight strategies: S0, S1a, S1b, S2, S2c, S2f, S3 and S3o (S3 with topics off).
    assert_eq!(cachefold_bench::bench::ALL_STRATEGIES.len(), 8);
    assert_eq!(p1, (8 * calls, 8 * calls));
    assert_eq!(p3, p1);
    let totals = v["totals"].as_array().unwrap();
    assert_eq!(totals.len(), 8);
    assert_eq!(v["header"]["tokenizer"], "o200k");
    assert_eq!(v["jobs"].as_array().unwrap().len(), 24);
    for t in totals {
        assert_eq!(t["metrics"]["calls"].as_u64(), Some(calls), "{t}");
        assert!(t["metrics"]["cost"]["headline"].as_f64().unwrap() > 0.0);
    }
}

#[test]
fn settings_reach_the_report_and_bad_ones_are_refused() {
    let settings = Settings {
        strategies: vec!["S1a".into(), "S3".into()],
        price: "deepseek-v4-pro-peak".into(),
        cold: true,
        ..Settings::default()
    };
    let (json, (done, total)) = replay(2, settings);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let ids: Vec<&str> = v["totals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["strategy"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["S1a", "S3"]);
    assert_eq!(v["header"]["price"], "deepseek-v4-pro-peak");
    assert_eq!(v["header"]["warmStatic"], false);
    assert_eq!(done, total);

    for (bad, msg) in [
        (
            Settings {
                strategies: vec!["S9".into()],
                ..Settings::default()
            },
            "unknown strategy S9",
        ),
        (
            Settings {
                price: "free".into(),
                ..Settings::default()
            },
            "unknown price free",
        ),
    ] {
        let err = Driver::new(
            Tokenizer::o200k().unwrap(),
            &sessions(),
            bad,
            Arc::default(),
        )
        .err()
        .expect("refused");
        assert!(err.to_string().contains(msg), "{err}");
    }
}

#[test]
fn store_listing_and_selected_reads() {
    let dir = std::env::temp_dir().join(format!("cachefold-driver-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("openclaw-agent.sqlite");
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch(
        "CREATE TABLE transcript_events (
           session_id TEXT NOT NULL, seq INTEGER NOT NULL, event_json TEXT, created_at INTEGER NOT NULL,
           event_zstd BLOB, event_utf8_bytes INTEGER, navigation_json TEXT, PRIMARY KEY (session_id, seq));",
    )
    .unwrap();
    let pi = fixture("pi_small.jsonl");
    let lines: Vec<&str> = pi.lines().filter(|l| l.starts_with('{')).collect();
    for (sid, t0) in [("b", 5_000i64), ("a", 1_000), ("c", 9_000)] {
        for (seq, l) in lines.iter().enumerate() {
            let z = zstd::bulk::compress(l.as_bytes(), 1).unwrap();
            conn.execute(
                "INSERT INTO transcript_events (session_id, seq, event_json, created_at, event_zstd, event_utf8_bytes) VALUES (?1, ?2, NULL, ?3, ?4, ?5)",
                rusqlite::params![sid, seq as i64, t0 + seq as i64, z, l.len() as i64],
            )
            .unwrap();
        }
    }
    drop(conn);
    let ro =
        rusqlite::Connection::open_with_flags(&path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .unwrap();
    let rows = sqlite::list_sessions(&ro).unwrap();
    let n = lines.len() as u64;
    assert_eq!(
        rows,
        vec![
            sqlite::SessionRow {
                session_id: "a".into(),
                events: n,
                first_at: 1_000,
                last_at: 1_000 + n as i64 - 1
            },
            sqlite::SessionRow {
                session_id: "b".into(),
                events: n,
                first_at: 5_000,
                last_at: 5_000 + n as i64 - 1
            },
            sqlite::SessionRow {
                session_id: "c".into(),
                events: n,
                first_at: 9_000,
                last_at: 9_000 + n as i64 - 1
            },
        ]
    );
    let picked = sqlite::read_sessions_where(&ro, &|id| id != "b").unwrap();
    let ids: Vec<&str> = picked.iter().map(|s| s.session_id.as_str()).collect();
    assert_eq!(ids, ["a", "c"]);
    assert_eq!(
        picked[0].transcript,
        cachefold_bench::replay::transcript::parse_pi_lines(lines.iter().copied()).unwrap()
    );
    let other = rusqlite::Connection::open_in_memory().unwrap();
    assert_eq!(
        sqlite::list_sessions(&other).err().map(|e| e.code()),
        Some("CACHEFOLD_INPUT")
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `R + recovery` is priced: every anchor the credit adds stands for a recovery that costs a
/// model request and the recovered page; S1a, which keeps everything, recovers nothing.
#[test]
fn recovery_credit_is_priced() {
    let settings = Settings {
        strategies: vec!["S1a".into(), "S3".into()],
        ..Settings::default()
    };
    let (json, _) = replay(1, settings);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let total = |id: &str| {
        v["totals"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["strategy"] == id)
            .cloned()
            .unwrap()
    };
    let s1a = total("S1a");
    let s3 = total("S3");
    assert_eq!(s1a["metrics"]["recoveries"], 0);
    assert_eq!(s1a["metrics"]["recoveryCost"]["headlineInput"], 0.0);
    let m = &s3["metrics"];
    assert!(
        m["anchorsRetainedCredit"].as_u64().unwrap() > m["anchorsRetained"].as_u64().unwrap(),
        "the demo needs an anchor only a shrunk result holds"
    );
    let recoveries = m["recoveries"].as_u64().unwrap();
    assert!(recoveries > 0);
    // At most one recovery per credited anchor.
    assert!(
        recoveries
            <= m["anchorsRetainedCredit"].as_u64().unwrap()
                - m["anchorsRetained"].as_u64().unwrap()
    );
    assert!(m["recoveredTokens"].as_u64().unwrap() >= recoveries);
    let input = m["cost"]["headlineInput"].as_f64().unwrap();
    let rec = m["recoveryCost"]["headlineInput"].as_f64().unwrap();
    assert!(rec > 0.0);
    let d = &s3["derived"];
    let with = d["inputRecoveryVsS1a"].as_f64().unwrap();
    let without = d["inputVsS1a"].as_f64().unwrap();
    assert!((with / without - (input + rec) / input).abs() < 1e-9);
    assert!(with > without);
}

/// The native addon hands sessions over one at a time (`Driver::streaming`, each parsed session
/// dropped once prepared): the same report as preparing them from a held list.
#[test]
fn streamed_sessions_give_the_same_report() {
    let settings = || Settings {
        strategies: vec!["S0".into(), "S1a".into(), "S3".into()],
        ..Settings::default()
    };
    let run = |d: Driver| {
        d.work();
        cachefold_bench::bench::report::json(&d.report())
    };
    let held = Driver::new(
        Tokenizer::o200k().unwrap(),
        &sessions(),
        settings(),
        Arc::new(Progress::default()),
    )
    .unwrap();
    let mut handed = 0;
    let streamed = Driver::streaming(
        Tokenizer::o200k().unwrap(),
        settings(),
        Arc::new(Progress::default()),
        |add| {
            for (name, t) in sessions() {
                add(&name, t);
                handed += 1;
            }
            Ok::<(), cachefold::error::Error>(())
        },
    )
    .unwrap();
    assert_eq!(handed, 3);
    assert_eq!(run(held), run(streamed));
    // A feed error is the driver's error.
    let err = Driver::streaming(
        Tokenizer::o200k().unwrap(),
        settings(),
        Arc::new(Progress::default()),
        |_| Err(cachefold::error::Error::Input("store gone".into())),
    )
    .err()
    .map(|e| e.to_string());
    assert_eq!(err.as_deref(), Some("invalid input: store gone"));
}

/// A long session replays its strategies one after the other, in one job (two of its replays
/// at once would hold two sessions' worth of strategy state); shorter ones keep one job per
/// strategy, so workers run them in parallel.
#[test]
fn a_long_session_runs_its_strategies_in_turn() {
    use cachefold_bench::bench::driver::{queue_jobs, SERIAL_CALLS};
    use cachefold_bench::bench::run;
    let tok = Tokenizer::bytes4();
    let demo = cachefold_bench::bench::demo::session();
    let mut long = run::prepare(&tok, "long", &demo);
    let short = run::prepare(&tok, "short", &demo);
    assert!(short.calls.len() <= SERIAL_CALLS);
    let first = long.calls.first().copied().unwrap();
    long.calls = vec![first; SERIAL_CALLS + 1];
    let short_calls = short.calls.len() as u64;
    let ids: Vec<String> = vec!["S1a".into(), "S3".into()];
    let (mut jobs, total) = queue_jobs(&[Arc::new(long), Arc::new(short)], &ids);
    // Every replay's calls are counted once: two strategies over each session.
    assert_eq!(total, 2 * (SERIAL_CALLS as u64 + 1) + 2 * short_calls);
    jobs.sort();
    assert_eq!(
        jobs,
        vec![
            (0, ids.clone()),
            (1, vec!["S1a".to_string()]),
            (1, vec!["S3".to_string()]),
        ]
    );
}

/// A session of more than `SERIAL_CALLS` calls keeps its messages compressed (a long replay
/// holds them all for its whole run); a shorter one keeps them parsed (read back on every
/// access they doubled the corpus bench's CPU), and both read back the same messages.
#[test]
fn only_a_long_session_keeps_its_messages_packed() {
    use cachefold_bench::bench::driver::SERIAL_CALLS;
    use cachefold_bench::bench::run;
    let tok = Tokenizer::bytes4();
    let demo = cachefold_bench::bench::demo::session();
    let mut long = demo.clone();
    let first = long.calls[0].clone();
    long.calls = vec![first; SERIAL_CALLS + 1];
    let short = run::prepare(&tok, "short", &demo);
    let long = run::prepare(&tok, "long", &long);
    assert!(!short.store.packs());
    assert!(long.store.packs());
    assert_eq!(short.message_count(), long.message_count());
    for i in 0..short.message_count() {
        assert_eq!(short.message(i), long.message(i));
    }
}

/// A session replays to the same figures whether its messages and tokens are kept packed (a
/// long session's) or not, for every strategy: packing changes what is held, not what is read.
#[test]
fn a_packed_session_replays_as_an_unpacked_one() {
    use cachefold_bench::bench::tokenizer::Stored;
    use cachefold_bench::bench::{self, cache, prefix, run};
    let tok = Tokenizer::bytes4();
    let demo = bench::demo::session();
    let plain = run::prepare_packing(&tok, "demo", demo.clone(), false);
    let packed = run::prepare_packing(&tok, "demo", demo, true);
    assert!(!plain.store.packs() && !plain.base_tokens.packs());
    assert!(packed.store.packs() && packed.base_tokens.packs());
    // The originals' tokens are held packed (a short body may stay as it is).
    let bodies = packed
        .orig
        .iter()
        .filter(|m| matches!(packed.base_tokens.get(&m.body_key), Some(Stored::Packed(_))));
    assert!(bodies.count() * 2 > packed.message_count());
    // The originals' list does not keep the parsed messages' allocation.
    assert_eq!(packed.orig.capacity(), packed.orig.len());
    let glue = run::Glue::new(&tok);
    let sp = run::static_prefix(&tok, prefix::Profile::OpenClaw);
    for cache in [cache::Params::ds_strict(), {
        let mut p = cache::Params::ds_strict();
        p.model = cache::Model::Kimi;
        p
    }] {
        let opts = run::Options {
            window: 60_000,
            cache,
            price: "deepseek-flash-peak".into(),
            warm_static: true,
            price_row: None,
        };
        // Summariser requests are rendered too (a packed session does not keep them).
        let mut summariser_calls = 0;
        for id in bench::ALL_STRATEGIES {
            let replay = |prep| {
                run::run_job(
                    &tok,
                    &glue,
                    &sp,
                    prep,
                    bench::strategy(id).unwrap().as_mut(),
                    &opts,
                    &mut |_| {},
                )
            };
            let (a, b) = (replay(&plain), replay(&packed));
            assert!(a.metrics.calls > 50, "{id}");
            summariser_calls += a.metrics.extra_calls;
            assert_eq!(
                serde_json::to_string(&a).unwrap(),
                serde_json::to_string(&b).unwrap(),
                "{id} {:?}",
                cache.model
            );
        }
        assert!(summariser_calls > 0);
    }
}

/// The heaviest job can be taken and run on the host's own thread (the native addon runs it on
/// the thread that prepared the sessions) while workers take the rest: the same report.
#[test]
fn the_heaviest_job_run_apart_gives_the_same_report() {
    let settings = Settings {
        strategies: vec!["S1a".into(), "S3".into()],
        ..Settings::default()
    };
    let (all, _) = replay(2, settings.clone());
    let progress = Arc::new(Progress::default());
    let d = Driver::new(Tokenizer::o200k().unwrap(), &sessions(), settings, progress).unwrap();
    let job = d.take_heaviest().unwrap();
    // The demo session is the longest of the three (its calls × messages weigh most).
    assert_eq!(job.session, 2);
    assert_eq!(job.strategies, vec!["S1a".to_string()]);
    let runs = std::sync::atomic::AtomicUsize::new(0);
    let count = || {
        runs.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    };
    std::thread::scope(|s| {
        s.spawn(|| d.work());
        d.run_then(job, &count);
        d.work_then(&count);
    });
    assert!(runs.load(std::sync::atomic::Ordering::Relaxed) >= 1);
    assert_eq!(cachefold_bench::bench::report::json(&d.report()), all);
    assert!(d.take_heaviest().is_none(), "every job ran");
}
