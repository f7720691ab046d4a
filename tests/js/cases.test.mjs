// The engine cases of tests/cases/*.json through the shipped wasm (js/core.js's gateway), the
// same files `cargo test --test cases` runs on the native core (format: tests/cases/README.md).
import test from "node:test";
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { pkgSkip } from "./helpers.mjs";

const DIR = new URL("../cases/", import.meta.url);
const T0 = 1_763_900_000_000;

function text(t) {
  if (typeof t === "string") return t;
  if (t && typeof t.$repeat === "string") return t.$repeat.repeat(t.times);
  throw new Error(`bad text ${JSON.stringify(t)}`);
}

function expand(m, pos) {
  const timestamp = T0 + 1000 * pos;
  const usage = { input: 0, output: 10, cacheRead: 0, cacheWrite: 0 };
  if ("$user" in m) return { role: "user", content: [{ type: "text", text: text(m.$user) }], timestamp };
  if ("$reply" in m) return { role: "assistant", content: [{ type: "text", text: text(m.$reply) }], stopReason: "stop", timestamp, usage };
  if ("$call" in m) {
    const [id, name, args] = m.$call;
    return { role: "assistant", content: [{ type: "toolCall", id, name, arguments: args }], stopReason: "toolUse", timestamp, usage };
  }
  if ("$result" in m) {
    const [id, name, t] = m.$result;
    return { role: "toolResult", toolCallId: id, toolName: name, content: [{ type: "text", text: text(t) }], isError: false, timestamp };
  }
  return m;
}

// Independent of the core's validator (same rule as tests/cases.rs).
function pairingProblem(out) {
  for (let k = 0; k < out.length; ) {
    const m = out[k];
    if (m.role === "toolResult") return `orphan result at ${k}`;
    if (m.role !== "assistant") {
      k += 1;
      continue;
    }
    const ids = (m.content ?? []).filter((p) => p.type === "toolCall").map((p) => p.id);
    k += 1;
    while (ids.length) {
      const r = out[k];
      if (!r) return "call without result at end";
      if (r.role !== "toolResult") return `call without result before ${k}`;
      const at = ids.indexOf(r.toolCallId);
      if (at < 0) return `foreign result at ${k}`;
      ids.splice(at, 1);
      k += 1;
    }
  }
  return null;
}

// The core's own driver, as js/engine.js calls it.
function plan(session, head, history) {
  const p = session.plan(JSON.stringify(head), false, false, (i) => history[i]);
  assert.ok(!p.needFull, "needFull with every index");
  return p;
}

const files = existsSync(DIR) ? readdirSync(DIR).filter((f) => f.endsWith(".json")).sort() : [];

test("the case files are there", () => assert.ok(files.length >= 5, `cases: ${files.length}`));

// Every key a case may use: a misspelt expectation would otherwise check nothing.
const KEYS = {
  turn: ["replace", "remove", "evict", "front", "append", "expect"],
  expect: ["folds", "passthrough", "pairingValid", "extendsPrevious", "headUnchanged", "contains", "divergence", "repairsAtLeast", "maxTokensAfter"],
  expectOverall: ["foldsAtLeast"],
};
const unknownKeys = (obj, known) => Object.keys(obj ?? {}).filter((k) => !known.includes(k));

for (const file of files) {
  test(`case ${file}: every key is known and some turn expects something`, () => {
    const c = JSON.parse(readFileSync(new URL(file, DIR), "utf8"));
    c.turns.forEach((turn, t) => {
      assert.deepEqual(unknownKeys(turn, KEYS.turn), [], `${file} turn ${t}`);
      assert.deepEqual(unknownKeys(turn.expect, KEYS.expect), [], `${file} turn ${t} expect`);
    });
    assert.deepEqual(unknownKeys(c.expectOverall, KEYS.expectOverall), [], `${file} expectOverall`);
    const expectations = c.turns.reduce((n, turn) => n + Object.keys(turn.expect ?? {}).length, 0) + Object.keys(c.expectOverall ?? {}).length;
    assert.ok(expectations > 0, `${file} expects nothing`);
  });

  test(`case ${file} on the wasm core`, { skip: pkgSkip() }, async () => {
    const { loadCore } = await import("../../js/core.js");
    const core = await loadCore();
    const c = JSON.parse(readFileSync(new URL(file, DIR), "utf8"));
    const config = core.parseConfig(JSON.stringify(c.config ?? {}));
    const session = new core.Session(JSON.stringify(config), c.name);
    const history = [];
    let prev = null;
    let foldsTotal = 0;
    try {
      c.turns.forEach((turn, t) => {
        const at = (msg) => `${file} turn ${t}: ${msg}`;
        for (const [k, v] of Object.entries(turn.replace ?? {})) history[Number(k)] = JSON.stringify(expand(v, Number(k)));
        if (turn.remove !== undefined) history.splice(turn.remove, 1);
        if (turn.evict !== undefined) history.splice(0, turn.evict);
        (turn.front ?? []).forEach((m, k) => history.splice(k, 0, JSON.stringify(expand(m, k))));
        const before = history.length;
        for (const m of turn.append ?? []) history.push(JSON.stringify(expand(m, history.length)));
        const head = { count: history.length, model: c.model ?? null, tokenBudget: c.tokenBudget ?? null, nowMs: T0 + 1000 * history.length };
        const p = plan(session, head, history);
        const out = p.order.map((i) => (i >= 0 ? history[i] : p.synthetic[-i - 1]));
        const e = turn.expect ?? {};
        foldsTotal += p.report.folds.length;
        if (e.folds !== undefined) assert.equal(p.report.folds.length, e.folds, at("folds"));
        if (e.passthrough !== undefined) assert.equal(p.passthrough, e.passthrough, at("passthrough"));
        if (e.pairingValid) assert.equal(pairingProblem(out.map((j) => JSON.parse(j))), null, at("pairing"));
        if (e.extendsPrevious) assert.deepEqual(out.slice(0, prev.out.length), prev.out, at("previous output is not a prefix"));
        if (e.headUnchanged) assert.deepEqual(out.slice(0, prev.headLen), prev.out.slice(0, prev.headLen), at("pinned head changed"));
        for (const n of e.contains ?? []) assert.ok(out.some((j) => j.includes(n)), at(`output lacks ${n}`));
        if (e.divergence !== undefined) assert.equal(p.report.divergence?.action, e.divergence, at("divergence"));
        if (e.repairsAtLeast !== undefined) assert.ok(p.report.repairs.length >= e.repairsAtLeast, at("repairs"));
        if (e.maxTokensAfter !== undefined) assert.ok(p.report.tokensAfter <= e.maxTokensAfter, at("tokensAfter"));
        session.commitTurn(JSON.stringify({ advancementKey: `turn-${t}`, nowMs: T0 + 1000 * history.length }), history.slice(before));
        session.takeJournal();
        prev = { out, headLen: p.report.headLen };
      });
      if (c.expectOverall?.foldsAtLeast !== undefined) assert.ok(foldsTotal >= c.expectOverall.foldsAtLeast, `${file}: folds ${foldsTotal}`);
    } finally {
      session.free();
    }
  });
}
