//! The preconditions [`SessionState::apply`] checks before it applies an event.

use super::{DivergeAction, Event, SessionState};
use crate::error::{Error, Result};

impl SessionState {
    /// Preconditions of each event; a violation means the journal does not belong to this
    /// state (or the engine has a bug): refuse rather than corrupt.
    pub(super) fn check(&self, e: &Event) -> Result<()> {
        let bad = |m: String| Err(Error::State(m));
        match e {
            Event::Diverge { at, action, .. }
                if *action == DivergeAction::Truncate
                    && (*at as usize > self.records.len()
                        || (self.pinned && *at < self.live_from)) =>
            {
                return bad(format!("truncate at {at} outside the live tail"));
            }
            Event::Ingest { i, .. } if *i as usize != self.records.len() => {
                return bad(format!(
                    "ingest of index {i} with {} recorded",
                    self.records.len()
                ));
            }
            Event::Evict { len, skip }
                if (*len == 0 && *skip == self.skip)
                    || (self.base + len) as usize > self.records.len()
                    || self.live_from < self.base + len
                    || (self.head_len > self.base
                        && self.head_json.len() != self.head_len as usize) =>
            {
                return bad(format!(
                    "eviction of {len} messages at record {}",
                    self.base
                ));
            }
            Event::Pin { len, .. } if self.pinned || *len as usize > self.records.len() => {
                return bad(format!("pin of {len} messages"));
            }
            Event::Fold { seg, .. }
                if !self.pinned
                    || seg.from != self.live_from
                    || seg.to <= seg.from
                    || seg.to as usize > self.records.len() =>
            {
                return bad(format!(
                    "fold {}..{} with live tail at {}",
                    seg.from, seg.to, self.live_from
                ));
            }
            Event::Condense { seg }
                if self.segs.first().map(|s| s.from) != Some(seg.from)
                    || seg.to != self.live_from =>
            {
                return bad("condense does not cover the folded region".into());
            }
            Event::Turn { from, .. } if *from as usize > self.records.len() => {
                return bad(format!("turn from record {from} past the records"));
            }
            Event::PinTurn { turn } if *turn == 0 || *turn > self.topics.seg.turn_count() => {
                return bad(format!("pin of unknown turn t{turn}"));
            }
            Event::TopicReq { turn, at, .. }
                if *turn == 0 || *turn > self.topics.seg.turn_count() || !at.is_finite() =>
            {
                return bad(format!("topic check of unknown turn t{turn}"));
            }
            Event::Out { keep, .. } if *keep as usize > self.out.len() => {
                return bad(format!("output keeps {keep} of {}", self.out.len()));
            }
            _ => {}
        }
        Ok(())
    }
}
