//! Prefix-cache simulators (docs/cache-model.md).
//!
//! Every model works on block-prefix hashes: `h_k` is a chained 64-bit hash of the first
//! `k·B` tokens, so "the first `u` tokens of X equal a stored unit" is one hash lookup.
//!
//! | model | units stored after request j (prompt `X_j`, output `Y_j`) | hit of request i |
//! |---|---|---|
//! | `ds-strict` | `⌊|X_j|⌋_B` over X_j; `⌊|X_j|+|Y_j|⌋_B` over X_j⊕Y_j; for every earlier j' < j, `⌊LCP(X_j, X_j')⌋_B` (common-prefix detection) | largest stored unit `u ≤ |X_i|` with `X_i[0:u]` equal to it |
//! | `ds-optimistic` | every block prefix of X_j⊕Y_j (fixed interval K = B) | same (= block-granular LCP) |
//! | `openai` | every 128-block prefix of X_j, 10-min idle TTL | 0 below 1,024 tokens, else the longest fresh 128-block prefix ≥ 1,024 |
//! | `kimi` | every 256-block prefix of X_j and the whole X_j, 30-min idle TTL | longest fresh 256-block prefix; an exact re-send hits all of X_i |
//!
//! DS-unit detail: the common-prefix units of request j are found without comparing against
//! every earlier request: the block prefixes of earlier prompts form a tree, and the LCP of X_j
//! with some earlier prompt ends exactly at block k iff an earlier prompt reaches `h_k` and then
//! ends or continues with another block than X_j's. Units are usable from request j+1 on (the
//! doc's `A+B, A+C → miss; A+D → hits A`).
//!
//! Cost: each request is compared with the previous one (shared pieces by pointer, the rest by
//! value); only the blocks after their common prefix are hashed and walked, so a session whose
//! requests extend each other costs time in proportion to the tokens added and memory in
//! proportion to the distinct blocks (`tests/bench_scaling.rs` counts both and checks every
//! outcome against the whole-chain simulator).
//!
//! Alongside the hit, every request reports:
//! - `ceiling`: `B·⌊max_{j<i} LCP(X_i, X_j⊕Y_j)/B⌋` (optimistic units, no eviction): H_max;
//! - `novel`: tokens after the longest token-exact prefix shared with an earlier X_j⊕Y_j
//!   (`U(σ)` in §5.4); `ceiling + remainder + novel = |X_i|`, `remainder < B`.
//!
//! Eviction: DeepSeek units are permanent inside a session unless `expiry_ms` is set (the §1.1
//! sensitivity run, e.g. 6 h idle).

use super::tokenizer::{PackedTokens, Tokens};
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

/// A token sequence made of shared pieces (requests share almost all of their pieces).
#[derive(Clone, Default, Debug)]
pub struct Seq {
    pieces: Vec<Tokens>,
    /// Per piece, the packed form it was read from, if any: what a simulator keeps of it.
    packed: Vec<Option<Arc<PackedTokens>>>,
    starts: Vec<usize>,
    len: usize,
}

impl Seq {
    /// Empty sequence.
    pub fn new() -> Seq {
        Seq::default()
    }

    /// Append a piece.
    pub fn push(&mut self, t: Tokens) {
        self.push_packed(t, None);
    }

    /// Append a piece read from `packed` (`t` is its tokens): a simulator that remembers
    /// blocks of this sequence keeps the packed piece instead of the tokens, so a long
    /// session's tokens are not held unpacked for the whole replay.
    pub fn push_packed(&mut self, t: Tokens, packed: Option<Arc<PackedTokens>>) {
        if t.is_empty() {
            return;
        }
        self.starts.push(self.len);
        self.len += t.len();
        self.pieces.push(t);
        self.packed.push(packed);
    }

    /// Append every piece of another sequence.
    pub fn extend(&mut self, other: &Seq) {
        for (p, z) in other.pieces.iter().zip(&other.packed) {
            self.push_packed(p.clone(), z.clone());
        }
    }

    /// Build from plain tokens (tests).
    pub fn from_tokens(t: &[u32]) -> Seq {
        let mut s = Seq::new();
        s.push(t.to_vec().into());
        s
    }

    /// Token count.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Iterate tokens in order.
    pub fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        self.pieces.iter().flat_map(|p| p.iter().copied())
    }

    /// Iterate tokens from position `pos`.
    pub fn iter_from(&self, pos: usize) -> impl Iterator<Item = u32> + '_ {
        let idx = match self.starts.binary_search(&pos) {
            Ok(i) => i,
            Err(i) => i.saturating_sub(1),
        };
        let skip = pos.saturating_sub(self.starts.get(idx).copied().unwrap_or(0));
        self.pieces
            .get(idx..)
            .unwrap_or(&[])
            .iter()
            .flat_map(|p| p.iter().copied())
            .skip(skip)
    }

    /// Number of pieces.
    pub fn piece_count(&self) -> usize {
        self.pieces.len()
    }

    /// Keep the first `n` pieces.
    pub fn truncate_pieces(&mut self, n: usize) {
        self.pieces.truncate(n);
        self.packed.truncate(n);
        self.starts.truncate(n);
        self.len = match (self.starts.last(), self.pieces.last()) {
            (Some(s), Some(p)) => s + p.len(),
            _ => 0,
        };
    }

    /// Length of the longest common token prefix with `other`. Pieces shared by both (the same
    /// `Arc` at the same position) are skipped whole; others are compared as slices.
    pub fn common_prefix(&self, other: &Seq) -> usize {
        let (mut ia, mut oa) = (0usize, 0usize);
        let (mut ib, mut ob) = (0usize, 0usize);
        let mut pos = 0usize;
        while let (Some(pa), Some(pb)) = (self.pieces.get(ia), other.pieces.get(ib)) {
            if oa == 0 && ob == 0 && Arc::ptr_eq(pa, pb) {
                pos += pa.len();
                ia += 1;
                ib += 1;
                continue;
            }
            let a = pa.get(oa..).unwrap_or(&[]);
            let c = pb.get(ob..).unwrap_or(&[]);
            let n = a.len().min(c.len());
            let (a, c) = (a.get(..n).unwrap_or(&[]), c.get(..n).unwrap_or(&[]));
            if a != c {
                return pos + a.iter().zip(c).take_while(|(x, y)| x == y).count();
            }
            pos += n;
            oa += n;
            ob += n;
            if oa == pa.len() {
                ia += 1;
                oa = 0;
            }
            if ob == pb.len() {
                ib += 1;
                ob = 0;
            }
        }
        pos
    }

    /// Tokens `pos .. pos + len` (clipped to the end) as spans of the shared pieces.
    fn spans(&self, pos: usize, len: usize) -> Box<[Span]> {
        let mut out = Vec::new();
        let mut idx = match self.starts.binary_search(&pos) {
            Ok(i) => i,
            Err(i) => i.saturating_sub(1),
        };
        let mut at = pos;
        let end = pos.saturating_add(len).min(self.len);
        while at < end {
            let (Some(piece), Some(&start)) = (self.pieces.get(idx), self.starts.get(idx)) else {
                break;
            };
            let from = at - start;
            let to = (end - start).min(piece.len());
            if to > from {
                out.push(Span {
                    piece: match self.packed.get(idx) {
                        Some(Some(z)) => SpanPiece::Packed(z.clone()),
                        _ => SpanPiece::Tokens(piece.clone()),
                    },
                    start: from as u32,
                    end: to as u32,
                });
            }
            at = start + to;
            idx += 1;
        }
        out.into_boxed_slice()
    }
}

/// Chained block-prefix hashes of `X ⊕ Y`: entry `k-1` is the hash of the first `k·block`
/// tokens. Tokens past the last full block are not hashed.
pub fn block_hashes(x: &Seq, y: Option<&Seq>, block: usize) -> Vec<u64> {
    let mut s = x.clone();
    if let Some(y) = y {
        s.extend(y);
    }
    let mut out = Vec::with_capacity(s.len() / block.max(1));
    extend_chain(&mut out, &s, block);
    out
}

const SEED: u64 = 0x243f_6a88_85a3_08d3;

fn step(acc: u64, t: u32) -> u64 {
    (acc ^ u64::from(t))
        .wrapping_mul(0x0000_0100_0000_01b3)
        .rotate_left(23)
        ^ (t as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15)
}

fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Which provider behaviour to simulate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Model {
    /// DS-unit, strict (K = ∞): request-boundary and common-prefix units only.
    DsStrict,
    /// DS-unit, optimistic (K = B): block-granular LCP against all earlier prompt+output.
    DsOptimistic,
    /// OpenAI-like: 1,024 minimum, 128 blocks, prompts only, 10-min idle TTL.
    OpenAi,
    /// Kimi-like: 256 blocks, prompts only, exact re-send hits fully, 30-min idle TTL.
    Kimi,
}

impl Model {
    /// Parse a CLI name.
    pub fn parse(s: &str) -> Option<Model> {
        match s {
            "ds-strict" => Some(Model::DsStrict),
            "ds-optimistic" => Some(Model::DsOptimistic),
            "openai" => Some(Model::OpenAi),
            "kimi" => Some(Model::Kimi),
            _ => None,
        }
    }

    /// CLI name.
    pub fn name(self) -> &'static str {
        match self {
            Model::DsStrict => "ds-strict",
            Model::DsOptimistic => "ds-optimistic",
            Model::OpenAi => "openai",
            Model::Kimi => "kimi",
        }
    }
}

/// Simulator parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Params {
    /// Provider behaviour.
    pub model: Model,
    /// Block size for the DS models (128 on V4, 64 on V3.2); OpenAI uses 128 and Kimi 256
    /// whatever this says.
    pub block: usize,
    /// Idle expiry of DS units in ms (`None` = permanent, the default); for `openai` and `kimi`
    /// it replaces their 10- and 30-minute lifetimes.
    pub expiry_ms: Option<f64>,
}

impl Params {
    /// DS strict, B = 128, no expiry.
    pub fn ds_strict() -> Params {
        Params {
            model: Model::DsStrict,
            block: 128,
            expiry_ms: None,
        }
    }

    /// Block size actually used.
    pub fn effective_block(&self) -> usize {
        match self.model {
            Model::DsStrict | Model::DsOptimistic => self.block.max(1),
            Model::OpenAi => 128,
            Model::Kimi => 256,
        }
    }

    fn ttl_ms(&self) -> Option<f64> {
        match self.model {
            Model::DsStrict | Model::DsOptimistic => self.expiry_ms,
            // `expiry_ms` overrides the provider lifetime (`--provider` sets the profile's).
            Model::OpenAi => Some(self.expiry_ms.unwrap_or(10.0 * 60_000.0)),
            Model::Kimi => Some(self.expiry_ms.unwrap_or(30.0 * 60_000.0)),
        }
    }
}

/// What the simulator says about one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Outcome {
    /// `|X_i|`.
    pub prompt: u64,
    /// Cached tokens.
    pub hit: u64,
    /// `|X_i| - hit`.
    pub miss: u64,
    /// Block-LCP ceiling against all earlier X⊕Y (H_max numerator).
    pub ceiling: u64,
    /// Tokens after the longest token-exact earlier prefix (U numerator).
    pub novel: u64,
    /// `|X_i| - ceiling - novel` (< B): the sub-block remainder.
    pub remainder: u64,
}

/// A run of tokens inside a shared piece (`piece[start..end]`).
#[derive(Clone, Debug)]
struct Span {
    piece: SpanPiece,
    start: u32,
    end: u32,
}

/// The piece of a [`Span`]: its tokens, or the packed form they were read from.
#[derive(Clone, Debug)]
enum SpanPiece {
    Tokens(Tokens),
    Packed(Arc<PackedTokens>),
}

/// What the ceiling and novel counts keep about one block prefix `h_k` of an earlier X⊕Y:
/// the tokens that followed it (positions `k·B .. min((k+1)·B, |X⊕Y|)`) in the latest request
/// that had it, as spans of the request's shared pieces (a block, not the request).
type Tail = Box<[Span]>;

/// DS common-prefix detection: one node per block prefix of an earlier prompt.
#[derive(Clone, Copy, Debug, Default)]
struct PromptNode {
    /// Some earlier prompt's last full block is this one.
    ends: bool,
    /// A child (the next block prefix of some earlier prompt through this node), if any.
    child: Option<u64>,
    /// Earlier prompts continue through more than one child.
    children: bool,
}

/// Work counters of one simulator (tests assert they grow linearly with the stream).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SimStats {
    /// Requests simulated.
    pub requests: u64,
    /// Blocks hashed (each block of a request that was not shared with the previous one).
    pub hashed_blocks: u64,
    /// Map entries visited or written (units, prompt nodes, block prefixes, refreshes).
    pub entries_touched: u64,
    /// Entries kept now: units + prompt nodes + block prefixes + whole-prompt hashes, plus the
    /// previous request's chain (blocks) and pieces.
    pub entries_kept: u64,
}

/// One cache state (one account, one request stream).
///
/// Each request is simulated against the previous one: its block chain reuses the previous
/// chain up to their longest common token prefix and hashes only the blocks after it; every
/// per-block step (ceiling scan, common-prefix detection, stores, refreshes) starts from that
/// point, so a stream of requests that each extend the last costs time proportional to the
/// tokens added, and memory proportional to the distinct blocks, not to requests × length.
/// The outcomes are the ones the model table above defines, block for block.
pub struct Sim {
    p: Params,
    block: usize,
    /// Stored units: block-prefix hash → last use (ms). For the models that refresh every block
    /// of a request, blocks `< refresh_len` of `chain` were last used at `refresh_ms` (written
    /// back here when the next request leaves them).
    units: HashMap<u64, f64>,
    /// DS common-prefix detection: the block-prefix tree of earlier prompts.
    prompts: HashMap<u64, PromptNode>,
    /// Ceiling and novel: every block prefix of every earlier X⊕Y → what followed it.
    xy_prefixes: HashMap<u64, Tail>,
    /// Whole-prompt hashes (Kimi exact re-send) → last use.
    whole: HashMap<u64, f64>,
    /// The previous request's X⊕Y (shared pieces).
    prev: Seq,
    /// Its block chain: entry `k-1` is `h_k`.
    chain: Vec<u64>,
    /// Its prompt's full blocks.
    prev_kx: usize,
    /// Blocks of `chain` whose unit was refreshed at `refresh_ms` by the previous request.
    refresh_len: usize,
    refresh_ms: f64,
    stats: SimStats,
}

impl Sim {
    /// Fresh, empty cache.
    pub fn new(p: Params) -> Sim {
        Sim {
            block: p.effective_block(),
            p,
            units: HashMap::new(),
            prompts: HashMap::new(),
            xy_prefixes: HashMap::new(),
            whole: HashMap::new(),
            prev: Seq::new(),
            chain: Vec::new(),
            prev_kx: 0,
            refresh_len: 0,
            refresh_ms: 0.0,
            stats: SimStats::default(),
        }
    }

    /// Parameters in use.
    pub fn params(&self) -> Params {
        self.p
    }

    /// Work done and entries kept so far.
    pub fn stats(&self) -> SimStats {
        SimStats {
            entries_kept: (self.units.len()
                + self.prompts.len()
                + self.xy_prefixes.len()
                + self.whole.len()
                + self.chain.len()
                + self.prev.piece_count()) as u64,
            ..self.stats
        }
    }

    fn fresh(&self, last: f64, now: f64) -> bool {
        match self.p.ttl_ms() {
            Some(ttl) => now - last <= ttl,
            None => true,
        }
    }

    /// Last use of the unit at block `k` (0-based) of the current chain, if stored.
    fn unit_at(&self, k: usize, shared: usize) -> Option<f64> {
        let h = self.chain.get(k)?;
        let t = self.units.get(h).copied()?;
        // Blocks the previous request refreshed (and this one shares) were used at refresh_ms.
        Some(if k < shared.min(self.refresh_len) {
            t.max(self.refresh_ms)
        } else {
            t
        })
    }

    /// Simulate request `x` at `now_ms` whose output is `y`; then store what it persists.
    pub fn request(&mut self, x: &Seq, y: &Seq, now_ms: f64) -> Outcome {
        let b = self.block;
        let mut xy = x.clone();
        xy.extend(y);
        let kx = x.len() / b;
        let kxy = xy.len() / b;

        // The chain: the previous request's blocks up to the common prefix, then new ones.
        let lcp = xy.common_prefix(&self.prev);
        let shared = (lcp / b).min(self.chain.len());
        // Blocks the previous request refreshed and this one leaves: their last use is written.
        if self.refresh_len > shared {
            let t = self.refresh_ms;
            for h in self.chain.get(shared..self.refresh_len).unwrap_or(&[]) {
                if let Some(u) = self.units.get_mut(h) {
                    *u = u.max(t);
                }
                self.stats.entries_touched += 1;
            }
            self.refresh_len = shared;
        }
        self.chain.truncate(shared);
        let before = self.chain.len();
        extend_chain(&mut self.chain, &xy, b);
        self.stats.hashed_blocks += (self.chain.len() - before) as u64;
        self.stats.requests += 1;
        // Prompt blocks shared with the previous prompt (same nodes, same order).
        let shared_x = shared.min(self.prev_kx).min(kx);

        // Ceiling: block LCP against all earlier X⊕Y (prefix-closed set: scan up). Every block
        // shared with the previous request is in the set.
        let mut kc = shared.min(kx);
        while kc < kx
            && self
                .chain
                .get(kc)
                .is_some_and(|h| self.xy_prefixes.contains_key(h))
        {
            kc += 1;
            self.stats.entries_touched += 1;
        }
        let ceiling = (kc * b) as u64;
        let novel = self.novel_tokens(x, kc);

        // Hit. A stored unit is a block prefix of an earlier request, so it lies within the
        // ceiling: the scan starts there.
        let mut hit = 0u64;
        match self.p.model {
            Model::DsStrict | Model::DsOptimistic => {
                for k in (1..=kc).rev() {
                    self.stats.entries_touched += 1;
                    if let Some(last) = self.unit_at(k - 1, shared) {
                        if self.fresh(last, now_ms) {
                            hit = (k * b) as u64;
                            if let Some(h) = self.chain.get(k - 1) {
                                self.units.insert(*h, now_ms);
                            }
                            break;
                        }
                    }
                }
            }
            Model::OpenAi | Model::Kimi => {
                let min_blocks = if self.p.model == Model::OpenAi {
                    1024 / b
                } else {
                    1
                };
                let whole = whole_hash(x, &self.chain, b);
                if self.p.model == Model::Kimi
                    && self
                        .whole
                        .get(&whole)
                        .is_some_and(|&t| self.fresh(t, now_ms))
                {
                    hit = x.len() as u64;
                } else {
                    for k in (1..=kc).rev() {
                        if k < min_blocks {
                            break;
                        }
                        self.stats.entries_touched += 1;
                        if self
                            .unit_at(k - 1, shared)
                            .is_some_and(|t| self.fresh(t, now_ms))
                        {
                            hit = (k * b) as u64;
                            break;
                        }
                    }
                }
                if self.p.model == Model::Kimi {
                    self.whole.insert(whole, now_ms);
                }
            }
        }

        // Persist.
        match self.p.model {
            Model::DsStrict => {
                if kx > 0 {
                    if let Some(h) = self.chain.get(kx - 1) {
                        self.units.insert(*h, now_ms);
                    }
                }
                if kxy > 0 {
                    if let Some(h) = self.chain.get(kxy - 1) {
                        self.units.insert(*h, now_ms);
                    }
                }
                self.common_prefix_units(kx, shared_x, now_ms);
            }
            Model::DsOptimistic => self.refresh_blocks(kxy, shared, now_ms),
            Model::OpenAi | Model::Kimi => self.refresh_blocks(kx, shared, now_ms),
        }
        // Block prefixes of X⊕Y and what followed each; those whose next block is shared with
        // the previous request already hold the same tokens.
        for k in shared.max(1)..=kxy {
            let Some(h) = self.chain.get(k - 1).copied() else {
                continue;
            };
            self.xy_prefixes.insert(h, xy.spans(k * b, b));
            self.stats.entries_touched += 1;
        }
        self.prev = xy;
        self.prev_kx = kx;

        let prompt = x.len() as u64;
        let novel = novel.min(prompt - ceiling);
        Outcome {
            prompt,
            hit,
            miss: prompt - hit,
            ceiling,
            novel,
            remainder: prompt - ceiling - novel,
        }
    }

    /// The models that store every block of a request (`len` blocks of the chain) at `now`:
    /// new blocks are written, blocks shared with the previous request are refreshed lazily.
    fn refresh_blocks(&mut self, len: usize, shared: usize, now_ms: f64) {
        let from = shared.min(self.refresh_len).min(len);
        for h in self.chain.get(from..len).unwrap_or(&[]) {
            self.units.insert(*h, now_ms);
            self.stats.entries_touched += 1;
        }
        self.refresh_len = len;
        self.refresh_ms = now_ms;
    }

    /// DS common-prefix units of a prompt of `kx` blocks (the current chain), then the prompt
    /// joins the tree. The LCP of X with some earlier prompt ends at block k iff an earlier
    /// prompt reaches block k and then ends or continues elsewhere. Blocks whose next block the
    /// previous prompt shared were decided by that prompt already (the same earlier prompts
    /// leave there), so the walk starts one block before the end of the shared part.
    fn common_prefix_units(&mut self, kx: usize, shared_x: usize, now_ms: f64) {
        // One walk: block k is judged from the earlier prompts before this prompt joins it
        // (chained hashes: each block's node is its own, no later block reads it).
        for k in shared_x.saturating_sub(1)..kx {
            let Some(&h) = self.chain.get(k) else { break };
            let next = self.chain.get(k + 1).copied().filter(|_| k + 1 < kx);
            self.stats.entries_touched += 1;
            let n = self.prompts.entry(h).or_default();
            if n.ends || n.children || (n.child.is_some() && n.child != next) {
                self.units.entry(h).or_insert(now_ms);
            }
            match next {
                None => n.ends = true,
                Some(c) => match n.child {
                    None => n.child = Some(c),
                    Some(old) if old != c => n.children = true,
                    Some(_) => {}
                },
            }
        }
    }

    /// `|X| -` the longest token-exact prefix shared with an earlier X⊕Y. Compared against the
    /// latest request holding the deepest shared block (or the previous request when no block
    /// is shared); the scan is at most one block long.
    fn novel_tokens(&self, x: &Seq, kc: usize) -> u64 {
        let b = self.block;
        let start = kc * b;
        let extra = if kc > 0 {
            let Some(tail) = self.chain.get(kc - 1).and_then(|h| self.xy_prefixes.get(h)) else {
                return x.len() as u64;
            };
            // Packed pieces are read back (at most a block's worth of pieces).
            let unpacked: Vec<Option<Tokens>> = tail
                .iter()
                .map(|s| match &s.piece {
                    SpanPiece::Packed(z) => Some(z.unpack()),
                    SpanPiece::Tokens(_) => None,
                })
                .collect();
            let other = tail
                .iter()
                .zip(&unpacked)
                .flat_map(|(s, u)| {
                    let t: &[u32] = match (&s.piece, u) {
                        (SpanPiece::Tokens(t), _) => t,
                        (_, Some(u)) => u,
                        _ => &[],
                    };
                    t.get(s.start as usize..s.end as usize).unwrap_or(&[])
                })
                .copied();
            x.iter_from(start)
                .zip(other)
                .take(b)
                .take_while(|(a, c)| a == c)
                .count()
        } else {
            if self.stats.requests <= 1 {
                return x.len() as u64;
            }
            x.iter_from(start)
                .zip(self.prev.iter_from(start))
                .take(b)
                .take_while(|(a, c)| a == c)
                .count()
        };
        (x.len() - (start + extra).min(x.len())) as u64
    }
}

/// Append the block hashes of `s` after the `chain.len()` blocks already in `chain` (which must
/// be `s`'s own): the same values as [`block_hashes`].
fn extend_chain(chain: &mut Vec<u64>, s: &Seq, block: usize) {
    let block = block.max(1);
    let mut h = chain.last().copied().unwrap_or(SEED);
    let mut acc: u64 = 0;
    let mut n = 0usize;
    for t in s.iter_from(chain.len() * block) {
        acc = step(acc, t);
        n += 1;
        if n == block {
            h = mix(h ^ mix(acc));
            chain.push(h);
            acc = 0;
            n = 0;
        }
    }
}

/// Whole-prompt identity (Kimi's exact re-send): its full-block chain hash, its length and its
/// last partial block's tokens.
fn whole_hash(x: &Seq, chain: &[u64], block: usize) -> u64 {
    let kx = x.len() / block.max(1);
    let mut h: u64 = 0x1357_9bdf_2468_ace0 ^ x.len() as u64;
    h = mix(h ^ kx
        .checked_sub(1)
        .and_then(|k| chain.get(k))
        .copied()
        .unwrap_or(0));
    for t in x.iter_from(kx * block.max(1)) {
        h = mix(h ^ u64::from(t));
    }
    h
}

/// Distinct block prefixes across a set of sequences (used by tests and diagnostics).
pub fn distinct_prefixes(seqs: &[Seq], block: usize) -> usize {
    let mut s = HashSet::new();
    for q in seqs {
        for h in block_hashes(q, None, block) {
            s.insert(h);
        }
    }
    s.len()
}
