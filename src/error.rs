//! The one error type of the core. Every public fallible function returns [`Result`].
//!
//! Errors carry a stable machine code ([`Error::code`]) and a lowercase, specific message.
//! Expected outcomes (a skipped fold, a repaired tool pairing) are never errors: they travel
//! in reports.

use std::fmt;

/// Result alias used across the core.
pub type Result<T> = std::result::Result<T, Error>;

/// Everything that can go wrong inside the core.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// A configuration value is missing, of the wrong type or out of range.
    /// `key` is the dotted config path, e.g. `persist.thresholds.read`.
    Config {
        /// Dotted config key.
        key: String,
        /// What is wrong with it.
        message: String,
    },
    /// Input from the host could not be parsed (bad JSON, wrong shape).
    Input(String),
    /// A stored journal or snapshot could not be read.
    State(String),
    /// An artifact or fold id failed validation.
    InvalidId(String),
    /// Something that should be impossible; reported instead of panicking.
    Internal(String),
}

impl Error {
    /// Stable code for programs (JS maps it to `err.code`).
    pub fn code(&self) -> &'static str {
        match self {
            Error::Config { .. } => "CACHEFOLD_CONFIG",
            Error::Input(_) => "CACHEFOLD_INPUT",
            Error::State(_) => "CACHEFOLD_STATE",
            Error::InvalidId(_) => "CACHEFOLD_INVALID_ID",
            Error::Internal(_) => "CACHEFOLD_INTERNAL",
        }
    }

    /// Shorthand for a config error.
    pub fn config(key: impl Into<String>, message: impl Into<String>) -> Self {
        Error::Config {
            key: key.into(),
            message: message.into(),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Config { key, message } => write!(f, "invalid config `{key}`: {message}"),
            Error::Input(m) => write!(f, "invalid input: {m}"),
            Error::State(m) => write!(f, "unreadable state: {m}"),
            Error::InvalidId(m) => write!(f, "invalid id: {m}"),
            Error::Internal(m) => write!(f, "internal error: {m}"),
        }
    }
}

impl std::error::Error for Error {}

impl From<serde_json::Error> for Error {
    fn from(e: serde_json::Error) -> Self {
        Error::Input(e.to_string())
    }
}
