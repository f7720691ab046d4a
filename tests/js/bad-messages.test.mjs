// Issue 10, "nothing stuck": a message JSON.stringify cannot handle (BigInt, cycle, undefined)
// or the core cannot read (null, a number, a lone surrogate) must not disable the session.
// Through the real wasm build in pkg/.
import test from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { join } from "node:path";
import { fakeApi, tempDir, user, assistantText, assistantCall, toolResult, pkgSkip } from "./helpers.mjs";
import { messageJson } from "../../js/engine.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const skip = pkgSkip();

test("messageJson: stable placeholder text for what JSON.stringify cannot handle", () => {
  assert.equal(messageJson({ a: 1 }), '{"a":1}');
  assert.equal(messageJson({ n: 12345678901234567890n }), '{"n":"12345678901234567890n"}');
  const cyc = { role: "toolResult", details: {} };
  cyc.details.self = cyc;
  assert.equal(messageJson(cyc), '{"role":"toolResult","details":{"self":"[Circular]"}}');
  assert.equal(messageJson(cyc), messageJson(cyc), "stable");
  // The same object twice (not a cycle) is kept.
  const shared = { x: 1 };
  assert.equal(messageJson({ a: shared, b: shared }), '{"a":{"x":1},"b":{"x":1}}');
  assert.equal(messageJson(undefined), "null");
  assert.equal(messageJson(null), "null");
  assert.equal(messageJson(7), "7");
});

test("one bad message: the session keeps folding and the host objects come back untouched", { skip }, async () => {
  const stateDir = tempDir();
  const logFile = join(stateDir, "log.jsonl");
  const { default: plugin } = await import("../../js/index.js");
  const { api, reg } = fakeApi({ stateDir, logFile, tailTokens: 1000, minFoldTokens: 500, expectedRemainingCalls: 100 });
  plugin.register(api);
  const eng = await reg.engines.cachefold({});
  const cyc = toolResult("c2", "read", "cyclic details");
  cyc.details = { parent: null };
  cyc.details.parent = cyc;
  const big = toolResult("c3", "read", "bigint details");
  big.details = { bytes: 2n ** 70n };
  const cut = toolResult("c4", "read", "cut inside an emoji: \ud83d");
  const bad = { 2: cyc, 3: big, 4: cut };
  const hist = [];
  let folds = 0;
  let passthrough = 0;
  for (let k = 0; k < 30; k++) {
    hist.push(user(`step ${k}: read file_${k}.txt`), assistantCall(`c${k}`, "read", { path: `file_${k}.txt` }));
    hist.push(bad[k] ?? toolResult(`c${k}`, "read", `contents of file ${k}\n`.repeat(60)));
    if (k === 5) hist.push(null);
    if (k === 6) hist.push(42);
    hist.push(assistantText(`read file_${k}.txt`));
    const res = await eng.assemble({ sessionId: "s-bad", messages: hist, model: "deepseek-v4-flash", tokenBudget: 100000 });
    const ev = readFileSync(logFile, "utf8").trim().split("\n").map((l) => JSON.parse(l)).filter((e) => e.sessionId === "s-bad" && (e.event === "assemble" || e.event === "error")).pop();
    assert.equal(ev.event, "assemble", `turn ${k}: ${JSON.stringify(ev).slice(0, 300)}`);
    if (ev.passthrough) passthrough += 1;
    folds += ev.report?.folds?.length ?? 0;
    // Host objects come back as the same objects (so their bytes are as sent); everything
    // else is ours (fold records, pairing repairs).
    for (const m of res.messages) {
      const ours = m && typeof m === "object" && !hist.includes(m) && (m.role === "user" || m.model === "cachefold-repair" || m.isError === true);
      assert.ok(hist.includes(m) || ours, `turn ${k}: ${messageJson(m).slice(0, 120)}`);
    }
    const st = await eng.commitTurn({ sessionId: "s-bad", advancementKey: `t${k}`, messages: hist.slice(-4) });
    assert.equal(st.status, "committed");
  }
  assert.equal(passthrough, 0);
  assert.ok(folds >= 3, `only ${folds} folds`);
  assert.equal(reg.warnings.filter((w) => w.includes("cannot read exactly")).length, 1, "warned once");
  assert.equal(big.details.bytes, 2n ** 70n, "host object untouched");
  assert.equal(cyc.details.parent, cyc);
});
