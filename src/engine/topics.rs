//! Topics in the session (`topics.enabled`): every committed turn gets its id `t<k>` and a
//! topic `T<n>` ([`crate::topics::Segmenter`], layer 1, from the turn's digests), journaled as
//! a `turn` event so a replay restores the same topics. Folds use them three ways:
//!
//! * **Cuts follow topics**: a priced (or host-requested) fold whose cut lands near a topic
//!   boundary moves to it, among the pairing-safe cuts whose live tail stays between half and
//!   one and a half `tailTokens` (`Session::topic_cut`); an emergency fold moves forward to
//!   the first boundary at most `tailTokens / 2` past its cut
//!   (`Session::topic_emergency_cut`). A boundary that leaves less than `minFoldTokens` to
//!   fold is no cut. Only the live tail is cut, so no byte already sent moves.
//! * **One section per topic**: the record of a region spanning several topics renders each
//!   closed topic as a line or two (label, turn range, exact identifiers, recover ids) and the
//!   last one with today's detailed record (`Session::topic_record`); an LLM-summary record
//!   keeps the closed topics' lines after the summary (`Session::summary_topics`). A
//!   condensed record (`c<k>`) has none: in the real-OpenClaw A/B they cost 10 % more input.
//! * **Frozen boundaries**: a fold freezes the topics of every turn it covers
//!   (`TopicState::freeze_before`, applied with the fold event), so a boundary a fold used
//!   never moves.
//!
//! A pinned turn (`cachefold_pin`) is kept verbatim, like a protected read, by the folds made
//! after the pin: the output already sent never changes.

use super::state::{Event, HOUR_MS};
use super::{history, CommitInput, Session};
use crate::digest::Digest;
use crate::error::{Error, Result};
use crate::message::Fields;
use crate::record::MsgRecord;
use crate::topics::terms::{self, TurnTerms};
use crate::topics::{llm, Segmenter, Topic, TurnId};
use crate::{digest, fold, object_of};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Topics of a session's committed turns.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct TopicState {
    /// The segmenter (turns, topics, frozen prefix).
    pub seg: Segmenter,
    /// Record index of each turn's first message: turn `t<k>` starts at `starts[k-1]`.
    pub starts: Vec<u32>,
    /// Pinned turns (ascending): kept verbatim by later folds.
    pub pins: Vec<u32>,
    /// Layer 1's margin (|score − threshold|) for the newest turn: small = uncertain.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_margin: Option<f64>,
    /// Layer 2 (`topics.useLlm`): the newest turn asked about (0 = none).
    #[serde(skip_serializing_if = "is_zero")]
    pub llm_turn: u32,
    /// Issue times (ms) of layer-2 calls within the last hour.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub llm_times: Vec<f64>,
    /// The layer-2 call in flight.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub llm_pending: Option<TopicPending>,
    /// Layer-2 answers applied.
    #[serde(skip_serializing_if = "is_zero")]
    pub llm_ok: u32,
    /// Layer-2 calls that failed (error, timeout, blank).
    #[serde(skip_serializing_if = "is_zero")]
    pub llm_failed: u32,
    /// Layer-2 answers that did not parse (ignored).
    #[serde(skip_serializing_if = "is_zero")]
    pub llm_malformed: u32,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// A layer-2 topic check handed to the shim, not answered yet.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TopicPending {
    /// Request id.
    pub id: String,
    /// The turn asked about.
    pub turn: u32,
    /// Issue time (ms).
    pub at: f64,
}

impl TopicState {
    /// No turn segmented and nothing pinned (left out of the snapshot).
    pub fn is_empty(&self) -> bool {
        self.seg.turn_count() == 0
            && self.starts.is_empty()
            && self.pins.is_empty()
            && self.llm_times.is_empty()
            && self.llm_pending.is_none()
    }

    /// Apply a `turn` event.
    pub(crate) fn push(&mut self, from: u32, at: Option<f64>, t: &TurnTerms) {
        if self.seg.turn_count() == 0 && self.seg.topics().is_empty() {
            self.seg = Segmenter::new(self.seg.params.clone());
        }
        let d = self.seg.push_terms(t, at);
        self.last_margin = Some(d.margin);
        self.starts.push(from);
    }

    /// Apply a `topicReq` event: a layer-2 call about `turn` went out at `at`.
    pub(crate) fn llm_asked(&mut self, id: &str, turn: u32, at: f64) {
        self.llm_times.retain(|t| *t > at - HOUR_MS);
        self.llm_times.push(at);
        // Bounded whatever the config says (the cap is at most 60 an hour).
        if self.llm_times.len() > 64 {
            let drop = self.llm_times.len() - 64;
            self.llm_times.drain(..drop.min(self.llm_times.len()));
        }
        self.llm_turn = self.llm_turn.max(turn);
        self.llm_pending = Some(TopicPending {
            id: id.to_string(),
            turn,
            at,
        });
    }

    /// Apply a `topicDone` event: the answer (if any) goes to the segmenter, which never moves
    /// a frozen boundary. Unknown or stale ids change nothing.
    pub(crate) fn llm_answered(&mut self, id: &str, ok: bool, answer: Option<&llm::Answer>) {
        let Some(p) = self.llm_pending.take_if(|p| p.id == id) else {
            return;
        };
        match answer {
            Some(a) => {
                self.seg.apply_llm(TurnId(p.turn), a);
                self.llm_ok += 1;
            }
            None if ok => self.llm_malformed += 1,
            None => self.llm_failed += 1,
        }
    }

    /// Apply a `pinTurn` event.
    pub(crate) fn pin(&mut self, turn: u32) {
        if let Err(at) = self.pins.binary_search(&turn) {
            self.pins.insert(at, turn);
        }
    }

    /// A fold covered the records before `to`: the topics of the turns starting before it, and
    /// of the turn starting exactly there (the boundary the fold used), are fixed from now on.
    pub(crate) fn freeze_before(&mut self, to: u32) {
        if let Some(k) = self.starts.iter().rposition(|s| *s <= to) {
            self.seg.freeze_through(TurnId(k as u32 + 1));
        }
    }

    /// Records `[a, b)` of turn `k` (1-based); the last turn ends at `end`.
    pub fn turn_range(&self, k: u32, end: u32) -> Option<(u32, u32)> {
        let i = (k as usize).checked_sub(1)?;
        let a = *self.starts.get(i)?;
        let b = self.starts.get(i + 1).copied().unwrap_or(end).max(a);
        Some((a, b))
    }

    /// The turn record `r` belongs to (the last turn starting at or before it).
    pub fn turn_at(&self, r: u32) -> Option<TurnId> {
        let k = self.starts.partition_point(|s| *s <= r);
        (k > 0).then_some(TurnId(k as u32))
    }

    /// The topic record `r` belongs to.
    pub fn topic_at(&self, r: u32) -> Option<&Topic> {
        self.seg.topic_of(self.turn_at(r)?)
    }

    /// Records `[a, b)` of a topic (its first turn's start to its last turn's end).
    pub fn topic_range(&self, t: &Topic, end: u32) -> Option<(u32, u32)> {
        let (a, _) = self.turn_range(t.first.0, end)?;
        let (_, b) = self.turn_range(t.last.0, end)?;
        Some((a, b))
    }

    /// First records of every topic after the first (where a cut follows a topic).
    pub fn boundary_records(&self) -> Vec<u32> {
        let mut v: Vec<u32> = Vec::new();
        for t in self.seg.boundaries() {
            if let Some(&r) = self.starts.get(t.0 as usize - 1) {
                v.push(r);
            }
        }
        v.sort_unstable();
        v.dedup();
        v
    }
}

/// Characters a closed topic's line may take in a record.
const CLOSED_TOPIC_CHARS: usize = 420;

impl Session {
    /// `cachefold_pin`: keep turn `t<k>` verbatim through the folds made from now on (a turn
    /// already folded stays as it is: its record was sent and cached).
    pub fn pin_turn(&mut self, id: &str) -> Result<Value> {
        let Some(t) = TurnId::parse(id) else {
            return Err(Error::InvalidId(format!(
                "{} is not a turn id (t<k>, see cachefold_topics)",
                crate::quoted(id)
            )));
        };
        let end = self.st.recorded();
        let Some((a, b)) = self.st.topics.turn_range(t.0, end) else {
            return Err(Error::InvalidId(format!(
                "{id} is not a turn of this session (turns t1..t{})",
                self.st.topics.seg.turn_count()
            )));
        };
        let text = if a < self.st.live_from {
            format!("[cachefold_pin] {id} is already folded (messages {a}..{b}); its record stays as sent. Recover it with cachefold_recover {{\"id\":\"{id}\"}}.")
        } else if self.st.topics.pins.binary_search(&t.0).is_ok() {
            format!("[cachefold_pin] {id} is already pinned.")
        } else {
            self.emit(Event::PinTurn { turn: t.0 })?;
            format!("[cachefold_pin] {id} pinned: later folds keep its {} messages verbatim (from the next fold on; nothing already sent changes).", b - a)
        };
        let pinned = self.st.topics.pins.binary_search(&t.0).is_ok();
        Ok(object_of([
            ("text", Value::from(text)),
            (
                "details",
                object_of([
                    ("turn", Value::from(id)),
                    ("from", Value::from(a)),
                    ("to", Value::from(b)),
                    ("pinned", Value::from(pinned)),
                ]),
            ),
        ]))
    }

    /// The turn's digests as the engine keeps them: the recorded digest when the message is
    /// recorded (matched by hash), else digested now (tool results get their call's name and
    /// arguments from the turn's own assistant messages).
    fn turn_digests(&self, messages: &[String]) -> (Vec<Digest>, Option<u32>) {
        let mut out = Vec::with_capacity(messages.len());
        let mut calls: Vec<(String, String, Value)> = Vec::new();
        let mut first: Option<u32> = None;
        let recs = &self.st.records;
        let lo = recs.len().saturating_sub(4_096);
        let algo = self.hash_algo();
        for (k, j) in messages.iter().enumerate() {
            let h = algo.hash(j);
            let found = recs[lo..].iter().rposition(|r| r.h == h).map(|p| p + lo);
            if k == 0 {
                first = found.map(|p| p as u32);
            }
            let host = crate::message::parse_host(j);
            let Some(m) = host.message() else {
                out.push(Digest::default());
                continue;
            };
            for c in m.tool_calls() {
                calls.push((
                    c.id.to_string(),
                    c.name.to_string(),
                    history::bound_args(c.arguments),
                ));
            }
            if let Some(i) = found {
                out.push(recs[i].digest.clone());
                continue;
            }
            let call = m
                .tool_call_id()
                .and_then(|id| calls.iter().rev().find(|c| c.0 == id));
            out.push(digest::digest(
                m,
                &self.cfg,
                call.map(|c| (c.1.as_str(), &c.2)),
            ));
        }
        (out, first)
    }

    /// Segment a committed turn (`topics.enabled`): journal its terms as a `turn` event.
    pub(super) fn push_topic_turn(&mut self, input: &CommitInput) -> Result<()> {
        if !self.cfg.topics.enabled || input.messages.is_empty() {
            return Ok(());
        }
        let (digests, first) = self.turn_digests(&input.messages);
        let recorded = self.st.recorded();
        // The turn's user message is recorded by the assemble before its first call; when it
        // is not (yet), the turn starts at the next record.
        // Turn starts never decrease; when the host rewound its history below the last
        // turn's start, this turn is not segmented (later turns are, once records pass it).
        let last_start = self.st.topics.starts.last().copied().unwrap_or(0);
        let from = first.unwrap_or(recorded).max(last_start);
        if from > recorded {
            return Ok(());
        }
        let at = crate::message::parse_host(&input.messages[0])
            .message()
            .and_then(Fields::timestamp)
            .filter(|t| t.is_finite());
        self.emit(Event::Turn {
            from,
            at,
            terms: Box::new(terms::turn_terms(&digests)),
        })?;
        if self.cfg.topics.use_llm {
            self.last_turn = Some((self.st.topics.seg.turn_count(), digests));
        }
        Ok(())
    }

    /// The priced cut `c` moved to the nearest topic boundary among `cuts` whose live tail
    /// stays within half to one and a half `tailTokens` and whose folded region still reaches
    /// `minFoldTokens` (unchanged without topics or when no boundary is that near).
    pub(super) fn topic_cut(&self, count: u32, cuts: &[u32], c: u32) -> u32 {
        if !self.cfg.topics.enabled || self.st.topics.seg.topics().len() < 2 {
            return c;
        }
        let tail = self.cfg.tail_tokens;
        let (lo, hi) = (tail / 2, tail.saturating_add(tail / 2));
        let recs = &self.st.records;
        let at_c = self.st.tokens(fold::span_w(recs, c, count));
        let mut best: Option<(u64, u32)> = None;
        for b in self.st.topics.boundary_records() {
            if b <= self.st.live_from || b >= count || cuts.binary_search(&b).is_err() {
                continue;
            }
            let t = self.st.tokens(fold::span_w(recs, b, count));
            if t < lo || t > hi {
                continue;
            }
            // A boundary that leaves less than `minFoldTokens` to fold would turn a fold that
            // pays into a skipped one (the policy checks the size at the moved cut).
            if self.st.tokens(fold::span_w(recs, self.st.live_from, b)) < self.cfg.min_fold_tokens {
                continue;
            }
            let d = t.abs_diff(at_c);
            if best.map_or(true, |(bd, _)| d < bd) {
                best = Some((d, b));
            }
        }
        best.map_or(c, |(_, b)| b)
    }

    /// Record indices of pinned turns lying wholly inside `[from, to)`.
    pub(super) fn pinned_records(&self, from: u32, to: u32) -> Vec<u32> {
        let ts = &self.st.topics;
        let mut out = Vec::new();
        for &k in &ts.pins {
            if let Some((a, b)) = ts.turn_range(k, self.st.recorded()) {
                if a >= from && b <= to && a < b {
                    for r in a..b {
                        out.push(r);
                    }
                }
            }
        }
        out
    }

    /// Protected groups of `[from, to)` plus the pinned turns in it, ascending.
    pub(super) fn kept_verbatim(&self, from: u32, to: u32) -> Vec<u32> {
        let mut v = fold::protected_groups(&self.st.records, from, to);
        if !self.st.topics.pins.is_empty() {
            v.extend_from_slice(&self.pinned_records(from, to));
            v.sort_unstable();
            v.dedup();
        }
        v
    }

    /// Consecutive runs of the records `[from, to)` by topic (records before the first turn
    /// join the first topic), or `None` when topics are off or the region lies within one topic.
    fn topic_groups(&self, from: u32, to: u32) -> Option<Vec<(&Topic, Vec<u32>)>> {
        if !self.cfg.topics.enabled {
            return None;
        }
        let ts = &self.st.topics;
        let mut ids: Vec<Option<&Topic>> = Vec::with_capacity(to.saturating_sub(from) as usize);
        for r in from..to {
            ids.push(ts.topic_at(r));
        }
        let first = ids.iter().flatten().next().copied()?;
        let mut groups: Vec<(&Topic, Vec<u32>)> = Vec::new();
        for (r, t) in (from..to).zip(ids) {
            let t = t.unwrap_or(first);
            match groups.last_mut() {
                Some((g, v)) if g.id == t.id => v.push(r),
                _ => groups.push((t, vec![r])),
            }
        }
        (groups.len() >= 2).then_some(groups)
    }

    /// The turns of a topic's records `v` (first and last).
    fn group_turns(&self, t: &Topic, v: &[u32]) -> (TurnId, TurnId) {
        let ts = &self.st.topics;
        let a = v.first().and_then(|r| ts.turn_at(*r)).unwrap_or(t.first);
        let b = v.last().and_then(|r| ts.turn_at(*r)).unwrap_or(t.first);
        (a, b)
    }

    /// Topic lines for `groups` appended to `out` while it stays within `limit` chars; the
    /// topics that do not fit are named as one range. `line` renders one topic.
    fn push_topic_lines(
        &self,
        out: &mut String,
        groups: &[(&Topic, Vec<u32>)],
        limit: usize,
        what: &str,
        line: &TopicLine,
    ) {
        let mut used = out.chars().count();
        for (k, (t, v)) in groups.iter().enumerate() {
            let (a, b) = self.group_turns(t, v);
            let l = line(t, a, b, v);
            let n = l.chars().count() + 1;
            if used + n > limit {
                let (lt, lv) = &groups[groups.len() - 1];
                let (_, lb) = self.group_turns(lt, lv);
                out.push_str(&format!(
                    "- {} more {what} {}–{} (turns {a}–{lb}; cachefold_topics lists them, recover by topic or turn id)\n",
                    groups.len() - k,
                    t.id,
                    lt.id,
                ));
                return;
            }
            out.push_str(&l);
            out.push('\n');
            used += n;
        }
    }

    /// A closed topic's line (label, turn range, recover id, exact identifiers).
    fn closed_line(&self, kept: &[u32], t: &Topic, a: TurnId, b: TurnId, v: &[u32]) -> String {
        closed_topic_line(t, a, b, &digests_at(&self.st.records, v, kept))
    }

    /// Record text of a fold over `[from, to)` with one section per topic, or `None` when
    /// topics are off or the region lies within one topic (the record is then today's).
    pub(super) fn topic_record(
        &self,
        id: &str,
        from: u32,
        to: u32,
        kept: &[u32],
        cap: usize,
    ) -> Option<String> {
        let groups = self.topic_groups(from, to)?;
        let mut out = fold::record::fold_header(id);
        out.push_str(TOPICS_TITLE);
        let (last, closed) = groups.split_last()?;
        // Closed topics take at most half the record; the rest are named as a range.
        self.push_topic_lines(&mut out, closed, cap / 2, "closed topics", &|t, a, b, v| {
            self.closed_line(kept, t, a, b, v)
        });
        let (t, v) = last;
        let (ta, tb) = self.group_turns(t, v);
        out.push_str(&format!(
            "\n## {} {} ({}–{}), in detail:\n",
            t.id,
            crate::text::clip(&t.display_label(), 80),
            ta,
            tb
        ));
        let room = cap.saturating_sub(out.chars().count()).max(600);
        let digests = digests_at(&self.st.records, v, kept);
        let body = fold::record::render_extractive(id, &digests, room);
        // The detailed body without its own header line (the record has one).
        let body = body.split_once('\n').map_or("", |(_, b)| b);
        out.push_str(body);
        Some(out)
    }

    /// The topic section of an LLM-summary record over `[from, to)`: a line per closed topic
    /// (as in `Session::topic_record`) and a short line for the last, within `limit` chars;
    /// empty when topics are off or the region lies within one topic.
    pub(super) fn summary_topics(&self, from: u32, to: u32, kept: &[u32], limit: usize) -> String {
        let Some(groups) = self.topic_groups(from, to) else {
            return String::new();
        };
        let Some(((t, v), closed)) = groups.split_last() else {
            return String::new();
        };
        let mut out = String::from(TOPICS_TITLE.trim_start());
        let (a, b) = self.group_turns(t, v);
        let last = short_topic_line(t, a, b, self.topic_goes_on(t, to));
        let room = limit.saturating_sub(last.chars().count() + 1);
        self.push_topic_lines(&mut out, closed, room, "closed topics", &|t, a, b, v| {
            self.closed_line(kept, t, a, b, v)
        });
        out.push_str(&last);
        out.push('\n');
        out
    }

    /// Whether topic `t` goes on at record `to` (the turn there belongs to it).
    fn topic_goes_on(&self, t: &Topic, to: u32) -> bool {
        self.st.topics.topic_at(to).is_some_and(|n| n.id == t.id)
    }

    /// An emergency cut `c` moved forward to the first topic boundary among `cuts` whose
    /// live tail is at most `tailTokens / 2` smaller and whose folded region reaches
    /// `minFoldTokens` (`None` without topics or when no boundary is that near).
    pub(super) fn topic_emergency_cut(&self, count: u32, cuts: &[u32], c: u32) -> Option<u32> {
        if !self.cfg.topics.enabled || self.st.topics.seg.topics().len() < 2 {
            return None;
        }
        let recs = &self.st.records;
        let tail_c = self.st.tokens(fold::span_w(recs, c, count));
        let b = self
            .st
            .topics
            .boundary_records()
            .into_iter()
            .find(|b| *b >= c && *b < count && cuts.binary_search(b).is_ok())?;
        let moved = tail_c.saturating_sub(self.st.tokens(fold::span_w(recs, b, count)));
        let region = self.st.tokens(fold::span_w(recs, self.st.live_from, b));
        (b != c && moved <= self.cfg.tail_tokens / 2 && region >= self.cfg.min_fold_tokens)
            .then_some(b)
    }
}

/// Renders one topic of a record from its folded turns `a`–`b` and records.
type TopicLine<'a> = dyn Fn(&Topic, TurnId, TurnId, &[u32]) -> String + 'a;

/// Title of the topic section of a record.
const TOPICS_TITLE: &str =
    "\nTopics folded here (turn ids and topic ids work with cachefold_recover):\n";

/// A topic's turn range in a record: the turns folded here, and the whole topic's when it
/// began in an earlier record.
fn topic_turns(t: &Topic, a: TurnId, b: TurnId) -> String {
    if (a, b) == (t.first, t.last) {
        format!("{a}–{b}")
    } else {
        format!("{a}–{b} here, topic {}–{}", t.first, t.last)
    }
}

/// A topic's short line: id, label, turn range (`open`: the topic goes on after the record).
fn short_topic_line(t: &Topic, a: TurnId, b: TurnId, open: bool) -> String {
    let range = if open {
        format!("{a}–{b} here, goes on after")
    } else {
        topic_turns(t, a, b)
    };
    format!(
        "- {} {} ({range})",
        t.id,
        crate::text::clip(&t.display_label(), 80)
    )
}

/// One closed topic in a record: label, turn range, recover ids, and its exact identifiers.
fn closed_topic_line(t: &Topic, a: TurnId, b: TurnId, digests: &[&Digest]) -> String {
    // Turns of the topic folded earlier are named too, so a turn id read off this line
    // reaches the whole topic (its "asked" preview is the topic's first turn).
    let range = topic_turns(t, a, b);
    let mut line = format!(
        "- {} {} ({range}; recover {{\"id\":\"{}\"}} or a turn id)",
        t.id,
        crate::text::clip(&t.display_label(), 80),
        t.id
    );
    if !t.preview.is_empty() && t.label.is_none() {
        line.push_str("\n  asked: ");
        line.push_str(&crate::text::clip(&t.preview, 160));
    }
    let mut seen: Vec<&str> = Vec::new();
    for d in digests {
        for s in d
            .files
            .iter()
            .chain(&d.identifiers)
            .chain(&d.artifacts)
            .chain(&d.errors)
        {
            if !seen.contains(&s.as_str()) && s.chars().count() <= 120 {
                seen.push(s);
            }
        }
    }
    if !seen.is_empty() {
        line.push_str("\n  ids: ");
        let budget = CLOSED_TOPIC_CHARS;
        let mut used = 0;
        for (k, s) in seen.iter().enumerate() {
            let n = s.chars().count() + 2;
            if used + n > budget {
                line.push_str(&format!(" … (+{} more)", seen.len() - k));
                break;
            }
            if k > 0 {
                line.push_str(", ");
            }
            line.push_str(s);
            used += n;
        }
    }
    line
}

/// The digests of the records at the indices `idx` outside `kept` (ascending).
fn digests_at<'a>(records: &'a [MsgRecord], idx: &[u32], kept: &[u32]) -> Vec<&'a Digest> {
    let mut out = Vec::new();
    for i in idx {
        if kept.binary_search(i).is_err() {
            if let Some(r) = records.get(*i as usize) {
                out.push(&r.digest);
            }
        }
    }
    out
}
