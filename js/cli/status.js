// `openclaw cachefold status` and `report`: recent sessions, and one session's calls with an SVG chart.
import { join, resolve } from "node:path";
import { logFileOf } from "../config.js";
import { storeSize } from "../artifacts/gc.js";
import { writeFileAtomic } from "../io/files.js";
import { EXIT, intFlag, NotFound } from "./args.js";
import { chartFigure, contextSpec, costSpec } from "../ui/chart.js";
import { findSession, LEGACY_NOTE, listSessions, money, readDecisionLog, readSession, sessionStatus, statusLine } from "./sessions.js";

/**
 * What `status --json` prints: sessions `offset`..`offset+limit` (most recently written first),
 * each through sessionStatus, plus the artifact store's size. The report page's data route
 * (js/ui/) answers with this same object.
 */
export async function statusData(ctx, { offset = 0, limit = 10 } = {}) {
  const events = readDecisionLog(ctx);
  const all = await listSessions(ctx.stateDir);
  const sessions = all.slice(offset, offset + limit);
  const rows = [];
  for (const s of sessions) {
    try {
      rows.push(await sessionStatus(ctx, s, events));
    } catch (err) {
      // One unreadable session is named, and the others are still shown.
      rows.push({ sessionId: s.sessionId, updatedAt: new Date(s.updatedAt).toISOString(), engine: "unreadable", error: `${s.dir}: ${err?.message ?? err}` });
    }
  }
  const artifacts = await storeSize(ctx.stateDir);
  return { stateDir: ctx.stateDir, decisionLog: events ? logFileOf(ctx.config) : null, legacyEstimate: LEGACY_NOTE, artifacts: { count: artifacts.count, bytes: artifacts.bytes }, total: all.length, offset, sessions: rows };
}

async function statusRun({ values }, io) {
  const ctx = io.ctx;
  const limit = intFlag(values, "limit", { min: 1, max: 10_000, fallback: 10 });
  const data = await statusData(ctx, { limit });
  const rows = data.sessions;
  const head = `state ${ctx.stateDir} · artifacts ${data.artifacts.count} (${(data.artifacts.bytes / 1048576).toFixed(1)} MiB)`;
  const table = rows.length
    ? rows.map((r) => `${r.sessionId.slice(0, 36).padEnd(36)} ${r.error ? `UNREADABLE: ${r.error}` : statusLine(r)}`).join("\n")
    : "no sessions recorded yet";
  io.o.out(data, `${head}\n${table}\n(${LEGACY_NOTE})`);
  return EXIT.ok;
}

/**
 * SVG: cumulative cost (cachefold vs the legacy estimate) and context size per call, drawn by
 * the core's chart module like the report page's charts. `totalCalls`: the session's calls
 * (`rows` holds the recent ones), so the axis says which calls it shows.
 */
export async function reportSvg(sessionId, rows, totalCalls = rows.length) {
  const calls = rows.map((r) => ({ costUsd: r.costUsd, legacyEstimateUsd: r.uncachedUsd, prompt: r.prompt }));
  const xTitle = totalCalls > rows.length ? `model call (the last ${rows.length} of this session's ${totalCalls}, oldest first)` : "model call (this session, oldest first)";
  return chartFigure(`cachefold session ${sessionId}`, [costSpec(calls, [], { title: "cumulative cost", xTitle }), contextSpec(calls, { xTitle })]);
}

/**
 * What `report --json` prints for one session (its per-call table and totals), with the core's
 * stats, rows and snapshot for the report page's session view (js/ui/).
 */
export async function reportData(ctx, s) {
  const { stats, rows, snapshot, paths } = await readSession(ctx, s);
  const calls = rows.map((r, i) => ({ call: i + 1, at: r.at, prompt: r.prompt, hit: r.hit, miss: r.miss, predictedHit: r.predicted, output: r.output, costUsd: r.costUsd, legacyEstimateUsd: r.uncachedUsd }));
  const totals = { calls: stats.calls, costUsd: stats.costUsd, legacyEstimateUsd: stats.uncachedUsd, hitPct: stats.hitPct, predictedHitPct: stats.predictedHitPct };
  return { stats, rows, snapshot, paths, calls, totals };
}

async function reportRun({ values, positionals: pos }, io) {
  const opts = values;
  const ctx = io.ctx;
  const s = await findSession(ctx.stateDir, pos[0]);
  if (!s) throw new NotFound(`no cachefold session matches ${pos[0]} (see openclaw cachefold status)`);
  const { stats, rows, calls, totals } = await reportData(ctx, s);
  const svg = resolve(opts.out ?? join(ctx.stateDir, "reports", `${s.name}.svg`));
  writeFileAtomic(svg, await reportSvg(s.sessionId, rows, stats.calls), { mode: 0o644 });
  const text = [
    `session ${s.sessionId} · ${stats.calls} calls (${rows.length} recent shown) · spent ${money(stats.costUsd)} · legacy estimate ${money(stats.uncachedUsd)}`,
    "call   prompt      hit     miss  predicted      cost",
    ...calls.map((c) => `${String(c.call).padStart(4)} ${String(c.prompt).padStart(8)} ${String(c.hit).padStart(8)} ${String(c.miss).padStart(8)} ${String(c.predictedHit).padStart(10)} ${money(c.costUsd).padStart(9)}`),
    `chart: ${svg}`,
  ].join("\n");
  io.o.out({ sessionId: s.sessionId, calls, totals, chart: svg }, text);
  return EXIT.ok;
}

export const statusCommand = { description: "recent sessions: engine state, turns, folds, hit %, spend vs legacy, last cache break", usage: "status [--limit N] [--json]", options: { limit: { type: "string" } }, run: statusRun };
export const reportCommand = { description: "per-call table of one session and an SVG cost/context chart", usage: "report <session> [--out FILE.svg] [--json]", options: { out: { type: "string" } }, maxPositionals: 1, needs: "<session>", run: reportRun };
