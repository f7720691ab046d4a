//! The session engine: the API `src/wasm.rs` binds and the JS shim drives.
//!
//! One [`Session`] per host session. Each call validates what the host sent, decides, and
//! records its decisions as journal events ([`crate::engine::journal::Event`]) applied through
//! [`SessionState::apply`]; [`Session::take_journal`] hands the new lines to JS.
//!
//! ## Output shape and the append-only rule
//! `assemble` returns a plan: host indices plus synthetic messages. After `k` folds the output is
//! `head + seg_1 + … + seg_k + live tail`, where the head is the first `prefixLockCount` host
//! messages extended to the next pairing boundary (pinned for the session), each segment is a
//! fold record (a synthetic user message with a fixed timestamp) followed by the protected
//! tool-call groups of its region (host objects), and the live tail is host
//! `[liveFrom, count)`. Between two calls, the earlier output is a prefix of the later one
//! unless a fold (then head and earlier segments are unchanged, `report.stablePrefix`), a
//! condensation (head unchanged), a divergence or a passthrough switch happened in between;
//! every such event is declared in the report.
//!
//! ## When to fold
//! The rules below run to a fixpoint on every assemble (a fold or condensation changes the
//! inputs of the next rule; stopping early would make a repeated assemble fold again).
//! * **Priced**: candidate cut `c` = earliest boundary after `liveFrom` whose live tail
//!   `[c, count)` fits `tailTokens` (none when the live tail already fits or the last group
//!   alone does not); the region `[liveFrom, c)` must reach `minFoldTokens`;
//!   [`crate::cost::fold_decision`] must say it pays within the expected remaining calls
//!   (config, else calls so far clamped to 4..200). When it pays and a ready LLM summary covers
//!   exactly `[liveFrom, to)` with `to <= c` and at least half the region's tokens, the cut
//!   moves to `to` and the record uses the summary. Three consecutive folds saving less than 5 %
//!   of the estimate trip a breaker that stops priced folds (and summary requests) until a fold
//!   saves.
//! * **Emergency**: static + message estimate over `compactRatio × budget` (budget = config,
//!   else host, else 128,000) → fold at the smallest boundary that gets under, down to keeping
//!   only the last boundary group, whatever the price (the price is reported).
//! * **Forced**: `compact(force)` or a pending `request_fold`: the priced candidate cut if any,
//!   else the last boundary.
//! * **Condense**: when all records exceed `foldRecordBudget`, or the prompt is still over the
//!   threshold and condensing shrinks the records, all segments become one (`c<k>`), declared
//!   with its price; JS stores the whole condensed range under `c<k>`.
//!
//! Token estimates: weighted chars of the message JSON (an image part by a fixed weight, not
//! its base64 data: [`crate::tokens::message_weight`]) through [`crate::tokens::Calibration`],
//! fed by `commit_turn`. The fit is used once its observations spread (≥ 2 samples over ≥ 2,000
//! weighted chars and 10 %); before that, the default slope and the last residual as static
//! (a one-point fit through the origin reads a 12K-token system prompt as 2 tokens per char).

//! ## Divergence policy
//! The engine compares supplied indices with recorded hashes. With only the `need()` subset a
//! mismatch answers `needFull` (no state change); with full history it finds the first differing
//! index `d` and its cause: `d` in the live tail → drop records from `d` and re-ingest (folds
//! stay valid); `d` inside the head or a folded region → re-pin (fresh structure over the
//! incoming history; counters survive). Model or system-prompt-addition changes are counted,
//! not acted on (the cache is gone either way; folding again would only cost more).

use crate::config::Config;
use crate::digest::Digest;
use crate::error::{Error, Result};
use crate::record::MsgHash;
use by_index::ByIndex;
use history::Evicted;
use journal::{Event, ReplayReport};
#[cfg(test)]
use serde_json::json;
use state::{OutKey, Segment, SessionState};
use std::cell::RefCell;

/// Share of the room between the fixed prefix (static + head + records) and the emergency
/// threshold that an emergency fold leaves free (hysteresis, see `emergency_step`).
const EMERGENCY_HEADROOM: f64 = 0.45;

/// Token budget when neither the config nor the host gives one.
pub const DEFAULT_BUDGET: u64 = 128_000;
/// A fold saving less than 1/20 (5 %) of the estimate counts as low for the breaker.
const LOW_SAVING_DIVISOR: u64 = 20;
/// Spot checks per assemble among recorded, not otherwise supplied indices.
const SPOT_CHECKS: u32 = 4;
/// Summary text kept at most (chars).
const MAX_SUMMARY_CHARS: usize = 24_000;
/// A pending summary is given up this long after its own timeout.
const SUMMARY_GRACE_MS: f64 = 60_000.0;

mod api;
pub mod by_index;
mod drive;
pub mod evict;
mod gate;
mod history;
mod inspect;
mod limits;
mod output;
mod policy;
mod stats;
mod summary;
mod topic_llm;
pub mod topics;
mod turn;

pub mod fingerprint;
pub mod journal;
pub mod state;

pub use api::*;
pub use drive::{Drive, Driven};
pub use gate::{glob_match, host_turn_threshold, model_managed};
pub use inspect::View;
use output::{echo_repair, identity_order, push_hosts};
pub use topic_llm::TopicRequest;

// ---- session ----------------------------------------------------------------------------------

/// Where an output entry comes from, before pairing repair.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Src {
    Host(u32),
    Seg(usize),
}

/// An output rendered from a layout.
struct Built {
    order: Vec<i64>,
    synthetic: Vec<String>,
    keys: Vec<OutKey>,
    w: u64,
    repairs: Vec<RepairReport>,
    /// Layout position each output entry stems from (a synthetic repair: the entry before it).
    origin: Vec<usize>,
}

/// A record prepared for a fold (not yet applied).
#[derive(Debug, Clone)]
struct Prepared {
    seg: Segment,
    text: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Assemble,
    Compact { force: bool },
}

/// One host session: config, state and the journal lines not yet taken.
#[derive(Debug, Clone)]
pub struct Session {
    cfg: Config,
    st: SessionState,
    pending: journal::Pending,
    /// Records rendered during the current call, by (fold id, from, to, summary hash): the fold
    /// rules run to a fixpoint and would otherwise render the same record repeatedly. Cleared
    /// at the start of every assemble (records of a range never change within one call).
    /// A handful of entries per call: a vector searched linearly (a map type here cost
    /// kilobytes of wasm for no speed).
    prepared: RefCell<Vec<(PreparedKey, Prepared)>>,
    /// Digests of the last turn committed in this process (`t<k>`, for a layer-2 topic check
    /// in the `maintain` that follows; not state: a restart falls back to the records).
    last_turn: Option<(u32, Vec<Digest>)>,
    /// When this process last planned a request the host sends (any assemble, also one no turn
    /// is committed for, such as the host's background requests): the provider's cache lifetime
    /// runs from there ([`Session::cache_terms`]). Not state: after a restart the last committed
    /// call's time stands in.
    last_request_ms: Option<f64>,
}

type PreparedKey = (String, u32, u32, Option<String>);

impl Session {
    /// A read-only view of the state and config: the topic tools' answers and the stats.
    pub fn view(&self) -> View<'_> {
        View {
            st: &self.st,
            cfg: &self.cfg,
        }
    }

    /// A new, empty session.
    pub fn new(config: Config, session_id: &str) -> Session {
        Session {
            cfg: config,
            st: SessionState::new(session_id),
            pending: journal::Pending::default(),
            prepared: RefCell::default(),
            last_turn: None,
            last_request_ms: None,
        }
    }

    /// The hash algorithm of this session's records ([`fingerprint::HashAlgo::of`]).
    pub fn hash_algo(&self) -> fingerprint::HashAlgo {
        fingerprint::HashAlgo::of(&self.st.records)
    }

    /// The hash of a message's JSON text in this session's algorithm: what its record holds
    /// and its output key is made of.
    pub(crate) fn msg_hash(&self, json: &str) -> MsgHash {
        self.hash_algo().hash(json)
    }

    /// Rebuild from an optional snapshot (JSON text) plus the journal text written after it.
    /// A torn or corrupt tail is ignored (reported), never an error unless the snapshot itself
    /// is bad or belongs to another session.
    pub fn restore(
        config: Config,
        session_id: &str,
        snapshot: Option<&str>,
        journal: &str,
    ) -> Result<(Session, ReplayReport)> {
        let mut st = match snapshot.map(str::trim).filter(|s| !s.is_empty()) {
            Some(s) => SessionState::from_snapshot(s)
                .map_err(|e| Error::State(format!("snapshot: {e}")))?,
            None => SessionState::new(session_id),
        };
        if st.session_id != session_id {
            return Err(Error::State(format!(
                "snapshot belongs to session {}",
                crate::quoted(&st.session_id)
            )));
        }
        let report = journal::replay(&mut st, journal);
        Ok((
            Session {
                cfg: config,
                st,
                pending: journal::Pending::default(),
                prepared: RefCell::default(),
                last_turn: None,
                last_request_ms: None,
            },
            report,
        ))
    }

    /// The whole state as JSON (includes `seq`).
    pub fn snapshot(&self) -> String {
        self.try_snapshot().unwrap_or_default()
    }

    /// A copy to simulate on (`compact_request`), with no journal lines pending: the state
    /// travels through its snapshot text. The writer and decoder are in the module anyway; a
    /// derived deep `Clone` of the state added ~3.4 KB of per-type copy code to the wasm, for a
    /// call the host makes only when it wants to compact.
    fn fork(&self) -> Result<Session> {
        let st = SessionState::from_snapshot(&self.try_snapshot()?)
            .map_err(|e| Error::Internal(format!("fork: {e}")))?;
        Ok(Session {
            cfg: self.cfg.clone(),
            st,
            pending: journal::Pending::default(),
            prepared: RefCell::default(),
            last_turn: self.last_turn.clone(),
            last_request_ms: self.last_request_ms,
        })
    }

    /// The snapshot, or an error (never an empty text that would replace the journal).
    pub fn try_snapshot(&self) -> Result<String> {
        String::from_utf8(self.try_snapshot_bytes()?)
            .map_err(|e| Error::Internal(format!("snapshot: {e}")))
    }

    /// [`Session::try_snapshot`] as UTF-8 bytes, written into one buffer sized up front: grown
    /// piece by piece, a snapshot of 100,000 records (50 MB) spent a tenth of its time copying
    /// the buffer into larger ones.
    pub fn try_snapshot_bytes(&self) -> Result<Vec<u8>> {
        let mut out = Vec::with_capacity(
            self.st
                .records
                .len()
                .saturating_mul(SNAPSHOT_BYTES_PER_RECORD)
                .saturating_add(SNAPSHOT_BYTES_BASE),
        );
        serde_json::to_writer(&mut out, &self.st)
            .map_err(|e| Error::Internal(format!("snapshot: {e}")))?;
        if out.is_empty() {
            return Err(Error::Internal("snapshot: empty".into()));
        }
        Ok(out)
    }

    /// Journal lines produced since the last call (newline-terminated).
    pub fn take_journal(&mut self) -> String {
        self.pending.take()
    }

    /// [`Session::take_journal`], or an error when events of this call passed the journal limit
    /// unencoded ([`Session::set_journal_limit`]): the lines would hold only some of them, and
    /// only a snapshot holds them all.
    pub fn try_take_journal(&mut self) -> Result<String> {
        if self.pending.superseded() {
            return Err(Error::State(
                "the journal limit was passed: only a snapshot holds this call's events".into(),
            ));
        }
        Ok(self.pending.take())
    }

    /// UTF-8 length of the journal lines not yet taken.
    pub fn pending_journal_len(&self) -> usize {
        self.pending.len()
    }

    /// The shim writes a snapshot instead of journal lines past `bytes`: encode no events past
    /// that (until the lines are taken or dropped). A first ingest of a long history then
    /// encodes no journal event it would throw away.
    pub fn set_journal_limit(&mut self, bytes: usize) {
        self.pending.set_limit(bytes);
    }

    /// Discard the pending lines, once a snapshot holding their events is on disk.
    pub fn drop_journal(&mut self) {
        self.pending.clear();
    }

    /// Read-only state (tests, bench).
    pub fn state(&self) -> &SessionState {
        &self.st
    }

    /// The config in use.
    pub fn config(&self) -> &Config {
        &self.cfg
    }

    fn emit(&mut self, e: Event) -> Result<()> {
        // Encoded first (with the `seq` the event gets): apply consumes it. A refused event
        // leaves neither state nor journal changed.
        self.pending.push(self.st.seq + 1, &e);
        if let Err(err) = self.st.apply(e) {
            self.pending.pop();
            return Err(err);
        }
        Ok(())
    }

    // ---- need ----------------------------------------------------------------------------------

    /// Which host indices the engine needs stringified for an `assemble` over `count` messages:
    /// every index until the head is pinned (usually the first turn or two) or when the history
    /// got shorter; afterwards the head, the last recorded index (boundary check), every new
    /// index, and up to 4 spot checks among recorded ones.
    ///
    /// The spot checks depend only on `count` and the head (`count-2`, `count-3`, where
    /// `tool_result_persist` rewrites land, plus two positions hashed from `count`), so a
    /// repeated assemble with the same input never needs more than the first one was given:
    /// same input, same output.
    pub fn need(&self, count: u32) -> Vec<u32> {
        let rc = self.st.host_recorded();
        if count == 0 {
            return Vec::new();
        }
        if rc == 0 || count < rc || !self.st.pinned {
            return (0..count).collect();
        }
        // The head's host indices after the prelude, and the first two recorded messages even
        // when there is no head to check (the host evicted it, or `prefixLockCount` is 0): a
        // front eviction or rewrite changes them. Without them, one that put as many messages in
        // front as it dropped went unseen when the last recorded message still matched, and the
        // tool calls it dropped were taken as still open (or their results sent as orphans).
        // Two, not one: the host's front message can be the very text it put there before (the
        // divergence property's eviction with a repeated front message and a dropped call).
        let skip = self.st.skip.min(rc);
        let head = (skip + self.st.head_len.saturating_sub(self.st.base))
            .max(skip + 2)
            .min(rc);
        let mut set: Vec<u32> = (skip..head).collect();
        set.push(rc - 1);
        set.extend(rc..count);
        set.extend(
            self.spot_checks(head, count)
                .into_iter()
                .filter(|&i| i < rc),
        );
        set.sort_unstable();
        set.dedup();
        set
    }

    /// Up to [`SPOT_CHECKS`] indices in `[head, count)`.
    fn spot_checks(&self, head: u32, count: u32) -> Vec<u32> {
        if count <= head {
            return Vec::new();
        }
        let span = u64::from(count - head);
        let mut out: Vec<u32> = Vec::with_capacity(SPOT_CHECKS as usize);
        for k in [2u32, 3] {
            if let Some(i) = count.checked_sub(k).filter(|i| *i >= head) {
                out.push(i);
            }
        }
        for k in 0..u64::from(SPOT_CHECKS - 2) {
            let r = splitmix(u64::from(count).wrapping_mul(4).wrapping_add(k));
            out.push(head + (r % span) as u32);
        }
        out
    }

    // ---- assemble ------------------------------------------------------------------------------

    /// Build the context for the next model call. Idempotent: the same input twice gives the
    /// same plan and journals nothing the second time.
    pub fn assemble(&mut self, input: &AssembleInput) -> Result<AssemblePlan> {
        let plan = self.run(input, Op::Assemble)?;
        self.note_request(input, &plan);
        Ok(plan)
    }

    /// Host `compact()`: fold now (`force`) if there is anything to fold; without `force`, the
    /// usual priced/emergency rules.
    pub fn compact(&mut self, input: &AssembleInput, force: bool) -> Result<AssemblePlan> {
        let plan = self.run(input, Op::Compact { force })?;
        self.note_request(input, &plan);
        Ok(plan)
    }

    /// A plan the host sends (not a request for the full history) starts the provider's cache
    /// lifetime anew.
    fn note_request(&mut self, input: &AssembleInput, plan: &AssemblePlan) {
        if !plan.need_full && input.now_ms.is_finite() {
            let last = self.last_request_ms.unwrap_or(f64::NEG_INFINITY);
            self.last_request_ms = Some(last.max(input.now_ms));
        }
    }

    fn need_full_plan(&self, count: u32, mut missing: Vec<u32>, managed: bool) -> AssemblePlan {
        let mut report = AssembleReport {
            count,
            managed,
            pinned: self.st.pinned,
            head_len: self.st.head_len,
            live_from: self.st.live_from,
            ..Default::default()
        };
        missing.truncate(64);
        report.missing = missing;
        AssemblePlan {
            order: identity_order(count),
            need_full: true,
            passthrough: true,
            report,
            ..Default::default()
        }
    }

    fn run(&mut self, input: &AssembleInput, op: Op) -> Result<AssemblePlan> {
        self.prepared.borrow_mut().clear();
        let count = input.count;
        let mut given: ByIndex<&str> = ByIndex::new();
        for m in &input.messages {
            if m.index >= count {
                return Err(Error::Input(format!(
                    "message index {} out of range (count {count})",
                    m.index
                )));
            }
            if given.insert(m.index, m.json.as_str()).is_some() {
                return Err(Error::Input(format!(
                    "message index {} supplied twice",
                    m.index
                )));
            }
        }
        let model = input
            .model
            .clone()
            .filter(|m| !m.trim().is_empty())
            .or_else(|| self.st.model.clone());
        let managed = model_managed(&self.cfg, model.as_deref());
        let mut missing = self.need(count);
        missing.retain(|i| !given.contains_key(i));
        if !missing.is_empty() {
            return Ok(self.need_full_plan(count, missing, managed));
        }
        let mut hashes: ByIndex<MsgHash> = ByIndex::new();
        let algo = self.hash_algo();
        for (&i, j) in given.iter() {
            hashes.insert(i, algo.hash(j));
        }
        let full = given.len() == count as usize;

        // With ownsCompaction, OpenClaw re-runs assemble inside the tool loop with the messages
        // we returned (measured in the e2e runs: count 14 → our 6-message output, then 6, 6, 6).
        // Taking that echo for the real history would re-pin the session, and the next turn's
        // real history would then re-fold everything after the head (a cache break each turn).
        if managed && full {
            if let Some(plan) = self.echo_plan(count, &hashes, &given) {
                return Ok(plan);
            }
        }

        // Divergence first: with partial input nothing may change before we know.
        let divergence = {
            // Host space: the unrecorded prelude matches whatever the host sends there; host
            // index `h` past it is record `h - skip + base`. Only supplied indices are looked
            // up (no walk of the history per assemble).
            let (skip, base) = (self.st.skip, self.st.base as usize);
            let recorded = self.st.records.get(base..).unwrap_or(&[]);
            let at = |h: u32, incoming: &MsgHash| -> bool {
                if h < skip {
                    return hashes.get(&h).copied().unwrap_or_default() == *incoming;
                }
                recorded
                    .get((h - skip) as usize)
                    .map_or(MsgHash::default(), |r| r.h)
                    == *incoming
            };
            fingerprint::first_divergence(skip as usize + recorded.len(), at, &hashes, count)
        };
        if divergence.is_some() && !full {
            let mut missing = Vec::new();
            for i in 0..count {
                if !given.contains_key(&i) {
                    missing.push(i);
                }
            }
            return Ok(self.need_full_plan(count, missing, managed));
        }

        let mut report = AssembleReport {
            count,
            managed,
            ..Default::default()
        };
        self.env(&model, input.system_prompt_addition.as_deref(), &mut report)?;
        // The pre-prompt budget (the turn's first assemble): the tool loop's are near the
        // whole window and would make the journal flap between the two.
        let budget = (op == Op::Assemble && self.st.turn.shared.is_empty())
            .then_some(input.token_budget)
            .flatten();
        self.note_limits(input.context_window, budget)?;

        let mut writes = Vec::new();
        if let Some(d) = divergence {
            let evicted = if managed {
                self.try_evict(
                    &hashes,
                    count,
                    input,
                    model.as_deref(),
                    &mut report,
                    &mut writes,
                )?
            } else {
                Evicted::No
            };
            match evicted {
                Evicted::No => self.diverge(d, count, &given, &mut report)?,
                Evicted::Whole => {}
                Evicted::ThenDiverges(at) => self.diverge(at, count, &given, &mut report)?,
            }
        }

        // Ingest new messages (host index i is record i - skip + base).
        let start = self.st.host_recorded();
        reserve_heap(
            given
                .from(start)
                .map(|(_, j)| j.len().min(RESERVE_CAP))
                .sum(),
        );
        self.st
            .records
            .reserve(count.saturating_sub(start) as usize);
        for i in start..count {
            let json = given
                .get(&i)
                .copied()
                .ok_or_else(|| Error::Internal(format!("index {i} not supplied")))?;
            let r = self
                .st
                .rec_of(i)
                .ok_or_else(|| Error::Internal(format!("index {i} in the prelude")))?;
            // Every supplied index was hashed above (the divergence check).
            let h = hashes
                .get(&i)
                .copied()
                .unwrap_or_else(|| self.msg_hash(json));
            if let Some(reason) = self.ingest(r, json, h)? {
                report.quarantined.push(QuarantineReport {
                    index: i,
                    reason,
                    hash: h.hex(),
                });
            }
            report.ingested += 1;
        }
        if !self.st.pinned {
            self.try_pin(&given)?;
        }

        // From here on, record space: `rcount` records, the first `base` no longer sent.
        let (base, skip) = (self.st.base, self.st.skip);
        let rcount = self.st.recorded();
        if managed && self.st.pinned {
            self.fold_phase(
                rcount,
                input,
                model.as_deref(),
                op,
                &mut report,
                &mut writes,
            )?;
        }
        // Fold regions for JS to store, in host indices (an evicted part is gone from the host).
        for w in &mut writes {
            w.from = w.from.max(base) - base + skip;
            w.to = w.to.max(base) - base + skip;
        }
        writes.retain(|w| w.to > w.from);

        let layout = if managed && self.st.pinned {
            self.layout(rcount)
        } else {
            let mut layout = Vec::new();
            push_hosts(&mut layout, base, rcount);
            layout
        };
        let built = self.build(&layout, managed)?;
        report.stable_prefix = self.stable_prefix(&report, &layout, &built);
        report.repairs = built.repairs.clone();
        report.pinned = self.st.pinned;
        report.head_len = self.st.head_len;
        report.live_from = self.st.live_from;
        report.breaker_tripped = self.st.breaker_tripped();
        let est = self.st.tokens(built.w);
        if report.budget_tokens == 0 {
            report.budget_tokens = self.view().budget(input);
            report.threshold_tokens = self.view().threshold(input);
            report.tokens_before = self.st.static_tokens() + est;
        }
        report.tokens_after = self.st.static_tokens() + est;
        report.over_budget = managed && report.tokens_after > report.threshold_tokens;
        if managed && report.tokens_after > report.budget_tokens {
            report.warning = Some(format!(
                "estimated prompt {} tokens exceeds the budget of {} tokens even after folding \
                 (the live tail from message {} cannot be folded: the current turn alone is too \
                 large); the provider may reject the request",
                report.tokens_after, report.budget_tokens, report.live_from
            ));
        }
        self.record_output(&built)?;
        let mut synthetic = built.synthetic;
        let mut synthetic_keys = vec![String::new(); synthetic.len()];
        for (&o, key) in built.order.iter().zip(&built.keys) {
            if o < 0 {
                synthetic_keys[(-o - 1) as usize].clone_from(&key.0);
            }
        }
        for (text, key) in synthetic.iter_mut().zip(&synthetic_keys) {
            if input.known.contains(key) {
                text.clear();
            }
        }
        Ok(AssemblePlan {
            order: built.order,
            synthetic,
            synthetic_keys,
            estimated_tokens: est,
            need_full: false,
            passthrough: !managed,
            fold_writes: writes,
            report,
        })
    }

    /// `Some(plan)` when the incoming messages begin with exactly our last output and that
    /// output differs from the recorded history (it holds a fold record or skips messages):
    /// the host handed our assembled context back. The answer is that context unchanged plus
    /// whatever the host appended, with no state change (so assemble stays idempotent).
    ///
    /// What the host appended is not ours to trust: when the user typed while parallel tools
    /// ran, a user message can stand between a call and its last results, and the last result
    /// would reach the provider separated from its call (a 400 on DeepSeek). So the echoed list
    /// goes through the same strict [`pairing::repair`] as every other output (our own part is
    /// already valid, so repairs only ever touch what was appended).
    fn echo_plan(
        &self,
        count: u32,
        hashes: &ByIndex<MsgHash>,
        given: &ByIndex<&str>,
    ) -> Option<AssemblePlan> {
        let out = &self.st.out;
        if out.is_empty() || (count as usize) < out.len() {
            return None;
        }
        let history = &self.st.records[self.st.base as usize..];
        let differs_from_history = out.len() < history.len()
            || out.iter().zip(history).any(|(k, r)| r.h.short_key() != k.0);
        if !differs_from_history {
            return None;
        }
        for (i, k) in out.iter().enumerate() {
            let h = hashes.get(&(i as u32))?;
            if h.short_key() != k.0 {
                return None;
            }
        }
        let out_w = state::keys_w(out);
        let mut report = AssembleReport {
            count,
            managed: true,
            pinned: self.st.pinned,
            head_len: self.st.head_len,
            live_from: self.st.live_from,
            skipped: Some(
                "the host passed our assembled context back (tool-loop re-assembly): unchanged"
                    .into(),
            ),
            ..Default::default()
        };
        let (order, synthetic, syn_w) = echo_repair(count, given, &mut report);
        let mut appended_w = 0u64;
        for i in out.len() as u32..count {
            if let Some(j) = given.get(&i) {
                appended_w += crate::message::parse_host(j).weight(j);
            }
        }
        Some(AssemblePlan {
            order,
            synthetic,
            estimated_tokens: self.st.tokens(out_w + appended_w + syn_w),
            report,
            ..Default::default()
        })
    }
}

/// A snapshot's bytes per record, for [`Session::try_snapshot_bytes`]'s buffer: a record with
/// its digest is about 500 bytes (a larger one grows the buffer once).
const SNAPSHOT_BYTES_PER_RECORD: usize = 640;

/// A snapshot's bytes besides its records (output keys, rows, topics; grown when larger).
const SNAPSHOT_BYTES_BASE: usize = 64 << 10;

/// Message JSON (each message counted up to [`RESERVE_CAP`] bytes) a call must ingest before
/// [`reserve_heap`] reserves heap for it: a session reaching the engine for the first time with
/// a long history (an ordinary turn is kilobytes).
const RESERVE_FROM_BYTES: usize = 8 << 20;

/// Bytes of one message that count towards [`reserve_heap`]: what the engine keeps of a message
/// (record, digest, journal event) is bounded, and the parse of a large one is freed before the
/// next message is read.
const RESERVE_CAP: usize = 2_048;

/// Heap reserved per counted byte: parsed messages, digests, records and journal events come to
/// about that much (at 100,000 messages the peak memory of the process did not change).
const RESERVE_PER_BYTE: usize = 4;

/// Before ingesting `bytes` of message JSON (at least [`RESERVE_FROM_BYTES`]), allocate and free
/// at once the heap the ingest will use. The ingest allocates it in small pieces, and the wasm
/// module's allocator grows linear memory as those pieces need it, and one `memory.grow` costs
/// V8 about 0.3 ms once the memory is large. Freed at once, the block leaves one region for the
/// pieces, grown in one step. A reservation
/// that cannot be had changes nothing, and no output depends on it (the first assemble of
/// 100,000 messages took 0.86× the CPU time).
fn reserve_heap(bytes: usize) {
    if bytes >= RESERVE_FROM_BYTES {
        reserve_room(bytes.saturating_mul(RESERVE_PER_BYTE));
    }
}

/// Allocate and free at once `bytes` of heap (see [`reserve_heap`]); nothing when they cannot
/// be had.
fn reserve_room(bytes: usize) {
    let mut room: Vec<u8> = Vec::new();
    if bytes > 0 && room.try_reserve_exact(bytes).is_ok() {
        // Kept from being optimised away (an unused allocation may be removed).
        drop(std::hint::black_box(room));
    }
}

/// SplitMix64 finaliser: deterministic spread for spot-check positions.
fn splitmix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests;
