//! Hand-written JSON decoding: the one way structured input enters the core.
//!
//! Every structured value the core reads (snapshots, journal lines, the plugin config, the
//! engine's API inputs, lesson and search inputs) is parsed once into a [`crate::json::Value`]
//! (the parser the core needs for host messages anyway) and then taken apart by [`FromJson`].
//! Derived `serde::Deserialize` generates a parser per type and per input format; in the wasm
//! module that was about a third of the code. This is one small walk over a tree already
//! parsed, shared by every type.
//!
//! The rules are those of the derived decoders they replace, so every snapshot and journal
//! written before reads the same (the `oracle` tests compare both on generated states):
//! * fields are read by their exact JSON names; unknown fields are ignored, unless the type
//!   calls [`Fields::deny_unknown`] (the config);
//! * a missing field takes its declared default, `None` for an `Option`, and is otherwise an
//!   error naming the field;
//! * `null` is `None` for an `Option` and a type error for anything else;
//! * integers must fit their type exactly (no fraction, no sign for unsigned fields);
//! * an error names where it happened: `records[3].shape.role: expected a string, got number`.

pub mod map;
pub mod out;
#[cfg(test)]
mod out_oracle;
pub mod parse;
pub mod value;

pub use value::{Map, Number, Value};

use std::collections::{BTreeMap, VecDeque};
use std::fmt;

/// `v` as a [`Value`] (what `serde_json::to_value` gives), through its JSON text.
pub fn to_value<T: out::ToJson + serde::Serialize + ?Sized>(v: &T) -> Value {
    parse::from_str(&out::to_string(v)).unwrap_or(Value::Null)
}

/// Why a JSON value could not be decoded, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodeError {
    path: String,
    msg: String,
}

impl DecodeError {
    /// An error at the current value.
    #[inline(never)]
    pub fn new(msg: impl Into<String>) -> DecodeError {
        DecodeError {
            path: String::new(),
            msg: msg.into(),
        }
    }

    /// `expected <what>, got <kind of v>`.
    #[inline(never)]
    pub fn expected(what: &str, v: &Value) -> DecodeError {
        DecodeError::new(format!("expected {what}, got {}", kind(v)))
    }

    /// The same error one level up: inside field `key` of an object.
    #[inline(never)]
    pub fn at(mut self, key: &str) -> DecodeError {
        self.path = match self.path.as_bytes().first() {
            None => key.to_string(),
            Some(b'[') => format!("{key}{}", self.path),
            Some(_) => format!("{key}.{}", self.path),
        };
        self
    }

    /// The same error one level up: inside element `i` of an array.
    #[inline(never)]
    pub fn at_index(mut self, i: usize) -> DecodeError {
        self.path = match self.path.as_bytes().first() {
            None | Some(b'[') => format!("[{i}]{}", self.path),
            Some(_) => format!("[{i}].{}", self.path),
        };
        self
    }

    /// Dotted path of the value that failed (empty at the top).
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The message without the path.
    pub fn message(&self) -> &str {
        &self.msg
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            f.write_str(&self.msg)
        } else {
            write!(f, "{}: {}", self.path, self.msg)
        }
    }
}

impl std::error::Error for DecodeError {}

impl From<DecodeError> for crate::Error {
    fn from(e: DecodeError) -> crate::Error {
        crate::Error::Input(e.to_string())
    }
}

/// Result of decoding.
pub type DResult<T> = std::result::Result<T, DecodeError>;

/// JSON name of the kind of `v` (for messages).
pub fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// A type read from a parsed JSON value.
pub trait FromJson: Sized {
    /// Decode `v` (consumed: strings move out of the tree instead of being copied).
    fn from_json(v: Value) -> DResult<Self>;

    /// The value of an absent field; `None` makes absence an error (`Option` is `None`).
    fn absent() -> Option<Self> {
        None
    }

    /// Decode `v` over `self` (a struct field being filled, [`Slot::put`]). Structs of
    /// [`json_struct!`] fill their fields in place, so their decoding code exists once, not
    /// once more inside every slot that holds them.
    fn put_json(&mut self, v: Value) -> DResult<()> {
        *self = Self::from_json(v)?;
        Ok(())
    }
}

/// Parse JSON text and decode it (the parser's own errors keep their line and column).
pub fn from_str<T: FromJson>(text: &str) -> DResult<T> {
    T::from_json(parse(text)?)
}

/// Parse JSON text into a value (the parser's own errors keep their line and column).
#[inline(never)]
pub fn parse(text: &str) -> DResult<Value> {
    parse::from_str(text).map_err(|e| DecodeError::new(e.to_string()))
}

impl FromJson for Value {
    fn from_json(v: Value) -> DResult<Self> {
        Ok(v)
    }
}

impl FromJson for bool {
    fn from_json(v: Value) -> DResult<Self> {
        v.as_bool()
            .ok_or_else(|| DecodeError::expected("a boolean", &v))
    }
}

impl FromJson for String {
    fn from_json(v: Value) -> DResult<Self> {
        match v {
            Value::String(s) => Ok(s),
            v => Err(DecodeError::expected("a string", &v)),
        }
    }
}

impl FromJson for u64 {
    fn from_json(v: Value) -> DResult<Self> {
        match &v {
            Value::Number(n) => n.as_u64().ok_or_else(|| {
                DecodeError::new(format!("expected a non-negative integer, got {n}"))
            }),
            _ => Err(DecodeError::expected("a non-negative integer", &v)),
        }
    }
}

macro_rules! narrow_unsigned {
    ($($t:ty),*) => {$(
        impl FromJson for $t {
            fn from_json(v: Value) -> DResult<Self> {
                let n = u64::from_json(v)?;
                <$t>::try_from(n).map_err(|_| {
                    DecodeError::new(format!("integer {n} out of range for {}", stringify!($t)))
                })
            }
        }
    )*};
}
narrow_unsigned!(u8, u32, usize);

impl FromJson for i64 {
    fn from_json(v: Value) -> DResult<Self> {
        match &v {
            Value::Number(n) => n
                .as_i64()
                .ok_or_else(|| DecodeError::new(format!("expected an integer, got {n}"))),
            _ => Err(DecodeError::expected("an integer", &v)),
        }
    }
}

impl FromJson for f64 {
    fn from_json(v: Value) -> DResult<Self> {
        match &v {
            Value::Number(n) => n
                .as_f64()
                .ok_or_else(|| DecodeError::new(format!("number {n} out of range"))),
            _ => Err(DecodeError::expected("a number", &v)),
        }
    }
}

impl<T: FromJson> FromJson for Option<T> {
    fn from_json(v: Value) -> DResult<Self> {
        match v {
            Value::Null => Ok(None),
            v => T::from_json(v).map(Some),
        }
    }

    fn absent() -> Option<Self> {
        Some(None)
    }
}

impl<T: FromJson> FromJson for Box<T> {
    fn from_json(v: Value) -> DResult<Self> {
        T::from_json(v).map(Box::new)
    }
}

/// The elements of a JSON array.
pub fn array(v: Value) -> DResult<Vec<Value>> {
    match v {
        Value::Array(a) => Ok(a),
        v => Err(DecodeError::expected("an array", &v)),
    }
}

// Plain loops rather than iterator adapters: each element type instantiates this once, and
// `collect` over `Result` costs several times the code in the wasm module.
impl<T: FromJson> FromJson for Vec<T> {
    fn from_json(v: Value) -> DResult<Self> {
        let mut out = Vec::new();
        out.put_json(v)?;
        Ok(out)
    }

    /// In place, so a `Vec` field's slot and a top-level `Vec` share one copy of the loop.
    #[inline(never)]
    fn put_json(&mut self, v: Value) -> DResult<()> {
        self.clear();
        each(v, &mut |x| {
            self.push(T::from_json(x)?);
            Ok(())
        })
    }
}

/// Every element of the array `v` through `f`, errors placed at their index (not generic:
/// one copy of the loop for every element type).
#[inline(never)]
fn each(v: Value, f: &mut dyn FnMut(Value) -> DResult<()>) -> DResult<()> {
    for (i, x) in array(v)?.into_iter().enumerate() {
        f(x).map_err(|e| e.at_index(i))?;
    }
    Ok(())
}

/// Decode the object `v` into struct fields, in order: `keys[k]` is the JSON name of the field
/// `slots[k]` and whether it is required (a required field's absence is an error unless its
/// type has an absent value, `Option`). The names and flags are a constant table, so the code
/// [`json_struct!`] generates per field is one slot pointer. Unknown members are ignored.
#[inline(never)]
pub fn fill(v: Value, keys: &[(&str, bool)], slots: &mut [&mut dyn Slot]) -> DResult<()> {
    fill_fields(v, keys, slots).map(drop)
}

/// [`fill`], and an error for the first member that is not one of `keys` (serde's
/// `deny_unknown_fields`).
#[inline(never)]
pub fn fill_strict(v: Value, keys: &[(&str, bool)], slots: &mut [&mut dyn Slot]) -> DResult<()> {
    fill_fields(v, keys, slots)?.deny_unknown()
}

fn fill_fields(v: Value, keys: &[(&str, bool)], slots: &mut [&mut dyn Slot]) -> DResult<Fields> {
    debug_assert_eq!(keys.len(), slots.len(), "one name per slot");
    let mut f = Fields::new(v)?;
    for ((key, required), slot) in keys.iter().zip(slots.iter_mut()) {
        if *required {
            f.need(key, *slot)?;
        } else {
            f.set(key, *slot)?;
        }
    }
    Ok(f)
}

/// A struct field being decoded in place: [`Fields::set`] and [`Fields::need`] take it as a
/// trait object, so their code exists once.
pub trait Slot {
    /// Overwrite with the decoded `v`.
    fn put(&mut self, v: Value) -> DResult<()>;
    /// Overwrite with the type's absent value; `false` when absence is an error.
    fn put_absent(&mut self) -> bool;
}

impl<T: FromJson> Slot for T {
    fn put(&mut self, v: Value) -> DResult<()> {
        self.put_json(v)
    }

    fn put_absent(&mut self) -> bool {
        match T::absent() {
            Some(x) => {
                *self = x;
                true
            }
            None => false,
        }
    }
}

/// A slot decoded by a function of its own (a lenient number, a map with integer keys):
/// `Via(&mut field, decode)`.
pub struct Via<'a, T>(pub &'a mut T, pub fn(Value) -> DResult<T>);

impl<T> Slot for Via<'_, T> {
    fn put(&mut self, v: Value) -> DResult<()> {
        *self.0 = (self.1)(v)?;
        Ok(())
    }

    fn put_absent(&mut self) -> bool {
        false
    }
}

impl<T: FromJson + Ord> FromJson for std::collections::BTreeSet<T> {
    fn from_json(v: Value) -> DResult<Self> {
        Ok(Vec::<T>::from_json(v)?.into_iter().collect())
    }
}

impl<T: FromJson> FromJson for VecDeque<T> {
    fn from_json(v: Value) -> DResult<Self> {
        Vec::<T>::from_json(v).map(VecDeque::from)
    }
}

/// The two elements of `v`, which must be an array of two (not generic).
#[inline(never)]
fn pair(v: Value) -> DResult<[Value; 2]> {
    match v {
        Value::Array(mut a) if a.len() == 2 => {
            let y = a.pop().unwrap_or_default();
            let x = a.pop().unwrap_or_default();
            Ok([x, y])
        }
        Value::Array(a) => Err(DecodeError::new(format!(
            "expected an array of 2, got {} elements",
            a.len()
        ))),
        v => Err(DecodeError::expected("an array", &v)),
    }
}

impl<T: FromJson + Default> FromJson for [T; 2] {
    fn from_json(v: Value) -> DResult<Self> {
        let (x, y) = <(T, T)>::from_json(v)?;
        Ok([x, y])
    }
}

impl<A: FromJson + Default, B: FromJson + Default> FromJson for (A, B) {
    fn from_json(v: Value) -> DResult<Self> {
        let mut out = (A::default(), B::default());
        fill_pair(v, &mut out.0, &mut out.1)?;
        Ok(out)
    }
}

/// The two elements of the array `v` into `a` and `b` (not generic).
#[inline(never)]
fn fill_pair(v: Value, a: &mut dyn Slot, b: &mut dyn Slot) -> DResult<()> {
    let [x, y] = pair(v)?;
    a.put(x).map_err(|e| e.at_index(0))?;
    b.put(y).map_err(|e| e.at_index(1))
}

/// The members of a JSON object.
pub fn object(v: Value) -> DResult<Map<String, Value>> {
    match v {
        Value::Object(m) => Ok(m),
        v => Err(DecodeError::expected("an object", &v)),
    }
}

impl FromJson for Map<String, Value> {
    fn from_json(v: Value) -> DResult<Self> {
        object(v)
    }
}

impl<T: FromJson> FromJson for BTreeMap<String, T> {
    fn from_json(v: Value) -> DResult<Self> {
        let mut out = BTreeMap::new();
        for (k, x) in object(v)? {
            match T::from_json(x) {
                Ok(x) => {
                    out.insert(k, x);
                }
                Err(e) => return Err(e.at(&k)),
            }
        }
        Ok(out)
    }
}

#[inline(never)]
fn missing(key: &str) -> DecodeError {
    DecodeError::new(format!("missing field `{key}`"))
}

/// The fields of one JSON object being decoded into a struct; each field is taken out once.
pub struct Fields(Map<String, Value>);

impl Fields {
    /// The members of `v`, which must be an object.
    pub fn new(v: Value) -> DResult<Fields> {
        object(v).map(Fields)
    }

    /// Overwrite `slot` with field `key` when present (the slot holds the default).
    /// Not generic: the per-type code is [`Slot::put`] alone (the wasm module holds one copy
    /// of the lookup and error path instead of one per field type).
    #[inline(never)]
    pub fn set(&mut self, key: &str, slot: &mut dyn Slot) -> DResult<()> {
        match self.take(key) {
            Some(v) => slot.put(v).map_err(|e| e.at(key)),
            None => Ok(()),
        }
    }

    /// Overwrite `slot` with field `key`; when absent, the type's [`FromJson::absent`]
    /// value or an error.
    #[inline(never)]
    pub fn need(&mut self, key: &str, slot: &mut dyn Slot) -> DResult<()> {
        match self.take(key) {
            Some(v) => slot.put(v).map_err(|e| e.at(key)),
            None if slot.put_absent() => Ok(()),
            None => Err(missing(key)),
        }
    }

    /// Field `key` left as a raw value (absent → `None`).
    #[inline(never)]
    pub fn take(&mut self, key: &str) -> Option<Value> {
        self.0.remove(key)
    }

    /// An error naming the first field not taken (for types that reject unknown fields).
    pub fn deny_unknown(self) -> DResult<()> {
        match self.0.keys().next() {
            Some(k) => Err(DecodeError::new(format!("unknown field `{k}`"))),
            None => Ok(()),
        }
    }
}

/// `impl FromJson` for a struct with named fields, each read by its exact JSON name:
/// `field: "jsonName"` (required unless an `Option`) or `field: "jsonName" = default`
/// (optional: absent leaves the value the struct starts from, which must be that default).
/// With `default` before the braces, every field is optional and a missing one keeps the
/// struct's `Default` value (serde's container-level `#[serde(default)]`). Decoding starts
/// from `<T as Default>::default()`, or from the expression in parentheses after `from`, and
/// overwrites field by field through [`fill`]: the code per field is one slot pointer.
macro_rules! json_struct {
    ($ty:ident default { $($field:ident : $key:literal),* $(,)? }) => {
        impl $crate::json::FromJson for $ty {
            fn from_json(v: $crate::json::Value) -> $crate::json::DResult<Self> {
                let mut out = <$ty as Default>::default();
                $crate::json::FromJson::put_json(&mut out, v)?;
                Ok(out)
            }

            #[inline(never)]
            fn put_json(&mut self, v: $crate::json::Value) -> $crate::json::DResult<()> {
                *self = <$ty as Default>::default();
                const KEYS: &[(&str, bool)] = &[$(($key, false)),*];
                $crate::json::fill(v, KEYS, &mut [$(&mut self.$field as &mut dyn $crate::json::Slot),*])
            }
        }
    };
    ($ty:ident $(from ($blank:expr))? { $($field:ident : $key:literal $(= $default:ident)?),* $(,)? }) => {
        impl $crate::json::FromJson for $ty {
            fn from_json(v: $crate::json::Value) -> $crate::json::DResult<Self> {
                let mut out = $crate::json::json_struct!(@blank $ty $(, $blank)?);
                $crate::json::FromJson::put_json(&mut out, v)?;
                Ok(out)
            }

            #[inline(never)]
            fn put_json(&mut self, v: $crate::json::Value) -> $crate::json::DResult<()> {
                *self = $crate::json::json_struct!(@blank $ty $(, $blank)?);
                const KEYS: &[(&str, bool)] =
                    &[$(($key, $crate::json::json_struct!(@required $($default)?))),*];
                $crate::json::fill(v, KEYS, &mut [$(&mut self.$field as &mut dyn $crate::json::Slot),*])
            }
        }
    };
    (@blank $ty:ident) => { <$ty as Default>::default() };
    (@blank $ty:ident, $blank:expr) => { $blank };
    (@required) => { true };
    (@required $default:ident) => { false };
}
pub(crate) use json_struct;

/// An enum of outcome kinds that travels as a stable string (JS, logs, journals): the enum,
/// `as_str`/`parse`, `Display`, `Serialize`/`Deserialize` as that string, [`FromJson`], and
/// comparison with `&str` (so `kind == "moved_result"` keeps reading as before).
macro_rules! string_enum {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident { $($(#[$vmeta:meta])* $var:ident = $s:literal),* $(,)? }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        $vis enum $name { $($(#[$vmeta])* $var),* }

        impl $name {
            /// Every value, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$var),*];

            /// The stable string.
            pub fn as_str(self) -> &'static str {
                match self { $($name::$var => $s),* }
            }

            /// The value for its stable string.
            pub fn parse(s: &str) -> Option<$name> {
                match s { $($s => Some($name::$var),)* _ => None }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl PartialEq<str> for $name {
            fn eq(&self, other: &str) -> bool {
                self.as_str() == other
            }
        }

        impl PartialEq<&str> for $name {
            fn eq(&self, other: &&str) -> bool {
                self.as_str() == *other
            }
        }

        impl $crate::json::out::ToJson for $name {
            fn write_json(&self, out: &mut String) {
                $crate::json::out::string(out, self.as_str());
            }
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
                let s = <std::borrow::Cow<'de, str> as serde::Deserialize>::deserialize(d)?;
                $name::parse(&s).ok_or_else(|| {
                    serde::de::Error::unknown_variant(&s, &[$($s),*])
                })
            }
        }

        impl $crate::json::FromJson for $name {
            fn from_json(v: $crate::json::Value) -> $crate::json::DResult<Self> {
                let s = String::from_json(v)?;
                $name::parse(&s).ok_or_else(|| {
                    $crate::json::DecodeError::new(format!(
                        "unknown {} `{s}`, expected one of: {}",
                        stringify!($name),
                        &concat!($(", ", $s),*)[2..]
                    ))
                })
            }
        }
    };
}
pub(crate) use string_enum;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json;

    #[derive(Debug, PartialEq, Default)]
    struct Inner {
        a: u32,
        b: Option<String>,
    }
    json_struct!(Inner { a: "a", b: "b" });

    #[derive(Debug, PartialEq, Default)]
    struct Outer {
        list: Vec<Inner>,
        n: f64,
    }
    json_struct!(Outer default { list: "list", n: "n" });

    #[test]
    fn errors_name_the_path() {
        let e = Outer::from_json(json!({"list": [{"a": 1}, {"a": "x"}]})).unwrap_err();
        assert_eq!(
            e.to_string(),
            "list[1].a: expected a non-negative integer, got string"
        );
        let e = Outer::from_json(json!({"list": [{"b": null}]})).unwrap_err();
        assert_eq!(e.to_string(), "list[0]: missing field `a`");
        let e = Inner::from_json(json!({"a": 1.5})).unwrap_err();
        assert_eq!(e.path(), "a");
        let e = Inner::from_json(json!({"a": 4_294_967_296u64})).unwrap_err();
        assert!(e.message().contains("out of range"), "{e}");
    }

    #[test]
    fn defaults_options_and_unknown_fields() {
        assert_eq!(Outer::from_json(json!({})).unwrap(), Outer::default());
        let o = Outer::from_json(json!({"list": [{"a": 2, "zz": 1}], "n": 3})).unwrap();
        assert_eq!(o.list, vec![Inner { a: 2, b: None }]);
        assert_eq!(o.n, 3.0);
        assert!(Outer::from_json(json!({"list": null})).is_err());
        assert!(Outer::from_json(json!([])).is_err());
        let mut f = Fields::new(json!({"x": 1, "y": 2})).unwrap();
        assert!(f.take("x").is_some());
        assert_eq!(
            f.deny_unknown().unwrap_err().to_string(),
            "unknown field `y`"
        );
    }

    string_enum! {
        /// Test enum.
        enum Colour {
            /// Red.
            Red = "red",
            /// Dark blue.
            DarkBlue = "dark_blue",
        }
    }

    #[test]
    fn string_enums() {
        assert_eq!(
            Colour::from_json(json!("dark_blue")).unwrap(),
            Colour::DarkBlue
        );
        assert_eq!(serde_json::to_string(&Colour::Red).unwrap(), "\"red\"");
        assert_eq!(
            serde_json::from_str::<Colour>("\"red\"").unwrap(),
            Colour::Red
        );
        assert!(serde_json::from_str::<Colour>("\"blue\"").is_err());
        let e = Colour::from_json(json!("blue")).unwrap_err();
        assert!(e.to_string().contains("red, dark_blue"), "{e}");
        assert!(Colour::Red == "red");
        assert_eq!(Colour::ALL.len(), 2);
    }
}
