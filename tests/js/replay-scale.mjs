// Scaling of `openclaw cachefold replay` in the transcript length (issue 24 item 7).
//
//   node24 tests/js/replay-scale.mjs gen OUT.sqlite CALLS      one generated session of CALLS calls
//   node24 tests/js/replay-scale.mjs run CALLS[,CALLS...] [--addons A.node,B.node] [REPLAY FLAGS...]
//
// `gen` writes a pi-format session (a user turn every 8 calls, each call a tool call whose
// result is 200-3,000 bytes of varied text, deterministic) into an OpenClaw agent store via
// tests/js/sqlite-store.mjs. `run` generates one store per size, then runs
// `openclaw cachefold replay --db STORE --tokens bytes4 --strategy S1a,S3 --quiet` (the
// command's own module, js/cli.js, with the native addon) in a child process per size and prints
// one line per size: calls, CPU seconds (user + system of the child), peak RSS (MB), and a digest
// of the command's output (its --json report without the run's time, addon path and chart path,
// plus the chart's SVG): equal digests, equal output.
//
// `--addons A,B,...` runs each addon (CACHEFOLD_NATIVE_ADDON) on every size, alternating on the
// same store (side-by-side before/after figures), and says whether their outputs are identical.
// At the end the issue-24 target is checked on the sizes of 100,000 calls or more: CPU under
// 5 minutes and peak RSS under 1 GB (printed, not asserted: a figure of this machine).
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spawnSync } from "node:child_process";
import { fileURLToPath, pathToFileURL } from "node:url";
import { writeStore } from "./sqlite-store.mjs";

/** Deterministic pseudo-random generator (mulberry32). */
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = "alpha beta gamma delta parse_args main.rs cargo test fn let mut struct impl error ok result vec string usize return match src lib config build index file path line warning panic thread".split(" ");

/** Pi JSONL lines of one session with `calls` assistant calls. */
export function sessionLines(calls, seed = 1) {
  const r = rng(seed);
  const text = (n) => {
    const out = [];
    let len = 0;
    while (len < n) {
      const w = WORDS[Math.floor(r() * WORDS.length)] + (r() < 0.1 ? `${Math.floor(r() * 1000)}\n` : " ");
      out.push(w);
      len += w.length;
    }
    return out.join("");
  };
  const t0 = Date.UTC(2026, 0, 1);
  let t = t0;
  const at = () => {
    t += 1000 + Math.floor(r() * 20_000);
    return t;
  };
  const iso = (ms) => new Date(ms).toISOString();
  const lines = [JSON.stringify({ type: "session", id: `gen-${calls}`, timestamp: iso(t0), cwd: "/w", provider: "deepseek", modelId: "deepseek-v4-flash" })];
  const msg = (message) => {
    const ms = at();
    lines.push(JSON.stringify({ type: "message", timestamp: iso(ms), message: { ...message, timestamp: ms } }));
  };
  const usage = { input: 100, output: 50, cacheRead: 1000, cacheWrite: 0 };
  for (let k = 0; k < calls; k++) {
    if (k % 8 === 0) msg({ role: "user", content: [{ type: "text", text: `Task ${k / 8}: ${text(80 + Math.floor(r() * 200))}` }] });
    if (k % 8 === 7) {
      msg({ role: "assistant", content: [{ type: "text", text: `Done: ${text(100 + Math.floor(r() * 300))}` }], usage, stopReason: "stop" });
      continue;
    }
    const id = `call_${k}`;
    const tool = ["read", "exec", "grep"][k % 3];
    const args = tool === "exec" ? { command: `cargo test ${text(20)}` } : tool === "read" ? { path: `src/f${k % 97}.rs` } : { pattern: text(12) };
    msg({ role: "assistant", content: [{ type: "thinking", thinking: text(40 + Math.floor(r() * 120)) }, { type: "toolCall", id, name: tool, arguments: args }], usage, stopReason: "toolUse" });
    msg({ role: "toolResult", toolCallId: id, toolName: tool, content: [{ type: "text", text: text(200 + Math.floor(r() * 2800)) }], isError: false });
  }
  return lines;
}

/**
 * Write a store with one generated session of `calls` calls at `path`: OpenClaw 2026.9.6's
 * transcript_events rows as tests/js/sqlite-store.mjs writes them (rows over 200 bytes
 * zstd-compressed), in one transaction (a 100,000-call store in seconds, not an hour).
 */
export async function generateStore(path, calls) {
  const { DatabaseSync } = await import("node:sqlite");
  const zlib = await import("node:zlib");
  const dir = mkdtempSync(join(tmpdir(), "cf-gen-"));
  try {
    const file = join(dir, "s.jsonl");
    writeFileSync(file, "");
    await writeStore(path, [{ id: "schema-only", file, t0: 0 }]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const db = new DatabaseSync(path);
  const plain = db.prepare("INSERT INTO transcript_events (session_id, seq, event_json, created_at) VALUES (?, ?, ?, ?)");
  const packed = db.prepare("INSERT INTO transcript_events (session_id, seq, event_json, created_at, event_zstd, event_utf8_bytes) VALUES (?, ?, NULL, ?, ?, ?)");
  const id = `gen-${calls}`;
  const t0 = Date.UTC(2026, 0, 1);
  db.exec("BEGIN");
  sessionLines(calls).forEach((l, seq) => {
    const bytes = Buffer.byteLength(l);
    if (bytes > 200) packed.run(id, seq, t0 + seq, zlib.zstdCompressSync(Buffer.from(l)), bytes);
    else plain.run(id, seq, l, t0 + seq);
  });
  db.exec("COMMIT");
  db.close();
}

async function main() {
  const [cmd, a, b, ...rest] = process.argv.slice(2);
  if (cmd === "gen") {
    await generateStore(a, Number(b));
    return;
  }
  if (cmd === "replay") {
    // Child: run the command itself on one store.
    const { dispatch } = await import("../../js/cli.js");
    let out = "";
    const sink = {
      isTTY: false,
      write: (s) => {
        out += s;
        return true;
      },
    };
    const code = await dispatch(["replay", "--db", a, "--out", join(b, "replay.svg"), "--json", ...rest], { stdout: sink, stderr: { isTTY: false, write: (s) => process.stderr.write(s) }, ctx: { stateDir: b } });
    const u = process.resourceUsage();
    let digest = null;
    if (code === 0) {
      const { seconds, addon, chart, ...report } = JSON.parse(out);
      digest = createHash("sha256").update(JSON.stringify(report)).update(readFileSync(chart)).digest("hex").slice(0, 16);
    }
    process.stdout.write(`${JSON.stringify({ code, cpu: (u.userCPUTime + u.systemCPUTime) / 1e6, maxRssMb: u.maxRSS / 1024, digest })}\n`);
    process.exitCode = code;
    return;
  }
  if (cmd !== "run") throw new Error("usage: replay-scale.mjs gen OUT.sqlite CALLS | run CALLS[,CALLS...] [REPLAY FLAGS...]");
  const sizes = a.split(",").map(Number);
  let flags = [b, ...rest].filter((x) => x !== undefined);
  let addons = [process.env.CACHEFOLD_NATIVE_ADDON];
  const at = flags.indexOf("--addons");
  if (at >= 0) {
    addons = String(flags[at + 1] ?? "").split(",").filter(Boolean);
    flags = flags.filter((_, i) => i !== at && i !== at + 1);
    if (!addons.length) throw new Error("--addons wants A.node[,B.node...]");
  }
  const replayFlags = flags.length ? flags : ["--tokens", "bytes4", "--strategy", "S1a,S3", "--quiet"];
  const dir = mkdtempSync(join(tmpdir(), "cf-scale-"));
  const big = [];
  let differ = false;
  try {
    for (const n of sizes) {
      const db = join(dir, `s${n}.sqlite`);
      await generateStore(db, n);
      const digests = new Set();
      for (const [k, addon] of addons.entries()) {
        const state = join(dir, `state${n}-${k}`);
        mkdirSync(state, { recursive: true });
        const env = { ...process.env };
        if (addon === undefined) delete env.CACHEFOLD_NATIVE_ADDON;
        else env.CACHEFOLD_NATIVE_ADDON = addon;
        const c = spawnSync(process.execPath, [fileURLToPath(import.meta.url), "replay", db, state, ...replayFlags], { encoding: "utf8", maxBuffer: 1 << 26, env });
        if (c.status !== 0) throw new Error(`replay of ${n} calls failed (${c.status}): ${c.stderr}`);
        const r = JSON.parse(c.stdout.trim().split("\n").pop());
        digests.add(r.digest);
        const who = addons.length > 1 ? `  addon ${addon}` : "";
        process.stdout.write(`calls ${String(n).padStart(7)}  cpu ${r.cpu.toFixed(2).padStart(8)} s  rss ${r.maxRssMb.toFixed(0).padStart(6)} MB  output ${r.digest}${who}\n`);
        if (n >= 100_000) big.push({ n, addon, ...r });
      }
      if (addons.length > 1) {
        differ ||= digests.size > 1;
        process.stdout.write(`calls ${String(n).padStart(7)}  outputs ${digests.size === 1 ? "identical" : "DIFFER"}\n`);
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  // Issue 24 item 7: 100K calls in under 5 minutes (CPU) and under 1 GB (peak RSS).
  for (const r of big) {
    const met = r.cpu < 300 && r.maxRssMb < 1024;
    process.stdout.write(`target (${r.n} calls: cpu < 300 s, rss < 1024 MB)${r.addon ? ` ${r.addon}` : ""}: ${met ? "met" : "NOT met"} (cpu ${r.cpu.toFixed(0)} s, rss ${r.maxRssMb.toFixed(0)} MB)\n`);
  }
  if (differ) process.exitCode = 1;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) await main();
