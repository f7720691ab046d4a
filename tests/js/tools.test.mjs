// Agent tools through the real wasm core: cachefold_recover, cachefold_search, cachefold_stats.
import test from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { registerTools, recoverTool, searchTool, statsTool, renderStats, TOOL_NAMES } from "../../js/tools.js";
import { writeArtifact, sessionArtifactIds } from "../../js/artifacts.js";
import { fakeApi, tempDir, toolNames, loadTestCore, skipUnless } from "./helpers.mjs";


const core = await loadTestCore("recoverAnswer");
const skip = skipUnless(core, "wasm core not built with the tool-output bindings (build pkg/ with wasm-pack, or set CACHEFOLD_PKG)");
const sha1 = (t) => createHash("sha1").update(t, "utf8").digest("hex");
const SESSION = { sessionId: "11111111-2222-3333-4444-555555555555", sessionKey: "agent:main:t1", agentId: "main" };

function makeCtx(engine) {
  const config = core.parseConfig("{}");
  return { config, configJson: JSON.stringify(config), stateDir: tempDir(), logger: { warn() {} }, log() {}, core, engine: engine ?? {} };
}

function store(ctx, text, session = SESSION.sessionKey) {
  const id = sha1(text);
  writeArtifact(ctx.stateDir, id, text, { tool: "exec", session, originalChars: text.length, shrunkChars: 100 });
  return id;
}

const numbered = (n) => Array.from({ length: n }, (_, i) => `row ${i + 1}`).join("\n");

test("registerTools registers exactly the manifest's tools, each as a session-aware factory", () => {
  const { api, reg } = fakeApi();
  registerTools(api, { stateDir: tempDir() });
  assert.deepEqual(toolNames(reg), [...TOOL_NAMES].sort());
  for (const { tool, opts } of reg.tools) {
    assert.equal(typeof tool, "function");
    const made = tool(SESSION);
    assert.equal(made.name, opts.name);
    assert.equal(typeof made.execute, "function");
    assert.equal(made.parameters.type, "object");
  }
});

test("recover: exact line and char ranges with remaining count and next range", { skip }, async () => {
  const ctx = makeCtx();
  const text = numbered(1000);
  const id = store(ctx, text);
  const tool = recoverTool(ctx, SESSION);
  let r = await tool.execute("c1", { id, lines: [41, 45] });
  assert.equal(r.content[0].text, `[cachefold_recover] ${id} lines 41-45 of 1,000 (955 more). Next: cachefold_recover {"id":"${id}","lines":[46,50]}\nrow 41\nrow 42\nrow 43\nrow 44\nrow 45`);
  assert.deepEqual({ ...r.details }, { id, unit: "lines", start: 41, end: 45, total: 1000, remaining: 955, kind: "artifact", found: true });
  // Default: from line 1, capped at 8,000 chars of whole lines.
  r = await tool.execute("c2", { id });
  const body = r.content[0].text.split("\n").slice(1).join("\n");
  assert.ok(body.length <= 8000);
  assert.equal(body, text.slice(0, body.length));
  assert.equal(r.details.remaining, 1000 - r.details.end);
  // Chars, half-open.
  r = await tool.execute("c3", { id, chars: [4, 13] });
  assert.equal(r.content[0].text.split("\n").slice(1).join("\n"), text.slice(4, 13));
  assert.equal(r.details.remaining, text.length - 13);
  // Last range says so.
  r = await tool.execute("c4", { id, lines: [999, 2000] });
  assert.match(r.content[0].text, /lines 999-1,000 of 1,000 \(end of text\)\.\nrow 999\nrow 1000$/);
  // maxChars.
  r = await tool.execute("c5", { id, lines: [1, 1000], maxChars: 20 });
  assert.equal(r.content[0].text.split("\n").slice(1).join("\n"), "row 1\nrow 2\nrow 3");
});

test("recover: ids are validated, unknown ids are reported, folds come from the engine", { skip }, async () => {
  const folds = { f2: "fold two line one\nfold two line two" };
  const ctx = makeCtx({ foldText: async (_c, sid, fid) => (sid === SESSION.sessionId ? folds[fid] ?? null : null) });
  const tool = recoverTool(ctx, SESSION);
  for (const bad of ["../x", "/etc/passwd", sha1("a").toUpperCase(), sha1("a").slice(1), "f", "f1/../x", "ｆ1", ""]) {
    await assert.rejects(tool.execute("c", { id: bad }), (e) => e.code === "CACHEFOLD_INVALID_ID", bad);
  }
  await assert.rejects(tool.execute("c", { id: "f2", lines: [1] }), (e) => e.code === "CACHEFOLD_INPUT");
  let r = await tool.execute("c", { id: sha1("never stored") });
  assert.match(r.content[0].text, /is not in the artifact store/);
  assert.equal(r.details.found, false);
  r = await tool.execute("c", { id: "f2", lines: [2, 2] });
  assert.equal(r.content[0].text, "[cachefold_recover] f2 lines 2-2 of 2 (end of text).\nfold two line two");
  r = await tool.execute("c", { id: "f9" });
  assert.match(r.content[0].text, /f9 is not a folded region of this session/);
  // No engine at all: still a clean answer.
  const bare = recoverTool({ ...ctx, engine: {} }, SESSION);
  assert.match((await bare.execute("c", { id: "f2" })).content[0].text, /not a folded region/);
});

test("recover keeps an artifact referenced by the recovering session", { skip }, async () => {
  const ctx = makeCtx();
  const id = store(ctx, numbered(10));
  const r = await recoverTool(ctx, SESSION).execute("c", { id });
  assert.equal(r.details.found, true);
  assert.deepEqual(sessionArtifactIds(ctx.stateDir, SESSION.sessionKey), [id]);
});

test("another session's artifact answers like an unknown id and never joins this session's search or stats", { skip }, async () => {
  const ctx = makeCtx();
  const foreign = store(ctx, `${numbered(10)}\nSECRET of the other session`, "agent:main:other");
  const unknown = sha1("never stored");
  const mine = await recoverTool(ctx, SESSION).execute("c", { id: foreign });
  const none = await recoverTool(ctx, SESSION).execute("c", { id: unknown });
  assert.equal(mine.details.found, false);
  assert.equal(mine.content[0].text.replace(foreign, "<id>"), none.content[0].text.replace(unknown, "<id>"));
  assert.deepEqual(sessionArtifactIds(ctx.stateDir, SESSION.sessionKey), [], "no reference added by the read");
  const s = await searchTool(ctx, SESSION).execute("c", { query: "SECRET" });
  assert.equal(s.details.hits.length, 0);
  const st = await statsTool(ctx, SESSION).execute("c", {});
  assert.equal(st.details.shrink.artifacts, 0);
  // The owner still reads it.
  const owner = await recoverTool(ctx, { ...SESSION, sessionKey: "agent:main:other" }).execute("c", { id: foreign });
  assert.equal(owner.details.found, true);
});

test("search: bounded hits with ids and line numbers, this session only", { skip }, async () => {
  const ctx = makeCtx({ foldedDocs: async () => [{ id: "f1", kind: "fold", text: "user asked about TIMEOUT\nassistant answered" }] });
  const ids = [];
  for (let i = 0; i < 5; i += 1) ids.push(store(ctx, `${numbered(50)}\nERROR timeout in job ${i}\n${numbered(3)}`));
  const foreign = store(ctx, "timeout in someone else's session", "agent:main:other");
  const tool = searchTool(ctx, SESSION);
  let r = await tool.execute("c", { query: "timeout", maxHits: 3 });
  assert.equal(r.details.hits.length, 3);
  assert.equal(r.details.more, true);
  assert.equal(r.details.documents, 6);
  assert.deepEqual(r.details.hits[0], { id: "f1", kind: "fold", line: 1, snippet: "user asked about TIMEOUT" });
  // Newest artifact first, line 51.
  assert.deepEqual([r.details.hits[1].id, r.details.hits[1].line], [ids[4], 51]);
  assert.match(r.content[0].text, /^\[cachefold_search\] 3 hits for "timeout" in 6 documents \(more exist/);
  assert.ok(!JSON.stringify(r.details).includes(foreign));
  // The line number addresses the hit through recover.
  const rec = await recoverTool(ctx, SESSION).execute("c", { id: ids[4], lines: [51, 51] });
  assert.equal(rec.content[0].text.split("\n")[1], "ERROR timeout in job 4");
  // Smart case and regex.
  r = await tool.execute("c", { query: "TIMEOUT" });
  assert.equal(r.details.hits.length, 1);
  r = await tool.execute("c", { query: "^ERROR timeout in job [0-2]$", regex: true });
  assert.deepEqual(r.details.hits.map((h) => h.id), [ids[2], ids[1], ids[0]]);
  assert.equal(r.details.more, false);
  await assert.rejects(tool.execute("c", { query: "(group", regex: true }), (e) => e.code === "CACHEFOLD_INPUT" && /invalid search regex/.test(e.message));
  await assert.rejects(tool.execute("c", { query: "" }), (e) => e.code === "CACHEFOLD_INPUT");
  // maxHits is clamped to 50.
  const many = store(ctx, Array.from({ length: 500 }, () => "hit").join("\n"));
  r = await tool.execute("c", { query: "hit", maxHits: 10_000 });
  assert.equal(r.details.hits.length, 50);
  assert.ok(r.content[0].text.split("\n").length <= 52);
  assert.ok(r.details.hits.every((h) => h.id === many));
});

test("stats: engine numbers plus this session's shrink totals", { skip }, async () => {
  const engineStats = { calls: 12, promptTokens: 120000, cacheHitPct: 91.23456, predictedHitTokens: 100000, reportedHitTokens: 98000, folds: 1, usdSaved: 0.0123 };
  const ctx = makeCtx({ sessionStats: async (_c, sid) => (sid === SESSION.sessionId ? engineStats : null) });
  store(ctx, "x".repeat(10_000));
  const r = await statsTool(ctx, SESSION).execute("c", {});
  const text = r.content[0].text;
  assert.match(text, /^\[cachefold_stats\] session 11111111-2222-3333-4444-555555555555\n/);
  assert.match(text, /\ncalls: 12\n/);
  assert.match(text, /\ncacheHitPct: 91\.2346\n/);
  assert.match(text, /\nshrink\.charsSaved: 9900$/);
  assert.deepEqual(r.details.shrink, { shrunkResults: 1, artifacts: 1, originalChars: 10000, shrunkChars: 100, savedChars: 9900 });
  const none = await statsTool(makeCtx(), SESSION).execute("c", {});
  assert.match(none.content[0].text, /engine: no recorded turns for this session yet/);
  assert.equal(renderStats("s", { nested: { a: 1, b: { c: 2 } } }, { shrunkResults: 0, artifacts: 0, originalChars: 0, savedChars: 0 }).split("\n")[1], "nested.a: 1");
});
