// The CI subset of the e2e matrix (the full matrix: `npm run e2e -- --matrix`, tests/e2e/matrix.mjs).
// Skipped unless CACHEFOLD_E2E=1 (`.ci/e2e test`, part of `npm test`).
//
// Budget (2 shared cores, measured): each engine run is ~40 s of setup (npm pack, plugins install,
// one config set, Gateway start) plus ~3 s per turn (8 tool rounds each).
//   repro-48k,   18 turns: legacy + cachefold ownsCompaction true + false   4.8 min measured (1.5+1.4+1.6)
//   compact,     12 turns: legacy + cachefold (default config)              ~2.5 min
//   window-128k, 12 turns: cachefold (the host evicts old messages)        ~1.2 min
// Total ~8.5 min (the run that fails fast takes about as long as a passing one). CACHEFOLD_E2E_MATRIX_CELLS=a,b picks other cells (same variants),
// CACHEFOLD_E2E_MATRIX_TURNS=N shortens every cell.

import { describe, it, before } from "node:test";
import assert from "node:assert/strict";
import { CELLS, VARIANTS, runCell, judgeRun, matrixRow, matrixTable } from "./lib/matrix.mjs";
import { locateToolchain, REPO_ROOT } from "./lib/env.mjs";

const ENABLED = process.env.CACHEFOLD_E2E === "1";
const SKIP = ENABLED ? false : "set CACHEFOLD_E2E=1 to run the real-OpenClaw e2e matrix subset";
const KEEP = process.env.CACHEFOLD_E2E_KEEP === "1";
const PLUGIN_DIR = process.env.CACHEFOLD_E2E_PLUGIN_DIR || REPO_ROOT;
const TURNS = process.env.CACHEFOLD_E2E_MATRIX_TURNS ? Number(process.env.CACHEFOLD_E2E_MATRIX_TURNS) : undefined;
const log = (s) => process.stderr.write(`${s}\n`);

/** cell → [variants, turns] run by default in CI. */
const DEFAULT_SUBSET = {
  "repro-48k": [VARIANTS, 18],
  compact: [[VARIANTS[0], { label: "cachefold (default config)", engine: "cachefold" }], 12],
  // OpenClaw drops the oldest messages after ~240 at this window: the planted head fact must survive.
  "window-128k": [[VARIANTS[1]], 12],
};
const SUBSET = process.env.CACHEFOLD_E2E_MATRIX_CELLS
  ? Object.fromEntries(process.env.CACHEFOLD_E2E_MATRIX_CELLS.split(",").map((c) => [c.trim(), [VARIANTS, undefined]]))
  : DEFAULT_SUBSET;

for (const [name, [variants, turns]] of Object.entries(SUBSET)) {
  describe(`e2e matrix cell ${name}`, { skip: SKIP || (CELLS[name] ? false : `unknown cell ${name}`), timeout: 30 * 60_000 }, () => {
    const runs = [];
    before(async () => {
      locateToolchain();
      for (const v of variants) {
        let run;
        try {
          run = await runCell(name, CELLS[name], v, { turns: TURNS ?? turns, pluginDir: PLUGIN_DIR, keep: KEEP, log });
        } catch (e) {
          run = { cell: name, label: v.label, variant: v, error: String(e.stack ?? e) };
        }
        runs.push(run);
        if (KEEP && run.dir) log(`kept: ${run.dir}`);
      }
      const legacy = runs.find((r) => r.variant.engine === "legacy");
      log(matrixTable(runs.map((r) => matrixRow(r, legacy))));
    });
    for (const v of variants) {
      const get = () => runs.find((r) => r.label === v.label);
      it(`${v.label}: every turn completed`, () => {
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
      it(`${v.label}: no degradation, quarantine or HTTP 400; facts recalled${v.engine === "legacy" ? "" : "; input cost below legacy"}`, () => {
        const r = get();
        const legacy = runs.find((x) => x.variant.engine === "legacy" && !x.error);
        const verdict = judgeRun(r, legacy);
        const other = verdict.failures.filter((f) => !f.startsWith("turns failed"));
        assert.deepEqual(other, []);
      });
    }
  });
}
