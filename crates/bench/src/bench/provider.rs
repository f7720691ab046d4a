//! `--provider NAME|all`: S1a, the peers and S3 priced under each provider cache profile
//! (`::cachefold::providers`).
//!
//! Per profile the replay uses the provider's cache rule and lifetime, so idle gaps in the
//! recorded timestamps expire the cache as the provider would:
//!
//! | provider | simulator |
//! |---|---|
//! | DeepSeek | the bench's `--cache` model (DS-unit strict by default, no expiry) |
//! | Moonshot (Kimi) | `kimi`: 256-token steps, exact re-send, the profile's lifetime |
//! | every other | `openai`: 1,024 minimum, 128-token steps, the profile's lifetime |
//!
//! Anthropic's explicit marks are modelled by the `openai` rule: OpenClaw marks the end of the
//! newest user message on every request (docs/host-integration.md), so each request writes
//! its whole prompt and the next one reads the longest marked prefix it shares; the 20-block
//! lookback is not modelled. Input cost = hits × read price + misses × miss price × write
//! premium (every uncached token of a marked request is written), main and summariser calls.
//!
//! S3 runs the product defaults with the profile forced (`providers.<key>.match = ["*"]`), so
//! its fold decisions use the profile's prices, write premium, minimum and lifetime.

use super::cache::{Model, Params};
use super::driver::{Driver, Progress, Settings};
use super::metrics::{JobResult, Metrics};
use super::tokenizer::Tokenizer;
use crate::replay::transcript::Transcript;
use ::cachefold::providers::{self, Profile, ProviderOverride};
use std::collections::BTreeMap;
use std::sync::Arc;

/// The profiles `--provider all` replays: one per provider family.
pub const ALL: &[&str] = &[
    "deepseek-flash",
    "anthropic-sonnet",
    "openai-gpt-5",
    "gemini-2.5-pro",
    "kimi",
    "qwen",
    "glm",
];

/// Strategies replayed per profile (S1a first: the reference).
pub const STRATEGIES: &[&str] = &["S1a", "S2", "S2c", "S2f", "S3"];

/// The profiles named by `--provider` (`all`, or comma-separated keys).
pub fn parse(arg: &str) -> Result<Vec<Profile>, String> {
    let keys: Vec<&str> = if arg == "all" {
        ALL.to_vec()
    } else {
        arg.split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .collect()
    };
    keys.iter()
        .map(|k| {
            providers::builtin(k).ok_or_else(|| {
                format!(
                    "unknown provider profile {k} (known: all, {})",
                    providers::builtin_keys().join(", ")
                )
            })
        })
        .collect()
}

/// The cache simulator of a profile (`base`: the bench's own settings, used for DeepSeek).
pub fn sim_params(p: &Profile, base: Params) -> Params {
    match p.provider.as_str() {
        "deepseek" => base,
        "moonshot" => Params {
            model: Model::Kimi,
            block: 256,
            expiry_ms: p.ttl_ms,
        },
        _ => Params {
            model: Model::OpenAi,
            block: 128,
            expiry_ms: p.ttl_ms,
        },
    }
}

/// S3's config with the profile forced for every model id.
pub fn s3_config(p: &Profile, base: &::cachefold::config::Config) -> ::cachefold::config::Config {
    let mut c = base.clone();
    c.providers.insert(
        p.key.clone(),
        ProviderOverride {
            patterns: vec!["*".into()],
            ..ProviderOverride::default()
        },
    );
    c
}

/// A profile's prices as the bench charges them: hits at its read price, misses at its miss
/// price times the write premium (a missed prefix is written to the cache).
pub fn price_row(p: &Profile) -> ::cachefold::cost::Price {
    ::cachefold::cost::Price {
        key: p.key.clone(),
        hit: p.hit,
        miss: p.miss * p.write_premium.max(1.0),
        output: p.output,
    }
}

/// Input cost of one job's metrics under a profile, USD.
pub fn input_cost(p: &Profile, m: &Metrics) -> f64 {
    let row = price_row(p);
    let hits = m.hit_tokens + m.extra_hit_tokens;
    let misses = m.miss_tokens + m.extra_prompt_tokens.saturating_sub(m.extra_hit_tokens);
    (hits as f64 * row.hit + misses as f64 * row.miss) / 1e6
}

/// One job priced: (input cost USD, hit tokens, prompt tokens, folds).
pub type Priced = (f64, u64, u64, u64);

/// One profile's results: strategy → per-session input cost and the corpus total.
#[derive(Debug, Default)]
pub struct ProviderResult {
    /// Profile key.
    pub key: String,
    /// strategy → session → (input cost, hit tokens, prompt tokens, folds).
    pub cost: BTreeMap<String, BTreeMap<String, Priced>>,
}

impl ProviderResult {
    fn add(&mut self, p: &Profile, jobs: &[JobResult]) {
        for j in jobs {
            let m = &j.metrics;
            self.cost.entry(j.strategy.clone()).or_default().insert(
                j.session.clone(),
                (
                    input_cost(p, m),
                    m.hit_tokens + m.extra_hit_tokens,
                    m.prompt_tokens + m.extra_prompt_tokens,
                    m.folds,
                ),
            );
        }
    }

    fn total(&self, s: &str, only: Option<&[String]>) -> (f64, f64) {
        let Some(v) = self.cost.get(s) else {
            return (0.0, 0.0);
        };
        let mut c = 0.0;
        let (mut hit, mut all) = (0u64, 0u64);
        for (name, (cost, h, t, _)) in v {
            if only.is_some_and(|o| !o.contains(name)) {
                continue;
            }
            c += cost;
            hit += h;
            all += t;
        }
        (
            c,
            if all > 0 {
                hit as f64 / all as f64
            } else {
                0.0
            },
        )
    }

    /// Sessions where S3 folded at least once ("long enough to fold").
    pub fn folded_sessions(&self) -> Vec<String> {
        self.cost
            .get("S3")
            .map(|v| {
                v.iter()
                    .filter(|(_, x)| x.3 > 0)
                    .map(|(k, _)| k.clone())
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Sessions where S3's input cost is above S1a's, with the worst ratio.
    pub fn above_legacy(&self) -> (usize, f64) {
        let (Some(s3), Some(s1)) = (self.cost.get("S3"), self.cost.get("S1a")) else {
            return (0, 0.0);
        };
        let mut n = 0;
        let mut worst: f64 = 0.0;
        for (k, (c3, ..)) in s3 {
            if let Some((c1, ..)) = s1.get(k) {
                if *c1 > 0.0 {
                    worst = worst.max(c3 / c1);
                }
                // A relative tolerance of 1e-9 for float noise on identical replays.
                if *c3 > c1 * (1.0 + 1e-9) {
                    n += 1;
                }
            }
        }
        (n, worst)
    }
}

/// Replay `sessions` under every profile of `profiles`. `make_tok` loads a tokenizer (one per
/// driver: each driver prepares the sessions once), `jobs` worker threads per driver.
pub fn run(
    profiles: &[Profile],
    base: &Settings,
    sessions: &[(String, Transcript)],
    make_tok: &dyn Fn() -> Tokenizer,
    jobs: usize,
) -> Result<Vec<ProviderResult>, String> {
    let mut out = Vec::new();
    // Peers do not depend on the profile's prices, only on its simulator: replay them once per
    // simulator and price them per profile.
    let mut peers: Vec<(Params, Vec<JobResult>)> = Vec::new();
    for p in profiles {
        let params = sim_params(p, base.cache);
        let cached = peers.iter().position(|(q, _)| *q == params);
        let mut strategies = vec!["S3".to_string()];
        if cached.is_none() {
            strategies.extend(
                STRATEGIES
                    .iter()
                    .filter(|s| **s != "S3")
                    .map(|s| s.to_string()),
            );
        }
        let settings = Settings {
            strategies,
            cache: params,
            s3: s3_config(p, &base.s3),
            ..base.clone()
        };
        let d = Driver::new(
            make_tok(),
            sessions,
            settings,
            Arc::new(Progress::default()),
        )
        .map_err(|e| e.to_string())?;
        std::thread::scope(|scope| {
            let workers: Vec<_> = (0..jobs.max(1)).map(|_| scope.spawn(|| d.work())).collect();
            for w in workers {
                let _ = w.join();
            }
        });
        let rep = d.report();
        let (s3, others): (Vec<JobResult>, Vec<JobResult>) =
            rep.jobs.into_iter().partition(|j| j.strategy == "S3");
        let idx = match cached {
            Some(i) => i,
            None => {
                peers.push((params, others));
                peers.len() - 1
            }
        };
        let mut r = ProviderResult {
            key: p.key.clone(),
            ..ProviderResult::default()
        };
        if let Some((_, pj)) = peers.get(idx) {
            r.add(p, pj);
        }
        r.add(p, &s3);
        out.push(r);
    }
    Ok(out)
}

/// The per-provider table (markdown).
pub fn markdown(profiles: &[Profile], results: &[ProviderResult]) -> String {
    let mut s = String::from(
        "| provider profile | read / miss / write ×, lifetime | S1a input | S2 ×S1a | S2c ×S1a | S2f ×S1a | **S3 ×S1a** | S3 H | S3 ×S1a, sessions S3 folded | sessions S3 > S1a (worst) |\n|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    for (p, r) in profiles.iter().zip(results) {
        let (c1, _) = r.total("S1a", None);
        let ratio = |st: &str| {
            let (c, _) = r.total(st, None);
            if c1 > 0.0 {
                format!("{:.3}", c / c1)
            } else {
                "-".into()
            }
        };
        let folded = r.folded_sessions();
        let (f3, _) = r.total("S3", Some(&folded));
        let (f1, _) = r.total("S1a", Some(&folded));
        let (_, h3) = r.total("S3", None);
        let (above, worst) = r.above_legacy();
        let life = match p.ttl_ms {
            Some(t) => format!("{:.0} min", t / 60_000.0),
            None => "hours-days".into(),
        };
        s.push_str(&format!(
            "| {}{} | {} / {} / {}×, {} | ${:.2} | {} | {} | {} | **{}** | {:.1} % | {} ({} sessions) | {} ({:.3}) |\n",
            p.key,
            if p.estimate { " (est.)" } else { "" },
            p.hit,
            p.miss,
            p.write_premium,
            life,
            c1,
            ratio("S2"),
            ratio("S2c"),
            ratio("S2f"),
            ratio("S3"),
            h3 * 100.0,
            if f1 > 0.0 {
                format!("{:.3}", f3 / f1)
            } else {
                "-".into()
            },
            folded.len(),
            above,
            worst
        ));
    }
    s
}

/// The per-provider figures as JSON (`--provider … --json out.json`): per profile, the corpus
/// input cost of every strategy and, per session, each strategy's input cost, hit and prompt
/// tokens, folds, and S3's ratio to S1a.
pub fn json(profiles: &[Profile], results: &[ProviderResult]) -> serde_json::Value {
    use serde_json::{json, Map, Value};
    let rows: Vec<Value> = profiles
        .iter()
        .zip(results)
        .map(|(p, r)| {
            let mut totals = Map::new();
            let mut sessions: BTreeMap<String, Map<String, Value>> = BTreeMap::new();
            for (strategy, per) in &r.cost {
                totals.insert(strategy.clone(), json!(r.total(strategy, None).0));
                for (name, (cost, hit, prompt, folds)) in per {
                    sessions.entry(name.clone()).or_default().insert(
                        strategy.clone(),
                        json!({"inputUsd": cost, "hitTokens": hit, "promptTokens": prompt, "folds": folds}),
                    );
                }
            }
            let (s1, s3) = (r.cost.get("S1a"), r.cost.get("S3"));
            for (name, m) in sessions.iter_mut() {
                let ratio = match (s1.and_then(|v| v.get(name)), s3.and_then(|v| v.get(name))) {
                    (Some(a), Some(b)) if a.0 > 0.0 => json!(b.0 / a.0),
                    _ => Value::Null,
                };
                m.insert("s3xS1a".into(), ratio);
            }
            let (above, worst) = r.above_legacy();
            json!({
                "profile": p.key,
                "totals": totals,
                "s3AboveS1a": above,
                "worstS3xS1a": worst,
                "sessions": sessions,
            })
        })
        .collect();
    json!({ "providers": rows })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn metrics(hit: u64, miss: u64, extra_prompt: u64, extra_hit: u64) -> Metrics {
        Metrics {
            hit_tokens: hit,
            miss_tokens: miss,
            prompt_tokens: hit + miss,
            extra_prompt_tokens: extra_prompt,
            extra_hit_tokens: extra_hit,
            ..Metrics::default()
        }
    }

    #[test]
    fn input_cost_applies_the_write_premium() {
        let sonnet = providers::builtin("anthropic-sonnet").unwrap();
        // 1M hits at 0.30 + 1M misses written at 3.75 + a summariser call of 1M, half hit.
        let c = input_cost(&sonnet, &metrics(1_000_000, 1_000_000, 1_000_000, 500_000));
        assert!((c - (0.30 + 3.75 + 0.15 + 1.875)).abs() < 1e-9, "{c}");
        let gpt = providers::builtin("openai-gpt-5").unwrap();
        let c = input_cost(&gpt, &metrics(1_000_000, 1_000_000, 0, 0));
        assert!((c - 1.375).abs() < 1e-9, "{c}");
    }

    #[test]
    fn profiles_and_simulators() {
        assert_eq!(parse("all").unwrap().len(), ALL.len());
        assert_eq!(parse("kimi,glm").unwrap()[1].key, "glm");
        assert!(parse("nope").unwrap_err().contains("anthropic-sonnet"));
        let base = Params::ds_strict();
        let p = |k| providers::builtin(k).unwrap();
        assert_eq!(sim_params(&p("deepseek-v4-pro"), base), base);
        let a = sim_params(&p("anthropic-sonnet"), base);
        assert_eq!((a.model, a.expiry_ms), (Model::OpenAi, Some(300_000.0)));
        assert_eq!(sim_params(&p("kimi"), base).model, Model::Kimi);
        let c = s3_config(&p("glm"), &::cachefold::config::Config::default());
        let prof = providers::profile_for(&c, Some("deepseek/deepseek-flash")).unwrap();
        assert_eq!(prof.key, "glm");
        assert_eq!(
            ::cachefold::cost::price_for(&c, Some("deepseek/deepseek-flash"), 0.0).key,
            "glm"
        );
    }

    #[test]
    fn above_legacy_counts_sessions() {
        let mut r = ProviderResult::default();
        let mut s1 = BTreeMap::new();
        s1.insert("a".to_string(), (1.0, 0, 0, 0));
        s1.insert("b".to_string(), (2.0, 0, 0, 0));
        let mut s3 = BTreeMap::new();
        s3.insert("a".to_string(), (0.5, 0, 0, 1));
        s3.insert("b".to_string(), (2.2, 0, 0, 0));
        r.cost.insert("S1a".into(), s1);
        r.cost.insert("S3".into(), s3);
        let (n, worst) = r.above_legacy();
        assert_eq!(n, 1);
        assert!((worst - 1.1).abs() < 1e-12);
        assert_eq!(r.folded_sessions(), vec!["a".to_string()]);
        let j = json(&[providers::builtin("glm").unwrap()], &[r]);
        let row = &j["providers"][0];
        assert_eq!(row["profile"], "glm");
        assert_eq!(row["s3AboveS1a"], 1);
        assert_eq!(row["sessions"]["b"]["S3"]["inputUsd"].as_f64(), Some(2.2));
        assert_eq!(row["sessions"]["a"]["S3"]["folds"], 1);
        assert!((row["sessions"]["b"]["s3xS1a"].as_f64().unwrap() - 1.1).abs() < 1e-12);
        assert_eq!(row["totals"]["S1a"].as_f64(), Some(3.0));
    }
}
