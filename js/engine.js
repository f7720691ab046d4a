// OpenClaw context-engine adapter: lifecycle calls → core Session calls; state via engine/state.js.
//
// Boundary design (measured, see README "How it works"): converting whole histories into wasm
// costs ~25 µs per message, so the core keeps a compact per-message record and asks (through
// the source callback of `Session.plan`) only for the messages it has not seen plus a few
// checks; JS stringifies just those. The core answers with a plan of host indices and synthetic
// messages; the host's own objects are returned untouched, so their bytes cannot drift.
//
// Engine instances live one turn (docs/host-integration.md); the sessions they serve are kept
// by js/engine/state.js (cache, lock, journal, snapshots). Nothing here throws into the host: on any error the turn passes history through unchanged
// (OpenClaw quarantines engines that throw) and the state on disk is kept.
import { loadCore } from "./core.js";
import * as store from "./store.js";
import { captureAfterTurn, lessonsAddition, withAddition } from "./lessons.js";
import { withTimeout } from "./io/files.js";
import { cutHistoryMessage } from "./oversize.js";
import { delegateToRuntime } from "./host/openclaw.js";
import { nowMs, withSession } from "./engine/state.js";

const VERSION = "0.1.0";

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
/**
 * When this process last assembled a request on each model (any session). The host sends some
 * requests as sessions of their own with another session's prefix (a skill review after a
 * turn), so a provider's cache can be alive although the session itself sent nothing: the core
 * prices its lifetime from the latest of these (`lastRequestMs`). Keyed by model, so it errs
 * towards "alive" (a rewrite then waits for a fold that pays), never towards a rewrite priced
 * as free while the cache still holds the prefix.
 */
const sentOn = new Map();
function noteSent(model, now) {
  if (!model || !Number.isFinite(now)) return;
  sentOn.delete(model);
  sentOn.set(model, now);
  if (sentOn.size > 256) sentOn.delete(sentOn.keys().next().value);
}

const NEWLINE = Buffer.from("\n");

function runPlan(ctx, h, messages, header, { compact = false, force = false, sessionId, sessionKey } = {}) {
  const ref = { session: sessionKey ?? sessionId, sessionId };
  const onCut = (cuts) => ctx.log({ event: "tool_result_cut", path: "assemble", sessionId, cuts });
  const view = (i) => cutHistoryMessage(ctx.stateDir, messages[i], ref, onCut);
  // The core is given each text as UTF-8 bytes (encoded natively, copied into the module once;
  // a string would be encoded by the glue char by char). The bytes are kept for the fold file
  // when they are the original message's (not a cut copy's): a folded region is then neither
  // stringified nor encoded a second time.
  const sent = new Map();
  const jsonOf = (i) => {
    const m = view(i);
    const bytes = Buffer.from(messageJson(m), "utf8");
    if (m === messages[i]) sent.set(i, bytes);
    return bytes;
  };
  // Synthetic texts (fold records) are the same turn after turn: the session keeps the last
  // plan's by key, and the core sends only the others.
  const kept = h.synthetic;
  if (kept) header.known = [...kept.keys()];
  const plan = h.session.plan(JSON.stringify(header), compact, force, jsonOf);
  for (const w of plan.foldWrites ?? []) {
    const lines = [];
    for (let i = w.from, end = Math.min(w.to, messages.length); i < end; i++) {
      lines.push(sent.get(i) ?? Buffer.from(messageJson(messages[i]), "utf8"), NEWLINE);
    }
    store.writeFold(h.paths, w.foldId, lines.length ? lines : NEWLINE);
  }
  const keys = plan.syntheticKeys ?? [];
  const texts = (plan.synthetic ?? []).map((s, k) => (s === "" && kept?.has(keys[k]) ? kept.get(keys[k]) : s));
  if (kept) {
    kept.clear();
    for (let k = 0; k < texts.length; k++) if (keys[k]) kept.set(keys[k], texts[k]);
  }
  // Parsed on every call: the host gets objects of its own to change.
  const synthetic = texts.map((s) => JSON.parse(s));
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
      const now = nowMs();
      const lastRequestMs = (model && sentOn.get(model)) ?? null;
      const result = await withSession(this.ctx, sessionId, async (h) =>
        runPlan(this.ctx, h, messages, { count: messages.length, model, tokenBudget: params.tokenBudget ?? null, nowMs: now, contextWindow: windowOf(params), lastRequestMs, promptPending: typeof params.prompt === "string" }, { sessionId, sessionKey: params.sessionKey }),
      );
      const { plan, out } = result;
      noteSent(model, now);
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

  /** The host's compaction answered for us: logged as our decision, returned as the answer. */
  #delegated(sessionId, trigger, path, answer) {
    this.ctx.log({ event: "compact", sessionId, trigger, path, delegated: true, compacted: !!answer.compacted });
    return answer;
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
    const sessionId = String(params?.sessionId ?? "");
    const trigger = params?.runtimeContext?.forceReason ?? params?.runtimeContext?.trigger ?? null;
    if (!this.info.ownsCompaction) {
      // Not owning compaction: a no-op compact() would leave the host unable to recover from an
      // overflow, so hand it to the host's built-in compaction (what `legacy` does).
      const delegated = await delegateToRuntime(params);
      if (delegated) return this.#delegated(sessionId, trigger, "delegated", delegated);
    }
    if (Array.isArray(params?.messages)) return this.#compactWithMessages(params, sessionId);
    // In-run recovery retries the call at once, and the tool-loop assemble that follows hands
    // our own output back (an echo, which cannot be re-folded): the host's compaction rebuilds
    // the run's messages from the transcript, so it goes first there.
    const inRun = params?.runtimeContext?.attempt !== undefined || ["overflow", "timeout"].includes(params?.runtimeContext?.trigger);
    if (inRun) {
      const delegated = await delegateToRuntime(params);
      if (delegated?.ok && delegated.compacted) return this.#delegated(sessionId, trigger, "in-run", delegated);
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
    // Declined with room to spare (`fits`: under the host's trigger): a benign skip in the host's
    // words, not the host's compaction, whose summary would replace the history for nothing.
    if (answer?.fits && !inRun) {
      const reason = String(answer.reason ?? "");
      return { ok: true, compacted: false, reason: answer.alreadyCompacted ? reason : `nothing to compact (${reason || "no fold saves anything"})` };
    }
    // Nothing to fold and the context needs room (or the core failed): the host's compaction.
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

  /** The host's LLM on a core request ({system, prompt, maxTokens, timeoutMs}): {text, ok}; a failure is logged as `event`. */
  async #complete(llm, req, { sessionId, event, temperature, purpose, label }) {
    try {
      const res = await withTimeout(
        llm.complete({ systemPrompt: req.system, messages: [{ role: "user", content: req.prompt }], maxTokens: req.maxTokens, temperature, purpose }),
        req.timeoutMs,
        label,
      );
      const text = String(res?.text ?? "");
      return { text, ok: text.trim().length > 0 };
    } catch (err) {
      this.ctx.log({ event, sessionId, ok: false, message: String(err?.message ?? err) });
      return { text: "", ok: false };
    }
  }

  async #summary(sessionId, llm) {
    try {
      const req = await withSession(this.ctx, sessionId, async (h) => h.session.summaryRequest(nowMs()) ?? null);
      if (!req) return null;
      const { text, ok } = await this.#complete(llm, req, { sessionId, event: "summary", temperature: 0.2, purpose: "cachefold fold summary", label: "fold summary" });
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
      const { text, ok } = await this.#complete(llm, req, { sessionId, event: "topicCheck", temperature: 0, purpose: "cachefold topic label", label: "topic label" });
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

function finiteOrNull(v) {
  return Number.isFinite(v) && v >= 0 ? Math.floor(v) : null;
}
