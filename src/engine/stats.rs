//! Session statistics and per-call rows for `/cachefold`, `openclaw cachefold status|report`.

use super::gate::model_managed;
use super::{state, View};
use crate::{cost, object_of};
use serde_json::Value;

impl View<'_> {
    // ---- stats ---------------------------------------------------------------------------------

    /// Session statistics (JSON object, camelCase).
    pub fn stats(&self) -> Value {
        let t = &self.st.totals;
        let c = &self.st.counters;
        let prompt = t.input + t.cache_read + t.cache_write;
        let pct = |a: u64, b: u64| {
            if b == 0 {
                0.0
            } else {
                round2(a as f64 * 100.0 / b as f64)
            }
        };
        let records_w = state::segs_w(&self.st.segs);
        object_of([
            ("sessionId", v(self.st.session_id.clone())),
            ("seq", v(self.st.seq)),
            ("model", v(self.st.model.clone())),
            (
                "managed",
                v(model_managed(self.cfg, self.st.model.as_deref())),
            ),
            ("calls", v(t.calls)),
            ("promptTokens", v(prompt)),
            ("inputTokens", v(t.input)),
            ("cacheRead", v(t.cache_read)),
            ("cacheWrite", v(t.cache_write)),
            ("outputTokens", v(t.output)),
            ("predictedHits", v(t.predicted)),
            ("hitPct", v(pct(t.cache_read, prompt))),
            ("predictedHitPct", v(pct(t.predicted, prompt))),
            ("predictionErrorPct", v(pct(t.predicted_abs_err, prompt))),
            (
                "folds",
                object_of([
                    ("count", v(c.folds)),
                    ("priced", v(c.priced_folds)),
                    ("emergency", v(c.emergency_folds)),
                    ("compact", v(c.compact_folds)),
                    ("tokensFolded", v(c.folded_tokens)),
                    ("condensed", v(c.condenses)),
                    ("segments", v(self.st.segs.len())),
                    ("recordTokens", v(self.st.tokens(records_w))),
                ]),
            ),
            ("repairs", v(c.repairs)),
            (
                "divergences",
                serde_json::to_value(&c.divergences).unwrap_or_default(),
            ),
            (
                "lastDivergence",
                serde_json::to_value(&self.st.last_divergence).unwrap_or_default(),
            ),
            ("repins", v(c.repins)),
            (
                "calibration",
                object_of([
                    ("samples", v(self.st.calibration.samples())),
                    (
                        "meanAbsErrorPct",
                        v(round2(self.st.calibration.mean_abs_error_pct())),
                    ),
                    ("staticTokens", v(self.st.static_tokens())),
                    ("trusted", v(self.st.calibrated())),
                    ("tokensPerWeightedChar", v(self.st.calibration.slope_b())),
                ]),
            ),
            ("costUsd", v(round6(t.cost_usd))),
            ("uncachedUsd", v(round6(t.uncached_usd))),
            ("savedUsd", v(round6(t.uncached_usd - t.cost_usd))),
            ("artifacts", v(c.artifacts)),
            (
                "summaries",
                object_of([
                    ("requested", v(c.summaries_requested)),
                    ("ok", v(c.summaries_ok)),
                    ("failed", v(c.summaries_failed)),
                    ("used", v(c.summaries_used)),
                    ("pending", v(self.st.pending_summary.is_some())),
                ]),
            ),
            (
                "breaker",
                object_of([
                    ("lowSavingStreak", v(self.st.breaker_low)),
                    ("tripped", v(self.st.breaker_tripped())),
                ]),
            ),
            ("pinned", v(self.st.pinned)),
            ("headLen", v(self.st.head_len)),
            ("liveFrom", v(self.st.live_from)),
            ("recorded", v(self.st.records.len())),
            (
                "quarantined",
                v(self.st.records.iter().filter(|r| r.q.is_some()).count()),
            ),
            ("recentCalls", v(self.st.rows.len())),
        ])
    }

    /// The recent per-call rows (oldest first) with their price: prompt, reported hit and miss,
    /// predicted hit, the cost and the cost of the same call with no cache hit (USD).
    pub fn call_rows(&self) -> Value {
        let mut rows: Vec<Value> = Vec::with_capacity(self.st.rows.len());
        for r in &self.st.rows {
            let p = cost::price_for(self.cfg, r.model.as_deref(), r.at);
            let prompt = r.input + r.cache_read + r.cache_write;
            rows.push(object_of([
                ("at", v(r.at)),
                ("model", v(r.model.clone())),
                ("prompt", v(prompt)),
                ("hit", v(r.cache_read)),
                ("miss", v(r.input + r.cache_write)),
                ("output", v(r.output)),
                ("predicted", v(r.predicted)),
                (
                    "costUsd",
                    v(round6(cost::cost_usd(
                        &p,
                        r.cache_read,
                        r.input + r.cache_write,
                        r.output,
                    ))),
                ),
                (
                    "uncachedUsd",
                    v(round6(cost::cost_usd(&p, 0, prompt, r.output))),
                ),
            ]));
        }
        Value::Array(rows)
    }
}

fn v(x: impl Into<Value>) -> Value {
    x.into()
}

pub(super) fn round2(x: f64) -> f64 {
    if x.is_finite() {
        (x * 100.0).round() / 100.0
    } else {
        0.0
    }
}

pub(super) fn round6(x: f64) -> f64 {
    if x.is_finite() {
        (x * 1e6).round() / 1e6
    } else {
        0.0
    }
}
