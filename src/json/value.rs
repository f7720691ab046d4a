//! The core's JSON value: what `serde_json::Value` is with `preserve_order` and
//! `arbitrary_precision` (the features the core was built with), without `serde_json`.
//!
//! * [`Map`] keeps members in insertion order; inserting an existing key replaces its value in
//!   place; [`Map::remove`] is `swap_remove` (the last member takes the removed one's place),
//!   as `serde_json`'s is under `preserve_order`; equality ignores member order.
//! * [`Number`] keeps the number's text (`1.50` stays `1.50`); integer accessors read it
//!   exactly, `as_f64` correctly rounded ([`crate::float`]). A number made from an `f64` is its
//!   shortest round-trip text (`serde_json`'s `zmij` form); a non-finite `f64` is `null`.
//!
//! `serde_json` brought a hash map (`indexmap` + `hashbrown` + SipHash) into the wasm module for
//! objects that hold a handful of members; these are vectors. Objects are searched linearly; a
//! parsed object with many members is de-duplicated by one sort (see [`Map::dedup_parsed`]).
//! The parser is [`super::parse`], the writer [`super::out`]. Natively (tests, bench), values
//! convert to and from `serde_json::Value` through their text.

// The variants and accessors are `serde_json`'s, by name and behaviour (`as_str`, `is_object`,
// `get`, …); each is one line and documented there.
#![allow(missing_docs)]

use std::fmt;

/// A JSON object: members in insertion order (its methods are in [`super::map`]).
#[derive(Clone, Debug)]
pub struct Map<K = String, V = Value> {
    pub(super) m: Vec<(K, V)>,
}

/// A JSON value.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum Value {
    #[default]
    Null,
    Bool(bool),
    Number(Number),
    String(String),
    Array(Vec<Value>),
    Object(Map<String, Value>),
}

/// A JSON number, kept as its text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Number {
    n: String,
}

static NULL: Value = Value::Null;

// ---- Number -----------------------------------------------------------------------------------

impl Number {
    /// A number from text the parser has checked (JSON number grammar).
    pub(crate) fn from_text(n: String) -> Number {
        Number { n }
    }

    /// The number's text.
    pub fn as_str(&self) -> &str {
        &self.n
    }

    /// The value when the text is an integer in `u64`'s range.
    pub fn as_u64(&self) -> Option<u64> {
        crate::text::parse_u64(&self.n)
    }

    /// The value when the text is an integer in `i64`'s range.
    pub fn as_i64(&self) -> Option<i64> {
        crate::text::parse_i64(&self.n)
    }

    /// The correctly rounded `f64` (None when out of range).
    pub fn as_f64(&self) -> Option<f64> {
        crate::float::parse(&self.n).filter(|x| x.is_finite())
    }

    pub fn is_u64(&self) -> bool {
        self.as_u64().is_some()
    }

    pub fn is_i64(&self) -> bool {
        self.as_i64().is_some()
    }

    /// Neither a `u64` nor an `i64` (`serde_json`'s reading under `arbitrary_precision`).
    pub fn is_f64(&self) -> bool {
        !self.is_u64() && !self.is_i64()
    }
}

impl fmt::Display for Number {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.n)
    }
}

macro_rules! number_from_int {
    ($($t:ty),*) => {$(
        impl From<$t> for Number {
            fn from(x: $t) -> Number {
                Number { n: x.to_string() }
            }
        }
        impl From<$t> for Value {
            fn from(x: $t) -> Value {
                Value::Number(Number::from(x))
            }
        }
        impl PartialEq<$t> for Value {
            fn eq(&self, other: &$t) -> bool {
                match self {
                    Value::Number(n) => n.as_str().parse::<$t>().ok() == Some(*other),
                    _ => false,
                }
            }
        }
    )*};
}
number_from_int!(u8, u16, u32, u64, usize, i8, i16, i32, i64, isize);

// ---- Value ------------------------------------------------------------------------------------

impl Value {
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Value::Bool(b) => Some(*b),
            _ => None,
        }
    }

    pub fn as_u64(&self) -> Option<u64> {
        match self {
            Value::Number(n) => n.as_u64(),
            _ => None,
        }
    }

    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Value::Number(n) => n.as_i64(),
            _ => None,
        }
    }

    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Value::Number(n) => n.as_f64(),
            _ => None,
        }
    }

    pub fn as_array(&self) -> Option<&Vec<Value>> {
        match self {
            Value::Array(a) => Some(a),
            _ => None,
        }
    }

    pub fn as_array_mut(&mut self) -> Option<&mut Vec<Value>> {
        match self {
            Value::Array(a) => Some(a),
            _ => None,
        }
    }

    pub fn as_object(&self) -> Option<&Map<String, Value>> {
        match self {
            Value::Object(m) => Some(m),
            _ => None,
        }
    }

    pub fn as_object_mut(&mut self) -> Option<&mut Map<String, Value>> {
        match self {
            Value::Object(m) => Some(m),
            _ => None,
        }
    }

    pub fn as_number(&self) -> Option<&Number> {
        match self {
            Value::Number(n) => Some(n),
            _ => None,
        }
    }

    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    pub fn is_boolean(&self) -> bool {
        matches!(self, Value::Bool(_))
    }

    pub fn is_number(&self) -> bool {
        matches!(self, Value::Number(_))
    }

    pub fn is_string(&self) -> bool {
        matches!(self, Value::String(_))
    }

    pub fn is_array(&self) -> bool {
        matches!(self, Value::Array(_))
    }

    pub fn is_object(&self) -> bool {
        matches!(self, Value::Object(_))
    }

    pub fn is_u64(&self) -> bool {
        self.as_u64().is_some()
    }

    pub fn is_i64(&self) -> bool {
        self.as_i64().is_some()
    }

    /// Member `key` of an object or element `i` of an array.
    pub fn get<I: ValueIndex>(&self, index: I) -> Option<&Value> {
        index.index_into(self)
    }

    pub fn get_mut<I: ValueIndex>(&mut self, index: I) -> Option<&mut Value> {
        index.index_into_mut(self)
    }

    /// The value at a JSON pointer (`/a/0/b`, `~1` for `/`, `~0` for `~`).
    pub fn pointer_mut(&mut self, p: &str) -> Option<&mut Value> {
        if p.is_empty() {
            return Some(self);
        }
        let mut v = self;
        for t in p.strip_prefix('/')?.split('/') {
            let t = t.replace("~1", "/").replace("~0", "~");
            v = match v {
                Value::Object(m) => m.get_mut(&t)?,
                Value::Array(a) => a.get_mut(t.parse::<usize>().ok()?)?,
                _ => return None,
            };
        }
        Some(v)
    }

    /// The value, leaving `null` in its place.
    pub fn take(&mut self) -> Value {
        std::mem::take(self)
    }
}

/// What indexes a [`Value`]: a member name or an array position.
pub trait ValueIndex {
    fn index_into<'v>(&self, v: &'v Value) -> Option<&'v Value>;
    fn index_into_mut<'v>(&self, v: &'v mut Value) -> Option<&'v mut Value>;
    /// `v[self] = …`: a `null` becomes an object, a missing member is added as `null`.
    fn index_or_insert<'v>(&self, v: &'v mut Value) -> &'v mut Value;
}

impl ValueIndex for str {
    fn index_into<'v>(&self, v: &'v Value) -> Option<&'v Value> {
        v.as_object().and_then(|m| m.get(self))
    }

    fn index_into_mut<'v>(&self, v: &'v mut Value) -> Option<&'v mut Value> {
        v.as_object_mut().and_then(|m| m.get_mut(self))
    }

    fn index_or_insert<'v>(&self, v: &'v mut Value) -> &'v mut Value {
        if v.is_null() {
            *v = Value::Object(Map::new());
        }
        match v {
            Value::Object(m) => m.entry_or_null(self),
            other => panic!("cannot index JSON {} with a string", super::kind(other)),
        }
    }
}

impl ValueIndex for String {
    fn index_into<'v>(&self, v: &'v Value) -> Option<&'v Value> {
        self.as_str().index_into(v)
    }

    fn index_into_mut<'v>(&self, v: &'v mut Value) -> Option<&'v mut Value> {
        self.as_str().index_into_mut(v)
    }

    fn index_or_insert<'v>(&self, v: &'v mut Value) -> &'v mut Value {
        self.as_str().index_or_insert(v)
    }
}

impl ValueIndex for usize {
    fn index_into<'v>(&self, v: &'v Value) -> Option<&'v Value> {
        v.as_array().and_then(|a| a.get(*self))
    }

    fn index_into_mut<'v>(&self, v: &'v mut Value) -> Option<&'v mut Value> {
        v.as_array_mut().and_then(|a| a.get_mut(*self))
    }

    fn index_or_insert<'v>(&self, v: &'v mut Value) -> &'v mut Value {
        let len = v.as_array().map_or(0, Vec::len);
        match v.as_array_mut().and_then(|a| a.get_mut(*self)) {
            Some(x) => x,
            None => panic!("cannot index JSON array of length {len} with {self}"),
        }
    }
}

impl<T: ValueIndex + ?Sized> ValueIndex for &T {
    fn index_into<'v>(&self, v: &'v Value) -> Option<&'v Value> {
        (**self).index_into(v)
    }

    fn index_into_mut<'v>(&self, v: &'v mut Value) -> Option<&'v mut Value> {
        (**self).index_into_mut(v)
    }

    fn index_or_insert<'v>(&self, v: &'v mut Value) -> &'v mut Value {
        (**self).index_or_insert(v)
    }
}

impl<I: ValueIndex> std::ops::Index<I> for Value {
    type Output = Value;

    /// The member or element, `null` when absent.
    fn index(&self, index: I) -> &Value {
        index.index_into(self).unwrap_or(&NULL)
    }
}

impl<I: ValueIndex> std::ops::IndexMut<I> for Value {
    fn index_mut(&mut self, index: I) -> &mut Value {
        index.index_or_insert(self)
    }
}

impl From<bool> for Value {
    fn from(b: bool) -> Value {
        Value::Bool(b)
    }
}

impl From<String> for Value {
    fn from(s: String) -> Value {
        Value::String(s)
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Value {
        Value::String(s.to_string())
    }
}

impl From<f64> for Value {
    fn from(x: f64) -> Value {
        Number::from_f64(x).map_or(Value::Null, Value::Number)
    }
}

impl From<Number> for Value {
    fn from(n: Number) -> Value {
        Value::Number(n)
    }
}

impl From<Map<String, Value>> for Value {
    fn from(m: Map<String, Value>) -> Value {
        Value::Object(m)
    }
}

impl<T: Into<Value>> From<Vec<T>> for Value {
    fn from(v: Vec<T>) -> Value {
        Value::Array(v.into_iter().map(Into::into).collect())
    }
}

impl<T: Into<Value>> From<Option<T>> for Value {
    fn from(v: Option<T>) -> Value {
        v.map_or(Value::Null, Into::into)
    }
}

impl<T: Into<Value>> FromIterator<T> for Value {
    fn from_iter<I: IntoIterator<Item = T>>(it: I) -> Value {
        Value::Array(it.into_iter().map(Into::into).collect())
    }
}

impl PartialEq<str> for Value {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == Some(other)
    }
}

impl PartialEq<&str> for Value {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == Some(*other)
    }
}

impl PartialEq<String> for Value {
    fn eq(&self, other: &String) -> bool {
        self.as_str() == Some(other.as_str())
    }
}

impl PartialEq<bool> for Value {
    fn eq(&self, other: &bool) -> bool {
        self.as_bool() == Some(*other)
    }
}

impl PartialEq<f64> for Value {
    fn eq(&self, other: &f64) -> bool {
        self.as_f64() == Some(*other)
    }
}

// ---- serde (derived output types and the native bench/tests) ----------------------------------

impl serde::Serialize for Value {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Value::Null => s.serialize_unit(),
            Value::Bool(b) => s.serialize_bool(*b),
            Value::Number(n) => n.serialize(s),
            Value::String(x) => s.serialize_str(x),
            Value::Array(a) => a.serialize(s),
            Value::Object(m) => m.serialize(s),
        }
    }
}

/// The struct name and field `serde_json` (`arbitrary_precision`) uses to carry a number's
/// exact text through `serde`.
const NUMBER_TOKEN: &str = "$serde_json::private::Number";

impl serde::Serialize for Number {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut st = s.serialize_struct(NUMBER_TOKEN, 1)?;
        st.serialize_field(NUMBER_TOKEN, &self.n)?;
        st.end()
    }
}

impl serde::Serialize for Map<String, Value> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(Some(self.len()))?;
        for (k, v) in self {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

impl<'de> serde::Deserialize<'de> for Value {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Value, D::Error> {
        d.deserialize_any(ValueVisitor)
    }
}

impl<'de> serde::Deserialize<'de> for Map<String, Value> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match Value::deserialize(d)? {
            Value::Object(m) => Ok(m),
            other => Err(serde::de::Error::custom(format!(
                "expected an object, got {}",
                super::kind(&other)
            ))),
        }
    }
}

struct ValueVisitor;

impl<'de> serde::de::Visitor<'de> for ValueVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, b: bool) -> Result<Value, E> {
        Ok(Value::Bool(b))
    }

    fn visit_i64<E>(self, x: i64) -> Result<Value, E> {
        Ok(x.into())
    }

    fn visit_u64<E>(self, x: u64) -> Result<Value, E> {
        Ok(x.into())
    }

    fn visit_f64<E>(self, x: f64) -> Result<Value, E> {
        Ok(x.into())
    }

    fn visit_str<E>(self, s: &str) -> Result<Value, E> {
        Ok(s.into())
    }

    fn visit_string<E>(self, s: String) -> Result<Value, E> {
        Ok(s.into())
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_some<D: serde::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        serde::Deserialize::deserialize(d)
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut a: A) -> Result<Value, A::Error> {
        let mut out = Vec::new();
        while let Some(x) = a.next_element()? {
            out.push(x);
        }
        Ok(Value::Array(out))
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut a: A) -> Result<Value, A::Error> {
        let mut out = Vec::new();
        while let Some(k) = a.next_key::<String>()? {
            if k == NUMBER_TOKEN && out.is_empty() {
                let n: String = a.next_value()?;
                return Ok(Value::Number(Number::from_text(n)));
            }
            out.push((k, a.next_value()?));
        }
        Ok(Value::Object(Map::from_parsed(out)))
    }
}

/// `json!` for tests and the native bench: `serde_json::json!`, converted.
#[cfg(not(target_arch = "wasm32"))]
#[macro_export]
macro_rules! json {
    ($($t:tt)+) => {
        $crate::json::Value::from(::serde_json::json!($($t)+))
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn map_order_replace_and_remove_as_serde_json() {
        let mut ours = Map::new();
        let mut theirs = serde_json::Map::new();
        for (k, v) in [("b", 1), ("a", 2), ("c", 3), ("a", 4), ("d", 5)] {
            assert_eq!(
                ours.insert(k.into(), v.into()).map(|v| v.to_string()),
                theirs.insert(k.into(), v.into()).map(|v| v.to_string())
            );
        }
        ours.remove("b");
        theirs.remove("b");
        ours.shift_remove("a");
        theirs.shift_remove("a");
        assert_eq!(
            Value::Object(ours).to_string(),
            serde_json::Value::Object(theirs).to_string()
        );
    }

    #[test]
    fn index_and_index_mut() {
        let mut v = Value::Null;
        v["a"] = 1.into();
        v["b"]["c"] = "x".into();
        assert_eq!(v.to_string(), r#"{"a":1,"b":{"c":"x"}}"#);
        assert_eq!(v["zz"], Value::Null);
        assert_eq!(v["b"]["c"], "x");
        assert_eq!(v[0], Value::Null);
        assert!(v.get("a").is_some() && v.get(0).is_none());
        assert_eq!(Value::from(1.5).to_string(), "1.5");
        assert_eq!(Value::from(f64::NAN), Value::Null);
        assert_eq!(Value::from(vec![1u32, 2]).to_string(), "[1,2]");
    }
}
