//! The key a config error names (`topics.maxCallsPerHour`, `prices.<name>.hit`,
//! `targetModels[1]`), found after the derived decoder has failed.
//!
//! The config is decoded straight from its text by the derived `Deserialize`; nothing tracks the
//! path while it runs (a path-tracking deserializer wraps every visitor and seed the config
//! derives: ~32 KB of the shipped module). When the decoder has failed, the failing member is
//! found by decoding truncated copies of the config with the same decoder. The derives read
//! members in document order and stop at the first bad one, so a copy cut after member `i` of
//! an object or array fails exactly when the first bad member is at or before `i` (cutting
//! drops members only, and a dropped member can only cut a price row short: such a failure does
//! not count, unless the config itself failed on a row cut short). A binary search
//! finds that member on each level, then the search goes down into it. The key is the one
//! `serde_path_to_error` names for the same input; `tests/config_schema.rs` compares the two on
//! generated configs. Two inputs the shim never sends are named by the enclosing key only: text
//! that is not JSON (""), and a key given twice inside a section.
//!
//! Only the error path runs this: O(depth × log(width)) decodes of copies no larger than the
//! config, where depth is the schema's (`providers.<name>.match[i]`, at most 4: a member of a
//! free-form value, such as a `toolDefaults` entry, never fails alone).

use serde::Deserialize;
use serde_json::{Map, Value};

/// Decodes `text` as the config: the one decoder both the config and the trials here use.
pub(super) type Decode = fn(&str) -> serde_json::Result<()>;

/// What makes a truncated copy of the config fail the way the config failed.
#[derive(Clone, Copy)]
struct Search {
    decode: Decode,
    /// The config failed on a record cut short (a price row missing a field). Records hold
    /// only scalars and sit in maps and sections, which miss nothing when cut: any failure of a
    /// copy counts. Else a copy may be cut short only because it was cut, and only other
    /// failures count.
    missing: bool,
}

/// Errors of a record cut short: given as an object, it misses a field; as an array (serde reads
/// a record from its fields in order), it has too few.
fn incomplete(message: &str) -> bool {
    message.starts_with("missing field `") || message.starts_with("invalid length ")
}

/// The key of the member that fails to decode in `text`, whose decoding failed with `error`
/// ("" when it is the config as a whole, or when the text is not JSON).
pub(super) fn failing_key(text: &str, error: &serde_json::Error, decode: Decode) -> String {
    let search = Search {
        decode,
        missing: incomplete(&error.to_string()),
    };
    // The config's value, whatever text follows it (the decoder failed before reading that).
    match Value::deserialize(&mut serde_json::Deserializer::from_str(text)) {
        Ok(doc) => find(&doc, String::new(), &|v| v, search),
        Err(_) => String::new(),
    }
}

/// Why the document fails, when it fails as the config did.
fn failure(doc: Value, search: Search) -> Option<String> {
    match (search.decode)(&doc.to_string()) {
        Ok(()) => None,
        Err(e) => Some(e.to_string()).filter(|m| search.missing || !incomplete(m)),
    }
}

fn bad(doc: Value, search: Search) -> bool {
    failure(doc, search).is_some()
}

fn child(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

/// `v` sits at `path` inside the document `wrap(v)`, which fails with a bad error. Returns the
/// path of the first bad member inside `v`, or `path` when no member alone is bad (`v` has the
/// wrong type, misses a field, or is a scalar).
fn find(v: &Value, path: String, wrap: &dyn Fn(Value) -> Value, search: Search) -> String {
    match v {
        Value::Object(map) if !map.is_empty() => {
            let members: Vec<(&String, &Value)> = map.iter().collect();
            let cut = |n: usize| -> Map<String, Value> {
                members[..n]
                    .iter()
                    .map(|(k, x)| ((*k).clone(), (*x).clone()))
                    .collect()
            };
            if bad(wrap(Value::Object(Map::new())), search) {
                // The wrong type, or an enum given as `{"variant": content}`: the error is in
                // the content when the variant alone (a unit variant) decodes.
                if let [(variant, _)] = members[..] {
                    let unit = Map::from_iter([(variant.clone(), Value::Null)]);
                    if !bad(wrap(Value::Object(unit)), search) {
                        return child(&path, variant);
                    }
                }
                return path;
            }
            let Some(i) = first_bad(members.len(), |n| bad(wrap(Value::Object(cut(n))), search))
            else {
                return path;
            };
            let (key, member) = members[i];
            let inner = |x: Value| {
                let mut m = cut(i);
                m.insert(key.clone(), x);
                wrap(Value::Object(m))
            };
            find(member, child(&path, key), &inner, search)
        }
        Value::Array(items) if !items.is_empty() => {
            if bad(wrap(Value::Array(Vec::new())), search) {
                return path;
            }
            let prefix = |n: usize| wrap(Value::Array(items[..n].to_vec()));
            let Some(i) = first_bad(items.len(), |n| bad(prefix(n), search)) else {
                return path;
            };
            // A record read from an array fails on its end when the array has more elements.
            if failure(prefix(i + 1), search).is_some_and(|m| m.starts_with("trailing characters"))
            {
                return path;
            }
            let inner = |x: Value| {
                let mut a = items[..i].to_vec();
                a.push(x);
                wrap(Value::Array(a))
            };
            find(&items[i], format!("{path}[{i}]"), &inner, search)
        }
        _ => path,
    }
}

/// The index of the first member whose prefix is bad: the smallest `n` in `1..=len` with
/// `bad_prefix(n)`, minus one (`bad_prefix` is monotone: once the first bad member is in, every
/// longer prefix fails on it too). `None` when even the whole is not bad.
fn first_bad(len: usize, bad_prefix: impl Fn(usize) -> bool) -> Option<usize> {
    if !bad_prefix(len) {
        return None;
    }
    let (mut lo, mut hi) = (1, len);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if bad_prefix(mid) {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    Some(lo - 1)
}
