// The only module that loads pkg/ (the wasm build of the Rust core).
//
// - The compiled WebAssembly.Module is cached per process; instantiating from it takes ~1 ms.
// - A wasm trap (RuntimeError) leaves an instance in an unknown state: callCore() drops the
//   instance and the next call gets a fresh one from the cached Module (a fresh copy of the
//   wasm-bindgen glue module, imported with a distinct query string, because the glue keeps
//   its instance in module scope).
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
    throw mapError(err);
  }
}

/** The loaded core if it is already initialised (synchronous paths), else null. */
export function coreIfLoaded() {
  return current;
}

function mapError(err) {
  if (isTrap(err)) {
    resetCore();
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
