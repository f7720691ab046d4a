#!/usr/bin/env node
// The real-runtime e2e matrix: every cell (lib/matrix.mjs CELLS) on legacy and on cachefold with
// ownsCompaction true and false, same script; one markdown table on stdout, JSON in
// bench-out/e2e/matrix.json. Runs are sequential (one OpenClaw at a time).
//
//   npm run e2e -- --matrix [--cells repro-48k,restart] [--turns N] [--variants legacy,true,false]
//        [--window TOKENS] [--read-kb A-B] [--exec-kb A-B] [--tools N] [--seed N]
//        [--plugin-dir DIR] [--json FILE] [--keep] [--quiet] [--list]
//
// --variants picks from: legacy, true (ownsCompaction=true), false (ownsCompaction=false).
// --window, --read-kb, --exec-kb, --tools (read+exec pairs per work turn) and --seed replace the
// cells' own values, to run a cell in a shape it was not written for.
// Exit status 1 when any cachefold row fails its cell's assertions (legacy rows are reported,
// and a failing legacy row is flagged, but the baseline does not fail the run).

import fs from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { CELLS, VARIANTS, runCell, matrixRow, matrixTable, cellScenario } from "./lib/matrix.mjs";
import { REPO_ROOT, locateToolchain } from "./lib/env.mjs";

const { values: a } = parseArgs({
  options: {
    matrix: { type: "boolean", default: true },
    cells: { type: "string" },
    turns: { type: "string" },
    window: { type: "string" },
    "read-kb": { type: "string" },
    "exec-kb": { type: "string" },
    tools: { type: "string" },
    seed: { type: "string" },
    variants: { type: "string", default: "legacy,true,false" },
    "plugin-dir": { type: "string", default: process.env.CACHEFOLD_E2E_PLUGIN_DIR || REPO_ROOT },
    json: { type: "string", default: path.join(REPO_ROOT, "bench-out", "e2e", "matrix.json") },
    keep: { type: "boolean", default: false },
    quiet: { type: "boolean", default: false },
    list: { type: "boolean", default: false },
    help: { type: "boolean", short: "h", default: false },
  },
});

if (a.help) {
  console.log(fs.readFileSync(new URL(import.meta.url), "utf8").split("\n").slice(1, 12).map((l) => l.replace(/^\/\/ ?/, "")).join("\n"));
  process.exit(0);
}
const names = a.cells ? a.cells.split(",").map((s) => s.trim()).filter(Boolean) : Object.keys(CELLS);
const unknown = names.filter((n) => !CELLS[n]);
if (unknown.length) {
  console.error(`unknown cell(s): ${unknown.join(", ")}; cells: ${Object.keys(CELLS).join(", ")}`);
  process.exit(2);
}
const pick = { legacy: VARIANTS[0], true: VARIANTS[1], false: VARIANTS[2] };
const variants = a.variants.split(",").map((s) => pick[s.trim()] ?? (console.error(`unknown variant ${s}`), process.exit(2)));
const count = (flag, v) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) (console.error(`--${flag} wants a whole number >= 1, got ${v}`), process.exit(2));
  return n;
};
const turns = a.turns ? count("turns", a.turns) : undefined;
const range = (flag, v) => {
  const m = /^(\d+)(?:-(\d+))?$/.exec(v);
  if (!m || Number(m[2] ?? m[1]) < Number(m[1])) (console.error(`--${flag} wants KB or A-B (A <= B), got ${v}`), process.exit(2));
  return [Number(m[1]), Number(m[2] ?? m[1])];
};
const script = {
  ...(a["read-kb"] ? { readKB: range("read-kb", a["read-kb"]) } : {}),
  ...(a["exec-kb"] ? { execKB: range("exec-kb", a["exec-kb"]) } : {}),
  ...(a.tools ? { toolsPerTurn: count("tools", a.tools) } : {}),
  ...(a.seed ? { seed: count("seed", a.seed) } : {}),
};
const window = a.window ? count("window", a.window) : undefined;
const overrides = ["window", "read-kb", "exec-kb", "tools", "seed"].map((k) => (a[k] ? `, --${k} ${a[k]}` : "")).join("");
/** The cell as this invocation runs it (the overrides above applied). */
const cellOf = (n) => ({ ...CELLS[n], ...(window ? { window } : {}), script: { ...CELLS[n].script, ...script } });
if (a.list) {
  for (const n of names) console.log(`${n}: window ${cellOf(n).window}, ${cellScenario(n, cellOf(n), { turns }).turns.length} turns, ~${CELLS[n].estimate} min per engine run`);
  process.exit(0);
}
try {
  locateToolchain();
} catch (e) {
  console.error(e.message);
  process.exit(2);
}

const log = a.quiet ? () => {} : (s) => console.error(s);
const est = names.reduce((s, n) => s + CELLS[n].estimate * (turns ? turns / (CELLS[n].script.turns ?? 18) : 1), 0) * variants.length;
log(`matrix: ${names.length} cells x ${variants.length} variants, estimate ~${Math.round(est)} min`);
const rows = [];
const t0 = Date.now();
for (const name of names) {
  let legacy = null;
  for (const v of variants) {
    log(`--- ${name} / ${v.label}`);
    let run;
    try {
      run = await runCell(name, cellOf(name), v, { turns, pluginDir: a["plugin-dir"], keep: a.keep, log });
    } catch (e) {
      log(`run failed: ${e.stack ?? e}`);
      run = { cell: name, label: v.label, variant: v, error: String(e.message ?? e).split("\n")[0] };
    }
    if (v.engine === "legacy") legacy = run;
    const row = matrixRow(run, legacy);
    rows.push(row);
    log(`    ${row.ok ? "pass" : `FAIL: ${row.failures.join("; ")}`} (${row.minutes?.toFixed(1) ?? "?"} min)${a.keep && run.dir ? ` kept: ${run.dir}` : ""}`);
    // Keep matrix.json current, so an interrupted run still leaves its rows.
    writeJson(rows);
  }
}
console.log(`\n### cachefold e2e matrix (OpenClaw 2026.9.6 Gateway, fake provider: DeepSeek DS-unit strict cache, OpenAI mode in the cells that set a provider)${turns ? `, --turns ${turns}` : ""}${overrides}\n`);
console.log(matrixTable(rows));
console.log(`\n${rows.length} runs in ${((Date.now() - t0) / 60_000).toFixed(1)} min; per run: ${rows.map((r) => `${r.cell}/${r.label.replace("cachefold ", "")} ${r.minutes?.toFixed(1) ?? "?"}`).join(", ")}`);
console.log(`JSON: ${a.json}`);
process.exit(rows.some((r) => !r.ok && !r.label.startsWith("legacy")) ? 1 : 0);

function writeJson(rs) {
  fs.mkdirSync(path.dirname(a.json), { recursive: true });
  fs.writeFileSync(a.json, JSON.stringify({ generatedAt: new Date().toISOString(), turns: turns ?? null, cells: names, rows: rs }, null, 2));
}
