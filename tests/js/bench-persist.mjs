// Benchmark (not a test): tool_result_persist latency for a 1 MB tool result, and 100 MB runs.
//
//   node tests/js/bench-persist.mjs                  # core from pkg/ (build it in release first)
//   CACHEFOLD_PKG=/tmp/pkg node tests/js/bench-persist.mjs [iterations] [--no-100mb]
//
// The 100 MB rows give process RSS before the call, right after it, and after one more 1 MB
// call and a GC, with the middleware off (persist shrinks) and on (middleware shrinks, persist
// sees the preview), and the hooks' wasm memory: linear memory never shrinks, so it stays at
// its high-water mark.
//
// Prints p50/p99/max in ms for: a new 1 MB result (shrink + sha1 + artifact write + ref append),
// the same result again (dedupe: no artifact write), and middleware followed by persist (what
// OpenClaw runs when the middleware is enabled). Target: persist p99 ≤ 20 ms for 1 MB.
import { readFileSync, existsSync } from "node:fs";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { persistToolResult, toolResultMiddleware } from "../../js/hooks.js";

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc");

let wasmMemory = null; // known only when loaded from CACHEFOLD_PKG

async function loadCore() {
  const dir = process.env.CACHEFOLD_PKG;
  if (dir) {
    const glue = await import(pathToFileURL(join(dir, "cachefold.js")).href);
    const raw = glue.initSync({ module: readFileSync(join(dir, "cachefold_bg.wasm")) });
    wasmMemory = raw?.memory ?? null;
    return (await import("../../js/core.js")).gatewayOf(glue);
  }
  if (!existsSync(new URL("../../pkg/cachefold_bg.wasm", import.meta.url))) {
    console.error("pkg/ is not built: run `wasm-pack build --target web --release` or set CACHEFOLD_PKG");
    process.exit(2);
  }
  return (await import("../../js/core.js")).loadCore();
}

const core = await loadCore();
const args = process.argv.slice(2);
const N = Number(args.find((a) => /^\d+$/.test(a)) ?? 200);
const with100 = !args.includes("--no-100mb");
const stateDir = mkdtempSync(join(tmpdir(), "cachefold-bench-"));
const config = core.parseConfig("{}");
// With pkg/ the hooks find the core through js/core.js, as in OpenClaw (their own instance);
// with CACHEFOLD_PKG they are handed the loaded glue.
const ctx = { config, configJson: JSON.stringify(config), stateDir, logger: { warn: (m) => console.error(m) }, log() {}, core: process.env.CACHEFOLD_PKG ? core : undefined };
const coreJs = process.env.CACHEFOLD_PKG ? null : await import("../../js/core.js");
if (coreJs) await toolResultMiddleware(ctx, { toolName: "exec", result: { content: [{ type: "text", text: "warm" }] } }, {}); // imports core.js

const line = "2026-11-21T22:20:00Z INFO worker[42] processed batch 0001 in 12ms status=ok\n"; // 78 chars
const base = line.repeat(Math.ceil((1024 * 1024) / line.length)).slice(0, 1024 * 1024 - 40);
const msg = (i, text) => ({ role: "toolResult", toolCallId: `c${i}`, toolName: "exec", content: [{ type: "text", text }], isError: false, timestamp: 1_763_700_000_000 + i });

function pct(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const at = (p) => s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)];
  return `p50 ${at(50).toFixed(2)} ms  p99 ${at(99).toFixed(2)} ms  max ${s.at(-1).toFixed(2)} ms  (n=${s.length})`;
}

function time(fn) {
  const t0 = performance.now();
  fn();
  return performance.now() - t0;
}

// Warm-up (JIT, wasm memory growth, directories).
for (let i = 0; i < 20; i += 1) persistToolResult(ctx, { toolName: "exec", message: msg(i, `warm ${i}\n${base}`) }, { sessionKey: "bench" });

const fresh = [];
for (let i = 0; i < N; i += 1) {
  const m = msg(i, `run ${i}\n${base}`);
  fresh.push(time(() => persistToolResult(ctx, { toolName: "exec", toolCallId: `c${i}`, message: m }, { sessionKey: "bench" })));
}
const dedupe = [];
const same = msg(0, `same\n${base}`);
persistToolResult(ctx, { toolName: "exec", message: same }, { sessionKey: "bench" });
for (let i = 0; i < N; i += 1) dedupe.push(time(() => persistToolResult(ctx, { toolName: "exec", message: same }, { sessionKey: "bench" })));

const pair = [];
const persistAfter = [];
for (let i = 0; i < N; i += 1) {
  const text = `pair ${i}\n${base}`;
  const t0 = performance.now();
  const mw = await toolResultMiddleware(ctx, { toolCallId: `p${i}`, toolName: "exec", args: {}, result: { content: [{ type: "text", text }] } }, { runtime: "openclaw", sessionKey: "bench" });
  const t1 = performance.now();
  persistToolResult(ctx, { toolName: "exec", message: { ...msg(i, ""), content: mw.result.content } }, { sessionKey: "bench" });
  const t2 = performance.now();
  pair.push(t2 - t0);
  persistAfter.push(t2 - t1);
}

console.log(`node ${process.version}, 1 MB result (${base.length + 8} chars), state ${stateDir}`);
console.log(`persist, new content        ${pct(fresh)}`);
console.log(`persist, duplicate content  ${pct(dedupe)}`);
console.log(`middleware + persist        ${pct(pair)}`);
console.log(`persist after middleware    ${pct(persistAfter)}`);

if (with100) {
  const big = line.repeat(Math.ceil((100 * 1024 * 1024) / line.length));
  const mib = (x) => (x == null ? "n/a" : `${(x / 1048576).toFixed(0)} MiB`);
  const wasmBytes = () => (coreJs ? coreJs.toolsWasmBytes() : wasmMemory?.buffer.byteLength ?? null);
  const rows = [];
  for (const mode of ["middleware off (persist shrinks)", "middleware on (middleware shrinks)"]) {
    gc();
    const rss0 = process.memoryUsage().rss;
    const t0 = performance.now();
    let wasmPeak;
    if (mode.startsWith("middleware off")) {
      persistToolResult(ctx, { toolName: "exec", message: msg(9999, big) }, { sessionKey: "bench" });
    } else {
      const mw = await toolResultMiddleware(ctx, { toolCallId: "h1", toolName: "exec", args: {}, result: { content: [{ type: "text", text: big }] } }, { runtime: "openclaw", sessionKey: "bench" });
      persistToolResult(ctx, { toolName: "exec", message: { ...msg(9998, ""), content: mw.result.content } }, { sessionKey: "bench" });
    }
    const ms = performance.now() - t0;
    const rss1 = process.memoryUsage().rss;
    wasmPeak = wasmBytes();
    // One more ordinary call, then a GC.
    persistToolResult(ctx, { toolName: "exec", message: msg(9997, `after\n${base}`) }, { sessionKey: "bench" });
    gc();
    await new Promise((r) => setTimeout(r, 100));
    gc();
    const rss2 = process.memoryUsage().rss;
    rows.push(`| ${mode} | ${ms.toFixed(0)} | ${mib(rss0)} | ${mib(rss1)} | ${mib(rss2)} | ${mib(wasmPeak)} → ${mib(wasmBytes())} |`);
  }
  console.log("\n| 100 MB result | ms | rss before | rss right after | rss after GC + next call | hooks' wasm memory after the call → after the next |");
  console.log("|---|---:|---:|---:|---:|---:|");
  for (const r of rows) console.log(r);
}
rmSync(stateDir, { recursive: true, force: true });
