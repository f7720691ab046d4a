// The report page's and the dashboard widget's data. Every figure comes from the functions
// `openclaw cachefold status --json` and `report --json` print (js/cli/status.js: statusData,
// reportData, which read the sessions through the core): this module pages, picks and places
// them (call index of a fold, a break) and never computes a cost, a hit rate or a saving itself.
import { statSync } from "node:fs";
import { loadCore } from "../core.js";
import * as store from "../store.js";
import { artifactPath, isArtifactId } from "../artifacts.js";
import { recordedDecision } from "../lessons.js";
import { reportData, statusData } from "../cli/status.js";
import { findSession, listSessions, readDecisionLog, sessionStatus } from "../cli/sessions.js";

export const PAGE_DEFAULT = 50;
export const PAGE_MAX = 200;
/** What the session view shows of what cachefold_recover returns for one fold (its first answer). */
export const RECOVER_PREVIEW_CHARS = 2000;
/** Sessions the widget reads at most (most recently written first) for its week's saving. */
export const WIDGET_MAX_SESSIONS = 500;

export class BadRequest extends Error {
  constructor(message) {
    super(message);
    this.status = 400;
  }
}

/** A non-negative integer query parameter, or `fallback` when absent; BadRequest otherwise. */
export function intParam(params, name, { min = 0, max = Number.MAX_SAFE_INTEGER, fallback }) {
  const raw = params.get(name);
  if (raw == null || raw === "") return fallback;
  if (!/^[0-9]{1,9}$/.test(raw)) throw new BadRequest(`${name} must be an integer from ${min} to ${max}, not ${JSON.stringify(raw.slice(0, 40))}`);
  const n = Number(raw);
  if (n < min || n > max) throw new BadRequest(`${name} must be an integer from ${min} to ${max}, not ${n}`);
  return n;
}

/** `offset` and `limit` of a sessions page from the query; BadRequest when out of range. */
export function pageParams(params) {
  return { offset: intParam(params, "offset", { min: 0, fallback: 0 }), limit: intParam(params, "limit", { min: 1, max: PAGE_MAX, fallback: PAGE_DEFAULT }) };
}

/** One page of the sessions table: exactly `status --json` for that window, plus paging. */
export async function sessionsPage(ctx, { offset = 0, limit = PAGE_DEFAULT } = {}) {
  const data = await statusData(ctx, { offset, limit });
  const next = offset + data.sessions.length < data.total ? offset + data.sessions.length : null;
  return { ...data, limit, nextOffset: next };
}

/** Decision-log events of one session (the last 8 MiB of the log, as status reads it). */
function eventsOf(events, sessionId) {
  return (events ?? []).filter((e) => e?.sessionId === sessionId);
}

/** Index (0-based) of the first call at or after `ms`, or the call count when none is. */
function callIndexAt(calls, ms) {
  const k = calls.findIndex((c) => c.at >= ms);
  return k < 0 ? calls.length : k;
}

/**
 * The cache breaks an assemble reported: the divergence the core found (host compaction, a
 * flush, an edit), else each change of the model or system-prompt addition (a divergence at 0).
 */
function breaksOf(report) {
  const d = report.divergence;
  if (d) return [{ cause: d.cause, action: d.action ?? null, messageIndex: d.at }];
  return (Array.isArray(report.envChanges) ? report.envChanges : []).filter((c) => typeof c === "string").map((cause) => ({ cause, action: null, messageIndex: 0 }));
}

/**
 * Events to mark on the session's time axis, from the decision log: folds (the assemble that
 * emitted them) and host breaks (a divergence the core reported: host compaction, a flush, a
 * model change, an edit), each placed before the first call made after it.
 */
export function axisMarks(events, calls) {
  const marks = [];
  for (const e of events) {
    if (e.event !== "assemble" || !e.report) continue;
    const ms = Date.parse(e.at);
    if (!Number.isFinite(ms)) continue;
    const at = callIndexAt(calls, ms);
    for (const f of e.report.folds ?? (e.report.fold ? [e.report.fold] : [])) {
      marks.push({ kind: "fold", call: at, at: e.at, id: f.id, reason: f.reason ?? null, from: f.from ?? null, to: f.to ?? null, foldedTokens: f.foldedTokens ?? null });
    }
    for (const b of breaksOf(e.report)) marks.push({ kind: "break", call: at, at: e.at, ...b });
  }
  return marks;
}

/**
 * One session's view: its status row (sessionStatus, as `status` prints it), its calls and
 * totals (reportData, as `report --json` prints them), the marks on the time axis, the fold
 * records with what cachefold_recover returns for each (the core's recoverAnswer over the stored
 * fold, as the tool calls it), its artifacts with sizes and the lessons decision.
 * null when no session matches `query` (id, dir name or unique prefix, as `report` takes).
 */
export async function sessionView(ctx, query) {
  const s = await findSession(ctx.stateDir, query);
  if (!s) return null;
  const core = await loadCore();
  const events = readDecisionLog(ctx);
  const status = await sessionStatus(ctx, s, events);
  const { calls, totals, snapshot, paths } = await reportData(ctx, s);
  const state = typeof snapshot === "string" ? JSON.parse(snapshot) : (snapshot ?? {});
  const stored = new Set(store.listFolds(paths));
  const folds = (state.segs ?? []).map((seg) => {
    const text = stored.has(seg.id) ? store.readFold(paths, seg.id) : null;
    let recover = null;
    if (text != null) {
      const ans = core.recoverAnswer(seg.id, text, "{}");
      recover = { text: ans.text.length > RECOVER_PREVIEW_CHARS ? `${ans.text.slice(0, RECOVER_PREVIEW_CHARS)}…` : ans.text, details: ans.details ?? null };
    }
    return {
      id: seg.id,
      from: seg.from,
      to: seg.to,
      covers: seg.covers ?? [],
      protected: seg.protected ?? [],
      summary: !!seg.summary,
      recordChars: seg.w ?? null,
      storedBytes: text == null ? null : Buffer.byteLength(text),
      recover,
    };
  });
  const artifacts = (state.artifacts ?? [])
    .filter((a) => isArtifactId(a?.id))
    .map((a) => {
      let bytes = null;
      try {
        bytes = statSync(artifactPath(ctx.stateDir, a.id)).size;
      } catch {}
      return { id: a.id, tool: a.tool, chars: a.chars, at: a.at ? new Date(a.at).toISOString() : null, storedBytes: bytes };
    });
  const d = recordedDecision(paths.dir);
  const lessons = d && { inject: !!d.inject, chosen: Array.isArray(d.chosen) ? d.chosen : [], tokens: d.tokens ?? 0, reason: d.reason ?? null, decidedAt: d.decidedAt ?? null, text: d.text };
  return { sessionId: s.sessionId, status, totals, calls, marks: axisMarks(eventsOf(events, s.sessionId), calls), decisionLog: events != null, folds, artifacts, lessons };
}

/** Monday 00:00 UTC of the week holding `now`, and 00:00 UTC of its day (ms). */
export function periodStarts(now) {
  const d = new Date(now);
  const day = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate());
  const week = day - ((d.getUTCDay() + 6) % 7) * 86_400_000;
  return { day, week };
}

/**
 * The widget's figures: saving (legacy estimate − spend, summed over the calls `report` lists)
 * today and this week (UTC), and the sessions whose cache broke most recently (decision log).
 */
export async function widgetSummary(ctx, now = Date.now()) {
  const { day, week } = periodStarts(now);
  const all = await listSessions(ctx.stateDir);
  const recent = all.filter((s) => s.updatedAt >= week);
  const read = recent.slice(0, WIDGET_MAX_SESSIONS);
  let today = 0;
  let thisWeek = 0;
  let calls = 0;
  for (const s of read) {
    try {
      const { calls: rows } = await reportData(ctx, s);
      for (const c of rows) {
        if (c.at < week) continue;
        const saved = c.legacyEstimateUsd - c.costUsd;
        thisWeek += saved;
        calls += 1;
        if (c.at >= day) today += saved;
      }
    } catch {
      /* an unreadable session is left out; the page names it */
    }
  }
  const breaks = [];
  const seen = new Set();
  const events = readDecisionLog(ctx) ?? [];
  for (let i = events.length - 1; i >= 0 && breaks.length < 5; i -= 1) {
    const e = events[i];
    if (e?.event !== "assemble" || !e.report || seen.has(e.sessionId)) continue;
    const b = breaksOf(e.report);
    if (!b.length) continue;
    seen.add(e.sessionId);
    breaks.push({ sessionId: e.sessionId, at: e.at, ...b[0], cause: b.map((x) => x.cause).join(", ") });
  }
  const round6 = (x) => Math.round(x * 1e6) / 1e6;
  return {
    savedTodayUsd: round6(today),
    savedThisWeekUsd: round6(thisWeek),
    dayStart: new Date(day).toISOString(),
    weekStart: new Date(week).toISOString(),
    calls,
    sessionsThisWeek: recent.length,
    sessionsRead: read.length,
    recentBreaks: breaks,
    decisionLog: events.length > 0,
  };
}
