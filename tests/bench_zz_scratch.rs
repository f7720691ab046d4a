#![cfg(feature = "bench")]
use cachefold::bench::{self, run, tokenizer::Tokenizer, strategies::Ctx, anchors};
use std::collections::{HashMap, HashSet};
#[test]
#[ignore]
fn scratch() {
    let tok = Tokenizer::o200k().unwrap();
    for f in ["pi-mono/before-compaction.jsonl", "pi-mono/large-session.jsonl", "claude-code-spotter/8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl"] {
    let text = std::fs::read_to_string(format!("/work/shared/corpus/{f}")).unwrap();
    let t = cachefold::transcript::parse_auto("x.jsonl", &text).unwrap();
    let prep = run::prepare(&tok, "x", &t);
    let mut s = bench::strategy("S3").unwrap();
    let mut store = prep.store.clone();
    let mut hist = Vec::new();
    let mut next = 0;
    let (mut shrunk_miss, mut fold_miss, mut other_miss, mut needed) = (0, 0, 0, 0);
    let mut kinds: HashMap<&str, u64> = HashMap::new();
    let inv: HashMap<u32, String> = HashMap::new();
    let _ = inv;
    for (k, &(ai, ts)) in prep.calls.iter().enumerate() {
        let mut ctx = Ctx { store: &mut store, window: 1_000_000, static_chars: 40_000, extra: Vec::new(), fold_failures: 0, folds: 0, now_ms: ts };
        while next < ai { let m = s.ingest(&mut ctx, prep.orig[next].clone(), next); hist.push(m); next += 1; }
        let out = s.assemble(&mut ctx, &hist);
        let keys: HashSet<u128> = out.iter().map(|m| m.key).collect();
        let present_orig: HashSet<usize> = out.iter().filter_map(|m| m.origin).collect();
        for &(a, _) in &prep.needed[k] {
            needed += 1;
            if store.holders(a).iter().any(|kk| keys.contains(kk)) { continue; }
            let holders = prep.orig_holders.get(&a).cloned().unwrap_or_default();
            if holders.iter().any(|i| present_orig.contains(i)) { shrunk_miss += 1; } else if holders.iter().any(|i| *i < ai) { fold_miss += 1; } else { other_miss += 1; }
            let _ = &anchors::extract;
            let kind = "x"; *kinds.entry(kind).or_default() += 1;
        }
    }
    eprintln!("{f}: needed {needed} missed: in shrunk result {shrunk_miss}, folded away {fold_miss}, other {other_miss}");
    }
}
