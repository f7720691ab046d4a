// Shared helpers for the JS tests: a fake OpenClaw plugin API and message builders.
import { mkdtempSync, readFileSync, existsSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { execFileSync } from "node:child_process";

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
  return mkdtempSync(join(tmpdir(), prefix));
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

/** The engine a fresh registration of the plugin with `config` creates (one per turn, as OpenClaw does). */
export async function engineFor(config) {
  const { default: plugin } = await import("../../js/index.js");
  const { api, reg } = fakeApi(config);
  plugin.register(api);
  return reg.engines.cachefold({});
}

/** The on-disk directory of one session's state. */
export async function sessionDir(stateDir, sessionId) {
  const { loadCore } = await import("../../js/core.js");
  return join(stateDir, "sessions", (await loadCore()).sessionDirName(sessionId));
}
