//! The replay renders each main request from the previous one (issue 24 item 7):
//! `Renderer::main_request` reuses the pieces of the messages a request shares with the last
//! one and renders only the rest. These tests check that it gives exactly the pieces and tokens
//! of `Renderer::request` (the whole-request rendering) on streams of every shape, and that a
//! session whose requests extend each other renders each message about once, not once per call
//! (the quadratic rendering it replaced rendered calls × messages).
//!
//! No timing: the assertions count messages rendered (`Renderer::rendered_messages`).

use cachefold_bench::bench::cache::Seq;
use cachefold_bench::bench::run::{self, Glue, Prepared, Renderer};
use cachefold_bench::bench::store::M;
use cachefold_bench::bench::tokenizer::Tokenizer;
use cachefold_bench::bench::{demo, prefix};

fn tokens(s: &Seq) -> Vec<u32> {
    s.iter().collect()
}

fn demo_prep(tok: &Tokenizer) -> Prepared {
    run::prepare(tok, "demo", &demo::session())
}

mod rng;
use rng::Rng;

/// Requests of every shape over the session's messages: growing history, a head cut away
/// (compaction), a message replaced in the middle, a shorter request, an exact repeat, an
/// empty request, runs of user blocks (separators) and assistant turns.
fn shapes(orig: &[M], seed: u64, n: usize) -> Vec<Vec<M>> {
    let mut r = Rng::new(seed);
    let mut cur: Vec<M> = Vec::new();
    let mut out = Vec::new();
    let mut next = 0usize;
    for _ in 0..n {
        match r.below(10) {
            0 if !cur.is_empty() => {
                let cut = r.below(cur.len());
                cur.drain(..cut);
            }
            1 if !cur.is_empty() => {
                let at = r.below(cur.len());
                cur[at] = orig[r.below(orig.len())].clone();
            }
            2 if !cur.is_empty() => {
                let keep = r.below(cur.len());
                cur.truncate(keep);
            }
            3 => {}
            4 => cur.clear(),
            _ => {
                for _ in 0..=r.below(4) {
                    cur.push(orig[next % orig.len()].clone());
                    next += 1;
                }
            }
        }
        out.push(cur.clone());
    }
    out
}

#[test]
fn main_request_equals_whole_request_rendering() {
    let tok = Tokenizer::bytes4();
    let prep = demo_prep(&tok);
    assert!(prep.orig.len() > 100, "the demo has enough messages");
    let glue = Glue::new(&tok);
    let sp = run::static_prefix(&tok, prefix::Profile::OpenClaw);
    let mut compared = 0;
    for seed in 1..=6u64 {
        let mut inc = Renderer::new(&tok, prep.base_tokens.clone(), &glue);
        let mut whole = Renderer::new(&tok, prep.base_tokens.clone(), &glue);
        for (k, msgs) in shapes(&prep.orig, seed, 300).iter().enumerate() {
            let a = inc.main_request(&sp.tokens, msgs);
            let b = whole.request(&sp.tokens, msgs);
            assert_eq!(a.len(), b.len(), "seed {seed} call {k}: length");
            assert_eq!(
                a.piece_count(),
                b.piece_count(),
                "seed {seed} call {k}: pieces"
            );
            assert_eq!(tokens(&a), tokens(&b), "seed {seed} call {k}: tokens");
            compared += 1;
        }
        // Another static prefix starts over (the summariser's requests use their own).
        let other: cachefold_bench::bench::tokenizer::Tokens = vec![1u32, 2, 3].into();
        let msgs = prep.orig.get(..10).unwrap_or(&[]);
        assert_eq!(
            tokens(&inc.main_request(&other, msgs)),
            tokens(&whole.request(&other, msgs))
        );
    }
    assert_eq!(compared, 6 * 300);
}

#[test]
fn a_growing_session_renders_each_message_about_once() {
    let tok = Tokenizer::bytes4();
    let prep = demo_prep(&tok);
    let glue = Glue::new(&tok);
    let sp = run::static_prefix(&tok, prefix::Profile::OpenClaw);
    let mut r = Renderer::new(&tok, prep.base_tokens.clone(), &glue);
    let n = prep.orig.len();
    // One request per message: the history so far (what S0 sends), n²/2 messages in all.
    for k in 1..=n {
        let msgs = prep.orig.get(..k).unwrap_or(&[]);
        r.main_request(&sp.tokens, msgs);
    }
    // Each call renders its new message and the one before it (whose piece depends on the
    // next message's slot): at most 2 per call, against n(n+1)/2 for whole rendering.
    let rendered = r.rendered_messages();
    assert!(
        rendered <= 2 * n as u64,
        "{rendered} messages rendered for {n} calls"
    );
    assert!(
        (n * (n + 1) / 2) as u64 > 10 * rendered,
        "the session is long enough to tell linear from quadratic ({n} messages)"
    );
}
