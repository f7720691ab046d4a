// `openclaw cachefold …` in a real OpenClaw 2026.9.6 (registered through api.registerCli and the
// manifest's cliCommands): after a few scripted turns (one reads a workspace file),
//  - `status --json` reports the prompt and hit tokens the fake provider billed;
//  - `/cachefold` sent through the Gateway's chat surface (`chat.send`, what WebChat and the
//    channels use; `openclaw agent --message` never runs slash commands) answers the status line
//    without a model request;
//  - `replay --session <id> --tokens bytes4` of the Gateway's own SQLite store (native addon)
//    reproduces the run's request count and, counting tokens as the fake provider does, its
//    prompt tokens within 5 %;
//  - `doctor` passes on the good setup and names each planted fault (slot unset, model not
//    matched, contextPruning cache-ttl, cacheRetention none, missing capability consent; after
//    which a disable/enable is refused and a turn runs on legacy: doctor names that turn from
//    OpenClaw's own transcript), and passes again once each is undone.
// Skipped unless CACHEFOLD_E2E=1. Most of its time is the CLI processes it tests (status, replay,
// doctor x6, plugins disable/enable x3), ~20-40 s each on a busy 2-core machine.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { Harness } from "./lib/harness.mjs";
import { scriptMarker } from "./lib/script.mjs";
import { makeTextFile } from "./lib/scenarios.mjs";
import { countTokens, serializeRequest } from "./lib/tokenize.mjs";

const SKIP = process.env.CACHEFOLD_E2E === "1" ? false : "set CACHEFOLD_E2E=1 to run the real-OpenClaw e2e suite";
const log = (s) => process.stderr.write(`${s}\n`);
const KEY = "agent:main:cli";

function json(r, what) {
  assert.ok(!r.timedOut, `${what}: the command timed out after ${r.ms} ms`);
  try {
    const text = String(r.stdout);
    return JSON.parse(text.slice(Math.max(0, text.indexOf("{"))));
  } catch {
    assert.fail(`${what}: not JSON (exit ${r.code}): ${String(r.stdout).slice(0, 400)} ${String(r.stderr).slice(0, 400)}`);
  }
}

/** The fake provider's successful requests of this test's session. */
function sessionRequests(h) {
  return fs
    .readFileSync(h.requestsPath, "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l))
    .filter((r) => r.status === 200 && r.usage && r.session === KEY);
}

/** The newest assistant text after the user message `text` in `chat.history`, or null. */
function replyAfter(history, text) {
  const msgs = history?.messages ?? [];
  const at = msgs.findLastIndex((m) => m.role === "user" && (typeof m.content === "string" ? m.content : JSON.stringify(m.content)).trim() === text);
  if (at < 0) return null;
  const a = msgs.slice(at + 1).find((m) => m.role === "assistant");
  if (!a) return null;
  return { message: a, text: typeof a.content === "string" ? a.content : (a.content ?? []).map((p) => p.text ?? "").join("") };
}

/** Set (or with `undefined`, remove) a dotted key in a config object (what `openclaw config set/unset` write). */
function setKey(config, key, value) {
  const parts = key.split(".");
  let o = config;
  for (const p of parts.slice(0, -1)) o = o[p] ??= {};
  if (value === undefined) delete o[parts.at(-1)];
  else o[parts.at(-1)] = value;
}

test("openclaw cachefold status / chat / replay / doctor / lessons in the real CLI", { skip: SKIP, timeout: 20 * 60_000 }, async () => {
  const h = await Harness.create({ engine: "cachefold", log, keep: process.env.CACHEFOLD_E2E_KEEP === "1", files: { "notes.md": makeTextFile(13, 10_000) } });
  try {
    await h.startGateway();
    const msgs = [
      "turn 0: hello there, number 0",
      `turn 1: read the notes, number 1\n\n${scriptMarker({ steps: [{ read: "notes.md" }], reply: "I read the notes." })}`,
      "turn 2: hello there, number 2",
    ];
    for (const m of msgs) {
      const t = await h.turn("cli", m);
      assert.ok(t.ok, t.error);
    }
    const sessionId = h.turns[0].sessionId;
    assert.ok(sessionId, "the turn result names the session id");

    // ---- status: the provider's own counts ----
    const status = json(await h.oc(["cachefold", "status", "--json"]), "status");
    assert.equal(status.sessions.length, 1, JSON.stringify(status));
    const s = status.sessions[0];
    assert.equal(s.engine, "active");
    assert.equal(s.turns, 3);
    const reqs = sessionRequests(h);
    const prompt = reqs.reduce((a, r) => a + (r.usage.prompt_tokens ?? 0), 0);
    const hit = reqs.reduce((a, r) => a + (r.usage.prompt_cache_hit_tokens ?? r.usage.prompt_tokens_details?.cached_tokens ?? 0), 0);
    assert.ok(reqs.length >= 4, `the read turn makes two requests: ${reqs.length}`);
    assert.equal(s.calls, reqs.length, `calls ${s.calls} vs provider requests ${reqs.length}`);
    assert.ok(Math.abs(s.promptTokens - prompt) <= prompt * 0.01, `prompt ${s.promptTokens} vs provider ${prompt}`);
    assert.ok(Math.abs(s.hitTokens - hit) <= Math.max(1, hit * 0.01), `hit ${s.hitTokens} vs provider ${hit}`);

    // ---- /cachefold in chat, through the Gateway's chat.send (no model request) ----
    const before = h.provider.requests.length;
    const cmd = await h.command("cli", "/cachefold");
    assert.ok(cmd.ok, `/cachefold through chat.send: ${cmd.error}`);
    const reply = replyAfter(await h.request("chat.history", { sessionKey: KEY }), "/cachefold");
    assert.ok(reply, "/cachefold got no answer in chat.history");
    assert.equal(reply.text, cmd.text, "the chat event and chat.history carry the same answer");
    log(`/cachefold in chat: ${reply.text}`);
    assert.match(reply.text, new RegExp(`^cachefold: active · 3 turns, ${s.calls} calls, ${s.folds} folds · hit ${s.hitPct.toFixed(1)}% \\(predicted [\\d.]+%\\) · spent \\$[\\d.]+ \\(legacy estimate \\$[\\d.]+, [\\d.]+×\\), saved \\$[\\d.]+ · (no cache break|last cache break: message \\d+ \\(.+\\))$`));
    assert.equal(reply.message.model, "gateway-injected", "answered by the host's command path, not a model");
    const during = h.provider.requests.slice(before);
    assert.equal(during.filter((r) => JSON.stringify(r.body?.messages ?? []).includes("/cachefold")).length, 0, "the model never saw /cachefold");
    assert.equal(during.filter((r) => r.session === KEY).length, 0, `no model request for the session: ${during.length}`);

    // ---- replay of the Gateway's own SQLite store, tokens counted as the fake provider does ----
    // The transcript holds the messages, not the system prompt and tool schemas the host sends in
    // front of them; their size is what the provider saw in the session's first request.
    const first = reqs[0].body;
    const staticPart = { messages: first.messages.filter((m) => m.role === "system" || m.role === "developer"), tools: first.tools };
    const prefixTokens = countTokens(serializeRequest(staticPart));
    // The replay and the first doctor only read the state: two CLI processes side by side.
    const [rep, good] = await Promise.all([
      h.oc(["cachefold", "replay", "--session", sessionId, "--json", "--tokens", "bytes4", "--prefix-tokens", String(prefixTokens), "--strategy", "S0,S1a,S3", "--cold", "--jobs", "1"], { allowFail: true }),
      h.oc(["cachefold", "doctor", "--json"], { allowFail: true }),
    ]);
    const rj = json(rep, "replay");
    assert.equal(rep.code, 0, rep.stderr);
    assert.equal(rj.source, "native", `the addon ran: ${JSON.stringify(rj.addon ?? rj.source)}`);
    assert.equal(rj.tokenizer.name, "bytes4");
    assert.equal(rj.prefix.tokens, prefixTokens);
    assert.deepEqual(rj.stores.map((x) => x.sessions), [[sessionId]]);
    assert.equal(rj.report.header.sessions[0].calls, reqs.length, `replayed calls vs provider requests (the /cachefold reply is no call)`);
    const s3 = rj.report.totals.find((t) => t.strategy === "S3").metrics;
    const s0 = rj.report.totals.find((t) => t.strategy === "S0").metrics;
    assert.equal(s3.calls, reqs.length);
    const off = (s3.promptTokens - prompt) / prompt;
    log(`replay: ${s3.calls} calls (provider ${reqs.length}); prompt S3 ${s3.promptTokens}, S0 ${s0.promptTokens} vs provider ${prompt} (${(100 * off).toFixed(2)} %); static prefix ${prefixTokens} tokens`);
    assert.ok(Math.abs(off) <= 0.05, `replayed prompt ${s3.promptTokens} vs provider ${prompt}: ${(100 * off).toFixed(2)} %`);
    // Without the static prefix the replay would be far off: the check is not met by the prefix alone.
    assert.ok(prompt - reqs.length * prefixTokens > 0.05 * prompt, "the messages carry more than 5 % of the prompt");

    // ---- doctor: good setup, then each planted fault ----
    const dg = json(good, "doctor");
    assert.equal(dg.failed, 0, JSON.stringify(dg.checks.filter((c) => c.status !== "ok")));
    assert.equal(good.code, 0, `doctor on the good setup: exit ${good.code}`);
    assert.equal(dg.checks.find((c) => c.id === "consent")?.status, "ok", JSON.stringify(dg.checks));

    // Planted faults, in two doctor runs (each run is a CLI process; the checks are independent):
    // the slot back to legacy, the model not matched and contextPruning cache-ttl together, then
    // prompt caching off (the same check as cache-ttl, so on its own). Each is named with its fix
    // and exits 5, then undone. (`lessons list` is covered by lessons.test.mjs.)
    const plantedRuns = [
      [
        { what: "slot unset", id: "slot", key: "plugins.slots.contextEngine", bad: "legacy", good: "cachefold" },
        { what: "model not matched", id: "model", key: "plugins.entries.cachefold.config.targetModels", bad: ["openai/*"], good: null },
        { what: "contextPruning cache-ttl", id: "host-cache", key: "agents.defaults.contextPruning.mode", bad: "cache-ttl", good: null, names: /cache-ttl/ },
      ],
      [{ what: "prompt caching off", id: "host-cache", key: "agents.defaults.params.cacheRetention", bad: "none", good: null, names: /cacheRetention/ }],
    ];
    for (const faults of plantedRuns) {
      h.patchConfig((c) => faults.forEach((f) => setKey(c, f.key, f.bad)));
      const what = faults.map((f) => f.what).join(" + ");
      const r = await h.oc(["cachefold", "doctor", "--json"], { allowFail: true });
      const d = json(r, `doctor (${what})`);
      assert.equal(r.code, 5, `${what}: exit ${r.code} ${JSON.stringify(d.checks)}`);
      for (const f of faults) {
        const c = d.checks.find((x) => x.id === f.id);
        assert.equal(c?.status, "fail", `${f.what}: ${JSON.stringify(c)}`);
        assert.ok(c.fix || c.message, `${f.what}: says what to run`);
        if (f.names) assert.match(`${c.message} ${c.fix ?? ""}`, f.names, `${f.what}: the check names the setting`);
        log(`doctor names "${f.what}": ${c.message.split("\n")[0]}`);
      }
      assert.equal(d.checks.filter((c) => c.status === "fail").length, new Set(faults.map((f) => f.id)).size, `${what}: only the planted faults fail: ${JSON.stringify(d.checks.filter((c) => c.status === "fail"))}`);
      h.patchConfig((c) => faults.forEach((f) => setKey(c, f.key, f.good === null ? undefined : f.good)));
    }

    // Missing capability consent. The installed copy now declares a capability the user never
    // accepted (what an in-place update of the package or of a linked checkout does). OpenClaw
    // keeps running the loaded plugin; doctor names the missing consent and its fix.
    // The installed copy (the harness copied the run's npm-pack install into this state dir).
    const manifestPath = path.join(h.installedRoot, "openclaw.plugin.json");
    assert.ok(fs.existsSync(manifestPath), `installed manifest at ${manifestPath}`);
    const manifest = JSON.parse(fs.readFileSync(manifestPath, "utf8"));
    fs.writeFileSync(manifestPath, JSON.stringify({ ...manifest, contracts: { ...manifest.contracts, tools: [...manifest.contracts.tools, "cachefold_extra"] } }, null, 2));
    const nc = await h.oc(["cachefold", "doctor", "--json"], { allowFail: true });
    const dn = json(nc, "doctor (missing consent)");
    const consent = dn.checks.find((c) => c.id === "consent");
    assert.equal(nc.code, 5, `missing consent: exit ${nc.code} ${JSON.stringify(dn.checks)}`);
    assert.equal(consent?.status, "fail", JSON.stringify(consent));
    assert.match(consent.message, /declared but not accepted: tools: cachefold_extra/);
    assert.match(consent.message, /requires capability consent/, "OpenClaw's own diagnostic is quoted");
    assert.match(consent.fix, /openclaw plugins enable cachefold --accept-capabilities/);
    log(`doctor names "missing capability consent": ${consent.message.split("\n")[0]} · fix: ${consent.fix}`);
    // What the consent gate does to the engine: the next disable/enable is refused and the plugin
    // stays disabled: the turn runs on legacy.
    await h.oc(["plugins", "disable", "cachefold"]);
    const en = await h.oc(["plugins", "enable", "cachefold"], { allowFail: true });
    assert.ok(!en.timedOut && en.code !== 0, `enable without consent is refused: exit ${en.code}${en.timedOut ? " (timed out)" : ""}`);
    assert.match(`${en.stdout}${en.stderr}`, /requires capability consent/);
    // OpenClaw resolves the slot of a disabled plugin to legacy, without a warning: the provider
    // serves the turn and cachefold sees none of it.
    const seenBefore = h.decisionEvents().length;
    const degradedTurn = await h.turn("cli", "turn 3: while cachefold is disabled");
    assert.ok(degradedTurn.ok, degradedTurn.error);
    assert.ok(degradedTurn.requests.length > 0, "the model was called");
    const seen = h.decisionEvents().slice(seenBefore).filter((e) => e.sessionId === sessionId && ["assemble", "commitTurn"].includes(e.event));
    assert.deepEqual(seen, [], "cachefold took no part in the turn: legacy served it");
    log(`degraded: turn 3 served with ${degradedTurn.requests.length} model request(s), no cachefold assemble or commitTurn`);
    const gone = await h.oc(["cachefold", "doctor", "--json"], { allowFail: true });
    assert.ok(!gone.timedOut && gone.code !== 0, `doctor while disabled: exit ${gone.code}${gone.timedOut ? " (timed out)" : ""}`);
    assert.match(`${gone.stdout}${gone.stderr}`, /`openclaw cachefold` command is unavailable because `plugins.entries.cachefold.enabled=false`/);
    // The fix doctor named: accept the capabilities. Enabled again, consent is current, and doctor
    // names the degraded turn from OpenClaw's own transcript (a model call cachefold never saw).
    await h.oc(["plugins", "enable", "cachefold", "--accept-capabilities"]);
    const after = await h.oc(["cachefold", "doctor", "--json"], { allowFail: true });
    const da = json(after, "doctor (consent accepted)");
    assert.equal(da.checks.find((c) => c.id === "consent")?.status, "ok", JSON.stringify(da.checks));
    const eng = da.checks.find((c) => c.id === "engine");
    assert.equal(eng?.status, "fail", JSON.stringify(da.checks));
    assert.match(eng.message, new RegExp(`session ${sessionId}: ${degradedTurn.requests.filter((r) => r.session === KEY && r.status === 200).length} model call\\(s\\) since .* ran without cachefold`));
    assert.equal(after.code, 5);
    log(`doctor names the degraded engine: ${eng.message.split("\n")[0]}`);
    // The next turn runs on cachefold again, and doctor passes.
    const back = await h.turn("cli", "turn 4: cachefold is back");
    assert.ok(back.ok, back.error);
    assert.ok(h.decisionEvents().some((e) => e.event === "assemble" && e.sessionId === sessionId && Date.parse(e.at) >= back.startedAt), "cachefold assembled turn 4");
    const again = json(await h.oc(["cachefold", "doctor", "--json"], { allowFail: true }), "doctor (restored)");
    assert.equal(again.checks.find((c) => c.id === "consent")?.status, "ok", JSON.stringify(again.checks));
    assert.equal(again.checks.find((c) => c.id === "engine")?.status, "ok", JSON.stringify(again.checks));
    assert.equal(again.failed, 0, JSON.stringify(again.checks.filter((c) => c.status === "fail")));
  } finally {
    await h.close();
  }
});
