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

/// How the core named the failing key before `src/config/key.rs`: `serde_path_to_error`
/// tracking the path while decoding. The error text the user sees must not change.
fn path_tracked(text: &str) -> Result<Config, String> {
    let mut de = serde_json::Deserializer::from_str(text);
    let cfg: Config = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let path = e.path().to_string();
        let path = if path == "." { String::new() } else { path };
        format!("invalid config `{path}`: {}", e.into_inner())
    })?;
    de.end().map_err(|e| format!("invalid input: {e}"))?;
    cfg.validate().map_err(|e| e.to_string())?;
    Ok(cfg)
}

fn same_as_path_tracked(text: &str) {
    let now = Config::from_json(text).map_err(|e| e.to_string());
    assert_eq!(now, path_tracked(text), "config text: {text}");
}

/// Every way a member can be refused, at every depth, each error text as before: type errors,
/// unknown keys and variants, numbers out of range, a price row missing a field, a bad sequence
/// element, errors on later lines (the position in the message), a bad member after good ones.
#[test]
fn errors_name_the_key_path_tracking_named() {
    for text in [
        "{}",
        r#"{"nope":1}"#,
        r#"{"nope":{"a":[1]}}"#,
        r#"{"mode":"x"}"#,
        r#"{"mode":3}"#,
        r#"{"mode":{"auto":1}}"#,
        r#"{"mode":{"auto":null}}"#,
        r#"{"mode":{"x":null}}"#,
        r#"{"mode":{"auto":null,"b":1}}"#,
        r#"{"mode":{}}"#,
        r#"{"prices":{"jz":[null,null]}}"#,
        r#"{"prices":{"jz":[1,1]}}"#,
        r#"{"prices":{"jz":[1,1,1,1]}}"#,
        r#"{"prices":{"jz":[1,1,1]},"topics":[true,"x"]}"#,
        r#"{"mode":null}"#,
        r#"{"compactRatio":3}"#,
        r#"{"tailTokens":"lots"}"#,
        r#"{"tailTokens":1e400}"#,
        r#"{"tailTokens":-1,"mode":"off"}"#,
        r#"{"prefixLockCount":5000000000}"#,
        r#"{"topics":{"maxCallsPerHour":61}}"#,
        r#"{"topics":{"nope":1}}"#,
        r#"{"topics":3}"#,
        r#"{"topics":[]}"#,
        r#"{"topics":[1]}"#,
        r#"{"summary":null}"#,
        r#"{"prices":null}"#,
        r#"{"prices":{"x":null}}"#,
        r#"{"prices":{"x":{}}}"#,
        r#"{"prices":{"x":{"hit":1}}}"#,
        r#"{"prices":{"a":{"hit":1,"miss":1,"output":1},"x":{"miss":1,"hit":1}}}"#,
        r#"{"prices":{"x":{"hit":"a","miss":1,"output":1}}}"#,
        r#"{"prices":{"x":{"hit":1,"miss":1,"output":1,"z":2}}}"#,
        r#"{"prices":{"x":{"hit":1,"z":2}}}"#,
        r#"{"prices":{"x":{"hit":-1,"miss":1,"output":1}}}"#,
        r#"{"persist":{"thresholds":{"read":"x"}}}"#,
        r#"{"persist":{"thresholds":{"a":1,"b":2,"c":3,"d":[],"e":5}}}"#,
        r#"{"persist":{"thresholds":null}}"#,
        r#"{"persist":{"previewChars":"x"}}"#,
        r#"{"artifacts":{"maxBytes":true}}"#,
        r#"{"targetModels":["a",3]}"#,
        r#"{"targetModels":["a","b","c",{"x":1},"e"]}"#,
        r#"{"targetModels":"a"}"#,
        r#"{"toolDefaults":{"read":3}}"#,
        r#"{"toolDefaults":{"read":{"a":{"b":[1,{"c":null}]}},"x":[]}}"#,
        r#"{"providers":{"new":{"hit":1}}}"#,
        r#"{"providers":{"kimi":{"ttl":"x"}}}"#,
        r#"{"providers":{"kimi":{"match":[1]}}}"#,
        r#"{"providers":{"kimi":{"match":["a",["b"]]}}}"#,
        r#"{"providers":{"kimi":{"longRetention":"yes"}}}"#,
        r#"{"mode":"auto","mode":"off"}"#,
        r#" {"a":1} x"#,
        r#"{"tailTokens":9000} x"#,
        "{\n \"lessons\": {\n   \"enabled\": \"yes\"\n }\n}",
        "{\"tailTokens\": 9000,\n \"persist\": {\"thresholds\": {\"read\": 12000,\n \"exec\": -4}}}",
    ] {
        same_as_path_tracked(text);
    }
    // The key a user reads, spelled out for the common cases.
    let key = |text: &str| match Config::from_json(text).unwrap_err() {
        cachefold::Error::Config { key, .. } => key,
        e => panic!("{e}"),
    };
    assert_eq!(
        key(r#"{"persist":{"thresholds":{"read":"x"}}}"#),
        "persist.thresholds.read"
    );
    assert_eq!(
        key(r#"{"prices":{"x":{"hit":"a","miss":1,"output":1}}}"#),
        "prices.x.hit"
    );
    assert_eq!(key(r#"{"prices":{"x":{"hit":1}}}"#), "prices.x");
    assert_eq!(key(r#"{"targetModels":["a",3]}"#), "targetModels[1]");
    assert_eq!(
        key(r#"{"providers":{"kimi":{"match":[1]}}}"#),
        "providers.kimi.match[0]"
    );
}

/// Text that is not JSON keeps serde_json's message (where it broke off); the key is the
/// config as a whole (the path tracker named the member it was reading). The shim always
/// sends `JSON.stringify` output, so only a Rust caller can meet this.
#[test]
fn text_that_is_not_json_is_a_config_error_without_key() {
    for (text, message) in [
        ("{", "EOF while parsing an object at line 1 column 1"),
        (
            r#"{"mode":"auto","#,
            "EOF while parsing a value at line 1 column 15",
        ),
        (
            r#"{"topics":{"enabled":tru}}"#,
            "expected ident at line 1 column 25",
        ),
    ] {
        let e = Config::from_json(text).unwrap_err();
        assert_eq!(e.code(), "CACHEFOLD_CONFIG");
        assert_eq!(e.to_string(), format!("invalid config ``: {message}"));
        let old = path_tracked(text).unwrap_err();
        assert!(old.ends_with(&format!("`: {message}")), "{old}");
    }
}

mod generated {
    use super::same_as_path_tracked;
    use proptest::prelude::*;
    use serde_json::{json, Map, Value};

    /// Any JSON value, shallow.
    fn any_json() -> BoxedStrategy<Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            (-3i64..100_000).prop_map(|n| json!(n)),
            prop_oneof![Just(0.5), Just(-0.25), Just(1e300), Just(2.0)].prop_map(|f| json!(f)),
            prop_oneof![
                "[a-z]{0,4}",
                "[0-9]{1,6}",
                Just(" 12 ".to_string()),
                Just("1e9".to_string())
            ]
            .prop_map(Value::String),
        ];
        leaf.prop_recursive(2, 8, 3, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
                prop::collection::vec(("[a-z]{1,3}", inner), 0..3)
                    .prop_map(|kv| Value::Object(kv.into_iter().collect())),
            ]
        })
        .boxed()
    }

    /// A number as the config takes it (or not): a number, a numeric string, anything.
    fn number() -> BoxedStrategy<Value> {
        prop_oneof![
            3 => (0u64..3_000_000_000).prop_map(|n| json!(n)),
            1 => (0u64..100).prop_map(|n| json!(n.to_string())),
            1 => any_json(),
        ]
        .boxed()
    }

    /// An object with some of `keys` (valued by `value`), in any order, sometimes a stray key
    /// or a value of any type.
    fn object(keys: &'static [&'static str], value: BoxedStrategy<Value>) -> BoxedStrategy<Value> {
        let key = prop_oneof![
            8 => prop::sample::select(keys).prop_map(str::to_string),
            1 => "[a-z]{1,4}",
        ];
        let member = prop_oneof![8 => value, 1 => any_json()];
        prop::collection::vec((key, member), 0..5)
            .prop_map(|kv| Value::Object(kv.into_iter().collect::<Map<_, _>>()))
            .boxed()
    }

    fn map_of(value: BoxedStrategy<Value>) -> BoxedStrategy<Value> {
        prop_oneof![
            8 => prop::collection::vec(("[a-z]{1,3}", value), 0..4)
                .prop_map(|kv| Value::Object(kv.into_iter().collect())),
            1 => any_json(),
        ]
        .boxed()
    }

    fn strings() -> BoxedStrategy<Value> {
        prop_oneof![
            6 => prop::collection::vec(prop_oneof![5 => "[a-z*]{0,4}".prop_map(Value::String), 1 => any_json()], 0..4)
                .prop_map(Value::Array),
            1 => any_json(),
        ]
        .boxed()
    }

    fn config() -> BoxedStrategy<Value> {
        let price_row = object(&["hit", "miss", "output"], number());
        let provider = object(
            &[
                "match",
                "hit",
                "miss",
                "output",
                "writePremium",
                "writePremiumLong",
                "minTokens",
                "block",
                "ttlMinutes",
                "longRetention",
            ],
            prop_oneof![
                number(),
                strings(),
                any::<bool>().prop_map(Value::Bool).boxed()
            ]
            .boxed(),
        );
        let section = |keys: &'static [&'static str]| {
            object(
                keys,
                prop_oneof![
                    number(),
                    any::<bool>().prop_map(Value::Bool).boxed(),
                    map_of(number())
                ]
                .boxed(),
            )
        };
        let field = prop_oneof![
            (
                Just("mode"),
                prop_oneof![
                    Just(json!("auto")),
                    Just(json!("off")),
                    Just(json!("x")),
                    any_json()
                ]
            ),
            (Just("targetModels"), strings()),
            (Just("protectedReads"), strings()),
            (
                prop::sample::select(
                    &[
                        "prefixLockCount",
                        "compactRatio",
                        "tokenBudget",
                        "tailTokens",
                        "minFoldTokens",
                        "foldRecordBudget",
                        "expectedRemainingCalls"
                    ][..]
                ),
                number()
            ),
            (Just("prices"), map_of(price_row)),
            (Just("providers"), map_of(provider)),
            (Just("toolDefaults"), map_of(any_json())),
            (
                Just("summary"),
                section(&["useLlm", "maxCallsPerHour", "timeoutMs", "maxTokens"])
            ),
            (
                Just("persist"),
                section(&[
                    "enabled",
                    "thresholds",
                    "defaultThreshold",
                    "previewChars",
                    "middleware"
                ])
            ),
            (Just("artifacts"), section(&["maxBytes"])),
            (
                Just("lessons"),
                section(&[
                    "enabled",
                    "maxInjectTokens",
                    "autoPromoteAfterMs",
                    "useLlm",
                    "captureIntervalMs"
                ])
            ),
            (
                Just("topics"),
                section(&["enabled", "useLlm", "maxCallsPerHour"])
            ),
            (
                prop::sample::select(
                    &[
                        "price",
                        "stateDir",
                        "logFile",
                        "profile",
                        "ownsCompaction",
                        "nope"
                    ][..]
                ),
                any_json()
            ),
        ];
        prop::collection::vec(field, 0..6)
            .prop_map(|kv| Value::Object(kv.into_iter().map(|(k, v)| (k.to_string(), v)).collect()))
            .boxed()
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 3_000, failure_persistence: None, ..ProptestConfig::default() })]
        /// Generated configs, compact and on many lines: accepted alike, refused with the same text.
        #[test]
        fn same_error_text_as_path_tracking(cfg in config(), pretty in any::<bool>()) {
            let text = if pretty { serde_json::to_string_pretty(&cfg).unwrap() } else { cfg.to_string() };
            same_as_path_tracked(&text);
        }
    }
}
