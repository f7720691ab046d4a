//! Layer 2 of topic segmentation (`topics.useLlm`): a short host-LLM check of the newest turn
//! (`{label, isNewTopic}`), requested in `maintain` like fold summaries and never awaited by
//! `assemble`. The request and the answer are journaled (`topicReq`, `topicDone`), so a replay
//! applies the same answers to the same segmenter and restores the same topics. A call that
//! fails or an answer that does not parse is counted and changes nothing; an answer never
//! moves a boundary a fold has used ([`crate::topics::Segmenter::apply_llm`]).

use super::gate::model_managed;
use super::state::Event;
use super::{Session, SUMMARY_GRACE_MS};
use crate::digest::Digest;
use crate::error::Result;
use crate::topics::{llm, TurnId};
use serde::{Deserialize, Serialize};

/// Layer-1 margin under which a turn inside a labelled topic is still worth a check.
const UNCERTAIN_MARGIN: f64 = 0.15;
/// Longest wait for one check (the summary timeout applies when shorter).
const TOPIC_TIMEOUT_MS: u64 = 20_000;

/// A layer-2 topic check for the shim to send through the host LLM in `maintain`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TopicRequest {
    /// Pass back to [`Session::accept_topic`].
    pub id: String,
    /// The turn checked (`t<k>`).
    pub turn: String,
    /// System prompt.
    pub system: String,
    /// User prompt.
    pub prompt: String,
    /// Output cap.
    pub max_tokens: u32,
    /// Give up after.
    pub timeout_ms: u64,
}

impl Session {
    /// For `maintain`: a layer-2 check of the newest turn when `topics.useLlm` is on, the
    /// per-hour cap allows, that turn has not been asked about and is worth asking (it opens a
    /// topic, its topic has no label yet, or layer 1 was unsure). Issuing one is journaled;
    /// at most one is pending. Never an error: a failure here means no check.
    pub fn topic_request(&mut self, now_ms: f64) -> Option<TopicRequest> {
        self.topic_request_inner(now_ms).ok().flatten()
    }

    fn topic_request_inner(&mut self, now_ms: f64) -> Result<Option<TopicRequest>> {
        let tc = self.cfg.topics.clone();
        if !tc.enabled || !tc.use_llm || tc.max_calls_per_hour == 0 || !now_ms.is_finite() {
            return Ok(None);
        }
        if !model_managed(&self.cfg, self.st.model.as_deref()) {
            return Ok(None);
        }
        let timeout_ms = TOPIC_TIMEOUT_MS.min(self.cfg.summary.timeout_ms);
        if let Some(p) = &self.st.topics.llm_pending {
            if now_ms > p.at + timeout_ms as f64 + SUMMARY_GRACE_MS {
                // Lost (the process ended mid-call): counted as failed, the slot is free again.
                let id = p.id.clone();
                self.emit(Event::TopicDone {
                    id,
                    ok: false,
                    answer: None,
                })?;
            } else {
                return Ok(None);
            }
        }
        let ts = &self.st.topics;
        let turn = ts.seg.turn_count();
        if turn == 0 || turn <= ts.llm_turn || turn <= ts.seg.frozen_through() {
            return Ok(None);
        }
        let rate = llm::RateLimit {
            calls: ts.llm_times.clone(),
        };
        if !rate.allow(now_ms, tc.max_calls_per_hour) {
            return Ok(None);
        }
        let Some(topic) = ts.seg.topic_of(TurnId(turn)) else {
            return Ok(None);
        };
        let opens = topic.first == TurnId(turn);
        let unsure = ts.last_margin.is_some_and(|m| m <= UNCERTAIN_MARGIN);
        if !opens && topic.label.is_some() && !unsure {
            return Ok(None);
        }
        let digests = self.topic_turn_digests(turn);
        let Some(q) = self.st.topics.seg.llm_query(&digests) else {
            return Ok(None);
        };
        let (system, prompt) = llm::prompt(&q);
        let id = format!("{}#{}", q.turn, self.st.seq);
        self.emit(Event::TopicReq {
            id: id.clone(),
            turn,
            at: now_ms,
        })?;
        Ok(Some(TopicRequest {
            id,
            turn: q.turn.to_string(),
            system,
            prompt,
            max_tokens: llm::MAX_TOKENS,
            timeout_ms,
        }))
    }

    /// Digests of turn `t<k>`: the turn's messages as committed when this process saw the
    /// commit, else its records (the final reply may not be recorded yet).
    fn topic_turn_digests(&self, turn: u32) -> Vec<Digest> {
        if let Some((k, d)) = &self.last_turn {
            if *k == turn {
                return d.clone();
            }
        }
        let ts = &self.st.topics;
        let recorded = self.st.recorded();
        let Some((a, b)) = ts.turn_range(turn, recorded) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for i in a..b {
            if let Some(r) = self.st.records.get(i as usize) {
                out.push(r.digest.clone());
            }
        }
        out
    }

    /// The answer to a [`TopicRequest`]: `ok` with text that parses as `{label, isNewTopic}`
    /// is applied; a failed call or an answer that does not parse is counted and ignored.
    /// Unknown or stale ids are ignored. Returns `applied`, `malformed`, `failed` or `ignored`.
    pub fn accept_topic(&mut self, request_id: &str, text: &str, ok: bool, _now_ms: f64) -> String {
        if !matches!(self.st.topics.llm_pending.as_ref(), Some(p) if p.id == request_id) {
            return "ignored".to_string();
        }
        let answer = if ok { llm::parse_answer(text) } else { None };
        let status = match (&answer, ok) {
            (Some(_), _) => "applied",
            (None, true) => "malformed",
            (None, false) => "failed",
        };
        // Cannot fail for a pending id; an error would only mean the answer is lost.
        let _ = self.emit(Event::TopicDone {
            id: request_id.to_string(),
            ok,
            answer,
        });
        status.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;
    use crate::topics::terms;

    fn digest(role: &str, text: &str) -> Digest {
        Digest {
            role: role.into(),
            text: text.into(),
            ..Digest::default()
        }
    }

    /// A session with `users.len()` segmented turns (no records needed) and layer 2 on.
    fn session(users: &[&str]) -> Session {
        let mut cfg = Config::default();
        cfg.topics.use_llm = true;
        let mut s = Session::new(cfg, "l2");
        s.st.model = Some("deepseek/deepseek-v4-flash".into());
        for u in users {
            let d = [digest("user", u), digest("assistant", "ok, done")];
            s.emit(Event::Turn {
                from: 0,
                at: None,
                terms: Box::new(terms::turn_terms(&d)),
            })
            .unwrap();
        }
        s
    }

    #[test]
    fn an_answer_arriving_after_a_fold_froze_its_turn_moves_no_boundary() {
        let mut s = session(&[
            "fix the parser tokenizer_state quotes",
            "continue",
            "continue with the parser",
        ]);
        let q = s.topic_request(1_000.0).expect("t1's topic has no label");
        assert_eq!(q.turn, "t3");
        // A fold uses the boundary at t3 before the answer comes back.
        s.st.topics.seg.freeze_through(TurnId(3));
        let before = s.st.topics.seg.boundaries();
        let status = s.accept_topic(
            &q.id,
            r#"{"label":"Lexer","isNewTopic":true}"#,
            true,
            2_000.0,
        );
        assert_eq!(status, "applied");
        assert_eq!(
            s.st.topics.seg.boundaries(),
            before,
            "frozen: no boundary added"
        );
        // Only an unset label was filled in.
        assert_eq!(
            s.st.topics
                .seg
                .topic_of(TurnId(3))
                .unwrap()
                .label
                .as_deref(),
            Some("Lexer")
        );
        // And a frozen newest turn is not asked about.
        let mut s2 = session(&["a b c", "continue"]);
        s2.st.topics.seg.freeze_through(TurnId(2));
        assert!(s2.topic_request(1_000.0).is_none());
    }

    #[test]
    fn off_unmanaged_or_without_turns_nothing_is_asked() {
        let mut s = session(&[]);
        assert!(s.topic_request(1_000.0).is_none());
        let mut s = session(&["fix the parser"]);
        s.st.model = Some("mistral/mistral-large".into());
        assert!(s.topic_request(1_000.0).is_none(), "model not managed");
        let mut s = session(&["fix the parser"]);
        s.cfg.topics.use_llm = false;
        assert!(s.topic_request(1_000.0).is_none());
        let mut s = session(&["fix the parser"]);
        assert!(s.topic_request(f64::NAN).is_none());
        assert!(!s.pending.contains("topicReq"));
    }

    #[test]
    fn a_malformed_or_failed_answer_is_counted_and_changes_nothing() {
        let mut s = session(&["fix the parser tokenizer_state quotes"]);
        let before = s.st.topics.seg.clone();
        let q = s.topic_request(1_000.0).unwrap();
        assert_eq!(
            s.accept_topic(&q.id, "no JSON here {oops", true, 2_000.0),
            "malformed"
        );
        assert_eq!(s.st.topics.seg, before);
        assert_eq!((s.st.topics.llm_malformed, s.st.topics.llm_ok), (1, 0));
        assert!(s.st.topics.llm_pending.is_none());
        // The same turn is not asked again.
        assert!(s.topic_request(3_000.0).is_none());
        let mut s = session(&["fix the parser tokenizer_state quotes"]);
        let q = s.topic_request(1_000.0).unwrap();
        assert_eq!(s.accept_topic(&q.id, "", false, 2_000.0), "failed");
        assert_eq!(s.st.topics.llm_failed, 1);
        assert_eq!(s.st.topics.seg, before);
    }
}
