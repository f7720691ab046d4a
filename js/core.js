// The only module that loads pkg/ (the wasm build of the Rust core).
//
// - The compiled WebAssembly.Module is cached per process; instantiating from it takes ~1 ms.
// - A wasm trap (RuntimeError) leaves an instance in an unknown state: callCore() drops the
//   instance and the next call gets a fresh one from the cached Module (a fresh copy of the
//   wasm-bindgen glue module, imported with a distinct query string, because the glue keeps
//   its instance in module scope).
// - The tool hooks use an instance of their own (toolsCoreSync), so a trap there never drops
//   the engine's sessions, and a trapped hooks instance is replaced synchronously
//   (tool_result_persist is synchronous): a spare glue copy is imported ahead of time.
//   A replaced instance is not freed: its glue module stays in the ES module map.
// - Errors thrown by the core carry a stable `code` (CACHEFOLD_CONFIG, CACHEFOLD_INPUT, ...).
import { readFileSync } from "node:fs";
import * as firstGlue from "../pkg/cachefold.js";

const PKG = new URL("../pkg/", import.meta.url);
const GLUE = new URL("cachefold.js", PKG);
const WASM = new URL("cachefold_bg.wasm", PKG);

let compiled = null; // WebAssembly.Module
let current = null; // initialised glue module namespace
let generation = 0;

/** Compile (once per process) and instantiate the core; returns the glue module's exports. */
export async function loadCore() {
  if (current) return current;
  if (generation === 0) return loadCoreSync();
  compiled ??= new WebAssembly.Module(readFileSync(WASM));
  generation += 1;
  const glue = await import(`${GLUE.href}?instance=${generation}`);
  glue.initSync({ module: compiled });
  current = glue;
  return current;
}

/**
 * Synchronous load for register() and synchronous hooks. Only the first instance can be made
 * synchronously (later ones need a dynamic import); after a trap it returns null and the async
 * path takes over.
 */
export function loadCoreSync() {
  if (current) return current;
  if (generation !== 0) return null;
  compiled ??= new WebAssembly.Module(readFileSync(WASM));
  generation = 1;
  firstGlue.initSync({ module: compiled });
  current = firstGlue;
  return current;
}

/** Forget the current instance (after a trap); the next loadCore() builds a new one. */
export function resetCore() {
  current = null;
}

let tools = null; // the tool hooks' own instance (initialised glue namespace)
let toolsMemory = null; // its WebAssembly.Memory
let spare = null; // a glue copy imported but not initialised yet
let sparePending = null;
let spareCount = 0;

/** Import a fresh glue copy in the background, so an instance can be made synchronously. */
function prepareSpare() {
  if (spare || sparePending) return sparePending;
  spareCount += 1;
  sparePending = import(`${GLUE.href}?tools=${spareCount}`).then(
    (glue) => {
      spare = glue;
      sparePending = null;
    },
    () => {
      sparePending = null;
    },
  );
  return sparePending;
}

/**
 * The tool hooks' instance, synchronously. Made from the spare glue copy; while no spare is
 * imported yet (the first milliseconds after start, or a second trap within one event-loop
 * turn) it is the main instance.
 */
export function toolsCoreSync() {
  if (tools) return tools;
  if (spare) {
    compiled ??= new WebAssembly.Module(readFileSync(WASM));
    const glue = spare;
    spare = null;
    toolsMemory = glue.initSync({ module: compiled })?.memory ?? null;
    tools = glue;
    prepareSpare();
    return tools;
  }
  prepareSpare();
  return current ?? loadCoreSync();
}

/** Bytes of linear memory of the hooks' own instance, or null (none yet, or released). */
export function toolsWasmBytes() {
  return tools && toolsMemory ? toolsMemory.buffer.byteLength : null;
}

/** The tool hooks' instance, with a spare glue copy imported for a synchronous replacement. */
export async function toolsCore() {
  await prepareSpare();
  const core = toolsCoreSync() ?? (await loadCore());
  await prepareSpare();
  return core;
}

/**
 * Stop using `core` for tool results (after a trap): the next call gets a fresh instance. The
 * main instance is never released here (the engine's sessions live in it).
 */
export function releaseToolsCore(core) {
  if (core && core === tools) {
    tools = null;
    toolsMemory = null;
    prepareSpare();
    return true;
  }
  return false;
}

/** True for errors that mean the wasm instance itself is broken. */
export function isTrap(err) {
  return err instanceof WebAssembly.RuntimeError || /unreachable|memory access out of bounds/i.test(String(err?.message));
}

/**
 * Call an exported core function by name. On a trap the instance is dropped (so the next call
 * starts clean) and the error is rethrown with code CACHEFOLD_TRAP.
 */
export async function callCore(name, ...args) {
  const core = await loadCore();
  try {
    return core[name](...args);
  } catch (err) {
    throw mapError(err);
  }
}

/** Same as callCore, for callers already holding the loaded core (synchronous hooks). */
export function callCoreSync(core, name, ...args) {
  try {
    return core[name](...args);
  } catch (err) {
    // A trapped tools instance is replaced on its own; the main one as callCore does.
    if (isTrap(err) && releaseToolsCore(core)) throw mapError(err, false);
    throw mapError(err);
  }
}

/** The loaded core if it is already initialised (synchronous paths), else null. */
export function coreIfLoaded() {
  return current;
}

function mapError(err, resetMain = true) {
  if (isTrap(err)) {
    if (resetMain) resetCore();
    const e = new Error(`cachefold core trapped: ${err.message}`);
    e.code = "CACHEFOLD_TRAP";
    e.cause = err;
    return e;
  }
  if (err instanceof Error) return err;
  const e = new Error(String(err));
  e.code = "CACHEFOLD_UNKNOWN";
  return e;
}
