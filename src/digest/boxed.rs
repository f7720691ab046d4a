//! [`Str`]: the text members of a per-message record ([`super::Digest`], [`crate::pairing::Shape`],
//! [`crate::record::MsgRecord`]). A record is built once at ingest and never grows, and a long
//! session keeps one per message: a boxed `str` (pointer and length, 16 bytes) without a
//! `String`'s capacity word (24 bytes). Written and read as a JSON string, like `String`.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::borrow::Borrow;
use std::fmt;
use std::ops::Deref;

/// An immutable string of a record: `Box<str>` with the `String` API its readers use
/// (`as_str`, comparisons with `&str`/`String`, `Display`).
#[derive(Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Str(Box<str>);

impl Str {
    /// The text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// A list member of a record (`Box<[Str]>`) built from the `Vec<String>` it was collected in.
pub fn boxed_list(v: Vec<String>) -> Box<[Str]> {
    v.into_iter().map(Str::from).collect()
}

impl Deref for Str {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for Str {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl Borrow<str> for Str {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl From<String> for Str {
    fn from(s: String) -> Str {
        Str(s.into_boxed_str())
    }
}

impl From<&str> for Str {
    fn from(s: &str) -> Str {
        Str(s.into())
    }
}

impl From<Str> for String {
    fn from(s: Str) -> String {
        s.0.into_string()
    }
}

impl fmt::Display for Str {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&*self.0, f)
    }
}

impl fmt::Debug for Str {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.0, f)
    }
}

impl PartialEq<str> for Str {
    fn eq(&self, o: &str) -> bool {
        *self.0 == *o
    }
}

impl PartialEq<&str> for Str {
    fn eq(&self, o: &&str) -> bool {
        *self.0 == **o
    }
}

impl PartialEq<String> for Str {
    fn eq(&self, o: &String) -> bool {
        *self.0 == **o
    }
}

impl PartialEq<Str> for str {
    fn eq(&self, o: &Str) -> bool {
        *self == *o.0
    }
}

impl PartialEq<Str> for &str {
    fn eq(&self, o: &Str) -> bool {
        **self == *o.0
    }
}

impl PartialEq<Str> for String {
    fn eq(&self, o: &Str) -> bool {
        **self == *o.0
    }
}

impl Serialize for Str {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for Str {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Str, D::Error> {
        String::deserialize(d).map(Str::from)
    }
}
