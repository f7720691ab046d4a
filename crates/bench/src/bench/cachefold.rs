//! S3: cachefold itself, driven exactly as the JS shim drives it (see `crate::replay`, whose
//! turn structure and `need → assemble → needFull` protocol this mirrors call by call), plus
//! the tool-result middleware (`::cachefold::tools::shrink::shrink_tool_result` at ingest).
//!
//! Why not call `crate::replay::replay` directly: that function answers `maintain`'s LLM
//! summary requests with a stand-in and does not expose them, while the bench must bill every
//! summary request as its own model call (docs/cache-model.md) and answer it with the
//! bench's shared summariser. Everything else is the same: per call, the first call of a turn
//! assembles `[0, u)` and the host appends the turn's messages `[u, a)`; with `ownsCompaction`
//! (the default) every later call of the turn re-assembles `[0, a)`, and so does a first call
//! that has tool traffic after its prompt ([`crate::replay::history_for_call`]). After a turn:
//! `commit_turn([u, next u))`, then one `summary_request` (billed, answered, accepted).
//! `tests/bench_strategies.rs` checks that the plans equal `crate::replay::replay`'s with
//! summaries off.
//!
//! Host details the bench models:
//! - the recorded transcripts come from other providers, so every assemble names the model
//!   `deepseek/deepseek-flash` (otherwise `mode: auto` would pass them through);
//! - the usage on each assistant message the engine sees is the *simulated* DeepSeek usage of
//!   that call (input = miss, cacheRead = hit, output = |Y|), as a DeepSeek host would record it,
//!   so the engine's calibration learns from the bench's own token counts;
//! - shrunk tool results carry recovery credit for their original (one `cachefold_recover`
//!   returns it); fold records carry credit for the host range their fold stored.

use super::store::{Credit, Store, M};
use super::strategies::{Ctx, ExtraCall, Strategy};
use super::tokenizer::hash128;
use ::cachefold::config::Config;
use ::cachefold::engine::{AssembleInput, AssemblePlan, CommitInput, Drive, Session};
use ::cachefold::message::{Message, Role};
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};

/// The cachefold engine under test.
pub struct Cachefold {
    cfg: Config,
    session: Session,
    model: String,
    /// Simulated usage per assistant index (hit, miss, output).
    usage: BTreeMap<usize, (u64, u64, u64)>,
    /// Current turn start (user index) and whether it was committed.
    turn: Option<usize>,
    /// Last plan of the current turn and the history length it covered.
    plan: Option<(AssemblePlan, usize)>,
    /// fold id → host range stored for recovery.
    folds: BTreeMap<String, (u32, u32)>,
    /// Synthetic message text (hash) → the bench message made for it.
    synthetic: HashMap<u128, M>,
    shrunk: u64,
    summary_calls: u64,
    errors: u64,
    need_full: u64,
    passthrough_calls: u64,
    last_now: f64,
}

impl Cachefold {
    /// Engine with `cfg` (use `Config::default()` for the product defaults).
    pub fn new(cfg: Config) -> Cachefold {
        Cachefold {
            session: Session::new(cfg.clone(), "bench"),
            cfg,
            model: "deepseek/deepseek-flash".to_string(),
            usage: BTreeMap::new(),
            turn: None,
            plan: None,
            folds: BTreeMap::new(),
            synthetic: HashMap::new(),
            shrunk: 0,
            summary_calls: 0,
            errors: 0,
            need_full: 0,
            passthrough_calls: 0,
            last_now: 0.0,
        }
    }

    /// Everything of an assemble but the messages (the driver pulls those).
    fn head(&self, count: usize, ctx: &Ctx) -> AssembleInput {
        AssembleInput {
            count: count as u32,
            messages: Vec::new(),
            model: Some(self.model.clone()),
            token_budget: Some(ctx.window),
            now_ms: ctx.now_ms,
            system_prompt_addition: None,
            context_window: Some(ctx.window),
            last_request_ms: None,
            known: Vec::new(),
            prompt_pending: false,
        }
    }

    fn assemble_host(&mut self, ctx: &mut Ctx, hist: &[M], count: usize) -> Option<AssemblePlan> {
        // The engine's own driver (need → plan → needFull → plan with everything), as the shim.
        let head = self.head(count, ctx);
        let driven = self.session.drive(head, Drive::Assemble, |i| {
            hist.get(i as usize)
                .map_or_else(|| "null".into(), |m| m.json())
        });
        let plan = match driven {
            Ok(d) => {
                self.need_full += u64::from(d.full);
                d.plan
            }
            Err(_) => {
                self.errors += 1;
                return None;
            }
        };
        let _ = self.session.take_journal();
        for w in &plan.fold_writes {
            self.folds.insert(w.fold_id.clone(), (w.from, w.to));
        }
        ctx.folds += plan.report.folds.len() as u64;
        if plan.passthrough {
            self.passthrough_calls += 1;
        }
        Some(plan)
    }

    fn commit_and_maintain(&mut self, ctx: &mut Ctx, hist: &[M], u: usize, end: usize) {
        let messages: Vec<String> = hist
            .get(u..end)
            .unwrap_or(&[])
            .iter()
            .map(|m| m.json())
            .collect();
        let commit = CommitInput {
            advancement_key: format!("turn-{u}"),
            messages,
            now_ms: self.last_now,
            context_window: None,
        };
        if self.session.commit_turn(&commit).is_err() {
            self.errors += 1;
        }
        let _ = self.session.take_journal();
        if let Some(req) = self.session.summary_request(self.last_now) {
            let from = req.from as usize;
            let to = (req.to as usize).min(hist.len());
            let region = hist.get(from.min(to)..to).unwrap_or(&[]);
            let cap = (req.max_tokens as usize).saturating_mul(4).max(1_000);
            let text = super::summarize::extractive(region, None, cap);
            // Billed once and not kept (see `Ctx::record_summary_call`).
            ctx.extra.push(ExtraCall {
                system: Some(req.system.clone()),
                prompt: vec![Store::detached_user_text(&req.prompt, self.last_now)],
                output: Store::detached_assistant_text(&text, self.last_now),
            });
            self.summary_calls += 1;
            self.session
                .accept_summary(&req.id, &text, true, self.last_now);
            let _ = self.session.take_journal();
        }
    }

    /// Recovery credit of a synthetic message: the host ranges of the folds it names.
    fn credit_of(&self, json: &str) -> Credit {
        if !json.starts_with("{\"role\":\"user\"") {
            return Credit::default();
        }
        // Every record starts with `[cachefold fold <id>]` (fold::record::fold_header).
        Credit::from_ranges(
            self.folds
                .iter()
                .filter(|(id, _)| json.contains(&format!("[cachefold fold {id}]")))
                .map(|(_, &range)| range)
                .collect(),
        )
    }
}

impl Strategy for Cachefold {
    fn id(&self) -> &'static str {
        if self.cfg.topics.enabled {
            "S3"
        } else {
            "S3o"
        }
    }
    fn label(&self) -> &'static str {
        if self.cfg.topics.enabled {
            "cachefold (engine + ingest shrink)"
        } else {
            "cachefold, topics off"
        }
    }

    fn ingest(&mut self, ctx: &mut Ctx, m: M, index: usize) -> M {
        match m.role() {
            Role::ToolResult => {
                let msg = m.msg();
                let tool = msg.tool_name().unwrap_or("");
                match ::cachefold::tools::shrink::shrink_tool_result(&self.cfg, tool, msg.raw()) {
                    Ok(Some(out)) => {
                        self.shrunk += 1;
                        let _ = self.session.note_artifact(
                            &out.artifact_id,
                            &out.tool_name,
                            out.original_chars,
                            ctx.now_ms,
                        );
                        ctx.store
                            .make_value(out.message, Some(index), vec![index])
                            .unwrap_or(m)
                    }
                    _ => m,
                }
            }
            Role::Assistant => {
                // The host records the provider's usage on the assistant message (each message
                // is ingested once: its usage is not needed after).
                let Some((hit, miss, out)) = self.usage.remove(&index) else {
                    return m;
                };
                let mut v = m.msg().raw().clone();
                if let Some(o) = v.as_object_mut() {
                    o.insert(
                        "usage".into(),
                        serde_json::json!({"input": miss, "output": out, "cacheRead": hit, "cacheWrite": 0}),
                    );
                }
                match Message::from_value(v) {
                    Ok(nm) => ctx.store.make(nm, m.origin, m.credit.clone()),
                    Err(_) => m,
                }
            }
            _ => m,
        }
    }

    fn observe(&mut self, assistant_index: usize, hit: u64, miss: u64, output: u64) {
        self.usage.insert(assistant_index, (hit, miss, output));
    }

    fn assemble(&mut self, ctx: &mut Ctx, hist: &[M]) -> Vec<M> {
        let a = hist.len();
        let u = hist
            .iter()
            .rposition(|m| m.role() == Role::User)
            .unwrap_or(0);
        let new_turn = self.turn != Some(u);
        if new_turn {
            if let Some(prev) = self.turn {
                if prev < u {
                    self.commit_and_maintain(ctx, hist, prev, u);
                }
            }
            self.turn = Some(u);
            self.plan = None;
        }
        self.last_now = ctx.now_ms;
        // The host's tool loop (docs/host-integration.md): the turn's first call is the
        // pre-prompt assemble of `[0, u)`, the prompt appended; with `ownsCompaction` every
        // later call re-assembles. A prompt typed during a parallel tool batch stands before
        // the batch's last results in a recorded transcript, so its first call already has
        // tool traffic after the prompt: the host delivered that prompt inside its tool loop,
        // and that call re-assembles too (the engine moves the results back into their group,
        // which is what DeepSeek receives) instead of sending a raw host-appended tail.
        let in_loop = hist
            .get(u..a)
            .unwrap_or(&[])
            .iter()
            .any(|m| m.role() != Role::User);
        let count =
            crate::replay::history_for_call(new_turn, in_loop, self.cfg.owns_compaction, u, a);
        if let Some(count) = count {
            if let Some(plan) = self.assemble_host(ctx, hist, count) {
                self.plan = Some((plan, count));
            }
        }
        let (order, synthetic, hist_len) = match &self.plan {
            Some((p, h)) => (p.order.clone(), p.synthetic.clone(), *h),
            None => ((0..u as i64).collect(), Vec::new(), u),
        };
        let mut out: Vec<M> = Vec::with_capacity(order.len() + 4);
        for i in order {
            if i >= 0 {
                if let Some(m) = hist.get(i as usize) {
                    out.push(m.clone());
                }
            } else if let Some(j) = synthetic.get((-i - 1) as usize) {
                // The store keeps the first message made for a content (and its credit), so a
                // synthetic message seen before is that same message: no parse, no search.
                let text_key = hash128(j.as_bytes());
                if let Some(m) = self.synthetic.get(&text_key) {
                    out.push(m.clone());
                    continue;
                }
                let credit = self.credit_of(j);
                if let Ok(v) = serde_json::from_str::<Value>(j) {
                    if let Some(m) = ctx.store.make_value(v, None, credit) {
                        self.synthetic.insert(text_key, m.clone());
                        out.push(m);
                    }
                }
            }
        }
        out.extend(hist.get(hist_len.max(u)..a).unwrap_or(&[]).iter().cloned());
        out
    }

    fn counters(&self) -> BTreeMap<String, u64> {
        let mut c = BTreeMap::new();
        c.insert("shrunkAtIngest".into(), self.shrunk);
        c.insert("summaryCalls".into(), self.summary_calls);
        c.insert("engineErrors".into(), self.errors);
        c.insert("needFull".into(), self.need_full);
        c.insert("passthroughCalls".into(), self.passthrough_calls);
        c.insert("foldsStored".into(), self.folds.len() as u64);
        // The engine's token estimate, calibrated from the usage the simulator reports (exact
        // DeepSeek-V4 counts): mean absolute error over its recent calls, in basis points.
        let stats = self.session.view().stats();
        let cal = &stats["calibration"];
        if let Some(e) = cal["meanAbsErrorPct"].as_f64() {
            c.insert("calibErrBp".into(), (e * 100.0).round() as u64);
        }
        if let Some(n) = cal["samples"].as_u64() {
            c.insert("calibSamples".into(), n);
        }
        c
    }
}
