//! Prices, request cost and the fold decision (docs/cache-model.md).
//!
//! All prices are USD per 1M tokens; a per-token price is `price / 1e6`. The built-in table is
//! versioned data, not logic: `Config.prices` overrides any row or adds new keys.
//!
//! DeepSeek bills by time band: **peak** is 01:00-04:00 and 06:00-10:00 UTC, Monday to Friday
//! (Beijing 09-12 and 14-18); every other hour, and all of Saturday and Sunday, is **off-peak**
//! at half price. Chinese public holidays are also off-peak but are not modelled (a holiday
//! priced as peak overestimates cost by 2x, which only makes folds look cheaper to skip).
//!
//! The fold rule (§5.6) in one line: a fold replaces a cached region by a short record, so every
//! later call reads fewer cached tokens (saving `Δ·p_hit` per call), but the record and
//! everything after it must be prefilled again at miss price once, and the summary call costs
//! its own input and output. Fold only when the savings over the expected remaining calls beat
//! that one-off cost. With hit = 1/50 of miss (flash) a fold needs roughly a dozen more calls
//! to pay back, so folding per turn is always wrong on DeepSeek.

use crate::config::Config;
pub use crate::providers::CacheTerms;
use serde::{Deserialize, Serialize};

/// One price row, USD per 1M tokens.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Price {
    /// Table key, e.g. `deepseek-flash-peak`.
    pub key: String,
    /// Cached input token.
    pub hit: f64,
    /// Uncached input token.
    pub miss: f64,
    /// Output token.
    pub output: f64,
}

/// Built-in price rows: (key, hit, miss, output), USD per 1M tokens.
///
/// DeepSeek rows: api-docs.deepseek.com pricing, Oct-Nov 2026 (docs/cache-model.md).
/// `openai-like`: gpt-5 family shape, hit = 0.1x miss. `kimi-like`: kimi-k2.6 (§1.2).
pub const BUILTIN_PRICES: &[(&str, f64, f64, f64)] = &[
    ("deepseek-flash-peak", 0.006, 0.30, 1.20),
    ("deepseek-flash-offpeak", 0.003, 0.15, 0.60),
    ("deepseek-v4-pro-peak", 0.044, 1.32, 3.96),
    ("deepseek-v4-pro-offpeak", 0.022, 0.66, 1.98),
    ("openai-like", 0.125, 1.25, 10.0),
    ("kimi-like", 0.16, 0.95, 4.00),
];

/// Block size of DeepSeek V4 prefix-cache units: every non-zero hit is a multiple of 128
/// (316 of 316 measured V4 calls, docs/cache-model.md).
pub const DS_BLOCK: u64 = 128;

/// `tokens` rounded down to a multiple of `block` (`block == 0` returns `tokens`).
pub fn floor_block(tokens: u64, block: u64) -> u64 {
    if block == 0 {
        return tokens;
    }
    tokens / block * block
}

/// Built-in row by key.
pub fn builtin_price(key: &str) -> Option<Price> {
    BUILTIN_PRICES
        .iter()
        .find(|(k, ..)| *k == key)
        .map(|&(k, hit, miss, output)| Price {
            key: k.to_string(),
            hit,
            miss,
            output,
        })
}

/// Row by key: `Config.prices` first, then the built-in table.
pub fn lookup_price(cfg: &Config, key: &str) -> Option<Price> {
    if let Some(row) = cfg.prices.get(key) {
        return Some(Price {
            key: key.to_string(),
            hit: row.hit,
            miss: row.miss,
            output: row.output,
        });
    }
    builtin_price(key)
}

/// True when `now_ms` (Unix milliseconds) falls in DeepSeek's peak band:
/// 01:00-04:00 or 06:00-10:00 UTC, Monday to Friday. Non-finite times count as off-peak.
pub fn is_peak(now_ms: f64) -> bool {
    if !now_ms.is_finite() {
        return false;
    }
    let secs = (now_ms / 1000.0).floor() as i64;
    let days = secs.div_euclid(86_400);
    let hour = secs.rem_euclid(86_400) / 3_600;
    // 1970-01-01 was a Thursday: (days + 3) mod 7 gives 0 = Monday … 6 = Sunday.
    let weekday = (days + 3).rem_euclid(7);
    weekday < 5 && ((1..4).contains(&hour) || (6..10).contains(&hour))
}

/// Price family for a model id: `deepseek-v4-pro`, `deepseek-flash`, `kimi-like` or
/// `openai-like`. A DeepSeek id containing `pro` is V4-Pro; any other DeepSeek id (including
/// the retired `deepseek-chat`/`deepseek-reasoner` and `deepseek-v4-flash`) bills as flash.
/// No model id means DeepSeek flash (the product's primary target).
pub fn model_family(model: Option<&str>) -> &'static str {
    let m = model.unwrap_or("deepseek").to_ascii_lowercase();
    if m.contains("deepseek") {
        if m.contains("pro") {
            "deepseek-v4-pro"
        } else {
            "deepseek-flash"
        }
    } else if m.contains("kimi") || m.contains("moonshot") {
        "kimi-like"
    } else {
        "openai-like"
    }
}

/// Price for the next request.
///
/// `cfg.price == "auto"`: DeepSeek models get their family (by [`model_family`]) with the
/// `-peak` or `-offpeak` suffix by [`is_peak`]; other models get the price of their provider
/// profile ([`crate::providers::profile_for`], key e.g. `anthropic-sonnet`), and a model no
/// profile knows gets `openai-like`. A named key (`deepseek-flash-peak`, `openai-like`, a
/// profile key, a key of `cfg.prices`) is used as is; a bare DeepSeek family name
/// (`deepseek-flash`) gets the band suffix. `cfg.prices` overrides built-in rows and profiles
/// with the same key. An unknown named key falls back to `auto` (config validation does not
/// know every key; a wrong price must never stop the engine).
pub fn price_for(cfg: &Config, model: Option<&str>, now_ms: f64) -> Price {
    let band = if is_peak(now_ms) { "peak" } else { "offpeak" };
    let banded = |family: &str| -> String {
        if family.starts_with("deepseek") {
            format!("{family}-{band}")
        } else {
            family.to_string()
        }
    };
    if cfg.price != "auto" {
        if let Some(p) = lookup_price(cfg, &cfg.price) {
            return p;
        }
        if let Some(p) = lookup_price(cfg, &banded(&cfg.price)) {
            return p;
        }
        if let Some(prof) = crate::providers::builtin(&cfg.price) {
            if !prof.provider.starts_with("deepseek") {
                return profile_price(cfg, prof);
            }
        }
    }
    if let Some(prof) = crate::providers::profile_for(cfg, model) {
        if !prof.provider.starts_with("deepseek") {
            return profile_price(cfg, prof);
        }
    }
    let family = model_family(model);
    let key = banded(family);
    lookup_price(cfg, &key)
        .or_else(|| lookup_price(cfg, family))
        .or_else(|| builtin_price(&key))
        .unwrap_or(Price {
            key,
            hit: 0.006,
            miss: 0.30,
            output: 1.20,
        })
}

/// The price row of a (non-DeepSeek) profile: `cfg.prices.<key>` when set, else the profile's.
fn profile_price(cfg: &Config, prof: crate::providers::Profile) -> Price {
    lookup_price(cfg, &prof.key).unwrap_or(Price {
        key: prof.key,
        hit: prof.hit,
        miss: prof.miss,
        output: prof.output,
    })
}

/// Cost of one request in USD.
pub fn cost_usd(p: &Price, hit: u64, miss: u64, output: u64) -> f64 {
    (hit as f64 * p.hit + miss as f64 * p.miss + output as f64 * p.output) / 1e6
}

/// Token counts of one possible fold. The engine fills these from its estimates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FoldCandidate {
    /// L: the whole prompt of the next call without folding (static prefix + all messages).
    pub context_tokens: u64,
    /// Tokens before the fold's record that stay byte-identical, so they stay cache hits:
    /// static prefix (system + tools) + pinned head + earlier fold records.
    pub unchanged_prefix_tokens: u64,
    /// The new fold record (the summary that replaces the folded region).
    pub new_record_tokens: u64,
    /// Everything kept after the cut: protected messages re-emitted after the record plus the
    /// live tail. Re-prefilled at miss price once, since its prefix changed.
    pub after_tokens: u64,
    /// Input of the summary call (0 for an extractive, local record). Billed at hit price: the
    /// summariser is sent the cached prefix.
    pub summary_input_tokens: u64,
    /// Output of the summary call (0 for an extractive record).
    pub summary_output_tokens: u64,
}

impl FoldCandidate {
    /// Prompt of the next call after the fold: unchanged prefix + record + after.
    pub fn folded_tokens(&self) -> u64 {
        self.unchanged_prefix_tokens
            .saturating_add(self.new_record_tokens)
            .saturating_add(self.after_tokens)
    }
}

/// Outcome of [`fold_decision`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FoldDecision {
    /// Fold now.
    pub pays: bool,
    /// One-off cost of folding, USD.
    pub one_off_usd: f64,
    /// Saving on every later call, USD (0 when the fold does not shrink the prompt).
    pub saving_per_call_usd: f64,
    /// Calls after which the fold has paid for itself (`one_off / saving`); infinite when
    /// there is no saving (serialises as `null`).
    pub break_even_calls: f64,
    /// One line, for logs and stats.
    pub reason: String,
}

/// docs/cache-model.md: fold iff saving_per_call * expected_remaining_calls > one-off
/// (re-prefill of record+after at miss price instead of hit, plus the summary call), under
/// DeepSeek's terms (no write premium, no minimum, cache alive): [`fold_decision_with`] with
/// [`CacheTerms::plain`].
pub fn fold_decision(c: &FoldCandidate, p: &Price, expected_remaining_calls: f64) -> FoldDecision {
    fold_decision_with(c, p, expected_remaining_calls, &CacheTerms::plain())
}

/// The fold rule under a provider's cache terms ([`crate::providers::terms`]).
///
/// With per-token prices `h = hit/1e6`, `m = miss/1e6`, `o = output/1e6` and the write price
/// `w = m·writePremium` (`w = m` without a premium):
/// * a later call reads a prompt of `L` tokens for `read(L) = L·h`, or `L·m` when `L` is under
///   the provider's minimum cacheable length (nothing of it is cached);
/// * saving per call = `read(context) − read(unchanged_prefix + new_record + after)`;
/// * one-off = `(new_record + after)·(w − h) + summary_input·h + summary_output·o`: the record
///   and tail would have been read at `h`; now they are written once at `w`. When the cached
///   prefix has **expired** (idle gap past the provider's lifetime) the next request writes
///   everything anyway, so the re-prefill term is 0 and only the summary call remains;
/// * pays iff saving > 0 and `saving · n > one-off`; break-even `n* = one-off / saving`.
///
/// `expected_remaining_calls` that is negative or not finite counts as 0.
pub fn fold_decision_with(
    c: &FoldCandidate,
    p: &Price,
    expected_remaining_calls: f64,
    t: &CacheTerms,
) -> FoldDecision {
    let h = p.hit.max(0.0) / 1e6;
    let m = p.miss.max(0.0) / 1e6;
    let o = p.output.max(0.0) / 1e6;
    let premium = if t.write_premium.is_finite() {
        t.write_premium.max(1.0)
    } else {
        1.0
    };
    let w = m * premium;
    let n = if expected_remaining_calls.is_finite() {
        expected_remaining_calls.max(0.0)
    } else {
        0.0
    };
    let read = |tokens: u64| -> f64 {
        if tokens >= t.min_tokens {
            tokens as f64 * h
        } else {
            tokens as f64 * m
        }
    };
    let reprefill = c.new_record_tokens.saturating_add(c.after_tokens) as f64;
    let summary = c.summary_input_tokens as f64 * h + c.summary_output_tokens as f64 * o;
    let one_off = if t.expired {
        summary
    } else {
        reprefill * (w - h).max(0.0) + summary
    };
    let folded = c.folded_tokens();
    let shrink = c.context_tokens.saturating_sub(folded);
    let saving = if shrink == 0 {
        0.0
    } else {
        (read(c.context_tokens) - read(folded)).max(0.0)
    };
    let break_even = if saving > 0.0 {
        one_off / saving
    } else {
        f64::INFINITY
    };
    let pays = saving > 0.0 && saving * n > one_off;
    let reason = if shrink == 0 {
        format!(
            "no saving: folded prompt {folded} >= current {} tokens",
            c.context_tokens
        )
    } else if folded < t.min_tokens && c.context_tokens >= t.min_tokens {
        format!(
            "no saving: folded prompt {folded} tokens is under the {}-token cache minimum",
            t.min_tokens
        )
    } else if saving <= 0.0 {
        format!("no saving: cached tokens are free under price {}", p.key)
    } else {
        format!(
            "{}: saves {saving:.6} usd/call over {n:.1} calls vs one-off {one_off:.6} usd (break-even {break_even:.1} calls, {shrink} tokens shed, price {}{}{})",
            if pays { "pays" } else { "does not pay" },
            p.key,
            if premium > 1.0 {
                format!(", write {premium}x")
            } else {
                String::new()
            },
            if t.expired {
                ", cache expired: no break cost"
            } else {
                ""
            }
        )
    };
    FoldDecision {
        pays,
        one_off_usd: one_off,
        saving_per_call_usd: saving,
        break_even_calls: break_even,
        reason,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::PriceRow;

    /// Unix ms for a UTC date and time (days-from-civil, no I/O).
    fn utc_ms(y: i64, mo: i64, d: i64, h: i64, mi: i64) -> f64 {
        let y2 = if mo <= 2 { y - 1 } else { y };
        let era = y2.div_euclid(400);
        let yoe = y2 - era * 400;
        let mp = (mo + 9) % 12;
        let doy = (153 * mp + 2) / 5 + d - 1;
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
        let days = era * 146_097 + doe - 719_468;
        ((days * 86_400 + h * 3_600 + mi * 60) * 1000) as f64
    }

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    #[test]
    fn peak_band_edges() {
        // 2026-11-23 is a Monday, 2026-11-28 a Saturday.
        assert_eq!(utc_ms(1970, 1, 1, 0, 0), 0.0);
        let mon = |h, m| utc_ms(2026, 11, 23, h, m);
        assert!(!is_peak(mon(0, 59)));
        assert!(is_peak(mon(1, 0)));
        assert!(is_peak(mon(3, 59)));
        assert!(!is_peak(mon(4, 0)));
        assert!(!is_peak(mon(5, 59)));
        assert!(is_peak(mon(6, 0)));
        assert!(is_peak(mon(9, 59)));
        assert!(!is_peak(mon(10, 0)));
        assert!(!is_peak(mon(23, 59)));
        assert!(is_peak(utc_ms(2026, 11, 27, 2, 0)), "friday peak");
        assert!(!is_peak(utc_ms(2026, 11, 28, 2, 0)), "saturday off-peak");
        assert!(!is_peak(utc_ms(2026, 11, 29, 7, 30)), "sunday off-peak");
        assert!(!is_peak(f64::NAN));
        assert!(!is_peak(-1.0), "1969-12-31 23:59 is a Wednesday night");
    }

    #[test]
    fn auto_price_by_model_and_band() {
        let cfg = Config::default();
        let peak = utc_ms(2026, 11, 23, 1, 0);
        let off = utc_ms(2026, 11, 23, 0, 59);
        let sat = utc_ms(2026, 11, 28, 8, 0);
        let p = price_for(&cfg, Some("deepseek/deepseek-flash"), peak);
        assert_eq!(
            (p.key.as_str(), p.hit, p.miss, p.output),
            ("deepseek-flash-peak", 0.006, 0.30, 1.20)
        );
        let p = price_for(&cfg, Some("deepseek-flash"), off);
        assert_eq!(
            (p.key.as_str(), p.hit, p.miss, p.output),
            ("deepseek-flash-offpeak", 0.003, 0.15, 0.60)
        );
        assert_eq!(
            price_for(&cfg, Some("deepseek-flash"), sat).key,
            "deepseek-flash-offpeak"
        );
        let p = price_for(&cfg, Some("DeepSeek-V4-Pro"), peak);
        assert_eq!(
            (p.key.as_str(), p.hit, p.miss, p.output),
            ("deepseek-v4-pro-peak", 0.044, 1.32, 3.96)
        );
        assert_eq!(price_for(&cfg, Some("deepseek-v4-pro"), sat).miss, 0.66);
        assert_eq!(
            price_for(&cfg, Some("deepseek-chat"), peak).key,
            "deepseek-flash-peak"
        );
        // Other providers: their profile's row, whatever the band.
        let p = price_for(&cfg, Some("moonshot/kimi-k2.6"), peak);
        assert_eq!((p.key.as_str(), p.hit, p.miss), ("kimi", 0.16, 0.95));
        assert_eq!(
            price_for(&cfg, Some("openai/gpt-5.5"), peak).key,
            "openai-gpt-5"
        );
        assert_eq!(
            price_for(&cfg, Some("gemini-2.5-pro"), peak).key,
            "gemini-2.5-pro"
        );
        let p = price_for(&cfg, Some("anthropic/claude-sonnet-5"), sat);
        assert_eq!(
            (p.key.as_str(), p.hit, p.miss),
            ("anthropic-sonnet", 0.30, 3.0)
        );
        // A model no profile knows keeps the generic row.
        assert_eq!(
            price_for(&cfg, Some("mistral/mistral-large"), peak).key,
            "openai-like"
        );
        assert_eq!(price_for(&cfg, None, peak).key, "deepseek-flash-peak");
    }

    #[test]
    fn named_keys_and_config_overrides() {
        let peak = utc_ms(2026, 11, 23, 7, 0);
        let mut cfg = Config {
            price: "deepseek-v4-pro-offpeak".into(),
            ..Config::default()
        };
        assert_eq!(
            price_for(&cfg, Some("deepseek-flash"), peak).key,
            "deepseek-v4-pro-offpeak"
        );
        cfg.price = "deepseek-v4-pro".into();
        assert_eq!(
            price_for(&cfg, Some("deepseek-flash"), peak).key,
            "deepseek-v4-pro-peak"
        );
        cfg.price = "no-such-key".into();
        assert_eq!(
            price_for(&cfg, Some("deepseek-flash"), peak).key,
            "deepseek-flash-peak"
        );
        // Override a built-in row and add a new one.
        cfg.price = "auto".into();
        cfg.prices.insert(
            "deepseek-flash-peak".into(),
            PriceRow {
                hit: 0.01,
                miss: 0.5,
                output: 2.0,
            },
        );
        cfg.prices.insert(
            "mine".into(),
            PriceRow {
                hit: 1.0,
                miss: 2.0,
                output: 3.0,
            },
        );
        let p = price_for(&cfg, Some("deepseek-flash"), peak);
        assert_eq!((p.hit, p.miss, p.output), (0.01, 0.5, 2.0));
        cfg.price = "mine".into();
        let p = price_for(&cfg, None, peak);
        assert_eq!(
            (p.key.as_str(), p.hit, p.miss, p.output),
            ("mine", 1.0, 2.0, 3.0)
        );
        // A profile key names its row; `prices` overrides a profile's prices, `providers` too.
        cfg.price = "anthropic-haiku".into();
        assert_eq!(price_for(&cfg, None, peak).miss, 1.0);
        cfg.price = "auto".into();
        cfg.prices.insert(
            "anthropic-sonnet".into(),
            PriceRow {
                hit: 0.2,
                miss: 2.0,
                output: 9.0,
            },
        );
        let p = price_for(&cfg, Some("claude-sonnet-5"), peak);
        assert_eq!((p.hit, p.miss, p.output), (0.2, 2.0, 9.0));
        let cfg = Config::from_json(r#"{"providers":{"glm":{"miss":0.5}}}"#).unwrap();
        assert_eq!(price_for(&cfg, Some("zai/glm-4.6"), peak).miss, 0.5);
    }

    fn terms(premium: f64, min: u64, expired: bool) -> CacheTerms {
        CacheTerms {
            write_premium: premium,
            min_tokens: min,
            expired,
            remaining_ms: None,
        }
    }

    #[test]
    fn plain_terms_are_the_deepseek_rule() {
        let p = builtin_price("deepseek-flash-peak").unwrap();
        for n in [0.0, 5.0, 11.0, 12.0, 40.0] {
            assert_eq!(
                fold_decision(&worked_example(), &p, n),
                fold_decision_with(&worked_example(), &p, n, &terms(1.0, 0, false))
            );
        }
    }

    #[test]
    fn write_premium_raises_the_one_off() {
        let p = crate::providers::builtin("anthropic-sonnet").unwrap();
        let price = Price {
            key: p.key.clone(),
            hit: p.hit,
            miss: p.miss,
            output: p.output,
        };
        let c = FoldCandidate {
            summary_input_tokens: 0,
            summary_output_tokens: 0,
            ..worked_example()
        };
        let plain = fold_decision_with(&c, &price, 1.0, &terms(1.0, 0, false));
        let five = fold_decision_with(&c, &price, 1.0, &terms(1.25, 0, false));
        let hour = fold_decision_with(&c, &price, 1.0, &terms(2.0, 0, false));
        // 25K re-written at 3.75 (5 min) or 6.00 (1 h) instead of read at 0.30.
        assert!(close(plain.one_off_usd, 25_000.0 * 2.70 / 1e6, 1e-12));
        assert!(close(five.one_off_usd, 25_000.0 * 3.45 / 1e6, 1e-12));
        assert!(close(hour.one_off_usd, 25_000.0 * 5.70 / 1e6, 1e-12));
        assert_eq!(five.saving_per_call_usd, plain.saving_per_call_usd);
        // n* = 25K·3.45 / (175K·0.30) ≈ 1.64 calls (5 min), 2.71 (1 h).
        assert!(!fold_decision_with(&c, &price, 1.6, &terms(1.25, 0, false)).pays);
        assert!(fold_decision_with(&c, &price, 1.7, &terms(1.25, 0, false)).pays);
        assert!(!fold_decision_with(&c, &price, 2.7, &terms(2.0, 0, false)).pays);
        assert!(fold_decision_with(&c, &price, 2.8, &terms(2.0, 0, false)).pays);
        assert!(five.reason.contains("write 1.25x"), "{}", five.reason);
        // A premium below 1 or not finite counts as none.
        assert_eq!(
            fold_decision_with(&c, &price, 1.0, &terms(0.5, 0, false)).one_off_usd,
            plain.one_off_usd
        );
        assert_eq!(
            fold_decision_with(&c, &price, 1.0, &terms(f64::NAN, 0, false)).one_off_usd,
            plain.one_off_usd
        );
    }

    #[test]
    fn minimum_length_blocks_a_fold_under_it() {
        let p = builtin_price("openai-like").unwrap();
        // 5,000 → 900 tokens: under OpenAI's 1,024 minimum nothing of the folded prompt is cached,
        // so every later call pays 900 misses instead of 5,000 hits: no saving.
        let c = FoldCandidate {
            context_tokens: 5_000,
            unchanged_prefix_tokens: 300,
            new_record_tokens: 100,
            after_tokens: 500,
            ..FoldCandidate::default()
        };
        let d = fold_decision_with(&c, &p, 1e6, &terms(1.0, 1_024, false));
        assert!(!d.pays && d.saving_per_call_usd == 0.0, "{d:?}");
        assert!(
            d.reason.contains("1024-token cache minimum"),
            "{}",
            d.reason
        );
        // Without the minimum the same fold pays.
        assert!(fold_decision_with(&c, &p, 1e6, &terms(1.0, 0, false)).pays);
        // A prompt that was under the minimum too: misses both ways, the saving is the shrink
        // at miss price.
        let small = FoldCandidate {
            context_tokens: 1_000,
            ..c
        };
        let d = fold_decision_with(&small, &p, 1.0, &terms(1.0, 1_024, false));
        assert!(
            close(d.saving_per_call_usd, 100.0 * 1.25 / 1e6, 1e-12),
            "{d:?}"
        );
    }

    #[test]
    fn expired_cache_has_no_break_cost() {
        let p = builtin_price("deepseek-flash-peak").unwrap();
        let c = FoldCandidate {
            summary_input_tokens: 0,
            summary_output_tokens: 0,
            ..worked_example()
        };
        // Alive: 7+ calls to pay back. Expired: pays on the next call, one-off 0.
        assert!(!fold_decision_with(&c, &p, 1.0, &terms(1.0, 0, false)).pays);
        let d = fold_decision_with(&c, &p, 1.0, &terms(1.25, 0, true));
        assert!(d.pays && d.one_off_usd == 0.0, "{d:?}");
        assert!(d.reason.contains("cache expired"), "{}", d.reason);
        // The summary call still costs what it costs.
        let d = fold_decision_with(&worked_example(), &p, 1.0, &terms(1.0, 0, true));
        assert!(close(
            d.one_off_usd,
            200_000.0 * 0.006 / 1e6 + 3_000.0 * 1.2 / 1e6,
            1e-12
        ));
        // Nothing to shed, or no calls left: never.
        assert!(!fold_decision_with(&c, &p, 0.0, &terms(1.0, 0, true)).pays);
        let none = FoldCandidate {
            context_tokens: 25_000,
            ..c
        };
        assert!(!fold_decision_with(&none, &p, 10.0, &terms(1.0, 0, true)).pays);
    }

    #[test]
    fn cost_and_blocks() {
        let p = builtin_price("deepseek-flash-peak").unwrap();
        // 100K hit + 10K miss + 1K out = 0.0006 + 0.003 + 0.0012.
        assert!(close(cost_usd(&p, 100_000, 10_000, 1_000), 0.0048, 1e-12));
        assert_eq!(cost_usd(&p, 0, 0, 0), 0.0);
        assert_eq!(floor_block(769, DS_BLOCK), 768);
        assert_eq!(floor_block(1048, DS_BLOCK), 1024);
        assert_eq!(floor_block(127, DS_BLOCK), 0);
        assert_eq!(floor_block(128, DS_BLOCK), 128);
        assert_eq!(floor_block(77, 0), 77);
        for (k, ..) in BUILTIN_PRICES {
            let p = builtin_price(k).unwrap();
            assert!(p.hit < p.miss && p.miss > 0.0, "{k}");
        }
    }

    /// The §5.6 worked example: L = 200K, L′ = 30K, static = 5K, S = 3K.
    ///
    /// Mapping: context = L = 200K; unchanged prefix = static = 5K; record + after = L′ − static
    /// = 25K (record = S = 3K, after = 22K); the summariser reads the whole cached context
    /// (summary_input = L = 200K) and writes S = 3K. Our one-off charges the re-prefill at
    /// (miss − hit) rather than miss (the doc's rounder form), which moves n* by < 2 %.
    fn worked_example() -> FoldCandidate {
        FoldCandidate {
            context_tokens: 200_000,
            unchanged_prefix_tokens: 5_000,
            new_record_tokens: 3_000,
            after_tokens: 22_000,
            summary_input_tokens: 200_000,
            summary_output_tokens: 3_000,
        }
    }

    #[test]
    fn worked_example_flash_peak() {
        let p = builtin_price("deepseek-flash-peak").unwrap();
        let d = fold_decision(&worked_example(), &p, 20.0);
        // Doc: $0.0123 once vs $0.00102 saved per call, n* ≈ 12.
        assert!(close(d.saving_per_call_usd, 0.00102, 1e-9), "{d:?}");
        assert!(close(d.one_off_usd, 0.01215, 1e-9), "{d:?}");
        assert!(close(d.one_off_usd, 0.0123, 0.0002));
        assert_eq!(d.break_even_calls.round(), 12.0, "{d:?}");
        assert!(d.pays);
        assert!(!fold_decision(&worked_example(), &p, 11.0).pays);
        assert!(fold_decision(&worked_example(), &p, 12.0).pays);
        assert!(d.reason.starts_with("pays:"), "{}", d.reason);
    }

    #[test]
    fn worked_example_v4_pro_peak() {
        let p = builtin_price("deepseek-v4-pro-peak").unwrap();
        let d = fold_decision(&worked_example(), &p, 5.0);
        // 25K·1.276 + 200K·0.044 + 3K·3.96 = 0.0319 + 0.0088 + 0.01188 per 1e6; saving 170K·0.044.
        assert!(close(d.one_off_usd, 0.05258, 1e-9), "{d:?}");
        assert!(close(d.saving_per_call_usd, 0.00748, 1e-9));
        assert_eq!(d.break_even_calls.round(), 7.0, "{d:?}");
        assert!(!d.pays);
        assert!(d.reason.starts_with("does not pay:"), "{}", d.reason);
        assert!(fold_decision(&worked_example(), &p, 8.0).pays);
    }

    #[test]
    fn offpeak_does_not_change_break_even() {
        // Off-peak halves every price, so n* is the same and only the stakes halve.
        let peak = fold_decision(
            &worked_example(),
            &builtin_price("deepseek-flash-peak").unwrap(),
            1.0,
        );
        let off = fold_decision(
            &worked_example(),
            &builtin_price("deepseek-flash-offpeak").unwrap(),
            1.0,
        );
        assert!(close(peak.break_even_calls, off.break_even_calls, 1e-9));
        assert!(close(off.one_off_usd * 2.0, peak.one_off_usd, 1e-12));
    }

    #[test]
    fn extractive_fold_is_cheaper_than_llm_fold() {
        let p = builtin_price("deepseek-flash-peak").unwrap();
        let c = FoldCandidate {
            summary_input_tokens: 0,
            summary_output_tokens: 0,
            ..worked_example()
        };
        let d = fold_decision(&c, &p, 100.0);
        assert!(close(d.one_off_usd, 25_000.0 * 0.294 / 1e6, 1e-12));
        assert!(
            d.break_even_calls < 8.0 && d.break_even_calls > 7.0,
            "{d:?}"
        );
    }

    #[test]
    fn no_saving_never_pays() {
        let p = builtin_price("deepseek-flash-peak").unwrap();
        let c = FoldCandidate {
            context_tokens: 10_000,
            unchanged_prefix_tokens: 5_000,
            new_record_tokens: 2_000,
            after_tokens: 4_000,
            ..FoldCandidate::default()
        };
        let d = fold_decision(&c, &p, 1e9);
        assert!(!d.pays);
        assert_eq!(d.saving_per_call_usd, 0.0);
        assert!(d.break_even_calls.is_infinite());
        assert!(d.reason.starts_with("no saving"), "{}", d.reason);
        let free = Price {
            key: "free".into(),
            hit: 0.0,
            miss: 1.0,
            output: 1.0,
        };
        let d = fold_decision(&worked_example(), &free, 1e9);
        assert!(!d.pays && d.reason.contains("free"));
        // Non-finite or negative call counts never fold.
        assert!(!fold_decision(&worked_example(), &p, f64::NAN).pays);
        assert!(!fold_decision(&worked_example(), &p, -5.0).pays);
        assert!(!fold_decision(&worked_example(), &p, f64::INFINITY).pays);
        // Saturating arithmetic on absurd inputs.
        let huge = FoldCandidate {
            unchanged_prefix_tokens: u64::MAX,
            new_record_tokens: u64::MAX,
            ..worked_example()
        };
        assert!(!fold_decision(&huge, &p, 100.0).pays);
    }
}
