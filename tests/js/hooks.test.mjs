// Tool hooks through the real wasm core: before_tool_call defaults, tool_result_persist and the
// agent tool-result middleware (identical bytes on both paths), artifacts, failure handling.
import test from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { existsSync, readFileSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { registerHooks, beforeToolCall, persistToolResult, toolResultMiddleware } from "../../js/hooks.js";
import { artifactPath, readArtifact, sessionRefs, storeRoot } from "../../js/artifacts.js";
import { OVERSIZE_CHARS } from "../../js/oversize.js";
import { fakeApi, tempDir, toolResult, loadTestCore, skipUnless } from "./helpers.mjs";


const core = await loadTestCore("processToolResult");
const skip = skipUnless(core, "wasm core not built with the tool-output bindings (build pkg/ with wasm-pack, or set CACHEFOLD_PKG)");
const sha1 = (t) => createHash("sha1").update(t, "utf8").digest("hex");

function makeCtx(config = {}, extra = {}) {
  const full = core.parseConfig(JSON.stringify(config));
  const logs = [];
  const warnings = [];
  return {
    config: full,
    configJson: JSON.stringify(full),
    stateDir: tempDir(),
    logger: { warn: (m) => warnings.push(m), info() {}, error() {} },
    log: (e) => logs.push(e),
    core,
    logs,
    warnings,
    ...extra,
  };
}

const lines = (n, width = 40) => Array.from({ length: n }, (_, i) => `line ${String(i + 1).padStart(6, "0")} ${"x".repeat(width)}`).join("\n") + "\n";

test("registers before_tool_call, tool_result_persist and the openclaw middleware", { skip }, () => {
  const { api, reg } = fakeApi();
  registerHooks(api, makeCtx());
  assert.equal(reg.hooks.before_tool_call.length, 1);
  assert.equal(reg.hooks.tool_result_persist.length, 1);
  assert.equal(reg.middleware.length, 1);
  assert.deepEqual(reg.middleware[0].opts, { runtimes: ["openclaw"] });
});

test("before_tool_call adds defaults only where the model gave none", { skip }, async () => {
  const ctx = makeCtx();
  const r = await beforeToolCall(ctx, { toolName: "read", params: { path: "a.txt" } }, {});
  assert.deepEqual(r, { params: { path: "a.txt", offset: 1, limit: 200 } });
  assert.deepEqual(Object.keys(r.params), ["path", "offset", "limit"]);
  const explicit = await beforeToolCall(ctx, { toolName: "read", params: { path: "a", offset: 7, limit: 5000 } }, {});
  assert.equal(explicit, undefined);
  const partial = await beforeToolCall(ctx, { toolName: "read", params: { path: "a", limit: 3 } }, {});
  assert.deepEqual(partial.params, { path: "a", limit: 3, offset: 1 });
  const nulls = await beforeToolCall(ctx, { toolName: "read", params: { path: "a", offset: null, limit: null } }, {});
  assert.deepEqual(nulls.params, { path: "a", offset: 1, limit: 200 });
  const fetch = await beforeToolCall(ctx, { toolName: "web_fetch", params: { url: "https://x.test" } }, {});
  assert.deepEqual(fetch.params, { url: "https://x.test", maxChars: 12000 });
  assert.equal(await beforeToolCall(ctx, { toolName: "web_fetch", params: { url: "u", maxChars: 300 } }, {}), undefined);
  assert.equal(await beforeToolCall(ctx, { toolName: "exec", params: { command: "ls" } }, {}), undefined);
  assert.equal(await beforeToolCall(ctx, { toolName: "read", params: ["odd"] }, {}), undefined);
  assert.deepEqual(ctx.logs.filter((l) => l.event === "tool_defaults").map((l) => l.added), [["offset", "limit"], ["offset"], ["offset", "limit"], ["maxChars"]]);
  // Configured table.
  const c2 = makeCtx({ toolDefaults: { grep: { limit: 50 } } });
  assert.deepEqual((await beforeToolCall(c2, { toolName: "grep", params: { pattern: "x" } }, {})).params, { pattern: "x", limit: 50 });
  assert.equal(await beforeToolCall(c2, { toolName: "read", params: { path: "a" } }, {}), undefined, "table replaced");
});

test("before_tool_call never throws and never blocks", { skip }, async () => {
  const broken = makeCtx({}, { core: { applyToolDefaults: () => { throw new Error("boom"); } } });
  assert.equal(await beforeToolCall(broken, { toolName: "read", params: { path: "a" } }, {}), undefined);
  assert.equal(await beforeToolCall(broken, null, null), undefined);
  assert.equal(broken.logs.at(-1).event, "hook_error");
  // Bounded by work, not by the clock: one core call per call of a tool with defaults, none for
  // a tool without.
  const ctx = makeCtx();
  let calls = 0;
  ctx.core = { applyToolDefaults: (...a) => ((calls += 1), core.applyToolDefaults(...a)) };
  for (let i = 0; i < 1000; i += 1) assert.deepEqual((await beforeToolCall(ctx, { toolName: "read", params: { path: `f${i}` } }, {})).params.path, `f${i}`);
  assert.equal(calls, 1000, "one core call per call");
  for (let i = 0; i < 1000; i += 1) assert.equal(await beforeToolCall(ctx, { toolName: "cachefold_stats", params: {} }, {}), undefined);
  assert.equal(calls, 1000, "no core call for a tool without defaults");
});

test("tool_result_persist: under threshold untouched, over threshold shrunk with its artifact stored", { skip }, () => {
  const ctx = makeCtx();
  const small = toolResult("c0", "read", "short");
  assert.equal(persistToolResult(ctx, { toolName: "read", toolCallId: "c0", message: small }, { sessionKey: "agent:main:t" }), undefined);
  const text = lines(1000); // 53-char lines: 53,000 chars
  const msg = toolResult("c1", "read", text);
  const r = persistToolResult(ctx, { toolName: "read", toolCallId: "c1", message: msg }, { sessionKey: "agent:main:t" });
  const id = sha1(text);
  const shown = r.message.content[0].text;
  assert.match(shown, new RegExp(`^\\[cachefold\\] read output 53,000 chars, 1,000 lines → artifact ${id} \\(file ${join(ctx.stateDir, "artifacts", id.slice(0, 2), id).replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}\\)\\. `));
  assert.ok(shown.length < 4600 + 800, `${shown.length}`); // preview + header + bounded "Mentions:" list
  assert.deepEqual({ ...r.message, content: null }, { ...msg, content: null }, "only content changed");
  assert.equal(readArtifact(ctx.stateDir, id), text);
  assert.equal(statSync(artifactPath(ctx.stateDir, id)).mode & 0o777, 0o600);
  assert.equal(statSync(storeRoot(ctx.stateDir)).mode & 0o777, 0o700);
  const refs = sessionRefs(ctx.stateDir, "agent:main:t");
  assert.deepEqual(refs.map((x) => [x.id, x.tool, x.callId, x.originalChars]), [[id, "read", "c1", 53000]]);
  // Deterministic: same input, same bytes; identical content stored once.
  const again = persistToolResult(ctx, { toolName: "read", toolCallId: "c2", message: structuredClone(msg) }, { sessionKey: "agent:main:t" });
  assert.equal(JSON.stringify(again.message), JSON.stringify(r.message));
  assert.deepEqual(readdirSync(join(storeRoot(ctx.stateDir), id.slice(0, 2))).sort(), [id, `${id}.json`]);
  // Already shrunk: left alone.
  assert.equal(persistToolResult(ctx, { toolName: "read", message: r.message }, {}), undefined);
  // Not a tool result / unknown shapes: untouched.
  assert.equal(persistToolResult(ctx, { message: { role: "assistant", content: text } }, {}), undefined);
  assert.equal(persistToolResult(ctx, { message: { role: "toolResult", content: { odd: text } } }, {}), undefined);
});

test("thresholds per tool: exec 4,000, read 12,000, default 4,000", { skip }, () => {
  const ctx = makeCtx();
  const at = (tool, n) => persistToolResult(ctx, { toolName: tool, message: toolResult("c", tool, "a".repeat(n)) }, {});
  assert.equal(at("exec", 4000), undefined);
  assert.ok(at("exec", 4001));
  assert.equal(at("read", 12000), undefined);
  assert.ok(at("read", 12001));
  assert.equal(at("grep", 4000), undefined);
  assert.ok(at("grep", 4001));
  assert.ok(at("Grep", 5000));
  assert.ok(at("Read", 5000), "Claude Code's Read takes the default threshold, not read's");
});

test("middleware then persist gives the same bytes as persist alone", { skip }, async () => {
  for (const [tool, text] of [
    ["exec", lines(300, 20)],
    ["web_fetch", "no newline ".repeat(2000)],
    ["read", `${"é".repeat(7000)}\n${lines(400)}`],
  ]) {
    const a = makeCtx();
    const persistOnly = persistToolResult(a, { toolName: tool, message: toolResult("c1", tool, text) }, { sessionKey: "k" }).message;

    const b = makeCtx();
    const raw = { content: [{ type: "text", text }], details: { exitCode: 0 } };
    const mw = await toolResultMiddleware(b, { toolCallId: "c1", toolName: tool, args: {}, result: raw }, { runtime: "openclaw", sessionKey: "k", sessionId: "s" });
    assert.deepEqual(mw.result.details, { exitCode: 0 }, "details untouched by the middleware");
    // The host persists what the middleware returned; the persist hook must leave it as is.
    const stored = { ...toolResult("c1", tool, "x"), content: mw.result.content };
    const after = persistToolResult(b, { toolName: tool, message: stored }, { sessionKey: "k" });
    assert.equal(after, undefined);
    // Same bytes up to the state dir each side named in the header (two stores here).
    const norm = (c, dir) => JSON.stringify(c).split(dir).join("<stateDir>");
    assert.equal(norm(mw.result.content, b.stateDir), norm(persistOnly.content, a.stateDir), tool);
    assert.equal(readArtifact(b.stateDir, sha1(text)), text);
    assert.deepEqual(sessionRefs(b.stateDir, "k").map((r) => r.id), [sha1(text)]);
  }
});

test("persist compacts oversized details (even after the middleware shrank the content)", { skip }, () => {
  const ctx = makeCtx();
  const msg = { ...toolResult("c1", "exec", "ok"), details: { exitCode: 0, aggregated: "z".repeat(50_000), list: Array.from({ length: 100 }, (_, i) => i) } };
  const r = persistToolResult(ctx, { toolName: "exec", message: msg }, {});
  assert.equal(r.message.content[0].text, "ok");
  assert.equal(r.message.details.exitCode, 0);
  assert.ok(JSON.stringify(r.message.details).length <= 4096);
  assert.equal(r.message.details.list.length, 12);
});

test("images are kept and not counted; non-text results pass through", { skip }, async () => {
  const ctx = makeCtx();
  const img = { type: "image", data: "A".repeat(200_000), mimeType: "image/png" };
  const msg = { ...toolResult("c1", "read", "small"), content: [img, { type: "text", text: "small" }] };
  assert.equal(persistToolResult(ctx, { toolName: "read", message: msg }, {}), undefined);
  const big = { ...msg, content: [img, { type: "text", text: lines(500) }] };
  const r = persistToolResult(ctx, { toolName: "read", message: big }, {});
  assert.deepEqual(r.message.content[0], img);
  assert.match(r.message.content[1].text, /^\[cachefold\] read output/);
  assert.equal(await toolResultMiddleware(ctx, { toolName: "read", result: { content: [img] } }, {}), undefined);
  assert.equal(await toolResultMiddleware(ctx, { toolName: "read", result: { nope: 1 } }, {}), undefined);
});

test("when the artifact cannot be written, the original result is kept", { skip }, async () => {
  const ctx = makeCtx();
  writeFileSync(join(ctx.stateDir, "artifacts"), "a file where the store directory should be");
  const msg = toolResult("c1", "exec", lines(300));
  assert.equal(persistToolResult(ctx, { toolName: "exec", message: msg }, {}), undefined);
  assert.equal(await toolResultMiddleware(ctx, { toolName: "exec", result: { content: msg.content } }, {}), undefined);
  assert.ok(ctx.logs.some((l) => l.event === "hook_error"));
  // A throwing core is also a pass-through.
  const broken = makeCtx({}, { core: { processToolResult: () => { throw new Error("trap"); } } });
  assert.equal(persistToolResult(broken, { toolName: "exec", message: msg }, {}), undefined);
  assert.equal(await toolResultMiddleware(broken, { toolName: "exec", result: { content: msg.content } }, {}), undefined);
});

test("our own tools' results are never shrunk", { skip }, () => {
  const ctx = makeCtx();
  const text = `[cachefold_recover] ${sha1("x")} lines 1-900 of 5,000 (4,100 more).\n${lines(900, 20)}`;
  assert.equal(persistToolResult(ctx, { toolName: "cachefold_recover", message: toolResult("c", "cachefold_recover", text) }, {}), undefined);
  const wrapped = JSON.stringify({ tool: { id: "openclaw:cachefold:cachefold_recover" }, result: { content: [{ type: "text", text }] } });
  assert.equal(persistToolResult(ctx, { toolName: "tool_call", message: toolResult("c", "tool_call", wrapped) }, {}), undefined);
});

test("100 MB tool output: shrunk and stored in linear time and bounded memory", { skip, timeout: 600_000 }, (t) => {
  const ctx = makeCtx();
  const line = `${"0123456789abcdef".repeat(6)} log line\n`; // 106 chars
  const text = line.repeat(Math.ceil((100 * 1024 * 1024) / line.length));
  const msg = toolResult("big", "exec", text);
  global.gc?.();
  const rss0 = process.memoryUsage().rss;
  const t0 = performance.now();
  const r = persistToolResult(ctx, { toolName: "exec", toolCallId: "big", message: msg }, { sessionKey: "k" });
  const ms = performance.now() - t0;
  const rss1 = process.memoryUsage().rss;
  assert.ok(r, "shrunk");
  assert.ok(r.message.content[0].text.length < 4600);
  // Over OVERSIZE_CHARS the text is stored whole, then cut before the core: the preview's
  // artifact is the cut text, whose note names the artifact of every byte (js/oversize.js).
  const id = r.message.content[0].text.match(/artifact ([0-9a-f]{40})/)[1];
  const full = readFileSync(artifactPath(ctx.stateDir, id), "utf8").match(/every byte is in artifact ([0-9a-f]{40})/)[1];
  assert.equal(statSync(artifactPath(ctx.stateDir, full)).size, Buffer.byteLength(text));
  t.diagnostic(`100 MB persist: ${ms.toFixed(0)} ms, rss +${((rss1 - rss0) / 1048576).toFixed(0)} MiB (input ${(text.length / 1048576).toFixed(0)} MiB)`);
  // Bounded by size, not by the clock: the core was handed the cut text (OVERSIZE_CHARS at most,
  // see reliability-oversize), and no runaway copy.
  assert.ok(statSync(artifactPath(ctx.stateDir, id)).size < OVERSIZE_CHARS, "the core shrank the cut text");
  assert.ok(rss1 - rss0 < 2 * 1024 * 1024 * 1024, `rss grew ${rss1 - rss0}`);
});
