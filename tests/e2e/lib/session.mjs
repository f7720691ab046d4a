// Run one scripted scenario against one engine configuration, end to end, and collect
// everything the assertions and the compare table need.

import fs from "node:fs";
import path from "node:path";
import { Harness } from "./harness.mjs";
import { summarizeRun } from "./analyze.mjs";

/**
 * @param {object} spec
 * @param {string} spec.label              row label ("legacy", "cachefold", "cachefold ownsCompaction=false")
 * @param {string} spec.engine             "legacy" | "cachefold"
 * @param {Record<string,unknown>} [spec.pluginConfig]
 * @param {Record<string,unknown>} [spec.pluginHooks]  plugins.entries.<id>.hooks.*
 * @param {Record<string,unknown>} [spec.extraConfig]  deep-merged into openclaw.json
 * @param {object} scenario                from buildScenario()
 * @param {object} [opts]
 * @param {number} [opts.window]           context window (default scenario.defaultWindow)
 * @param {string} [opts.pluginDir]
 * @param {string} [opts.baseDir]
 * @param {boolean} [opts.keep]
 * @param {(s:string)=>void} [opts.log]
 * @param {"strict"|"optimistic"} [opts.cacheMode]
 * @param {string[]} [opts.input]         the model's input modalities (Harness `input`)
 * @param {boolean} [opts.transcript]     read the session's persisted transcript (default true)
 * @param {(h: Harness, result: object) => Promise<void>} [opts.inspect] called before the harness closes
 */
export async function runScenario(spec, scenario, opts = {}) {
  const t0 = Date.now();
  const h = await Harness.create({
    engine: spec.engine,
    pluginDir: opts.pluginDir,
    install: spec.install,
    pluginConfig: spec.engine === "legacy" ? undefined : { logFile: "<auto>", ...(spec.pluginConfig ?? {}) },
    pluginHooks: spec.pluginHooks,
    extraConfig: spec.extraConfig,
    contextWindow: opts.window ?? scenario.defaultWindow,
    files: scenario.files,
    baseDir: opts.baseDir,
    keep: opts.keep,
    cacheMode: opts.cacheMode,
    input: opts.input,
    log: opts.log,
  });
  const session = `${scenario.name}-${spec.engine}`.replace(/[^a-z0-9-]/gi, "-").toLowerCase();
  let result;
  try {
    await h.startGateway();
    for (const [i, t] of scenario.turns.entries()) {
      const r = await h.turn(session, t.message);
      r.kind = t.kind;
      if (!r.ok) opts.log?.(`[${spec.label}] turn ${i} (${t.kind}) failed: ${String(r.error).slice(0, 1500)}`);
    }
    // Each turn waited for the host's post-turn work (Harness#settle), so the logs are complete.
    const storeContainsNeedle = dirContains(path.join(h.state, "cachefold"), scenario.needle);
    const summary = summarizeRun({ requests: h.provider.requests, turns: h.turns, scenario, storeContainsNeedle });
    result = {
      label: spec.label,
      spec,
      scenario: scenario.name,
      window: opts.window ?? scenario.defaultWindow,
      dir: h.dir,
      summary,
      setupMs: h.setupMs,
      gatewayReadyMs: h.gatewayReadyMs,
      totalMs: Date.now() - t0,
      turns: h.turns,
      requests: h.provider.requests,
      events: h.decisionEvents(),
      logs: h.allLogs(),
      config: h.readConfig(),
      artifactsDir: h.artifactsDir(),
      artifacts: listFiles(h.artifactsDir()),
      stateDir: h.state,
      session,
    };
    const evTime = (e) => (typeof e.t === "number" ? e.t : Date.parse(e.at ?? ""));
    result.assemblesPerTurn = h.turns.map((t) => result.events.filter((e) => e.event === "assemble" && evTime(e) >= t.startedAt && evTime(e) <= t.endedAt).length);
    const sessionId = h.turns.map((t) => t.sessionId).find(Boolean) ?? null;
    result.sessionId = sessionId;
    if (opts.transcript !== false && sessionId) {
      try {
        result.transcript = await h.transcript(sessionId);
      } catch (e) {
        result.transcriptError = String(e.message ?? e);
      }
    }
    if (opts.inspect) await opts.inspect(h, result);
  } finally {
    await h.close({ keep: opts.keep });
  }
  return result;
}

export function listFiles(dir) {
  const out = [];
  const walk = (d) => {
    let entries = [];
    try {
      entries = fs.readdirSync(d, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else out.push({ path: p, bytes: fs.statSync(p).size });
    }
  };
  walk(dir);
  return out;
}

/** Does any file under `dir` contain `needle` (plain text files only; bounded to 64 MB total)? */
export function dirContains(dir, needle) {
  let budget = 64 << 20;
  for (const f of listFiles(dir)) {
    if (f.bytes > budget) continue;
    budget -= f.bytes;
    try {
      if (fs.readFileSync(f.path, "utf8").includes(needle)) return true;
    } catch {}
  }
  return false;
}
