//! The cache simulators against hand-worked cases (docs/cache-model.md).

use cachefold_bench::bench::cache::{Model, Outcome, Params, Seq, Sim};

/// `n` distinct tokens starting at `from` (distinct values make prefixes unique).
fn toks(from: u32, n: usize) -> Vec<u32> {
    (from..from + n as u32).collect()
}

fn seq(parts: &[&[u32]]) -> Seq {
    let mut s = Seq::new();
    for p in parts {
        s.push(p.to_vec().into());
    }
    s
}

fn strict() -> Sim {
    Sim::new(Params::ds_strict())
}

fn params(model: Model) -> Params {
    Params {
        model,
        block: 128,
        expiry_ms: None,
    }
}

#[test]
fn hit_768_of_769_exact_resend() {
    // The next run's first request equals an earlier request of 769 tokens: floor128(769).
    let mut sim = strict();
    let x = toks(0, 769);
    sim.request(&seq(&[&x]), &seq(&[&toks(900_000, 50)]), 0.0);
    let o = sim.request(&seq(&[&x]), &seq(&[&toks(910_000, 50)]), 1.0);
    assert_eq!((o.hit, o.prompt), (768, 769));
    assert_eq!(o.miss, 1, "the last partial block always misses");
}

#[test]
fn hit_1024_of_1079_end_of_output_unit() {
    // Previous prompt 912 + output 136 re-sent identically: floor128(912+136) = 1024.
    let mut sim = strict();
    let x1 = toks(0, 912);
    let y1 = toks(100_000, 136);
    sim.request(&seq(&[&x1]), &seq(&[&y1]), 0.0);
    let new = toks(200_000, 1079 - 912 - 136);
    let o = sim.request(&seq(&[&x1, &y1, &new]), &seq(&[&toks(300_000, 10)]), 1.0);
    assert_eq!((o.hit, o.prompt), (1024, 1079));
}

#[test]
fn hit_1408_of_1631_reserialised_call() {
    // Previous prompt 1477, output 210; the output came back re-serialised (different tokens):
    // only the prompt-end unit floor128(1477) = 1408 matches.
    let mut sim = strict();
    let x1 = toks(0, 1477);
    let y1 = toks(100_000, 210);
    sim.request(&seq(&[&x1]), &seq(&[&y1]), 0.0);
    let y1_reser = toks(500_000, 154);
    let o = sim.request(&seq(&[&x1, &y1_reser]), &seq(&[&toks(300_000, 10)]), 1.0);
    assert_eq!((o.hit, o.prompt), (1408, 1631));
    // The optimistic model, by contrast, hits the same 1408 (no later shared block exists).
    let mut opt = Sim::new(params(Model::DsOptimistic));
    opt.request(&seq(&[&x1]), &seq(&[&y1]), 0.0);
    assert_eq!(
        opt.request(&seq(&[&x1, &y1_reser]), &seq(&[]), 1.0).hit,
        1408
    );
}

#[test]
fn common_prefix_detection_a_b_then_a_c_then_a_d() {
    // Doc example: A+B, then A+C misses (A not yet a unit), A is persisted, A+D hits A.
    let a = toks(0, 640);
    let (b, c, d) = (toks(10_000, 300), toks(20_000, 300), toks(30_000, 300));
    let empty = seq(&[]);
    let mut sim = strict();
    assert_eq!(sim.request(&seq(&[&a, &b]), &empty, 0.0).hit, 0);
    assert_eq!(
        sim.request(&seq(&[&a, &c]), &empty, 1.0).hit,
        0,
        "strict: A+C misses"
    );
    assert_eq!(
        sim.request(&seq(&[&a, &d]), &empty, 2.0).hit,
        640,
        "A was persisted by common-prefix detection"
    );
    // Optimistic (K = B) is the block LCP: A+C already hits A.
    let mut opt = Sim::new(params(Model::DsOptimistic));
    opt.request(&seq(&[&a, &b]), &empty, 0.0);
    assert_eq!(opt.request(&seq(&[&a, &c]), &empty, 1.0).hit, 640);
}

#[test]
fn cache_hostile_baseline_hits_repeated_first_units() {
    // Shuffled prefixes: a request that repeats an earlier request's first 715 tokens hits
    // floor128(715) = 640 (the `0/715, 0/768, 640/888` reading).
    let mut sim = strict();
    let p1 = toks(0, 715);
    let p2 = toks(50_000, 768);
    assert_eq!(sim.request(&seq(&[&p1]), &seq(&[]), 0.0).hit, 0);
    assert_eq!(sim.request(&seq(&[&p2]), &seq(&[]), 1.0).hit, 0);
    let o = sim.request(&seq(&[&p1, &toks(90_000, 888 - 715)]), &seq(&[]), 2.0);
    assert_eq!((o.hit, o.prompt), (640, 888));
}

#[test]
fn block_64_sensitivity() {
    let mut sim = Sim::new(Params {
        model: Model::DsStrict,
        block: 64,
        expiry_ms: None,
    });
    let x = toks(0, 769);
    sim.request(&seq(&[&x]), &seq(&[]), 0.0);
    assert_eq!(sim.request(&seq(&[&x]), &seq(&[]), 1.0).hit, 768);
    let y = toks(0, 700);
    // 700 = 10·64 + 60: the strict model has no unit at 640 (only 768 and the LCP units).
    assert_eq!(sim.request(&seq(&[&y]), &seq(&[]), 2.0).hit, 0);
    // …but now 640 is a common prefix of two prompts, so a fourth request hits it.
    assert_eq!(
        sim.request(&seq(&[&y, &toks(7_000, 10)]), &seq(&[]), 3.0)
            .hit,
        640
    );
}

#[test]
fn idle_expiry() {
    let h = 3_600_000.0;
    let mut sim = Sim::new(Params {
        model: Model::DsStrict,
        block: 128,
        expiry_ms: Some(6.0 * h),
    });
    let x = toks(0, 1000);
    sim.request(&seq(&[&x]), &seq(&[]), 0.0);
    assert_eq!(
        sim.request(&seq(&[&x]), &seq(&[]), 5.0 * h).hit,
        896,
        "used within 6 h"
    );
    assert_eq!(
        sim.request(&seq(&[&x]), &seq(&[]), 10.5 * h).hit,
        896,
        "last use refreshed the unit"
    );
    assert_eq!(
        sim.request(&seq(&[&x]), &seq(&[]), 18.0 * h).hit,
        0,
        "idle for 6.5 h"
    );
}

#[test]
fn openai_minimum_and_ttl() {
    let mut sim = Sim::new(params(Model::OpenAi));
    let small = toks(0, 1000);
    sim.request(&seq(&[&small]), &seq(&[]), 0.0);
    assert_eq!(
        sim.request(&seq(&[&small]), &seq(&[]), 1.0).hit,
        0,
        "below 1,024 tokens nothing is cached"
    );
    let big = toks(10_000, 1300);
    sim.request(&seq(&[&big]), &seq(&[]), 2.0);
    assert_eq!(
        sim.request(&seq(&[&big, &toks(60_000, 5)]), &seq(&[]), 60_000.0)
            .hit,
        1280
    );
    // Prompts only: the previous output is not cached.
    let y = toks(80_000, 300);
    sim.request(&seq(&[&big]), &seq(&[&y]), 120_000.0);
    assert_eq!(
        sim.request(&seq(&[&big, &y]), &seq(&[]), 180_000.0).hit,
        1280
    );
    // 10-minute idle TTL.
    assert_eq!(
        sim.request(&seq(&[&big]), &seq(&[]), 180_000.0 + 11.0 * 60_000.0)
            .hit,
        0
    );
}

#[test]
fn kimi_blocks_and_exact_resend() {
    let mut sim = Sim::new(params(Model::Kimi));
    let x = toks(0, 700);
    sim.request(&seq(&[&x]), &seq(&[]), 0.0);
    assert_eq!(
        sim.request(&seq(&[&x]), &seq(&[]), 1.0).hit,
        700,
        "an exact re-send hits fully"
    );
    assert_eq!(
        sim.request(&seq(&[&x, &toks(9_000, 40)]), &seq(&[]), 2.0)
            .hit,
        512,
        "LCP floored to 256"
    );
    assert_eq!(
        sim.request(&seq(&[&x]), &seq(&[]), 2.0 + 31.0 * 60_000.0)
            .hit,
        0,
        "30-minute idle TTL"
    );
}

#[test]
fn ceiling_novel_remainder_decomposition() {
    let mut sim = strict();
    let x1 = toks(0, 1000);
    let y1 = toks(100_000, 100);
    let o1 = sim.request(&seq(&[&x1]), &seq(&[&y1]), 0.0);
    assert_eq!(
        o1,
        Outcome {
            prompt: 1000,
            hit: 0,
            miss: 1000,
            ceiling: 0,
            novel: 1000,
            remainder: 0
        }
    );
    let x2 = [x1.clone(), y1.clone(), toks(200_000, 300)].concat();
    let o2 = sim.request(&Seq::from_tokens(&x2), &seq(&[]), 1.0);
    // Shared exactly: 1100 tokens; ceiling = floor128(1100) = 1024; remainder 76; novel 300.
    assert_eq!(
        (o2.ceiling, o2.remainder, o2.novel, o2.hit),
        (1024, 76, 300, 1024)
    );
    assert_eq!(o2.ceiling + o2.remainder + o2.novel, o2.prompt);
    // A mid-history edit: the ceiling drops to the edit point, the rest is novel for U.
    let mut x3 = x2.clone();
    x3[500] = 999_999;
    let o3 = sim.request(&Seq::from_tokens(&x3), &seq(&[]), 2.0);
    assert_eq!(o3.ceiling, 384);
    assert_eq!(o3.remainder, 116);
    assert_eq!(o3.novel, 1400 - 500);
    assert!(o3.hit <= o3.ceiling);
}

#[test]
fn piece_boundaries_do_not_matter() {
    // The same tokens split into different pieces hash identically.
    let t = toks(0, 1000);
    let mut a = strict();
    a.request(&Seq::from_tokens(&t), &seq(&[]), 0.0);
    let o = a.request(&seq(&[&t[..3], &t[3..500], &t[500..]]), &seq(&[]), 1.0);
    assert_eq!(o.hit, 896);
}
