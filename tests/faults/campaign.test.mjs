// Fault campaign for the shim's durable state: SIGKILL during turns, two and three processes on
// one session, stale and foreign locks, cross-session reads, symlinks planted in the store, an
// unwritable state directory, disk full at every write of a turn, hostile workspace files, flag
// fuzzing of every CLI command and two processes racing artifact GC. `npm test` runs the short form; `npm run faults`
// (CACHEFOLD_FAULTS=full) the full one. Each section prints: tries, failures, data lost.
//
// "Data lost" = a turn commitTurn answered "committed" (or "duplicate") that the state on disk
// no longer knows. "Failures" also count corrupt state (a replay stopped by anything but a torn
// last line), a key answered "committed" twice, a stall, an append-only violation (an assembled
// context that is not a prefix of the next one), and any read or write outside the store.
import test from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import fs, { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, symlinkSync, unlinkSync, utimesSync, writeFileSync } from "node:fs";
import { syncBuiltinESMExports } from "node:module";
import { hostname } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { tempDir, engineFor, sessionDir, pkgSkip } from "../js/helpers.mjs";
import { withTimeout } from "../../js/io/files.js";
import { history, turn, MODEL, outputEntry } from "./turns.mjs";

const FULL = process.env.CACHEFOLD_FAULTS === "full";
const skip = pkgSkip();
const WORKER = fileURLToPath(new URL("./worker.mjs", import.meta.url));
const sha1 = (t) => createHash("sha1").update(t, "utf8").digest("hex");
const rand = (n) => Math.floor(Math.random() * n);
const totals = { tries: 0, failures: 0, lost: 0 };

function report(t, name, r) {
  totals.tries += r.tries;
  totals.failures += r.failures;
  totals.lost += r.lost;
  const line = `faults ${name}: tries ${r.tries}, failures ${r.failures}, data lost ${r.lost}${r.notes?.length ? ` (${r.notes.slice(0, 5).join("; ")})` : ""}`;
  console.log(line);
  t.diagnostic(line);
}



const events = (logFile) =>
  existsSync(logFile)
    ? readFileSync(logFile, "utf8")
        .split("\n")
        .filter(Boolean)
        .flatMap((l) => {
          try {
            return [JSON.parse(l)];
          } catch {
            return [];
          }
        })
    : [];

/** Start a worker; resolves lines as they come. */
function startWorker(opts) {
  const child = spawn(process.execPath, [WORKER, JSON.stringify(opts)], { stdio: ["ignore", "pipe", "pipe"] });
  const lines = [];
  let buf = "";
  let onReady;
  const ready = new Promise((r) => (onReady = r));
  const waiters = []; // [count, resolve]: resolved once `count` lines arrived (or the child exited)
  const wake = (all) => {
    for (let j = waiters.length - 1; j >= 0; j--) if (all || lines.length >= waiters[j][0]) waiters.splice(j, 1)[0][1]();
  };
  child.stdout.on("data", (d) => {
    buf += d;
    let i;
    while ((i = buf.indexOf("\n")) >= 0) {
      const line = buf.slice(0, i);
      buf = buf.slice(i + 1);
      lines.push(line);
      if (line === "ready") onReady();
    }
    wake(false);
  });
  let stderr = "";
  child.stderr.on("data", (d) => (stderr += d));
  const exit = new Promise((r) => child.on("exit", (code, signal) => r({ code, signal })));
  child.on("exit", () => {
    onReady();
    wake(true);
  });
  /** Resolves when `n` more lines than now have arrived (progress, not wall time). */
  const more = (n) => new Promise((r) => (lines.length + n <= lines.length ? r() : waiters.push([lines.length + n, r])));
  return { child, lines, ready, exit, more, stderr: () => stderr };
}

const corrupt = (logFile) => events(logFile).filter((e) => e.event === "journal_repaired" && e.stopped && e.stopped !== "torn");

// ---- SIGKILL during turns ------------------------------------------------------------------

// Folds on: a 3,000-token budget folds (emergency) about every third turn of turns.mjs, so the
// append-only check meets folds and condensations, not only appends.
const FOLDING = { tokenBudget: 3000, minFoldTokens: 500, tailTokens: 1000 };

const recordId = (entry) => entry.split("~")[1] ?? null;

/**
 * Append-only across assembles: `out` extends `prev`, except where the report declares a fold or
 * condensation, and then its first `stable` entries (at least the pinned head) are `prev`'s.
 * `afterKill`: a process was killed since `prev`, so a fold it journaled may have lost its
 * report with it; then the change may also begin, after the head, at a record `prev` did not
 * have (a new fold or condensed record), and everything before it is `prev`'s.
 * The reason it does not, or null; `{ undeclared }` when only the lost report explains it.
 */
function appendOnlyBreak(prev, out, stable, headLen, afterKill = false) {
  if (!prev) return null;
  const limit = Math.min(stable ?? prev.length, prev.length);
  if (stable !== null && stable < Math.min(headLen, prev.length)) return `stable prefix ${stable} shorter than the head (${headLen})`;
  const what = stable === null ? "previous output" : "stable prefix";
  let j = prev.slice(0, limit).findIndex((h, i) => out[i] !== h);
  if (j < 0 && out.length < limit) j = out.length;
  if (j < 0) return null;
  const known = new Set(prev.map(recordId).filter(Boolean));
  const id = out[j] && recordId(out[j]);
  if (afterKill && stable === null && j >= headLen && id && !known.has(id)) return { undeclared: `${id} at ${j}` };
  return `${what} differs at ${j}${out.length < limit ? ` (output shorter: ${out.length} < ${limit})` : ""}`;
}

test("SIGKILL at random moments, folds on: no corrupt state, no lost committed turn, append-only output", { skip, timeout: 600_000 }, async (t) => {
  const tries = FULL ? 100 : 10;
  const stateDir = tempDir("cachefold-kill-");
  const logFile = join(stateDir, "log.jsonl");
  const sid = "s-kill";
  const r = { tries: 0, failures: 0, lost: 0, notes: [] };
  const acked = new Set();
  let next = 0;
  let lastOut = null; // assemble output hashes of the newest assemble seen
  let folds = 0; // folds made by the assembles seen
  let foldsChecked = 0; // of them, folds the append-only check compared with an earlier output
  let undeclared = 0; // folds journaled by a process killed before it reported them
  for (let i = 0; i < tries; i++) {
    const w = startWorker({ stateDir, logFile, sessionId: sid, start: next, count: 10_000, keyPrefix: "k", assemble: true, config: FOLDING });
    await w.ready;
    // The kill moment follows the worker's progress, not the clock (a loaded machine runs fewer
    // turns per second): after 4-11 more lines (a turn prints an A and a C line), then at a
    // random point of the next few milliseconds, inside whatever the worker is doing.
    await w.more(4 + rand(8));
    await new Promise((res) => setTimeout(res, rand(FULL ? 40 : 25)));
    w.child.kill("SIGKILL");
    await w.exit;
    r.tries += 1;
    let failed = false;
    let afterKill = true; // this worker's first assemble follows a killed one
    for (const line of w.lines) {
      const [kind, a, b, nFolds, stablePrefix, headLen, declared] = line.split(" ");
      if (kind === "A") {
        const out = b ? b.split(",") : [];
        const stable = stablePrefix === "-" ? null : Number(stablePrefix);
        const why = appendOnlyBreak(lastOut, out, stable, Number(headLen), afterKill);
        afterKill = false;
        if (why?.undeclared) {
          undeclared += 1;
          r.notes.push(`turn ${a}: fold ${why.undeclared} made by the killed process (its report died with it)`);
        } else if (why) {
          failed = true;
          r.notes.push(`turn ${a}: assembled context is not an extension of the previous one (${why})`);
        }
        if (declared !== "0") {
          failed = true;
          r.notes.push(`turn ${a}: unexpected divergence, environment change or passthrough`);
        }
        folds += Number(nFolds);
        if (lastOut) foldsChecked += Number(nFolds);
        lastOut = out;
      } else if (kind === "C") {
        if (b === "committed" && acked.has(a)) {
          failed = true;
          r.notes.push(`${a} committed twice`);
        }
        if (b === "committed" || b === "duplicate") acked.add(a);
        else if (b !== "deferred") {
          failed = true;
          r.notes.push(`${a}: status ${b}`);
        }
        next = Math.max(next, Number(a.slice(1)) + 1);
      }
    }
    // Restore in this process and check every acknowledged turn is still known.
    const eng = await engineFor({ stateDir, logFile, ...FOLDING });
    for (const key of acked) {
      const k = Number(key.slice(1));
      if (k < next - 3 && !FULL) continue; // short form: the newest ones (the rest were checked before)
      const s = (await eng.commitTurn({ sessionId: sid, advancementKey: key, messages: turn(k) })).status;
      if (s !== "duplicate") {
        r.lost += 1;
        failed = true;
        r.notes.push(`${key} lost (${s})`);
      }
    }
    if (corrupt(logFile).length) {
      failed = true;
      r.notes.push(`corrupt journal: ${JSON.stringify(corrupt(logFile)[0])}`);
    }
    if (failed) r.failures += 1;
  }
  // Finally the assembled context over the full history still extends the last one seen.
  const eng = await engineFor({ stateDir, logFile, ...FOLDING });
  const res = await eng.assemble({ sessionId: sid, messages: history(next), model: MODEL, tokenBudget: FOLDING.tokenBudget });
  const out = res.messages.map(outputEntry);
  const rep = events(logFile).filter((e) => e.event === "assemble").pop()?.report ?? {};
  const why = appendOnlyBreak(lastOut, out, rep.stablePrefix ?? null, rep.headLen ?? 0, true);
  if (why?.undeclared) undeclared += 1;
  else if (why) {
    r.failures += 1;
    r.notes.push(`final assemble is not an extension of the last one seen (${why})`);
  }
  folds += (rep.folds ?? []).length;
  r.notes.push(`${acked.size} turns acknowledged, ${folds} folds (${foldsChecked} met by the append-only check, ${undeclared} more made by killed processes), ${readdirSync(await sessionDir(stateDir, sid)).length} files`);
  report(t, "sigkill", r);
  assert.equal(r.lost, 0, r.notes.join("\n"));
  assert.equal(r.failures, 0, r.notes.join("\n"));
  assert.ok(foldsChecked > 0, `no fold met the append-only check (${folds} folds in ${acked.size} turns): the campaign tested appends only`);
  const configErrors = events(logFile).filter((e) => e.event === "config" && e.error);
  assert.deepEqual(configErrors.map((e) => e.error), [], "the campaign's config is valid (else it runs on defaults)");
});

// ---- two and three processes on one session -------------------------------------------------

test("two and three processes on one session: every turn counted exactly once, none lost", { skip, timeout: 600_000 }, async (t) => {
  const r = { tries: 0, failures: 0, lost: 0, notes: [] };
  const rounds = FULL ? 6 : 1;
  for (let round = 0; round < rounds; round++) {
    for (const procs of [2, 3]) {
      const stateDir = tempDir("cachefold-multi-");
      const logFile = join(stateDir, "log.jsonl");
      const sid = "s-multi";
      const count = FULL ? 60 : 25;
      // Every process runs the same turns (as a host retrying from two processes would): each key
      // must be answered "committed" exactly once; with a kill, the survivors finish the job.
      const ws = Array.from({ length: procs }, () => startWorker({ stateDir, logFile, sessionId: sid, start: 0, count, keyPrefix: "m", assemble: true }));
      if (FULL && round % 2 === 1) {
        await ws[0].ready;
        setTimeout(() => ws[0].child.kill("SIGKILL"), 100 + rand(400));
      }
      await Promise.all(ws.map((w) => w.exit));
      r.tries += 1;
      let failed = false;
      const committed = new Map();
      const acked = new Set();
      for (const w of ws) {
        for (const line of w.lines) {
          const [kind, key, status] = line.split(" ");
          if (kind !== "C") continue;
          if (status === "committed") committed.set(key, (committed.get(key) ?? 0) + 1);
          if (status === "committed" || status === "duplicate") acked.add(key);
        }
      }
      for (const [key, n] of committed) {
        if (n > 1) {
          failed = true;
          r.notes.push(`${procs} procs: ${key} committed ${n} times`);
        }
      }
      const eng = await engineFor({ stateDir, logFile, minFoldTokens: 1e9, tokenBudget: 1e9 });
      for (const key of acked) {
        const s = (await eng.commitTurn({ sessionId: sid, advancementKey: key, messages: turn(Number(key.slice(1))) })).status;
        if (s !== "duplicate") {
          r.lost += 1;
          failed = true;
          r.notes.push(`${procs} procs: ${key} lost`);
        }
      }
      if (corrupt(logFile).length) {
        failed = true;
        r.notes.push(`${procs} procs: ${JSON.stringify(corrupt(logFile)[0])}`);
      }
      if (acked.size < count - (FULL && round % 2 === 1 ? 0 : 0)) {
        failed = true;
        r.notes.push(`${procs} procs: only ${acked.size} of ${count} turns acknowledged`);
      }
      if (failed) r.failures += 1;
    }
  }
  report(t, "multi-process", r);
  assert.equal(r.lost, 0, r.notes.join("\n"));
  assert.equal(r.failures, 0, r.notes.join("\n"));
});

// ---- stale and foreign locks --------------------------------------------------------------

test("stale and foreign locks never stall a turn", { skip, timeout: 300_000 }, async (t) => {
  const r = { tries: 0, failures: 0, lost: 0, notes: [] };
  const stateDir = tempDir("cachefold-locks-");
  const sid = "s-locks";
  const dir = await sessionDir(stateDir, sid);
  mkdirSync(dir, { recursive: true });
  const sleeper = spawn("sleep", ["300"], { stdio: "ignore" });
  const dead = spawn(process.execPath, ["-e", ""], { stdio: "ignore" });
  await new Promise((res) => dead.on("exit", res));
  const past = () => new Date(Date.now() - 60_000);
  const kinds = {
    "dead pid": () => writeFileSync(join(dir, "lock"), JSON.stringify({ pid: dead.pid, start: "1", host: hostname(), token: "aa", at: Date.now() })),
    "live foreign pid, old heartbeat": () => {
      writeFileSync(join(dir, "lock"), JSON.stringify({ pid: sleeper.pid, at: Date.now() }));
      utimesSync(join(dir, "lock"), past(), past());
    },
    "reused pid (other start time)": () => writeFileSync(join(dir, "lock"), JSON.stringify({ pid: sleeper.pid, start: "7", host: hostname(), token: "bb", at: Date.now() })),
    "own pid, not held (restarted gateway)": () => writeFileSync(join(dir, "lock"), JSON.stringify({ pid: process.pid, at: Date.now() })),
    "garbage, old": () => {
      writeFileSync(join(dir, "lock"), "\u0000{not json");
      utimesSync(join(dir, "lock"), past(), past());
    },
    "dead waiters' tickets": () => {
      mkdirSync(join(dir, "lockq"), { recursive: true });
      for (let i = 0; i < 3; i++) writeFileSync(join(dir, "lockq", `${String(Date.now() - 1000 - i).padStart(15, "0")}-${dead.pid}-1-${"c".repeat(16)}${i}`), "");
    },
  };
  const names = Object.keys(kinds);
  const tries = FULL ? 60 : names.length;
  try {
    const eng = await engineFor({ stateDir });
    for (let i = 0; i < tries; i++) {
      const kind = names[i % names.length];
      kinds[kind]();
      const t0 = Date.now();
      const s = (await eng.commitTurn({ sessionId: sid, advancementKey: `l${i}`, messages: turn(i) })).status;
      const ms = Date.now() - t0;
      r.tries += 1;
      if (s !== "committed" || ms > 2000) {
        r.failures += 1;
        r.notes.push(`${kind}: ${s} after ${ms} ms`);
      }
    }
  } finally {
    sleeper.kill("SIGKILL");
  }
  report(t, "locks", r);
  assert.equal(r.failures, 0, r.notes.join("\n"));
});

// ---- cross-session reads and symlinks ------------------------------------------------------

test("cross-session reads and planted symlinks: nothing served or written outside the caller's data", { skip, timeout: 300_000 }, async (t) => {
  const r = { tries: 0, failures: 0, lost: 0, notes: [] };
  const { writeArtifact } = await import("../../js/artifacts.js");
  const { recoverTool, searchTool, statsTool } = await import("../../js/tools.js");
  const { loadCore } = await import("../../js/core.js");
  const core = await loadCore();
  const config = core.parseConfig("{}");
  const tries = FULL ? 40 : 8;
  const fail = (why) => {
    r.failures += 1;
    r.notes.push(why);
  };
  for (let i = 0; i < tries; i++) {
    const stateDir = tempDir("cachefold-iso-");
    const outside = tempDir("cachefold-outside-");
    const secretFile = join(outside, "secret");
    const SECRET = `SECRET-${i}-${rand(1e9)}`;
    writeFileSync(secretFile, `${SECRET}\n`);
    const ctx = { config, configJson: JSON.stringify(config), stateDir, logger: { warn() {} }, log() {}, core, engine: {} };
    const A = { sessionKey: `agent:main:a${i}`, sessionId: `a${i}` };
    const B = { sessionKey: `agent:main:b${i}`, sessionId: `b${i}` };
    // Ids starting with a digit: this campaign tests the shim; which 40-hex ids the core's
    // parseRecoverTarget accepts (some starting with f or c were taken for fold ids) is the
    // core's own test.
    let text;
    let n = 0;
    do text = `${SECRET} in session A (${n++})\n`.repeat(30);
    while (!/^[0-9]/.test(sha1(text)));
    const id = sha1(text);
    writeArtifact(stateDir, id, text, { tool: "exec", session: A.sessionKey, originalChars: text.length, shrunkChars: 10 });
    r.tries += 1;
    // Cross-session: B learns A's id.
    const rb = await recoverTool(ctx, B).execute("c", { id });
    const sb = await searchTool(ctx, B).execute("c", { query: "SECRET" });
    const st = await statsTool(ctx, B).execute("c", {});
    if (rb.details.found || rb.content[0].text.includes(SECRET) || sb.details.hits.length || st.details.shrink.artifacts) fail(`try ${i}: session B read A's artifact`);
    if (!(await recoverTool(ctx, A).execute("c", { id })).details.found) fail(`try ${i}: A lost its own artifact`);
    // A planted symlink of a random kind.
    const kind = i % 4;
    if (kind === 0) {
      const p = join(stateDir, "artifacts", id.slice(0, 2), id);
      unlinkSync(p);
      symlinkSync(secretFile, p);
      const ra = await recoverTool(ctx, A).execute("c", { id });
      if (ra.content[0].text.includes("SECRET") && !ra.content[0].text.includes("session A")) fail(`try ${i}: followed an artifact symlink`);
    } else if (kind === 1) {
      const refs = join(stateDir, "artifacts", "sessions", `${sha1(A.sessionKey)}.jsonl`);
      unlinkSync(refs);
      symlinkSync(secretFile, refs);
      const t2 = `another ${i}\n`.repeat(40);
      try {
        writeArtifact(stateDir, sha1(t2), t2, { tool: "exec", session: A.sessionKey });
      } catch {
        /* refused: expected */
      }
    } else {
      const sid = `s-link-${i}`;
      const sdir = await sessionDir(stateDir, sid);
      mkdirSync(join(stateDir, "sessions"), { recursive: true });
      if (kind === 2) symlinkSync(outside, sdir);
      else {
        mkdirSync(sdir, { recursive: true });
        symlinkSync(secretFile, join(sdir, rand(2) ? "journal.jsonl" : "snapshot.json"));
      }
      const eng = await engineFor({ stateDir });
      const s = (await eng.commitTurn({ sessionId: sid, advancementKey: "k", messages: turn(0) })).status;
      if (s !== "deferred") fail(`try ${i}: commit through a symlink answered ${s}`);
    }
    const after = readdirSync(outside);
    if (readFileSync(secretFile, "utf8") !== `${SECRET}\n` || after.length !== 1) fail(`try ${i} (kind ${kind}): wrote outside the store: ${after.join(", ")}`);
    rmSync(stateDir, { recursive: true, force: true });
    rmSync(outside, { recursive: true, force: true });
  }
  report(t, "isolation+symlinks", r);
  assert.equal(r.failures, 0, r.notes.join("\n"));
});

// ---- unwritable state directory -------------------------------------------------------------

test("read-only or full state dir: turns served, commits deferred, nothing lost afterwards", { skip, timeout: 300_000 }, async (t) => {
  const r = { tries: 0, failures: 0, lost: 0, notes: [] };
  const stateDir = tempDir("cachefold-rofs-");
  const sid = "s-rofs";
  const tries = FULL ? 30 : 6;
  const realOpen = fs.openSync;
  const realRename = fs.renameSync;
  const writes = (flags) => (typeof flags === "string" ? /[wa+]/.test(flags) : ((flags ?? 0) & (fs.constants.O_WRONLY | fs.constants.O_RDWR)) !== 0);
  const deferred = [];
  const committed = [];
  for (let i = 0; i < tries; i++) {
    const code = i % 2 ? "ENOSPC" : "EROFS";
    const broken = i % 3 !== 0; // every third turn the disk works again
    if (broken) {
      fs.openSync = (p, flags, ...rest) => {
        if (String(p).startsWith(stateDir) && writes(flags)) throw Object.assign(new Error(`${code}: injected`), { code });
        return realOpen(p, flags, ...rest);
      };
      fs.renameSync = (a, b) => {
        if (String(b).startsWith(stateDir)) throw Object.assign(new Error(`${code}: injected`), { code });
        return realRename(a, b);
      };
      syncBuiltinESMExports();
    }
    try {
      r.tries += 1;
      const eng = await engineFor({ stateDir, minFoldTokens: 1e9, tokenBudget: 1e9 });
      const h = history(i);
      const a = await eng.assemble({ sessionId: sid, messages: h, model: MODEL, tokenBudget: 1e9 });
      if (a.messages.length < Math.min(h.length, 1)) throw new Error("turn not served");
      const s = (await eng.commitTurn({ sessionId: sid, advancementKey: `r${i}`, messages: turn(i) })).status;
      (s === "deferred" ? deferred : committed).push(i);
      if (broken && s !== "deferred") throw new Error(`${code}: answered ${s}`);
    } catch (err) {
      r.failures += 1;
      r.notes.push(`try ${i}: ${err.message}`);
    } finally {
      fs.openSync = realOpen;
      fs.renameSync = realRename;
      syncBuiltinESMExports();
    }
  }
  // Disk writable again: the host retries the deferred turns; every acknowledged one is known.
  const eng = await engineFor({ stateDir, minFoldTokens: 1e9, tokenBudget: 1e9 });
  for (const i of deferred) {
    const s = (await eng.commitTurn({ sessionId: sid, advancementKey: `r${i}`, messages: turn(i) })).status;
    if (s !== "committed") r.notes.push(`retry r${i}: ${s}`), (r.failures += 1);
  }
  for (const i of [...committed, ...deferred]) {
    const s = (await eng.commitTurn({ sessionId: sid, advancementKey: `r${i}`, messages: turn(i) })).status;
    if (s !== "duplicate") r.lost += 1;
  }
  report(t, "unwritable state dir", r);
  assert.equal(r.lost, 0, r.notes.join("\n"));
  assert.equal(r.failures, 0, r.notes.join("\n"));
});

// ---- disk full at every write of a turn ----------------------------------------------------------

/** fs.writeSync with write number `k` (1-based, counting writes under `root`) failing: "enospc"
 * (that write and every later one fail) or "short" (half of it lands, then the disk is full). */
function failWriteAt(root, k, mode) {
  const real = fs.writeSync;
  let n = 0;
  let full = false;
  const hit = [];
  fs.writeSync = function (fd, data, ...rest) {
    let target = "";
    try {
      target = fs.readlinkSync(`/proc/self/fd/${fd}`);
    } catch {}
    if (!target.startsWith(root)) return real.call(fs, fd, data, ...rest);
    n += 1;
    if (n === k) hit.push(target.slice(root.length).replace(/\.tmp-.*|lock\.new-.*/, (m) => (m.startsWith("lock") ? "lock.new" : ".tmp")));
    const enospc = () => Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC", errno: -28, syscall: "write" });
    if (full) throw enospc();
    if (n < k) return real.call(fs, fd, data, ...rest);
    full = true;
    if (mode === "enospc") throw enospc();
    const buf = typeof data === "string" ? Buffer.from(data, "utf8") : data;
    const off = typeof data === "string" ? 0 : (rest[0] ?? 0);
    const len = typeof data === "string" ? buf.length : (rest[1] ?? buf.length - off);
    const pos = typeof data === "string" ? (rest[0] ?? null) : (rest[2] ?? null);
    if (len < 2) throw enospc();
    return real.call(fs, fd, buf, off, Math.floor(len / 2), pos);
  };
  syncBuiltinESMExports();
  return {
    writes: () => n,
    hit,
    undo() {
      fs.writeSync = real;
      syncBuiltinESMExports();
    },
  };
}

/** In a fresh process: commit `keys` (turn k's messages for key d<k>) in each of `sessions`. */
function commitAllInNewProcess(sessions) {
  const helpers = new URL("../js/helpers.mjs", import.meta.url).href;
  const turns = new URL("./turns.mjs", import.meta.url).href;
  const script = `import { engineFor } from ${JSON.stringify(helpers)};
    import { turn } from ${JSON.stringify(turns)};
    const out = [];
    for (const s of ${JSON.stringify(sessions)}) {
      const eng = await engineFor({ ...s.config, stateDir: s.stateDir });
      const st = [];
      for (const k of s.turns) st.push((await eng.commitTurn({ sessionId: s.sid, advancementKey: "d" + k, messages: turn(k) })).status);
      out.push(st);
    }
    console.log(JSON.stringify(out));`;
  const file = join(tempDir("cachefold-script-"), "main.mjs");
  writeFileSync(file, script);
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, [file], { stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    p.stdout.on("data", (d) => (out += d));
    p.on("exit", (code) => (code === 0 ? resolve(JSON.parse(out.trim().split("\n").pop())) : reject(new Error(`verifier exited ${code}`))));
  });
}

test("disk full at every write of a turn: 0 lost turns, 0 false committed, a fresh process restores", { skip, timeout: 900_000 }, async (t) => {
  const r = { tries: 0, failures: 0, lost: 0, notes: [] };
  const config = FOLDING;
  // Turns whose writes differ: the first (journal header, lessons decision), plain ones, and
  // ones that store a fold. The full form takes every turn up to 40.
  const faultTurns = FULL ? Array.from({ length: 40 }, (_, i) => i) : [0, 3, 6];
  const cases = [];
  const hitFiles = new Set();
  for (const k of faultTurns) {
    // How many writes turn k makes with room on the disk.
    const probeDir = tempDir("cachefold-full-probe-");
    const probe = await engineFor({ ...config, stateDir: probeDir });
    for (let i = 0; i < k; i++) {
      await probe.assemble({ sessionId: "probe", messages: history(i), model: MODEL, tokenBudget: config.tokenBudget });
      await probe.commitTurn({ sessionId: "probe", advancementKey: `d${i}`, messages: turn(i) });
    }
    const count = failWriteAt(probeDir, Infinity, "enospc");
    await probe.assemble({ sessionId: "probe", messages: history(k), model: MODEL, tokenBudget: config.tokenBudget });
    await probe.commitTurn({ sessionId: "probe", advancementKey: `d${k}`, messages: turn(k) });
    count.undo();
    const writes = count.writes();
    for (const mode of ["enospc", "short"]) {
      for (let w = 1; w <= writes; w++) {
        r.tries += 1;
        const stateDir = tempDir("cachefold-full-");
        const sid = `s-full-${k}-${mode}-${w}`;
        const eng = await engineFor({ ...config, stateDir });
        for (let i = 0; i < k; i++) {
          await eng.assemble({ sessionId: sid, messages: history(i), model: MODEL, tokenBudget: config.tokenBudget });
          await eng.commitTurn({ sessionId: sid, advancementKey: `d${i}`, messages: turn(i) });
        }
        const fault = failWriteAt(stateDir, w, mode);
        let status = "threw";
        try {
          const h = history(k);
          const a = await eng.assemble({ sessionId: sid, messages: h, model: MODEL, tokenBudget: config.tokenBudget });
          if (!Array.isArray(a?.messages) || (h.length && !a.messages.length)) throw new Error("turn not served");
          status = (await eng.commitTurn({ sessionId: sid, advancementKey: `d${k}`, messages: turn(k) })).status;
        } catch (err) {
          r.failures += 1;
          r.notes.push(`turn ${k} ${mode} at write ${w}: ${err.message}`);
        } finally {
          fault.undo();
        }
        for (const f of fault.hit) hitFiles.add(f.replace(/^\/sessions\/[^/]+\//, ""));
        const snap = join(await sessionDir(stateDir, sid), "snapshot.json");
        if (existsSync(snap)) {
          try {
            JSON.parse(readFileSync(snap, "utf8"));
          } catch {
            r.failures += 1;
            r.notes.push(`turn ${k} ${mode} at write ${w}: torn snapshot`);
          }
        }
        cases.push({ stateDir, sid, k, mode, w, status, config, turns: Array.from({ length: k + 1 }, (_, i) => i) });
      }
    }
  }
  // A fresh process with room on the disk again.
  const again = await commitAllInNewProcess(cases.map(({ stateDir, sid, config: c, turns }) => ({ stateDir, sid, config: c, turns })));
  cases.forEach((c, i) => {
    const st = again[i];
    for (let j = 0; j < c.k; j++) {
      if (st[j] !== "duplicate") {
        r.lost += 1;
        r.notes.push(`turn ${c.k} ${c.mode} at write ${c.w}: earlier turn d${j} answers ${st[j]}`);
      }
    }
    const last = st[c.k];
    if (c.status === "committed" && last !== "duplicate") {
      r.failures += 1;
      r.lost += 1;
      r.notes.push(`turn ${c.k} ${c.mode} at write ${c.w}: answered committed, a fresh process answers ${last} (false committed)`);
    } else if (last !== "committed" && last !== "duplicate") {
      r.failures += 1;
      r.notes.push(`turn ${c.k} ${c.mode} at write ${c.w}: not restorable (${last})`);
    }
  });
  r.notes.unshift(`writes hit: ${[...hitFiles].sort().join(" ")}`);
  report(t, "disk full at every write", r);
  assert.equal(r.lost, 0, r.notes.join("\n"));
  assert.equal(r.failures, 0, r.notes.join("\n"));
});

// ---- hostile workspace files ---------------------------------------------------------------------

const HOSTILE = fileURLToPath(new URL("./hostile.mjs", import.meta.url));
const HOSTILE_VARIANTS = ["fifo", "fifo-json", "dev-zero", "dev-zero-json", "huge-input", "huge-lesson", "dir-input", "dir-lesson", "fifo-lesson", "zero-lesson", "torn-lessons-json", "dir-lessons-json", "fifo-lessons-json"];

test("hostile workspace files: no call blocks over 100 ms, nothing crashes, lessons kept", { skip, timeout: 900_000 }, async (t) => {
  const r = { tries: 0, failures: 0, lost: 0, notes: [] };
  const arg = { variants: HOSTILE_VARIANTS, reps: FULL ? 5 : 2, hugeBytes: FULL ? 2 ** 31 : 134_000_000 };
  const out = await new Promise((resolve) => {
    const p = spawn(process.execPath, [HOSTILE, JSON.stringify(arg)], { stdio: ["ignore", "pipe", "pipe"] });
    let text = "";
    let err = "";
    p.stdout.on("data", (d) => (text += d));
    p.stderr.on("data", (d) => (err += d));
    const timer = setTimeout(() => p.kill("SIGKILL"), FULL ? 600_000 : 120_000);
    p.on("exit", (code, signal) => {
      clearTimeout(timer);
      resolve({ text, err, code, signal });
    });
  });
  const lines = out.text.split("\n").filter((l) => l.startsWith("H "));
  let worst = 0;
  for (const l of lines) {
    const [, variant, call, ms, res] = l.split(" ");
    r.tries += 1;
    worst = Math.max(worst, Number(ms));
    if (!(Number(ms) <= 100)) (r.failures += 1), r.notes.push(`${variant} ${call}: blocked ${ms} ms`);
    if (res !== "ok") (r.failures += 1), r.notes.push(`${variant} ${call}: ${res}`);
  }
  if (!out.text.includes("done\n")) (r.failures += 1), r.notes.push(`the calls did not finish (exit ${out.code ?? out.signal}; last: ${lines.at(-1) ?? "none"}) ${out.err.slice(-300)}`);
  if (lines.length !== HOSTILE_VARIANTS.length * 3) (r.failures += 1), r.notes.push(`${lines.length} of ${HOSTILE_VARIANTS.length * 3} calls reported`);
  r.notes.unshift(`longest block ${worst} ms`);
  report(t, "hostile workspace files", r);
  assert.equal(r.failures, 0, r.notes.join("\n"));
});

// ---- flag fuzzing of every CLI command ---------------------------------------------------------

const FUZZ_VALUES = ["", "0", "1", "-1", "0x10", "1e3", "1.5", " 5", "10000000000000000000000", "true", "false", "yes", "no", "--yes", "--all", "-", "--", "s-1", "../x"];
const FUZZ_UNKNOWN = ["--bogus", "-x", "--yes-please", "--al", "--ALL", "--dry_run", "--max_bytes=1", "-y", "--no-yes"];

test("flag fuzzing of every CLI command: no deletion without a literal --yes, no crash, exit 2 names the flag", { skip, timeout: 900_000 }, async (t) => {
  const r = { tries: 0, failures: 0, lost: 0, notes: [] };
  const { dispatch, COMMANDS } = await import("../../js/cli.js");
  const host = tempDir("cachefold-fuzz-host-");
  const saved = { OPENCLAW_STATE_DIR: process.env.OPENCLAW_STATE_DIR, OPENCLAW_HOME: process.env.OPENCLAW_HOME };
  process.env.OPENCLAW_STATE_DIR = host; // restore, replay and doctor see an empty host
  process.env.OPENCLAW_HOME = host;
  const cwd = process.cwd();
  const scratch = tempDir("cachefold-fuzz-cwd-");
  process.chdir(scratch); // a relative --out lands here
  const names = [...COMMANDS.keys()];
  const flagsOf = (name) => ({ json: { type: "boolean" }, help: { type: "boolean" }, ...(COMMANDS.get(name).options ?? {}) });
  const allFlags = [...new Set(names.flatMap((n) => Object.keys(flagsOf(n))))];
  const pick = (a) => a[rand(a.length)];
  const value = (flag) => (["out", "db", "workspace", "state-dir", "tokenizer"].includes(flag) && rand(2) ? join(scratch, `f${rand(1000)}`) : pick(FUZZ_VALUES));
  const token = (name) => {
    const own = Object.keys(flagsOf(name));
    const f = rand(4) ? pick(own) : pick(allFlags);
    switch (rand(4)) {
      case 0:
        return [`--${f}`];
      case 1:
        return [`--${f}=${value(f)}`];
      case 2:
        return [`--${f}`, value(f)];
      default:
        return rand(3) ? [pick(FUZZ_VALUES)] : [pick(FUZZ_UNKNOWN)];
    }
  };
  const cases = [];
  // Boundary sets: every flag of every command alone, bare and with every value; every unknown flag first.
  for (const name of names) {
    for (const f of Object.keys(flagsOf(name))) {
      cases.push([name, `--${f}`]);
      for (const v of FUZZ_VALUES) cases.push([name, `--${f}=${v}`], [name, `--${f}`, v]);
    }
    for (const u of FUZZ_UNKNOWN) cases.push([name, u], [name, u, "--all", "--yes"]);
  }
  for (const g of [["--all", "--yes"], ["--all", "--yes", "--dry-run"], ["--yes", "--all"], ["--all=true", "--yes"], ["--all", "--yes=true"], ["--all", "--yes", "--max-bytes", "0"]]) cases.push(["gc", ...g]);
  // Random sets.
  const randomTries = FULL ? 20_000 : 600;
  for (let i = 0; i < randomTries; i++) {
    const name = rand(20) ? pick(names) : pick(["bogus", "GC", "help", "--all"]);
    const argv = [name];
    const unknownFirst = rand(6) === 0;
    if (unknownFirst) argv.push(pick(FUZZ_UNKNOWN));
    for (let n = rand(5); n > 0; n--) argv.push(...(COMMANDS.has(name) ? token(name) : [pick(FUZZ_VALUES)]));
    cases.push(argv);
  }
  const stateDir = tempDir("cachefold-fuzz-state-");
  const OWN = ["sessions", "artifacts", "lessons", "reports"];
  const plant = () => {
    for (const d of ["sessions/s-1", "artifacts/ab", "lessons", "reports"]) mkdirSync(join(stateDir, d), { recursive: true });
    writeFileSync(join(stateDir, "sessions/s-1/journal.jsonl"), "");
    writeFileSync(join(stateDir, "artifacts/ab", "ab".padEnd(40, "0")), "x");
  };
  const ctx = { stateDir, config: { artifacts: { maxBytes: 1 << 30 } }, configJson: "{}", configProblems: [], log() {} };
  const fail = (argv, why) => {
    r.failures += 1;
    if (r.notes.length < 40) r.notes.push(`${JSON.stringify(argv)}: ${why}`);
  };
  try {
    for (const argv of cases) {
      r.tries += 1;
      plant();
      let out = "";
      let err = "";
      let code;
      try {
        code = await withTimeout(dispatch(argv, { ctx, stdout: { write: (x) => (out += x) }, stderr: { write: (x) => (err += x) }, workspace: scratch }), 30_000, "dispatch");
      } catch (e) {
        fail(argv, `crashed: ${e?.message ?? e}`);
        continue;
      }
      if (![0, 1, 2, 3, 4, 5].includes(code)) fail(argv, `exit ${code}`);
      const gone = OWN.filter((d) => !existsSync(join(stateDir, d)));
      const confirmed = argv[0] === "gc" && argv.includes("--all") && argv.includes("--yes") && !argv.includes("--dry-run");
      if (gone.length && !confirmed) fail(argv, `deleted ${gone.join(", ")} without a literal --all --yes`);
      if (gone.length && code !== 0) fail(argv, `deleted ${gone.join(", ")} and exited ${code}`);
      if (code === 2 && COMMANDS.has(argv[0])) {
        // A usage error names what it refuses: a flag or argument of this command line.
        const named = argv.slice(1).some((a) => {
          const flag = /^(--?[^=]+)/.exec(a)?.[1];
          return (flag && err.includes(flag)) || err.includes(JSON.stringify(a));
        });
        if (!named && !/needs|usage: openclaw cachefold/.test(err.split("\n")[0])) fail(argv, `exit 2 without naming a flag: ${err.split("\n")[0]}`);
      }
      const unknown = argv.slice(1).find((a) => FUZZ_UNKNOWN.includes(a));
      if (unknown !== undefined && COMMANDS.has(argv[0]) && argv[1] === unknown) {
        const flag = /^(--?[^=]+)/.exec(unknown)[1];
        if (code !== 2) fail(argv, `unknown flag ${unknown} first: exit ${code}`);
        else if (!err.includes(flag)) fail(argv, `unknown flag ${unknown}: the error does not name it: ${err.split("\n")[0]}`);
      }
    }
  } finally {
    process.chdir(cwd);
    for (const [k, v] of Object.entries(saved)) if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  report(t, "flag fuzzing", r);
  assert.equal(r.failures, 0, r.notes.join("\n"));
});

// ---- two processes racing gc -------------------------------------------------------------------

test("two processes racing gc while a third re-references artifacts: 0 referenced artifacts deleted", { skip, timeout: 900_000 }, async (t) => {
  const { raceGc } = await import("./gc-race.mjs");
  const r = { tries: 0, failures: 0, lost: 0, notes: [] };
  const runs = FULL ? 5 : 1;
  let gcRuns = 0;
  let evicted = 0;
  for (let i = 0; i < runs; i++) {
    const g = await raceGc({ n: FULL ? 3000 : 300, rounds: FULL ? 10 : 6 });
    r.tries += g.referenced;
    r.failures += g.missingCount;
    r.lost += g.missingCount;
    r.notes.push(...g.missing);
    gcRuns += g.gcRuns;
    evicted += g.evicted;
  }
  r.notes.unshift(`${gcRuns} gc runs, ${evicted} evicted`);
  report(t, "gc race", r);
  // The GCs did race: they ran and evicted between the rounds.
  assert.ok(gcRuns >= 2 * runs, `${gcRuns} gc runs`);
  assert.ok(evicted > 0, `${evicted} evicted`);
  assert.equal(r.failures, 0, r.notes.join("\n"));
});

test.after(() => {
  console.log(`faults total: tries ${totals.tries}, failures ${totals.failures}, data lost ${totals.lost}`);
});
