// User commands of `openclaw cachefold` (status, report, doctor, gc, export, restore) and the
// `/cachefold` chat command. Read-only views go through the core exactly as the engine does
// (Session.restore over snapshot + journal); nothing here writes a session's state except
// `/cachefold fold` (engine.requestFold) and `gc`.
//
// Exit codes (with cli.js): 0 ok · 1 not found · 2 usage · 4 error · 5 doctor found a failing
// check (warnings alone exit 0).
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { loadCore } from "./core.js";
import * as store from "./store.js";
import { collectGarbage, isArtifactId, readArtifact, sessionArtifactIds, storeRoot } from "./artifacts.js";

export const EXIT_DOCTOR_FAIL = 5;
const E = { ok: 0, notFound: 1, usage: 2, error: 4, fail: EXIT_DOCTOR_FAIL };

/** Flags: --name value / --name=value / --flag; BOOL lists the valueless ones. */
const BOOL = new Set(["json", "all", "yes", "help"]);
export function parseFlags(argv) {
  const pos = [];
  const opts = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "-h") opts.help = true;
    else if (a.startsWith("--")) {
      const [k, v] = a.slice(2).split(/=(.*)/s);
      const key = k.replace(/-([a-z])/g, (_, c) => c.toUpperCase());
      if (v !== undefined) opts[key] = v;
      else if (BOOL.has(key)) opts[key] = true;
      else opts[key] = argv[++i];
    } else pos.push(a);
  }
  return { pos, opts };
}

// ---- sessions on disk ------------------------------------------------------------------------

function mtime(p) {
  try {
    return statSync(p).mtimeMs;
  } catch {
    return 0;
  }
}

/** Sessions under <stateDir>/sessions, most recently written first: {dir, name, sessionId, updatedAt}. */
export async function listSessions(stateDir) {
  const core = await loadCore();
  const root = join(stateDir, "sessions");
  let names = [];
  try {
    names = readdirSync(root);
  } catch {
    return [];
  }
  const out = [];
  for (const name of names) {
    const paths = store.sessionPaths(stateDir, name);
    const updatedAt = Math.max(mtime(paths.journal), mtime(paths.snapshot));
    if (!updatedAt) continue;
    let sessionId = null;
    try {
      sessionId = JSON.parse(readFileSync(paths.snapshot, "utf8")).sessionId ?? null;
    } catch {
      /* no snapshot yet */
    }
    if (!sessionId) {
      // The dir name is the id's safe characters + "-" + 12 hex of its hash.
      const guess = name.replace(/-[0-9a-f]{12}$/, "");
      sessionId = core.sessionDirName(guess) === name ? guess : null;
    }
    out.push({ dir: paths.dir, name, sessionId: sessionId ?? name, updatedAt });
  }
  return out.sort((a, b) => b.updatedAt - a.updatedAt);
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
  const { snapshot, journal } = store.readState(paths);
  const session = core.Session.restore(ctx.configJson, s.sessionId, snapshot, journal);
  try {
    return { stats: session.stats(), rows: typeof session.callRows === "function" ? session.callRows() : [], snapshot: session.snapshot(), paths };
  } finally {
    session.free?.();
  }
}

/** Total size of the artifact store (files only, metadata excluded). */
export function artifactStoreSize(stateDir) {
  const root = storeRoot(stateDir);
  let count = 0;
  let bytes = 0;
  let shards = [];
  try {
    shards = readdirSync(root).filter((d) => /^[0-9a-f]{2}$/.test(d));
  } catch {
    return { count, bytes, path: root };
  }
  for (const d of shards) {
    for (const f of readdirSync(join(root, d))) {
      if (!isArtifactId(f)) continue;
      count += 1;
      try {
        bytes += statSync(join(root, d, f)).size;
      } catch {}
    }
  }
  return { count, bytes, path: root };
}

// ---- decision log ----------------------------------------------------------------------------

const LOG_TAIL = 8 << 20;

/** Decision-log events (the last 8 MiB), or null when no log is configured or readable. */
export function readDecisionLog(ctx) {
  const file = ctx.config?.logFile ? resolve(ctx.config.logFile) : null;
  if (!file || !existsSync(file)) return null;
  let text = readFileSync(file, "utf8");
  if (text.length > LOG_TAIL) text = text.slice(text.indexOf("\n", text.length - LOG_TAIL) + 1);
  const out = [];
  for (const line of text.split("\n")) {
    if (!line) continue;
    try {
      out.push(JSON.parse(line));
    } catch {}
  }
  return out;
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

// ---- status ----------------------------------------------------------------------------------

const money = (x) => `$${(x ?? 0).toFixed(4)}`;
const pct = (x) => `${(x ?? 0).toFixed(1)}%`;

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

const LEGACY_NOTE = "legacy estimate = the same calls billed with no cache hit (the core's uncachedUsd): an upper bound for legacy, which keeps some hits between its compactions";

async function statusRun(args, io) {
  const { opts } = parseFlags(args);
  const ctx = io.ctx;
  const limit = Number(opts.limit ?? 10);
  const events = readDecisionLog(ctx);
  const sessions = (await listSessions(ctx.stateDir)).slice(0, Number.isFinite(limit) && limit > 0 ? limit : 10);
  const rows = [];
  for (const s of sessions) rows.push(await sessionStatus(ctx, s, events));
  const artifacts = artifactStoreSize(ctx.stateDir);
  const data = { stateDir: ctx.stateDir, decisionLog: events ? resolve(ctx.config.logFile) : null, legacyEstimate: LEGACY_NOTE, artifacts: { count: artifacts.count, bytes: artifacts.bytes }, sessions: rows };
  const head = `state ${ctx.stateDir} · artifacts ${artifacts.count} (${(artifacts.bytes / 1048576).toFixed(1)} MiB)`;
  const table = rows.length
    ? rows.map((r) => `${r.sessionId.slice(0, 36).padEnd(36)} ${statusLine(r)}`).join("\n")
    : "no sessions recorded yet";
  io.o.out(data, `${head}\n${table}\n(${LEGACY_NOTE})`);
  return E.ok;
}

// ---- report ----------------------------------------------------------------------------------

const esc = (t) => String(t).replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c]);

/** SVG: cumulative cost (cachefold vs legacy estimate) and context size per call. */
export function reportSvg(sessionId, rows) {
  const W = 760;
  const H = 220;
  const pad = 48;
  let cf = 0;
  let un = 0;
  const cum = rows.map((r) => ({ cf: (cf += r.costUsd), un: (un += r.uncachedUsd), prompt: r.prompt }));
  const n = Math.max(cum.length - 1, 1);
  const x = (i) => pad + ((W - 2 * pad) * i) / n;
  const panel = (top, series, max, label, fmt) => {
    const y = (v) => top + H - pad - ((H - 2 * pad) * v) / (max || 1);
    const lines = series
      .map(({ key, color, name }, k) => {
        const pts = cum.map((c, i) => `${x(i).toFixed(1)},${y(c[key]).toFixed(1)}`).join(" ");
        return `<polyline fill="none" stroke="${color}" stroke-width="2" points="${pts}"/><text x="${W - pad - 160}" y="${top + pad - 8 + 14 * k}" fill="${color}" font-size="12">${esc(name)}</text>`;
      })
      .join("");
    return `<text x="${pad}" y="${top + 20}" font-size="13" font-weight="bold">${esc(label)}</text><line x1="${pad}" y1="${top + H - pad}" x2="${W - pad}" y2="${top + H - pad}" stroke="#999"/><line x1="${pad}" y1="${top + pad}" x2="${pad}" y2="${top + H - pad}" stroke="#999"/><text x="4" y="${top + pad + 4}" font-size="11">${esc(fmt(max))}</text><text x="${pad}" y="${top + H - pad + 16}" font-size="11">call 1</text><text x="${W - pad - 40}" y="${top + H - pad + 16}" font-size="11">call ${cum.length}</text>${lines}`;
  };
  const maxCost = Math.max(0, ...cum.map((c) => Math.max(c.cf, c.un)));
  const maxPrompt = Math.max(0, ...cum.map((c) => c.prompt));
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${2 * H + 30}" font-family="sans-serif"><rect width="100%" height="100%" fill="white"/><text x="${pad}" y="18" font-size="14">cachefold session ${esc(sessionId)}</text>${panel(20, [{ key: "cf", color: "#1f77b4", name: "cachefold (spent)" }, { key: "un", color: "#d62728", name: "legacy estimate (no hit)" }], maxCost, "cumulative cost (USD)", (v) => `$${v.toFixed(3)}`)}${panel(20 + H, [{ key: "prompt", color: "#2ca02c", name: "context (prompt tokens)" }], maxPrompt, "context size per call (tokens)", (v) => `${Math.round(v)}`)}</svg>\n`;
}

async function reportRun(args, io) {
  const { pos, opts } = parseFlags(args);
  const ctx = io.ctx;
  if (!pos[0]) {
    io.o.err("usage: openclaw cachefold report <session> [--out FILE.svg] [--json]");
    return E.usage;
  }
  const s = await findSession(ctx.stateDir, pos[0]);
  if (!s) {
    io.o.err(`no cachefold session matches ${pos[0]} (see openclaw cachefold status)`);
    return E.notFound;
  }
  const { stats, rows } = await readSession(ctx, s);
  const calls = rows.map((r, i) => ({ call: i + 1, prompt: r.prompt, hit: r.hit, miss: r.miss, predictedHit: r.predicted, output: r.output, costUsd: r.costUsd, legacyEstimateUsd: r.uncachedUsd }));
  const svg = resolve(opts.out ?? join(ctx.stateDir, "reports", `${s.name}.svg`));
  mkdirSync(dirname(svg), { recursive: true });
  writeFileSync(svg, reportSvg(s.sessionId, rows));
  const text = [
    `session ${s.sessionId} · ${stats.calls} calls (${rows.length} recent shown) · spent ${money(stats.costUsd)} · legacy estimate ${money(stats.uncachedUsd)}`,
    "call   prompt      hit     miss  predicted      cost",
    ...calls.map((c) => `${String(c.call).padStart(4)} ${String(c.prompt).padStart(8)} ${String(c.hit).padStart(8)} ${String(c.miss).padStart(8)} ${String(c.predictedHit).padStart(10)} ${money(c.costUsd).padStart(9)}`),
    `chart: ${svg}`,
  ].join("\n");
  io.o.out({ sessionId: s.sessionId, calls, totals: { calls: stats.calls, costUsd: stats.costUsd, legacyEstimateUsd: stats.uncachedUsd, hitPct: stats.hitPct, predictedHitPct: stats.predictedHitPct }, chart: svg }, text);
  return E.ok;
}

// ---- doctor ----------------------------------------------------------------------------------

/** Parse JSON5-ish text (comments, trailing commas, unquoted keys, single quotes). */
export function parseJson5(text) {
  try {
    return JSON.parse(text);
  } catch {
    /* the tolerant path below */
  }
  let out = "";
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"' || c === "'") {
      let j = i + 1;
      let s = "";
      while (j < text.length && text[j] !== c) {
        if (text[j] === "\\") {
          s += text[j] + text[j + 1];
          j += 2;
        } else s += text[j++];
      }
      out += JSON.stringify(c === "'" ? s.replace(/\\'/g, "'") : JSON.parse(`"${s}"`));
      i = j;
    } else if (c === "/" && text[i + 1] === "/") {
      while (i < text.length && text[i] !== "\n") i++;
    } else if (c === "/" && text[i + 1] === "*") {
      i = text.indexOf("*/", i + 2) + 1;
      if (i === 0) break;
    } else out += c;
  }
  out = out.replace(/([{,]\s*)([A-Za-z_$][\w$]*)\s*:/g, '$1"$2":').replace(/,(\s*[}\]])/g, "$1");
  return JSON.parse(out);
}

function openclawStateDir() {
  return process.env.OPENCLAW_STATE_DIR || join(homedir(), ".openclaw");
}

/** The host config: the CLI context's (preferred), else the config file. */
export function loadHostConfig(io) {
  if (io.hostConfig && typeof io.hostConfig === "object") return { config: io.hostConfig, source: "openclaw (loaded config)" };
  const file = process.env.OPENCLAW_CONFIG_PATH || join(openclawStateDir(), "openclaw.json");
  if (!existsSync(file)) return { config: null, source: file, error: "not found" };
  try {
    return { config: parseJson5(readFileSync(file, "utf8")), source: file };
  } catch (err) {
    return { config: null, source: file, error: err.message };
  }
}

function globMatch(pattern, text) {
  const re = new RegExp(`^${pattern.replace(/[.+?^${}()|[\]\\]/g, "\\$&").replace(/\*/g, ".*")}$`, "i");
  return re.test(text);
}

function modelIds(host) {
  const out = [];
  const add = (where, m) => {
    const id = typeof m === "string" ? m : m?.primary;
    if (typeof id === "string" && id) out.push({ where, id });
  };
  add("agents.defaults.model", host?.agents?.defaults?.model);
  for (const [name, a] of Object.entries(host?.agents?.entries ?? {})) add(`agents.entries.${name}.model`, a?.model);
  for (const [i, a] of (Array.isArray(host?.agents?.list) ? host.agents.list : []).entries()) add(`agents.list[${i}].model`, a?.model);
  return out;
}

function agentScopes(host) {
  const out = [["agents.defaults", host?.agents?.defaults]];
  for (const [name, a] of Object.entries(host?.agents?.entries ?? {})) out.push([`agents.entries.${name}`, a]);
  for (const [i, a] of (Array.isArray(host?.agents?.list) ? host.agents.list : []).entries()) out.push([`agents.list[${i}]`, a]);
  return out.filter(([, v]) => v && typeof v === "object");
}

/** OpenClaw's log files: `logging.file`, else its rolling logs in /tmp/openclaw (and $TMPDIR/openclaw), and `<state>/logs`. */
export function hostLogFiles(host, now = Date.now()) {
  const files = new Set();
  if (typeof host?.logging?.file === "string" && host.logging.file) files.add(resolve(host.logging.file.replace(/^~(?=$|\/)/, homedir())));
  for (const dir of [...new Set([join(tmpdir(), "openclaw"), "/tmp/openclaw"])]) {
    let names = [];
    try {
      names = readdirSync(dir);
    } catch {}
    // The rolling daily logs of the last two days.
    for (const n of names) if (/^openclaw-.*\.log$/.test(n) && now - mtime(join(dir, n)) < 2 * 864e5) files.add(join(dir, n));
  }
  const logs = join(openclawStateDir(), "logs");
  try {
    for (const n of readdirSync(logs)) if (/\.(log|jsonl)$/.test(n) && !n.startsWith("cache-trace")) files.add(join(logs, n));
  } catch {}
  return [...files];
}

// What OpenClaw 2026.9.6 logs when it does not run the configured engine: `Context engine "X"
// degraded to "legacy" for this logical turn: <reason>` and `Context engine "X" failed during
// <op>: <reason>; quarantining it for this process and falling back to default engine "legacy"`.
const DEGRADE_RE = /context engine "?cachefold"?[^\n]*?(degraded to "?legacy"?|quarantin|falling back to (default engine )?"?legacy"?)/i;
const ISO_RE = /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:?\d\d)/;

/**
 * Host log lines saying cachefold was degraded to legacy or quarantined, newer than `since` (ms;
 * the engine's last managed assemble: a turn it served since then shows it recovered). Lines
 * without a time count. null when no log could be read.
 */
export function hostLogHits(files, since = 0) {
  const hits = [];
  let read = 0;
  for (const f of files) {
    let text;
    try {
      text = readFileSync(f, "utf8");
      read += 1;
    } catch {
      continue;
    }
    if (text.length > LOG_TAIL) text = text.slice(-LOG_TAIL);
    for (const line of text.split("\n")) {
      // The JSON file log escapes the quotes of the message.
      if (!DEGRADE_RE.test(line.replace(/\\"/g, '"'))) continue;
      const at = Date.parse(ISO_RE.exec(line)?.[0] ?? "");
      if (Number.isFinite(at) && at <= since) continue;
      const msg = (() => {
        try {
          const j = JSON.parse(line);
          return Object.keys(j).filter((k) => /^\d+$/.test(k)).map((k) => j[k]).filter((v) => typeof v === "string" && DEGRADE_RE.test(v)).join(" ") || line;
        } catch {
          return line;
        }
      })();
      hits.push(`${f}: ${Number.isFinite(at) ? new Date(at).toISOString() + " " : ""}${msg.replace(/^\S*\s*\[context-engine\]\s*/, "").slice(0, 300)}`);
    }
  }
  return read ? hits : null;
}

// ---- capability consent -------------------------------------------------------------------------

/** The capability surface a manifest declares, grouped as OpenClaw's consent review groups it (the groups cachefold uses). */
export function declaredSurface(manifest) {
  const contracts = Object.entries(manifest?.contracts ?? {}).flatMap(([family, ids]) => (Array.isArray(ids) ? ids.map((id) => `${family}: ${id}`) : []));
  return {
    tools: [...new Set([...(manifest?.contracts?.tools ?? []), ...Object.keys(manifest?.toolMetadata ?? {})])].sort(),
    contracts: [...new Set(contracts)].sort(),
    hooks: [...(manifest?.hooks ?? [])].sort(),
    cliCommands: (manifest?.cliCommands ?? []).map((c) => c.name).sort(),
  };
}

const CONSENT_FIX = "openclaw plugins inspect cachefold (review), then openclaw plugins enable cachefold --accept-capabilities";

/**
 * The consent check from `openclaw plugins inspect cachefold --json` (`inspect`, or `{error}`) and
 * the manifest on disk. OpenClaw 2026.9.6 does not stop a loaded plugin whose accepted surface is
 * stale, but it refuses to enable, update or repair it without consent: after the next
 * disable/enable or update the plugin stays disabled and every turn is served by legacy.
 */
export function consentCheck(inspect, manifest) {
  if (!inspect || inspect.error) return { status: "warn", message: `could not read OpenClaw's view of the plugin (${inspect?.error ?? "no inspection"}): capability consent not checked`, fix: "openclaw plugins inspect cachefold --json" };
  const host = (inspect.diagnostics ?? []).filter((d) => /capability consent/i.test(String(d?.message ?? "")));
  const accepted = inspect.install?.acceptedSurface;
  const declared = declaredSurface(manifest);
  const missing = accepted ? Object.entries(declared).flatMap(([g, ids]) => ids.filter((id) => !(accepted[g] ?? []).includes(id)).map((id) => `${g}: ${id}`)) : [];
  if (host.length || missing.length) {
    const what = missing.length ? `declared but not accepted: ${missing.join(", ")}` : "the accepted surface is not current";
    const mw = missing.some((m) => m.includes("agentToolResultMiddleware")) ? " (the tool-result middleware contract among them)" : "";
    return {
      status: "fail",
      message: `capability consent missing: ${what}${mw}${host.length ? `\nOpenClaw: ${host[0].message}` : ""}\nOpenClaw keeps running the loaded copy but refuses to enable, update or repair cachefold without consent: after the next disable/enable or update the plugin stays disabled and every turn is served by legacy, silently (OpenClaw resolves the slot of a disabled plugin to legacy)`,
      fix: CONSENT_FIX,
    };
  }
  if (!inspect.install) return { status: "warn", message: "no managed install record (loaded from plugins.load.paths or a workspace): OpenClaw cannot record capability consent for it", fix: "openclaw plugins install npm-pack:<cachefold.tgz> --force --accept-capabilities" };
  if (!accepted) return { status: "warn", message: "OpenClaw has no accepted capability surface for cachefold (an install from before capability consent): disabling and re-enabling it will ask for consent", fix: CONSENT_FIX };
  return { status: "ok", message: `capability consent current (accepted ${inspect.install.acceptedSurfaceAt ?? "at install"}: ${declared.contracts.join(", ")})` };
}

/** `openclaw plugins inspect cachefold --json` through the running OpenClaw CLI (doctor runs inside it). */
export async function inspectThroughHost(argv = process.argv, execPath = process.execPath) {
  const entry = argv[1];
  if (!entry || !/openclaw(\.mjs)?$/.test(entry)) return { error: "not running inside the openclaw CLI" };
  const { execFile } = await import("node:child_process");
  return new Promise((done) => {
    execFile(execPath, [entry, "plugins", "inspect", "cachefold", "--json"], { timeout: 90_000, maxBuffer: 32 << 20, env: process.env }, (err, stdout, stderr) => {
      const text = String(stdout ?? "");
      try {
        done(JSON.parse(text.slice(Math.max(0, text.indexOf("{")))));
      } catch {
        done({ error: `openclaw plugins inspect cachefold --json: ${err?.code ?? "exit 0"}, ${String(stderr || text).trim().split("\n").pop()?.slice(0, 200) ?? "no output"}` });
      }
    });
  });
}

/** An assistant message OpenClaw wrote itself (command answers, chat.inject, delivery mirrors): no model call. */
function hostWritten(m) {
  return (m?.provider === "openclaw" && (m.model === "gateway-injected" || m.model === "delivery-mirror")) || typeof m?.openclawDeliveryMirror?.kind === "string";
}

/**
 * Model calls OpenClaw recorded in its own transcript store for `sessions` after cachefold last
 * wrote their state: turns another engine served (the slot's plugin disabled, e.g. by an enable
 * refused for capability consent; slot changed; quarantine). `dbs`: the host's SQLite stores.
 * Returns [{sessionId, calls, firstAt, lastAt}] for the sessions with such calls, or null when
 * the stores cannot be read (no node:sqlite, none found).
 */
export async function callsCachefoldMissed(sessions, dbs) {
  if (!dbs.length || !sessions.length) return null;
  let sqlite;
  let zlib;
  try {
    sqlite = await import("node:sqlite");
    zlib = await import("node:zlib");
  } catch {
    return null;
  }
  const out = [];
  let read = 0;
  for (const db of dbs) {
    let conn;
    try {
      conn = new sqlite.DatabaseSync(db, { readOnly: true });
      const q = conn.prepare("SELECT event_json AS j, event_zstd AS z, created_at AS at FROM transcript_events WHERE session_id = ? AND created_at > ? ORDER BY seq");
      read += 1;
      for (const s of sessions) {
        let calls = 0;
        let firstAt = null;
        let lastAt = null;
        for (const r of q.all(s.sessionId, Math.floor(s.updatedAt))) {
          let e;
          try {
            e = JSON.parse(r.j ?? zlib.zstdDecompressSync(Buffer.from(r.z)).toString("utf8"));
          } catch {
            continue;
          }
          const m = e?.type === "message" ? e.message : null;
          if (m?.role !== "assistant" || hostWritten(m)) continue;
          calls += 1;
          firstAt ??= Number(r.at);
          lastAt = Number(r.at);
        }
        if (calls) out.push({ sessionId: s.sessionId, db, calls, firstAt, lastAt });
      }
    } catch {
      /* not an OpenClaw store, or locked: skip it */
    } finally {
      try {
        conn?.close();
      } catch {}
    }
  }
  return read ? out : null;
}

/** All doctor checks: [{id, status: ok|warn|fail, message, fix?}]. */
export async function doctorChecks(ctx, io = {}) {
  const checks = [];
  const add = (id, status, message, fix) => checks.push({ id, status, message, ...(fix ? { fix } : {}) });
  const { config: host, source, error } = loadHostConfig(io);
  if (!host) add("config", "warn", `OpenClaw config ${source} not readable (${error}); host checks skipped`, "run inside `openclaw cachefold doctor` or set OPENCLAW_CONFIG_PATH");
  else {
    const slot = host.plugins?.slots?.contextEngine;
    if (slot === "cachefold") add("slot", "ok", "plugins.slots.contextEngine = cachefold");
    else add("slot", "fail", `plugins.slots.contextEngine is ${slot ? JSON.stringify(slot) : "unset (OpenClaw uses legacy)"}`, "openclaw config set plugins.slots.contextEngine cachefold");
    const entry = host.plugins?.entries?.cachefold;
    if (host.plugins?.enabled === false) add("entry", "fail", "plugins.enabled is false: no plugin loads", "openclaw config set plugins.enabled true --strict-json");
    else if (entry?.enabled === false) add("entry", "fail", "plugins.entries.cachefold.enabled is false: the engine, the tool-result middleware and the tools are off", "openclaw plugins enable cachefold");
    else if (Array.isArray(host.plugins?.deny) && host.plugins.deny.includes("cachefold")) add("entry", "fail", "plugins.deny lists cachefold", "remove cachefold from plugins.deny");
    else if (Array.isArray(host.plugins?.allow) && !host.plugins.allow.includes("cachefold")) add("entry", "fail", "plugins.allow does not list cachefold", "add cachefold to plugins.allow");
    else add("entry", "ok", entry ? "plugin entry enabled" : "no plugins.entries.cachefold (enabled by default when installed)");
  }
  // ownsCompaction and the middleware contract.
  if (ctx.config.ownsCompaction === false) add("compaction", "warn", "ownsCompaction is false: the host's compaction rewrites the history (a full cache miss each time) and assemble runs once per turn", "openclaw config set plugins.entries.cachefold.config.ownsCompaction true --strict-json");
  else add("compaction", "ok", "ownsCompaction: cachefold folds instead of the host's compaction");
  let manifest = null;
  try {
    manifest = JSON.parse(readFileSync(new URL("../openclaw.plugin.json", import.meta.url), "utf8"));
  } catch {}
  const mwContract = manifest?.contracts?.agentToolResultMiddleware?.includes("openclaw");
  if (ctx.config.persist?.enabled === false) add("middleware", "warn", "persist.enabled is false: large tool outputs stay in the history whole");
  else if (ctx.config.persist?.middleware === false) add("middleware", "warn", "persist.middleware is false: results are shrunk at persist time, so the turn after a large result misses the cache once", "openclaw config set plugins.entries.cachefold.config.persist.middleware true --strict-json");
  else if (!mwContract) add("middleware", "fail", "the manifest lacks contracts.agentToolResultMiddleware [\"openclaw\"]: reinstall cachefold");
  else add("middleware", "ok", "tool results are shrunk before the model sees them (needs the entry enabled)");
  // Capability consent, as OpenClaw itself sees it (only where an inspection can be had: inside
  // the openclaw CLI, or given by the caller).
  const inspector = io.inspectPlugin ?? (io.inHost ? inspectThroughHost : null);
  if (inspector) {
    let inspect;
    try {
      inspect = await inspector();
    } catch (err) {
      inspect = { error: err?.message ?? String(err) };
    }
    let diskManifest = manifest;
    const root = inspect?.plugin?.rootDir;
    if (root) {
      try {
        diskManifest = JSON.parse(readFileSync(join(root, "openclaw.plugin.json"), "utf8"));
      } catch {}
    }
    const c = consentCheck(inspect, diskManifest);
    add("consent", c.status, c.message, c.fix);
  }
  // Plugin config problems (unknown keys, bad values).
  const problems = ctx.configProblems ?? [];
  if (problems.length) add("plugin-config", "warn", problems.map((p) => p.message).join("\n"));
  else add("plugin-config", "ok", "plugin config valid");
  if (host) {
    // Model vs targetModels.
    const models = modelIds(host);
    const mode = ctx.config.mode;
    if (mode === "off") add("model", "warn", "mode is off: everything is passed through", "openclaw config set plugins.entries.cachefold.config.mode auto");
    else if (!models.length) add("model", "warn", "no agents.defaults.model configured; cannot check targetModels");
    else {
      const bad = models.filter((m) => mode !== "always" && !ctx.config.targetModels.some((p) => globMatch(p, m.id) || globMatch(p, m.id.split("/").pop())));
      if (bad.length) add("model", "fail", bad.map((m) => `${m.where} = ${m.id} does not match targetModels ${JSON.stringify(ctx.config.targetModels)}: cachefold passes it through`).join("\n"), `openclaw config set plugins.entries.cachefold.config.targetModels '${JSON.stringify([...ctx.config.targetModels, `*${bad[0].id.split("/").pop()}*`])}' --strict-json`);
      else add("model", "ok", `${models.map((m) => m.id).join(", ")} matched by targetModels`);
    }
    // Host settings that defeat the prefix cache.
    const found = [];
    for (const [where, a] of agentScopes(host)) {
      for (const k of ["envelopeTimestamp", "envelopeElapsed", "envelopeTimezone"]) {
        if (a[k] !== undefined && a[k] !== "off" && a[k] !== false) found.push({ status: "warn", message: `${where}.${k} = ${JSON.stringify(a[k])}: per-message envelope time (legacy key; OpenClaw 2026.9.6 removes it and renders envelopes from the stored message time)`, fix: `openclaw config unset ${where}.${k} (or openclaw doctor --fix)` });
      }
      if (a.contextPruning?.mode === "cache-ttl") found.push({ status: "fail", message: `${where}.contextPruning.mode = "cache-ttl": old tool results are trimmed after the TTL, rewriting the history cachefold keeps byte-stable (a cache miss from the first trimmed result on)`, fix: `openclaw config set ${where}.contextPruning.mode off` });
      if (a.params?.cacheRetention === "none") found.push({ status: "fail", message: `${where}.params.cacheRetention = "none": prompt caching is switched off`, fix: `openclaw config unset ${where}.params.cacheRetention` });
      for (const [model, m] of Object.entries(a.models ?? {})) if (m?.params?.cacheRetention === "none") found.push({ status: "fail", message: `${where}.models["${model}"].params.cacheRetention = "none": prompt caching is switched off`, fix: `openclaw config unset '${where}.models["${model}"].params.cacheRetention'` });
    }
    if (found.length) for (const f of found) add("host-cache", f.status, f.message, f.fix);
    else add("host-cache", "ok", "no host setting that rewrites the cached prefix (contextPruning cache-ttl, cacheRetention none, envelope time keys)");
  }
  // Decision log / gateway log: degraded or quarantined.
  const events = readDecisionLog(ctx);
  const sessions = (await listSessions(ctx.stateDir)).slice(0, 10);
  const lastAssemble = (events ?? []).reduce((t, e) => (e.event === "assemble" && !e.passthrough ? Math.max(t, Date.parse(e.at ?? "") || 0) : t), 0);
  const gw = hostLogHits(io.hostLogFiles ?? hostLogFiles(host), lastAssemble);
  if (gw?.length) add("quarantine", "fail", `OpenClaw's log says it ran legacy instead of cachefold (or quarantined it) after cachefold's last managed turn:\n${gw.slice(-3).join("\n")}`, "openclaw logs --follow while sending a message; fix the cause it names, then openclaw gateway restart");
  if (!events) add("decision-log", "warn", "no decision log: engine state per session is unknown", "openclaw config set plugins.entries.cachefold.config.logFile ~/.openclaw/cachefold/decisions.jsonl");
  else {
    const degraded = sessions.map((s) => ({ s, e: engineState(events, s.sessionId) })).filter((x) => x.e.state === "degraded");
    const quarantined = events.filter((e) => e.event === "quarantine").length;
    if (degraded.length) add("decision-log", "fail", degraded.map((x) => `session ${x.s.sessionId} degraded: ${x.e.reason}`).join("\n"), "check the gateway log (openclaw logs) for cachefold errors");
    else if (quarantined) add("decision-log", "warn", `${quarantined} sessions have messages the core could not read (kept as sent)`);
    else add("decision-log", "ok", "no degraded session in the decision log");
  }
  // Turns OpenClaw served without cachefold (its own transcript has model calls cachefold never saw).
  const missed = await callsCachefoldMissed(sessions, io.transcriptDbs ?? transcriptDbs());
  if (missed?.length) {
    add(
      "engine",
      "fail",
      missed.map((m) => `session ${m.sessionId}: ${m.calls} model call(s) since ${new Date(m.firstAt).toISOString()} ran without cachefold (OpenClaw's transcript has them, cachefold's state does not): OpenClaw served these turns with another engine`).join("\n") +
        "\n(the slot's plugin disabled, e.g. an enable refused for capability consent; the slot changed; or a quarantine: the other checks name the cause)",
      "fix the cause named above; the next turn then runs on cachefold (openclaw cachefold status shows it active)",
    );
  } else if (missed) add("engine", "ok", sessions.length ? "every model call OpenClaw recorded for these sessions went through cachefold" : "no sessions yet");
  // Predicted vs reported hits.
  const off = [];
  for (const s of sessions) {
    const { stats } = await readSession(ctx, s);
    if (stats.calls >= 2 && stats.predictionErrorPct > 10) {
      const d = stats.lastDivergence;
      off.push(`session ${s.sessionId}: predicted ${pct(stats.predictedHitPct)} vs reported ${pct(stats.hitPct)}${d ? `; first diverging message ${d.at} (${d.cause})` : ""}`);
    }
  }
  if (off.length) add("prediction", "warn", off.join("\n"), "openclaw cachefold report <session> shows the calls; the cause names what changed the prefix");
  else add("prediction", "ok", sessions.length ? "predicted and reported cache hits agree (within 10 points)" : "no sessions yet");
  return checks;
}

async function doctorRun(args, io) {
  const checks = await doctorChecks(io.ctx, io);
  const failed = checks.filter((c) => c.status === "fail").length;
  const warned = checks.filter((c) => c.status === "warn").length;
  const text = checks.map((c) => `${c.status.toUpperCase().padEnd(4)} ${c.id.padEnd(13)} ${c.message.replace(/\n/g, "\n                   ")}${c.fix ? `\n                   fix: ${c.fix}` : ""}`).join("\n");
  io.o.out({ ok: failed === 0, failed, warnings: warned, checks }, `${text}\n${failed} failing, ${warned} warnings`);
  return failed ? E.fail : E.ok;
}

// ---- gc / export / restore ---------------------------------------------------------------------

const OWNED = ["sessions", "artifacts", "lessons", "reports", "exports", "restored"];

async function gcRun(args, io) {
  const { opts } = parseFlags(args);
  const ctx = io.ctx;
  if (opts.all) {
    const present = OWNED.map((d) => join(ctx.stateDir, d)).filter((p) => existsSync(p));
    if (!opts.yes) {
      io.o.err(`gc --all removes everything cachefold stored under ${ctx.stateDir} (${present.map((p) => p.slice(ctx.stateDir.length + 1)).join(", ") || "nothing yet"}); add --yes to confirm`);
      return E.usage;
    }
    for (const p of present) rmSync(p, { recursive: true, force: true });
    io.o.out({ removed: present, stateDir: ctx.stateDir }, present.length ? present.map((p) => `removed ${p}`).join("\n") : "nothing to remove");
    return E.ok;
  }
  const maxBytes = opts.maxBytes !== undefined ? Number(opts.maxBytes) : ctx.config.artifacts?.maxBytes;
  if (!Number.isFinite(maxBytes) || maxBytes < 0) {
    io.o.err("usage: openclaw cachefold gc [--max-bytes N] | gc --all --yes");
    return E.usage;
  }
  const r = await collectGarbage(ctx.stateDir, { maxBytes });
  io.o.out(r, `scanned ${r.scanned} artifacts, ${r.bytesBefore} → ${r.bytesAfter} bytes; evicted ${r.evicted.length}; kept ${r.liveKept} referenced by live sessions${r.overBudget ? " (still over budget: live references)" : ""}`);
  return E.ok;
}

const ID_IN_TEXT = /→ artifact ([0-9a-f]{40})/g;

async function exportRun(args, io) {
  const { pos, opts } = parseFlags(args);
  const ctx = io.ctx;
  if (!pos[0]) {
    io.o.err("usage: openclaw cachefold export <session> [--out FILE] [--session-key KEY]");
    return E.usage;
  }
  const s = await findSession(ctx.stateDir, pos[0]);
  if (!s) {
    io.o.err(`no cachefold session matches ${pos[0]}`);
    return E.notFound;
  }
  const { stats, snapshot, paths } = await readSession(ctx, s);
  const folds = {};
  const ids = new Set();
  for (const id of store.listFolds(paths)) {
    folds[id] = store.readFold(paths, id) ?? "";
    for (const m of folds[id].matchAll(ID_IN_TEXT)) ids.add(m[1]);
  }
  for (const key of [s.sessionId, opts.sessionKey].filter(Boolean)) for (const id of sessionArtifactIds(ctx.stateDir, key)) ids.add(id);
  const artifacts = {};
  const missing = [];
  for (const id of ids) {
    const t = readArtifact(ctx.stateDir, id);
    if (t == null) missing.push(id);
    else artifacts[id] = t;
  }
  const bundle = { format: "cachefold-export", version: 1, sessionId: s.sessionId, exportedAt: new Date().toISOString(), stats, state: JSON.parse(snapshot), folds, artifacts, missingArtifacts: missing };
  const out = resolve(opts.out ?? join(ctx.stateDir, "exports", `${s.name}.json`));
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, JSON.stringify(bundle));
  io.o.out({ path: out, sessionId: s.sessionId, folds: Object.keys(folds).length, artifacts: Object.keys(artifacts).length, missingArtifacts: missing.length }, `wrote ${out} (${Object.keys(folds).length} folds, ${Object.keys(artifacts).length} artifacts${missing.length ? `, ${missing.length} missing` : ""})`);
  return E.ok;
}

/** Host transcript databases that may hold a session (per agent). */
function transcriptDbs(agent) {
  const root = join(openclawStateDir(), "agents");
  let agents = [];
  try {
    agents = agent ? [agent] : readdirSync(root);
  } catch {
    return [];
  }
  return agents.map((a) => join(root, a, "agent", "openclaw-agent.sqlite")).filter((p) => existsSync(p));
}

/** Replace every shrunk preview in a transcript event by its artifact's original text. */
export function restoreEvent(core, stateDir, event, counts) {
  const content = event?.message?.content;
  if (!Array.isArray(content)) return event;
  let changed = false;
  const next = content.map((part) => {
    if (part?.type !== "text" || typeof part.text !== "string") return part;
    const id = core.isShrunk(part.text);
    if (!id) return part;
    const original = readArtifact(stateDir, id);
    if (original == null) {
      counts.missing.push(id);
      return part;
    }
    counts.restored += 1;
    changed = true;
    return { ...part, text: original };
  });
  return changed ? { ...event, message: { ...event.message, content: next } } : event;
}

async function restoreRun(args, io) {
  const { pos, opts } = parseFlags(args);
  const ctx = io.ctx;
  const sessionId = pos[0];
  if (!sessionId) {
    io.o.err("usage: openclaw cachefold restore <sessionId> [--db FILE] [--agent ID] [--out FILE.jsonl]");
    return E.usage;
  }
  let sqlite;
  try {
    sqlite = await import("node:sqlite");
  } catch {
    io.o.err(`restore reads OpenClaw's SQLite transcript with node:sqlite, which needs Node >= 22.5 (this is ${process.version}; OpenClaw itself runs on Node 24)`);
    return E.error;
  }
  const core = await loadCore();
  const dbs = opts.db ? [resolve(opts.db)] : transcriptDbs(opts.agent);
  for (const db of dbs) {
    const conn = new sqlite.DatabaseSync(db, { readOnly: true });
    let rows;
    try {
      rows = conn.prepare("SELECT seq, event_json, event_zstd FROM transcript_events WHERE session_id = ? ORDER BY seq").all(sessionId);
    } finally {
      conn.close();
    }
    if (!rows.length) continue;
    const zlib = await import("node:zlib");
    const counts = { events: rows.length, restored: 0, missing: [] };
    const lines = rows.map((r) => {
      const text = r.event_json ?? zlib.zstdDecompressSync(Buffer.from(r.event_zstd)).toString("utf8");
      return JSON.stringify(restoreEvent(core, ctx.stateDir, JSON.parse(text), counts));
    });
    const out = resolve(opts.out ?? join(ctx.stateDir, "restored", `${core.sessionDirName(sessionId)}.jsonl`));
    mkdirSync(dirname(out), { recursive: true });
    writeFileSync(out, `${lines.join("\n")}\n`);
    io.o.out({ path: out, db, sessionId, events: counts.events, restored: counts.restored, missing: counts.missing }, `wrote ${out}: ${counts.events} events, ${counts.restored} previews replaced by their originals${counts.missing.length ? `, ${counts.missing.length} artifacts missing` : ""} (the host database ${db} was only read)`);
    return E.ok;
  }
  io.o.err(`no transcript of session ${sessionId} in ${dbs.length ? dbs.join(", ") : `${join(openclawStateDir(), "agents")}/*/agent/openclaw-agent.sqlite`}`);
  return E.notFound;
}

// ---- registration ----------------------------------------------------------------------------

/** [name, {description, usage, run}] for cli.js (a function: safe across the import cycle). */
export function userCommands() {
  return [
    ["status", { description: "recent sessions: engine state, turns, folds, hit %, spend vs legacy, last cache break", run: statusRun }],
    ["report", { description: "per-call table of one session and an SVG cost/context chart", run: reportRun }],
    ["doctor", { description: "check the OpenClaw setup for cachefold (exit 5 when a check fails)", run: doctorRun }],
    ["gc", { description: "evict artifacts over the size budget (live sessions kept); --all --yes removes everything", run: gcRun }],
    ["export", { description: "one session's state, folds and referenced artifacts as a JSON bundle", run: exportRun }],
    ["restore", { description: "copy of a session's transcript with every shrunk preview replaced by its original", run: restoreRun }],
  ];
}

// ---- /cachefold in chat ------------------------------------------------------------------------

/** Handler of the `/cachefold` chat command: status | fold | recover <id>. */
export function chatCommand(ctx) {
  return {
    name: "cachefold",
    description: "cachefold: this session's cache status; `/cachefold fold` folds now; `/cachefold recover <id>` shows a stored output",
    acceptsArgs: true,
    requireAuth: true,
    async handler(cmd) {
      try {
        const [action = "", ...rest] = String(cmd?.args ?? "").trim().split(/\s+/).filter(Boolean);
        const sessionId = cmd?.sessionId ? String(cmd.sessionId) : null;
        if (action === "recover") {
          if (!rest[0]) return { text: "usage: /cachefold recover <artifact id | f1 | c1>" };
          const { recoverTool } = await import("./tools.js");
          const res = await recoverTool(ctx, { sessionId, sessionKey: cmd?.sessionKey }).execute("cachefold-command", { id: rest[0] });
          return { text: res.content[0].text };
        }
        if (!sessionId) return { text: "cachefold: no active session here" };
        if (action === "fold") {
          const { requestFold } = await import("./engine.js");
          const a = await requestFold(ctx, sessionId);
          return { text: a?.pending ? `cachefold: fold recorded; the next turn sends ~${a.tokensAfter} tokens instead of ~${a.tokensBefore}` : `cachefold: nothing to fold (${a?.reason ?? "no history recorded"})` };
        }
        if (action && action !== "status") return { text: "usage: /cachefold [status | fold | recover <id>]" };
        const name = (await loadCore()).sessionDirName(sessionId);
        const paths = store.sessionPaths(ctx.stateDir, name);
        const updatedAt = Math.max(mtime(paths.journal), mtime(paths.snapshot));
        const s = updatedAt ? { name, sessionId, updatedAt } : null;
        if (!s) return { text: "cachefold: no turns recorded for this session yet" };
        return { text: `cachefold: ${statusLine(await sessionStatus(ctx, s, readDecisionLog(ctx)))}` };
      } catch (err) {
        return { text: `cachefold: ${err?.message ?? err}` };
      }
    },
  };
}
