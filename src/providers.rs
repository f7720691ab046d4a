//! Provider cache profiles: how each prefix-caching provider bills and keeps a cached prefix
//! (docs/cache-model.md, "Providers"). Pure data and functions; the fold cost model
//! ([`crate::cost::fold_decision_with`]) and the price lookup ([`crate::cost::price_for`]) use
//! them.
//!
//! A profile is chosen from the model id the host passes (`provider/model` or bare, see
//! [`profile_key`]) and can be overridden field by field with the `providers.<key>` config key
//! ([`ProviderOverride`]). `prices.<key>` still overrides the three prices of a row.
//!
//! Prices are USD per 1M tokens as published on 2026-11-26 (sources per row; rows marked
//! *estimate* hold a figure that was not found in a published source and say where it comes
//! from).

use crate::config::Config;
use serde::{Deserialize, Deserializer, Serialize};

/// How a provider caches a prompt prefix, and what it bills for it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Profile {
    /// Profile key, e.g. `anthropic-sonnet` (also its price row key).
    pub key: String,
    /// Provider family: `deepseek`, `anthropic`, `openai`, `google`, `moonshot`, `qwen`, `zai`.
    pub provider: String,
    /// Cached input token (a read).
    pub hit: f64,
    /// Uncached input token.
    pub miss: f64,
    /// Output token.
    pub output: f64,
    /// Price of a token written to the cache with the default lifetime, as a multiple of `miss`
    /// (1.0 = no premium: the write is billed as a miss).
    pub write_premium: f64,
    /// The same with the extended lifetime (Anthropic `cacheRetention: "long"`, 1 h).
    pub write_premium_long: f64,
    /// Shortest prompt that is cached at all, tokens.
    pub min_tokens: u64,
    /// Hits are multiples of this many tokens (0 = any length).
    pub block: u64,
    /// The cache survives this long without a request (ms; every hit refreshes it). `None`: hours
    /// to days, not modelled (DeepSeek keeps its cache on disk).
    pub ttl_ms: Option<f64>,
    /// The extended lifetime, where the provider sells one (ms).
    pub ttl_long_ms: Option<f64>,
    /// Breakpoints are explicit marks in the request (`cache_control`), placed by the host.
    pub explicit: bool,
    /// Some figure of the row is not from a published source (see the row's comment).
    pub estimate: bool,
}

const MIN: f64 = 60_000.0;
const HOUR: f64 = 3_600_000.0;

/// One built-in row (const-friendly mirror of [`Profile`]).
struct Row {
    key: &'static str,
    provider: &'static str,
    hit: f64,
    miss: f64,
    output: f64,
    write_premium: f64,
    write_premium_long: f64,
    min_tokens: u64,
    block: u64,
    ttl_ms: Option<f64>,
    ttl_long_ms: Option<f64>,
    explicit: bool,
    estimate: bool,
}

/// Built-in profiles. DeepSeek rows carry the peak price; [`crate::cost::price_for`] applies
/// the off-peak band.
const ROWS: &[Row] = &[
    // api-docs.deepseek.com/quick_start/pricing and /guides/kv_cache (2026); 128-token units
    // measured on V4; no premium, no fixed lifetime ("a few hours to a few days").
    Row {
        key: "deepseek-flash",
        provider: "deepseek",
        hit: 0.006,
        miss: 0.30,
        output: 1.20,
        write_premium: 1.0,
        write_premium_long: 1.0,
        min_tokens: 64,
        block: 128,
        ttl_ms: None,
        ttl_long_ms: None,
        explicit: false,
        estimate: false,
    },
    Row {
        key: "deepseek-v4-pro",
        provider: "deepseek",
        hit: 0.044,
        miss: 1.32,
        output: 3.96,
        write_premium: 1.0,
        write_premium_long: 1.0,
        min_tokens: 64,
        block: 128,
        ttl_ms: None,
        ttl_long_ms: None,
        explicit: false,
        estimate: false,
    },
    // platform.claude.com/docs/en/about-claude/pricing and /build-with-claude/prompt-caching:
    // Opus 5 (also Opus 4.5+), write 1.25x for 5 min, 2x for 1 h, read 0.1x; min 512 tokens.
    Row {
        key: "anthropic-opus",
        provider: "anthropic",
        hit: 0.50,
        miss: 5.00,
        output: 25.00,
        write_premium: 1.25,
        write_premium_long: 2.0,
        min_tokens: 512,
        block: 0,
        ttl_ms: Some(5.0 * MIN),
        ttl_long_ms: Some(HOUR),
        explicit: true,
        estimate: false,
    },
    // Same sources: Sonnet 5 (from 2026-09-01), min 1,024 tokens.
    Row {
        key: "anthropic-sonnet",
        provider: "anthropic",
        hit: 0.30,
        miss: 3.00,
        output: 15.00,
        write_premium: 1.25,
        write_premium_long: 2.0,
        min_tokens: 1_024,
        block: 0,
        ttl_ms: Some(5.0 * MIN),
        ttl_long_ms: Some(HOUR),
        explicit: true,
        estimate: false,
    },
    // Same sources: Haiku 4.5, min 4,096 tokens.
    Row {
        key: "anthropic-haiku",
        provider: "anthropic",
        hit: 0.10,
        miss: 1.00,
        output: 5.00,
        write_premium: 1.25,
        write_premium_long: 2.0,
        min_tokens: 4_096,
        block: 0,
        ttl_ms: Some(5.0 * MIN),
        ttl_long_ms: Some(HOUR),
        explicit: true,
        estimate: false,
    },
    // developers.openai.com/api/docs/pricing and /guides/prompt-caching: gpt-5 family before
    // 5.6 (gpt-5 price shown), automatic, 1,024 minimum, 128-token steps, read 0.1x, no write
    // premium; in-memory 5-10 min idle (10 min used), extended retention 24 h.
    Row {
        key: "openai-gpt-5",
        provider: "openai",
        hit: 0.125,
        miss: 1.25,
        output: 10.00,
        write_premium: 1.0,
        write_premium_long: 1.0,
        min_tokens: 1_024,
        block: 128,
        ttl_ms: Some(10.0 * MIN),
        ttl_long_ms: Some(24.0 * HOUR),
        explicit: false,
        estimate: false,
    },
    // Estimate: gpt-5.6 and later (implicit breakpoint on the latest message, writes 1.25x,
    // >= 30 min): prices as reported by docs.laozhang.ai (2026-07-30), not OpenAI's own page.
    Row {
        key: "openai-gpt-5.6",
        provider: "openai",
        hit: 0.50,
        miss: 5.00,
        output: 30.00,
        write_premium: 1.25,
        write_premium_long: 1.25,
        min_tokens: 1_024,
        block: 128,
        ttl_ms: Some(30.0 * MIN),
        ttl_long_ms: Some(24.0 * HOUR),
        explicit: false,
        estimate: true,
    },
    // gpt-4.1: 2.00 / 0.50 (0.25x) / 8.00 (openai.com/api/pricing as quoted by
    // api-evangelist 2026-11-06 and adk-model's table); caching rules as gpt-5.
    Row {
        key: "openai-gpt-4.1",
        provider: "openai",
        hit: 0.50,
        miss: 2.00,
        output: 8.00,
        write_premium: 1.0,
        write_premium_long: 1.0,
        min_tokens: 1_024,
        block: 128,
        ttl_ms: Some(10.0 * MIN),
        ttl_long_ms: Some(24.0 * HOUR),
        explicit: false,
        estimate: false,
    },
    // Estimate: o-series (o3 after its 2025 price cut: 2.00 / 0.50 / 8.00; o4-mini is
    // 1.10 / 0.275 / 4.40): third-party tables (openai-cost, oG-Memory rate cards), not found
    // on OpenAI's current page, which lists only the gpt-5 family.
    Row {
        key: "openai-o",
        provider: "openai",
        hit: 0.50,
        miss: 2.00,
        output: 8.00,
        write_premium: 1.0,
        write_premium_long: 1.0,
        min_tokens: 1_024,
        block: 128,
        ttl_ms: Some(10.0 * MIN),
        ttl_long_ms: Some(24.0 * HOUR),
        explicit: false,
        estimate: true,
    },
    // ai.google.dev/gemini-api/docs/caching (2026-10-13) and the price sheet: 2.5 Pro
    // (<= 200K prompt) implicit caching, read 0.1x, min 2,048. Estimate: the implicit cache's
    // lifetime and step are not published (10 min and 128 assumed).
    Row {
        key: "gemini-2.5-pro",
        provider: "google",
        hit: 0.125,
        miss: 1.25,
        output: 10.00,
        write_premium: 1.0,
        write_premium_long: 1.0,
        min_tokens: 2_048,
        block: 128,
        ttl_ms: Some(10.0 * MIN),
        ttl_long_ms: None,
        explicit: false,
        estimate: true,
    },
    // Same sources: 2.5 Flash. Same estimate for lifetime and step.
    Row {
        key: "gemini-2.5-flash",
        provider: "google",
        hit: 0.03,
        miss: 0.30,
        output: 2.50,
        write_premium: 1.0,
        write_premium_long: 1.0,
        min_tokens: 2_048,
        block: 128,
        ttl_ms: Some(10.0 * MIN),
        ttl_long_ms: None,
        explicit: false,
        estimate: true,
    },
    // platform.kimi.ai kimi-k2.6 (via siml1169/kimi-copilot-provider_k3, 2026-07-24);
    // 256-token steps and a 5-30 min lifetime measured (Leechael/pi-provider-kimi-code), the
    // 30 min upper end used.
    Row {
        key: "kimi",
        provider: "moonshot",
        hit: 0.16,
        miss: 0.95,
        output: 4.00,
        write_premium: 1.0,
        write_premium_long: 1.0,
        min_tokens: 256,
        block: 256,
        ttl_ms: Some(30.0 * MIN),
        ttl_long_ms: None,
        explicit: false,
        estimate: false,
    },
    // alibabacloud.com/help/en/model-studio/context-cache (2026-10-11): implicit cache, read
    // 0.2x, no premium, min 256 (intl page). Estimate: qwen3-max international price
    // (1.20 / 6.00 for <= 32K) from a third-party listing of Model Studio's models page; the
    // lifetime is "not guaranteed" (5 min assumed), the step is not published.
    Row {
        key: "qwen",
        provider: "qwen",
        hit: 0.24,
        miss: 1.20,
        output: 6.00,
        write_premium: 1.0,
        write_premium_long: 1.0,
        min_tokens: 256,
        block: 0,
        ttl_ms: Some(5.0 * MIN),
        ttl_long_ms: None,
        explicit: false,
        estimate: true,
    },
    // Estimate: GLM-4.6 (Z.ai) 0.60 / 0.11 / 2.20 as listed by pipellm.ai ("official pricing",
    // 2026-03-27); Z.ai publishes no minimum, step or lifetime for its automatic cache (1,024,
    // 128 and 5 min assumed).
    Row {
        key: "glm",
        provider: "zai",
        hit: 0.11,
        miss: 0.60,
        output: 2.20,
        write_premium: 1.0,
        write_premium_long: 1.0,
        min_tokens: 1_024,
        block: 128,
        ttl_ms: Some(5.0 * MIN),
        ttl_long_ms: None,
        explicit: false,
        estimate: true,
    },
];

/// Keys of every built-in profile, in table order.
pub fn builtin_keys() -> Vec<&'static str> {
    ROWS.iter().map(|r| r.key).collect()
}

/// Built-in profile by key.
pub fn builtin(key: &str) -> Option<Profile> {
    ROWS.iter().find(|r| r.key == key).map(|r| Profile {
        key: r.key.to_string(),
        provider: r.provider.to_string(),
        hit: r.hit,
        miss: r.miss,
        output: r.output,
        write_premium: r.write_premium,
        write_premium_long: r.write_premium_long,
        min_tokens: r.min_tokens,
        block: r.block,
        ttl_ms: r.ttl_ms,
        ttl_long_ms: r.ttl_long_ms,
        explicit: r.explicit,
        estimate: r.estimate,
    })
}

/// The profile key for a model id (`provider/model` as OpenClaw passes it, or bare), matched
/// on the lowercased id. No id means DeepSeek flash (the product's primary target); an id no
/// rule knows is `None` (the caller falls back to the generic `openai-like` price, no profile).
pub fn profile_key(model: Option<&str>) -> Option<&'static str> {
    let m = model.unwrap_or("deepseek").to_ascii_lowercase();
    let bare = m.rsplit('/').next().unwrap_or(&m).to_string();
    let has = |s: &str| m.contains(s);
    if has("deepseek") {
        return Some(if has("pro") {
            "deepseek-v4-pro"
        } else {
            "deepseek-flash"
        });
    }
    if has("claude") || m.starts_with("anthropic/") {
        return Some(if has("opus") {
            "anthropic-opus"
        } else if has("haiku") {
            "anthropic-haiku"
        } else {
            "anthropic-sonnet"
        });
    }
    if has("gemini") {
        return Some(if has("flash") {
            "gemini-2.5-flash"
        } else {
            "gemini-2.5-pro"
        });
    }
    if has("kimi") || has("moonshot") {
        return Some("kimi");
    }
    if has("qwen") || m.starts_with("dashscope/") || m.starts_with("alibaba/") {
        return Some("qwen");
    }
    if has("glm") || m.starts_with("zai/") || m.starts_with("zhipu/") {
        return Some("glm");
    }
    if bare.starts_with("gpt-4.1") {
        return Some("openai-gpt-4.1");
    }
    let o_series = ["o1", "o3", "o4"]
        .iter()
        .any(|p| bare == *p || bare.starts_with(&format!("{p}-")));
    if o_series {
        return Some("openai-o");
    }
    if let Some(rest) = bare.strip_prefix("gpt-") {
        // gpt-5.6 and later, gpt-6…: implicit breakpoints with a write premium.
        let ver: Vec<u32> = rest
            .split(|c: char| !c.is_ascii_digit())
            .take(2)
            .map(|s| s.parse().unwrap_or(0))
            .collect();
        let (major, minor) = (
            ver.first().copied().unwrap_or(0),
            ver.get(1).copied().unwrap_or(0),
        );
        if major > 5 || (major == 5 && minor >= 6) {
            return Some("openai-gpt-5.6");
        }
        return Some("openai-gpt-5");
    }
    if m.starts_with("openai/") {
        return Some("openai-gpt-5");
    }
    None
}

/// Field-by-field override of a profile (`providers.<key>` in the config; a key that is not a
/// built-in profile adds one, then every field without a default must be given: `hit`, `miss`,
/// `output`). `match` patterns (case-insensitive globs, as `targetModels`) select the profile
/// for model ids before the built-in rules.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct ProviderOverride {
    /// Model-id globs that pick this profile (tried before the built-in rules).
    #[serde(rename = "match", skip_serializing_if = "Vec::is_empty")]
    pub patterns: Vec<String>,
    /// Cached input price, USD per 1M tokens.
    #[serde(deserialize_with = "opt_num", skip_serializing_if = "Option::is_none")]
    pub hit: Option<f64>,
    /// Uncached input price.
    #[serde(deserialize_with = "opt_num", skip_serializing_if = "Option::is_none")]
    pub miss: Option<f64>,
    /// Output price.
    #[serde(deserialize_with = "opt_num", skip_serializing_if = "Option::is_none")]
    pub output: Option<f64>,
    /// Write price with the default lifetime, as a multiple of `miss`.
    #[serde(deserialize_with = "opt_num", skip_serializing_if = "Option::is_none")]
    pub write_premium: Option<f64>,
    /// Write price with the extended lifetime, as a multiple of `miss`.
    #[serde(deserialize_with = "opt_num", skip_serializing_if = "Option::is_none")]
    pub write_premium_long: Option<f64>,
    /// Shortest cached prompt, tokens.
    #[serde(deserialize_with = "opt_num", skip_serializing_if = "Option::is_none")]
    pub min_tokens: Option<f64>,
    /// Hit step, tokens.
    #[serde(deserialize_with = "opt_num", skip_serializing_if = "Option::is_none")]
    pub block: Option<f64>,
    /// Idle lifetime in minutes (0 = none: hours to days, not modelled).
    #[serde(deserialize_with = "opt_num", skip_serializing_if = "Option::is_none")]
    pub ttl_minutes: Option<f64>,
    /// Use the extended lifetime and its write premium (the host's `cacheRetention: "long"`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub long_retention: Option<bool>,
}

fn opt_num<'de, D: Deserializer<'de>>(d: D) -> std::result::Result<Option<f64>, D::Error> {
    crate::config::num(d).map(Some)
}

impl ProviderOverride {
    /// Range checks; `Err((field, message))`.
    pub fn check(&self, builtin: bool) -> std::result::Result<(), (&'static str, &'static str)> {
        let nonneg = |v: Option<f64>| v.map_or(true, |x| x >= 0.0);
        if !nonneg(self.hit) || !nonneg(self.output) || self.miss.is_some_and(|x| x <= 0.0) {
            return Err(("hit", "hit and output must be >= 0, miss > 0"));
        }
        if self
            .write_premium
            .into_iter()
            .chain(self.write_premium_long)
            .any(|x| !(1.0..=10.0).contains(&x))
        {
            return Err(("writePremium", "must be between 1 and 10"));
        }
        if !nonneg(self.min_tokens) || !nonneg(self.block) || !nonneg(self.ttl_minutes) {
            return Err(("minTokens", "minTokens, block and ttlMinutes must be >= 0"));
        }
        if !builtin && (self.hit.is_none() || self.miss.is_none() || self.output.is_none()) {
            return Err(("miss", "a new profile needs hit, miss and output"));
        }
        if self.patterns.iter().any(|p| p.is_empty()) {
            return Err(("match", "patterns must be non-empty"));
        }
        Ok(())
    }

    fn apply(&self, p: &mut Profile) {
        let set = |dst: &mut f64, v: Option<f64>| {
            if let Some(x) = v {
                *dst = x;
            }
        };
        set(&mut p.hit, self.hit);
        set(&mut p.miss, self.miss);
        set(&mut p.output, self.output);
        set(&mut p.write_premium, self.write_premium);
        set(&mut p.write_premium_long, self.write_premium_long);
        if let Some(x) = self.min_tokens {
            p.min_tokens = x as u64;
        }
        if let Some(x) = self.block {
            p.block = x as u64;
        }
        if let Some(x) = self.ttl_minutes {
            p.ttl_ms = (x > 0.0).then_some(x * MIN);
        }
        if self.long_retention == Some(true) {
            if let Some(t) = p.ttl_long_ms {
                p.ttl_ms = Some(t);
            }
            p.write_premium = p.write_premium_long;
        }
    }
}

/// The profile for `model`, with the config's `providers` overrides applied. `None` when no
/// rule and no `match` pattern knows the model (generic pricing, no cache profile).
pub fn profile_for(cfg: &Config, model: Option<&str>) -> Option<Profile> {
    let id = model.map(str::trim).filter(|m| !m.is_empty());
    let matched = id.and_then(|m| {
        let bare = m.rsplit('/').next().unwrap_or(m);
        cfg.providers.iter().find_map(|(k, o)| {
            o.patterns
                .iter()
                .any(|p| crate::engine::glob_match(p, m) || crate::engine::glob_match(p, bare))
                .then_some(k.as_str())
        })
    });
    let key = matched.or_else(|| profile_key(id))?;
    let mut p = builtin(key).unwrap_or_else(|| Profile {
        key: key.to_string(),
        provider: key.to_string(),
        hit: 0.0,
        miss: 1.0,
        output: 0.0,
        write_premium: 1.0,
        write_premium_long: 1.0,
        min_tokens: 0,
        block: 0,
        ttl_ms: None,
        ttl_long_ms: None,
        explicit: false,
        estimate: true,
    });
    if let Some(o) = cfg.providers.get(key) {
        o.apply(&mut p);
    }
    Some(p)
}

/// What the cache state means for a rewrite decided now.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CacheTerms {
    /// Write price as a multiple of miss (1.0 = none).
    pub write_premium: f64,
    /// Shortest cached prompt, tokens.
    pub min_tokens: u64,
    /// The cached prefix has expired: the next request misses from its first token whatever
    /// the engine sends, so a rewrite now breaks nothing.
    pub expired: bool,
    /// Expected remaining lifetime of the cached prefix (ms) if no request came; `None` when
    /// the provider keeps it for hours to days, or no earlier request is known.
    pub remaining_ms: Option<f64>,
}

impl CacheTerms {
    /// No premium, no minimum, cache alive: the DeepSeek terms (what [`crate::cost::fold_decision`]
    /// assumes).
    pub fn plain() -> CacheTerms {
        CacheTerms {
            write_premium: 1.0,
            ..CacheTerms::default()
        }
    }
}

/// The cache terms of `profile` at `now_ms`, the last request having been at `last_ms`
/// (`None`: no earlier request known, the cache counts as alive). The prefix expired when the
/// idle gap passed the lifetime; the remaining lifetime is `ttl − gap`. Non-finite times count
/// as no information (alive).
pub fn terms(profile: Option<&Profile>, now_ms: f64, last_ms: Option<f64>) -> CacheTerms {
    let Some(p) = profile else {
        return CacheTerms::plain();
    };
    let gap = last_ms
        .filter(|l| l.is_finite() && now_ms.is_finite())
        .map(|l| (now_ms - l).max(0.0));
    let (expired, remaining_ms) = match (p.ttl_ms, gap) {
        (Some(ttl), Some(g)) => (g > ttl, Some((ttl - g).max(0.0))),
        _ => (false, None),
    };
    CacheTerms {
        write_premium: p.write_premium.max(1.0),
        min_tokens: p.min_tokens,
        expired,
        remaining_ms,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_row_is_sane() {
        for k in builtin_keys() {
            let p = builtin(k).unwrap();
            assert!(p.hit < p.miss && p.miss > 0.0 && p.output > 0.0, "{k}");
            assert!(
                p.write_premium >= 1.0 && p.write_premium_long >= p.write_premium,
                "{k}"
            );
        }
    }

    #[test]
    fn model_ids_pick_profiles() {
        let cases = [
            (None, Some("deepseek-flash")),
            (Some("deepseek/deepseek-v4-flash"), Some("deepseek-flash")),
            (Some("DeepSeek-V4-Pro"), Some("deepseek-v4-pro")),
            (Some("anthropic/claude-opus-5"), Some("anthropic-opus")),
            (Some("anthropic/claude-sonnet-5"), Some("anthropic-sonnet")),
            (Some("claude-haiku-4-5"), Some("anthropic-haiku")),
            (Some("openai/gpt-5.5"), Some("openai-gpt-5")),
            (Some("openai/gpt-5.6-sol"), Some("openai-gpt-5.6")),
            (Some("gpt-6-sol"), Some("openai-gpt-5.6")),
            (Some("openai/gpt-4.1-mini"), Some("openai-gpt-4.1")),
            (Some("openai/o3"), Some("openai-o")),
            (Some("o4-mini"), Some("openai-o")),
            (Some("google/gemini-2.5-pro"), Some("gemini-2.5-pro")),
            (Some("gemini-2.5-flash"), Some("gemini-2.5-flash")),
            (Some("moonshot/kimi-k2.6"), Some("kimi")),
            (Some("qwen/qwen3-max"), Some("qwen")),
            (Some("zai/glm-4.6"), Some("glm")),
            (Some("mistral/mistral-large"), None),
            (
                Some("openrouter/anthropic/claude-sonnet-5"),
                Some("anthropic-sonnet"),
            ),
        ];
        for (id, want) in cases {
            assert_eq!(profile_key(id), want, "{id:?}");
        }
    }

    #[test]
    fn overrides_and_new_profiles() {
        let cfg = Config::from_json(
            r#"{"providers":{"anthropic-sonnet":{"longRetention":true,"hit":"0.2"},
                "mine":{"match":["acme/*"],"hit":0.1,"miss":1,"output":2,"ttlMinutes":15}}}"#,
        )
        .unwrap();
        let p = profile_for(&cfg, Some("anthropic/claude-sonnet-5")).unwrap();
        assert_eq!((p.hit, p.write_premium, p.ttl_ms), (0.2, 2.0, Some(HOUR)));
        let p = profile_for(&cfg, Some("acme/big-1")).unwrap();
        assert_eq!(
            (p.key.as_str(), p.miss, p.ttl_ms),
            ("mine", 1.0, Some(15.0 * MIN))
        );
        assert!(profile_for(&cfg, Some("mistral/x")).is_none());
        // The config round-trips through its JSON (the shim hands it back to the core).
        let back = Config::from_value(&serde_json::to_value(&cfg).unwrap()).unwrap();
        assert_eq!(back, cfg);
        let e = Config::from_json(r#"{"providers":{"new":{"hit":1}}}"#).unwrap_err();
        assert!(e.to_string().contains("providers.new"), "{e}");
        let e = Config::from_json(r#"{"providers":{"kimi":{"writePremium":0.5}}}"#).unwrap_err();
        assert!(e.to_string().contains("providers.kimi.writePremium"), "{e}");
        let e = Config::from_json(r#"{"providers":{"kimi":{"ttl":5}}}"#).unwrap_err();
        assert!(e.to_string().contains("ttl"), "{e}");
    }

    #[test]
    fn terms_follow_the_idle_gap() {
        let p = builtin("anthropic-sonnet").unwrap();
        let t = terms(Some(&p), 1_000_000.0, Some(1_000_000.0 - 4.0 * MIN));
        assert!(!t.expired);
        assert_eq!(t.remaining_ms, Some(MIN));
        assert_eq!((t.write_premium, t.min_tokens), (1.25, 1_024));
        let t = terms(Some(&p), 1_000_000.0, Some(1_000_000.0 - 6.0 * MIN));
        assert!(t.expired);
        assert_eq!(t.remaining_ms, Some(0.0));
        // No earlier request, a non-finite time, or a provider without a lifetime: alive.
        assert!(!terms(Some(&p), 1e6, None).expired);
        assert!(!terms(Some(&p), f64::NAN, Some(0.0)).expired);
        let ds = builtin("deepseek-flash").unwrap();
        let t = terms(Some(&ds), 1e12, Some(0.0));
        assert!(!t.expired && t.remaining_ms.is_none());
        assert_eq!(terms(None, 1e12, Some(0.0)), CacheTerms::plain());
    }
}
