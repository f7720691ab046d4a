//! `openclaw.plugin.json#configSchema` must mirror `Config`: the same keys, the same defaults.
//! OpenClaw validates user config against the schema before the plugin loads, so a key missing
//! there could never be set, and a default that differs would be documented wrongly.

use cachefold::Config;
use serde_json::Value;

fn manifest() -> Value {
    let text =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/openclaw.plugin.json"))
            .unwrap();
    serde_json::from_str(&text).unwrap()
}

fn check(schema: &Value, value: &Value, path: &str) {
    let props = schema["properties"]
        .as_object()
        .unwrap_or_else(|| panic!("{path}: schema has no properties"));
    let obj = value
        .as_object()
        .unwrap_or_else(|| panic!("{path}: config value is not an object"));
    let mut schema_keys: Vec<_> = props.keys().cloned().collect();
    let mut config_keys: Vec<_> = obj.keys().cloned().collect();
    schema_keys.sort();
    config_keys.sort();
    assert_eq!(
        schema_keys, config_keys,
        "{path}: schema keys differ from Config keys"
    );
    for (k, sub) in props {
        let here = format!("{path}.{k}");
        assert!(
            sub["description"].as_str().is_some_and(|d| d.len() > 10),
            "{here}: every config key needs a description"
        );
        if sub.get("properties").is_some() {
            check(sub, &obj[k], &here);
        } else {
            let default = sub
                .get("default")
                .unwrap_or_else(|| panic!("{here}: no default"));
            let want = &obj[k];
            let same = match (default.as_f64(), want.as_f64()) {
                (Some(a), Some(b)) => a == b,
                _ => default == want,
            };
            assert!(
                same,
                "{here}: schema default {default} != Config default {want}"
            );
        }
    }
}

#[test]
fn schema_mirrors_config_defaults() {
    let m = manifest();
    assert_eq!(m["id"], "cachefold");
    assert_eq!(m["kind"], "context-engine");
    assert_eq!(m["activation"]["onStartup"], true);
    let defaults: Value = serde_json::to_value(Config::default()).unwrap();
    check(&m["configSchema"], &defaults, "config");
}

/// OpenClaw skips a plugin whose config fails its schema (and `openclaw doctor --fix` drops the
/// whole config payload), so the manifest accepts unknown keys: the shim reports each one with
/// the nearest valid key and leaves it out before the core, which still rejects them.
#[test]
fn schema_accepts_unknown_keys_the_shim_reports() {
    let m = manifest();
    let schema = &m["configSchema"];
    assert_eq!(schema["additionalProperties"], true);
    for k in ["summary", "persist", "artifacts", "lessons", "topics"] {
        assert_eq!(schema["properties"][k]["additionalProperties"], true, "{k}");
    }
    assert!(Config::from_json(r#"{"notAKey":1}"#).is_err());
    assert!(Config::from_json(r#"{"profile":"recall"}"#).is_ok());
    assert!(Config::from_json(r#"{"profile":"cheap"}"#).is_err());
}

/// A refused value is reported under the child key that holds it, and a rule between two keys
/// names the other key and its value in force (issue 24, item 11).
#[test]
fn messages_name_the_child_key() {
    let msg = |json: &str| Config::from_json(json).unwrap_err().to_string();
    let e = msg(r#"{"persist":{"thresholds":{"read":10}}}"#);
    assert!(
        e.starts_with("invalid config `persist.thresholds.read`: must be at least persist.previewChars (4000)"),
        "{e}"
    );
    let e = msg(r#"{"persist":{"thresholds":{"read":"lots"}}}"#);
    assert!(
        e.starts_with("invalid config `persist.thresholds.read`"),
        "{e}"
    );
    for (row, key) in [
        (r#"{"hit":-1,"miss":1,"output":1}"#, "prices.x.hit"),
        (r#"{"hit":0,"miss":0,"output":1}"#, "prices.x.miss"),
        (r#"{"hit":0,"miss":1,"output":-2}"#, "prices.x.output"),
    ] {
        let e = msg(&format!(r#"{{"prices":{{"x":{row}}}}}"#));
        assert!(
            e.starts_with(&format!("invalid config `{key}`: must be")),
            "{e}"
        );
    }
    // The preview is never given as its own bound.
    let e = msg(r#"{"persist":{"previewChars":50000}}"#);
    assert!(
        e.starts_with("invalid config `persist.defaultThreshold`: must be at least persist.previewChars (50000)"),
        "{e}"
    );
}
