// Regression tests for the shim's fault handling (issue 10, items 4-8): state shared by several
// processes, the truth of commitTurn, locks, session isolation, symlinks, config failures and
// an unwritable state directory. The randomised campaign is tests/faults/.
import test from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readFileSync, readdirSync, statSync, symlinkSync, utimesSync, writeFileSync, unlinkSync, rmSync } from "node:fs";
import fs from "node:fs";
import { syncBuiltinESMExports } from "node:module";
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { join } from "node:path";
import { fakeApi, tempDir, engineFor, sessionDir, user, assistantText, commitInNewProcess, runModule, pluginPrelude, pkgSkip } from "./helpers.mjs";

const skip = pkgSkip();
const STORE = new URL("../../js/store.js", import.meta.url).href;
const sha1 = (t) => createHash("sha1").update(t, "utf8").digest("hex");
const MODEL = "deepseek-v4-flash";

async function loadPlugin(config) {
  const { default: plugin } = await import("../../js/index.js");
  const { api, reg } = fakeApi(config);
  plugin.register(api);
  return { api, reg };
}



const events = (logFile) =>
  existsSync(logFile)
    ? readFileSync(logFile, "utf8")
        .trim()
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l))
    : [];

function bigTurn(tag, n) {
  const out = [];
  for (let i = 0; i < n; i++) out.push(user(`${tag} question ${i} ${"lorem ipsum ".repeat(200)}`), assistantText(`${tag} answer ${i} ${"dolor sit ".repeat(200)}`));
  return out;
}

// ---- item 4: two processes on one session ---------------------------------------------------

test("a process never trusts its cached state after another process wrote a snapshot", { skip }, async () => {
  const stateDir = tempDir();
  const logFile = join(stateDir, "log.jsonl");
  const cfg = { stateDir, logFile, minFoldTokens: 100_000_000, tokenBudget: 100_000_000 };
  const sid = "s-two-procs";
  const eng = await engineFor(cfg);
  // This process writes a snapshot (a big history), so its journal starts over.
  const hist = bigTurn("h", 400);
  await eng.assemble({ sessionId: sid, messages: hist, model: MODEL, tokenBudget: 100_000_000 });
  assert.ok(existsSync(join(await sessionDir(stateDir, sid), "snapshot.json")), "this process wrote a snapshot");
  // Another process commits a turn, then assembles a long history: it snapshots too, and its
  // journal starts over as well (the same size as this process last saw).
  const turn = bigTurn("t", 400);
  const out = runModule(`${pluginPrelude(cfg)}
    const turn = ${JSON.stringify(turn)};
    const c = await engine.commitTurn({ sessionId: ${JSON.stringify(sid)}, advancementKey: "k1", messages: turn });
    await engine.assemble({ sessionId: ${JSON.stringify(sid)}, messages: [...${JSON.stringify(hist)}, ...turn], model: ${JSON.stringify(MODEL)}, tokenBudget: 100000000 });
    console.log(c.status);`);
  assert.equal(out.trim(), "committed");
  // Same key here: already recorded by the other process.
  assert.equal((await eng.commitTurn({ sessionId: sid, advancementKey: "k1", messages: turn })).status, "duplicate", "turn counted twice");
  assert.equal((await eng.commitTurn({ sessionId: sid, advancementKey: "k2", messages: [user("q"), assistantText("a")] })).status, "committed");
  // A fresh process sees both turns; nothing was cut from the journal.
  assert.deepEqual(commitInNewProcess(cfg, sid, ["k1", "k2"], [user("q"), assistantText("a")]), ["duplicate", "duplicate"], "a committed turn was lost");
  assert.deepEqual(events(logFile).filter((e) => e.event === "journal_repaired"), []);
});

// ---- item 5: commitTurn tells the truth -----------------------------------------------------

test("commitTurn answers \"deferred\" (not \"committed\") when it recorded nothing, and the retry records it", { skip }, async () => {
  const stateDir = tempDir();
  const logFile = join(stateDir, "log.jsonl");
  const sid = "s-truth";
  const msgs = [user("hi"), assistantText("hello")];
  const { reg } = await loadPlugin({ stateDir, logFile });
  const eng = await reg.engines.cachefold({});
  assert.equal((await eng.commitTurn({ sessionId: sid, advancementKey: "k1", messages: msgs })).status, "committed");
  // The journal cannot be written (here: a directory stands where the file should be).
  const journal = join(await sessionDir(stateDir, sid), "journal.jsonl");
  rmSync(journal);
  mkdirSync(journal);
  const eng2 = await reg.engines.cachefold({});
  const r = await eng2.commitTurn({ sessionId: sid, advancementKey: "k2", messages: msgs });
  assert.equal(r.status, "deferred");
  assert.match(r.reason, /EISDIR|journal/);
  assert.ok(events(logFile).some((e) => e.event === "error" && e.where === "commitTurn" && e.status === "deferred"));
  rmSync(journal, { recursive: true });
  // OpenClaw keeps a deferred turn queued and retries it: now it is recorded.
  assert.equal((await eng2.commitTurn({ sessionId: sid, advancementKey: "k2", messages: msgs })).status, "committed");
  assert.equal((await eng2.commitTurn({ sessionId: sid, advancementKey: "k2", messages: msgs })).status, "duplicate");
});

test("a read-only or full disk: the turn is served, commitTurn defers, nothing is lost once it is writable", { skip }, async () => {
  const stateDir = tempDir();
  const logFile = join(tempDir(), "log.jsonl");
  const sid = "s-rofs";
  const msgs = [user("hi"), assistantText("hello")];
  const { reg } = await loadPlugin({ stateDir, logFile });
  const eng = await reg.engines.cachefold({});
  assert.equal((await eng.commitTurn({ sessionId: sid, advancementKey: "k1", messages: msgs })).status, "committed");
  const realOpen = fs.openSync;
  const realRename = fs.renameSync;
  const writes = (flags) => typeof flags === "string" ? /[wa+]/.test(flags) : ((flags ?? 0) & (fs.constants.O_WRONLY | fs.constants.O_RDWR)) !== 0;
  for (const code of ["EROFS", "ENOSPC"]) {
    fs.openSync = (p, flags, ...rest) => {
      if (String(p).startsWith(stateDir) && writes(flags)) throw Object.assign(new Error(`${code}: injected, open '${p}'`), { code });
      return realOpen(p, flags, ...rest);
    };
    fs.renameSync = (a, b) => {
      if (String(b).startsWith(stateDir)) throw Object.assign(new Error(`${code}: injected, rename '${b}'`), { code });
      return realRename(a, b);
    };
    syncBuiltinESMExports();
    try {
      const e = await reg.engines.cachefold({});
      const hist = [...msgs, user(`more ${code}`), assistantText("ok")];
      const a = await e.assemble({ sessionId: sid, messages: hist, model: MODEL, tokenBudget: 100000 });
      assert.equal(a.messages.length, hist.length);
      assert.ok(a.messages.every((m, i) => m === hist[i]), "history passed through");
      assert.equal((await e.commitTurn({ sessionId: sid, advancementKey: `k-${code}`, messages: hist })).status, "deferred");
    } finally {
      fs.openSync = realOpen;
      fs.renameSync = realRename;
      syncBuiltinESMExports();
    }
  }
  assert.ok(events(logFile).filter((e) => e.event === "error").every((e) => /EROFS|ENOSPC/.test(e.message)));
  const e = await reg.engines.cachefold({});
  for (const k of ["k1"]) assert.equal((await e.commitTurn({ sessionId: sid, advancementKey: k, messages: msgs })).status, "duplicate");
  for (const k of ["k-EROFS", "k-ENOSPC"]) assert.equal((await e.commitTurn({ sessionId: sid, advancementKey: k, messages: msgs })).status, "committed");
  assert.deepEqual(commitInNewProcess({ stateDir }, sid, ["k1", "k-EROFS", "k-ENOSPC"], msgs), ["duplicate", "duplicate", "duplicate"]);
});

// ---- item 6: locks --------------------------------------------------------------------------

// Bounded by progress, not by the clock (a loaded machine stretches every wait): `polls` counts
// the lock's 10 ms waits during the commit. Taking a dead holder's lock needs none or a few; a
// stall until the lease runs out (5 s) would be hundreds.
async function timedCommit(stateDir, sid, key) {
  const eng = await engineFor({ stateDir });
  const real = globalThis.setTimeout;
  let polls = 0;
  globalThis.setTimeout = (fn, ms, ...args) => {
    if (ms === 10) polls += 1;
    return real(fn, ms, ...args);
  };
  try {
    const r = await eng.commitTurn({ sessionId: sid, advancementKey: key, messages: [user("q"), assistantText("a")] });
    return { status: r.status, polls };
  } finally {
    globalThis.setTimeout = real;
  }
}

test("a lock left by a dead holder whose pid now names another live process does not stall", { skip }, async () => {
  const stateDir = tempDir();
  const sid = "s-reused-pid";
  const dir = await sessionDir(stateDir, sid);
  mkdirSync(dir, { recursive: true });
  const other = spawn("sleep", ["30"], { stdio: "ignore" });
  try {
    // Old-style lock naming a live unrelated process; nobody has touched it for 20 s.
    writeFileSync(join(dir, "lock"), JSON.stringify({ pid: other.pid, at: Date.now() }));
    const past = new Date(Date.now() - 20_000);
    utimesSync(join(dir, "lock"), past, past);
    let r = await timedCommit(stateDir, sid, "k1");
    assert.equal(r.status, "committed");
    assert.ok(r.polls <= 3, `waited ${r.polls} polls`);
    // A fresh lock naming the live process but a different process start time (reused pid).
    writeFileSync(join(dir, "lock"), JSON.stringify({ pid: other.pid, start: "1", host: (await import("node:os")).hostname(), token: "feedface", at: Date.now() }));
    r = await timedCommit(stateDir, sid, "k2");
    assert.equal(r.status, "committed");
    assert.ok(r.polls <= 3, `waited ${r.polls} polls`);
    // A fresh lock naming this very process (a restarted gateway got the same pid).
    writeFileSync(join(dir, "lock"), JSON.stringify({ pid: process.pid, at: Date.now() }));
    r = await timedCommit(stateDir, sid, "k3");
    assert.equal(r.status, "committed");
    assert.ok(r.polls <= 3, `waited ${r.polls} polls`);
  } finally {
    other.kill("SIGKILL");
  }
});

/** A child process that takes the session lock again and again (holding it `holdMs`) for `forMs`. */
function lockHog(paths, holdMs, forMs, seen, waiter = process.pid) {
  const src = `
    import { appendFileSync, readdirSync } from "node:fs";
    import * as store from ${JSON.stringify(STORE)};
    const paths = ${JSON.stringify(paths)};
    const end = Date.now() + ${forMs};
    let n = 0;
    console.log("ready");
    // Each time it holds the lock while the waiter's ticket (pid ${waiter}) is queued, it notes it.
    const waiting = () => { try { return readdirSync(paths.queue).some((n) => n.split("-")[1] === "${waiter}"); } catch { return false; } };
    while (Date.now() < end) {
      await store.withSessionLock(paths, async () => {
        n++;
        if (waiting()) appendFileSync(${JSON.stringify(seen)}, "x");
        const t = Date.now() + ${holdMs};
        while (Date.now() < t) await new Promise((r) => setTimeout(r, 2));
      });
    }
    console.log("done " + n);`;
  const file = join(tempDir("cachefold-hog-"), "hog.mjs");
  writeFileSync(file, src);
  const child = spawn(process.execPath, [file], { stdio: ["ignore", "pipe", "inherit"] });
  const ready = new Promise((res) => child.stdout.once("data", res));
  const done = new Promise((res) => child.on("exit", res));
  return { child, ready, done };
}

test("a waiting process is served in turn while others re-lock at once (two and three processes)", { skip }, async () => {
  const stateDir = tempDir();
  const sid = "s-fair";
  const store = await import("../../js/store.js");
  const paths = store.sessionPaths(stateDir, (await sessionDir(stateDir, sid)).split("/").pop());
  // Bounded by progress, not by the clock: while this process's ticket waits, each other
  // process takes the lock at most once or twice (the fair queue), whatever the machine's load.
  for (const hogs of [1, 2]) {
    const seen = join(tempDir(), "seen");
    writeFileSync(seen, "");
    const procs = Array.from({ length: hogs }, () => lockHog(paths, 20, 4000, seen));
    await Promise.all(procs.map((p) => p.ready));
    await new Promise((r) => setTimeout(r, 200));
    const ahead = [];
    for (let i = 0; i < 3; i++) {
      const before = statSync(seen).size;
      const r = await timedCommit(stateDir, sid, `k${hogs}-${i}`);
      assert.equal(r.status, "committed");
      ahead.push(statSync(seen).size - before);
    }
    await Promise.all(procs.map((p) => p.done));
    assert.ok(Math.max(...ahead) <= 2 * hogs, `locks taken by ${hogs} other process(es) while this one waited: ${ahead.join(", ")}`);
  }
});

// ---- item 7: session isolation and symlinks -------------------------------------------------

test("symlinks planted in the store are never followed (artifacts, refs file, session dir, snapshot)", { skip }, async () => {
  const stateDir = tempDir();
  const outside = tempDir();
  const secret = join(outside, "secret.txt");
  writeFileSync(secret, "SECRET outside the store\n");
  const { writeArtifact, readArtifact, sessionArtifactIds } = await import("../../js/artifacts.js");
  const { recoverTool } = await import("../../js/tools.js");
  const { loadCore } = await import("../../js/core.js");
  const core = await loadCore();
  const session = "agent:main:links";
  // An artifact id this session references, whose file is a planted symlink.
  const text = "real artifact text\n".repeat(20);
  const id = sha1(text);
  writeArtifact(stateDir, id, text, { tool: "exec", session, originalChars: text.length, shrunkChars: 10 });
  const path = join(stateDir, "artifacts", id.slice(0, 2), id);
  unlinkSync(path);
  symlinkSync(secret, path);
  assert.equal(readArtifact(stateDir, id), null);
  const config = core.parseConfig("{}");
  const ctx = { config, configJson: JSON.stringify(config), stateDir, logger: { warn() {} }, log() {}, core, engine: {} };
  const r = await recoverTool(ctx, { sessionKey: session, sessionId: "x" }).execute("c", { id });
  assert.equal(r.details.found, false);
  assert.ok(!r.content[0].text.includes("SECRET"));
  // A symlinked refs file: the append must not land outside the store.
  const refs = join(stateDir, "artifacts", "sessions", `${sha1(session)}.jsonl`);
  unlinkSync(refs);
  symlinkSync(secret, refs);
  const t2 = "second artifact\n".repeat(20);
  assert.throws(() => writeArtifact(stateDir, sha1(t2), t2, { tool: "exec", session }), (e) => e.code === "CACHEFOLD_UNSAFE_PATH");
  assert.equal(readFileSync(secret, "utf8"), "SECRET outside the store\n");
  assert.deepEqual(sessionArtifactIds(stateDir, session), []);
  // A symlinked session directory: the engine writes nothing outside and defers the commit.
  const sid = "s-linked";
  const sdir = await sessionDir(stateDir, sid);
  mkdirSync(join(stateDir, "sessions"), { recursive: true });
  const elsewhere = tempDir();
  symlinkSync(elsewhere, sdir);
  const eng = await engineFor({ stateDir });
  assert.equal((await eng.commitTurn({ sessionId: sid, advancementKey: "k1", messages: [user("q"), assistantText("a")] })).status, "deferred");
  assert.deepEqual(readdirSync(elsewhere), []);
  // A symlinked snapshot is not read.
  const sid2 = "s-linked-snap";
  const sdir2 = await sessionDir(stateDir, sid2);
  mkdirSync(sdir2, { recursive: true });
  symlinkSync(secret, join(sdir2, "snapshot.json"));
  assert.equal((await eng.commitTurn({ sessionId: sid2, advancementKey: "k1", messages: [user("q"), assistantText("a")] })).status, "deferred");
});

// ---- item 8: config failures ----------------------------------------------------------------

test("register() never throws: a stateDir that is a file (or under one) is reported and history passes through", { skip }, async () => {
  const base = tempDir();
  const file = join(base, "a-file");
  writeFileSync(file, "x");
  for (const stateDir of [file, join(file, "below")]) {
    const { reg } = await loadPlugin({ stateDir });
    const msg = reg.errors.find((e) => e.includes("stateDir"));
    assert.ok(msg, reg.errors.join("\n"));
    assert.ok(msg.includes(JSON.stringify(stateDir)) && /allowed:/.test(msg), msg);
    const eng = await reg.engines.cachefold({});
    const h = [user("hi"), assistantText("hello")];
    const a = await eng.assemble({ sessionId: "s", messages: h, model: MODEL, tokenBudget: 100000 });
    assert.ok(a.messages.every((m, i) => m === h[i]));
    assert.equal((await eng.commitTurn({ sessionId: "s", advancementKey: "k", messages: h })).status, "deferred");
  }
});

test("one bad config value keeps every valid key, including stateDir and logFile", { skip }, async () => {
  const stateDir = tempDir();
  const logFile = join(tempDir(), "log.jsonl");
  const { reg } = await loadPlugin({ stateDir, logFile, compactRatio: 7, tailTokens: 5000, summary: { timeoutMs: 5, maxTokens: 900 } });
  assert.equal(reg.errors.length, 2, reg.errors.join("\n"));
  const eng = await reg.engines.cachefold({});
  assert.equal((await eng.commitTurn({ sessionId: "s", advancementKey: "k", messages: [user("q"), assistantText("a")] })).status, "committed");
  assert.ok(existsSync(join(stateDir, "sessions")), "state under the configured stateDir");
  const cfg = events(logFile).find((e) => e.event === "config").config;
  assert.equal(cfg.tailTokens, 5000);
  assert.equal(cfg.summary.maxTokens, 900);
  assert.equal(cfg.compactRatio, 0.8);
  assert.equal(cfg.mode, "auto");
});

test("every invalid-config message names the key, the value and what is allowed", { skip }, async () => {
  const bad = [
    ["mode", "sometimes"],
    ["targetModels", "deepseek"],
    ["targetModels", [""]],
    ["prefixLockCount", 99],
    ["prefixLockCount", "many"],
    ["compactRatio", 7],
    ["compactRatio", "high"],
    ["tokenBudget", -5],
    ["tailTokens", 10],
    ["minFoldTokens", 1.5],
    ["foldRecordBudget", true],
    ["expectedRemainingCalls", "x"],
    ["price", 3],
    ["prices", { mine: { hit: 1 } }],
    ["summary", { timeoutMs: 5 }],
    ["protectedReads", "AGENTS.md"],
    ["toolDefaults", { read: 5 }],
    ["persist", { previewChars: 10 }],
    ["artifacts", { maxBytes: 10 }],
    ["logFile", 5],
    ["ownsCompaction", "yes"],
    ["noSuchKey", 1],
  ];
  for (const [key, value] of bad) {
    const { reg } = await loadPlugin({ stateDir: tempDir(), [key]: value });
    assert.equal(reg.errors.length, 1, `${key}: ${reg.errors.join("\n")}`);
    const msg = reg.errors[0];
    const shown = JSON.stringify(typeof value === "object" ? Object.values(value)[0] : value);
    assert.ok(msg.includes(key), `no key in: ${msg}`);
    assert.ok(msg.includes(shown.slice(0, 60)), `no value ${shown} in: ${msg}`);
    assert.match(msg, /allowed: \S/, msg);
  }
});
