//! Report rendering: markdown tables, JSON and the SVG chart (drawn by `cachefold::chart`).
//!
//! Corpus rows are token-weighted sums over sessions ([`run::Metrics::add`]); ratios are
//! taken of sums, never averaged. Output is deterministic (no clock, no map iteration order).

use super::run::{JobResult, Metrics, Point};
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// Run-wide facts printed in every report header.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Header {
    /// Tokenizer name.
    pub tokenizer: String,
    /// Static prefix profile.
    pub prefix_profile: String,
    /// Static prefix tokens.
    pub prefix_tokens: u64,
    /// Cache model name.
    pub cache_model: String,
    /// Block size.
    pub block: u64,
    /// Idle expiry (hours), if any.
    pub expiry_hours: Option<f64>,
    /// Headline price key.
    pub price: String,
    /// Price rows used: key → (hit, miss, output) USD / 1M.
    pub prices: BTreeMap<String, (f64, f64, f64)>,
    /// Token budget given to strategies.
    pub window: u64,
    /// Static prefix warm at each session start.
    pub warm_static: bool,
    /// Sessions replayed.
    pub sessions: Vec<SessionInfo>,
}

/// One replayed session.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionInfo {
    /// Name.
    pub name: String,
    /// Reader format.
    pub format: String,
    /// Messages replayed.
    pub messages: u64,
    /// Calls replayed.
    pub calls: u64,
    /// Compactions recorded in the source (not replayed).
    pub recorded_compactions: u64,
    /// Lines the reader skipped.
    pub skipped_lines: u64,
    /// Recorded provider usage (prompt, cached, output), for reference.
    pub recorded: (u64, u64, u64),
}

/// Totals of one strategy.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StrategyTotal {
    /// Id.
    pub strategy: String,
    /// Label.
    pub label: String,
    /// Summed metrics.
    pub metrics: Metrics,
    /// Derived ratios.
    pub derived: Derived,
}

/// Ratios computed from the sums.
#[derive(Debug, Clone, Serialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct Derived {
    /// H.
    pub hit_rate: f64,
    /// H_max.
    pub ceiling_rate: f64,
    /// E.
    pub efficiency: f64,
    /// R.
    pub recall: f64,
    /// R with credit.
    pub recall_credit: f64,
    /// R, anchors ≥ 50 calls old.
    pub recall_old: f64,
    /// Headline cost / S1a headline cost.
    pub cost_vs_s1a: f64,
    /// Headline cost / S0 headline cost.
    pub cost_vs_s0: f64,
    /// Input cost / S1a input cost.
    pub input_vs_s1a: f64,
    /// Input cost / S0 input cost.
    pub input_vs_s0: f64,
    /// Input cost with the recoveries `R + recovery` assumes / S1a input cost.
    pub input_recovery_vs_s1a: f64,
    /// Input cost / the cost floor's input cost (C_min, [`Metrics::floor`]): the distance
    /// from what no strategy can beat.
    pub input_vs_floor: f64,
    /// Reprocessed tokens.
    pub reprocessed: u64,
    /// Mean context.
    pub mean_context: f64,
}

/// The whole report.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    /// Header.
    pub header: Header,
    /// Corpus totals per strategy (report order).
    pub totals: Vec<StrategyTotal>,
    /// Per (session, strategy).
    pub jobs: Vec<JobResult>,
}

fn derive(m: &Metrics, s0: Option<&Metrics>, s1a: Option<&Metrics>) -> Derived {
    let r = |a: f64, b: Option<f64>| match b {
        Some(b) if b > 0.0 => a / b,
        _ => 0.0,
    };
    Derived {
        hit_rate: m.hit_rate(),
        ceiling_rate: m.ceiling_rate(),
        efficiency: m.efficiency(),
        recall: m.recall(),
        recall_credit: m.recall_credit(),
        recall_old: m.recall_old(),
        cost_vs_s1a: r(m.cost.headline, s1a.map(|x| x.cost.headline)),
        cost_vs_s0: r(m.cost.headline, s0.map(|x| x.cost.headline)),
        input_vs_s1a: r(m.cost.headline_input, s1a.map(|x| x.cost.headline_input)),
        input_vs_s0: r(m.cost.headline_input, s0.map(|x| x.cost.headline_input)),
        input_recovery_vs_s1a: r(m.input_with_recovery(), s1a.map(|x| x.cost.headline_input)),
        input_vs_floor: r(m.cost.headline_input, Some(m.floor.headline_input)),
        reprocessed: m.reprocessed(),
        mean_context: m.mean_context(),
    }
}

/// Build the report from job results (jobs in any order; output order is fixed).
pub fn build(header: Header, mut jobs: Vec<JobResult>, order: &[&str]) -> Report {
    let pos = |s: &str| order.iter().position(|o| *o == s).unwrap_or(usize::MAX);
    let session_pos: BTreeMap<String, usize> = header
        .sessions
        .iter()
        .enumerate()
        .map(|(i, s)| (s.name.clone(), i))
        .collect();
    jobs.sort_by(|a, b| {
        (
            session_pos.get(&a.session).copied().unwrap_or(usize::MAX),
            pos(&a.strategy),
        )
            .cmp(&(
                session_pos.get(&b.session).copied().unwrap_or(usize::MAX),
                pos(&b.strategy),
            ))
    });
    let mut sums: BTreeMap<usize, (String, String, Metrics)> = BTreeMap::new();
    for j in &jobs {
        let e = sums
            .entry(pos(&j.strategy))
            .or_insert_with(|| (j.strategy.clone(), j.label.clone(), Metrics::default()));
        e.2.add(&j.metrics);
    }
    let find = |id: &str| {
        sums.values()
            .find(|(s, _, _)| s == id)
            .map(|(_, _, m)| m.clone())
    };
    let s0 = find("S0");
    let s1a = find("S1a");
    let totals = sums
        .into_values()
        .map(|(strategy, label, metrics)| {
            let derived = derive(&metrics, s0.as_ref(), s1a.as_ref());
            StrategyTotal {
                strategy,
                label,
                metrics,
                derived,
            }
        })
        .collect();
    Report {
        header,
        totals,
        jobs,
    }
}

fn mtok(n: u64) -> String {
    format!("{:.2}", n as f64 / 1e6)
}

fn pct(x: f64) -> String {
    format!("{:.1} %", x * 100.0)
}

fn usd(x: f64) -> String {
    if x >= 100.0 {
        format!("${x:.0}")
    } else if x >= 1.0 {
        format!("${x:.2}")
    } else {
        format!("${x:.4}")
    }
}

fn ktok(n: f64) -> String {
    format!("{:.1}K", n / 1e3)
}

/// Markdown report.
pub fn markdown(r: &Report) -> String {
    let h = &r.header;
    let mut s = String::new();
    let _ = writeln!(s, "## cachefold-bench");
    let _ = writeln!(s);
    let calls: u64 = h.sessions.iter().map(|x| x.calls).sum();
    let _ = writeln!(
        s,
        "{} session(s), {} calls · tokenizer `{}` · static prefix `{}` = {} tokens ({}) · cache `{}` B={}{} · window {} · headline price `{}`",
        h.sessions.len(),
        calls,
        h.tokenizer,
        h.prefix_profile,
        h.prefix_tokens,
        if h.warm_static { "warm: cached by earlier sessions" } else { "cold start" },
        h.cache_model,
        h.block,
        h.expiry_hours.map(|x| format!(", idle expiry {x} h")).unwrap_or_default(),
        h.window,
        h.price
    );
    let _ = writeln!(s);
    let prices: Vec<String> = h
        .prices
        .iter()
        .map(|(k, (a, b, c))| format!("`{k}` {a}/{b}/{c}"))
        .collect();
    let _ = writeln!(
        s,
        "Prices (USD per 1M hit/miss/output): {}",
        prices.join(" · ")
    );
    let _ = writeln!(s);
    let _ = writeln!(s, "| strategy | T (M tok) | Σmiss (M) | H | H_max | E | cost | input cost | C_min (input) | ×C_min (input) | ×S1a (input) | ×S0 (input) | ×S1a (total) | peak ctx | mean ctx | R | R+recovery | ×S1a (input) with recovery (recoveries) | overflow | pairing viol. |");
    let _ = writeln!(
        s,
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    );
    for t in &r.totals {
        let m = &t.metrics;
        let d = &t.derived;
        let _ = writeln!(
            s,
            "| {} {} | {} | {} | {} | {} | {:.4} | {} | {} | {} | {:.2} | {:.3} | {:.3} | {:.3} | {} | {} | {:.3} | {:.3} | {:.3} ({}) | {} | {} |",
            t.strategy,
            t.label,
            mtok(m.prompt_tokens + m.extra_prompt_tokens),
            mtok(m.all_miss()),
            pct(d.hit_rate),
            pct(d.ceiling_rate),
            d.efficiency,
            usd(m.cost.headline),
            usd(m.cost.headline_input),
            usd(m.floor.headline_input),
            d.input_vs_floor,
            d.input_vs_s1a,
            d.input_vs_s0,
            d.cost_vs_s1a,
            ktok(m.peak_context as f64),
            ktok(d.mean_context),
            d.recall,
            d.recall_credit,
            d.input_recovery_vs_s1a,
            m.recoveries,
            m.overflow_calls,
            m.pairing_violation_calls
        );
    }
    let _ = writeln!(s);
    let _ = writeln!(s, "| strategy | flash peak | flash off-peak | v4-pro peak | v4-pro off-peak | reprocessed (M) | novel U (M) | remainders (M) | output (M) | summariser calls / in (M) / out (K) | folds (failed) | R ≥50 calls | p95 ctx | time-wtd ctx | counters |");
    let _ = writeln!(
        s,
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"
    );
    for t in &r.totals {
        let m = &t.metrics;
        let counters: Vec<String> = m
            .counters
            .iter()
            .filter(|(_, v)| **v > 0)
            .map(|(k, v)| format!("{k} {v}"))
            .collect();
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} / {} / {:.1} | {} ({}) | {:.3} | {} | {} | {} |",
            t.strategy,
            usd(m.cost.flash_peak),
            usd(m.cost.flash_offpeak),
            usd(m.cost.pro_peak),
            usd(m.cost.pro_offpeak),
            mtok(t.derived.reprocessed),
            mtok(m.novel_tokens + m.extra_novel_tokens),
            mtok(m.remainder_tokens),
            mtok(m.output_tokens),
            m.extra_calls,
            mtok(m.extra_prompt_tokens),
            m.extra_output_tokens as f64 / 1e3,
            m.folds,
            m.fold_failures,
            t.derived.recall_old,
            ktok(m.p95_context as f64),
            ktok(m.time_weighted_context),
            counters.join(", ")
        );
    }
    if h.sessions.len() > 1 {
        let _ = writeln!(s);
        let _ = writeln!(
            s,
            "Per session (headline cost, ×S1a on input cost; C_min = the input cost floor, S3 ×C_min on input):"
        );
        let _ = writeln!(s);
        let _ = writeln!(
            s,
            "| session | calls | S0 | S1a | S1b | S2 | S2c | S2f | S3 | C_min (input) | S3 ×C_min | S3 H / E / R |"
        );
        let _ = writeln!(
            s,
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"
        );
        for si in &h.sessions {
            let jobs: Vec<&JobResult> = r.jobs.iter().filter(|j| j.session == si.name).collect();
            let base = jobs
                .iter()
                .find(|j| j.strategy == "S1a")
                .map(|j| j.metrics.cost.headline_input)
                .unwrap_or(0.0);
            let cell = |id: &str| -> String {
                match jobs.iter().find(|j| j.strategy == id) {
                    Some(j) if base > 0.0 => format!(
                        "{} ({:.2})",
                        usd(j.metrics.cost.headline),
                        j.metrics.cost.headline_input / base
                    ),
                    Some(j) => usd(j.metrics.cost.headline),
                    None => "–".into(),
                }
            };
            let s3 = jobs
                .iter()
                .find(|j| j.strategy == "S3")
                .map(|j| {
                    format!(
                        "{} / {:.3} / {:.3}",
                        pct(j.metrics.hit_rate()),
                        j.metrics.efficiency(),
                        j.metrics.recall()
                    )
                })
                .unwrap_or_else(|| "–".into());
            let floor = jobs
                .first()
                .map(|j| j.metrics.floor.headline_input)
                .unwrap_or(0.0);
            let s3_floor = jobs
                .iter()
                .find(|j| j.strategy == "S3")
                .filter(|_| floor > 0.0)
                .map(|j| format!("{:.2}", j.metrics.cost.headline_input / floor))
                .unwrap_or_else(|| "–".into());
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
                si.name,
                si.calls,
                cell("S0"),
                cell("S1a"),
                cell("S1b"),
                cell("S2"),
                cell("S2c"),
                cell("S2f"),
                cell("S3"),
                usd(floor),
                s3_floor,
                s3
            );
        }
    }
    s
}

/// JSON report (pretty, deterministic).
pub fn json(r: &Report) -> String {
    serde_json::to_string_pretty(r).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"))
}

/// The strategy a chart is about: drawn last, solid and wider (`cachefold::chart`).
const HEADLINE: &str = "S3";

/// SVG: cumulative cost (top) and context size (bottom) per model call, one line per strategy,
/// drawn by the core's chart module (the report page and `report` draw there too). Several
/// sessions are drawn one after another with their boundaries marked; a strategy with no job
/// for a session leaves a gap there.
pub fn svg(r: &Report) -> String {
    use ::cachefold::chart::{figure, Chart, Mark, MarkKind, Series, Unit};
    let job = |session: &str, strategy: &str| {
        r.jobs
            .iter()
            .find(|j| j.session == session && j.strategy == strategy)
    };
    let lens: Vec<usize> = r
        .header
        .sessions
        .iter()
        .map(|si| {
            r.totals
                .iter()
                .filter_map(|t| job(&si.name, &t.strategy).map(|j| j.series.len()))
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut cost = Vec::new();
    let mut context = Vec::new();
    for t in &r.totals {
        let (mut c, mut x, mut acc, mut total) = (Vec::new(), Vec::new(), 0.0, 0.0);
        for (si, len) in r.header.sessions.iter().zip(&lens) {
            let pts: &[Point] = job(&si.name, &t.strategy).map_or(&[], |j| &j.series[..]);
            for k in 0..*len {
                match pts.get(k) {
                    Some(p) => {
                        acc += p.cost;
                        total += p.cost;
                        c.push(acc);
                        x.push(p.context as f64);
                    }
                    None => {
                        c.push(f64::NAN);
                        x.push(f64::NAN);
                    }
                }
            }
        }
        let line = |name: String, values: Vec<f64>| Series {
            name,
            values,
            headline: t.strategy == HEADLINE,
            ..Series::default()
        };
        cost.push(line(format!("{} {}", t.strategy, usd(total)), c));
        context.push(line(t.strategy.clone(), x));
    }
    let mut marks = Vec::new();
    let mut at = 0usize;
    for (si, len) in r
        .header
        .sessions
        .iter()
        .zip(&lens)
        .take(lens.len().saturating_sub(1))
    {
        at += len;
        marks.push(Mark {
            kind: MarkKind::Session,
            at: at as f64 + 0.5,
            label: String::new(),
            detail: format!("end of session {}", si.name),
        });
    }
    let x_title = match r.header.sessions.as_slice() {
        [one] => format!("model call (session {})", one.name),
        many => format!(
            "model call ({} sessions one after another, dashed lines between them)",
            many.len()
        ),
    };
    let panel = |title: &str, y_title: &str, y_unit, lines, no_legend| Chart {
        title: title.into(),
        x_title: x_title.clone(),
        y_title: y_title.into(),
        y_unit,
        lines,
        marks: marks.clone(),
        width: Some(960.0),
        height: Some(320.0),
        no_legend,
        ..Chart::default()
    };
    let title = format!(
        "cachefold-bench: {} calls, price {}, cache {}, tokenizer {}",
        r.header.sessions.iter().map(|x| x.calls).sum::<u64>(),
        r.header.price,
        r.header.cache_model,
        r.header.tokenizer
    );
    figure(
        &title,
        &[
            panel("cumulative cost", "USD, cumulative", Unit::Usd, cost, false),
            panel("context size", "prompt tokens", Unit::Tokens, context, true),
        ],
    )
}

#[cfg(test)]
mod svg_tests {
    use super::*;

    fn report(sessions: &[(&str, usize)]) -> Report {
        let header = Header {
            tokenizer: "o200k".into(),
            prefix_profile: "openclaw".into(),
            prefix_tokens: 0,
            cache_model: "deepseek".into(),
            block: 64,
            expiry_hours: None,
            price: "v4".into(),
            prices: BTreeMap::new(),
            window: 128_000,
            warm_static: false,
            sessions: sessions
                .iter()
                .map(|(name, calls)| SessionInfo {
                    name: (*name).into(),
                    format: "openclaw".into(),
                    messages: 0,
                    calls: *calls as u64,
                    recorded_compactions: 0,
                    skipped_lines: 0,
                    recorded: (0, 0, 0),
                })
                .collect(),
        };
        let mut jobs = Vec::new();
        for (name, calls) in sessions {
            for (strategy, k) in [("S1a", 2.0), ("S3", 1.0), ("S3o", 1.0)] {
                jobs.push(JobResult {
                    session: (*name).into(),
                    strategy: strategy.into(),
                    label: strategy.into(),
                    metrics: Metrics::default(),
                    series: (0..*calls)
                        .map(|i| Point {
                            context: 1_000 * (i as u64 + 1),
                            hit: 0,
                            cost: 0.004 * k,
                        })
                        .collect(),
                });
            }
        }
        build(header, jobs, &["S1a", "S3", "S3o"])
    }

    #[test]
    fn the_headline_stays_visible_and_axes_are_nice() {
        let s = svg(&report(&[("demo", 43)]));
        // S3o equals S3: S3 (the headline) is drawn after it; S3o gets markers and a note.
        let at = |name: &str| s.find(&format!("data-series=\"{name}")).unwrap();
        assert!(at("S3o") < at("S3 ") && at("S1a") < at("S3 "));
        assert!(
            s.contains("S3o $0.1720 (under S3 $0.1720: same values)"),
            "{s}"
        );
        assert!(s.contains("<circle class=\"cf-o"));
        // y ticks on 1-2-5 steps (S1a ends at $0.344: $0.10 steps up to $0.40; 43K: 20K
        // steps up to 60K); x ticks.
        assert!(s.contains(">$0.40<") && s.contains(">$0.10<") && !s.contains(">$0.34<"));
        assert!(s.contains(">40K<") && s.contains(">60K<"));
        assert!(s.contains("cf-xtick\" x=") && s.contains(">40</text>"));
        assert!(s.contains("model call (session demo)"));
        assert!(!s.contains("sessions concatenated"));
        assert!(s.contains("prefers-color-scheme:dark"));
        // Two sessions: one boundary mark, an axis title that says so.
        let two = svg(&report(&[("a", 5), ("b", 7)]));
        assert_eq!(
            two.matches("cf-mark cf-mark-session").count(),
            2,
            "one per panel"
        );
        assert!(
            two.contains("model call (2 sessions one after another, dashed lines between them)")
        );
    }
}
