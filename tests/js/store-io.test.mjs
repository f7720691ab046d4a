// The file work of one engine call (js/store.js, js/io/lock.js): the session's state read as
// bytes and restored from them, the lock taken without a queue ticket when nobody waits, and the
// one-realpath check of the session's directories.
import test from "node:test";
import assert from "node:assert/strict";
import fs, { mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { spawn } from "node:child_process";
import { syncBuiltinESMExports } from "node:module";
import { join } from "node:path";
import * as store from "../../js/store.js";
import { resolvesInPlace } from "../../js/io/lock.js";
import { tempDir, pkgSkip, loadTestCore } from "./helpers.mjs";

const skip = pkgSkip();

/** The paths `fs.openSync` was called with while `fn` runs (through the modules' own imports). */
async function opened(fn) {
  const { openSync } = fs;
  const seen = [];
  fs.openSync = (p, ...rest) => {
    seen.push(String(p));
    return openSync(p, ...rest);
  };
  syncBuiltinESMExports();
  try {
    await fn();
  } finally {
    fs.openSync = openSync;
    syncBuiltinESMExports();
  }
  return seen;
}

/**
 * The oracle: the state files read as text, as the store read them before it read bytes (the
 * snapshot or null; the journal's lines after its header line; the header's generation).
 */
function readStateText(paths) {
  const read = (p) => {
    try {
      return readFileSync(p, "utf8");
    } catch (err) {
      if (err.code === "ENOENT") return null;
      throw err;
    }
  };
  const snapshot = read(paths.snapshot);
  const raw = read(paths.journal);
  let gen = null;
  let body = raw ?? "";
  if (body.startsWith('{"cachefold":"journal","gen":"')) {
    const nl = body.indexOf("\n");
    if (nl < 0) body = ""; // torn header: nothing after it was written
    else {
      try {
        gen = JSON.parse(body.slice(0, nl)).gen ?? null;
      } catch {
        /* torn header */
      }
      body = body.slice(nl + 1);
    }
  }
  return { snapshot, journal: body, stamp: { gen, size: raw == null ? -1 : Buffer.byteLength(raw) }, headerless: raw != null && gen == null && raw.length > 0 };
}

test("readStateBytes reads what the text reader read, as bytes (header, torn header, no header, absent)", () => {
  const root = tempDir();
  const paths = store.sessionPaths(root, "s-bytes");
  mkdirSync(paths.dir, { recursive: true });
  const same = (why) => {
    const t = readStateText(paths);
    const b = store.readStateBytes(paths);
    assert.equal(b.snapshot === null ? null : b.snapshot.toString("utf8"), t.snapshot, `${why}: snapshot`);
    assert.ok(Buffer.isBuffer(b.journal), `${why}: journal bytes`);
    assert.equal(b.journal.toString("utf8"), t.journal, `${why}: journal body`);
    assert.deepEqual(b.stamp, t.stamp, `${why}: stamp`);
    assert.equal(b.headerless, t.headerless, `${why}: headerless`);
    return b;
  };
  const absent = same("absent");
  assert.equal(absent.stamp.size, -1);
  // A new journal (header line) after a snapshot, with lines appended, some not ASCII.
  const stamp = store.writeSnapshot(paths, '{"v":1,"sessionId":"s-bytes"}');
  store.appendJournal(paths, '{"line":"é ✓ 𝄞"}\n');
  const full = same("header");
  assert.equal(full.stamp.gen, stamp.gen);
  assert.equal(full.journal.toString("utf8"), '{"line":"é ✓ 𝄞"}\n');
  // A torn header (no newline yet): nothing after it was written.
  writeFileSync(paths.journal, '{"cachefold":"journal","gen":"00');
  assert.equal(same("torn header").journal.length, 0);
  // An older journal without a header line.
  writeFileSync(paths.journal, '{"line":1}\n');
  assert.equal(same("no header").headerless, true);
});

test("a session restores the same from its files' bytes as from their text, invalid UTF-8 included", { skip }, async () => {
  const core = await loadTestCore("sessionDirName");
  assert.ok(core, "the wasm core loads");
  const cfg = JSON.stringify({});
  const s = new core.Session(cfg, "s-restore");
  s.assemble(JSON.stringify({ count: 2, model: "deepseek-v4-flash", tokenBudget: 1_000_000, nowMs: 1 }), [0, 1], [
    JSON.stringify({ role: "user", content: [{ type: "text", text: "héllo ✓" }], timestamp: 1 }),
    JSON.stringify({ role: "assistant", content: [{ type: "text", text: "ok 𝄞" }], timestamp: 2 }),
  ]);
  const snapshot = s.snapshot();
  const journal = s.takeJournal();
  assert.ok(journal.length > 0, "the call journaled lines");
  // The journal replayed from nothing, and the snapshot alone: text and bytes give one state.
  const fromText = core.Session.restore(cfg, "s-restore", null, journal);
  const fromBytes = core.Session.restore(cfg, "s-restore", null, Buffer.from(journal));
  assert.deepEqual(fromBytes.replayReport(), fromText.replayReport());
  assert.ok(fromBytes.replayReport().applied > 0, "journal lines were replayed");
  assert.equal(fromBytes.snapshot(), fromText.snapshot(), "the same state");
  assert.equal(fromBytes.snapshot(), snapshot, "the state the session had");
  const snapBytes = core.Session.restore(cfg, "s-restore", new TextEncoder().encode(snapshot), new Uint8Array(0));
  assert.equal(snapBytes.snapshot(), snapshot, "restored from the snapshot's bytes");
  // A corrupt byte in the last line: Node's "utf8" decoding and the core's both make it U+FFFD,
  // so the replay stops at the same line, for the same reason, with the same bytes ignored.
  const bad = Buffer.from(journal);
  const lastLine = bad.lastIndexOf(0x0a, bad.length - 2) + 1;
  bad[lastLine + 40] = 0xff;
  const textRep = core.Session.restore(cfg, "s-restore", null, bad.toString("utf8")).replayReport();
  const bytesRep = core.Session.restore(cfg, "s-restore", null, bad).replayReport();
  assert.ok(textRep.stopped, "the corrupt line stops the replay");
  assert.deepEqual(bytesRep, textRep);
  assert.throws(() => core.Session.restore(cfg, "s-restore", null, 42), (e) => e.code === "CACHEFOLD_INPUT" && /journal must be a string or a Uint8Array/.test(e.message));
});

test("the session lock is taken without a queue ticket when nobody waits, and queues behind a waiter", async (t) => {
  const root = tempDir();
  const paths = store.sessionPaths(root, "s-lock");
  await store.withSessionLock(paths, async () => {}); // creates the directories
  const first = await opened(() => store.withSessionLock(paths, async (lease) => lease.assert()));
  assert.deepEqual(first.filter((p) => p.startsWith(paths.queue)), [], "no ticket when the queue is empty");
  assert.ok(first.some((p) => p.startsWith(`${paths.lock}.tmp-`)), "the lock itself was written");

  // A live waiter's ticket (another process) is queued: the call queues behind it and takes the
  // lock only once that ticket is gone.
  const child = spawn(process.execPath, ["-e", "setTimeout(() => {}, 60000)"], { stdio: "ignore" });
  t.after(() => child.kill("SIGKILL"));
  await new Promise((r) => child.once("spawn", r));
  const stat = readFileSync(`/proc/${child.pid}/stat`, "utf8");
  const start = stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19];
  // Queued a second ago: ahead of any ticket this call drops (tickets sort by their time).
  const foreign = join(paths.queue, `${String(Date.now() - 1000).padStart(15, "0")}-${child.pid}-${start}-${"ab".repeat(8)}`);
  writeFileSync(foreign, "");
  let ran = false;
  const call = store.withSessionLock(paths, async () => {
    ran = true;
  });
  await new Promise((r) => setImmediate(r));
  assert.equal(ran, false, "the call waits behind the queued ticket");
  assert.equal(readdirSync(paths.queue).length, 2, "the call queued a ticket of its own");
  fs.unlinkSync(foreign);
  await call;
  assert.equal(ran, true);
  assert.deepEqual(readdirSync(paths.queue), [], "its ticket is removed");
});

test("resolvesInPlace: true only for a path that resolves to itself under the real state dir", () => {
  const real = tempDir();
  mkdirSync(join(real, "sessions", "a", "lockq"), { recursive: true });
  assert.equal(resolvesInPlace(real, join(real, "sessions", "a", "lockq")), true);
  assert.equal(resolvesInPlace(real, join(real, "sessions", "b", "lockq")), false, "absent");
  assert.equal(resolvesInPlace(real, join(real, "..", "x")), false, "outside the root");
  // The state dir reached through a symlink: what counts is where it leads.
  const viaLink = join(tempDir(), "state");
  symlinkSync(real, viaLink);
  assert.equal(resolvesInPlace(viaLink, join(viaLink, "sessions", "a", "lockq")), true);
  // A symlinked session dir or sessions/ leading elsewhere is not in place.
  const elsewhere = tempDir();
  mkdirSync(join(elsewhere, "lockq"));
  symlinkSync(elsewhere, join(real, "sessions", "c"));
  assert.equal(resolvesInPlace(real, join(real, "sessions", "c", "lockq")), false, "symlinked session dir");
  const other = tempDir();
  mkdirSync(join(other, "sessions", "a", "lockq"), { recursive: true });
  const root2 = tempDir();
  symlinkSync(join(other, "sessions"), join(root2, "sessions"));
  assert.equal(resolvesInPlace(root2, join(root2, "sessions", "a", "lockq")), false, "symlinked sessions/");
  // The engine refuses such a session dir outright (the full checks run when not in place).
  return assert.rejects(
    store.withSessionLock(store.sessionPaths(real, "c"), async () => assert.fail("ran inside a symlinked session dir")),
    (e) => e.code === "CACHEFOLD_UNSAFE_PATH",
  );
});

test("a lock file larger than any lock this code writes is read as torn, not parsed whole", async (t) => {
  const root = tempDir();
  const paths = store.sessionPaths(root, "s-biglock");
  await store.withSessionLock(paths, async () => {}); // creates the directories
  // Valid JSON naming a live process that keeps its heartbeat fresh, padded past 4 KiB: not a
  // lock this code wrote. Read whole and believed, it would hold every call off for good.
  const child = spawn(process.execPath, ["-e", `setInterval(() => { try { require("fs").utimesSync(${JSON.stringify(paths.lock)}, new Date(), new Date()); } catch {} }, 100)`], { stdio: "ignore" });
  t.after(() => child.kill("SIGKILL"));
  await new Promise((r) => child.once("spawn", r));
  writeFileSync(paths.lock, JSON.stringify({ pid: child.pid, start: "0", host: (await import("node:os")).hostname(), token: "feedface" }) + " ".repeat(8192));
  let ran = false;
  await store.withSessionLock(paths, async (lease) => {
    lease.assert();
    ran = true;
  });
  assert.equal(ran, true);
  assert.equal(fs.existsSync(paths.lock), false, "released");
});
