// `openclaw cachefold replay`: the user's own OpenClaw sessions (the host's per-agent SQLite
// store, `<stateDir>/agents/<agent>/agent/openclaw-agent.sqlite`) replayed through every strategy
// of the bench (OpenClaw legacy, the peer plugins, cachefold) with the exact DeepSeek tokenizer:
// "what cachefold would have saved you". The replay runs in the native addon (js/native.js),
// the same Rust bench code as `cachefold-bench`, so both give the same figures.
//
// Without the addon the command says why and how to build it, then falls back to what JS alone
// can tell honestly: the provider usage recorded in the same sessions (calls, prompt, cached and
// output tokens, as billed), read with node:sqlite (the host's Node 24; the wasm core cannot read
// SQLite and has neither the tokenizer nor the strategies). It names no saving in that case.
//
// Exit codes: 0 ok (also for the fallback; JSON `source` says which) · 1 no store or no session
// matches · 2 usage · 4 error (including: no addon and no node:sqlite to fall back on).
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { BUILD_HINT, loadNative } from "../native.js";
import { writeFileAtomic } from "../io/files.js";
import { agentStores, expandHome, hostStateDir, openTranscriptStore } from "../host/openclaw.js";
import { intFlag, UsageError } from "./args.js";

export { agentStores, hostStateDir } from "../host/openclaw.js";

const E = { ok: 0, notFound: 1, usage: 2, error: 4 };
const ROOT = fileURLToPath(new URL("../../", import.meta.url));

export const USAGE = `usage: openclaw cachefold replay [--session ID | --all] [--since WHEN] [--json]
       [--state-dir DIR] [--agent ID] [--db FILE.sqlite] [--out FILE.svg]
       [--tokens deepseek|o200k|bytes4] [--tokenizer FILE] [--prefix-tokens N]
       [--strategy S0,S1a,...] [--price KEY] [--window N] [--cold] [--jobs N] [--quiet]
  Replays your OpenClaw sessions through every context strategy of the bench (OpenClaw legacy,
  the peer plugins, cachefold) with the DeepSeek-V4 tokenizer and a prefix-cache simulator.
  --session ID   one session (id or unique prefix); --all every session; default: the most recent
  --since WHEN   sessions active since an ISO date/time or a duration ago (30m, 12h, 7d, 2w)
  --state-dir    OpenClaw's state dir (default $OPENCLAW_STATE_DIR, else ~/.openclaw)
  --db FILE      a store file instead of <state-dir>/agents/*/agent/openclaw-agent.sqlite
  --out FILE     where the chart goes (default <cachefold state>/reports/replay.svg)
  --tokens       how tokens are counted: deepseek (default; the exact DeepSeek-V4 tokenizer),
                 o200k (the bundled approximation; --o200k is the same), or bytes4 (UTF-8 bytes / 4,
                 rounded up: how the e2e suite's fake provider counts)
  --tokenizer    DeepSeek-V4 tokenizer.json (default $CACHEFOLD_TOKENIZER, else the checkout's
                 .cache/tokenizer/deepseek-v4/tokenizer.json); without one: o200k, said so
  --prefix-tokens N
                 your static prefix (system prompt + tool schemas, which a transcript does not
                 hold) is N tokens; default: the bench's OpenClaw profile (11,660 DeepSeek tokens)
exit codes: 0 ok (also the fallback without the addon), 1 nothing matches, 2 usage, 4 error`;

export const TOKEN_COUNTS = ["deepseek", "o200k", "bytes4"];
const STRING = ["session", "since", "state-dir", "agent", "db", "out", "tokenizer", "tokens", "prefix-tokens", "strategy", "price", "window", "jobs"];
const OPTIONS = Object.fromEntries([...STRING.map((k) => [k, { type: "string" }]), ...["all", "cold", "o200k", "quiet"].map((k) => [k, { type: "boolean" }])]);
/** Most worker threads a replay may start. */
export const MAX_JOBS = 64;

/** Check and convert the parsed flags (parseArgs values); throws UsageError. */
export function checkReplayOptions(values) {
  const opts = { ...values };
  if (opts.session && opts.all) throw new UsageError("--session and --all exclude each other");
  if (opts.o200k) {
    if (opts.tokens !== undefined && opts.tokens !== "o200k") throw new UsageError(`--o200k and --tokens ${opts.tokens} exclude each other`);
    opts.tokens = "o200k";
  }
  if (opts.tokens !== undefined && !TOKEN_COUNTS.includes(opts.tokens)) throw new UsageError(`--tokens: ${opts.tokens} is not one of ${TOKEN_COUNTS.join(", ")}`);
  if (opts.tokenizer !== undefined && opts.tokens !== undefined && opts.tokens !== "deepseek") throw new UsageError(`--tokenizer is the DeepSeek tokenizer's file; it does not go with --tokens ${opts.tokens}`);
  opts.prefixTokens = intFlag(values, "prefix-tokens", { min: 0, max: 10_000_000, what: "a token count" });
  opts.window = intFlag(values, "window", { min: 1, max: 100_000_000 });
  opts.jobs = intFlag(values, "jobs", { min: 1, max: MAX_JOBS, what: "a number of worker threads" });
  opts.stateDir = values["state-dir"];
  return opts;
}

/** `--since`: ISO date/time or a duration ago (`90s`, `30m`, `12h`, `7d`, `2w`) → epoch ms, or null. */
export function parseSince(text, now = Date.now()) {
  const m = /^(\d+(?:\.\d+)?)\s*([smhdw])$/i.exec(String(text).trim());
  if (m) return now - Number(m[1]) * { s: 1e3, m: 6e4, h: 36e5, d: 864e5, w: 6048e5 }[m[2].toLowerCase()];
  const t = Date.parse(text);
  return Number.isFinite(t) ? t : null;
}

/** Where the DeepSeek tokenizer is looked for, in order (the bench binary's order). */
export function tokenizerCandidates(opts, env = process.env) {
  if (opts.tokenizer) return [resolve(opts.tokenizer)];
  const out = [];
  if (env.CACHEFOLD_TOKENIZER) out.push(resolve(env.CACHEFOLD_TOKENIZER));
  out.push(join(ROOT, ".cache/tokenizer/deepseek-v4/tokenizer.json"));
  return out;
}

/**
 * Pick the sessions to replay from [{store, rows}] (rows: {sessionId, events, firstAt, lastAt}).
 * Returns {picked: [{store, sessionId, lastAt}], error?}.
 */
export function selectSessions(stores, opts, now = Date.now()) {
  let all = stores.flatMap(({ store, rows }) => rows.map((r) => ({ store, sessionId: r.sessionId, lastAt: r.lastAt, events: r.events })));
  if (opts.since !== undefined) {
    const t = parseSince(opts.since, now);
    if (t === null) return { error: `--since: not a date or duration: ${opts.since}`, usage: true };
    all = all.filter((s) => s.lastAt >= t);
  }
  if (opts.session) {
    const exact = all.filter((s) => s.sessionId === opts.session);
    const hits = exact.length ? exact : all.filter((s) => s.sessionId.startsWith(opts.session));
    if (hits.length > 1) return { error: `--session ${opts.session} is ambiguous: ${hits.map((h) => h.sessionId).join(", ")}` };
    return hits.length ? { picked: hits } : { error: `no session matches ${opts.session}` };
  }
  if (!all.length) return { error: opts.since !== undefined ? `no session active since ${opts.since}` : "no sessions in the store" };
  if (opts.all || opts.since !== undefined) return { picked: all };
  return { picked: [all.reduce((a, b) => (b.lastAt > a.lastAt ? b : a))] };
}

const money = (v) => `$${Number(v).toFixed(4)}`;

function bar(p, t0) {
  const w = 30;
  const filled = p.total ? Math.min(w, Math.floor((p.done * w) / p.total)) : 0;
  const secs = ((Date.now() - t0) / 1000).toFixed(1);
  return `\r${p.phase.padEnd(10)} [${"=".repeat(filled)}${" ".repeat(w - filled)}] ${p.done}/${p.total} calls  ${secs}s `;
}

/** The headline: cachefold (S3) against OpenClaw's own legacy engine (S1a), from the report totals. */
export function saving(totals) {
  const s1a = totals.find((t) => t.strategy === "S1a");
  const s3 = totals.find((t) => t.strategy === "S3");
  if (!s1a || !s3) return null;
  const legacyUsd = s1a.metrics.cost.headline;
  const cachefoldUsd = s3.metrics.cost.headline;
  const savedUsd = legacyUsd - cachefoldUsd;
  return { legacyUsd, cachefoldUsd, savedUsd, savedPct: legacyUsd > 0 ? (100 * savedUsd) / legacyUsd : 0 };
}

async function runNative(addon, addonPath, picked, opts, io, meta) {
  const o = io.o;
  const stderr = io.stderr ?? process.stderr;
  const byStore = new Map();
  for (const s of picked) {
    if (!byStore.has(s.store.path)) byStore.set(s.store.path, { path: s.store.path, label: s.store.label, sessions: [] });
    byStore.get(s.store.path).sessions.push(s.sessionId);
  }
  let tokenizer = null;
  let tokenizerPath = null;
  let tokenizerNote = null;
  const tokens = opts.tokens ?? "deepseek";
  const looked = tokens !== "deepseek" ? [] : tokenizerCandidates(opts, io.env ?? process.env);
  for (const p of looked) {
    try {
      tokenizer = readFileSync(p);
      tokenizerPath = p;
      break;
    } catch {
      /* next candidate */
    }
  }
  if (tokens === "o200k") tokenizerNote = "o200k (--tokens o200k): counts within ~3-7 % of DeepSeek's, block positions differ";
  else if (tokens === "bytes4") tokenizerNote = "bytes4 (--tokens bytes4): UTF-8 bytes / 4, rounded up, as the e2e suite's fake provider counts; not a real tokenizer";
  else if (!tokenizer) {
    tokenizerNote = `DeepSeek-V4 tokenizer not found (looked at ${looked.join(", ")}; fetch it with \`bash .ci/setup tokenizer\` in a checkout or set CACHEFOLD_TOKENIZER); using the o200k fallback: counts within ~3-7 %, block positions differ`;
    o.err(`cachefold replay: ${tokenizerNote}`);
  }
  const t0 = Date.now();
  let task;
  try {
    task = addon.startReplay({
      stores: [...byStore.values()],
      tokenizer: tokenizer ?? undefined,
      tokens: tokens === "deepseek" && !tokenizer ? "o200k" : tokens,
      prefixTokens: opts.prefixTokens,
      strategies: opts.strategy ? opts.strategy.split(",").map((s) => s.trim()).filter(Boolean) : undefined,
      price: opts.price,
      window: opts.window,
      cold: opts.cold ?? false,
      jobs: opts.jobs,
    });
  } catch (err) {
    o.err(`cachefold replay: ${err?.message ?? err}\n${USAGE}`);
    return E.usage;
  }
  const live = !opts.quiet && stderr.isTTY;
  for (;;) {
    const p = task.poll();
    if (live) stderr.write(bar(p, t0));
    if (p.phase === "done") break;
    await new Promise((r) => setTimeout(r, 150));
  }
  if (live) stderr.write("\n");
  const out = task.result();
  const seconds = (Date.now() - t0) / 1000;
  for (const w of out.warnings) o.err(`cachefold replay: ${w}`);
  const report = JSON.parse(out.json);
  const chart = resolve(opts.out ?? join(meta.cachefoldStateDir, "reports", "replay.svg"));
  writeFileAtomic(chart, out.svg, { mode: 0o644 });
  const save = saving(report.totals);
  const data = {
    source: "native",
    addon: addonPath,
    stateDir: meta.stateDir,
    stores: [...byStore.values()].map((s) => ({ path: s.path, sessions: s.sessions })),
    tokenizer: { name: report.header.tokenizer, path: tokenizerPath, note: tokenizerNote },
    prefix: { profile: report.header.prefixProfile, tokens: report.header.prefixTokens },
    seconds,
    jobs: out.jobs,
    saving: save,
    chart,
    warnings: out.warnings,
    report: { header: report.header, totals: report.totals, jobs: report.jobs.map(({ series, ...j }) => j) },
  };
  const calls = report.header.sessions.reduce((n, s) => n + s.calls, 0);
  const head = `replayed ${report.header.sessions.length} session(s), ${calls} model calls, through ${report.totals.length} strategies · tokenizer ${report.header.tokenizer} · ${report.header.price} · ${seconds.toFixed(1)} s`;
  const what = save
    ? `what cachefold would have saved you: ${money(save.savedUsd)} of ${money(save.legacyUsd)} (${save.savedPct.toFixed(1)} %) against OpenClaw's legacy engine (S3 ${money(save.cachefoldUsd)} vs S1a ${money(save.legacyUsd)})`
    : "(S1a and S3 not both replayed: no saving to name)";
  o.out(data, [head, "", out.markdown.trimEnd(), "", what, `chart: ${chart}`].join("\n"));
  return E.ok;
}

/** Recorded provider usage of one session's events (assistant messages' `usage`). */
export function recordedUsage(events) {
  const u = { calls: 0, prompt: 0, cached: 0, output: 0 };
  for (const e of events) {
    const m = e?.type === "message" ? e.message : null;
    if (m?.role !== "assistant") continue;
    u.calls += 1;
    const us = m.usage ?? {};
    const cached = Number(us.cacheRead ?? 0) || 0;
    u.prompt += (Number(us.input ?? 0) || 0) + cached + (Number(us.cacheWrite ?? 0) || 0);
    u.cached += cached;
    u.output += Number(us.output ?? 0) || 0;
  }
  return u;
}

async function runFallback(reason, stores, opts, io, meta) {
  const o = io.o;
  o.err(`cachefold replay: ${reason}\n  build it: ${BUILD_HINT}`);
  const opened = [];
  for (const s of stores) {
    let st;
    try {
      st = await openTranscriptStore(s.path);
    } catch (err) {
      o.err(`cachefold replay: ${err?.message ?? err}`);
      return E.error;
    }
    if (!st) {
      o.err(`cachefold replay: no fallback either: this Node (${process.version}) has no node:sqlite to read the store without the addon (OpenClaw itself runs on Node 24, where the fallback works)`);
      return E.error;
    }
    opened.push({ store: s, st });
  }
  try {
    const sel = selectSessions(opened.map(({ store, st }) => ({ store, rows: st.sessions() })), opts);
    if (sel.error) {
      o.err(`cachefold replay: ${sel.error}`);
      return sel.usage ? E.usage : E.notFound;
    }
    o.err("cachefold replay: falling back to the usage your provider recorded in these sessions: no strategy replay, no tokenizer, no saving estimate without the addon");
    const sessions = sel.picked.map((p) => {
      const { st } = opened.find((x) => x.store === p.store);
      let bad = 0;
      const usage = recordedUsage(
        (function* () {
          for (const { event } of st.events(p.sessionId)) {
            if (event) yield event;
            else bad += 1;
          }
        })(),
      );
      return { store: p.store.path, sessionId: p.sessionId, undecodableRows: bad, recorded: usage };
    });
    const tot = sessions.reduce((a, s) => ({ calls: a.calls + s.recorded.calls, prompt: a.prompt + s.recorded.prompt, cached: a.cached + s.recorded.cached, output: a.output + s.recorded.output }), { calls: 0, prompt: 0, cached: 0, output: 0 });
    const hit = tot.prompt ? (100 * tot.cached) / tot.prompt : 0;
    const data = { source: "recorded-usage", addon: { path: meta.addonPath, reason }, build: BUILD_HINT, stateDir: meta.stateDir, note: "no strategy replay without the native addon: these are the provider's recorded token counts, not a comparison", sessions, totals: { ...tot, hitPct: hit } };
    const lines = sessions.map((s) => `${s.sessionId.slice(0, 36).padEnd(36)} ${String(s.recorded.calls).padStart(5)} calls ${String(s.recorded.prompt).padStart(10)} prompt ${String(s.recorded.cached).padStart(10)} cached ${String(s.recorded.output).padStart(8)} output`);
    o.out(data, [`recorded usage (no replay: the native addon is missing)`, ...lines, `total: ${tot.calls} calls, ${tot.prompt} prompt tokens, ${hit.toFixed(1)} % cached`, `for the strategy replay build the addon: ${BUILD_HINT}`].join("\n"));
    return E.ok;
  } finally {
    for (const { st } of opened) st.close();
  }
}

async function replayRun({ values }, io) {
  const o = io.o;
  const opts = checkReplayOptions(values);
  const env = io.env ?? process.env;
  const stateDir = opts.stateDir ? expandHome(opts.stateDir) : hostStateDir(env);
  const stores = opts.db ? [{ agent: null, path: resolve(opts.db) }] : agentStores(stateDir, opts.agent ?? null);
  if (!stores.length) {
    o.err(`cachefold replay: no OpenClaw session store ${opts.db ? `at ${resolve(opts.db)}` : `under ${join(stateDir, "agents")}${opts.agent ? ` for agent ${opts.agent}` : ""} (looked for agents/*/agent/openclaw-agent.sqlite; --state-dir or OPENCLAW_STATE_DIR point elsewhere)`}`);
    return E.notFound;
  }
  for (const s of stores) s.label = s.agent ?? undefined;
  const meta = { stateDir, cachefoldStateDir: io.ctx?.stateDir ?? join(stateDir, "cachefold") };
  const { addon, path: addonPath, reason } = loadNative(io.addonPath ?? env.CACHEFOLD_NATIVE_ADDON ?? null);
  meta.addonPath = addonPath;
  if (!addon) return runFallback(reason, stores, opts, io, meta);
  const withRows = [];
  for (const s of stores) {
    try {
      withRows.push({ store: s, rows: JSON.parse(addon.listSessions(s.path)) });
    } catch (err) {
      o.err(`cachefold replay: ${err?.message ?? err}`);
      return E.error;
    }
  }
  const sel = selectSessions(withRows, opts);
  if (sel.error) {
    o.err(`cachefold replay: ${sel.error}`);
    return sel.usage ? E.usage : E.notFound;
  }
  try {
    return await runNative(addon, addonPath, sel.picked, opts, io, meta);
  } catch (err) {
    o.err(`cachefold replay: ${err?.message ?? err}`);
    return E.error;
  }
}

export const replayCommand = {
  description: "replay your OpenClaw sessions through every strategy (native addon): what cachefold would have saved you",
  usage: USAGE.replace(/^usage: openclaw cachefold /, ""),
  options: OPTIONS,
  run: replayRun,
};
