//! Profiles (README "Profiles"): the cost/recall knobs a `profile` fills in where the user set
//! none. `balanced` is the defaults. A knob the user set always wins; a `persist.previewChars`
//! the user did not set is lowered to the smallest threshold in force, since every threshold
//! must be at least the preview (see `Config::validate`).

use serde_json::{json, Map, Value};

/// The profile names, cheapest first.
pub const NAMES: [&str; 3] = ["savings", "balanced", "recall"];

/// The knobs of profile `name` as plugin-config JSON, or `None` for an unknown name.
pub fn knobs(name: &str) -> Option<Value> {
    // (tailTokens, minFoldTokens, foldRecordBudget, previewChars, defaultThreshold,
    //  thresholds of bash/exec/web_fetch, threshold of read)
    let (tail, min_fold, record, preview, default, shell, read) = match name {
        "savings" => (4_000, 12_000, 8_000, 2_000, 2_000, 2_000, 6_000),
        "balanced" => (4_000, 48_000, 16_000, 4_000, 4_000, 4_000, 12_000),
        "recall" => (16_000, 48_000, 32_000, 8_000, 8_000, 8_000, 24_000),
        _ => return None,
    };
    Some(json!({
        "tailTokens": tail,
        "minFoldTokens": min_fold,
        "foldRecordBudget": record,
        "persist": {
            "previewChars": preview,
            "defaultThreshold": default,
            "thresholds": { "bash": shell, "exec": shell, "read": read, "web_fetch": shell },
        },
    }))
}

/// A config value read as a number the way the shim's users write them (a number or a numeric
/// string), for the preview rule only; `None` when it is neither.
fn loose_number(v: &Value) -> Option<f64> {
    match v {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse::<f64>().ok(),
        _ => None,
    }
}

/// `raw` (the plugin config object as written, unknown keys already left out) with the knobs of
/// its profile (`balanced` when absent or unknown) filled in where the user set none. A value
/// that is not an object is returned as is.
pub fn apply(raw: &Value) -> Value {
    let Some(obj) = raw.as_object() else {
        return raw.clone();
    };
    let name = obj
        .get("profile")
        .and_then(Value::as_str)
        .filter(|n| NAMES.contains(n))
        .unwrap_or("balanced");
    let p = knobs(name).unwrap_or(Value::Null);
    let mut out = obj.clone();
    for k in ["tailTokens", "minFoldTokens", "foldRecordBudget"] {
        if !out.contains_key(k) {
            out.insert(k.into(), p[k].clone());
        }
    }
    let mut persist = match out.get("persist") {
        Some(Value::Object(m)) => m.clone(),
        _ => Map::new(),
    };
    for k in ["thresholds", "defaultThreshold"] {
        if !persist.contains_key(k) {
            persist.insert(k.into(), p["persist"][k].clone());
        }
    }
    if !persist.contains_key("previewChars") {
        let thresholds = persist.get("thresholds").and_then(Value::as_object);
        let preview = std::iter::once(&persist["defaultThreshold"])
            .chain(thresholds.into_iter().flat_map(|t| t.values()))
            .filter_map(loose_number)
            .filter(|x| x.is_finite() && *x >= 200.0)
            .fold(
                p["persist"]["previewChars"].as_f64().unwrap_or(0.0),
                f64::min,
            );
        persist.insert("previewChars".into(), json_number(preview));
    }
    out.insert("persist".into(), Value::Object(persist));
    Value::Object(out)
}

/// A whole number as an integer, anything else as a float.
fn json_number(x: f64) -> Value {
    if x.fract() == 0.0 && x.abs() < 9.0e15 {
        json!(x as i64)
    } else {
        json!(x)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Config;

    #[test]
    fn balanced_is_the_defaults() {
        let c = Config::from_value(&apply(&json!({}))).unwrap();
        assert_eq!(c, Config::default());
    }

    #[test]
    fn explicit_knobs_win_and_the_preview_follows_the_smallest_threshold() {
        let out = apply(
            &json!({"profile": "recall", "tailTokens": 5000, "persist": {"thresholds": {"bash": 3000}}}),
        );
        assert_eq!(out["tailTokens"], 5000);
        assert_eq!(out["minFoldTokens"], 48_000);
        assert_eq!(out["persist"]["previewChars"], 3000);
        assert_eq!(out["persist"]["defaultThreshold"], 8_000);
        Config::from_value(&out).unwrap();
        // A set preview is kept as written (the core then judges it).
        let out = apply(&json!({"profile": "savings", "persist": {"previewChars": 9000}}));
        assert_eq!(out["persist"]["previewChars"], 9000);
        // Below 200 a threshold does not lower the preview (the core refuses it on its own).
        let out = apply(&json!({"persist": {"defaultThreshold": 100}}));
        assert_eq!(out["persist"]["previewChars"], 4000);
    }

    #[test]
    fn every_profile_validates() {
        for name in NAMES {
            let c = Config::from_value(&apply(&json!({ "profile": name }))).unwrap();
            assert_eq!(json!(c.tail_tokens), knobs(name).unwrap()["tailTokens"]);
        }
        assert_eq!(knobs("cheap"), None);
    }
}
