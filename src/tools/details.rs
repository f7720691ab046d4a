//! Bounded copies of `toolResult.details`.
//!
//! `details` is host metadata: OpenClaw strips it before provider replay, so it never reaches
//! the model, but it is stored in the transcript with every tool result. Some tools put whole
//! outputs or large traces there. [`compact_details`] returns a bounded, deterministic copy:
//!
//! | bound | value |
//! |---|---|
//! | container depth | ≤ 3 (deeper containers become a `"[object: N keys]"` / `"[array: N items]"` string) |
//! | array items | ≤ 12 (11 kept + one `"[+N more items]"` marker) |
//! | object keys | ≤ 20 (19 kept in original order + `"…": "+N more keys"`) |
//! | string length | ≤ 1,024 chars (cut + `"…[+N chars]"`) |
//! | whole value, serialised | ≤ 4,096 chars |
//!
//! Invariants: the output satisfies every bound above, keys keep their original order, and
//! the same input gives the same bytes. Work is proportional to what is kept, not to the input
//! size (long strings are counted once; dropped items are never visited).

use serde_json::{Map, Value};

/// Serialised size above which details are compacted, and the hard cap of the result.
pub const DETAILS_MAX_CHARS: usize = 4_096;
/// Deepest container level kept (the root container is level 1).
pub const MAX_DEPTH: usize = 3;
/// Most items of one array (marker included).
pub const MAX_ITEMS: usize = 12;
/// Most keys of one object (marker included).
pub const MAX_KEYS: usize = 20;
/// Longest string (marker included), in chars.
pub const MAX_STRING: usize = 1_024;

/// Key of the marker entry that stands for dropped object keys.
const MORE_KEYS: &str = "…";

#[derive(Clone, Copy)]
struct Limits {
    depth: usize,
    items: usize,
    keys: usize,
    string: usize,
}

// Tried in order until the result fits DETAILS_MAX_CHARS. The first row is the documented
// bound; the others trade detail for fit. 20 keys × 1,024 chars can reach ~20 KB, hence the ladder.
const LADDER: [Limits; 5] = [
    Limits {
        depth: MAX_DEPTH,
        items: MAX_ITEMS,
        keys: MAX_KEYS,
        string: MAX_STRING,
    },
    Limits {
        depth: MAX_DEPTH,
        items: 8,
        keys: MAX_KEYS,
        string: 256,
    },
    Limits {
        depth: 2,
        items: 6,
        keys: 12,
        string: 128,
    },
    Limits {
        depth: 2,
        items: 4,
        keys: 8,
        string: 64,
    },
    Limits {
        depth: 1,
        items: 4,
        keys: 8,
        string: 48,
    },
];

/// True when `v` serialises to more than [`DETAILS_MAX_CHARS`] chars. Stops counting early,
/// so a multi-megabyte value costs only the first 4 KB of serialisation.
pub fn details_oversized(v: &Value) -> bool {
    json_chars_exceed(v, DETAILS_MAX_CHARS)
}

/// Bounded copy of `v` (see the module docs for the bounds). Values already within every
/// bound come back equal to the input.
pub fn compact_details(v: &Value) -> Value {
    for limits in LADDER {
        let out = compact(v, 0, limits);
        if !json_chars_exceed(&out, DETAILS_MAX_CHARS) {
            return out;
        }
    }
    // Nothing in the ladder fits (e.g. 8 keys with very long names): keep only a note.
    let mut note = Map::new();
    note.insert("detailsCompacted".into(), Value::Bool(true));
    note.insert("originalChars".into(), Value::from(json_chars(v)));
    let mut out = Map::new();
    out.insert("cachefold".into(), Value::Object(note));
    Value::Object(out)
}

fn compact(v: &Value, level: usize, l: Limits) -> Value {
    match v {
        Value::String(s) => Value::String(cut_string(s, l.string)),
        Value::Array(items) => {
            if level >= l.depth {
                return Value::String(format!("[array: {} items]", items.len()));
            }
            let keep = if items.len() > l.items {
                l.items.saturating_sub(1)
            } else {
                items.len()
            };
            let mut out: Vec<Value> = Vec::with_capacity(keep + 1);
            for x in &items[..keep] {
                out.push(compact(x, level + 1, l));
            }
            if items.len() > keep {
                out.push(Value::String(format!(
                    "[+{} more items]",
                    items.len() - keep
                )));
            }
            Value::Array(out)
        }
        Value::Object(map) => {
            if level >= l.depth {
                return Value::String(format!("[object: {} keys]", map.len()));
            }
            let keep = if map.len() > l.keys {
                l.keys.saturating_sub(1)
            } else {
                map.len()
            };
            let mut out = Map::new();
            for (k, x) in map.iter().take(keep) {
                out.insert(cut_string(k, l.string), compact(x, level + 1, l));
            }
            if map.len() > keep {
                out.insert(
                    MORE_KEYS.into(),
                    Value::String(format!("+{} more keys", map.len() - keep)),
                );
            }
            Value::Object(out)
        }
        other => other.clone(),
    }
}

/// `s` if it has at most `max` chars, else a prefix plus a `…[+N chars]` marker, `max` chars in all.
fn cut_string(s: &str, max: usize) -> String {
    // Byte length bounds char count from above: most strings skip the count entirely.
    if s.len() <= max {
        return s.to_string();
    }
    let total = s.chars().count();
    if total <= max {
        return s.to_string();
    }
    // The marker for cutting `total` chars is at least as long as the real one (which cuts
    // fewer), so this `keep` always fits.
    let keep = max.saturating_sub(format!("…[+{total} chars]").chars().count());
    let marker = format!("…[+{} chars]", total - keep);
    if marker.chars().count() > max {
        // Too small for a marker at all: a plain cut.
        return crate::text::head_chars(s, max).to_string();
    }
    let mut out = crate::text::head_chars(s, keep).to_string();
    out.push_str(&marker);
    out
}

fn json_chars(v: &Value) -> u64 {
    let mut n = 0;
    count_chars(v, usize::MAX, &mut n);
    n as u64
}

fn json_chars_exceed(v: &Value, limit: usize) -> bool {
    let mut n = 0;
    !count_chars(v, limit, &mut n) || n > limit
}

/// Adds the chars of `v`'s compact JSON text (as `serde_json` writes it) to `n`;
/// false as soon as `n` passes `limit` (so a huge value is not walked to the end).
fn count_chars(v: &Value, limit: usize, n: &mut usize) -> bool {
    *n += match v {
        Value::Null | Value::Bool(true) => 4,
        Value::Bool(false) => 5,
        Value::Number(x) => x.as_str().len(),
        Value::String(s) => string_chars(s),
        Value::Array(a) => {
            *n += 1 + a.len().saturating_sub(1);
            for x in a {
                if !count_chars(x, limit, n) {
                    return false;
                }
            }
            1
        }
        Value::Object(m) => {
            *n += 1 + m.len().saturating_sub(1);
            for (k, x) in m {
                *n += string_chars(k) + 1;
                if !count_chars(x, limit, n) {
                    return false;
                }
            }
            1
        }
    };
    *n <= limit
}

/// Chars of a JSON string literal: quotes, two-char escapes, `\u00XX` for other controls.
fn string_chars(s: &str) -> usize {
    let mut n = 2;
    for c in s.chars() {
        n += match c {
            '"' | '\\' | '\u{8}' | '\t' | '\n' | '\u{c}' | '\r' => 2,
            '\0'..='\u{1f}' => 6,
            _ => 1,
        };
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn depth(v: &Value) -> usize {
        match v {
            Value::Array(a) => 1 + a.iter().map(depth).max().unwrap_or(0),
            Value::Object(m) => 1 + m.values().map(depth).max().unwrap_or(0),
            _ => 0,
        }
    }

    fn check_bounds(v: &Value) {
        assert!(depth(v) <= MAX_DEPTH, "depth {} in {v}", depth(v));
        fn walk(v: &Value) {
            match v {
                Value::String(s) => assert!(s.chars().count() <= MAX_STRING),
                Value::Array(a) => {
                    assert!(a.len() <= MAX_ITEMS);
                    a.iter().for_each(walk);
                }
                Value::Object(m) => {
                    assert!(m.len() <= MAX_KEYS);
                    for (k, x) in m {
                        assert!(k.chars().count() <= MAX_STRING);
                        walk(x);
                    }
                }
                _ => {}
            }
        }
        walk(v);
        assert!(serde_json::to_string(v).unwrap().chars().count() <= DETAILS_MAX_CHARS);
    }

    #[test]
    fn small_values_unchanged() {
        let v =
            json!({"status": "ok", "exitCode": 0, "lines": [1, 2, 3], "nested": {"a": {"b": 1}}});
        assert!(!details_oversized(&v));
        assert_eq!(compact_details(&v), v);
    }

    #[test]
    fn bounds_hold_for_big_values() {
        let long = "x".repeat(50_000);
        let many: Vec<Value> = (0..500)
            .map(|i| json!({"i": i, "s": long.clone()}))
            .collect();
        let mut obj = Map::new();
        for i in 0..100 {
            obj.insert(
                format!("k{i:03}"),
                json!({"deep": {"deeper": {"deepest": [1, 2, 3]}}, "s": "é".repeat(3000)}),
            );
        }
        let cases = vec![
            json!({"aggregated": long, "items": many, "obj": obj}),
            Value::Array(many.clone()),
            Value::String("ü".repeat(100_000)),
            Value::Object(obj),
            json!({"a": {"b": {"c": {"d": {"e": 1}}}}}),
        ];
        for v in cases {
            assert!(details_oversized(&v) || depth(&v) > MAX_DEPTH);
            let c = compact_details(&v);
            check_bounds(&c);
            assert_eq!(compact_details(&v), c, "deterministic");
        }
    }

    #[test]
    fn keeps_order_and_marks_drops() {
        let mut m = Map::new();
        for i in 0..30 {
            m.insert(format!("key{i:02}"), Value::from(i));
        }
        let c = compact_details(&Value::Object(m));
        let keys: Vec<&String> = c.as_object().unwrap().keys().collect();
        assert_eq!(keys.len(), MAX_KEYS);
        assert_eq!(keys[0], "key00");
        assert_eq!(keys[18], "key18");
        assert_eq!(c[MORE_KEYS], "+11 more keys");
        let arr = compact_details(&Value::Array((0..40).map(Value::from).collect()));
        let a = arr.as_array().unwrap();
        assert_eq!(a.len(), MAX_ITEMS);
        assert_eq!(a[10], 10);
        assert_eq!(a[11], "[+29 more items]");
    }

    #[test]
    fn deep_containers_become_summaries() {
        let v = json!({"a": {"b": {"c": {"d": 1}, "list": [[1, 2], [3]]}}});
        let c = compact_details(&v);
        assert_eq!(c["a"]["b"]["c"], "[object: 1 keys]");
        assert_eq!(c["a"]["b"]["list"], "[array: 2 items]");
    }

    #[test]
    fn string_cut_is_exact_length() {
        let s = "a".repeat(5_000);
        let c = cut_string(&s, MAX_STRING);
        assert_eq!(c.chars().count(), MAX_STRING);
        assert!(c.ends_with("…[+3990 chars]"), "{}", &c[c.len() - 20..]);
        assert_eq!(cut_string("short", 10), "short");
        for max in [1, 5, 12, 13, 40] {
            assert!(cut_string(&s, max).chars().count() <= max, "max {max}");
        }
    }

    proptest::proptest! {
        #[test]
        fn char_count_is_that_of_the_text(s in ".{0,40}", n in proptest::num::i64::ANY, x in proptest::num::f64::NORMAL) {
            let v = json!({"s": s, "a": [n, x, null, true, false, [], {}], "k\u{1}\"": {"e": ""}});
            let chars = serde_json::to_string(&v).unwrap().chars().count();
            proptest::prop_assert_eq!(json_chars(&v), chars as u64);
            proptest::prop_assert!(!json_chars_exceed(&v, chars));
            proptest::prop_assert!(json_chars_exceed(&v, chars - 1));
        }
    }

    #[test]
    fn counting_is_in_chars() {
        let v = Value::String("é".repeat(4_000)); // 8,000 bytes, 4,002 chars serialised
        assert!(!details_oversized(&v));
        let v = Value::String("é".repeat(4_095));
        assert!(details_oversized(&v));
    }
}
