//! Scatter panels: points on two value axes (e.g. cost vs recall), groups of points joined in
//! x order (a Pareto front), a dashed group for an earlier state, horizontal reference lines.
//! Same ticks, labels, classes and palette as the call charts.

use super::{esc, ticks, Unit, N};
use std::fmt::Write;

/// One point.
#[derive(Debug, Clone, Default)]
pub struct Point {
    /// Name (tooltip, and label when `label`).
    pub name: String,
    /// x value.
    pub x: f64,
    /// y value.
    pub y: f64,
    /// Write the name next to the point.
    pub label: bool,
    /// Draw a ring around the point (the one the chart is about, e.g. the defaults).
    pub ring: bool,
}

/// Points drawn alike.
#[derive(Debug, Clone, Default)]
pub struct Group {
    /// Legend name.
    pub name: String,
    /// Points.
    pub points: Vec<Point>,
    /// Palette entry (0..8).
    pub color: usize,
    /// Join the points in x order.
    pub joined: bool,
    /// Dashed line and open markers (an earlier state).
    pub dashed: bool,
    /// Square markers (reference strategies).
    pub square: bool,
}

/// One scatter panel.
#[derive(Debug, Clone, Default)]
pub struct Scatter {
    /// Panel heading.
    pub title: String,
    /// What the x axis holds.
    pub x_title: String,
    /// What the y axis holds.
    pub y_title: String,
    /// Groups, drawn in order.
    pub groups: Vec<Group>,
    /// Horizontal reference lines: (y, label), dashed.
    pub rules: Vec<(f64, String)>,
    /// Points with x beyond this sit on the right edge, labelled with their x.
    pub x_max: Option<f64>,
    /// Width in px (default 760).
    pub width: Option<f64>,
    /// Plot height in px (default 320).
    pub height: Option<f64>,
}

/// Panels one above the other in one standalone SVG document under a heading.
pub fn scatter_figure(title: &str, panels: &[Scatter]) -> String {
    super::stack(title, panels, |p| (&p.title, p.width), panel)
}

fn panel(c: &Scatter, width: f64) -> (String, f64) {
    let fin = |p: &&Point| p.x.is_finite() && p.y.is_finite();
    let pts = || c.groups.iter().flat_map(|g| g.points.iter()).filter(fin);
    let cap = c.x_max.unwrap_or(f64::INFINITY);
    let (mut xl, mut xh, mut yl, mut yh) =
        (f64::INFINITY, f64::NEG_INFINITY, f64::INFINITY, 0.0f64);
    for p in pts() {
        xl = xl.min(p.x.min(cap));
        xh = xh.max(p.x.min(cap));
        yl = yl.min(p.y);
        yh = yh.max(p.y);
    }
    for (y, _) in &c.rules {
        yl = yl.min(*y);
        yh = yh.max(*y);
    }
    let (xs_step, xt) = ticks::nice(xl, xh, 6);
    let (ys_step, yt) = ticks::nice(yl, yh, 5);
    let (x_lo, x_hi) = (xt[0], xt[xt.len() - 1]);
    let (y_lo, y_hi) = (yt[0], yt[yt.len() - 1]);
    let (x0, x1) = (66.0, width - 16.0);
    let y1 = 40.0;
    let y0 = y1 + c.height.unwrap_or(320.0).clamp(80.0, 2000.0);
    let px = |x: f64| x0 + (x1 - x0) * (x.min(cap) - x_lo) / (x_hi - x_lo);
    let py = |y: f64| y0 - (y0 - y1) * (y - y_lo) / (y_hi - y_lo);
    let mut s = format!(
        "<text class=\"cf-text\" x=\"12\" y=\"16\" font-weight=\"bold\">{}</text>",
        esc(&c.title)
    );
    // Legend: one entry per group.
    let mut lx = x0;
    for g in &c.groups {
        let _ = write!(
            s,
            "<g class=\"cf-legend\" transform=\"translate({} 30)\">{}<text class=\"cf-text\" x=\"20\" y=\"0\" dominant-baseline=\"middle\">{}</text></g>",
            N(lx),
            marker(g, 7.0, 0.0),
            esc(&g.name)
        );
        lx += 40.0 + g.name.chars().count() as f64 * 6.6;
    }
    for &t in &yt {
        let y = py(t);
        let _ = write!(
            s,
            "<line class=\"cf-grid\" x1=\"{}\" x2=\"{}\" y1=\"{}\" y2=\"{}\"/><text class=\"cf-muted cf-ytick\" x=\"{}\" y=\"{}\" text-anchor=\"end\" dominant-baseline=\"middle\">{}</text>",
            N(x0), N(x1), N(y), N(y), N(x0 - 6.0), N(y),
            ticks::label(t, ys_step, y_hi, Unit::Count)
        );
    }
    for &t in &xt {
        let x = px(t);
        let _ = write!(
            s,
            "<line class=\"cf-grid\" x1=\"{}\" x2=\"{}\" y1=\"{}\" y2=\"{}\"/><text class=\"cf-muted cf-xtick\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
            N(x), N(x), N(y1), N(y0), N(x), N(y0 + 16.0),
            ticks::label(t, xs_step, x_hi, Unit::Count)
        );
    }
    for (y, label) in &c.rules {
        let y = py(*y);
        let _ = write!(
            s,
            "<g class=\"cf-mark cf-mark-fold\"><line x1=\"{}\" x2=\"{}\" y1=\"{}\" y2=\"{}\" stroke-dasharray=\"4 3\"/><text x=\"{}\" y=\"{}\" text-anchor=\"end\" font-size=\"10\">{}</text></g>",
            N(x0), N(x1), N(y), N(y), N(x1 - 4.0), N(y - 4.0), esc(label)
        );
    }
    let mut labelled: Vec<(f64, f64)> = Vec::new();
    for g in &c.groups {
        let mut v: Vec<&Point> = g.points.iter().filter(fin).collect();
        if g.joined && v.len() > 1 {
            v.sort_by(|a, b| a.x.total_cmp(&b.x));
            let d: Vec<String> = v
                .iter()
                .map(|p| format!("{},{}", N(px(p.x)), N(py(p.y))))
                .collect();
            let _ = write!(
                s,
                "<polyline class=\"cf-l cf-s{}\" stroke-width=\"1.6\"{} points=\"{}\" data-series=\"{}\"/>",
                g.color % 8,
                if g.dashed { " stroke-dasharray=\"6 4\"" } else { "" },
                d.join(" "),
                esc(&g.name)
            );
        }
        for p in v {
            let (x, y) = (px(p.x), py(p.y));
            let _ = write!(
                s,
                "<g>{}<title>{}: {} ({} {:.3}, y {:.3})</title></g>",
                marker(g, x, y),
                esc(&g.name),
                esc(&p.name),
                esc(&c.x_title),
                N(p.x),
                N(p.y)
            );
            if p.ring {
                let _ = write!(
                    s,
                    "<circle class=\"cf-o cf-s7\" cx=\"{}\" cy=\"{}\" r=\"8\" stroke-width=\"1.2\"/>",
                    N(x),
                    N(y)
                );
            }
            let beyond = p.x > cap;
            let free = !labelled
                .iter()
                .any(|(a, b)| (a - x).abs() < 4.0 && (b - y).abs() < 4.0);
            if (p.label || beyond) && free {
                labelled.push((x, y));
                let (tx, anchor, extra) = if beyond {
                    (x - 7.0, "end", format!(" {} →", N(p.x)))
                } else {
                    (x + 7.0, "start", String::new())
                };
                let _ = write!(
                    s,
                    "<text class=\"cf-muted\" x=\"{}\" y=\"{}\" text-anchor=\"{anchor}\" font-size=\"10\">{}{extra}</text>",
                    N(tx),
                    N(y - 6.0),
                    esc(&p.name)
                );
            }
        }
    }
    let _ = write!(
        s,
        "<line class=\"cf-axis\" x1=\"{x0}\" x2=\"{x1}\" y1=\"{y0}\" y2=\"{y0}\"/><line class=\"cf-axis\" x1=\"{x0}\" x2=\"{x0}\" y1=\"{y1}\" y2=\"{y0}\"/><text class=\"cf-text cf-xtitle\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text><text class=\"cf-text cf-ytitle\" transform=\"translate(14 {}) rotate(-90)\" text-anchor=\"middle\">{}</text>",
        N((x0 + x1) / 2.0),
        N(y0 + 34.0),
        esc(&c.x_title),
        N((y0 + y1) / 2.0),
        esc(&c.y_title),
        x0 = N(x0),
        x1 = N(x1),
        y0 = N(y0),
        y1 = N(y1)
    );
    (s, y0 + 42.0)
}

/// A group's marker at (x, y): filled circle, open circle (dashed groups) or square.
fn marker(g: &Group, x: f64, y: f64) -> String {
    let c = g.color % 8;
    if g.square {
        format!(
            "<rect class=\"cf-s{c}\" x=\"{}\" y=\"{}\" width=\"8\" height=\"8\"/>",
            N(x - 4.0),
            N(y - 4.0)
        )
    } else if g.dashed {
        format!(
            "<circle class=\"cf-o cf-s{c}\" cx=\"{}\" cy=\"{}\" r=\"3.5\" stroke-width=\"1.5\"/>",
            N(x),
            N(y)
        )
    } else {
        format!(
            "<circle class=\"cf-s{c}\" cx=\"{}\" cy=\"{}\" r=\"4\"/>",
            N(x),
            N(y)
        )
    }
}
