//! Safe default arguments for tool calls (`before_tool_call`).
//!
//! `Config::tool_defaults` maps a tool name to default arguments. The built-in table gives
//! OpenClaw 2026.9.6's `read` a line window (`offset: 1, limit: 200`; the tool's schema is
//! `{path, offset?: integer ≥ 1 "Start line; 1-based", limit?: number "Max lines", cursor?, optional?}`)
//! and `web_fetch` `maxChars: 12000` (schema `maxChars?: integer ≥ 100`, clamped by the host to
//! `tools.web.fetch.maxCharsCap`, 20,000 by default).
//!
//! Rules:
//! - A default is added only for a key the model did not give. An explicit value is never
//!   replaced, whatever it is (`limit: 5000`, `offset: 0`, a string).
//! - An explicit `null` counts as *not given* and is replaced by the default. Reason: strict
//!   function-calling modes make models send `null` for every optional parameter they leave
//!   out, and the host's schemas (`Type.Optional(Type.Integer(...))`) give `null` no meaning,
//!   so keeping it would only turn a safe default into a validation error.
//! - Tool names match exactly first, then case-insensitively (the table is user-written).
//! - Params that are not a JSON object (or absent, i.e. `null`) get the defaults as a new object;
//!   any other shape (array, string, number) is left alone.
//! - Output keeps the model's keys in their order, then added keys in table order.

use crate::config::Config;
use serde_json::{Map, Value};

/// Params with the configured defaults filled in, or `None` when nothing changes.
pub fn apply_tool_defaults(cfg: &Config, tool_name: &str, params: &Value) -> Option<Value> {
    let defaults = lookup(cfg, tool_name)?;
    if defaults.is_empty() {
        return None;
    }
    let mut out: Map<String, Value> = match params {
        Value::Object(m) => m.clone(),
        Value::Null => Map::new(),
        _ => return None,
    };
    let mut changed = false;
    for (k, v) in defaults {
        let missing = matches!(out.get(k), None | Some(Value::Null));
        if missing && !v.is_null() {
            out.insert(k.clone(), v.clone());
            changed = true;
        }
    }
    changed.then_some(Value::Object(out))
}

fn lookup<'a>(cfg: &'a Config, tool_name: &str) -> Option<&'a Map<String, Value>> {
    if let Some(d) = cfg.tool_defaults.get(tool_name) {
        return Some(d);
    }
    cfg.tool_defaults
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(tool_name))
        .map(|(_, v)| v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn cfg() -> Config {
        Config::default()
    }

    #[test]
    fn read_gets_a_line_window() {
        let out = apply_tool_defaults(&cfg(), "read", &json!({"path": "a.txt"})).unwrap();
        assert_eq!(
            serde_json::to_string(&out).unwrap(),
            r#"{"path":"a.txt","offset":1,"limit":200}"#
        );
    }

    #[test]
    fn explicit_values_are_kept() {
        let p = json!({"path": "a.txt", "offset": 40, "limit": 5000});
        assert_eq!(apply_tool_defaults(&cfg(), "read", &p), None);
        let out = apply_tool_defaults(&cfg(), "read", &json!({"path": "a", "limit": 10})).unwrap();
        assert_eq!(out, json!({"path": "a", "limit": 10, "offset": 1}));
        // Odd explicit values are still the model's choice.
        let out =
            apply_tool_defaults(&cfg(), "read", &json!({"path": "a", "offset": "7"})).unwrap();
        assert_eq!(out["offset"], "7");
        assert_eq!(out["limit"], 200);
        assert_eq!(
            apply_tool_defaults(&cfg(), "web_fetch", &json!({"url": "u", "maxChars": 500})),
            None
        );
    }

    #[test]
    fn explicit_null_is_filled() {
        let out = apply_tool_defaults(
            &cfg(),
            "read",
            &json!({"path": "a", "offset": null, "limit": null}),
        )
        .unwrap();
        assert_eq!(
            serde_json::to_string(&out).unwrap(),
            r#"{"path":"a","offset":1,"limit":200}"#
        );
    }

    #[test]
    fn web_fetch_and_unknown_tools() {
        let out = apply_tool_defaults(&cfg(), "web_fetch", &json!({"url": "https://x"})).unwrap();
        assert_eq!(out["maxChars"], 12000);
        assert_eq!(
            apply_tool_defaults(&cfg(), "exec", &json!({"command": "ls"})),
            None
        );
        assert_eq!(
            apply_tool_defaults(&cfg(), "read", &json!(["not", "an", "object"])),
            None
        );
        assert_eq!(apply_tool_defaults(&cfg(), "read", &json!("x")), None);
        assert_eq!(
            apply_tool_defaults(&cfg(), "read", &Value::Null).unwrap(),
            json!({"offset": 1, "limit": 200})
        );
    }

    #[test]
    fn configurable_table_and_case_insensitive_names() {
        let c = Config::from_json(r#"{"toolDefaults":{"Grep":{"limit":50},"read":{}}}"#).unwrap();
        assert_eq!(
            apply_tool_defaults(&c, "grep", &json!({"pattern": "x"})).unwrap(),
            json!({"pattern": "x", "limit": 50})
        );
        // An empty table entry switches the default off.
        assert_eq!(apply_tool_defaults(&c, "read", &json!({"path": "a"})), None);
    }

    #[test]
    fn deterministic() {
        let p = json!({"path": "a", "zeta": 1});
        let a = serde_json::to_string(&apply_tool_defaults(&cfg(), "read", &p)).unwrap();
        let b = serde_json::to_string(&apply_tool_defaults(&cfg(), "read", &p)).unwrap();
        assert_eq!(a, b);
    }
}
