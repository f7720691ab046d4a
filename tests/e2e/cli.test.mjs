// `openclaw cachefold …` in a real OpenClaw 2026.9.6 (registered through api.registerCli and the
// manifest's cliCommands): after a few scripted turns, `status --json` reports the prompt and hit
// tokens the fake provider billed, `doctor` passes on the good setup and names each planted fault
// (slot unset, model not matched, contextPruning cache-ttl, cacheRetention none),
// and `lessons list` answers. Skipped unless CACHEFOLD_E2E=1. About 1.5 min.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import { Harness } from "./lib/harness.mjs";

const SKIP = process.env.CACHEFOLD_E2E === "1" ? false : "set CACHEFOLD_E2E=1 to run the real-OpenClaw e2e suite";
const log = (s) => process.stderr.write(`${s}\n`);

function json(r, what) {
  try {
    return JSON.parse(String(r.stdout));
  } catch {
    assert.fail(`${what}: not JSON (exit ${r.code}): ${String(r.stdout).slice(0, 400)} ${String(r.stderr).slice(0, 400)}`);
  }
}

test("openclaw cachefold status / doctor / lessons in the real CLI", { skip: SKIP, timeout: 10 * 60_000 }, async () => {
  const h = await Harness.create({ engine: "cachefold", log, keep: process.env.CACHEFOLD_E2E_KEEP === "1" });
  try {
    await h.startGateway();
    for (let k = 0; k < 3; k++) await h.turn("cli", `turn ${k}: hello there, number ${k}`);

    const status = json(await h.oc(["cachefold", "status", "--json"]), "status");
    assert.equal(status.sessions.length, 1, JSON.stringify(status));
    const s = status.sessions[0];
    assert.equal(s.engine, "active");
    assert.equal(s.turns, 3);
    // The provider's own counts for this session's requests.
    const reqs = fs
      .readFileSync(h.requestsPath, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l))
      .filter((r) => r.status === 200 && r.usage && String(r.session ?? "").includes("cli"));
    const prompt = reqs.reduce((a, r) => a + (r.usage.prompt_tokens ?? 0), 0);
    const hit = reqs.reduce((a, r) => a + (r.usage.prompt_cache_hit_tokens ?? r.usage.prompt_tokens_details?.cached_tokens ?? 0), 0);
    assert.equal(s.calls, reqs.length, `calls ${s.calls} vs provider requests ${reqs.length}`);
    assert.ok(Math.abs(s.promptTokens - prompt) <= prompt * 0.01, `prompt ${s.promptTokens} vs provider ${prompt}`);
    assert.ok(Math.abs(s.hitTokens - hit) <= Math.max(1, hit * 0.01), `hit ${s.hitTokens} vs provider ${hit}`);

    const good = await h.oc(["cachefold", "doctor", "--json"], { allowFail: true });
    const dg = json(good, "doctor");
    assert.equal(dg.failed, 0, JSON.stringify(dg.checks.filter((c) => c.status !== "ok")));
    assert.equal(good.code ?? 0, 0);

    const lessons = json(await h.oc(["cachefold", "lessons", "list", "--json"]), "lessons list");
    assert.ok(Array.isArray(lessons.lessons));

    // A planted fault: the slot back to legacy. doctor names it and exits 5.
    await h.configSet("plugins.slots.contextEngine", "legacy");
    const bad = await h.oc(["cachefold", "doctor", "--json"], { allowFail: true });
    const db = json(bad, "doctor (slot unset)");
    assert.equal(bad.code, 5, `exit ${bad.code}`);
    assert.ok(db.checks.some((c) => c.id === "slot" && c.status === "fail"), JSON.stringify(db.checks));
    await h.configSet("plugins.slots.contextEngine", "cachefold");

    // More planted faults, one at a time; each is named with its fix, then undone.
    const planted = [
      { what: "model not matched", id: "model", key: "plugins.entries.cachefold.config.targetModels", bad: ["openai/*"], good: null },
      { what: "contextPruning cache-ttl", id: "host-cache", key: "agents.defaults.contextPruning.mode", bad: "cache-ttl", good: null },
      { what: "prompt caching off", id: "host-cache", key: "agents.defaults.params.cacheRetention", bad: "none", good: null },
    ];
    for (const f of planted) {
      await h.configSet(f.key, f.bad);
      const r = await h.oc(["cachefold", "doctor", "--json"], { allowFail: true });
      const d = json(r, `doctor (${f.what})`);
      const c = d.checks.find((x) => x.id === f.id);
      assert.equal(r.code, 5, `${f.what}: exit ${r.code} ${JSON.stringify(d.checks)}`);
      assert.equal(c?.status, "fail", `${f.what}: ${JSON.stringify(c)}`);
      assert.ok(c.fix || c.message, `${f.what}: says what to run`);
      log(`doctor names "${f.what}": ${c.message.split("\n")[0]}`);
      if (f.good === null) await h.oc(["config", "unset", f.key]);
      else await h.configSet(f.key, f.good);
    }
    const again = json(await h.oc(["cachefold", "doctor", "--json"], { allowFail: true }), "doctor (restored)");
    assert.equal(again.failed, 0, JSON.stringify(again.checks.filter((c) => c.status === "fail")));
  } finally {
    await h.close();
  }
});
