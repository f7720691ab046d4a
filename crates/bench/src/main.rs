//! `cachefold-bench`: replay recorded agent sessions through every context strategy under a
//! prefix-cache model and DeepSeek prices. See `cachefold_bench::bench` (module doc) for what is
//! measured and how; this file only does I/O: arguments, files, SQLite, threads, progress.

use cachefold_bench::bench::{
    self, cache, driver, prefix, report, run, sqlite, tokenizer::Tokenizer,
};
use cachefold_bench::replay::transcript::{self, Transcript};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

const USAGE: &str = "usage: cachefold-bench [SESSION...] [--demo] [--corpus [DIR]]
       [--strategy S0,S1a,S1b,S2,S2c,S2f,S3] [--price deepseek-flash-peak|deepseek-flash-offpeak|
        deepseek-v4-pro-peak|deepseek-v4-pro-offpeak|deepseek-flash-auto|deepseek-v4-pro-auto|openai-like|kimi-like]
       [--window N] [--cache ds-strict|ds-optimistic|openai|kimi] [--block 128|64] [--expire-hours H]
       [--prefix openclaw|pi] [--tokenizer PATH | --o200k] [--json out.json] [--svg out.svg] [--md out.md]
       [--cold] [--jobs N] [--quiet] [--provider all|PROFILE[,PROFILE...]]
       [--loso [--loso-windows 1000000,200000] [--loso-recall 0.95,0.90]] [--loso-from loso-tables.json]

SESSION: a pi/OpenClaw session .jsonl, a Claude Code .jsonl, a Reasonix .jsonl, an OpenClaw
openclaw-agent.sqlite (every session in it; `file.sqlite#SESSION_ID` for one), or a directory
(searched recursively for .jsonl/.sqlite; Claude Code compaction-agent files are skipped).
--corpus: the shared corpus ($CACHEFOLD_CORPUS, else ../shared/corpus next to the checkout).
--demo: the built-in deterministic demo session (default when no session is given).
--cold: every session starts with an empty cache (default: the static prefix is warm, as on any
account that ran a session before; the first request of each session still misses the rest).
--loso: leave-one-session-out choice of S3 defaults: replays S1a, S2, S2c, S2f and every
configuration of the sweep (cachefold_bench::bench::loso::grid) at each window, then prints left-out
vs in-sample figures and writes loso.json and cost-recall.svg next to --json / --svg
(default bench-out/). Without sessions it replays the corpus. --loso-from F re-renders the
choices, tables and chart from a saved loso-tables.json (the per-session metrics of every row,
written by --loso) without replaying anything, e.g. with other --loso-recall targets.
--provider: S1a, the peers and S3 priced under provider cache profiles (cachefold's
src/providers.rs: deepseek-flash, anthropic-sonnet, openai-gpt-5, gemini-2.5-pro, kimi, qwen,
glm, …), each replayed with its cache rule and lifetime (idle gaps from the recorded
timestamps); prints one row per profile (cachefold_bench::bench::provider); --json writes the
per-session figures (input cost per strategy, S3 ×S1a) per profile. With --loso, the LOSO choice
per profile (its cache rule, lifetime and prices, S3 with the profile forced); each profile's
loso.md, loso.json, loso-tables.json and cost-recall.svg go to a folder named after it.
Tokenizer: $CACHEFOLD_TOKENIZER or <repo>/.cache/tokenizer/deepseek-v4/tokenizer.json
(fetch it with .ci/fetch-tokenizer); without it the o200k fallback is used and said so.";

struct Args {
    inputs: Vec<String>,
    demo: bool,
    corpus: Option<PathBuf>,
    strategies: Vec<String>,
    price: String,
    window: u64,
    cache: cache::Params,
    profile: prefix::Profile,
    tokenizer: Option<PathBuf>,
    o200k: bool,
    json: Option<PathBuf>,
    svg: Option<PathBuf>,
    md: Option<PathBuf>,
    jobs: usize,
    quiet: bool,
    cold: bool,
    /// Config of S3 (cachefold), `--s3-config JSON` (defaults: the product defaults).
    s3: cachefold::config::Config,
    /// Leave-one-session-out mode.
    loso: bool,
    /// Windows of the LOSO runs.
    loso_windows: Vec<u64>,
    /// `--loso-from FILE`: re-make the LOSO choice, tables and chart from a saved
    /// loso-tables.json (per-session metrics of every row) without replaying.
    loso_from: Option<PathBuf>,
    /// Recall targets of the LOSO objective (one LOSO per target, same runs).
    loso_recall: Vec<f64>,
    /// `--provider`: price under these provider cache profiles instead.
    provider: Option<String>,
}

fn default_corpus() -> PathBuf {
    std::env::var("CACHEFOLD_CORPUS")
        .map(PathBuf::from)
        .unwrap_or_else(|_| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus")
        })
}

fn die(msg: &str) -> ! {
    eprintln!("cachefold-bench: {msg}");
    std::process::exit(2)
}

fn parse_args() -> Args {
    // The replay settings start from the driver's defaults (the addon uses the same ones).
    let d = driver::Settings::default();
    let mut a = Args {
        inputs: Vec::new(),
        demo: false,
        corpus: None,
        strategies: d.strategies,
        price: d.price,
        window: d.window,
        cache: d.cache,
        profile: d.profile,
        tokenizer: None,
        o200k: false,
        json: None,
        svg: None,
        md: None,
        jobs: std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(2)
            .clamp(1, 8),
        quiet: false,
        cold: d.cold,
        s3: d.s3,
        loso: false,
        loso_windows: vec![1_000_000, 200_000],
        loso_recall: vec![0.95, 0.90],
        loso_from: None,
        provider: None,
    };
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let mut i = 0;
    let val = |i: &mut usize, name: &str| -> String {
        *i += 1;
        argv.get(*i)
            .cloned()
            .unwrap_or_else(|| die(&format!("{name} needs a value")))
    };
    while i < argv.len() {
        let arg = argv.get(i).cloned().unwrap_or_default();
        match arg.as_str() {
            "-h" | "--help" => {
                println!("{USAGE}");
                std::process::exit(0);
            }
            "--demo" => a.demo = true,
            "--provider" => a.provider = Some(val(&mut i, &arg)),
            "--corpus" => {
                let next = argv.get(i + 1).filter(|n| !n.starts_with("--")).cloned();
                a.corpus = Some(match next {
                    Some(p) => {
                        i += 1;
                        PathBuf::from(p)
                    }
                    None => default_corpus(),
                });
            }
            "--strategy" | "--strategies" => {
                let v = val(&mut i, &arg);
                a.strategies = v
                    .split(',')
                    .map(|s| s.trim().to_string())
                    .filter(|s| !s.is_empty())
                    .collect();
                for s in &a.strategies {
                    if bench::strategy(s).is_none() {
                        die(&format!(
                            "unknown strategy {s} (known: {})",
                            bench::ALL_STRATEGIES.join(",")
                        ));
                    }
                }
            }
            "--price" => {
                a.price = val(&mut i, &arg);
                if !run::price_known(&a.price) {
                    die(&format!("unknown price {}", a.price));
                }
            }
            "--window" => {
                a.window = val(&mut i, &arg)
                    .replace('_', "")
                    .parse()
                    .unwrap_or_else(|_| die("--window wants a token count"))
            }
            "--cache" => {
                a.cache.model = cache::Model::parse(&val(&mut i, &arg))
                    .unwrap_or_else(|| die("--cache: ds-strict|ds-optimistic|openai|kimi"))
            }
            "--block" => {
                a.cache.block = val(&mut i, &arg)
                    .parse()
                    .ok()
                    .filter(|b: &usize| *b > 0)
                    .unwrap_or_else(|| die("--block wants a positive number"))
            }
            "--expire-hours" => {
                let h: f64 = val(&mut i, &arg)
                    .parse()
                    .unwrap_or_else(|_| die("--expire-hours wants a number"));
                a.cache.expiry_ms = Some(h * 3_600_000.0);
            }
            "--prefix" => {
                a.profile = prefix::Profile::parse(&val(&mut i, &arg))
                    .unwrap_or_else(|| die("--prefix: openclaw|pi"))
            }
            "--tokenizer" => a.tokenizer = Some(PathBuf::from(val(&mut i, &arg))),
            "--o200k" => a.o200k = true,
            "--s3-config" => {
                a.s3 = cachefold::config::Config::from_json(&val(&mut i, &arg))
                    .unwrap_or_else(|e| die(&format!("--s3-config: {e}")))
            }
            "--json" => a.json = Some(PathBuf::from(val(&mut i, &arg))),
            "--svg" => a.svg = Some(PathBuf::from(val(&mut i, &arg))),
            "--md" => a.md = Some(PathBuf::from(val(&mut i, &arg))),
            "--jobs" => {
                a.jobs = val(&mut i, &arg)
                    .parse()
                    .ok()
                    .filter(|n: &usize| *n > 0)
                    .unwrap_or_else(|| die("--jobs wants a positive number"))
            }
            "--quiet" | "-q" => a.quiet = true,
            "--loso" => a.loso = true,
            "--loso-from" => a.loso_from = Some(PathBuf::from(val(&mut i, &arg))),
            "--loso-windows" => {
                a.loso_windows = val(&mut i, &arg)
                    .split(',')
                    .map(|w| {
                        w.trim()
                            .replace('_', "")
                            .parse()
                            .ok()
                            .filter(|n: &u64| *n > 0)
                            .unwrap_or_else(|| die("--loso-windows wants token counts"))
                    })
                    .collect()
            }
            "--loso-recall" => {
                a.loso_recall = val(&mut i, &arg)
                    .split(',')
                    .map(|r| {
                        r.trim()
                            .parse()
                            .ok()
                            .filter(|r: &f64| (0.0..=1.0).contains(r))
                            .unwrap_or_else(|| die("--loso-recall wants numbers in 0..1"))
                    })
                    .collect()
            }
            "--cold" => a.cold = true,
            s if s.starts_with("--") => die(&format!("unknown option {s}\n{USAGE}")),
            _ => a.inputs.push(arg.clone()),
        }
        i += 1;
    }
    if a.inputs.is_empty() && a.corpus.is_none() && !a.demo {
        if a.loso {
            a.corpus = Some(default_corpus());
        } else {
            a.demo = true;
        }
    }
    a
}

fn load_tokenizer(a: &Args) -> Tokenizer {
    if a.o200k {
        return Tokenizer::o200k().unwrap_or_else(|e| die(&e.to_string()));
    }
    let path = a
        .tokenizer
        .clone()
        .or_else(|| std::env::var("CACHEFOLD_TOKENIZER").ok().map(PathBuf::from))
        .unwrap_or_else(|| {
            // The repository's .cache (`.ci/setup tokenizer`), two levels above this crate.
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../../.cache/tokenizer/deepseek-v4/tokenizer.json")
        });
    match std::fs::read(&path) {
        Ok(bytes) => Tokenizer::deepseek_from_bytes(&bytes).unwrap_or_else(|e| die(&e.to_string())),
        Err(_) => {
            eprintln!(
                "cachefold-bench: DeepSeek-V4 tokenizer not found at {} (run .ci/fetch-tokenizer); using the o200k fallback (counts within ~3-7 %, block positions differ)",
                path.display()
            );
            Tokenizer::o200k().unwrap_or_else(|e| die(&e.to_string()))
        }
    }
}

fn collect_files(p: &Path, out: &mut Vec<PathBuf>) {
    if p.is_dir() {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(p)
            .map(|rd| rd.filter_map(|e| e.ok().map(|e| e.path())).collect())
            .unwrap_or_default();
        entries.sort();
        for e in entries {
            collect_files(&e, out);
        }
    } else {
        let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
        let ext_ok = name.ends_with(".jsonl") || name.ends_with(".sqlite") || name.ends_with(".db");
        // Claude Code's compaction agent is the recorded compaction itself, not a session.
        if ext_ok && !name.starts_with("agent-acompact") {
            out.push(p.to_path_buf());
        }
    }
}

fn display_name(p: &Path, root: Option<&Path>) -> String {
    match root.and_then(|r| p.strip_prefix(r).ok()) {
        Some(rel) => rel.display().to_string(),
        None => p
            .file_name()
            .map(|n| n.to_string_lossy().to_string())
            .unwrap_or_else(|| p.display().to_string()),
    }
}

fn load_sessions(a: &Args) -> Vec<(String, Transcript)> {
    let mut out = Vec::new();
    if a.demo {
        out.push(("demo".to_string(), bench::demo::session()));
    }
    let mut files: Vec<(PathBuf, Option<PathBuf>, Option<String>)> = Vec::new();
    if let Some(c) = &a.corpus {
        if !c.is_dir() {
            die(&format!("corpus directory {} not found", c.display()));
        }
        let mut v = Vec::new();
        collect_files(c, &mut v);
        files.extend(v.into_iter().map(|f| (f, Some(c.clone()), None)));
    }
    for inp in &a.inputs {
        let (path, only) = match inp.split_once('#') {
            Some((p, s)) if p.ends_with(".sqlite") || p.ends_with(".db") => {
                (PathBuf::from(p), Some(s.to_string()))
            }
            _ => (PathBuf::from(inp), None),
        };
        if path.is_dir() {
            let mut v = Vec::new();
            collect_files(&path, &mut v);
            files.extend(v.into_iter().map(|f| (f, Some(path.clone()), None)));
        } else if path.exists() {
            files.push((path, None, only));
        } else {
            die(&format!("{} not found", path.display()));
        }
    }
    for (f, root, only) in files {
        let name = display_name(&f, root.as_deref());
        let lower = name.to_ascii_lowercase();
        if lower.ends_with(".sqlite") || lower.ends_with(".db") {
            let conn = rusqlite::Connection::open_with_flags(
                &f,
                rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
            )
            .unwrap_or_else(|e| die(&format!("{}: {e}", f.display())));
            match sqlite::read_sessions(&conn, only.as_deref()) {
                Ok(sessions) => {
                    for s in sessions {
                        if s.bad_rows > 0 {
                            eprintln!(
                                "cachefold-bench: {name}#{}: {} undecodable rows skipped",
                                s.session_id, s.bad_rows
                            );
                        }
                        out.push((format!("{name}#{}", s.session_id), s.transcript));
                    }
                }
                Err(e) => die(&format!("{}: {e}", f.display())),
            }
            continue;
        }
        let text =
            std::fs::read_to_string(&f).unwrap_or_else(|e| die(&format!("{}: {e}", f.display())));
        match transcript::parse_auto(&name, &text) {
            Ok(t) => {
                if t.calls.is_empty() {
                    eprintln!("cachefold-bench: {name}: no LLM calls, skipped");
                } else {
                    out.push((name, t));
                }
            }
            Err(e) => eprintln!("cachefold-bench: {name}: {e} (skipped)"),
        }
    }
    if out.is_empty() {
        die("no sessions to replay");
    }
    out
}

fn progress_line(done: u64, total: u64, start: Instant) -> String {
    let w = 30usize;
    let filled = if total == 0 {
        w
    } else {
        (done as usize * w / total as usize).min(w)
    };
    format!(
        "\r[{}{}] {done}/{total} calls  {:.1}s ",
        "=".repeat(filled),
        " ".repeat(w - filled),
        start.elapsed().as_secs_f64()
    )
}

/// Until `finished`: a live bar on a terminal, one line per 10 % otherwise (logs, CI).
/// `get` gives (calls done, calls in all).
fn show_progress(get: impl Fn() -> (u64, u64), finished: &AtomicBool, start: Instant) {
    let tty = std::io::stderr().is_terminal();
    let mut last_decile = 0;
    while !finished.load(Ordering::Relaxed) {
        let (d, total) = get();
        if tty {
            eprint!("{}", progress_line(d, total, start));
        } else if total > 0 && d * 10 / total > last_decile {
            last_decile = d * 10 / total;
            eprintln!(
                "{}",
                progress_line(d, total, start).trim_start_matches('\r')
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(250));
    }
    if tty {
        let (d, total) = get();
        eprintln!("{}", progress_line(d, total, start));
    }
}

fn write_file(p: &Path, body: &str) {
    if let Some(dir) = p.parent().filter(|d| !d.as_os_str().is_empty()) {
        let _ = std::fs::create_dir_all(dir);
    }
    std::fs::write(p, body).unwrap_or_else(|e| die(&format!("{}: {e}", p.display())));
}

/// One replay job: session index, strategy id, an S3 config overriding `--s3-config`, and the
/// row name its result is reported under.
struct Job {
    si: usize,
    strategy: String,
    s3: Option<Arc<cachefold::config::Config>>,
    tag: String,
}

/// Run jobs on `a.jobs` workers (biggest first), with the progress line unless `--quiet`.
#[allow(clippy::too_many_arguments)]
fn run_pool(
    a: &Args,
    preps: &[Arc<run::Prepared>],
    tok: &Tokenizer,
    glue: &run::Glue,
    sp: &run::StaticPrefix,
    opts: &run::Options,
    jobs: Vec<Job>,
    start: Instant,
) -> Vec<run::JobResult> {
    // Jobs: biggest first so two workers finish together.
    let mut jobs = jobs;
    let total_calls = driver::order_jobs(&mut jobs, preps, |j| (j.si, &j.tag, 1));
    let done = Arc::new(AtomicU64::new(0));
    let finished = Arc::new(AtomicBool::new(false));
    let queue = Mutex::new(jobs);
    let results = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        if !a.quiet {
            let (done, finished) = (done.clone(), finished.clone());
            scope.spawn(move || {
                show_progress(
                    || (done.load(Ordering::Relaxed), total_calls),
                    &finished,
                    start,
                )
            });
        }
        let mut workers = Vec::new();
        for _ in 0..a.jobs {
            let (queue, results, preps, tok, glue, sp, opts, done) = (
                &queue,
                &results,
                &preps,
                &tok,
                &glue,
                &sp,
                &opts,
                done.clone(),
            );
            let s3 = &a.s3;
            workers.push(scope.spawn(move || loop {
                let job = queue.lock().ok().and_then(|mut q| q.pop());
                let Some(job) = job else { break };
                let Some(prep) = preps.get(job.si) else {
                    continue;
                };
                let Some(mut strat) =
                    bench::strategy_with(&job.strategy, job.s3.as_deref().unwrap_or(s3))
                else {
                    continue;
                };
                let mut last = 0usize;
                let r = run::run_job(tok, glue, sp, prep, strat.as_mut(), opts, &mut |k| {
                    done.fetch_add((k - last) as u64, Ordering::Relaxed);
                    last = k;
                });
                let mut r = r;
                r.strategy = job.tag;
                if let Ok(mut v) = results.lock() {
                    v.push(r);
                }
            }));
        }
        for w in workers {
            let _ = w.join();
        }
        finished.store(true, Ordering::Relaxed);
    });
    results.into_inner().unwrap_or_default()
}

/// `--loso`: baselines and the sweep at every window, then LOSO tables, JSON and the chart.
fn run_loso(
    a: &Args,
    preps: &[Arc<run::Prepared>],
    tok: &Tokenizer,
    glue: &run::Glue,
    sp: &run::StaticPrefix,
    // The replay options and, with `--provider`, the profile they were made for.
    (opts, profile): (&run::Options, Option<&cachefold::providers::Profile>),
    start: Instant,
) {
    use bench::loso;
    let grid: Vec<(String, Arc<cachefold::config::Config>)> = loso::grid()
        .into_iter()
        .map(|(n, c)| match profile {
            Some(p) => (n, Arc::new(bench::provider::s3_config(p, &c))),
            None => (n, Arc::new(c)),
        })
        .collect();
    let dir = match profile {
        Some(p) => loso_dir(a).join(&p.key),
        None => loso_dir(a),
    };
    let mut tables: Vec<(u64, loso::Table)> = Vec::new();
    for &window in &a.loso_windows {
        let opts = run::Options {
            window,
            ..opts.clone()
        };
        let mut jobs = Vec::new();
        for si in 0..preps.len() {
            for b in loso::BASELINES {
                jobs.push(Job {
                    si,
                    strategy: b.to_string(),
                    s3: None,
                    tag: b.to_string(),
                });
            }
            for (name, cfg) in &grid {
                jobs.push(Job {
                    si,
                    strategy: "S3".into(),
                    s3: Some(cfg.clone()),
                    tag: format!("cfg:{name}"),
                });
            }
        }
        if !a.quiet {
            eprintln!(
                "cachefold-bench: LOSO window {window}: {} jobs ({} configurations + {} baselines × {} sessions)",
                jobs.len(),
                grid.len(),
                loso::BASELINES.len(),
                preps.len()
            );
        }
        let results = run_pool(a, preps, tok, glue, sp, &opts, jobs, start);
        let mut table = loso::Table {
            sessions: preps.iter().map(|p| p.name.clone()).collect(),
            configs: grid.iter().map(|(n, _)| n.clone()).collect(),
            ..loso::Table::default()
        };
        for r in results {
            let (map, key) = match r.strategy.strip_prefix("cfg:") {
                Some(n) => (&mut table.sweep, n.to_string()),
                None => (&mut table.baselines, r.strategy.clone()),
            };
            map.entry(key).or_default().insert(r.session, r.metrics);
        }
        tables.push((window, table));
    }
    write_file(
        &dir.join("loso-tables.json"),
        &serde_json::to_string(&tables).unwrap_or_default(),
    );
    let runs: Vec<loso::Loso> = tables
        .iter()
        .flat_map(|(w, t)| a.loso_recall.iter().map(move |r| t.loso(*w, *r)))
        .collect();
    write_loso(a, &dir, &runs, preps.len(), start);
}

/// Where LOSO files go: next to `--json` (or `--svg`), else `bench-out/`.
fn loso_dir(a: &Args) -> PathBuf {
    a.json
        .as_deref()
        .or(a.svg.as_deref())
        .and_then(Path::parent)
        .filter(|d| !d.as_os_str().is_empty())
        .map_or_else(|| PathBuf::from("bench-out"), Path::to_path_buf)
}

/// Print the LOSO tables and write loso.json and cost-recall.svg.
fn write_loso(a: &Args, dir: &Path, runs: &[bench::loso::Loso], sessions: usize, start: Instant) {
    use bench::loso;
    let md = loso::markdown(runs, sessions);
    println!("{md}");
    println!(
        "Runtime: {:.1}s total, {} worker(s).",
        start.elapsed().as_secs_f64(),
        a.jobs
    );
    // Per profile (`--loso --provider`) the tables go next to that profile's other files.
    if dir != loso_dir(a) {
        write_file(&dir.join("loso.md"), &md);
    } else if let Some(p) = &a.md {
        write_file(p, &md);
    }
    let json = serde_json::to_string_pretty(runs).unwrap_or_default();
    let jp = dir.join("loso.json");
    write_file(&jp, &json);
    println!("JSON: {}", jp.display());
    let sp = dir.join("cost-recall.svg");
    // `CACHEFOLD_LOSO_BEFORE=<loso.json>`: draw that earlier run's front too.
    let before: Vec<loso::Loso> = std::env::var("CACHEFOLD_LOSO_BEFORE")
        .ok()
        .and_then(|p| std::fs::read_to_string(p).ok())
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default();
    write_file(&sp, &loso::svg_with_before(runs, &before));
    println!("Chart: {}", sp.display());
}

/// The driver's settings from the command line, for `strategies`.
fn settings_of(a: &Args, strategies: Vec<String>) -> driver::Settings {
    driver::Settings {
        strategies,
        price: a.price.clone(),
        window: a.window,
        cache: a.cache,
        profile: a.profile,
        cold: a.cold,
        s3: a.s3.clone(),
        prefix_tokens: None,
    }
}

/// `--provider`: the per-provider table (cachefold_bench::bench::provider).
fn run_providers(a: &Args, arg: &str, start: Instant) {
    let profiles = bench::provider::parse(arg).unwrap_or_else(|e| die(&e));
    let sessions = load_sessions(a);
    let base = settings_of(a, Vec::new());
    let results = bench::provider::run(&profiles, &base, &sessions, &|| load_tokenizer(a), a.jobs)
        .unwrap_or_else(|e| die(&e));
    let md = bench::provider::markdown(&profiles, &results);
    println!("{md}");
    println!(
        "Runtime: {:.1}s, {} worker(s).",
        start.elapsed().as_secs_f64(),
        a.jobs
    );
    if let Some(p) = &a.md {
        write_file(p, &md);
    }
    if let Some(p) = &a.json {
        let j = bench::provider::json(&profiles, &results);
        write_file(p, &serde_json::to_string_pretty(&j).unwrap_or_default());
    }
}

fn main() {
    let mut a = parse_args();
    let start = Instant::now();
    if let Some(p) = a.loso_from.clone() {
        let text =
            std::fs::read_to_string(&p).unwrap_or_else(|e| die(&format!("{}: {e}", p.display())));
        let tables: Vec<(u64, bench::loso::Table)> =
            serde_json::from_str(&text).unwrap_or_else(|e| die(&format!("{}: {e}", p.display())));
        let runs: Vec<bench::loso::Loso> = tables
            .iter()
            .flat_map(|(w, t)| a.loso_recall.iter().map(move |r| t.loso(*w, *r)))
            .collect();
        let sessions = tables.first().map_or(0, |(_, t)| t.sessions.len());
        write_loso(&a, &loso_dir(&a), &runs, sessions, start);
        return;
    }
    if let Some(arg) = a.provider.clone().filter(|_| !a.loso) {
        run_providers(&a, &arg, start);
        return;
    }
    let tok = load_tokenizer(&a);
    let sessions = load_sessions(&a);
    if a.loso {
        // The sweep runs its own job list (many S3 configurations per session) on run_pool.
        let glue = run::Glue::new(&tok);
        let sp = run::static_prefix(&tok, a.profile);
        let opts = run::Options {
            window: a.window,
            cache: a.cache,
            price: a.price.clone(),
            warm_static: !a.cold,
            price_row: None,
        };
        let preps: Vec<Arc<run::Prepared>> = sessions
            .iter()
            .map(|(name, t)| Arc::new(run::prepare(&tok, name, t)))
            .collect();
        let Some(arg) = a.provider.clone() else {
            run_loso(&a, &preps, &tok, &glue, &sp, (&opts, None), start);
            return;
        };
        // `--loso --provider`: the same choice per profile, replayed under its cache rule and
        // lifetime, priced at its read price and its miss price times the write premium, S3
        // with the profile forced; each profile's files go to a folder named after it.
        for p in bench::provider::parse(&arg).unwrap_or_else(|e| die(&e)) {
            let opts = run::Options {
                cache: bench::provider::sim_params(&p, opts.cache),
                price_row: Some(bench::provider::price_row(&p)),
                ..opts.clone()
            };
            println!("## Provider profile {}\n", p.key);
            run_loso(&a, &preps, &tok, &glue, &sp, (&opts, Some(&p)), start);
        }
        return;
    }
    if a.demo && a.svg.is_none() {
        a.svg = Some(PathBuf::from("bench-out/demo.svg"));
    }
    let settings = settings_of(&a, a.strategies.clone());
    let progress = Arc::new(driver::Progress::default());
    // Prepare sessions (tokenize originals once; parallel inside the tokenizer).
    let d = driver::Driver::new(tok, &sessions, settings, progress.clone())
        .unwrap_or_else(|e| die(&e.to_string()));
    let prep_secs = start.elapsed().as_secs_f64();
    let finished = AtomicBool::new(false);
    std::thread::scope(|scope| {
        if !a.quiet {
            let (progress, finished) = (&progress, &finished);
            scope.spawn(move || show_progress(|| progress.get(), finished, start));
        }
        let workers: Vec<_> = (0..a.jobs).map(|_| scope.spawn(|| d.work())).collect();
        for w in workers {
            let _ = w.join();
        }
        finished.store(true, Ordering::Relaxed);
    });
    let rep = d.report();
    let md = report::markdown(&rep);
    println!("{md}");
    println!(
        "Runtime: {:.1}s total ({:.1}s loading and tokenizing), {} worker(s).",
        start.elapsed().as_secs_f64(),
        prep_secs,
        a.jobs
    );
    if let Some(p) = &a.md {
        write_file(p, &md);
    }
    if let Some(p) = &a.json {
        write_file(p, &report::json(&rep));
        println!("JSON: {}", p.display());
    }
    if let Some(p) = &a.svg {
        write_file(p, &report::svg(&rep));
        println!("Chart: {}", p.display());
    }
}
