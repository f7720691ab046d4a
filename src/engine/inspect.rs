//! The topic tools' answers, rendered here so the shim stays thin: `cachefold_topics` (topics
//! with turn ranges, tokens, folded/live), `cachefold_preview` (what the model sees now, part
//! by part), `cachefold_recover` by turn or topic id (which stored lines hold the turns);
//! `cachefold_pin` changes the state and is in `topics.rs`. Every answer is
//! `{text, details}`; the text is bounded.

use super::state::SessionState;
use crate::config::Config;
use crate::error::{Error, Result};
use crate::topics::{Topic, TopicId, TurnId};
use crate::{fold, object_of};
use serde_json::Value;

/// Topics listed by `cachefold_topics` at most (the most recent ones).
pub const MAX_TOPICS_LISTED: usize = 60;

/// Where a record is for the model right now.
fn place(st: &SessionState, r: u32) -> &'static str {
    if r < st.head_len {
        "head"
    } else if r < st.live_from {
        "folded"
    } else {
        "live"
    }
}

/// A read-only view of a session, its state and config, for the answers that only read them
/// (the topic tools here, the stats in `stats.rs`, the prompt's measures the fold rules start
/// from in `limits.rs`). [`super::Session::view`] makes one; it can neither change the state
/// nor journal anything.
#[derive(Debug, Clone, Copy)]
pub struct View<'a> {
    pub(super) st: &'a SessionState,
    pub(super) cfg: &'a Config,
}

impl View<'_> {
    fn topic_state_word(&self, a: u32, b: u32) -> &'static str {
        let (pa, pb) = (
            place(self.st, a),
            place(self.st, b.saturating_sub(1).max(a)),
        );
        if pa == pb {
            pa
        } else if pa == "folded" || pb == "folded" {
            "partly folded"
        } else {
            "live"
        }
    }

    /// `cachefold_topics`: every topic (the last `MAX_TOPICS_LISTED`) with its turn range,
    /// estimated tokens and whether it is folded or live.
    pub fn topics_view(&self) -> Value {
        let ts = &self.st.topics;
        let end = self.st.recorded();
        let all = ts.seg.topics();
        if all.is_empty() {
            let why = if self.cfg.topics.enabled {
                "no turn has been committed yet"
            } else {
                "topics are off (config topics.enabled)"
            };
            return object_of([
                (
                    "text",
                    Value::from(format!("[cachefold_topics] No topics: {why}.")),
                ),
                (
                    "details",
                    object_of([
                        ("topics", Value::Array(Vec::new())),
                        ("turns", Value::from(0)),
                    ]),
                ),
            ]);
        }
        let skip = all.len().saturating_sub(MAX_TOPICS_LISTED);
        let mut lines = vec![format!(
            "[cachefold_topics] {} topics over {} turns (turns ≤ t{} are frozen). Recover a topic or turn with cachefold_recover {{\"id\":\"T<n>\"}} / {{\"id\":\"t<k>\"}}.",
            all.len(),
            ts.seg.turn_count(),
            ts.seg.frozen_through()
        )];
        if skip > 0 {
            lines.push(format!("({skip} older topics not listed)"));
        }
        let mut details = Vec::new();
        for t in &all[skip..] {
            let (a, b) = ts.topic_range(t, end).unwrap_or((end, end));
            let tokens = self.st.tokens(fold::span_w(&self.st.records, a, b));
            let state = self.topic_state_word(a, b);
            let mut pins: Vec<String> = Vec::new();
            for k in &ts.pins {
                if *k >= t.first.0 && *k <= t.last.0 {
                    pins.push(format!("t{k}"));
                }
            }
            lines.push(format!(
                "{} {}–{} ({} turns, ~{} tokens, {}{}): {}",
                t.id,
                t.first,
                t.last,
                t.turns(),
                tokens,
                state,
                if pins.is_empty() {
                    String::new()
                } else {
                    format!(", pinned {}", pins.join(" "))
                },
                crate::text::clip(&t.display_label(), 100)
            ));
            details.push(object_of([
                ("id", Value::from(t.id.to_string())),
                ("first", Value::from(t.first.to_string())),
                ("last", Value::from(t.last.to_string())),
                ("turns", Value::from(t.turns())),
                ("tokens", Value::from(tokens)),
                ("state", Value::from(state)),
                ("label", Value::from(t.display_label())),
                ("llmLabel", Value::from(t.label.is_some())),
                ("pinned", Value::from(pins)),
            ]));
        }
        object_of([
            ("text", Value::from(lines.join("\n"))),
            (
                "details",
                object_of([
                    ("topics", Value::Array(details)),
                    ("turns", Value::from(ts.seg.turn_count())),
                    ("frozenThrough", Value::from(ts.seg.frozen_through())),
                    (
                        "llmChecks",
                        object_of([
                            ("applied", Value::from(ts.llm_ok)),
                            ("malformed", Value::from(ts.llm_malformed)),
                            ("failed", Value::from(ts.llm_failed)),
                        ]),
                    ),
                ]),
            ),
        ])
    }

    /// `cachefold_preview`: what the model sees now (as of the last assemble): the pinned
    /// head, each fold segment (record + messages kept verbatim), the live tail; estimated
    /// tokens each.
    pub fn preview(&self) -> Value {
        let st = &self.st;
        let recs = &st.records;
        let end = st.recorded();
        let stat = self.st.static_tokens();
        let head = self.st.tokens(fold::span_w(recs, 0, st.head_len));
        let live = self.st.tokens(fold::span_w(recs, st.live_from, end));
        let turn_label = |r: u32| {
            st.topics
                .turn_at(r)
                .map_or(String::new(), |t| format!(" from {t}"))
        };
        let mut total = stat + head + live;
        for s in &st.segs {
            total += self.st.tokens(s.w + s.protected_w);
        }
        let mut lines = vec![format!(
            "[cachefold_preview] ~{total} tokens: static (system prompt, tools) ~{stat}, head ~{head}, {} fold segment(s), live tail ~{live}.",
            st.segs.len()
        )];
        lines.push(format!(
            "head: messages 0..{} (~{head} tokens, pinned)",
            st.head_len
        ));
        let mut segs = Vec::new();
        for s in &st.segs {
            let (rt, kt) = (self.st.tokens(s.w), self.st.tokens(s.protected_w));
            lines.push(format!(
                "{}: record for messages {}..{}{} (~{rt} tokens{}; exact text: cachefold_recover {{\"id\":\"{}\"}})",
                s.id,
                s.from,
                s.to,
                turn_label(s.from),
                if s.protected.is_empty() {
                    String::new()
                } else {
                    format!(", + {} kept verbatim ~{kt}", s.protected.len())
                },
                s.id
            ));
            segs.push(object_of([
                ("id", Value::from(s.id.clone())),
                ("from", Value::from(s.from)),
                ("to", Value::from(s.to)),
                ("recordTokens", Value::from(rt)),
                ("keptTokens", Value::from(kt)),
                ("kept", Value::from(s.protected.len())),
                ("summary", Value::from(s.summary)),
            ]));
        }
        lines.push(format!(
            "live tail: messages {}..{end}{} (~{live} tokens, verbatim)",
            st.live_from,
            turn_label(st.live_from)
        ));
        let span = |from: u32, to: u32, tokens: u64| {
            object_of([
                ("from", Value::from(from)),
                ("to", Value::from(to)),
                ("tokens", Value::from(tokens)),
            ])
        };
        object_of([
            ("text", Value::from(lines.join("\n"))),
            (
                "details",
                object_of([
                    ("staticTokens", Value::from(stat)),
                    ("head", span(0, st.head_len, head)),
                    ("segments", Value::Array(segs)),
                    ("live", span(st.live_from, end, live)),
                ]),
            ),
        ])
    }

    /// Records `[a, b)` and a label for a turn id `t<k>` or a topic id `T<n>`.
    fn topic_or_turn(&self, id: &str) -> Result<(u32, u32, String)> {
        let ts = &self.st.topics;
        let end = self.st.recorded();
        let unknown = |what: String| Error::InvalidId(what);
        if let Some(t) = TurnId::parse(id) {
            let (a, b) = ts.turn_range(t.0, end).ok_or_else(|| {
                unknown(format!(
                    "{id} is not a turn of this session (turns t1..t{})",
                    ts.seg.turn_count()
                ))
            })?;
            let topic = ts.seg.topic_of(t).map(|x| x.id.to_string());
            return Ok((
                a,
                b,
                format!(
                    "{id}{}",
                    topic.map_or(String::new(), |x| format!(" (topic {x})"))
                ),
            ));
        }
        if let Some(n) = TopicId::parse(id) {
            let t: &Topic = ts.seg.topic(n).ok_or_else(|| {
                unknown(format!(
                    "{id} is not a topic of this session (see cachefold_topics)"
                ))
            })?;
            let (a, b) = ts.topic_range(t, end).unwrap_or((end, end));
            return Ok((
                a,
                b,
                format!(
                    "{id} {}–{} \"{}\"",
                    t.first,
                    t.last,
                    crate::text::clip(&t.display_label(), 80)
                ),
            ));
        }
        Err(unknown(format!(
            "{} is not a turn id (t<k>) or a topic id (T<n>)",
            crate::quoted(id)
        )))
    }

    /// Where the exact messages of turn `t<k>` or topic `T<n>` are: `parts` name stored fold
    /// regions and their line ranges (one JSON message per line) for the shim to read, in
    /// order; `inContext` counts the messages the model has verbatim now (head, kept, live).
    pub fn recover_plan(&self, id: &str) -> Result<Value> {
        let (a, b, label) = self.topic_or_turn(id)?;
        let mut parts = Vec::new();
        let mut folded = 0u64;
        for s in &self.st.segs {
            let (x, y) = (a.max(s.from), b.min(s.to));
            if x < y {
                folded += u64::from(y - x);
                parts.push(object_of([
                    ("fold", Value::from(s.id.clone())),
                    ("lines", Value::from(vec![x - s.from + 1, y - s.from])),
                    ("from", Value::from(x)),
                    ("to", Value::from(y)),
                ]));
            }
        }
        let folded = folded as u32;
        let in_context = (b - a).saturating_sub(folded);
        let note = format!(
            "[cachefold_recover] {label}: messages {a}..{b}; {folded} folded (exact text below), {in_context} still in your context verbatim."
        );
        Ok(object_of([
            ("id", Value::from(id)),
            ("from", Value::from(a)),
            ("to", Value::from(b)),
            ("parts", Value::Array(parts)),
            ("inContext", Value::from(in_context)),
            ("note", Value::from(note)),
        ]))
    }
}
