// Huge tool results never reach the wasm core whole (issue 24, item 8): a result over
// OVERSIZE_CHARS is stored as an artifact first, then cut to its two ends around a line naming
// that artifact, so the hooks' wasm memory does not grow to twice the result and the shrink does
// not run for seconds; every byte stays recoverable by the session that made the call.
import test from "node:test";
import assert from "node:assert/strict";
import { readSessionArtifact } from "../../js/artifacts.js";
import { OVERSIZE_CHARS } from "../../js/oversize.js";
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
