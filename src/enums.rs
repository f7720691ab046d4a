//! [`string_enum!`]: outcome kinds that travel as stable strings.

/// An enum of outcome kinds that travels as a stable string (JS, logs, journals): the enum,
/// `as_str`/`parse`, `Display`, `Serialize`/`Deserialize` as that string, and
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

    };
}
pub(crate) use string_enum;
