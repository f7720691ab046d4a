// A screenshot in a real OpenClaw 2026.9.6 Gateway: the image a vision model `read` must reach the
// model on the next request and stay in the prompt, not be folded away. Skipped unless
// CACHEFOLD_E2E=1. One Gateway, 6 turns, 30-65 s.
//
// The core used to estimate a message by the characters of its JSON text, so the base64 `data`
// of an image part counted as hundreds of thousands of tokens. Read in a tool loop (no fold
// mid-turn), the image then reached the turn's calibration points, which drove the slope to its
// floor: here every later estimate was 2.6x the prompt the provider billed. Where the estimate
// met the image before any calibration did (a screenshot the user pastes, seen at the next
// assemble), the fold rules folded it away at once (tests/calibration.rs). An image part now
// weighs a fixed ~1,600 tokens (src/tokens.rs IMAGE_WEIGHT).
//
// The model is declared vision-capable (`input: ["text", "image"]`), so the host's `read` of a PNG
// returns `{type:"image", data, mimeType}` and the chat-completions request carries it as an
// `image_url` part in a user message after the tool message. `shot.png` is seeded noise (deflate
// cannot shrink it, so it is as large as a screenshot of its size), sized between two bounds:
//   - counted as text (bytes/4, the fake provider's own rate) its base64 is over the 128K window,
//     so the old estimate folds it;
//   - the host loads at most window x 8 bytes of transcript into a run (1,024,000 here;
//     resolveEmbeddedSessionContextLimits): a tool result over that is dropped by the host, with
//     everything before it, from the next turn on, whatever the engine (a 1.9 MB PNG at 128K lost
//     the planted fact that way on this host). 520x400 RGB: ~624 KB, ~832,000 base64 chars.
// It is under every inline limit of the host (read tool: 2000 px, 4,718,592 base64 bytes;
// history sanitizer: 1200 px, 5 MB), so the host sends it as it is, never re-encoded.
//
// Turns: plant a fact; read shot.png; three turns that each read a small file and run a small
// command; ask for the fact. The host itself replaces a tool-result image by a text marker once
// the turn that holds it is older than the 3 most recent completed turns (history-image-prune):
// in the last turn a request without the image is the host's doing when the read's tool result
// carries that marker, and only there.

import { describe, it, before } from "node:test";
import assert from "node:assert/strict";
import zlib from "node:zlib";
import crypto from "node:crypto";
import { runScenario } from "./lib/session.mjs";
import { FACT, FACT_NEEDLE, makeTextFile, bigOutputCommand } from "./lib/scenarios.mjs";
import { scriptMarker } from "./lib/script.mjs";
import { locateToolchain, REPO_ROOT } from "./lib/env.mjs";
import { contentText } from "./lib/tokenize.mjs";
import { requestKind, markdownTable } from "./lib/analyze.mjs";

const SKIP = process.env.CACHEFOLD_E2E === "1" ? false : "set CACHEFOLD_E2E=1 to run the real-OpenClaw e2e suite (needs .cache/node24, .cache/openclaw and a built pkg/; see tests/e2e/README.md)";
const KEEP = process.env.CACHEFOLD_E2E_KEEP === "1";
const PLUGIN_DIR = process.env.CACHEFOLD_E2E_PLUGIN_DIR || REPO_ROOT;
const log = (s) => process.stderr.write(`${s}\n`);

const WINDOW = 128_000;
const WIDTH = 520;
const HEIGHT = 400;
/** Bytes of transcript the host loads into a run: window x 8 (resolveEmbeddedSessionContextLimits). */
const HOST_READ_BYTES = WINDOW * 8;
/** The host's text in place of an image it pruned from history (history-image-prune). */
const HOST_PRUNE_MARKER = "[image data removed - already processed by model]";
/** Completed turns whose images the host keeps (history-image-prune PRESERVE_RECENT_COMPLETED_TURNS). */
const HOST_KEEPS_TURNS = 3;

/** A valid RGB PNG of seeded noise: deterministic, and deflate cannot shrink it. */
function noisePng(width, height, seed) {
  let x = seed >>> 0 || 1;
  const raw = Buffer.alloc((width * 3 + 1) * height);
  for (let y = 0; y < height; y++) {
    const row = y * (width * 3 + 1); // filter byte 0 (None) leads each row
    for (let i = 1; i <= width * 3; i++) {
      x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
      raw[row + i] = x >>> 24; // the LCG's high byte: its low bits repeat with short periods
    }
  }
  const chunk = (type, data) => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(data.length);
    const body = Buffer.concat([Buffer.from(type, "latin1"), data]);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(zlib.crc32(body));
    return Buffer.concat([len, body, crc]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr.set([8, 2, 0, 0, 0], 8); // 8-bit, truecolour, deflate, adaptive filtering, no interlace
  return Buffer.concat([Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]), chunk("IHDR", ihdr), chunk("IDAT", zlib.deflateSync(raw)), chunk("IEND", Buffer.alloc(0))]);
}

const msg = (text, script) => `${text}\n\n${scriptMarker(script)}`;

function buildImageScenario(png) {
  const files = { "shot.png": png };
  const turns = [
    { kind: "plant", message: msg(`${FACT}. Please remember it; I will ask later.`, { steps: [], reply: "Noted the launch code." }) },
    { kind: "screenshot", message: msg("Here is a screenshot of the broken page: shot.png. Look at it and tell me what you see.", { steps: [{ read: "shot.png" }], reply: "The screenshot shows a noisy test pattern." }) },
  ];
  for (let k = 1; k <= 3; k++) {
    const f = `notes-${k}.txt`;
    files[f] = makeTextFile(300 + k, 4_000);
    turns.push({ kind: "work", message: msg(`Read ${f} and run check ${k}.`, { steps: [{ read: f }, { exec: bigOutputCommand(40, `check${k}`) }], reply: `Notes ${k} read, check ${k} passed.` }) });
  }
  turns.push({ kind: "check", message: msg("What is the launch code I gave you at the start?", { steps: [{ check: FACT_NEEDLE }] }) });
  return { name: "images", files, turns, fact: FACT, needle: FACT_NEEDLE, defaultWindow: WINDOW };
}

const sha1 = (s) => crypto.createHash("sha1").update(s).digest("hex");

/** The `image_url` data URLs of a chat-completions request body, in order. */
function imageUrls(body) {
  const out = [];
  for (const m of body?.messages ?? []) {
    if (!Array.isArray(m.content)) continue;
    for (const p of m.content) if (p?.type === "image_url") out.push(typeof p.image_url === "string" ? p.image_url : p.image_url?.url);
  }
  return out;
}

/**
 * What a request sends for the read of shot.png (tool call `callId`): `tool` is its tool message
 * (null when the call is gone), `urls` the image data URLs of the user message right after it,
 * where the host puts a tool result's images.
 */
function readResult(body, callId) {
  const msgs = body?.messages ?? [];
  const i = msgs.findIndex((m) => m.role === "tool" && m.tool_call_id === callId);
  if (i < 0) return { tool: null, urls: [] };
  const next = msgs[i + 1];
  return { tool: contentText(msgs[i].content), urls: next?.role === "user" ? imageUrls({ messages: [next] }) : [] };
}

function eventTime(e) {
  if (typeof e.t === "number") return e.t;
  if (typeof e.at === "string") return Date.parse(e.at);
  return NaN;
}

describe("a screenshot read by a vision model stays in the prompt (real OpenClaw Gateway)", { skip: SKIP, timeout: 20 * 60_000 }, () => {
  let png;
  let b64;
  let scenario;
  let run;
  let shotTurn;
  let readAt; // index, in the screenshot turn's requests, of the one answered with the read
  let readCallId;

  before(async () => {
    locateToolchain(); // throws a clear message when .cache/node24 or .cache/openclaw is missing
    png = noisePng(WIDTH, HEIGHT, 7);
    b64 = png.toString("base64");
    scenario = buildImageScenario(png);
    shotTurn = scenario.turns.findIndex((t) => t.kind === "screenshot");
    run = await runScenario({ label: "cachefold", engine: "cachefold" }, scenario, { pluginDir: PLUGIN_DIR, keep: KEEP, log, input: ["text", "image"] });
    if (KEEP) log(`kept: ${run.dir}`);
    log(markdownTable([run]));
    readAt = run.turns[shotTurn]?.requests.findIndex((r) => r.note === "step0:read") ?? -1;
    readCallId = run.turns[shotTurn]?.requests[readAt]?.response?.tool_calls?.[0]?.id ?? null;
    const assembles = run.events.filter((e) => e.event === "assemble");
    const perTurn = run.turns.map((t) => assembles.filter((e) => eventTime(e) >= t.startedAt && eventTime(e) <= t.endedAt).map((e) => e.estimatedTokens));
    log(`shot.png: ${png.length} bytes, base64 ${b64.length} chars; estimatedTokens per turn: ${perTurn.map((xs) => xs.join("/")).join(", ")}; max ${Math.max(...assembles.map((e) => e.estimatedTokens))}, prompt estimate (tokensBefore) max ${Math.max(...assembles.map((e) => e.report?.tokensBefore ?? 0))}; hit rate ${run.summary.hitPct.toFixed(1)}%`);
    for (const t of run.turns) {
      log(`turn ${t.index} (${t.kind}) ${t.ms} ms: ${t.requests.map((r) => `#${r.seq} ${r.note ?? r.status} images ${imageUrls(r.body).length}${readResult(r.body, readCallId).tool?.includes(HOST_PRUNE_MARKER) ? " (pruned by the host)" : ""}`).join("; ")}`);
    }
  });

  it("shot.png is a PNG over the window as text, under the host's transcript read and inline limits", () => {
    assert.deepEqual([...png.subarray(0, 8)], [137, 80, 78, 71, 13, 10, 26, 10]);
    assert.ok(png.length >= WIDTH * HEIGHT * 3, `shot.png is ${png.length} bytes: the noise compressed`);
    assert.ok(b64.length / 4 > WINDOW, `base64 ${b64.length} chars is ${Math.round(b64.length / 4)} tokens as text: not over the window, so the old estimate would not fold it either`);
    // The rest of the session (~50 KB of transcript) must fit beside it.
    assert.ok(b64.length <= HOST_READ_BYTES - 150_000, `base64 ${b64.length} chars leaves too little of the host's ${HOST_READ_BYTES}-byte transcript read`);
    assert.ok(b64.length <= 4_718_592, `base64 ${b64.length} over the read tool's inline limit`);
  });

  it("every scripted turn completed, no 400s, the engine not degraded", () => {
    assert.equal(run.turns.length, scenario.turns.length, "every scripted turn ran");
    for (const t of run.turns) assert.ok(t.ok, `turn ${t.index} (${t.kind}) failed: ${String(t.error).slice(0, 1500)}`);
    assert.equal(run.summary.http400, 0, JSON.stringify(run.requests.filter((r) => r.status === 400).map((r) => ({ seq: r.seq, violations: r.violations }))));
    assert.doesNotMatch(run.logs, /degraded to "legacy"/, "OpenClaw degraded the engine to legacy");
    assert.doesNotMatch(run.logs, /factory returned an invalid ContextEngine|quarantin/i);
  });

  it("the host's read returned shot.png as an image part, byte for byte (the path under test was reached)", () => {
    assert.ok(run.transcript, `transcript not read: ${run.transcriptError}`);
    const results = run.transcript.filter((e) => e.event?.type === "message" && e.event.message?.role === "toolResult" && e.event.message.toolName === "read").map((e) => e.event.message);
    const images = results.flatMap((m) => (m.content ?? []).filter((p) => p?.type === "image"));
    assert.equal(images.length, 1, `image parts in the read results of the transcript: ${images.length} (read results: ${results.map((m) => JSON.stringify(m.content).slice(0, 200)).join(" | ")})`);
    assert.equal(images[0].mimeType, "image/png");
    assert.equal(images[0].data.length, b64.length, `the image part's data is ${images[0].data.length} chars, shot.png's base64 ${b64.length}: re-encoded by the host?`);
    assert.equal(sha1(images[0].data), sha1(b64), "the image part's data differs from shot.png");
  });

  it("no request before the screenshot's tool result carries an image", () => {
    const turn = run.turns[shotTurn];
    assert.ok(readAt >= 0 && readCallId, `no request of turn ${shotTurn} answered with the read of shot.png (notes: ${turn.requests.map((r) => r.note).join(", ")})`);
    const earlier = [...run.turns.slice(0, shotTurn).flatMap((t) => t.requests), ...turn.requests.slice(0, readAt + 1)];
    assert.ok(earlier.length >= 2);
    for (const r of earlier) assert.equal(imageUrls(r.body).length, 0, `request #${r.seq} carries an image before the read returned one`);
  });

  it("every model request from the one after the read to the end carries the image (never folded away)", () => {
    const expected = `data:image/png;base64,${b64}`;
    let carried = 0;
    let hostPruned = 0;
    for (const t of run.turns.slice(shotTurn)) {
      // The host prunes the image once the screenshot's turn is older than the HOST_KEEPS_TURNS
      // most recent completed turns (here: in the last turn), and leaves its marker in the read's
      // tool result; a fold would leave no tool result, or a cachefold record.
      const hostMayPrune = t.index - shotTurn > HOST_KEEPS_TURNS;
      const requests = (t.index === shotTurn ? t.requests.slice(readAt + 1) : t.requests).filter((r) => requestKind(r) === "main");
      assert.ok(requests.length >= 1, `turn ${t.index} has no model request to check`);
      for (const r of requests) {
        const { tool, urls } = readResult(r.body, readCallId);
        const at = `request #${r.seq} (turn ${t.index}, ${t.kind})`;
        assert.ok(tool != null, `${at} has no tool result for the read of shot.png (${readCallId})`);
        if (hostMayPrune && tool.includes(HOST_PRUNE_MARKER)) {
          assert.equal(imageUrls(r.body).length, 0, `${at}: the host pruned the read's image, yet an image is sent`);
          hostPruned++;
          continue;
        }
        assert.doesNotMatch(tool, /image data removed|\[cachefold/, `${at}: the read's tool result is ${JSON.stringify(tool.slice(0, 200))}`);
        assert.equal(urls.length, 1, `${at} sends ${urls.length} images after the read's tool result (${imageUrls(r.body).length} in all)`);
        assert.equal(urls[0].length, expected.length, `${at}: image data URL of ${urls[0].length} chars, expected ${expected.length}`);
        assert.ok(urls[0] === expected, `${at}: the image differs from shot.png`);
        assert.equal(imageUrls(r.body).length, 1, `${at} sends other images too`);
        carried++;
      }
    }
    log(`requests carrying the image: ${carried}; pruned by the host's own rule: ${hostPruned}`);
    // At least the screenshot turn's answer and one request of each turn the host keeps it in.
    assert.ok(carried >= 1 + HOST_KEEPS_TURNS, `only ${carried} requests carried the image`);
  });

  it("no assemble folded or ran an emergency, every estimate under the window", () => {
    const assembles = run.events.filter((e) => e.event === "assemble");
    for (const t of run.turns) {
      const inTurn = assembles.filter((e) => eventTime(e) >= t.startedAt - 50 && eventTime(e) <= t.endedAt + 50);
      assert.ok(inTurn.length >= 1, `no assemble event during turn ${t.index} (${t.kind})`);
    }
    assert.equal(run.events.filter((e) => e.event === "error").length, 0, `errors in the decision log: ${JSON.stringify(run.events.filter((e) => e.event === "error")).slice(0, 1000)}`);
    for (const e of assembles) {
      const r = e.report ?? {};
      const at = `assemble at ${new Date(eventTime(e)).toISOString()} (${e.count} messages)`;
      assert.equal(e.passthrough, false, `${at} passed the history through unmanaged`);
      assert.equal(r.managed, true, `${at} was not managed`);
      assert.deepEqual((r.folds ?? []).map((f) => f.reason ?? f), [], `${at} folded`);
      assert.equal(r.fold ?? null, null, `${at} folded`);
      assert.equal(r.emergency, false, `${at} ran an emergency`);
      // estimatedTokens covers the messages (0 before the first one), tokensBefore adds the
      // system prompt and tools.
      assert.ok(Number.isFinite(e.estimatedTokens) && e.estimatedTokens >= 0 && e.estimatedTokens < WINDOW, `${at} estimated ${e.estimatedTokens} tokens (window ${WINDOW})`);
      assert.ok(r.tokensBefore < WINDOW, `${at} estimated the prompt at ${r.tokensBefore} tokens (window ${WINDOW})`);
    }
  });

  it("the prompt estimate follows the provider's count after the screenshot (the calibration is not thrown off by it)", () => {
    // Counted as text, the base64 was ~830,000 weighted chars of a prompt the provider billed at
    // ~22,000 tokens: the calibration then drove the slope to its floor (0.05 tokens per char)
    // and every later estimate was about twice the prompt, and a sixth of the text's tokens once
    // the image left the history. Each turn's first main request against the assemble that
    // produced it.
    const assembles = run.events.filter((e) => e.event === "assemble");
    for (const t of run.turns.slice(shotTurn + 1)) {
      const a = assembles.find((e) => eventTime(e) >= t.startedAt - 50 && eventTime(e) <= t.endedAt + 50);
      const r = t.requests.find((q) => requestKind(q) === "main" && q.usage?.prompt_tokens > 0);
      assert.ok(a && r, `turn ${t.index}: no assemble or no main request with usage`);
      const ratio = a.report.tokensBefore / r.usage.prompt_tokens;
      log(`turn ${t.index}: estimate ${a.report.tokensBefore}, provider ${r.usage.prompt_tokens} (${ratio.toFixed(2)}x)`);
      assert.ok(ratio > 0.75, `turn ${t.index}: estimate ${a.report.tokensBefore} for a prompt of ${r.usage.prompt_tokens} tokens (${ratio.toFixed(2)}x)`);
      assert.ok(ratio < 1.33, `turn ${t.index}: estimate ${a.report.tokensBefore} for a prompt of ${r.usage.prompt_tokens} tokens (${ratio.toFixed(2)}x)`);
    }
  });

  it("the planted fact is recalled at the last turn", () => {
    assert.equal(run.summary.factReachable, "verbatim", `fact ${run.summary.factReachable}; last turn reply: ${run.turns.at(-1).text.slice(0, 200)}`);
    assert.match(run.turns.at(-1).text, new RegExp(`CHECK ${FACT_NEEDLE}: present`));
  });
});
