//! # cachefold-bench
//!
//! The replay bench of cachefold, beside the core crate and never in the wasm module:
//!
//! | module | job |
//! |---|---|
//! | [`replay`] | the plan driver over recorded sessions (the core's `Session::try_drive`, as the plugin drives it) and the transcript readers (pi/OpenClaw, Claude Code, Reasonix) |
//! | [`bench`] | the replay bench: exact tokenizer, cache simulators, one file per strategy, the shared job driver, OpenClaw's SQLite store, metrics, report and charts, leave-one-session-out tuning |
//!
//! The `cachefold-bench` binary (`src/main.rs`) and the Node addon (`crates/native`) are its
//! two hosts; both may read files, the clock and the environment, which the core never does.
#![deny(missing_docs)]

pub mod bench;
pub mod replay;
