//! The cache simulator is linear in the request stream (issue 24 item 7): a session whose
//! requests each extend the previous one costs blocks hashed and map entries in proportion to
//! the tokens added, not requests × length; and it answers exactly what the whole-chain
//! simulator it replaced answered (kept below as `Reference`, the model table of
//! docs/cache-model.md applied literally), on generated streams of every shape and model.
//!
//! No timing: the assertions count work (`Sim::stats`).

use cachefold_bench::bench::cache::{block_hashes, Model, Outcome, Params, Seq, Sim};
use std::collections::hash_map::DefaultHasher;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

/// The simulator as the model table states it: every request's full block chain hashed, every
/// earlier X⊕Y kept.
struct Reference {
    p: Params,
    block: usize,
    units: HashMap<u64, f64>,
    prompt_counts: HashMap<u64, u32>,
    xy_prefixes: HashMap<u64, u32>,
    whole: HashMap<u64, f64>,
    history: Vec<Seq>,
}

impl Reference {
    fn new(p: Params) -> Reference {
        Reference {
            block: p.effective_block(),
            p,
            units: HashMap::new(),
            prompt_counts: HashMap::new(),
            xy_prefixes: HashMap::new(),
            whole: HashMap::new(),
            history: Vec::new(),
        }
    }

    fn fresh(&self, last: f64, now: f64) -> bool {
        let ttl = match self.p.model {
            Model::DsStrict | Model::DsOptimistic => self.p.expiry_ms,
            Model::OpenAi => Some(self.p.expiry_ms.unwrap_or(600_000.0)),
            Model::Kimi => Some(self.p.expiry_ms.unwrap_or(1_800_000.0)),
        };
        match ttl {
            Some(t) => now - last <= t,
            None => true,
        }
    }

    fn request(&mut self, x: &Seq, y: &Seq, now: f64) -> Outcome {
        let b = self.block;
        let hxy = block_hashes(x, Some(y), b);
        let kx = x.len() / b;
        let hx = &hxy[..kx];
        let mut kc = 0;
        while kc < hx.len() && self.xy_prefixes.contains_key(&hx[kc]) {
            kc += 1;
        }
        let ceiling = (kc * b) as u64;
        let other = if kc > 0 {
            self.xy_prefixes
                .get(&hx[kc - 1])
                .map(|&j| &self.history[j as usize])
        } else {
            self.history.last()
        };
        let novel = match other {
            None => x.len() as u64,
            Some(o) => {
                let start = kc * b;
                let extra = x
                    .iter_from(start)
                    .zip(o.iter_from(start))
                    .take(b)
                    .take_while(|(a, c)| a == c)
                    .count();
                (x.len() - (start + extra).min(x.len())) as u64
            }
        };
        let mut hit = 0u64;
        match self.p.model {
            Model::DsStrict | Model::DsOptimistic => {
                for k in (1..=kx).rev() {
                    if let Some(&last) = self.units.get(&hx[k - 1]) {
                        if self.fresh(last, now) {
                            hit = (k * b) as u64;
                            self.units.insert(hx[k - 1], now);
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
                let mut hs = DefaultHasher::new();
                x.iter().collect::<Vec<u32>>().hash(&mut hs);
                let whole = hs.finish();
                if self.p.model == Model::Kimi
                    && self.whole.get(&whole).is_some_and(|&t| self.fresh(t, now))
                {
                    hit = x.len() as u64;
                } else {
                    for k in (1..=kx).rev() {
                        if k < min_blocks {
                            break;
                        }
                        if self
                            .units
                            .get(&hx[k - 1])
                            .is_some_and(|&t| self.fresh(t, now))
                        {
                            hit = (k * b) as u64;
                            break;
                        }
                    }
                }
                if self.p.model == Model::Kimi {
                    self.whole.insert(whole, now);
                }
            }
        }
        match self.p.model {
            Model::DsStrict => {
                if kx > 0 {
                    self.units.insert(hx[kx - 1], now);
                }
                if let Some(h) = hxy.last() {
                    self.units.insert(*h, now);
                }
                let counts: Vec<u32> = hx
                    .iter()
                    .map(|h| self.prompt_counts.get(h).copied().unwrap_or(0))
                    .collect();
                for k in 0..counts.len() {
                    let next = counts.get(k + 1).copied().unwrap_or(0);
                    if counts[k] > 0 && counts[k] > next {
                        self.units.entry(hx[k]).or_insert(now);
                    }
                }
                for h in hx {
                    *self.prompt_counts.entry(*h).or_insert(0) += 1;
                }
            }
            Model::DsOptimistic => {
                for h in &hxy {
                    self.units.insert(*h, now);
                }
            }
            Model::OpenAi | Model::Kimi => {
                for h in hx {
                    self.units.insert(*h, now);
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
}

mod rng;
use rng::Rng;

/// A piece of `n` tokens; small alphabets make equal runs across different pieces likely.
fn piece(r: &mut Rng, n: usize, alphabet: u64) -> Arc<[u32]> {
    (0..n).map(|_| r.below_u64(alphabet) as u32).collect()
}

fn seq_of(pieces: &[Arc<[u32]>]) -> Seq {
    let mut s = Seq::new();
    for p in pieces {
        s.push(p.clone());
    }
    s
}

/// One generated request stream: a static prefix, then a conversation that mostly grows, with
/// rewrites from a random point (compactions, edits), exact re-sends, outputs re-sent or
/// re-serialised, copies of equal content in new pieces, tiny requests and idle gaps.
fn stream(seed: u64, n: usize) -> Vec<(Seq, Seq, f64)> {
    let mut r = Rng::new(seed);
    let alphabet = [3, 50, 100_000][r.below_u64(3) as usize];
    let n0 = 200 + r.below_u64(1_500) as usize;
    let stat = piece(&mut r, n0, alphabet);
    let mut conv: Vec<Arc<[u32]>> = vec![stat];
    let mut out = Vec::new();
    let mut now = 0.0;
    let mut last: Option<(Seq, Seq)> = None;
    for _ in 0..n {
        now += [1_000.0, 60_000.0, 700_000.0, 2_000_000.0][r.below_u64(4) as usize];
        match r.below_u64(10) {
            0 => {
                if let Some((x, y)) = &last {
                    out.push((x.clone(), y.clone(), now));
                    continue;
                }
            }
            1 => {
                let keep = 1 + r.below_u64(conv.len() as u64) as usize;
                conv.truncate(keep);
            }
            2 => {
                // Equal tokens in a fresh allocation (compared by value, not by piece).
                if let Some(p) = conv.last().cloned() {
                    let copy: Arc<[u32]> = p.iter().copied().collect();
                    conv.pop();
                    conv.push(copy);
                }
            }
            3 => {
                let n = r.below_u64(200) as usize;
                out.push((seq_of(&[piece(&mut r, n, alphabet)]), Seq::new(), now));
            }
            _ => {}
        }
        for _ in 0..1 + r.below_u64(3) {
            let len = r.below_u64(400) as usize;
            conv.push(piece(&mut r, len, alphabet));
        }
        let x = seq_of(&conv);
        let ny = r.below_u64(300) as usize;
        let y = seq_of(&[piece(&mut r, ny, alphabet)]);
        if r.below_u64(2) == 0 {
            conv.push(y.iter().collect::<Vec<u32>>().into());
        }
        out.push((x.clone(), y.clone(), now));
        last = Some((x, y));
    }
    out
}

fn all_params() -> Vec<Params> {
    let mut v = Vec::new();
    for model in [
        Model::DsStrict,
        Model::DsOptimistic,
        Model::OpenAi,
        Model::Kimi,
    ] {
        for block in [128, 64, 7] {
            for expiry_ms in [None, Some(900_000.0)] {
                v.push(Params {
                    model,
                    block,
                    expiry_ms,
                });
            }
        }
    }
    v
}

#[test]
fn same_outcomes_as_the_whole_chain_simulator() {
    let mut compared = 0usize;
    let mut hits = 0u64;
    for p in all_params() {
        for seed in 0..4u64 {
            let mut sim = Sim::new(p);
            let mut reference = Reference::new(p);
            for (i, (x, y, now)) in stream(seed * 31 + p.block as u64, 80).iter().enumerate() {
                let got = sim.request(x, y, *now);
                let want = reference.request(x, y, *now);
                assert_eq!(got, want, "{p:?} seed {seed} request {i}");
                hits += got.hit;
                compared += 1;
            }
        }
    }
    // Every (params, seed) pair replayed at least its 80 main requests.
    assert!(compared >= all_params().len() * 4 * 80, "{compared}");
    assert!(hits > 0, "the streams produce cache hits");
}

/// A growing conversation: request i is the static prefix plus i turns, output re-sent.
fn growing(n: usize) -> Vec<(Seq, Seq, f64)> {
    let mut r = Rng::new(7);
    let mut conv: Vec<Arc<[u32]>> = vec![piece(&mut r, 12_000, 100_000)];
    let mut out = Vec::new();
    for i in 0..n {
        conv.push(piece(&mut r, 300, 100_000));
        let y = piece(&mut r, 100, 100_000);
        out.push((
            seq_of(&conv),
            seq_of(std::slice::from_ref(&y)),
            i as f64 * 1_000.0,
        ));
        conv.push(y);
    }
    out
}

#[test]
fn work_and_memory_grow_linearly_with_the_session() {
    for p in [
        Params::ds_strict(),
        all_params()[6],
        all_params()[12],
        all_params()[18],
    ] {
        let mut stats = Vec::new();
        for n in [500usize, 1_000, 2_000] {
            let mut sim = Sim::new(p);
            for (x, y, now) in growing(n) {
                sim.request(&x, &y, now);
            }
            stats.push(sim.stats());
        }
        let (a, b, c) = (stats[0], stats[1], stats[2]);
        // Tokens added per request: 400, i.e. ~3 blocks of 128; a whole-chain simulator hashes
        // ~n²/2·3 blocks (375,000 at n = 500) and touches as many entries.
        let block = p.effective_block() as u64;
        for (n, s) in [(500u64, a), (1_000, b), (2_000, c)] {
            let added = (12_000 + n * 400) / block + 1;
            assert!(s.hashed_blocks <= added + n, "{p:?} n={n}: {s:?}");
            assert!(s.entries_touched <= 8 * (added + n), "{p:?} n={n}: {s:?}");
            assert!(s.entries_kept <= 8 * (added + n), "{p:?} n={n}: {s:?}");
        }
        // Doubling the session at most doubles the work (plus the static prefix's blocks).
        for (small, big) in [(a, b), (b, c)] {
            assert!(
                big.hashed_blocks * 10 <= small.hashed_blocks * 21,
                "{p:?} {small:?} {big:?}"
            );
            assert!(
                big.entries_touched * 10 <= small.entries_touched * 21,
                "{p:?} {small:?} {big:?}"
            );
            assert!(
                big.entries_kept * 10 <= small.entries_kept * 21,
                "{p:?} {small:?} {big:?}"
            );
        }
    }
}
