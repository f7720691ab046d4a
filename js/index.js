// cachefold plugin entry: registers the context engine, the tool hooks and the agent tools.
// register() is synchronous (OpenClaw requires it) and never throws: a bad config value or an
// unusable state directory is reported (key, value, what is allowed) and the plugin still
// registers, passing history through where it cannot work. The wasm core is instantiated here
// once per process (~1 ms after the first compile) so synchronous hooks can use it.
import { statSync, openSync, closeSync, accessSync, constants as C } from "node:fs";
import { loadCoreSync } from "./core.js";
import { createEngineFactory } from "./engine.js";
import { registerHooks } from "./hooks.js";
import { registerTools } from "./tools.js";
import { registerCli } from "./cli.js";
import { chatCommand } from "./cli/chat.js";
import { cachefoldStateDir } from "./host/openclaw.js";
import { registerLessons } from "./lessons.js";
import { ensureDir, logLine } from "./store.js";
import { configContext, logFileOf, show } from "./config.js";
import { uiParts } from "./ui/route.js";

export { resolveConfig } from "./config.js";

/** What `check` returns or throws (a problem), or null when it passes. */
function problemOf(check) {
  try {
    return check() ?? null;
  } catch (err) {
    return `${err.code ?? "error"}: ${err.message}`;
  }
}

/** Why `dir` cannot hold cachefold's state, or null when it can (created if missing). */
const stateDirProblem = (dir) =>
  problemOf(() => {
    ensureDir(dir);
    if (!statSync(dir).isDirectory()) return "it is not a directory";
    accessSync(dir, C.W_OK | C.X_OK);
  });
const logFileProblem = (file) => problemOf(() => closeSync(openSync(file, "a", 0o600)));

/** Resolve the plugin config into a context shared by the engine, hooks and tools. */
export function makeContext(api) {
  const logger = api?.logger ?? console;
  const ctx = configContext(loadCoreSync(), api?.pluginConfig, logger);
  const { config, configProblems: problems, stateDir } = ctx;
  for (const p of problems) logger.error?.(p.message);
  const dirProblem = stateDirProblem(stateDir);
  if (dirProblem) {
    // Kept as configured (state never silently moves elsewhere): every call retries it and
    // passes history through while it cannot be written.
    const msg = `cachefold config: stateDir = ${show(config.stateDir || stateDir)} cannot be used (${dirProblem}); allowed: a directory cachefold can create and write. History is passed through unchanged and nothing is stored until it is fixed.`;
    problems.push({ key: "stateDir", value: config.stateDir || stateDir, message: msg });
    logger.error?.(msg);
  }
  const logFile = logFileOf(config);
  const fileProblem = logFile ? logFileProblem(logFile) : null;
  if (fileProblem) {
    const msg = `cachefold config: logFile = ${show(config.logFile)} cannot be written (${fileProblem}); allowed: a file path in an existing, writable directory. Decision log lines are dropped until it is fixed.`;
    problems.push({ key: "logFile", value: config.logFile, message: msg });
    logger.error?.(msg);
  }
  ctx.configError = problems.length ? new Error(problems.map((p) => p.message).join("\n")) : null;
  ctx.log = (event) => logLine(logFile, event);
  ctx.log({ event: "config", config, error: ctx.configError?.message ?? null, pid: process.pid });
  return ctx;
}

export default {
  id: "cachefold",
  name: "cachefold",
  description: "Cache-first context engine for prefix-caching providers (DeepSeek first): append-only history, priced folds, lossless tool-output artifacts.",
  register(api) {
    const logger = api?.logger ?? console;
    try {
      registerCli(api);
    } catch (err) {
      logger.error?.(`cachefold: registering the CLI failed: ${err?.message ?? err}`);
    }
    if (api?.registrationMode === "cli-metadata") return; // CLI descriptors only: load nothing
    let ctx;
    try {
      ctx = makeContext(api);
    } catch (err) {
      // Last resort (e.g. the wasm core cannot load): register a passthrough engine.
      logger.error?.(`cachefold: cannot start (${err?.message ?? err}); history is passed through unchanged`);
      ctx = { config: { mode: "off" }, configJson: '{"mode":"off"}', configError: err, configProblems: [], stateDir: cachefoldStateDir({}), logger, log: () => {} };
    }
    for (const [what, fn] of [
      ["context engine", () => api.registerContextEngine("cachefold", createEngineFactory(ctx))],
      ["hooks", () => registerHooks(api, ctx)],
      ["tools", () => registerTools(api, ctx)],
      ["lessons", () => registerLessons(api, ctx)],
      ["/cachefold command", () => typeof api.registerCommand === "function" && api.registerCommand(chatCommand(ctx))],
      ...uiParts(api, ctx),
    ]) {
      try {
        fn();
      } catch (err) {
        logger.error?.(`cachefold: registering the ${what} failed: ${err?.message ?? err}`);
      }
    }
  },
};
