// The only module that loads pkg/ (the wasm build of the Rust core).
//
// - The compiled WebAssembly.Module is cached per process; instantiating from it takes ~1 ms.
// - A wasm trap (RuntimeError) leaves an instance in an unknown state: the gateway drops the
//   instance and the next call gets a fresh one from the cached Module (a fresh copy of the
//   wasm-bindgen glue module, imported with a distinct query string, because the glue keeps
//   its instance in module scope).
// - The tool hooks use an instance of their own (toolsCoreSync), so a trap there never drops
//   the engine's sessions, and a trapped hooks instance is replaced synchronously
//   (tool_result_persist is synchronous): a spare glue copy is imported ahead of time.
//   A replaced instance is not freed: its glue module stays in the ES module map.
// - Every other module reaches the wasm through the gateway objects returned here (loadCore,
//   loadCoreSync, toolsCore, toolsCoreSync): each core function and each Session method is
//   called through one error mapping. Errors carry a stable `code` (CACHEFOLD_CONFIG,
//   CACHEFOLD_INPUT, ...); a trap becomes CACHEFOLD_TRAP after the broken instance was dropped.
// - The module exports every core function under its own name with typed arguments, and the
//   `Session` class with typed methods (src/wasm.rs; the types are in pkg/cachefold.d.ts). The
//   gateway adds the error mapping and nothing else: `core.lessonParse(text)`,
//   `session.commitTurn(headerJson, messages)`, ... are the exports themselves.
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
  if (current) return gateway(current);
  if (generation === 0) return loadCoreSync();
  compiled ??= new WebAssembly.Module(readFileSync(WASM));
  generation += 1;
  const glue = await import(`${GLUE.href}?instance=${generation}`);
  glue.initSync({ module: compiled });
  current = glue;
  return gateway(current);
}

/**
 * Synchronous load for register() and synchronous hooks. Only the first instance can be made
 * synchronously (later ones need a dynamic import); after a trap it returns null and the async
 * path takes over.
 */
export function loadCoreSync() {
  if (current) return gateway(current);
  if (generation !== 0) return null;
  compiled ??= new WebAssembly.Module(readFileSync(WASM));
  generation = 1;
  firstGlue.initSync({ module: compiled });
  current = firstGlue;
  return gateway(current);
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
  if (tools) return gateway(tools);
  if (spare) {
    compiled ??= new WebAssembly.Module(readFileSync(WASM));
    const glue = spare;
    spare = null;
    toolsMemory = glue.initSync({ module: compiled })?.memory ?? null;
    tools = glue;
    prepareSpare();
    return gateway(tools);
  }
  prepareSpare();
  return current ? gateway(current) : loadCoreSync();
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
function releaseToolsCore(glue) {
  if (glue && glue === tools) {
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

/** The loaded main core (gateway) if it is already initialised (synchronous paths), else null. */
export function coreIfLoaded() {
  return current ? gateway(current) : null;
}

// ---- the gateway ---------------------------------------------------------------------------

const gateways = new WeakMap(); // glue namespace -> its gateway (stable identity per instance)

/** Map an error thrown by `glue`: a trap drops that instance (main or tools) first. */
function failed(glue, err) {
  if (isTrap(err) && glue !== current && releaseToolsCore(glue)) return mapError(err, false);
  return mapError(err, glue === current);
}

function guarded(glue, fn, self) {
  return function (...args) {
    try {
      return fn.apply(self, args);
    } catch (err) {
      throw failed(glue, err);
    }
  };
}

/** A core object (a Session) whose methods go through the error mapping. */
function guardObject(glue, obj) {
  if (obj === null || typeof obj !== "object") return obj;
  return new Proxy(obj, {
    get(target, key) {
      const v = Reflect.get(target, key, target);
      return typeof v === "function" ? guarded(glue, v, target) : v;
    },
  });
}

/** The Session class: `new` and `restore` return guarded sessions. */
function guardClass(glue, Cls) {
  return new Proxy(Cls, {
    construct(target, args) {
      try {
        return guardObject(glue, Reflect.construct(target, args));
      } catch (err) {
        throw failed(glue, err);
      }
    },
    get(target, key) {
      const v = Reflect.get(target, key, target);
      if (typeof v !== "function" || key === "prototype") return v;
      return (...args) => {
        try {
          const out = v.apply(target, args);
          return out instanceof target ? guardObject(glue, out) : out;
        } catch (err) {
          throw failed(glue, err);
        }
      };
    },
  });
}

/** The gateway over an initialised glue namespace: every export through the error mapping. */
function gateway(glue) {
  let g = gateways.get(glue);
  if (g) return g;
  const wrapped = new Map(); // export name -> guarded function (or the guarded Session class)
  g = new Proxy(glue, {
    get(target, key) {
      if (wrapped.has(key)) return wrapped.get(key);
      const v = target[key];
      if (typeof v !== "function") return v;
      const w = key === "Session" ? guardClass(glue, v) : guarded(glue, v, target);
      wrapped.set(key, w);
      return w;
    },
  });
  gateways.set(glue, g);
  return g;
}

/**
 * The gateway over a glue module initialised elsewhere (tests and benches that load a pkg/ of
 * their own): the same API; a trap there drops no instance of this module.
 */
export function gatewayOf(glue) {
  return gateway(glue);
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
