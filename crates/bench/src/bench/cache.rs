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
//! every earlier request: `count(h)` = how many earlier prompts contain block prefix `h`; the
//! LCP of X_j with some earlier prompt ends exactly at block k iff `count(h_k) > count(h_{k+1})`.
//! Units are usable from request j+1 on (the doc's `A+B, A+C → miss; A+D → hits A`).
//!
//! Alongside the hit, every request reports:
//! - `ceiling`: `B·⌊max_{j<i} LCP(X_i, X_j⊕Y_j)/B⌋` (optimistic units, no eviction): H_max;
//! - `novel`: tokens after the longest token-exact prefix shared with an earlier X_j⊕Y_j
//!   (`U(σ)` in §5.4); `ceiling + remainder + novel = |X_i|`, `remainder < B`.
//!
//! Eviction: DeepSeek units are permanent inside a session unless `expiry_ms` is set (the §1.1
//! sensitivity run, e.g. 6 h idle).

use super::tokenizer::Tokens;
use std::collections::{HashMap, HashSet};

/// A token sequence made of shared pieces (requests share almost all of their pieces).
#[derive(Clone, Default, Debug)]
pub struct Seq {
    pieces: Vec<Tokens>,
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
        if t.is_empty() {
            return;
        }
        self.starts.push(self.len);
        self.len += t.len();
        self.pieces.push(t);
    }

    /// Append every piece of another sequence.
    pub fn extend(&mut self, other: &Seq) {
        for p in &other.pieces {
            self.push(p.clone());
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
}

/// Chained block-prefix hashes of `X ⊕ Y`: entry `k-1` is the hash of the first `k·block`
/// tokens. Tokens past the last full block are not hashed.
pub fn block_hashes(x: &Seq, y: Option<&Seq>, block: usize) -> Vec<u64> {
    let block = block.max(1);
    let total = x.len() + y.map_or(0, Seq::len);
    let mut out = Vec::with_capacity(total / block);
    let mut h: u64 = 0x243f_6a88_85a3_08d3;
    let mut acc: u64 = 0;
    let mut n = 0usize;
    let mut step = |t: u32, out: &mut Vec<u64>| {
        acc = (acc ^ u64::from(t))
            .wrapping_mul(0x0000_0100_0000_01b3)
            .rotate_left(23)
            ^ (t as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        n += 1;
        if n == block {
            h = mix(h ^ mix(acc));
            out.push(h);
            acc = 0;
            n = 0;
        }
    };
    for t in x.iter() {
        step(t, &mut out);
    }
    if let Some(y) = y {
        for t in y.iter() {
            step(t, &mut out);
        }
    }
    out
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

/// One cache state (one account, one request stream).
pub struct Sim {
    p: Params,
    block: usize,
    /// Stored units: block-prefix hash → last use (ms).
    units: HashMap<u64, f64>,
    /// DS common-prefix detection: how many earlier prompts contain each block prefix.
    prompt_counts: HashMap<u64, u32>,
    /// Ceiling: every block prefix of every earlier X⊕Y → index of the latest request that had it.
    xy_prefixes: HashMap<u64, u32>,
    /// Whole-prompt hashes (Kimi exact re-send) → last use.
    whole: HashMap<u64, f64>,
    /// Earlier X⊕Y sequences (shared pieces, cheap) for the token-exact novel count.
    history: Vec<Seq>,
}

impl Sim {
    /// Fresh, empty cache.
    pub fn new(p: Params) -> Sim {
        Sim {
            block: p.effective_block(),
            p,
            units: HashMap::new(),
            prompt_counts: HashMap::new(),
            xy_prefixes: HashMap::new(),
            whole: HashMap::new(),
            history: Vec::new(),
        }
    }

    /// Parameters in use.
    pub fn params(&self) -> Params {
        self.p
    }

    fn fresh(&self, last: f64, now: f64) -> bool {
        match self.p.ttl_ms() {
            Some(ttl) => now - last <= ttl,
            None => true,
        }
    }

    /// Simulate request `x` at `now_ms` whose output is `y`; then store what it persists.
    pub fn request(&mut self, x: &Seq, y: &Seq, now_ms: f64) -> Outcome {
        let b = self.block;
        let hxy = block_hashes(x, Some(y), b);
        let kx = x.len() / b;
        let hx = hxy.get(..kx).unwrap_or(&[]);

        // Ceiling: block LCP against all earlier X⊕Y (prefix-closed set: scan up).
        let mut kc = 0usize;
        while kc < hx.len() && hx.get(kc).is_some_and(|h| self.xy_prefixes.contains_key(h)) {
            kc += 1;
        }
        let ceiling = (kc * b) as u64;
        let novel = self.novel_tokens(x, hx, kc);

        // Hit.
        let mut hit = 0u64;
        match self.p.model {
            Model::DsStrict | Model::DsOptimistic => {
                for k in (1..=kx).rev() {
                    let Some(h) = hx.get(k - 1) else { continue };
                    if let Some(&last) = self.units.get(h) {
                        if self.fresh(last, now_ms) {
                            hit = (k * b) as u64;
                            self.units.insert(*h, now_ms);
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
                let whole = hash_all(x);
                if self.p.model == Model::Kimi
                    && self
                        .whole
                        .get(&whole)
                        .is_some_and(|&t| self.fresh(t, now_ms))
                {
                    hit = x.len() as u64;
                } else {
                    for k in (1..=kx).rev() {
                        if k < min_blocks {
                            break;
                        }
                        let Some(h) = hx.get(k - 1) else { continue };
                        if self.units.get(h).is_some_and(|&t| self.fresh(t, now_ms)) {
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
                let kxy = hxy.len();
                if kx > 0 {
                    if let Some(h) = hx.get(kx - 1) {
                        self.units.insert(*h, now_ms);
                    }
                }
                if kxy > 0 {
                    if let Some(h) = hxy.get(kxy - 1) {
                        self.units.insert(*h, now_ms);
                    }
                }
                // Common-prefix units: LCP with some earlier prompt ends at block k.
                let counts: Vec<u32> = hx
                    .iter()
                    .map(|h| self.prompt_counts.get(h).copied().unwrap_or(0))
                    .collect();
                for k in 0..counts.len() {
                    let c = counts.get(k).copied().unwrap_or(0);
                    let next = counts.get(k + 1).copied().unwrap_or(0);
                    if c > 0 && c > next {
                        if let Some(h) = hx.get(k) {
                            self.units.entry(*h).or_insert(now_ms);
                        }
                    }
                }
                for h in hx {
                    *self.prompt_counts.entry(*h).or_insert(0) += 1;
                }
            }
            Model::DsOptimistic => {
                for h in &hxy {
                    self.units.insert(*h, now_ms);
                }
            }
            Model::OpenAi | Model::Kimi => {
                for h in hx {
                    self.units.insert(*h, now_ms);
                }
            }
        }
        let idx = self.history.len() as u32;
        for h in &hxy {
            self.xy_prefixes.insert(*h, idx);
        }
        let mut xy = x.clone();
        xy.extend(y);
        self.history.push(xy);

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

    /// `|X| -` the longest token-exact prefix shared with an earlier X⊕Y. Compared against the
    /// latest request holding the deepest shared block (or the previous request when no block
    /// is shared); the scan is at most one block long.
    fn novel_tokens(&self, x: &Seq, hx: &[u64], kc: usize) -> u64 {
        let b = self.block;
        let other = if kc > 0 {
            hx.get(kc - 1)
                .and_then(|h| self.xy_prefixes.get(h))
                .and_then(|&j| self.history.get(j as usize))
        } else {
            self.history.last()
        };
        let Some(other) = other else {
            return x.len() as u64;
        };
        let start = kc * b;
        let extra = x
            .iter_from(start)
            .zip(other.iter_from(start))
            .take(b)
            .take_while(|(a, c)| a == c)
            .count();
        (x.len() - (start + extra).min(x.len())) as u64
    }
}

fn hash_all(x: &Seq) -> u64 {
    let mut h: u64 = 0x1357_9bdf_2468_ace0 ^ x.len() as u64;
    for t in x.iter() {
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
