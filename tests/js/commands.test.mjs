// `openclaw cachefold status|report|doctor|gc|export|restore`, `/cachefold` and the config UX
// (unknown keys, profiles), through the real wasm build in pkg/.
import test from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync, writeFileSync, mkdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { join } from "node:path";
import { fakeApi, tempDir, user, assistantText, assistantCall, toolResult, pkgSkip, underNode24 } from "./helpers.mjs";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const skip = pkgSkip();
const manifest = JSON.parse(readFileSync(join(ROOT, "openclaw.plugin.json"), "utf8"));

const usage = (input, cacheRead, output = 20) => ({ input, output, cacheRead, cacheWrite: 0, totalTokens: input + cacheRead + output, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } });

/** Register the plugin, drive `turns` turns of one session, return {api, reg, stateDir, logFile}. */
export async function driveSession(sessionId = "sess-cli-1", turns = 4, extra = {}) {
  const stateDir = tempDir();
  const logFile = join(stateDir, "decisions.jsonl");
  const config = { stateDir, logFile, ...extra };
  const { default: plugin } = await import("../../js/index.js");
  const { api, reg } = fakeApi(config);
  const commands = [];
  api.registerCommand = (c) => commands.push(c);
  plugin.register(api);
  const history = [user("read the big file")];
  for (let t = 0; t < turns; t++) {
    const eng = await reg.engines.cachefold({});
    await eng.assemble({ sessionId, messages: history, model: "deepseek-v4-flash", tokenBudget: 100000 });
    const turn = [
      assistantCall(`c${t}`, "read", { path: `f${t}.txt` }),
      toolResult(`c${t}`, "read", `line of file ${t}\n`.repeat(40)),
      assistantText(`done ${t}`, usage(300, 1000 + 500 * t)),
    ];
    history.push(...turn);
    await eng.commitTurn({ sessionId, advancementKey: `k${t}`, messages: [history[history.length - 4] ?? history[0], ...turn] });
    history.push(user(`next ${t}`));
  }
  return { api, reg, commands, stateDir, logFile, config };
}

function sink() {
  let text = "";
  return { isTTY: false, write: (s) => (text += s), get text() { return text; } };
}

async function run(argv, config, extraIo = {}) {
  const { dispatch } = await import("../../js/cli.js");
  const stdout = sink();
  const stderr = sink();
  // No host log files unless a test gives some: this machine's /tmp/openclaw is not the test's.
  const code = await dispatch(argv, { stdout, stderr, pluginConfig: config, hostLogFiles: [], transcriptDbs: [], ...extraIo });
  let json = null;
  try {
    json = JSON.parse(stdout.text);
  } catch {}
  return { code, json, out: stdout.text, err: stderr.text };
}

test("status lists the session with engine state, turns, hits, spend vs legacy and the last break", { skip }, async () => {
  const { config } = await driveSession("sess-status", 3);
  const r = await run(["status", "--json"], config);
  assert.equal(r.code, 0, r.err);
  assert.equal(r.json.sessions.length, 1);
  const s = r.json.sessions[0];
  assert.equal(s.sessionId, "sess-status");
  assert.equal(s.engine, "active");
  assert.equal(s.turns, 3);
  assert.equal(s.calls, 6, "a tool call and a reply per turn");
  assert.ok(s.hitPct > 0 && s.costUsd > 0 && s.legacyEstimateUsd > s.costUsd, JSON.stringify(s));
  assert.ok(s.legacyRatio > 1);
  assert.ok("lastCacheBreak" in s && "predictedHitPct" in s && "folds" in s);
  assert.ok(r.json.artifacts.count >= 0);
  assert.match(r.json.legacyEstimate, /no cache hit/);
});

test("report prints the per-call rows and writes an SVG chart", { skip }, async () => {
  const { config, stateDir } = await driveSession("sess-report", 3);
  const r = await run(["report", "sess-report"], config);
  assert.equal(r.code, 0, r.err);
  assert.equal(r.json.calls.length, 6);
  for (const k of ["prompt", "hit", "miss", "predictedHit", "costUsd", "legacyEstimateUsd"]) assert.ok(k in r.json.calls[0], k);
  assert.equal(r.json.calls[3].hit, 1500);
  assert.ok(r.json.chart.startsWith(stateDir));
  const svg = readFileSync(r.json.chart, "utf8");
  assert.match(svg, /^<svg/);
  assert.match(svg, /legacy estimate/);
  assert.equal((await run(["report", "nope"], config)).code, 1);
  assert.equal((await run(["report"], config)).code, 2);
});

function hostConfig(over = {}) {
  return {
    plugins: { slots: { contextEngine: "cachefold" }, entries: { cachefold: { enabled: true, config: {} } } },
    agents: { defaults: { model: { primary: "deepseek/deepseek-v4-flash" } } },
    ...over,
  };
}

test("doctor passes a good setup and names each planted fault with its fix", { skip }, async () => {
  const { config } = await driveSession("sess-doctor", 2);
  const good = await run(["doctor", "--json"], config, { hostConfig: hostConfig() });
  assert.equal(good.code, 0, good.out);
  assert.equal(good.json.failed, 0, JSON.stringify(good.json.checks, null, 1));
  const byId = (j, id) => j.checks.filter((c) => c.id === id);
  for (const id of ["slot", "entry", "compaction", "middleware", "model", "host-cache", "decision-log"]) assert.equal(byId(good.json, id)[0]?.status, "ok", id);
  // The fake usage numbers are not what the engine predicts: a warning naming both.
  assert.match(byId(good.json, "prediction")[0].message, /predicted [\d.]+% vs reported [\d.]+%/);

  const faults = [
    ["slot", hostConfig({ plugins: { entries: { cachefold: { enabled: true } } } }), /contextEngine is unset/, /plugins.slots.contextEngine cachefold/],
    ["entry", hostConfig({ plugins: { slots: { contextEngine: "cachefold" }, entries: { cachefold: { enabled: false } } } }), /enabled is false/, /plugins enable cachefold/],
    ["model", hostConfig({ agents: { defaults: { model: "mistral/mistral-large" } } }), /mistral-large does not match targetModels/, /targetModels/],
    ["host-cache", hostConfig({ agents: { defaults: { model: "deepseek/deepseek-v4-flash", envelopeTimestamp: "on" } } }), /envelopeTimestamp/, /unset agents.defaults.envelopeTimestamp/],
    ["host-cache", hostConfig({ agents: { defaults: { model: "deepseek/deepseek-v4-flash", contextPruning: { mode: "cache-ttl" } } } }), /cache-ttl/, /contextPruning.mode off/],
  ];
  for (const [id, host, msg, fix] of faults) {
    const r = await run(["doctor", "--json"], config, { hostConfig: host });
    const c = byId(r.json, id).find((x) => x.status !== "ok");
    assert.ok(c, `${id} not flagged: ${JSON.stringify(r.json.checks)}`);
    assert.match(c.message, msg);
    assert.match(c.fix, fix);
    assert.equal(r.code, c.status === "fail" ? 5 : 0, `${id}: ${c.status}`);
  }
});

test("doctor reads a JSON5 OpenClaw config file when no loaded config is given", { skip }, async () => {
  const { config } = await driveSession("sess-json5", 1);
  const dir = tempDir();
  const file = join(dir, "openclaw.json");
  writeFileSync(file, `// OpenClaw config\n{\n  plugins: { slots: { contextEngine: 'legacy', }, },\n  agents: { defaults: { model: "deepseek/deepseek-v4-flash" } },\n}\n`);
  process.env.OPENCLAW_CONFIG_PATH = file;
  try {
    const r = await run(["doctor", "--json"], config);
    const slot = r.json.checks.find((c) => c.id === "slot");
    assert.equal(slot.status, "fail");
    assert.match(slot.message, /"legacy"/);
  } finally {
    delete process.env.OPENCLAW_CONFIG_PATH;
  }
});

test("doctor flags a session whose turns are committed without assemble (degraded)", { skip }, async () => {
  const { config, logFile } = await driveSession("sess-degraded", 1);
  const lines = [1, 2, 3].map((i) => JSON.stringify({ event: "commitTurn", sessionId: "sess-degraded", advancementKey: `x${i}`, status: "committed" }));
  writeFileSync(logFile, `${readFileSync(logFile, "utf8")}${lines.join("\n")}\n`);
  const r = await run(["doctor", "--json"], config, { hostConfig: hostConfig() });
  const c = r.json.checks.find((x) => x.id === "decision-log");
  assert.equal(c.status, "fail");
  assert.match(c.message, /sess-degraded degraded: \d+ turns committed since the last assemble/);
  assert.equal(r.code, 5);
  const st = await run(["status", "--json"], config);
  assert.equal(st.json.sessions[0].engine, "degraded");
});

/** An `openclaw plugins inspect cachefold --json` answer as OpenClaw 2026.9.6 gives it (the fields doctor reads). */
function inspectAnswer({ accepted = manifest, diagnostics = [], rootDir } = {}) {
  const contracts = Object.entries(accepted.contracts).flatMap(([k, ids]) => ids.map((id) => `${k}: ${id}`)).sort();
  return {
    plugin: { id: "cachefold", status: "loaded", enabled: true, ...(rootDir ? { rootDir } : {}) },
    diagnostics,
    install: {
      source: "npm",
      acceptedSurface: { channels: [], providers: [], tools: [...accepted.contracts.tools].sort(), contracts, hooks: [], mcpServers: [], cliCommands: accepted.cliCommands.map((c) => c.name), cliBackends: [], skills: [], dangerousConfigFlags: [] },
      acceptedSurfaceAt: "2026-11-23T18:24:30.111Z",
    },
  };
}

test("doctor checks capability consent as OpenClaw records it, and names the fix", { skip }, async () => {
  const { config } = await driveSession("sess-consent", 1);
  const good = await run(["doctor", "--json"], config, { hostConfig: hostConfig(), inspectPlugin: async () => inspectAnswer() });
  const ok = good.json.checks.find((c) => c.id === "consent");
  assert.equal(ok.status, "ok", JSON.stringify(ok));
  assert.match(ok.message, /agentToolResultMiddleware: openclaw/);
  assert.equal(good.code, 0, good.out);

  // The installed copy declares a tool and drops nothing; the accepted surface is the shipped one.
  const dir = tempDir();
  const wider = { ...manifest, contracts: { ...manifest.contracts, tools: [...manifest.contracts.tools, "cachefold_extra"] } };
  writeFileSync(join(dir, "openclaw.plugin.json"), JSON.stringify(wider));
  const hostSays = { level: "warn", pluginId: "cachefold", message: 'Plugin "cachefold" requires capability consent; disable and re-enable it or run `openclaw plugins enable cachefold --accept-capabilities`.' };
  const stale = await run(["doctor", "--json"], config, { hostConfig: hostConfig(), inspectPlugin: async () => inspectAnswer({ rootDir: dir, diagnostics: [hostSays] }) });
  const c = stale.json.checks.find((x) => x.id === "consent");
  assert.equal(c.status, "fail");
  assert.match(c.message, /declared but not accepted: tools: cachefold_extra, contracts: tools: cachefold_extra/);
  assert.match(c.message, /requires capability consent/);
  assert.match(c.message, /every turn is served by legacy/);
  assert.match(c.fix, /openclaw plugins enable cachefold --accept-capabilities/);
  assert.equal(stale.code, 5);

  // The middleware contract not accepted (an install from before it was declared).
  const noMw = { ...manifest, contracts: { tools: manifest.contracts.tools } };
  const mw = await run(["doctor", "--json"], config, { hostConfig: hostConfig(), inspectPlugin: async () => inspectAnswer({ accepted: noMw }) });
  assert.match(mw.json.checks.find((x) => x.id === "consent").message, /agentToolResultMiddleware: openclaw \(the tool-result middleware contract among them\)/);

  // OpenClaw's diagnostic alone (a surface doctor does not model) is enough to fail.
  const hostOnly = await run(["doctor", "--json"], config, { hostConfig: hostConfig(), inspectPlugin: async () => inspectAnswer({ diagnostics: [hostSays] }) });
  assert.equal(hostOnly.json.checks.find((x) => x.id === "consent").status, "fail");

  // No inspection (the host's command failed): a warning that says so, not a crash.
  const broken = await run(["doctor", "--json"], config, { hostConfig: hostConfig(), inspectPlugin: async () => { throw new Error("spawn openclaw ENOENT"); } });
  const w = broken.json.checks.find((x) => x.id === "consent");
  assert.equal(w.status, "warn");
  assert.match(w.message, /spawn openclaw ENOENT/);
  assert.equal(broken.code, 0);
  // Outside the openclaw CLI (no inspection to be had) the check is left out.
  const outside = await run(["doctor", "--json"], config, { hostConfig: hostConfig() });
  assert.equal(outside.json.checks.find((x) => x.id === "consent"), undefined);
  const { inspectThroughHost } = await import("../../js/host/openclaw.js");
  assert.match((await inspectThroughHost(["node", "/usr/bin/not-the-host"])).error, /not running inside the openclaw CLI/);
});

test("doctor reads OpenClaw's log for turns it ran on legacy (or quarantined) after cachefold's last managed turn", { skip }, async () => {
  const { config, logFile } = await driveSession("sess-hostlog", 1);
  const lastAssemble = readFileSync(logFile, "utf8").trim().split("\n").map((l) => JSON.parse(l)).filter((e) => e.event === "assemble").pop();
  const t = Date.parse(lastAssemble.at);
  const iso = (ms) => new Date(ms).toISOString();
  const dir = tempDir();
  // The host's text log and its JSON file log (OpenClaw 2026.9.6 formats).
  const text = join(dir, "gateway.log");
  const file = join(dir, "openclaw-file.log");
  const degraded = (ms) => `${iso(ms)} [context-engine] Context engine "cachefold" degraded to "legacy" for this logical turn: context engine "cachefold" is not registered. The "legacy" engine will handle only this turn; configuration is unchanged, and "cachefold" will be retried next turn.`;
  const quarantined = (ms) => JSON.stringify({ 0: '{"subsystem":"context-engine"}', 1: 'Context engine "cachefold" failed during assemble: boom; quarantining it for this process and falling back to default engine "legacy".', _meta: { date: iso(ms) } });
  writeFileSync(text, `${degraded(t - 60_000)}\n${iso(t - 1000)} [memory] Vector recall degraded.\n`);
  writeFileSync(file, `${quarantined(t - 30_000)}\n`);
  // Both before cachefold's last managed turn: it recovered, nothing to report.
  const old = await run(["doctor", "--json"], config, { hostConfig: hostConfig(), hostLogFiles: [text, file] });
  assert.equal(old.json.checks.find((c) => c.id === "quarantine"), undefined, JSON.stringify(old.json.checks));
  assert.equal(old.code, 0, old.out);
  // After it: named, with the host's reason, and a failing exit.
  writeFileSync(text, `${degraded(t + 60_000)}\n`);
  writeFileSync(file, `${quarantined(t + 30_000)}\n`);
  const now = await run(["doctor", "--json"], config, { hostConfig: hostConfig(), hostLogFiles: [text, file] });
  const q = now.json.checks.find((c) => c.id === "quarantine");
  assert.equal(q?.status, "fail", JSON.stringify(now.json.checks));
  assert.match(q.message, /degraded to "legacy" for this logical turn: context engine "cachefold" is not registered/);
  assert.match(q.message, /failed during assemble: boom; quarantining it/);
  assert.match(q.fix, /openclaw logs/);
  assert.equal(now.code, 5);
  // Unreadable logs: no check, no crash.
  const none = await run(["doctor", "--json"], config, { hostConfig: hostConfig(), hostLogFiles: [join(dir, "missing.log")] });
  assert.equal(none.json.checks.find((c) => c.id === "quarantine"), undefined);
  // Where doctor looks by default: logging.file first.
  const { hostLogFiles } = await import("../../js/host/openclaw.js");
  assert.equal(hostLogFiles({ logging: { file: text } })[0], text);
});

const DOCTOR_TRANSCRIPT_TEST = "doctor finds model calls in OpenClaw's transcript that cachefold never saw (turns served by another engine)";
test(DOCTOR_TRANSCRIPT_TEST, { skip }, async (t) => {
  // doctor reads the store with node:sqlite in its own process (OpenClaw's Node 24 has it; zstd
  // rows need Node >= 22.15): on an older Node the whole test runs under Node 24.
  const inProcess = await import("node:sqlite").then(async () => typeof (await import("node:zlib")).zstdCompressSync === "function", () => false);
  if (!inProcess) return underNode24(t, import.meta.url, DOCTOR_TRANSCRIPT_TEST);
  const { config, stateDir } = await driveSession("sess-engine", 1);
  const { listSessions } = await import("../../js/cli/sessions.js");
  const [sess] = await listSessions(stateDir);
  const dir = tempDir();
  const msg = (role, text, extra = {}) => JSON.stringify({ type: "message", message: { role, content: [{ type: "text", text }], timestamp: 1, ...extra } });
  // created_at = t0 + line index: two lines before cachefold's last write, four after it.
  const t0 = Math.floor(sess.updatedAt) - 1;
  const lines = [
    msg("user", "read the big file"),
    msg("assistant", "done 0", { provider: "deepseek", model: "deepseek-v4-flash" }),
    msg("user", "/cachefold"),
    msg("assistant", "cachefold: active", { provider: "openclaw", model: "gateway-injected" }),
    msg("user", "next"),
    msg("assistant", `served by legacy ${"x".repeat(400)}`, { provider: "deepseek", model: "deepseek-v4-flash" }),
  ];
  const jsonl = join(dir, "s.jsonl");
  writeFileSync(jsonl, `${lines.join("\n")}\n`);
  const db = join(dir, "openclaw-agent.sqlite");
  const spec = [{ id: "sess-engine", file: jsonl, t0 }];
  await (await import("./sqlite-store.mjs")).writeStore(db, spec);
  const missed = await (await import("../../js/host/openclaw.js")).callsCachefoldMissed([sess], [db, join(dir, "missing.sqlite")]);
  // The served turn and the host's own /cachefold answer are not counted; the last call is.
  assert.deepEqual(missed, [{ sessionId: "sess-engine", db, calls: 1, firstAt: t0 + 5, lastAt: t0 + 5 }]);
  const r = await run(["doctor", "--json"], config, { hostConfig: hostConfig(), transcriptDbs: [db] });
  const c = r.json.checks.find((x) => x.id === "engine");
  assert.equal(c.status, "fail");
  assert.match(c.message, /session sess-engine: 1 model call\(s\) since .* ran without cachefold/);
  assert.equal(r.code, 5);
});

test("gc keeps live artifacts; gc --all needs --yes and then removes what cachefold stored", { skip }, async () => {
  const { config, stateDir } = await driveSession("sess-gc", 1);
  const { writeArtifact } = await import("../../js/artifacts.js");
  const { createHash } = await import("node:crypto");
  const text = "x".repeat(5000);
  const id = createHash("sha1").update(text).digest("hex");
  writeArtifact(stateDir, id, text, { session: "agent:main:gc", tool: "bash" });
  const gc = await run(["gc", "--max-bytes", "0"], config);
  assert.equal(gc.code, 0, gc.err);
  assert.equal(gc.json.evicted.length, 0);
  assert.equal(gc.json.liveKept, 1);
  const refuse = await run(["gc", "--all"], config);
  assert.equal(refuse.code, 2);
  assert.match(refuse.err, /--yes/);
  assert.ok(existsSync(join(stateDir, "sessions")));
  const all = await run(["gc", "--all", "--yes"], config);
  assert.equal(all.code, 0);
  assert.ok(!existsSync(join(stateDir, "sessions")) && !existsSync(join(stateDir, "artifacts")));
  assert.ok(existsSync(stateDir), "the state dir itself (and the decision log) stay");
});

test("export writes state, folds and referenced artifacts as one JSON bundle", { skip }, async () => {
  const { config, stateDir } = await driveSession("sess-export", 2);
  const { writeArtifact } = await import("../../js/artifacts.js");
  const { createHash } = await import("node:crypto");
  const text = "y".repeat(3000);
  const id = createHash("sha1").update(text).digest("hex");
  writeArtifact(stateDir, id, text, { session: "agent:main:exp", tool: "bash" });
  const r = await run(["export", "sess-export", "--session-key", "agent:main:exp"], config);
  assert.equal(r.code, 0, r.err);
  const bundle = JSON.parse(readFileSync(r.json.path, "utf8"));
  assert.equal(bundle.format, "cachefold-export");
  assert.equal(bundle.sessionId, "sess-export");
  assert.equal(bundle.state.sessionId, "sess-export");
  assert.equal(bundle.artifacts[id], text);
  assert.equal(bundle.stats.calls, 4);
});

test("restore explains what it needs on a Node without node:sqlite, else restores previews", { skip }, async () => {
  const { config, stateDir } = await driveSession("sess-restore", 1);
  const { loadCore } = await import("../../js/core.js");
  const { restoreEvent } = await import("../../js/cli/gc.js");
  const core = await loadCore();
  const { writeArtifact } = await import("../../js/artifacts.js");
  const full = Array.from({ length: 600 }, (_, i) => `row ${i}`).join("\n");
  const { cliContext } = await import("../../js/cli.js");
  const cctx = await cliContext(config);
  const p = core.processToolResult(cctx.configJson, "bash", JSON.stringify({ role: "toolResult", toolName: "bash", content: [{ type: "text", text: full }] }), false);
  writeArtifact(stateDir, p.artifactId, p.artifactText, { session: "k", tool: "bash" });
  const shrunk = JSON.parse(p.messageJson);
  const counts = { restored: 0, missing: [] };
  const ev = restoreEvent(core, stateDir, { type: "message", message: shrunk }, counts);
  assert.equal(ev.message.content[0].text, full);
  assert.equal(counts.restored, 1);
  const r = await run(["restore", "sess-restore", "--db", join(stateDir, "none.sqlite")], config);
  // Without node:sqlite it says what it needs; with it, the missing store is the error.
  const hasSqlite = await import("node:sqlite").then(() => true, () => false);
  assert.equal(r.code, 4, r.err);
  assert.match(r.err, hasSqlite ? /unable to open database file/ : /Node >= 22.5/);
});

test("/cachefold answers status, fold and recover", { skip }, async () => {
  const { commands, stateDir } = await driveSession("sess-chat", 3);
  const cmd = commands.find((c) => c.name === "cachefold");
  assert.ok(cmd && cmd.acceptsArgs);
  const status = await cmd.handler({ args: "", sessionId: "sess-chat", sessionKey: "agent:main:chat", commandBody: "/cachefold", channel: "chat", isAuthorizedSender: true });
  assert.match(status.text, /^cachefold: active · 3 turns, 6 calls, 0 folds · hit [\d.]+% \(predicted [\d.]+%\) · spent \$[\d.]+ \(legacy estimate/);
  const fold = await cmd.handler({ args: "fold", sessionId: "sess-chat", commandBody: "/cachefold fold", channel: "chat", isAuthorizedSender: true });
  assert.match(fold.text, /^cachefold: (fold recorded|nothing to fold)/);
  const rec = await cmd.handler({ args: "recover f9", sessionId: "sess-chat", commandBody: "/cachefold recover f9", channel: "chat", isAuthorizedSender: true });
  assert.match(rec.text, /f9 is not a folded region of this session/);
  const none = await cmd.handler({ args: "", sessionId: "other", commandBody: "/cachefold", channel: "chat", isAuthorizedSender: true });
  assert.match(none.text, /no turns recorded/);
  assert.ok(existsSync(stateDir));
});

test("an unknown config key is reported with the nearest valid key and ignored", { skip }, async () => {
  const { default: plugin } = await import("../../js/index.js");
  for (const [key, near] of [["tailToken", "tailTokens"], ["tail_tokens", "tailTokens"], ["persist.previewChar", "persist.previewChars"], ["summary.maxToken", "summary.maxTokens"]]) {
    const [a, b] = key.split(".");
    const raw = b ? { stateDir: tempDir(), tailTokens: 9000, [a]: { [b]: 1 } } : { stateDir: tempDir(), tailTokens: 9000, [a]: 1 };
    if (a.startsWith("tail")) delete raw.tailTokens;
    const { api, reg } = fakeApi(raw);
    plugin.register(api);
    assert.equal(reg.errors.length, 1, reg.errors.join("\n"));
    assert.match(reg.errors[0], new RegExp(`unknown key ${key.replace(".", "\\.")} .*did you mean ${near.replace(".", "\\.")}\\?`));
  }
  const { resolveConfig } = await import("../../js/index.js");
  const { loadCore } = await import("../../js/core.js");
  const { config, problems } = resolveConfig(await loadCore(), { tailTokens: 9000, contextSafeIndex: true });
  assert.equal(config.tailTokens, 9000, "other keys kept");
  assert.equal(problems.length, 1);
});

test("profile sets the cost/recall knobs without overriding explicit ones", { skip }, async () => {
  const { resolveConfig } = await import("../../js/index.js");
  const { loadCore } = await import("../../js/core.js");
  const core = await loadCore();
  const def = resolveConfig(core, {}).config;
  const bal = core.profileKnobs("balanced");
  assert.deepEqual([def.tailTokens, def.minFoldTokens, def.foldRecordBudget, def.persist.previewChars, def.persist.defaultThreshold], [bal.tailTokens, bal.minFoldTokens, bal.foldRecordBudget, bal.persist.previewChars, bal.persist.defaultThreshold], "balanced = the defaults");
  for (const name of ["savings", "recall"]) {
    const { config, problems } = resolveConfig(core, { profile: name });
    assert.equal(problems.length, 0);
    const p = core.profileKnobs(name);
    assert.deepEqual([config.tailTokens, config.minFoldTokens, config.foldRecordBudget, config.persist.previewChars, config.persist.defaultThreshold], [p.tailTokens, p.minFoldTokens, p.foldRecordBudget, p.persist.previewChars, p.persist.defaultThreshold]);
  }
  const mixed = resolveConfig(core, { profile: "recall", tailTokens: 5000, persist: { thresholds: { bash: 3000 } } });
  assert.equal(mixed.config.tailTokens, 5000);
  assert.equal(mixed.config.minFoldTokens, 48000);
  assert.equal(mixed.config.persist.previewChars, 3000, "lowered to the explicit threshold");
  const bad = resolveConfig(core, { profile: "cheap", tailTokens: 5000 });
  assert.match(bad.problems[0].message, /profile = "cheap".*savings, balanced, recall/);
  assert.equal(bad.config.tailTokens, 5000);
  assert.equal(core.profileKnobs("cheap"), undefined);
  // Model gating is the core's (doctor asks it too): the full id or the part after the last "/".
  const gating = JSON.stringify(resolveConfig(core, { targetModels: ["deepseek-v4*"] }).config);
  assert.deepEqual(["deepseek/DeepSeek-V4-Flash", "deepseek-v4-pro", "openai/gpt-5.4", ""].map((m) => core.modelManaged(gating, m)), [true, true, false, false]);
  assert.deepEqual([core.profileKnobs("savings").persist.thresholds, def.persist.thresholds], [{ bash: 2000, exec: 2000, read: 6000, web_fetch: 2000 }, { bash: 4000, exec: 4000, read: 12000, web_fetch: 4000 }]);
});

test("a bad config value is reported under the key the core refused, and a rule between two keys names the other one", { skip }, async () => {
  const { resolveConfig } = await import("../../js/index.js");
  const core = await (await import("../../js/core.js")).loadCore();
  const only = (input) => {
    const { config, problems } = resolveConfig(core, input);
    assert.equal(problems.length, 1, problems.map((p) => p.message).join("\n"));
    return { config, problem: problems[0] };
  };
  // A map entry: the tool's key, its value; the other thresholds are kept.
  let r = only({ persist: { thresholds: { read: 10, bash: 5000 } } });
  assert.equal(r.problem.key, "persist.thresholds.read");
  assert.equal(r.problem.value, 10);
  assert.match(r.problem.message, /^cachefold config: persist\.thresholds\.read = 10 is not valid \(must be at least persist\.previewChars \(4000\)\)/);
  assert.equal(r.config.persist.thresholds.bash, 5000);
  r = only({ persist: { thresholds: { read: "lots" } } });
  assert.equal(r.problem.key, "persist.thresholds.read");
  // A price row: the field that is wrong.
  for (const [row, field] of [[{ hit: -1, miss: 1, output: 1 }, "hit"], [{ hit: 0, miss: 0, output: 1 }, "miss"], [{ hit: 0, miss: 1, output: -2 }, "output"], [{ hit: "a", miss: 1, output: 1 }, "hit"]]) {
    r = only({ prices: { x: row } });
    assert.equal(r.problem.key, `prices.x.${field}`, r.problem.message);
    assert.equal(r.problem.value, row[field]);
    assert.match(r.problem.message, new RegExp(`^cachefold config: prices\\.x\\.${field} = `));
  }
  // The preview: which persist key it must stay within, never itself.
  r = only({ persist: { previewChars: 50000 } });
  assert.equal(r.problem.key, "persist.previewChars");
  assert.match(r.problem.message, /is not valid \(must be at most persist\.(defaultThreshold|thresholds\.\w+) \(\d+\)\)/);
  assert.doesNotMatch(r.problem.message, /\(must be at least persist\.previewChars/);
  r = only({ persist: { previewChars: 10000, defaultThreshold: 20000, thresholds: { read: 30000, bash: 9000 } } });
  assert.equal(r.problem.key, "persist.previewChars");
  assert.match(r.problem.message, /must be at most persist\.thresholds\.bash \(9000\)/);
});

test("manifest: uiHints label and explain every config key; /cachefold alias; cli row", () => {
  const keys = [];
  const walk = (props, prefix) => {
    for (const [k, v] of Object.entries(props)) v.properties ? walk(v.properties, `${prefix}${k}.`) : keys.push(prefix + k);
  };
  walk(manifest.configSchema.properties, "");
  for (const k of keys) {
    assert.ok(manifest.uiHints[k]?.label && manifest.uiHints[k]?.help?.length > 10, `uiHints.${k}`);
  }
  assert.deepEqual(Object.keys(manifest.uiHints).sort(), keys.sort());
  assert.deepEqual(manifest.commandAliases, [{ name: "cachefold", kind: "runtime-slash", cliCommand: "cachefold" }]);
  assert.match(manifest.cliCommands[0].description, /status, report, doctor/);
});

test("cli-metadata registration stays light: CLI descriptors only", { skip }, async () => {
  const { default: plugin } = await import("../../js/index.js");
  const { api, reg } = fakeApi({ stateDir: join(tempDir(), "never") });
  const clis = [];
  api.registrationMode = "cli-metadata";
  api.registerCli = (fn, opts) => clis.push(opts);
  api.registerCommand = () => assert.fail("no chat command in cli-metadata mode");
  plugin.register(api);
  assert.equal(clis.length, 1);
  assert.equal(Object.keys(reg.engines).length, 0);
  assert.ok(!existsSync(api.pluginConfig.stateDir));
});

test("README samples of status, report, doctor and /cachefold are the commands' current output", { skip }, async () => {
  const { default: plugin } = await import("../../js/index.js");
  const { dispatch } = await import("../../js/cli.js");
  const stateDir = tempDir();
  const logFile = `${stateDir}/decisions.jsonl`;
  // The price row pinned: with price "auto" the figures follow the UTC peak band of the hour the
  // test runs in (peak 01-04 and 06-10 UTC on weekdays), and the sample would be stale for those hours.
  const price = "deepseek-flash-offpeak";
  const { api, reg } = fakeApi({ stateDir, logFile, price });
  const commands = [];
  api.registerCommand = (c) => commands.push(c);
  plugin.register(api);
  const hist = [user("read it")];
  for (let t = 0; t < 3; t++) {
    const e = await reg.engines.cachefold({});
    await e.assemble({ sessionId: "demo", messages: hist, model: "deepseek-v4-flash", tokenBudget: 100000 });
    const turn = [assistantText(`done ${t}`, usage(300, 1000 + 500 * t))];
    hist.push(...turn);
    await e.commitTurn({ sessionId: "demo", advancementKey: `k${t}`, messages: [hist[hist.length - 2], ...turn] });
    hist.push(user("next"));
  }
  const host = { plugins: { slots: { contextEngine: "legacy" }, entries: { cachefold: { enabled: true } } }, agents: { defaults: { model: "deepseek/deepseek-v4-flash", contextPruning: { mode: "cache-ttl" } } } };
  const readme = readFileSync(join(ROOT, "README.md"), "utf8");
  const sample = (name) => readme.match(new RegExp(`<!-- sample:${name} -->\\n\`\`\`text\\n([\\s\\S]*?)\`\`\``))?.[1];
  for (const argv of [["status"], ["report", "demo"], ["doctor"]]) {
    let text = "";
    const tty = { isTTY: true, write: (s) => (text += s) };
    // doctor inside the openclaw CLI also asks OpenClaw about capability consent (here: accepted).
    await dispatch(argv, { stdout: tty, stderr: tty, pluginConfig: { stateDir, logFile, price }, hostConfig: host, inspectPlugin: async () => inspectAnswer(), hostLogFiles: [], transcriptDbs: [] });
    const want = sample(argv[0]);
    assert.ok(want, `README has no sample of ${argv[0]}`);
    assert.equal(text.split(stateDir).join("<stateDir>").trimEnd(), want.trimEnd(), `README sample of ${argv.join(" ")} is stale`);
  }
  const chat = await commands.find((c) => c.name === "cachefold").handler({ args: "", sessionId: "demo", sessionKey: "agent:main:main", commandBody: "/cachefold", channel: "webchat", isAuthorizedSender: true });
  assert.ok(sample("chat"), "README has no sample of /cachefold");
  assert.equal(`/cachefold\n${chat.text}`, sample("chat").trimEnd(), "README sample of /cachefold is stale");
});

test("uninstall: a shrunk preview names the artifact file, and that file holds the original", { skip }, async () => {
  const { stateDir, reg } = await driveSession("sess-uninstall", 1);
  const mw = reg.middleware[0].handler;
  const text = Array.from({ length: 800 }, (_, i) => `output line ${i}`).join("\n");
  const out = await mw({ toolCallId: "c9", toolName: "bash", args: {}, result: { content: [{ type: "text", text }] } }, { runtime: "openclaw", sessionKey: "agent:main:u", sessionId: "sess-uninstall" });
  const header = out.result.content[0].text.split("\n")[0];
  const m = header.match(/→ artifact ([0-9a-f]{40}) \(file ([^)]+)\)\. /);
  assert.ok(m, header);
  assert.ok(m[2].startsWith(stateDir));
  assert.equal(readFileSync(m[2], "utf8"), text);
  const { loadCore } = await import("../../js/core.js");
  assert.equal((await loadCore()).isShrunk(out.result.content[0].text), m[1], "the core still reads the id");
});
