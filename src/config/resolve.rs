//! The plugin config as the user wrote it → the config the engine runs on, keeping every valid
//! key (the shim's `resolveConfig`). An unknown key is reported with the nearest valid one and
//! left out; a value the decoder refuses is reported (key, value, what is allowed) and left at
//! its default; every other key is kept. An invalid `mode` means `off` (the safe reading of a
//! mistyped mode).
//!
//! What a key accepts is worded from the manifest's `configSchema` (`openclaw.plugin.json`,
//! passed in by the shim, which reads files); the ranges the decoder enforces are in its reason.

use super::{profile, Config};
use serde::Serialize;
use serde_json::{Map, Value};

/// One problem found in the plugin config, with the sentence the shim logs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Problem {
    /// The dotted key (`persist.thresholds.read`, `prices.x.miss`).
    pub key: String,
    /// The value the user wrote there (absent when there was none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<Value>,
    /// The key is not in the schema (left out).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub unknown: bool,
    /// For an unknown key: the valid key nearest to it, if any is near.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nearest: Option<Option<String>>,
    /// The whole sentence: key, value, why, what is allowed, what happens meanwhile.
    pub message: String,
}

/// The config to run on and the problems found on the way.
#[derive(Debug, Clone, Serialize)]
pub struct Resolved {
    /// The config with every valid key the user set and the defaults elsewhere.
    pub config: Config,
    /// What was left out or replaced, in the order found.
    pub problems: Vec<Problem>,
}

type Obj = Map<String, Value>;

/// A value as the messages show it: its JSON, cut to 80 characters.
pub fn show(v: Option<&Value>) -> String {
    let text = match v {
        None => "undefined".to_string(),
        // A default written from an `f64` reads `1.0`; the user's numbers arrive as JavaScript
        // wrote them (`1`), and both are shown that way.
        Some(Value::Number(n)) => {
            let t = n.to_string();
            t.strip_suffix(".0").map_or(t.clone(), str::to_string)
        }
        Some(v) => v.to_string(),
    };
    if text.chars().count() > 80 {
        format!("{}...", text.chars().take(77).collect::<String>())
    } else {
        text
    }
}

/// The schema of the key at `path` (`additionalProperties` for a map's keys).
fn schema_at<'a>(schema: &'a Value, path: &[String]) -> Option<&'a Value> {
    let mut s = Some(schema).filter(|s| s.is_object())?;
    for k in path {
        s = s
            .get("properties")
            .and_then(|p| p.get(k))
            .or_else(|| s.get("additionalProperties").filter(|a| a.is_object()))?;
    }
    Some(s)
}

fn keys_of(s: Option<&Value>) -> Vec<&String> {
    s.and_then(|s| s.get("properties"))
        .and_then(Value::as_object)
        .map(|p| p.keys().collect())
        .unwrap_or_default()
}

/// What a config key accepts, from the schema (the decoder's ranges are in its reason).
fn allowed_for(schema: &Value, path: &[String]) -> String {
    let Some(s) = schema_at(schema, path) else {
        let parent = if path.len() > 1 {
            schema_at(schema, &path[..path.len() - 1])
        } else {
            Some(schema)
        };
        let keys = keys_of(parent);
        return if keys.is_empty() {
            "no such key".into()
        } else {
            let names: Vec<&str> = keys.iter().map(|k| k.as_str()).collect();
            format!("one of the keys {}", names.join(", "))
        };
    };
    let mut parts = Vec::new();
    if let Some(values) = s.get("enum").and_then(Value::as_array) {
        let shown: Vec<String> = values.iter().map(Value::to_string).collect();
        parts.push(format!("one of {}", shown.join(", ")));
    } else {
        let types: Vec<&str> = match s.get("type") {
            Some(Value::String(t)) => vec![t.as_str()],
            Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
            _ => vec!["any"],
        };
        if types.contains(&"integer") {
            parts.push("an integer (or the same as a string)".to_string());
        } else if types.contains(&"number") {
            parts.push("a number (or the same as a string)".to_string());
        } else {
            let item = s
                .get("items")
                .and_then(|i| i.get("type"))
                .and_then(Value::as_str)
                .unwrap_or("values");
            let words: Vec<String> = types
                .iter()
                .map(|t| match *t {
                    "array" => format!("an array of {item}s"),
                    t => format!("a {t}"),
                })
                .collect();
            parts.push(words.join(" or "));
        }
    }
    let num = |k: &str| s.get(k).filter(|v| !v.is_null()).map(Value::to_string);
    match (num("minimum"), num("maximum")) {
        (Some(lo), Some(hi)) => parts.push(format!("from {lo} to {hi}")),
        (Some(lo), None) => parts.push(format!("at least {lo}")),
        (None, Some(hi)) => parts.push(format!("at most {hi}")),
        (None, None) => {}
    }
    // The first parenthesis of the description that states a range ("(>= persist.previewChars)").
    let description = s.get("description").and_then(Value::as_str).unwrap_or("");
    let range = description.split('(').skip(1).find_map(|after| {
        let (inside, _) = after.split_once(')')?;
        inside.contains(['<', '>', '=']).then_some(inside)
    });
    if let Some(range) = range {
        parts.push(range.to_string());
    }
    parts.join(", ")
}

/// Every key of the schema, dotted, in the schema's order.
fn all_keys(schema: &Value) -> Vec<String> {
    fn walk(props: Option<&Value>, prefix: &str, out: &mut Vec<String>) {
        for (k, v) in props.and_then(Value::as_object).into_iter().flatten() {
            out.push(format!("{prefix}{k}"));
            if let Some(inner) = v.get("properties") {
                walk(Some(inner), &format!("{prefix}{k}."), out);
            }
        }
    }
    let mut out = Vec::new();
    walk(schema.get("properties"), "", &mut out);
    out
}

/// The valid key nearest to `key` (case-insensitive edit distance; a key's last part counts
/// too), or `None` when none is near.
fn nearest_key(key: &str, candidates: &[&String]) -> Option<String> {
    let k = key.to_lowercase();
    let mut best: Option<&String> = None;
    let mut best_d = usize::MAX;
    for c in candidates {
        let leaf = c.rsplit('.').next().unwrap_or(c).to_lowercase();
        let d = strsim::levenshtein(&k, &c.to_lowercase()).min(strsim::levenshtein(&k, &leaf) + 1);
        if d < best_d {
            best_d = d;
            best = Some(c);
        }
    }
    best.filter(|_| best_d <= 3.max(key.chars().count() / 2))
        .cloned()
}

/// `raw` without the keys the schema does not know (top level and one level into the
/// sections), each reported with the nearest valid key.
fn drop_unknown_keys(schema: &Value, raw: Obj, problems: &mut Vec<Problem>) -> Obj {
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return raw;
    };
    let keys = all_keys(schema);
    let mut unknown = |path: &[String], value: Value| {
        let key = path.join(".");
        let depth = path.len() + 1;
        let candidates: Vec<&String> = keys
            .iter()
            .filter(|k| k.split('.').count() <= depth)
            .collect();
        let near = nearest_key(&key, &candidates);
        let hint = near
            .as_ref()
            .map(|n| format!(" (did you mean {n}?)"))
            .unwrap_or_default();
        problems.push(Problem {
            message: format!(
                "cachefold config: unknown key {key} = {}{hint}; allowed: {}. It is ignored and every other key is kept; remove it with openclaw config unset plugins.entries.cachefold.config.{key}",
                show(Some(&value)),
                allowed_for(schema, path),
            ),
            key,
            value: Some(value),
            unknown: true,
            nearest: Some(near),
        });
    };
    let mut clean = Obj::new();
    for (k, v) in raw {
        let Some(s) = props.get(&k) else {
            unknown(&[k], v);
            continue;
        };
        match (s.get("properties").and_then(Value::as_object), v) {
            (Some(known), Value::Object(section)) => {
                let mut sub = Obj::new();
                for (k2, v2) in section {
                    if known.contains_key(&k2) {
                        sub.insert(k2, v2);
                    } else {
                        unknown(&[k.clone(), k2], v2);
                    }
                }
                clean.insert(k, Value::Object(sub));
            }
            (_, v) => {
                clean.insert(k, v);
            }
        }
    }
    clean
}

/// The member at dotted `key` inside `v`.
fn value_at<'a>(v: &'a Value, key: &str) -> Option<&'a Value> {
    key.split('.').try_fold(v, |v, k| v.as_object()?.get(k))
}

/// The key a decoder error names (`invalid config `key`: …`), when it names one.
fn key_of(message: &str) -> Option<&str> {
    let rest = message.strip_prefix("invalid config `")?;
    let key = &rest[..rest.find('`')?];
    Some(key).filter(|k| !k.is_empty())
}

/// The decoder's reason without its `invalid config `key`: ` prefix.
fn reason_of(message: &str) -> &str {
    message
        .strip_prefix("invalid config `")
        .and_then(|rest| rest.find("`: ").map(|i| &rest[i + 3..]))
        .unwrap_or(message)
}

fn try_parse(v: &Value) -> Result<Config, String> {
    Config::from_json(&v.to_string()).map_err(|e| e.to_string())
}

fn with(sub: &Obj, k: &str, v: Value) -> Value {
    let mut m = sub.clone();
    m.insert(k.to_string(), v);
    Value::Object(m)
}

struct Resolver<'a> {
    schema: &'a Value,
    problems: Vec<Problem>,
    defaults: Option<Value>,
    mode_bad: bool,
}

impl Resolver<'_> {
    /// Reports `value` at `path` as refused with decoder message `error`; `trial` is the config
    /// that was tried.
    fn report(&mut self, path: &[String], value: Option<&Value>, error: &str, trial: &Value) {
        let mut path = path.to_vec();
        let mut key = path.join(".");
        let mut value = value.cloned();
        let mut reason = reason_of(error).to_string();
        if let Some(named) = key_of(error) {
            if named.starts_with(&format!("{key}.")) {
                // The decoder names a key inside this value (a price row's field): that one.
                value = value_at(trial, named).cloned();
                path = named.split('.').map(str::to_string).collect();
                key = named.to_string();
            } else if named != key {
                // A rule between two keys, worded for the other one ("X must be at least <this
                // key> (n)"): say which key this one must stay within.
                let defaults = self.defaults.get_or_insert_with(|| {
                    // Through the JSON text the binding writes anyway: a `Value` serializer for the
                    // config's types would add its own code to the module.
                    serde_json::from_str(&crate::to_json(&Config::default())).unwrap_or(Value::Null)
                });
                let other = show(value_at(trial, named).or_else(|| value_at(defaults, named)));
                reason = if reason.starts_with(&format!("must be at least {key}")) {
                    format!("must be at most {named} ({other})")
                } else {
                    format!("{named} = {other} {reason}")
                };
            }
        }
        let fallback = if key == "mode" {
            " \"off\" (passthrough) until it is fixed"
        } else {
            " its default"
        };
        self.problems.push(Problem {
            message: format!(
                "cachefold config: {key} = {} is not valid ({reason}); allowed: {}. Using{fallback}; every other key is kept.",
                show(value.as_ref()),
                allowed_for(self.schema, &path),
            ),
            key,
            value,
            unknown: false,
            nearest: None,
        });
    }

    /// The valid part of `obj` at `path`; `wrap(sub)` is the whole config with `sub` there. A
    /// section or a map with free keys is kept key by key; a record with required fields (a
    /// price row) stays whole or goes. A key refused on the first pass is tried again once every
    /// other key is in, so a rule between two keys is judged against the user's values.
    fn keep_valid(&mut self, path: &[String], obj: &Obj, wrap: &dyn Fn(Value) -> Value) -> Obj {
        let mut sub = Obj::new();
        let mut later = Vec::new();
        for (k, v) in obj {
            if try_parse(&wrap(with(&sub, k, v.clone()))).is_ok() {
                sub.insert(k.clone(), v.clone());
            } else {
                later.push((k, v));
            }
        }
        for (k, v) in later {
            let mut here = path.to_vec();
            here.push(k.clone());
            let trial = wrap(with(&sub, k, v.clone()));
            let error = match try_parse(&trial) {
                Ok(_) => {
                    sub.insert(k.clone(), v.clone());
                    continue;
                }
                Err(e) => e,
            };
            let s = schema_at(self.schema, &here);
            let free_object = s.is_some_and(|s| {
                s.get("type").and_then(Value::as_str) == Some("object")
                    && s.get("required").map_or(true, |r| {
                        matches!(r, Value::Null | Value::Bool(false))
                            || r.as_str() == Some("")
                            || r.as_f64() == Some(0.0)
                    })
            });
            if let (true, Value::Object(inner_obj)) = (free_object, v) {
                let inner = {
                    let parent = &sub;
                    let inner_wrap = |x: Value| wrap(with(parent, k, x));
                    self.keep_valid(&here, inner_obj, &inner_wrap)
                };
                let inner = Value::Object(inner);
                if try_parse(&wrap(with(&sub, k, inner.clone()))).is_ok() {
                    sub.insert(k.clone(), inner);
                }
                continue;
            }
            if here.join(".") == "mode" {
                self.mode_bad = true;
            }
            self.report(&here, Some(v), &error, &trial);
        }
        sub
    }
}

/// The config to run on for `input` (the plugin config as the host holds it; `null` for none)
/// and the problems found, worded from `schema` (the manifest's `configSchema`; `null` when the
/// manifest could not be read).
pub fn resolve(input: &Value, schema: &Value) -> Resolved {
    let mut r = Resolver {
        schema,
        problems: Vec::new(),
        defaults: None,
        mode_bad: false,
    };
    let raw = match input {
        Value::Object(o) => o.clone(),
        Value::Null => Obj::new(),
        other => {
            let whole = ["(plugin config)".to_string()];
            r.report(
                &whole,
                Some(other),
                "the plugin config must be an object",
                &Value::Object(Obj::new()),
            );
            Obj::new()
        }
    };
    // The profile's knobs where the user set none (an unknown profile is reported below, with
    // the balanced knobs meanwhile).
    let raw = profile::apply(&Value::Object(drop_unknown_keys(
        schema,
        raw,
        &mut r.problems,
    )));
    if let Ok(config) = try_parse(&raw) {
        return Resolved {
            config,
            problems: r.problems,
        };
    }
    let raw = raw.as_object().cloned().unwrap_or_default();
    let mut good = r.keep_valid(&[], &raw, &|x| x);
    if r.mode_bad {
        good.insert("mode".into(), Value::String("off".into()));
    }
    Resolved {
        config: try_parse(&Value::Object(good)).unwrap_or_default(),
        problems: r.problems,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Value {
        let manifest: Value =
            serde_json::from_str(include_str!("../../openclaw.plugin.json")).unwrap();
        manifest["configSchema"].clone()
    }

    #[test]
    fn an_unknown_key_is_left_out_with_the_nearest_valid_one() {
        let r = resolve(&json!({ "tailToken": 1, "tailTokens": 9000 }), &schema());
        assert_eq!(r.config.tail_tokens, 9000);
        assert_eq!(r.problems.len(), 1, "{:?}", r.problems);
        let p = &r.problems[0];
        assert_eq!((p.key.as_str(), p.unknown), ("tailToken", true));
        assert_eq!(p.nearest, Some(Some("tailTokens".to_string())));
        assert!(
            p.message.contains("did you mean tailTokens?"),
            "{}",
            p.message
        );
    }

    #[test]
    fn a_refused_value_keeps_the_default_and_a_bad_mode_means_off() {
        let r = resolve(
            &json!({ "mode": "sometimes", "tailTokens": 9000 }),
            &schema(),
        );
        assert_eq!(r.config.mode, crate::config::Mode::Off);
        assert_eq!(r.config.tail_tokens, 9000);
        assert_eq!(r.problems.len(), 1, "{:?}", r.problems);
        assert_eq!(r.problems[0].key, "mode");
        let r = resolve(&json!([1]), &schema());
        assert_eq!(r.problems[0].key, "(plugin config)");
        assert_eq!(r.config, Config::default());
    }
}
