// Locating the pinned toolchain and running child processes with hard time limits.
//
// Node 24 and OpenClaw are installed by `.ci/setup` into `<repo>/.cache/`:
//   <repo>/.cache/node24/node_modules/node/bin/node      (node@24.21.0)
//   <repo>/.cache/openclaw/node_modules/.bin/openclaw    (openclaw@2026.9.6)
// Overrides: CACHEFOLD_NODE24 (path to a node binary), CACHEFOLD_OPENCLAW (path to the
// `openclaw` bin or to the `openclaw.mjs` entry).

import fs from "node:fs";
import path from "node:path";
import net from "node:net";
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

/** Repository root (tests/e2e/lib → ../../..). */
export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");

/** The OpenClaw version the harness is written against (docs/host-integration.md). */
export const PINNED_OPENCLAW = "2026.9.6";

let warnedVersion = false;

/** Resolve Node 24 and OpenClaw, or throw with what to do. */
export function locateToolchain() {
  const node = process.env.CACHEFOLD_NODE24 || path.join(REPO_ROOT, ".cache/node24/node_modules/node/bin/node");
  let oc = process.env.CACHEFOLD_OPENCLAW || path.join(REPO_ROOT, ".cache/openclaw/node_modules/openclaw/openclaw.mjs");
  const problems = [];
  if (!fs.existsSync(node)) problems.push(`Node 24 not found at ${node} (set CACHEFOLD_NODE24 or run .ci/setup)`);
  if (!fs.existsSync(oc)) {
    problems.push(`OpenClaw not found at ${oc} (set CACHEFOLD_OPENCLAW or run .ci/setup: npm install openclaw@${PINNED_OPENCLAW} into .cache/openclaw)`);
  } else {
    // A `.bin/openclaw` symlink points at openclaw.mjs; run the entry with our node directly so
    // the shebang's `node` (Node 20 on this machine) is never used.
    oc = fs.realpathSync(oc);
  }
  if (problems.length) throw new Error(`cachefold e2e: toolchain missing:\n  - ${problems.join("\n  - ")}`);
  let version = null;
  try {
    version = JSON.parse(fs.readFileSync(path.join(path.dirname(oc), "package.json"), "utf8")).version;
  } catch {}
  if (version && version !== PINNED_OPENCLAW && !warnedVersion) {
    warnedVersion = true;
    process.stderr.write(`cachefold e2e: warning: OpenClaw ${version} at ${oc}; the harness is written against ${PINNED_OPENCLAW}\n`);
  }
  return { node, openclaw: oc, nodeDir: path.dirname(node), version };
}

/** A free TCP port on 127.0.0.1. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Children still running; killed on exit. */
const live = new Set();
let hooked = false;
function hookExit() {
  if (hooked) return;
  hooked = true;
  const killAll = () => {
    for (const c of live) {
      try {
        process.kill(-c.pid, "SIGKILL");
      } catch {
        try {
          c.kill("SIGKILL");
        } catch {}
      }
    }
    for (const fn of exitHooks) {
      try {
        fn();
      } catch {}
    }
  };
  process.on("exit", killAll);
  for (const sig of ["SIGINT", "SIGTERM", "SIGHUP"]) {
    process.on(sig, () => {
      killAll();
      process.exit(130);
    });
  }
}
const exitHooks = new Set();
/** Run `fn` synchronously when the process exits (best-effort cleanup). Returns an unregister fn. */
export function onExit(fn) {
  hookExit();
  exitHooks.add(fn);
  return () => exitHooks.delete(fn);
}

/**
 * Run a command to completion with a hard timeout. Never rejects: returns
 * {code, signal, stdout, stderr, ms, timedOut}.
 */
export function run(cmd, args, { env, cwd, timeoutMs = 60_000, input } = {}) {
  hookExit();
  return new Promise((resolve) => {
    const t0 = Date.now();
    const child = spawn(cmd, args, { env, cwd, detached: true, stdio: ["pipe", "pipe", "pipe"] });
    live.add(child);
    let stdout = "";
    let stderr = "";
    let timedOut = false;
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.stdin.on("error", () => {});
    if (input != null) child.stdin.end(input);
    else child.stdin.end();
    const timer = setTimeout(() => {
      timedOut = true;
      try {
        process.kill(-child.pid, "SIGKILL");
      } catch {}
    }, timeoutMs);
    child.on("error", (e) => {
      stderr += String(e);
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      live.delete(child);
      resolve({ code, signal, stdout, stderr, ms: Date.now() - t0, timedOut });
    });
  });
}

/** Spawn a long-running child in its own process group, output appended to a file. */
export function spawnLogged(cmd, args, { env, cwd, logFile }) {
  hookExit();
  const fd = fs.openSync(logFile, "a");
  const child = spawn(cmd, args, { env, cwd, detached: true, stdio: ["ignore", fd, fd] });
  fs.closeSync(fd);
  live.add(child);
  child.on("close", () => live.delete(child));
  return child;
}

/** Pids of processes whose environment has `KEY=value` (Linux /proc), e.g. our state dir. */
export function pidsWithEnv(key, value) {
  const out = [];
  const want = `${key}=${value}`;
  let entries = [];
  try {
    entries = fs.readdirSync("/proc");
  } catch {
    return out;
  }
  for (const e of entries) {
    if (!/^\d+$/.test(e)) continue;
    const pid = Number(e);
    if (pid === process.pid) continue;
    try {
      const env = fs.readFileSync(`/proc/${e}/environ`, "utf8").split("\0");
      if (!env.includes(want)) continue;
      const cmd = fs.readFileSync(`/proc/${e}/cmdline`, "utf8").split("\0").filter(Boolean);
      let comm = "";
      try {
        comm = fs.readFileSync(`/proc/${e}/comm`, "utf8").trim();
      } catch {}
      out.push({ pid, cmd, comm });
    } catch {}
  }
  return out;
}

/** true while a pid exists (and is not a zombie). */
export function alive(pid) {
  try {
    const st = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    const state = st.slice(st.lastIndexOf(")") + 2, st.lastIndexOf(")") + 3);
    return state !== "Z";
  } catch {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  }
}
