//! Decoding [`Fields`] from a message's JSON text (or a [`Value`] tree): serde visitors for the
//! members the core reads. A member name is a serde field identifier (no copy of the name); a
//! member of another JSON type than the one read is consumed and reads as absent, as
//! `Value::as_str`, `as_bool` or `as_i64` answer on a tree.

use super::{Content, Fields, PartBuf, Role, Usage};
use serde::de::{
    self, Deserialize, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor,
};
use serde_json::Value;

type Res<T, E> = std::result::Result<T, E>;

/// Consume the rest of a map.
fn drain_map<'de, A: MapAccess<'de>>(mut map: A) -> Res<(), A::Error> {
    while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
    Ok(())
}

/// Consume the rest of a list.
fn drain_seq<'de, A: SeqAccess<'de>>(mut seq: A) -> Res<(), A::Error> {
    while seq.next_element::<IgnoredAny>()?.is_some() {}
    Ok(())
}

/// A member name of a message (serde's field identifier: matched without copying the name).
#[derive(serde::Deserialize, Clone, Copy)]
#[serde(field_identifier, rename_all = "camelCase")]
enum Key {
    Role,
    Content,
    ToolCallId,
    ToolName,
    IsError,
    Summary,
    Output,
    Usage,
    Timestamp,
    StopReason,
    Model,
    CustomType,
    Command,
    ExitCode,
    Details,
    /// A member the core does not read.
    #[serde(other)]
    Other,
}

/// A member name of a content part.
#[derive(serde::Deserialize, Clone, Copy)]
#[serde(field_identifier, rename_all = "camelCase")]
enum PartKey {
    Type,
    Text,
    Thinking,
    Id,
    Name,
    Arguments,
    MimeType,
    Data,
    #[serde(other)]
    Other,
}

/// A member name of `usage`.
#[derive(serde::Deserialize)]
#[serde(field_identifier, rename_all = "camelCase")]
enum UsageKey {
    Input,
    CacheRead,
    CacheWrite,
    Output,
    #[serde(other)]
    Other,
}

/// A member name of `details`.
#[derive(serde::Deserialize)]
#[serde(field_identifier, rename_all = "camelCase")]
enum DetailsKey {
    ExitCode,
    #[serde(other)]
    Other,
}

/// What a member is read as.
#[derive(Clone, Copy)]
enum Read {
    /// Any value, as a [`Value`] tree (a string member: its `Value::String`, no copy).
    Tree,
    /// The length of a string, without copying it (an image's base64 data).
    Len,
    /// `content`: a string or a list of parts.
    Content,
    /// One content part.
    Part,
    /// `details`: its `exitCode` only.
    Exit,
    /// `usage`: its four counts only.
    Usage,
}

/// A member as read; `Absent` when its JSON type is not one it is read as (the value is then
/// consumed unread).
enum Got {
    Tree(Value),
    Len(usize),
    Content(Content),
    Part(PartBuf),
    Exit(Option<i64>),
    Usage(Usage),
    Absent,
}

impl Got {
    /// A member read as a string (what `Value::as_str` answers), without a copy.
    fn string(self) -> Option<String> {
        match self {
            Got::Tree(Value::String(s)) => Some(s),
            _ => None,
        }
    }

    fn tree(self) -> Value {
        match self {
            Got::Tree(v) => v,
            _ => Value::Null,
        }
    }
}

impl Fields {
    /// Member `k` as read.
    fn set(&mut self, k: Key, got: Got) {
        match k {
            Key::Role => self.role = Role::parse(got.string().as_deref().unwrap_or("")),
            Key::Content => {
                self.content = match got {
                    Got::Content(c) => c,
                    _ => Content::None,
                }
            }
            Key::ToolCallId => self.tool_call_id = got.string(),
            Key::ToolName => self.tool_name = got.string(),
            Key::IsError => self.is_error = got.tree() == Value::Bool(true),
            Key::Summary => self.summary = got.string(),
            Key::Output => self.output = got.string(),
            // Present with any value: a usage that is not an object counts nothing.
            Key::Usage => {
                self.usage = Some(match got {
                    Got::Usage(u) => u,
                    _ => Usage::default(),
                })
            }
            Key::Timestamp => {
                self.timestamp = match got.tree() {
                    Value::Number(n) => Some(n),
                    _ => None,
                }
            }
            Key::StopReason => self.stop_reason = got.string(),
            Key::Model => self.model = got.string(),
            Key::CustomType => self.custom_type = got.string(),
            Key::Command => self.command = got.string(),
            Key::ExitCode => self.exit_code = got.tree().as_i64(),
            Key::Details => {
                self.details_exit_code = match got {
                    Got::Exit(e) => e,
                    _ => None,
                }
            }
            Key::Other => {}
        }
    }
}

/// The members of a content part, as read so far (its `type` may come last).
#[derive(Default)]
struct PartMembers {
    ty: Option<String>,
    text: Option<String>,
    thinking: Option<String>,
    id: Option<String>,
    name: Option<String>,
    arguments: Option<Value>,
    mime_type: Option<String>,
    data_len: Option<usize>,
}

impl PartMembers {
    /// Member `k` as read.
    fn set(&mut self, k: PartKey, got: Got) {
        match k {
            PartKey::Type => self.ty = got.string(),
            PartKey::Text => self.text = got.string(),
            PartKey::Thinking => self.thinking = got.string(),
            PartKey::Id => self.id = got.string(),
            PartKey::Name => self.name = got.string(),
            PartKey::Arguments => self.arguments = Some(got.tree()),
            PartKey::MimeType => self.mime_type = got.string(),
            PartKey::Data => {
                self.data_len = match got {
                    Got::Len(n) => Some(n),
                    _ => None,
                }
            }
            PartKey::Other => {}
        }
    }

    fn finish(self) -> PartBuf {
        match self.ty.as_deref().unwrap_or("") {
            "text" => PartBuf::Text(self.text.unwrap_or_default()),
            "thinking" => PartBuf::Thinking(self.thinking.unwrap_or_default()),
            "toolCall" => PartBuf::ToolCall {
                id: self.id.unwrap_or_default(),
                name: self.name.unwrap_or_default(),
                arguments: self.arguments.unwrap_or(Value::Null),
            },
            "image" => PartBuf::Image {
                mime_type: self.mime_type.unwrap_or_default(),
                data_len: self.data_len.unwrap_or(0),
            },
            _ => PartBuf::Other(self.ty.unwrap_or_default()),
        }
    }
}

/// The one visitor of a message's members: a single visitor (one instance of the parser's
/// generic code for all of them) told by [`Read`] what to keep.
#[derive(Clone, Copy)]
struct Member(Read);

impl<'de> DeserializeSeed<'de> for Member {
    type Value = Got;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Res<Got, D::Error> {
        match self.0 {
            Read::Tree => Value::deserialize(d).map(Got::Tree),
            _ => d.deserialize_any(self),
        }
    }
}

/// The message object. Its own visitor, read with `deserialize_map`: under
/// `arbitrary_precision` `deserialize_any` hands a number to `visit_map`, which would compile
/// the members' loop a second time for the number's map.
struct MessageV;

impl<'de> Deserialize<'de> for Fields {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Res<Fields, D::Error> {
        d.deserialize_map(MessageV)
    }
}

impl<'de> Visitor<'de> for MessageV {
    type Value = Fields;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a message object")
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Res<Fields, A::Error> {
        Member::message(map)
    }
}

impl<'de> Visitor<'de> for Member {
    type Value = Got;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Res<Got, E> {
        Ok(Got::Absent)
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Res<Got, E> {
        Ok(Got::Absent)
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Res<Got, E> {
        Ok(Got::Absent)
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Res<Got, E> {
        Ok(Got::Absent)
    }
    fn visit_unit<E: de::Error>(self) -> Res<Got, E> {
        Ok(Got::Absent)
    }
    fn visit_str<E: de::Error>(self, s: &str) -> Res<Got, E> {
        Ok(match self.0 {
            Read::Len => Got::Len(s.len()),
            Read::Content => Got::Content(Content::Text(s.to_owned())),
            _ => Got::Absent,
        })
    }
    fn visit_string<E: de::Error>(self, s: String) -> Res<Got, E> {
        Ok(match self.0 {
            Read::Content => Got::Content(Content::Text(s)),
            _ => return self.visit_str(&s),
        })
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Res<Got, A::Error> {
        if !matches!(self.0, Read::Content) {
            return drain_seq(seq).map(|()| Got::Absent);
        }
        let mut parts = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        while let Some(p) = seq.next_element_seed(Member(Read::Part))? {
            parts.push(match p {
                Got::Part(p) => p,
                // A part that is not an object has no type.
                _ => PartBuf::Other(String::new()),
            });
        }
        Ok(Got::Content(Content::Parts(parts)))
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Res<Got, A::Error> {
        match self.0 {
            Read::Part => Member::part(map).map(Got::Part),
            Read::Exit => Member::exit(map).map(Got::Exit),
            Read::Usage => Member::usage(map).map(Got::Usage),
            _ => drain_map(map).map(|()| Got::Absent),
        }
    }
}

impl Member {
    fn message<'de, A: MapAccess<'de>>(mut map: A) -> Res<Fields, A::Error> {
        let mut f = Fields::default();
        while let Some(k) = map.next_key::<Key>()? {
            let read = match k {
                Key::Other => {
                    map.next_value::<IgnoredAny>()?;
                    continue;
                }
                Key::Content => Read::Content,
                Key::Usage => Read::Usage,
                Key::Details => Read::Exit,
                _ => Read::Tree,
            };
            f.set(k, map.next_value_seed(Member(read))?);
        }
        Ok(f)
    }

    fn part<'de, A: MapAccess<'de>>(mut map: A) -> Res<PartBuf, A::Error> {
        let mut p = PartMembers::default();
        while let Some(k) = map.next_key::<PartKey>()? {
            let read = match k {
                PartKey::Other => {
                    map.next_value::<IgnoredAny>()?;
                    continue;
                }
                PartKey::Data => Read::Len,
                _ => Read::Tree,
            };
            p.set(k, map.next_value_seed(Member(read))?);
        }
        Ok(p.finish())
    }

    /// `usage` as the host reports it: each count a non-negative number (anything else is 0);
    /// the rest (`totalTokens`, `cost`) skipped.
    fn usage<'de, A: MapAccess<'de>>(mut map: A) -> Res<Usage, A::Error> {
        let mut u = Usage::default();
        while let Some(k) = map.next_key::<UsageKey>()? {
            let count = match k {
                UsageKey::Input => &mut u.input,
                UsageKey::CacheRead => &mut u.cache_read,
                UsageKey::CacheWrite => &mut u.cache_write,
                UsageKey::Output => &mut u.output,
                UsageKey::Other => {
                    map.next_value::<IgnoredAny>()?;
                    continue;
                }
            };
            *count = map.next_value::<Value>()?.as_f64().unwrap_or(0.0).max(0.0) as u64;
        }
        Ok(u)
    }

    /// `details.exitCode` (an integer), the rest of `details` skipped.
    fn exit<'de, A: MapAccess<'de>>(mut map: A) -> Res<Option<i64>, A::Error> {
        let mut exit = None;
        while let Some(k) = map.next_key::<DetailsKey>()? {
            match k {
                DetailsKey::ExitCode => exit = map.next_value::<Value>()?.as_i64(),
                DetailsKey::Other => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(exit)
    }
}
