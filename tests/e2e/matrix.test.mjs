// The `npm test` subset of the e2e matrix (the full matrix: `npm run e2e -- --matrix`,
// tests/e2e/matrix.mjs). Skipped unless CACHEFOLD_E2E=1 (`.ci/e2e test`, part of `npm test`).
//
// Each run guards one real host path, at the fewest turns that reach it, and asserts that it was
// reached (lib/matrix.mjs `reach`, judged by judgeRun from the engine's decision log):
//   repro-48k,   4 turns, legacy + cachefold (ownsCompaction true): a fold at a small window, and
//                the input cost below legacy's (the first fold comes in turn 1);
//   compact,     4 turns, cachefold: the user's /compact typed into the chat reaches cachefold's
//                compact() (trigger "manual");
//   restart,     6 turns, cachefold: the Gateway restarted before turn 3; that turn's first
//                assemble carries the state the earlier process persisted (reach "restored": it
//                ingests only the messages that state lacks);
//   window-128k, 11 turns, cachefold: OpenClaw drops its oldest messages (first in turn 9) and
//                cachefold recognises the eviction (divergence "host_evicted"); the planted head
//                fact survives;
//   anthropic-sonnet, 4 turns, cachefold: OpenClaw on an Anthropic Messages endpoint with its
//                cache_control marks; a fold, and no mark move that costs a write (markMeasure);
//   openai-gpt5, 4 turns, cachefold: a gpt-5 model on the OpenAI cache mode; a fold.
// (The two provider cells run without their legacy baseline here, ~1.1 min each; the cost against
// legacy and the idle-gap cell, ~3.5 min a run for its 75 s pause, are in the full matrix.)
// Cells with the same host configuration share one Gateway as separate sessions (repro-48k,
// compact and restart on cachefold; restart runs last, as it restarts that Gateway), so the
// subset starts five Gateways. The ownsCompaction=false variant and
// the other cells run in the full matrix. CACHEFOLD_E2E_MATRIX_CELLS=a,b runs other cells instead
// (all variants, each on its own Gateway); CACHEFOLD_E2E_MATRIX_TURNS=N sets every cell's turns.

import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import { CELLS, VARIANTS, runCell, cellHarness, sameHost, judgeRun, matrixRow, matrixTable } from "./lib/matrix.mjs";
import { locateToolchain, REPO_ROOT } from "./lib/env.mjs";

const ENABLED = process.env.CACHEFOLD_E2E === "1";
const SKIP = ENABLED ? false : "set CACHEFOLD_E2E=1 to run the real-OpenClaw e2e matrix subset";
const KEEP = process.env.CACHEFOLD_E2E_KEEP === "1";
const PLUGIN_DIR = process.env.CACHEFOLD_E2E_PLUGIN_DIR || REPO_ROOT;
const TURNS = process.env.CACHEFOLD_E2E_MATRIX_TURNS ? Number(process.env.CACHEFOLD_E2E_MATRIX_TURNS) : undefined;
const log = (s) => process.stderr.write(`${s}\n`);

/** Gateways of the default subset, each with the [cell, variant, turns] runs it hosts in order. */
const DEFAULT_SUBSET = [
  { label: "48K legacy", runs: [["repro-48k", VARIANTS[0], 4]] },
  { label: "48K cachefold", runs: [["repro-48k", VARIANTS[1], 4], ["compact", VARIANTS[1], 4], ["restart", VARIANTS[1], 6]] },
  { label: "128K cachefold", runs: [["window-128k", VARIANTS[1], 11]] },
  { label: "Anthropic cachefold", runs: [["anthropic-sonnet", VARIANTS[1], 4]] },
  { label: "OpenAI cachefold", runs: [["openai-gpt5", VARIANTS[1], 4]] },
];
const SUBSET = process.env.CACHEFOLD_E2E_MATRIX_CELLS
  ? process.env.CACHEFOLD_E2E_MATRIX_CELLS.split(",").flatMap((c) => VARIANTS.map((v) => ({ label: `${c.trim()} ${v.label}`, runs: [[c.trim(), v, undefined]] })))
  : DEFAULT_SUBSET;

const runs = [];
const legacyOf = (cell) => runs.find((r) => r.cell === cell && r.variant.engine === "legacy" && !r.error);

for (const group of SUBSET) {
  describe(`e2e matrix: ${group.label}`, { skip: SKIP, timeout: 30 * 60_000 }, () => {
    const mine = [];
    let h = null;
    before(async () => {
      locateToolchain();
      for (const [name, v, turns] of group.runs) {
        assert.ok(CELLS[name], `unknown cell ${name}`);
        let run;
        try {
          // The first run makes the harness; a later one with the same host configuration joins it.
          const [firstName] = group.runs[0];
          if (group.runs.length > 1 && !h) h = await cellHarness(CELLS[firstName], v, { pluginDir: PLUGIN_DIR, keep: KEEP, log });
          if (h) assert.ok(sameHost(CELLS[name], CELLS[firstName]), `${name} cannot share ${firstName}'s Gateway`);
          run = await runCell(name, CELLS[name], v, { turns: TURNS ?? turns, pluginDir: PLUGIN_DIR, keep: KEEP, log, harness: h ?? undefined });
        } catch (e) {
          run = { cell: name, label: v.label, variant: v, error: String(e.stack ?? e) };
        }
        runs.push(run);
        mine.push(run);
        if (KEEP && run.dir) log(`kept: ${run.dir}`);
      }
      log(matrixTable(mine.map((r) => matrixRow(r, legacyOf(r.cell)))));
    });
    after(async () => {
      await h?.close({ keep: KEEP });
    });
    for (const [name, v] of group.runs) {
      const get = () => mine.find((r) => r.cell === name && r.label === v.label);
      it(`${name} / ${v.label}: every turn completed`, () => {
        const r = get();
        assert.ok(!r.error, r.error);
        const bad = r.turns.filter((t) => !t.ok);
        assert.deepEqual(
          bad.map((t) => `turn ${t.index} (${t.kind}): ${String(t.error).slice(0, 300)}`),
          [],
          `${bad.length}/${r.turnsPlanned} turns failed${r.logFindings.preflight.length ? `; gateway: ${r.logFindings.preflight[0]}` : ""}`,
        );
        assert.equal(r.turns.length, r.turnsPlanned);
      });
      it(`${name} / ${v.label}: no degradation, quarantine or HTTP 400; facts recalled${v.engine === "legacy" ? "" : "; the cell's host path reached; input cost below legacy where legacy ran"}`, () => {
        const r = get();
        assert.ok(!r.error, r.error);
        const legacyPlanned = v.engine !== "legacy" && SUBSET.some((g) => g.runs.some(([n, w]) => n === name && w.engine === "legacy"));
        assert.ok(!legacyPlanned || legacyOf(name), `${name}: the legacy baseline run is missing or failed, so the cost check cannot run`);
        const verdict = judgeRun(r, legacyOf(name));
        const other = verdict.failures.filter((f) => !f.startsWith("turns failed"));
        assert.deepEqual(other, []);
      });
    }
  });
}

// The fake provider's OpenAI mode (no OpenClaw: runs everywhere).
import { OpenAICacheSim } from "./lib/cache-sim.mjs";

describe("fake provider OpenAI mode: automatic prefix caching", () => {
  const text = (n, seed = "a") => Array.from({ length: n }, (_, i) => `${seed}${i.toString(36).padStart(3, "0")}`).join("");
  it("caches 128-token steps from 1,024 tokens, and nothing after the lifetime", () => {
    let now = 0;
    const sim = new OpenAICacheSim({ ttlMs: 5_000, now: () => now });
    const small = text(1000); // 1,000 tokens: below the minimum
    assert.deepEqual(sim.request(small), { tokens: 1000, hit: 0, miss: 1000 });
    assert.equal(sim.request(small).hit, 0, "a prompt under 1,024 tokens is never cached");
    const big = text(1500);
    assert.equal(sim.request(big).hit, 0);
    now += 4_000;
    assert.deepEqual(sim.request(big + text(10, "b")), { tokens: 1510, hit: 1408, miss: 102 }, "11 steps of 128 of the 1,500-token prefix");
    now += 4_000; // 4 s after the last use: alive (each use refreshes)
    assert.equal(sim.request(big).hit, 1408);
    now += 5_001;
    assert.equal(sim.request(big).hit, 0, "gone after 5 s idle");
    assert.equal(sim.request(text(900) + text(600, "c")).hit, 0, "a shared prefix under 1,024 tokens is no hit");
  });
});

import { idleGapMeasure } from "./lib/matrix.mjs";

describe("idle-gap measurement", () => {
  const big = (tag) => `${tag} `.repeat(2000); // ~1,000-4,000 tokens per message
  const req = (seq, t, texts, note = "default") => ({
    seq,
    t,
    status: 200,
    note,
    body: { messages: [{ role: "system", content: big("sys") }, ...texts.map((c, i) => ({ role: i % 2 ? "assistant" : "user", content: c }))] },
    usage: { prompt_tokens: 5000, prompt_cache_hit_tokens: t > 100 ? 0 : 4096, prompt_cache_miss_tokens: 904 },
  });
  const old = [big("history"), "ok"];
  const rewritten = ["[cachefold fold f1] condensed", "ok"];
  const run = (pause) => {
    const turns = [
      { index: 0, endedAt: 10, requests: [req(1, 5, [...old, "q0"])] },
      { index: 1, endedAt: 200_000, requests: [req(3, 100_000, [...rewritten, "q1"]), req(4, 100_100, [...rewritten, "q1", "a1", "more"])] },
      { index: 2, endedAt: 300_000, requests: [req(5, 250_000, [...rewritten, "q1", "a1", "more", "a2", "q2"])] },
    ];
    return { turns, runtimeEvents: [{ beforeTurn: 1, event: "idle:45000", ms: 45_000 }], requests: [...turns[0].requests, ...pause, ...turns[1].requests, ...turns[2].requests].sort((a, b) => a.seq - b.seq) };
  };
  it("no request in the lifetime before the gap request: the rewrite is free", () => {
    const g = idleGapMeasure(run([]), 30_000);
    assert.equal(g.aliveBeforeGap, false);
    assert.equal(g.extraMissAtGap, 0);
    assert.ok(g.rewriteTokens > 1000, `rewrite seen: ${g.rewriteTokens}`);
    assert.equal(g.followBreakTokens, 0);
  });
  it("a host request inside the lifetime before the gap request: its dropped prefix is the extra miss", () => {
    const g = idleGapMeasure(run([req(2, 80_000, [...old, "q0", "a0", "Skill review."])]), 30_000);
    assert.equal(g.aliveBeforeGap, true);
    assert.ok(g.extraMissAtGap > 1000, `extra miss ${g.extraMissAtGap}`);
    assert.deepEqual(g.pauseRequests.map((r) => r.seq), [2]);
  });
});
