//! The heap a session holds per ingested message (issue 24: a 100K-call replay must stay under
//! 1 GB, and the engine's per-message records are part of every replayed strategy's run).
//!
//! Measured by the bytes this binary's allocator has live (allocated minus freed, counted per
//! thread), which is deterministic: the session is built at two history lengths and the slope
//! between them is the heap one more message keeps.

mod counting_alloc;
mod engine_support;

use cachefold::config::Config;
use cachefold::engine::Session;
use counting_alloc::live;
use engine_support::*;

/// Heap bytes a session keeps after one assemble over `turns` turns (4 messages each), with a
/// budget the history fits (`Some(huge)`) or one it does not (folds).
fn held(turns: usize, budget: u64) -> (i64, usize) {
    let mut msgs = Vec::new();
    for k in 0..turns {
        turn(&mut msgs, k, &format!("src/m{}.rs", k % 29), 600);
    }
    let before = live();
    let mut s = Session::new(Config::default(), "mem");
    let p = shim(&mut s, &msgs, Some("deepseek-v4-flash"), Some(budget));
    drop(p);
    s.drop_journal();
    let kept = live() - before;
    drop(s);
    (kept, msgs.len())
}

fn per_message(budget: u64) -> i64 {
    let (small, n_small) = held(500, budget);
    let (large, n_large) = held(5_000, budget);
    (large - small) / (n_large - n_small) as i64
}

#[test]
fn a_session_holds_a_bounded_heap_per_ingested_message() {
    let unfolded = per_message(u64::MAX / 4);
    let folded = per_message(60_000);
    let record = std::mem::size_of::<cachefold::record::MsgRecord>();
    eprintln!(
        "heap held per message: {unfolded} bytes (no fold), {folded} bytes (folded); \
         record {record} bytes"
    );
    // 846 bytes before records gave back their strings' and lists' spare capacity, 737 after
    // (of which 512 were the record itself, in the record list); 593 with boxed strings and
    // lists in the record (384 bytes), ~500 with the hash as 20 bytes and the timestamp as a
    // `Number` (328 bytes).
    assert!(unfolded < 530, "{unfolded} bytes per message (no fold)");
    assert!(folded < 530, "{folded} bytes per message (folded)");
    // The record list holds one per message (and up to as many again in spare capacity).
    assert!(record <= 336, "a record is {record} bytes");
}
