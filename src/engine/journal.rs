//! Journal: the event types and their line format, and replay.
//!
//! One line per event, newline-terminated:
//! `{"v":1,"seq":N,"crc":"<8 hex>","e":{"<kind>":{…}}}` where `crc` is the first 8 hex digits of the
//! SHA-1 of the event JSON text exactly as it stands in the line (`e`'s value). `seq` counts
//! events from 1 for a session and continues across snapshots (a snapshot stores the `seq` it
//! includes).
//!
//! Replay ([`replay`]) is crash-tolerant: lines whose `seq` the state already includes are
//! skipped (a journal that was not truncated after a snapshot); the first line that is torn,
//! fails its checksum, does not parse, is out of sequence or is refused by
//! [`SessionState::apply`] ends the replay. Everything before it applies, so any byte-prefix of
//! a journal yields the state after some prefix of the event sequence. The bytes left unread
//! are reported, never an error.
//!
//! Write cost per turn is proportional to new content: an `ingest` event carries one bounded
//! record (hash, sizes, skeleton, ≤ 1,500-char digest) per new message; `out` carries only the
//! keys appended to the output; nothing re-serialises history.

pub use crate::engine::state::Event;
use crate::engine::state::SessionState;
use crate::error::Result;
use crate::fingerprint_hex;
use serde::de::{DeserializeSeed, EnumAccess, VariantAccess, Visitor};
use serde::{Deserialize, Serialize};

/// Journal line format version.
pub const JOURNAL_VERSION: u32 = 1;

/// Outcome of [`replay`].
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReplayReport {
    /// Events applied.
    pub applied: u64,
    /// Lines skipped because the snapshot already included them.
    pub skipped: u64,
    /// Bytes of the journal not applied (torn or corrupt tail).
    pub ignored_bytes: u64,
    /// Why replay stopped early (`torn`, `checksum`, `parse`, `sequence`, `refused: …`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stopped: Option<String>,
    /// `seq` of the state after replay.
    pub seq: u64,
}

const PREFIX: &str = "{\"v\":1,\"seq\":";

/// First 8 hex digits of the SHA-1 of `event_json`.
pub fn crc(event_json: &str) -> String {
    fingerprint_hex(event_json.as_bytes())
        .chars()
        .take(8)
        .collect()
}

/// Serialise one event as a journal line (with trailing newline).
pub fn encode_line(seq: u64, e: &Event) -> Result<String> {
    let mut line = String::new();
    write_line(&mut line, seq, e);
    Ok(line)
}

/// Append the journal line of one event to `out` (what [`encode_line`] returns).
pub fn write_line(out: &mut String, seq: u64, e: &Event) {
    frame(out, seq, &crate::to_json(e));
}

/// Append the journal line of event `seq` whose JSON text is `body` to `out`.
fn frame(out: &mut String, seq: u64, body: &str) {
    out.reserve(body.len() + 48);
    out.push_str(PREFIX);
    out.push_str(&seq.to_string());
    out.push_str(",\"crc\":\"");
    out.push_str(&crc(body));
    out.push_str("\",\"e\":");
    out.push_str(body);
    out.push_str("}\n");
}

/// Journal lines not yet taken, kept as `(seq, event JSON)` until the shim takes them: their
/// checksums and line framing are computed only then ([`Pending::take`]). A first ingest of a long
/// history journals one event per message, and the snapshot written right after it supersedes
/// them all ([`Pending::clear`]): those lines are never framed. [`Pending::len`] is the exact
/// UTF-8 length of the lines [`Pending::take`] returns.
///
/// With a limit ([`Pending::set_limit`]: the journal bytes the shim appends before it writes a
/// snapshot instead), the events after the lines pass it are not encoded at all: the shim
/// will write a snapshot, which holds them. [`Pending::superseded`] then says so, and
/// [`Pending::len`] is above the limit.
#[derive(Debug, Clone, Default)]
pub struct Pending {
    /// The event texts one after another (one buffer: a long first ingest allocates no string
    /// per event).
    bodies: String,
    /// `(seq, end of its text in bodies)` per event.
    events: Vec<(u64, usize)>,
    bytes: usize,
    /// Lines past this many bytes are not encoded (`None`: no limit).
    limit: Option<usize>,
    /// Events journaled past the limit (not encoded).
    skipped: u64,
}

/// Length of the line [`write_line`] makes for `seq` and an event text of `body_len` bytes.
fn line_len(seq: u64, body_len: usize) -> usize {
    let digits = seq.checked_ilog10().unwrap_or(0) as usize + 1;
    PREFIX.len() + digits + ",\"crc\":\"".len() + 8 + "\",\"e\":".len() + body_len + "}\n".len()
}

impl Pending {
    /// Encode no lines once the pending ones pass `bytes` (until [`Pending::take`] or
    /// [`Pending::clear`]).
    pub fn set_limit(&mut self, bytes: usize) {
        self.limit = Some(bytes);
    }

    /// Some event was not encoded (the lines passed the limit): [`Pending::take`] would return
    /// only the lines before it, so only a snapshot holds this call's events.
    pub fn superseded(&self) -> bool {
        self.skipped > 0
    }

    /// Journal `e` as event `seq`.
    pub fn push(&mut self, seq: u64, e: &Event) {
        if self.limit.is_some_and(|l| self.bytes > l) {
            self.skipped += 1;
            return;
        }
        let body = crate::to_json(e);
        self.bodies.push_str(&body);
        self.bytes += line_len(seq, body.len());
        self.events.push((seq, self.bodies.len()));
    }

    /// Forget the last pushed event (its event was refused).
    pub fn pop(&mut self) {
        if self.skipped > 0 {
            self.skipped -= 1;
            return;
        }
        if let Some((seq, end)) = self.events.pop() {
            let start = self.events.last().map_or(0, |e| e.1);
            self.bytes -= line_len(seq, end - start);
            self.bodies.truncate(start);
        }
    }

    /// UTF-8 length of the pending lines (when [`Pending::superseded`], of the encoded ones:
    /// above the limit).
    pub fn len(&self) -> usize {
        self.bytes
    }

    /// No line pending.
    pub fn is_empty(&self) -> bool {
        self.events.is_empty() && self.skipped == 0
    }

    /// Whether some pending line contains `needle` (in its event text).
    pub fn contains(&self, needle: &str) -> bool {
        self.texts().any(|(_, body)| body.contains(needle))
    }

    fn texts(&self) -> impl Iterator<Item = (u64, &str)> {
        let mut start = 0;
        self.events.iter().map(move |&(seq, end)| {
            let body = &self.bodies[start..end];
            start = end;
            (seq, body)
        })
    }

    /// The pending lines (newline-terminated), as [`write_line`] frames them; none left after.
    /// When [`Pending::superseded`], only the lines before the limit: a prefix of the events.
    pub fn take(&mut self) -> String {
        let mut out = String::with_capacity(self.bytes);
        for (seq, body) in self.texts() {
            frame(&mut out, seq, body);
        }
        self.clear();
        out
    }

    /// Discard the pending lines.
    pub fn clear(&mut self) {
        *self = Pending::default();
    }
}

/// Parse one line (without its newline) into `(seq, event)`.
pub fn decode_line(line: &str) -> std::result::Result<(u64, Event), &'static str> {
    let rest = line.strip_prefix(PREFIX).ok_or("parse")?;
    let comma = rest.find(',').ok_or("parse")?;
    let seq = rest
        .get(..comma)
        .ok_or("parse")?
        .parse::<u64>()
        .map_err(|_| "parse")?;
    let rest = rest.get(comma..).ok_or("parse")?;
    let rest = rest.strip_prefix(",\"crc\":\"").ok_or("parse")?;
    let sum = rest.get(..8).ok_or("parse")?;
    let rest = rest.get(8..).ok_or("parse")?;
    let body = rest.strip_prefix("\",\"e\":").ok_or("parse")?;
    let body = body.strip_suffix('}').ok_or("torn")?;
    if crc(body) != sum {
        return Err("checksum");
    }
    let e = parse_event(body).map_err(|_| "parse")?;
    Ok((seq, e))
}

/// The event of one line. Each kind's fields are decoded in a function of their own
/// ([`ByKind`]): replaying a journal then runs a few small functions per line instead of the
/// decoder of every kind, which V8 would compile again with its optimizing tier (in the
/// background, ~100 ms of CPU for a 36 KB function) while the restore runs.
fn parse_event(body: &str) -> serde_json::Result<Event> {
    let mut de = serde_json::Deserializer::from_str(body);
    let e = Event::deserialize(ByKind(&mut de))?;
    de.end()?;
    Ok(e)
}

/// A deserializer that decodes exactly as `D` does, except that each variant of an enum is
/// decoded by a function of its own: [`KindAccess::struct_variant`] and its siblings are never
/// inlined (nor by `wasm-opt`: `.ci/build` names them), so the caller stays small.
struct ByKind<D>(D);

impl<'de, D: serde::Deserializer<'de>> serde::Deserializer<'de> for ByKind<D> {
    type Error = D::Error;

    fn deserialize_any<V: Visitor<'de>>(self, v: V) -> std::result::Result<V::Value, D::Error> {
        self.0.deserialize_any(v)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        v: V,
    ) -> std::result::Result<V::Value, D::Error> {
        self.0.deserialize_enum(name, variants, ByKind(v))
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit unit_struct newtype_struct seq tuple tuple_struct map struct identifier
        ignored_any
    }
}

impl<'de, V: Visitor<'de>> Visitor<'de> for ByKind<V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        self.0.expecting(f)
    }

    fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> std::result::Result<V::Value, A::Error> {
        self.0.visit_enum(ByKind(data))
    }
}

impl<'de, A: EnumAccess<'de>> EnumAccess<'de> for ByKind<A> {
    type Error = A::Error;
    type Variant = KindAccess<A::Variant>;

    fn variant_seed<S: DeserializeSeed<'de>>(
        self,
        seed: S,
    ) -> std::result::Result<(S::Value, Self::Variant), A::Error> {
        self.0.variant_seed(seed).map(|(v, a)| (v, KindAccess(a)))
    }
}

/// The content of one enum variant (see [`ByKind`]).
struct KindAccess<A>(A);

impl<'de, A: VariantAccess<'de>> VariantAccess<'de> for KindAccess<A> {
    type Error = A::Error;

    fn unit_variant(self) -> std::result::Result<(), A::Error> {
        self.0.unit_variant()
    }

    #[inline(never)]
    fn newtype_variant_seed<S: DeserializeSeed<'de>>(
        self,
        seed: S,
    ) -> std::result::Result<S::Value, A::Error> {
        self.0.newtype_variant_seed(seed)
    }

    #[inline(never)]
    fn tuple_variant<V: Visitor<'de>>(
        self,
        len: usize,
        v: V,
    ) -> std::result::Result<V::Value, A::Error> {
        self.0.tuple_variant(len, v)
    }

    #[inline(never)]
    fn struct_variant<V: Visitor<'de>>(
        self,
        fields: &'static [&'static str],
        v: V,
    ) -> std::result::Result<V::Value, A::Error> {
        self.0.struct_variant(fields, v)
    }
}

/// Apply the journal `text` to `state` (see the module doc for the stopping rules).
pub fn replay(state: &mut SessionState, text: &str) -> ReplayReport {
    let mut rep = ReplayReport::default();
    let mut pos = 0usize;
    let bytes = text.len();
    let mut started = false;
    while pos < bytes {
        let (line, next) = match text[pos..].find('\n') {
            Some(k) => (&text[pos..pos + k], pos + k + 1),
            None => (&text[pos..], bytes),
        };
        if line.trim().is_empty() {
            pos = next;
            continue;
        }
        let (seq, e) = match decode_line(line) {
            Ok(x) => x,
            Err(why) => {
                rep.stopped = Some(
                    if next == bytes && !text.ends_with('\n') {
                        "torn"
                    } else {
                        why
                    }
                    .to_string(),
                );
                break;
            }
        };
        if !started && seq <= state.seq {
            rep.skipped += 1;
            pos = next;
            continue;
        }
        started = true;
        if seq != state.seq + 1 {
            rep.stopped = Some("sequence".to_string());
            break;
        }
        if let Err(err) = state.apply(e) {
            rep.stopped = Some(format!("refused: {err}"));
            break;
        }
        rep.applied += 1;
        pos = next;
    }
    rep.ignored_bytes = (bytes - pos.min(bytes)) as u64;
    rep.seq = state.seq;
    rep
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_round_trip_and_checksum() {
        let e = Event::ForceFold { on: true };
        let line = encode_line(7, &e).unwrap();
        assert!(line.starts_with("{\"v\":1,\"seq\":7,\"crc\":\""), "{line}");
        assert!(line.ends_with("}\n"));
        let v: serde_json::Value = serde_json::from_str(line.trim_end()).unwrap();
        assert_eq!(v["e"]["forceFold"]["on"], true);
        assert_eq!(
            v["crc"].as_str().unwrap(),
            crc(&serde_json::to_string(&v["e"]).unwrap())
        );
        assert_eq!(decode_line(line.trim_end()).unwrap(), (7, e));
        let bad = line.trim_end().replace("true", "false");
        assert_eq!(decode_line(&bad).unwrap_err(), "checksum");
        assert_eq!(decode_line(&line[..line.len() - 6]).unwrap_err(), "torn");
        // A cut that happens to end in `}` fails its checksum instead; replay() reports either
        // kind on an unterminated last line as "torn".
        assert_eq!(
            decode_line(&line[..line.len() - 3]).unwrap_err(),
            "checksum"
        );
    }

    /// One event of every kind, with their optional fields both present and absent.
    fn every_kind() -> Vec<Event> {
        use crate::engine::state::{
            ArtifactNote, CallArg, CallRow, DivergeAction, FoldReason, OutKey, Segment,
        };
        let seg = || Box::new(Segment::default());
        vec![
            Event::Env {
                model: Some("m".into()),
                spa: None,
            },
            Event::Diverge {
                at: 3,
                cause: "edit".into(),
                action: DivergeAction::Truncate,
            },
            Event::Ingest {
                i: 0,
                rec: Box::default(),
                calls: vec![],
            },
            Event::Ingest {
                i: 1,
                rec: Box::default(),
                calls: vec![CallArg::default()],
            },
            Event::Pin {
                len: 2,
                fp: "f".into(),
                json: vec!["{}".into()],
            },
            Event::Evict { len: 1, skip: 0 },
            Event::Fold {
                seg: seg(),
                reason: FoldReason::Priced,
                folded_w: 9,
                folded_tokens: 3,
                low: true,
            },
            Event::Condense { seg: seg() },
            Event::Out {
                keep: 1,
                add: vec![OutKey("k".into(), 4)],
                shared: 2,
                repairs: 0,
            },
            Event::Commit {
                key: "c".into(),
                rows: vec![CallRow::default()],
                calib: Some([10, 20]),
                calib_more: vec![[30, 40]],
                req_add: vec![OutKey("q".into(), 1)],
                cost_usd: 0.25,
                uncached_usd: 1.5,
                turn_w: 7,
            },
            Event::SummaryReq {
                id: "s".into(),
                from: 1,
                to: 2,
                at: 3.5,
            },
            Event::SummaryDone {
                id: "s".into(),
                ok: true,
                text: "t".into(),
            },
            Event::Artifact {
                note: ArtifactNote::default(),
            },
            Event::Limits {
                window: Some(1),
                budget: None,
            },
            Event::ForceFold { on: true },
            Event::Turn {
                from: 4,
                at: Some(1.0),
                terms: Box::default(),
            },
            Event::PinTurn { turn: 2 },
            Event::TopicReq {
                id: "r".into(),
                turn: 1,
                at: 2.0,
            },
            Event::TopicDone {
                id: "r".into(),
                ok: false,
                answer: None,
            },
        ]
    }

    #[test]
    fn events_decode_by_kind_exactly_as_serde_json_decodes_them() {
        let mut bodies: Vec<String> = every_kind().iter().map(crate::to_json).collect();
        // Forms the writer never makes, read the same way by both: the fields of a kind as an
        // array, an unknown kind, an unknown field, a second key, no key, not an object.
        bodies.extend(
            [
                r#"{"forceFold":[true]}"#,
                r#"{"env":["m",null]}"#,
                r#"{"nope":{}}"#,
                r#"{"forceFold":{"on":true,"extra":[1,{"x":2}]}}"#,
                r#"{"forceFold":{"on":true},"pinTurn":{"turn":1}}"#,
                r#"{"forceFold":{"on":true,"on":false}}"#,
                r#"{"forceFold":{}}"#,
                r#"{"forceFold":true}"#,
                r#"{"out":{"keep":1,"add":[["k",4,5]],"shared":2,"repairs":0}}"#,
                r#"{}"#,
                r#"[]"#,
                r#""forceFold""#,
                r#" {"forceFold" : {"on" : true} } "#,
            ]
            .map(String::from),
        );
        let mut kinds = 0;
        for body in &bodies {
            // Every cut of every body, too (a torn or corrupted line).
            for end in (0..=body.len()).filter(|&k| body.is_char_boundary(k)) {
                let text = &body[..end];
                let plain = serde_json::from_str::<Event>(text).map_err(|e| e.to_string());
                let by_kind = parse_event(text).map_err(|e| e.to_string());
                assert_eq!(by_kind, plain, "{text}");
                kinds += usize::from(end == body.len() && plain.is_ok());
            }
        }
        assert_eq!(
            kinds,
            every_kind().len() + 4,
            "the well-formed bodies decode"
        );
    }

    #[test]
    fn pending_lines_are_the_written_lines() {
        let events = [
            (1, Event::ForceFold { on: true }),
            (9, Event::ForceFold { on: false }),
            (10, Event::ForceFold { on: true }),
            (12_345, Event::ForceFold { on: false }),
        ];
        let mut p = Pending::default();
        let mut want = String::new();
        for (seq, e) in &events {
            p.push(*seq, e);
            write_line(&mut want, *seq, e);
            assert_eq!(p.len(), want.len(), "seq {seq}");
        }
        p.push(12_346, &Event::ForceFold { on: true });
        p.pop();
        assert_eq!(p.len(), want.len());
        assert!(p.contains("forceFold") && !p.contains("topicReq"));
        assert_eq!(p.take(), want);
        assert!(p.is_empty() && p.take().is_empty());
        assert_eq!(p.len(), 0);
        p.push(13, &Event::ForceFold { on: true });
        p.clear();
        assert!(p.is_empty() && p.take().is_empty());
    }

    #[test]
    fn lines_past_the_limit_are_not_encoded() {
        let e = Event::ForceFold { on: true };
        let one = encode_line(1, &e).unwrap().len();
        let mut p = Pending::default();
        p.set_limit(one);
        p.push(1, &e);
        assert!(!p.superseded(), "up to the limit, lines are encoded");
        p.push(2, &e);
        assert!(!p.superseded(), "the line that passes the limit is encoded");
        assert!(p.len() > one);
        p.push(3, &e);
        assert!(p.superseded() && !p.is_empty());
        let len = p.len();
        // A refused event past the limit is forgotten without touching the encoded lines.
        p.push(4, &e);
        p.pop();
        p.pop();
        assert!(!p.superseded());
        assert_eq!(p.len(), len);
        p.push(3, &e);
        assert!(p.superseded());
        let mut want = encode_line(1, &e).unwrap();
        want.push_str(&encode_line(2, &e).unwrap());
        assert_eq!(p.take(), want, "the encoded prefix");
        assert!(!p.superseded() && p.is_empty());
        // The limit ends with take (and clear): the next call's lines are all encoded.
        for s in 4..=6 {
            p.push(s, &e);
        }
        assert!(!p.superseded());
        assert_eq!(p.take().lines().count(), 3);
        p.set_limit(0);
        p.push(7, &e);
        p.push(8, &e);
        assert!(p.superseded());
        p.clear();
        assert!(!p.superseded() && p.is_empty());
    }

    #[test]
    fn replay_stops_at_gaps_and_skips_included_lines() {
        let mut text = String::new();
        for s in 1..=3 {
            text.push_str(&encode_line(s, &Event::ForceFold { on: s % 2 == 1 }).unwrap());
        }
        let mut st = SessionState::new("s");
        let r = replay(&mut st, &text);
        assert_eq!((r.applied, r.ignored_bytes, st.seq), (3, 0, 3));
        assert!(st.force_fold);
        // Already included: skipped, then continues.
        let more = encode_line(4, &Event::ForceFold { on: false }).unwrap();
        let r = replay(&mut st, &format!("{text}{more}"));
        assert_eq!((r.skipped, r.applied, st.seq), (3, 1, 4));
        // Gap: seq 6 after 4.
        let gap = encode_line(6, &Event::ForceFold { on: true }).unwrap();
        let r = replay(&mut st, &gap);
        assert_eq!(r.stopped.as_deref(), Some("sequence"));
        assert_eq!(r.ignored_bytes, gap.len() as u64);
        assert_eq!(st.seq, 4);
    }
}
