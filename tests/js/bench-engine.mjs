// Engine benchmark (not a test): warm assemble p50/p99, cold start, bytes written per turn,
// and the boundary design measured against marshalling the whole history every call.
//
//   node tests/js/bench-engine.mjs [--sizes 100,1000,10000] [--turns 200] [--fold-sizes 10000,40000,100000] [--alloc]
//
// --alloc: also sample what the warm turns allocate on the JS heap (V8's sampling heap profiler,
// objects a GC collected included) and print it per turn; the sampling slows the warm turns, so
// their times in that run are not comparable with a run without it.
//
// "warm" = the Gateway case: the process already holds the session; each turn appends a user
// message and an assistant reply, then runs the real engine.assemble() (lock, need(), plan,
// journal append). "cold" = a new process: import js/core.js, compile + instantiate the wasm,
// then read the session's files as js/engine/state.js does (store.readStateBytes) and restore
// it from snapshot + journal. The full-marshal row stringifies and passes every
// message each call (what a naive binding does) through the same core.
// "first assemble with a fold" = a long session reaching the engine for the first time with a
// budget it does not fit: the first engine.assemble ingests every message and folds inside the
// lock (fold record building, pairing repair), so its cost must stay linear in the history. Its
// CPU time (user + system of the whole process: main thread, GC and I/O threads) is printed
// beside the wall time: on a shared machine the wall time mostly measures the other load.
import { performance } from "node:perf_hooks";
import { statSync } from "node:fs";
import { join } from "node:path";
import { fakeApi, tempDir, user, assistantText, assistantCall, toolResult } from "./helpers.mjs";

const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : dflt;
};
const SIZES = opt("sizes", "100,1000,10000").split(",").filter(Boolean).map(Number);
const FOLD_SIZES = opt("fold-sizes", "10000,40000,100000").split(",").filter(Boolean).map(Number);
const FOLD_BUDGET = 1_000_000; // the history does not fit: the first assemble folds
const TURNS = Number(opt("turns", "200"));
const ALLOC = args.includes("--alloc");
const MODEL = "deepseek-v4-flash";
const BUDGET = 50_000_000; // large: this measures assembly, not folding

function history(n) {
  const out = [];
  let k = 0;
  while (out.length < n) {
    const id = `call_${k++}`;
    out.push(user(`step ${k}: please look at src/module_${k % 37}.rs and fix the failing test ${k}`));
    out.push(assistantCall(id, "read", { path: `src/module_${k % 37}.rs` }));
    out.push(toolResult(id, "read", `// file body ${k}\n` + "fn x() { let y = 42; }\n".repeat(60)));
    out.push(assistantText(`Done with step ${k}; the fix is in place and tests pass.`));
  }
  return out.slice(0, n - (n % 4 === 0 ? 0 : n % 4));
}

/** Start V8's sampling heap profiler (collected objects kept); `stop()` gives the bytes sampled. */
async function startAllocSampling() {
  const { Session } = await import("node:inspector/promises");
  const session = new Session();
  session.connect();
  await session.post("HeapProfiler.enable");
  await session.post("HeapProfiler.startSampling", { samplingInterval: 256, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
  return {
    async stop() {
      const { profile } = await session.post("HeapProfiler.stopSampling");
      session.disconnect();
      let bytes = 0;
      const walk = (node) => {
        bytes += node.selfSize;
        node.children.forEach(walk);
      };
      walk(profile.head);
      return bytes;
    },
  };
}

const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};

async function makeEngine(stateDir, extra = {}) {
  const { default: plugin } = await import("../../js/index.js");
  const { api, reg } = fakeApi({ stateDir, ...extra });
  plugin.register(api);
  return reg.engines.cachefold({});
}

const rows = [];
for (const n of SIZES) {
  const stateDir = tempDir("cachefold-bench-");
  const sessionId = `bench-${n}`;
  const msgs = history(n);
  const eng = await makeEngine(stateDir);
  const t0 = performance.now();
  await eng.assemble({ sessionId, messages: msgs, model: MODEL, tokenBudget: BUDGET });
  const firstMs = performance.now() - t0;
  // Warm turns.
  const times = [];
  const { readdirSync } = await import("node:fs");
  const sdir = join(stateDir, "sessions", readdirSync(join(stateDir, "sessions"))[0]);
  // Bytes written per turn: journal appends plus every snapshot rewrite (amortised).
  const stat = (f) => {
    try {
      const st = statSync(join(sdir, f));
      return { size: st.size, mtime: st.mtimeMs, ino: st.ino };
    } catch {
      return { size: 0, mtime: 0, ino: 0 };
    }
  };
  let written = 0;
  let snapshots = 0;
  const sampler = ALLOC ? await startAllocSampling() : null;
  for (let t = 0; t < TURNS; t++) {
    msgs.push(user(`turn ${t}: next step`), assistantText(`ok ${t}`));
    const j0 = stat("journal.jsonl");
    const s0 = stat("snapshot.json");
    const s = performance.now();
    await eng.assemble({ sessionId, messages: msgs, model: MODEL, tokenBudget: BUDGET });
    times.push(performance.now() - s);
    const j1 = stat("journal.jsonl");
    const s1 = stat("snapshot.json");
    if (s1.ino !== s0.ino || s1.mtime !== s0.mtime) {
      written += s1.size + j1.size; // snapshot rewritten, journal restarted
      snapshots += 1;
    } else {
      written += Math.max(0, j1.size - j0.size);
    }
  }
  const allocKbPerTurn = sampler ? (await sampler.stop()) / 1024 / TURNS : null;
  // Core only, two boundary designs on identical sessions: "delta" asks need(count) and
  // stringifies only those indices (the shipping design); "full" stringifies and passes every
  // message on every call (a naive binding).
  const { loadCore } = await import("../../js/core.js");
  const core = await loadCore();
  const cfgJson = JSON.stringify({ stateDir });
  const sDelta = new core.Session(cfgJson, `${sessionId}-delta`);
  const sFull = new core.Session(cfgJson, `${sessionId}-full`);
  const pick = (m, idx) => Array.from(idx, (i) => ({ index: i, json: JSON.stringify(m[i]) }));
  const all = (m) => m.map((x, i) => ({ index: i, json: JSON.stringify(x) }));
  const run = (sess, m, list) =>
    sess.assemble(JSON.stringify({ count: m.length, model: MODEL, tokenBudget: BUDGET, nowMs: Date.now() }), list.map((x) => x.index), list.map((x) => x.json));
  run(sDelta, msgs, all(msgs));
  run(sFull, msgs, all(msgs));
  const delta = [];
  const full = [];
  for (let t = 0; t < Math.min(TURNS, 100); t++) {
    msgs.push(user(`core ${t}`), assistantText(`ok ${t}`));
    let s = performance.now();
    const plan = run(sDelta, msgs, pick(msgs, sDelta.need(msgs.length)));
    if (plan.needFull) throw new Error("delta path fell back to a full pass");
    delta.push(performance.now() - s);
    s = performance.now();
    run(sFull, msgs, all(msgs));
    full.push(performance.now() - s);
    sDelta.takeJournal();
    sFull.takeJournal();
  }
  sDelta.free();
  sFull.free();
  // Cold start in a fresh process: compile + instantiate + restore from disk.
  const { execFileSync } = await import("node:child_process");
  const coldScript = `
    const t0 = performance.now();
    const { loadCore } = await import(${JSON.stringify(new URL("../../js/core.js", import.meta.url).href)});
    const core = await loadCore();
    const t1 = performance.now();
    // The plugin's other modules load at registration, before any restore: not timed.
    const store = await import(${JSON.stringify(new URL("../../js/store.js", import.meta.url).href)});
    const c1 = process.threadCpuUsage?.();
    const t1b = performance.now();
    // What js/engine/state.js does on a cache miss: the files' bytes (js/store.js), then restore.
    const { snapshot, journal } = store.readStateBytes(store.sessionPaths(${JSON.stringify(stateDir)}, core.sessionDirName(${JSON.stringify(sessionId)})));
    const s = core.Session.restore(${JSON.stringify(JSON.stringify({ stateDir }))}, ${JSON.stringify(sessionId)}, snapshot, journal);
    const t2 = performance.now();
    const c2 = process.threadCpuUsage?.(c1);
    if (${TURNS} > 0 && !(s.replayReport().applied > 0)) throw new Error("the cold restore replayed no journal line");
    console.log(JSON.stringify({ instantiate: t1 - t0, restore: t2 - t1b, restoreCpu: c2 ? (c2.user + c2.system) / 1000 : NaN }));`;
  const colds = [];
  for (let r = 0; r < 5; r++) {
    colds.push(JSON.parse(execFileSync(process.execPath, ["--input-type=module", "-e", coldScript], { encoding: "utf8" }).trim()));
  }
  rows.push({
    n,
    firstIngestMs: firstMs,
    warmP50: pct(times, 50),
    warmP99: pct(times, 99),
    deltaP50: pct(delta, 50),
    deltaP99: pct(delta, 99),
    fullP50: pct(full, 50),
    coldInstantiate: pct(colds.map((c) => c.instantiate), 50),
    coldRestore: pct(colds.map((c) => c.restore), 50),
    coldRestoreCpu: pct(colds.map((c) => c.restoreCpu), 50),
    bytesPerTurn: written / TURNS,
    allocKbPerTurn,
    snapshots,
  });
  process.stderr.write(`size ${n} done\n`);
}

const f = (x) => x.toFixed(2);
if (ALLOC) {
  console.log("\nJS heap allocated per warm turn (sampled; the bench's own two messages included)\n");
  console.log("| history | KB / turn |\n|---:|---:|");
  for (const r of rows) console.log(`| ${r.n} | ${r.allocKbPerTurn.toFixed(1)} |`);
}
console.log(`\nnode ${process.version}, ${TURNS} warm turns per size (each appends 2 messages)\n`);
console.log("| history | first assemble (ingests all) ms | warm engine.assemble p50 / p99 ms | core, delta boundary p50 / p99 ms | core, full marshal p50 ms | full ÷ delta | cold: instantiate ms | cold: restore state ms (main-thread CPU) | bytes written / turn (snapshots) |");
console.log("|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
for (const r of rows) {
  console.log(`| ${r.n} | ${f(r.firstIngestMs)} | ${f(r.warmP50)} / ${f(r.warmP99)} | ${f(r.deltaP50)} / ${f(r.deltaP99)} | ${f(r.fullP50)} | ${(r.fullP50 / r.deltaP50).toFixed(1)}× | ${f(r.coldInstantiate)} | ${f(r.coldRestore)} (${f(r.coldRestoreCpu)}) | ${Math.round(r.bytesPerTurn)} (${r.snapshots}) |`);
}

// First assemble with a fold, per size: ingest everything and fold inside the lock.
const foldRows = [];
for (const n of FOLD_SIZES) {
  const stateDir = tempDir("cachefold-bench-fold-");
  const logFile = join(stateDir, "decisions.jsonl");
  const eng = await makeEngine(stateDir, { logFile });
  const msgs = history(n);
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  const res = await eng.assemble({ sessionId: `fold-${n}`, messages: msgs, model: MODEL, tokenBudget: FOLD_BUDGET });
  const ms = performance.now() - t0;
  const c = process.cpuUsage(c0);
  const cpuMs = (c.user + c.system) / 1000;
  const { readFileSync } = await import("node:fs");
  const ev = readFileSync(logFile, "utf8").trim().split("\n").map((l) => JSON.parse(l)).filter((e) => e.event === "assemble").at(-1);
  const folds = ev?.report?.folds?.length ?? 0;
  if (!folds) throw new Error(`size ${n}: the first assemble did not fold`);
  foldRows.push({ n, ms, cpuMs, folds, outCount: res.messages.length, before: ev.report.tokensBefore, after: ev.report.tokensAfter });
  process.stderr.write(`fold size ${n} done\n`);
}
if (foldRows.length) {
  console.log(`\nfirst engine.assemble with a fold (budget ${FOLD_BUDGET} tokens)\n`);
  console.log("| history | first assemble with a fold ms | CPU ms (process) | folds | messages out | est. tokens before → after |");
  console.log("|---:|---:|---:|---:|---:|---:|");
  for (const r of foldRows) console.log(`| ${r.n} | ${f(r.ms)} | ${f(r.cpuMs)} | ${r.folds} | ${r.outCount} | ${r.before} → ${r.after} |`);
}
