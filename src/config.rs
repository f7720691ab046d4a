//! Plugin configuration: the only place defaults live.
//!
//! The JS shim passes `api.pluginConfig` (the object under `plugins.entries.cachefold.config`)
//! in as JSON. [`Config::from_value`] fills defaults, accepts numbers written as strings (the
//! `openclaw config set` CLI stores plain strings unless `--strict-json` is given), and
//! [`Config::validate`] rejects out-of-range values with the offending key in the message.
//! `openclaw.plugin.json#configSchema` mirrors this struct; `tests/config_schema.rs` keeps
//! the two equal.

use crate::error::{Error, Result};
use serde::Serialize;
use serde::{Deserialize, Deserializer};
use serde_json::Value;
use std::collections::BTreeMap;

mod key;
pub mod profile;
pub mod resolve;

/// When the engine manages context.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Manage context for models matching `targetModels`; pass everything else through.
    #[default]
    Auto,
    /// Manage context for every model, including unknown ids.
    Always,
    /// Pass history through unchanged (as `legacy` would) for every model.
    Off,
}

/// Full plugin configuration. Field docs double as the README's config reference.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct Config {
    /// `auto` | `always` | `off`.
    pub mode: Mode,
    /// Case-insensitive glob patterns (`*` wildcard) matched against the model id
    /// (`provider/model` and bare `model` are both tried).
    pub target_models: Vec<String>,
    /// Messages at the start of the history pinned for the session (extended so an
    /// assistant tool call is never separated from its results).
    #[serde(deserialize_with = "de_u32")]
    pub prefix_lock_count: u32,
    /// Fold at once, whatever the price, when the estimate exceeds this share of the token budget.
    #[serde(deserialize_with = "de_f64")]
    pub compact_ratio: f64,
    /// Overrides the host's token budget (0 = use the host's).
    #[serde(deserialize_with = "de_u64")]
    pub token_budget: u64,
    /// Estimated tokens of live history kept verbatim after a fold.
    #[serde(deserialize_with = "de_u64")]
    pub tail_tokens: u64,
    /// Smallest region (estimated tokens) a priced fold may cover.
    #[serde(deserialize_with = "de_u64")]
    pub min_fold_tokens: u64,
    /// When all fold records together pass this many estimated tokens, condense them into one.
    #[serde(deserialize_with = "de_u64")]
    pub fold_record_budget: u64,
    /// Expected remaining model calls used by the fold cost model (0 = estimate from the
    /// session so far: as many calls again as already made, clamped to 4..200).
    #[serde(deserialize_with = "de_u64")]
    pub expected_remaining_calls: u64,
    /// Price table key (`auto` picks from the model id), e.g. `deepseek-flash-peak`.
    pub price: String,
    /// Extra or overriding price rows, USD per 1M tokens.
    pub prices: BTreeMap<String, PriceRow>,
    /// Provider cache profile overrides by profile key (`src/providers.rs`): prices, write
    /// premium, minimum length, step, lifetime, and `match` globs that pick the profile.
    pub providers: BTreeMap<String, crate::providers::ProviderOverride>,
    /// Summary generation with the host's LLM.
    pub summary: SummaryConfig,
    /// Basenames (case-insensitive) whose `read` results survive folds verbatim.
    pub protected_reads: Vec<String>,
    /// Default arguments added by `before_tool_call` when the model gave none, per tool.
    pub tool_defaults: BTreeMap<String, serde_json::Map<String, serde_json::Value>>,
    /// Oversized tool results become previews plus artifacts.
    pub persist: PersistConfig,
    /// The artifact store.
    pub artifacts: ArtifactsConfig,
    /// Where journals, snapshots and artifacts live (empty = `$OPENCLAW_STATE_DIR/cachefold`).
    pub state_dir: String,
    /// Append one JSON line per engine decision to this file (empty = off).
    pub log_file: String,
    /// Declare `info.ownsCompaction` to the host: cachefold folds instead of the host's
    /// cache-hostile compaction, and the host re-runs `assemble` before every model call.
    pub owns_compaction: bool,
    /// Workspace lessons (`src/lessons/`).
    pub lessons: LessonsConfig,
    /// Topic segmentation of committed turns, used by folds and the inspection tools.
    pub topics: TopicsConfig,
    /// `savings` | `balanced` | `recall`: the knobs the user did not set come from this profile
    /// ([`profile::apply`], called by the shim before parsing); here only the name is checked.
    pub profile: String,
}

/// Workspace lessons: captured conventions injected once per session on code-gen requests.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct LessonsConfig {
    /// Master switch (capture, injection and staleness checks).
    pub enabled: bool,
    /// Token cap of the injected block.
    #[serde(deserialize_with = "de_u32")]
    pub max_inject_tokens: u32,
    /// Promote a candidate after this long without rejection (0 = only explicit promotion).
    #[serde(deserialize_with = "de_u64")]
    pub auto_promote_after_ms: u64,
    /// Let one cheap host-LLM call propose candidates (only when `summary.useLlm` is on too).
    pub use_llm: bool,
    /// At most one capture per session per this many milliseconds.
    #[serde(deserialize_with = "de_u64")]
    pub capture_interval_ms: u64,
}

impl Default for LessonsConfig {
    fn default() -> Self {
        LessonsConfig {
            enabled: true,
            max_inject_tokens: 200,
            auto_promote_after_ms: 7 * 24 * 3_600_000,
            use_llm: true,
            capture_interval_ms: 600_000,
        }
    }
}

/// Topic segmentation (`src/topics/`): turn and topic ids, folds that cut at topic boundaries
/// and render a closed topic as a line, recovery by `t<k>` / `T<n>`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct TopicsConfig {
    /// Segment committed turns into topics and let folds follow them. Off: no turn is
    /// segmented, folds cut and render as without topics.
    pub enabled: bool,
    /// Layer 2: in `maintain`, ask the host's LLM to label the newest turn's topic and confirm
    /// its boundary (one short call per checked turn; off by default because it costs calls).
    pub use_llm: bool,
    /// At most this many layer-2 calls per session per rolling hour.
    #[serde(deserialize_with = "de_u32")]
    pub max_calls_per_hour: u32,
}

impl Default for TopicsConfig {
    fn default() -> Self {
        TopicsConfig {
            enabled: true,
            use_llm: false,
            max_calls_per_hour: 6,
        }
    }
}

/// One price row, USD per 1M tokens.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PriceRow {
    /// Cached input token.
    #[serde(deserialize_with = "de_f64")]
    pub hit: f64,
    /// Uncached input token.
    #[serde(deserialize_with = "de_f64")]
    pub miss: f64,
    /// Output token.
    #[serde(deserialize_with = "de_f64")]
    pub output: f64,
}

/// Summaries made with `runtimeContext.llm.complete`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct SummaryConfig {
    /// Use the host's LLM for fold summaries (the extractive summary is always the fallback).
    pub use_llm: bool,
    /// At most this many summary calls per session per hour.
    #[serde(deserialize_with = "de_u32")]
    pub max_calls_per_hour: u32,
    /// Give up on one summary call after this long.
    #[serde(deserialize_with = "de_u64")]
    pub timeout_ms: u64,
    /// Output cap of one summary call.
    #[serde(deserialize_with = "de_u32")]
    pub max_tokens: u32,
}

/// Tool-result shrinking.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct PersistConfig {
    /// Master switch.
    pub enabled: bool,
    /// Threshold in characters per tool name.
    pub thresholds: BTreeMap<String, u64>,
    /// Threshold for tools not listed.
    #[serde(deserialize_with = "de_u64")]
    pub default_threshold: u64,
    /// Preview size in characters (about 20 % head, 5 % tail and a Mentions list of the omitted middle, up to 95 %).
    #[serde(deserialize_with = "de_u64")]
    pub preview_chars: u64,
    /// Also shrink through OpenClaw's agent tool-result middleware, before the model first
    /// sees a result, so the bytes it sees never change (no cache break on the next turn).
    pub middleware: bool,
}

/// Artifact store.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct ArtifactsConfig {
    /// Size budget in bytes; least recently referenced unreferenced artifacts are evicted above it.
    #[serde(deserialize_with = "de_u64")]
    pub max_bytes: u64,
}

impl Default for Config {
    fn default() -> Self {
        let mut tool_defaults = BTreeMap::new();
        let mut read = serde_json::Map::new();
        read.insert("offset".into(), 1.into());
        read.insert("limit".into(), 200.into());
        tool_defaults.insert("read".to_string(), read);
        let mut fetch = serde_json::Map::new();
        fetch.insert("maxChars".into(), 12000.into());
        tool_defaults.insert("web_fetch".to_string(), fetch);
        Config {
            mode: Mode::Auto,
            // Widened to the providers where the replay bench measured a saving on every session
            // (`npm run bench -- --provider all`, docs/cache-model.md "Other providers").
            target_models: [
                "*deepseek*",
                "*claude*",
                "*gpt-5*",
                "*gemini*",
                "*kimi*",
                "*qwen*",
                "*glm*",
            ]
            .iter()
            .map(|s| s.to_string())
            .collect(),
            prefix_lock_count: 2,
            compact_ratio: 0.8,
            token_budget: 0,
            tail_tokens: 4_000,
            min_fold_tokens: 48_000,
            fold_record_budget: 16_000,
            expected_remaining_calls: 0,
            price: "auto".to_string(),
            prices: BTreeMap::new(),
            providers: BTreeMap::new(),
            summary: SummaryConfig::default(),
            protected_reads: DEFAULT_PROTECTED_READS
                .iter()
                .map(|s| s.to_string())
                .collect(),
            tool_defaults,
            persist: PersistConfig::default(),
            artifacts: ArtifactsConfig::default(),
            state_dir: String::new(),
            log_file: String::new(),
            owns_compaction: true,
            lessons: LessonsConfig::default(),
            topics: TopicsConfig::default(),
            profile: "balanced".to_string(),
        }
    }
}

/// Workspace files whose reads survive folds verbatim.
pub const DEFAULT_PROTECTED_READS: &[&str] = &[
    "AGENTS.md",
    "SOUL.md",
    "MEMORY.md",
    "TOOLS.md",
    "USER.md",
    "IDENTITY.md",
    "HEARTBEAT.md",
    "NOW.md",
    "SESSION-STATE.md",
    "SKILL.md",
    "TODAY.md",
];

impl Default for SummaryConfig {
    fn default() -> Self {
        SummaryConfig {
            use_llm: true,
            max_calls_per_hour: 6,
            timeout_ms: 45_000,
            max_tokens: 1_500,
        }
    }
}

impl Default for PersistConfig {
    fn default() -> Self {
        let mut thresholds = BTreeMap::new();
        // `read` keeps a higher threshold; every other tool shrinks above 4,000 chars (the
        // default threshold was 8,000 until the leave-one-session-out bench showed that tools
        // outside this table, Claude Code's `Read`, `Grep`, `Bash`, `Task` among them, cost less
        // *and* lose fewer anchors at 4,000: a smaller context folds later, and the preview's
        // Mentions list keeps the names. Lookup stays exact: `Read` at 12,000 costs more than
        // it retains (README, "Previews that keep what is asked for later").
        thresholds.insert("read".to_string(), 12_000);
        for t in ["exec", "bash", "web_fetch"] {
            thresholds.insert(t.to_string(), 4_000);
        }
        PersistConfig {
            enabled: true,
            thresholds,
            default_threshold: 4_000,
            preview_chars: 4_000,
            middleware: true,
        }
    }
}

impl Default for ArtifactsConfig {
    fn default() -> Self {
        ArtifactsConfig { max_bytes: 1 << 30 }
    }
}

impl Config {
    /// Parse from the host's plugin config object (missing or `null` gives the defaults).
    pub fn from_value(v: &serde_json::Value) -> Result<Config> {
        Config::from_json(&v.to_string())
    }

    /// Parse from a JSON string (`null` gives the defaults). Decoded straight from the text, so
    /// the config's decoders exist once in the module (the search for the failing key runs the
    /// same decoder).
    pub fn from_json(s: &str) -> Result<Config> {
        match s.trim_start().as_bytes().first() {
            Some(b'{') => {}
            Some(b'n') if s.trim() == "null" => return Ok(Config::default()),
            _ => {
                // Not an object: invalid JSON says so, anything else is the wrong type.
                serde_json::from_str::<serde::de::IgnoredAny>(s)?;
                return Err(Error::config("", "plugin config must be an object"));
            }
        }
        // The key that failed goes into the error (`topics.maxCallsPerHour`), found once the
        // decoder has failed (`key`).
        let mut de = serde_json::Deserializer::from_str(s);
        let cfg = match Config::deserialize(&mut de) {
            Ok(cfg) => cfg,
            Err(e) => {
                let key = key::failing_key(s, &e, |s| serde_json::from_str::<Config>(s).map(drop));
                return Err(Error::config(key, e.to_string()));
            }
        };
        de.end()?;
        cfg.validate()?;
        Ok(cfg)
    }

    /// Range checks with the offending key in the error.
    pub fn validate(&self) -> Result<()> {
        if !profile::NAMES.contains(&self.profile.as_str()) {
            return Err(Error::config(
                "profile",
                "must be one of savings, balanced, recall",
            ));
        }
        if self.prefix_lock_count > 64 {
            return Err(Error::config("prefixLockCount", "must be between 0 and 64"));
        }
        if !(self.compact_ratio > 0.05 && self.compact_ratio <= 1.0) {
            return Err(Error::config(
                "compactRatio",
                "must be greater than 0.05 and at most 1",
            ));
        }
        if self.tail_tokens < 1_000 {
            return Err(Error::config("tailTokens", "must be at least 1000"));
        }
        if self.summary.timeout_ms < 100 {
            return Err(Error::config("summary.timeoutMs", "must be at least 100"));
        }
        if self.topics.max_calls_per_hour > 60 {
            return Err(Error::config(
                "topics.maxCallsPerHour",
                "must be between 0 and 60",
            ));
        }
        if self.persist.preview_chars < 200 {
            return Err(Error::config(
                "persist.previewChars",
                "must be at least 200",
            ));
        }
        // A threshold below the preview could never shrink: the message names both keys and
        // the preview in force (the shim words it the other way round for previewChars).
        let preview = self.persist.preview_chars;
        let below = format!("must be at least persist.previewChars ({preview})");
        if self.persist.default_threshold < preview {
            return Err(Error::config("persist.defaultThreshold", below));
        }
        for (tool, t) in &self.persist.thresholds {
            if *t < preview {
                return Err(Error::config(format!("persist.thresholds.{tool}"), below));
            }
        }
        if self.artifacts.max_bytes < 1 << 20 {
            return Err(Error::config(
                "artifacts.maxBytes",
                "must be at least 1048576 (1 MiB)",
            ));
        }
        for (name, row) in &self.prices {
            for (field, value, ok, rule) in [
                ("hit", row.hit, row.hit >= 0.0, "must be at least 0"),
                ("miss", row.miss, row.miss > 0.0, "must be greater than 0"),
                (
                    "output",
                    row.output,
                    row.output >= 0.0,
                    "must be at least 0",
                ),
            ] {
                if !ok {
                    return Err(Error::config(
                        format!("prices.{name}.{field}"),
                        format!("{rule} (USD per million tokens), got {value}"),
                    ));
                }
            }
        }
        for (name, o) in &self.providers {
            let builtin = crate::providers::builtin(name).is_some();
            if let Err((field, msg)) = o.check(builtin) {
                return Err(Error::config(format!("providers.{name}.{field}"), msg));
            }
        }
        if !(20..=2_000).contains(&self.lessons.max_inject_tokens) {
            return Err(Error::config(
                "lessons.maxInjectTokens",
                "must be between 20 and 2000",
            ));
        }
        for p in &self.target_models {
            if p.is_empty() {
                return Err(Error::config("targetModels", "patterns must be non-empty"));
            }
        }
        Ok(())
    }
}

// ---- decoding: unknown keys rejected, numbers also as numeric strings ------------------------

/// A number, or a string holding one (what `openclaw config set` stores).
pub(crate) fn num<'de, D: Deserializer<'de>>(d: D) -> std::result::Result<f64, D::Error> {
    use serde::de::Error as _;
    let x = match Value::deserialize(d)? {
        Value::Number(n) => n.as_f64().ok_or_else(|| D::Error::custom("not a number"))?,
        Value::String(s) => s.trim().parse::<f64>().map_err(|_| {
            D::Error::custom(format!("expected a number, got {}", crate::quoted(&s)))
        })?,
        Value::Null => return Err(D::Error::custom("expected a number, got null")),
        Value::Bool(_) => return Err(D::Error::custom("expected a number, got boolean")),
        Value::Array(_) => return Err(D::Error::custom("expected a number, got array")),
        Value::Object(_) => return Err(D::Error::custom("expected a number, got object")),
    };
    if !x.is_finite() {
        return Err(D::Error::custom("expected a finite number"));
    }
    Ok(x)
}

fn de_f64<'de, D: Deserializer<'de>>(d: D) -> std::result::Result<f64, D::Error> {
    num(d)
}

fn de_u64<'de, D: Deserializer<'de>>(d: D) -> std::result::Result<u64, D::Error> {
    let v = num(d)?;
    if !(v >= 0.0 && v.fract() == 0.0 && v < 9.0e15) {
        return Err(serde::de::Error::custom(format!(
            "expected a non-negative integer, got {v}"
        )));
    }
    Ok(v as u64)
}

fn de_u32<'de, D: Deserializer<'de>>(d: D) -> std::result::Result<u32, D::Error> {
    let v = de_u64(d)?;
    u32::try_from(v).map_err(|_| serde::de::Error::custom("integer too large"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_validate() {
        Config::default().validate().unwrap();
        assert_eq!(
            Config::from_value(&serde_json::Value::Null).unwrap(),
            Config::default()
        );
    }

    #[test]
    fn numeric_strings_accepted() {
        let c = Config::from_json(r#"{"tailTokens":"30000","compactRatio":"0.7"}"#).unwrap();
        assert_eq!(c.tail_tokens, 30_000);
        assert_eq!(c.compact_ratio, 0.7);
    }

    #[test]
    fn errors_name_the_key() {
        let e = Config::from_json(r#"{"compactRatio":3}"#).unwrap_err();
        assert_eq!(e.code(), "CACHEFOLD_CONFIG");
        assert!(e.to_string().contains("compactRatio"), "{e}");
        let e = Config::from_json(r#"{"nope":1}"#).unwrap_err();
        assert!(e.to_string().contains("nope"), "{e}");
        let e = Config::from_json(r#"{"topics":{"maxCallsPerHour":61}}"#).unwrap_err();
        assert!(e.to_string().contains("topics.maxCallsPerHour"), "{e}");
        let c = Config::from_json(r#"{"topics":{"useLlm":true,"maxCallsPerHour":"2"}}"#).unwrap();
        assert!(c.topics.use_llm && c.topics.enabled);
        assert_eq!(c.topics.max_calls_per_hour, 2);
        let e = Config::from_json(r#"{"tailTokens":"lots"}"#).unwrap_err();
        assert!(e.to_string().contains("lots"), "{e}");
    }
}
