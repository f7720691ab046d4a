//! Charts as SVG text, drawn the way a careful plotting library draws them: data in, an SVG
//! string out, no I/O. The bench's and `report`'s SVG files and the report page all draw here.
//!
//! * y ticks on 1, 2 or 5 × 10^k from 0 (or below the smallest value) to a tick at or above
//!   the largest one; x ticks on the calls (1 and multiples of a nice integer step);
//! * labels in the axis unit (`$0.05`, `50K`, `1.5M`);
//! * every series is visible: lines are drawn in order with the headline one last (solid and
//!   wider), the others dashed, each with a pattern of its own; a line that lies within one
//!   pixel of a line drawn over it gets open markers on top and a legend note naming that line;
//! * colours are CSS classes ([`css`]) with a light and a dark palette, so an SVG file follows
//!   the viewer's colour scheme and the page its theme.
//!
//! The x axis is the call index (1-based); bars stack per call, lines join one value per call.

mod scatter;
mod ticks;

pub use scatter::{scatter_figure, Group, Point, Scatter};
pub use ticks::{integer as integer_ticks, label as tick_label, nice as nice_ticks, Unit};

use serde_json::Value;
use std::fmt::Write;

/// One series: a value per call.
#[derive(Debug, Clone, Default)]
pub struct Series {
    /// Legend name.
    pub name: String,
    /// Values for calls 1..=n (a non-finite value, `null` in JSON, leaves a gap).
    pub values: Vec<f64>,
    /// The series the chart is about: drawn last, solid and wider.
    pub headline: bool,
    /// Palette entry (0..8, [`css`]); by default the series' position.
    pub color: Option<usize>,
    /// Lines: a step per call instead of a polyline through the call centres.
    pub step: bool,
    /// Bars: the `data-<key>` attribute that carries the value on each call's group.
    pub key: Option<String>,
}

/// A vertical mark between calls (a fold, a host break, a session boundary).
#[derive(Debug, Clone)]
pub struct Mark {
    /// `fold`, `break` or `session` (the class `cf-mark-<kind>`).
    pub kind: MarkKind,
    /// Position in call units: `c + 0.5` is between call c and call c+1.
    pub at: f64,
    /// Short label drawn next to the line.
    pub label: String,
    /// Tooltip text (the label when empty).
    pub detail: String,
}

/// Kind of a [`Mark`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MarkKind {
    /// A fold.
    Fold,
    /// A cache break caused by the host.
    Break,
    /// The boundary between two sessions drawn one after another.
    Session,
}

/// One chart panel.
#[derive(Debug, Clone, Default)]
pub struct Chart {
    /// Accessible title (`<title>`, `aria-label`; drawn as a heading when `standalone`).
    pub title: String,
    /// What the x axis holds.
    pub x_title: String,
    /// What the y axis holds.
    pub y_title: String,
    /// Unit of the y values.
    pub y_unit: Unit,
    /// Stacked bars, bottom first.
    pub bars: Vec<Series>,
    /// Lines.
    pub lines: Vec<Series>,
    /// Vertical marks.
    pub marks: Vec<Mark>,
    /// Width in px (default 760).
    pub width: Option<f64>,
    /// Height in px (default 260, without the legend).
    pub height: Option<f64>,
    /// A whole SVG document for a file: a heading, a background and [`css`] embedded.
    pub standalone: bool,
    /// Leave out the legend (a second panel of a [`figure`] repeats the first one's series).
    pub no_legend: bool,
}

/// The spec's JSON (`ChartSpec` in src/wasm.d.ts) read member by member from a parsed value
/// (serde_json's `Value`, which the module has anyway: derived deserializers for these types
/// would add tens of KiB to the wasm). Unknown members are ignored.
fn text(v: &Value, k: &str) -> Result<String, String> {
    match v.get(k) {
        None | Some(Value::Null) => Ok(String::new()),
        Some(Value::String(s)) => Ok(s.clone()),
        Some(_) => Err(format!("chart: {k} must be a string")),
    }
}

fn num(v: &Value, k: &str) -> Result<Option<f64>, String> {
    match v.get(k) {
        None | Some(Value::Null) => Ok(None),
        Some(x) => x
            .as_f64()
            .map(Some)
            .ok_or_else(|| format!("chart: {k} must be a number")),
    }
}

fn flag(v: &Value, k: &str) -> Result<bool, String> {
    match v.get(k) {
        None | Some(Value::Null) => Ok(false),
        Some(x) => x
            .as_bool()
            .ok_or_else(|| format!("chart: {k} must be a boolean")),
    }
}

fn list<'a>(v: &'a Value, k: &str) -> Result<&'a [Value], String> {
    match v.get(k) {
        None | Some(Value::Null) => Ok(&[]),
        Some(Value::Array(a)) => Ok(a),
        Some(_) => Err(format!("chart: {k} must be an array")),
    }
}

impl Series {
    fn from_value(v: &Value) -> Result<Series, String> {
        let values = list(v, "values")?
            .iter()
            .map(|x| match x {
                Value::Null => Ok(f64::NAN),
                x => x
                    .as_f64()
                    .ok_or("chart: values must be numbers or null".to_string()),
            })
            .collect::<Result<_, _>>()?;
        let key = text(v, "key")?;
        Ok(Series {
            name: text(v, "name")?,
            values,
            headline: flag(v, "headline")?,
            color: num(v, "color")?.map(|c| c.max(0.0) as usize),
            step: flag(v, "step")?,
            key: (!key.is_empty()).then_some(key),
        })
    }
}

impl Chart {
    /// A chart from its JSON spec (`ChartSpec`), or what is wrong with it.
    pub fn from_value(v: &Value) -> Result<Chart, String> {
        if !v.is_object() {
            return Err("chart: the spec must be an object".into());
        }
        let series = |k: &str| -> Result<Vec<Series>, String> {
            list(v, k)?.iter().map(Series::from_value).collect()
        };
        let marks = list(v, "marks")?
            .iter()
            .map(|m| {
                let kind = match text(m, "kind")?.as_str() {
                    "fold" => MarkKind::Fold,
                    "break" => MarkKind::Break,
                    "session" => MarkKind::Session,
                    k => return Err(format!("chart: unknown mark kind {k:?}")),
                };
                Ok(Mark {
                    kind,
                    at: num(m, "at")?.unwrap_or(f64::NAN),
                    label: text(m, "label")?,
                    detail: text(m, "detail")?,
                })
            })
            .collect::<Result<_, String>>()?;
        let y_unit = match text(v, "yUnit")?.as_str() {
            "usd" => Unit::Usd,
            "tokens" => Unit::Tokens,
            "count" | "" => Unit::Count,
            u => return Err(format!("chart: unknown yUnit {u:?}")),
        };
        Ok(Chart {
            title: text(v, "title")?,
            x_title: text(v, "xTitle")?,
            y_title: text(v, "yTitle")?,
            y_unit,
            bars: series("bars")?,
            lines: series("lines")?,
            marks,
            width: num(v, "width")?,
            height: num(v, "height")?,
            standalone: flag(v, "standalone")?,
            no_legend: flag(v, "noLegend")?,
        })
    }
}

/// Palette entries: light, dark.
const PALETTE: [(&str, &str); 8] = [
    ("#2563eb", "#60a5fa"),
    ("#dc2626", "#f87171"),
    ("#b45309", "#fbbf24"),
    ("#047857", "#34d399"),
    ("#7c3aed", "#a78bfa"),
    ("#0e7490", "#22d3ee"),
    ("#be185d", "#f472b6"),
    ("#374151", "#d1d5db"),
];

/// Dash patterns of lines that are not the headline, in drawing order.
const DASHES: [&str; 6] = ["6 4", "2 3", "9 3 2 3", "4 2", "1 4", "12 4"];

/// The rules of one palette, every selector prefixed with `pre` (the dark theme's scope).
fn css_rules(dark: bool, pre: &str) -> String {
    let pick = |l: &'static str, d: &'static str| if dark { d } else { l };
    let mut rules: Vec<(String, String)> = vec![
        (
            "cf-bg".into(),
            format!("fill:{}", pick("#ffffff", "#0f1115")),
        ),
        (
            "cf-axis".into(),
            format!("stroke:{}", pick("#6b7280", "#9ca3af")),
        ),
        (
            "cf-grid".into(),
            format!("stroke:{}", pick("#e5e7eb", "#2a2f3a")),
        ),
        (
            "cf-text".into(),
            format!("fill:{}", pick("#111827", "#e5e7eb")),
        ),
        (
            "cf-muted".into(),
            format!("fill:{}", pick("#4b5563", "#9ca3af")),
        ),
    ];
    for (i, (l, d)) in PALETTE.iter().enumerate() {
        let c = pick(l, d);
        rules.push((format!("cf-s{i}"), format!("stroke:{c};fill:{c}")));
        rules.push((
            format!("cf-l.cf-s{i},{pre}.cf-o.cf-s{i}"),
            "fill:none".into(),
        ));
    }
    for (k, p) in [("fold", 3), ("break", 1), ("session", 7)] {
        let c = pick(PALETTE[p].0, PALETTE[p].1);
        rules.push((format!("cf-mark-{k} line"), format!("stroke:{c}")));
        rules.push((format!("cf-mark-{k} text"), format!("fill:{c}")));
    }
    rules
        .iter()
        .map(|(sel, body)| format!("{pre}.{sel}{{{body}}}"))
        .collect()
}

/// The charts' stylesheet: the light palette, the dark one under `prefers-color-scheme: dark`
/// (unless the root says `data-theme="light"`) and under `data-theme="dark"`.
pub fn css() -> String {
    format!(
        "{}@media (prefers-color-scheme:dark){{{}}}{}",
        css_rules(false, ""),
        css_rules(true, ":root:not([data-theme=light]) "),
        css_rules(true, ":root[data-theme=dark] ")
    )
}

/// A coordinate or value for SVG text: rounded to one decimal (to `f.precision()` decimals when
/// given, at most 6), no trailing `.0`; written with integer arithmetic, which keeps the float
/// formatting machinery out of the wasm module.
#[derive(Clone, Copy)]
struct N(f64);

impl std::fmt::Display for N {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&fixed(self.0, f.precision().unwrap_or(1).min(6), false))
    }
}

/// `v` with `d` decimals (trailing zeros dropped unless `keep`), by integer arithmetic; a
/// non-finite `v` is 0.
pub(crate) fn fixed(v: f64, d: usize, keep: bool) -> String {
    let p = 10i64.pow(d as u32);
    let n = if v.is_finite() {
        (v.clamp(-1e15, 1e15) * p as f64).round() as i64
    } else {
        0
    };
    let sign = if n < 0 { "-" } else { "" };
    let n = n.unsigned_abs();
    let p = p as u64;
    if d == 0 {
        return format!("{sign}{n}");
    }
    let frac = format!("{:0d$}", n % p, d = d);
    let frac = if keep {
        frac.as_str()
    } else {
        frac.trim_end_matches('0')
    };
    if frac.is_empty() {
        format!("{sign}{}", n / p)
    } else {
        format!("{sign}{}.{frac}", n / p)
    }
}

fn esc(t: &str) -> String {
    let mut s = String::with_capacity(t.len());
    for c in t.chars() {
        match c {
            '&' => s.push_str("&amp;"),
            '<' => s.push_str("&lt;"),
            '>' => s.push_str("&gt;"),
            '"' => s.push_str("&quot;"),
            '\'' => s.push_str("&#39;"),
            c if (c as u32) < 0x20 && c != '\n' && c != '\t' => {}
            c => s.push(c),
        }
    }
    s
}

/// A class-safe key: `[a-z0-9-]`, at most 24 characters.
fn key(k: &str) -> String {
    k.chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '-')
        .take(24)
        .collect::<String>()
        .to_ascii_lowercase()
}

/// Legend geometry: rows of (x, text width) wrapped within `width`.
const LEGEND_ROW: f64 = 18.0;
const CHAR_W: f64 = 6.6;

struct Entry {
    name: String,
    swatch: String,
}

fn legend_rows(entries: &[Entry], width: f64) -> Vec<Vec<(f64, usize)>> {
    let mut rows: Vec<Vec<(f64, usize)>> = vec![Vec::new()];
    let mut x = 0.0;
    for (i, e) in entries.iter().enumerate() {
        let w = 24.0 + e.name.chars().count() as f64 * CHAR_W + 16.0;
        if x > 0.0 && x + w > width {
            rows.push(Vec::new());
            x = 0.0;
        }
        if let Some(r) = rows.last_mut() {
            r.push((x, i));
        }
        x += w;
    }
    rows
}

/// How a line is stroked: (class extra, stroke width, dash).
fn stroke(s: &Series, nth_dashed: usize) -> (f64, Option<&'static str>) {
    if s.headline {
        (2.5, None)
    } else {
        (1.6, Some(DASHES[nth_dashed % DASHES.len()]))
    }
}

fn line_attrs(color: usize, width: f64, dash: Option<&str>) -> String {
    let mut a = format!(
        "class=\"cf-l cf-s{color}\" stroke-width=\"{width}\"",
        width = N(width)
    );
    if let Some(d) = dash {
        let _ = write!(a, " stroke-dasharray=\"{d}\"");
    }
    a
}

/// The chart as an SVG element (a document of its own when `c.standalone`).
pub fn svg(c: &Chart) -> String {
    let width = c.width.unwrap_or(760.0).clamp(200.0, 4000.0);
    let (body, height) = panel(c, width, c.standalone);
    wrap(&c.title, width, height, c.standalone, &body)
}

/// Panels one above the other in one standalone SVG document under a heading.
pub fn figure(title: &str, panels: &[Chart]) -> String {
    stack(
        title,
        panels,
        |p| (&p.title, p.width),
        |p, width| panel(p, width, false),
    )
}

/// Panels one above the other under a heading, as one standalone SVG document: `meta` gives a
/// panel's title and the width it asks for, `draw` its body at the figure's width and its height.
pub(super) fn stack<T>(
    title: &str,
    panels: &[T],
    meta: impl Fn(&T) -> (&str, Option<f64>),
    draw: impl Fn(&T, f64) -> (String, f64),
) -> String {
    let width = panels
        .iter()
        .filter_map(|p| meta(p).1)
        .fold(760.0f64, f64::max)
        .min(4000.0);
    let mut body = format!(
        "<text class=\"cf-text\" x=\"12\" y=\"20\" font-size=\"14\" font-weight=\"bold\">{}</text>",
        esc(title)
    );
    let mut y = 30.0;
    for p in panels {
        let (b, h) = draw(p, width);
        let _ = write!(
            body,
            "<g transform=\"translate(0 {y})\"><title>{}</title>{b}</g>",
            esc(meta(p).0),
            y = N(y)
        );
        y += h + 8.0;
    }
    wrap(title, width, y, true, &body)
}

fn wrap(title: &str, width: f64, height: f64, standalone: bool, body: &str) -> String {
    let mut s = String::with_capacity(body.len() + 4096);
    let _ = write!(
        s,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {width} {height}\" width=\"{width}\" height=\"{height}\" role=\"img\" aria-label=\"{t}\" class=\"cf-chart\" font-size=\"12\" font-family=\"system-ui,sans-serif\">",
        t = esc(title), height = N(height), width = N(width)
    );
    if standalone {
        let _ = write!(
            s,
            "<style>:root{{color-scheme:light dark}}{}</style><rect class=\"cf-bg\" width=\"100%\" height=\"100%\"/>",
            css()
        );
    }
    let _ = write!(s, "<title>{}</title>{body}</svg>", esc(title));
    if standalone {
        s.push('\n');
    }
    s
}

/// Draws one panel; returns its body and height.
fn panel(c: &Chart, width: f64, heading: bool) -> (String, f64) {
    let n = c
        .bars
        .iter()
        .chain(&c.lines)
        .map(|s| s.values.len())
        .max()
        .unwrap_or(0);
    let fin = |v: f64| if v.is_finite() { Some(v) } else { None };
    // The y range: bar stacks and lines, and 0.
    let mut lo = 0.0f64;
    let mut hi = 0.0f64;
    for i in 0..n {
        let stack: f64 = c
            .bars
            .iter()
            .filter_map(|s| s.values.get(i).copied().and_then(fin))
            .sum();
        hi = hi.max(stack);
        for s in &c.lines {
            if let Some(v) = s.values.get(i).copied().and_then(fin) {
                hi = hi.max(v);
                lo = lo.min(v);
            }
        }
    }
    let (step, yt) = ticks::nice(lo, hi, 4);
    let (y_lo, y_hi) = (yt[0], yt[yt.len() - 1]);

    // Legend entries: bars, then lines in the caller's order.
    let nth_dash = |idx: usize| c.lines[..idx].iter().filter(|s| !s.headline).count();
    let color = |s: &Series, i: usize| s.color.unwrap_or(i) % PALETTE.len();
    let mut entries: Vec<Entry> = Vec::new();
    for (i, s) in c.bars.iter().enumerate() {
        entries.push(Entry {
            name: s.name.clone(),
            swatch: format!(
                "<rect class=\"cf-s{}\" x=\"0\" y=\"-5\" width=\"14\" height=\"10\"/>",
                color(s, i)
            ),
        });
    }
    let m_l = 66.0;
    let m_r = 16.0;
    let x0 = m_l;
    let x1 = width - m_r;
    let head = if heading { 24.0 } else { 0.0 };
    // Which lines lie under a later-drawn one (the draw order puts the headline last).
    let (mut order, headlines): (Vec<usize>, Vec<usize>) =
        (0..c.lines.len()).partition(|&i| !c.lines[i].headline);
    order.extend(headlines);
    let plot_h = c.height.unwrap_or(260.0).clamp(120.0, 2000.0) - 64.0;
    let ppu = plot_h / (y_hi - y_lo);
    let mut under: Vec<Option<usize>> = vec![None; c.lines.len()];
    for (k, &i) in order.iter().enumerate() {
        for &j in order[k + 1..].iter().rev() {
            let (a, b) = (&c.lines[i].values, &c.lines[j].values);
            let close = a.len() == b.len()
                && !a.is_empty()
                && a.iter().zip(b).all(|(p, q)| match (fin(*p), fin(*q)) {
                    (Some(p), Some(q)) => (p - q).abs() * ppu < 1.0,
                    (None, None) => true,
                    _ => false,
                });
            if close {
                under[i] = Some(j);
                break;
            }
        }
    }
    for (i, s) in c.lines.iter().enumerate() {
        let (w, dash) = stroke(s, nth_dash(i));
        let mut name = s.name.clone();
        if let Some(j) = under[i] {
            let _ = write!(name, " (under {}: same values)", c.lines[j].name);
        }
        let mut sw = format!(
            "<line {} x1=\"0\" x2=\"14\" y1=\"0\" y2=\"0\"/>",
            line_attrs(color(s, c.bars.len() + i), w, dash)
        );
        if under[i].is_some() {
            let _ = write!(
                sw,
                "<circle class=\"cf-o cf-s{}\" cx=\"7\" cy=\"0\" r=\"3\" stroke-width=\"1.5\"/>",
                color(s, c.bars.len() + i)
            );
        }
        entries.push(Entry { name, swatch: sw });
    }
    let rows = if c.no_legend {
        Vec::new()
    } else {
        legend_rows(&entries, x1 - x0)
    };
    let y1 = head + 14.0 + rows.len() as f64 * LEGEND_ROW;
    let y0 = y1 + plot_h;
    let height = y0 + 42.0;

    let xs = |x: f64| x0 + (x1 - x0) * (x - 0.5) / n.max(1) as f64;
    let ys = |v: f64| y0 - (v - y_lo) * ppu;
    let mut s = String::new();
    if heading {
        let _ = write!(
            s,
            "<text class=\"cf-text\" x=\"12\" y=\"18\" font-size=\"14\" font-weight=\"bold\">{}</text>",
            esc(&c.title)
        );
    }
    // Legend.
    for (r, row) in rows.iter().enumerate() {
        let y = head + 12.0 + r as f64 * LEGEND_ROW;
        for &(x, i) in row {
            let _ = write!(
                s,
                "<g class=\"cf-legend\" transform=\"translate({:.1} {y:.1})\">{}<text class=\"cf-text\" x=\"20\" y=\"0\" dominant-baseline=\"middle\">{}</text></g>",
                N(x0 + x),
                entries[i].swatch,
                esc(&entries[i].name), y = N(y)
    );
        }
    }
    // Grid and y ticks.
    for &t in &yt {
        let y = ys(t);
        let _ = write!(
            s,
            "<line class=\"cf-grid\" x1=\"{x0}\" x2=\"{x1}\" y1=\"{y:.1}\" y2=\"{y:.1}\"/><text class=\"cf-muted cf-ytick\" x=\"{:.1}\" y=\"{y:.1}\" text-anchor=\"end\" dominant-baseline=\"middle\">{}</text>",
            N(x0 - 6.0),
            ticks::label(t, step, y_hi.abs().max(y_lo.abs()), c.y_unit), x0 = N(x0), x1 = N(x1), y = N(y)
    );
    }
    // x ticks.
    let target = ((x1 - x0) / 64.0).max(2.0) as usize;
    if n > 0 {
        for t in ticks::integer(n, target) {
            let x = xs(t as f64);
            let _ = write!(
                s,
                "<line class=\"cf-axis\" x1=\"{x:.1}\" x2=\"{x:.1}\" y1=\"{y0:.1}\" y2=\"{:.1}\"/><text class=\"cf-muted cf-xtick\" x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
                N(y0 + 4.0),
                N(y0 + 16.0),
                ticks::label(t as f64, 1.0, n as f64, Unit::Count), x = N(x), y0 = N(y0)
    );
        }
    }
    // Bars: one group per call, stacked bottom first.
    if !c.bars.is_empty() && n > 0 {
        let band = (x1 - x0) / n as f64;
        let bw = (band * 0.72).max(0.5);
        for i in 0..n {
            let x = xs(i as f64 + 1.0) - bw / 2.0;
            let mut g = format!("<g class=\"cf-bar\" data-call=\"{}\"", i + 1);
            let mut rects = String::new();
            let mut base = 0.0;
            let mut tip = format!("call {}", i + 1);
            for (k, b) in c.bars.iter().enumerate() {
                let v = b.values.get(i).copied().and_then(fin).unwrap_or(0.0);
                if let Some(key) = b.key.as_deref().map(key).filter(|k| !k.is_empty()) {
                    let _ = write!(g, " data-{key}=\"{v}\"", v = N(v));
                }
                let _ = write!(tip, ", {} {}", esc(&b.name), N(v));
                let (ya, yb) = (ys(base), ys(base + v));
                let _ = write!(
                    rects,
                    "<rect class=\"cf-s{}\" x=\"{x:.1}\" y=\"{:.1}\" width=\"{bw:.1}\" height=\"{:.1}\"/>",
                    color(b, k),
                    N(ya.min(yb)),
                    N((ya - yb).abs()), bw = N(bw), x = N(x)
    );
                base += v;
            }
            let _ = write!(s, "{g}>{rects}<title>{tip}</title></g>");
        }
    }
    // Lines in draw order; then markers on lines that lie under another.
    let cap = ((x1 - x0) * 2.0) as usize;
    let mut markers = String::new();
    for &i in &order {
        let l = &c.lines[i];
        let (w, dash) = stroke(l, nth_dash(i));
        let col = color(l, c.bars.len() + i);
        let thin = (l.values.len() / cap.max(1)).max(1);
        let mut d = String::new();
        let mut pen = false;
        let last = l.values.len().saturating_sub(1);
        for (k, v) in l.values.iter().enumerate() {
            let Some(v) = fin(*v) else {
                pen = false;
                continue;
            };
            if k % thin != 0 && k != last && pen {
                continue;
            }
            let (x, y) = (xs(k as f64 + 1.0), ys(v));
            if l.step {
                let half = (x1 - x0) / n.max(1) as f64 / 2.0;
                let cmd = if pen { 'L' } else { 'M' };
                let _ = write!(
                    d,
                    "{cmd}{:.1} {y:.1}H{:.1}",
                    N(x - half),
                    N(x + half),
                    y = N(y)
                );
            } else {
                let _ = write!(
                    d,
                    "{}{x:.1} {y:.1}",
                    if pen { 'L' } else { 'M' },
                    x = N(x),
                    y = N(y)
                );
            }
            pen = true;
        }
        let points = l.values.iter().filter(|v| v.is_finite()).count();
        if !d.is_empty() {
            let _ = write!(
                s,
                "<path {} d=\"{d}\" data-series=\"{}\"/>",
                line_attrs(col, w, dash),
                esc(&l.name)
            );
        }
        if under[i].is_some() || (points == 1 && !l.step) {
            let every = (l.values.len() / 12).max(1);
            for (k, v) in l.values.iter().enumerate() {
                if let (Some(v), true) = (fin(*v), k % every == 0 || k == last) {
                    let _ = write!(
                        markers,
                        "<circle class=\"cf-o cf-s{col}\" cx=\"{:.1}\" cy=\"{:.1}\" r=\"3.5\" stroke-width=\"1.5\"/>",
                        N(xs(k as f64 + 1.0)),
                        N(ys(v))
                    );
                }
            }
        }
    }
    s.push_str(&markers);
    // Marks: dashed verticals, labels stacked when several share a position.
    let mut seen: Vec<(i64, usize)> = Vec::new();
    for m in &c.marks {
        if !m.at.is_finite() {
            continue;
        }
        let x = xs(m.at).clamp(x0, x1);
        let slot = (x * 10.0) as i64;
        let k = match seen.iter_mut().find(|(p, _)| *p == slot) {
            Some((_, k)) => {
                *k += 1;
                *k
            }
            None => {
                seen.push((slot, 0));
                0
            }
        };
        let kind = match m.kind {
            MarkKind::Fold => "fold",
            MarkKind::Break => "break",
            MarkKind::Session => "session",
        };
        let detail = if m.detail.is_empty() {
            &m.label
        } else {
            &m.detail
        };
        let _ = write!(
            s,
            "<g class=\"cf-mark cf-mark-{kind}\" data-kind=\"{kind}\"><line x1=\"{x:.1}\" x2=\"{x:.1}\" y1=\"{y1:.1}\" y2=\"{y0:.1}\" stroke-dasharray=\"4 3\" stroke-width=\"1.5\"/><text x=\"{:.1}\" y=\"{:.1}\" font-size=\"10\">{}</text><title>{}</title></g>",
            N(x + 3.0),
            N(y1 + 10.0 + 12.0 * k as f64),
            esc(&m.label),
            esc(detail), x = N(x), y0 = N(y0), y1 = N(y1)
    );
    }
    // Axes and titles.
    let _ = write!(
        s,
        "<line class=\"cf-axis\" x1=\"{x0}\" x2=\"{x1}\" y1=\"{y0:.1}\" y2=\"{y0:.1}\"/><line class=\"cf-axis\" x1=\"{x0}\" x2=\"{x0}\" y1=\"{y1:.1}\" y2=\"{y0:.1}\"/><text class=\"cf-text cf-xtitle\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text><text class=\"cf-text cf-ytitle\" transform=\"translate(14 {:.1}) rotate(-90)\" text-anchor=\"middle\">{}</text>",
        N((x0 + x1) / 2.0),
        N(y0 + 34.0),
        esc(&c.x_title),
        N((y0 + y1) / 2.0),
        esc(&c.y_title), x0 = N(x0), x1 = N(x1), y0 = N(y0), y1 = N(y1)
    );
    (s, height)
}

#[cfg(test)]
mod tests;
