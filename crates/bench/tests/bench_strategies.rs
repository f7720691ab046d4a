//! Each strategy's key behaviour on synthetic histories (no tokenizer needed): S0 append-only;
//! S1a compacts at `window − 20,000` keeping ~20,000 tokens; S1b soft-trims / hard-clears after
//! an idle gap; S2 trims in place (and reproduces ReasoniXlaw's seam bug); S2c externalises at
//! ingest and puts a changing index first; S2f re-renders its summary block; S3 (the real
//! engine) keeps pairs valid and equals `crate::replay` call for call.

use cachefold::config::Config;
use cachefold::message::{Message, Role};
use cachefold::pairing::{self, Shape};
use cachefold_bench::bench::cachefold::Cachefold;
use cachefold_bench::bench::store::{Store, M};
use cachefold_bench::bench::strategies::{
    ContextFold, ContextSafe, Ctx, Legacy, Naive, ReasoniXlaw, Strategy,
};
use cachefold_bench::replay::{self, ReplayOptions, SummaryMode, UsageMode};
use serde_json::json;

struct H {
    store: Store,
    msgs: Vec<M>,
    n: u64,
}

impl H {
    fn new() -> H {
        H {
            store: Store::default(),
            msgs: Vec::new(),
            n: 0,
        }
    }
    fn push(&mut self, v: serde_json::Value) -> usize {
        let i = self.msgs.len();
        let m = self.store.make_value(v, Some(i), Vec::new()).unwrap();
        self.msgs.push(m);
        i
    }
    fn user(&mut self, t: &str) -> usize {
        self.push(json!({"role": "user", "content": [{"type": "text", "text": t}], "timestamp": 1}))
    }
    fn say(&mut self, t: &str) -> usize {
        self.push(json!({"role": "assistant", "content": [{"type": "text", "text": t}], "stopReason": "stop", "timestamp": 1}))
    }
    /// An assistant tool call plus its result of `chars` chars; returns the result index.
    fn tool(&mut self, name: &str, chars: usize) -> usize {
        self.n += 1;
        let id = format!("c{}", self.n);
        self.push(json!({"role": "assistant", "content": [{"type": "text", "text": format!("step {}", self.n)}, {"type": "toolCall", "id": id, "name": name, "arguments": {"path": format!("src/f{}.rs", self.n)}}], "stopReason": "toolUse", "timestamp": 1}));
        let unit = format!("result {} src/f{}.rs\n", self.n, self.n);
        let body: String = unit
            .repeat(chars / unit.len() + 1)
            .chars()
            .take(chars)
            .collect();
        self.push(
            json!({"role": "toolResult", "toolCallId": id, "toolName": name, "content": [{"type": "text", "text": body}], "isError": false, "timestamp": 1}),
        )
    }
}

fn ctx<'a>(store: &'a mut Store, window: u64, now: f64) -> Ctx<'a> {
    Ctx {
        store,
        window,
        static_chars: 0,
        extra: Vec::new(),
        fold_failures: 0,
        folds: 0,
        now_ms: now,
    }
}

/// Ingest everything, then assemble over the whole history.
fn run(
    s: &mut dyn Strategy,
    h: &mut H,
    window: u64,
    now: f64,
    ingested: &mut Vec<M>,
) -> (Vec<M>, usize) {
    let mut c = ctx(&mut h.store, window, now);
    while ingested.len() < h.msgs.len() {
        let i = ingested.len();
        let m = s.ingest(&mut c, h.msgs[i].clone(), i);
        ingested.push(m);
    }
    let out = s.assemble(&mut c, ingested);
    (out, c.extra.len())
}

fn violations(out: &[M]) -> usize {
    let shapes: Vec<Shape> = out.iter().map(|m| Shape::of(&m.msg())).collect();
    pairing::violations(&shapes).len()
}

fn keys(v: &[M]) -> Vec<u128> {
    v.iter().map(|m| m.key).collect()
}

#[test]
fn s0_is_append_only() {
    let mut h = H::new();
    let mut s = Naive;
    let mut ing = Vec::new();
    h.user("go");
    h.tool("read", 500);
    let (a, _) = run(&mut s, &mut h, 1_000_000, 0.0, &mut ing);
    h.tool("read", 500);
    let (b, _) = run(&mut s, &mut h, 1_000_000, 1.0, &mut ing);
    assert_eq!(keys(&b[..a.len()]), keys(&a));
    assert_eq!(b.len(), h.msgs.len());
}

#[test]
fn s1a_compacts_at_threshold_keeping_20k() {
    let mut h = H::new();
    h.user("refactor the parser");
    for _ in 0..30 {
        h.tool("read", 8_000); // ≈ 2,000 estimated tokens each
    }
    let mut s = Legacy::new(false);
    let mut ing = Vec::new();
    // Window 100K: threshold 80K estimated tokens; history ≈ 61K → nothing happens.
    let (out, extra) = run(&mut s, &mut h, 100_000, 0.0, &mut ing);
    assert_eq!((out.len(), extra), (h.msgs.len(), 0));
    // Window 60K: threshold 40K → compaction.
    let mut s = Legacy::new(false);
    let mut ing = Vec::new();
    let (out, extra) = run(&mut s, &mut h, 60_000, 0.0, &mut ing);
    assert_eq!(extra, 1, "one summariser call");
    assert!(out[0].msg().text().starts_with(
        "The conversation history before this point was compacted into the following summary:"
    ));
    assert_ne!(
        out[1].role(),
        Role::ToolResult,
        "the kept part never starts with a result"
    );
    let kept: u64 = out[1..].iter().map(|m| m.est_tokens()).sum();
    // pi's findCutPoint: walk back until ≥ 20,000, then the first valid cut at or after that
    // entry, so the kept part is within one message of 20,000.
    assert!(
        (18_000..=22_000).contains(&kept),
        "kept {kept} estimated tokens"
    );
    assert_eq!(violations(&out), 0);
    // Later calls append to the compacted context.
    h.tool("read", 400);
    let (out2, extra2) = run(&mut s, &mut h, 60_000, 1.0, &mut ing);
    assert_eq!(extra2, 0);
    assert_eq!(keys(&out2[..out.len()]), keys(&out));
}

#[test]
fn s1b_soft_trims_after_idle_gap_and_protects_last_three_assistants() {
    let mut h = H::new();
    h.user("look around");
    let mut results = Vec::new();
    for _ in 0..20 {
        results.push(h.tool("exec", 8_000));
    }
    // 160K chars in a 100K window (400K chars): 40 % ≥ 30 %, < 50 % after soft trims.
    let mut s = Legacy::new(true);
    let mut ing = Vec::new();
    let t0 = 1_000_000.0;
    let (first, _) = run(&mut s, &mut h, 100_000, t0, &mut ing);
    assert_eq!(
        keys(&first),
        keys(&h.msgs),
        "no previous request: no pruning round"
    );
    let (out, _) = run(&mut s, &mut h, 100_000, t0 + 2.0 * 60_000.0, &mut ing);
    assert_eq!(
        keys(&out),
        keys(&h.msgs),
        "within the 5-minute TTL nothing is pruned"
    );
    let (out, _) = run(&mut s, &mut h, 100_000, t0 + 8.0 * 60_000.0, &mut ing);
    let trimmed: Vec<&M> = out
        .iter()
        .filter(|m| {
            m.msg().text().contains(
                "[Tool result trimmed: kept first 1500 chars and last 1500 chars of 8000 chars.]",
            )
        })
        .collect();
    assert_eq!(trimmed.len(), 17, "results before the 3rd-last assistant");
    for r in &results[17..] {
        assert_eq!(
            out[*r].key, h.msgs[*r].key,
            "last three assistant turns untouched"
        );
    }
    assert!(
        !out.iter()
            .any(|m| m.msg().text() == "[Old tool result content cleared]"),
        "under 50 %: no hard clear"
    );
    // Projections persist on the next request (same bytes, cache-stable).
    h.say("done");
    let (again, _) = run(&mut s, &mut h, 100_000, t0 + 8.5 * 60_000.0, &mut ing);
    assert_eq!(keys(&again[..out.len()]), keys(&out));
    // The DeepSeek default (S1a) never prunes.
    let mut a = Legacy::new(false);
    let mut ing_a = Vec::new();
    run(&mut a, &mut h, 100_000, t0, &mut ing_a);
    let (plain, _) = run(&mut a, &mut h, 100_000, t0 + 60.0 * 60_000.0, &mut ing_a);
    assert_eq!(keys(&plain), keys(&h.msgs));
}

#[test]
fn s1b_hard_clears_above_half_the_window() {
    let mut h = H::new();
    h.user("scan");
    for _ in 0..60 {
        h.tool("exec", 3_900); // not soft-trimmable (≤ 4,000 chars)
    }
    let mut s = Legacy::new(true);
    let mut ing = Vec::new();
    run(&mut s, &mut h, 100_000, 0.0, &mut ing);
    let (out, _) = run(&mut s, &mut h, 100_000, 10.0 * 60_000.0, &mut ing);
    let cleared = out
        .iter()
        .filter(|m| m.msg().text() == "[Old tool result content cleared]")
        .count();
    assert!(cleared > 0 && cleared < 57, "{cleared}");
    let total: u64 = out.iter().map(|m| m.chars).sum();
    assert!(
        (total as f64) < 0.5 * 400_000.0,
        "cleared until under 50 %: {total}"
    );
    assert_eq!(violations(&out), 0);
}

#[test]
fn s2_trims_in_place_and_keeps_prefix() {
    let mut h = H::new();
    h.user("task");
    h.say("ok, starting");
    for _ in 0..30 {
        h.tool("read", 8_000);
    }
    let mut s = ReasoniXlaw::new();
    let mut ing = Vec::new();
    // Threshold 0.8·100K − 32,768 = 47,232 < ≈ 61K estimated.
    let (out, extra) = run(&mut s, &mut h, 100_000, 0.0, &mut ing);
    assert_eq!(extra, 0, "trimming was enough, no compaction");
    assert_eq!(keys(&out[..2]), keys(&h.msgs[..2]), "locked prefix");
    let n = out.len();
    let trimmed = out
        .iter()
        .filter(|m| {
            m.msg()
                .text()
                .contains("[reasonixlaw: trimmed tool result, original 8000 chars, kept 2000]")
        })
        .count();
    assert_eq!(
        trimmed,
        (n - 8 - 2) / 2,
        "every result outside the last 8 messages"
    );
    assert_eq!(
        keys(&out[n - 8..]),
        keys(&h.msgs[n - 8..]),
        "last 8 untouched"
    );
    // In place: the next call re-sends the trimmed bytes (under the threshold: no new trims)…
    h.tool("read", 8_000);
    let (out2, _) = run(&mut s, &mut h, 100_000, 1.0, &mut ing);
    assert_eq!(keys(&out2[..n]), keys(&out));
    // …and once over it again, results that left the protected 8 are rewritten mid-history.
    for _ in 0..14 {
        h.tool("read", 8_000);
    }
    let (out3, _) = run(&mut s, &mut h, 100_000, 2.0, &mut ing);
    assert_eq!(out[n - 7].role(), Role::ToolResult);
    assert_ne!(
        out3[n - 7].key,
        out[n - 7].key,
        "a mid-history rewrite: the cache breaks there"
    );
    assert_eq!(keys(&out3[..n - 8]), keys(&out[..n - 8]));
}

#[test]
fn s2_seam_bug_orphans_a_locked_tool_call() {
    let mut h = H::new();
    h.user("task");
    for _ in 0..40 {
        h.tool("read", 1_900); // nothing to trim (≤ 2,000 chars)
    }
    let mut s = ReasoniXlaw::new();
    let mut ing = Vec::new();
    // Tiny window: threshold 0.8·50K − 32,768 = 7,232 → compaction; the prefix ends on the first
    // tool call and its result is summarised away.
    let (out, extra) = run(&mut s, &mut h, 50_000, 0.0, &mut ing);
    assert!(extra >= 1);
    assert!(out[2].msg().text().starts_with("<compaction-summary>"));
    assert!(
        violations(&out) > 0,
        "ReasoniXlaw's documented pair split at the prefix/tail seam"
    );
}

#[test]
fn s2c_externalises_at_ingest_and_puts_an_index_first() {
    let mut h = H::new();
    h.user("investigate the build");
    let big = h.tool("read", 13_000);
    let small = h.tool("read", 2_000);
    let mut s = ContextSafe::new();
    let mut ing = Vec::new();
    let (out, _) = run(&mut s, &mut h, 1_000_000, 1_000.0, &mut ing);
    assert_eq!(out[0].role(), Role::Assistant);
    assert!(out[0]
        .msg()
        .text()
        .starts_with("[context-safe session index]"));
    assert!(out[0].msg().text().chars().count() <= 900);
    let ext = &ing[big];
    assert!(ext
        .msg()
        .text()
        .starts_with("[context-safe] read output excluded from context; saved to ~/.openclaw/artifacts/context-safe/read/"));
    assert!(ext.msg().text().chars().count() < 4_400);
    assert_eq!(
        ext.credit.indices().collect::<Vec<_>>(),
        [big],
        "recoverable from the artifact file"
    );
    assert_eq!(ing[small].key, h.msgs[small].key);
    h.say("The build fails in src/f2.rs");
    h.user("fix it");
    let (out2, _) = run(&mut s, &mut h, 1_000_000, 2_000.0, &mut ing);
    assert_ne!(
        out2[0].key, out[0].key,
        "the index changes, so nothing after the system prompt stays cached"
    );
    assert_eq!(keys(&out2[1..out.len()]), keys(&out[1..]));
}

#[test]
fn s2c_prunes_durably_once_the_gain_reaches_100k() {
    let mut h = H::new();
    h.user("go");
    for _ in 0..20 {
        h.tool("grep", 3_900); // under the 8,000 externalisation limit
    }
    let mut s = ContextSafe::new();
    let mut ing = Vec::new();
    let (out, _) = run(&mut s, &mut h, 1_000_000, 0.0, &mut ing);
    let pruned = out.iter().filter(|m| m.msg().text() == "[pruned]").count();
    assert!(pruned >= 10, "{pruned}");
    // Durable: still pruned on the next call, and the semantic tail is intact.
    h.tool("grep", 100);
    let (out2, _) = run(&mut s, &mut h, 1_000_000, 1.0, &mut ing);
    assert!(out2.iter().filter(|m| m.msg().text() == "[pruned]").count() >= pruned);
    assert_eq!(out2.last().unwrap().key, h.msgs.last().unwrap().key);
    assert_eq!(violations(&out2[1..]), 0);
}

#[test]
fn s2f_rerenders_its_summary_block_and_keeps_five_turns() {
    let mut h = H::new();
    for t in 0..7 {
        h.user(&format!("turn {t}: do thing {t}"));
        h.tool("read", 3_000);
        h.say(&format!("did thing {t}"));
    }
    let mut s = ContextFold::new();
    let mut ing = Vec::new();
    let (out, extra) = run(&mut s, &mut h, 1_000_000, 0.0, &mut ing);
    assert_eq!(
        extra, 1,
        "one summariser call for the turns that left the window"
    );
    assert!(out[0].msg().text().starts_with("[Context Summary"));
    assert_eq!(out[1].role(), Role::Assistant);
    let users: Vec<String> = out
        .iter()
        .filter(|m| m.role() == Role::User)
        .skip(1)
        .map(|m| m.msg().text())
        .collect();
    assert_eq!(users.len(), 5);
    assert!(users[0].starts_with("turn 2"));
    // Recent results over 500 tokens are trimmed 60/30.
    assert!(out
        .iter()
        .any(|m| m.msg().text().contains("... [trimmed] ...")));
    h.user("turn 7: another");
    h.tool("read", 100);
    let (out2, extra2) = run(&mut s, &mut h, 1_000_000, 1.0, &mut ing);
    assert_eq!(extra2, 1);
    assert_ne!(
        out2[0].key, out[0].key,
        "block re-rendered: the whole history after the system prompt misses"
    );
}

fn shrunk_messages(
    t: &cachefold_bench::replay::transcript::Transcript,
    cfg: &Config,
) -> Vec<Message> {
    t.messages
        .iter()
        .map(|m| {
            if m.role() == Role::ToolResult {
                if let Ok(Some(o)) = cachefold::tools::shrink::shrink_tool_result(
                    cfg,
                    m.tool_name().unwrap_or(""),
                    m.raw(),
                ) {
                    return Message::from_value(o.message).unwrap();
                }
            }
            m.clone()
        })
        .collect()
}

#[test]
fn s3_pairs_valid_and_equal_to_crate_replay() {
    let t = cachefold_bench::bench::demo::session();
    let mut cfg = Config::default();
    cfg.summary.use_llm = false; // crate::replay's SummaryMode::Off
    let window = 120_000u64;
    let mut s3 = Cachefold::new(cfg.clone());
    let mut store = Store::default();
    let mut ing: Vec<M> = Vec::new();
    let mut outs: Vec<Vec<String>> = Vec::new();
    let mut shrunk = 0;
    for c in &t.calls {
        let mut cx = ctx(&mut store, window, c.timestamp_ms);
        while ing.len() < c.assistant_index {
            let i = ing.len();
            let orig = cx.store.make(t.messages[i].clone(), Some(i), Vec::new());
            let m = s3.ingest(&mut cx, orig.clone(), i);
            if m.key != orig.key {
                shrunk += 1;
                assert_eq!(
                    m.credit.indices().collect::<Vec<_>>(),
                    [i],
                    "a shrunk result credits its original"
                );
            }
            ing.push(m);
        }
        let out = s3.assemble(&mut cx, &ing);
        assert_eq!(
            violations(&out),
            0,
            "S3 request for assistant {} breaks the DeepSeek pairing rule",
            c.assistant_index
        );
        outs.push(out.iter().map(|m| m.msg().to_json()).collect());
    }
    assert!(shrunk > 0, "the demo has oversized tool outputs");
    let counters = s3.counters();
    assert!(
        counters["foldsStored"] > 0,
        "a 120K window forces folds on the demo: {counters:?}"
    );
    assert_eq!(counters["engineErrors"], 0);

    // Same plans as the engine's own replay driver over the same (shrunk) messages.
    let msgs = shrunk_messages(&t, &cfg);
    let opts = ReplayOptions {
        model: Some("deepseek/deepseek-flash".into()),
        token_budget: Some(window),
        reassemble_each_call: cfg.owns_compaction,
        summaries: SummaryMode::Off,
        // This test never feeds simulated usage to S3 (no `observe`), so both drivers commit the
        // usage recorded in the transcript; with different usage their calibrations, and so
        // their fold timing, would differ.
        usage: UsageMode::Recorded,
        check: false,
        check_journal: false,
        ..ReplayOptions::default()
    };
    let r = replay::replay(&msgs, &t.calls, &cfg, &opts);
    assert!(r.errors.is_empty(), "{:?}", r.errors);
    for (k, c) in r.calls.iter().enumerate() {
        let hist_len = c.history.unwrap_or(c.turn_start);
        let mut want = replay::resolve(&msgs, &c.order, &c.synthetic);
        want.extend(
            msgs[hist_len.max(c.turn_start)..c.assistant_index]
                .iter()
                .map(Message::to_json),
        );
        assert_eq!(outs[k], want, "call {k} differs from crate::replay");
    }
}

/// A prompt typed during a parallel tool batch lands before the batch's last result in a
/// recorded transcript (Claude Code stores it with the third result). The host delivers it
/// inside its tool loop, so with `ownsCompaction` the call after it is re-assembled and the
/// request pairs; without, the pre-prompt assemble plus the raw tail breaks the group.
#[test]
fn s3_prompt_typed_during_a_tool_batch_is_repaired_in_the_tool_loop() {
    let build = || {
        let mut h = H::new();
        h.user("edit both files");
        h.push(json!({"role": "assistant", "content": [
            {"type": "toolCall", "id": "a", "name": "edit", "arguments": {"path": "src/a.rs"}},
            {"type": "toolCall", "id": "b", "name": "edit", "arguments": {"path": "src/b.rs"}}],
            "stopReason": "toolUse", "timestamp": 1}));
        h.push(json!({"role": "toolResult", "toolCallId": "a", "toolName": "edit", "content": [{"type": "text", "text": "ok a"}], "isError": false, "timestamp": 1}));
        h.user("and make sure this is tested");
        h.push(json!({"role": "toolResult", "toolCallId": "b", "toolName": "edit", "content": [{"type": "text", "text": "ok b"}], "isError": false, "timestamp": 1}));
        h
    };
    // The rule itself: the first call of a turn with tool traffic after its prompt re-assembles.
    assert_eq!(replay::history_for_call(true, true, true, 3, 5), Some(5));
    assert_eq!(replay::history_for_call(true, false, true, 3, 4), Some(3));
    assert_eq!(replay::history_for_call(true, true, false, 3, 5), Some(3));
    assert_eq!(replay::history_for_call(false, false, false, 3, 5), None);
    for owns in [true, false] {
        let mut h = build();
        let cfg = Config {
            owns_compaction: owns,
            ..Config::default()
        };
        let mut s3 = Cachefold::new(cfg);
        let mut ing = Vec::new();
        let (out, _) = run(&mut s3, &mut h, 1_000_000, 1.0, &mut ing);
        let v = violations(&out);
        if owns {
            assert_eq!(v, 0, "tool loop modelled: the request pairs");
            assert_eq!(out.len(), 5, "every message sent once");
        } else {
            assert!(
                v > 0,
                "one assemble per turn: the raw tail breaks the group"
            );
        }
    }
}
