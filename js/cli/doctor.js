// `openclaw cachefold doctor`: checks of the OpenClaw setup for cachefold (exit 5 when one fails).
import { join } from "node:path";
import { loadCore } from "../core.js";
import { pluginManifest } from "../config.js";
import { EXIT } from "./args.js";
import { readRegular } from "../io/files.js";
import { agentStores, callsCachefoldMissed, hostLogFiles, hostLogHits, hostStateDir, inspectThroughHost, loadHostConfig } from "../host/openclaw.js";
import { engineState, listSessions, pct, readDecisionLog, readSession } from "./sessions.js";

const MANIFEST_BYTES = 1 << 20;
const readJson = (path) => JSON.parse(readRegular(path, { maxBytes: MANIFEST_BYTES, follow: true }) ?? "null");

/** The host's agent settings: [where, object] for the defaults, each entry and each list item. */
function agentScopes(host) {
  const out = [["agents.defaults", host?.agents?.defaults]];
  for (const [name, a] of Object.entries(host?.agents?.entries ?? {})) out.push([`agents.entries.${name}`, a]);
  for (const [i, a] of (Array.isArray(host?.agents?.list) ? host.agents.list : []).entries()) out.push([`agents.list[${i}]`, a]);
  return out.filter(([, v]) => v && typeof v === "object");
}

/** The models the host's agents run: [{where, id}]. */
function modelIds(host) {
  return agentScopes(host)
    .map(([where, a]) => ({ where: `${where}.model`, id: typeof a.model === "string" ? a.model : a.model?.primary }))
    .filter((m) => typeof m.id === "string" && m.id);
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
  const manifest = pluginManifest();
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
        diskManifest = readJson(join(root, "openclaw.plugin.json"));
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
      const core = await loadCore();
      const bad = models.filter((m) => !core.modelManaged(ctx.configJson, m.id));
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
  // cachefold's last managed turn: the decision log's last managed assemble, else (logFile off)
  // the newest write of a session's own state.
  const lastAssemble = events
    ? events.reduce((t, e) => (e.event === "assemble" && !e.passthrough ? Math.max(t, Date.parse(e.at ?? "") || 0) : t), 0)
    : sessions.reduce((t, s) => Math.max(t, s.updatedAt), 0);
  const gw = hostLogHits(io.hostLogFiles ?? hostLogFiles(host), lastAssemble, { sessions });
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
  const missed = await callsCachefoldMissed(sessions, io.transcriptDbs ?? agentStores(hostStateDir()).map((a) => a.path));
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
  const unreadable = [];
  for (const s of sessions) {
    let stats;
    try {
      ({ stats } = await readSession(ctx, s));
    } catch (err) {
      unreadable.push(`session ${s.sessionId} (${s.dir}): ${err?.message ?? err}`);
      continue;
    }
    if (stats.calls >= 2 && stats.predictionErrorPct > 10) {
      const d = stats.lastDivergence;
      off.push(`session ${s.sessionId}: predicted ${pct(stats.predictedHitPct)} vs reported ${pct(stats.hitPct)}${d ? `; first diverging message ${d.at} (${d.cause})` : ""}`);
    }
  }
  if (unreadable.length) add("state", "fail", `cachefold cannot read the state of ${unreadable.length} session(s); they are passed through:\n${unreadable.join("\n")}`, "openclaw cachefold export <session> to keep a copy, then move the named directory aside");
  if (off.length) add("prediction", "warn", off.join("\n"), "openclaw cachefold report <session> shows the calls; the cause names what changed the prefix");
  else add("prediction", "ok", sessions.length ? "predicted and reported cache hits agree (within 10 points)" : "no sessions yet");
  return checks;
}

async function doctorRun(_args, io) {
  const checks = await doctorChecks(io.ctx, io);
  const failed = checks.filter((c) => c.status === "fail").length;
  const warned = checks.filter((c) => c.status === "warn").length;
  const text = checks.map((c) => `${c.status.toUpperCase().padEnd(4)} ${c.id.padEnd(13)} ${c.message.replace(/\n/g, "\n                   ")}${c.fix ? `\n                   fix: ${c.fix}` : ""}`).join("\n");
  io.o.out({ ok: failed === 0, failed, warnings: warned, checks }, `${text}\n${failed} failing, ${warned} warnings`);
  return failed ? EXIT.doctorFail : EXIT.ok;
}

export const doctorCommand = { description: "check the OpenClaw setup for cachefold (exit 5 when a check fails)", usage: "doctor [--json]", run: doctorRun };
