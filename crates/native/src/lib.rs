//! The Node native addon behind `openclaw cachefold replay` (feature `native`, built by
//! `.ci/build` into `pkg/cachefold.linux-x64-gnu.node`; loaded only by `js/native.js`).
//!
//! It exists because SQLite, zstd and the DeepSeek tokenizer do not belong in the wasm core.
//! Like `src/bin/cachefold-bench.rs` it is a host of [`cachefold_bench::bench::driver`]: it opens the
//! OpenClaw stores read-only, runs the driver's workers on threads and converts types. Every
//! figure comes from the same bench code as the binary's. The JS side reads the tokenizer file
//! (and passes its bytes), measures time and draws the progress bar.
//!
//! No `build.rs`: `napi_build::setup()` only declares wasi cfgs and adds link arguments for
//! macOS (`-undefined dynamic_lookup`), Windows and Android. On Linux a cdylib may leave the
//! `napi_*` symbols undefined, and with napi's default `dyn-symbols` they are looked up in the
//! Node process when the addon loads.

use cachefold_bench::bench::driver::{Driver, Progress, Settings};
use cachefold_bench::bench::{report, sqlite, tokenizer::Tokenizer};
use napi::bindgen_prelude::Buffer;
use napi::{Error, Result};
use napi_derive::napi;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex};

fn input_err(e: impl std::fmt::Display) -> Error {
    Error::from_reason(e.to_string())
}

fn open(path: &str) -> Result<rusqlite::Connection> {
    rusqlite::Connection::open_with_flags(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
        .map_err(|e| input_err(format!("{path}: {e}")))
}

/// The crate version the addon was built from (the JS loader compares it with package.json).
#[napi]
pub fn version() -> String {
    env!("CARGO_PKG_VERSION").to_string()
}

/// The sessions of one OpenClaw store (`openclaw-agent.sqlite`) as JSON:
/// `[{sessionId, events, firstAt, lastAt}]`, sorted by session id.
#[napi]
pub fn list_sessions(path: String) -> Result<String> {
    let rows =
        sqlite::list_sessions(&open(&path)?).map_err(|e| input_err(format!("{path}: {e}")))?;
    serde_json::to_string(&rows).map_err(input_err)
}

/// One store to replay from.
#[napi(object)]
pub struct StoreSelection {
    /// Path of `openclaw-agent.sqlite`.
    pub path: String,
    /// Session ids to replay (all when absent).
    pub sessions: Option<Vec<String>>,
    /// Prefix of the replayed session names (`<label>#<sessionId>`); default: the file name,
    /// as `cachefold-bench` names them.
    pub label: Option<String>,
}

/// Replay options; absent fields take the bench binary's defaults.
#[napi(object)]
pub struct ReplayOptions {
    /// Stores and sessions, replayed in this order.
    pub stores: Vec<StoreSelection>,
    /// Bytes of the DeepSeek-V4 `tokenizer.json`; absent: the o200k fallback.
    pub tokenizer: Option<Buffer>,
    /// Strategy ids (default: all).
    pub strategies: Option<Vec<String>>,
    /// Headline price key (default `deepseek-flash-peak`).
    pub price: Option<String>,
    /// Token budget given to the strategies (default 1,000,000).
    pub window: Option<f64>,
    /// Every session starts with an empty cache.
    pub cold: Option<bool>,
    /// Worker threads (default: the cores, at most 8, as the binary).
    pub jobs: Option<u32>,
    /// How tokens are counted: `deepseek` (needs `tokenizer`), `o200k`, or `bytes4` (UTF-8
    /// bytes / 4, as the e2e suite's fake provider counts). Default: `deepseek` when
    /// `tokenizer` is given, else `o200k`.
    pub tokens: Option<String>,
    /// A static prefix (system prompt + tool schemas) of this many tokens instead of the
    /// bench's OpenClaw profile text.
    pub prefix_tokens: Option<f64>,
}

/// Where a running replay is.
#[napi(object)]
pub struct ReplayProgress {
    /// `reading`, `tokenizing`, `replaying` or `done`.
    pub phase: String,
    /// Calls replayed (over all strategies).
    pub done: f64,
    /// Calls to replay (0 until sessions are tokenized).
    pub total: f64,
}

/// A finished replay.
#[napi(object)]
pub struct ReplayOutput {
    /// The report as `cachefold-bench --json` writes it.
    pub json: String,
    /// The markdown table `cachefold-bench` prints.
    pub markdown: String,
    /// The chart `cachefold-bench --svg` writes.
    pub svg: String,
    /// Undecodable rows skipped, per session name.
    pub warnings: Vec<String>,
    /// Worker threads used.
    pub jobs: u32,
}

const PHASES: [&str; 4] = ["reading", "tokenizing", "replaying", "done"];

struct Shared {
    phase: AtomicU8,
    progress: Arc<Progress>,
    outcome: Mutex<Option<std::result::Result<ReplayOutput, String>>>,
}

struct Finished<'a>(&'a Shared);

impl Drop for Finished<'_> {
    fn drop(&mut self) {
        self.0.phase.store(3, Ordering::Relaxed);
    }
}

/// A replay running on its own threads; poll it from JS, then take the result.
#[napi]
pub struct ReplayTask {
    shared: Arc<Shared>,
    handle: Option<std::thread::JoinHandle<()>>,
}

/// Which tokenizer a replay counts with.
enum Counting {
    DeepSeek(Vec<u8>),
    O200k,
    Bytes4,
}

struct Plan {
    stores: Vec<(String, Option<Vec<String>>, String)>,
    tokenizer: Counting,
    settings: Settings,
    jobs: usize,
}

/// A read or argument error, as the replay's result reports it.
struct Failure(String);

impl From<cachefold::error::Error> for Failure {
    fn from(e: cachefold::error::Error) -> Failure {
        Failure(e.to_string())
    }
}

fn tokenizer(c: &Counting) -> std::result::Result<Tokenizer, String> {
    match c {
        Counting::DeepSeek(bytes) => Tokenizer::deepseek_from_bytes(bytes),
        Counting::O200k => Tokenizer::o200k(),
        Counting::Bytes4 => Ok(Tokenizer::bytes4()),
    }
    .map_err(|e| e.to_string())
}

/// The addon's Rust allocations go to mimalloc (see Cargo.toml).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Give the heap memory freed so far back to the system. Preparing a long session and each
/// strategy's replay of it free hundreds of MB that the allocator would otherwise keep for a
/// while (spread over its per-thread heaps) and count in the process's resident size; the next
/// replay then starts from what is really held.
fn release_freed_memory() {
    // SAFETY: mi_collect only returns free pages of the calling thread's heap (and, forced,
    // abandoned ones) to the system; it takes no pointer.
    unsafe {
        libmimalloc_sys::mi_collect(true);
    }
}

fn run(plan: Plan, shared: &Shared) -> std::result::Result<ReplayOutput, String> {
    let tok = tokenizer(&plan.tokenizer)?;
    // Sessions are read one at a time and prepared as they come (the parsed transcript of a
    // session is dropped once prepared): the store is streamed, not loaded whole.
    let mut warnings = Vec::new();
    let d = Driver::streaming(tok, plan.settings, shared.progress.clone(), |add| {
        for (path, only, label) in &plan.stores {
            let conn = open(path).map_err(|e| Failure(e.reason.clone()))?;
            let keep = |id: &str| only.as_ref().map_or(true, |o| o.iter().any(|s| s == id));
            sqlite::for_each_session(&conn, &keep, &mut |s| {
                let name = format!("{label}#{}", s.session_id);
                if s.bad_rows > 0 {
                    warnings.push(format!("{name}: {} undecodable rows skipped", s.bad_rows));
                }
                add(&name, s.transcript);
                Ok(())
            })
            .map_err(|e| Failure(format!("{path}: {e}")))?;
        }
        shared.phase.store(1, Ordering::Relaxed);
        Ok::<(), Failure>(())
    })
    .map_err(|e| e.0)?;
    shared.phase.store(2, Ordering::Relaxed);
    release_freed_memory();
    // This thread, which prepared the sessions, runs the heaviest job itself (see
    // `Driver::take_heaviest`: the longest replay reuses the memory preparing freed here), then
    // helps the other workers with the rest.
    let first = d.take_heaviest();
    std::thread::scope(|scope| {
        let workers: Vec<_> = (1..plan.jobs)
            .map(|_| scope.spawn(|| d.work_then(&release_freed_memory)))
            .collect();
        if let Some(job) = first {
            d.run_then(job, &release_freed_memory);
        }
        d.work_then(&release_freed_memory);
        for w in workers {
            let _ = w.join();
        }
    });
    let rep = d.report();
    Ok(ReplayOutput {
        json: report::json(&rep),
        markdown: report::markdown(&rep),
        svg: report::svg(&rep),
        warnings,
        jobs: plan.jobs as u32,
    })
}

/// Start replaying `opts.stores` through the bench's strategies on background threads.
/// Argument errors (unknown strategy or price) are thrown here; read errors by `result()`.
#[napi]
pub fn start_replay(opts: ReplayOptions) -> Result<ReplayTask> {
    let mut settings = Settings::default();
    if let Some(s) = opts.strategies {
        settings.strategies = s;
    }
    if let Some(p) = opts.price {
        settings.price = p;
    }
    if let Some(w) = opts.window {
        if !(w.is_finite() && w >= 1.0) {
            return Err(input_err("window wants a positive token count"));
        }
        settings.window = w as u64;
    }
    settings.cold = opts.cold.unwrap_or(false);
    if let Some(n) = opts.prefix_tokens {
        if !(n.is_finite() && (0.0..=10_000_000.0).contains(&n)) {
            return Err(input_err(
                "prefixTokens wants a token count between 0 and 10,000,000",
            ));
        }
        settings.prefix_tokens = Some(n as u64);
    }
    let tokenizer = match (opts.tokens.as_deref(), opts.tokenizer) {
        (None | Some("deepseek"), Some(b)) => Counting::DeepSeek(b.to_vec()),
        (Some("deepseek"), None) => {
            return Err(input_err(
                "tokens \"deepseek\" needs the tokenizer.json bytes",
            ))
        }
        (None | Some("o200k"), _) => Counting::O200k,
        (Some("bytes4"), _) => Counting::Bytes4,
        (Some(other), _) => {
            return Err(input_err(format!(
                "unknown tokens {other:?} (deepseek, o200k or bytes4)"
            )))
        }
    };
    // Refused here, before any thread starts, so the caller gets a usage error.
    settings.validate().map_err(input_err)?;
    let jobs = match opts.jobs {
        Some(n) if n > 0 => n as usize,
        _ => std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(2)
            .clamp(1, 8),
    };
    let stores = opts
        .stores
        .into_iter()
        .map(|s| {
            let label = s.label.unwrap_or_else(|| {
                std::path::Path::new(&s.path)
                    .file_name()
                    .map(|n| n.to_string_lossy().to_string())
                    .unwrap_or_else(|| s.path.clone())
            });
            (s.path, s.sessions, label)
        })
        .collect();
    let plan = Plan {
        stores,
        tokenizer,
        settings,
        jobs,
    };
    let shared = Arc::new(Shared {
        phase: AtomicU8::new(0),
        progress: Arc::new(Progress::default()),
        outcome: Mutex::new(None),
    });
    let bg = shared.clone();
    let handle = std::thread::Builder::new()
        .name("cachefold-replay".into())
        .spawn(move || {
            // `done` even if the replay panics, so a polling caller never waits forever
            // (result() then reports the panic).
            let _done = Finished(&bg);
            let out = run(plan, &bg);
            if let Ok(mut o) = bg.outcome.lock() {
                *o = Some(out);
            }
        })
        .map_err(input_err)?;
    Ok(ReplayTask {
        shared,
        handle: Some(handle),
    })
}

#[napi]
impl ReplayTask {
    /// Phase and calls replayed so far (cheap; never blocks on the workers).
    #[napi]
    pub fn poll(&self) -> ReplayProgress {
        let (done, total) = self.shared.progress.get();
        let phase = PHASES
            .get(self.shared.phase.load(Ordering::Relaxed) as usize)
            .unwrap_or(&"done");
        ReplayProgress {
            phase: phase.to_string(),
            done: done as f64,
            total: total as f64,
        }
    }

    /// Wait for the replay and return its report (throws the read or replay error).
    #[napi]
    pub fn result(&mut self) -> Result<ReplayOutput> {
        if let Some(h) = self.handle.take() {
            h.join().map_err(|_| input_err("replay thread panicked"))?;
        }
        let out = self.shared.outcome.lock().ok().and_then(|mut o| o.take());
        match out {
            Some(Ok(r)) => Ok(r),
            Some(Err(e)) => Err(input_err(e)),
            None => Err(input_err("replay result already taken")),
        }
    }
}
