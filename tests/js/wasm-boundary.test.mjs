// The wasm module's boundary (src/wasm.rs): typed exports and a typed Session class, a size
// ceiling, and the answers and errors the exports give (the expected values were recorded from
// the build before the typed exports).
import test from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { readFileSync, statSync } from "node:fs";
import { pkgSkip } from "./helpers.mjs";

const PKG = new URL("../../pkg/", import.meta.url);
const skip = pkgSkip();

const inputError = (re) => (e) => e.code === "CACHEFOLD_INPUT" && re.test(e.message);

test("the shipped module stays under the 1.5 MiB ceiling (a guard, not a target)", { skip }, () => {
  const bytes = statSync(new URL("cachefold_bg.wasm", PKG)).size;
  assert.ok(bytes <= 1.5 * 1024 * 1024, `pkg/cachefold_bg.wasm is ${bytes} bytes`);
});

/** `name(params): result` of every function and Session method declared in pkg/cachefold.d.ts. */
function declared() {
  const dts = readFileSync(new URL("cachefold.d.ts", PKG), "utf8");
  const fns = new Map();
  for (const m of dts.matchAll(/^export function (\w+)\((.*)\): (.+);$/gm)) {
    if (m[1] !== "initSync") fns.set(m[1], `${m[2]} => ${m[3]}`);
  }
  const cls = dts.match(/^export class Session \{([\s\S]*?)^\}/m);
  assert.ok(cls, "pkg/cachefold.d.ts declares the Session class");
  const methods = new Map();
  for (const m of cls[1].matchAll(/^\s+(?:static )?(\w+)\((.*)\)(?:: (.+))?;$/gm)) methods.set(m[1], `${m[2]} => ${m[3] ?? ""}`);
  return { fns, methods };
}

test("pkg/cachefold.d.ts names a real type for every argument and result (no `any`)", { skip }, () => {
  const { fns, methods } = declared();
  // The whole API is declared (so the check below cannot pass on an empty list).
  for (const name of ["parseConfig", "processToolResult", "applyToolDefaults", "searchAnswer", "recoverAnswer", "lessonParse", "lessonsDecide", "redactSecrets", "resolveConfig", "profileKnobs", "modelManaged", "lessonsGate", "chartSvg", "chartFigure", "chartCss"]) {
    assert.ok(fns.has(name), `export ${name} declared`);
  }
  for (const name of ["restore", "plan", "need", "assemble", "compact", "commitTurn", "summaryRequest", "acceptSummary", "snapshot", "takeJournal", "compactRequest", "stats", "topicsView", "preview", "recoverPlan", "pinTurn", "callRows", "captureLessons", "lessonLlmPrompt", "replayReport"]) {
    assert.ok(methods.has(name), `Session.${name} declared`);
  }
  for (const [where, sigs] of [["export", fns], ["Session", methods]]) {
    for (const [name, sig] of sigs) assert.doesNotMatch(sig, /\bany\b/, `${where} ${name}: ${sig}`);
  }
  assert.match(methods.get("assemble"), /=> AssemblePlan$/);
  assert.match(methods.get("need"), /=> Uint32Array$/);
  assert.match(fns.get("parseConfig"), /=> CachefoldConfig$/);
  assert.match(fns.get("profileKnobs"), /=> ProfileKnobs \| undefined$/);
  assert.match(fns.get("lessonsGate"), /^request: string, messages_before: number => LessonGate \| undefined$/);
  assert.match(fns.get("modelManaged"), /=> boolean$/);
});

test("no dispatcher by operation name is exported", { skip }, async () => {
  const glue = await import(new URL("cachefold.js", PKG).href);
  assert.equal(glue.call, undefined);
  assert.equal(glue.Session.prototype.call, undefined);
});

test("arguments of the wrong type are CACHEFOLD_INPUT errors, the instance stays", { skip }, async () => {
  const coreJs = await import("../../js/core.js");
  const core = await coreJs.loadCore();
  assert.throws(() => core.searchAnswer("{bad", "q", false, 2), (e) => e.code === "CACHEFOLD_INPUT");
  assert.throws(() => core.searchAnswer("[]", "(unclosed", true, 2), inputError(/invalid search regex/));
  assert.throws(() => core.recoverAnswer("f1", "text", "[1"), (e) => e.code === "CACHEFOLD_INPUT");
  assert.throws(() => core.lessonRender('{"name":1}'), (e) => e.code === "CACHEFOLD_INPUT");
  // As the old export's own check said it (with `typeof`'s word for null).
  assert.throws(() => core.processToolResult("{}", null, "{}", true), inputError(/^invalid input: toolName must be a string, got object$/));
  assert.throws(() => core.applyToolDefaults("{}", 3, "{}"), inputError(/toolName must be a string, got number$/));
  // A non-string text argument is refused, not a trap (wasm-bindgen's glue does not check it).
  assert.throws(() => core.sha1Hex(42), inputError(/text must be a string/));
  assert.throws(() => core.lessonsDecide({}), inputError(/input_json must be a string/));
  assert.throws(() => core.Session.restore(null, "s", null, ""), inputError(/config_json must be a string/));
  const s = new core.Session("{}", "s-types");
  assert.throws(() => s.pinTurn(7), inputError(/id must be a string/));
  assert.throws(() => s.commitTurn("{bad", []), (e) => e.code === "CACHEFOLD_INPUT");
  assert.throws(() => s.compactRequest('"now"'), (e) => e.code === "CACHEFOLD_INPUT");
  assert.equal(coreJs.coreIfLoaded(), core, "no trap: the instance was not replaced");
  assert.equal(s.stats().sessionId, "s-types", "the session still answers");
});

test("the exports answer as before", { skip }, async () => {
  const core = await (await import("../../js/core.js")).loadCore();
  const text = "é 漢字 😀\n";
  const sha1 = createHash("sha1").update(text, "utf8").digest("hex");
  assert.equal(core.sha1Hex(text), sha1);
  assert.equal(core.artifactId(text), sha1);
  assert.equal(core.isShrunk("plain text"), undefined);

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
  assert.deepEqual(core.recoverAnswer("f1", "a\nb\nc\nd", '{"lines":[2,3]}'), {
    text: '[cachefold_recover] f1 lines 2-3 of 4 (1 more). Next: cachefold_recover {"id":"f1","lines":[4,5]}\nb\nc',
    details: { id: "f1", unit: "lines", start: 2, end: 3, total: 4, remaining: 1 },
  });

  // A shrunk tool result: the artifact text crosses beside the JSON result.
  const big = "x\n".repeat(30000);
  const msg = { role: "toolResult", toolCallId: "c1", toolName: "exec", content: [{ type: "text", text: big }], isError: false, timestamp: 1 };
  const p = core.processToolResult("{}", "exec", JSON.stringify(msg), true);
  assert.equal(p.action, "shrink");
  assert.equal(p.artifactText, big);
  const shrunk = JSON.parse(p.messageJson).content[0].text;
  assert.ok(shrunk.startsWith("[cachefold] exec output 60,000 chars, 30,000 lines → artifact a36547978259e2a45386047bc2fceebb9686be7b. Shown: lines 1-400 and 29,901-30,000."), shrunk.slice(0, 200));
  assert.equal(core.isShrunk(shrunk), "a36547978259e2a45386047bc2fceebb9686be7b");
  // Host numbers and member order keep their text through a message the core rewrites.
  const odd = `{"role":"toolResult","toolCallId":"c2","toolName":"exec","zeta":[1.50,-0,1e+21],"content":[{"type":"text","text":${JSON.stringify(big)}}],"isError":false,"timestamp":1.50,"n":12345678901234567890}`;
  const q = core.processToolResult("{}", "exec", odd, true);
  assert.equal(q.action, "shrink");
  const back = q.messageJson;
  assert.ok(back.startsWith('{"role":"toolResult","toolCallId":"c2","toolName":"exec","zeta":[1.50,-0,1e+21],"content":[{"type":"text","text":"[cachefold] exec output'), back.slice(0, 200));
  assert.ok(back.endsWith('"}],"isError":false,"timestamp":1.50,"n":12345678901234567890}'), back.slice(-200));

  // Session methods: results and their JS types as before.
  const s = new core.Session("{}", "s-named");
  const need = s.need(3);
  assert.ok(need instanceof Uint32Array);
  assert.deepEqual([...need], [0, 1, 2]);
  assert.equal(s.acceptTopic("nope", "{}", false, 1), "ignored");
  assert.equal(s.acceptSummary("nope", "text", true, 1), undefined);
  assert.equal(s.summaryRequest(1), null);
  assert.equal(s.replayReport(), null);
  assert.equal(s.requestFold(1), undefined);
  const r = core.Session.restore("{}", "s-named", s.snapshot(), s.takeJournal());
  assert.deepEqual(r.replayReport(), { applied: 0, skipped: 1, ignoredBytes: 0, seq: 1 }); // the fold request, already in the snapshot
});

test("the chart exports: a ChartSpec in, SVG text out; a bad spec is a CACHEFOLD_INPUT error", { skip }, async () => {
  const core = await (await import("../../js/core.js")).loadCore();
  const spec = { title: "t", xTitle: "model call", yTitle: "USD", yUnit: "usd", lines: [{ name: "a", values: [0.01, null, 0.17], headline: true }] };
  const svg = core.chartSvg(JSON.stringify(spec));
  assert.match(svg, /^<svg /);
  assert.match(svg, />\$0\.20</);
  assert.match(core.chartFigure("f", JSON.stringify([spec, spec])), /^<svg [^>]*>.*<g transform="translate\(0 30\)">/s);
  assert.match(core.chartCss(), /prefers-color-scheme:dark/);
  assert.throws(() => core.chartSvg(JSON.stringify({ ...spec, yUnit: "yen" })), inputError(/unknown yUnit/));
  assert.throws(() => core.chartSvg("{"), (e) => e.code === "CACHEFOLD_INPUT");
  assert.throws(() => core.chartFigure("f", "{}"), (e) => e.code === "CACHEFOLD_INPUT");
  assert.throws(() => core.chartSvg(7), inputError(/chart_json must be a string/));
});

test("plan's jsonOf may answer with UTF-8 bytes: the same plan as with strings; bytes that are not UTF-8 are a CACHEFOLD_INPUT error", { skip }, async () => {
  const core = await (await import("../../js/core.js")).loadCore();
  const history = [
    { role: "user", content: "read é.txt — ünïcödé 🙂", timestamp: 1 },
    { role: "assistant", content: [{ type: "toolCall", id: "c1", name: "read", arguments: { path: "é.txt" } }], stopReason: "toolUse", timestamp: 2 },
    { role: "toolResult", toolCallId: "c1", toolName: "read", content: [{ type: "text", text: "x".repeat(5000) + " ü" }], isError: false, timestamp: 3 },
  ].map((m) => JSON.stringify(m));
  const head = JSON.stringify({ count: history.length, model: "deepseek-v4-flash", nowMs: 1 });
  const run = (jsonOf) => {
    const s = new core.Session("{}", "s-bytes");
    const p = s.plan(head, false, false, jsonOf);
    return { p, snapshot: s.snapshot() };
  };
  const asText = run((i) => history[i]);
  const asBytes = run((i) => Buffer.from(history[i], "utf8"));
  assert.equal(asBytes.p.report.ingested, history.length);
  assert.deepEqual(asBytes, asText);
  const s = new core.Session("{}", "s-bad-bytes");
  assert.throws(
    () => s.plan(head, false, false, (i) => (i === 1 ? Uint8Array.of(0x7b, 0xff, 0x7d) : history[i])),
    (err) => err.code === "CACHEFOLD_INPUT" && /message 1/.test(err.message),
  );
});
