// The README's Uninstall section, step by step as written, in a real OpenClaw 2026.9.6: after a
// turn whose read result was shrunk,
//  1. `cachefold status` names the session, `restore --out` and `export --out` (outside the state
//     dir) keep its originals: the restored copy holds the file's full text;
//  2. `cachefold gc --all --yes` removes sessions/, artifacts/, ... while the copies stay;
//  3. `plugins uninstall cachefold` fails without a terminal and `--force`, succeeds with it,
//     and leaves the context-engine slot on legacy;
//  4. what remains is what the README says: `plugins.entries.cachefold` = {enabled: false}
//     (removed by `config unset`) and the state dir (removed by `rm -r`); the cachefold command
//     is gone.
// Skipped unless CACHEFOLD_E2E=1 (`.ci/e2e test tests/e2e/uninstall.test.mjs`).
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { Harness } from "./lib/harness.mjs";
import { scriptMarker } from "./lib/script.mjs";
import { makeTextFile } from "./lib/scenarios.mjs";

const SKIP = process.env.CACHEFOLD_E2E === "1" ? false : "set CACHEFOLD_E2E=1 to run the real-OpenClaw e2e suite";
const log = (s) => process.stderr.write(`${s}\n`);
const OWNED = ["sessions", "artifacts", "lessons", "reports", "exports", "restored"];

function json(r, what) {
  assert.ok(!r.timedOut, `${what}: the command timed out after ${r.ms} ms`);
  const text = String(r.stdout);
  try {
    return JSON.parse(text.slice(Math.max(0, text.indexOf("{"))));
  } catch {
    assert.fail(`${what}: not JSON (exit ${r.code}): ${text.slice(0, 400)} ${String(r.stderr).slice(0, 400)}`);
  }
}

test("uninstall as the README writes it: originals kept, state removed, plugin gone, what remains as described", { skip: SKIP, timeout: 3_600_000 }, async () => {
  // 40 KB: over the read tool's 12,000-char threshold, so the result is shrunk to a preview.
  const big = makeTextFile(24, 40_000);
  const h = await Harness.create({ engine: "cachefold", log, keep: process.env.CACHEFOLD_E2E_KEEP === "1", files: { "big.md": big } });
  try {
    await h.startGateway();
    await h.turn("un", `turn 1: read the big file\n\n${scriptMarker({ steps: [{ read: "big.md" }], reply: "I read it." })}`);
    await h.turn("un", "turn 2: thanks");
    const sessionId = h.turns[0].sessionId;
    assert.ok(sessionId, "the turn's session id");
    const stateDir = path.join(h.state, "cachefold");
    // The shrunk result's full text (the largest artifact).
    const artifacts = fs
      .readdirSync(h.artifactsDir())
      .filter((d) => /^[0-9a-f]{2}$/.test(d))
      .flatMap((d) => fs.readdirSync(path.join(h.artifactsDir(), d)).filter((f) => /^[0-9a-f]{40}$/.test(f)).map((f) => path.join(h.artifactsDir(), d, f)));
    assert.ok(artifacts.length > 0, "the read result was shrunk and its artifact stored");
    const original = artifacts.map((f) => fs.readFileSync(f, "utf8")).sort((a, b) => b.length - a.length)[0];

    // 1. Keep what you want, while cachefold is still enabled.
    const status = json(await h.oc(["cachefold", "status", "--json"]), "status");
    assert.ok(JSON.stringify(status).includes(sessionId), `status lists ${sessionId}`);
    const keep = path.join(h.dir, "keep");
    const restored = path.join(keep, "cachefold-restored", `${sessionId}.jsonl`);
    const exported = path.join(keep, "cachefold-export", `${sessionId}.json`);
    const r = json(await h.oc(["cachefold", "restore", sessionId, "--out", restored, "--json"]), "restore");
    assert.ok(r.restored >= 1, `restore replaced ${r.restored} previews`);
    await h.oc(["cachefold", "export", sessionId, "--out", exported]);
    assert.ok(fs.readFileSync(restored, "utf8").includes(JSON.stringify(original).slice(1, -1)), "the restored copy holds the shrunk result's full text");
    assert.equal(JSON.parse(fs.readFileSync(exported, "utf8")).sessionId, sessionId);

    // 2. Remove what cachefold stored.
    const dry = json(await h.oc(["cachefold", "gc", "--all", "--dry-run", "--json"]), "gc --all --dry-run");
    assert.ok(dry.wouldRemove.length > 0, "gc --all --dry-run lists what it would remove");
    assert.ok(fs.existsSync(path.join(stateDir, "artifacts")), "the dry run removed nothing");
    await h.oc(["cachefold", "gc", "--all", "--yes"]);
    for (const d of OWNED) assert.equal(fs.existsSync(path.join(stateDir, d)), false, `${d}/ removed`);
    assert.ok(fs.existsSync(restored) && fs.existsSync(exported), "the copies written outside the state dir stay");

    // 3. Uninstall: without a terminal it needs --force.
    const asked = await h.oc(["plugins", "uninstall", "cachefold"], { allowFail: true });
    assert.notEqual(asked.code, 0, "plugins uninstall without --force and without a terminal fails");
    assert.equal(h.readConfig().plugins?.slots?.contextEngine, "cachefold", "the refused uninstall changed nothing");
    await h.oc(["plugins", "uninstall", "cachefold", "--force"]);
    const after = h.readConfig();
    assert.equal(after.plugins?.slots?.contextEngine ?? "legacy", "legacy", "the slot is back on legacy");

    // 4. What remains, and how to remove it.
    assert.deepEqual(after.plugins?.entries?.cachefold, { enabled: false }, "the uninstall marker");
    await h.oc(["config", "unset", "plugins.entries.cachefold"]);
    assert.equal(h.readConfig().plugins?.entries?.cachefold, undefined, "config unset removed the entry");
    assert.ok(fs.existsSync(stateDir), "the state dir is still there");
    log(`state dir after gc --all and uninstall: ${JSON.stringify(fs.readdirSync(stateDir))}`);
    fs.rmSync(stateDir, { recursive: true }); // the README's `rm -r`
    const gone = await h.oc(["cachefold", "status"], { allowFail: true });
    assert.notEqual(gone.code, 0, "the cachefold command went with the plugin");
  } finally {
    await h.close();
  }
});
