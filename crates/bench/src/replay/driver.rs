//! The per-call driver of [`super::replay`]: assemble as the shim does, check every invariant of
//! the module doc on the resolved output, commit and answer summary requests.

use super::*;

/// One output entry, comparable across calls.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Ent {
    Host(i64),
    Syn(String),
}

pub(super) fn entries(plan_order: &[i64], synthetic: &[String]) -> Vec<Ent> {
    plan_order
        .iter()
        .map(|&i| {
            if i >= 0 {
                Ent::Host(i)
            } else {
                Ent::Syn(
                    synthetic
                        .get((-i - 1) as usize)
                        .cloned()
                        .unwrap_or_default(),
                )
            }
        })
        .collect()
}

pub(super) struct Driver<'a> {
    pub(super) messages: &'a [Message],
    pub(super) jsons: Vec<String>,
    pub(super) shapes: Vec<Shape>,
    pub(super) ws: Vec<u64>,
    pub(super) opts: &'a ReplayOptions,
    pub(super) s: Session,
    pub(super) out: ReplayOutcome,
    pub(super) prev: Option<(Vec<Ent>, bool)>,
    pub(super) folded: Vec<(u32, u32)>,
    pub(super) mid: Option<(usize, String)>,
    /// Previous call's prompt (entries with weighted chars), for simulated hits.
    pub(super) prev_prompt: Vec<(Ent, u64)>,
}

impl Driver<'_> {
    pub(super) fn violate(&mut self, call: usize, kind: &str, detail: String) {
        if self.out.violations.len() < self.opts.max_violations {
            self.out.violations.push(Violation {
                call,
                kind: kind.to_string(),
                detail,
            });
        }
    }

    pub(super) fn drain(&mut self) -> String {
        let j = self.s.take_journal();
        self.out.journal.push_str(&j);
        j
    }

    pub(super) fn input(
        &self,
        count: usize,
        indices: &[u32],
        model: Option<String>,
        now: f64,
    ) -> AssembleInput {
        AssembleInput {
            count: count as u32,
            messages: indices
                .iter()
                .map(|&i| IndexedJson {
                    index: i,
                    json: self.jsons[i as usize].clone(),
                })
                .collect(),
            model,
            token_budget: self.opts.token_budget,
            now_ms: now,
            system_prompt_addition: None,
            context_window: None,
            last_request_ms: None,
            known: Vec::new(),
            prompt_pending: false,
        }
    }

    pub(super) fn assemble(
        &mut self,
        call: usize,
        count: usize,
        model: Option<String>,
        now: f64,
    ) -> Option<(AssemblePlan, u32)> {
        let head = self.input(count, &[], model, now);
        let jsons = &self.jsons;
        let driven = self
            .s
            .drive(head, Drive::Assemble, |i| jsons[i as usize].clone());
        let (plan, retries, input) = match driven {
            Ok(d) => (d.plan, u32::from(d.full), d.input),
            Err(e) => {
                if e.to_string().contains("needFull with every index") {
                    self.violate(call, "need_full_loop", e.to_string());
                }
                self.out.errors.push(format!("call {call}: {e}"));
                return None;
            }
        };
        self.drain();
        if self.opts.check_idempotent {
            match self.s.assemble(&input) {
                Ok(again) => {
                    let j = self.s.take_journal();
                    if again.order != plan.order
                        || again.synthetic != plan.synthetic
                        || again.estimated_tokens != plan.estimated_tokens
                    {
                        self.violate(
                            call,
                            "idempotent_assemble",
                            "repeated assemble changed the plan".into(),
                        );
                    }
                    if !j.is_empty() {
                        self.violate(
                            call,
                            "idempotent_assemble",
                            format!("repeated assemble journaled {} bytes", j.len()),
                        );
                        self.out.journal.push_str(&j);
                    }
                }
                Err(e) => self.violate(call, "idempotent_assemble", e.to_string()),
            }
        }
        Some((plan, retries))
    }

    pub(super) fn check(&mut self, call: usize, count: usize, plan: &AssemblePlan) {
        let ents = entries(&plan.order, &plan.synthetic);
        for w in &plan.fold_writes {
            self.folded.push((w.from, w.to));
        }
        // pairing
        let mut shapes = Vec::with_capacity(ents.len());
        for e in &ents {
            shapes.push(match e {
                Ent::Host(i) => self.shapes.get(*i as usize).cloned().unwrap_or_default(),
                Ent::Syn(j) => Message::from_json(j)
                    .map(|m| Shape::of(&m))
                    .unwrap_or_default(),
            });
        }
        if !plan.passthrough {
            // Strict: the output is what the provider sees before the host appends the current
            // turn, so nothing may be left open or stand alone, not even at its end.
            let v = pairing::violations(&shapes);
            if let Some(first) = v.first() {
                self.violate(
                    call,
                    "pairing",
                    format!(
                        "{} violations, first {:?} {} at {}",
                        v.len(),
                        first.kind,
                        first.call_id,
                        first.position
                    ),
                );
            }
        }
        // completeness
        let mut seen = vec![false; count];
        for e in &ents {
            if let Ent::Host(i) = e {
                match seen.get_mut(*i as usize) {
                    Some(s) if !*s => *s = true,
                    Some(_) => self.violate(call, "completeness", format!("host index {i} twice")),
                    None => self.violate(
                        call,
                        "completeness",
                        format!("host index {i} out of range {count}"),
                    ),
                }
            }
        }
        for (i, s) in seen.iter().enumerate() {
            if !*s
                && !self
                    .folded
                    .iter()
                    .any(|(a, b)| (*a as usize) <= i && i < (*b as usize))
            {
                self.violate(
                    call,
                    "completeness",
                    format!("host index {i} neither in the output nor folded"),
                );
                break;
            }
        }
        // append-only
        let r = &plan.report;
        if let Some((prev, prev_pass)) = self.prev.take() {
            let declared = r.divergence.is_some()
                || !r.env_changes.is_empty()
                || prev_pass != plan.passthrough;
            if !declared {
                let (limit, what) = match r.stable_prefix {
                    Some(k) => (k as usize, "stable prefix"),
                    None => (prev.len(), "previous output"),
                };
                if let Some(k) = r.stable_prefix {
                    let head = prev
                        .iter()
                        .take_while(|e| matches!(e, Ent::Host(i) if (*i as u32) < r.head_len))
                        .count();
                    if (k as usize) < head {
                        self.violate(
                            call,
                            "append_only",
                            format!("stable prefix {k} shorter than the head ({head})"),
                        );
                    }
                }
                let limit = limit.min(prev.len());
                if ents.len() < limit {
                    self.violate(
                        call,
                        "append_only",
                        format!("output shorter ({}) than the {what} ({limit})", ents.len()),
                    );
                } else if let Some(p) = (0..limit).find(|&p| prev[p] != ents[p]) {
                    // A synthetic pairing repair (never a fold record, which is a user message).
                    let is_repair =
                        |e: &Ent| matches!(e, Ent::Syn(j) if !j.starts_with("{\"role\":\"user\""));
                    if is_repair(&prev[p]) || is_repair(&ents[p]) {
                        self.out.repair_shifts += 1;
                    } else {
                        self.violate(
                            call,
                            "append_only",
                            format!(
                                "{what} differs at {p}: {:?} vs {:?}",
                                short(&prev[p]),
                                short(&ents[p])
                            ),
                        );
                    }
                }
            }
        }
        // budget
        if r.emergency && r.tokens_after > r.threshold_tokens {
            let bounds = pairing::cut_points(&self.shapes[..count]);
            if bounds
                .iter()
                .any(|&c| c > r.live_from as usize && c < count)
            {
                self.violate(
                    call,
                    "budget",
                    format!(
                        "over threshold ({} > {}) with boundaries left after {}",
                        r.tokens_after, r.threshold_tokens, r.live_from
                    ),
                );
            }
        }
        self.prev = Some((ents, plan.passthrough));
    }
}

impl Driver<'_> {
    /// The tool-loop echo for call `k` (see [`ReplayOptions::echo_tool_loop`]).
    pub(super) fn echo(
        &mut self,
        k: usize,
        first: &AssemblePlan,
        hist: usize,
        a: usize,
        model: Option<String>,
        now: f64,
    ) {
        // The texts the session saw (simulated usage is written into assistant messages).
        let mut list: Vec<String> = entries(&first.order, &first.synthetic)
            .into_iter()
            .map(|e| match e {
                Ent::Host(i) => self.jsons.get(i as usize).cloned().unwrap_or_default(),
                Ent::Syn(j) => j,
            })
            .collect();
        list.extend(self.jsons.get(hist..a).unwrap_or(&[]).iter().cloned());
        let mk = |idx: &[u32]| AssembleInput {
            count: list.len() as u32,
            messages: idx
                .iter()
                .map(|&i| IndexedJson {
                    index: i,
                    json: list[i as usize].clone(),
                })
                .collect(),
            model: model.clone(),
            token_budget: self.opts.token_budget,
            now_ms: now,
            system_prompt_addition: None,
            context_window: None,
            last_request_ms: None,
            known: Vec::new(),
            prompt_pending: false,
        };
        // On a copy: the echo's indices are not host indices, and the rest of the replay (and
        // its completeness and journal checks) follows the host's history.
        let mut s = self.s.clone();
        let plan = s
            .drive(mk(&[]), Drive::Assemble, |i| list[i as usize].clone())
            .map(|d| d.plan);
        let plan = match plan {
            Ok(p) => p,
            Err(e) => {
                self.out.errors.push(format!("echo call {k}: {e}"));
                return;
            }
        };
        if plan.passthrough {
            return;
        }
        let shapes: Vec<Shape> = entries(&plan.order, &plan.synthetic)
            .iter()
            .map(|e| {
                let j = match e {
                    Ent::Host(i) => list.get(*i as usize).cloned().unwrap_or_default(),
                    Ent::Syn(j) => j.clone(),
                };
                ::cachefold::message::parse_host(&j)
                    .message()
                    .map_or_else(Shape::other, Shape::of)
            })
            .collect();
        let v = pairing::violations(&shapes);
        if let Some(first) = v.first() {
            self.violate(
                k,
                "pairing_echo",
                format!(
                    "{} violations, first {:?} {} at {} of {}",
                    v.len(),
                    first.kind,
                    first.call_id,
                    first.position,
                    shapes.len()
                ),
            );
        }
    }

    /// Write simulated usage into assistant message `a` (see [`UsageMode::Simulated`]).
    pub(super) fn simulate_usage(
        &mut self,
        order: &[i64],
        synthetic: &[String],
        turn_from: usize,
        a: usize,
        stat: u64,
        k: f64,
    ) {
        let mut prompt: Vec<(Ent, u64)> = entries(order, synthetic)
            .into_iter()
            .map(|e| {
                let w = match &e {
                    Ent::Host(i) => self.ws.get(*i as usize).copied().unwrap_or(0),
                    Ent::Syn(j) => tokens::weighted_chars(j),
                };
                (e, w)
            })
            .collect();
        prompt.extend(
            (turn_from..a).map(|i| (Ent::Host(i as i64), self.ws.get(i).copied().unwrap_or(0))),
        );
        let total: u64 = prompt.iter().map(|x| x.1).sum();
        let shared: u64 = prompt
            .iter()
            .zip(&self.prev_prompt)
            .take_while(|(x, y)| x.0 == y.0)
            .map(|(x, _)| x.1)
            .sum();
        let tok = |w: u64| (w as f64 * k).round().max(0.0) as u64;
        let prompt_tokens = stat + tok(total);
        let hit = if self.prev_prompt.is_empty() {
            0
        } else {
            ::cachefold::cost::floor_block(stat + tok(shared), ::cachefold::cost::DS_BLOCK)
                .min(prompt_tokens)
        };
        self.prev_prompt = prompt;
        let Some(json) = self.jsons.get(a) else {
            return;
        };
        let Ok(mut v) = serde_json::from_str::<serde_json::Value>(json) else {
            return;
        };
        let output = v
            .get("usage")
            .and_then(|u| u.get("output"))
            .cloned()
            .unwrap_or(Value::from(0));
        if let Some(obj) = v.as_object_mut() {
            obj.insert(
                "usage".into(),
                serde_json::json!({"input": prompt_tokens - hit, "output": output, "cacheRead": hit, "cacheWrite": 0}),
            );
        }
        let text = v.to_string();
        if let Some(w) = self.ws.get_mut(a) {
            *w = tokens::weighted_chars(&text);
        }
        self.jsons[a] = text;
    }
}

fn short(e: &Ent) -> String {
    match e {
        Ent::Host(i) => format!("host {i}"),
        Ent::Syn(j) => format!("synthetic {}", ::cachefold::fold::truncate_chars(j, 80)),
    }
}
