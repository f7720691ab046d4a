use super::*;
use proptest::prelude::*;

fn line(name: &str, values: &[f64], headline: bool) -> Series {
    Series {
        name: name.into(),
        values: values.to_vec(),
        headline,
        ..Series::default()
    }
}

fn cost_chart(a: &[f64], b: &[f64]) -> Chart {
    Chart {
        title: "cumulative cost".into(),
        x_title: "model call (this session)".into(),
        y_title: "USD, cumulative".into(),
        y_unit: Unit::Usd,
        lines: vec![line("S3", a, true), line("S3o", b, false)],
        ..Chart::default()
    }
}

/// `1, 2 or 5 × 10^k`.
fn is_nice(step: f64) -> bool {
    let mant = step / 10f64.powf(step.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .iter()
        .any(|m| (m - mant).abs() < 1e-6)
}

/// The y tick labels of an SVG, in order.
fn y_labels(svg: &str) -> Vec<String> {
    svg.split("cf-ytick\"")
        .skip(1)
        .filter_map(|p| p.split_once('>').and_then(|(_, r)| r.split_once('<')))
        .map(|(l, _)| l.to_string())
        .collect()
}

#[test]
fn odd_ticks_of_the_old_charts_are_nice_now() {
    // The old bench chart divided the maximum in four: 0.08, 0.17; 50K, 99K.
    let c = cost_chart(&[0.05, 0.11, 0.17], &[0.06, 0.12, 0.17]);
    assert_eq!(
        y_labels(&svg(&c)),
        ["$0.00", "$0.05", "$0.10", "$0.15", "$0.20"]
    );
    let mut t = cost_chart(&[40_000.0, 99_000.0], &[1.0, 2.0]);
    t.y_unit = Unit::Tokens;
    assert_eq!(y_labels(&svg(&t)), ["0", "50K", "100K"]);
}

#[test]
fn identical_lines_stay_visible() {
    let v = [0.01, 0.02, 0.05];
    // The headline is listed first but drawn last, solid; the other one dashed with markers.
    let s = svg(&cost_chart(&v, &v));
    let s3 = s.find("data-series=\"S3\"").unwrap();
    let s3o = s.find("data-series=\"S3o\"").unwrap();
    assert!(s3o < s3, "S3o drawn before S3");
    let path = |name: &str| {
        let end = s.find(&format!("data-series=\"{name}\"")).unwrap();
        s[s[..end].rfind("<path").unwrap()..end].to_string()
    };
    assert!(!path("S3").contains("dasharray"));
    assert!(path("S3o").contains("stroke-dasharray=\"6 4\""));
    assert_eq!(
        s.matches("<circle class=\"cf-o").count(),
        3 + 1,
        "markers + legend swatch"
    );
    assert!(s.contains("S3o (under S3: same values)"));
    // Apart by more than a pixel: no note, no markers.
    let apart = svg(&cost_chart(&v, &[0.0, 0.0, 0.0]));
    assert!(!apart.contains("under S3"));
    assert!(!apart.contains("<circle"));
}

#[test]
fn bars_carry_their_values_and_marks_sit_between_calls() {
    let c = Chart {
        title: "prompt tokens per model call".into(),
        x_title: "model call".into(),
        y_title: "prompt tokens".into(),
        y_unit: Unit::Tokens,
        bars: vec![
            Series {
                name: "cache hit".into(),
                values: vec![0.0, 900.0],
                key: Some("hit".into()),
                ..Series::default()
            },
            Series {
                name: "cache miss".into(),
                values: vec![1000.0, 300.0],
                key: Some("Miss\"><x".into()),
                ..Series::default()
            },
        ],
        lines: vec![Series {
            name: "predicted hit".into(),
            values: vec![0.0, 800.0],
            step: true,
            color: Some(7),
            ..Series::default()
        }],
        marks: vec![Mark {
            kind: MarkKind::Break,
            at: 1.5,
            label: "break: <b>".into(),
            detail: String::new(),
        }],
        ..Chart::default()
    };
    let s = svg(&c);
    assert_eq!(s.matches("<g class=\"cf-bar\"").count(), 2);
    assert!(s.contains("data-call=\"2\" data-hit=\"900\" data-missx=\"300\""));
    assert!(s.contains("class=\"cf-mark cf-mark-break\""));
    assert!(s.contains("break: &lt;b&gt;") && !s.contains("<b>"));
    assert!(
        s.contains(">1.2K<") || s.contains(">1K<"),
        "{:?}",
        y_labels(&s)
    );
    // Two calls: x ticks 1 and 2, the titles as given.
    assert_eq!(s.matches("cf-xtick").count(), 2);
    assert!(s.contains(">model call<") && s.contains(">prompt tokens<"));
}

#[test]
fn standalone_embeds_both_palettes_and_a_figure_stacks_panels() {
    let mut c = cost_chart(&[1.0], &[2.0]);
    c.standalone = true;
    let s = svg(&c);
    assert!(s.contains("<style>") && s.contains("prefers-color-scheme:dark"));
    assert!(s.contains(":root[data-theme=dark] .cf-s0{stroke:#60a5fa"));
    assert!(!svg(&cost_chart(&[1.0], &[2.0])).contains("<style>"));
    let mut second = cost_chart(&[3.0], &[4.0]);
    second.no_legend = true;
    let f = figure("bench", &[cost_chart(&[1.0], &[2.0]), second]);
    assert_eq!(f.matches("<g transform=\"translate(0 ").count(), 2);
    assert_eq!(
        f.matches("class=\"cf-legend\"").count(),
        2,
        "one legend of two entries"
    );
    // A one-point line is a marker, not an invisible zero-length path.
    assert_eq!(f.matches("<circle").count(), 4);
}

#[test]
fn empty_and_hostile_input_draws_an_empty_chart() {
    let c = Chart {
        title: "</svg><script>".into(),
        ..Chart::default()
    };
    let s = svg(&c);
    assert!(s.starts_with("<svg") && s.ends_with("</svg>"));
    assert!(!s.contains("<script>"));
    let nan = cost_chart(&[f64::NAN, 1.0, f64::INFINITY], &[]);
    assert!(!svg(&nan).contains("NaN") && !svg(&nan).contains("inf"));
}

proptest! {
    #[test]
    fn ticks_are_nice_and_cover_the_range(lo in -1e7f64..1e7, span in 1e-6f64..1e8, target in 2usize..10) {
        let hi = lo + span;
        let (step, t) = nice_ticks(lo, hi, target);
        prop_assert!(is_nice(step), "step {step}");
        prop_assert!(t[0] <= lo + step * 1e-6 && *t.last().unwrap() >= hi - step * 1e-6, "{t:?} vs {lo}..{hi}");
        prop_assert!(t.len() >= 2 && t.len() <= 2 * target + 2, "{} ticks", t.len());
        for w in t.windows(2) {
            prop_assert!(((w[1] - w[0]) - step).abs() <= step * 1e-6);
        }
        // No tick beyond one step outside the data.
        prop_assert!(t[1] > lo && t[t.len() - 2] < hi);
    }

    #[test]
    fn call_ticks_are_integers_in_range(n in 1usize..100_000, target in 2usize..16) {
        let t = integer_ticks(n, target);
        prop_assert!(!t.is_empty() && t.len() <= 2 * target + 2);
        prop_assert!(t.iter().all(|&v| v >= 1 && v <= n));
        prop_assert!(t.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn every_line_is_drawn_named_and_visible(
        vals in prop::collection::vec(prop::collection::vec(0.0f64..1e6, 1..40), 1..6),
        dup in any::<bool>(),
    ) {
        let mut lines: Vec<Series> = vals.iter().enumerate().map(|(i, v)| line(&format!("s{i}"), v, i == 0)).collect();
        if dup {
            let copy = Series { name: "copy".into(), headline: false, ..lines[0].clone() };
            lines.push(copy);
        }
        let c = Chart { title: "t".into(), x_title: "x".into(), y_title: "y".into(), lines: lines.clone(), ..Chart::default() };
        let s = svg(&c);
        prop_assert_eq!(&s, &svg(&c), "deterministic");
        let mut strokes = Vec::new();
        for l in &lines {
            let at = s.find(&format!("data-series=\"{}\"", l.name));
            prop_assert!(at.is_some(), "{} drawn", l.name);
            prop_assert!(s.contains(&format!(">{}", l.name)), "{} in the legend", l.name);
            let at = at.unwrap_or(0);
            let p = &s[s[..at].rfind("<path").unwrap_or(0)..at];
            strokes.push(p.split(" d=").next().unwrap_or("").to_string());
        }
        // Distinct strokes (colour class or dash) for every line.
        for i in 0..strokes.len() {
            for j in i + 1..strokes.len() {
                prop_assert_ne!(&strokes[i], &strokes[j]);
            }
        }
        // The copy of the headline is under it: markers and a note.
        if dup {
            prop_assert!(s.contains("copy (under s0: same values)"));
            prop_assert!(s.contains("<circle class=\"cf-o"));
        }
        // The headline is the last line drawn.
        let last = s.rfind("<path").unwrap_or(0);
        prop_assert!(s[last..].contains("data-series=\"s0\""));
    }
}

#[test]
fn a_json_spec_reads_as_the_struct_and_bad_specs_are_errors() {
    let v: Value = serde_json::from_str(
        r#"{"title":"t","xTitle":"x","yTitle":"y","yUnit":"usd","lines":[{"name":"S3","values":[1,null,3],"headline":true},{"name":"S3o","values":[1,2,3],"color":4}],"marks":[{"kind":"fold","at":1.5,"label":"fold f1"}],"extra":1}"#,
    )
    .unwrap();
    let c = Chart::from_value(&v).unwrap();
    assert_eq!(c.y_unit, Unit::Usd);
    assert!(c.lines[0].headline && c.lines[0].values[1].is_nan());
    assert_eq!(c.lines[1].color, Some(4));
    assert_eq!(c.marks[0].kind, MarkKind::Fold);
    for bad in [
        r#"[]"#,
        r#"{"title":3}"#,
        r#"{"yUnit":"yen"}"#,
        r#"{"lines":[{"values":["1"]}]}"#,
        r#"{"marks":[{"kind":"x","at":1}]}"#,
        r#"{"bars":{}}"#,
    ] {
        let v: Value = serde_json::from_str(bad).unwrap();
        assert!(Chart::from_value(&v).is_err(), "{bad}");
    }
}

fn pt(name: &str, x: f64, y: f64) -> Point {
    Point {
        name: name.into(),
        x,
        y,
        label: true,
        ..Point::default()
    }
}

/// The x attribute values of the `<polyline>` of series `name`, in order.
fn polyline_xs(svg: &str, name: &str) -> Vec<f64> {
    let tag = svg
        .split("<polyline ")
        .skip(1)
        .find(|t| t.contains(&format!("data-series=\"{name}\"")))
        .unwrap_or_else(|| panic!("no polyline {name} in {svg}"));
    let pts = tag
        .split("points=\"")
        .nth(1)
        .unwrap()
        .split('"')
        .next()
        .unwrap();
    pts.split(' ')
        .map(|p| p.split(',').next().unwrap().parse().unwrap())
        .collect()
}

#[test]
fn scatter_joins_fronts_in_x_order_and_keeps_far_points_on_the_edge() {
    let panel = Scatter {
        title: "window 1M".into(),
        x_title: "input cost ×S1a".into(),
        y_title: "recall".into(),
        groups: vec![
            Group {
                name: "front".into(),
                points: vec![pt("b", 0.6, 0.95), pt("a", 0.4, 0.9), pt("c", 0.5, 0.93)],
                color: 1,
                joined: true,
                ..Group::default()
            },
            Group {
                name: "front before".into(),
                points: vec![pt("a0", 0.45, 0.88), pt("b0", 0.62, 0.94)],
                color: 7,
                joined: true,
                dashed: true,
                ..Group::default()
            },
            Group {
                name: "baselines".into(),
                points: vec![pt("S1a", 1.0, 1.0), pt("S2c", 2.7, 0.9)],
                color: 7,
                square: true,
                ..Group::default()
            },
        ],
        rules: vec![(0.95, "recall target 0.95".into())],
        x_max: Some(1.05),
        ..Scatter::default()
    };
    let svg = scatter_figure("cost vs recall", &[panel.clone(), panel]);
    assert!(svg.starts_with("<svg"), "{svg}");
    assert_eq!(
        svg.matches("window 1M").count(),
        4,
        "two panels, heading and tooltip each"
    );
    let xs = polyline_xs(&svg, "front");
    assert_eq!(xs.len(), 3);
    assert!(xs.windows(2).all(|w| w[0] < w[1]), "{xs:?}");
    // Only the earlier front is dashed.
    let before = svg.split("data-series=\"front before\"").next().unwrap();
    assert!(before
        .rsplit("<polyline ")
        .next()
        .unwrap()
        .contains("stroke-dasharray=\"6 4\""));
    let front = svg.split("data-series=\"front\"").next().unwrap();
    assert!(!front
        .rsplit("<polyline ")
        .next()
        .unwrap()
        .contains("stroke-dasharray"));
    // S2c (2.7) is drawn at the right edge with its value; S1a inside the plot.
    assert!(svg.contains(">S2c 2.7 →</text>"), "{svg}");
    assert!(svg.contains(">S1a</text>"), "{svg}");
    assert!(svg.contains("recall target 0.95"));
    // Nice ticks in the value's decimals.
    assert_eq!(y_labels(&svg)[..4], ["0.85", "0.9", "0.95", "1"], "{svg}");
    assert_eq!(
        svg.matches("<rect class=\"cf-s7\"").count(),
        2 * 3,
        "two squares + legend per panel"
    );
}
