// The e2e matrix: cells (a scripted session plus what happens to the runtime during it), run
// on `legacy` and on cachefold variants with the same script, judged cell by cell.
//
//   const run = await runCell(CELLS["repro-48k"], VARIANTS[1], { turns: 18, log });
//   const verdict = judgeRun(run, legacyRun);   // {ok, failures: string[]}
//   console.log(matrixTable(rows));
//
// `estimate` is minutes per engine run at the default turns, measured on the shared 2-core machine
// (setup ~40 s: npm pack + plugins install + one config set + Gateway start; then 2-7 s per turn;
// a run whose turns fail at preflight takes ~1.1-1.5 min). Full matrix: ~12 cells x 3 runs, ~90 min.

import fs from "node:fs";
import path from "node:path";
import { Harness } from "./harness.mjs";
import { summarizeRun, requestKind } from "./analyze.mjs";
import { serializeRequest, contentText, BYTES_PER_TOKEN } from "./tokenize.mjs";
import { INTERNAL_CONTEXT_MARK } from "./script.mjs";
import { buildMatrixScenario } from "./matrix-scenarios.mjs";
import { dirContains } from "./session.mjs";
import { cacheBlocks } from "./anthropic.mjs";

// The issue's session shape: 18 turns, each reading markdown docs of 12-40 KB and running shell
// commands with a few KB of output (8 read+exec pairs per turn: an agent surveying a doc set),
// in a workspace with a 16 KB AGENTS.md; the provider counts 1.14 tokens per estimated token
// (DeepSeek's tokenizer vs bytes/4 on agent traffic, tests/e2e/README.md).
const DEFAULT_SCRIPT = { turns: 18, readKB: [12, 40], execKB: [2, 6], toolsPerTurn: 8, agentsMdKB: 16 };
const SCALE = 1.14;

/** OpenAI gpt-5 (src/providers.rs profile `openai-gpt-5`), USD per 1M tokens. */
export const OPENAI_GPT5 = { key: "openai-gpt-5", hit: 0.125, miss: 1.25, output: 10 };
/** Anthropic Sonnet 5 (src/providers.rs profile `anthropic-sonnet`), USD per 1M tokens; write = 5-minute write (1.25x). */
export const ANTHROPIC_SONNET = { key: "anthropic-sonnet", hit: 0.3, miss: 3, write: 3.75, output: 15 };
// The idle-gap cell's provider lifetime and pause: the lifetime outlasts a turn's request spacing
// and the host's post-turn work on a busy machine; the pause outlasts the lifetime counted from
// the host's own background request in it (OpenClaw sends one with the session's prefix 20-30 s
// after a turn; with a 45 s pause it kept the cache alive until the turn after the pause).
const GAP_TTL_MS = 30_000;
const GAP_PAUSE_MS = 75_000;

/**
 * Cells. `script` feeds buildMatrixScenario; `at` maps a turn index (before that turn runs) to a
 * runtime event: "restart", "slot:legacy", "slot:engine", "install". Indexes given as fractions
 * (0 < f < 1) scale with --turns. `estimate` is minutes per engine run at the default turns.
 */
export const CELLS = {
  // The issue's failing session: 48K window, reads 12-40 KB, exec a few KB, 18 turns. cachefold
  // must fold in it (`reach`: asserted by judgeRun, see reachedPaths).
  "repro-48k": { tokenScale: SCALE, window: 48_000, script: DEFAULT_SCRIPT, reach: ["fold"], estimate: 1.5 },
  "window-32k": { tokenScale: SCALE, window: 32_000, script: DEFAULT_SCRIPT, estimate: 2 },
  // OpenClaw drops the oldest messages at this window (after ~240): cachefold must absorb it.
  "window-128k": { tokenScale: SCALE, window: 128_000, script: DEFAULT_SCRIPT, reach: ["evicted"], estimate: 2 },
  "window-1m": { tokenScale: SCALE, window: 1_000_000, script: DEFAULT_SCRIPT, estimate: 2.7 },
  // Long session: 60 turns, reads 10-60 KB, exec 1-30 KB (~12 min per engine run).
  "long-60": { tokenScale: SCALE, window: 128_000, script: { turns: 60, readKB: [10, 60], execKB: [1, 30], toolsPerTurn: 2, agentsMdKB: 16 }, estimate: 12 },
  // DeepSeek thinking model: reasoning_content streamed and required back on tool-call messages.
  thinking: { tokenScale: SCALE, window: 48_000, script: DEFAULT_SCRIPT, reasoning: true, estimate: 1.7 },
  // The Gateway is restarted halfway (module state lost; durable state must carry on).
  restart: { tokenScale: SCALE, window: 48_000, script: DEFAULT_SCRIPT, at: { 0.5: "restart" }, reach: ["restored"], estimate: 2.7 },
  // Two thirds of the session on legacy, then cachefold installed (npm pack) into it.
  "late-install": { tokenScale: SCALE, window: 48_000, script: DEFAULT_SCRIPT, at: { 0.67: "install" }, installLater: true, estimate: 4 },
  // Slot switched to legacy at 1/3 and back at 2/3 (each with a Gateway restart).
  "slot-switch": { tokenScale: SCALE, window: 48_000, script: DEFAULT_SCRIPT, at: { 0.34: "slot:legacy", 0.67: "slot:engine" }, estimate: 4.5 },
  // The same, with the user's /compact as the first turn on legacy (what a user moving a long
  // session to legacy can do before legacy's first request).
  "slot-switch-compact": { tokenScale: SCALE, window: 48_000, script: { ...DEFAULT_SCRIPT, compactAt: [0.34] }, at: { 0.34: "slot:legacy", 0.67: "slot:engine" }, estimate: 4.5 },
  // Two session keys, turns interleaved; each plants and checks its own fact.
  "two-sessions": { tokenScale: SCALE, window: 48_000, script: { ...DEFAULT_SCRIPT, turns: 20, sessions: ["a", "b"] }, estimate: 4 },
  // The user's /compact, twice, typed into the chat (`chat.send "/compact"`, the host's command
  // path); the host must hand it to cachefold's compact() (which may decline: "already compacted").
  compact: { tokenScale: SCALE, window: 48_000, script: { ...DEFAULT_SCRIPT, compactAt: [0.4, 0.75] }, reach: ["manualCompact"], estimate: 1.6 },
  // `openclaw agent --local`: a fresh process per turn, no Gateway (~20-30 s per turn).
  local: { tokenScale: SCALE, window: 48_000, script: { ...DEFAULT_SCRIPT, turns: 10 }, local: true, estimate: 5 },
  // A gpt-5-family model id on the fake provider's OpenAI mode (automatic prefix caching: 1,024
  // minimum, 128-token steps, 10 min lifetime), priced with the openai-gpt-5 profile.
  "openai-gpt5": { tokenScale: SCALE, window: 48_000, script: { ...DEFAULT_SCRIPT, turns: 6 }, provider: { cache: "openai", model: "gpt-5-mini", ttlMs: 10 * 60_000 }, price: OPENAI_GPT5, reach: ["fold"], estimate: 1.2 },
  // A claude-sonnet model id on the fake provider's Anthropic Messages mode (OpenClaw's
  // `api: "anthropic-messages"` with `cacheRetention: "short"`, which a custom endpoint needs to
  // get OpenClaw's cache_control marks): explicit breakpoints, writes at 1.25x, reads at 0.1x,
  // 1,024-token minimum, 5-minute lifetime; priced with the anthropic-sonnet profile. Every
  // request's marks are checked (markMeasure): no mark move may cost a write.
  "anthropic-sonnet": { tokenScale: SCALE, window: 48_000, script: { ...DEFAULT_SCRIPT, turns: 6 }, provider: { cache: "anthropic", model: "claude-sonnet-5", api: "anthropic-messages", ttlMs: 5 * 60_000 }, price: ANTHROPIC_SONNET, reach: ["fold"], estimate: 1.3 },
  // The same provider with a 30 s lifetime (cachefold told so: providers.openai-gpt-5.ttlMinutes)
  // and a 75 s pause before turn 3, in the 48K session shape (folds from turn 1, so there are
  // records to condense when the cache is gone): the request after the pause misses from its
  // first token on both engines, cachefold's rewrite there is the free one (decision log), and it
  // costs no further miss (judgeRun, idleGapMeasure).
  "idle-gap": {
    tokenScale: SCALE,
    window: 48_000,
    script: { ...DEFAULT_SCRIPT, turns: 5 },
    provider: { cache: "openai", model: "gpt-5-mini", ttlMs: GAP_TTL_MS },
    pluginConfig: { providers: { "openai-gpt-5": { ttlMinutes: GAP_TTL_MS / 60_000 } } },
    price: OPENAI_GPT5,
    at: { 3: `idle:${GAP_PAUSE_MS}` },
    reach: ["idleRewrite"],
    estimate: 3,
  },
};

/** Engine configurations every cell runs: legacy, and cachefold with ownsCompaction true/false. */
export const VARIANTS = [
  { label: "legacy", engine: "legacy" },
  { label: "cachefold ownsCompaction=true", engine: "cachefold", pluginConfig: { ownsCompaction: true } },
  { label: "cachefold ownsCompaction=false", engine: "cachefold", pluginConfig: { ownsCompaction: false } },
];

/** Resolve fractional turn indexes against `n` turns (an index is kept inside 1..n-2). */
export function resolveAt(at, n) {
  const out = new Map();
  for (const [k, ev] of Object.entries(at ?? {})) {
    const f = Number(k);
    const i = Math.min(n - 2, Math.max(1, f < 1 ? Math.round(f * n) : f));
    out.set(i, [...(out.get(i) ?? []), ev]);
  }
  return out;
}

/** The scenario a cell runs (optionally with another number of turns). */
export function cellScenario(name, cell, { turns } = {}) {
  const n = turns ?? cell.script.turns ?? 18;
  const compactAt = (cell.script.compactAt ?? []).map((f) => (f < 1 ? Math.round(f * n) : f));
  return buildMatrixScenario({ ...cell.script, turns: n, compactAt, name });
}

/** The harness (one OpenClaw, one Gateway) a cell's variant runs on. */
export function cellHarness(cell, variant, opts = {}) {
  const isLegacy = variant.engine === "legacy";
  return Harness.create({
    engine: variant.engine,
    pluginDir: opts.pluginDir,
    pluginConfig: isLegacy ? undefined : { logFile: "<auto>", ...(cell.pluginConfig ?? {}), ...(variant.pluginConfig ?? {}) },
    extraConfig: cell.provider?.model ? modelConfig(cell.provider.model, cell.window, cell.provider.api) : undefined,
    contextWindow: cell.window,
    reasoning: !!cell.reasoning,
    tokenScale: cell.tokenScale,
    local: !!cell.local,
    installLater: !isLegacy && !!cell.installLater,
    keep: opts.keep,
    log: opts.log,
  });
}

/**
 * openclaw.json fragment that makes `fake/<model>` the agent's model (the fake provider serves any
 * id). `api: "anthropic-messages"` makes the provider an Anthropic-compatible endpoint (OpenClaw's
 * Anthropic SDK posts to `<baseUrl>/v1/messages`), with `cacheRetention: "short"` for the model:
 * OpenClaw sends cache_control marks to a custom Anthropic endpoint only when it is set
 * explicitly (docs/reference/prompt-caching.md in the openclaw package).
 */
export function modelConfig(model, window, api) {
  const anthropic = api === "anthropic-messages";
  return {
    agents: { defaults: { model: { primary: `fake/${model}` }, ...(anthropic ? { models: { [`fake/${model}`]: { params: { cacheRetention: "short" } } } } : {}) } },
    models: {
      providers: {
        fake: { ...(api ? { api } : {}), models: [{ id: model, name: `Fake ${model}`, reasoning: false, input: ["text"], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: window, maxTokens: 4096 }] },
      },
    },
  };
}

/**
 * Can `cell` run as another session on a harness made for `other` (same host configuration)?
 * Runtime events that change the host (slot, install, idle pauses) need a harness of their own;
 * a Gateway restart brings the same host back, so a restart cell may share one (the runs after it
 * use the restarted Gateway).
 */
export function sameHost(cell, other) {
  const key = (c) => JSON.stringify([c.window, c.tokenScale, !!c.reasoning, !!c.local, !!c.installLater, c.provider ?? null, c.pluginConfig ?? null]);
  const restartsOnly = (c) => Object.values(c.at ?? {}).every((ev) => ev === "restart");
  return key(cell) === key(other) && restartsOnly(cell) && restartsOnly(other);
}

/**
 * Run one cell on one engine variant. Never throws for a failed turn (that is a result); throws
 * only when the runtime cannot be set up. `opts.harness` runs the cell as another session on a
 * running harness (a cell with the same host configuration and no runtime event but Gateway
 * restarts, see sameHost); the run then counts only its own turns, requests and decisions, and the harness
 * stays open.
 */
export async function runCell(name, cell, variant, opts = {}) {
  const scenario = cellScenario(name, cell, opts);
  const isLegacy = variant.engine === "legacy";
  const t0 = Date.now();
  const shared = opts.harness ?? null;
  const h = shared ?? (await cellHarness(cell, variant, opts));
  if (cell.provider && !shared) h.provider.setCache(cell.provider);
  for (const [file, content] of Object.entries(scenario.files)) {
    const p = path.join(h.work, file);
    if (fs.existsSync(p) && fs.readFileSync(p, "utf8") !== content) throw new Error(`cell ${name}: workspace file ${file} differs from the one an earlier cell on this harness wrote`);
    fs.mkdirSync(path.dirname(p), { recursive: true });
    fs.writeFileSync(p, content);
  }
  const from = { turns: h.turns.length, requests: h.provider.requests.length, events: h.decisionEvents().length };
  const at = resolveAt(cell.at, scenario.turns.length);
  const runtimeEvents = [];
  const prefix = `mx-${name}`.replace(/[^a-z0-9-]/gi, "-").toLowerCase();
  try {
    if (!cell.local) await h.startGateway();
    for (const [i, t] of scenario.turns.entries()) {
      for (const ev of at.get(i) ?? []) {
        opts.log?.(`[${variant.label}] before turn ${i}: ${ev}`);
        const e0 = Date.now();
        if (ev.startsWith("idle:")) {
          await new Promise((resolve) => setTimeout(resolve, Number(ev.slice(5))));
          runtimeEvents.push({ beforeTurn: i, event: ev, ms: Date.now() - e0 });
          continue;
        }
        if (ev === "restart" || isLegacy) await (cell.local ? Promise.resolve() : h.restartGateway());
        else if (ev === "install") {
          await h.stopGateway();
          await h.installPlugin(); // also selects the slot
          await h.startGateway();
        } else if (ev === "slot:legacy") await h.setSlot("legacy");
        else if (ev === "slot:engine") await h.setSlot(variant.engine);
        runtimeEvents.push({ beforeTurn: i, event: isLegacy && ev !== "restart" ? `${ev} (legacy: restart only)` : ev, ms: Date.now() - e0 });
      }
      const key = `${prefix}-${t.session}`;
      const r = t.kind === "compact" && !cell.local ? await h.compactSession(key) : await h.turn(key, t.message);
      r.kind = t.kind;
      r.scriptSession = t.session;
    }
    const turns = h.turns.slice(from.turns);
    const requests = h.provider.requests.slice(from.requests);
    const logs = h.allLogs();
    const result = {
      cell: name,
      label: variant.label,
      variant,
      window: cell.window,
      turnsPlanned: scenario.turns.length,
      dir: h.dir,
      totalMs: Date.now() - t0,
      setupMs: h.setupMs,
      runtimeEvents,
      turns,
      requests,
      events: h.decisionEvents().slice(from.events),
      gatewayStarts: h.gatewayStarts ?? 0,
      sharedHarness: !!shared,
      cliCalls: h.cliCalls.length,
      stats: { reasoning400: requests.filter((r) => r.status === 400 && (r.violations ?? []).some((v) => v.kind === "missing_reasoning_content")).length },
      logs,
      logFindings: logFindings(logs),
    };
    result.idleGap = idleGapMeasure(result, cell.provider?.ttlMs ?? Infinity);
    result.marks = cell.provider?.cache === "anthropic" ? markMeasure(requests, cell.provider.ttlMs ?? 5 * 60_000) : undefined;
    result.reached = reachedPaths(result);
    result.summary = summarizeRun({ requests, turns, scenario, price: cell.price, storeContainsNeedle: dirContains(path.join(h.state, "cachefold"), scenario.needle) });
    result.recall = recallOf(scenario.facts, turns, (needle) => dirContains(path.join(h.state, "cachefold"), needle));
    return result;
  } finally {
    if (!shared) await h.close({ keep: opts.keep });
  }
}

/**
 * Each planted fact's recall, judged on its own session's last turn (the check turn): the fact in
 * that turn's first request, recovered through a fold record, or pointed at by one with the
 * plugin's store holding it (summarizeRun). `storeContains(needle)`: the plugin's files hold it.
 */
export function recallOf(facts, turns, storeContains) {
  return facts.map((f) => {
    const sessionTurns = turns.filter((t) => t.scriptSession === f.session);
    const s = summarizeRun({ requests: [], turns: sessionTurns, scenario: { needle: f.needle }, storeContainsNeedle: storeContains(f.needle) });
    const last = sessionTurns.at(-1);
    return { session: f.session, needle: f.needle, reachable: s.factReachable, reply: last ? (last.ok ? last.text.slice(0, 120) : `(turn failed: ${String(last.error).slice(0, 100)})`) : null };
  });
}

/**
 * Which host paths a run reached, from what the engine and the host recorded: `fold` (cachefold
 * folded: an assemble or compact report with a fold), `evicted` (the host dropped its oldest
 * messages and cachefold recognised it: an assemble report with divergence cause
 * `host_evicted`), `compacted` (a /compact turn the host answered with a compaction, not a skip),
 * `manualCompact` (the host handed the user's /compact to cachefold's compact(), trigger "manual"),
 * and in a run with Gateway restarts `restored` (restartsRestored).
 */
export function reachedPaths(run) {
  const events = run.events ?? [];
  const reports = events.filter((e) => e.event === "assemble" || e.event === "compact").map((e) => e.report ?? e.answer?.report ?? null).filter(Boolean);
  return {
    fold: reports.reduce((n, r) => n + (r.folds?.length ?? 0) + (r.fold ? 1 : 0), 0),
    evicted: reports.filter((r) => r.divergence?.cause === "host_evicted").length,
    compacted: run.turns.filter((t) => t.kind === "compact" && t.ok && !/skipped|nothing/i.test(t.text)).length,
    manualCompact: events.filter((e) => e.event === "compact" && e.trigger === "manual").length,
    ...(run.idleGap ? { idleRewrite: run.idleGap.gapRewrite?.free ?? 0 } : {}),
    ...((run.runtimeEvents ?? []).some((r) => r.event === "restart") ? { restored: restartsRestored(run) } : {}),
  };
}

/**
 * How many of the run's Gateway restarts the engine carried its state across: the first
 * assemble of the turn after the restart (its session, from the turn's start on) is managed and
 * ingested fewer messages than the host passed: the rest came from what the earlier process
 * persisted (a session without state, lost or unreadable, ingests them all). A divergence the
 * engine reports there is the host's doing (with ownsCompaction false OpenClaw evicts its oldest
 * messages every turn at 48K) and does not count against it.
 */
export function restartsRestored(run) {
  const events = run.events ?? [];
  let n = 0;
  for (const r of run.runtimeEvents ?? []) {
    const t = r.event === "restart" ? run.turns?.[r.beforeTurn] : null;
    if (!t) continue;
    const first = events.find((e) => e.event === "assemble" && e.count > 0 && Date.parse(e.at) >= t.startedAt && (!t.sessionId || e.sessionId === t.sessionId));
    const rep = first?.report;
    if (rep?.managed && rep.ingested < first.count) n++;
  }
  return n;
}

const tokensOf = (text) => Math.ceil(Buffer.byteLength(text, "utf8") / BYTES_PER_TOKEN);
const isInternal = (m) => m?.role === "user" && contentText(m.content).includes(INTERNAL_CONTEXT_MARK);
/** A request's canonical text without its trailing transient internal-context message(s). */
function keptText(body) {
  const msgs = [...(body?.messages ?? [])];
  while (msgs.length && isInternal(msgs.at(-1))) msgs.pop();
  return serializeRequest({ ...body, messages: msgs });
}
function lcpBytes(a, b) {
  const x = Buffer.from(a, "utf8");
  const y = Buffer.from(b, "utf8");
  const n = Math.min(x.length, y.length);
  let i = 0;
  while (i < n && x[i] === y[i]) i++;
  return i;
}

/**
 * The idle-gap measurement (a run with an `idle:<ms>` event; `ttlMs`: the provider's lifetime).
 * `gapHit`: the hit tokens of the first main request of the turn after the pause. `rewriteTokens`:
 * how many tokens of the last main request of the turn before the pause (without its transient
 * internal-context tail) it did not keep: the engine rewrote its prefix there. `pauseRequests`:
 * what the host itself sent during the pause (OpenClaw's background runs, e.g. its skill review).
 * `aliveBeforeGap`: the newest request of any kind before the gap request was less than the
 * lifetime before it (its prefix still cached); then `extraMissAtGap` = its tokens the gap
 * request dropped (what the rewrite cost over not rewriting), else 0 (the gap request misses from
 * its first token either way). `followBreakTokens`: tokens of the gap request the next request
 * dropped (a second rewrite would miss again what the gap request paid for). `nextTurnBreakTokens`,
 * `laterMiss`, `laterTokens`: the following turn's first request against the gap turn's last
 * (includes the cost model's priced pressure folds), and the misses and prompt tokens of the
 * main requests after the gap request through the following turn. `gapRewrite`: what the
 * decision log says the engine did at the gap request (folds with their reason and whether they
 * were decided at no break cost, "cache expired"; condensations; `emergency`: an emergency fold
 * ran; `overThreshold`: the prompt stayed over the fold threshold, which folding cannot always
 * fix: the fixed prefix can fill it); `free` counts the free ones. `nextTurnEmergency`: the next
 * turn's first request still needed an emergency fold.
 * The request after the gap misses from its first token whatever the engine does (`gapHit` 0), so
 * the free rewrite costs no extra miss as long as the request after it keeps it
 * (`followBreakTokens` 0).
 */
export function idleGapMeasure(run, ttlMs) {
  const gap = run.runtimeEvents.find((e) => e.event.startsWith("idle:"));
  if (!gap) return null;
  const ti = run.turns.findIndex((t) => t.index - run.turns[0].index === gap.beforeTurn);
  const mainOf = (t) => (t?.requests ?? []).filter((r) => requestKind(r) === "main");
  const before = run.turns.slice(0, ti).flatMap(mainOf);
  const gapTurn = mainOf(run.turns[ti]);
  const nextTurn = mainOf(run.turns[ti + 1]);
  const after = [...gapTurn, ...nextTurn];
  const first = after[0];
  const last = before.at(-1);
  if (!first || !last || !nextTurn.length) return { error: `no main request around the pause (turn ${gap.beforeTurn}) or in the turn after it` };
  /** Tokens of `prev` (without its transient tail) that `next` does not start with. */
  const dropped = (prev, next) => {
    const kept = keptText(prev.body);
    return Math.ceil((Buffer.byteLength(kept, "utf8") - lcpBytes(serializeRequest(next.body), kept)) / BYTES_PER_TOKEN);
  };
  const earlier = run.requests.filter((r) => r.seq < first.seq && r.status === 200);
  const live = earlier.at(-1);
  const pauseRequests = earlier.filter((r) => r.seq > last.seq && r.t >= run.turns[ti - 1].endedAt).map((r) => ({ seq: r.seq, kind: requestKind(r), sBeforeGapRequest: (first.t - r.t) / 1000, tokens: r.usage?.prompt_tokens }));
  const aliveBeforeGap = !!live && first.t - live.t <= ttlMs && (live.usage?.prompt_tokens ?? 0) >= 1024;
  let laterMiss = 0;
  let laterTokens = 0;
  for (const r of after.slice(1)) {
    laterMiss += r.usage?.prompt_cache_miss_tokens ?? 0;
    laterTokens += r.usage?.prompt_tokens ?? 0;
  }
  // What the engine did at the gap request (its decision log): the assembles of the gap turn up
  // to that request. A fold decided "cache expired" or a condensation there is the free rewrite;
  // an emergency fold is one the prompt needed whatever the gap.
  const decided = (run.events ?? []).filter((e) => e.event === "assemble" && e.report && Date.parse(e.at) >= run.turns[ti].startedAt && Date.parse(e.at) <= first.t);
  const folds = decided.flatMap((e) => e.report.folds ?? []);
  const gapRewrite = {
    assembles: decided.length,
    folds: folds.map((f) => ({ id: f.id, reason: f.reason, free: /cache expired/.test(f.decision?.reason ?? ""), tokensBefore: f.tokensBefore, tokensAfter: f.tokensAfter })),
    condensed: decided.filter((e) => e.report.condensed).map((e) => ({ id: e.report.condensed.id, free: /cache expired/.test(e.report.condensed.decision?.reason ?? "") })),
    emergency: folds.some((f) => f.reason === "emergency"),
    overThreshold: decided.some((e) => e.report.emergency),
  };
  gapRewrite.free = gapRewrite.folds.filter((f) => f.free && f.reason !== "emergency").length + gapRewrite.condensed.filter((c) => c.free).length;
  // The next turn's pre-prompt assemble: did the prompt still need an emergency fold?
  const nextStart = run.turns[ti + 1].startedAt;
  const nextFirst = nextTurn[0];
  const nextDecided = (run.events ?? []).filter((e) => e.event === "assemble" && e.report && Date.parse(e.at) >= nextStart && Date.parse(e.at) <= nextFirst.t);
  const nextFolds = nextDecided.flatMap((e) => e.report.folds ?? []);
  return {
    pauseMs: gap.ms,
    gapRewrite,
    nextTurnEmergency: nextFolds.some((f) => f.reason === "emergency"),
    gapTokens: first.usage?.prompt_tokens ?? null,
    gapHit: first.usage?.prompt_cache_hit_tokens ?? null,
    rewriteTokens: dropped(last, first),
    pauseRequests,
    aliveBeforeGap,
    extraMissAtGap: aliveBeforeGap ? dropped(live, first) : 0,
    followBreakTokens: after.length > 1 ? dropped(after[0], after[1]) : 0,
    nextTurnBreakTokens: gapTurn.length ? dropped(gapTurn.at(-1), nextTurn[0]) : 0,
    laterRequests: after.length - 1,
    laterMiss,
    laterTokens,
  };
}

/**
 * Where the host put its Anthropic cache_control marks, and whether a mark move cost a write
 * (a run on the fake provider's Anthropic mode). `placement`: per main request, each mark as
 * `tools[last]`, `system[i]`, `user text (latest)`, `tool_result (latest)` or what else it was,
 * counted. `lostReads`: main requests that kept the previous main request's marked prefix byte for
 * byte, within the lifetime, yet read less than it (a mark that moved out of the provider's
 * 20-block lookback, say): each such request wrote again what was cached. `rewrites`: main
 * requests that did not keep the previous one's marked prefix (a fold or another rewrite; priced
 * by the cost model), with the tokens kept; `writeTokens` of all main requests.
 */
export function markMeasure(requests, ttlMs) {
  const placement = {};
  const lostReads = [];
  const rewrites = [];
  let writeTokens = 0;
  const main = requests.filter((r) => requestKind(r) === "main" && r.wireBody && r.marks);
  let prev = null;
  for (const r of main) {
    const w = r.wireBody;
    const blocks = cacheBlocks(w);
    const msgs = w.messages ?? [];
    const lastUser = msgs.findLastIndex((m) => m.role === "user" && (Array.isArray(m.content) ? m.content : []).some((b) => b.type === "text" && !String(b.text).includes(INTERNAL_CONTEXT_MARK)));
    const lastResult = msgs.findLastIndex((m) => m.role === "user" && (Array.isArray(m.content) ? m.content : []).some((b) => b.type === "tool_result"));
    for (const m of r.marks) {
      let kind = m.where;
      const mm = /^messages\[(\d+)\]\.(\w+)\[\d+\]\.(\w+)$/.exec(m.where);
      if (m.where.startsWith("tool ")) kind = m.block === (w.tools ?? []).length - 1 ? "tools[last]" : "tools[not last]";
      else if (mm) {
        const i = Number(mm[1]);
        const latest = (mm[3] === "text" && i === lastUser) || (mm[3] === "tool_result" && i === lastResult);
        kind = `${mm[2]} ${mm[3]}${latest ? " (latest)" : ` (${msgs.length - i} from the end)`}`;
      }
      placement[kind] = (placement[kind] ?? 0) + 1;
    }
    writeTokens += r.usage?.cache_write_tokens ?? 0;
    if (prev && r.session === prev.r.session) {
      const last = prev.r.marks.at(-1);
      if (last) {
        const upTo = prev.blocks.slice(0, last.block + 1).map((b) => b.text).join("");
        const mine = blocks.map((b) => b.text).join("");
        const kept = mine.startsWith(upTo);
        if (!kept) rewrites.push({ seq: r.seq, prevSeq: prev.r.seq, keptTokens: Math.floor(lcpBytes(mine, upTo) / BYTES_PER_TOKEN), prevMarkTokens: last.tokens });
        else if (r.t - prev.r.t <= ttlMs && (r.cacheRaw?.read ?? 0) < last.tokens) lostReads.push({ seq: r.seq, prevSeq: prev.r.seq, read: r.usage?.prompt_cache_hit_tokens, prevMarkTokens: last.tokens, marks: r.marks.map((m) => m.where) });
      }
    }
    prev = { r, blocks };
  }
  return { requests: main.length, placement, lostReads, rewrites, writeTokens };
}
/** Log lines that matter to the verdict (host degradation, quarantine, preflight failures). */
export function logFindings(logs) {
  const pick = (re) => [...new Set((logs.match(new RegExp(`[^\\n]*${re.source}[^\\n]*`, "gi")) ?? []).map((l) => l.trim().slice(0, 400)))];
  return {
    degraded: pick(/degraded to "legacy"/),
    quarantine: pick(/quarantin|factory returned an invalid ContextEngine/),
    preflight: pick(/Preflight compaction required but failed/),
    unavailable: pick(/errorCode=UNAVAILABLE/),
  };
}

/**
 * The cell's assertions for one run. `legacy` is the same cell's legacy run (cost baseline).
 * @returns {{ok: boolean, failures: string[]}}
 */
export function judgeRun(run, legacy) {
  const failures = [];
  if (run.error) return { ok: false, failures: [`run error: ${run.error}`] };
  const bad = run.turns.filter((t) => !t.ok);
  if (bad.length) failures.push(`turns failed: ${bad.map((t) => t.index).join(",")} (first: ${String(bad[0].error).slice(0, 200)})`);
  if (run.turns.length < run.turnsPlanned) failures.push(`only ${run.turns.length}/${run.turnsPlanned} turns ran`);
  if (run.logFindings.degraded.length) failures.push(`degraded to legacy: ${run.logFindings.degraded[0]}`);
  if (run.logFindings.quarantine.length) failures.push(`quarantine: ${run.logFindings.quarantine[0]}`);
  if (run.summary.http400) failures.push(`${run.summary.http400} HTTP 400 at the provider${run.stats.reasoning400 ? ` (${run.stats.reasoning400} missing reasoning_content)` : ""}`);
  for (const r of run.recall) if (r.reachable === "no") failures.push(`fact ${r.needle} (session ${r.session}) not recalled; last reply: ${r.reply}`);
  if (run.variant.engine !== "legacy") {
    for (const path of CELLS[run.cell]?.reach ?? []) if (!(run.reached?.[path] > 0)) failures.push(`the cell's host path was not reached: no ${path} (${JSON.stringify(run.reached)})`);
    // A /compact cachefold declined with room to spare (`fits`) reaches the user as a skip: the
    // host's compaction would replace the history with its summary.
    const declined = (run.events ?? []).filter((e) => e.event === "compact" && e.trigger === "manual" && e.answer?.fits === true).length;
    const r = run.reached ?? {};
    if (declined && r.compacted > (r.manualCompact ?? 0) - declined) failures.push(`${declined} /compact declined as fitting under the host's trigger, yet the host compacted ${r.compacted} of ${r.manualCompact}`);
  }
  const g = run.idleGap;
  if (g?.error) failures.push(`idle gap: ${g.error}`);
  else if (g) {
    if (g.gapHit !== 0) failures.push(`idle gap: the request after the ${g.pauseMs} ms pause hit ${g.gapHit} tokens (the lifetime did not expire)`);
    if (g.aliveBeforeGap) failures.push(`idle gap: a request ${JSON.stringify(g.pauseRequests.at(-1) ?? null)} kept the cache alive through the pause (the cell tests no expiry)`);
    if (run.variant.engine !== "legacy" && g.aliveBeforeGap && g.gapRewrite?.free > 0) failures.push(`idle gap: the engine rewrote as after an expiry on a live cache and dropped ${g.extraMissAtGap} cached tokens (an extra miss)`);
    if (run.variant.engine !== "legacy" && g.gapRewrite?.emergency) failures.push(`idle gap: the rewrite at the gap request was an emergency fold, not the free one (${JSON.stringify(g.gapRewrite.folds)})`);
    if (run.variant.engine !== "legacy" && g.followBreakTokens > 0) failures.push(`idle gap: the request after the rewrite at the pause dropped ${g.followBreakTokens} tokens of it (an extra miss)`);
  }
  if (run.marks) {
    if (!run.marks.requests) failures.push("anthropic: no main request carried cache_control marks");
    if (run.marks.lostReads.length) failures.push(`anthropic: ${run.marks.lostReads.length} request(s) kept the previous marked prefix yet wrote it again: ${JSON.stringify(run.marks.lostReads[0])}`);
  }
  if (legacy?.summary && run.variant.engine !== "legacy" && !(run.summary.inputCostUsd < legacy.summary.inputCostUsd)) {
    failures.push(`input cost ${(run.summary.inputCostUsd / legacy.summary.inputCostUsd).toFixed(3)}x legacy (not below)`);
  }
  return { ok: failures.length === 0, failures };
}

/** A compact, JSON-friendly row for the table and matrix.json. */
export function matrixRow(run, legacy) {
  const v = judgeRun(run, legacy);
  if (run.error) return { cell: run.cell, label: run.label, error: run.error, ok: false, failures: v.failures };
  const s = run.summary;
  return {
    cell: run.cell,
    label: run.label,
    window: run.window,
    turnsOk: run.turns.filter((t) => t.ok).length,
    turns: run.turnsPlanned,
    failedTurns: run.turns.filter((t) => !t.ok).map((t) => ({ turn: t.index, kind: t.kind, error: String(t.error).slice(0, 500) })),
    requests: s.requests,
    promptTokens: s.promptTokens,
    hitPct: s.hitPct,
    inputCostUsd: s.inputCostUsd,
    costXLegacy: legacy?.summary?.inputCostUsd ? s.inputCostUsd / legacy.summary.inputCostUsd : null,
    http400: s.http400,
    reasoning400: run.stats.reasoning400 ?? 0,
    maxPrompt: s.maxPrompt,
    reasoningReplay: reasoningReplay(run.requests),
    recall: run.recall.map((r) => r.reachable),
    reached: run.reached,
    idleGap: run.idleGap ?? undefined,
    marks: run.marks,
    writeTokens: s.writeTokens,
    gatewayStarts: run.gatewayStarts,
    runtimeEvents: run.runtimeEvents,
    logFindings: Object.fromEntries(Object.entries(run.logFindings).map(([k, v2]) => [k, v2.slice(0, 3)])),
    minutes: run.totalMs / 60_000,
    ok: v.ok,
    failures: v.failures,
  };
}

/**
 * How assistant tool-call messages came back to the provider: how many (in successful requests),
 * how many carried `reasoning_content`, how many non-empty (proves the thinking cell exercised
 * the replay rather than OpenClaw's "" filler).
 */
export function reasoningReplay(requests = []) {
  const out = { toolCallMessages: 0, withField: 0, nonEmpty: 0 };
  for (const r of requests) {
    if (r.status !== 200) continue;
    for (const m of r.body?.messages ?? []) {
      if (m?.role !== "assistant" || !m.tool_calls?.length) continue;
      out.toolCallMessages++;
      if (typeof m.reasoning_content === "string") out.withField++;
      if (typeof m.reasoning_content === "string" && m.reasoning_content.length > 0) out.nonEmpty++;
    }
  }
  return out;
}

/** The markdown table the matrix prints. */
export function matrixTable(rows) {
  const fmt = (n) => n.toLocaleString("en-US");
  const head = "| cell | engine/variant | turns ok/total | requests | prompt tokens | hit % | input cost × legacy | 400s | recall | result |";
  const sep = "|---|---|---:|---:|---:|---:|---:|---:|---|---|";
  const lines = rows.map((r) => {
    if (r.error) return `| ${r.cell} | ${r.label} | - | - | - | - | - | - | - | ERROR: ${cell(r.error)} |`;
    const x = r.costXLegacy == null ? "-" : r.label === "legacy" ? "1.000" : r.costXLegacy.toFixed(3);
    const recall = r.recall.map((v) => (v === "no" ? "no" : v === "verbatim" ? "yes" : `yes (${v})`)).join(" / ");
    const result = r.ok ? "pass" : `FAIL: ${cell(r.failures.join("; "))}`;
    return `| ${r.cell} | ${r.label} | ${r.turnsOk}/${r.turns} | ${fmt(r.requests)} | ${fmt(r.promptTokens)} | ${r.hitPct.toFixed(1)} | ${x} | ${r.http400} | ${recall} | ${result} |`;
  });
  return [head, sep, ...lines].join("\n");
}

function cell(s) {
  const t = String(s).replace(/\s+/g, " ").replace(/\|/g, "\\|");
  return t.length > 220 ? `${t.slice(0, 217)}...` : t;
}
