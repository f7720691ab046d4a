//! Layer 2: the optional short host-LLM check of a turn (`{label, isNewTopic}`), as pure
//! functions. The shim makes the call in `maintain` (never in `assemble`) when
//! [`RateLimit::allow`] says so, then hands the reply to [`parse_answer`] and the result to
//! [`super::Segmenter::apply_llm`]. A reply that does not parse changes nothing.

use super::{terms, Topic, TopicId, TurnId};
use crate::digest::Digest;
use serde::{Deserialize, Serialize};

/// Chars of the user / assistant previews in the prompt.
pub const PREVIEW_CHARS: usize = 200;
/// Longest label kept.
pub const LABEL_CHARS: usize = 60;
/// Output cap for the call (tokens).
pub const MAX_TOKENS: u32 = 60;
const HOUR_MS: f64 = 3_600_000.0;

/// System prompt of the check.
pub const SYSTEM: &str = "You segment a coding-agent session into topics. A topic is one task \
or question the user is working on. Given the current topic and the newest turn, answer with \
one JSON object and nothing else: {\"label\": \"<3-8 word label of the newest turn's topic>\", \
\"isNewTopic\": <true if the newest turn starts a different task than the current topic, \
false if it continues it>}.";

/// What the check is asked about one turn.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Query {
    /// The turn checked (the newest).
    pub turn: TurnId,
    /// Its topic by layer 1.
    pub topic: TopicId,
    /// The topic's label so far (layer-2 label, else keywords).
    pub topic_label: String,
    /// The topic's first user text.
    pub topic_preview: String,
    /// The turn's user text, ≤ [`PREVIEW_CHARS`].
    pub user_preview: String,
    /// The turn's first assistant text, ≤ [`PREVIEW_CHARS`].
    pub assistant_preview: String,
    /// Tool names used in the turn (≤ 8).
    pub tools: Vec<String>,
}

impl Query {
    /// Build from the turn's digests and its layer-1 topic.
    pub fn new(turn: TurnId, topic: &Topic, digests: &[Digest]) -> Query {
        let user = digests
            .iter()
            .find(|d| d.role == "user")
            .map(|d| terms::digest_line(d, PREVIEW_CHARS))
            .unwrap_or_default();
        let assistant = digests
            .iter()
            .find(|d| d.role == "assistant" && !d.text.trim().is_empty())
            .map(|d| crate::text::clip(&crate::text::one_line(&d.text), PREVIEW_CHARS))
            .unwrap_or_default();
        let mut tools: Vec<String> = Vec::new();
        for d in digests.iter().filter(|d| d.role == "assistant") {
            if let Some(t) = &d.tool_name {
                if !tools.iter().any(|x| x == t) && tools.len() < 8 {
                    tools.push(t.to_string());
                }
            }
        }
        Query {
            turn,
            topic: topic.id,
            topic_label: topic.display_label(),
            topic_preview: topic.preview.clone(),
            user_preview: user,
            assistant_preview: assistant,
            tools,
        }
    }
}

/// The check's prompt: (system, user message).
pub fn prompt(q: &Query) -> (String, String) {
    let tools = if q.tools.is_empty() {
        "none".to_string()
    } else {
        q.tools.join(", ")
    };
    let user = format!(
        "Current topic {} ({}): started with \"{}\"\n\nNewest turn {}:\nuser: {}\nassistant: {}\ntools: {}\n\nJSON:",
        q.topic, q.topic_label, q.topic_preview, q.turn, q.user_preview, q.assistant_preview, tools
    );
    (SYSTEM.to_string(), user)
}

/// A parsed reply.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Answer {
    /// Topic label (cleaned, ≤ [`LABEL_CHARS`]).
    pub label: String,
    /// Whether the turn starts a new topic.
    pub is_new_topic: bool,
}

/// One line, no quotes or markup, ≤ [`LABEL_CHARS`] chars.
pub fn clean_label(s: &str) -> String {
    let mut kept = String::with_capacity(s.len());
    for c in s.chars() {
        if !matches!(c, '"' | '`' | '*' | '#' | '<' | '>') {
            kept.push(c);
        }
    }
    let s = kept;
    crate::text::clip(crate::text::one_line(&s).trim(), LABEL_CHARS)
}

fn as_bool(v: &serde_json::Value) -> Option<bool> {
    match v {
        serde_json::Value::Bool(b) => Some(*b),
        serde_json::Value::String(s) => match s.trim().to_ascii_lowercase().as_str() {
            "true" | "yes" | "new" => Some(true),
            "false" | "no" | "same" => Some(false),
            _ => None,
        },
        serde_json::Value::Number(n) => n.as_i64().map(|n| n != 0),
        _ => None,
    }
}

/// Parse a reply: the first `{…}` object in the text (code fences and prose around it are
/// ignored), keys `label` and `isNewTopic` (also `is_new_topic`, `newTopic`). `None` when
/// no object with a boolean verdict is found.
pub fn parse_answer(text: &str) -> Option<Answer> {
    let mut from = 0;
    while let Some(off) = text.get(from..)?.find('{') {
        let start = from + off;
        // Try every closing brace after it, shortest first (labels may contain braces).
        let mut search = start;
        while let Some(e) = text.get(search + 1..)?.find('}') {
            let end = search + 1 + e;
            if let Ok(v) = serde_json::from_str::<serde_json::Value>(&text[start..=end]) {
                let verdict = ["isNewTopic", "is_new_topic", "newTopic", "new_topic"]
                    .iter()
                    .find_map(|k| v.get(*k).and_then(as_bool));
                if let Some(is_new_topic) = verdict {
                    let label = v
                        .get("label")
                        .and_then(serde_json::Value::as_str)
                        .map(clean_label)
                        .unwrap_or_default();
                    return Some(Answer {
                        label,
                        is_new_topic,
                    });
                }
            }
            search = end;
        }
        from = start + 1;
    }
    None
}

/// Calls made in the last hour, for the per-hour cap (the same rule as fold summaries).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
#[serde(rename_all = "camelCase", default)]
pub struct RateLimit {
    /// Start times (ms) of recent calls, oldest first, at most the cap.
    pub calls: Vec<f64>,
}

impl RateLimit {
    /// Whether a call may start at `now_ms` under `max_per_hour` (0 = never).
    pub fn allow(&self, now_ms: f64, max_per_hour: u32) -> bool {
        now_ms.is_finite()
            && max_per_hour > 0
            && self.calls.iter().filter(|t| **t > now_ms - HOUR_MS).count() < max_per_hour as usize
    }
    /// Record a call at `now_ms` (keeps at most `max_per_hour` entries).
    pub fn record(&mut self, now_ms: f64, max_per_hour: u32) {
        self.calls.retain(|t| *t > now_ms - HOUR_MS);
        self.calls.push(now_ms);
        let cap = max_per_hour.max(1) as usize;
        if self.calls.len() > cap {
            let drop = self.calls.len() - cap;
            self.calls.drain(..drop.min(self.calls.len()));
        }
    }
}

/// Whether layer 1's decision is worth a check: a new topic (to label it) or a score within
/// `margin` of the threshold (uncertain).
pub fn worth_checking(d: &super::Decision, margin: f64) -> bool {
    d.new_topic || d.margin <= margin
}
