// compact() as OpenClaw 2026.9.6 calls it: no message list, on the pre-turn preflight, the
// user's /compact and in-run recovery. Every answer must let the turn go on: `ok && compacted`,
// or what the host's own classifier (`isBenignCompactionSkipResult`, dist/compact-reasons-*.mjs)
// calls a benign skip. Anything else makes the host throw "Preflight compaction required but
// failed" and the turn is lost (docs/host-integration.md).
import test from "node:test";
import assert from "node:assert/strict";
import { readFileSync, readdirSync, existsSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { join } from "node:path";
import { tempDir, engineFor, user, assistantText, assistantCall, toolResult, pkgSkip, CI } from "./helpers.mjs";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const skip = pkgSkip();
const NODE24 = process.env.CACHEFOLD_NODE24 ?? join(ROOT, ".cache/node24/node_modules/node/bin/node");
const DIST = join(ROOT, ".cache/openclaw/node_modules/openclaw/dist");

/**
 * The host's classifier, run in Node 24 on the pinned package; null when not installed (a
 * failure under CI, where `.ci/setup node24` installs it).
 */
function hostVerdicts(results) {
  if (!existsSync(NODE24) || !existsSync(DIST)) {
    if (CI) assert.fail(`OpenClaw's classifier needs ${NODE24} and ${DIST} (.ci/setup node24)`);
    return null;
  }
  const file = readdirSync(DIST).find((f) => /^compact-reasons-.*\.mjs$/.test(f));
  assert.ok(file, `no compact-reasons-*.mjs in ${DIST}: the pinned OpenClaw changed its layout`);
  const script = `const m = await import(${JSON.stringify(join(DIST, file))});
    const benign = Object.values(m).find((f) => typeof f === "function" && f.name === "isBenignCompactionSkipResult");
    const rs = JSON.parse(process.argv[1]);
    console.log(JSON.stringify(rs.map((r) => (r.ok && r.compacted) || benign(r))));`;
  const out = execFileSync(NODE24, ["--input-type=module", "-e", script, JSON.stringify(results)], { encoding: "utf8" });
  return JSON.parse(out);
}

/** Our reading of the same rule, used when the host package is not installed. */
function continues(r) {
  if (r.ok && r.compacted) return true;
  const t = String(r.reason ?? "").toLowerCase();
  return t.includes("below threshold") || t.includes("already under target") || t.includes("already compacted") || (r.ok && t.includes("nothing to compact"));
}


const MODEL = "deepseek-v4-flash";
const preflight = (sessionId, currentTokenCount) => ({
  sessionId,
  sessionKey: "agent:main:t",
  tokenBudget: 48_000,
  force: true,
  currentTokenCount,
  compactionTarget: "budget",
  runtimeContext: { forceReason: "preflight_required", preflightCompactionTrigger: "tokens" },
});

/** `n` turns as the host drives them: assemble the history, then commit the turn. */
async function drive(config, sessionId, n, size) {
  const hist = [];
  for (let k = 0; k < n; k++) {
    const eng = await engineFor(config);
    // The window the turns report (48K): the reported prompts (9K + 2K per turn, up to 31K) stay
    // under it, so the engine folds nothing on its own before the forced compaction. (Under a
    // 22K budget a calibrated session is over budget and folds itself while driven.)
    await eng.assemble({ sessionId, messages: hist, model: MODEL, tokenBudget: 48_000 });
    const turn = [
      user(`step ${k}: read notes_${k}.md`),
      assistantCall(`c${k}`, "read", { path: `notes_${k}.md` }),
      toolResult(`c${k}`, "read", `# notes ${k}\n` + `paragraph ${k} of the notes, with details.\n`.repeat(size / 40)),
      assistantText(`read notes_${k}.md`),
    ];
    turn[3].usage = { input: 9_000 + 2_000 * k, output: 50, cacheRead: 0, cacheWrite: 0 };
    hist.push(...turn);
    await eng.commitTurn({ sessionId, advancementKey: `t${k}`, messages: turn, runtimeContext: { modelContextWindow: 48_000 } });
  }
  return hist;
}

for (const ownsCompaction of [true, false]) {
  test(`every compact() answer lets the turn go on (ownsCompaction ${ownsCompaction})`, { skip }, async () => {
    const stateDir = tempDir();
    const logFile = join(stateDir, "log.jsonl");
    const cfg = { stateDir, logFile, ownsCompaction, tailTokens: 2_000, minFoldTokens: 1_000_000 };
    const answers = {};
    answers.empty = await (await engineFor(cfg)).compact(preflight("s-empty", 40_000));
    await drive(cfg, "s-one", 1, 2_000);
    answers.oneTurn = await (await engineFor(cfg)).compact(preflight("s-one", 40_000));
    const hist = await drive(cfg, "s-long", 12, 8_000);
    answers.long = await (await engineFor(cfg)).compact(preflight("s-long", 40_000));
    answers.manual = await (await engineFor(cfg)).compact({ sessionId: "s-long", sessionKey: "agent:main:t", force: true, runtimeContext: { forceReason: "manual" } });
    answers.noSession = await (await engineFor(cfg)).compact({ sessionKey: "agent:main:t", force: true });
    answers.garbage = await (await engineFor(cfg)).compact(undefined);

    const names = Object.keys(answers);
    const verdicts = hostVerdicts(names.map((k) => answers[k])) ?? names.map((k) => continues(answers[k]));
    assert.equal(verdicts.length, names.length);
    names.forEach((k, i) => assert.ok(verdicts[i], `${k}: the host would fail the turn on ${JSON.stringify(answers[k])}`));

    // The long session folds for real: compacted, a smaller projection, and the next assemble
    // emits the fold the answer promised.
    const long = answers.long;
    assert.equal(long.ok, true);
    assert.equal(long.compacted, true, JSON.stringify(long));
    assert.ok(long.result.tokensAfter < long.result.tokensBefore, JSON.stringify(long.result));
    const r = await (await engineFor(cfg)).assemble({ sessionId: "s-long", messages: hist, model: MODEL, tokenBudget: 22_000 });
    assert.ok(r.messages.length < hist.length, "the next assemble folded");
    const events = readFileSync(logFile, "utf8").trim().split("\n").map((l) => JSON.parse(l));
    const fold = events.filter((e) => e.event === "assemble" && e.report?.forced && e.report?.folds?.length).pop();
    assert.ok(fold, "a forced fold was logged");
    assert.ok(r.estimatedTokens <= long.result.tokensAfter, `${r.estimatedTokens} > projected ${long.result.tokensAfter}`);
    // Nothing to fold is said in the host's words, never "failed".
    assert.equal(answers.empty.compacted, false);
    assert.match(answers.empty.reason, /nothing to compact/);
  });
}

// The user's /compact on a context that needs no room (the e2e `compact` cell at 26 turns): the
// shim handed cachefold's "nothing to fold" to the host's compaction, whose summary replaced the
// history and lost the fact the pinned head kept. Now a context under the host's trigger is
// declined in the host's words; one the host projects over its trigger still goes on to the
// host's compaction (here unavailable: "nothing to compact").
test("a /compact on a context under the host's trigger is declined, not handed to the host", { skip }, async () => {
  const stateDir = tempDir();
  const logFile = join(stateDir, "log.jsonl");
  const cfg = { stateDir, logFile, tailTokens: 2_000, minFoldTokens: 1_000_000 };
  await drive(cfg, "s-fit", 2, 2_000);
  const manual = await (await engineFor(cfg)).compact({ sessionId: "s-fit", sessionKey: "agent:main:t", force: true, runtimeContext: { trigger: "manual" } });
  const over = await (await engineFor(cfg)).compact(preflight("s-fit", 40_000));
  const verdicts = hostVerdicts([manual, over]) ?? [manual, over].map(continues);
  assert.deepEqual(verdicts, [true, true], JSON.stringify({ manual, over }));
  assert.equal(manual.ok, true);
  assert.equal(manual.compacted, false);
  const events = readFileSync(logFile, "utf8").trim().split("\n").map((l) => JSON.parse(l)).filter((e) => e.event === "compact");
  assert.equal(events.length, 2, JSON.stringify(events));
  const [m, o] = events.map((e) => e.answer);
  assert.equal(m.pending, false);
  assert.equal(m.fits, true, JSON.stringify(m));
  assert.ok(m.tokensBefore < m.hostThreshold, JSON.stringify(m));
  // The decline is cachefold's own reason, not the fallback's "nothing to compact (…; host
  // compaction: …)" wording that follows a hand-over.
  assert.equal(typeof m.alreadyCompacted, "boolean", JSON.stringify(m));
  assert.equal(manual.reason, m.alreadyCompacted ? m.reason : `nothing to compact (${m.reason})`);
  assert.doesNotMatch(manual.reason, /host compaction/);
  // The host's projection at 40,000 (over its 32,000 trigger): not declined as fitting.
  assert.equal(o.fits, false, JSON.stringify(o));
  assert.match(over.reason, /nothing to compact/);
});

test("an empty snapshot is never written over the journal", async () => {
  const store = await import("../../js/store.js");
  const paths = store.sessionPaths(tempDir(), "s-snap");
  store.appendJournal(paths, '{"line":1}\n', false);
  for (const bad of ["", null, undefined, 42]) {
    assert.throws(() => store.writeSnapshot(paths, bad), /empty snapshot/);
  }
  assert.equal(store.readStateBytes(paths).journal.toString("utf8"), '{"line":1}\n', "the journal is untouched");
});

test("the shim tells the core that OpenClaw holds the prompt apart: a last turn over the threshold on its own folds behind the head", { skip }, async () => {
  const stateDir = tempDir();
  const cfg = { stateDir, tailTokens: 2_000, minFoldTokens: 1_000_000 };
  const head = [user("The deploy code is ZEBRA-4417. Please remember it."), assistantText("Noted the deploy code.")];
  const turn = [user("Check every section of the guide."), assistantText("all of it checked, section by section. ".repeat(10_000))];
  const outputs = {};
  for (const prompt of [undefined, "What is the deploy code?"]) {
    const sessionId = `s-${prompt ? "prompt" : "none"}`;
    const window = { runtimeContext: { modelContextWindow: 24_000 } };
    const eng = await engineFor(cfg);
    await eng.assemble({ sessionId, messages: [], model: MODEL, tokenBudget: 24_000 });
    await eng.commitTurn({ sessionId, advancementKey: "t0", messages: head, ...window });
    await eng.assemble({ sessionId, messages: head, model: MODEL, tokenBudget: 24_000 });
    await eng.commitTurn({ sessionId, advancementKey: "t1", messages: turn, ...window });
    const out = await eng.assemble({ sessionId, messages: [...head, ...turn], model: MODEL, tokenBudget: 24_000, ...(prompt ? { prompt } : {}) });
    outputs[sessionId] = out.messages;
  }
  // Held apart: the list ends where the last turn ended, and the turn folds whole.
  const held = outputs["s-prompt"];
  assert.deepEqual(held.slice(0, 2), head, "the pinned head is sent unchanged");
  assert.equal(held.length, 3, JSON.stringify(held.map((m) => m.role)));
  assert.match(held[2].content[0].text, /^\[cachefold fold f1\]/);
  // Not held apart: the list may end inside the current turn, so its last reply stays.
  const plain = outputs["s-none"];
  assert.deepEqual(plain.at(-1), turn[1]);
});
