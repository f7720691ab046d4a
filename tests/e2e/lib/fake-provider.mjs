// Fake OpenAI-compatible provider for the e2e harness, bound to 127.0.0.1 on a free port.
//
// POST /v1/chat/completions:
//   - records the request (JSONL, one line per request: seq, time, session, body, usage, status);
//   - checks DeepSeek's tool-call pairing rule and answers HTTP 400 with a DeepSeek-style error
//     body when it is broken (counted in `stats.http400`);
//   - otherwise answers with the scripted model (script.mjs), streamed as SSE when
//     `stream:true`: role delta, content or tool_calls delta, finish_reason, a final chunk with
//     `choices: []` and usage, then `[DONE]`;
//   - usage carries DeepSeek fields from the DS-unit prefix-cache simulation (cache-sim.mjs):
//     prompt_tokens, completion_tokens, prompt_cache_hit_tokens, prompt_cache_miss_tokens and
//     prompt_tokens_details.cached_tokens (= hit).
//   - `tokenScale: k` reports k x the approximate counts (hit and miss alike), as a provider whose
//     tokenizer counts more tokens than the engine's estimate (DeepSeek: ~1.14 on agent traffic);
//   - `thinking: true` plays a DeepSeek thinking model: every answer streams `reasoning_content`
//     deltas first, and a request whose assistant tool-call messages lack `reasoning_content`
//     gets HTTP 400 (pairing.mjs reasoningViolations; counted in `stats.reasoning400`).
//   - `cache: "openai"` plays OpenAI's automatic prefix caching instead (cache-sim.mjs
//     OpenAICacheSim: 1,024-token minimum, 128-token steps, entries gone `ttlMs` after their last
//     use) and reports usage as OpenAI does (prompt_tokens_details.cached_tokens only); the
//     recorded usage (requests.jsonl) also carries prompt_cache_hit/miss_tokens for analyze.mjs.
//     `setCache(opts)` switches the mode before the first request.
//   - `cache: "anthropic"` serves the Anthropic Messages API instead (POST .../v1/messages, as
//     OpenClaw's `api: "anthropic-messages"` sends it): `cache_control` breakpoints, writes and
//     reads as anthropic.mjs AnthropicCacheSim plays them (`ttlMs`: the 5-minute lifetime,
//     settable for tests; `minTokens`), usage as Anthropic reports it (input_tokens,
//     cache_creation_input_tokens, cache_read_input_tokens). The recorded request keeps the
//     Messages body as `wireBody` and its chat-completions form (anthropic.mjs toChatBody) as
//     `body`; the recorded usage adds prompt_tokens, prompt_cache_hit_tokens (= read),
//     prompt_cache_miss_tokens (= write + input) and cache_write_tokens (= write), and `marks`
//     says where the request's breakpoints were (`cacheRaw`: the counts before `tokenScale`).
// GET /v1/models lists the one model. Anything else is 404.

import http from "node:http";
import fs from "node:fs";
import { CacheSim, OpenAICacheSim } from "./cache-sim.mjs";
import { AnthropicCacheSim, toChatBody, scaleAnthropic, anthropicEvents, anthropicMessage } from "./anthropic.mjs";
import { pairingViolations, reasoningViolations, deepseekErrorBody } from "./pairing.mjs";
import { countTokens, serializeMessage, serializeRequest, contentText } from "./tokenize.mjs";
import { respond, responseAsMessage, INTERNAL_CONTEXT_MARK } from "./script.mjs";

/** Session key named in the runtime carrier of the first user message ("session=..."), if any. */
export function requestSession(body) {
  for (const m of body?.messages ?? []) {
    if (m?.role !== "user") continue;
    const t = contentText(m.content);
    if (t.includes(INTERNAL_CONTEXT_MARK)) continue;
    const mm = /Runtime: [^\n]*?\bsession=([^\s|]+)/.exec(t);
    if (mm) return mm[1];
  }
  return null;
}

/**
 * Start the provider.
 * @param {{logFile?: string, model?: string, cacheMode?: "strict"|"optimistic", block?: number, host?: string, thinking?: boolean, tokenScale?: number, cache?: "deepseek"|"openai"|"anthropic", ttlMs?: number, minTokens?: number}} [opts]
 * @returns {Promise<{port:number, url:string, baseUrl:string, requests:object[], stats:object, setCache:(o:object)=>void, close:()=>Promise<void>}>}
 */
export async function startFakeProvider(opts = {}) {
  opts = { ...opts };
  const model = opts.model ?? "deepseek-v4-flash";
  const makeSim = () =>
    opts.cache === "openai"
      ? new OpenAICacheSim({ ttlMs: opts.ttlMs, minTokens: opts.minTokens, block: opts.block })
      : opts.cache === "anthropic"
        ? new AnthropicCacheSim({ ttlMs: opts.ttlMs, minTokens: opts.minTokens })
        : new CacheSim({ mode: opts.cacheMode ?? "strict", block: opts.block });
  let sim = makeSim();
  const requests = [];
  const stats = { requests: 0, http400: 0, reasoning400: 0, promptTokens: 0, hitTokens: 0, missTokens: 0, completionTokens: 0 };
  const log = opts.logFile ? fs.openSync(opts.logFile, "a") : null;
  let seq = 0;

  const record = (rec) => {
    requests.push(rec);
    if (log != null) fs.writeSync(log, JSON.stringify(rec) + "\n");
  };

  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      try {
        handle(req, res, Buffer.concat(chunks).toString("utf8"));
      } catch (e) {
        res.writeHead(500, { "content-type": "application/json" });
        res.end(JSON.stringify({ error: { message: String(e?.stack ?? e), type: "fake_provider_error" } }));
      }
    });
  });

  function handle(req, res, raw) {
    const url = req.url ?? "";
    if (req.method === "GET" && url.endsWith("/models")) {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ object: "list", data: [{ id: model, object: "model", owned_by: "fake" }] }));
      return;
    }
    if (req.method === "POST" && opts.cache === "anthropic" && /\/v1\/messages(\?|$)/.test(url)) {
      handleMessages(res, JSON.parse(raw));
      return;
    }
    if (req.method !== "POST" || !url.endsWith("/chat/completions")) {
      res.writeHead(404, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { message: `no route ${req.method} ${url}`, type: "not_found" } }));
      return;
    }
    const body = JSON.parse(raw);
    const n = ++seq;
    stats.requests++;
    const session = requestSession(body);
    const violations = [...pairingViolations(body.messages), ...(opts.thinking ? reasoningViolations(body.messages) : [])];
    if (violations.length) {
      stats.http400++;
      if (violations.some((v) => v.kind === "missing_reasoning_content")) stats.reasoning400++;
      record({ seq: n, t: Date.now(), session, status: 400, violations, body });
      res.writeHead(400, { "content-type": "application/json" });
      res.end(JSON.stringify(deepseekErrorBody(violations)));
      return;
    }
    const r = respond(body);
    const input = serializeRequest(body);
    const outMsg = responseAsMessage(r);
    const output = serializeMessage(outMsg);
    const u = scaleUsage(sim.request(input, output), opts.tokenScale);
    const completion = countTokens(output);
    stats.promptTokens += u.tokens;
    stats.hitTokens += u.hit;
    stats.missTokens += u.miss;
    stats.completionTokens += completion;
    const openai = opts.cache === "openai";
    const usage = {
      prompt_tokens: u.tokens,
      completion_tokens: completion,
      total_tokens: u.tokens + completion,
      ...(openai ? {} : { prompt_cache_hit_tokens: u.hit, prompt_cache_miss_tokens: u.miss }),
      prompt_tokens_details: { cached_tokens: u.hit },
    };
    const recorded = openai ? { ...usage, prompt_cache_hit_tokens: u.hit, prompt_cache_miss_tokens: u.miss } : usage;
    record({ seq: n, t: Date.now(), session, status: 200, note: r.note, usage: recorded, ...(openai ? { wireUsage: usage } : {}), response: outMsg, body });
    const id = `chatcmpl-fake-${n}`;
    const created = Math.floor(Date.now() / 1000);
    const finish = r.kind === "text" ? "stop" : "tool_calls";
    if (!body.stream) {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ id, object: "chat.completion", created, model: body.model ?? model, choices: [{ index: 0, message: outMsg, finish_reason: finish }], usage }));
      return;
    }
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
    const send = (choices, extra = {}) => res.write(`data: ${JSON.stringify({ id, object: "chat.completion.chunk", created, model: body.model ?? model, choices, ...extra })}\n\n`);
    send([{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null }]);
    if (opts.thinking) {
      const thought = reasoningText(r);
      send([{ index: 0, delta: { reasoning_content: thought.slice(0, 40) }, finish_reason: null }]);
      send([{ index: 0, delta: { reasoning_content: thought.slice(40) }, finish_reason: null }]);
    }
    if (r.kind === "text") {
      // Two content deltas, to exercise the host's stream assembly.
      const cut = Math.floor(r.text.length / 2);
      send([{ index: 0, delta: { content: r.text.slice(0, cut) }, finish_reason: null }]);
      send([{ index: 0, delta: { content: r.text.slice(cut) }, finish_reason: null }]);
    } else {
      r.calls.forEach((c, index) => {
        send([{ index: 0, delta: { tool_calls: [{ index, id: c.id, type: "function", function: { name: c.name, arguments: c.arguments } }] }, finish_reason: null }]);
      });
    }
    send([{ index: 0, delta: {}, finish_reason: finish }]);
    send([], { usage });
    res.write("data: [DONE]\n\n");
    res.end();
  }

  /** The Anthropic Messages route (`cache: "anthropic"`). */
  function handleMessages(res, wire) {
    const n = ++seq;
    stats.requests++;
    const body = toChatBody(wire);
    const session = requestSession(body);
    const violations = pairingViolations(body.messages);
    const c = violations.length ? null : sim.request(wire);
    if (violations.length || c.error) {
      stats.http400++;
      record({ seq: n, t: Date.now(), session, status: 400, violations: violations.length ? violations : [{ kind: "cache_control", message: c.error }], body, wireBody: wire });
      res.writeHead(400, { "content-type": "application/json" });
      res.end(JSON.stringify({ type: "error", error: { type: "invalid_request_error", message: c?.error ?? violations.map((v) => v.message ?? v.kind).join("; ") } }));
      return;
    }
    const u = scaleAnthropic(c, opts.tokenScale);
    const r = respond(body);
    const outMsg = responseAsMessage(r);
    const completion = countTokens(serializeMessage(outMsg));
    stats.promptTokens += u.tokens;
    stats.hitTokens += u.read;
    stats.missTokens += u.tokens - u.read;
    stats.completionTokens += completion;
    const usage = { prompt_tokens: u.tokens, completion_tokens: completion, prompt_cache_hit_tokens: u.read, prompt_cache_miss_tokens: u.tokens - u.read, cache_write_tokens: u.write };
    const wireUsage = { input_tokens: u.input, cache_creation_input_tokens: u.write, cache_read_input_tokens: u.read, output_tokens: completion };
    record({ seq: n, t: Date.now(), session, status: 200, note: r.note, usage, wireUsage, marks: c.marks, cacheRaw: { tokens: c.tokens, read: c.read, write: c.write }, response: outMsg, body, wireBody: wire });
    const meta = { id: `msg_fake_${n}`, model: wire.model ?? model, outputTokens: completion };
    if (!wire.stream) {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify(anthropicMessage(r, u, meta)));
      return;
    }
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
    for (const ev of anthropicEvents(r, u, meta)) res.write(`event: ${ev.type}\ndata: ${JSON.stringify(ev)}\n\n`);
    res.end();
  }

  await new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, opts.host ?? "127.0.0.1", resolve);
  });
  const port = server.address().port;
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    stats,
    /** Switch the cache rule (`cache`, `ttlMs`, `minTokens`, `block`); only before the first request. */
    setCache(o) {
      if (seq > 0) throw new Error("fake provider: setCache after requests were served");
      Object.assign(opts, o);
      sim = makeSim();
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections?.();
        server.close(() => {
          if (log != null) fs.closeSync(log);
          resolve();
        });
      }),
  };
}

/** Usage as a provider with a denser tokenizer would report it (hit rounded down to 128-token units). */
export function scaleUsage(u, scale) {
  if (!scale || scale === 1) return u;
  const tokens = Math.ceil(u.tokens * scale);
  const hit = Math.min(tokens, Math.floor((u.hit * scale) / 128) * 128);
  return { tokens, hit, miss: tokens - hit };
}

/** The scripted model's "thinking" for a response (deterministic, ~30 tokens). */
export function reasoningText(r) {
  const what = r.kind === "text" ? "answer the user directly" : `call ${r.calls.map((c) => c.name).join(", ")}`;
  return `The user asked for this step; the script says to ${what}. Checking the context first, then proceeding.`;
}

// Standalone: `node fake-provider.mjs [logFile]` prints the port and serves until killed.
if (import.meta.url === `file://${process.argv[1]}`) {
  const p = await startFakeProvider({ logFile: process.argv[2] });
  console.log(JSON.stringify({ port: p.port, baseUrl: p.baseUrl }));
}
