// The plugin config as the user wrote it → the config the core runs on (the core resolves it
// key by key and words the problems: `resolveConfig`); this module reads the manifest's schema
// and builds the context every part of the plugin shares.
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { cachefoldStateDir } from "./host/openclaw.js";

let manifest;
/** The plugin's manifest (openclaw.plugin.json beside js/), read once; null when unreadable. */
export function pluginManifest() {
  if (manifest === undefined) {
    try {
      manifest = JSON.parse(readFileSync(new URL("../openclaw.plugin.json", import.meta.url), "utf8"));
    } catch {
      manifest = null;
    }
  }
  return manifest;
}

export function show(v) {
  const text = v === undefined ? "undefined" : JSON.stringify(v);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

/**
 * The config the core runs on for the plugin config as the host holds it: every valid key kept,
 * an unknown key reported with the nearest valid one, a value the core refuses reported (key,
 * value, what is allowed) and left at its default, an invalid `mode` read as "off". The core
 * resolves and words it (`resolveConfig`, src/config/resolve.rs) from the manifest's schema.
 * Returns {config, problems: [{key, value, message}]}.
 */
export function resolveConfig(core, input) {
  let text;
  try {
    text = JSON.stringify(input ?? null);
  } catch (err) {
    // Not JSON at all (a cycle, a BigInt): reported like any other value that is not an object.
    text = JSON.stringify(String(err?.message ?? err));
  }
  return core.resolveConfig(text ?? "null", JSON.stringify(pluginManifest()?.configSchema ?? null));
}

/**
 * The context the engine, hooks, tools and commands share: the resolved config (as object and
 * JSON), its problems and the state dir; `log` drops everything until index.js sets the log file.
 */
export function configContext(core, raw, logger = console) {
  const { config, problems } = resolveConfig(core, raw ?? {});
  return { config, configJson: JSON.stringify(config), configProblems: problems, stateDir: cachefoldStateDir(config), logger, log: () => {} };
}

/** The decision log's path (`logFile`, relative to the cwd), or null when none is configured. */
export function logFileOf(config) {
  return config?.logFile ? resolve(config.logFile) : null;
}
