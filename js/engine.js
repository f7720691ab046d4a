// OpenClaw context-engine adapter: lifecycle calls → core Session calls; state via store.js.
//
// Boundary design (measured, see README "How it works"): converting whole histories into wasm
// costs ~25 µs per message, so the core keeps a compact per-message record and asks (through
// the source callback of `Session.plan`) only for the messages it has not seen plus a few
// checks; JS stringifies just those. The core answers with a plan of host indices and synthetic
// messages; the host's own objects are returned untouched, so their bytes cannot drift.
//
// Engine instances live one turn (docs/host-integration.md). Sessions are cached per
// process (Gateway mode) and reloaded from disk when another process wrote their journal.
// Nothing here throws into the host: on any error the turn passes history through unchanged
// (OpenClaw quarantines engines that throw) and the state on disk is kept.
import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";
import { loadCore } from "./core.js";
import * as store from "./store.js";
import { captureAfterTurn, lessonsAddition, withAddition } from "./lessons.js";
import { withTimeout } from "./io/files.js";
import { cutHistoryMessage } from "./oversize.js";

const VERSION = "0.1.0";
// Snapshot when the journal outgrows half the last snapshot (at least 256 KiB): replaying
// journal lines costs ~3× loading the same state from a snapshot, and a fresh process runs the
// wasm in its baseline tier, so a short journal keeps cold start low. Amortised, a turn still
// writes O(its new content): a snapshot of S bytes follows S/2 bytes of journal.
const SNAPSHOT_MIN_BYTES = 256 << 10;
const live = new Map(); // sessionId -> { session, core, stamp: journal {gen, size}, snapshotBytes }

/** Factory registered with api.registerContextEngine (async: instantiates wasm). */
export function createEngineFactory(ctx) {
  return async (factoryCtx = {}) => {
    try {
      await loadCore();
    } catch (err) {
      ctx.logger?.error?.(`cachefold: core failed to load (${err.message}); passing history through`);
    }
    return new CachefoldEngine(ctx, factoryCtx);
  };
}

function nowMs() {
  return Date.now();
}

/** The model's context window as the host reports it, or null. */
function windowOf(params) {
  const w = params.runtimeContext?.modelContextWindow;
  return Number.isFinite(w) && w > 0 ? Math.floor(w) : null;
}

function modelOf(params) {
  const rs = params.runtimeSettings?.model;
  const m = params.model ?? rs?.resolved ?? rs?.requested ?? null;
  if (!m) return null;
  const provider = rs?.provider;
  return provider && !String(m).includes("/") ? `${provider}/${m}` : String(m);
}

/** The loaded core and the on-disk paths of one session. */
async function pathsFor(ctx, sessionId) {
  const core = await loadCore();
  return { core, paths: store.sessionPaths(ctx.stateDir, core.sessionDirName(sessionId)) };
}

async function openSession(ctx, sessionId, paths) {
  // Loaded again inside the lock: a trap while waiting may have replaced the instance.
  const core = await loadCore();
  const cached = live.get(sessionId);
  // Trust the cache only when the journal is exactly the file this process last wrote or read:
  // its generation (new with every snapshot) and size (grows with every append) both match.
  // Anything else means another process wrote since, and appending on top of state this process
  // has not read would fork the sequence (issue 10, item 4).
  if (cached && cached.core === core && sameStamp(cached.stamp, store.journalStamp(paths))) {
    return { ...cached, paths };
  }
  cached?.session?.free?.();
  live.delete(sessionId);
  const { snapshot, journal, stamp, headerless } = store.readState(paths);
  const restored = core.Session.restore(ctx.configJson, sessionId, snapshot, journal);
  const entry = { session: restored, core, stamp, snapshotBytes: snapshot ? snapshot.length : 0 };
  const report = restored.replayReport();
  if (report?.ignoredBytes > 0 || headerless) {
    // A torn or corrupt tail (crash mid-append): lines appended after it would never replay,
    // so seal the consistent state now and start a clean journal. A journal without a
    // generation header (older versions) is sealed the same way.
    if (report?.ignoredBytes > 0) {
      ctx.log({ event: "journal_repaired", sessionId, ignoredBytes: report.ignoredBytes, stopped: report.stopped ?? null });
    }
    const snap = restored.snapshot();
    entry.stamp = store.writeSnapshot(paths, snap);
    entry.snapshotBytes = snap.length;
  }
  live.set(sessionId, entry);
  return { ...entry, paths };
}

function sameStamp(a, b) {
  return !!a && !!b && a.gen === b.gen && a.size === b.size;
}

function persist(sessionId, h, sync, lease) {
  const lines = h.session.takeJournal();
  if (!lines) return;
  lease?.assert(); // never write once the lease was lost (another process may hold it now)
  const appended = store.appendJournal(h.paths, lines, sync);
  let stamp = { gen: appended.gen === undefined ? h.stamp?.gen : appended.gen, size: appended.size };
  if (appended.size > Math.max(SNAPSHOT_MIN_BYTES, h.snapshotBytes / 2)) {
    const snap = h.session.snapshot();
    stamp = store.writeSnapshot(h.paths, snap);
    h.snapshotBytes = snap.length;
  }
  const entry = live.get(sessionId);
  if (entry) {
    entry.stamp = stamp;
    entry.snapshotBytes = h.snapshotBytes;
  }
}

async function withSession(ctx, sessionId, fn, { sync = false } = {}) {
  const { paths } = await pathsFor(ctx, sessionId);
  return store.withSessionLock(paths, async (lease) => {
    const h = await openSession(ctx, sessionId, paths);
    try {
      const out = await fn(h);
      persist(sessionId, h, sync, lease);
      return out;
    } catch (err) {
      // Drop the cached handle: the next call reloads from disk, which holds every event
      // persisted so far. A trap has already dropped the wasm instance (core.js).
      live.delete(sessionId);
      try {
        h.session?.free?.();
      } catch {
        /* a trapped instance */
      }
      throw err;
    }
  });
}

// JSON text of one host message for the core. JSON.stringify throws on a BigInt or a cycle and
// returns undefined for undefined; one such message must not disable the session, so it gets a
// stable placeholder text instead (BigInt → "<digits>n", a cycle → "[Circular]"; the core
// quarantines what it cannot read). The host's object itself is never changed.
let unserializable = 0;
export function messageJson(m) {
  try {
    const s = JSON.stringify(m);
    if (typeof s === "string") return s;
  } catch {
    /* placeholder below */
  }
  unserializable += 1;
  try {
    const stack = [];
    const s = JSON.stringify(m, function (_k, v) {
      if (typeof v === "bigint") return `${v}n`;
      if (v && typeof v === "object") {
        while (stack.length && stack[stack.length - 1] !== this) stack.pop();
        if (stack.includes(v)) return "[Circular]";
        stack.push(v);
      }
      return v;
    });
    return typeof s === "string" ? s : "null";
  } catch {
    return JSON.stringify("[cachefold: unserializable message]");
  }
}

const warnedSessions = new Set();
function warnOnce(ctx, sessionId, before, report) {
  const fallbacks = unserializable - before;
  const quarantined = report?.quarantined?.length ?? 0;
  if ((!fallbacks && !quarantined) || warnedSessions.has(sessionId)) return;
  warnedSessions.add(sessionId);
  ctx.logger?.warn?.(`cachefold: session ${sessionId} has messages the core cannot read exactly (${fallbacks} unserializable, ${quarantined} quarantined); they are kept as sent and the rest stays managed`);
  ctx.log({ event: "quarantine", sessionId, unserializable: fallbacks, quarantined: report?.quarantined ?? [] });
}

// The core's one plan driver (need → plan → needFull → plan with everything) pulls the JSON text
// of the messages it asks for through `jsonOf`. A tool result over the cut size is stored and cut
// first (oversize.js): the core and the model see the cut copy, the fold file the original.
function runPlan(ctx, h, messages, header, { compact = false, force = false, sessionId, sessionKey } = {}) {
  const ref = { session: sessionKey ?? sessionId, sessionId };
  const onCut = (cuts) => ctx.log({ event: "tool_result_cut", path: "assemble", sessionId, cuts });
  const view = (i) => cutHistoryMessage(ctx.stateDir, messages[i], ref, onCut);
  const plan = h.session.plan(JSON.stringify(header), compact, force, (i) => messageJson(view(i)));
  for (const w of plan.foldWrites ?? []) {
    const text = messages.slice(w.from, w.to).map(messageJson).join("\n") + "\n";
    store.writeFold(h.paths, w.foldId, text);
  }
  const synthetic = (plan.synthetic ?? []).map((s) => JSON.parse(s));
  const out = new Array(plan.order.length);
  for (let k = 0; k < plan.order.length; k++) {
    const i = plan.order[k];
    out[k] = i >= 0 ? view(i) : synthetic[-i - 1];
  }
  return { plan, out };
}

export class CachefoldEngine {
  constructor(ctx, factoryCtx) {
    this.ctx = ctx;
    this.factoryCtx = factoryCtx;
    this.info = {
      id: "cachefold",
      name: "cachefold",
      version: VERSION,
      ownsCompaction: ctx.config.ownsCompaction !== false,
      transcriptSemantics: {
        currentTurnFence: "before-current-turn-entry-v1",
        turnAdvancementIdempotency: "atomic-idempotent-v1",
      },
    };
  }

  async bootstrap() {
    return { bootstrapped: false, reason: "cachefold restores its own state on first assemble" };
  }

  async ingest() {
    return { ingested: false };
  }

  async assemble(params) {
    const messages = Array.isArray(params?.messages) ? params.messages : [];
    const t0 = performance.now();
    try {
      const sessionId = String(params.sessionId ?? "");
      if (!sessionId) throw Object.assign(new Error("assemble without sessionId"), { code: "CACHEFOLD_INPUT" });
      const model = modelOf(params);
      const before = unserializable;
      const result = await withSession(this.ctx, sessionId, async (h) =>
        runPlan(this.ctx, h, messages, { count: messages.length, model, tokenBudget: params.tokenBudget ?? null, nowMs: nowMs(), contextWindow: windowOf(params) }, { sessionId, sessionKey: params.sessionKey }),
      );
      const { plan, out } = result;
      warnOnce(this.ctx, sessionId, before, plan.report);
      if (plan.report?.warning) this.ctx.logger?.warn?.(`cachefold: session ${sessionId}: ${plan.report.warning}`);
      this.ctx.log({
        event: "assemble",
        sessionId,
        model,
        count: messages.length,
        outCount: out.length,
        passthrough: !!plan.passthrough,
        estimatedTokens: plan.estimatedTokens,
        report: plan.report ?? null,
        ms: +(performance.now() - t0).toFixed(3),
      });
      const res = { messages: out, estimatedTokens: plan.estimatedTokens ?? 0 };
      return withAddition(res, await lessonsAddition(this.ctx, params, this.factoryCtx));
    } catch (err) {
      return withAddition(this.#passthrough("assemble", err, messages), await lessonsAddition(this.ctx, params, this.factoryCtx));
    }
  }

  #passthrough(where, err, messages) {
    this.ctx.logger?.warn?.(`cachefold: ${where} failed (${err?.code ?? "error"}: ${err?.message}); history passed through unchanged`);
    this.ctx.log({ event: "error", where, code: err?.code ?? null, message: String(err?.message ?? err) });
    return { messages, estimatedTokens: 0 };
  }

  async commitTurn(params) {
    try {
      const sessionId = String(params.sessionId ?? params.terminal?.sessionId ?? "");
      const key = String(params.advancementKey ?? "");
      const msgs = Array.isArray(params.messages) ? params.messages : [];
      const outcome = await withSession(this.ctx, sessionId, async (h) =>
        h.session.commitTurn(JSON.stringify({ advancementKey: key, nowMs: nowMs(), contextWindow: windowOf(params) }), msgs.map(messageJson)),
      { sync: true });
      this.ctx.log({ event: "commitTurn", sessionId, advancementKey: key, status: outcome.status, messages: msgs.length });
      return { status: outcome.status };
    } catch (err) {
      // Nothing was recorded (or not durably): say so, without throwing. What OpenClaw 2026.9.6
      // does with each answer (dist/context-engine-turn-attempt-*.mjs,
      // commitPendingContextEngineTurn, and dist/registry-*.mjs, wrapResolvedContextEngine):
      // - "committed"/"duplicate": the outbox row is deleted, so the turn would be lost for good.
      // - a thrown error: the registry proxy quarantines the engine for the whole process
      //   (recordContextEngineQuarantine) and every later turn falls back to legacy.
      // - any other status: "invalid commitTurn result status: <status>" is caught inside
      //   commitPendingContextEngineTurn; the row stays queued (attempt_count + 1, last_error),
      //   the host warns "durable turn advancement remains queued", and retries it before the
      //   next turn (drainPendingContextEngineTurnsBeforeRun); if it still fails, only that turn
      //   is served by legacy. The user's turn is never failed and nothing is lost.
      // So a failed commit answers the documented status "deferred" (see README).
      const reason = `${err?.code ?? "error"}: ${err?.message ?? err}`;
      this.ctx.logger?.warn?.(`cachefold: commitTurn not recorded (${reason}); answering "deferred" so OpenClaw keeps the turn queued and retries it`);
      this.ctx.log({ event: "error", where: "commitTurn", code: err?.code ?? null, message: String(err?.message ?? err), status: "deferred" });
      return { status: "deferred", reason };
    }
  }

  // Host compaction. OpenClaw 2026.9.6 calls compact() on four paths, none with a message list
  // (docs/host-integration.md has the call sites):
  //  - pre-turn preflight (`runSessionCompactionIfNeeded`, dist/agent-runner-memory-*.mjs): when
  //    the last call's prompt + output + the new prompt reach `window − min(20000, window/4)`,
  //    or the transcript bytes reach `compaction.maxActiveTranscriptBytes`; force,
  //    preflightRequired, trigger "budget". Unless the result is `ok && compacted` or a benign
  //    skip (`isBenignCompactionSkipResult`, dist/compact-reasons-*.mjs: "below threshold",
  //    "already under target", "already compacted", or ok + "nothing to compact"), the host
  //    throws "Preflight compaction required but failed" and the turn fails;
  //  - in-run recovery after a provider overflow, a timeout or the run's own budget
  //    (`runContextEngineCompactionRecovery`, dist/embedded-agent-*.mjs): the run retries only
  //    when the result is compacted;
  //  - the user's /compact (trigger "manual");
  //  - `openclaw agent --local` and CLI compaction (dist/cli-compaction-*.mjs), same contract.
  // So: when a fold is possible it is recorded now and emitted by the next assemble (the
  // bytes are only there), answered `compacted` with the projected size; when cachefold has
  // nothing to fold, the host's own compaction takes over (what `legacy` does); and only
  // when that is unavailable too, an `ok` "nothing to compact" that lets the turn go on.
  async compact(params) {
    if (!this.info.ownsCompaction) {
      // Not owning compaction: a no-op compact() would leave the host unable to recover from an
      // overflow, so hand it to the host's built-in compaction (what `legacy` does).
      const delegated = await delegateToRuntime(params);
      if (delegated) return delegated;
    }
    const sessionId = String(params?.sessionId ?? "");
    if (Array.isArray(params?.messages)) return this.#compactWithMessages(params, sessionId);
    // In-run recovery retries the call at once, and the tool-loop assemble that follows hands
    // our own output back (an echo, which cannot be re-folded): the host's compaction rebuilds
    // the run's messages from the transcript, so it goes first there.
    const inRun = params?.runtimeContext?.attempt !== undefined || ["overflow", "timeout"].includes(params?.runtimeContext?.trigger);
    if (inRun) {
      const delegated = await delegateToRuntime(params);
      if (delegated?.ok && delegated.compacted) {
        this.ctx.log({ event: "compact", sessionId, path: "in-run", delegated: true });
        return delegated;
      }
    }
    let answer = null;
    let failure = null;
    try {
      if (!sessionId) throw Object.assign(new Error("compact without sessionId"), { code: "CACHEFOLD_INPUT" });
      answer = await withSession(this.ctx, sessionId, async (h) =>
        h.session.compactRequest(JSON.stringify({
          model: modelOf(params),
          tokenBudget: finiteOrNull(params.tokenBudget),
          currentTokenCount: finiteOrNull(params.currentTokenCount),
          contextWindow: windowOf(params) ?? (params.runtimeContext?.preflightCompactionTrigger ? finiteOrNull(params.tokenBudget) : null),
          nowMs: nowMs(),
        })),
      );
    } catch (err) {
      failure = err;
      this.ctx.log({ event: "error", where: "compact", message: String(err?.message ?? err) });
    }
    const trigger = params?.runtimeContext?.forceReason ?? params?.runtimeContext?.trigger ?? null;
    this.ctx.log({ event: "compact", sessionId, trigger, currentTokenCount: params?.currentTokenCount ?? null, answer });
    if (answer?.pending) {
      return {
        ok: true,
        compacted: true,
        reason: "cachefold appends a fold at the next assemble",
        result: {
          tokensBefore: finiteOrNull(params.currentTokenCount) ?? answer.tokensBefore,
          tokensAfter: answer.tokensAfter,
          ...(answer.summary ? { summary: answer.summary } : {}),
          details: { engine: "cachefold", deferred: true, hostThreshold: answer.hostThreshold ?? null },
        },
      };
    }
    // Nothing cachefold can fold (or the core failed): the host's compaction, as legacy.
    const delegated = inRun ? null : await delegateToRuntime(params);
    if (delegated?.ok && delegated.compacted) return delegated;
    const why = failure ? `cachefold error: ${failure.message ?? failure}` : answer?.reason ?? "no history recorded";
    const host = delegated ? `; host compaction: ${delegated.reason ?? "not compacted"}` : "";
    return { ok: true, compacted: false, reason: `nothing to compact (${why}${host})` };
  }

  async #compactWithMessages(params, sessionId) {
    try {
      const messages = params.messages;
      const { plan } = await withSession(this.ctx, sessionId, async (h) =>
        runPlan(this.ctx, h, messages, { count: messages.length, model: modelOf(params), tokenBudget: params.tokenBudget ?? null, nowMs: nowMs(), contextWindow: windowOf(params) }, { compact: true, force: params.force !== false, sessionId, sessionKey: params.sessionKey }),
      );
      this.ctx.log({ event: "compact", sessionId, report: plan.report ?? null });
      const fold = plan.report?.fold;
      return {
        ok: true,
        compacted: !!fold,
        reason: fold ? undefined : "nothing to compact (no cut point after the head)",
        result: { tokensBefore: plan.report?.tokensBefore ?? plan.estimatedTokens ?? 0, tokensAfter: plan.estimatedTokens ?? 0, summary: fold?.summary },
      };
    } catch (err) {
      this.ctx.log({ event: "error", where: "compact", message: String(err?.message ?? err) });
      return { ok: true, compacted: false, reason: `nothing to compact (cachefold error: ${err?.message ?? err})` };
    }
  }

  async maintain(params) {
    const none = { changed: false, bytesFreed: 0, rewrittenEntries: 0 };
    try {
      const sessionId = String(params.sessionId ?? "");
      await captureAfterTurn(this.ctx, params, { factoryCtx: this.factoryCtx });
      const llm = params.runtimeContext?.llm;
      if (!sessionId || !llm?.complete) return none;
      const reasons = [];
      // Layer-2 topic check first (one short call); each step fails on its own, never the turn.
      if (this.ctx.config.topics?.useLlm === true) {
        const r = await this.#topicCheck(sessionId, llm);
        if (r) reasons.push(r);
      }
      if (this.ctx.config.summary?.useLlm !== false) {
        const r = await this.#summary(sessionId, llm);
        if (r) reasons.push(r);
      }
      return reasons.length ? { ...none, reason: reasons.join("; ") } : none;
    } catch (err) {
      this.ctx.log({ event: "error", where: "maintain", message: String(err?.message ?? err) });
      return none;
    }
  }

  async #summary(sessionId, llm) {
    try {
      const req = await withSession(this.ctx, sessionId, async (h) => h.session.summaryRequest(nowMs()) ?? null);
      if (!req) return null;
      let text = "";
      let ok = false;
      try {
        const res = await withTimeout(
          llm.complete({
            systemPrompt: req.system,
            messages: [{ role: "user", content: req.prompt }],
            maxTokens: req.maxTokens,
            temperature: 0.2,
            purpose: "cachefold fold summary",
          }),
          req.timeoutMs,
          "fold summary",
        );
        text = String(res?.text ?? "");
        ok = text.trim().length > 0;
      } catch (err) {
        this.ctx.log({ event: "summary", sessionId, ok: false, message: String(err?.message ?? err) });
      }
      await withSession(this.ctx, sessionId, async (h) => h.session.acceptSummary(req.id, text, ok, nowMs()));
      this.ctx.log({ event: "summary", sessionId, id: req.id, ok, chars: text.length });
      return ok ? "summary prepared" : "summary failed; extractive fallback";
    } catch (err) {
      this.ctx.log({ event: "error", where: "maintain", message: String(err?.message ?? err) });
      return null;
    }
  }

  // Layer 2 of topic segmentation (topics.useLlm): the core picks the turn and builds the
  // prompt, journals the request (rate limit) and the parsed answer (replay-safe).
  async #topicCheck(sessionId, llm) {
    try {
      const req = await withSession(this.ctx, sessionId, async (h) => (typeof h.session.topicRequest === "function" ? h.session.topicRequest(nowMs()) : null) ?? null);
      if (!req) return null;
      let text = "";
      let ok = false;
      try {
        const res = await withTimeout(
          llm.complete({
            systemPrompt: req.system,
            messages: [{ role: "user", content: req.prompt }],
            maxTokens: req.maxTokens,
            temperature: 0,
            purpose: "cachefold topic label",
          }),
          req.timeoutMs,
          "topic label",
        );
        text = String(res?.text ?? "");
        ok = text.trim().length > 0;
      } catch (err) {
        this.ctx.log({ event: "topicCheck", sessionId, ok: false, message: String(err?.message ?? err) });
      }
      const status = await withSession(this.ctx, sessionId, async (h) => h.session.acceptTopic(req.id, text, ok, nowMs()));
      this.ctx.log({ event: "topicCheck", sessionId, id: req.id, turn: req.turn, status });
      return `topic check ${req.turn}: ${status}`;
    } catch (err) {
      this.ctx.log({ event: "error", where: "maintain", message: String(err?.message ?? err) });
      return null;
    }
  }

  async afterTurn() {}

  async dispose() {}
}

// delegateCompactionToRuntime lives in the host package; resolve it from the host's own entry
// point (plugins are imported from a copy outside the host's node_modules).
async function delegateToRuntime(params) {
  const specs = ["openclaw/plugin-sdk/core"];
  try {
    specs.push(pathToFileURL(createRequire(process.argv[1] ?? import.meta.url).resolve("openclaw/plugin-sdk/core")).href);
  } catch {
    /* host entry not resolvable */
  }
  for (const spec of specs) {
    try {
      const mod = await import(spec);
      if (typeof mod.delegateCompactionToRuntime === "function") return await mod.delegateCompactionToRuntime(params);
    } catch {
      /* try the next way */
    }
  }
  return null;
}

function finiteOrNull(v) {
  return Number.isFinite(v) && v >= 0 ? Math.floor(v) : null;
}

// ---- read-only views for the agent tools (js/tools.js) ----------------------------------------

/** Stats of one session (as the core reports them), or null when the session is unknown. */
export async function sessionStats(ctx, sessionId) {
  const { core, paths } = await pathsFor(ctx, sessionId);
  const { snapshot, journal } = store.readState(paths);
  if (!snapshot && !journal) return null;
  const s = core.Session.restore(ctx.configJson, sessionId, snapshot, journal);
  try {
    return s.stats();
  } finally {
    s.free?.();
  }
}

/**
 * A read-only view of one session (`topicsView`, `preview`, `recoverPlan`): the core renders it
 * from the stored state. Null when the session has no state yet.
 */
export async function sessionView(ctx, sessionId, method, ...args) {
  const { core, paths } = await pathsFor(ctx, sessionId);
  const { snapshot, journal } = store.readState(paths);
  if (!snapshot && !journal) return null;
  const s = core.Session.restore(ctx.configJson, sessionId, snapshot, journal);
  try {
    return s[method](...args);
  } finally {
    s.free?.();
  }
}

/** `cachefold_pin`: journal a pin of turn `id` under the session lock; the core's answer. */
export async function pinTurn(ctx, sessionId, id) {
  const { paths } = await pathsFor(ctx, sessionId);
  const { snapshot, journal } = store.readState(paths);
  if (!snapshot && !journal) return null;
  const answer = await withSession(ctx, sessionId, async (h) => h.session.pinTurn(id));
  ctx.log?.({ event: "pin", sessionId, turn: id, pinned: answer?.details?.pinned ?? null });
  return answer;
}

/** Folded regions of a session as searchable documents. */
export async function foldedDocs(ctx, sessionId) {
  const { paths } = await pathsFor(ctx, sessionId);
  return store.listFolds(paths).map((id) => ({ id, kind: "fold", text: store.readFold(paths, id) ?? "" }));
}

/** Raw text of one folded region (JSON lines of the original messages), or null. */
export async function foldText(ctx, sessionId, foldId) {
  return store.readFold((await pathsFor(ctx, sessionId)).paths, foldId);
}

/**
 * Ask for a fold now (`/cachefold fold`): recorded through the core as compact() does
 * (compactRequest), emitted by the session's next assemble. Returns the core's answer.
 */
export async function requestFold(ctx, sessionId, { model = null } = {}) {
  const answer = await withSession(ctx, sessionId, async (h) => h.session.compactRequest(JSON.stringify({ model, tokenBudget: null, currentTokenCount: null, contextWindow: null, nowMs: nowMs() })));
  ctx.log({ event: "compact", sessionId, trigger: "command", answer });
  return answer;
}
