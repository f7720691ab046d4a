//! Axis ticks on "nice" steps (1, 2 or 5 × 10^k) and their labels.

/// Ticks from a multiple of the step at or below `lo` to one at or above `hi`, on a step of
/// 1, 2 or 5 × 10^k chosen so that there are about `target` intervals (at least one).
/// `(step, ticks)`; a flat or non-finite range becomes `[lo, lo + 1]` first.
pub fn nice(lo: f64, hi: f64, target: usize) -> (f64, Vec<f64>) {
    let (lo, hi) = match (lo.is_finite(), hi.is_finite()) {
        (true, true) if hi > lo => (lo, hi),
        (true, _) => (lo, lo + 1.0),
        _ => (0.0, 1.0),
    };
    let raw = (hi - lo) / target.max(1) as f64;
    let mag = 10f64.powi(raw.log10().floor() as i32);
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw * (1.0 - 1e-9))
        .unwrap_or(10.0 * mag);
    let first = (lo / step + 1e-9).floor() as i64;
    let last = (hi / step - 1e-9).ceil() as i64;
    let ticks = (first..=last.max(first + 1))
        .map(|k| clean(k as f64 * step))
        .collect();
    (step, ticks)
}

/// Integer ticks over calls `1..=n`: every call, or the multiples of a nice integer step.
pub fn integer(n: usize, target: usize) -> Vec<usize> {
    let step = (nice(0.0, n as f64, target).0.round() as usize).max(1);
    let out: Vec<usize> = (1..=n / step).map(|k| k * step).collect();
    if out.is_empty() {
        vec![1]
    } else {
        out
    }
}

/// `v` rounded to 12 significant digits (0.1 * 3 → 0.3).
fn clean(v: f64) -> f64 {
    if v == 0.0 {
        return 0.0;
    }
    let p = 10f64.powi(11 - v.abs().log10().floor() as i32);
    (v * p).round() / p
}

/// Decimals that a tick step of 1, 2 or 5 × 10^k needs.
fn decimals(step: f64) -> usize {
    if step >= 1.0 || step <= 0.0 || !step.is_finite() {
        0
    } else {
        (-step.log10() - 1e-9).ceil() as usize
    }
}

/// What the values of an axis are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Unit {
    /// US dollars: `$0.05`, `$1.20`.
    Usd,
    /// Token counts: `50K`, `1.5M`.
    Tokens,
    /// A plain count.
    #[default]
    Count,
}

/// The label of tick `v` on an axis whose ticks are `step` apart and end at `top`.
pub fn label(v: f64, step: f64, top: f64, unit: Unit) -> String {
    match unit {
        Unit::Usd => {
            let d = match decimals(step) {
                1 => 2,
                d => d,
            };
            let s = super::fixed(v.abs(), d, true);
            format!("{}${s}", if v < 0.0 { "-" } else { "" })
        }
        Unit::Tokens | Unit::Count => {
            let m = top.abs().max(v.abs());
            let (div, suffix) = if m >= 1e6 {
                (1e6, "M")
            } else if m >= 1e4 || (unit == Unit::Tokens && m >= 1e3) {
                (1e3, "K")
            } else {
                (1.0, "")
            };
            let s = super::fixed(v / div, decimals(step / div), false);
            if s == "0" || s == "-0" {
                "0".into()
            } else {
                format!("{s}{suffix}")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_and_labels() {
        let (s, t) = nice(0.0, 99_000.0, 4);
        assert_eq!(s, 50_000.0);
        assert_eq!(t, vec![0.0, 50_000.0, 100_000.0]);
        let (s, t) = nice(0.0, 0.17, 4);
        assert_eq!(s, 0.05);
        assert_eq!(t, vec![0.0, 0.05, 0.1, 0.15, 0.2]);
        let l: Vec<String> = t.iter().map(|v| label(*v, s, 0.2, Unit::Usd)).collect();
        assert_eq!(l, ["$0.00", "$0.05", "$0.10", "$0.15", "$0.20"]);
        assert_eq!(label(1_500.0, 500.0, 3_000.0, Unit::Tokens), "1.5K");
        assert_eq!(label(100_000.0, 50_000.0, 100_000.0, Unit::Tokens), "100K");
        assert_eq!(label(2_000_000.0, 1e6, 2e6, Unit::Tokens), "2M");
        assert_eq!(label(0.0, 1e6, 2e6, Unit::Tokens), "0");
        assert_eq!(label(300.0, 100.0, 400.0, Unit::Count), "300");
        assert_eq!(label(0.002, 0.001, 0.004, Unit::Usd), "$0.002");
        assert_eq!(integer(1, 8), vec![1]);
        assert_eq!(integer(7, 8), vec![1, 2, 3, 4, 5, 6, 7]);
        assert_eq!(integer(48, 8), vec![10, 20, 30, 40]);
        assert_eq!(integer(12, 8), vec![2, 4, 6, 8, 10, 12]);
        assert_eq!(integer(3, 8), vec![1, 2, 3]);
        // Flat and non-finite ranges still give two ticks.
        assert_eq!(nice(0.0, 0.0, 4).1, vec![0.0, 0.5, 1.0]);
        assert_eq!(nice(f64::NAN, 1.0, 4).1.len(), 3);
    }
}
