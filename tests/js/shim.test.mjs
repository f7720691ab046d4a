// The plugin shim against a fake OpenClaw API, through the real wasm build in pkg/.
import test from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { join } from "node:path";
import { fakeApi, toolNames, tempDir, engineFor, user, assistantText, assistantCall, toolResult, commitInNewProcess, pkgSkip } from "./helpers.mjs";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const manifest = JSON.parse(readFileSync(join(ROOT, "openclaw.plugin.json"), "utf8"));
const skip = pkgSkip();

async function loadPlugin(config) {
  const { default: plugin } = await import("../../js/index.js");
  const { api, reg } = fakeApi(config);
  plugin.register(api);
  return { plugin, api, reg };
}


test("registers the engine, both hooks and exactly the manifest's tools", { skip }, async () => {
  const { plugin, reg } = await loadPlugin({ stateDir: tempDir() });
  assert.equal(plugin.id, manifest.id);
  assert.equal(typeof reg.engines.cachefold, "function");
  assert.ok(reg.hooks.before_tool_call?.length, "before_tool_call registered");
  assert.ok(reg.hooks.tool_result_persist?.length, "tool_result_persist registered");
  assert.deepEqual(toolNames(reg), [...manifest.contracts.tools].sort());
});

test("engine info declares transcript semantics, commitTurn and ownsCompaction", { skip }, async () => {
  const eng = await engineFor({ stateDir: tempDir() });
  assert.equal(eng.info.id, "cachefold");
  assert.deepEqual(eng.info.transcriptSemantics, {
    currentTurnFence: "before-current-turn-entry-v1",
    turnAdvancementIdempotency: "atomic-idempotent-v1",
  });
  for (const m of ["ingest", "assemble", "compact", "commitTurn", "maintain"]) assert.equal(typeof eng[m], "function", m);
  assert.equal(eng.info.ownsCompaction, true);
  const off = await engineFor({ stateDir: tempDir(), ownsCompaction: false });
  assert.equal(off.info.ownsCompaction, false);
});

test("a bad config value is reported with its key and the engine passes history through", { skip }, async () => {
  const { reg } = await loadPlugin({ stateDir: tempDir(), compactRatio: 7 });
  assert.ok(reg.errors.some((e) => e.includes("compactRatio")), reg.errors.join("\n"));
  const eng = await reg.engines.cachefold({});
  const msgs = [user("hi"), assistantText("hello")];
  const res = await eng.assemble({ sessionId: "bad-config", messages: msgs, model: "deepseek-v4-flash", tokenBudget: 100000 });
  assert.equal(res.messages.length, 2);
  assert.equal(res.messages[0], msgs[0]);
});

test("assemble output of turn N is a prefix of turn N+1 (host objects untouched)", { skip }, async () => {
  const stateDir = tempDir();
  const h1 = [user("read a.txt please"), assistantCall("c1", "read", { path: "a.txt" }), toolResult("c1", "read", "alpha\n".repeat(50)), assistantText("done")];
  const e1 = await engineFor({ stateDir });
  const r1 = await e1.assemble({ sessionId: "s-append", messages: h1, model: "deepseek-v4-flash", tokenBudget: 100000 });
  await e1.commitTurn({ sessionId: "s-append", advancementKey: "k1", messages: h1 });
  const h2 = [...h1, user("and b.txt"), assistantText("ok")];
  const e2 = await engineFor({ stateDir });
  const r2 = await e2.assemble({ sessionId: "s-append", messages: h2, model: "deepseek-v4-flash", tokenBudget: 100000 });
  assert.ok(r2.messages.length >= r1.messages.length);
  for (let i = 0; i < r1.messages.length; i++) {
    assert.equal(JSON.stringify(r2.messages[i]), JSON.stringify(r1.messages[i]), `message ${i} changed`);
  }
  assert.equal(typeof r2.estimatedTokens, "number");
});

test("commitTurn is idempotent by advancementKey, across engine instances and processes", { skip }, async () => {
  const stateDir = tempDir();
  const msgs = [user("hi"), assistantText("hello", { input: 100, output: 5, cacheRead: 900, cacheWrite: 0, totalTokens: 1005 })];
  const e1 = await engineFor({ stateDir });
  assert.equal((await e1.commitTurn({ sessionId: "s-commit", advancementKey: "turn-1", messages: msgs })).status, "committed");
  assert.equal((await e1.commitTurn({ sessionId: "s-commit", advancementKey: "turn-1", messages: msgs })).status, "duplicate");
  const e2 = await engineFor({ stateDir });
  assert.equal((await e2.commitTurn({ sessionId: "s-commit", advancementKey: "turn-1", messages: msgs })).status, "duplicate");
  // A new process sees the same durable state.
  assert.deepEqual(commitInNewProcess({ stateDir }, "s-commit", ["turn-1", "turn-2"], msgs), ["duplicate", "committed"]);
});

test("unknown roles, parts and fields pass through the engine as the host's own objects", { skip }, async () => {
  const weird = {
    role: "hologram",
    zeta: [1.5, 1e21, -0, "\u001f"],
    content: [{ type: "sparkle", data: { nested: true } }, { type: "text", text: "é 漢字 😀" }],
    __openclaw: { runId: "r1" },
  };
  const text = JSON.stringify(weird);
  const msgs = [user("hi"), weird, assistantText("hello")];
  const eng = await engineFor({ stateDir: tempDir() });
  for (let turn = 0; turn < 2; turn++) {
    const res = await eng.assemble({ sessionId: "weird", messages: msgs, model: "deepseek-v4-flash", tokenBudget: 100000 });
    assert.equal(res.messages.length, 3);
    assert.equal(res.messages[1], weird, `turn ${turn}`);
    assert.equal(JSON.stringify(res.messages[1]), text);
  }
});

test("session directory names cannot escape the state directory", { skip }, async () => {
  const { loadCore } = await import("../../js/core.js");
  const core = await loadCore();
  for (const id of ["../../etc/passwd", "/abs", "a\\b", "", ".."]) {
    assert.match(core.sessionDirName(id), /^[A-Za-z0-9_-]+$/);
  }
});

test("npm pack ships the wasm (pkg/.gitignore must not drop it)", { skip }, () => {
  const out = execFileSync("npm", ["pack", "--dry-run", "--json", "--ignore-scripts"], { cwd: ROOT, encoding: "utf8" });
  const files = JSON.parse(out)[0].files.map((f) => f.path);
  assert.ok(files.includes("pkg/cachefold_bg.wasm"), files.join("\n"));
  assert.ok(files.includes("pkg/cachefold.js"));
  assert.ok(files.includes("openclaw.plugin.json"));
  assert.ok(files.includes("js/index.js"));
  assert.ok(!files.some((f) => f.startsWith("src/") || f.startsWith("target/")));
});

test("config crosses the boundary as plain JSON numbers (arbitrary_precision regression)", { skip }, async () => {
  const { loadCore } = await import("../../js/core.js");
  const core = await loadCore();
  const cfg = core.parseConfig(JSON.stringify({ toolDefaults: { read: { offset: 1, limit: 50 } }, tailTokens: "30000" }));
  assert.deepEqual(cfg.toolDefaults.read, { offset: 1, limit: 50 });
  assert.equal(cfg.tailTokens, 30000);
  assert.throws(() => core.parseConfig(JSON.stringify({ compactRatio: 9 })), (e) => e.code === "CACHEFOLD_CONFIG" && /compactRatio/.test(e.message));
});

test("a torn journal tail is sealed: state before it survives and later turns still replay", { skip }, async () => {
  const { appendFileSync, readdirSync, readFileSync: rf } = await import("node:fs");
  const stateDir = tempDir();
  const logFile = join(stateDir, "log.jsonl");
  const msgs = [user("hi"), assistantText("hello")];
  const e1 = await engineFor({ stateDir, logFile });
  assert.equal((await e1.commitTurn({ sessionId: "s-torn", advancementKey: "t1", messages: msgs })).status, "committed");
  const dir = join(stateDir, "sessions", readdirSync(join(stateDir, "sessions"))[0]);
  appendFileSync(join(dir, "journal.jsonl"), '{"v":1,"seq":99,"crc":"dead'); // crash mid-line
  // A new process: nothing cached in memory, the state comes from disk.
  assert.deepEqual(commitInNewProcess({ stateDir, logFile }, "s-torn", ["t1", "t2"], msgs), ["duplicate", "committed"]);
  assert.match(rf(logFile, "utf8"), /"event":"journal_repaired"/);
  assert.deepEqual(commitInNewProcess({ stateDir, logFile }, "s-torn", ["t1", "t2"], msgs), ["duplicate", "duplicate"], "t2 survived the repair");
});

test("a wasm trap passes history through once, then a fresh instance serves the same state", { skip }, async () => {
  const stateDir = tempDir();
  const logFile = join(stateDir, "log.jsonl");
  const core = await import("../../js/core.js");
  const eng = await engineFor({ stateDir, logFile });
  const h = [user("hi"), assistantText("hello")];
  await eng.assemble({ sessionId: "s-trap", messages: h, model: "deepseek-v4-flash", tokenBudget: 100000 });
  assert.equal((await eng.commitTurn({ sessionId: "s-trap", advancementKey: "k1", messages: h })).status, "committed");
  const first = await core.loadCore();
  const proto = first.Session.prototype;
  const orig = proto.plan; // the engine plans through Session.plan (the core's driver)
  proto.plan = function () {
    throw new WebAssembly.RuntimeError("unreachable executed");
  };
  try {
    const h2 = [...h, user("again"), assistantText("ok")];
    const r = await eng.assemble({ sessionId: "s-trap", messages: h2, model: "deepseek-v4-flash", tokenBudget: 100000 });
    assert.equal(r.messages.length, h2.length);
    assert.ok(r.messages.every((m, i) => m === h2[i]), "history passed through unchanged");
  } finally {
    proto.plan = orig;
  }
  const second = await core.loadCore();
  assert.notEqual(second, first, "the trapped instance was replaced");
  const eng2 = await engineFor({ stateDir, logFile });
  assert.equal((await eng2.commitTurn({ sessionId: "s-trap", advancementKey: "k1", messages: h })).status, "duplicate", "state kept");
  const r2 = await eng2.assemble({ sessionId: "s-trap", messages: [...h, user("x"), assistantText("y")], model: "deepseek-v4-flash", tokenBudget: 100000 });
  assert.equal(r2.messages.length, 4);
  assert.match(readFileSync(logFile, "utf8"), /"event":"error","where":"assemble"/);
});

test("maintain prepares an LLM summary ahead of need and a later fold (here /compact) uses it", { skip }, async () => {
  const stateDir = tempDir();
  const logFile = join(stateDir, "log.jsonl");
  // Few expected calls: a region big enough to fold exists, but a priced fold does not pay yet.
  const cfg = { stateDir, logFile, tailTokens: 1000, minFoldTokens: 2000, expectedRemainingCalls: 4 };
  const calls = [];
  const llm = {
    complete: async (req) => {
      calls.push(req);
      return { text: "## Goal\nRead the files one by one (LLM SUMMARY MARKER).\n## Identifiers\nport 18789" };
    },
  };
  const events = () =>
    readFileSync(logFile, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
  const hist = [];
  for (let k = 0; k < 40 && calls.length === 0; k++) {
    const turn = [
      user(`step ${k}: keep the port at 18789 and read file_${k}.txt`),
      assistantCall(`c${k}`, "read", { path: `file_${k}.txt` }),
      toolResult(`c${k}`, "read", `contents of file ${k}\n`.repeat(40)),
      assistantText(`read file_${k}.txt`),
    ];
    const eng = await engineFor(cfg); // a new engine instance per turn, as OpenClaw does
    await eng.assemble({ sessionId: "s-sum", messages: hist, model: "deepseek-v4-flash", tokenBudget: 1_000_000 });
    hist.push(...turn);
    await eng.commitTurn({ sessionId: "s-sum", advancementKey: `t${k}`, messages: turn });
    await eng.maintain({ sessionId: "s-sum", runtimeContext: { llm } });
  }
  assert.equal(calls.length, 1, "maintain asked the host LLM once, ahead of the fold");
  assert.ok(calls[0].maxTokens > 0 && calls[0].messages[0].content.includes("18789"), "the prompt carries the digests");
  assert.equal(events().filter((e) => e.event === "assemble" && e.report?.folds?.length).length, 0, "no fold yet");
  // A second maintain does not spend again on the same region.
  await (await engineFor(cfg)).maintain({ sessionId: "s-sum", runtimeContext: { llm } });
  assert.equal(calls.length, 1);
  // The user runs /compact: the next assemble folds, using the prepared summary.
  const eng = await engineFor(cfg);
  const c = await eng.compact({ sessionId: "s-sum", sessionKey: "agent:main:t", force: true });
  assert.equal(c.ok, true);
  const r = await eng.assemble({ sessionId: "s-sum", messages: hist, model: "deepseek-v4-flash", tokenBudget: 1_000_000 });
  const fold = events().filter((e) => e.event === "assemble" && e.report?.folds?.length).pop()?.report.folds[0];
  assert.ok(fold, "the forced fold happened");
  assert.equal(fold.usedSummary, true, JSON.stringify(fold).slice(0, 400));
  assert.match(r.messages.map((x) => JSON.stringify(x)).join("\n"), /LLM SUMMARY MARKER/, "the fold record carries the prepared summary");
});

test("a fold record crosses the boundary once; every turn still gets fresh objects with the same bytes", { skip }, async () => {
  const stateDir = tempDir();
  const msgs = [];
  for (let k = 0; k < 160; k++) {
    msgs.push(user(`step ${k}: fix src/m${k % 7}.rs`), assistantCall(`c${k}`, "read", { path: `src/m${k % 7}.rs` }), toolResult(`c${k}`, "read", `line ${k}\n`.repeat(200)), assistantText(`done ${k}`));
  }
  const eng = await engineFor({ stateDir });
  const plans = [];
  const parse = JSON.parse;
  JSON.parse = function (text, reviver) {
    const v = parse.call(this, text, reviver);
    if (typeof text === "string" && text.startsWith('{"order"')) plans.push(v);
    return v;
  };
  const outs = [];
  try {
    for (let t = 0; t < 4; t++) {
      msgs.push(user(`turn ${t}`), assistantText(`ok ${t}`));
      const r = await eng.assemble({ sessionId: "s-synth", messages: msgs, model: "deepseek-v4-flash", tokenBudget: 60000 });
      outs.push(r.messages);
    }
  } finally {
    JSON.parse = parse;
  }
  const record = (out) => out.find((m) => JSON.stringify(m).includes("[cachefold fold f1]"));
  assert.ok(record(outs[0]), "the first assemble folded");
  assert.equal(plans.length, 4);
  assert.ok(plans[0].synthetic.every((s) => s.length > 0), "the first plan sends every text");
  for (let t = 1; t < 4; t++) {
    const k = plans[t].syntheticKeys.indexOf(plans[0].syntheticKeys[plans[0].synthetic.findIndex((s) => s.includes("[cachefold fold f1]"))]);
    assert.ok(k >= 0, `turn ${t} keeps the fold record`);
    assert.equal(plans[t].synthetic[k], "", `turn ${t} does not send the record's text again`);
    assert.equal(JSON.stringify(record(outs[t])), JSON.stringify(record(outs[0])), `turn ${t}: the record's bytes`);
    assert.notEqual(record(outs[t]), record(outs[t - 1]), `turn ${t}: a fresh object`);
  }
  // What the host does to a returned message does not reach the next turn.
  record(outs[3]).content[0].text = "changed by the host";
  msgs.push(user("turn 4"), assistantText("ok 4"));
  const r = await eng.assemble({ sessionId: "s-synth", messages: msgs, model: "deepseek-v4-flash", tokenBudget: 60000 });
  assert.equal(JSON.stringify(record(r.messages)), JSON.stringify(record(outs[0])));
});
