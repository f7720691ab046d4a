// Lessons through the real wasm build: store, capture → candidate → promote → inject → stale,
// the CLI dispatcher, and the cache-neutral rule (one fixed systemPromptAddition per session).
import test from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readFileSync, writeFileSync, renameSync, readdirSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { codeGenSession, fakeApi, tempDir, user, assistantText, assistantCall, toolResult, pkgSkip, hasSqlite, underNode24, CI } from "./helpers.mjs";

const skip = pkgSkip();

function workspace() {
  const ws = tempDir("cachefold-ws-");
  writeFileSync(join(ws, "package.json"), JSON.stringify({ name: "demo", scripts: { test: "node --test tests/", lint: "eslint ." } }, null, 2));
  mkdirSync(join(ws, "tests"));
  writeFileSync(join(ws, "tests", "a.test.mjs"), "// a\n");
  mkdirSync(join(ws, "src"));
  writeFileSync(join(ws, "src", "store.js"), "export {}\n");
  return ws;
}

async function setup(extra = {}) {
  const { default: plugin } = await import("../../js/index.js");
  const stateDir = tempDir("cachefold-lessons-state-");
  const logFile = join(stateDir, "decisions.jsonl");
  const config = { stateDir, logFile, mode: "always", ...extra };
  const { api, reg } = fakeApi(config);
  plugin.register(api);
  const lessons = await import("../../js/lessons.js");
  const cli = await import("../../js/cli.js");
  const { loadCore } = await import("../../js/core.js");
  return { plugin, api, reg, config, stateDir, logFile, lessons, cli, core: await loadCore() };
}

function sink(isTTY = false) {
  const s = { text: "", isTTY, write: (x) => (s.text += x) };
  return s;
}

async function run(cli, ctx, ws, ...argv) {
  const stdout = sink();
  const stderr = sink();
  const code = await cli.dispatch(argv, { stdout, stderr, ctx, workspace: ws });
  let json = null;
  try {
    json = JSON.parse(stdout.text);
  } catch {
    /* text output */
  }
  return { code, out: stdout.text, err: stderr.text, json };
}

/** A session whose digests show `npm test` passing and reads under src/ and tests/. */
const sessionWithPassingTests = (engine, sessionId, ws) => codeGenSession(engine, sessionId, ws);

function ctxOf(h) {
  const config = h.core.parseConfig(JSON.stringify(h.config));
  return { config, configJson: JSON.stringify(config), stateDir: h.stateDir, log: () => {}, logger: { warn() {}, error() {} } };
}

test("capture → candidate → promote → inject → stale, end to end", { skip }, async () => {
  const h = await setup();
  const ws = workspace();
  const engine = await h.reg.engines.cachefold({ workspaceDir: ws });
  await sessionWithPassingTests(engine, "s-capture", ws);
  await engine.maintain({ sessionId: "s-capture", runtimeContext: { workspaceDir: ws } });
  const cand = join(ws, ".cachefold/lessons/_candidates");
  assert.deepEqual(readdirSync(cand).sort(), ["layout.md", "testing.md"]);
  const testing = readFileSync(join(cand, "testing.md"), "utf8");
  assert.match(testing, /run the tests with `npm test`/);
  assert.match(testing, /package\.json#scripts\.test/);
  assert.match(testing, /fingerprint-hash: [0-9a-f]{40}/);
  assert.match(testing, /session: s-capture/);

  // Rate limit: a second maintain right away captures nothing new.
  assert.deepEqual(await h.lessons.captureAfterTurn({ ...ctxOf(h) }, { sessionId: "s-capture", runtimeContext: { workspaceDir: ws } }), []);

  // Promote through the CLI dispatcher.
  const ctx = ctxOf(h);
  let r = await run(h.cli, ctx, ws, "lessons", "promote", "testing", "--json");
  assert.equal(r.code, 0, r.err);
  assert.equal(r.json.promoted.name, "testing");
  assert.ok(existsSync(join(ws, ".cachefold/lessons/testing.md")));
  r = await run(h.cli, ctx, ws, "lessons", "list");
  assert.equal(r.code, 0);
  assert.deepEqual(r.json.lessons.map((l) => [l.kind, l.name, l.stale]).sort(), [["candidate", "layout", false], ["lesson", "testing", false]]);

  // A code-gen session gets the lesson as its systemPromptAddition.
  const e2 = await h.reg.engines.cachefold({ workspaceDir: ws });
  const a = await e2.assemble({ sessionId: "s-inject", messages: [], prompt: "Write a unit test for the store module in src/store.js", model: "deepseek-v4-flash" });
  assert.match(a.systemPromptAddition ?? "", /\[testing\]/);
  assert.match(a.systemPromptAddition, /npm test/);
  const log = readFileSync(h.logFile, "utf8").trim().split("\n").map((l) => JSON.parse(l)).filter((e) => e.event === "lessons_decision");
  assert.ok(log.some((e) => e.sessionId === "s-inject" && e.inject && e.chosen.includes("testing")), "decision logged");

  // Staleness: edit package.json#scripts.test -> flagged, skipped, refresh queued.
  const pkg = JSON.parse(readFileSync(join(ws, "package.json"), "utf8"));
  pkg.scripts.test = "vitest run";
  writeFileSync(join(ws, "package.json"), JSON.stringify(pkg));
  r = await run(h.cli, ctx, ws, "lessons", "stale");
  assert.equal(r.code, 3);
  assert.deepEqual(r.json.stale.map((s) => s.name), ["testing"]);
  assert.ok(r.json.stale[0].changed.some((c) => c.entry === "package.json#scripts.test" && c.what === "changed"));
  const a3 = await e2.assemble({ sessionId: "s-after-edit", messages: [], prompt: "Write a unit test for the store module in src/store.js", model: "deepseek-v4-flash" });
  assert.equal(a3.systemPromptAddition, undefined, "a stale lesson is never served");
  const note = readFileSync(join(cand, "testing.md"), "utf8");
  assert.match(note, /refresh-of: testing/);
  assert.match(note, /REFRESH: package\.json#scripts\.test changed/);

  // rm deletes only with a strictly parsed --yes; then the candidate is rejected, never proposed again.
  for (const args of [[], ["--yes=no"], ["--yes=true"], ["--yes=0"]]) {
    r = await run(h.cli, ctx, ws, "lessons", "rm", "layout", ...args);
    assert.equal(r.code, 2, `rm ${args.join(" ")}: a usage error`);
    assert.ok(existsSync(join(cand, "layout.md")), `rm ${args.join(" ")}: nothing deleted`);
  }
  assert.match((await run(h.cli, ctx, ws, "lessons", "rm", "layout")).err, /layout\.md; add --yes to confirm/);
  assert.equal((await run(h.cli, ctx, ws, "lessons", "list", "--yes")).code, 2, "--yes belongs to rm only");
  r = await run(h.cli, ctx, ws, "lessons", "rm", "layout", "--yes");
  assert.equal(r.code, 0, r.err);
  assert.ok(!existsSync(join(cand, "layout.md")), "deleted with --yes");
  assert.equal((await run(h.cli, ctx, ws, "lessons", "show", "layout")).code, 1);
  const again = h.lessons.writeCandidates(h.core, ctx, ws, [h.core.lessonParse(note.replace("name: testing", "name: layout").replace(/refresh-of: .*\n/, ""))]);
  assert.deepEqual(again, []);
});

test("the addition is byte-identical for the whole session, across engine instances; none for exploration", { skip }, async () => {
  const h = await setup();
  const ws = workspace();
  const ctx = ctxOf(h);
  const dir = join(ws, ".cachefold/lessons");
  mkdirSync(dir, { recursive: true });
  const raw = "---\nname: testing\ndescription: Test runner and test file layout\nfingerprint:\n  - package.json#scripts.test\n  - tests/\n---\n- run `npm test` (node --test); tests in tests/*.test.mjs\n";
  const inputs = h.lessons.gatherInputs(h.core, ws, [raw]);
  writeFileSync(join(dir, "testing.md"), h.core.lessonStamp(raw, JSON.stringify(inputs)));
  writeFileSync(join(dir, "broken.md"), "no frontmatter here\n");

  const prompt = "Add a unit test for the store module";
  const e1 = await h.reg.engines.cachefold({ workspaceDir: ws });
  const first = await e1.assemble({ sessionId: "s-fixed", messages: [], prompt, model: "deepseek-v4-flash" });
  assert.ok(first.systemPromptAddition, "injected");
  const h1 = [user(prompt), assistantText("ok")];
  const second = await e1.assemble({ sessionId: "s-fixed", messages: h1, prompt: "now also fix the lint", model: "deepseek-v4-flash" });
  assert.equal(second.systemPromptAddition, first.systemPromptAddition);

  // Lessons change mid-session: the session keeps its recorded text.
  writeFileSync(join(dir, "extra.md"), "---\nname: extra\ndescription: store module unit test helper\n---\n- use makeStore() from tests/helpers\n");
  h.lessons.forgetDecisions();
  const e2 = await h.reg.engines.cachefold({ workspaceDir: ws });
  const third = await e2.assemble({ sessionId: "s-fixed", messages: h1, model: "deepseek-v4-flash" });
  assert.equal(third.systemPromptAddition, first.systemPromptAddition);

  // A fresh process replays the same bytes from the decision file.
  const script = `
    import plugin from ${JSON.stringify(new URL("../../js/index.js", import.meta.url).href)};
    let f; plugin.register({ pluginConfig: ${JSON.stringify(h.config)}, logger: { warn() {}, error() {} },
      registerContextEngine: (_i, fac) => (f = fac), on() {}, registerTool() {}, registerAgentToolResultMiddleware() {} });
    const e = await f({ workspaceDir: ${JSON.stringify(ws)} });
    const r = await e.assemble({ sessionId: "s-fixed", messages: ${JSON.stringify(h1)}, model: "deepseek-v4-flash" });
    process.stdout.write(JSON.stringify(r.systemPromptAddition ?? null));`;
  const fromChild = JSON.parse(execFileSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8" }));
  assert.equal(fromChild, first.systemPromptAddition);

  // Exploration and QA: no addition.
  for (const [sid, p] of [["s-explore", "Investigate how the store module caches results and explain the design"], ["s-qa", "what does npm test run?"]]) {
    const r = await e2.assemble({ sessionId: sid, messages: [], prompt: p, model: "deepseek-v4-flash" });
    assert.equal(r.systemPromptAddition, undefined, p);
  }
  // A session already under way when lessons are first consulted never gets one.
  const late = await e2.assemble({ sessionId: "s-late", messages: h1, prompt, model: "deepseek-v4-flash" });
  assert.equal(late.systemPromptAddition, undefined);
  // The bad file was skipped with a clear warning, not a failed turn.
  assert.ok(h.reg.warnings.some((w) => /broken\.md skipped: .*frontmatter/.test(w)), h.reg.warnings.join("\n"));
  // Within the token cap.
  const d = JSON.parse(readFileSync(join(h.stateDir, "sessions", h.core.sessionDirName("s-fixed"), "lessons.json"), "utf8"));
  assert.ok(d.tokens > 0 && d.tokens <= 200, String(d.tokens));
  assert.equal(d.sha1, h.core.sha1Hex(first.systemPromptAddition));
});

test("lessons failures never fail or pass through a turn", { skip }, async () => {
  const h = await setup();
  const ws = workspace();
  const dir = join(ws, ".cachefold/lessons");
  mkdirSync(dir, { recursive: true });
  // A directory where a lesson file is expected, and unreadable JSON fingerprints.
  mkdirSync(join(dir, "weird.md"));
  writeFileSync(join(dir, "x.md"), "---\nname: x\ndescription: store test\nfingerprint: [missing.json#a.b]\n---\n- body\n");
  const e = await h.reg.engines.cachefold({ workspaceDir: ws });
  const msgs = [user("hi"), assistantText("hello")];
  const r = await e.assemble({ sessionId: "s-robust", messages: [], prompt: "Add a unit test for the store", model: "deepseek-v4-flash" });
  assert.deepEqual(r.messages, []);
  assert.equal(r.systemPromptAddition, undefined, "x.md was never hashed: stale, not served");
  const r2 = await e.assemble({ sessionId: "s-robust", messages: msgs, model: "deepseek-v4-flash" });
  assert.equal(r2.messages.length, 2);
  // Disabled: nothing read, nothing injected.
  const off = await setup({ lessons: { enabled: false } });
  const e3 = await off.reg.engines.cachefold({ workspaceDir: ws });
  const r3 = await e3.assemble({ sessionId: "s-off", messages: [], prompt: "Add a unit test for the store", model: "deepseek-v4-flash" });
  assert.equal(r3.systemPromptAddition, undefined);
});

test("CLI: registration, cli-metadata mode, usage and exit codes, text on a TTY", { skip }, async (t) => {
  const { default: plugin } = await import("../../js/index.js");
  const cli = await import("../../js/cli.js");
  const calls = [];
  const api = { registrationMode: "cli-metadata", pluginConfig: {}, registerCli: (fn, opts) => calls.push({ fn, opts }), registerContextEngine: () => assert.fail("no engine in cli-metadata mode") };
  plugin.register(api);
  assert.equal(calls.length, 1);
  assert.deepEqual(calls[0].opts.descriptors, [cli.ROOT]);
  const manifest = JSON.parse(readFileSync(new URL("../../openclaw.plugin.json", import.meta.url), "utf8"));
  assert.deepEqual(manifest.cliCommands, [cli.ROOT]);

  // The registrar builds `cachefold lessons …` on a real commander program.
  const COMMANDER = new URL("../../.cache/openclaw/node_modules/commander/index.js", import.meta.url);
  const { Command } = await import(COMMANDER.href).catch(() => ({}));
  const ws = workspace();
  const stateDir = tempDir("cachefold-cli-state-");
  if (!Command) {
    // OpenClaw's commander comes with `.ci/setup node24`: under CI its absence is a failure.
    if (CI) assert.fail(`no commander at ${COMMANDER.pathname} (.ci/setup node24)`);
    t.diagnostic(`registrar on commander not run: no ${COMMANDER.pathname} (.ci/setup node24)`);
  } else {
    const program = new Command().exitOverride();
    const api2 = { pluginConfig: { stateDir }, registerCli: (fn) => fn({ program, workspaceDir: ws, logger: console }) };
    cli.registerCli(api2);
    const orig = process.stdout.write.bind(process.stdout);
    let captured = "";
    process.stdout.write = (s) => ((captured += s), true);
    try {
      await program.parseAsync(["node", "openclaw", "cachefold", "lessons", "list", "--json"]);
    } finally {
      process.stdout.write = orig;
    }
    assert.equal(process.exitCode ?? 0, 0);
    assert.deepEqual(JSON.parse(captured).lessons, []);
    process.exitCode = 0;
  }

  const h = await setup();
  const ctx = ctxOf(h);
  assert.equal((await run(cli, ctx, ws, "lessons")).code, 2);
  assert.equal((await run(cli, ctx, ws, "lessons", "frobnicate")).code, 2);
  assert.equal((await run(cli, ctx, ws, "lessons", "show")).code, 2);
  assert.equal((await run(cli, ctx, ws, "lessons", "show", "../etc")).code, 2);
  assert.equal((await run(cli, ctx, ws, "nope")).code, 2);
  assert.equal((await run(cli, ctx, ws, "lessons", "promote", "ghost")).code, 1);
  assert.equal((await run(cli, ctx, ws, "lessons", "stale")).code, 0);
  const stdout = sink(true);
  const code = await cli.dispatch(["lessons", "list"], { stdout, stderr: sink(), ctx, workspace: ws });
  assert.equal(code, 0);
  assert.match(stdout.text, /^no lessons/);
});

test("staleness on scripted repository changes: every stale lesson flagged, no fresh one", { skip }, async () => {
  const h = await setup();
  const ws = workspace();
  const ctx = ctxOf(h);
  const dir = join(ws, ".cachefold/lessons");
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(ws, "tsconfig.json"), JSON.stringify({ compilerOptions: { module: "NodeNext" } }));
  const defs = {
    "test-cmd": ["package.json#scripts.test"],
    "test-dir": ["tests/"],
    "lint-cmd": ["package.json#scripts.lint"],
    "ts-modules": ["tsconfig.json#compilerOptions.module"],
    "src-layout": ["src/"],
    prefs: [],
  };
  for (const [name, fp] of Object.entries(defs)) {
    const raw = `---\nname: ${name}\ndescription: lesson ${name}\nfingerprint: [${fp.join(", ")}]\n---\n- body of ${name}\n`;
    writeFileSync(join(dir, `${name}.md`), fp.length ? h.core.lessonStamp(raw, JSON.stringify(h.lessons.gatherInputs(h.core, ws, [raw]))) : raw);
  }
  const staleNow = async () => (await run(h.cli, ctx, ws, "lessons", "stale")).json.stale.map((s) => s.name).sort();
  assert.deepEqual(await staleNow(), []);
  const scenarios = [
    ["edit package.json#scripts.test", () => {
      const p = JSON.parse(readFileSync(join(ws, "package.json"), "utf8"));
      p.scripts.test = "vitest run";
      writeFileSync(join(ws, "package.json"), JSON.stringify(p, null, 4)); // reformatted too
    }, ["test-cmd"]],
    ["move tests/ to test/", () => renameSync(join(ws, "tests"), join(ws, "test")), ["test-cmd", "test-dir"]],
    ["add a file under src/", () => writeFileSync(join(ws, "src", "new.js"), ""), ["src-layout", "test-cmd", "test-dir"]],
    ["reformat tsconfig without changing the field", () => writeFileSync(join(ws, "tsconfig.json"), JSON.stringify({ compilerOptions: { module: "NodeNext" } }, null, 2)), ["src-layout", "test-cmd", "test-dir"]],
    ["change tsconfig module", () => writeFileSync(join(ws, "tsconfig.json"), JSON.stringify({ compilerOptions: { module: "ESNext" } })), ["src-layout", "test-cmd", "test-dir", "ts-modules"]],
  ];
  for (const [what, change, want] of scenarios) {
    change();
    assert.deepEqual(await staleNow(), want, what);
  }
  const moved = (await run(h.cli, ctx, ws, "lessons", "stale")).json.stale.find((s) => s.name === "test-dir");
  assert.deepEqual(moved.changed, [{ entry: "tests/", what: "missing now" }]);
});

test("LLM capture: bounded call, proposals validated and redacted; off with summary.useLlm false", { skip }, async () => {
  for (const useLlm of [true, false]) {
    const h = await setup({ summary: { useLlm } });
    const ws = workspace();
    const engine = await h.reg.engines.cachefold({ workspaceDir: ws });
    await sessionWithPassingTests(engine, "s-llm", ws);
    const calls = [];
    const llm = {
      complete: async (req) => {
        calls.push(req);
        return { text: '[{"name":"ESM Imports","description":"import style","fingerprint":["package.json"],"body":["- use .js suffixes","- token ghp_0123456789abcdefghijABCDEFGHIJ"]}]' };
      },
    };
    await engine.maintain({ sessionId: "s-llm", runtimeContext: { workspaceDir: ws, llm } });
    const cand = join(ws, ".cachefold/lessons/_candidates");
    if (useLlm) {
      assert.equal(calls.length >= 1, true);
      const req = calls.find((c) => c.purpose === "cachefold lessons capture");
      assert.ok(req && req.maxTokens <= 600 && req.messages[0].content.length <= 6000);
      const text = readFileSync(join(cand, "esm-imports.md"), "utf8");
      assert.match(text, /use \.js suffixes/);
      assert.doesNotMatch(text, /ghp_0123456789/);
    } else {
      assert.equal(calls.length, 0);
      assert.ok(!existsSync(join(cand, "esm-imports.md")));
    }
  }
});

// OpenClaw 2026.9.6 keeps the transcript in SQLite (table transcript_events, event_json or
// event_zstd) and keeps the sessionId across /new (a `reset` entry follows the old conversation).
// On a Node without node:sqlite the transcript test runs itself under Node 24 (underNode24).
const sqlite = hasSqlite ? await import("node:sqlite") : null;

function hostDb(dir, sessionId, conversations, cwd) {
  const db = join(dir, "openclaw-agent.sqlite");
  const conn = new sqlite.DatabaseSync(db);
  conn.exec("CREATE TABLE transcript_events (session_id TEXT, seq INTEGER, event_json TEXT, event_zstd BLOB, event_utf8_bytes INTEGER, created_at INTEGER, navigation_json TEXT)");
  const add = conn.prepare("INSERT INTO transcript_events (session_id, seq, event_json, event_zstd) VALUES (?, ?, ?, ?)");
  const events = [{ type: "session", version: 4, id: sessionId, cwd }];
  conversations.forEach((msgs, k) => {
    if (k > 0) events.push({ type: "reset", id: `r${k}`, reason: "new" });
    for (const m of msgs) events.push({ type: "message", id: `m${events.length}`, message: m });
  });
  events.push({ type: "custom", customType: "openclaw:bootstrap-context:full", data: {} });
  events.forEach((e, seq) => add.run(sessionId, seq, JSON.stringify(e), null));
  conn.close();
  return db;
}

const TRANSCRIPT_TEST = "capture reads the host transcript: a one-turn session's passing test command, the last conversation of a reused id";
test(TRANSCRIPT_TEST, { skip }, async (tc) => {
  if (!sqlite) return underNode24(tc, import.meta.url, TRANSCRIPT_TEST);
  const h = await setup();
  const ws = workspace();
  const logged = [];
  const ctx = { ...ctxOf(h), log: (e) => logged.push(e) };
  // One turn, never seen by a later assemble: the engine's records hold none of it.
  const engine = await h.reg.engines.cachefold({ workspaceDir: ws });
  const prompt = "Add a slugify function and run the tests";
  await engine.assemble({ sessionId: "s-tr", messages: [], prompt, model: "deepseek-v4-flash" });
  const turn = [
    user(prompt),
    assistantCall("r1", "read", { path: "package.json" }),
    toolResult("r1", "read", '{"scripts":{"test":"node --test tests/"}}'),
    assistantCall("c1", "exec", { command: "npm test" }),
    { ...toolResult("c1", "exec", "# tests 2\n# pass 2\n# fail 0"), details: { status: "completed", exitCode: 0 } },
    assistantText("done"),
  ];
  await engine.commitTurn({ sessionId: "s-tr", advancementKey: "k1", messages: turn });
  const noDb = await h.lessons.captureAfterTurn(ctx, { sessionId: "s-tr", runtimeContext: { workspaceDir: ws, sessionTarget: { storePath: join(ws, "nope.sqlite") } } }, { force: true });
  assert.deepEqual(noDb, [], "the engine's records lack the last turn");

  // The host transcript: an earlier conversation (lint passed), /new, then this one.
  const earlier = [user("fix lint"), assistantCall("l1", "exec", { command: "npm run lint" }), { ...toolResult("l1", "exec", "ok"), details: { exitCode: 0 } }, assistantText("ok")];
  const db = hostDb(tempDir("cachefold-host-"), "s-tr", [earlier, turn], ws);
  const t = await (await import("../../js/host/openclaw.js")).hostTranscript(db, "s-tr");
  assert.equal(t.cwd, ws);
  assert.equal(t.messages.length, turn.length, "the conversation after the last reset");
  const written = await h.lessons.captureAfterTurn(ctx, { sessionId: "s-tr", runtimeContext: { sessionTarget: { storePath: db } } }, { force: true });
  assert.deepEqual(written, ["testing"], "workspace from the decision, facts from the transcript");
  assert.match(readFileSync(join(ws, ".cachefold/lessons/_candidates/testing.md"), "utf8"), /run the tests with `npm test`/);
  assert.ok(!existsSync(join(ws, ".cachefold/lessons/_candidates/lint.md")), "the earlier conversation is not this session's");

  // session_end right after /new: the reset entry is already there; the conversation before it
  // is the one captured, and the workspace comes from the transcript when nothing else knows it.
  const db2 = hostDb(tempDir("cachefold-host-"), "s-tr2", [turn, []], ws);
  const w2 = await h.lessons.captureAfterTurn(ctx, { sessionId: "s-tr2", agentId: "main", runtimeContext: { sessionTarget: { storePath: db2 } } }, { force: true });
  assert.deepEqual(w2, [], "same fact as the waiting candidate: not written twice");
  const cap = logged.filter((e) => e.event === "lessons_capture" && e.sessionId === "s-tr2");
  assert.deepEqual(cap.map((e) => [e.source, e.messages, e.found]), [["transcript", turn.length, ["testing"]]]);
});

test("session_end on /new ends the session's decision (2026.9.6 reuses the id); shutdown and compaction keep it", { skip }, async () => {
  const h = await setup();
  const ws = workspace();
  const dir = join(ws, ".cachefold/lessons");
  mkdirSync(dir, { recursive: true });
  const raw = "---\nname: testing\ndescription: How the tests are run in this workspace\nfingerprint:\n  - package.json#scripts.test\n---\n- run the tests with `npm test`\n";
  writeFileSync(join(dir, "testing.md"), h.core.lessonStamp(raw, JSON.stringify(h.lessons.gatherInputs(h.core, ws, [raw]))));
  const [end] = h.reg.hooks.session_end;
  const engine = await h.reg.engines.cachefold({ workspaceDir: ws });
  const code = "Add a slugify function to src/slug.mjs and run the tests";
  // Conversation 1: exploration, no lessons.
  const a1 = await engine.assemble({ sessionId: "s-same", messages: [], prompt: "Investigate how the store caches results", model: "deepseek-v4-flash" });
  assert.equal(a1.systemPromptAddition, undefined);
  // Shutdown / compaction: the conversation goes on; its decision stays (a first-turn tool loop
  // assemble still has no history and must get the same answer).
  for (const reason of ["shutdown", "restart", "compaction"]) {
    await end.handler({ sessionId: "s-same", reason, messageCount: 2 }, { sessionId: "s-same", agentId: "main" });
    const again = await engine.assemble({ sessionId: "s-same", messages: [], prompt: code, model: "deepseek-v4-flash" });
    assert.equal(again.systemPromptAddition, undefined, reason);
  }
  // /new: same id, new conversation, new decision.
  await end.handler({ sessionId: "s-same", reason: "new", messageCount: 2, nextSessionId: "s-same" }, { sessionId: "s-same", sessionKey: "agent:main:x", agentId: "main" });
  const a2 = await engine.assemble({ sessionId: "s-same", messages: [], prompt: code, model: "deepseek-v4-flash" });
  assert.match(a2.systemPromptAddition ?? "", /\[testing\]/);
  const tool = await engine.assemble({ sessionId: "s-same", messages: [], prompt: code, model: "deepseek-v4-flash" });
  assert.equal(tool.systemPromptAddition, a2.systemPromptAddition, "stable within the new conversation");
  const sdir = join(h.stateDir, "sessions", h.core.sessionDirName("s-same"));
  assert.equal(readdirSync(sdir).filter((f) => /^lessons-ended-\d+\.json$/.test(f)).length, 1, "the first decision is archived");
  // A fresh process (agent --local) after /new reads the new decision file too.
  h.lessons.forgetDecisions();
  const again = await (await h.reg.engines.cachefold({ workspaceDir: ws })).assemble({ sessionId: "s-same", messages: [], prompt: code, model: "deepseek-v4-flash" });
  assert.equal(again.systemPromptAddition, a2.systemPromptAddition);
  const log = readFileSync(h.logFile, "utf8").trim().split("\n").map((l) => JSON.parse(l));
  assert.deepEqual(log.filter((e) => e.event === "lessons_session_end").map((e) => [e.reason, e.decisionEnded]), [["shutdown", false], ["restart", false], ["compaction", false], ["new", true]]);
});
