// cachefold's sessions on disk and its decision log, as the user commands read them (status,
// report, doctor, /cachefold): read-only, through the core exactly as the engine reads them.
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { logFileOf } from "../config.js";
import { loadCore } from "../core.js";
import * as store from "../store.js";
import { jsonLines, mtimeMs, readHead, readRegular, readTail } from "../io/files.js";

/** The session id a snapshot names, from its head only when it is there (never the whole large file first). */
function snapshotSessionId(path) {
  try {
    const m = /"sessionId":("(?:[^"\\]|\\.)*")/.exec(readHead(path, 4096));
    return m ? JSON.parse(m[1]) : (JSON.parse(readRegular(path, { maxBytes: 64 << 20 }) ?? "{}").sessionId ?? null);
  } catch {
    return null; // no snapshot yet
  }
}

/**
 * The session stored under <stateDir>/sessions/<name>: {dir, name, sessionId, updatedAt}, or null
 * when it has no state. `known`: its id when the caller has it (nothing is read to find it).
 */
export function sessionEntry(core, stateDir, name, known = null) {
  const paths = store.sessionPaths(stateDir, name);
  const updatedAt = Math.max(mtimeMs(paths.journal), mtimeMs(paths.snapshot));
  if (!updatedAt) return null;
  let sessionId = known ?? snapshotSessionId(paths.snapshot);
  if (!sessionId) {
    // The dir name is the id's safe characters + "-" + 12 hex of its hash.
    const guess = name.replace(/-[0-9a-f]{12}$/, "");
    sessionId = core.sessionDirName(guess) === name ? guess : null;
  }
  return { dir: paths.dir, name, sessionId: sessionId ?? name, updatedAt };
}

/** Sessions under <stateDir>/sessions, most recently written first (sessionEntry). */
export async function listSessions(stateDir) {
  const core = await loadCore();
  let names = [];
  try {
    names = readdirSync(join(stateDir, "sessions"));
  } catch {
    return [];
  }
  return names
    .map((name) => sessionEntry(core, stateDir, name))
    .filter(Boolean)
    .sort((a, b) => b.updatedAt - a.updatedAt);
}

/** One session by id, dir name or unique prefix of either; null when none or ambiguous. */
export async function findSession(stateDir, query) {
  const all = await listSessions(stateDir);
  const exact = all.find((s) => s.sessionId === query || s.name === query);
  if (exact) return exact;
  const pre = all.filter((s) => s.sessionId.startsWith(query) || s.name.startsWith(query));
  return pre.length === 1 ? pre[0] : null;
}

/** Stats, per-call rows and state of one session, read through the core. */
export async function readSession(ctx, s) {
  const core = await loadCore();
  const paths = store.sessionPaths(ctx.stateDir, s.name);
  const { snapshot, journal } = store.readStateBytes(paths);
  const session = core.Session.restore(ctx.configJson, s.sessionId, snapshot, journal);
  try {
    return { stats: session.stats(), rows: session.callRows(), snapshot: session.snapshot(), paths };
  } finally {
    session.free?.();
  }
}

/** Decision-log events (the last 8 MiB), or null when no log is configured or readable. */
export function readDecisionLog(ctx) {
  const file = logFileOf(ctx.config);
  const text = file ? readTail(file) : null;
  return text == null ? null : jsonLines(text);
}

/**
 * Engine state of a session from the decision log: "active" (its last assemble was managed),
 * "degraded" (the last assemble passed history through after an error, or turns were committed
 * with no assemble since: the host served them with another engine), "passthrough" (model not
 * managed or mode off), "unknown" (no decision log).
 */
export function engineState(events, sessionId) {
  if (!events) return { state: "unknown", reason: "no decision log (set logFile)" };
  let lastAssemble = null;
  let commitsAfter = 0;
  let lastError = null;
  for (const e of events) {
    if (e.sessionId !== sessionId && !(e.event === "error" && lastAssemble?.sessionId === sessionId)) continue;
    if (e.event === "assemble") {
      lastAssemble = e;
      commitsAfter = 0;
      lastError = null;
    } else if (e.event === "commitTurn") commitsAfter += 1;
    else if (e.event === "error" || e.event === "quarantine") lastError = e;
  }
  if (!lastAssemble) return { state: commitsAfter ? "degraded" : "unknown", reason: commitsAfter ? `${commitsAfter} turns committed, no assemble logged` : "no assemble logged" };
  if (commitsAfter >= 2) return { state: "degraded", reason: `${commitsAfter} turns committed since the last assemble (the host is not calling cachefold: quarantined or slot changed?)` };
  if (lastError) return { state: "degraded", reason: `${lastError.where ?? lastError.event}: ${lastError.message ?? "quarantined messages"}` };
  if (lastAssemble.passthrough) return { state: "passthrough", reason: "model not managed (mode/targetModels) or history passed through" };
  return { state: "active", reason: null };
}

export const money = (x) => `$${(x ?? 0).toFixed(4)}`;
export const pct = (x) => `${(x ?? 0).toFixed(1)}%`;

/** One session's status row. */
export async function sessionStatus(ctx, s, events) {
  const { stats, rows } = await readSession(ctx, s);
  const turns = new Set(rows.map((r) => r.at)).size;
  const ratio = stats.costUsd > 0 ? stats.uncachedUsd / stats.costUsd : null;
  const eng = engineState(events, s.sessionId);
  return {
    sessionId: s.sessionId,
    updatedAt: new Date(s.updatedAt).toISOString(),
    engine: eng.state,
    engineReason: eng.reason,
    model: stats.model,
    turns,
    calls: stats.calls,
    folds: stats.folds?.count ?? 0,
    promptTokens: stats.promptTokens ?? 0,
    hitTokens: stats.cacheRead ?? 0,
    hitPct: stats.hitPct,
    predictedHitPct: stats.predictedHitPct,
    predictionErrorPct: stats.predictionErrorPct,
    costUsd: stats.costUsd,
    legacyEstimateUsd: stats.uncachedUsd,
    savedUsd: stats.savedUsd,
    legacyRatio: ratio == null ? null : +ratio.toFixed(2),
    lastCacheBreak: stats.lastDivergence ? { messageIndex: stats.lastDivergence.at, cause: stats.lastDivergence.cause, action: stats.lastDivergence.action } : null,
  };
}

/** The one-line summary used by `status` and `/cachefold`. */
export function statusLine(r) {
  const brk = r.lastCacheBreak ? `last cache break: message ${r.lastCacheBreak.messageIndex} (${r.lastCacheBreak.cause})` : "no cache break";
  const x = r.legacyRatio == null ? "" : ` (legacy estimate ${money(r.legacyEstimateUsd)}, ${r.legacyRatio}×)`;
  return `${r.engine} · ${r.turns} turns, ${r.calls} calls, ${r.folds} folds · hit ${pct(r.hitPct)} (predicted ${pct(r.predictedHitPct)}) · spent ${money(r.costUsd)}${x}, saved ${money(r.savedUsd)} · ${brk}`;
}

export const LEGACY_NOTE = "legacy estimate = the same calls billed with no cache hit (the core's uncachedUsd): an upper bound for legacy, which keeps some hits between its compactions";

