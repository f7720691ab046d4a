// The scripted model: a deterministic function from a chat-completions request body to a
// response (text or tool calls). It is driven by a marker in the user's real prompt:
//
//   [[cf {"steps":[STEP, ...], "reply":"final text"} cf]]
//
// The newest message of a host request is the transient `<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>`
// user message (openclaw-plugin-api.md §9.1/§10), so the real prompt is the last user message
// that is not internal context. The step to run is the number of assistant messages after that
// prompt (each completed tool round adds one), so a turn walks its steps in order and then
// answers with text. Steps:
//   {"read": "file" | {path, offset?, limit?}}        → tool `read`
//   {"exec": "command"}                               → tool `exec` {command}
//   {"plugin": "cachefold_recover", "args": {...}}    → tool `tool_call` {id, args} (Tool Search)
//   {"tool": "name", "args": {...}}                   → any tool, called directly
//   {"reply": "text"}                                 → final text (turn ends)
//   {"check": "NEEDLE"}                               → final text "CHECK NEEDLE: present|absent"
// String args may use placeholders, resolved from the request: "$ARTIFACT" (newest
// `artifact <40 hex>` in a tool result), "$FOLD" (newest cachefold fold id in any message).
// If a placeholder cannot be resolved the model answers text "UNRESOLVED $X" instead of calling.
//
// Requests without tools (the host's compaction summary, cachefold's summary via llm.complete)
// get a deterministic summary that keeps every line naming an identifier (OpenClaw's own
// compaction prompt asks to "preserve all opaque identifiers exactly"), so the planted fact
// survives host compaction as it would with a competent model.

import { contentText } from "./tokenize.mjs";

export const INTERNAL_CONTEXT_MARK = "<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>";
const SCRIPT_RE = /\[\[cf (\{[\s\S]*?\}) cf\]\]/;
const ARTIFACT_RE = /artifact[ :=]+([0-9a-f]{40})/g;
const FOLD_RE = /\b(fold[-_:][0-9A-Za-z_-]{1,64})\b/g;
const IDENT_RE = /\b[A-Z][A-Z0-9]{2,}-\d{2,}\b/;

/** Build a script marker for a user message. */
export function scriptMarker(script) {
  return `[[cf ${JSON.stringify(script)} cf]]`;
}

function isInternal(m) {
  return m?.role === "user" && contentText(m.content).includes(INTERNAL_CONTEXT_MARK);
}

/** Index of the real prompt (last non-internal user message), or -1. */
export function realPromptIndex(messages) {
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i]?.role === "user" && !isInternal(messages[i])) return i;
  }
  return -1;
}

/** Parse the script marker out of a text, or null. */
export function parseScript(text) {
  const m = SCRIPT_RE.exec(text ?? "");
  if (!m) return null;
  try {
    return JSON.parse(m[1]);
  } catch {
    return null;
  }
}

function lastMatch(re, texts) {
  let found = null;
  for (const t of texts) {
    re.lastIndex = 0;
    let m;
    while ((m = re.exec(t))) found = m[1];
  }
  return found;
}

/** Resolve "$ARTIFACT"/"$FOLD" in a JSON value. Returns {value, unresolved}. */
export function resolvePlaceholders(value, messages) {
  const toolTexts = messages.filter((m) => m?.role === "tool").map((m) => contentText(m.content));
  const allTexts = messages.map((m) => contentText(m.content));
  const table = {
    $ARTIFACT: () => lastMatch(ARTIFACT_RE, toolTexts),
    $FOLD: () => lastMatch(FOLD_RE, allTexts),
  };
  let unresolved = null;
  const walk = (v) => {
    if (typeof v === "string" && Object.hasOwn(table, v)) {
      const r = table[v]();
      if (r == null) unresolved = v;
      return r ?? v;
    }
    if (Array.isArray(v)) return v.map(walk);
    if (v && typeof v === "object") return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x)]));
    return v;
  };
  return { value: walk(value), unresolved };
}

/** Deterministic summary for tool-less requests (see header). */
export function summarize(messages) {
  const lines = [];
  const seen = new Set();
  for (const m of messages) {
    if (m?.role === "system") continue;
    for (const raw of contentText(m.content).split(/\n|(?<=\.)\s+/)) {
      const line = raw.replace(/\[\[cf [\s\S]*? cf\]\]/g, "").trim();
      if (!line || !IDENT_RE.test(line) || seen.has(line)) continue;
      seen.add(line);
      lines.push(line.length > 200 ? line.slice(0, 200) : line);
    }
  }
  const kept = lines.slice(-40);
  return ["## Summary", "The user ran a scripted test session with file reads and shell commands.", "", "## Identifiers", ...kept.map((l) => `- ${l}`)].join("\n");
}

let callCounter = 0;
/** Tool-call ids: alphanumeric (the host rewrites `call_1` → `call1`; we avoid that churn). */
function callId(seed) {
  callCounter++;
  return `call${seed}x${callCounter}`;
}

/** Padding so replies have realistic output length; deterministic in the seed. */
function filler(seed, n) {
  const words = ["cache", "prefix", "token", "fold", "record", "artifact", "session", "result", "window", "budget"];
  const out = [];
  let x = seed >>> 0;
  for (let i = 0; i < n; i++) {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    out.push(words[x % words.length]);
  }
  return out.join(" ");
}

function hashStr(s) {
  let h = 2166136261;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619) >>> 0;
  return h;
}

/**
 * Decide the response for a request body.
 * @returns {{kind:"text", text:string, note?:string} | {kind:"tool_calls", calls:{id,name,arguments:string}[], note?:string}}
 */
export function respond(body) {
  const messages = Array.isArray(body?.messages) ? body.messages : [];
  const hasTools = Array.isArray(body?.tools) && body.tools.length > 0;
  if (!hasTools) return { kind: "text", text: summarize(messages), note: "summary" };
  const pi = realPromptIndex(messages);
  const prompt = pi >= 0 ? contentText(messages[pi].content) : "";
  const seed = hashStr(prompt);
  const script = parseScript(prompt);
  const after = pi >= 0 ? messages.slice(pi + 1) : [];
  const step = after.filter((m) => m?.role === "assistant").length;
  const steps = Array.isArray(script?.steps) ? script.steps : [];
  const finalText = () => `${script?.reply ?? "Done."} (${filler(seed, 40)})`;
  if (!script || step >= steps.length) return { kind: "text", text: finalText(), note: script ? "final" : "default" };
  const s = steps[step] ?? {};
  const tool = (name, args) => {
    const r = resolvePlaceholders(args, messages);
    if (r.unresolved) return { kind: "text", text: `UNRESOLVED ${r.unresolved}`, note: "unresolved" };
    return { kind: "tool_calls", calls: [{ id: callId(seed % 10000), name, arguments: JSON.stringify(r.value) }], note: `step${step}:${name}` };
  };
  if (s.reply != null) return { kind: "text", text: String(s.reply), note: `step${step}:reply` };
  if (s.check != null) {
    const needle = String(s.check);
    const present = messages.some((m) => m !== messages[pi] && contentText(m.content).includes(needle));
    return { kind: "text", text: `CHECK ${needle}: ${present ? "present" : "absent"}`, note: `step${step}:check` };
  }
  if (s.read != null) return tool("read", typeof s.read === "string" ? { path: s.read } : s.read);
  if (s.exec != null) return tool("exec", typeof s.exec === "string" ? { command: s.exec } : s.exec);
  if (s.plugin != null) return tool("tool_call", { id: s.plugin, args: s.args ?? {} });
  if (s.tool != null) return tool(String(s.tool), s.args ?? {});
  return { kind: "text", text: `BAD STEP ${JSON.stringify(s)}`, note: "bad-step" };
}

/** The assistant message a response becomes in the next request (for the output cache unit). */
export function responseAsMessage(r) {
  if (r.kind === "text") return { role: "assistant", content: r.text };
  return {
    role: "assistant",
    content: null,
    tool_calls: r.calls.map((c) => ({ id: c.id, type: "function", function: { name: c.name, arguments: c.arguments } })),
  };
}
