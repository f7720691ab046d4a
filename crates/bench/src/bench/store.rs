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
#[derive(Default, Clone)]
pub struct Store {
    /// Anchor interner (cloned from the session so ids match the session's needed sets).
    pub interner: Interner,
    by_key: HashMap<u128, M>,
    /// Anchor → keys of messages containing it.
    inv: HashMap<AnchorId, Vec<u128>>,
}

impl Store {
    /// A store whose interner continues `interner`.
    pub fn with_interner(interner: Interner) -> Store {
        Store {
            interner,
            ..Store::default()
        }
    }

    /// Wrap a message (memoised by content key; the first origin/credit recorded wins).
    pub fn make(&mut self, msg: Message, origin: Option<usize>, credit: Vec<usize>) -> M {
        let json = msg.to_json();
        let key = hash128(json.as_bytes());
        if let Some(m) = self.by_key.get(&key) {
            return m.clone();
        }
        let text = render::body(&msg);
        let ids: Vec<AnchorId> = anchors::extract(&text)
            .iter()
            .map(|a| self.interner.id(a))
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

    /// Keys of messages containing anchor `a`.
    pub fn holders(&self, a: AnchorId) -> &[u128] {
        self.inv.get(&a).map_or(&[], Vec::as_slice)
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
