// Shared helpers for the JS tests: a fake OpenClaw plugin API and message builders.
import { mkdtempSync, readFileSync, existsSync, writeFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { execFileSync, spawnSync } from "node:child_process";
import assert from "node:assert/strict";

/** True under CI (`CI=true` or `CI=1`, as `.ci/run` runs). */
export const CI = /^(1|true)$/i.test(process.env.CI ?? "");

/**
 * The `skip` option of a test that needs something built or installed (pkg/, the native addon,
 * Node 24): false when `ok`, else `why` (reported as the skip reason). Under CI a missing
 * prerequisite is a failure, not a skip: this throws, and the test file fails with `why`.
 */
export function skipUnless(ok, why) {
  if (ok) return false;
  if (CI) throw new Error(`${why}: under CI=true a missing prerequisite is a failure, not a skip`);
  return why;
}

/** Inside a running test: skip with `why` outside CI, fail with it under CI. */
export function skipOrFail(t, why) {
  if (CI) throw new Error(`${why}: under CI=true a missing prerequisite is a failure, not a skip`);
  t.skip(why);
}

/** OpenClaw's Node (installed by `.ci/setup node24`), or $CACHEFOLD_NODE24. */
export const NODE24 = process.env.CACHEFOLD_NODE24 ?? fileURLToPath(new URL("../../.cache/node24/node_modules/node/bin/node", import.meta.url));

/** Whether this Node has node:sqlite (OpenClaw 2026.9.6 keeps its transcripts in SQLite). */
export const hasSqlite = await import("node:sqlite").then(
  () => true,
  () => false,
);

/**
 * Run the test named `name` of the test file `fileUrl` under Node 24 (for a test that needs
 * node:sqlite where this Node has none) and assert that it ran there and passed. Without
 * Node 24: skipped outside CI, a failure under CI.
 */
export function underNode24(t, fileUrl, name) {
  if (!existsSync(NODE24)) return skipOrFail(t, `needs node:sqlite (Node >= 22.15) or Node 24 at ${NODE24} (.ci/setup node24)`);
  const pattern = `^${name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}$`;
  // Without NODE_TEST_CONTEXT, which `node --test` sets for its own children: this run reports.
  const { NODE_TEST_CONTEXT: _, ...env } = process.env;
  const args = ["--test", "--test-reporter=tap", `--test-name-pattern=${pattern}`, fileURLToPath(fileUrl)];
  const r = spawnSync(NODE24, args, { encoding: "utf8", env, maxBuffer: 64 << 20 });
  const out = `${r.stdout}\n${r.stderr}`;
  assert.equal(r.status, 0, `under Node 24:\n${out}`);
  assert.match(r.stdout, /^# pass 1$/m, `under Node 24 the test did not run:\n${out}`);
  assert.match(r.stdout, /^# skipped 0$/m, `under Node 24 the test was skipped:\n${out}`);
  t.diagnostic(`ran under ${NODE24}`);
}

/** The `skip` option of a test that needs the wasm build in pkg/ (see skipUnless). */
export function pkgSkip() {
  return skipUnless(existsSync(new URL("../../pkg/cachefold_bg.wasm", import.meta.url)), "pkg/ not built (run `npm run build`)");
}

/**
 * The wasm core for tests: $CACHEFOLD_PKG (a wasm-pack --target web out dir) or pkg/, both
 * through js/core.js's gateway (the named API over the module's dispatchers); null when not
 * built or when it lacks `needs` (a function name).
 */
export async function loadTestCore(needs) {
  const dir = process.env.CACHEFOLD_PKG;
  if (dir) {
    const glue = await import(pathToFileURL(join(dir, "cachefold.js")).href);
    glue.initSync({ module: readFileSync(join(dir, "cachefold_bg.wasm")) });
    const { gatewayOf } = await import("../../js/core.js");
    return gatewayOf(glue);
  }
  if (!existsSync(new URL("../../pkg/cachefold_bg.wasm", import.meta.url))) return null;
  const { loadCore } = await import("../../js/core.js");
  const core = await loadCore();
  return typeof core[needs] === "function" ? core : null;
}

export function tempDir(prefix = "cachefold-test-") {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  madeDirs.push(dir);
  return dir;
}

// The directories this process made are removed when a test file's or a bench's process exits,
// also on Ctrl-C (some hold hundreds of MB: oversize results, artifacts, a 100K-message session's
// state). A helper script a test runs as a child keeps its directories: its parent may read them
// after it exits.
const madeDirs = [];
if (/(\.test|[\\/]bench-[\w-]+)\.mjs$/.test(process.argv[1] ?? "")) {
  process.on("exit", () => {
    for (const dir of madeDirs) rmSync(dir, { recursive: true, force: true });
  });
  if (!/\.test\.mjs$/.test(process.argv[1])) process.once("SIGINT", () => process.exit(130));
}

/** A fake `api` recording everything the plugin registers. */
export function fakeApi(pluginConfig = {}) {
  const reg = { engines: {}, hooks: {}, tools: [], middleware: [], errors: [], warnings: [] };
  const api = {
    id: "cachefold",
    name: "cachefold",
    pluginConfig,
    config: {},
    logger: {
      info() {},
      debug() {},
      warn: (m) => reg.warnings.push(String(m)),
      error: (m) => reg.errors.push(String(m)),
    },
    registerContextEngine(id, factory) {
      reg.engines[id] = factory;
    },
    on(name, handler, opts) {
      (reg.hooks[name] ??= []).push({ handler, opts });
    },
    registerTool(tool, opts) {
      reg.tools.push({ tool, opts });
    },
    registerAgentToolResultMiddleware(handler, opts) {
      reg.middleware.push({ handler, opts });
    },
  };
  return { api, reg };
}

/** Tool names a registration recorded (factories are called with a fake tool context). */
export function toolNames(reg) {
  const names = [];
  for (const { tool, opts } of reg.tools) {
    if (opts?.names) names.push(...opts.names);
    else if (opts?.name) names.push(opts.name);
    else if (typeof tool === "function") {
      const made = tool({ sessionId: "s", sessionKey: "agent:main:t", agentId: "main" });
      for (const t of [made].flat()) if (t?.name) names.push(t.name);
    } else if (tool?.name) names.push(tool.name);
  }
  return [...new Set(names)].sort();
}

let ts = 1_763_700_000_000;
export const user = (text) => ({ role: "user", content: [{ type: "text", text }], timestamp: (ts += 1000) });
export const assistantText = (text, usage) => ({
  role: "assistant",
  content: [{ type: "text", text }],
  api: "openai-completions",
  provider: "fake",
  model: "deepseek-v4-flash",
  usage: usage ?? { input: 0, output: 10, cacheRead: 0, cacheWrite: 0, totalTokens: 10, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
  stopReason: "stop",
  timestamp: (ts += 1000),
});
export const assistantCall = (id, name, args) => ({
  role: "assistant",
  content: [{ type: "toolCall", id, name, arguments: args }],
  api: "openai-completions",
  provider: "fake",
  model: "deepseek-v4-flash",
  usage: { input: 0, output: 10, cacheRead: 0, cacheWrite: 0, totalTokens: 10, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
  stopReason: "toolUse",
  timestamp: (ts += 1000),
});
export const toolResult = (id, name, text) => ({
  role: "toolResult",
  toolCallId: id,
  toolName: name,
  content: [{ type: "text", text }],
  isError: false,
  timestamp: (ts += 1000),
});

/**
 * A code-gen session in workspace `ws` whose digests show a test command passing (`testCommand`,
 * run in `ws`) and reads under src/ and tests/: its first assemble, the committed turn, and the
 * assemble that digests it (the core digests a message when an assemble first sees it).
 * Returns the turn's messages.
 */
export async function codeGenSession(engine, sessionId, ws, { testCommand = "npm test" } = {}) {
  const msgs = [
    user("add a test for the store"),
    assistantCall("r1", "read", { path: join(ws, "src/store.js") }),
    toolResult("r1", "read", "export {}"),
    assistantCall("r2", "read", { path: join(ws, "src/index.js") }),
    toolResult("r2", "read", "export {}"),
    assistantCall("r3", "read", { path: "tests/a.test.mjs" }),
    toolResult("r3", "read", "// a"),
    assistantCall("r4", "read", { path: "tests/b.test.mjs" }),
    toolResult("r4", "read", "// b"),
    assistantCall("c1", "exec", { command: `cd ${ws} && ${testCommand} 2>&1 | tail -5` }),
    toolResult("c1", "exec", "# tests 3\n# pass 3\n# fail 0"),
    assistantText("done"),
  ];
  await engine.assemble({ sessionId, messages: [], prompt: "add a test for the store", model: "deepseek-v4-flash" });
  await engine.commitTurn({ sessionId, advancementKey: "k1", messages: msgs });
  await engine.assemble({ sessionId, messages: msgs, prompt: "thanks", model: "deepseek-v4-flash" });
  return msgs;
}

const INDEX = new URL("../../js/index.js", import.meta.url).href;

/** Source of an ES module prelude that registers the plugin with `config` and binds `engine`. */
export function pluginPrelude(config) {
  return `
    import plugin from ${JSON.stringify(INDEX)};
    let f; plugin.register({ pluginConfig: ${JSON.stringify(config)}, logger: { info() {}, warn() {}, error: (m) => console.error(m) },
      registerContextEngine: (_i, fac) => (f = fac), on() {}, registerTool() {}, registerAgentToolResultMiddleware() {} });
    const engine = await f({});`;
}

/**
 * In a fresh Node process: register the plugin with `config`, commit each turn key with `msgs`
 * in session `sessionId`, and return the commit statuses.
 */
export function commitInNewProcess(config, sessionId, keys, msgs) {
  const script = `${pluginPrelude(config)}
    const out = [];
    for (const k of ${JSON.stringify(keys)}) {
      out.push((await engine.commitTurn({ sessionId: ${JSON.stringify(sessionId)}, advancementKey: k, messages: ${JSON.stringify(msgs)} })).status);
    }
    console.log(JSON.stringify(out));`;
  return JSON.parse(runModule(script).trim().split("\n").pop());
}

/** Run ES module source in a fresh Node process (from a temp file: no argv size limit); stdout. */
export function runModule(source, opts = {}) {
  const file = join(tempDir("cachefold-script-"), "main.mjs");
  writeFileSync(file, source);
  return execFileSync(process.execPath, [file], { encoding: "utf8", maxBuffer: 64 << 20, ...opts });
}

/**
 * The engine a fresh registration of the plugin with `config` creates (one per turn, as OpenClaw
 * does). A config the plugin rejects is an error here: the test would run on the defaults.
 */
export async function engineFor(config) {
  const { default: plugin } = await import("../../js/index.js");
  const { api, reg } = fakeApi(config);
  plugin.register(api);
  assert.deepEqual(reg.errors, [], "engineFor: the plugin rejected the test's config");
  return reg.engines.cachefold({});
}

/** The on-disk directory of one session's state. */
export async function sessionDir(stateDir, sessionId) {
  const { loadCore } = await import("../../js/core.js");
  return join(stateDir, "sessions", (await loadCore()).sessionDirName(sessionId));
}
