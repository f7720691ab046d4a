// Pure helpers for the lessons e2e (tests/e2e/lessons.test.mjs): per-session figures from the
// fake provider's request log, and where the injected lessons block sits in each request.

import { contentText, serializeRequest, serializeMessage, countTokens, BYTES_PER_TOKEN } from "./tokenize.mjs";
import { lcpBytes, prefixBreaks, requestKind } from "./analyze.mjs";
import { CacheSim } from "./cache-sim.mjs";

/** The host session id named in the runtime carrier of the first user message ("sessionId=…"). */
export function requestSessionId(body) {
  for (const m of body?.messages ?? []) {
    if (m?.role !== "user") continue;
    const mm = /Runtime: [^\n]*?\bsessionId=([^\s|]+)/.exec(contentText(m.content));
    if (mm) return mm[1];
  }
  return null;
}

/** The scripted turn's own model calls (tool-bearing, HTTP 200), not summaries or flushes. */
export function mainRequests(requests) {
  return requests.filter((r) => requestKind(r) === "main" && Array.isArray(r.body?.tools) && r.body.tools.length > 0);
}

/** Requests, prompt / hit / miss tokens (the provider's usage) and tool calls of one session. */
export function sessionFigures(requests) {
  const main = mainRequests(requests);
  const sum = (f) => main.reduce((a, r) => a + (f(r.usage ?? {}) ?? 0), 0);
  return {
    requests: main.length,
    promptTokens: sum((u) => u.prompt_tokens),
    hitTokens: sum((u) => u.prompt_cache_hit_tokens ?? u.prompt_tokens_details?.cached_tokens),
    missTokens: sum((u) => u.prompt_cache_miss_tokens),
    firstHitTokens: main[0]?.usage?.prompt_cache_hit_tokens ?? null,
    firstPromptTokens: main[0]?.usage?.prompt_tokens ?? null,
    toolCalls: main.flatMap((r) => (r.response?.tool_calls ?? []).map((c) => c.function?.name)),
    prefixBreaks: prefixBreaks(main).length,
  };
}

/**
 * Where `text` sits in each request: `{offsets, systemPrefixes}` — the byte offset of the text in
 * the canonical serialization (null when absent) and the system message up to the end of the text
 * (so "same position, same bytes before it" is one comparison).
 */
export function injectionPositions(requests, text) {
  return mainRequests(requests).map((r) => {
    const s = serializeRequest(r.body);
    const at = s.indexOf(text);
    return { seq: r.seq, offset: at < 0 ? null : Buffer.byteLength(s.slice(0, at)), head: at < 0 ? null : s.slice(0, at + text.length) };
  });
}

/**
 * Tokens of common prefix between `prev` (a request of the previous session) and `first` (the
 * first request of the next one), with the injected text and without it (the same request with the
 * text cut out, as lessons-off would send it): the difference is what the injection costs in cache
 * hits at the session start.
 */
export function sessionStartPrefix(prev, first, injected) {
  const a = serializeRequest(prev.body);
  const b = serializeRequest(first.body);
  const with_ = lcpBytes(a, b);
  const without = injected && b.includes(injected) ? lcpBytes(a, cutOut(b, injected)) : with_;
  return { withTokens: Math.floor(with_ / BYTES_PER_TOKEN), withoutTokens: Math.floor(without / BYTES_PER_TOKEN) };
}

/** `text` cut out of `s` together with the blank line that joins it to its neighbour. */
export function cutOut(s, text) {
  const i = s.indexOf(text);
  if (i < 0) return s;
  if (s.slice(i + text.length, i + text.length + 2) === "\n\n") return s.slice(0, i) + s.slice(i + text.length + 2);
  if (s.slice(i - 2, i) === "\n\n") return s.slice(0, i - 2) + s.slice(i + text.length);
  return s.slice(0, i) + s.slice(i + text.length);
}

/**
 * The request log replayed through a fresh cache simulation twice: as recorded, and with `text`
 * cut out of the requests in `seqs` (what the provider would have seen with lessons off, every
 * other byte the same). Returns, for both runs, a map seq -> {tokens, hit, miss} of every request.
 */
export function counterfactual(requests, seqs, text, { mode = "strict" } = {}) {
  const cut = new Set(seqs);
  const run = (strip) => {
    const sim = new CacheSim({ mode });
    const out = new Map();
    for (const r of requests) {
      if (r.status !== 200 || !r.body) continue;
      let input = serializeRequest(r.body);
      if (strip && cut.has(r.seq)) input = cutOut(input, text);
      out.set(r.seq, sim.request(input, r.response ? serializeMessage(r.response) : ""));
    }
    return out;
  };
  return { mode, lessonsOn: run(false), lessonsOff: run(true) };
}

/** Totals of some requests in one counterfactual run: {prompt, hit, miss, firstHit}. */
export function totals(run, seqs) {
  const t = { prompt: 0, hit: 0, miss: 0, firstHit: null };
  for (const q of seqs) {
    const u = run.get(q);
    if (!u) continue;
    t.prompt += u.tokens;
    t.hit += u.hit;
    t.miss += u.miss;
    if (t.firstHit == null) t.firstHit = u.hit;
  }
  return t;
}

/** Per-request rows: seq, prompt, hit, miss, the scripted step. */
export function requestRows(requests) {
  return mainRequests(requests).map((r) => ({ seq: r.seq, step: r.note, prompt: r.usage?.prompt_tokens ?? null, hit: r.usage?.prompt_cache_hit_tokens ?? null, miss: r.usage?.prompt_cache_miss_tokens ?? null }));
}

export { countTokens };
