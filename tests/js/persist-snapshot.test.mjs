// How a call's state reaches the disk when a snapshot is due: the snapshot is written as the
// core's UTF-8 bytes and the journal append it would supersede at once is skipped; the state
// survives a SIGKILL right after the call, and a fresh engine restores it.
import test from "node:test";
import assert from "node:assert/strict";
import fs, { existsSync, readFileSync, readdirSync } from "node:fs";
import { syncBuiltinESMExports } from "node:module";
import { join } from "node:path";
import { tempDir, engineFor, sessionDir, user, assistantText, runModule, pluginPrelude, pkgSkip, loadTestCore } from "./helpers.mjs";

const skip = pkgSkip();
const MODEL = "deepseek-v4-flash";
const BUDGET = 100_000_000;

function bigTurns(tag, n) {
  const out = [];
  for (let i = 0; i < n; i++) out.push(user(`${tag} question ${i} ${"lorem ipsum ".repeat(100)}`), assistantText(`${tag} answer ${i} ${"dolor sit ".repeat(100)}`));
  return out;
}

/** Bytes written through descriptors opened on `path` while `fn` runs. */
async function bytesWrittenTo(path, fn) {
  const { openSync, writeSync, closeSync } = fs;
  const fds = new Set();
  let bytes = 0;
  fs.openSync = (p, ...rest) => {
    const fd = openSync(p, ...rest);
    if (String(p) === path) fds.add(fd);
    return fd;
  };
  fs.writeSync = (fd, buf, ...rest) => {
    const n = writeSync(fd, buf, ...rest);
    if (fds.has(fd)) bytes += n;
    return n;
  };
  fs.closeSync = (fd) => {
    fds.delete(fd);
    return closeSync(fd);
  };
  syncBuiltinESMExports();
  try {
    await fn();
  } finally {
    Object.assign(fs, { openSync, writeSync, closeSync });
    syncBuiltinESMExports();
  }
  return bytes;
}

test("snapshotBytes, journalBytes and dropJournal agree with snapshot and takeJournal", { skip }, async () => {
  const core = await loadTestCore("parseConfig");
  assert.ok(core, "pkg/ is built");
  const a = new core.Session("{}", "s-bytes");
  const b = new core.Session("{}", "s-bytes");
  const msgs = [user("héllo ✓ 𝄞"), assistantText("ok ✓")].map((m) => JSON.stringify(m));
  for (const s of [a, b]) s.commitTurn(JSON.stringify({ advancementKey: "k1", nowMs: 1, contextWindow: null }), msgs);
  assert.equal(Buffer.from(a.snapshotBytes()).toString("utf8"), b.snapshot());
  const lines = b.takeJournal();
  assert.ok(lines.length > 0);
  assert.equal(a.journalBytes(), Buffer.byteLength(lines), "UTF-8 bytes, not UTF-16 units");
  a.dropJournal();
  assert.equal(a.journalBytes(), 0);
  assert.equal(a.takeJournal(), "");
  a.free();
  b.free();
});

test("a due snapshot replaces the journal append; the state survives a SIGKILL right after the call", { skip }, async () => {
  const stateDir = tempDir();
  const cfg = { stateDir, minFoldTokens: BUDGET, tokenBudget: BUDGET };
  const sid = "s-snapshot-instead";
  const turn = [user("the committed turn"), assistantText("its answer")];
  // 1,200 messages of ~1.2 KB: a journal far past the snapshot size (256 KiB).
  const hist = bigTurns("h", 600);

  // In this process: not one byte of the superseded lines reaches journal.jsonl.
  const eng = await engineFor(cfg);
  assert.equal((await eng.commitTurn({ sessionId: sid, advancementKey: "k1", messages: turn })).status, "committed");
  const dir = await sessionDir(stateDir, sid);
  const journal = join(dir, "journal.jsonl");
  assert.ok(readFileSync(journal).length > 49, "the small commit was appended to the journal");
  const appended = await bytesWrittenTo(journal, async () => {
    const a = await eng.assemble({ sessionId: sid, messages: hist, model: MODEL, tokenBudget: BUDGET });
    assert.equal(a.messages.length, hist.length);
  });
  assert.equal(appended, 0, "no journal append before the snapshot");
  const snap = JSON.parse(readFileSync(join(dir, "snapshot.json"), "utf8"));
  assert.ok(snap.records.length >= hist.length, `snapshot holds the history (${snap.records.length} records)`);
  assert.ok(readFileSync(journal).length < 100, "a new journal generation (header only)");

  // In a child killed right after the call: the same state is on disk.
  const stateDir2 = tempDir();
  const cfg2 = { ...cfg, stateDir: stateDir2 };
  const script = `${pluginPrelude(cfg2)}
    const sid = ${JSON.stringify(sid)};
    const c = await engine.commitTurn({ sessionId: sid, advancementKey: "k1", messages: ${JSON.stringify(turn)} });
    if (c.status !== "committed") throw new Error("commit: " + c.status);
    const a = await engine.assemble({ sessionId: sid, messages: ${JSON.stringify(hist)}, model: ${JSON.stringify(MODEL)}, tokenBudget: ${BUDGET} });
    if (a.messages.length !== ${hist.length}) throw new Error("assemble: " + a.messages.length);
    process.stdout.write("assembled\\n");
    process.kill(process.pid, "SIGKILL");`;
  let out = "";
  try {
    out = runModule(script);
  } catch (err) {
    out = String(err.stdout ?? "");
    assert.equal(err.signal, "SIGKILL", `the child died of something else: ${err.stderr}`);
  }
  assert.match(out, /assembled/);
  const dir2 = await sessionDir(stateDir2, sid);
  const snap2 = JSON.parse(readFileSync(join(dir2, "snapshot.json"), "utf8"));
  assert.deepEqual([snap2.seq, snap2.records.length], [snap.seq, snap.records.length], "the state the live process wrote");
  assert.deepEqual(readdirSync(dir2).filter((f) => f.includes(".tmp-")), []);
  const fresh = await engineFor(cfg2);
  assert.equal((await fresh.commitTurn({ sessionId: sid, advancementKey: "k1", messages: turn })).status, "duplicate");
  const again = await fresh.assemble({ sessionId: sid, messages: hist, model: MODEL, tokenBudget: BUDGET });
  assert.equal(again.messages.length, hist.length);
  assert.ok(existsSync(join(dir2, "journal.jsonl")));
});

test("past the journal limit the core encodes no lines: takeJournal fails, the snapshot holds the events", { skip }, async () => {
  const core = await loadTestCore("parseConfig");
  assert.ok(core, "pkg/ is built");
  const a = new core.Session("{}", "s-limit");
  const b = new core.Session("{}", "s-limit");
  const turn = (k) => [JSON.stringify({ advancementKey: `k${k}`, nowMs: k, contextWindow: null }), [user(`question ${k}`), assistantText(`answer ${k}`)].map((m) => JSON.stringify(m))];
  a.setJournalLimit(0);
  for (let k = 1; k <= 3; k++) {
    const t = turn(k); // one copy for both (the helpers stamp each message with a new timestamp)
    a.commitTurn(...t);
    b.commitTurn(...t);
  }
  const all = Buffer.byteLength(b.takeJournal());
  assert.ok(a.journalBytes() > 0, "past the limit: above it");
  assert.ok(a.journalBytes() < all, `the events past the limit were not encoded (${a.journalBytes()} of ${all} bytes)`);
  assert.throws(() => a.takeJournal(), (err) => err.code === "CACHEFOLD_STATE");
  assert.equal(Buffer.from(a.snapshotBytes()).toString("utf8"), b.snapshot(), "the same state");
  a.dropJournal();
  // The limit ends with the dropped lines: the next call's lines are all there.
  const t4 = turn(4);
  a.commitTurn(...t4);
  b.commitTurn(...t4);
  assert.equal(a.takeJournal(), b.takeJournal());
  a.free();
  b.free();
});

test("a snapshot that fails past the journal limit loses no state: the next call restores from disk and ingests again", { skip }, async () => {
  const stateDir = tempDir();
  const cfg = { stateDir, minFoldTokens: BUDGET, tokenBudget: BUDGET };
  const sid = "s-snapshot-fails";
  const hist = bigTurns("f", 600); // past the snapshot size: the first assemble snapshots
  const eng = await engineFor(cfg);
  const turn = [user("the committed turn"), assistantText("its answer")];
  assert.equal((await eng.commitTurn({ sessionId: sid, advancementKey: "k1", messages: turn })).status, "committed");
  const dir = await sessionDir(stateDir, sid);
  const journalBefore = readFileSync(join(dir, "journal.jsonl"), "utf8");
  // snapshot.json as a directory: the rename onto it fails.
  fs.mkdirSync(join(dir, "snapshot.json"));
  const failed = await eng.assemble({ sessionId: sid, messages: hist, model: MODEL, tokenBudget: BUDGET });
  assert.equal(failed.messages, hist, "the history passes through unchanged");
  assert.equal(readFileSync(join(dir, "journal.jsonl"), "utf8"), journalBefore, "no partial journal appended");
  fs.rmdirSync(join(dir, "snapshot.json"));
  const again = await eng.assemble({ sessionId: sid, messages: hist, model: MODEL, tokenBudget: BUDGET });
  assert.equal(again.messages.length, hist.length);
  const snap = JSON.parse(readFileSync(join(dir, "snapshot.json"), "utf8"));
  assert.equal(snap.records.length, hist.length, "every message ingested once");
  const fresh = await engineFor(cfg);
  assert.equal((await fresh.commitTurn({ sessionId: sid, advancementKey: "k1", messages: turn })).status, "duplicate", "the commit before the failure is kept");
});
