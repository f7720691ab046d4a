// Lessons end to end in a real OpenClaw 2026.9.6 (issue 12): capture → candidate → promote →
// inject → stale, driven through the Gateway and the real `openclaw cachefold lessons` CLI.
//
// The workspace is a small package whose `scripts.test` is `node check.mjs`. Every session gets the
// same code-gen request; the scripted model (lib/script.mjs) reads package.json to discover the
// test command unless it already knows it (`unlessKnown`), writes src/slug.mjs and runs `npm test`
// through the real `exec` tool (it passes in the workspace).
//   session 1  discovery (read) + write + exec; `/new` (the Gateway's sessions.reset, reason "new")
//              fires session_end, which captures the `testing` candidate
//   promote    `openclaw cachefold lessons promote testing`
//   session 2  the lesson is injected (systemPromptAddition, same bytes at the same offset in every
//              request of the session); the model skips its discovery read: one request fewer
//   stale      package.json#scripts.test edited: `lessons stale` exits 3 and names the lesson
//   session 3  the stale lesson is not injected; discovery runs again; a refresh candidate waits
// Figures go to stderr and bench-out/e2e/lessons.json. Skipped unless CACHEFOLD_E2E=1. ~2-3 min.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { Harness } from "./lib/harness.mjs";
import { scriptMarker } from "./lib/script.mjs";
import { sleep, REPO_ROOT } from "./lib/env.mjs";
import { sessionFigures, injectionPositions, sessionStartPrefix, mainRequests, requestSessionId, countTokens } from "./lib/lessons-measure.mjs";

const SKIP = process.env.CACHEFOLD_E2E === "1" ? false : "set CACHEFOLD_E2E=1 to run the real-OpenClaw e2e suite";
const log = (s) => process.stderr.write(`${s}\n`);
const KEY = "lessons";

const PACKAGE = { name: "slugs", version: "1.0.0", private: true, type: "module", scripts: { test: "node check.mjs" } };
const CHECK = `import assert from "node:assert/strict";
import { slugify } from "./src/slug.mjs";
assert.equal(slugify("Hello World"), "hello-world");
assert.equal(slugify("  Cache, fold!  "), "cache-fold");
console.log("# tests 2\\n# pass 2\\n# fail 0");
`;
const SLUG = `export function slugify(text) {
  return String(text).trim().toLowerCase().split(/[^a-z0-9]+/).filter(Boolean).join("-");
}
`;
// What a model that read the lesson knows: the test command, as the captured lesson words it.
const NEEDLE = "`npm test`";
const TASK = "Add a `slugify(text)` function to src/slug.mjs (lowercase, words joined by dashes) and run the tests.";
const MESSAGE = `${TASK}\n\n${scriptMarker({
  steps: [{ unlessKnown: NEEDLE, steps: [{ read: "package.json" }] }, { tool: "write", args: { path: "src/slug.mjs", content: SLUG } }, { exec: "npm test" }],
  reply: "Added slugify to src/slug.mjs; npm test passes.",
})}`;

function json(r, what) {
  try {
    return JSON.parse(String(r.stdout));
  } catch {
    assert.fail(`${what}: not JSON (exit ${r.code}): ${String(r.stdout).slice(0, 400)} ${String(r.stderr).slice(0, 400)}`);
  }
}

async function waitFor(what, fn, { timeoutMs = 45_000, everyMs = 1_000 } = {}) {
  const deadline = Date.now() + timeoutMs;
  let last;
  while (Date.now() < deadline) {
    last = await fn();
    if (last) return last;
    await sleep(everyMs);
  }
  assert.fail(`${what}: not after ${timeoutMs} ms`);
}

test("lessons: capture → candidate → promote → inject → stale in a real OpenClaw, fewer requests once learned", { skip: SKIP, timeout: 8 * 60_000 }, async () => {
  const t0 = Date.now();
  const h = await Harness.create({
    engine: "cachefold",
    log,
    keep: process.env.CACHEFOLD_E2E_KEEP === "1",
    files: { "package.json": `${JSON.stringify(PACKAGE, null, 2)}\n`, "check.mjs": CHECK },
  });
  const lessonsDir = path.join(h.work, ".cachefold", "lessons");
  const events = (name) => h.decisionEvents().filter((e) => e.event === name);
  // OpenClaw 2026.9.6 keeps the sessionId across /new (sessions.reset appends a `reset` entry to
  // the same transcript), so a session's events are told apart by time, not by id.
  const during = (name, t) => events(name).filter((e) => Date.parse(e.at) >= t.startedAt && Date.parse(e.at) <= t.endedAt + 2_000);
  const lessonsList = async () => json(await h.oc(["cachefold", "lessons", "list", "--json"]), "lessons list");
  const sessionNew = async () => {
    const r = await h.oc(["gateway", "call", "sessions.reset", "--params", JSON.stringify({ key: `agent:main:${KEY}`, reason: "new" }), "--json"]);
    return json(r, "sessions.reset");
  };
  const figures = {};
  try {
    await h.startGateway();

    // ---- session 1: discovery, write, npm test -------------------------------------------------
    const t1 = await h.turn(KEY, MESSAGE);
    assert.ok(t1.ok, `session 1 turn failed: ${t1.error}`);
    const s1 = sessionFigures(t1.requests);
    const sid1 = requestSessionId(mainRequests(t1.requests)[0]?.body);
    assert.deepEqual(s1.toolCalls, ["read", "write", "exec"], "session 1 discovers the test command");
    assert.equal(s1.requests, 4);
    assert.ok(fs.existsSync(path.join(h.work, "src", "slug.mjs")), "the write tool wrote src/slug.mjs");
    const execResult = mainRequests(t1.requests).at(-1).body.messages.filter((m) => m.role === "tool").at(-1);
    assert.match(String(execResult?.content ?? ""), /# pass 2/, "npm test really ran and passed in the workspace");

    // The first assemble decided (no lessons yet) and recorded the workspace for capture.
    const d1 = during("lessons_decision", t1).find((e) => e.sessionId === sid1);
    assert.ok(d1, `a lessons decision for session 1 (${sid1}): ${JSON.stringify(events("lessons_decision"))}`);
    assert.equal(d1.workspace, h.work, "the decision records the agent's workspace");
    assert.equal(d1.class, "code-gen", JSON.stringify(d1));
    assert.equal(d1.confident, true, `the plain code-gen request is confident: ${JSON.stringify(d1)}`);
    const beforeNew = await lessonsList();
    const capturedAfterTurn = beforeNew.lessons.filter((l) => l.kind === "candidate").map((l) => l.name);

    // ---- /new: session_end captures ------------------------------------------------------------
    const reset1 = await sessionNew();
    const list1 = await waitFor("the testing candidate after /new", async () => {
      const l = await lessonsList();
      return l.lessons.some((x) => x.kind === "candidate" && x.name === "testing") ? l : null;
    });
    const cap = events("lessons_capture").filter((e) => e.sessionId === sid1);
    assert.ok(cap.some((e) => e.written?.includes("testing")), `capture events: ${JSON.stringify(cap)}`);
    // session_end on /new: reason "new", the same id goes on, the decision of session 1 is ended.
    const end1 = events("lessons_session_end").find((e) => e.sessionId === sid1 && e.reason === "new");
    assert.ok(end1, `session_end(new) seen: ${JSON.stringify(events("lessons_session_end"))}`);
    assert.equal(end1.decisionEnded, true);
    const shown = json(await h.oc(["cachefold", "lessons", "show", "testing", "--json"]), "lessons show");
    const candidateText = shown.lessons[0].text;
    assert.match(candidateText, /run the tests with `npm test`/);
    assert.match(candidateText, /package\.json#scripts\.test/);
    assert.match(candidateText, new RegExp(`session: ${sid1}`));

    // ---- promote -----------------------------------------------------------------------------
    const prom = json(await h.oc(["cachefold", "lessons", "promote", "testing", "--json"]), "lessons promote");
    assert.equal(prom.promoted.name, "testing");
    assert.ok(fs.existsSync(path.join(lessonsDir, "testing.md")));
    const list2 = await lessonsList();
    assert.ok(list2.lessons.some((l) => l.kind === "lesson" && l.name === "testing" && l.stale === false), JSON.stringify(list2));

    // ---- session 2: injected, no discovery -----------------------------------------------------
    const t2 = await h.turn(KEY, MESSAGE);
    assert.ok(t2.ok, `session 2 turn failed: ${t2.error}`);
    const main2 = mainRequests(t2.requests);
    const sid2 = requestSessionId(main2[0]?.body);
    figures.sameSessionIdAcrossNew = sid2 === sid1; // true on 2026.9.6
    const d2 = during("lessons_decision", t2).find((e) => e.sessionId === sid2);
    assert.ok(d2?.inject, `session 2 gets the lesson: ${JSON.stringify(d2)}`);
    assert.deepEqual(d2.chosen, ["testing"]);
    const pos = injectionPositions(t2.requests, d2.text);
    assert.ok(pos.every((p) => p.offset != null), "the lesson text is in every request of session 2");
    assert.equal(new Set(pos.map((p) => p.offset)).size, 1, `same offset in every request: ${pos.map((p) => p.offset)}`);
    assert.equal(new Set(pos.map((p) => p.head)).size, 1, "same bytes up to the end of the lesson in every request");
    const sys0 = main2[0].body.messages[0];
    assert.equal(sys0.role, "system");
    assert.ok(String(sys0.content).includes(d2.text), "the lesson is in the system prompt");
    const s2 = sessionFigures(t2.requests);
    assert.deepEqual(s2.toolCalls, ["write", "exec"], "session 2 skips the discovery read");
    assert.equal(s2.requests, s1.requests - 1);
    assert.equal(s2.prefixBreaks, 0, "no prefix break inside session 2");
    const start2 = sessionStartPrefix(mainRequests(t1.requests).at(-1), main2[0], d2.text);

    // ---- stale -------------------------------------------------------------------------------
    const pkg = { ...PACKAGE, scripts: { test: "node check.mjs --strict" } };
    fs.writeFileSync(path.join(h.work, "package.json"), `${JSON.stringify(pkg, null, 2)}\n`);
    const st = await h.oc(["cachefold", "lessons", "stale", "--json"], { allowFail: true });
    assert.equal(st.code, 3, `lessons stale exits 3: ${st.stdout} ${st.stderr}`);
    const stale = json(st, "lessons stale");
    assert.deepEqual(stale.stale.map((s) => s.name), ["testing"]);
    assert.ok(stale.stale[0].changed.some((c) => c.entry === "package.json#scripts.test"), JSON.stringify(stale.stale[0].changed));

    // ---- session 3: stale lesson not injected --------------------------------------------------
    await sessionNew();
    const t3 = await h.turn(KEY, MESSAGE);
    assert.ok(t3.ok, `session 3 turn failed: ${t3.error}`);
    const main3 = mainRequests(t3.requests);
    const sid3 = requestSessionId(main3[0]?.body);
    assert.ok(sid3);
    const d3 = during("lessons_decision", t3).find((e) => e.sessionId === sid3);
    assert.equal(d3?.inject, false, JSON.stringify(d3));
    assert.ok(d3.stale?.some((s) => s.name === "testing"), JSON.stringify(d3));
    assert.ok(main3.every((r) => !JSON.stringify(r.body.messages[0]).includes("[testing]")), "no lesson text in session 3");
    const s3 = sessionFigures(t3.requests);
    assert.deepEqual(s3.toolCalls, ["read", "write", "exec"], "session 3 rediscovers");
    const refresh = fs.readFileSync(path.join(lessonsDir, "_candidates", "testing.md"), "utf8");
    assert.match(refresh, /refresh-of: testing/);
    const start3 = sessionStartPrefix(mainRequests(t2.requests).at(-1), main3[0], null);

    figures.sessions = { s1: { sessionId: sid1, ...s1 }, s2: { sessionId: sid2, ...s2 }, s3: { sessionId: sid3, ...s3 } };
    figures.injection = {
      text: d2.text,
      estimatedTokens: d2.tokens,
      requestTokens: countTokens(`${d2.text}\n\n`),
      offsetBytes: pos[0].offset,
      sessionStartLcpTokens: start2,
      session3StartLcpTokens: start3,
    };
    figures.capture = { afterTurn: capturedAfterTurn, events: cap, sessionEnd: events("lessons_session_end"), reset: reset1?.ok ?? null, listAfterNew: list1.lessons.map((l) => `${l.kind}:${l.name}`) };
    figures.decisions = { s1: { class: d1.class, confident: d1.confident, request: d1.request }, s2: { reason: d2.reason }, s3: { reason: d3.reason } };
    figures.seconds = Math.round((Date.now() - t0) / 1000);
    log(`\nlessons e2e (${figures.seconds} s)`);
    log(`| session | lesson | requests | tool calls | prompt tokens | hit | miss | first request hit |`);
    log(`|---|---|---:|---|---:|---:|---:|---:|`);
    for (const [k, s, inj] of [["1", s1, "none yet"], ["2", s2, "injected"], ["3", s3, "stale, skipped"]]) {
      log(`| ${k} | ${inj} | ${s.requests} | ${s.toolCalls.join(", ")} | ${s.promptTokens} | ${s.hitTokens} | ${s.missTokens} | ${s.firstHitTokens} |`);
    }
    log(`injection: ${figures.injection.requestTokens} tokens in each request (core estimate ${d2.tokens}), at byte ${pos[0].offset} of every session-2 request`);
    log(`session start common prefix with the previous session: ${start2.withTokens} tokens with the lesson, ${start2.withoutTokens} with it cut out; session 3 (no lesson): ${start3.withTokens}`);
    log(`capture: candidates right after turn 1 ${JSON.stringify(capturedAfterTurn)}; capture events ${JSON.stringify(cap.map((e) => ({ force: e.force, reason: e.reason, source: e.source, found: e.found, written: e.written })))}`);
    const out = path.join(REPO_ROOT, "bench-out", "e2e");
    fs.mkdirSync(out, { recursive: true });
    fs.writeFileSync(path.join(out, "lessons.json"), `${JSON.stringify(figures, null, 2)}\n`);
  } catch (err) {
    log(`lessons e2e failed; run dir ${h.dir} (kept)`);
    await h.close({ keep: true });
    throw err;
  }
  await h.close();
});
