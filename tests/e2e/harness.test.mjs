// Fast checks of the e2e harness's own parts (no OpenClaw needed; runs on Node >= 20):
// tokenizer, DS-unit cache simulation, pairing rule, scripted model, and the fake provider's
// wire format. The real-runtime tests are in e2e.test.mjs (CACHEFOLD_E2E=1).

import test from "node:test";
import assert from "node:assert/strict";
import { CacheSim } from "./lib/cache-sim.mjs";
import { countTokens, serializeRequest, serializeMessage } from "./lib/tokenize.mjs";
import { pairingViolations } from "./lib/pairing.mjs";
import { respond, scriptMarker, summarize, INTERNAL_CONTEXT_MARK } from "./lib/script.mjs";
import { startFakeProvider } from "./lib/fake-provider.mjs";
import { lcpBytes, prefixBreaks, summarizeRun, inputCost, resimulate, strictOverPhases } from "./lib/analyze.mjs";
import { buildScenario, makeTextFile, bigOutputCommand } from "./lib/scenarios.mjs";

/** A text of exactly `tokens` approximate tokens (4 bytes each). */
const T = (ch, tokens) => ch.repeat(tokens * 4);

test("tokens are 4-byte pieces of UTF-8", () => {
  assert.equal(countTokens(""), 0);
  assert.equal(countTokens("abcd"), 1);
  assert.equal(countTokens("abcde"), 2);
  assert.equal(countTokens("é"), 1); // 2 bytes
});

test("serialization ignores tool-call ids (host renames call_1 -> call1)", () => {
  const a = { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: { name: "read", arguments: "{}" } }] };
  const b = { ...a, tool_calls: [{ ...a.tool_calls[0], id: "call1" }] };
  assert.equal(serializeMessage(a), serializeMessage(b));
  const req = (m) => serializeRequest({ messages: [{ role: "system", content: "S" }, m], tools: [] });
  assert.equal(req(a), req(b));
});

test("strict DS-unit cost over block phases: one run is one draw of the alignment, the mean is its expectation", () => {
  // An append-only session whose every request ends with a different ~55-token transient message
  // (as OpenClaw's): whether request j's end-of-input unit lies inside request j+1's common
  // prefix depends on where the 128-token boundaries fall.
  const history = [{ role: "system", content: T("s", 700) }];
  const requests = [];
  for (let j = 0; j < 12; j++) {
    history.push({ role: "user", content: T(String.fromCharCode(97 + j), 300 + 37 * j) });
    history.push({ role: "assistant", content: T("r", 90 + 11 * j) });
    requests.push({ status: 200, body: { messages: [...history, { role: "user", content: `now ${j} ${T("t", 55)}` }] } });
  }
  const p = strictOverPhases(requests, { phases: 16 });
  assert.equal(p.costs.length, 16);
  assert.equal(p.costs[0], resimulate(requests, { mode: "strict" }).inputCostUsd, "phase 0 is the unshifted strict run");
  assert.ok(p.max > p.min * 1.05, `the alignment moves the strict cost (min ${p.min}, max ${p.max})`);
  assert.ok(p.min <= p.mean && p.mean <= p.max);
  const optimistic = resimulate(requests, { mode: "optimistic" }).inputCostUsd;
  assert.ok(optimistic <= p.costs[0], `block-granular (every boundary cached) is a lower bound at the same phase: ${optimistic} vs ${p.costs[0]}`);
});

test("DS-unit: doc example A+B, A+C miss; A+D hits A (common-prefix unit)", () => {
  const sim = new CacheSim();
  const A = T("a", 1000);
  const r1 = sim.request(A + T("b", 300), "");
  assert.equal(r1.hit, 0);
  const r2 = sim.request(A + T("c", 300), "");
  assert.equal(r2.hit, 0, "A+C has no unit yet: A is only persisted once two requests share it");
  const r3 = sim.request(A + T("d", 300), "");
  assert.equal(r3.hit, 896, "floor128(1000) = 896");
  assert.equal(r3.miss, 1300 - 896);
});

test("DS-unit: exact resend hits floor128 (768/769), output unit continues the prefix", () => {
  const sim = new CacheSim();
  const X = T("x", 769);
  sim.request(X, "");
  assert.deepEqual(sim.request(X, ""), { tokens: 769, hit: 768, miss: 1 });
  const sim2 = new CacheSim();
  const X2 = T("p", 912);
  const Y2 = T("q", 136);
  sim2.request(X2, Y2);
  const r = sim2.request(X2 + Y2 + T("r", 31), "");
  assert.equal(r.hit, 1024, "floor128(912+136) = 1024, like the V4 reading 1024/1079");
});

test("DS-unit: an edit in the middle: strict misses until the common prefix is a unit; optimistic hits the block before it", () => {
  const sim = new CacheSim();
  const head = T("h", 500);
  sim.request(head + T("m", 500), "");
  sim.request(head + T("m", 500), ""); // units at 896 (end of input, common prefix)
  const edited = head + "Z" + T("m", 500).slice(1);
  assert.equal(sim.request(edited, "").hit, 0, "strict: no unit at or below the edit yet");
  assert.equal(sim.request(edited + "tail", "").hit, 896, "the edited input itself is now a unit");
  assert.equal(sim.request(head + "Y" + T("m", 500).slice(1), "").hit, 384, "LCP(edited, original) = 500 -> unit 384");
  const opt = new CacheSim({ mode: "optimistic" });
  opt.request(head + T("m", 500), "");
  assert.equal(opt.request(head + "Z" + T("m", 500).slice(1), "").hit, 384);
});

test("pairing: valid sequences and each DeepSeek violation", () => {
  const call = (...ids) => ({ role: "assistant", content: null, tool_calls: ids.map((id) => ({ id, type: "function", function: { name: "read", arguments: "{}" } })) });
  const res = (id) => ({ role: "tool", tool_call_id: id, content: "x" });
  const u = { role: "user", content: "hi" };
  assert.deepEqual(pairingViolations([u, call("a", "b"), res("b"), res("a"), u]), []);
  assert.equal(pairingViolations([u, call("a", "b"), res("a"), u])[0].kind, "missing_result");
  assert.equal(pairingViolations([u, call("a"), u, res("a")])[0].kind, "missing_result");
  assert.ok(pairingViolations([u, call("a"), u, res("a")]).some((v) => v.kind === "orphan_result"));
  assert.equal(pairingViolations([u, res("z")])[0].kind, "orphan_result");
  assert.equal(pairingViolations([u, call("a"), res("a"), res("a")])[0].kind, "duplicate_result");
  assert.equal(pairingViolations([u, call("a")])[0].kind, "missing_result");
});

function hostRequest(prompt, extra = []) {
  return {
    model: "deepseek-v4-flash",
    tools: [{ type: "function", function: { name: "read", parameters: {} } }],
    messages: [
      { role: "system", content: "SYS" },
      { role: "user", content: `[Sat 2026-11-21 22:20 UTC] ${prompt}` },
      ...extra,
      { role: "user", content: [{ type: "text", text: `${INTERNAL_CONTEXT_MARK}\nstuff\n<<<END_OPENCLAW_INTERNAL_CONTEXT>>>` }] },
    ],
  };
}

test("scripted model: walks steps by completed tool rounds, ignores the internal-context tail", () => {
  const prompt = `do it\n\n${scriptMarker({ steps: [{ read: "big.txt" }, { exec: "ls" }], reply: "all done" })}`;
  const r0 = respond(hostRequest(prompt));
  assert.equal(r0.kind, "tool_calls");
  assert.equal(r0.calls[0].name, "read");
  assert.deepEqual(JSON.parse(r0.calls[0].arguments), { path: "big.txt" });
  const round = (id) => [
    { role: "assistant", content: null, tool_calls: [{ id, type: "function", function: { name: "read", arguments: "{}" } }] },
    { role: "tool", tool_call_id: id, content: "result" },
  ];
  const r1 = respond(hostRequest(prompt, round("c1")));
  assert.equal(r1.calls[0].name, "exec");
  const r2 = respond(hostRequest(prompt, [...round("c1"), ...round("c2")]));
  assert.equal(r2.kind, "text");
  assert.match(r2.text, /^all done/);
});

test("scripted model: unlessKnown skips discovery steps when the needle was known at the turn's start", () => {
  const script = { steps: [{ unlessKnown: "`npm test`", steps: [{ read: "package.json" }] }, { exec: "npm test" }], reply: "tests pass" };
  const prompt = `Add a function and run the tests. \`npm test\` in the prompt itself does not count.\n\n${scriptMarker(script)}`;
  const round = (id, name, result) => [
    { role: "assistant", content: null, tool_calls: [{ id, type: "function", function: { name, arguments: "{}" } }] },
    { role: "tool", tool_call_id: id, content: result },
  ];
  // Unknown: read, then exec (the read's result naming the command does not change the plan),
  // then the reply.
  const a0 = respond(hostRequest(prompt));
  assert.equal(a0.calls[0].name, "read");
  assert.deepEqual(JSON.parse(a0.calls[0].arguments), { path: "package.json" });
  const afterRead = round("r1", "read", '{"scripts":{"test":"node check.mjs"}} run with `npm test`');
  const a1 = respond(hostRequest(prompt, afterRead));
  assert.equal(a1.calls[0].name, "exec");
  assert.deepEqual(JSON.parse(a1.calls[0].arguments), { command: "npm test" });
  assert.match(respond(hostRequest(prompt, [...afterRead, ...round("e1", "exec", "ok")])).text, /^tests pass/);
  // Known from the system prompt (an injected lesson): straight to exec, one request fewer.
  const known = (extra = []) => {
    const b = hostRequest(prompt, extra);
    b.messages[0].content = "SYS\n[testing] How the tests are run\n- run the tests with `npm test` (passed when captured)";
    return b;
  };
  const b0 = respond(known());
  assert.equal(b0.calls[0].name, "exec");
  assert.match(respond(known(round("e1", "exec", "ok"))).text, /^tests pass/);
  // Known from an earlier turn of the session counts too; nested groups expand the same way.
  const nested = { steps: [{ unlessKnown: "ZEBRA", steps: [{ read: "a" }, { unlessKnown: "QUAGGA", steps: [{ read: "b" }] }] }, { reply: "r" }] };
  const p2 = `go\n\n${scriptMarker(nested)}`;
  const earlier = hostRequest(p2);
  earlier.messages.splice(1, 0, { role: "user", content: "QUAGGA is known" }, { role: "assistant", content: "ok" });
  assert.deepEqual(JSON.parse(respond(earlier).calls[0].arguments), { path: "a" });
  assert.equal(respond(hostRequest(p2, round("x", "read", "A"))).calls[0].name, "read");
  earlier.messages.splice(-1, 0, ...round("x", "read", "A"));
  assert.equal(respond(earlier).text, "r");
});

test("scripted model: $ARTIFACT comes from the newest shrunk tool result; unresolved is reported", () => {
  const prompt = `again\n\n${scriptMarker({ steps: [{ plugin: "cachefold_recover", args: { id: "$ARTIFACT", lines: [1, 2] } }] })}`;
  const a1 = "a".repeat(40);
  const a2 = "b".repeat(40);
  const earlier = [
    { role: "assistant", content: null, tool_calls: [{ id: "x1", type: "function", function: { name: "exec", arguments: "{}" } }] },
    { role: "tool", tool_call_id: "x1", content: `[cachefold] exec output 9000 chars shrunk; artifact ${a1}` },
    { role: "assistant", content: null, tool_calls: [{ id: "x2", type: "function", function: { name: "exec", arguments: "{}" } }] },
    { role: "tool", tool_call_id: "x2", content: `[cachefold] exec output 9000 chars → artifact ${a2}` },
    { role: "assistant", content: "ok" },
  ];
  const body = hostRequest(prompt);
  body.messages.splice(1, 0, { role: "user", content: "first" }, ...earlier);
  const r = respond(body);
  assert.equal(r.calls[0].name, "tool_call");
  assert.deepEqual(JSON.parse(r.calls[0].arguments), { id: "cachefold_recover", args: { id: a2, lines: [1, 2] } });
  assert.match(respond(hostRequest(prompt)).text, /UNRESOLVED \$ARTIFACT/);
});

test("scripted model: fact check present / via fold record / absent", () => {
  const prompt = `code?\n\n${scriptMarker({ steps: [{ check: "ZEBRA-4417", recoverFold: true }] })}`;
  const withFact = hostRequest(prompt);
  withFact.messages.splice(1, 0, { role: "user", content: "The launch code is ZEBRA-4417." }, { role: "assistant", content: "ok" });
  assert.equal(respond(withFact).text, "CHECK ZEBRA-4417: present");
  assert.equal(respond(hostRequest(prompt)).text, "CHECK ZEBRA-4417: absent");
  const folded = hostRequest(prompt);
  folded.messages.splice(1, 0, { role: "user", content: '[cachefold fold f1] Earlier conversation folded. Exact text: call cachefold_recover with {"id":"f1"}' });
  const r = respond(folded);
  assert.deepEqual(JSON.parse(r.calls[0].arguments), { id: "cachefold_recover", args: { id: "f1", maxChars: 32000 } });
  folded.messages.splice(-1, 0, { role: "assistant", content: null, tool_calls: [{ id: "k", type: "function", function: { name: "tool_call", arguments: "{}" } }] }, { role: "tool", tool_call_id: "k", content: "... The launch code is ZEBRA-4417 ..." });
  assert.equal(respond(folded).text, "CHECK ZEBRA-4417: recovered");
});

test("summarizer: fills the host's required sections and keeps identifiers", () => {
  const conv = `<conversation>\n[User]: The launch code is ZEBRA-4417.\n\n[Assistant]: ok\n\n[User]: run the report 20261121\n</conversation>\n\nProduce a compact, factual summary with these exact section headings:\n## Decisions\n## Open TODOs\n## Constraints/Rules\n## Pending user asks\n## Exact identifiers\n`;
  const s = summarize([{ role: "system", content: "You summarize." }, { role: "user", content: conv }]);
  for (const h of ["## Decisions", "## Open TODOs", "## Constraints/Rules", "## Pending user asks", "## Exact identifiers"]) assert.ok(s.split("\n").includes(h), h);
  assert.match(s, /ZEBRA-4417/);
  assert.match(s, /20261121/);
  assert.equal(respond({ messages: [{ role: "user", content: conv }] }).note, "summary");
});

test("fake provider: SSE wire format, DeepSeek usage fields, 400 on broken pairing", async () => {
  const p = await startFakeProvider();
  try {
    const body = { ...hostRequest("hello"), stream: true, stream_options: { include_usage: true } };
    const res = await fetch(`${p.baseUrl}/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
    assert.equal(res.status, 200);
    assert.match(res.headers.get("content-type"), /text\/event-stream/);
    const text = await res.text();
    const events = text.split("\n\n").filter(Boolean).map((l) => l.replace(/^data: /, ""));
    assert.equal(events[events.length - 1], "[DONE]");
    const chunks = events.slice(0, -1).map((e) => JSON.parse(e));
    assert.equal(chunks[0].choices[0].delta.role, "assistant");
    assert.ok(chunks.some((c) => c.choices[0]?.finish_reason === "stop"));
    const last = chunks[chunks.length - 1];
    assert.deepEqual(last.choices, []);
    const u = last.usage;
    assert.equal(u.prompt_cache_hit_tokens + u.prompt_cache_miss_tokens, u.prompt_tokens);
    assert.equal(u.prompt_tokens_details.cached_tokens, u.prompt_cache_hit_tokens);
    assert.equal(u.prompt_tokens, countTokens(serializeRequest(body)));
    // the same request again: hits floor128 of itself
    const again = await (await fetch(`${p.baseUrl}/chat/completions`, { method: "POST", body: JSON.stringify({ ...body, stream: false }) })).json();
    assert.equal(again.usage.prompt_cache_hit_tokens, Math.floor(u.prompt_tokens / 128) * 128);
    // tool call answer
    const tc = { ...hostRequest(`x ${scriptMarker({ steps: [{ exec: "ls" }] })}`), stream: true };
    const tcText = await (await fetch(`${p.baseUrl}/chat/completions`, { method: "POST", body: JSON.stringify(tc) })).text();
    const tcChunks = tcText.split("\n\n").filter((l) => l && l !== "data: [DONE]").map((l) => JSON.parse(l.slice(6)));
    assert.equal(tcChunks.find((c) => c.choices[0]?.delta?.tool_calls)?.choices[0].delta.tool_calls[0].function.name, "exec");
    assert.ok(tcChunks.some((c) => c.choices[0]?.finish_reason === "tool_calls"));
    // broken pairing
    const bad = hostRequest("x", [{ role: "tool", tool_call_id: "nope", content: "r" }]);
    const r400 = await fetch(`${p.baseUrl}/chat/completions`, { method: "POST", body: JSON.stringify(bad) });
    assert.equal(r400.status, 400);
    const err = await r400.json();
    assert.equal(err.error.type, "invalid_request_error");
    assert.equal(p.stats.http400, 1);
    assert.equal(p.requests.length, 4);
  } finally {
    await p.close();
  }
});

test("analysis: lcp, prefix breaks, cost and fact reachability", () => {
  assert.equal(lcpBytes("abcdef", "abcxef"), 3);
  assert.equal(inputCost(1e6, 1e6), 0.306);
  const mk = (seq, msgs) => ({ seq, status: 200, note: "x", session: "s", body: { tools: [{ type: "function" }], messages: msgs }, usage: { prompt_tokens: 10, prompt_cache_hit_tokens: 5, prompt_cache_miss_tokens: 5, completion_tokens: 1 } });
  const sys = { role: "system", content: "S" };
  const ic = { role: "user", content: `${INTERNAL_CONTEXT_MARK} x` };
  const reqs = [
    mk(1, [sys, { role: "user", content: "a" }, ic]),
    mk(2, [sys, { role: "user", content: "a" }, { role: "assistant", content: "b" }, { role: "user", content: "c" }, ic]),
    mk(3, [sys, { role: "user", content: "CHANGED" }, { role: "assistant", content: "b" }, ic]),
  ];
  const br = prefixBreaks(reqs);
  assert.equal(br.length, 1);
  assert.equal(br[0].seq, 3);
  assert.equal(br[0].role, "user");
  const scenario = { needle: "ZEBRA-4417" };
  const turns = [{ index: 0, ms: 10, ok: true, requests: [reqs[2]], text: "CHECK ZEBRA-4417: absent" }];
  const s = summarizeRun({ requests: reqs, turns, scenario });
  assert.equal(s.factReachable, "no");
  assert.equal(s.promptTokens, 30);
  assert.equal(s.hitPct, 50);
});

test("scenarios are deterministic and sized as documented", () => {
  assert.equal(makeTextFile(1, 60_000), makeTextFile(1, 60_000));
  assert.ok(makeTextFile(1, 60_000).length >= 60_000);
  assert.match(bigOutputCommand(3), /^seq -f '.*' 1 3$/);
  for (const name of ["basic", "tools", "fold"]) {
    const s = buildScenario(name, { turns: 8 });
    assert.equal(s.turns[0].kind, "plant");
    assert.equal(s.turns[s.turns.length - 1].kind, "check");
    assert.deepEqual(buildScenario(name, { turns: 8 }), s);
  }
  const f = buildScenario("fold", { turns: 5 });
  assert.equal(f.turns.length, 5);
  assert.equal(f.defaultWindow, 48_000);
  for (const c of Object.values(f.files)) assert.ok(c.length < 12_000, "fold reads stay under the read shrink threshold");
});

// ---- progress-bounded waits, the host's maintenance records, the lessons block check ----------

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Progress } from "./lib/progress.mjs";
import { HostLogTail } from "./lib/host-log.mjs";
import { sessionStartPrefix } from "./lib/lessons-measure.mjs";

test("Progress: a step with no progress fails naming itself; a moving signal keeps it alive", async () => {
  let n = 0;
  const p = new Progress({ counters: () => [n], describe: () => "last: x" });
  await assert.rejects(p.wait(new Promise(() => {}), "step A", { stallMs: 150, everyMs: 20 }), /^Error: step A: no progress for 0 s \(0 s in step; last: x\)$/);
  const moving = setInterval(() => n++, 30);
  const late = new Promise((r) => setTimeout(() => r("done"), 400));
  assert.equal(await p.wait(late, "step B", { stallMs: 150, everyMs: 20 }), "done");
  clearInterval(moving);
  await assert.rejects(p.wait(new Promise(() => {}), "step C", { stallMs: 10_000, everyMs: 20, check: () => { throw new Error("process died"); } }), /process died/);
});

test("HostLogTail: maintenance owners per session key, read incrementally, partial lines kept", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cf-hostlog-"));
  const file = path.join(dir, "log.jsonl");
  const rec = (phase, id, key = "agent:main:s", gen = "g1") => JSON.stringify({ 0: '{"subsystem":"agents/session-maintenance"}', 1: { event: "session_maintenance", phase, sessionKey: key, maintenanceId: id, lifecycleGeneration: gen }, 2: "session maintenance lifecycle" });
  fs.writeFileSync(file, `${rec("pending", 0)}\n${rec("started", 0)}\n{"0":"other line"}\n`);
  const tail = new HostLogTail(file);
  const mark = tail.seen("agent:main:s");
  assert.deepEqual([...mark], ["g1#0"]);
  fs.appendFileSync(file, `${rec("settled", 0)}\n${rec("pending", 1)}\n${rec("pending", 5, "agent:main:other")}\n${rec("settled", 1).slice(0, 40)}`);
  assert.deepEqual(tail.since("agent:main:s", mark), [{ id: "g1#1", phases: ["pending"], settled: false }]);
  fs.appendFileSync(file, `${rec("settled", 1).slice(40)}\n`);
  assert.deepEqual(tail.since("agent:main:s", mark), [{ id: "g1#1", phases: ["pending", "settled"], settled: true }]);
  assert.deepEqual(tail.since("agent:main:s", new Set()).map((o) => o.id), ["g1#0", "g1#1"]);
  // A restarted Gateway counts its owners from 0 again under a new generation: its first owner
  // after a mark is new (keyed by id alone it was taken for the old owner 0, and the wait for the
  // turn's post-turn work never ended).
  const beforeRestart = tail.seen("agent:main:s");
  fs.appendFileSync(file, `${rec("pending", 0, "agent:main:s", "g2")}\n`);
  assert.deepEqual(tail.since("agent:main:s", beforeRestart), [{ id: "g2#0", phases: ["pending"], settled: false }]);
  fs.appendFileSync(file, `${rec("settled", 0, "agent:main:s", "g2")}\n`);
  assert.deepEqual(tail.since("agent:main:s", beforeRestart), [{ id: "g2#0", phases: ["pending", "settled"], settled: true }]);
  fs.rmSync(dir, { recursive: true, force: true });
});

test("sessionStartPrefix: the common prefix passes the injected block only when its bytes repeat", () => {
  const req = (system, user) => ({ body: { messages: [{ role: "system", content: system }, { role: "user", content: user }] } });
  const block = "[testing] run the tests with `npm test` (package.json#scripts.test)";
  const sys = (b) => `You are a helpful agent. ${"stable ".repeat(200)}\n\n${b}\n\nTools follow.`;
  const prev = req(sys(block), "[Thu 2026-11-26 07:01 UTC] task");
  const blockEnd = Math.floor((sys(block).indexOf(block) + block.length) / 4);
  assert.ok(sessionStartPrefix(prev, req(sys(block), "[Thu 2026-11-26 07:02 UTC] task"), block).withTokens >= blockEnd);
  const changed = block.replace("npm test", "npm tests");
  assert.ok(sessionStartPrefix(prev, req(sys(changed), "[Thu 2026-11-26 07:02 UTC] task"), changed).withTokens < blockEnd);
});
