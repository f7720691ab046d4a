#!/usr/bin/env node
// Compare context engines on one scripted session against a real OpenClaw Gateway and the fake
// DeepSeek provider. Prints a markdown table and writes JSON.
//
//   node tests/e2e/compare.mjs --scenario fold [--turns 14] [--window 48000]
//        [--engines legacy,cachefold] [--variant "ownsCompaction=false"] [--variant "name:k=v,k=v"]
//        [--config k=v ...] [--cache-mode strict|optimistic] [--plugin-dir DIR]
//        [--json FILE] [--keep] [--quiet]
//
// --variant adds a cachefold run with plugin config overrides (comma-separated key=value; a
//   key `hooks.X` goes to plugins.entries.cachefold.hooks.X, a key `oc.a.b` into openclaw.json
//   at a.b). Values parse as JSON when they can (numbers, true/false), else stay strings.
// --config applies overrides to every cachefold run.
// Runs are sequential (the machine is small). Needs Node 24 + OpenClaw (see lib/env.mjs).

import fs from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { runScenario } from "./lib/session.mjs";
import { buildScenario } from "./lib/scenarios.mjs";
import { markdownTable, FLASH_PEAK, resimulate } from "./lib/analyze.mjs";
import { REPO_ROOT, locateToolchain } from "./lib/env.mjs";

const { values: a } = parseArgs({
  options: {
    scenario: { type: "string", default: "fold" },
    turns: { type: "string" },
    window: { type: "string" },
    engines: { type: "string", default: "legacy,cachefold" },
    variant: { type: "string", multiple: true, default: [] },
    config: { type: "string", multiple: true, default: [] },
    "cache-mode": { type: "string", default: "strict" },
    "plugin-dir": { type: "string", default: REPO_ROOT },
    json: { type: "string" },
    keep: { type: "boolean", default: false },
    quiet: { type: "boolean", default: false },
    help: { type: "boolean", short: "h", default: false },
  },
});

if (a.help) {
  console.log(fs.readFileSync(new URL(import.meta.url), "utf8").split("\n").slice(1, 17).map((l) => l.replace(/^\/\/ ?/, "")).join("\n"));
  process.exit(0);
}

function parseValue(v) {
  try {
    return JSON.parse(v);
  } catch {
    return v;
  }
}

function setPath(obj, dotted, value) {
  const keys = dotted.split(".");
  let o = obj;
  for (const k of keys.slice(0, -1)) o = o[k] ??= {};
  o[keys[keys.length - 1]] = value;
}

/** "label:k=v,k=v" or "k=v,k=v" → {label, pluginConfig, pluginHooks, extraConfig} */
function parseOverrides(text, base = {}) {
  let label = null;
  let body = text;
  const m = /^([^=:,]+):(.*)$/.exec(text);
  if (m) {
    label = m[1].trim();
    body = m[2];
  }
  const out = { pluginConfig: structuredClone(base.pluginConfig ?? {}), pluginHooks: structuredClone(base.pluginHooks ?? {}), extraConfig: structuredClone(base.extraConfig ?? {}) };
  for (const kv of body.split(",").map((s) => s.trim()).filter(Boolean)) {
    const i = kv.indexOf("=");
    if (i < 0) throw new Error(`bad override "${kv}" (want key=value)`);
    const key = kv.slice(0, i).trim();
    const value = parseValue(kv.slice(i + 1).trim());
    if (key.startsWith("hooks.")) setPath(out.pluginHooks, key.slice(6), value);
    else if (key.startsWith("oc.")) setPath(out.extraConfig, key.slice(3), value);
    else setPath(out.pluginConfig, key, value);
  }
  return { label: label ?? `cachefold ${body}`, ...out };
}

try {
  locateToolchain();
} catch (e) {
  console.error(e.message);
  process.exit(2);
}

const scenario = buildScenario(a.scenario, { turns: a.turns ? Number(a.turns) : undefined });
const window = a.window ? Number(a.window) : scenario.defaultWindow;
const common = a.config.length ? parseOverrides(a.config.join(",")) : { pluginConfig: {}, pluginHooks: {}, extraConfig: {} };
const specs = [];
for (const e of a.engines.split(",").map((s) => s.trim()).filter(Boolean)) {
  if (e === "legacy") specs.push({ label: "legacy", engine: "legacy" });
  else specs.push({ label: e, engine: e, pluginConfig: common.pluginConfig, pluginHooks: common.pluginHooks, extraConfig: common.extraConfig });
}
for (const v of a.variant) {
  const o = parseOverrides(v, common);
  specs.push({ label: o.label, engine: "cachefold", pluginConfig: o.pluginConfig, pluginHooks: o.pluginHooks, extraConfig: o.extraConfig });
}

const log = a.quiet ? () => {} : (s) => console.error(s);
log(`scenario ${scenario.name}: ${scenario.turns.length} turns, window ${window}, cache model DS-unit ${a["cache-mode"]}, ${specs.length} runs`);
const results = [];
for (const spec of specs) {
  log(`--- ${spec.label}`);
  try {
    const r = await runScenario(spec, scenario, { window, pluginDir: a["plugin-dir"], keep: a.keep, log, cacheMode: a["cache-mode"] });
    results.push(r);
    if (a.keep) log(`    kept: ${r.dir}`);
  } catch (e) {
    console.error(`run ${spec.label} failed: ${e.stack ?? e}`);
    results.push({ label: spec.label, spec, error: String(e.message ?? e) });
  }
}

const ok = results.filter((r) => r.summary);
console.log(`\n### ${scenario.name}: ${scenario.turns.length} turns, context window ${window}, DS-unit ${a["cache-mode"]} (128-token units)\n`);
console.log(markdownTable(ok, FLASH_PEAK));
const legacy = ok.find((r) => r.spec.engine === "legacy");
if (legacy) {
  console.log("");
  for (const r of ok) {
    if (r === legacy) continue;
    const s = r.summary;
    console.log(`- ${r.label}: input cost ${(s.inputCostUsd / legacy.summary.inputCostUsd).toFixed(3)}× legacy, prompt tokens ${(s.promptTokens / legacy.summary.promptTokens).toFixed(3)}× legacy`);
  }
}
const other = a["cache-mode"] === "strict" ? "optimistic" : "strict";
for (const r of ok) r.resim = resimulate(r.requests, { mode: other });
console.log("");
console.log(`Same requests under DS-unit ${other}: ${ok.map((r) => `${r.label} hit ${r.resim.hitPct.toFixed(1)}%, $${r.resim.inputCostUsd.toFixed(4)}`).join("; ")}`);
if (legacy) {
  for (const r of ok) if (r !== legacy) console.log(`- ${r.label} (${other}): input cost ${(r.resim.inputCostUsd / legacy.resim.inputCostUsd).toFixed(3)}× legacy`);
}
console.log("");
for (const r of ok) {
  const s = r.summary;
  console.log(`- ${r.label}: turns ok ${s.turnsOk}/${s.turns}, turn ms mean ${s.turnMsMean} max ${s.turnMsMax}, setup ${r.setupMs} ms, gateway ready ${r.gatewayReadyMs} ms, requests main/summary/flush ${s.mainRequests}/${s.summaryRequests}/${s.flushRequests}, output tokens ${s.completionTokens}, assemble calls/turn ${r.assemblesPerTurn.join(",") || "-"}, prefix breaks ${s.prefixBreaks.length}${s.prefixBreaks.length ? ` (first: request ${s.prefixBreaks[0].seq} at message ${s.prefixBreaks[0].message} ${s.prefixBreaks[0].role})` : ""}, last-turn check: ${s.checkReply ?? "n/a"}`);
}
for (const r of results.filter((x) => x.error)) console.log(`- ${r.label}: FAILED: ${r.error.split("\n")[0]}`);

const outFile = a.json ?? path.join(REPO_ROOT, "bench-out", "e2e", `compare-${scenario.name}.json`);
fs.mkdirSync(path.dirname(outFile), { recursive: true });
const json = {
  scenario: scenario.name,
  turns: scenario.turns.length,
  window,
  cacheMode: a["cache-mode"],
  price: FLASH_PEAK,
  generatedAt: new Date().toISOString(),
  runs: results.map((r) =>
    r.summary
      ? {
          label: r.label,
          spec: r.spec,
          summary: r.summary,
          [`${other}Cache`]: r.resim,
          setupMs: r.setupMs,
          gatewayReadyMs: r.gatewayReadyMs,
          totalMs: r.totalMs,
          events: countEvents(r.events),
          assemblesPerTurn: r.assemblesPerTurn,
          turnMs: r.turns.map((t) => t.ms),
          artifacts: r.artifacts.length,
          dir: a.keep ? r.dir : null,
        }
      : { label: r.label, spec: r.spec, error: r.error },
  ),
};
fs.writeFileSync(outFile, JSON.stringify(json, null, 2));
console.log(`\nJSON: ${outFile}`);
process.exit(results.some((r) => r.error) ? 1 : 0);

function countEvents(events) {
  const c = {};
  for (const e of events ?? []) c[e.event] = (c[e.event] ?? 0) + 1;
  return c;
}
