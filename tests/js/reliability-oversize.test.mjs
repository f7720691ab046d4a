// Huge tool results never reach the wasm core whole (issue 24, item 8): a result over
// OVERSIZE_CHARS is stored as an artifact first, then cut to its two ends around a line naming
// that artifact, so the hooks' wasm memory does not grow to twice the result and the shrink does
// not run for seconds; every byte stays recoverable by the session that made the call.
import test from "node:test";
import assert from "node:assert/strict";
import { readSessionArtifact } from "../../js/artifacts.js";
import { OVERSIZE_CHARS, cutOversized, hasOversized } from "../../js/oversize.js";
import { persistToolResult, toolResultMiddleware } from "../../js/hooks.js";
import { pkgSkip, tempDir } from "./helpers.mjs";

const skip = pkgSkip();

test("a result over the cut size is stored whole, cut before the core, and recoverable; the hooks' wasm memory stays small", { skip, timeout: 120_000 }, async () => {
  const core = await import("../../js/core.js");
  const stateDir = tempDir();
  const config = (await core.loadCore()).parseConfig("{}");
  const ctx = { config, configJson: JSON.stringify(config), stateDir, logger: { warn() {} }, log: () => {} };
  const line = "2026-11-21T22:20:00Z INFO worker[42] processed batch 0001 in 12ms status=ok\n";
  const big = `first line\n${line.repeat(Math.ceil((OVERSIZE_CHARS * 3) / line.length))}last line\n`;
  await toolResultMiddleware(ctx, { toolName: "exec", result: { content: [{ type: "text", text: "warm" }] } }, {});
  for (const [path, run] of [
    ["middleware", () => toolResultMiddleware(ctx, { toolCallId: "m1", toolName: "exec", args: {}, result: { content: [{ type: "text", text: big }] } }, { runtime: "openclaw", sessionKey: "s-big" }).then((r) => r.result)],
    ["persist", async () => persistToolResult(ctx, { toolName: "exec", toolCallId: "p1", message: { role: "toolResult", toolCallId: "p1", toolName: "exec", content: [{ type: "text", text: big }], isError: false, timestamp: 1 } }, { sessionKey: "s-big" }).message],
  ]) {
    const out = await run();
    const text = out.content[0].text;
    assert.ok(text.length < 20_000, `${path}: shrunk to a preview (${text.length} chars)`);
    const coreId = /→ artifact ([0-9a-f]{40})/.exec(text)?.[1];
    assert.ok(coreId, `${path}: the preview names its artifact`);
    const cutText = readSessionArtifact(stateDir, "s-big", coreId);
    assert.ok(cutText.length < OVERSIZE_CHARS, `${path}: the core saw the cut text (${cutText.length} chars)`);
    const fullId = /every byte is in artifact ([0-9a-f]{40})/.exec(cutText)?.[1];
    assert.ok(fullId, `${path}: the cut text names the full artifact`);
    assert.equal(readSessionArtifact(stateDir, "s-big", fullId), big, `${path}: every byte recoverable by the session`);
    assert.ok(cutText.startsWith("first line\n") && cutText.endsWith("last line\n"), `${path}: both ends kept`);
    const wasm = core.toolsWasmBytes();
    assert.notEqual(wasm, null, `${path}: the hooks have their own instance`);
    assert.ok(wasm < big.length, `${path}: hooks' wasm memory ${wasm} bytes, result ${big.length} chars`);
  }
});

test("a result over the cut size already in the history is cut before the core reads it, the same copy every turn, every byte recoverable", { skip, timeout: 120_000 }, async () => {
  const { loadCore } = await import("../../js/core.js");
  const { engineFor, user, assistantCall, assistantText, toolResult } = await import("./helpers.mjs");
  const stateDir = tempDir();
  const line = "2026-11-21T22:20:00Z INFO worker[42] processed batch 0001 in 12ms status=ok\n";
  const big = `first line\n${line.repeat(Math.ceil((OVERSIZE_CHARS * 3) / line.length))}last line\n`;
  const history = [user("run the job"), assistantCall("c1", "exec", { command: "job" }), toolResult("c1", "exec", big), assistantText("done")];
  // Bounded by size, not time: the largest message text the core is handed.
  const proto = (await loadCore()).Session.prototype;
  const plan = proto.plan;
  let largest = 0;
  proto.plan = function (header, compact, force, jsonOf) {
    return plan.call(this, header, compact, force, (i) => {
      const s = jsonOf(i);
      largest = Math.max(largest, s.length);
      return s;
    });
  };
  try {
    const outs = [];
    for (const turn of [1, 2]) {
      const eng = await engineFor({ stateDir });
      const res = await eng.assemble({ sessionId: "s-hist", sessionKey: "agent:main:hist", messages: history.map((m) => ({ ...m })), model: "deepseek-v4-flash", tokenBudget: 1_000_000 });
      assert.equal(res.messages.length, history.length, `turn ${turn}: every message kept`);
      outs.push(res.messages[2]);
    }
    assert.ok(largest > 0, "the core read the history");
    assert.ok(largest < OVERSIZE_CHARS, `the core was handed at most ${largest} chars per message (result ${big.length})`);
    const text = outs[0].content[0].text;
    assert.ok(text.length < OVERSIZE_CHARS && text.startsWith("first line\n") && text.endsWith("last line\n"), "the model sees the cut copy, both ends kept");
    assert.deepEqual(outs[1], outs[0], "the same bytes on the next turn (the cached prefix holds)");
    const id = /every byte is in artifact ([0-9a-f]{40})/.exec(text)?.[1];
    assert.ok(id, "the cut copy names its artifact");
    assert.equal(readSessionArtifact(stateDir, "agent:main:hist", id), big, "every byte recoverable by the session");
    assert.equal(history[2].content[0].text, big, "the host's message is not changed");
  } finally {
    proto.plan = plan;
  }
});

test("a history tool result is copied for the core only when something in it is over the cut size (hasOversized agrees with cutOversized)", () => {
  const big = "x".repeat(OVERSIZE_CHARS + 1);
  const at = (depth, leaf) => {
    let v = leaf;
    for (let i = 0; i < depth; i++) v = i % 2 ? [v] : { k: v };
    return v;
  };
  const cases = [
    { role: "toolResult", content: [{ type: "text", text: "small" }] },
    { role: "toolResult", content: [{ type: "text", text: big }] },
    { role: "toolResult", content: [{ type: "image", text: big }] },
    { role: "toolResult", content: "not an array", details: { a: "b" } },
    { role: "toolResult", content: [], details: big },
    ...[0, 1, 2, 3, 4, 5, 6, 7].map((d) => ({ role: "toolResult", content: [], details: at(d, big) })),
    { role: "toolResult", content: [], details: Object.create({ inherited: big }) },
    { role: "toolResult", content: [], details: [1, null, undefined, "s", { x: [big] }] },
  ];
  const stateDir = tempDir();
  let cut = 0;
  for (const [i, payload] of cases.entries()) {
    const { cuts } = cutOversized(stateDir, payload, { tool: "t", callId: `c${i}`, session: "s", sessionId: "s" });
    assert.equal(hasOversized(payload), cuts.length > 0, `case ${i}`);
    cut += cuts.length > 0;
  }
  assert.ok(cut >= 4 && cut < cases.length, `both kinds of case are covered (${cut} cut)`);
});
