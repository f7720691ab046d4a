//! Bench messages: a host message plus what every strategy and metric needs about it,
//! computed once (content key, size estimate, anchors, recovery credit).

use super::anchors::{self, AnchorId, Interner};
use super::pack::Dict;
use super::render::{self, Slot};
use super::tokenizer::hash128;
use ::cachefold::message::{Message, Part, Role};
use serde_json::Value;
use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;

/// One message as the bench sees it.
///
/// In a long session's store ([`Store::packing`]) the message is kept as its compressed JSON
/// text and parsed when a strategy reads it ([`BMsg::msg`]): a parsed `serde_json::Value`
/// (ordered maps, numbers as text) weighs about three times its text, and a long replay holds
/// every message of the session for its whole run. Elsewhere it is kept parsed: reading it
/// back on every strategy access doubled the corpus bench's CPU time. What the replay loop
/// reads on every call (role, slot, size, anchors, the key of the rendered body) is computed
/// once, here.
#[derive(Debug)]
pub struct BMsg {
    /// Content key: 128-bit hash of the message JSON. Equal keys ⇒ equal rendered tokens.
    pub key: u128,
    /// The message made: parsed, or its JSON ([`Message::to_json`]) compressed.
    body: Body,
    /// Its role.
    role: Role,
    /// 128-bit hash of its rendered body ([`render::body`]): the key of its tokens among a
    /// session's pre-tokenized bodies.
    pub body_key: u128,
    /// Template slot (user block or assistant turn).
    pub slot: Slot,
    /// Characters OpenClaw-style estimators count (text, thinking, tool-call JSON, results).
    pub chars: u64,
    /// Anchors present in the rendered text (each once).
    pub anchors: Box<[AnchorId]>,
    /// Transcript index this message is (a version of), if any.
    pub origin: Option<usize>,
    /// Transcript indices whose full content one lookup recovers from this message (artifact
    /// stubs, fold records with recovery): the "recovery credit" of R.
    pub credit: Credit,
}

/// Recovery credit: transcript indices as sorted, disjoint, non-adjacent half-open ranges. A
/// fold record credits every message its fold stored, thousands of indices in one range; kept
/// index by index, the fold records a long session makes held its history many times over
/// (a 40,000-call replay: 34 MB of credit lists, growing faster than the session).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Credit(Box<[(u32, u32)]>);

impl Credit {
    /// The credit of the indices in `ranges` (half-open, in any order, overlapping or not).
    pub fn from_ranges(mut ranges: Vec<(u32, u32)>) -> Credit {
        ranges.retain(|(a, b)| a < b);
        ranges.sort_unstable();
        let mut out: Vec<(u32, u32)> = Vec::with_capacity(ranges.len());
        for (a, b) in ranges {
            match out.last_mut() {
                Some(last) if a <= last.1 => last.1 = last.1.max(b),
                _ => out.push((a, b)),
            }
        }
        Credit(out.into_boxed_slice())
    }

    /// No index credited.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The ranges, sorted, disjoint and non-adjacent.
    pub fn ranges(&self) -> &[(u32, u32)] {
        &self.0
    }

    /// Whether index `i` is credited.
    pub fn contains(&self, i: usize) -> bool {
        let Ok(i) = u32::try_from(i) else {
            return false;
        };
        let k = self.0.partition_point(|&(_, b)| b <= i);
        self.0.get(k).is_some_and(|&(a, _)| a <= i)
    }

    /// The credited indices, in order.
    pub fn indices(&self) -> impl Iterator<Item = usize> + '_ {
        self.0.iter().flat_map(|&(a, b)| (a as usize)..(b as usize))
    }
}

impl From<Vec<usize>> for Credit {
    fn from(indices: Vec<usize>) -> Credit {
        Credit::from_ranges(
            indices
                .into_iter()
                .filter_map(|i| u32::try_from(i).ok())
                .filter_map(|i| Some((i, i.checked_add(1)?)))
                .collect(),
        )
    }
}

impl BMsg {
    /// Role shortcut.
    pub fn role(&self) -> Role {
        self.role.clone()
    }

    /// The message (a packed one is parsed from its JSON on each call: keep the result while
    /// reading it).
    pub fn msg(&self) -> Cow<'_, Message> {
        match &self.body {
            Body::Parsed(m) => Cow::Borrowed(&**m),
            // The text is `to_json` of a message object, so it parses back to the same object.
            Body::Packed(p) => {
                Cow::Owned(Message::from_json(&p.text()).unwrap_or_else(|_| Message::empty()))
            }
        }
    }

    /// The message's JSON, as the host would pass it.
    pub fn json(&self) -> String {
        match &self.body {
            Body::Parsed(m) => m.to_json(),
            Body::Packed(p) => p.text(),
        }
    }

    /// chars/4, rounded up: OpenClaw's and pi's token estimate.
    pub fn est_tokens(&self) -> u64 {
        self.chars.div_ceil(4)
    }
}

/// Shared handle.
pub type M = Arc<BMsg>;

/// How a bench message holds its message.
#[derive(Debug)]
enum Body {
    // Boxed: a parsed message is several times a packed one's handle, and most of a long
    // session's messages are packed.
    Parsed(Box<Message>),
    Packed(Packed),
}

/// A message's JSON as a long session's bench message keeps it: zstd-compressed (level 1, one frame per
/// message) when that is smaller. Transcript JSON (English, code, logs) compresses several
/// times, and a session's messages are held for its whole replay; a message is read back only
/// when a strategy or the engine reads it, a few times per replay.
#[derive(Debug)]
enum Packed {
    Plain(Box<str>),
    Zstd {
        len: u32,
        bytes: Box<[u8]>,
        /// The session's dictionary it was made with ([`Store::dictionary`]).
        dict: Option<Arc<Dict>>,
    },
}

/// Messages shorter than this are kept as they are (a frame's header is not worth it).
const PACK_FROM: usize = 96;

impl Packed {
    fn new(text: String, dict: Option<&Arc<Dict>>) -> Packed {
        let Ok(len) = u32::try_from(text.len()) else {
            return Packed::Plain(text.into_boxed_str());
        };
        if text.len() < PACK_FROM {
            return Packed::Plain(text.into_boxed_str());
        }
        match super::pack::compress(dict.map(|d| &**d), text.as_bytes()) {
            Some(bytes) => Packed::Zstd {
                len,
                bytes,
                dict: dict.cloned(),
            },
            None => Packed::Plain(text.into_boxed_str()),
        }
    }

    fn text(&self) -> String {
        match self {
            Packed::Plain(s) => s.to_string(),
            Packed::Zstd { len, bytes, dict } => {
                { super::pack::decompress(dict.as_deref(), bytes, *len as usize) }
                    .and_then(|b| String::from_utf8(b).ok())
                    // Our own frame of valid UTF-8: it always reads back.
                    .unwrap_or_default()
            }
        }
    }
}

/// Characters an OpenClaw-style estimator counts for a message.
pub fn estimate_chars(m: &Message) -> u64 {
    let mut n = 0u64;
    for p in m.parts() {
        n += match p {
            Part::Text(t) | Part::Thinking(t) => t.chars().count() as u64,
            Part::ToolCall(c) => {
                (c.name.len() + serde_json::to_string(c.arguments).map_or(0, |s| s.chars().count()))
                    as u64
            }
            Part::Image { .. } => 4_800,
            Part::Other(_) => 0,
        };
    }
    if n == 0 {
        n = m.text().chars().count() as u64;
    }
    n
}

/// Text the model *wrote* in an assistant message: text parts and tool-call arguments (not
/// thinking), used for "needed" anchors.
pub fn output_text(m: &Message) -> String {
    let mut s = String::new();
    for p in m.parts() {
        match p {
            Part::Text(t) => {
                s.push_str(t);
                s.push('\n');
            }
            Part::ToolCall(c) => {
                s.push_str(&render::py_json(c.arguments));
                s.push('\n');
            }
            _ => {}
        }
    }
    s
}

/// Creates and interns bench messages for one replay job.
///
/// A job's store is [`Store::over`] its session's: it sees every message and anchor id of the
/// session's store and keeps only what the job adds (a deep copy per job held the session's
/// messages and anchors once more per running job: two thirds of a long replay's heap).
#[derive(Default, Clone)]
pub struct Store {
    /// Anchor interner (cloned from the session so ids match the session's needed sets); with
    /// a shared store below, only the anchors this store added.
    pub interner: Interner,
    by_key: HashMap<u128, M>,
    /// The store this one extends, read-only.
    shared: Option<Arc<Store>>,
    /// Messages made here are kept as compressed JSON ([`BMsg`]); a store over a shared one
    /// packs when that one does.
    packing: bool,
    /// The dictionary packed messages are made with (a store over a shared one uses its).
    dict: Option<Arc<Dict>>,
}

impl Store {
    /// A store whose interner continues `interner`.
    pub fn with_interner(interner: Interner) -> Store {
        Store {
            interner,
            ..Store::default()
        }
    }

    /// This store keeps the messages it makes as compressed JSON (`on`), or parsed.
    pub fn packing(mut self, on: bool) -> Store {
        self.packing = on;
        self
    }

    /// Compress the messages this store makes with `dict` (a dictionary of the session's
    /// messages' JSON: a message is small, and most of it is in others).
    pub fn dictionary(mut self, dict: Option<Arc<Dict>>) -> Store {
        self.dict = dict;
        self
    }

    /// True when this store keeps the messages it makes as compressed JSON.
    pub fn packs(&self) -> bool {
        self.packing
    }

    /// An empty store over `shared`: the same answers as a copy of `shared`, without copying
    /// it.
    pub fn over(shared: Arc<Store>) -> Store {
        Store {
            interner: Interner::after(shared.interner.len() as AnchorId),
            by_key: HashMap::new(),
            packing: shared.packing,
            dict: shared.dict.clone(),
            shared: Some(shared),
        }
    }

    /// Messages made and kept by this store (not counting the shared store's).
    pub fn len(&self) -> usize {
        self.by_key.len()
    }

    /// True when this store made no message (the shared store's are not counted).
    pub fn is_empty(&self) -> bool {
        self.by_key.is_empty()
    }

    /// The message made for `key`, if any (here or in the shared store).
    fn get(&self, key: u128) -> Option<&M> {
        self.by_key
            .get(&key)
            .or_else(|| self.shared.as_ref().and_then(|s| s.get(key)))
    }

    /// Id of anchor `a` (the shared store's when it has one).
    fn anchor_id(&mut self, a: &str) -> AnchorId {
        match self.shared.as_ref().and_then(|s| s.anchor(a)) {
            Some(i) => i,
            None => self.interner.id(a),
        }
    }

    /// Id of anchor `a` if it was seen (here or in the shared store).
    pub fn anchor(&self, a: &str) -> Option<AnchorId> {
        self.shared
            .as_ref()
            .and_then(|s| s.anchor(a))
            .or_else(|| self.interner.get(a))
    }

    /// Wrap a message (memoised by content key; the first origin/credit recorded wins).
    pub fn make(&mut self, msg: Message, origin: Option<usize>, credit: impl Into<Credit>) -> M {
        let json = msg.to_json();
        let key = hash128(json.as_bytes());
        if let Some(m) = self.get(key) {
            return m.clone();
        }
        let text = render::body(&msg);
        let ids: Box<[AnchorId]> = anchors::extract(&text)
            .iter()
            .map(|a| self.anchor_id(a))
            .collect();
        let m = Arc::new(BMsg {
            key,
            body_key: hash128(text.as_bytes()),
            role: msg.role(),
            slot: render::slot(&msg),
            chars: estimate_chars(&msg),
            anchors: ids,
            origin,
            credit: credit.into(),
            body: if self.packing {
                Body::Packed(Packed::new(json, self.dict.as_ref()))
            } else {
                Body::Parsed(Box::new(msg))
            },
        });
        self.by_key.insert(key, m.clone());
        m
    }

    /// Wrap a message the store does not keep: a summariser request's prompt or answer,
    /// simulated once and never part of a main request. It is not memoised (the next call
    /// with the same content makes another, equal message), adds no anchors and holds no
    /// recovery credit, so it is gone once its call is billed (kept parsed: it lives briefly).
    pub fn detached(msg: &Message) -> M {
        let json = msg.to_json();
        let text = render::body(msg);
        Arc::new(BMsg {
            key: hash128(json.as_bytes()),
            body_key: hash128(text.as_bytes()),
            role: msg.role(),
            slot: render::slot(msg),
            chars: estimate_chars(msg),
            anchors: Box::default(),
            origin: None,
            credit: Credit::default(),
            body: Body::Parsed(Box::new(msg.clone())),
        })
    }

    /// A detached user text message (a summariser prompt), see [`Store::detached`].
    pub fn detached_user_text(text: &str, ts: f64) -> M {
        Store::detached(&user_text_message(text, ts))
    }

    /// A detached assistant text message (a summariser's answer), see [`Store::detached`].
    pub fn detached_assistant_text(text: &str, ts: f64) -> M {
        Store::detached(&assistant_text_message(text, ts))
    }

    /// Wrap a JSON value; `None` when it is not an object (strategies only build objects).
    pub fn make_value(
        &mut self,
        v: Value,
        origin: Option<usize>,
        credit: impl Into<Credit>,
    ) -> Option<M> {
        let msg = Message::from_value(v).ok()?;
        Some(self.make(msg, origin, credit))
    }

    /// A user text message.
    pub fn user_text(&mut self, text: &str, ts: f64) -> Option<M> {
        Some(self.make(user_text_message(text, ts), None, Vec::new()))
    }

    /// An assistant text message.
    pub fn assistant_text(&mut self, text: &str, ts: f64) -> Option<M> {
        Some(self.make(assistant_text_message(text, ts), None, Vec::new()))
    }
}

fn user_text_message(text: &str, ts: f64) -> Message {
    Message::from_value(serde_json::json!({"role": "user", "content": [{"type": "text", "text": text}], "timestamp": ts as u64}))
        .unwrap_or_else(|_| Message::empty())
}

fn assistant_text_message(text: &str, ts: f64) -> Message {
    Message::from_value(serde_json::json!({"role": "assistant", "content": [{"type": "text", "text": text}], "stopReason": "stop", "timestamp": ts as u64}))
        .unwrap_or_else(|_| Message::empty())
}

/// Replace a tool result's text content by `text`, keeping every other field.
pub fn with_text(m: &Message, text: &str) -> Value {
    let mut v = m.raw().clone();
    if let Some(o) = v.as_object_mut() {
        o.insert(
            "content".into(),
            serde_json::json!([{"type": "text", "text": text}]),
        );
    }
    v
}

/// Drop thinking parts of an assistant message.
pub fn without_thinking(m: &Message) -> Value {
    let mut v = m.raw().clone();
    if let Some(Value::Array(parts)) = v.get_mut("content") {
        parts.retain(|p| p.get("type").and_then(Value::as_str) != Some("thinking"));
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(role: &str, t: &str) -> Value {
        serde_json::json!({"role": role, "content": [{"type": "text", "text": t}], "timestamp": 1})
    }

    proptest::proptest! {
        /// Credit kept as ranges answers as the set of indices it was made from: membership,
        /// the indices in order, and equality (two messages with the same credit are the same
        /// message for the per-call checks), whether made from indices or from ranges.
        #[test]
        fn credit_as_ranges_is_the_set_of_its_indices(
            indices in proptest::collection::vec(0usize..200, 0..40),
            ranges in proptest::collection::vec((0u32..200, 0u32..60), 0..6),
        ) {
            let set: std::collections::BTreeSet<usize> = indices.iter().copied().collect();
            let c = Credit::from(indices.clone());
            for i in 0..210 {
                proptest::prop_assert_eq!(c.contains(i), set.contains(&i), "index {}", i);
            }
            proptest::prop_assert_eq!(c.indices().collect::<Vec<_>>(), set.iter().copied().collect::<Vec<_>>());
            let mut shuffled = indices;
            shuffled.reverse();
            proptest::prop_assert_eq!(&Credit::from(shuffled), &c);
            let spans: Vec<(u32, u32)> = ranges.iter().map(|&(a, n)| (a, a + n)).collect();
            let expanded: Vec<usize> = spans.iter().flat_map(|&(a, b)| (a as usize)..(b as usize)).collect();
            let r = Credit::from_ranges(spans);
            proptest::prop_assert_eq!(&r, &Credit::from(expanded));
            for w in r.ranges().windows(2) {
                proptest::prop_assert!(w[0].0 < w[0].1 && w[0].1 < w[1].0, "sorted, disjoint, non-adjacent: {:?}", r);
            }
        }
    }

    /// A fold record's credit of a long range is one range, not one entry per index: a long
    /// session makes hundreds of fold records, each crediting thousands of messages.
    #[test]
    fn a_fold_records_credit_is_one_range() {
        let c = Credit::from_ranges(vec![(1_000, 9_000), (9_000, 20_000), (5, 6)]);
        assert_eq!(c.ranges(), &[(5, 6), (1_000, 20_000)]);
        assert!(c.contains(5) && !c.contains(6) && c.contains(1_000) && c.contains(19_999));
        assert!(!c.contains(20_000) && !c.contains(999));
        assert_eq!(std::mem::size_of_val(c.ranges()), 16);
    }

    /// A bench message reads back as the message made, parsed or packed (a long session's
    /// messages are held for its whole replay as compressed JSON); what the replay loop reads on
    /// every call is computed when it is made.
    #[test]
    fn a_message_reads_back_the_same_parsed_or_packed() {
        let v = serde_json::json!({"role": "toolResult", "toolCallId": "c1", "toolName": "read",
            "content": [{"type": "text", "text": "fn main() {}\nsrc/main.rs:1 parse_args"}],
            "isError": false, "n": 1.50, "big": 12345678901234567890u64, "timestamp": 7,
            "pad": "x".repeat(200)});
        let msg = Message::from_value(v).unwrap();
        for packing in [false, true] {
            let mut s = Store::default().packing(packing);
            let m = s.make(msg.clone(), Some(3), vec![3]);
            assert_eq!(matches!(m.body, Body::Packed(_)), packing);
            assert_eq!(m.json(), msg.to_json());
            assert_eq!(*m.msg(), msg);
            assert_eq!(m.msg().to_json(), m.json());
            assert_eq!(m.key, hash128(msg.to_json().as_bytes()));
            assert_eq!(m.body_key, hash128(render::body(&msg).as_bytes()));
            assert_eq!(m.role(), Role::ToolResult);
            assert_eq!(m.slot, render::slot(&msg));
            assert_eq!(m.chars, estimate_chars(&msg));
            assert!(!m.anchors.is_empty());
            // The same content is the same message; the store holds it once.
            let again = s.make(Message::from_json(&m.json()).unwrap(), None, vec![]);
            assert!(Arc::ptr_eq(&m, &again));
            assert_eq!(s.len(), 1);
            // A job's store over this one packs as it does.
            let over = Store::over(Arc::new(s));
            assert_eq!(over.packing, packing);
        }
    }

    /// A message's JSON is kept compressed when that is smaller, and reads back byte for byte;
    /// a short one is kept as it is.
    #[test]
    fn a_long_message_is_kept_compressed_and_reads_back() {
        let mut s = Store::default().packing(true);
        let long = format!("cargo test parse_args src/main.rs {}", "ok ".repeat(400));
        let m = s.user_text(&long, 1.0).unwrap();
        let Body::Packed(Packed::Zstd { len, bytes, .. }) = &m.body else {
            panic!("not compressed: {:?}", m.body);
        };
        assert_eq!(*len as usize, m.json().len());
        assert!(bytes.len() * 4 < m.json().len(), "{} bytes", bytes.len());
        assert_eq!(m.msg().text(), long);
        let short = s.user_text("ok", 1.0).unwrap();
        assert!(matches!(&short.body, Body::Packed(Packed::Plain(_))));
        assert_eq!(short.msg().text(), "ok");
        // Odd content (multi-byte characters, escapes) reads back the same.
        let odd = format!("é｜\"\\\n\u{1f600} {}", "«x» ".repeat(50));
        assert_eq!(s.user_text(&odd, 1.0).unwrap().msg().text(), odd);
    }

    /// With a dictionary of the session's messages, a packed message is smaller and reads back
    /// the same, in the session's store and in a job's store over it.
    #[test]
    fn a_message_packed_with_the_sessions_dictionary_reads_back() {
        let texts: Vec<String> = (0..200)
            .map(|i| {
                format!(
                    "read src/f{}.rs: fn parse_args() -> Result<Args> {{ ok }} {i}",
                    i % 17
                )
            })
            .collect();
        let jsons: Vec<String> = texts
            .iter()
            .map(|t| user_text_message(t, 1.0).to_json())
            .collect();
        let refs: Vec<&[u8]> = jsons.iter().map(|j| j.as_bytes()).collect();
        let dict = super::super::pack::Dict::sample(&refs);
        let frame = |m: &M| match &m.body {
            Body::Packed(Packed::Zstd { bytes, dict, .. }) => (bytes.len(), dict.is_some()),
            other => panic!("not compressed: {other:?}"),
        };
        let mut plain = Store::default().packing(true);
        let mut with = Store::default().packing(true).dictionary(dict);
        let text = format!("{} and more: {}", texts[150], "parse_args ".repeat(12));
        let a = plain.user_text(&text, 1.0).unwrap();
        let b = with.user_text(&text, 1.0).unwrap();
        assert_eq!((a.key, a.json()), (b.key, b.json()));
        assert_eq!(b.msg().text(), text);
        let ((na, da), (nb, db)) = (frame(&a), frame(&b));
        assert!(!da && db && nb < na, "{nb} vs {na} bytes");
        let mut over = Store::over(Arc::new(with));
        let c = over.user_text(&format!("{text} again"), 1.0).unwrap();
        assert!(frame(&c).1);
        assert_eq!(c.msg().text(), format!("{text} again"));
    }

    /// A detached message (a summariser request's prompt or answer) is the message the store
    /// would make for the same content, but the store does not keep it.
    #[test]
    fn a_detached_message_equals_a_made_one_and_is_not_kept() {
        let mut s = Store::default();
        let text = "<conversation>\n[User]: fix src/main.rs parse_args\n</conversation>";
        let d = Store::detached_user_text(text, 5.0);
        assert!(s.is_empty());
        let made = s.user_text(text, 5.0).unwrap();
        assert_eq!(s.len(), 1);
        assert_eq!(
            (d.key, d.body_key, d.json()),
            (made.key, made.body_key, made.json())
        );
        assert_eq!(
            (d.role(), d.slot, d.chars),
            (made.role(), made.slot, made.chars)
        );
        assert!(d.anchors.is_empty() && d.origin.is_none() && d.credit.is_empty());
        let a = Store::detached_assistant_text("## Goal\nfix it", 5.0);
        assert_eq!(a.key, s.assistant_text("## Goal\nfix it", 5.0).unwrap().key);
        assert_eq!(a.role(), Role::Assistant);
    }

    /// A job's store over its session's answers as a copy of the session's store did (the same
    /// messages, anchor ids and holders, in the same order), and the session's store is not
    /// copied: the job holds it, and adds only its own messages.
    #[test]
    fn a_store_over_a_shared_one_answers_as_its_copy() {
        let mut base = Store::default();
        let a = base.make_value(
            text("user", "fix src/main.rs parse_args 1234"),
            Some(0),
            vec![],
        );
        let b = base.make_value(text("toolResult", "src/lib.rs parse_args"), Some(1), vec![]);
        let shared = Arc::new(base);
        let mut copy = (*shared).clone();
        let mut over = Store::over(shared.clone());
        assert_eq!(Arc::strong_count(&shared), 2);
        for s in [&mut copy, &mut over] {
            // Known content: the session's message itself, first origin and credit kept.
            let again = s.make_value(
                text("user", "fix src/main.rs parse_args 1234"),
                None,
                vec![7],
            );
            assert!(Arc::ptr_eq(again.as_ref().unwrap(), a.as_ref().unwrap()));
        }
        let new_text = text(
            "assistant",
            "parse_args in src/new.rs and src/main.rs: new_fn_name",
        );
        let c1 = copy.make_value(new_text.clone(), None, vec![1]).unwrap();
        let c2 = over.make_value(new_text, None, vec![1]).unwrap();
        assert_eq!(c1.anchors, c2.anchors);
        assert!(c1.anchors.len() >= 3, "{:?}", c1.anchors);
        // The anchors the session's message shares with it have the session's ids.
        let a_ids = &a.as_ref().unwrap().anchors;
        for name in ["src/main.rs", "parse_args"] {
            let id = over.anchor(name).unwrap();
            assert!(a_ids.contains(&id) && c2.anchors.contains(&id), "{name}");
        }
        assert_eq!(copy.interner.len(), over.interner.len());
        assert_eq!(over.anchor("parse_args"), copy.interner.get("parse_args"));
        assert!(over.by_key.len() == 1 && over.get(b.unwrap().key).is_some());
    }
}
