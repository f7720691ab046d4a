//! Hand-written JSON encoding: every structured value the core writes (results for JS, journal
//! lines, snapshots, host messages) goes out through [`ToJson`].
//!
//! The text is byte-for-byte what `serde_json`'s compact serializer writes for the same value
//! and its derived `Serialize`: `#[derive(ToJson)]` (crate `cachefold-derive`) reads the same
//! `#[serde(...)]` attributes, strings are escaped the same way, integers are plain decimal,
//! finite floats use `serde_json`'s own shortest form (`zmij`) and non-finite ones are `null`,
//! and `crate::json::Value` numbers keep their exact text (as `serde_json`'s do under
//! `arbitrary_precision`). In the wasm
//! module the generic serializer and every derived `Serialize` were about a tenth of the code.
//! Under `cfg(test)`, [`to_string`] checks every value it writes against `serde_json`.

use crate::json::{Map, Number, Value};
use std::collections::{BTreeMap, BTreeSet, VecDeque};

pub use cachefold_derive::ToJson;

/// A value the core can write as JSON text.
pub trait ToJson {
    /// Append the compact JSON text of `self` to `out`.
    fn write_json(&self, out: &mut String);
}

/// `s` as a JSON string literal, for quoting a value inside a message (instead of `{:?}`,
/// whose escaping code and Unicode tables the wasm module would carry for a handful of errors).
pub fn quoted(s: &str) -> String {
    let mut out = String::new();
    string(&mut out, s);
    out
}

/// The compact JSON text of `v`.
#[cfg(not(test))]
pub fn to_string<T: ToJson + ?Sized>(v: &T) -> String {
    text(&mut |out| v.write_json(out))
}

/// The text `write` appends to an empty string (not generic).
#[cfg(not(test))]
#[inline(never)]
fn text(write: &mut dyn FnMut(&mut String)) -> String {
    let mut out = String::new();
    write(&mut out);
    out
}

/// The compact JSON text of `v`, checked against `serde_json` (the oracle) on every call.
#[cfg(test)]
pub fn to_string<T: ToJson + serde::Serialize + ?Sized>(v: &T) -> String {
    let mut out = String::new();
    v.write_json(&mut out);
    assert_eq!(
        out,
        serde_json::to_string(v).unwrap(),
        "ToJson differs from serde_json"
    );
    out
}

/// A JSON object with these members in this order (what `json!({...})` builds, without going
/// through `serde::Serialize`).
pub fn object_of<const N: usize>(members: [(&str, Value); N]) -> Value {
    object_from(Vec::from(members))
}

/// [`object_of`] for any number of members (not generic: one copy of the loop).
#[inline(never)]
fn object_from(members: Vec<(&str, Value)>) -> Value {
    let mut m = Map::new();
    for (k, v) in members {
        m.insert(k.to_string(), v);
    }
    Value::Object(m)
}

/// `,` unless first, then `"k":` (`k` is a field name: nothing to escape).
#[inline(never)]
pub fn key(out: &mut String, first: bool, k: &str) {
    if !first {
        out.push(',');
    }
    string(out, k);
    out.push(':');
}

/// A JSON string, escaped as `serde_json` does: `"` and `\`, the short forms `\b \t \n \f \r`,
/// other control characters as `\u00XX` (lowercase hex); everything else verbatim.
#[inline(never)]
pub fn string(out: &mut String, s: &str) {
    out.reserve(s.len() + 2);
    out.push('"');
    let bytes = s.as_bytes();
    let mut start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        let esc: &str = match b {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            0x08 => "\\b",
            b'\t' => "\\t",
            b'\n' => "\\n",
            0x0c => "\\f",
            b'\r' => "\\r",
            0..=0x1f => "",
            _ => continue,
        };
        out.push_str(&s[start..i]);
        if esc.is_empty() {
            const HEX: &[u8; 16] = b"0123456789abcdef";
            out.push_str("\\u00");
            out.push(HEX[(b >> 4) as usize] as char);
            out.push(HEX[(b & 15) as usize] as char);
        } else {
            out.push_str(esc);
        }
        start = i + 1;
    }
    out.push_str(&s[start..]);
    out.push('"');
}

/// An unsigned integer in decimal.
#[inline(never)]
pub fn unsigned(out: &mut String, mut n: u64) {
    let mut buf = [0u8; 20];
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    // Only ASCII digits were written.
    out.push_str(std::str::from_utf8(&buf[i..]).unwrap_or_default());
}

/// A signed integer in decimal.
#[inline(never)]
pub fn signed(out: &mut String, n: i64) {
    if n < 0 {
        out.push('-');
    }
    unsigned(out, n.unsigned_abs());
}

/// A float: `serde_json`'s shortest round-trip form, `null` when not finite.
#[inline(never)]
pub fn float(out: &mut String, x: f64) {
    if x.is_finite() {
        out.push_str(zmij::Buffer::new().format_finite(x));
    } else {
        out.push_str("null");
    }
}

/// A JSON value exactly as `serde_json` writes it (object members in their stored order).
pub fn value(out: &mut String, v: &Value) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => b.write_json(out),
        Value::Number(n) => out.push_str(n.as_str()),
        Value::String(s) => string(out, s),
        Value::Array(a) => seq(out, a.iter(), value),
        Value::Object(m) => object(out, m),
    }
}

fn object(out: &mut String, m: &Map<String, Value>) {
    out.push('{');
    for (i, (k, v)) in m.iter().enumerate() {
        key(out, i == 0, k);
        value(out, v);
    }
    out.push('}');
}

/// `[a,b,…]` with `each` writing one element.
fn seq<I: Iterator>(out: &mut String, items: I, mut each: impl FnMut(&mut String, I::Item)) {
    out.push('[');
    for (i, x) in items.enumerate() {
        if i != 0 {
            out.push(',');
        }
        each(out, x);
    }
    out.push(']');
}

impl ToJson for Value {
    fn write_json(&self, out: &mut String) {
        value(out, self);
    }
}

impl ToJson for Map<String, Value> {
    fn write_json(&self, out: &mut String) {
        object(out, self);
    }
}

impl ToJson for bool {
    fn write_json(&self, out: &mut String) {
        out.push_str(if *self { "true" } else { "false" });
    }
}

macro_rules! ints {
    ($f:ident: $($t:ty),*) => {$(
        impl ToJson for $t {
            fn write_json(&self, out: &mut String) {
                $f(out, *self as _);
            }
        }
    )*};
}
ints!(unsigned: u8, u16, u32, u64, usize);
ints!(signed: i8, i16, i32, i64, isize);

impl ToJson for f64 {
    fn write_json(&self, out: &mut String) {
        float(out, *self);
    }
}

impl ToJson for str {
    fn write_json(&self, out: &mut String) {
        string(out, self);
    }
}

impl ToJson for String {
    fn write_json(&self, out: &mut String) {
        string(out, self);
    }
}

impl<T: ToJson + ?Sized> ToJson for &T {
    fn write_json(&self, out: &mut String) {
        (**self).write_json(out);
    }
}

impl<T: ToJson + ?Sized> ToJson for Box<T> {
    fn write_json(&self, out: &mut String) {
        (**self).write_json(out);
    }
}

impl<T: ToJson> ToJson for Option<T> {
    fn write_json(&self, out: &mut String) {
        match self {
            Some(v) => v.write_json(out),
            None => out.push_str("null"),
        }
    }
}

impl<T: ToJson> ToJson for [T] {
    fn write_json(&self, out: &mut String) {
        seq(out, self.iter(), |out, v| v.write_json(out));
    }
}

impl<T: ToJson, const N: usize> ToJson for [T; N] {
    fn write_json(&self, out: &mut String) {
        self.as_slice().write_json(out);
    }
}

impl<T: ToJson> ToJson for Vec<T> {
    fn write_json(&self, out: &mut String) {
        self.as_slice().write_json(out);
    }
}

impl<T: ToJson> ToJson for VecDeque<T> {
    fn write_json(&self, out: &mut String) {
        seq(out, self.iter(), |out, v| v.write_json(out));
    }
}

impl<V: ToJson> ToJson for BTreeMap<String, V> {
    fn write_json(&self, out: &mut String) {
        out.push('{');
        for (i, (k, v)) in self.iter().enumerate() {
            key(out, i == 0, k);
            v.write_json(out);
        }
        out.push('}');
    }
}

/// Integer keys are written as their decimal text, as `serde_json` writes them.
impl<V: ToJson> ToJson for BTreeMap<u32, V> {
    fn write_json(&self, out: &mut String) {
        out.push('{');
        for (i, (k, v)) in self.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push('"');
            unsigned(out, u64::from(*k));
            out.push_str("\":");
            v.write_json(out);
        }
        out.push('}');
    }
}

impl<T: ToJson> ToJson for BTreeSet<T> {
    fn write_json(&self, out: &mut String) {
        seq(out, self.iter(), |out, v| v.write_json(out));
    }
}

impl<A: ToJson, B: ToJson> ToJson for (A, B) {
    fn write_json(&self, out: &mut String) {
        out.push('[');
        self.0.write_json(out);
        out.push(',');
        self.1.write_json(out);
        out.push(']');
    }
}

impl Number {
    /// The shortest round-trip text of a finite `x`; `None` when not finite.
    pub fn from_f64(x: f64) -> Option<Number> {
        x.is_finite().then(|| {
            let mut n = String::new();
            float(&mut n, x);
            Number::from_text(n)
        })
    }
}

impl std::fmt::Display for Value {
    /// Compact JSON text.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut s = String::new();
        value(&mut s, self);
        f.write_str(&s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn same<T: ToJson + serde::Serialize + ?Sized>(v: &T) {
        to_string(v);
    }

    #[test]
    fn scalars_and_values_match_serde_json() {
        same(&[0u64, 1, 9, 10, 99, 100, u64::MAX][..]);
        same(&[i64::MIN, -1, 0, 1, i64::MAX][..]);
        same(
            &[
                0.0,
                -0.0,
                1.0,
                1.5,
                0.1,
                1e20,
                1e21,
                1e-7,
                123456.789,
                f64::MAX,
                f64::MIN_POSITIVE,
                5e-324,
            ][..],
        );
        same(&[f64::NAN, f64::INFINITY, f64::NEG_INFINITY][..]);
        same("a\"b\\c\u{0}\u{1f}\u{7f}\u{8}\t\n\u{c}\r/é語😀");
        let v: Value = serde_json::from_str(
            r#"{"z":1,"a":[1.0,2.50,-0,1e400,123456789012345678901234567890],"n":null,"t":true,"s":"x\ny","o":{}}"#,
        )
        .unwrap();
        same(&v);
        same(&(Some(3u32), None::<String>));
        same(&BTreeMap::from([
            ("b".to_string(), 1u8),
            ("a".to_string(), 2),
        ]));
        same(&VecDeque::from(vec![true, false]));
    }

    proptest! {
        #[test]
        fn strings_and_floats_match_serde_json(s in ".*", bits in any::<u64>(), x in any::<f64>()) {
            same(&s);
            same(&f64::from_bits(bits));
            same(&x);
        }
    }
}
