// Deterministic turns for the fault campaign: turn k is always the same messages, so a killed
// worker's successor (and the verifier) can rebuild exactly the history it had.
import { createHash } from "node:crypto";

export const MODEL = "deepseek-v4-flash";
const T0 = 1_763_700_000_000;

const usage = { input: 0, output: 10, cacheRead: 0, cacheWrite: 0, totalTokens: 10, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
const base = { api: "openai-completions", provider: "fake", model: MODEL, usage };

/** The four messages of turn k: question, tool call, tool result, answer. */
export function turn(k) {
  const ts = T0 + k * 10_000;
  return [
    { role: "user", content: [{ type: "text", text: `turn ${k}: read part ${k} ${"please ".repeat(k % 7)}` }], timestamp: ts },
    { ...base, role: "assistant", content: [{ type: "toolCall", id: `call${k}`, name: "read", arguments: { path: `part-${k}.txt` } }], stopReason: "toolUse", timestamp: ts + 1 },
    { role: "toolResult", toolCallId: `call${k}`, toolName: "read", content: [{ type: "text", text: `line ${k}\n`.repeat(60 + (k % 40)) }], isError: false, timestamp: ts + 2 },
    { ...base, role: "assistant", content: [{ type: "text", text: `part ${k} read` }], stopReason: "stop", timestamp: ts + 3 },
  ];
}

/** History the host shows before turn k: turns 0..k-1. */
export function history(k) {
  const out = [];
  for (let i = 0; i < k; i++) out.push(...turn(i));
  return out;
}

export function shortHash(m) {
  return createHash("sha1").update(JSON.stringify(m)).digest("hex").slice(0, 10);
}

/** One assembled output entry: its short hash, and for a fold or condensed record `~<id>`. */
export function outputEntry(m) {
  const text = m?.role === "user" && Array.isArray(m.content) ? m.content[0]?.text : null;
  const id = typeof text === "string" ? text.match(/^\[cachefold fold ([a-z]\d+)\]/)?.[1] : null;
  return id ? `${shortHash(m)}~${id}` : shortHash(m);
}
