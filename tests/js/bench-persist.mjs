// Benchmark (not a test): tool_result_persist latency for a 1 MB tool result, and one 100 MB run.
//
//   node tests/js/bench-persist.mjs                  # core from pkg/ (build it in release first)
//   CACHEFOLD_PKG=/tmp/pkg node tests/js/bench-persist.mjs [iterations] [--no-100mb]
//
// Prints p50/p99/max in ms for: a new 1 MB result (shrink + sha1 + artifact write + ref append),
// the same result again (dedupe: no artifact write), and middleware followed by persist (what
// OpenClaw runs when the middleware is enabled). Target: persist p99 ≤ 20 ms for 1 MB.
import { readFileSync, existsSync } from "node:fs";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { persistToolResult, toolResultMiddleware } from "../../js/hooks.js";

let wasmMemory = null; // known only when loaded from CACHEFOLD_PKG

async function loadCore() {
  const dir = process.env.CACHEFOLD_PKG;
  if (dir) {
    const glue = await import(pathToFileURL(join(dir, "cachefold.js")).href);
    const raw = glue.initSync({ module: readFileSync(join(dir, "cachefold_bg.wasm")) });
    wasmMemory = raw?.memory ?? null;
    return glue;
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
const ctx = { config, configJson: JSON.stringify(config), stateDir, logger: { warn: (m) => console.error(m) }, log() {}, core };

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
  const m = msg(9999, big);
  global.gc?.();
  const before = process.memoryUsage();
  const ms = time(() => persistToolResult(ctx, { toolName: "exec", message: m }, { sessionKey: "bench" }));
  const after = process.memoryUsage();
  const mib = (x) => `${(x / 1048576).toFixed(0)} MiB`;
  console.log(
    `100 MB result: ${ms.toFixed(0)} ms; rss ${mib(before.rss)} → ${mib(after.rss)}; wasm memory ${wasmMemory ? mib(wasmMemory.buffer.byteLength) : "n/a"}; external ${mib(before.external)} → ${mib(after.external)}`,
  );
}
rmSync(stateDir, { recursive: true, force: true });
