// Workspace lessons: the file side (read, write, fingerprint inputs) of src/lessons/.
//
// Layout (one Markdown file per lesson, frontmatter parsed by the core):
//   <workspace>/.cachefold/lessons/<name>.md              project scope (meant to be committed)
//   <workspace>/.cachefold/lessons/_candidates/<name>.md  captured, not yet promoted
//   <stateDir>/lessons/…                                  personal global scope, same layout
//   <stateDir>/sessions/<safe>/lessons.json               the session's decision (exact text)
//
// Cache rule: the addition is decided once, at the first assemble of a fresh session, and the
// recorded text is returned byte for byte by every later assemble of that session (in any
// process: the file is created exclusively, the first writer wins). Nothing here throws into a
// turn: lessonsAddition() and captureAfterTurn() turn every failure into "no lessons".
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, statSync, unlinkSync, writeSync } from "node:fs";
import { homedir } from "node:os";
import { isAbsolute, join, relative, resolve } from "node:path";
import { loadCore } from "./core.js";
import * as store from "./store.js";

export const PROJECT_DIR = join(".cachefold", "lessons");
const CANDIDATES = "_candidates";
const REJECTED = ".rejected.json";
const MAX_INPUT_BYTES = 8 << 20;
const decisions = new Map(); // sessionId -> decision (this process)
const pending = new Map(); // sessionId -> in-flight decision promise

// ---- paths and files -----------------------------------------------------------------------

/** The lesson scopes for a workspace (project first) and the state dir. */
export function scopes(ctx, workspace) {
  const out = [];
  if (workspace) out.push({ scope: "project", dir: join(resolve(workspace), PROJECT_DIR), mode: 0o644 });
  out.push({ scope: "global", dir: join(ctx.stateDir, "lessons"), mode: 0o600 });
  return out;
}

function writeFileAtomic(path, text, mode) {
  mkdirSync(join(path, ".."), { recursive: true });
  const tmp = `${path}.tmp-${process.pid}`;
  const fd = openSync(tmp, "w", mode);
  try {
    writeSync(fd, text);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, path);
}

function mdFiles(dir) {
  try {
    return readdirSync(dir, { withFileTypes: true })
      .filter((d) => d.isFile() && d.name.endsWith(".md"))
      .map((d) => d.name)
      .sort();
  } catch {
    return [];
  }
}

/** Lesson files of every scope: `[{scope, kind: "lesson"|"candidate", file, path, text}]`. */
export function readAll(ctx, workspace, { candidates = true } = {}) {
  const out = [];
  for (const s of scopes(ctx, workspace)) {
    const dirs = [["lesson", s.dir]];
    if (candidates) dirs.push(["candidate", join(s.dir, CANDIDATES)]);
    for (const [kind, dir] of dirs) {
      for (const file of mdFiles(dir)) {
        const path = join(dir, file);
        try {
          out.push({ scope: s.scope, kind, file, path, text: readFileSync(path, "utf8") });
        } catch {
          /* vanished or unreadable: skipped */
        }
      }
    }
  }
  return out;
}

function rejected(dir) {
  try {
    return new Set(JSON.parse(readFileSync(join(dir, CANDIDATES, REJECTED), "utf8")));
  } catch {
    return new Set();
  }
}

function reject(dir, name, mode) {
  const set = rejected(dir);
  set.add(name);
  writeFileAtomic(join(dir, CANDIDATES, REJECTED), `${JSON.stringify([...set].sort())}\n`, mode);
}

// ---- fingerprint inputs --------------------------------------------------------------------

function inside(root, p) {
  const abs = resolve(root, p);
  const rel = relative(root, abs);
  return rel.startsWith("..") || isAbsolute(rel) ? null : abs;
}

function canonical(v) {
  if (Array.isArray(v)) return `[${v.map(canonical).join(",")}]`;
  if (v && typeof v === "object") return `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${canonical(v[k])}`).join(",")}}`;
  return JSON.stringify(v);
}

function listing(abs) {
  return readdirSync(abs, { withFileTypes: true })
    .map((d) => (d.isDirectory() ? `${d.name}/` : d.name))
    .sort()
    .join("\n");
}

/**
 * The content of one fingerprint entry, or null when it does not exist: a directory = its sorted
 * entry names, `file#a.b` = the canonical JSON of that field, a file = its bytes (latin-1, so
 * every byte counts).
 */
export function inputFor(workspace, entry) {
  try {
    if (!workspace) return null;
    const hash = entry.indexOf("#");
    const path = hash >= 0 ? entry.slice(0, hash) : entry;
    const abs = inside(resolve(workspace), path);
    if (!abs) return null;
    if (hash >= 0) {
      let v = JSON.parse(readFileSync(abs, "utf8"));
      for (const k of entry.slice(hash + 1).split(".").filter(Boolean)) {
        if (v === null || typeof v !== "object" || !Object.hasOwn(v, k)) return null;
        v = v[k];
      }
      return canonical(v);
    }
    const st = statSync(abs);
    if (st.isDirectory()) return listing(abs);
    if (path.endsWith("/")) return null;
    if (st.size > MAX_INPUT_BYTES) return `large file: ${st.size} bytes, mtime ${st.mtimeMs}`;
    return readFileSync(abs).toString("latin1");
  } catch {
    return null;
  }
}

/** Inputs for every entry of every lesson text that parses. */
export function gatherInputs(core, workspace, texts) {
  const entries = new Set();
  for (const t of texts) {
    try {
      for (const e of core.lessonParse(t).fingerprint) entries.add(e);
    } catch {
      /* invalid files are reported by the caller */
    }
  }
  return [...entries].sort().map((entry) => ({ entry, content: inputFor(workspace, entry) }));
}

// ---- operations shared by capture, injection and the CLI ------------------------------------

function nowIso() {
  return new Date().toISOString();
}

/** Find a lesson or candidate by name: `[{scope, kind, path, text, dir, mode}]`. */
export function find(ctx, workspace, name) {
  const out = [];
  for (const s of scopes(ctx, workspace)) {
    for (const [kind, dir] of [["lesson", s.dir], ["candidate", join(s.dir, CANDIDATES)]]) {
      const path = join(dir, `${name}.md`);
      if (existsSync(path)) out.push({ scope: s.scope, kind, path, text: readFileSync(path, "utf8"), dir: s.dir, mode: s.mode });
    }
  }
  return out;
}

/** Promote a candidate (REFRESH notes and refresh-of dropped; hashed now if it never was). */
export function promote(core, ctx, workspace, name) {
  const c = find(ctx, workspace, name).find((x) => x.kind === "candidate");
  if (!c) return null;
  const l = core.lessonParse(c.text);
  l.refreshOf = "";
  l.body = l.body.filter((line) => !line.startsWith("- REFRESH:"));
  let text = core.lessonRender(JSON.stringify(l));
  if (!l.fingerprintHash && l.fingerprint.length) text = core.lessonStamp(text, JSON.stringify(gatherInputs(core, workspace, [text])));
  const path = join(c.dir, `${l.name}.md`);
  writeFileAtomic(path, text, c.mode);
  unlinkSync(c.path);
  return { name: l.name, scope: c.scope, path };
}

/** Remove a lesson and/or candidate; a removed candidate is remembered as rejected. */
export function remove(ctx, workspace, name, { scope } = {}) {
  const hits = find(ctx, workspace, name).filter((x) => !scope || x.scope === scope);
  for (const h of hits) {
    unlinkSync(h.path);
    if (h.kind === "candidate") reject(h.dir, name, h.mode);
  }
  return hits.map((h) => ({ scope: h.scope, kind: h.kind, path: h.path }));
}

/** Every lesson and candidate with its parse result and staleness. */
export function inspect(core, ctx, workspace) {
  const files = readAll(ctx, workspace);
  const inputs = gatherInputs(core, workspace, files.map((f) => f.text));
  return files.map((f) => {
    try {
      const l = core.lessonParse(f.text);
      const st = core.lessonStaleness(f.text, JSON.stringify(inputs));
      return { ...f, lesson: l, stale: st.stale, changed: st.changed };
    } catch (err) {
      return { ...f, error: err.message };
    }
  });
}

/** Promote candidates older than lessons.autoPromoteAfterMs, fresh and never rejected. */
export function autoPromote(core, ctx, workspace, now = Date.now()) {
  const after = Number(ctx.config.lessons?.autoPromoteAfterMs ?? 0);
  if (!(after > 0)) return [];
  const done = [];
  for (const s of scopes(ctx, workspace)) {
    const no = rejected(s.dir);
    for (const file of mdFiles(join(s.dir, CANDIDATES))) {
      try {
        const text = readFileSync(join(s.dir, CANDIDATES, file), "utf8");
        const l = core.lessonParse(text);
        const at = Date.parse(l.capturedAt);
        if (l.refreshOf || no.has(l.name) || !(now - at >= after)) continue;
        if (core.lessonStaleness(text, JSON.stringify(gatherInputs(core, workspace, [text]))).stale) continue;
        const p = promote(core, ctx, workspace, l.name);
        if (p) done.push(p);
      } catch (err) {
        ctx.log({ event: "lessons_skip", file: join(s.dir, CANDIDATES, file), error: String(err?.message ?? err) });
      }
    }
  }
  if (done.length) ctx.log({ event: "lessons_promoted", auto: true, names: done.map((d) => d.name) });
  return done;
}

/** Write candidates (lesson objects from the core) into `_candidates/` of the right scope. */
export function writeCandidates(core, ctx, workspace, lessons) {
  const s = scopes(ctx, workspace)[0];
  const no = rejected(s.dir);
  const written = [];
  for (const l of lessons) {
    try {
      if (no.has(l.name)) continue;
      const same = (path) => {
        try {
          return JSON.stringify(core.lessonParse(readFileSync(path, "utf8")).body) === JSON.stringify(l.body);
        } catch {
          return false;
        }
      };
      // The same fact already promoted, or already waiting (its capture time is kept).
      if (same(join(s.dir, `${l.name}.md`)) || same(join(s.dir, CANDIDATES, `${l.name}.md`))) continue;
      let text = core.lessonRender(JSON.stringify(l));
      text = core.lessonStamp(text, JSON.stringify(gatherInputs(core, workspace, [text])));
      writeFileAtomic(join(s.dir, CANDIDATES, `${l.name}.md`), text, s.mode);
      written.push(l.name);
    } catch (err) {
      ctx.log({ event: "lessons_skip", candidate: l?.name ?? null, error: String(err?.message ?? err) });
    }
  }
  return written;
}

// ---- the session's decision (assemble) --------------------------------------------------------

function decisionPath(core, ctx, sessionId) {
  return join(store.sessionPaths(ctx.stateDir, core.sessionDirName(sessionId)).dir, "lessons.json");
}

function readDecision(path) {
  try {
    const d = JSON.parse(readFileSync(path, "utf8"));
    return d && typeof d.text === "string" ? d : null;
  } catch {
    return null;
  }
}

/** Create the decision file exclusively; when another process won, its decision is returned. */
function recordDecision(path, d) {
  mkdirSync(join(path, ".."), { recursive: true, mode: 0o700 });
  let fd;
  try {
    fd = openSync(path, "wx", 0o600);
  } catch (err) {
    if (err.code === "EEXIST") return readDecision(path) ?? d;
    throw err;
  }
  try {
    writeSync(fd, `${JSON.stringify(d)}\n`);
  } finally {
    closeSync(fd);
  }
  return d;
}

function workspaceOf(params, factoryCtx) {
  const rc = params?.runtimeContext ?? {};
  return rc.workspaceDir ?? factoryCtx?.workspaceDir ?? rc.cwd ?? null;
}

async function decide(ctx, params, factoryCtx, sessionId) {
  const core = await loadCore();
  const path = decisionPath(core, ctx, sessionId);
  const recorded = readDecision(path);
  if (recorded) return recorded;
  const messages = Array.isArray(params.messages) ? params.messages : [];
  const request = typeof params.prompt === "string" ? params.prompt : "";
  const workspace = workspaceOf(params, factoryCtx);
  const base = { v: 1, sessionId, decidedAt: nowIso(), workspace, inject: false, text: "", tokens: 0, chosen: [] };
  let d;
  if (messages.length > 0) {
    // Not the session's first assemble (lessons were off or unknown before): adding a block now
    // would change the system prompt mid-session.
    d = { ...base, reason: "session already under way" };
  } else {
    const cls = core.lessonsClassify(request);
    if (cls.class !== "code-gen" || !cls.confident) {
      d = { ...base, class: cls.class, confident: cls.confident, reason: cls.class === "code-gen" ? "code-gen but not confident" : `request classified ${cls.class}`, signals: cls.signals };
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
      queueRefresh(ctx, workspace, r.stale);
      d = {
        ...base,
        class: r.classification.class,
        confident: r.classification.confident,
        signals: r.classification.signals,
        inject: r.inject,
        reason: r.reason,
        text: r.text,
        tokens: r.tokens,
        chosen: r.chosen,
        overBudget: r.overBudget,
        stale: r.stale.map((s) => ({ name: s.name, scope: s.scope, changed: s.changed })),
        invalid: r.invalid,
      };
    }
  }
  d.sha1 = core.sha1Hex(d.text);
  const out = recordDecision(path, d);
  ctx.log({ event: "lessons_decision", ...out, request: core.redactSecrets(request).slice(0, 200) });
  return out;
}

function queueRefresh(ctx, workspace, stale) {
  for (const s of stale) {
    try {
      const sc = scopes(ctx, workspace).find((x) => x.scope === s.scope);
      if (!sc) continue;
      const path = join(sc.dir, CANDIDATES, `${s.name}.md`);
      if (!existsSync(path) || readFileSync(path, "utf8").includes("\nrefresh-of: ")) writeFileAtomic(path, s.refresh, sc.mode);
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
    if (!d) {
      let p = pending.get(sessionId);
      if (!p) {
        p = decide(ctx, params, factoryCtx, sessionId).finally(() => pending.delete(sessionId));
        pending.set(sessionId, p);
      }
      d = await p;
      decisions.set(sessionId, d);
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

function withTimeout(promise, ms) {
  let timer;
  return Promise.race([promise, new Promise((_, rej) => (timer = setTimeout(() => rej(new Error(`timed out after ${ms} ms`)), ms)))]).finally(() => clearTimeout(timer));
}

function openclawStateDir() {
  return process.env.OPENCLAW_STATE_DIR || join(homedir(), ".openclaw");
}

/** The host transcript database of a session: the runtime's storePath, else the agent's default. */
export function transcriptDb(params, hctx) {
  const rc = params?.runtimeContext ?? {};
  const target = rc.sessionTarget ?? params?.sessionTarget ?? null;
  const store = target?.storePath ?? rc.storePath ?? null;
  if (typeof store === "string" && store.endsWith(".sqlite")) return store;
  const agent = target?.agentId ?? hctx?.agentId ?? params?.agentId ?? "main";
  return join(openclawStateDir(), "agents", String(agent), "agent", "openclaw-agent.sqlite");
}

/**
 * Messages of the session's last conversation in the host transcript (`reset` entries split the
 * conversations that share one sessionId), and the session's cwd. Null when it cannot be read.
 */
export async function hostTranscript(db, sessionId) {
  if (!db || !existsSync(db)) return null;
  let sqlite;
  try {
    sqlite = await import("node:sqlite");
  } catch {
    return null; // Node < 22.5 (OpenClaw itself runs on 24)
  }
  const zlib = await import("node:zlib");
  let rows;
  const conn = new sqlite.DatabaseSync(db, { readOnly: true });
  try {
    rows = conn.prepare("SELECT seq, event_json, event_zstd FROM transcript_events WHERE session_id = ? ORDER BY seq").all(sessionId);
  } finally {
    conn.close();
  }
  if (!rows.length) return null;
  const parts = [[]];
  let cwd = null;
  for (const r of rows) {
    let e;
    try {
      e = JSON.parse(r.event_json ?? zlib.zstdDecompressSync(Buffer.from(r.event_zstd)).toString("utf8"));
    } catch {
      continue; // one unreadable event never stops the capture
    }
    if (e?.type === "session" && typeof e.cwd === "string") cwd = e.cwd;
    else if (e?.type === "reset") parts.push([]);
    else if (e?.type === "message" && e.message && typeof e.message === "object") parts[parts.length - 1].push(e.message);
  }
  const messages = parts.filter((p) => p.length).pop() ?? [];
  return { messages, cwd };
}

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
      last = Math.max(last, JSON.parse(readFileSync(stamp, "utf8")).at ?? 0);
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
      const { snapshot, journal } = store.readState(paths);
      if (!snapshot && !journal) return []; // nothing happened yet: the rate limit is not spent
      session = core.Session.restore(ctx.configJson, sessionId, snapshot, journal);
      source = "engine records";
    }
    lastCapture.set(sessionId, now);
    try {
      writeFileAtomic(stamp, `${JSON.stringify({ at: now })}\n`, 0o600);
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
        );
        const proposed = core.lessonsParseLlm(String(res?.text ?? ""), input);
        found = found.concat(proposed.filter((p) => !found.some((f) => f.name === p.name)));
      } catch (err) {
        ctx.log({ event: "lessons_capture", sessionId, llm: false, message: String(err?.message ?? err) });
      }
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
