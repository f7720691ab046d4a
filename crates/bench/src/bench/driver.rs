//! The replay driver shared by the `cachefold-bench` binary and the native addon
//! (`openclaw cachefold replay`): prepare sessions, hand out (session, strategy) jobs, collect
//! their results and build the report. Both hosts run the same code, so they produce the same
//! figures for the same input.
//!
//! Threads, files and progress display stay with the host (the core does no I/O): a host
//! creates a [`Driver`], calls [`Driver::work`] from as many threads as it likes (each call
//! takes jobs until none are left), reads [`Driver::progress`] while they run, and calls
//! [`Driver::report`] once every worker has returned.

use super::report::{self, Report, SessionInfo};
use super::run::{self, Glue, Options, Prepared, StaticPrefix};
use super::{cache, prefix, tokenizer::Tokenizer};
use crate::replay::transcript::Transcript;
use ::cachefold::config::Config;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// What to replay and how (the bench binary's flags).
#[derive(Debug, Clone)]
pub struct Settings {
    /// Strategy ids (see [`super::ALL_STRATEGIES`]); unknown ids are rejected by [`Driver::new`].
    pub strategies: Vec<String>,
    /// Headline price key (see [`run::price_known`]).
    pub price: String,
    /// Token budget given to strategies.
    pub window: u64,
    /// Cache model.
    pub cache: cache::Params,
    /// Static prefix profile.
    pub profile: prefix::Profile,
    /// Every session starts with an empty cache.
    pub cold: bool,
    /// Config of S3 (cachefold).
    pub s3: Config,
    /// A static prefix of exactly this many tokens instead of the profile's text (the real
    /// system prompt and tool schemas are not in a transcript; a user or a test that knows
    /// their size says so here). `None`: the profile.
    pub prefix_tokens: Option<u64>,
}

impl Default for Settings {
    /// The bench binary's defaults: every strategy, deepseek-flash peak, a 1M window, DS strict
    /// caching, the OpenClaw prefix, warm static prefix, product defaults for S3.
    fn default() -> Settings {
        Settings {
            strategies: super::ALL_STRATEGIES
                .iter()
                .map(|s| s.to_string())
                .collect(),
            price: "deepseek-flash-peak".into(),
            window: 1_000_000,
            cache: cache::Params::ds_strict(),
            profile: prefix::Profile::OpenClaw,
            cold: false,
            s3: Config::default(),
            prefix_tokens: None,
        }
    }
}

impl Settings {
    /// Unknown strategy ids and price keys are input errors.
    pub fn validate(&self) -> ::cachefold::error::Result<()> {
        if let Some(bad) = self
            .strategies
            .iter()
            .find(|s| super::strategy(s).is_none())
        {
            return Err(::cachefold::error::Error::Input(format!(
                "unknown strategy {bad} (known: {})",
                super::ALL_STRATEGIES.join(",")
            )));
        }
        if !run::price_known(&self.price) {
            return Err(::cachefold::error::Error::Input(format!(
                "unknown price {}",
                self.price
            )));
        }
        Ok(())
    }
}

/// Calls replayed so far, shared with a host that shows progress.
#[derive(Debug, Default)]
pub struct Progress {
    done: AtomicU64,
    total: AtomicU64,
}

impl Progress {
    /// `(calls replayed, calls to replay)` over all jobs; total is 0 until sessions are prepared.
    pub fn get(&self) -> (u64, u64) {
        (
            self.done.load(Ordering::Relaxed),
            self.total.load(Ordering::Relaxed),
        )
    }
}

/// Sort `jobs` by their weight (their session's calls × messages × the replays the job runs,
/// heaviest first, then by `key`'s name) and return how many calls they replay in all. `key`
/// gives a job's session index, name and number of replays. Shared by the bench driver and the
/// `--loso` pool.
pub fn order_jobs<J>(
    jobs: &mut [J],
    preps: &[Arc<Prepared>],
    key: impl Fn(&J) -> (usize, &str, u64),
) -> u64 {
    jobs.sort_by_cached_key(|j| {
        let (si, name, runs) = key(j);
        let w = preps.get(si).map_or(0, |p| {
            p.calls.len() as u64 * p.message_count() as u64 * runs
        });
        (std::cmp::Reverse(w), name.to_string())
    });
    jobs.iter()
        .map(|j| {
            let (si, _, runs) = key(j);
            preps.get(si).map_or(0, |p| p.calls.len() as u64 * runs)
        })
        .sum()
}

/// Sessions of more calls than this replay their strategies one after the other, in one job:
/// a strategy's replay of a long session holds state in proportion to the session (its engine,
/// store and cache simulators, several KB per call), and running two at once would hold both
/// next to the prepared session (issue 24 item 7: 100,000 calls within 1 GB). The CPU time is
/// the same; shorter sessions still run their strategies in parallel.
pub const SERIAL_CALLS: usize = 5_000;

/// The job queue of a run: one job per (session, strategy), or one per session running its
/// strategies in turn when it has more than [`SERIAL_CALLS`] calls, ordered by [`order_jobs`];
/// and the calls they replay in all.
pub fn queue_jobs(
    preps: &[Arc<Prepared>],
    strategies: &[String],
) -> (Vec<(usize, Vec<String>)>, u64) {
    let mut jobs: Vec<(usize, Vec<String>)> = Vec::new();
    for (si, p) in preps.iter().enumerate() {
        if p.calls.len() > SERIAL_CALLS {
            jobs.push((si, strategies.to_vec()));
        } else {
            jobs.extend(strategies.iter().map(|s| (si, vec![s.clone()])));
        }
    }
    let total = order_jobs(&mut jobs, preps, |(si, ids)| {
        (
            *si,
            ids.first().map_or("", String::as_str),
            ids.len() as u64,
        )
    });
    (jobs, total)
}

/// One job of a run's queue: a session and the strategies it replays, one after the other.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Job {
    /// Index of the session (in input order).
    pub session: usize,
    /// Strategy ids.
    pub strategies: Vec<String>,
}

/// One replay run: prepared sessions, a job queue and the results so far.
pub struct Driver {
    tok: Tokenizer,
    glue: Glue,
    sp: StaticPrefix,
    opts: Options,
    settings: Settings,
    preps: Vec<Arc<Prepared>>,
    infos: Vec<SessionInfo>,
    /// (session index, strategy ids run one after the other).
    queue: Mutex<Vec<(usize, Vec<String>)>>,
    results: Mutex<Vec<run::JobResult>>,
    progress: Arc<Progress>,
}

impl Driver {
    /// Prepare `sessions` (tokenizing their originals once) and queue one job per
    /// (session, strategy), largest first so parallel workers finish together. `progress`
    /// receives the total at once and the replayed calls as workers go.
    pub fn new(
        tok: Tokenizer,
        sessions: &[(String, Transcript)],
        settings: Settings,
        progress: Arc<Progress>,
    ) -> ::cachefold::error::Result<Driver> {
        Driver::streaming(tok, settings, progress, |add| {
            for (name, t) in sessions {
                add(name, t.clone());
            }
            Ok::<(), ::cachefold::error::Error>(())
        })
    }

    /// [`Driver::new`] over sessions handed over one at a time: `feed` calls `add` with each
    /// parsed session, which is prepared at once and dropped (only its prepared form stays),
    /// so a reader that parses one session at a time never holds two parsed sessions, nor a
    /// parsed session next to the prepared ones. An error of `feed` is returned as is.
    pub fn streaming<E: From<::cachefold::error::Error>>(
        tok: Tokenizer,
        settings: Settings,
        progress: Arc<Progress>,
        feed: impl FnOnce(&mut dyn FnMut(&str, Transcript)) -> Result<(), E>,
    ) -> Result<Driver, E> {
        settings.validate()?;
        let glue = Glue::new(&tok);
        let sp = match settings.prefix_tokens {
            Some(n) => run::sized_prefix(n, settings.profile),
            None => run::static_prefix(&tok, settings.profile),
        };
        let opts = Options {
            window: settings.window,
            cache: settings.cache,
            price: settings.price.clone(),
            warm_static: !settings.cold,
            price_row: None,
        };
        let mut preps = Vec::new();
        let mut infos = Vec::new();
        feed(&mut |name, t| {
            let p = run::prepare_owned(&tok, name, t);
            infos.push(SessionInfo {
                name: p.name.clone(),
                format: p.format.clone(),
                messages: p.message_count() as u64,
                calls: p.calls.len() as u64,
                recorded_compactions: p.recorded_compactions as u64,
                skipped_lines: p.skipped_lines,
                recorded: p.recorded,
            });
            preps.push(Arc::new(p));
        })?;
        let (jobs, total) = queue_jobs(&preps, &settings.strategies);
        progress.total.store(total, Ordering::Relaxed);
        Ok(Driver {
            tok,
            glue,
            sp,
            opts,
            settings,
            preps,
            infos,
            queue: Mutex::new(jobs),
            results: Mutex::new(Vec::new()),
            progress,
        })
    }

    /// Sessions prepared for replay, in input order.
    pub fn sessions(&self) -> &[SessionInfo] {
        &self.infos
    }

    /// The tokenizer counting tokens (`deepseek-v4` or `o200k`).
    pub fn tokenizer_name(&self) -> &'static str {
        self.tok.name()
    }

    /// `(calls replayed, calls to replay)`.
    pub fn progress(&self) -> (u64, u64) {
        self.progress.get()
    }

    /// Take the heaviest job left, to run on this thread with [`Driver::run_then`] while other
    /// threads [`Driver::work`]. A host that prepared the sessions on this thread gives it the
    /// longest replay: glibc gives each thread its own heap, and the memory preparing the
    /// sessions freed there (among the prepared sessions' own, so it is not given back to the
    /// system) is reused by that replay instead of staying resident beside a worker's heap
    /// (issue 24: a 100,000-call replay within 1 GB).
    pub fn take_heaviest(&self) -> Option<Job> {
        let mut q = self.queue.lock().ok()?;
        // The queue is ordered heaviest first (`order_jobs`).
        (!q.is_empty()).then(|| {
            let (session, strategies) = q.remove(0);
            Job {
                session,
                strategies,
            }
        })
    }

    /// Run `job` (from [`Driver::take_heaviest`]) as [`Driver::work_then`] runs a job.
    pub fn run_then(&self, job: Job, after: &dyn Fn()) {
        for sid in job.strategies {
            self.run_one(job.session, &sid);
            after();
        }
    }

    /// Take and run jobs until the queue is empty. Call it from any number of threads.
    pub fn work(&self) {
        self.work_then(&|| {});
    }

    /// [`Driver::work`], calling `after` on this thread after each (session, strategy) replay
    /// (a host may give the memory the replay freed back to the system there).
    pub fn work_then(&self, after: &dyn Fn()) {
        loop {
            let job = self.queue.lock().ok().and_then(|mut q| q.pop());
            let Some((si, ids)) = job else { break };
            for sid in ids {
                self.run_one(si, &sid);
                after();
            }
        }
    }

    /// Replay session `si` with strategy `sid` and keep the result.
    fn run_one(&self, si: usize, sid: &str) {
        let Some(prep) = self.preps.get(si) else {
            return;
        };
        let Some(mut strat) = super::strategy_with(sid, &self.settings.s3) else {
            return;
        };
        let mut last = 0usize;
        let progress = &self.progress;
        let r = run::run_job(
            &self.tok,
            &self.glue,
            &self.sp,
            prep,
            strat.as_mut(),
            &self.opts,
            &mut |k| {
                progress
                    .done
                    .fetch_add(k.saturating_sub(last) as u64, Ordering::Relaxed);
                last = k;
            },
        );
        if let Ok(mut v) = self.results.lock() {
            v.push(r);
        }
    }

    /// The report over every finished job (call after all workers returned; the output does
    /// not depend on the order jobs finished in).
    pub fn report(&self) -> Report {
        let results = self
            .results
            .lock()
            .map(|mut v| std::mem::take(&mut *v))
            .unwrap_or_default();
        let mut prices = std::collections::BTreeMap::new();
        for k in [
            "deepseek-flash-peak",
            "deepseek-flash-offpeak",
            "deepseek-v4-pro-peak",
            "deepseek-v4-pro-offpeak",
            "openai-like",
            "kimi-like",
        ] {
            if let Some(p) = ::cachefold::cost::builtin_price(k) {
                prices.insert(k.to_string(), (p.hit, p.miss, p.output));
            }
        }
        let header = report::Header {
            tokenizer: self.tok.name().to_string(),
            prefix_profile: self.sp.profile.clone(),
            prefix_tokens: self.sp.tokens.len() as u64,
            cache_model: self.opts.cache.model.name().to_string(),
            block: self.opts.cache.effective_block() as u64,
            expiry_hours: self.opts.cache.expiry_ms.map(|m| m / 3_600_000.0),
            price: self.opts.price.clone(),
            prices,
            window: self.opts.window,
            warm_static: self.opts.warm_static,
            sessions: self.infos.clone(),
        };
        report::build(header, results, super::ALL_STRATEGIES)
    }
}
