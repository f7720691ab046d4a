// Turning recorded provider requests into the numbers the compare table and the e2e assertions
// use. Everything here is a pure function of the recorded requests (fake-provider.mjs JSONL).

import { contentText, serializeMessage, serializeRequest, countTokens, BYTES_PER_TOKEN } from "./tokenize.mjs";
import { realPromptIndex, INTERNAL_CONTEXT_MARK } from "./script.mjs";
import { CacheSim, DS_BLOCK } from "./cache-sim.mjs";

/** DeepSeek flash, peak band, USD per 1M tokens (docs/cache-model.md). */
export const FLASH_PEAK = { key: "deepseek-flash-peak", hit: 0.006, miss: 0.3, output: 1.2 };

/**
 * Input cost in USD: `hit` tokens at the read price, `miss` at the miss price, except the `write`
 * tokens among the misses (Anthropic's cache writes), which pay `price.write` (the miss price
 * when the row has none).
 */
export function inputCost(hit, miss, price = FLASH_PEAK, write = 0) {
  const w = Math.min(write, miss);
  return (hit * price.hit + (miss - w) * price.miss + w * (price.write ?? price.miss)) / 1e6;
}

/** Byte offsets (canonical serialization) at which each message of a request ends. */
export function messageEndOffsets(body) {
  const msgs = body?.messages ?? [];
  const ends = [];
  let i = 0;
  let off = 0;
  while (i < msgs.length && (msgs[i]?.role === "system" || msgs[i]?.role === "developer")) {
    off += Buffer.byteLength(serializeMessage(msgs[i]));
    ends.push(off);
    i++;
  }
  off += Buffer.byteLength(`<|tools|>${JSON.stringify(body?.tools ?? [])}`);
  const toolsEnd = off;
  for (; i < msgs.length; i++) {
    off += Buffer.byteLength(serializeMessage(msgs[i]));
    ends.push(off);
  }
  return { ends, toolsEnd };
}

/** Longest common prefix, in bytes, of two strings' UTF-8 encodings. */
export function lcpBytes(a, b) {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  const n = Math.min(x.length, y.length);
  let i = 0;
  // compare in 4 KB strides first
  while (i + 4096 <= n && x.subarray(i, i + 4096).equals(y.subarray(i, i + 4096))) i += 4096;
  while (i < n && x[i] === y[i]) i++;
  return i;
}

/** Index of the message containing byte offset `off` (or -1 for the system/tools head). */
function messageAt(ends, off) {
  for (let k = 0; k < ends.length; k++) if (off < ends[k]) return k;
  return ends.length;
}

/** "main" (a scripted turn step), "summary" (tool-less: compaction or fold summary), "flush"
 * (OpenClaw's pre-compaction memory flush run, own system prompt and tools), or "400". */
export function requestKind(r) {
  if (r.status !== 200) return "400";
  if (r.note === "summary") return "summary";
  if (r.note === "flush") return "flush";
  return "main";
}

/**
 * For consecutive successful "main" requests of one session: where did the byte prefix diverge?
 * A divergence inside the transient internal-context tail (or at the end) is normal; anything
 * earlier is a prefix break, reported with the message index and role.
 */
export function prefixBreaks(requests) {
  const out = [];
  let prev = null;
  for (const r of requests) {
    if (requestKind(r) !== "main") continue;
    const text = serializeRequest(r.body);
    if (prev) {
      const l = lcpBytes(prev.text, text);
      const { ends } = messageEndOffsets(prev.body);
      const k = messageAt(ends, l);
      const pm = prev.body.messages[k];
      const transient = pm?.role === "user" && contentText(pm.content).includes(INTERNAL_CONTEXT_MARK);
      const atEnd = k >= prev.body.messages.length;
      if (!transient && !atEnd) {
        out.push({ seq: r.seq, prevSeq: prev.seq, lcpTokens: Math.floor(l / BYTES_PER_TOKEN), message: k, role: pm?.role ?? "?", prevTokens: Math.ceil(Buffer.byteLength(prev.text) / BYTES_PER_TOKEN) });
      }
    }
    prev = { text, body: r.body, seq: r.seq };
  }
  return out;
}

/** Does any message of the request (other than the real prompt) contain `needle`? */
export function requestContains(body, needle, { excludePrompt = true } = {}) {
  const msgs = body?.messages ?? [];
  const pi = excludePrompt ? realPromptIndex(msgs) : -1;
  return msgs.some((m, i) => i !== pi && (contentText(m.content).includes(needle) || JSON.stringify(m.tool_calls ?? "").includes(needle)));
}

/** A cachefold fold record in the request that points at cachefold_recover (the fact is reachable). */
export function foldRecordMentionsRecover(body) {
  return (body?.messages ?? []).some((m) => {
    const t = contentText(m.content);
    return t.includes("[cachefold fold ") && t.includes("cachefold_recover") && !t.includes("[[cf ");
  });
}

/**
 * Aggregate numbers for one engine run.
 * @param {{requests: object[], turns: object[], scenario: object, price?: object}} run
 */
export function summarizeRun({ requests, turns, scenario, price = FLASH_PEAK, storeContainsNeedle = false }) {
  let prompt = 0;
  let hit = 0;
  let miss = 0;
  let write = 0;
  let out = 0;
  let maxPrompt = 0;
  let n400 = 0;
  const kinds = { main: 0, summary: 0, flush: 0, 400: 0 };
  for (const r of requests) {
    kinds[requestKind(r)]++;
    if (r.status === 400) {
      n400++;
      continue;
    }
    if (!r.usage) continue;
    prompt += r.usage.prompt_tokens;
    hit += r.usage.prompt_cache_hit_tokens;
    miss += r.usage.prompt_cache_miss_tokens;
    write += r.usage.cache_write_tokens ?? 0;
    out += r.usage.completion_tokens;
    maxPrompt = Math.max(maxPrompt, r.usage.prompt_tokens);

  }
  const last = turns[turns.length - 1];
  const lastReq = last?.requests?.find((r) => requestKind(r) === "main") ?? null;
  // verbatim: in the last turn's first request; recovered: not in it, but the model followed a
  // fold record and cachefold_recover returned it; fold record: a fold record pointing at
  // cachefold_recover is in the request and the plugin's store holds the fact.
  const checkReply = /CHECK [^:]+: (present|absent|recovered)/.exec(last?.text ?? "")?.[1] ?? null;
  let factReachable = "no";
  if (lastReq && requestContains(lastReq.body, scenario.needle)) factReachable = "verbatim";
  else if (checkReply === "recovered") factReachable = "recovered";
  else if (lastReq && foldRecordMentionsRecover(lastReq.body) && storeContainsNeedle) factReachable = "fold record";
  const turnMs = turns.map((t) => t.ms);
  return {
    requests: requests.length,
    summaryRequests: kinds.summary,
    flushRequests: kinds.flush,
    mainRequests: kinds.main,
    promptTokens: prompt,
    hitTokens: hit,
    missTokens: miss,
    writeTokens: write,
    hitPct: prompt ? (100 * hit) / prompt : 0,
    maxPrompt,
    completionTokens: out,
    inputCostUsd: inputCost(hit, miss, price, write),
    outputCostUsd: (out * price.output) / 1e6,
    http400: n400,
    factReachable,
    checkReply,
    turnsOk: turns.filter((t) => t.ok).length,
    turns: turns.length,
    turnMsMean: turnMs.length ? Math.round(turnMs.reduce((a, b) => a + b, 0) / turnMs.length) : 0,
    turnMsMax: turnMs.length ? Math.max(...turnMs) : 0,
    prefixBreaks: prefixBreaks(requests.filter((r) => r.session != null)),
    perTurn: turns.map((t) => ({
      turn: t.index,
      kind: t.kind ?? null,
      ok: t.ok,
      ms: t.ms,
      requests: t.requests.length,
      prompt: t.requests.map((r) => r.usage?.prompt_tokens ?? null),
      hit: t.requests.map((r) => r.usage?.prompt_cache_hit_tokens ?? null),
      notes: t.requests.map((r) => (r.status === 400 ? "400" : r.note)),
    })),
  };
}

/** Markdown table of several runs. */
export function markdownTable(rows, price = FLASH_PEAK) {
  const head = `| engine | requests | prompt tokens | hit tokens | hit % | max prompt | input cost @${price.key} (hit $${price.hit}/M, miss $${price.miss}/M) | 400s | planted fact reachable |`;
  const sep = "|---|---:|---:|---:|---:|---:|---:|---:|---|";
  const fmt = (n) => n.toLocaleString("en-US");
  const lines = rows.map((r) => {
    const s = r.summary;
    const fact = s.factReachable === "no" ? "no" : `yes (${s.factReachable})`;
    return `| ${r.label} | ${fmt(s.requests)} | ${fmt(s.promptTokens)} | ${fmt(s.hitTokens)} | ${s.hitPct.toFixed(1)} | ${fmt(s.maxPrompt)} | $${s.inputCostUsd.toFixed(4)} | ${s.http400} | ${fact} |`;
  });
  return [head, sep, ...lines].join("\n");
}

export { countTokens };

/**
 * Replay recorded requests through a fresh cache simulator (e.g. the other DS-unit mode) and
 * return {prompt, hit, hitPct, inputCostUsd}. The recorded responses give the output units.
 */
export function resimulate(requests, { mode = "optimistic", block, price = FLASH_PEAK, phase = 0 } = {}) {
  const sim = new CacheSim({ mode, block });
  // `phase` bytes of the same filler before every input move every block boundary by that much
  // relative to the content, as a system prompt of another length would.
  const pad = " ".repeat(phase);
  let prompt = 0;
  let hit = 0;
  for (const r of requests) {
    if (r.status !== 200 || !r.body) continue;
    const u = sim.request(pad + serializeRequest(r.body), r.response ? serializeMessage(r.response) : "");
    prompt += u.tokens;
    hit += u.hit;
  }
  return { mode, prompt, hit, hitPct: prompt ? (100 * hit) / prompt : 0, inputCostUsd: inputCost(hit, prompt - hit, price) };
}

/**
 * The strict DS-unit cost of `requests` averaged over `phases` evenly spaced alignments of the
 * block boundaries (one block = `block` tokens = 4·block bytes). Under the strict rule whether a
 * request's end-of-input unit lies inside the next request's common prefix depends on where the
 * boundaries fall (OpenClaw ends every request with a short transient message), so one run's
 * figure is one draw of that alignment; a user's system prompt of any other length draws another.
 * The mean over alignments is the expected cost of the same bytes. Returns
 * {mean, min, max, costs} in USD (tokens unscaled, as resimulate).
 */
export function strictOverPhases(requests, { phases = 16, block = DS_BLOCK, price = FLASH_PEAK } = {}) {
  const step = Math.max(1, Math.floor((block * BYTES_PER_TOKEN) / phases));
  const costs = [];
  for (let k = 0; k < phases; k++) costs.push(resimulate(requests, { mode: "strict", block, price, phase: k * step }).inputCostUsd);
  return { mean: costs.reduce((a, b) => a + b, 0) / costs.length, min: Math.min(...costs), max: Math.max(...costs), costs };
}
