//! S2c: context-safe-like engine.

use super::legacy::Legacy;
use super::{clip_chars, last_chars, retext, Ctx, Strategy};
use crate::bench::store::{self, M};
use ::cachefold::message::{Part, Role};
use std::collections::{BTreeMap, HashMap};

/// Bootstrap files whose reads context-safe never prunes.
const CS_PROTECTED: &[&str] = &[
    "agents.md",
    "soul.md",
    "memory.md",
    "tools.md",
    "user.md",
    "identity.md",
    "heartbeat.md",
    "bootstrap.md",
    "boot.md",
    "dreams.md",
    "claude.md",
];

/// context-safe-like engine (persist externalisation, durable prune, session index first).
pub struct ContextSafe {
    host: Legacy,
    /// hist index → canonical replacement (pruned).
    pruned: BTreeMap<usize, M>,
    artifacts: Vec<String>,
    /// call id → (tool name, protected read)
    calls: BTreeMap<String, bool>,
    externalised: u64,
    prunes: u64,
    /// Tool result key → what the assemble-time policy reads of it (a message is parsed
    /// from its JSON when read: once per result, not once per call).
    results: HashMap<u128, ResultInfo>,
}

/// What the assemble-time policy reads of a tool result.
#[derive(Clone, Copy)]
struct ResultInfo {
    /// Per-tool cap scale, by tool name.
    scale: f64,
    /// Eviction priority by tool name (context-safe's own notices aside).
    prio: u8,
    /// Text starts with `[context-safe]` (one of ours).
    ours: bool,
    /// Characters of its text.
    chars: usize,
}

impl ResultInfo {
    fn of(m: &M) -> ResultInfo {
        let msg = m.msg();
        let text = msg.text();
        let tool = msg.tool_name().unwrap_or("");
        let scale = match tool {
            "read" | "Read" => 1.2,
            "web_fetch" | "WebFetch" => 0.8,
            "exec" | "bash" | "Bash" | "process" => 0.65,
            _ => 1.0,
        };
        let prio = if matches!(tool, "exec" | "bash" | "Bash" | "process") {
            1
        } else if matches!(tool, "web_fetch" | "WebFetch") {
            2
        } else if matches!(tool, "read" | "Read") {
            4
        } else {
            3
        };
        ResultInfo {
            scale,
            prio,
            ours: text.starts_with("[context-safe]"),
            chars: text.chars().count(),
        }
    }

    fn memo(memo: &mut HashMap<u128, ResultInfo>, m: &M) -> ResultInfo {
        *memo.entry(m.key).or_insert_with(|| ResultInfo::of(m))
    }
}

impl Default for ContextSafe {
    fn default() -> Self {
        Self::new()
    }
}

impl ContextSafe {
    /// Defaults of context-safe 0.4.6.
    pub fn new() -> ContextSafe {
        ContextSafe {
            host: Legacy::new(false),
            pruned: BTreeMap::new(),
            artifacts: Vec::new(),
            calls: BTreeMap::new(),
            externalised: 0,
            prunes: 0,
            results: HashMap::new(),
        }
    }

    fn limit(tool: &str) -> usize {
        match tool {
            "read" | "Read" => 12_000,
            "exec" | "bash" | "Bash" | "web_fetch" | "WebFetch" => 4_000,
            _ => 8_000,
        }
    }

    /// 70 % head / 30 % tail of `budget` chars, each snapped to a line boundary.
    fn preview(text: &str, budget: usize) -> String {
        let head = clip_chars(text, budget * 7 / 10);
        let head = match head.rfind('\n') {
            Some(i) if i > head.len() / 2 => head.get(..i).unwrap_or(head),
            _ => head,
        };
        let tail = last_chars(text, budget * 3 / 10);
        let tail = match tail.find('\n') {
            Some(i) if i < tail.len() / 2 => tail.get(i + 1..).unwrap_or(tail),
            _ => tail,
        };
        format!("{head}\n...\n{tail}")
    }

    fn semantic_tail_start(canon: &[M]) -> usize {
        let n = canon.len();
        let mut start = n.saturating_sub(5);
        let text_msgs = |s: usize| {
            canon
                .get(s..)
                .unwrap_or(&[])
                .iter()
                .filter(|m| {
                    matches!(m.role(), Role::User | Role::Assistant)
                        && !m.msg().text().trim().is_empty()
                })
                .count()
        };
        let chars = |s: usize| {
            canon
                .get(s..)
                .unwrap_or(&[])
                .iter()
                .map(|m| m.chars)
                .sum::<u64>()
        };
        while start > 0
            && (chars(start) < 6_000 || text_msgs(start) < 2)
            && chars(start - 1) <= 24_000
        {
            start -= 1;
        }
        start
    }

    fn index_message(&self, ctx: &mut Ctx, view: &[M]) -> Option<M> {
        let budget = 900usize.min(180usize.max((ctx.window as f64 * 0.72) as usize));
        let users: Vec<String> = view
            .iter()
            .filter(|m| m.role() == Role::User)
            .rev()
            .take(3)
            .map(|m| {
                clip_chars(m.msg().text().lines().next().unwrap_or("").trim(), 120).to_string()
            })
            .collect();
        // Conclusions: the final replies of turns (assistant messages without tool calls), so the
        // index changes about once per turn, as the peer survey observed ("nearly every turn").
        let concl: Vec<String> = view
            .iter()
            .filter(|m| m.role() == Role::Assistant && m.msg().tool_calls().is_empty())
            .filter_map(|m| {
                let t = m
                    .msg()
                    .parts()
                    .into_iter()
                    .filter_map(|p| {
                        if let Part::Text(t) = p {
                            Some(t.to_string())
                        } else {
                            None
                        }
                    })
                    .collect::<Vec<_>>()
                    .join(" ");
                let t = t.trim().to_string();
                (!t.is_empty()).then(|| clip_chars(&t, 150).to_string())
            })
            .rev()
            .take(2)
            .collect();
        let mut s = String::from("[context-safe session index]\n");
        s.push_str(&format!("Goals: {}\n", users.join(" | ")));
        s.push_str(&format!("Conclusions: {}\n", concl.join(" | ")));
        let arts: Vec<&String> = self.artifacts.iter().rev().take(3).collect();
        if !arts.is_empty() {
            s.push_str(&format!(
                "Artifacts: {}\n",
                arts.iter()
                    .map(|a| a.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        s.push_str(&format!("Boundary: {} results pruned\n", self.pruned.len()));
        let s = clip_chars(&s, budget).to_string();
        ctx.store.assistant_text(&s, ctx.now_ms)
    }
}

impl Strategy for ContextSafe {
    fn id(&self) -> &'static str {
        "S2c"
    }
    fn label(&self) -> &'static str {
        "context-safe-like (index first, [pruned] rewrites)"
    }
    fn ingest(&mut self, ctx: &mut Ctx, m: M, index: usize) -> M {
        if m.role() == Role::Assistant {
            for c in m.msg().tool_calls() {
                let path = c
                    .arguments
                    .get("path")
                    .or_else(|| c.arguments.get("file_path"))
                    .and_then(|v| v.as_str())
                    .unwrap_or("");
                let base = path
                    .rsplit(['/', '\\'])
                    .next()
                    .unwrap_or("")
                    .to_ascii_lowercase();
                let protected =
                    c.name.eq_ignore_ascii_case("read") && CS_PROTECTED.contains(&base.as_str());
                self.calls.insert(c.id.to_string(), protected);
            }
            return m;
        }
        if m.role() != Role::ToolResult {
            return m;
        }
        let msg = m.msg();
        let tool = msg.tool_name().unwrap_or("").to_string();
        let text = msg.text();
        if text.chars().count() <= Self::limit(&tool) {
            return m;
        }
        let id = msg.tool_call_id().unwrap_or("");
        let h = crate::bench::tokenizer::hash128(id.as_bytes());
        let path = format!(
            "~/.openclaw/artifacts/context-safe/{tool}/{}-{tool}-{:012x}.json",
            ctx.now_ms as u64,
            (h >> 80) as u64
        );
        let body = format!(
            "[context-safe] {tool} output excluded from context; saved to {path}. Read the saved file with offset/limit, or rerun the tool with narrower arguments.\n\n{}",
            Self::preview(&text, 4_000)
        );
        self.artifacts.push(path);
        self.externalised += 1;
        retext(ctx, &m, &body, vec![index])
    }
    fn assemble(&mut self, ctx: &mut Ctx, hist: &[M]) -> Vec<M> {
        // Host compaction (ownsCompaction: false) on the host transcript.
        let before = self.host.first_kept();
        if self.host.maybe_compact(ctx, hist) && self.host.first_kept() != before {
            self.pruned.clear();
        }
        let first = self.host.first_kept();
        let hist_kept = hist.get(first..).unwrap_or(&[]);
        // Canonical view with durable prunes.
        let canon: Vec<M> = hist_kept
            .iter()
            .enumerate()
            .map(|(i, m)| {
                self.pruned
                    .get(&(i + first))
                    .cloned()
                    .unwrap_or_else(|| m.clone())
            })
            .collect();
        let tail_start = Self::semantic_tail_start(&canon);
        let protected_result = |m: &M, calls: &BTreeMap<String, bool>| {
            m.msg()
                .tool_call_id()
                .is_some_and(|id| calls.get(id).copied().unwrap_or(false))
        };
        let mut gain = 0u64;
        for (i, m) in canon.iter().enumerate().take(tail_start) {
            if self.pruned.contains_key(&(i + first)) {
                continue;
            }
            match m.role() {
                Role::ToolResult if !protected_result(m, &self.calls) => gain += 2 * m.chars,
                Role::Assistant => {
                    gain += m
                        .msg()
                        .parts()
                        .iter()
                        .map(|p| {
                            if let Part::Thinking(t) = p {
                                t.chars().count() as u64
                            } else {
                                0
                            }
                        })
                        .sum::<u64>()
                }
                _ => {}
            }
        }
        if gain >= 100_000 {
            self.prunes += 1;
            for (i, m) in canon.iter().enumerate().take(tail_start) {
                let hi = i + first;
                if self.pruned.contains_key(&hi) {
                    continue;
                }
                match m.role() {
                    Role::ToolResult if !protected_result(m, &self.calls) => {
                        let p = retext(ctx, m, "[pruned]", Vec::new());
                        self.pruned.insert(hi, p);
                    }
                    Role::Assistant
                        if m.msg()
                            .parts()
                            .iter()
                            .any(|p| matches!(p, Part::Thinking(_))) =>
                    {
                        if let Some(p) = ctx.store.make_value(
                            store::without_thinking(&m.msg()),
                            m.origin,
                            m.credit.clone(),
                        ) {
                            self.pruned.insert(hi, p);
                        }
                    }
                    _ => {}
                }
            }
        }
        let mut view: Vec<M> = Vec::new();
        if let Some(s) = &self.host.summary {
            view.push(s.clone());
        }
        view.extend(hist_kept.iter().enumerate().map(|(i, m)| {
            self.pruned
                .get(&(i + first))
                .cloned()
                .unwrap_or_else(|| m.clone())
        }));
        // Assemble-time policy: per-result cap and total budget (chars).
        let budget = (ctx.window as f64 * 4.0 * 0.75) as u64;
        let base_cap = ctx.window as f64 * 2.0 * 0.5;
        for slot in view.iter_mut() {
            if slot.role() != Role::ToolResult {
                continue;
            }
            let info = ResultInfo::memo(&mut self.results, slot);
            let scale = if info.ours { 0.5 } else { info.scale };
            let cap = (base_cap * scale).max(160.0) as usize;
            if info.chars > cap {
                let t = format!(
                    "{}\n[context-safe: truncated to {cap} chars]",
                    clip_chars(&slot.msg().text(), cap)
                );
                *slot = retext(ctx, slot, &t, slot.credit.clone());
            }
        }
        let mut total: u64 = view.iter().map(|m| m.chars).sum();
        if total > budget {
            let results = &mut self.results;
            let mut prio = |m: &M| -> u8 {
                let info = ResultInfo::memo(results, m);
                if info.ours {
                    0
                } else {
                    info.prio
                }
            };
            let mut order: Vec<(u8, usize)> = (0..view.len())
                .filter_map(|i| {
                    view.get(i)
                        .filter(|m| m.role() == Role::ToolResult)
                        .map(|m| (prio(m), i))
                })
                .collect();
            order.sort_unstable();
            let order: Vec<usize> = order.into_iter().map(|(_, i)| i).collect();
            for i in order {
                if total <= budget {
                    break;
                }
                let Some(m) = view.get(i).cloned() else {
                    continue;
                };
                let r = retext(
                    ctx,
                    &m,
                    "[compacted: tool output removed to fit the context budget]",
                    Vec::new(),
                );
                total = (total + r.chars).saturating_sub(m.chars);
                if let Some(slot) = view.get_mut(i) {
                    *slot = r;
                }
            }
        }
        let mut out = Vec::with_capacity(view.len() + 1);
        if let Some(ix) = self.index_message(ctx, &view) {
            out.push(ix);
        }
        out.extend(view);
        out
    }
    fn counters(&self) -> BTreeMap<String, u64> {
        let mut c = BTreeMap::new();
        c.insert("externalised".into(), self.externalised);
        c.insert("prunes".into(), self.prunes);
        c.insert("prunedMessages".into(), self.pruned.len() as u64);
        c
    }
}
