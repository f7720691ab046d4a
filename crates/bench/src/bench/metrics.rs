//! What one replayed (session, strategy) job measures: per-call points, the session's metrics
//! (hits, misses, costs under each price row, recall, pairing) and the price lookups.

use super::cache::Params;
use ::cachefold::cost::{self, Price};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Bench-wide options.
#[derive(Debug, Clone)]
pub struct Options {
    /// Context window / token budget given to strategies.
    pub window: u64,
    /// Cache model.
    pub cache: Params,
    /// Headline price key; a `-auto` suffix (e.g. `deepseek-flash-auto`) picks peak/off-peak
    /// per call from its timestamp.
    pub price: String,
    /// Warm start: the static prefix (and the summariser's) is already cached by earlier
    /// sessions of the same account, as it is on any install that has run before
    /// (docs/cache-model.md). `false` = every session starts cold.
    pub warm_static: bool,
    /// A price row used instead of `price` (`--loso --provider`: the profile's read and miss
    /// prices, the miss price times its write premium).
    pub price_row: Option<Price>,
}

/// Costs under the fixed price rows, plus the headline.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Costs {
    /// Headline price (per `Options.price`).
    pub headline: f64,
    /// deepseek-flash peak.
    pub flash_peak: f64,
    /// deepseek-flash off-peak.
    pub flash_offpeak: f64,
    /// deepseek-v4-pro peak.
    pub pro_peak: f64,
    /// deepseek-v4-pro off-peak.
    pub pro_offpeak: f64,
    /// Headline, input only (hit + miss), no output.
    pub headline_input: f64,
}

impl Costs {
    pub(super) fn add(&mut self, o: &Costs) {
        self.headline += o.headline;
        self.flash_peak += o.flash_peak;
        self.flash_offpeak += o.flash_offpeak;
        self.pro_peak += o.pro_peak;
        self.pro_offpeak += o.pro_offpeak;
        self.headline_input += o.headline_input;
    }
}

/// Metrics of one strategy on one session (or summed over sessions).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Metrics {
    /// Main calls replayed.
    pub calls: u64,
    /// Σ|X| over main calls.
    pub prompt_tokens: u64,
    /// Σ hit over main calls.
    pub hit_tokens: u64,
    /// Σ miss over main calls.
    pub miss_tokens: u64,
    /// Σ ceiling over main calls.
    pub ceiling_tokens: u64,
    /// Σ novel (U) over main calls.
    pub novel_tokens: u64,
    /// Σ sub-block remainders over main calls.
    pub remainder_tokens: u64,
    /// Σ|Y| of main calls (recorded outputs).
    pub output_tokens: u64,
    /// Summariser calls.
    pub extra_calls: u64,
    /// Σ|X| of summariser calls.
    pub extra_prompt_tokens: u64,
    /// Σ hit of summariser calls.
    pub extra_hit_tokens: u64,
    /// Σ|Y| of summariser calls.
    pub extra_output_tokens: u64,
    /// Σ ceiling of summariser calls.
    pub extra_ceiling_tokens: u64,
    /// Σ novel of summariser calls.
    pub extra_novel_tokens: u64,
    /// Costs (main + summariser).
    pub cost: Costs,
    /// The session's cost floor C_min (strategy-independent, docs/cache-model.md): every
    /// call reads the static prefix at hit price (miss on a cold first call), every user
    /// message and tool result is sent once at miss price when it first appears, nothing is
    /// ever re-read, and outputs are the recorded ones. No strategy that sends each input
    /// at least once can cost less; ingest shrinking can go below it on the novel part only.
    pub floor: Costs,
    /// max |X|.
    pub peak_context: u64,
    /// p95 of |X| (per session; for totals the max of sessions' p95).
    pub p95_context: u64,
    /// Time-weighted mean |X| (weight = gap to the next call, capped at 5 min).
    pub time_weighted_context: f64,
    /// Needed anchor pairs.
    pub anchors_needed: u64,
    /// Retained without credit.
    pub anchors_retained: u64,
    /// Retained with recovery credit.
    pub anchors_retained_credit: u64,
    /// Recoveries the recovery credit assumes (one per original reachable only through
    /// recovery, the first time a call needs it; later needs find its text in the
    /// conversation).
    pub recoveries: u64,
    /// Tokens those recoveries bring back (one recover page each).
    pub recovered_tokens: u64,
    /// What those recoveries cost: per recovery one extra model request with the context at
    /// that point (hit and miss as simulated), its recover call as output, and the recovered
    /// tokens at miss price. `cost + recovery_cost` is the price of `R + recovery`.
    pub recovery_cost: Costs,
    /// Upper bound of the hit tokens later calls spend re-reading recovered text (each page
    /// times the calls left in its session; a fold drops it sooner). Not in `recovery_cost`.
    pub recovery_reread_tokens: u64,
    /// Needed pairs whose anchor is ≥ 50 calls old.
    pub anchors_needed_old: u64,
    /// Of those, retained without credit.
    pub anchors_retained_old: u64,
    /// Calls with |X| > window.
    pub overflow_calls: u64,
    /// Requests with at least one DeepSeek pairing violation.
    pub pairing_violation_calls: u64,
    /// Total pairing violations.
    pub pairing_violations: u64,
    /// The first few violations (`session call k: kind call_id at position`), for diagnosis.
    pub pairing_examples: Vec<String>,
    /// Folds / compactions.
    pub folds: u64,
    /// Folds whose summariser input exceeded the window.
    pub fold_failures: u64,
    /// First call's hit rate (cold start), per session; for totals Σ first hits / Σ first prompts.
    pub first_hit: u64,
    /// First call's prompt.
    pub first_prompt: u64,
    /// Median per-request hit rate (per session).
    pub median_hit_rate: f64,
    /// Strategy counters.
    pub counters: BTreeMap<String, u64>,
}

impl Metrics {
    /// Hit rate H over all requests (main + summariser).
    pub fn hit_rate(&self) -> f64 {
        ratio(
            self.hit_tokens + self.extra_hit_tokens,
            self.prompt_tokens + self.extra_prompt_tokens,
        )
    }
    /// H_max over all requests.
    pub fn ceiling_rate(&self) -> f64 {
        ratio(
            self.ceiling_tokens + self.extra_ceiling_tokens,
            self.prompt_tokens + self.extra_prompt_tokens,
        )
    }
    /// E = H / H_max.
    pub fn efficiency(&self) -> f64 {
        ratio(
            self.hit_tokens + self.extra_hit_tokens,
            self.ceiling_tokens + self.extra_ceiling_tokens,
        )
    }
    /// R without credit.
    pub fn recall(&self) -> f64 {
        share_kept(self.anchors_retained, self.anchors_needed)
    }
    /// R with recovery credit.
    pub fn recall_credit(&self) -> f64 {
        share_kept(self.anchors_retained_credit, self.anchors_needed)
    }
    /// R over anchors ≥ 50 calls old.
    pub fn recall_old(&self) -> f64 {
        share_kept(self.anchors_retained_old, self.anchors_needed_old)
    }
    /// Σ miss over all requests.
    pub fn all_miss(&self) -> u64 {
        self.miss_tokens + self.extra_prompt_tokens - self.extra_hit_tokens
    }
    /// Reprocessed tokens: Σ miss − U (main + summariser).
    pub fn reprocessed(&self) -> u64 {
        self.all_miss()
            .saturating_sub(self.novel_tokens + self.extra_novel_tokens)
    }
    /// Headline input cost with the recoveries `R + recovery` assumes.
    pub fn input_with_recovery(&self) -> f64 {
        self.cost.headline_input + self.recovery_cost.headline_input
    }
    /// Mean |X| over main calls.
    pub fn mean_context(&self) -> f64 {
        ratio(self.prompt_tokens, self.calls)
    }

    /// Add another session's metrics (token-weighted corpus totals).
    pub fn add(&mut self, o: &Metrics) {
        let w_self = self.calls as f64;
        let w_o = o.calls as f64;
        self.time_weighted_context = if w_self + w_o > 0.0 {
            (self.time_weighted_context * w_self + o.time_weighted_context * w_o) / (w_self + w_o)
        } else {
            0.0
        };
        self.median_hit_rate = if w_self + w_o > 0.0 {
            (self.median_hit_rate * w_self + o.median_hit_rate * w_o) / (w_self + w_o)
        } else {
            0.0
        };
        self.calls += o.calls;
        self.prompt_tokens += o.prompt_tokens;
        self.hit_tokens += o.hit_tokens;
        self.miss_tokens += o.miss_tokens;
        self.ceiling_tokens += o.ceiling_tokens;
        self.novel_tokens += o.novel_tokens;
        self.remainder_tokens += o.remainder_tokens;
        self.output_tokens += o.output_tokens;
        self.extra_calls += o.extra_calls;
        self.extra_prompt_tokens += o.extra_prompt_tokens;
        self.extra_hit_tokens += o.extra_hit_tokens;
        self.extra_output_tokens += o.extra_output_tokens;
        self.extra_ceiling_tokens += o.extra_ceiling_tokens;
        self.extra_novel_tokens += o.extra_novel_tokens;
        self.cost.add(&o.cost);
        self.floor.add(&o.floor);
        self.peak_context = self.peak_context.max(o.peak_context);
        self.p95_context = self.p95_context.max(o.p95_context);
        self.anchors_needed += o.anchors_needed;
        self.anchors_retained += o.anchors_retained;
        self.anchors_retained_credit += o.anchors_retained_credit;
        self.recoveries += o.recoveries;
        self.recovered_tokens += o.recovered_tokens;
        self.recovery_reread_tokens += o.recovery_reread_tokens;
        self.recovery_cost.add(&o.recovery_cost);
        self.anchors_needed_old += o.anchors_needed_old;
        self.anchors_retained_old += o.anchors_retained_old;
        self.overflow_calls += o.overflow_calls;
        self.pairing_violation_calls += o.pairing_violation_calls;
        self.pairing_violations += o.pairing_violations;
        for e in &o.pairing_examples {
            if self.pairing_examples.len() < 5 {
                self.pairing_examples.push(e.clone());
            }
        }
        self.folds += o.folds;
        self.fold_failures += o.fold_failures;
        self.first_hit += o.first_hit;
        self.first_prompt += o.first_prompt;
        for (k, v) in &o.counters {
            *self.counters.entry(k.clone()).or_insert(0) += v;
        }
    }
}

/// `a / b`, 0 when `b` is 0.
pub fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

/// One call's numbers for charts.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Point {
    /// |X| of the main call.
    pub context: u64,
    /// Hit tokens of the main call.
    pub hit: u64,
    /// Headline cost of this call including its summariser calls.
    pub cost: f64,
}

/// Result of one (session, strategy) job.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct JobResult {
    /// Session name.
    pub session: String,
    /// Strategy id.
    pub strategy: String,
    /// Strategy label.
    pub label: String,
    /// Metrics.
    pub metrics: Metrics,
    /// Per-call series.
    pub series: Vec<Point>,
}

fn price_at(opts: &Options, ts: f64) -> Price {
    if let Some(p) = &opts.price_row {
        return p.clone();
    }
    let key = match opts.price.strip_suffix("-auto") {
        Some(base) => format!(
            "{base}-{}",
            if cost::is_peak(ts) { "peak" } else { "offpeak" }
        ),
        None => opts.price.clone(),
    };
    cost::builtin_price(&key).unwrap_or(Price {
        key,
        hit: 0.0,
        miss: 0.0,
        output: 0.0,
    })
}

/// Whether a price key is known (with or without `-auto`).
pub fn price_known(key: &str) -> bool {
    match key.strip_suffix("-auto") {
        Some(base) => cost::builtin_price(&format!("{base}-peak")).is_some(),
        None => cost::builtin_price(key).is_some(),
    }
}

/// Costs of one request (hit, miss, output tokens) at time `ts` under the headline price and the four DeepSeek rows.
pub fn call_costs(opts: &Options, ts: f64, hit: u64, miss: u64, out: u64) -> Costs {
    let row = |k: &str| cost::builtin_price(k).map_or(0.0, |p| cost::cost_usd(&p, hit, miss, out));
    let p = price_at(opts, ts);
    Costs {
        headline: cost::cost_usd(&p, hit, miss, out),
        headline_input: cost::cost_usd(&p, hit, miss, 0),
        flash_peak: row("deepseek-flash-peak"),
        flash_offpeak: row("deepseek-flash-offpeak"),
        pro_peak: row("deepseek-v4-pro-peak"),
        pro_offpeak: row("deepseek-v4-pro-offpeak"),
    }
}

/// Share of `needed` anchors that were `kept`; 1 when none was needed.
fn share_kept(kept: u64, needed: u64) -> f64 {
    if needed == 0 {
        1.0
    } else {
        ratio(kept, needed)
    }
}
