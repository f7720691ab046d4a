// The fake provider's Anthropic Messages mode (fake-provider.mjs `cache: "anthropic"`):
//
//   - toChatBody(body): the Messages request as a chat-completions body (system, tools,
//     messages with tool_calls / role "tool"), so the scripted model, the pairing check and the
//     analysis read it as they read every other request. A user message's blocks become one
//     chat message each (text → user, tool_result → tool), so the host's transient runtime-context
//     block stays apart from the real prompt.
//   - AnthropicCacheSim: explicit prompt caching as platform.claude.com/docs/en/build-with-claude/
//     prompt-caching describes it. The prompt is a sequence of blocks in cache order: tools, system
//     blocks, then every message's content blocks. A block carrying `cache_control` is a
//     breakpoint (at most 4, else HTTP 400 as the API answers). A request reads the longest cached
//     prefix that ends at a breakpoint or at one of the 20 block boundaries before it (the
//     API's lookback); it then writes the prefix of every breakpoint past that hit whose length
//     reaches the model's minimum (1,024 tokens on Sonnet): cache_creation_input_tokens = the
//     tokens from the hit to the last written breakpoint, cache_read_input_tokens = the hit,
//     input_tokens = the rest. An entry lives `ttlMs` (5 min; `ttl: "1h"` marks 1 h) after its
//     last read or write.
//   - anthropicEvents(...): the streamed answer (message_start with usage, content blocks,
//     message_delta with stop_reason and usage, message_stop).
// Tokens: 4-byte pieces of the canonical block text (tokenize.mjs BYTES_PER_TOKEN).

import { createHash } from "node:crypto";
import { BYTES_PER_TOKEN } from "./tokenize.mjs";

/** Anthropic's breakpoint limit and lookback (blocks checked before a breakpoint). */
export const MAX_BREAKPOINTS = 4;
export const LOOKBACK_BLOCKS = 20;

const text = (c) => {
  if (c == null) return "";
  if (typeof c === "string") return c;
  if (Array.isArray(c)) return c.map((b) => (typeof b === "string" ? b : b?.type === "text" ? (b.text ?? "") : b?.type === "image" ? "<|image|>" : JSON.stringify(b))).join("");
  return JSON.stringify(c);
};
const blocksOf = (content) => (typeof content === "string" ? [{ type: "text", text: content }] : Array.isArray(content) ? content : []);

/** A Messages request body as a chat-completions body (see the module docs). */
export function toChatBody(body) {
  const messages = [];
  const sys = body?.system;
  if (sys != null && text(sys)) messages.push({ role: "system", content: text(sys) });
  for (const m of body?.messages ?? []) {
    if (m?.role === "assistant") {
      let content = "";
      const calls = [];
      for (const b of blocksOf(m.content)) {
        if (b?.type === "text") content += b.text ?? "";
        else if (b?.type === "tool_use") calls.push({ id: b.id, type: "function", function: { name: b.name, arguments: JSON.stringify(b.input ?? {}) } });
      }
      messages.push(calls.length ? { role: "assistant", content: content || null, tool_calls: calls } : { role: "assistant", content });
      continue;
    }
    for (const b of blocksOf(m?.content)) {
      if (b?.type === "tool_result") messages.push({ role: "tool", tool_call_id: b.tool_use_id, content: text(b.content) });
      else messages.push({ role: m?.role ?? "user", content: text([b]) });
    }
  }
  const tools = (body?.tools ?? []).map((t) => ({ type: "function", function: { name: t.name, description: t.description, parameters: t.input_schema } }));
  return { model: body?.model, stream: !!body?.stream, messages, tools, max_tokens: body?.max_tokens };
}

/** The request's blocks in cache order: {text, mark} (mark: the block's cache_control or null). */
export function cacheBlocks(body) {
  const out = [];
  for (const t of body?.tools ?? []) {
    const { cache_control, ...def } = t ?? {};
    out.push({ where: `tool ${t?.name}`, text: `<|tool|>${JSON.stringify(def)}`, mark: cache_control ?? null });
  }
  const sys = typeof body?.system === "string" ? [{ type: "text", text: body.system }] : (body?.system ?? []);
  sys.forEach((b, i) => out.push({ where: `system[${i}]`, text: `<|system|>${b?.text ?? ""}`, mark: b?.cache_control ?? null }));
  (body?.messages ?? []).forEach((m, mi) => {
    blocksOf(m?.content).forEach((b, bi) => {
      const { cache_control, ...rest } = b ?? {};
      let t;
      if (rest.type === "text") t = rest.text ?? "";
      else if (rest.type === "tool_use") t = `<|tool_call|>${rest.name}\n${JSON.stringify(rest.input ?? {})}`;
      else if (rest.type === "tool_result") t = `<|tool_result|>${text(rest.content)}`;
      else if (rest.type === "image") t = "<|image|>";
      else t = JSON.stringify(rest);
      out.push({ where: `messages[${mi}].${m?.role}[${bi}].${rest.type}`, text: `<|${m?.role}|>${t}`, mark: cache_control ?? null });
    });
  });
  return out;
}

export class AnthropicCacheSim {
  /** @param {{minTokens?: number, ttlMs?: number, longTtlMs?: number, now?: () => number}} [opts] */
  constructor(opts = {}) {
    this.minTokens = opts.minTokens ?? 1024;
    this.ttlMs = opts.ttlMs ?? 5 * 60_000;
    this.longTtlMs = opts.longTtlMs ?? 60 * 60_000;
    this.now = opts.now ?? Date.now;
    /** @type {Map<string, {last: number, ttl: number}>} prefix hash -> entry */
    this.entries = new Map();
    this.expired = 0;
  }

  expire(at) {
    for (const [k, e] of this.entries) {
      if (at - e.last > e.ttl) {
        this.entries.delete(k);
        this.expired++;
      }
    }
  }

  /**
   * Account one request (Messages body) at `at`: {tokens, read, write, input, marks} or
   * {error} when it carries more than 4 breakpoints. `marks`: where the breakpoints were.
   */
  request(body, at = this.now()) {
    const blocks = cacheBlocks(body);
    const marks = blocks.map((b, i) => (b.mark ? i : -1)).filter((i) => i >= 0);
    if (marks.length > MAX_BREAKPOINTS) return { error: `A maximum of ${MAX_BREAKPOINTS} blocks with cache_control may be provided. Found ${marks.length}.` };
    this.expire(at);
    // Chained hashes and cumulative byte ends of every block prefix.
    const hashes = [];
    const ends = [];
    let prev = "";
    let bytes = 0;
    for (const b of blocks) {
      const h = createHash("sha1");
      h.update(prev);
      h.update(b.text);
      prev = h.digest("hex");
      hashes.push(prev);
      bytes += Buffer.byteLength(b.text, "utf8");
      ends.push(bytes);
    }
    const tok = (i) => (i < 0 ? 0 : Math.ceil(ends[i] / BYTES_PER_TOKEN));
    const tokens = tok(blocks.length - 1);
    let hitAt = -1;
    for (const m of marks) {
      for (let k = m; k >= Math.max(0, m - LOOKBACK_BLOCKS); k--) {
        if (k <= hitAt) break;
        if (this.entries.has(hashes[k])) {
          hitAt = k;
          break;
        }
      }
    }
    if (hitAt >= 0) this.entries.get(hashes[hitAt]).last = at;
    const read = tok(hitAt);
    let writtenTo = -1;
    for (const m of marks) {
      if (m <= hitAt || tok(m) < this.minTokens) continue;
      const ttl = blocks[m].mark?.ttl === "1h" ? this.longTtlMs : this.ttlMs;
      this.entries.set(hashes[m], { last: at, ttl });
      writtenTo = Math.max(writtenTo, m);
    }
    const write = writtenTo >= 0 ? tok(writtenTo) - read : 0;
    return {
      tokens,
      read,
      write,
      input: tokens - read - write,
      marks: marks.map((i) => ({ block: i, where: blocks[i].where, tokens: tok(i), ttl: blocks[i].mark?.ttl ?? "5m" })),
    };
  }
}

/** Usage counts scaled as a denser tokenizer reports them (fake-provider.mjs `tokenScale`). */
export function scaleAnthropic(u, scale) {
  if (!scale || scale === 1) return u;
  const read = Math.floor(u.read * scale);
  const write = Math.floor(u.write * scale);
  const tokens = Math.ceil(u.tokens * scale);
  return { ...u, tokens, read, write, input: tokens - read - write };
}

/** The SSE events of an answer `r` (script.mjs respond) with Anthropic usage `u`. */
export function anthropicEvents(r, u, { id, model, outputTokens }) {
  const usage = { input_tokens: u.input, cache_creation_input_tokens: u.write, cache_read_input_tokens: u.read, output_tokens: 1 };
  const ev = [{ type: "message_start", message: { id, type: "message", role: "assistant", model, content: [], stop_reason: null, stop_sequence: null, usage } }];
  if (r.kind === "text") {
    const cut = Math.floor(r.text.length / 2);
    ev.push({ type: "content_block_start", index: 0, content_block: { type: "text", text: "" } });
    ev.push({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text: r.text.slice(0, cut) } });
    ev.push({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text: r.text.slice(cut) } });
    ev.push({ type: "content_block_stop", index: 0 });
  } else {
    r.calls.forEach((c, index) => {
      ev.push({ type: "content_block_start", index, content_block: { type: "tool_use", id: c.id, name: c.name, input: {} } });
      ev.push({ type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: c.arguments } });
      ev.push({ type: "content_block_stop", index });
    });
  }
  ev.push({ type: "message_delta", delta: { stop_reason: r.kind === "text" ? "end_turn" : "tool_use", stop_sequence: null }, usage: { output_tokens: outputTokens } });
  ev.push({ type: "message_stop" });
  return ev;
}

/** The same answer as one (non-streamed) Messages response. */
export function anthropicMessage(r, u, { id, model, outputTokens }) {
  const content = r.kind === "text" ? [{ type: "text", text: r.text }] : r.calls.map((c) => ({ type: "tool_use", id: c.id, name: c.name, input: JSON.parse(c.arguments) }));
  return {
    id,
    type: "message",
    role: "assistant",
    model,
    content,
    stop_reason: r.kind === "text" ? "end_turn" : "tool_use",
    stop_sequence: null,
    usage: { input_tokens: u.input, cache_creation_input_tokens: u.write, cache_read_input_tokens: u.read, output_tokens: outputTokens },
  };
}
