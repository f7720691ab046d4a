//! Choosing S3 defaults that generalise: a sweep over cachefold configurations, the
//! cost-vs-recall chart with its Pareto front, and leave-one-session-out (LOSO) scoring.
//!
//! ## Objective
//!
//! On a set of sessions, a configuration's **cost** is its summed input cost divided by S1a's
//! on the same sessions (token-weighted: ratio of sums), its **recall** the anchor recall
//! without recovery credit (retained / needed over the same sessions). The chosen
//! configuration is the cheapest one with recall ≥ the target and no pairing violation; if
//! none qualifies, the one with the highest recall (then the cheapest). Ties go to the name.
//!
//! ## LOSO
//!
//! For each session s: choose on all sessions but s, score the choice on s. The left-out
//! aggregate sums each session's score under its own choice; the in-sample aggregate is the
//! choice made on all sessions, scored on all of them. A left-out figure close to the
//! in-sample one means the defaults do not depend on any one session.
//!
//! ## The grid
//!
//! A full factorial over the knobs is a few hundred runs; the sweep takes the three
//! profiles (savings / balanced / recall), every knob moved alone around the defaults, and a
//! few recall-leaning combinations: [`grid`] lists them. Everything here is pure: the bench
//! binary runs the jobs and hands the metrics in.

use super::run::Metrics;
use ::cachefold::config::Config;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// Peer-like strategies: the best of them is the "best peer-like row".
pub const PEERS: &[&str] = &["S2", "S2c", "S2f"];
/// Baselines every LOSO run replays besides the sweep.
pub const BASELINES: &[&str] = &["S1a", "S2", "S2c", "S2f"];
/// Name of the product defaults in the grid.
pub const DEFAULT_NAME: &str = "defaults";

/// Multiply every persist threshold and the preview size by `f`.
fn scale_persist(c: &mut Config, f: f64) {
    let s = |x: u64| ((x as f64) * f).round() as u64;
    for v in c.persist.thresholds.values_mut() {
        *v = s(*v);
    }
    c.persist.default_threshold = s(c.persist.default_threshold);
    c.persist.preview_chars = s(c.persist.preview_chars);
}

/// Profile `name` as the core resolves it for a user who sets only `profile`
/// (`config::profile`).
fn profile(name: &str) -> Config {
    let raw = serde_json::json!({ "profile": name });
    Config::from_value(&::cachefold::config::profile::apply(&raw)).expect("every profile validates")
}

/// The sweep: (name, S3 config), the product defaults first.
pub fn grid() -> Vec<(String, Config)> {
    let mut g: Vec<(String, Config)> = vec![
        (DEFAULT_NAME.into(), Config::default()),
        ("profile=savings".into(), profile("savings")),
        ("profile=recall".into(), profile("recall")),
    ];
    let mut one = |name: &str, f: &dyn Fn(&mut Config)| {
        let mut c = Config::default();
        f(&mut c);
        g.push((name.to_string(), c));
    };
    one("tail=8k", &|c| c.tail_tokens = 8_000);
    one("tail=16k", &|c| c.tail_tokens = 16_000);
    one("tail=32k", &|c| c.tail_tokens = 32_000);
    one("minFold=12k", &|c| c.min_fold_tokens = 12_000);
    one("minFold=24k", &|c| c.min_fold_tokens = 24_000);
    one("minFold=96k", &|c| c.min_fold_tokens = 96_000);
    one("record=8k", &|c| c.fold_record_budget = 8_000);
    one("record=32k", &|c| c.fold_record_budget = 32_000);
    one("compactRatio=0.6", &|c| c.compact_ratio = 0.6);
    one("compactRatio=0.9", &|c| c.compact_ratio = 0.9);
    one("persist=0.5x", &|c| scale_persist(c, 0.5));
    one("persist=2x", &|c| scale_persist(c, 2.0));
    one("persist=off", &|c| c.persist.enabled = false);
    one("remaining=20", &|c| c.expected_remaining_calls = 20);
    one("remaining=100", &|c| c.expected_remaining_calls = 100);
    one("topics=off", &|c| c.topics.enabled = false);
    one("tail=16k,record=32k", &|c| {
        c.tail_tokens = 16_000;
        c.fold_record_budget = 32_000;
    });
    one("tail=32k,record=32k", &|c| {
        c.tail_tokens = 32_000;
        c.fold_record_budget = 32_000;
    });
    one("tail=16k,persist=2x", &|c| {
        c.tail_tokens = 16_000;
        scale_persist(c, 2.0);
    });
    one("record=32k,persist=2x", &|c| {
        c.fold_record_budget = 32_000;
        scale_persist(c, 2.0);
    });
    one("tail=32k,record=64k", &|c| {
        c.tail_tokens = 32_000;
        c.fold_record_budget = 64_000;
    });
    // The earlier defaults (8K tail, 24K minimum fold), which a leave-one-session-out run
    // replaced with a short tail and fewer, later folds; and two steps from the defaults
    // towards rows on the front (a 6K tail, a 12K record budget).
    one("tail=8k,minFold=24k", &|c| {
        c.tail_tokens = 8_000;
        c.min_fold_tokens = 24_000;
    });
    one("tail=6k", &|c| c.tail_tokens = 6_000);
    one("record=12k", &|c| c.fold_record_budget = 12_000);
    g
}

/// Metrics of one LOSO run: rows → session → metrics. Rows are baseline ids (`S1a`, …) and
/// sweep names. Saved as `loso-tables.json` so the choice can be re-made without replaying.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Table {
    /// Sessions in report order.
    pub sessions: Vec<String>,
    /// Baselines: strategy id → session → metrics.
    pub baselines: BTreeMap<String, BTreeMap<String, Metrics>>,
    /// Sweep: config name → session → metrics (grid order kept in `configs`).
    pub sweep: BTreeMap<String, BTreeMap<String, Metrics>>,
    /// Sweep names in grid order.
    pub configs: Vec<String>,
}

/// Aggregate figures of one row over a set of sessions.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Score {
    /// Input cost (headline price).
    pub input_cost: f64,
    /// Input cost / S1a input cost.
    pub vs_s1a: f64,
    /// Input cost / the best peer-like row's input cost.
    pub vs_best_peer: f64,
    /// Input cost / C_min input cost.
    pub vs_floor: f64,
    /// Anchor recall without recovery credit.
    pub recall: f64,
    /// Anchor recall with recovery credit.
    pub recall_credit: f64,
    /// Input cost with the recoveries that credit assumes, / S1a input cost.
    #[serde(default)]
    pub vs_s1a_recovery: f64,
    /// Hit efficiency E = H / H_max.
    pub efficiency: f64,
    /// Requests with a pairing violation.
    pub pairing_violations: u64,
}

/// One point of the cost-vs-recall chart.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ChartPoint {
    /// Config name or baseline id.
    pub name: String,
    /// A sweep configuration (false: a baseline strategy).
    pub sweep: bool,
    /// Input cost × S1a (all sessions).
    pub cost: f64,
    /// Anchor recall without credit (all sessions).
    pub recall: f64,
    /// On the Pareto front of the sweep (lower cost, higher recall).
    pub pareto: bool,
}

/// The LOSO result for one window.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Loso {
    /// Token budget.
    pub window: u64,
    /// Recall target of the objective.
    pub recall_target: f64,
    /// The best peer-like strategy on all sessions.
    pub best_peer: String,
    /// Chosen on all sessions.
    pub in_sample_choice: String,
    /// In-sample figures.
    pub in_sample: Score,
    /// Left-out figures (each session scored under the choice made without it).
    pub left_out: Score,
    /// The product defaults on all sessions.
    pub defaults: Score,
    /// C_min on all sessions (input cost).
    pub floor_input: f64,
    /// How often each configuration was chosen with one session left out.
    pub choices: BTreeMap<String, u64>,
    /// Per session: (session, choice without it).
    pub per_session: Vec<(String, String)>,
    /// Chart points.
    pub points: Vec<ChartPoint>,
    /// Per source (the session name's first path component: pi-mono, claude-code-spotter,
    /// entireio-cli, reasonix-tau-bench): sessions, left-out and defaults figures on that
    /// source's sessions (a few long sessions dominate the token-weighted total).
    #[serde(default)]
    pub per_source: Vec<SourceScore>,
}

/// LOSO figures restricted to one source's sessions.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SourceScore {
    /// Source name.
    pub source: String,
    /// Its sessions.
    pub sessions: u64,
    /// Left-out (each session under the choice made without it).
    pub left_out: Score,
    /// The product defaults.
    pub defaults: Score,
}

/// The source of a session name (`entireio-cli/13_…jsonl` → `entireio-cli`).
pub fn source_of(session: &str) -> &str {
    session.split('/').next().unwrap_or(session)
}

fn sum(rows: &BTreeMap<String, Metrics>, sessions: &[&String]) -> Metrics {
    let mut m = Metrics::default();
    for s in sessions {
        if let Some(x) = rows.get(*s) {
            m.add(x);
        }
    }
    m
}

fn div(a: f64, b: f64) -> f64 {
    if b > 0.0 {
        a / b
    } else {
        0.0
    }
}

impl Table {
    fn base(&self, id: &str, sessions: &[&String]) -> Metrics {
        self.baselines
            .get(id)
            .map(|r| sum(r, sessions))
            .unwrap_or_default()
    }

    fn score(&self, m: &Metrics, sessions: &[&String], peer: &str) -> Score {
        let s1a = self.base("S1a", sessions);
        let p = self.base(peer, sessions);
        Score {
            input_cost: m.cost.headline_input,
            vs_s1a: div(m.cost.headline_input, s1a.cost.headline_input),
            vs_best_peer: div(m.cost.headline_input, p.cost.headline_input),
            vs_floor: div(m.cost.headline_input, m.floor.headline_input),
            recall: m.recall(),
            recall_credit: m.recall_credit(),
            vs_s1a_recovery: div(m.input_with_recovery(), s1a.cost.headline_input),
            efficiency: m.efficiency(),
            pairing_violations: m.pairing_violation_calls,
        }
    }

    /// The objective's choice on `sessions` (see the module doc).
    pub fn choose(&self, sessions: &[&String], recall_target: f64) -> Option<String> {
        let s1a = self.base("S1a", sessions).cost.headline_input;
        let sums: Vec<(&String, Metrics)> = self
            .configs
            .iter()
            .filter_map(|n| self.sweep.get(n).map(|r| (n, sum(r, sessions))))
            .collect();
        let least_violations = sums
            .iter()
            .map(|(_, m)| m.pairing_violation_calls)
            .min()
            .unwrap_or(0);
        let mut best: Option<(bool, f64, f64, &String)> = None;
        for (name, m) in sums {
            let cost = div(m.cost.headline_input, s1a);
            let recall = m.recall();
            let ok = recall >= recall_target && m.pairing_violation_calls <= least_violations;
            let better = match &best {
                None => true,
                Some((bok, bcost, brecall, _)) => match (ok, *bok) {
                    (true, false) => true,
                    (false, true) => false,
                    (true, true) => cost < *bcost,
                    (false, false) => recall > *brecall || (recall == *brecall && cost < *bcost),
                },
            };
            if better {
                best = Some((ok, cost, recall, name));
            }
        }
        best.map(|b| b.3.clone())
    }

    /// Run LOSO and build the chart points.
    pub fn loso(&self, window: u64, recall_target: f64) -> Loso {
        let all: Vec<&String> = self.sessions.iter().collect();
        let best_peer = PEERS
            .iter()
            .filter(|p| self.baselines.contains_key(**p))
            .min_by(|a, b| {
                self.base(a, &all)
                    .cost
                    .headline_input
                    .total_cmp(&self.base(b, &all).cost.headline_input)
            })
            .map_or_else(|| "S2f".to_string(), |p| p.to_string());
        let in_choice = self.choose(&all, recall_target).unwrap_or_default();
        let in_m = self
            .sweep
            .get(&in_choice)
            .map(|r| sum(r, &all))
            .unwrap_or_default();
        let mut left = Metrics::default();
        let mut choices = BTreeMap::new();
        let mut per_session = Vec::new();
        for s in &self.sessions {
            let rest: Vec<&String> = self.sessions.iter().filter(|x| *x != s).collect();
            let c = self.choose(&rest, recall_target).unwrap_or_default();
            if let Some(m) = self.sweep.get(&c).and_then(|r| r.get(s)) {
                left.add(m);
            }
            *choices.entry(c.clone()).or_insert(0) += 1;
            per_session.push((s.clone(), c));
        }
        let def_m = self
            .sweep
            .get(DEFAULT_NAME)
            .map(|r| sum(r, &all))
            .unwrap_or_default();
        let mut sources: Vec<&str> = self.sessions.iter().map(|s| source_of(s)).collect();
        sources.sort_unstable();
        sources.dedup();
        let per_source = sources
            .into_iter()
            .map(|src| {
                let ss: Vec<&String> = self
                    .sessions
                    .iter()
                    .filter(|s| source_of(s) == src)
                    .collect();
                let mut lm = Metrics::default();
                for (s, c) in &per_session {
                    if source_of(s) == src {
                        if let Some(m) = self.sweep.get(c).and_then(|r| r.get(s)) {
                            lm.add(m);
                        }
                    }
                }
                let dm = self
                    .sweep
                    .get(DEFAULT_NAME)
                    .map(|r| sum(r, &ss))
                    .unwrap_or_default();
                SourceScore {
                    source: src.to_string(),
                    sessions: ss.len() as u64,
                    left_out: self.score(&lm, &ss, &best_peer),
                    defaults: self.score(&dm, &ss, &best_peer),
                }
            })
            .collect();
        let s1a_all = self.base("S1a", &all).cost.headline_input;
        let mut points: Vec<ChartPoint> = Vec::new();
        for name in &self.configs {
            if let Some(r) = self.sweep.get(name) {
                let m = sum(r, &all);
                points.push(ChartPoint {
                    name: name.clone(),
                    sweep: true,
                    cost: div(m.cost.headline_input, s1a_all),
                    recall: m.recall(),
                    pareto: false,
                });
            }
        }
        let snapshot = points.clone();
        for p in points.iter_mut() {
            p.pareto = !snapshot.iter().any(|q| {
                q.cost <= p.cost && q.recall >= p.recall && (q.cost < p.cost || q.recall > p.recall)
            });
        }
        for b in BASELINES {
            if self.baselines.contains_key(*b) {
                let m = self.base(b, &all);
                points.push(ChartPoint {
                    name: b.to_string(),
                    sweep: false,
                    cost: div(m.cost.headline_input, s1a_all),
                    recall: m.recall(),
                    pareto: false,
                });
            }
        }
        Loso {
            window,
            recall_target,
            in_sample: self.score(&in_m, &all, &best_peer),
            left_out: self.score(&left, &all, &best_peer),
            defaults: self.score(&def_m, &all, &best_peer),
            floor_input: in_m.floor.headline_input,
            best_peer,
            in_sample_choice: in_choice,
            choices,
            per_session,
            points,
            per_source,
        }
    }
}

fn window_name(w: u64) -> String {
    if w >= 1_000_000 && w % 1_000_000 == 0 {
        format!("{}M", w / 1_000_000)
    } else if w % 1_000 == 0 {
        format!("{}K", w / 1_000)
    } else {
        w.to_string()
    }
}

/// Markdown: one table over all windows (left-out vs in-sample vs defaults), then choices.
pub fn markdown(runs: &[Loso], sessions: usize) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "## Leave-one-session-out ({sessions} sessions)");
    let _ = writeln!(s);
    let _ = writeln!(
        s,
        "Objective: cheapest input cost ×S1a with anchor recall (no recovery credit) ≥ the target and no more pairing violations than the best configuration, else highest recall. Input cost at the headline price; C_min = the input cost floor."
    );
    let _ = writeln!(s);
    let _ = writeln!(s, "| window | target R | row | config | ×S1a | ×best peer | ×C_min | R | R+recovery | ×S1a with recovery | E | pairing viol. |");
    let _ = writeln!(
        s,
        "|---|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"
    );
    for r in runs {
        let w = window_name(r.window);
        let chosen: Vec<String> = r.choices.iter().map(|(k, v)| format!("{k} ×{v}")).collect();
        for (row, cfg, sc) in [
            ("left-out", chosen.join(", "), &r.left_out),
            ("in-sample", r.in_sample_choice.clone(), &r.in_sample),
            ("defaults", DEFAULT_NAME.to_string(), &r.defaults),
        ] {
            let _ = writeln!(
                s,
                "| {w} | {:.2} | {row} | {cfg} | {:.3} | {:.3} ({}) | {:.2} | {:.3} | {:.3} | {:.3} | {:.4} | {} |",
                r.recall_target,
                sc.vs_s1a,
                sc.vs_best_peer,
                r.best_peer,
                sc.vs_floor,
                sc.recall,
                sc.recall_credit,
                sc.vs_s1a_recovery,
                sc.efficiency,
                sc.pairing_violations
            );
        }
    }
    let _ = writeln!(s);
    let _ = writeln!(
        s,
        "Per source (×S1a and ×best peer on that source's sessions; left-out / defaults):"
    );
    let _ = writeln!(s);
    let _ = writeln!(s, "| window | target R | source | sessions | left-out ×S1a | ×best peer | R | R+recovery | ×S1a with recovery | E | pairing viol. | defaults ×S1a | R |");
    let _ = writeln!(
        s,
        "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    );
    for r in runs {
        for p in &r.per_source {
            let (l, d) = (&p.left_out, &p.defaults);
            let _ = writeln!(
                s,
                "| {} | {:.2} | {} | {} | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} | {:.4} | {} | {:.3} | {:.3} |",
                window_name(r.window),
                r.recall_target,
                p.source,
                p.sessions,
                l.vs_s1a,
                l.vs_best_peer,
                l.recall,
                l.recall_credit,
                l.vs_s1a_recovery,
                l.efficiency,
                l.pairing_violations,
                d.vs_s1a,
                d.recall
            );
        }
    }
    let _ = writeln!(s);
    let mut shown = Vec::new();
    for r in runs {
        if shown.contains(&r.window) {
            continue;
        }
        shown.push(r.window);
        let _ = writeln!(
            s,
            "Sweep at {} (all sessions; * = Pareto front):",
            window_name(r.window)
        );
        let _ = writeln!(s);
        let _ = writeln!(s, "| config | ×S1a | R |");
        let _ = writeln!(s, "|---|---:|---:|");
        for p in &r.points {
            let _ = writeln!(
                s,
                "| {}{} | {:.3} | {:.3} |",
                p.name,
                if p.pareto { " *" } else { "" },
                p.cost,
                p.recall
            );
        }
        let _ = writeln!(s);
    }
    s
}

/// The cost-vs-recall chart: one panel per window, one point per configuration, the Pareto
/// front joined and labelled, baselines as squares, the defaults ringed, the recall targets
/// dashed. Drawn by the core's chart module ([`cachefold::chart::scatter_figure`]).
pub fn svg(runs: &[Loso]) -> String {
    svg_with_before(runs, &[])
}

/// [`svg`] with an earlier run's Pareto front per window drawn dashed grey ("front before"),
/// e.g. the front before a change, from its saved `loso.json`.
pub fn svg_with_before(runs: &[Loso], before: &[Loso]) -> String {
    use ::cachefold::chart::{scatter_figure, Group, Point, Scatter};
    // One panel per window (the points do not depend on the recall target).
    let mut panels: Vec<&Loso> = Vec::new();
    for r in runs {
        if !panels.iter().any(|p| p.window == r.window) {
            panels.push(r);
        }
    }
    let point = |p: &ChartPoint, label: bool| Point {
        name: p.name.clone(),
        x: p.cost,
        y: p.recall,
        label,
        ring: p.name == DEFAULT_NAME,
    };
    let charts: Vec<Scatter> = panels
        .iter()
        .map(|r| {
            let same: Vec<&Loso> = runs.iter().filter(|x| x.window == r.window).collect();
            let chosen = |n: &str| same.iter().any(|t| t.in_sample_choice == n);
            let old: Vec<&ChartPoint> = before
                .iter()
                .find(|b| b.window == r.window)
                .map(|b| b.points.iter().filter(|p| p.pareto).collect())
                .unwrap_or_default();
            // x spans the sweep, the front before and S1a (1.0); the rest sit on the edge.
            let x_max = r
                .points
                .iter()
                .filter(|p| p.sweep)
                .chain(old.iter().copied())
                .map(|p| p.cost)
                .fold(1.0, f64::max)
                + 0.05;
            let mut groups = vec![Group {
                name: "S3 configurations".into(),
                points: r
                    .points
                    .iter()
                    .filter(|p| p.sweep && !p.pareto)
                    .map(|p| point(p, p.name == DEFAULT_NAME || chosen(&p.name)))
                    .collect(),
                color: 0,
                ..Group::default()
            }];
            if !old.is_empty() {
                groups.push(Group {
                    name: "front before".into(),
                    points: old.iter().map(|p| point(p, false)).collect(),
                    color: 7,
                    joined: true,
                    dashed: true,
                    ..Group::default()
                });
            }
            groups.push(Group {
                name: "Pareto front".into(),
                points: r
                    .points
                    .iter()
                    .filter(|p| p.sweep && p.pareto)
                    .map(|p| point(p, true))
                    .collect(),
                color: 1,
                joined: true,
                ..Group::default()
            });
            groups.push(Group {
                name: "baselines".into(),
                points: r
                    .points
                    .iter()
                    .filter(|p| !p.sweep)
                    .map(|p| point(p, true))
                    .collect(),
                color: 7,
                square: true,
                ..Group::default()
            });
            Scatter {
                title: format!("window {}", window_name(r.window)),
                x_title: "input cost ×S1a (lower is better)".into(),
                y_title: "anchor recall without recovery".into(),
                groups,
                rules: same
                    .iter()
                    .map(|t| {
                        (
                            t.recall_target,
                            format!(
                                "recall target {:.2}: {}",
                                t.recall_target, t.in_sample_choice
                            ),
                        )
                    })
                    .collect(),
                x_max: Some(x_max),
                width: Some(900.0),
                height: Some(360.0),
            }
        })
        .collect();
    scatter_figure(
        "cachefold: input cost ×S1a vs anchor recall, one point per S3 configuration",
        &charts,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(input: f64, needed: u64, kept: u64, viol: u64) -> Metrics {
        let mut m = Metrics::default();
        m.cost.headline_input = input;
        m.floor.headline_input = input / 4.0;
        m.anchors_needed = needed;
        m.anchors_retained = kept;
        m.anchors_retained_credit = needed;
        m.pairing_violation_calls = viol;
        m
    }

    fn table() -> Table {
        let sessions: Vec<String> = ["a", "b", "c"].iter().map(|s| s.to_string()).collect();
        let mut t = Table {
            sessions: sessions.clone(),
            ..Table::default()
        };
        let row =
            |map: &mut BTreeMap<String, BTreeMap<String, Metrics>>, name: &str, v: [Metrics; 3]| {
                let r = map.entry(name.to_string()).or_default();
                for (s, x) in sessions.iter().zip(v) {
                    r.insert(s.clone(), x);
                }
            };
        row(
            &mut t.baselines,
            "S1a",
            [m(10.0, 10, 10, 0), m(10.0, 10, 10, 0), m(10.0, 10, 10, 0)],
        );
        row(
            &mut t.baselines,
            "S2f",
            [m(8.0, 10, 8, 0), m(8.0, 10, 8, 0), m(8.0, 10, 8, 0)],
        );
        // cheap: great on a and b, bad recall on c; safe: always fine; broken: violations.
        row(
            &mut t.sweep,
            "cheap",
            [m(3.0, 10, 10, 0), m(3.0, 10, 10, 0), m(3.0, 10, 2, 0)],
        );
        row(
            &mut t.sweep,
            "safe",
            [m(5.0, 10, 10, 0), m(5.0, 10, 10, 0), m(5.0, 10, 10, 0)],
        );
        row(
            &mut t.sweep,
            "broken",
            [m(1.0, 10, 10, 1), m(1.0, 10, 10, 1), m(1.0, 10, 10, 1)],
        );
        row(
            &mut t.sweep,
            DEFAULT_NAME,
            [m(6.0, 10, 9, 0), m(6.0, 10, 9, 0), m(6.0, 10, 9, 0)],
        );
        t.configs = vec![
            DEFAULT_NAME.into(),
            "cheap".into(),
            "safe".into(),
            "broken".into(),
        ];
        t
    }

    #[test]
    fn loso_chooses_without_the_left_out_session() {
        let t = table();
        let r = t.loso(1_000_000, 0.95);
        // On all three sessions "cheap" has recall 22/30 < 0.95, so "safe" wins in-sample.
        assert_eq!(r.in_sample_choice, "safe");
        // Leaving c out makes "cheap" look perfect: c is scored with it and pays in recall.
        assert_eq!(
            r.per_session,
            vec![
                ("a".to_string(), "safe".to_string()),
                ("b".to_string(), "safe".to_string()),
                ("c".to_string(), "cheap".to_string())
            ]
        );
        assert!((r.left_out.vs_s1a - 13.0 / 30.0).abs() < 1e-9);
        assert!((r.left_out.recall - 22.0 / 30.0).abs() < 1e-9);
        assert!((r.in_sample.vs_s1a - 0.5).abs() < 1e-9);
        assert!((r.in_sample.vs_best_peer - 15.0 / 24.0).abs() < 1e-9);
        assert!((r.in_sample.vs_floor - 4.0).abs() < 1e-9);
        assert_eq!(r.best_peer, "S2f");
        // Pareto: broken (cheapest, full recall) dominates everything else.
        let front: Vec<&str> = r
            .points
            .iter()
            .filter(|p| p.pareto)
            .map(|p| p.name.as_str())
            .collect();
        assert_eq!(front, vec!["broken"]);
        let md = markdown(std::slice::from_ref(&r), 3);
        assert!(md.contains("| 1M | 0.95 | left-out |"));
        let svg = svg(&[r]);
        assert!(svg.starts_with("<svg"), "{svg}");
        // A front of one point is not joined.
        assert!(!svg.contains("polyline"), "{svg}");
    }

    /// Sessions of two sources: each source is scored on its own sessions under the choices
    /// made without each of them, and the front of an earlier run is drawn dashed.
    #[test]
    fn per_source_figures_and_the_front_before() {
        let mut t = table();
        let rename = |m: &mut BTreeMap<String, BTreeMap<String, Metrics>>| {
            for r in m.values_mut() {
                for (from, to) in [("a", "pi/a"), ("b", "pi/b"), ("c", "cc/c")] {
                    if let Some(x) = r.remove(from) {
                        r.insert(to.to_string(), x);
                    }
                }
            }
        };
        rename(&mut t.baselines);
        rename(&mut t.sweep);
        t.sessions = vec!["pi/a".into(), "pi/b".into(), "cc/c".into()];
        let r = t.loso(1_000_000, 0.95);
        let names: Vec<(&str, u64)> = r
            .per_source
            .iter()
            .map(|p| (p.source.as_str(), p.sessions))
            .collect();
        assert_eq!(names, vec![("cc", 1), ("pi", 2)]);
        // cc/c is scored under "cheap" (chosen without it): 3 / 10 with recall 2 / 10.
        let cc = &r.per_source[0];
        assert!((cc.left_out.vs_s1a - 0.3).abs() < 1e-9);
        assert!((cc.left_out.recall - 0.2).abs() < 1e-9);
        assert!((cc.defaults.vs_s1a - 0.6).abs() < 1e-9);
        let pi = &r.per_source[1];
        assert!((pi.left_out.vs_s1a - 0.5).abs() < 1e-9);
        assert!((pi.left_out.recall - 1.0).abs() < 1e-9);
        let md = markdown(std::slice::from_ref(&r), 3);
        assert!(md.contains("| 1M | 0.95 | cc | 1 | 0.300 |"), "{md}");
        let mut before = r.clone();
        for p in before.points.iter_mut() {
            p.pareto = p.sweep;
        }
        let plain = svg(std::slice::from_ref(&r));
        assert!(!plain.contains("front before"));
        let both = svg_with_before(std::slice::from_ref(&r), std::slice::from_ref(&before));
        assert!(both.contains("front before"));
        assert!(both.contains("stroke-dasharray=\"6 4\""), "{both}");
    }

    #[test]
    fn grid_starts_with_the_defaults_and_names_are_unique() {
        let g = grid();
        assert_eq!(g.first().map(|x| x.0.as_str()), Some(DEFAULT_NAME));
        assert_eq!(g.first().map(|x| &x.1), Some(&Config::default()));
        let names: std::collections::BTreeSet<&str> = g.iter().map(|x| x.0.as_str()).collect();
        assert_eq!(names.len(), g.len());
        for (n, c) in &g {
            assert!(c.validate().is_ok(), "{n}");
        }
        // The combined rows move exactly the knobs their names say.
        let row = |name: &str| g.iter().find(|x| x.0 == name).map(|x| x.1.clone());
        let earlier = row("tail=8k,minFold=24k").expect("the earlier defaults in the grid");
        let want = Config {
            tail_tokens: 8_000,
            min_fold_tokens: 24_000,
            ..Config::default()
        };
        assert_eq!(earlier, want);
        assert_eq!(
            row("tail=32k,record=32k").map(|c| (c.tail_tokens, c.fold_record_budget)),
            Some((32_000, 32_000))
        );
        // No row repeats the defaults under another name.
        for (n, c) in &g[1..] {
            assert_ne!(c, &Config::default(), "{n} is the defaults");
        }
    }
}
