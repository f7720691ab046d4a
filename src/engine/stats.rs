//! Session statistics and per-call rows for `/cachefold`, `openclaw cachefold status|report`.

#[allow(unused_imports)]
use super::*;

impl Session {
    /// A tool result was shrunk to a preview plus an artifact (`tool_result_persist` or the
    /// tool-result middleware): counted in stats, listed for fold records.
    pub fn note_artifact(
        &mut self,
        artifact_id: &str,
        tool_name: &str,
        original_chars: u64,
        now_ms: f64,
    ) -> Result<()> {
        let note = ArtifactNote {
            id: artifact_id.to_string(),
            tool: tool_name.to_string(),
            chars: original_chars,
            at: if now_ms.is_finite() { now_ms } else { 0.0 },
        };
        self.emit(Event::Artifact { note })
    }

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
        let records_w: u64 = self.st.segs.iter().map(|s| s.w).sum();
        json!({
            "sessionId": self.st.session_id,
            "seq": self.st.seq,
            "model": self.st.model,
            "managed": model_managed(&self.cfg, self.st.model.as_deref()),
            "calls": t.calls,
            "promptTokens": prompt,
            "inputTokens": t.input,
            "cacheRead": t.cache_read,
            "cacheWrite": t.cache_write,
            "outputTokens": t.output,
            "predictedHits": t.predicted,
            "hitPct": pct(t.cache_read, prompt),
            "predictedHitPct": pct(t.predicted, prompt),
            "predictionErrorPct": pct(t.predicted_abs_err, prompt),
            "folds": {
                "count": c.folds,
                "priced": c.priced_folds,
                "emergency": c.emergency_folds,
                "compact": c.compact_folds,
                "tokensFolded": c.folded_tokens,
                "condensed": c.condenses,
                "segments": self.st.segs.len(),
                "recordTokens": self.tokens(records_w),
            },
            "repairs": c.repairs,
            "divergences": c.divergences,
            "lastDivergence": self.st.last_divergence,
            "repins": c.repins,
            "calibration": {
                "samples": self.st.calibration.samples(),
                "meanAbsErrorPct": round2(self.st.calibration.mean_abs_error_pct()),
                "staticTokens": self.static_tokens(),
                "trusted": self.calibrated(),
                "tokensPerWeightedChar": self.st.calibration.slope_b(),
            },
            "costUsd": round6(t.cost_usd),
            "uncachedUsd": round6(t.uncached_usd),
            "savedUsd": round6(t.uncached_usd - t.cost_usd),
            "artifacts": c.artifacts,
            "summaries": {
                "requested": c.summaries_requested,
                "ok": c.summaries_ok,
                "failed": c.summaries_failed,
                "used": c.summaries_used,
                "pending": self.st.pending_summary.is_some(),
            },
            "breaker": { "lowSavingStreak": self.st.breaker_low, "tripped": self.st.breaker_tripped() },
            "pinned": self.st.pinned,
            "headLen": self.st.head_len,
            "liveFrom": self.st.live_from,
            "recorded": self.st.records.len(),
            "quarantined": self.st.records.iter().filter(|r| r.q.is_some()).count(),
            "recentCalls": self.st.rows.len(),
        })
    }

    /// The recent per-call rows (oldest first) with their price: prompt, reported hit and miss,
    /// predicted hit, the cost and the cost of the same call with no cache hit (USD).
    pub fn call_rows(&self) -> Value {
        let rows: Vec<Value> = self
            .st
            .rows
            .iter()
            .map(|r| {
                let p = cost::price_for(&self.cfg, r.model.as_deref(), r.at);
                let prompt = r.input + r.cache_read + r.cache_write;
                json!({
                    "at": r.at,
                    "model": r.model,
                    "prompt": prompt,
                    "hit": r.cache_read,
                    "miss": r.input + r.cache_write,
                    "output": r.output,
                    "predicted": r.predicted,
                    "costUsd": round6(cost::cost_usd(&p, r.cache_read, r.input + r.cache_write, r.output)),
                    "uncachedUsd": round6(cost::cost_usd(&p, 0, prompt, r.output)),
                })
            })
            .collect();
        Value::Array(rows)
    }
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
