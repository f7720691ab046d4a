//! Incremental topic segmentation of a session's completed turns (ContextFold's idea, made
//! cache-first: boundaries are decided once and pinned by the folds that use them).
//!
//! A **turn** is a user message and everything up to the next user message; completed turns
//! arrive in order as lists of per-message [`Digest`]s (the extracts the engine already keeps)
//! and get stable ids `t1, t2, …`. A **topic** is a contiguous run of turns with a stable id
//! `T1, T2, …` (ids are never reused or renumbered, even when a layer-2 answer merges two
//! topics).
//!
//! ## Layer 1 (local, free)
//!
//! Each turn becomes a bounded bag of weighted, hashed terms ([`terms`]): the user's words
//! (weight 2), file basenames (2.5) and directories, exact identifiers, command names, tool
//! names, and lightly the assistant's prose and tool output. A new turn is compared with the
//! open topic by TF-IDF cosine, both against the topic's bounded vocabulary and against the
//! last [`Params::window`] turns; IDF comes from a bounded document-frequency table over all
//! turns so far. The boundary score is
//!
//! ```text
//! score = Params::lexical_weight · (1 − max(sim_window, sim_topic)) · mass(user terms)
//!       + cue(user text) + gap(idle time) + tool_shift
//! ```
//!
//! (`mass` goes from 0.35 to 1 as the user's distinct terms reach [`Params::full_weight_terms`])
//! and a new topic starts when `score ≥ Params::threshold` (and the open topic has at least
//! [`Params::min_topic_turns`] turns, unless a strong cue says otherwise). Cues are phrases
//! such as "new task", "moving on", "let's tackle", a slash command (up) and "continue",
//! "yes", "try again" (down); a short user message leans on its cues because its terms are too
//! few to measure. Harness chatter recorded as user messages (local command echoes,
//! interrupts, injected skill bodies: [`is_noise`]) never opens a topic and is not measured.
//!
//! Measured on 10 hand-labelled corpus sessions (`tests/topics_eval.rs`, 30 boundaries in 342
//! turns): boundary precision 0.64, recall 0.53, F1 0.58 with the defaults (0.58 when the
//! knobs are chosen leave-one-session-out; the cue lists were written after reading those
//! sessions); a cue-only rule gets F1 0.55, the first lexical-only version 0.29.
//!
//! ## Layer 2 (optional host-LLM, rate-limited): see [`llm`]
//!
//! Pure prompt builder and answer parser for `{label, isNewTopic}`; [`Segmenter::apply_llm`]
//! relabels a topic and may add or remove the boundary at that turn, unless it is frozen.
//!
//! ## Invariants (property-tested in `tests.rs`)
//!
//! * **Incremental**: [`Segmenter::push_turn`] decides turn k from turns ≤ k only; a batch
//!   run ([`Segmenter::segment`]) is the same sequence of pushes, and a state serialised and
//!   resumed continues identically.
//! * **Frozen boundaries never move**: after [`Segmenter::freeze_through`]`(k)` the topic of
//!   every turn ≤ k is fixed, whatever turns or layer-2 answers come later ("a boundary never
//!   moves once a fold has used it").
//! * **Bounded**: the state holds no message text, only hashed terms for the open topic
//!   ([`Params::topic_terms`]), a capped document-frequency table ([`Params::max_vocab`]), the
//!   last few turn bags, and per topic a few keywords and a clipped preview.
//! * **Pure**: no clock (time arrives as `at_ms`), no I/O, deterministic.

mod cues;
mod decode;
pub mod llm;
pub mod terms;

pub use cues::{cue, is_noise};
#[cfg(test)]
mod tests;

use crate::digest::Digest;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use terms::TurnTerms;

/// Term weights by hash, ascending.
type Weights = BTreeMap<u32, f64>;

/// Tuning knobs of layer 1 (serialised with the state so a resumed session keeps its rules).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase", default)]
pub struct Params {
    /// A boundary when the score reaches this.
    pub threshold: f64,
    /// Turns compared directly (the sliding window of the open topic).
    pub window: usize,
    /// A topic shorter than this is not closed by lexical novelty alone (a strong cue may).
    pub min_topic_turns: u32,
    /// Hashed terms kept for the open topic's vocabulary.
    pub topic_terms: usize,
    /// Entries of the document-frequency table (lowest counts evicted first).
    pub max_vocab: usize,
    /// User terms at which lexical novelty gets its full weight (fewer terms, less weight).
    pub full_weight_terms: usize,
    /// Weight of lexical novelty in the score (cues, gap and tool shift add to it).
    pub lexical_weight: f64,
    /// Added for an idle gap over 30 minutes (doubled over 2 hours).
    pub gap_bonus: f64,
    /// Added when the turn's tools share none with the window's.
    pub tool_shift_bonus: f64,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            threshold: 0.5,
            window: 3,
            min_topic_turns: 2,
            topic_terms: 160,
            max_vocab: 4096,
            full_weight_terms: 6,
            lexical_weight: 0.5,
            gap_bonus: 0.15,
            tool_shift_bonus: 0.05,
        }
    }
}

/// Stable id of a completed turn: `t<k>`, k ≥ 1 in arrival order.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TurnId(pub u32);

/// Stable id of a topic: `T<n>`, n ≥ 1 in creation order, never reused.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TopicId(pub u32);

impl std::fmt::Display for TurnId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "t{}", self.0)
    }
}

impl std::fmt::Display for TopicId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "T{}", self.0)
    }
}

impl TurnId {
    /// Parse `t<k>` (k ≥ 1).
    pub fn parse(s: &str) -> Option<TurnId> {
        s.strip_prefix('t')?
            .parse::<u32>()
            .ok()
            .filter(|k| *k >= 1)
            .map(TurnId)
    }
}

impl TopicId {
    /// Parse `T<n>` (n ≥ 1).
    pub fn parse(s: &str) -> Option<TopicId> {
        s.strip_prefix('T')?
            .parse::<u32>()
            .ok()
            .filter(|n| *n >= 1)
            .map(TopicId)
    }
}

/// Why a topic starts where it does.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub enum Cause {
    /// The session's first turn.
    Start,
    /// Layer 1 (lexical novelty, cues, gap, tool shift).
    Local,
    /// A layer-2 answer said `isNewTopic: true`.
    Llm,
}

/// One topic: a contiguous run of turns.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Topic {
    /// Stable id.
    pub id: TopicId,
    /// First turn.
    pub first: TurnId,
    /// Last turn so far.
    pub last: TurnId,
    /// Boundary score at `first` (0 for the first topic).
    pub score: f64,
    /// Why it starts at `first`.
    pub cause: Cause,
    /// Label from a layer-2 answer, if any.
    pub label: Option<String>,
    /// Heuristic label words (heaviest user words and file names of its first turns).
    pub keywords: Vec<String>,
    /// The first turn's user text, clipped to [`PREVIEW_CHARS`].
    pub preview: String,
}

impl Topic {
    /// The label to show: the layer-2 label, else the keywords, else the preview.
    pub fn display_label(&self) -> String {
        if let Some(l) = &self.label {
            return l.clone();
        }
        if !self.keywords.is_empty() {
            return self.keywords.join(", ");
        }
        crate::text::clip(&self.preview, 60)
    }
    /// Number of turns.
    pub fn turns(&self) -> u32 {
        self.last.0 + 1 - self.first.0
    }
}

/// User-text preview kept per topic.
pub const PREVIEW_CHARS: usize = 120;

/// The outcome of one [`Segmenter::push_turn`].
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Decision {
    /// The new turn's id.
    pub turn: TurnId,
    /// Its topic.
    pub topic: TopicId,
    /// Whether it opened that topic.
    pub new_topic: bool,
    /// The boundary score.
    pub score: f64,
    /// How close the score was to the threshold (|score − threshold|): small = uncertain, a
    /// candidate for a layer-2 check.
    pub margin: f64,
}

/// What [`Segmenter::apply_llm`] did.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub enum Applied {
    /// Label set, boundaries unchanged.
    Labelled,
    /// A topic now starts at the turn (label set on it).
    BoundaryAdded,
    /// The turn's topic merged into the previous one (label left as it was).
    BoundaryRemoved,
    /// The turn is frozen (a fold used its boundary): only an unset label was filled in.
    Frozen,
    /// Unknown turn.
    Unknown,
}

/// Incremental segmenter state: small, serialisable, resumable.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
#[serde(rename_all = "camelCase", default)]
pub struct Segmenter {
    /// Rules in force.
    pub params: Params,
    /// Completed turns so far.
    turns: u32,
    /// Topics in order (contiguous, covering t1..t{turns}).
    topics: Vec<Topic>,
    /// Next topic number.
    next_topic: u32,
    /// Turns ≤ this have fixed topics (0 = none).
    frozen: u32,
    /// Document frequency by term hash (bounded by `params.max_vocab`).
    df: BTreeMap<u32, u32>,
    /// Turns counted in `df` (IDF's N).
    docs: u32,
    /// The open topic's accumulated term weights (bounded by `params.topic_terms`).
    topic_vocab: Weights,
    /// The last `params.window` turns' bags of the open topic, oldest first.
    recent: Vec<Vec<(u32, f64)>>,
    /// Tools used in the window's turns.
    recent_tools: Vec<String>,
    /// The last turn's user text clipped (for the layer-2 query).
    last_user: String,
    /// Timestamp of the last turn, if given.
    last_at_ms: Option<f64>,
}

/// A completed turn as the segmenter reads it.
#[derive(Clone, Copy, Debug)]
pub struct TurnInput<'a> {
    /// Digests of the turn's messages in order (the user message first).
    pub digests: &'a [Digest],
    /// Time of the turn's user message, if known (for the idle-gap rule).
    pub at_ms: Option<f64>,
}

/// Euclidean norm of `w`.
fn norm(w: &Weights) -> f64 {
    let mut sq = 0.0;
    for x in w.values() {
        sq += x * x;
    }
    f64::sqrt(sq)
}

fn cosine(a: &Weights, b: &Weights) -> f64 {
    let (small, large) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    let dot: f64 = small
        .iter()
        .filter_map(|(k, x)| large.get(k).map(|y| x * y))
        .sum();
    let (na, nb) = (norm(a), norm(b));
    if na == 0.0 || nb == 0.0 {
        0.0
    } else {
        dot / (na * nb)
    }
}

/// Keep the `n` heaviest entries (ties by key) of a weight map.
fn cap_weights(m: &mut Weights, n: usize) {
    if m.len() <= n {
        return;
    }
    let keep = terms::among_heaviest(m.iter().map(|(k, w)| (*k, *w)).collect(), n);
    m.retain(|k, w| keep(&(*k, *w)));
}

impl Segmenter {
    /// An empty segmenter with `params`.
    pub fn new(params: Params) -> Segmenter {
        Segmenter {
            params,
            next_topic: 1,
            ..Segmenter::default()
        }
    }

    /// Batch segmentation: the same pushes, in order (equal to pushing one by one).
    pub fn segment(params: Params, turns: &[TurnInput]) -> Segmenter {
        let mut s = Segmenter::new(params);
        for t in turns {
            s.push_turn(*t);
        }
        s
    }

    /// Completed turns so far.
    pub fn turn_count(&self) -> u32 {
        self.turns
    }

    /// Topics in order.
    pub fn topics(&self) -> &[Topic] {
        &self.topics
    }

    /// The topic of a turn.
    pub fn topic_of(&self, turn: TurnId) -> Option<&Topic> {
        if turn.0 == 0 || turn.0 > self.turns {
            return None;
        }
        let i = self.topics.partition_point(|t| t.first <= turn);
        i.checked_sub(1).and_then(|i| self.topics.get(i))
    }

    /// A topic by id.
    pub fn topic(&self, id: TopicId) -> Option<&Topic> {
        self.topics.iter().find(|t| t.id == id)
    }

    /// First turns of every topic after the first (the boundaries).
    pub fn boundaries(&self) -> Vec<TurnId> {
        let mut out = Vec::with_capacity(self.topics.len().saturating_sub(1));
        for t in self.topics.iter().skip(1) {
            out.push(t.first);
        }
        out
    }

    /// Turns ≤ this have fixed topics (0 = none frozen).
    pub fn frozen_through(&self) -> u32 {
        self.frozen
    }

    /// Pin the topics of turns ≤ `turn` (a fold used these boundaries). Never unfreezes.
    pub fn freeze_through(&mut self, turn: TurnId) {
        self.frozen = self.frozen.max(turn.0.min(self.turns));
    }

    /// The IDF-weighted vector of a bag.
    fn tfidf<'a>(&self, bag: impl IntoIterator<Item = &'a (u32, f64)>) -> Weights {
        let n = f64::from(self.docs.max(1));
        bag.into_iter()
            .map(|&(k, w)| {
                let df = f64::from(self.df.get(&k).copied().unwrap_or(0));
                (k, w * (((n + 1.0) / (df + 1.0)).ln() + 1.0))
            })
            .collect()
    }

    /// Lexical similarity of a turn with the open topic: max of window and vocabulary cosine.
    fn similarity(&self, t: &TurnTerms) -> f64 {
        let v = self.tfidf(&t.bag);
        let mut win = Weights::new();
        for bag in &self.recent {
            for (k, w) in bag {
                *win.entry(*k).or_insert_with(|| 0.0) += w;
            }
        }
        let s_win = cosine(&v, &self.tfidf(&win.into_iter().collect::<Vec<_>>()));
        let vocab: Vec<(u32, f64)> = self.topic_vocab.iter().map(|(k, w)| (*k, *w)).collect();
        let s_topic = cosine(&v, &self.tfidf(&vocab));
        s_win.max(s_topic)
    }

    /// The boundary score of a turn against the open topic.
    fn score(&self, t: &TurnTerms, at_ms: Option<f64>) -> f64 {
        let p = &self.params;
        let lexical = 1.0 - self.similarity(t);
        let weight = (t.user_terms as f64 / p.full_weight_terms.max(1) as f64).min(1.0);
        let mut s = p.lexical_weight * lexical * (0.35 + 0.65 * weight) + cue(&t.user_text);
        if let (Some(a), Some(b)) = (at_ms, self.last_at_ms) {
            let gap = a - b;
            if gap > 2.0 * 3_600_000.0 {
                s += 2.0 * p.gap_bonus;
            } else if gap > 1_800_000.0 {
                s += p.gap_bonus;
            }
        }
        if !t.tools.is_empty()
            && !self.recent_tools.is_empty()
            && !t.tools.iter().any(|x| self.recent_tools.contains(x))
        {
            s += p.tool_shift_bonus;
        }
        s
    }

    fn count_doc(&mut self, t: &TurnTerms) {
        self.docs += 1;
        for (k, _) in &t.bag {
            *self.df.entry(*k).or_insert_with(|| 0) += 1;
        }
        let cap = self.params.max_vocab.max(16);
        if self.df.len() > cap {
            // Evict the rarest terms (ties: smallest hash) down to 3/4 of the cap.
            // Counts are exact as f64, so the weight order is the count order.
            let counts = self.df.iter().map(|(k, c)| (*k, f64::from(*c))).collect();
            let keep = terms::among_heaviest(counts, cap * 3 / 4);
            self.df.retain(|k, c| keep(&(*k, f64::from(*c))));
        }
    }

    fn open_topic(&mut self, turn: TurnId, score: f64, cause: Cause, t: &TurnTerms) {
        let id = TopicId(self.next_topic.max(1));
        self.next_topic = id.0 + 1;
        self.topics.push(Topic {
            id,
            first: turn,
            last: turn,
            score,
            cause,
            label: None,
            keywords: Vec::new(),
            preview: crate::text::clip(&crate::text::one_line(&t.user_text), PREVIEW_CHARS),
        });
        self.topic_vocab = Weights::new();
        self.recent.clear();
        self.recent_tools.clear();
    }

    /// Add the turn's terms to the open topic (vocabulary, window, keywords).
    fn absorb(&mut self, t: &TurnTerms) {
        for (k, w) in &t.bag {
            *self.topic_vocab.entry(*k).or_insert_with(|| 0.0) += w;
        }
        cap_weights(&mut self.topic_vocab, self.params.topic_terms.max(8));
        self.recent.push(t.bag.clone());
        let w = self.params.window.max(1);
        if self.recent.len() > w {
            let drop = self.recent.len() - w;
            self.recent.drain(..drop.min(self.recent.len()));
        }
        for tool in &t.tools {
            if !self.recent_tools.contains(tool) {
                self.recent_tools.push(tool.clone());
            }
        }
        if self.recent_tools.len() > 16 {
            let drop = self.recent_tools.len() - 16;
            self.recent_tools.drain(..drop.min(self.recent_tools.len()));
        }
        // Keywords: the topic's first turns' heaviest user words / file names by TF-IDF.
        let df = &self.df;
        let n = f64::from(self.docs.max(1));
        if let Some(topic) = self.topics.last_mut() {
            if topic.keywords.len() < terms::MAX_KEYWORDS {
                let mut cands: Vec<(f64, &String)> = Vec::with_capacity(t.keywords.len());
                for (h, s) in &t.keywords {
                    let d = f64::from(df.get(h).copied().unwrap_or(0));
                    cands.push((((n + 1.0) / (d + 1.0)).ln(), s));
                }
                // Pairs that compare equal are equal (same bits, same text): any sort gives
                // the same keywords.
                cands.sort_unstable_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(b.1)));
                for (_, s) in cands {
                    if topic.keywords.len() >= terms::MAX_KEYWORDS {
                        break;
                    }
                    if !topic.keywords.contains(s) {
                        topic.keywords.push(s.clone());
                    }
                }
            }
        }
    }

    /// Add the next completed turn; decides its topic from turns ≤ it only.
    pub fn push_turn(&mut self, input: TurnInput) -> Decision {
        self.push_terms(&terms::turn_terms(input.digests), input.at_ms)
    }

    /// [`Segmenter::push_turn`] from the turn's terms ([`terms::turn_terms`] of its digests):
    /// what the session journal carries, so a replay decides exactly as the live push did.
    pub fn push_terms(&mut self, t: &TurnTerms, at_ms: Option<f64>) -> Decision {
        if self.next_topic == 0 {
            self.next_topic = 1;
        }
        self.turns += 1;
        let turn = TurnId(self.turns);
        let p = self.params.clone();
        let noise = is_noise(&t.user_text);
        let (new_topic, score) = match self.topics.last() {
            None => (true, 0.0),
            Some(_) if noise => (false, 0.0),
            Some(open) => {
                let s = self.score(t, at_ms);
                let strong = cue(&t.user_text) > 0.0;
                let long_enough = open.turns() >= p.min_topic_turns.max(1);
                (s >= p.threshold && (long_enough || strong), s)
            }
        };
        self.count_doc(t);
        if new_topic {
            let cause = if self.topics.is_empty() {
                Cause::Start
            } else {
                Cause::Local
            };
            self.open_topic(turn, score, cause, t);
        } else if let Some(open) = self.topics.last_mut() {
            open.last = turn;
        }
        if !noise || self.recent.is_empty() {
            self.absorb(t);
        }
        self.last_user = crate::text::clip(&crate::text::one_line(&t.user_text), 300);
        if at_ms.is_some() {
            self.last_at_ms = at_ms;
        }
        let topic = self.topics.last().map_or(TopicId(0), |t| t.id);
        Decision {
            turn,
            topic,
            new_topic,
            score,
            margin: (score - p.threshold).abs(),
        }
    }

    /// Apply a layer-2 answer about `turn` (see [`llm`]). Only unfrozen boundaries move:
    /// `is_new_topic` adds a boundary at `turn` or removes the one there; the label goes to
    /// the turn's topic (a frozen topic only gets a label if it has none).
    pub fn apply_llm(&mut self, turn: TurnId, answer: &llm::Answer) -> Applied {
        if turn.0 == 0 || turn.0 > self.turns {
            return Applied::Unknown;
        }
        let label = llm::clean_label(&answer.label);
        let i = self.topics.partition_point(|t| t.first <= turn) - 1;
        let starts_here = self.topics.get(i).is_some_and(|t| t.first == turn);
        // A boundary at `turn` changes the topic of `turn` and later turns of its topic only,
        // so it is allowed when `turn` is past the frozen prefix.
        if turn.0 <= self.frozen {
            if let Some(t) = self.topics.get_mut(i) {
                if t.label.is_none() && !label.is_empty() {
                    t.label = Some(label);
                }
            }
            return Applied::Frozen;
        }
        let set_label = |t: &mut Topic, label: String| {
            if !label.is_empty() {
                t.label = Some(label);
            }
        };
        if answer.is_new_topic && !starts_here {
            let Some(cur) = self.topics.get_mut(i) else {
                return Applied::Unknown;
            };
            let old_last = cur.last;
            cur.last = TurnId(turn.0 - 1);
            let id = TopicId(self.next_topic.max(1));
            self.next_topic = id.0 + 1;
            let mut t = Topic {
                id,
                first: turn,
                last: old_last,
                score: 0.0,
                cause: Cause::Llm,
                label: None,
                keywords: Vec::new(),
                preview: if turn.0 == self.turns {
                    crate::text::clip(&self.last_user, PREVIEW_CHARS)
                } else {
                    String::new()
                },
            };
            set_label(&mut t, label);
            self.topics.insert(i + 1, t);
            if turn.0 == self.turns {
                // The open topic is now this one turn: compare later turns with it alone.
                if let Some(last) = self.recent.last().cloned() {
                    self.topic_vocab = Weights::new();
                    for &(k, w) in &last {
                        self.topic_vocab.insert(k, w);
                    }
                    cap_weights(&mut self.topic_vocab, self.params.topic_terms.max(8));
                    self.recent = vec![last];
                }
            }
            return Applied::BoundaryAdded;
        }
        if !answer.is_new_topic && starts_here && i > 0 {
            let removed = self.topics.remove(i);
            if let Some(prev) = self.topics.get_mut(i - 1) {
                prev.last = removed.last;
            }
            return Applied::BoundaryRemoved;
        }
        if let Some(t) = self.topics.get_mut(i) {
            set_label(t, label);
        }
        Applied::Labelled
    }

    /// The layer-2 query for the last turn (see [`llm::Query`]); `assistant_preview` and
    /// `tools` come from the caller's digests of that turn.
    pub fn llm_query(&self, digests: &[Digest]) -> Option<llm::Query> {
        let turn = TurnId(self.turns);
        let topic = self.topic_of(turn)?;
        Some(llm::Query::new(turn, topic, digests))
    }
}
