//! The host's `compact()` paths (no message list) and the host's pre-turn threshold.
//!
//! OpenClaw calls `compact()` before a turn when the last call's prompt + output + the new
//! prompt reach its threshold, and fails the turn unless the answer is `compacted` or a benign
//! skip (docs/host-integration.md). The core answers through `compact_request`: a fold recorded
//! for the next assemble, with the size that assemble will send.

mod engine_support;

use cachefold::config::Config;
use cachefold::engine::{
    host_turn_threshold, AssembleInput, AssemblePlan, CommitInput, CompactInput, Drive, Session,
};
use engine_support::*;

const DS: Option<&str> = Some("deepseek/deepseek-v4-flash");

/// Priced folds off (a region never reaches `minFoldTokens`): only forced and emergency folds.
fn cfg() -> Config {
    Config {
        tail_tokens: 2_000,
        min_fold_tokens: 10_000_000,
        fold_record_budget: 4_000,
        expected_remaining_calls: 100,
        ..Config::default()
    }
}

fn commit(s: &mut Session, msgs: &[String], k: usize, window: Option<u64>) {
    s.commit_turn(&CommitInput {
        advancement_key: format!("t{k}"),
        messages: msgs[msgs.len() - 4..].to_vec(),
        now_ms: T0 as f64,
        context_window: window,
    })
    .expect("commit");
}

fn request(s: &mut Session, window: Option<u64>) -> cachefold::engine::CompactAnswer {
    request_for(s, DS, window, None)
}

/// `compact()` on `model` with the host's projection of the next prompt (`currentTokenCount`).
fn request_for(
    s: &mut Session,
    model: Option<&str>,
    window: Option<u64>,
    projected: Option<u64>,
) -> cachefold::engine::CompactAnswer {
    s.compact_request(&CompactInput {
        model: model.map(str::to_string),
        token_budget: window,
        current_token_count: projected,
        context_window: window,
        now_ms: T0 as f64,
    })
    .expect("compact_request")
}

/// A session after one small turn (the host's assemble, the turn, its commit, the next assemble).
fn one_small_turn() -> Session {
    let mut s = Session::new(cfg(), "s");
    let mut msgs = Vec::new();
    shim(&mut s, &msgs, DS, Some(40_000));
    turn(&mut msgs, 0, "doc.md", 200);
    commit(&mut s, &msgs, 0, Some(48_000));
    shim(&mut s, &msgs, DS, Some(40_000));
    s
}

#[test]
fn host_threshold_matches_openclaw_2026_9_6() {
    // window − min(20000, window/4), then the memory flush's min(4000, that/2) earlier.
    assert_eq!(host_turn_threshold(48_000), Some(32_000));
    assert_eq!(host_turn_threshold(32_000), Some(20_000));
    assert_eq!(host_turn_threshold(128_000), Some(104_000));
    assert_eq!(host_turn_threshold(1_000_000), Some(976_000));
    assert_eq!(host_turn_threshold(4_000), Some(1_500));
    assert_eq!(host_turn_threshold(0), None);
}

#[test]
fn compact_without_messages_before_any_history_is_a_benign_no() {
    let mut s = Session::new(cfg(), "s");
    let a = request(&mut s, Some(48_000));
    assert!(!a.pending);
    assert!(a.reason.is_some());
    assert!(!s.state().force_fold);
}

/// The defect: after a large turn the host's preflight called compact() on every later turn
/// and got "folds at the next assemble", which it counts as a failure. Now the answer is a
/// recorded fold whose projected size the next assemble really sends.
#[test]
fn compact_without_messages_records_a_fold_the_next_assemble_emits() {
    let mut s = Session::new(cfg(), "s");
    let mut msgs = Vec::new();
    // As the host: assemble gets the history before the turn; commit gets the turn.
    for k in 0..6 {
        shim(&mut s, &msgs, DS, Some(40_000));
        turn(&mut msgs, k, "doc.md", 6_000);
        commit(&mut s, &msgs, k, Some(48_000));
    }
    assert_eq!(s.state().window, Some(48_000));
    let folds_before = s.state().counters.folds;
    let journal_before = s.take_journal();
    let a = request(&mut s, Some(48_000));
    assert!(a.pending, "{a:?}");
    assert!(s.state().force_fold);
    assert!(a.tokens_after < a.tokens_before, "{a:?}");
    assert_eq!(a.host_threshold, Some(32_000));
    // The request is journaled: a restarted process still folds.
    let (r, _) = Session::restore(cfg(), "s", None, &(journal_before + &s.take_journal())).unwrap();
    assert!(r.state().force_fold);
    // The next turn's assemble folds.
    let p = shim(&mut s, &msgs, DS, Some(40_000));
    assert!(p.report.forced);
    assert_eq!(s.state().counters.folds, folds_before + 1);
    assert!(!s.state().force_fold);
    // Honest projection: the stand-in for the last turn cannot be cut inside, so the real
    // fold folds at least as much; the projection is an upper bound of what is sent.
    let sent = p.report.tokens_after;
    assert!(
        sent <= a.tokens_after + a.tokens_after / 20,
        "sent {sent} vs projected {}",
        a.tokens_after
    );
    // Asked again with nothing new: a fold now would save next to nothing, and the answer
    // says so as a field (the shim answers the host's "already compacted" from it, not from the
    // reason's text), under the trigger.
    let again = request(&mut s, Some(48_000));
    assert!(!again.pending, "{again:?}");
    assert!(again.already_compacted, "{again:?}");
    assert!(again.fits, "{again:?}");
    assert!(again.reason.is_some());
    // A pending fold never reads as "fits": the host is told it compacted.
    assert!(!a.fits);
}

/// The e2e `compact` cell at 26 turns: the user's /compact found the history already folded
/// down ("already compacted"), the shim handed the call to the host's compaction, and its summary
/// replaced the history, the fact of turn 0 (kept verbatim in the pinned head) with it. An answer
/// that folds nothing says whether the context needs room at all (`fits`: the core's estimate
/// and the host's projection are under the host's trigger), and the shim declines then. Not set
/// without a recorded history, for a model cachefold does not manage, or when either figure
/// reaches the trigger.
#[test]
fn an_answer_that_folds_nothing_says_whether_the_context_fits_under_the_host_trigger() {
    let none = request(&mut Session::new(cfg(), "s"), Some(48_000));
    assert!(!none.pending && !none.fits, "no history: {none:?}");
    let mut s = one_small_turn();
    let small = request(&mut s, Some(48_000));
    assert!(!small.pending, "{small:?}");
    assert_eq!(small.host_threshold, Some(32_000));
    assert!(small.tokens_before < 32_000, "{small:?}");
    assert!(small.fits, "{small:?}");
    // The host projects the next prompt at or over its trigger: it needs room.
    let over = request_for(&mut s, DS, Some(48_000), Some(32_000));
    assert!(!over.pending && !over.fits, "{over:?}");
    let under = request_for(&mut s, DS, Some(48_000), Some(31_999));
    assert!(under.fits, "{under:?}");
    // A model cachefold does not manage: the host's compaction decides, as legacy.
    let other = request_for(&mut s, Some("local/llama-3.1-8b"), Some(48_000), None);
    assert!(!other.pending && !other.fits, "{other:?}");
    // Over the trigger by the core's own estimate: a pinned head (the first user message) that
    // alone outgrows a 24K window's trigger, with nothing after it to fold.
    let mut big = Session::new(cfg(), "big");
    let head = vec![
        user(&"the spec, in full: ".repeat(4_000), T0),
        assistant("read it", T0 + 1),
    ];
    shim(&mut big, &head, DS, Some(200_000));
    big.commit_turn(&CommitInput {
        advancement_key: "t0".to_string(),
        messages: head.clone(),
        now_ms: T0 as f64,
        context_window: Some(24_000),
    })
    .expect("commit");
    shim(&mut big, &head, DS, Some(200_000));
    let a = request(&mut big, Some(24_000));
    assert_eq!(a.host_threshold, Some(14_000));
    assert!(!a.pending, "{a:?}");
    assert!(a.tokens_before >= 14_000, "{a:?}");
    assert!(!a.fits, "{a:?}");
}

/// The host's assemble with the current turn held apart (`assemble.prompt`), as OpenClaw sends it.
fn assemble_before_prompt(s: &mut Session, msgs: &[String]) -> AssemblePlan {
    let head = AssembleInput {
        prompt_pending: true,
        ..input(msgs, &[], DS, Some(40_000))
    };
    s.drive(head, Drive::Assemble, |i| msgs[i as usize].clone())
        .expect("assemble")
        .plan
}

/// A fact in the pinned head, then one turn that alone outgrows a 24K window's trigger: a read
/// of `read` chars and a final reply of `reply` chars. The session and its messages after that
/// turn's commit.
fn head_then_one_large_turn(read: usize, reply: usize) -> (Session, Vec<String>) {
    head_of_then_one_large_turn("", read, reply, 24_000)
}

/// [`head_then_one_large_turn`] with `spec` before the fact in the first user message, in a
/// `window`-token window.
fn head_of_then_one_large_turn(
    spec: &str,
    read: usize,
    reply: usize,
    window: u64,
) -> (Session, Vec<String>) {
    let mut s = Session::new(cfg(), "s");
    let mut msgs = Vec::new();
    shim(&mut s, &msgs, DS, Some(40_000));
    msgs.push(user(
        &format!("{spec}The deploy code is ZEBRA-4417. Please remember it."),
        T0,
    ));
    msgs.push(assistant("Noted the deploy code.", T0 + 1));
    s.commit_turn(&CommitInput {
        advancement_key: "t0".to_string(),
        messages: msgs.clone(),
        now_ms: T0 as f64,
        context_window: Some(window),
    })
    .expect("commit");
    shim(&mut s, &msgs, DS, Some(40_000));
    turn(&mut msgs, 1, "docs/guide.md", read);
    let last = msgs.len() - 1;
    msgs[last] = assistant(
        &"all of it checked, section by section. ".repeat(reply / 40 + 1),
        T0 + 9,
    );
    commit(&mut s, &msgs, 1, Some(window));
    (s, msgs)
}

/// The e2e `repro-48k` cell run in a 24K window with 60-200 KB reads: each turn alone outgrew
/// the host's trigger, and its messages were the only ones after the pinned head. The
/// projection of `compact()` stands one message in for that turn, so it found no cut point
/// after the head: cachefold answered "no cut point after the head", the host's compaction ran
/// every turn, and its summary replaced the history, the fact kept verbatim in the pinned head
/// with it. The host holds the next turn apart, so the turn's end is a cut point: the
/// projection folds, and the next assemble folds behind the unchanged head.
#[test]
fn a_last_turn_over_the_trigger_on_its_own_folds_behind_the_head() {
    let (mut s, msgs) = head_then_one_large_turn(400_000, 40);
    let a = request(&mut s, Some(24_000));
    assert_eq!(a.host_threshold, Some(14_000));
    assert!(a.tokens_before > 14_000, "{a:?}");
    assert!(a.pending, "{a:?}");
    assert!(a.tokens_after < 14_000, "{a:?}");
    let p = assemble_before_prompt(&mut s, &msgs);
    let fold = p.report.fold.as_ref().expect("the turn folds");
    assert_eq!(fold.from, 2, "{:?}", p.report);
    let out = resolve(&p, &msgs);
    assert_eq!(out[..2], msgs[..2], "the pinned head is sent unchanged");
    assert!(p.report.tokens_after < 14_000, "{:?}", p.report);
    assert!(
        p.fold_writes.iter().any(|w| w.from == 2),
        "{:?}",
        p.fold_writes
    );
    // The next turn appends after what was sent: the prefix holds.
    let mut next = msgs.clone();
    turn(&mut next, 2, "docs/small.md", 400);
    commit(&mut s, &next, 2, Some(24_000));
    let q = assemble_before_prompt(&mut s, &next);
    assert_eq!(
        resolve(&q, &next)[..out.len()],
        out[..],
        "append-only after the fold"
    );
}

/// A final reply that alone is over the threshold: with the next turn held apart, the list's end
/// is a cut point and the emergency fold takes the reply too. Without it the list may end inside
/// the current turn, so its end is no cut point and the reply stays.
#[test]
fn the_end_of_the_list_is_a_cut_point_only_when_the_prompt_is_held_apart() {
    let (mut s, msgs) = head_then_one_large_turn(400, 400_000);
    let p = shim(&mut s, &msgs, DS, Some(40_000));
    assert!(
        p.report.fold.as_ref().map_or(true, |f| f.to < 6),
        "{:?}",
        p.report
    );
    assert!(p.report.over_budget, "{:?}", p.report);
    let (mut s, msgs) = head_then_one_large_turn(400, 400_000);
    let p = assemble_before_prompt(&mut s, &msgs);
    let fold = p.report.fold.as_ref().expect("the turn folds");
    assert_eq!((fold.from, fold.to), (2, 6), "{:?}", p.report);
    assert_eq!(resolve(&p, &msgs)[..2], msgs[..2]);
    assert!(!p.report.over_budget, "{:?}", p.report);
    // A pinned head over the threshold by itself keeps every round of the fold rules an
    // emergency: the end, reached by the first round's fold, is no cut point for the next (the
    // e2e run's projection failed with "fold 3..3 with live tail at 3").
    let spec: String = (0..60_000).map(|i| format!("w{i} ")).collect();
    let (mut s, msgs) = head_of_then_one_large_turn(&spec, 400_000, 40, 24_000);
    let a = request(&mut s, Some(24_000));
    assert!(a.pending, "{a:?}");
    let p = assemble_before_prompt(&mut s, &msgs);
    assert_eq!(p.report.folds.len(), 1, "{:?}", p.report);
    assert_eq!(resolve(&p, &msgs)[..2], msgs[..2]);
    // Over the fold threshold but under the host's trigger (a 48K window: 32,000): the host can
    // go on, so the last reply stays and the fold stops before it, as without the prompt held
    // apart (the e2e topics run folded every turn whole when the end was taken whenever no cut
    // reached the threshold).
    let (mut s, msgs) = head_of_then_one_large_turn("", 400, 90_000, 48_000);
    let p = assemble_before_prompt(&mut s, &msgs);
    assert!(
        p.report.tokens_before > p.report.threshold_tokens,
        "{:?}",
        p.report
    );
    assert!(p.report.tokens_before < 32_000, "{:?}", p.report);
    assert!(
        p.report.fold.as_ref().map_or(true, |f| f.to < 6),
        "{:?}",
        p.report
    );
    assert_eq!(resolve(&p, &msgs).last(), msgs.last());
    // Nor when the list ends with a call still open (an in-flight turn), prompt or not.
    let (mut s, mut msgs) = head_then_one_large_turn(400_000, 40);
    msgs.truncate(4);
    let p = assemble_before_prompt(&mut s, &msgs);
    assert!(
        p.report.fold.as_ref().map_or(true, |f| f.to < 4),
        "{:?}",
        p.report
    );
}

#[test]
fn a_single_turn_history_has_nothing_to_fold_and_says_why() {
    let mut s = one_small_turn();
    let a = request(&mut s, Some(48_000));
    assert!(!a.pending, "{a:?}");
    assert!(a.reason.as_deref().is_some_and(|r| !r.is_empty()));
    assert!(!s.state().force_fold);
}

/// The fold threshold leaves room for a turn as large as the recent ones under the host's
/// pre-turn threshold, so the last call of the next turn does not trigger the host's
/// compaction; without a known window it is `compactRatio × budget` as before.
#[test]
fn threshold_leaves_room_for_the_next_turn_under_the_host_threshold() {
    let run = |window: Option<u64>| {
        let mut s = Session::new(cfg(), "s");
        let mut msgs = Vec::new();
        let mut last = None;
        for k in 0..8 {
            let p = shim(&mut s, &msgs, DS, Some(40_000));
            turn(&mut msgs, k, "doc.md", 24_000);
            commit(&mut s, &msgs, k, window);
            last = Some(p.report);
        }
        last.unwrap()
    };
    let plain = run(None);
    let aware = run(Some(48_000));
    assert_eq!(plain.threshold_tokens, 32_000); // 0.8 × 40,000
    assert!(
        aware.threshold_tokens < plain.threshold_tokens,
        "{} !< {}",
        aware.threshold_tokens,
        plain.threshold_tokens
    );
    assert!(aware.threshold_tokens >= plain.threshold_tokens / 2);
    assert!(aware.tokens_after <= plain.tokens_after);
}
