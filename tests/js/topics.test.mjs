// Topic tools through the plugin and the real wasm core: cachefold_topics, cachefold_preview,
// cachefold_pin and cachefold_recover by turn (t<k>) and topic (T<n>) id.
import test from "node:test";
import assert from "node:assert/strict";
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { fakeApi, tempDir, user, assistantCall, assistantText, toolResult, sessionDir, pkgSkip } from "./helpers.mjs";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const skip = pkgSkip();

const SUBJECTS = [
  ["fix the parser in src/parse.rs, tokenizer_state breaks on quotes", "src/parse.rs"],
  ["new task: add a billing export to billing/export.py with invoice_totals", "billing/export.py"],
  ["moving on, tune deploy/nginx.conf worker_connections for the gateway", "deploy/nginx.conf"],
];

async function plugin(config) {
  const { default: p } = await import("../../js/index.js");
  const { api, reg } = fakeApi(config);
  p.register(api);
  const tool = (name, sessionId) => reg.tools.find((t) => t.opts?.name === name).tool({ sessionId, sessionKey: `agent:main:${sessionId}`, agentId: "main" });
  return { reg, tool };
}

/** Turn k on subject `s` (SUBJECTS): its ask when `first`, else a follow-up; a read of `lines` lines; an answer. */
function subjectTurn(k, s, first, lines) {
  const [ask, path] = SUBJECTS[s];
  const prompt = first ? `${ask} (step ${k})` : `continue with ${path}, step ${k}`;
  return [user(prompt), assistantCall(`c${k}`, "read", { path }), toolResult(`c${k}`, "read", `${path} line ${k}\n`.repeat(lines)), assistantText(`done with ${path} step ${k}`)];
}

/**
 * Turn k through a fresh engine, as the Gateway runs it: assemble up to its prompt, commit it
 * (appended to `hist`), then, with `llm`, maintain; maintain's result (or undefined).
 */
async function playTurn(reg, sessionId, hist, turn, k, { tokenBudget = 20000, llm } = {}) {
  const eng = await reg.engines.cachefold({});
  await eng.assemble({ sessionId, messages: [...hist, turn[0]], model: "deepseek-v4-flash", tokenBudget });
  hist.push(...turn);
  await eng.commitTurn({ sessionId, advancementKey: `k${k}`, messages: turn });
  return llm ? eng.maintain({ sessionId, runtimeContext: { llm } }) : undefined;
}

/** A session of 9 turns over 3 subjects with large reads, so early topics fold. */
async function session(reg, sessionId) {
  const hist = [];
  const firsts = [];
  for (let k = 0; k < 9; k++) {
    const turn = subjectTurn(k, Math.floor(k / 3), k % 3 === 0, 150);
    firsts.push(turn[0]);
    await playTurn(reg, sessionId, hist, turn, k);
  }
  const eng = await reg.engines.cachefold({});
  const r = await eng.assemble({ sessionId, messages: hist, model: "deepseek-v4-flash", tokenBudget: 20000 });
  return { hist, firsts, out: r.messages };
}

const CFG = (stateDir) => ({ stateDir, tailTokens: 1500, minFoldTokens: 500, foldRecordBudget: 4000, expectedRemainingCalls: 100, summary: { useLlm: false } });

test("topics, preview and recover by turn and topic id answer from the session's state", { skip }, async () => {
  const stateDir = tempDir();
  const { reg, tool } = await plugin(CFG(stateDir));
  const sid = "s-topics";
  const { firsts, out } = await session(reg, sid);
  assert.ok(out.some((m) => JSON.stringify(m).includes("[cachefold fold f1]")), "the session folded");

  const topics = await tool("cachefold_topics", sid).execute("c1", {});
  const list = topics.details.topics;
  assert.ok(list.length >= 2, topics.content[0].text);
  assert.equal(list[0].id, "T1");
  assert.equal(list[0].first, "t1");
  assert.ok(list.some((t) => t.state !== "live"), topics.content[0].text);
  assert.match(topics.content[0].text, /^\[cachefold_topics\] \d+ topics over 9 turns/);

  const preview = await tool("cachefold_preview", sid).execute("c2", {});
  assert.ok(preview.details.segments.length >= 1);
  assert.equal(preview.details.segments[0].id, "f1");
  assert.ok(preview.details.live.tokens > 0);
  assert.match(preview.content[0].text, /live tail: messages \d+\.\.\d+/);

  // t2 is folded (t1 is mostly the pinned head): its exact messages come back from the fold.
  const rec = await tool("cachefold_recover", sid).execute("c3", { id: "t2" });
  assert.equal(rec.details.found, true);
  assert.equal(rec.details.kind, "turn");
  const lines = rec.content[0].text.split("\n");
  assert.match(lines[0], /^\[cachefold_recover\] t2 \(topic T1\): messages 4\.\.8; 4 folded/);
  assert.deepEqual(JSON.parse(lines[2]), firsts[1], "line 1 of the range is t2's user message, exactly");
  assert.equal(JSON.parse(lines[5]).role, "assistant");
  // Bounded: a small cap says what remains.
  const capped = await tool("cachefold_recover", sid).execute("c4", { id: "T1", maxChars: 300 });
  assert.ok(capped.details.remaining > 0, capped.content[0].text.slice(0, 300));
  // The last turn is live: nothing to read, the answer says so.
  const live = await tool("cachefold_recover", sid).execute("c5", { id: "t9" });
  assert.match(live.content[0].text, /still in your context verbatim/);
  await assert.rejects(tool("cachefold_recover", sid).execute("c6", { id: "t99" }), (e) => e.code === "CACHEFOLD_INVALID_ID");
  await assert.rejects(tool("cachefold_recover", sid).execute("c7", { id: "t0" }), (e) => e.code === "CACHEFOLD_INVALID_ID");
});

test("pin journals a pin for a live turn, refuses bad ids, and a session without state answers plainly", { skip }, async () => {
  const stateDir = tempDir();
  const { reg, tool } = await plugin(CFG(stateDir));
  const sid = "s-pin";
  await session(reg, sid);
  const r = await tool("cachefold_pin", sid).execute("c1", { turn: "t9" });
  assert.equal(r.details.pinned, true, r.content[0].text);
  assert.match(r.content[0].text, /t9 pinned/);
  const dir = await sessionDir(stateDir, sid);
  const journal = readdirSync(dir)
    .filter((f) => f.startsWith("journal"))
    .map((f) => readFileSync(join(dir, f), "utf8"))
    .join("");
  assert.match(journal, /"pinTurn":\{"turn":9\}/);
  const again = await tool("cachefold_pin", sid).execute("c2", { turn: "t9" });
  assert.match(again.content[0].text, /already pinned/);
  const folded = await tool("cachefold_pin", sid).execute("c3", { turn: "t1" });
  assert.match(folded.content[0].text, /already folded/);
  assert.equal(folded.details.pinned, false);
  await assert.rejects(tool("cachefold_pin", sid).execute("c4", { turn: "T1" }), (e) => e.code === "CACHEFOLD_INVALID_ID");
  await assert.rejects(tool("cachefold_pin", sid).execute("c5", { turn: "t1000" }), (e) => e.code === "CACHEFOLD_INVALID_ID");
  for (const name of ["cachefold_topics", "cachefold_preview", "cachefold_pin"]) {
    const none = await tool(name, "s-never").execute("c", { turn: "t1" });
    assert.match(none.content[0].text, /No recorded turns/, name);
  }
});

test("with topics off the tools say so and recover by turn id finds nothing to read", { skip }, async () => {
  const stateDir = tempDir();
  const { reg, tool } = await plugin({ ...CFG(stateDir), topics: { enabled: false } });
  const sid = "s-off";
  await session(reg, sid);
  const t = await tool("cachefold_topics", sid).execute("c1", {});
  assert.match(t.content[0].text, /topics are off/);
  await assert.rejects(tool("cachefold_recover", sid).execute("c2", { id: "t1" }), (e) => e.code === "CACHEFOLD_INVALID_ID");
});

test("topics.useLlm: maintain sends the topic check through the host LLM and applies the answer; a malformed answer is ignored", { skip }, async () => {
  const stateDir = tempDir();
  const logFile = join(stateDir, "log.jsonl");
  const { reg, tool } = await plugin({ ...CFG(stateDir), logFile, topics: { useLlm: true, maxCallsPerHour: 6 } });
  const sid = "s-l2";
  const calls = [];
  // Turn 1: a malformed reply (ignored); turn 2: "new topic" with a label; later: labels only.
  const replies = ["I am not sure what you mean", '```json\n{"label": "Tokenizer quote bug", "isNewTopic": true}\n```'];
  const llm = {
    complete: async (req) => {
      calls.push(req);
      if (req.purpose !== "cachefold topic label") throw new Error("no summaries here");
      return { text: replies[calls.filter((c) => c.purpose === "cachefold topic label").length - 1] ?? '{"label":"Billing export","isNewTopic":false}' };
    },
  };
  const hist = [];
  for (let k = 0; k < 4; k++) {
    const r = await playTurn(reg, sid, hist, subjectTurn(k, k < 3 ? 0 : 1, k === 0 || k === 3, 20), k, { llm });
    assert.equal(r.changed, false);
  }
  const topicCalls = calls.filter((c) => c.purpose === "cachefold topic label");
  assert.ok(topicCalls.length >= 2, JSON.stringify(calls.map((c) => c.purpose)));
  assert.equal(topicCalls[0].maxTokens, 60);
  assert.match(topicCalls[0].systemPrompt, /isNewTopic/);
  assert.match(topicCalls[0].messages[0].content, /Newest turn t1:\nuser: fix the parser/);
  assert.match(topicCalls[1].messages[0].content, /Newest turn t2:/);
  const log = readFileSync(logFile, "utf8").trim().split("\n").map((l) => JSON.parse(l)).filter((e) => e.event === "topicCheck");
  assert.deepEqual(log.slice(0, 2).map((e) => [e.turn, e.status]), [["t1", "malformed"], ["t2", "applied"]]);
  // The answer for t2 opened a topic there, with the LLM's label, and the tools show it.
  const view = (await tool("cachefold_topics", sid).execute("c1", {})).details;
  const topics = view.topics;
  const t2 = topics.find((t) => t.first === "t2");
  assert.ok(t2, JSON.stringify(topics));
  assert.equal(t2.label, "Tokenizer quote bug");
  assert.equal(t2.llmLabel, true);
  assert.equal(topics[0].llmLabel, false, "the malformed answer about t1 labelled nothing");
  assert.equal(view.llmChecks.malformed, 1);
  assert.ok(view.llmChecks.applied >= 1);
  const dir = await sessionDir(stateDir, sid);
  const journal = readdirSync(dir).filter((f) => f.startsWith("journal")).map((f) => readFileSync(join(dir, f), "utf8")).join("");
  assert.match(journal, /"topicDone":\{"id":"t2#\d+","ok":true,"answer":\{"label":"Tokenizer quote bug","isNewTopic":true\}\}/);
});

test("topics.useLlm: a host LLM that throws never fails maintain, and off by default nothing is asked", { skip }, async () => {
  for (const useLlm of [true, undefined]) {
    const stateDir = tempDir();
    const topics = useLlm === undefined ? {} : { useLlm };
    const { reg } = await plugin({ ...CFG(stateDir), topics });
    const calls = [];
    const llm = {
      complete: async (req) => {
        calls.push(req.purpose);
        throw new Error("provider down");
      },
    };
    const turn = [user(`${SUBJECTS[0][0]}`), assistantText("looking")];
    const eng = await reg.engines.cachefold({});
    await eng.assemble({ sessionId: "s-l2x", messages: [turn[0]], model: "deepseek-v4-flash", tokenBudget: 20000 });
    await eng.commitTurn({ sessionId: "s-l2x", advancementKey: "k0", messages: turn });
    const r = await eng.maintain({ sessionId: "s-l2x", runtimeContext: { llm } });
    assert.deepEqual({ changed: r.changed, bytesFreed: r.bytesFreed }, { changed: false, bytesFreed: 0 });
    if (useLlm) {
      assert.deepEqual(calls, ["cachefold topic label"]);
      assert.match(r.reason, /topic check t1: failed/);
      // The next turn still assembles and commits.
      const e2 = await reg.engines.cachefold({});
      const a = await e2.assemble({ sessionId: "s-l2x", messages: [...turn, user("more")], model: "deepseek-v4-flash", tokenBudget: 20000 });
      assert.equal(a.messages.length, 3);
    } else {
      assert.deepEqual(calls, [], "off by default: no topic call");
    }
  }
});

test("summary.useLlm: maintain asks the host LLM for a fold summary and records it; a failing LLM falls back to the extractive record", { skip }, async () => {
  for (const fail of [false, true]) {
    const stateDir = tempDir();
    const logFile = join(stateDir, "log.jsonl");
    // One remaining call expected: a foldable region exists but its fold does not pay yet, which
    // is when the core asks for a summary.
    const { reg } = await plugin({ ...CFG(stateDir), logFile, expectedRemainingCalls: 1, summary: { useLlm: true } });
    const sid = `s-sum-${fail}`;
    const calls = [];
    const llm = {
      complete: async (req) => {
        calls.push(req);
        if (fail) throw new Error("provider down");
        return { text: req.purpose === "cachefold fold summary" ? "SUMMARY: parser quote handling fixed in src/parse.rs" : '{"label":"x","isNewTopic":false}' };
      },
    };
    const hist = [];
    for (let k = 0; k < 9; k++) {
      const r = await playTurn(reg, sid, hist, subjectTurn(k, Math.floor(k / 3), k % 3 === 0, 150), k, { tokenBudget: 200000, llm });
      assert.equal(r.changed, false);
    }
    const sums = calls.filter((c) => c.purpose === "cachefold fold summary");
    assert.ok(sums.length >= 1, `no summary request: ${JSON.stringify(calls.map((c) => c.purpose))}`);
    assert.equal(sums[0].temperature, 0.2);
    assert.equal(sums[0].messages[0].role, "user");
    assert.ok(sums[0].systemPrompt.length > 0 && sums[0].maxTokens > 0);
    const log = readFileSync(logFile, "utf8").trim().split("\n").map((l) => JSON.parse(l)).filter((e) => e.event === "summary");
    const done = log.filter((e) => e.id !== undefined);
    assert.ok(done.length >= 1, JSON.stringify(log));
    assert.equal(done[0].ok, !fail);
    if (fail) assert.ok(log.some((e) => e.ok === false && /provider down/.test(e.message)), JSON.stringify(log));
    else assert.ok(done[0].chars > 0);
    // The next turn still assembles.
    const eng = await reg.engines.cachefold({});
    const a = await eng.assemble({ sessionId: sid, messages: [...hist, user("next")], model: "deepseek-v4-flash", tokenBudget: 20000 });
    assert.ok(a.messages.length >= 1);
  }
});
