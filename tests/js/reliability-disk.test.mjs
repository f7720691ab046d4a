// A full disk never yields a false "committed" or a torn snapshot (issue 24, item 1).
//
// The disk fills up through node:fs itself: fs.writeSync is replaced (syncBuiltinESMExports, so
// every module's named import sees it) by a writer that, for files under the test's state dir,
// writes only what is left of a byte budget (a short write, as write(2) does on a filling disk),
// then fails with ENOSPC. For each budget the turns run until the disk is full; then a fresh
// process, on a disk with room again, must hold every turn that was answered "committed" and
// restore the session.
import test from "node:test";
import assert from "node:assert/strict";
import fs, { existsSync, readFileSync, readlinkSync } from "node:fs";
import { syncBuiltinESMExports } from "node:module";
import { join } from "node:path";
import { tempDir, engineFor, sessionDir, user, assistantText, commitInNewProcess, pkgSkip } from "./helpers.mjs";

const skip = pkgSkip();
const realWrite = fs.writeSync;
const realWritev = fs.writevSync;

/** The first `n` bytes of a list of chunks, as a list. */
function firstBytes(chunks, n) {
  const out = [];
  for (const c of chunks) {
    if (n <= 0) break;
    out.push(c.subarray(0, Math.min(c.length, n)));
    n -= c.length;
  }
  return out;
}

/** Make writes to files under `root` fail after `budget` more bytes; returns the undo. */
function fillDiskAfter(root, budget) {
  let left = budget;
  fs.writeSync = function (fd, data, ...rest) {
    let target = "";
    try {
      target = readlinkSync(`/proc/self/fd/${fd}`);
    } catch {}
    if (!target.startsWith(root)) return realWrite.call(fs, fd, data, ...rest);
    const buf = typeof data === "string" ? Buffer.from(data, typeof rest[1] === "string" ? rest[1] : "utf8") : data;
    const off = typeof data === "string" ? 0 : (rest[0] ?? 0);
    const len = typeof data === "string" ? buf.length : (rest[1] ?? buf.length - off);
    if (left <= 0) throw Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC", errno: -28, syscall: "write" });
    const n = Math.min(len, left);
    left -= n;
    const pos = typeof data === "string" ? null : (rest[2] ?? null);
    return realWrite.call(fs, fd, buf, off, n, pos);
  };
  // Chunk lists (fold files) are written with writev: short writes and ENOSPC the same way.
  fs.writevSync = function (fd, chunks, pos) {
    let target = "";
    try {
      target = readlinkSync(`/proc/self/fd/${fd}`);
    } catch {}
    if (!target.startsWith(root)) return realWritev.call(fs, fd, chunks, pos);
    if (left <= 0) throw Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC", errno: -28, syscall: "write" });
    const n = realWritev.call(fs, fd, firstBytes(chunks, left), pos);
    left -= n;
    return n;
  };
  syncBuiltinESMExports();
  return () => {
    fs.writeSync = realWrite;
    fs.writevSync = realWritev;
    syncBuiltinESMExports();
  };
}

test("a list of chunks is written whole through short writes; a disk with no room is ENOSPC", async () => {
  const { writeFileAtomic } = await import("../../js/io/files.js");
  const root = tempDir();
  // More chunks than one writev takes (IOV_MAX 1024), of uneven sizes, some empty.
  const chunks = Array.from({ length: 2500 }, (_, i) => Buffer.from(i % 7 === 0 ? "" : `${i}:${"x".repeat(i % 13)}\n`));
  const whole = Buffer.concat(chunks);
  for (const [budget, writes] of [[Infinity, "whole"], [whole.length, "exact"]]) {
    const undo = fillDiskAfter(root, budget);
    try {
      writeFileAtomic(join(root, `${writes}.jsonl`), chunks);
    } finally {
      undo();
    }
    assert.ok(readFileSync(join(root, `${writes}.jsonl`)).equals(whole), writes);
  }
  // Each call writes at most 100 bytes (a short write every time) until the budget is spent.
  const short = (fd, cs, pos) => realWritev.call(fs, fd, firstBytes(cs, 100), pos);
  fs.writevSync = short;
  syncBuiltinESMExports();
  try {
    writeFileAtomic(join(root, "short.jsonl"), chunks);
  } finally {
    fs.writevSync = realWritev;
    syncBuiltinESMExports();
  }
  assert.ok(readFileSync(join(root, "short.jsonl")).equals(whole));
  const undo = fillDiskAfter(root, 1000);
  try {
    assert.throws(() => writeFileAtomic(join(root, "full.jsonl"), chunks), (e) => e.code === "ENOSPC");
  } finally {
    undo();
  }
  assert.equal(existsSync(join(root, "full.jsonl")), false, "no torn file");
});

const turn = (k) => [user(`question ${k} ${"lorem ipsum dolor ".repeat(300)}`), assistantText(`answer ${k} ${"sit amet consectetur ".repeat(300)}`)];

test("disk full at every point of a turn: no false committed, no torn snapshot, a fresh process restores", { skip, timeout: 240_000 }, async () => {
  const keys = Array.from({ length: 12 }, (_, i) => `k${i}`);
  // How many bytes the whole run writes with room on the disk (the budgets are spread over it).
  const probe = tempDir();
  {
    const eng = await engineFor({ stateDir: probe });
    for (const k of keys) assert.equal((await eng.commitTurn({ sessionId: "s-probe", advancementKey: k, messages: turn(k) })).status, "committed");
  }
  let total = 0;
  const walk = (d) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      if (e.isDirectory()) walk(join(d, e.name));
      else total += fs.statSync(join(d, e.name)).size;
    }
  };
  walk(probe);
  assert.ok(total > 10_000, `the run writes ${total} bytes`);
  const budgets = [1, 40, 90, 200, 1000, 5000, Math.floor(total / 7), Math.floor(total / 3), Math.floor(total / 2), total - 500];
  let falseCommits = 0;
  const failures = [];
  for (const budget of budgets) {
    const stateDir = tempDir();
    const sid = `s-full-${budget}`;
    const eng = await engineFor({ stateDir });
    const undo = fillDiskAfter(stateDir, budget);
    const status = {};
    try {
      for (const k of keys) status[k] = (await eng.commitTurn({ sessionId: sid, advancementKey: k, messages: turn(k) })).status;
    } finally {
      undo();
    }
    const dir = await sessionDir(stateDir, sid);
    const snap = join(dir, "snapshot.json");
    if (existsSync(snap)) {
      try {
        JSON.parse(readFileSync(snap, "utf8"));
      } catch (err) {
        failures.push(`budget ${budget}: torn snapshot (${err.message})`);
      }
    }
    // A fresh process with room on the disk: every "committed" turn is there (duplicate), every
    // other one is recorded now (committed), none is refused.
    const again = commitInNewProcess({ stateDir }, sid, keys, turn("retry"));
    keys.forEach((k, i) => {
      if (status[k] === "committed" && again[i] !== "duplicate") {
        falseCommits += 1;
        failures.push(`budget ${budget}: ${k} answered committed, a fresh process answers ${again[i]}`);
      }
      if (status[k] !== "committed" && again[i] !== "committed" && again[i] !== "duplicate") failures.push(`budget ${budget}: ${k} not restorable (${again[i]})`);
    });
  }
  assert.deepEqual(failures, [], `${falseCommits} false committed`);
});
