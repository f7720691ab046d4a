// Workspace lessons: the session side (the decision at the first assemble, capture after turns)
// of src/lessons/; the files are lessons/files.js, the redaction lessons/redact.js.
//
// Layout (one Markdown file per lesson, frontmatter parsed by the core):
//   <workspace>/.cachefold/lessons/<name>.md              project scope (meant to be committed)
//   <workspace>/.cachefold/lessons/_candidates/<name>.md  captured, not yet promoted
//   <stateDir>/lessons/…                                  personal global scope, same layout
//   <stateDir>/sessions/<safe>/lessons.json               the session's decision (exact text)
//
// Cache rule: the addition is decided once, at the first assemble of a fresh session, and the
// recorded text is returned byte for byte by every later assemble of that session (in any
// process: the file is created exclusively and whole, the first writer wins; a second copy is
// kept beside it, so a damaged lessons.json never drops the session's lessons). Nothing here
// throws into a turn: lessonsAddition() and captureAfterTurn() turn every failure into "no lessons".
import { renameSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { loadCore } from "./core.js";
import * as store from "./store.js";
import { readRegular, withTimeout, writeFileAtomic } from "./io/files.js";
import { hostTranscript, transcriptDb } from "./host/openclaw.js";
import { CANDIDATES, autoPromote, gatherInputs, readAll, readLesson, scopes, writeCandidates } from "./lessons/files.js";
import { redact, redactSync } from "./lessons/redact.js";

export { CANDIDATES, PROJECT_DIR, autoPromote, find, gatherInputs, inputFor, inspect, promote, readAll, remove, scopes, writeCandidates } from "./lessons/files.js";

const decisions = new Map(); // sessionId -> decision (this process)
const pending = new Map(); // sessionId -> in-flight decision promise
const MAX_DECISION_BYTES = 1 << 20;
const nowIso = () => new Date().toISOString();

// ---- the session's decision (assemble) --------------------------------------------------------

function decisionPath(core, ctx, sessionId) {
  return join(store.sessionPaths(ctx.stateDir, core.sessionDirName(sessionId)).dir, "lessons.json");
}

function parseDecision(text) {
  try {
    const d = JSON.parse(text ?? "");
    return d && typeof d.text === "string" ? d : null;
  } catch {
    return null;
  }
}

/** The decision recorded in a session dir (lessons.json, else its copy), read only; or null. */
export function recordedDecision(dir) {
  return readDecision(join(dir, "lessons.json"), false);
}

/** The recorded decision: lessons.json, else its copy (which then repairs lessons.json unless `repair` is false); or null. */
function readDecision(path, repair = true) {
  const read = (p) => {
    try {
      return parseDecision(readRegular(p, { maxBytes: MAX_DECISION_BYTES }));
    } catch {
      return null;
    }
  };
  const d = read(path);
  if (d) return d;
  const copy = read(`${path}.copy`);
  if (copy && repair) {
    try {
      writeFileAtomic(path, `${JSON.stringify(copy)}\n`);
    } catch {
      /* served from the copy until it can be repaired */
    }
  }
  return copy;
}

/**
 * Record the decision: written whole under a private name, then linked into place (the link
 * fails when another process recorded first: its decision is returned). A copy is kept beside.
 */
function recordDecision(path, d) {
  const text = `${JSON.stringify(d)}\n`;
  try {
    writeFileAtomic(path, text, { exclusive: true });
  } catch (err) {
    if (err.code !== "EEXIST") throw err;
    const other = readDecision(path);
    if (other) return other;
    writeFileAtomic(path, text); // damaged and no copy: this decision replaces it
  }
  try {
    writeFileAtomic(`${path}.copy`, text);
  } catch {
    /* lessons.json itself is whole */
  }
  return d;
}

function workspaceOf(params, factoryCtx) {
  const rc = params?.runtimeContext ?? {};
  return rc.workspaceDir ?? factoryCtx?.workspaceDir ?? rc.cwd ?? null;
}

/** True unless both workspaces are known and differ. */
function sameWorkspace(a, b) {
  return !a || !b || resolve(a) === resolve(b);
}

async function decide(ctx, params, factoryCtx, sessionId) {
  const core = await loadCore();
  const path = decisionPath(core, ctx, sessionId);
  const workspace = workspaceOf(params, factoryCtx);
  const recorded = readDecision(path);
  if (recorded) {
    if (sameWorkspace(recorded.workspace, workspace)) return recorded;
    // The same session id in another workspace: never the first workspace's lessons.
    return { v: 1, sessionId, workspace, inject: false, text: "", reason: `this session id decided its lessons in another workspace (${recorded.workspace})`, elsewhere: true };
  }
  const messages = Array.isArray(params.messages) ? params.messages : [];
  const request = typeof params.prompt === "string" ? params.prompt : "";
  const base = { v: 1, sessionId, decidedAt: nowIso(), workspace, inject: false, text: "", tokens: 0, chosen: [] };
  let d;
  // The core's rules first (a session under way, a request that is not code-gen): no lesson
  // file is read for those.
  const gate = core.lessonsGate(request, messages.length);
  if (gate) {
    const cls = gate.classification;
    d = cls ? { ...base, class: cls.class, confident: cls.confident, reason: gate.reason, signals: cls.signals } : { ...base, reason: gate.reason };
  } else {
    autoPromote(core, ctx, workspace);
    const files = readAll(ctx, workspace, { candidates: false });
    const inputs = gatherInputs(core, workspace, files.map((f) => f.text));
    const r = core.lessonsDecide(JSON.stringify({
      request,
      maxTokens: Number(ctx.config.lessons?.maxInjectTokens ?? 200),
      lessons: files.map((f) => ({ scope: f.scope, file: f.file, text: f.text })),
      inputs,
      nowIso: base.decidedAt,
    }));
    for (const bad of r.invalid) {
      ctx.logger?.warn?.(`cachefold: lesson ${bad.scope}/${bad.file} skipped: ${bad.error}`);
    }
    queueRefresh(core, ctx, workspace, r.stale);
    const { classification: c, stale, ...rest } = r;
    d = { ...base, class: c.class, confident: c.confident, signals: c.signals, ...rest, stale: stale.map((s) => ({ name: s.name, scope: s.scope, changed: s.changed })) };
  }
  // Nothing reaches the system prompt, the file or the log unredacted.
  d.text = await redact(d.text, core);
  d.sha1 = core.sha1Hex(d.text);
  const out = recordDecision(path, d);
  ctx.log({ event: "lessons_decision", ...out, request: redactSync(request, core).slice(0, 200) });
  return out;
}

function queueRefresh(core, ctx, workspace, stale) {
  for (const s of stale) {
    try {
      const sc = scopes(ctx, workspace).find((x) => x.scope === s.scope);
      if (!sc) continue;
      const path = join(sc.dir, CANDIDATES, `${s.name}.md`);
      const old = readLesson(path);
      if (old == null || old.includes("\nrefresh-of: ")) writeFileAtomic(path, redactSync(s.refresh, core), { mode: 0o600 });
    } catch (err) {
      ctx.log({ event: "lessons_skip", refresh: s.name, error: String(err?.message ?? err) });
    }
  }
}

/**
 * The session's `systemPromptAddition` from lessons, or undefined. Decided at the first
 * assemble of a fresh session and replayed byte for byte afterwards. Never throws.
 */
export async function lessonsAddition(ctx, params, factoryCtx) {
  try {
    if (ctx.config?.lessons?.enabled === false || ctx.config?.mode === "off") return undefined;
    const sessionId = String(params?.sessionId ?? "");
    if (!sessionId) return undefined;
    let d = decisions.get(sessionId);
    if (d && !sameWorkspace(d.workspace, workspaceOf(params, factoryCtx))) d = null;
    if (!d) {
      let p = pending.get(sessionId);
      if (!p) {
        p = decide(ctx, params, factoryCtx, sessionId).finally(() => pending.delete(sessionId));
        pending.set(sessionId, p);
      }
      d = await p;
      if (!d.elsewhere) decisions.set(sessionId, d);
    }
    return d.inject && d.text ? d.text : undefined;
  } catch (err) {
    ctx.logger?.warn?.(`cachefold: lessons skipped for this session (${err?.message ?? err})`);
    ctx.log({ event: "error", where: "lessons", message: String(err?.message ?? err) });
    return undefined;
  }
}

/** `res` with the lessons text appended to its `systemPromptAddition` (when there is one). */
export function withAddition(res, text) {
  if (text) res.systemPromptAddition = res.systemPromptAddition ? `${res.systemPromptAddition}\n\n${text}` : text;
  return res;
}

/** Forget this process's cached decisions (tests; a new engine process starts empty). */
export function forgetDecisions() {
  decisions.clear();
}

// ---- capture (maintain after a turn, session_end on /new) -----------------------------------
//
// What the capture reads. The core digests a message when an assemble first sees it as history,
// and commitTurn keeps only hashes of the turn, so the engine's own records always lack the last
// turn (in a one-turn session: everything). The host's transcript has it all, so capture digests
// the transcript (OpenClaw's SQLite store, read-only) on a scratch core session; the engine's
// records are the fallback when the transcript cannot be read. OpenClaw 2026.9.6 keeps the
// sessionId across `/new` and appends a `reset` entry, so the transcript of one id holds several
// conversations: the last non-empty one between `reset` entries is the one captured.

const lastCapture = new Map(); // sessionId -> ms

/** A scratch core session that has seen `messages` as history (its digests are the capture input). */
function digestedSession(core, ctx, sessionId, messages) {
  const session = new core.Session(ctx.configJson, sessionId);
  try {
    const header = { count: messages.length, model: null, tokenBudget: null, nowMs: Date.now(), contextWindow: null };
    session.plan(JSON.stringify(header), false, false, (i) => JSON.stringify(messages[i]) ?? "null");
    return session;
  } catch (err) {
    session.free?.();
    throw err;
  }
}

/**
 * Capture candidates from a session's digests (and, when allowed, one bounded LLM call).
 * Rate-limited per session unless `force` (/new). Never throws; returns the names written.
 */
export async function captureAfterTurn(ctx, params, { force = false, factoryCtx = null, hctx = null } = {}) {
  try {
    if (ctx.config?.lessons?.enabled === false) return [];
    const sessionId = String(params?.sessionId ?? "");
    if (!sessionId) return [];
    const core = await loadCore();
    const now = Date.now();
    const every = Number(ctx.config.lessons?.captureIntervalMs ?? 600000);
    const paths = store.sessionPaths(ctx.stateDir, core.sessionDirName(sessionId));
    const stamp = join(paths.dir, "lessons-capture.json");
    let last = lastCapture.get(sessionId) ?? 0;
    try {
      last = Math.max(last, JSON.parse(readRegular(stamp, { maxBytes: 4096 }) ?? "{}").at ?? 0);
    } catch {
      /* never captured */
    }
    if (!force && now - last < every) return [];
    let transcript = null;
    try {
      transcript = await hostTranscript(transcriptDb(params, hctx), sessionId);
    } catch (err) {
      ctx.log({ event: "lessons_capture", sessionId, transcript: false, message: String(err?.message ?? err) });
    }
    const workspace = workspaceOf(params, factoryCtx) ?? params?.workspace ?? readDecision(decisionPath(core, ctx, sessionId))?.workspace ?? transcript?.cwd ?? null;
    if (!workspace) {
      ctx.log({ event: "lessons_capture", sessionId, skipped: "no workspace known" });
      return [];
    }
    let session;
    let source;
    if (transcript?.messages.length) {
      session = digestedSession(core, ctx, sessionId, transcript.messages);
      source = "transcript";
    } else {
      const state = store.storedState(paths);
      if (!state) return []; // nothing happened yet: the rate limit is not spent
      session = core.Session.restore(ctx.configJson, sessionId, state.snapshot, state.journal);
      source = "engine records";
    }
    lastCapture.set(sessionId, now);
    try {
      writeFileAtomic(stamp, `${JSON.stringify({ at: now })}\n`);
    } catch {
      /* the in-process limit still applies */
    }
    const input = JSON.stringify({ sessionId, workspace, nowIso: new Date(now).toISOString() });
    let found;
    let llmReq = null;
    try {
      found = session.captureLessons(input);
      const llm = params.runtimeContext?.llm;
      if (ctx.config.lessons?.useLlm !== false && ctx.config.summary?.useLlm !== false && llm?.complete) {
        const names = readAll(ctx, workspace).map((f) => f.file.replace(/\.md$/, ""));
        llmReq = session.lessonLlmPrompt(JSON.stringify([...new Set(names)]));
      }
    } finally {
      session.free?.();
    }
    if (llmReq) {
      try {
        const res = await withTimeout(
          params.runtimeContext.llm.complete({ systemPrompt: llmReq.system, messages: [{ role: "user", content: llmReq.prompt }], maxTokens: llmReq.maxTokens, temperature: 0, purpose: "cachefold lessons capture" }),
          Number(ctx.config.summary?.timeoutMs ?? 45000),
          "lessons capture LLM call",
        );
        const proposed = core.lessonsParseLlm(String(res?.text ?? ""), input);
        found = found.concat(proposed.filter((p) => !found.some((f) => f.name === p.name)));
      } catch (err) {
        ctx.log({ event: "lessons_capture", sessionId, llm: false, message: String(err?.message ?? err) });
      }
    }
    // Every text of a candidate is redacted (all layers) before it is rendered and written.
    for (const l of found) {
      if (Array.isArray(l.body)) l.body = await Promise.all(l.body.map((line) => redact(line, core)));
      if (typeof l.description === "string") l.description = await redact(l.description, core);
    }
    const written = writeCandidates(core, ctx, workspace, found);
    autoPromote(core, ctx, workspace, now);
    ctx.log({ event: "lessons_capture", sessionId, source, messages: transcript?.messages.length ?? null, found: found.map((l) => l.name), written, force, reason: params?.reason ?? null });
    return written;
  } catch (err) {
    ctx.log({ event: "error", where: "lessons_capture", message: String(err?.message ?? err) });
    return [];
  }
}

// Reasons after which the same sessionId starts a new conversation (OpenClaw 2026.9.6 keeps the
// id across `/new` and `/reset`). Not shutdown / restart (the conversation goes on after them) nor
// compaction (it continues the conversation: a new decision would change its system prompt).
const NEW_CONVERSATION = new Set(["new", "reset", "idle", "daily", "deleted"]);

/**
 * The session's conversation ended (`/new`, `/reset`, idle or daily reset): its lessons decision
 * is archived (`lessons-ended-<ms>.json`), so the next first assemble under the same sessionId
 * decides afresh. Returns the archived decision, or null.
 */
export async function endDecision(ctx, sessionId) {
  try {
    const core = await loadCore();
    decisions.delete(sessionId);
    const path = decisionPath(core, ctx, sessionId);
    const d = readDecision(path);
    if (!d) return null;
    renameSync(path, join(path, "..", `lessons-ended-${Date.now()}.json`));
    rmSync(`${path}.copy`, { force: true });
    return d;
  } catch (err) {
    ctx.log({ event: "error", where: "lessons_end", message: String(err?.message ?? err) });
    return null;
  }
}

/**
 * Hooks: when a session ends (`/new`, `/reset`, idle, Gateway shutdown), capture from it; when
 * its conversation is over and the id will be reused, end its lessons decision first. The
 * event is `{sessionId, sessionKey, messageCount, reason, sessionFile, transcriptArchived,
 * nextSessionId, nextSessionKey}` and the context `{sessionId, sessionKey, agentId}` (2026.9.6:
 * no workspace; the decision recorded it, else the transcript's cwd).
 */
export function registerLessons(api, ctx) {
  if (typeof api.on !== "function") return;
  api.on("session_end", async (event, hctx) => {
    const sessionId = event?.sessionId ?? hctx?.sessionId;
    if (!sessionId) return;
    const reason = event?.reason ?? null;
    const reused = NEW_CONVERSATION.has(reason) || (event?.nextSessionId && event.nextSessionId === sessionId);
    // End the decision before the (slower) capture: the next turn may start at once.
    const ended = reused ? await endDecision(ctx, sessionId) : null;
    const workspace = hctx?.workspaceDir ?? event?.workspaceDir ?? ended?.workspace ?? null;
    ctx.log({
      event: "lessons_session_end",
      sessionId,
      reason,
      nextSessionId: event?.nextSessionId ?? null,
      decisionEnded: !!ended,
      // What the host sent (the fields were read from 2026.9.6's dist, checked in the e2e).
      eventKeys: Object.keys(event ?? {}).filter((k) => event[k] !== undefined).sort(),
      contextKeys: Object.keys(hctx ?? {}).filter((k) => hctx[k] !== undefined).sort(),
    });
    await captureAfterTurn(ctx, { sessionId, reason, workspace, agentId: hctx?.agentId, runtimeContext: { workspaceDir: workspace ?? undefined } }, { force: true, hctx });
  });
}
