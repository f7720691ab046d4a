//! Bench messages: a host message plus what every strategy and metric needs about it,
//! computed once (content key, size estimate, anchors, recovery credit).

use super::anchors::{self, AnchorId, Interner};
use super::render::{self, Slot};
use super::tokenizer::hash128;
use ::cachefold::message::{Message, Part, Role};
use serde_json::Value;
use std::collections::HashMap;
use std::sync::Arc;

/// One message as the bench sees it.
#[derive(Debug)]
pub struct BMsg {
    /// Content key: 128-bit hash of the message JSON. Equal keys ⇒ equal rendered tokens.
    pub key: u128,
    /// The host-shaped message.
    pub msg: Message,
    /// Template slot (user block or assistant turn).
    pub slot: Slot,
    /// Characters OpenClaw-style estimators count (text, thinking, tool-call JSON, results).
    pub chars: u64,
    /// Anchors present in the rendered text.
    pub anchors: Vec<AnchorId>,
    /// Transcript index this message is (a version of), if any.
    pub origin: Option<usize>,
    /// Transcript indices whose full content one lookup recovers from this message (artifact
    /// stubs, fold records with recovery): the "recovery credit" of R.
    pub credit: Vec<usize>,
}

impl BMsg {
    /// Role shortcut.
    pub fn role(&self) -> Role {
        self.msg.role()
    }

    /// chars/4, rounded up: OpenClaw's and pi's token estimate.
    pub fn est_tokens(&self) -> u64 {
        self.chars.div_ceil(4)
    }
}

/// Shared handle.
pub type M = Arc<BMsg>;

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
/// A job's store is [`Store::over`] its session's: it sees every message, anchor id and
/// holder of the session's store and keeps only what the job adds (a deep copy per job held
/// the session's messages, anchors and holders once more per running job: two thirds of a
/// long replay's heap).
#[derive(Default, Clone)]
pub struct Store {
    /// Anchor interner (cloned from the session so ids match the session's needed sets); with
    /// a shared store below, only the anchors this store added.
    pub interner: Interner,
    by_key: HashMap<u128, M>,
    /// Anchor → keys of messages containing it (added here, after the shared store's).
    inv: HashMap<AnchorId, Vec<u128>>,
    /// The store this one extends, read-only.
    shared: Option<Arc<Store>>,
}

impl Store {
    /// A store whose interner continues `interner`.
    pub fn with_interner(interner: Interner) -> Store {
        Store {
            interner,
            ..Store::default()
        }
    }

    /// An empty store over `shared`: the same answers as a copy of `shared`, without copying
    /// it.
    pub fn over(shared: Arc<Store>) -> Store {
        Store {
            interner: Interner::after(shared.interner.len() as AnchorId),
            by_key: HashMap::new(),
            inv: HashMap::new(),
            shared: Some(shared),
        }
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
    pub fn make(&mut self, msg: Message, origin: Option<usize>, credit: Vec<usize>) -> M {
        let json = msg.to_json();
        let key = hash128(json.as_bytes());
        if let Some(m) = self.get(key) {
            return m.clone();
        }
        let text = render::body(&msg);
        let ids: Vec<AnchorId> = anchors::extract(&text)
            .iter()
            .map(|a| self.anchor_id(a))
            .collect();
        for a in &ids {
            self.inv.entry(*a).or_default().push(key);
        }
        let m = Arc::new(BMsg {
            key,
            slot: render::slot(&msg),
            chars: estimate_chars(&msg),
            anchors: ids,
            origin,
            credit,
            msg,
        });
        self.by_key.insert(key, m.clone());
        m
    }

    /// Wrap a JSON value; `None` when it is not an object (strategies only build objects).
    pub fn make_value(&mut self, v: Value, origin: Option<usize>, credit: Vec<usize>) -> Option<M> {
        let msg = Message::from_value(v).ok()?;
        Some(self.make(msg, origin, credit))
    }

    /// A user text message.
    pub fn user_text(&mut self, text: &str, ts: f64) -> Option<M> {
        self.make_value(
            serde_json::json!({"role": "user", "content": [{"type": "text", "text": text}], "timestamp": ts as u64}),
            None,
            Vec::new(),
        )
    }

    /// An assistant text message.
    pub fn assistant_text(&mut self, text: &str, ts: f64) -> Option<M> {
        self.make_value(
            serde_json::json!({"role": "assistant", "content": [{"type": "text", "text": text}], "stopReason": "stop", "timestamp": ts as u64}),
            None,
            Vec::new(),
        )
    }

    /// Keys of messages containing anchor `a`, in the order they were made (the shared
    /// store's first).
    pub fn holders(&self, a: AnchorId) -> impl Iterator<Item = &u128> {
        let shared = self.shared.as_ref().map(|s| s.holders_here(a));
        shared.into_iter().flatten().chain(self.holders_here(a))
    }

    fn holders_here(&self, a: AnchorId) -> std::slice::Iter<'_, u128> {
        self.inv.get(&a).map_or(&[][..], Vec::as_slice).iter()
    }
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
        for id in c1.anchors.iter().chain(&a.as_ref().unwrap().anchors) {
            let h1: Vec<u128> = copy.holders(*id).copied().collect();
            let h2: Vec<u128> = over.holders(*id).copied().collect();
            assert_eq!(h1, h2, "anchor {id}");
            assert!(!h1.is_empty());
        }
        assert_eq!(copy.interner.len(), over.interner.len());
        assert_eq!(over.anchor("parse_args"), copy.interner.get("parse_args"));
        assert!(over.by_key.len() == 1 && over.get(b.unwrap().key).is_some());
    }
}
