// cachefold plugin entry: registers the context engine, the tool hooks and the agent tools.
// register() is synchronous (OpenClaw requires it); the wasm core is instantiated here once
// per process (~1 ms after the first compile) so synchronous hooks can use it.
import { homedir } from "node:os";
import { join, isAbsolute, resolve } from "node:path";
import { loadCoreSync } from "./core.js";
import { createEngineFactory } from "./engine.js";
import { registerHooks } from "./hooks.js";
import { registerTools } from "./tools.js";
import { registerCli } from "./cli.js";
import { registerLessons } from "./lessons.js";
import { ensureDir, logLine } from "./store.js";

/** Resolve the plugin config into a context shared by the engine, hooks and tools. */
export function makeContext(api) {
  const logger = api?.logger ?? console;
  const raw = api?.pluginConfig ?? {};
  const core = loadCoreSync();
  let config;
  let configError = null;
  try {
    config = core.parseConfig(JSON.stringify(raw));
  } catch (err) {
    // Never fail plugin load on a bad value: say exactly what is wrong and pass through.
    configError = err;
    config = { ...core.parseConfig("{}"), mode: "off" };
    logger.error?.(`cachefold: ${err.message} — running in passthrough mode until the config is fixed`);
  }
  const configJson = JSON.stringify(config);
  const base = process.env.OPENCLAW_STATE_DIR || join(homedir(), ".openclaw");
  const stateDir = config.stateDir ? (isAbsolute(config.stateDir) ? config.stateDir : resolve(config.stateDir)) : join(base, "cachefold");
  ensureDir(stateDir);
  const logFile = config.logFile || null;
  const ctx = {
    config,
    configJson,
    configError,
    stateDir,
    logger,
    log: (event) => logLine(logFile, event),
  };
  ctx.log({ event: "config", config, error: configError ? configError.message : null, pid: process.pid });
  return ctx;
}

export default {
  id: "cachefold",
  name: "cachefold",
  description: "Cache-first context engine for prefix-caching providers (DeepSeek first): append-only history, priced folds, lossless tool-output artifacts.",
  register(api) {
    registerCli(api);
    if (api.registrationMode === "cli-metadata") return; // CLI descriptors only: load nothing
    const ctx = makeContext(api);
    api.registerContextEngine("cachefold", createEngineFactory(ctx));
    registerHooks(api, ctx);
    registerTools(api, ctx);
    registerLessons(api, ctx);
  },
};
