// Pure helpers for the lessons e2e (tests/e2e/lessons.test.mjs): per-session figures from the
// fake provider's request log, and where the injected lessons block sits in each request.

import { contentText, serializeRequest, countTokens, BYTES_PER_TOKEN } from "./tokenize.mjs";
import { lcpBytes, prefixBreaks, requestKind } from "./analyze.mjs";

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
  let without = with_;
  if (injected) {
    const i = b.indexOf(injected);
    if (i >= 0) {
      // Cut the text and the blank line the host joins it with, whichever side it is on.
      let cut = b.slice(0, i) + b.slice(i + injected.length);
      if (b.slice(i + injected.length, i + injected.length + 2) === "\n\n") cut = b.slice(0, i) + b.slice(i + injected.length + 2);
      else if (b.slice(i - 2, i) === "\n\n") cut = b.slice(0, i - 2) + b.slice(i + injected.length);
      without = lcpBytes(a, cut);
    }
  }
  return { withTokens: Math.floor(with_ / BYTES_PER_TOKEN), withoutTokens: Math.floor(without / BYTES_PER_TOKEN) };
}

export { countTokens };
