//! Provider cache profiles in the engine: the fold cost model under a provider's terms, and
//! rewrites at no break cost after an idle gap past the provider's cache lifetime.

mod engine_support;

use cachefold::config::{Config, Mode};
use cachefold::engine::{AssemblePlan, CommitInput, Drive, FoldReport, Session};
use engine_support::*;

const SONNET: Option<&str> = Some("anthropic/claude-sonnet-5");
const MIN: u64 = 60_000;

fn assemble_at(s: &mut Session, msgs: &[String], model: Option<&str>, now: u64) -> AssemblePlan {
    assemble_in(s, msgs, model, now, 1_000_000)
}

fn assemble_in(
    s: &mut Session,
    msgs: &[String],
    model: Option<&str>,
    now: u64,
    budget: u64,
) -> AssemblePlan {
    let mut inp = input(msgs, &[], model, Some(budget));
    inp.now_ms = now as f64;
    s.drive(inp, Drive::Assemble, |i| msgs[i as usize].clone())
        .expect("assemble")
        .plan
}

fn commit_at(s: &mut Session, key: &str, turn: &[String], now: u64) {
    let c = CommitInput {
        advancement_key: key.into(),
        messages: turn.to_vec(),
        now_ms: now as f64,
        context_window: None,
    };
    s.commit_turn(&c).expect("commit");
}

/// A session on `model` with `turns` committed turns one minute apart; returns the session,
/// the history with one more (uncommitted) turn, and the last commit time.
fn session_with_turns(
    cfg: Config,
    model: Option<&str>,
    turns: usize,
) -> (Session, Vec<String>, u64) {
    session_sized(cfg, model, turns, 3_000)
}

/// [`session_with_turns`] with tool results of `size` chars.
fn session_sized(
    cfg: Config,
    model: Option<&str>,
    turns: usize,
    size: usize,
) -> (Session, Vec<String>, u64) {
    let mut s = Session::new(cfg, "s1");
    let mut msgs = Vec::new();
    let mut last = T0;
    for k in 0..turns {
        let start = msgs.len();
        turn(&mut msgs, k, &format!("f{k}.txt"), size);
        let now = T0 + k as u64 * MIN;
        let p = assemble_at(&mut s, &msgs[..start + 1], model, now);
        assert!(
            p.report.folds.is_empty(),
            "turn {k}: {:?}",
            p.report.skipped
        );
        last = now + 30_000;
        commit_at(&mut s, &format!("k{k}"), &msgs[start..], last);
    }
    turn(&mut msgs, turns, "last.txt", size);
    (s, msgs, last)
}

/// `f` is a priced fold made at no break cost (the cache had expired).
fn assert_free_fold(f: &FoldReport) {
    assert_eq!(f.reason.as_str(), "priced", "{f:?}");
    assert!(
        f.decision.reason.contains("cache expired"),
        "{}",
        f.decision.reason
    );
}

fn cfg() -> Config {
    Config {
        mode: Mode::Always,
        expected_remaining_calls: 1,
        ..small()
    }
}

/// Regression: on Anthropic a priced fold that does not pay while the 5-minute cache is alive
/// pays after a 6-minute idle gap, because the next request writes the whole prompt anyway.
#[test]
fn fold_that_did_not_pay_pays_after_an_idle_gap() {
    let (mut alive, msgs, last) = session_with_turns(cfg(), SONNET, 8);
    let p = assemble_at(&mut alive, &msgs, SONNET, last + 2 * MIN);
    assert!(p.report.folds.is_empty(), "folded on a live cache");
    let why = p.report.skipped.clone().unwrap_or_default();
    assert!(why.starts_with("does not pay"), "{why}");
    assert!(why.contains("write 1.25x"), "{why}");

    let (mut idle, msgs, last) = session_with_turns(cfg(), SONNET, 8);
    let p = assemble_at(&mut idle, &msgs, SONNET, last + 6 * MIN);
    let f = p.report.fold.as_ref().expect("fold after the idle gap");
    assert!(
        f.decision.pays && f.decision.one_off_usd == 0.0,
        "{:?}",
        f.decision
    );
    assert!(
        f.decision.reason.contains("cache expired"),
        "{}",
        f.decision.reason
    );
    assert_eq!(f.price_key, "anthropic-sonnet");
}

/// Regression (e2e idle-gap cell): the host also sends requests no turn is committed for (a
/// background skill review through `assemble`). One 4 minutes after the last turn keeps the
/// 5-minute cache alive, so the request 2 minutes later must not be priced as after an expiry.
#[test]
fn a_request_without_a_commit_keeps_the_cache_alive() {
    let (mut s, msgs, last) = session_with_turns(cfg(), SONNET, 8);
    let n = msgs.len();
    // The background request: the history so far, no commit follows.
    let bg = assemble_at(&mut s, &msgs[..n - 2], SONNET, last + 4 * MIN);
    assert!(bg.report.folds.is_empty(), "{:?}", bg.report.fold);
    let p = assemble_at(&mut s, &msgs, SONNET, last + 6 * MIN);
    assert!(
        p.report.folds.is_empty(),
        "priced as expired although a request 2 min ago kept the cache: {:?}",
        p.report.fold
    );
    let why = p.report.skipped.clone().unwrap_or_default();
    assert!(why.starts_with("does not pay"), "{why}");
}

/// Regression (e2e idle-gap cell): the host's skill review runs as a session of its own and
/// sends this session's prefix; the shim passes the time of that request (`lastRequestMs`), so
/// the request 2 minutes later is not priced as after an expiry.
#[test]
fn another_sessions_request_keeps_the_cache_alive() {
    let (mut s, msgs, last) = session_with_turns(cfg(), SONNET, 8);
    let mut inp = input(&msgs, &[], SONNET, Some(1_000_000));
    inp.now_ms = (last + 6 * MIN) as f64;
    inp.last_request_ms = Some((last + 4 * MIN) as f64);
    let p = s
        .drive(inp, Drive::Assemble, |i| msgs[i as usize].clone())
        .expect("assemble")
        .plan;
    assert!(p.report.folds.is_empty(), "{:?}", p.report.fold);
    let why = p.report.skipped.clone().unwrap_or_default();
    assert!(why.starts_with("does not pay"), "{why}");
}

/// DeepSeek keeps its cache for hours: the same gap changes nothing there.
#[test]
fn deepseek_has_no_idle_expiry() {
    let (mut s, msgs, last) = session_with_turns(cfg(), DS, 8);
    let p = assemble_at(&mut s, &msgs, DS, last + 6 * 60 * MIN);
    assert!(p.report.folds.is_empty(), "{:?}", p.report.fold);
}

/// `providers.<key>.ttlMinutes` sets the lifetime: with 30 minutes, a 6-minute gap is no
/// longer an expiry.
#[test]
fn lifetime_override_moves_the_expiry() {
    let c = Config::from_json(
        r#"{"mode":"always","tailTokens":1000,"minFoldTokens":500,"foldRecordBudget":4000,
            "expectedRemainingCalls":1,"providers":{"anthropic-sonnet":{"ttlMinutes":30}}}"#,
    )
    .unwrap();
    let (mut s, msgs, last) = session_with_turns(c.clone(), SONNET, 8);
    let p = assemble_at(&mut s, &msgs, SONNET, last + 6 * MIN);
    assert!(p.report.folds.is_empty(), "{:?}", p.report.fold);
    let (mut s, msgs, last) = session_with_turns(c, SONNET, 8);
    let p = assemble_at(&mut s, &msgs, SONNET, last + 31 * MIN);
    assert!(p.report.fold.is_some(), "{:?}", p.report.skipped);
}

/// A config with the default `minFoldTokens` (24,000): the sessions below never reach it.
fn big_regions() -> Config {
    Config {
        mode: Mode::Always,
        expected_remaining_calls: 100,
        min_fold_tokens: 24_000,
        ..small()
    }
}

/// Regression (e2e idle-gap cell): after an idle gap the fold costs no break, so the live tail
/// is folded down to `tailTokens` even when the region is under `minFoldTokens` (a gate that
/// only keeps folds from breaking a live cache too often).
#[test]
fn a_small_region_folds_after_an_idle_gap() {
    let (mut alive, msgs, last) = session_with_turns(big_regions(), SONNET, 8);
    let p = assemble_at(&mut alive, &msgs, SONNET, last + 2 * MIN);
    assert!(p.report.folds.is_empty(), "{:?}", p.report.fold);
    let why = p.report.skipped.clone().unwrap_or_default();
    assert!(why.contains("< minFoldTokens"), "{why}");

    let (mut idle, msgs, last) = session_with_turns(big_regions(), SONNET, 8);
    let p = assemble_at(&mut idle, &msgs, SONNET, last + 6 * MIN);
    let f = p.report.fold.as_ref().expect("fold after the idle gap");
    assert_free_fold(f);
    assert!(f.tokens_after < f.tokens_before, "{f:?}");
}

/// Regression (e2e idle-gap cell): a prompt over the fold threshold after an idle gap is folded
/// by the priced rule at no break cost, down to `tailTokens`, before the emergency rule would
/// force a fold; on a live cache the same prompt gets the emergency fold.
#[test]
fn an_idle_gap_folds_before_the_emergency() {
    // The 8 turns estimate ~1,700 tokens: over the threshold (0.8 x 2,000).
    let budget = 2_000;
    let (mut alive, msgs, last) = session_with_turns(big_regions(), SONNET, 8);
    let p = assemble_in(&mut alive, &msgs, SONNET, last + 2 * MIN, budget);
    assert!(p.report.emergency, "{:?}", p.report);
    assert_eq!(
        p.report
            .fold
            .as_ref()
            .expect("emergency fold")
            .reason
            .as_str(),
        "emergency"
    );

    let (mut idle, msgs, last) = session_with_turns(big_regions(), SONNET, 8);
    let p = assemble_in(&mut idle, &msgs, SONNET, last + 6 * MIN, budget);
    assert!(!p.report.emergency, "{:?}", p.report.folds);
    assert!(!p.report.folds.is_empty());
    for f in &p.report.folds {
        assert_free_fold(f);
    }
    assert!(
        p.report.tokens_after <= p.report.threshold_tokens,
        "{:?}",
        p.report
    );

    // The live tail already within `tailTokens` (the e2e idle-gap cell: the fixed prefix fills
    // the threshold): on a live cache the emergency folds down to its low-water mark; after
    // the gap the free fold goes first and folds everything before the last turn.
    let wide = Config {
        tail_tokens: 100_000,
        ..big_regions()
    };
    // Results of 30,000 chars: the last turn alone stays over Sonnet's 1,024-token minimum.
    let budget = 12_000;
    let (mut alive, msgs, last) = session_sized(wide.clone(), SONNET, 8, 30_000);
    let p = assemble_in(&mut alive, &msgs, SONNET, last + 2 * MIN, budget);
    assert_eq!(
        p.report
            .fold
            .as_ref()
            .expect("emergency fold")
            .reason
            .as_str(),
        "emergency"
    );
    let emergency_after = p.report.tokens_after;
    let (mut idle, msgs, last) = session_sized(wide, SONNET, 8, 30_000);
    let p = assemble_in(&mut idle, &msgs, SONNET, last + 6 * MIN, budget);
    assert!(!p.report.emergency, "{:?}", p.report.folds);
    let f = p.report.fold.as_ref().expect("free fold");
    assert_free_fold(f);
    assert!(
        p.report.tokens_after <= emergency_after,
        "{} > {emergency_after}",
        p.report.tokens_after
    );
}

/// A Sonnet session driven a turn a minute (each result 3,000 chars) until it holds two fold
/// records, no condensation on the way, then a short user turn: (session, messages, the time
/// of the last commit).
fn session_with_two_folds() -> (Session, Vec<String>, u64) {
    let c = Config {
        mode: Mode::Always,
        expected_remaining_calls: 100,
        ..small()
    };
    let mut s = Session::new(c, "s1");
    let mut msgs = Vec::new();
    let mut last = T0;
    let mut k = 0;
    while s.state().segs.len() < 2 && k < 40 {
        let start = msgs.len();
        turn(&mut msgs, k, &format!("f{k}.txt"), 3_000);
        let now = T0 + k as u64 * MIN;
        let p = assemble_at(&mut s, &msgs[..start + 1], SONNET, now);
        assert!(p.report.condensed.is_none());
        last = now + 30_000;
        commit_at(&mut s, &format!("k{k}"), &msgs[start..], last);
        k += 1;
    }
    assert_eq!(s.state().segs.len(), 2, "two folds in {k} turns");
    turn(&mut msgs, k, "last.txt", 100);
    (s, msgs, last)
}

/// After an idle gap, two fold records are condensed into one even under their budget.
#[test]
fn records_condense_after_an_idle_gap() {
    let (mut s, msgs, last) = session_with_two_folds();
    let p = assemble_at(&mut s, &msgs, SONNET, last + 6 * MIN);
    let c = p
        .report
        .condensed
        .as_ref()
        .expect("condensed after the gap");
    // The free fold of the live tail runs first at the gap, then every record is condensed.
    assert!(c.merged >= 2, "{c:?}");
    assert_eq!(s.state().segs.len(), 1);
}

/// Regression (e2e idle-gap cell): after an idle gap the records are condensed even when the
/// prompt stays over the fold threshold (the fixed prefix fills it), since the condensation
/// then breaks nothing; on a live cache that condensation is skipped as not worth its break.
#[test]
fn records_condense_over_the_threshold_after_an_idle_gap() {
    let run = |gap: u64| {
        let (mut s, msgs, last) = session_with_two_folds();
        // A threshold (0.8 x 100) no fold or condensation can get the prompt under.
        let p = assemble_in(&mut s, &msgs, SONNET, last + gap, 100);
        assert!(
            p.report.tokens_after > p.report.threshold_tokens,
            "{:?}",
            p.report
        );
        (p, s.state().segs.len())
    };
    let (alive, segs) = run(2 * MIN);
    assert!(
        alive.report.condensed.is_none(),
        "{:?}",
        alive.report.condensed
    );
    assert!(segs >= 2);
    let (idle, segs) = run(6 * MIN);
    let c = idle
        .report
        .condensed
        .as_ref()
        .expect("condensed after the gap");
    assert!(c.merged >= 2, "{c:?}");
    assert_eq!(segs, 1);
}

/// The default `targetModels` manage the providers the bench measured a saving on, and
/// nothing else.
#[test]
fn default_target_models_cover_the_measured_providers() {
    let c = Config::default();
    for m in [
        "deepseek/deepseek-v4-flash",
        "anthropic/claude-sonnet-5",
        "claude-opus-5",
        "openai/gpt-5.5",
        "google/gemini-2.5-pro",
        "moonshot/kimi-k2.6",
        "qwen/qwen3-max",
        "zai/glm-4.6",
    ] {
        assert!(cachefold::engine::model_managed(&c, Some(m)), "{m}");
    }
    for m in ["mistral/mistral-large", "openai/o3", "openai/gpt-4o"] {
        assert!(!cachefold::engine::model_managed(&c, Some(m)), "{m}");
    }
}

/// After the free fold at an idle gap the gap's request writes the prompt again, so the cache
/// is live: the turns that follow must not fold or condense again where that would not pay on
/// a live cache (`expectedRemainingCalls: 1`), though their live tail grows past `tailTokens`
/// (a fold an expired cache would make free).
#[test]
fn no_second_fold_on_the_cache_the_gap_request_rewrote() {
    let (mut s, mut msgs, last) = session_with_turns(cfg(), SONNET, 8);
    let gap = last + 6 * MIN;
    let start = msgs.len() - 4;
    let p = assemble_at(&mut s, &msgs, SONNET, gap);
    let f = p.report.fold.as_ref().expect("fold after the idle gap");
    assert!(
        f.decision.reason.contains("cache expired"),
        "{}",
        f.decision.reason
    );
    let segs = s.state().segs.len();
    commit_at(&mut s, "gap", &msgs[start..], gap + 30_000);
    for k in 0..3 {
        let from = msgs.len();
        turn(&mut msgs, 20 + k, &format!("n{k}.txt"), 3_000);
        let now = gap + (k as u64 + 1) * MIN;
        let p = assemble_at(&mut s, &msgs[..from + 1], SONNET, now);
        assert!(
            p.report.folds.is_empty(),
            "turn {k} after the gap: {:?}",
            p.report.folds
        );
        assert!(
            p.report.condensed.is_none(),
            "turn {k} after the gap: {:?}",
            p.report.condensed
        );
        commit_at(&mut s, &format!("n{k}"), &msgs[from..], now + 30_000);
    }
    assert_eq!(s.state().segs.len(), segs);
    // The same turns after a second gap: the grown live tail folds for free.
    let from = msgs.len();
    turn(&mut msgs, 30, "m.txt", 3_000);
    let p = assemble_at(&mut s, &msgs[..from + 1], SONNET, gap + 10 * MIN);
    assert!(!p.report.folds.is_empty(), "{:?}", p.report.skipped);
}

/// Regression (e2e idle-gap cell with per-call calibration): after the gap, a prompt over the
/// threshold whose live tail is just over `tailTokens` (so the priced candidate is a small
/// region) is folded in one free fold as deep as the last turn; the old code folded the small
/// region and an emergency fold followed in the same request.
#[test]
fn an_idle_gap_over_the_threshold_folds_once_past_a_small_candidate() {
    // 9 turns of ~1,500 tokens (~13,900 in all) against a threshold of 0.8 x 12,000: a tail of
    // 11,000 tokens leaves a priced candidate of about two turns.
    let c = Config {
        tail_tokens: 11_000,
        ..big_regions()
    };
    let (mut idle, msgs, last) = session_sized(c, SONNET, 8, 30_000);
    let p = assemble_in(&mut idle, &msgs, SONNET, last + 6 * MIN, 12_000);
    assert!(!p.report.emergency, "{:?}", p.report.folds);
    assert_eq!(p.report.folds.len(), 1, "{:?}", p.report.folds);
    let f = &p.report.folds[0];
    assert_free_fold(f);
    assert!(
        p.report.tokens_after <= p.report.threshold_tokens,
        "{:?}",
        p.report
    );
    // At least everything before the last turn is folded.
    let last_turn = msgs.len() as u32 - 4;
    assert!(f.to >= last_turn, "{f:?}");
}

/// Regression (e2e idle-gap cell at `--window 40000 --exec-kb 150-600 --read-kb 20-120 --tools
/// 4`): after the gap, with the prompt held apart, the free fold folded everything before the
/// last reply, the prompt stayed over the host's budget, and an emergency fold of the end of
/// the list (the last reply, 52 tokens) followed in the same request: two records, and an
/// emergency after a free rewrite. The free fold now goes to the end at once.
#[test]
fn an_idle_gap_with_the_last_turn_over_the_budget_folds_once_to_the_end() {
    let c = Config {
        tail_tokens: 11_000,
        ..big_regions()
    };
    // A budget the last turn alone (~1,500 tokens) outgrows.
    let budget = 1_200;
    let held = |s: &mut Session, msgs: &[String], now: u64| {
        let mut inp = input(msgs, &[], SONNET, Some(budget));
        inp.now_ms = now as f64;
        inp.prompt_pending = true;
        s.drive(inp, Drive::Assemble, |i| msgs[i as usize].clone())
            .expect("assemble")
            .plan
    };
    let (mut idle, msgs, last) = session_sized(c.clone(), SONNET, 8, 30_000);
    let p = held(&mut idle, &msgs, last + 6 * MIN);
    // One fold, the free one; no emergency fold follows it (the prompt is still over the
    // threshold: the static part and the head fill it here, and nothing is left to fold).
    assert_eq!(p.report.folds.len(), 1, "{:?}", p.report.folds);
    let f = &p.report.folds[0];
    assert_free_fold(f);
    assert_eq!(f.to, msgs.len() as u32, "{f:?}");
    // Without the prompt held apart the end is no cut: the free fold stops before the last
    // turn, as before.
    let (mut idle, msgs, last) = session_sized(c, SONNET, 8, 30_000);
    let p = assemble_in(&mut idle, &msgs, SONNET, last + 6 * MIN, budget);
    let f = p.report.folds.first().expect("a free fold");
    assert_free_fold(f);
    assert!(f.to < msgs.len() as u32, "{f:?}");
}
