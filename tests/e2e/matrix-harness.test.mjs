// Fast checks of the matrix's own parts (no OpenClaw; Node >= 20, well under a second):
// DeepSeek's reasoning_content rule and the thinking fake provider, the Anthropic Messages mode
// (cache_control semantics, wire format, mark check), turn-failure detection, the matrix
// scenarios, event placement, the verdict and the table.

import test from "node:test";
import assert from "node:assert/strict";
import { reasoningViolations, pairingViolations } from "./lib/pairing.mjs";
import { startFakeProvider } from "./lib/fake-provider.mjs";
import { scriptMarker, INTERNAL_CONTEXT_MARK } from "./lib/script.mjs";
import { turnError } from "./lib/turn-result.mjs";
import { buildMatrixScenario, makeMarkdownFile } from "./lib/matrix-scenarios.mjs";
import { CELLS, VARIANTS, resolveAt, cellScenario, judgeRun, matrixRow, matrixTable, logFindings, reasoningReplay, reachedPaths, restartsRestored, sameHost, recallOf, markMeasure, idleGapMeasure, ANTHROPIC_SONNET } from "./lib/matrix.mjs";
import { AnthropicCacheSim, toChatBody } from "./lib/anthropic.mjs";
import { inputCost } from "./lib/analyze.mjs";

const call = (id) => ({ id, type: "function", function: { name: "read", arguments: "{}" } });
const sys = { role: "system", content: "S" };

test("reasoning_content rule: tool-call assistant messages must carry it (empty string is accepted)", () => {
  const result = { role: "tool", tool_call_id: "c1", content: "r" };
  assert.deepEqual(reasoningViolations([sys, { role: "user", content: "u" }, { role: "assistant", content: "hi" }]), [], "plain text answers may omit it");
  assert.deepEqual(reasoningViolations([{ role: "assistant", content: null, tool_calls: [call("c1")], reasoning_content: "" }, result]), []);
  assert.deepEqual(reasoningViolations([{ role: "assistant", content: null, tool_calls: [call("c1")], reasoning_content: "thought" }, result]), []);
  const v = reasoningViolations([sys, { role: "user", content: "u" }, { role: "assistant", content: null, tool_calls: [call("c1")] }, result]);
  assert.equal(v.length, 1);
  assert.equal(v[0].index, 2);
  assert.equal(v[0].kind, "missing_reasoning_content");
  assert.match(v[0].message, /reasoning_content.*must be passed back/);
  assert.equal(reasoningViolations([{ role: "assistant", tool_calls: [call("c1")], reasoning_content: null }, result]).length, 1, "null is not a string");
  assert.deepEqual(pairingViolations([{ role: "assistant", tool_calls: [call("c1")] }, result]), [], "independent of the pairing rule");
});

test("thinking fake provider: streams reasoning_content first, 400s a tool call replayed without it", async () => {
  const p = await startFakeProvider({ thinking: true });
  const post = (body) => fetch(`${p.baseUrl}/chat/completions`, { method: "POST", body: JSON.stringify({ stream: true, tools: [{ type: "function", function: { name: "read" } }], ...body }) });
  try {
    const prompt = { role: "user", content: `go ${scriptMarker({ steps: [{ read: "a.md" }], reply: "done" })}` };
    const ic = { role: "user", content: `${INTERNAL_CONTEXT_MARK} x` };
    const text = await (await post({ messages: [sys, prompt, ic] })).text();
    const chunks = text.split("\n\n").filter((l) => l && l !== "data: [DONE]").map((l) => JSON.parse(l.slice(6)));
    const firstReasoning = chunks.findIndex((c) => c.choices[0]?.delta?.reasoning_content);
    const firstCall = chunks.findIndex((c) => c.choices[0]?.delta?.tool_calls);
    assert.ok(firstReasoning > 0 && firstReasoning < firstCall, "reasoning deltas come before the tool call");
    const thought = chunks.map((c) => c.choices[0]?.delta?.reasoning_content ?? "").join("");
    assert.match(thought, /call read/);
    const tc = chunks[firstCall].choices[0].delta.tool_calls[0];
    const asst = { role: "assistant", content: null, tool_calls: [{ id: tc.id, type: "function", function: tc.function }] };
    const result = { role: "tool", tool_call_id: tc.id, content: "file" };
    const ok = await post({ messages: [sys, prompt, { ...asst, reasoning_content: thought }, result, ic] });
    assert.equal(ok.status, 200);
    await ok.text();
    const bad = await post({ messages: [sys, prompt, asst, result, ic] });
    assert.equal(bad.status, 400);
    assert.match((await bad.json()).error.message, /reasoning_content/);
    assert.equal(p.stats.http400, 1);
    assert.equal(p.stats.reasoning400, 1);
  } finally {
    await p.close();
  }
  const plain = await startFakeProvider();
  try {
    const r = await fetch(`${plain.baseUrl}/chat/completions`, { method: "POST", body: JSON.stringify({ tools: [{}], messages: [{ role: "assistant", tool_calls: [call("c1")] }, { role: "tool", tool_call_id: "c1", content: "r" }, { role: "user", content: "u" }] }) });
    assert.equal(r.status, 200, "a non-thinking model does not require reasoning_content");
    await r.text();
  } finally {
    await plain.close();
  }
});

test("turnError: exit code, errorCode, error status, missing reply; null for a good turn", () => {
  const good = { result: { payloads: [{ text: "hi" }] } };
  assert.equal(turnError({ code: 0, json: good, text: "hi" }), null);
  assert.match(turnError({ code: 1, json: null, text: null, stderr: "Error: Preflight compaction required but failed: x\n" }), /exit 1: .*Preflight compaction/);
  assert.match(turnError({ code: 0, json: { status: "error", errorCode: "UNAVAILABLE", error: "Preflight compaction required but failed" }, text: null }), /errorCode=UNAVAILABLE: Preflight/);
  assert.match(turnError({ code: 0, json: { status: "failed", summary: "x" }, text: "" }), /status=failed/);
  assert.match(turnError({ code: 0, json: { result: { payloads: [] } }, text: "" }), /no reply text/);
  assert.match(turnError({ code: 0, json: null, text: null, stdout: "garbage" }), /no JSON result/);
  assert.match(turnError({ code: null, timedOut: true, json: null }), /timed out/);
});

test("matrix scenarios: deterministic, sizes in range, facts per session, /compact turns", () => {
  assert.equal(makeMarkdownFile(3, 20_000), makeMarkdownFile(3, 20_000));
  assert.equal(makeMarkdownFile(3, 20_000).length, 20_000);
  assert.match(makeMarkdownFile(3, 20_000), /^# Document 3\n[\s\S]*\n## 1\. /);
  const s = buildMatrixScenario({ turns: 18, readKB: [12, 40], execKB: [2, 6] });
  assert.deepEqual(buildMatrixScenario({ turns: 18, readKB: [12, 40], execKB: [2, 6] }), s);
  assert.equal(s.turns.length, 18);
  assert.equal(s.turns[0].kind, "plant");
  assert.equal(s.turns.at(-1).kind, "check");
  assert.match(s.turns[0].message, /ZEBRA-4417/);
  const sizes = Object.values(s.files).map((f) => f.length);
  assert.equal(sizes.length, 16);
  for (const b of sizes) assert.ok(b >= 12 * 1024 && b <= 40 * 1024, `read size ${b}`);
  for (const t of s.turns.filter((x) => x.kind === "work")) {
    const rows = Number(/ 1 (\d+)\\"/.exec(t.message)?.[1] ?? /' 1 (\d+)/.exec(t.message)[1]);
    assert.ok(rows * 46 >= 1.5 * 1024 && rows * 46 <= 6.5 * 1024, `exec rows ${rows}`);
  }
  const two = buildMatrixScenario({ turns: 10, sessions: ["a", "b"] });
  assert.deepEqual(two.turns.map((t) => t.session).slice(0, 4), ["a", "b", "a", "b"]);
  assert.deepEqual(two.facts.map((f) => f.needle), ["ZEBRA-4417", "LYNX-8820"]);
  for (const sess of ["a", "b"]) {
    const mine = two.turns.filter((t) => t.session === sess);
    assert.equal(mine[0].kind, "plant");
    assert.equal(mine.at(-1).kind, "check");
  }
  const c = cellScenario("compact", CELLS.compact, { turns: 18 });
  assert.deepEqual(c.turns.map((t, i) => (t.kind === "compact" ? i : -1)).filter((i) => i >= 0), [7, 14]);
  assert.equal(c.turns[7].message, "/compact");
});

test("matrix: events scale with --turns; every cell builds; variants are legacy + ownsCompaction true/false", () => {
  assert.deepEqual([...resolveAt({ 0.5: "restart" }, 18)], [[9, ["restart"]]]);
  assert.deepEqual([...resolveAt({ 0.34: "slot:legacy", 0.67: "slot:engine" }, 6)], [[2, ["slot:legacy"]], [4, ["slot:engine"]]]);
  assert.deepEqual([...resolveAt({ 0.99: "install" }, 4)], [[2, ["install"]]], "kept before the last turn");
  for (const [name, cell] of Object.entries(CELLS)) {
    const s = cellScenario(name, cell, { turns: 6 });
    assert.ok(s.turns.length >= 6, name);
    assert.ok(cell.estimate > 0 && cell.window > 0, name);
  }
  assert.deepEqual(VARIANTS.map((v) => v.pluginConfig?.ownsCompaction ?? "legacy"), ["legacy", true, false]);
});

test("matrix verdict and table: failed turns, 400s, recall, cost vs legacy", () => {
  const mk = (label, engine, o = {}) => ({
    cell: "repro-48k",
    label,
    variant: { label, engine },
    window: 48_000,
    turnsPlanned: 3,
    turns: [0, 1, 2].map((i) => ({ index: i, ok: !(o.fail ?? []).includes(i), error: (o.fail ?? []).includes(i) ? "errorCode=UNAVAILABLE: Preflight compaction required but failed: x" : null })),
    summary: { requests: 9, promptTokens: 100_000, hitPct: 80, inputCostUsd: o.cost ?? 0.01, http400: o.http400 ?? 0, maxPrompt: 40_000 },
    stats: { reasoning400: o.http400 ?? 0 },
    recall: [{ session: "main", needle: "ZEBRA-4417", reachable: o.recall ?? "verbatim", reply: "CHECK" }],
    logFindings: logFindings(o.logs ?? ""),
    runtimeEvents: [],
    totalMs: 60_000,
    reached: o.reached ?? { fold: 2, evicted: 0, compacted: 0, manualCompact: 0 },
  });
  const legacy = mk("legacy", "legacy", { cost: 0.02 });
  assert.deepEqual(judgeRun(legacy, legacy), { ok: true, failures: [] });
  assert.equal(judgeRun(mk("cf", "cachefold", { cost: 0.01 }), legacy).ok, true);
  const bad = judgeRun(mk("cf", "cachefold", { cost: 0.03, fail: [1, 2], http400: 2, recall: "no", logs: 'x\n[context-engine] Context engine "cachefold" degraded to "legacy" for this logical turn\ny' }), legacy);
  assert.equal(bad.ok, false);
  assert.match(bad.failures.join("\n"), /turns failed: 1,2 \(first: errorCode=UNAVAILABLE/);
  assert.match(bad.failures.join("\n"), /2 HTTP 400 .*2 missing reasoning_content/);
  assert.match(bad.failures.join("\n"), /ZEBRA-4417 .* not recalled/);
  assert.match(bad.failures.join("\n"), /1\.500x legacy/);
  assert.match(bad.failures.join("\n"), /degraded to legacy/);
  // A cachefold run that never reached its cell's host path (repro-48k: a fold) fails.
  const noFold = judgeRun(mk("cf", "cachefold", { cost: 0.01, reached: { fold: 0, evicted: 0, compacted: 0, manualCompact: 0 } }), legacy);
  assert.deepEqual(noFold.failures.map((f) => f.split(" (")[0]), ["the cell's host path was not reached: no fold"]);
  // A /compact cachefold declined as fitting under the host's trigger must not be compacted by
  // the host (its summary would replace the history); one the host compacted after a decline
  // without `fits` (the context needed room) is the hand-over working.
  const compactEv = (fits) => ({ event: "compact", trigger: "manual", answer: { pending: false, fits, reason: "already compacted: a fold now would save under 5 %" } });
  const withCompacts = (fits, compacted) => ({ ...mk("cf", "cachefold", { cost: 0.01, reached: { fold: 2, evicted: 0, compacted, manualCompact: 2 } }), events: [compactEv(fits), compactEv(fits)] });
  assert.match(judgeRun(withCompacts(true, 1), legacy).failures.join("\n"), /2 \/compact declined as fitting under the host's trigger, yet the host compacted 1 of 2/);
  assert.deepEqual(judgeRun(withCompacts(true, 0), legacy).failures, []);
  assert.deepEqual(judgeRun(withCompacts(false, 2), legacy).failures, []);
  const rows = [matrixRow(legacy, legacy), matrixRow(mk("cachefold ownsCompaction=true", "cachefold", { cost: 0.005, fail: [2] }), legacy), matrixRow({ cell: "x", label: "y", error: "boom|1" }, null)];
  assert.equal(rows[1].costXLegacy, 0.25);
  const t = matrixTable(rows).split("\n");
  assert.equal(t.length, 5);
  assert.match(t[0], /^\| cell \| engine\/variant \| turns ok\/total \| requests \| prompt tokens \| hit % \| input cost × legacy \| 400s \| recall \|/);
  assert.match(t[2], /^\| repro-48k \| legacy \| 3\/3 \| 9 \| 100,000 \| 80\.0 \| 1\.000 \| 0 \| yes \| pass \|$/);
  assert.match(t[3], /\| 2\/3 \| .* \| 0\.250 \| 0 \| yes \| FAIL: turns failed: 2 /);
  assert.match(t[4], /ERROR: boom\\\|1/);
});

test("reachedPaths reads folds, host evictions and the manual /compact from the decision log", () => {
  const ev = (event, o) => ({ event, ...o });
  const run = {
    events: [
      ev("assemble", { report: { folds: [{ id: "f1" }, { id: "f2" }] } }),
      ev("assemble", { report: { folds: [], divergence: { cause: "host_evicted", action: "evict" } } }),
      ev("compact", { trigger: "manual", answer: { reason: "already compacted" } }),
      ev("compact", { report: { fold: { id: "f3" } } }),
      ev("config", {}),
    ],
    turns: [
      { kind: "compact", ok: true, text: "⚙️ Compaction skipped: nothing compactable in this session yet" },
      { kind: "compact", ok: true, text: "⚙️ Compacted (40k → 9k)" },
      { kind: "work", ok: true, text: "done" },
    ],
  };
  assert.deepEqual(reachedPaths(run), { fold: 3, evicted: 1, compacted: 1, manualCompact: 1 });
  assert.deepEqual(reachedPaths({ events: [], turns: [] }), { fold: 0, evicted: 0, compacted: 0, manualCompact: 0 });
});

test("restartsRestored: the first assemble of the turn after a restart must carry the persisted state (managed, not everything ingested)", () => {
  const at = (ms) => new Date(ms).toISOString();
  const asm = (ms, count, report, sessionId = "s1") => ({ event: "assemble", at: at(ms), sessionId, count, report: { managed: true, divergence: null, ...report } });
  const turns = [{ startedAt: 1_000, sessionId: "s1" }, { startedAt: 2_000, sessionId: "s1" }, { startedAt: 3_000, sessionId: "s1" }];
  const runtimeEvents = [{ beforeTurn: 1, event: "restart" }, { beforeTurn: 2, event: "restart" }];
  const run = (events) => ({ events, turns, runtimeEvents });
  // Both restarts carried: only the new messages ingested (an empty call and another session's
  // assemble in between do not count as the turn's first).
  const carried = [asm(1_100, 10, { ingested: 10 }), asm(2_050, 0, { ingested: 0 }), asm(2_060, 40, { ingested: 40 }, "other"), asm(2_100, 20, { ingested: 10 }), asm(3_100, 30, { ingested: 10 })];
  assert.equal(restartsRestored(run(carried)), 2);
  assert.equal(reachedPaths(run(carried)).restored, 2);
  // A state lost at the second restart ingests everything again; an unmanaged (passed-through)
  // call does not count either. A host eviction the engine recognised there does not undo the
  // carried state (ownsCompaction false: OpenClaw evicts every turn).
  assert.equal(restartsRestored(run([asm(2_100, 20, { ingested: 10 }), asm(3_100, 30, { ingested: 30 })])), 1);
  assert.equal(restartsRestored(run([asm(2_100, 20, { ingested: 20 }), asm(3_100, 30, { ingested: 10, managed: false })])), 0);
  assert.equal(restartsRestored(run([asm(2_100, 154, { ingested: 34, divergence: { at: 0, cause: "host_evicted", action: "evict" } }), asm(3_100, 30, { ingested: 10 })])), 2);
  // No restart in the run: no `restored` key.
  assert.equal("restored" in reachedPaths({ events: carried, turns, runtimeEvents: [] }), false);
});

test("reasoningReplay counts tool-call messages sent back with (non-empty) reasoning_content", () => {
  const a = (rc) => ({ role: "assistant", tool_calls: [call("c1")], ...(rc === undefined ? {} : { reasoning_content: rc }) });
  const reqs = [
    { status: 200, body: { messages: [a("thought"), a(""), a(undefined), { role: "assistant", content: "text" }] } },
    { status: 400, body: { messages: [a(undefined)] } },
  ];
  assert.deepEqual(reasoningReplay(reqs), { toolCallMessages: 3, withField: 2, nonEmpty: 1 });
});

test("/compact: the host's benign skips are not failures", async () => {
  const { BENIGN_COMPACT_SKIP } = await import("./lib/harness.mjs");
  assert.ok(BENIGN_COMPACT_SKIP.test("Already compacted"));
  assert.ok(BENIGN_COMPACT_SKIP.test("nothing to fold"));
  assert.ok(!BENIGN_COMPACT_SKIP.test("cachefold folds at the next assemble (history not available here)"));
  assert.ok(!BENIGN_COMPACT_SKIP.test("Preflight compaction required but failed"));
});

// An Anthropic Messages body: tools, a system prompt, and user text of `kb` KB per turn, each
// turn's last user text marked (as OpenClaw marks the latest user message).
const eph = { type: "ephemeral" };
function anthropicBody(turns, { markTool = true, markSystem = true, sysText = "S".repeat(8000) } = {}) {
  const messages = [];
  turns.forEach((t, i) => {
    messages.push({ role: "user", content: [{ type: "text", text: t, ...(i === turns.length - 1 ? { cache_control: eph } : {}) }] });
    if (i < turns.length - 1) messages.push({ role: "assistant", content: [{ type: "text", text: `ok ${i}` }] });
  });
  return {
    model: "claude-sonnet-5",
    tools: [{ name: "read", input_schema: { type: "object" } }, { name: "exec", input_schema: { type: "object" }, ...(markTool ? { cache_control: eph } : {}) }],
    system: [{ type: "text", text: sysText, ...(markSystem ? { cache_control: eph } : {}) }, { type: "text", text: "volatile" }],
    messages,
  };
}

test("Anthropic cache: writes at breakpoints, reads the longest cached one, minimum length, lifetime, 4-mark limit", () => {
  let now = 0;
  const sim = new AnthropicCacheSim({ ttlMs: 1000, now: () => now });
  const t1 = "a".repeat(20_000);
  const r1 = sim.request(anthropicBody([t1]));
  assert.equal(r1.read, 0);
  assert.equal(r1.write + r1.input, r1.tokens);
  assert.ok(r1.write > 5000, "the prefix up to the last mark is written");
  assert.deepEqual(r1.marks.map((m) => m.where), ["tool exec", "system[0]", "messages[0].user[0].text"]);
  // The next turn appends: the previous mark is found by the lookback and read; the new turn written.
  now = 500;
  const r2 = sim.request(anthropicBody([t1, "b".repeat(8_000)]));
  assert.equal(r2.read, r1.marks.at(-1).tokens, "reads what the previous request wrote");
  assert.ok(r2.write > 2000 && r2.write < 2100, `writes only the new turn (${r2.write})`);
  // A rewrite before the message mark: tools + system still read, the rest written again.
  now = 900;
  const r3 = sim.request(anthropicBody(["c".repeat(20_000), "b".repeat(8_000)]));
  assert.equal(r3.read, r1.marks[1].tokens, "the system mark's prefix is read");
  // Past the lifetime (counted from the last use) nothing is read.
  now = 900 + 1001;
  const r4 = sim.request(anthropicBody(["c".repeat(20_000), "b".repeat(8_000)]));
  assert.equal(r4.read, 0);
  // Under the minimum (1,024 tokens): no write at all.
  const small = new AnthropicCacheSim();
  const s1 = small.request(anthropicBody(["x"], { sysText: "s" }));
  assert.equal(s1.write, 0);
  assert.equal(s1.input, s1.tokens);
  // A mark more than 20 blocks after the cached one: the lookback does not reach it.
  const far = new AnthropicCacheSim();
  far.request(anthropicBody([t1], { markTool: false, markSystem: false }));
  const many = Array.from({ length: 12 }, (_, i) => `turn ${i} ${"y".repeat(600)}`);
  const f2 = far.request(anthropicBody([t1, ...many], { markTool: false, markSystem: false }));
  assert.equal(f2.read, 0, "24 blocks later the old entry is out of the lookback");
  // Five marks: the API's 400.
  const five = anthropicBody([t1]);
  five.system[1].cache_control = eph;
  five.tools[0].cache_control = eph;
  assert.match(new AnthropicCacheSim().request(five).error, /maximum of 4/);
  // Writes are priced at the write price.
  assert.equal(inputCost(100, 300, ANTHROPIC_SONNET, 200), (100 * 0.3 + 100 * 3 + 200 * 3.75) / 1e6);
});

test("Anthropic fake provider: Messages SSE with Anthropic usage, the chat form for the script, marks recorded", async () => {
  const p = await startFakeProvider({ cache: "anthropic", model: "claude-sonnet-5" });
  const prompt = `go ${scriptMarker({ steps: [{ read: "a.md" }], reply: "done" })}`;
  const wire = (extra) => ({
    model: "claude-sonnet-5",
    stream: true,
    max_tokens: 100,
    system: [{ type: "text", text: "S".repeat(6000), cache_control: eph }],
    tools: [{ name: "read", input_schema: { type: "object" }, cache_control: eph }],
    messages: [{ role: "user", content: [{ type: "text", text: prompt, cache_control: eph }, { type: "text", text: `${INTERNAL_CONTEXT_MARK} x` }] }, ...extra],
  });
  const events = async (body) => {
    const res = await fetch(`${p.baseUrl}/v1/messages`, { method: "POST", body: JSON.stringify(body) });
    assert.equal(res.status, 200);
    return (await res.text()).split("\n\n").filter(Boolean).map((b) => JSON.parse(b.split("\n").find((l) => l.startsWith("data: ")).slice(6)));
  };
  try {
    const ev = await events(wire([]));
    assert.deepEqual(ev.map((e) => e.type), ["message_start", "content_block_start", "content_block_delta", "content_block_stop", "message_delta", "message_stop"]);
    const use = ev[0].message.usage;
    assert.equal(use.cache_read_input_tokens, 0);
    assert.ok(use.cache_creation_input_tokens > 1500, JSON.stringify(use));
    const tu = ev[1].content_block;
    assert.equal(tu.type, "tool_use");
    assert.equal(tu.name, "read");
    assert.deepEqual(JSON.parse(ev[2].delta.partial_json), { path: "a.md" });
    assert.equal(ev[4].delta.stop_reason, "tool_use");
    // The tool round: tool_use back, tool_result marked; the script answers with its reply.
    const more = [
      { role: "assistant", content: [{ type: "tool_use", id: tu.id, name: "read", input: { path: "a.md" } }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: tu.id, content: "file text", cache_control: eph }] },
    ];
    const body2 = wire(more);
    delete body2.messages[0].content[0].cache_control;
    const ev2 = await events(body2);
    assert.equal(ev2[0].message.usage.cache_read_input_tokens, use.cache_creation_input_tokens, "the first request's written prefix is read");
    assert.match(ev2[2].delta.text + ev2[3].delta.text, /^done/);
    const rec = p.requests[1];
    assert.equal(rec.body.messages.at(-1).role, "tool", "recorded in chat form");
    assert.deepEqual(rec.marks.map((m) => m.where), ["tool read", "system[0]", "messages[2].user[0].tool_result"]);
    assert.equal(rec.usage.prompt_cache_hit_tokens, rec.wireUsage.cache_read_input_tokens);
    assert.equal(rec.usage.prompt_cache_miss_tokens, rec.wireUsage.cache_creation_input_tokens + rec.wireUsage.input_tokens);
    // The chat form keeps the runtime-context block apart from the prompt.
    const chat = toChatBody(body2);
    assert.deepEqual(chat.messages.map((m) => m.role), ["system", "user", "user", "assistant", "tool"]);
    // markMeasure: both requests kept the previous marked prefix and read it: no lost read.
    const m = markMeasure(p.requests, 5 * 60_000);
    assert.equal(m.requests, 2);
    assert.deepEqual(m.lostReads, []);
    assert.equal(m.placement["tools[last]"], 2);
    assert.equal(m.placement["user tool_result (latest)"], 1);
    // A request that keeps the prefix but reads less than it is a lost read.
    const lost = structuredClone(p.requests.slice(0, 2));
    lost[1].cacheRaw.read = 0;
    assert.equal(markMeasure(lost, 5 * 60_000).lostReads.length, 1);
  } finally {
    await p.close();
  }
});

test("idle gap: the decision log tells the free rewrite from an emergency; a cache kept alive through the pause fails", () => {
  const T = 1_000_000;
  const body = (text) => ({ messages: [{ role: "system", content: "S" }, { role: "user", content: text }], tools: [] });
  const req = (seq, t, text, hit) => ({ seq, t, status: 200, session: "s", body: body(text), usage: { prompt_tokens: 3000, prompt_cache_hit_tokens: hit, prompt_cache_miss_tokens: 3000 - hit } });
  const before = req(1, T, "a".repeat(12_000), 0);
  const gapReq = req(2, T + 100_000, "f1 record " + "b".repeat(4000), 0);
  const follow = req(3, T + 101_000, "f1 record " + "b".repeat(4000) + "more", 2000);
  const next = req(4, T + 110_000, "f1 record " + "b".repeat(4000) + "more, next turn", 2500);
  const fold = (reason, why) => ({ id: "f1", reason, decision: { reason: why }, tokensBefore: 9000, tokensAfter: 3000 });
  const mk = (report, extra = []) => ({
    runtimeEvents: [{ beforeTurn: 1, event: "idle:75000", ms: 75_000 }],
    turns: [
      { index: 0, startedAt: T - 1000, endedAt: T + 1000, requests: [before] },
      { index: 1, startedAt: T + 99_000, endedAt: T + 102_000, requests: [gapReq, follow] },
      { index: 2, startedAt: T + 109_000, endedAt: T + 111_000, requests: [next] },
    ],
    requests: [before, ...extra, gapReq, follow, next],
    events: [{ event: "assemble", at: new Date(T + 99_500).toISOString(), report }],
  });
  const free = idleGapMeasure(mk({ folds: [fold("priced", "pays: ..., cache expired: no break cost")], emergency: false }), 30_000);
  assert.equal(free.gapRewrite.free, 1);
  assert.equal(free.gapRewrite.emergency, false);
  assert.equal(free.aliveBeforeGap, false);
  assert.equal(free.followBreakTokens, 0);
  assert.equal(reachedPaths({ events: [], turns: [], idleGap: free }).idleRewrite, 1);
  // Still over the threshold after the free fold (the fixed prefix fills it): not an emergency fold.
  const over = idleGapMeasure(mk({ folds: [fold("priced", "pays: ..., cache expired: no break cost")], emergency: true }), 30_000);
  assert.equal(over.gapRewrite.emergency, false);
  assert.equal(over.gapRewrite.overThreshold, true);
  const emergency = idleGapMeasure(mk({ folds: [fold("emergency", "does not pay: ...")], emergency: true }), 30_000);
  assert.equal(emergency.gapRewrite.free, 0);
  assert.equal(emergency.gapRewrite.emergency, true);
  assert.equal(reachedPaths({ events: [], turns: [], idleGap: emergency }).idleRewrite, 0);
  // A host request 20 s before the gap request kept the cache alive: the cell tested no expiry.
  const alive = idleGapMeasure(mk({ folds: [fold("priced", "cache expired")], emergency: false }, [req(1.5, T + 80_000, "a".repeat(12_000), 0)]), 30_000);
  assert.equal(alive.aliveBeforeGap, true);
  assert.ok(alive.extraMissAtGap > 0);
  const run = (g, engine) => ({ cell: "idle-gap", variant: { engine }, turns: [{ index: 0, ok: true }], turnsPlanned: 1, logFindings: logFindings(""), summary: { http400: 0, inputCostUsd: 1 }, stats: {}, recall: [], idleGap: g, reached: reachedPaths({ events: [], turns: [], idleGap: g }) });
  assert.deepEqual(judgeRun(run(free, "cachefold")).failures, []);
  assert.match(judgeRun(run(emergency, "cachefold")).failures.join("\n"), /emergency fold, not the free one/);
  assert.match(judgeRun(run(alive, "cachefold")).failures.join("\n"), /kept the cache alive through the pause[\s\S]*rewrote as after an expiry on a live cache/);
  assert.match(judgeRun(run(alive, "legacy")).failures.join("\n"), /kept the cache alive through the pause/);
});

test("sameHost: cells share a Gateway on the same host configuration; a restart cell may join, a slot switch, install or idle pause may not", () => {
  assert.ok(sameHost(CELLS.compact, CELLS["repro-48k"]));
  assert.ok(sameHost(CELLS.restart, CELLS["repro-48k"]));
  assert.ok(!sameHost(CELLS["slot-switch"], CELLS["repro-48k"]));
  assert.ok(!sameHost(CELLS["late-install"], CELLS["repro-48k"]));
  assert.ok(!sameHost(CELLS["window-128k"], CELLS["repro-48k"]));
  assert.ok(!sameHost(CELLS.thinking, CELLS["repro-48k"]));
  assert.ok(!sameHost(CELLS["openai-gpt5"], CELLS["repro-48k"]));
});

test("recallOf judges each fact on its own session's last turn (two interleaved sessions: the last turn overall is the other session's)", () => {
  const req = (text) => ({ status: 200, note: "step0:check", body: { messages: [{ role: "system", content: "sys" }, { role: "user", content: text }, { role: "user", content: "What is the code? [[cf {} cf]]" }] } });
  const turn = (session, text, reply) => ({ scriptSession: session, ok: true, text: reply, requests: [req(text)] });
  const facts = [
    { session: "a", needle: "ZEBRA-4417" },
    { session: "b", needle: "LYNX-8820" },
  ];
  const turns = [turn("a", "The launch code is ZEBRA-4417", "ok"), turn("b", "The vault combination is LYNX-8820", "ok"), turn("a", "earlier: ZEBRA-4417", "CHECK ZEBRA-4417: present"), turn("b", "earlier: LYNX-8820", "CHECK LYNX-8820: present")];
  assert.deepEqual(
    recallOf(facts, turns, () => false).map((r) => [r.session, r.reachable, r.reply]),
    [
      ["a", "verbatim", "CHECK ZEBRA-4417: present"],
      ["b", "verbatim", "CHECK LYNX-8820: present"],
    ],
  );
  // A session whose check request lacks its fact is not recalled, whatever the other holds.
  const lost = [...turns.slice(0, 2), turn("a", "nothing here", "CHECK ZEBRA-4417: absent"), turns[3]];
  assert.deepEqual(recallOf(facts, lost, () => false).map((r) => r.reachable), ["no", "verbatim"]);
});
