//! An assemble that appends one turn to a long session costs what the turn and the bounded
//! prompt cost, not a walk of the whole history: `openclaw cachefold replay` assembles once per
//! recorded call, so anything proportional to the history on that path makes a long replay
//! quadratic (issue 24 item 7: 32K calls took 98 s, 100K would take most of an hour).
//!
//! Measured by the bytes the assemble allocates (counted per thread by this binary's
//! allocator), which is deterministic: the divergence check used to copy every recorded hash
//! into a fresh list on each assemble (16 bytes per message).

mod counting_alloc;
mod engine_support;

use cachefold::config::Config;
use cachefold::engine::Session;
use counting_alloc::allocated;
use engine_support::*;

const BUDGET: u64 = 60_000;

/// Grow `msgs` to `turns` turns (one assemble over all of them), then append `probes` turns
/// one assemble each and return the fewest bytes one of those assembles allocated (the fewest:
/// a turn that grows the record list past its capacity or folds allocates more, once).
fn bytes_per_appended_turn(s: &mut Session, msgs: &mut Vec<String>, turns: usize) -> u64 {
    let mut k = msgs.len() / 4;
    while k < turns {
        turn(msgs, k, &format!("src/m{}.rs", k % 29), 600);
        k += 1;
    }
    shim(s, msgs, Some("deepseek-v4-flash"), Some(BUDGET));
    s.drop_journal();
    let mut fewest = u64::MAX;
    for _ in 0..8 {
        turn(msgs, k, &format!("src/m{}.rs", k % 29), 600);
        k += 1;
        let before = allocated();
        let p = shim(s, msgs, Some("deepseek-v4-flash"), Some(BUDGET));
        fewest = fewest.min(allocated() - before);
        assert!(p.report.tokens_after < BUDGET, "{:?}", p.report);
        s.drop_journal();
    }
    fewest
}

#[test]
fn appending_a_turn_allocates_the_same_at_2k_and_20k_messages() {
    let mut s = Session::new(Config::default(), "long");
    let mut msgs = Vec::new();
    let short = bytes_per_appended_turn(&mut s, &mut msgs, 500);
    let long = bytes_per_appended_turn(&mut s, &mut msgs, 5_000);
    assert!(msgs.len() > 20_000);
    // The old divergence check alone allocated 16 bytes per message: 320 KB more at 20K.
    assert!(
        long < short + 64 * 1024,
        "one appended turn allocated {short} bytes at 2K messages, {long} at 20K"
    );
}
