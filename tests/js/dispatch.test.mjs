// The wasm module's two dispatchers (src/wasm.rs `call`, `Session#call`) behind js/core.js's
// named API: an unknown op is an input error (the instance stays), and named calls give what
// the per-function exports gave before the dispatchers replaced them (the expected values were
// recorded from that build).
import test from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { pkgSkip } from "./helpers.mjs";

const skip = pkgSkip();

const inputError = (re) => (e) => e.code === "CACHEFOLD_INPUT" && re.test(e.message);

test("an unknown op is a CACHEFOLD_INPUT error and the instance is kept", { skip }, async () => {
  const coreJs = await import("../../js/core.js");
  const core = await coreJs.loadCore();
  assert.throws(() => core.call("noSuchOp", "{}", []), inputError(/unknown op "noSuchOp"/));
  const s = new core.Session("{}", "s-dispatch");
  assert.throws(() => s.call("noSuchOp", "{}", [], []), inputError(/unknown op "noSuchOp"/));
  // A free function's name is not a session op, nor the reverse.
  assert.throws(() => s.call("sha1Hex", "{}", [], ["x"]), inputError(/unknown op "sha1Hex"/));
  assert.throws(() => core.call("stats", "{}", []), inputError(/unknown op "stats"/));
  assert.equal(coreJs.coreIfLoaded(), core, "no trap: the instance was not replaced");
  assert.equal(s.stats().sessionId, "s-dispatch", "the session still answers");
});

test("scalars the header lacks or mistypes are CACHEFOLD_INPUT errors naming the field", { skip }, async () => {
  const core = await (await import("../../js/core.js")).loadCore();
  assert.throws(() => core.call("searchAnswer", "{}", ["[]", "q"]), inputError(/missing field `regex`/));
  assert.throws(() => core.call("searchAnswer", '{"regex":1,"maxHits":2}', ["[]", "q"]), inputError(/regex: expected a boolean, got number/));
  assert.throws(() => core.call("parseRecoverTarget", "{bad", []), (e) => e.code === "CACHEFOLD_INPUT");
  assert.throws(() => core.call("lessonSlug", "{}", []), inputError(/text argument is missing/));
  const s = new core.Session("{}", "s-head");
  assert.throws(() => s.call("summaryRequest", "{}", [], []), inputError(/missing field `nowMs`/));
  // As the old export's own check said it (with `typeof`'s word for null).
  assert.throws(() => core.processToolResult("{}", null, "{}", true), inputError(/^invalid input: toolName must be a string, got object$/));
});

test("named calls through the dispatchers answer as the per-function exports did", { skip }, async () => {
  const core = await (await import("../../js/core.js")).loadCore();
  const text = "é 漢字 😀\n";
  const sha1 = createHash("sha1").update(text, "utf8").digest("hex");
  assert.equal(core.sha1Hex(text), sha1);
  assert.equal(core.call("sha1Hex", "{}", [text]), sha1, "the name is the op");
  assert.equal(core.artifactId(text), sha1);
  assert.equal(core.isShrunk("plain text"), undefined);

  // Header scalars (regex, maxHits) beside two texts.
  const docs = JSON.stringify([
    { id: "f1", kind: "fold", text: "alpha beta\ngamma error here\n" },
    { id: "c2", kind: "condensed", text: "no match\nERRORS twice: error\n" },
  ]);
  assert.deepEqual(core.searchAnswer(docs, "(?i)err[a-z]*", true, 2), {
    text: '[cachefold_search] 2 hits for "(?i)err[a-z]*" in 2 documents. Read around a hit: cachefold_recover {"id":<id>,"lines":[<line-20>,<line+20>]}\nf1 line 2 (fold): gamma error here\nc2 line 2 (condensed): ERRORS twice: error',
    hits: [
      { id: "f1", kind: "fold", line: 2, snippet: "gamma error here" },
      { id: "c2", kind: "condensed", line: 2, snippet: "ERRORS twice: error" },
    ],
    more: false,
  });
  // An id in the header, the text and the params as texts.
  assert.deepEqual(core.recoverAnswer("f1", "a\nb\nc\nd", '{"lines":[2,3]}'), {
    text: '[cachefold_recover] f1 lines 2-3 of 4 (1 more). Next: cachefold_recover {"id":"f1","lines":[4,5]}\nb\nc',
    details: { id: "f1", unit: "lines", start: 2, end: 3, total: 4, remaining: 1 },
  });

  // A shrunk tool result: the artifact text crosses beside the JSON result, as before.
  const big = "x\n".repeat(30000);
  const msg = { role: "toolResult", toolCallId: "c1", toolName: "exec", content: [{ type: "text", text: big }], isError: false, timestamp: 1 };
  const p = core.processToolResult("{}", "exec", JSON.stringify(msg), true);
  assert.equal(p.action, "shrink");
  assert.equal(p.artifactText, big);
  const shrunk = JSON.parse(p.messageJson).content[0].text;
  assert.ok(shrunk.startsWith("[cachefold] exec output 60,000 chars, 30,000 lines → artifact a36547978259e2a45386047bc2fceebb9686be7b. Shown: lines 1-1,400 and 29,401-30,000."), shrunk.slice(0, 200));
  assert.equal(core.isShrunk(shrunk), "a36547978259e2a45386047bc2fceebb9686be7b");

  // Session methods: scalars in the header, results and their JS types as before.
  const s = new core.Session("{}", "s-named");
  const need = s.need(3);
  assert.ok(need instanceof Uint32Array);
  assert.deepEqual([...need], [0, 1, 2]);
  assert.equal(s.acceptTopic("nope", "{}", false, 1), "ignored");
  assert.equal(s.acceptSummary("nope", "text", true, 1), undefined);
  assert.equal(s.summaryRequest(1), null);
  assert.equal(s.replayReport(), null);
  assert.equal(s.requestFold(1), undefined);
  assert.deepEqual(s.call("stats", "{}", [], []), s.stats());
  const r = core.Session.restore("{}", "s-named", s.snapshot(), s.takeJournal());
  assert.deepEqual(r.replayReport(), { applied: 0, skipped: 1, ignoredBytes: 0, seq: 1 }); // the fold request, already in the snapshot
});
