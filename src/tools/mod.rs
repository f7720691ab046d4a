//! Tool-output safety and recovery: oversized results become a preview plus a content-addressed
//! artifact ([`shrink`]), `details` are bounded ([`details`]), reads and fetches get sane limits
//! ([`defaults`]), and the agent gets every byte back ([`recover`], [`search`]).

pub mod defaults;
pub mod details;
pub mod recover;
pub mod search;
pub mod shrink;
