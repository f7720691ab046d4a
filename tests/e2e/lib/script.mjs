// The scripted model: a deterministic function from a chat-completions request body to a
// response (text or tool calls). It is driven by a marker in the user's real prompt:
//
//   [[cf {"steps":[STEP, ...], "reply":"final text"} cf]]
//
// The newest message of a host request is the transient `<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>`
// user message (docs/host-integration.md), so the real prompt is the last user message
// that is not internal context (nor a vision model's tool-result images, which the host sends as
// a user message after the tool messages). The step to run is the number of assistant messages after that
// prompt (each completed tool round adds one), so a turn walks its steps in order and then
// answers with text. Steps:
//   {"read": "file" | {path, offset?, limit?}}        → tool `read`
//   {"exec": "command"}                               → tool `exec` {command}
//   {"plugin": "cachefold_recover", "args": {...}}    → tool `tool_call` {id, args} (Tool Search)
//   {"tool": "name", "args": {...}}                   → any tool, called directly
//   {"reply": "text"}                                 → final text (turn ends)
//   {"check": "NEEDLE"}                               → final text "CHECK NEEDLE: present|absent"
//   {"check": "NEEDLE", "recoverFold": true}          → as above, but when the needle is not in the
//        request and a "[cachefold fold <id>]" record is, first call cachefold_recover on the oldest
//        fold, then answer "CHECK NEEDLE: recovered|absent" from the tool result
//   {"unlessKnown": "NEEDLE", "steps": [STEP, ...]}  → the inner steps run (in place) only when the
//        needle is absent from what the model knew when the turn began: the system prompt and
//        every message before the real prompt (the prompt itself and this turn's own tool results
//        do not count, so the expansion stays the same for every request of the turn). A model
//        that finds the test command in an injected lesson skips its discovery calls:
//          {"unlessKnown": "`npm test`", "steps": [{"read": "package.json"}]}, {"exec": "npm test"}
//        Groups nest; the step index counts expanded steps.
// String args may use placeholders, resolved from the request: "$ARTIFACT" (newest
// `artifact <40 hex>` in a tool result), "$FOLD" (newest cachefold fold id in any message).
// If a placeholder cannot be resolved the model answers text "UNRESOLVED $X" instead of calling.
//
// A "Pre-compaction memory flush" prompt (the host's memory-flush run) gets "NO_REPLY".
// Requests without tools (the host's compaction summary, cachefold's summary via llm.complete)
// get a deterministic summary that keeps every line naming an identifier (OpenClaw's own
// compaction prompt asks to "preserve all opaque identifiers exactly"), so the planted fact
// survives host compaction as it would with a competent model.

import { contentText } from "./tokenize.mjs";

export const INTERNAL_CONTEXT_MARK = "<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>";
const SCRIPT_RE = /\[\[cf (\{[\s\S]*?\}) cf\]\]/;
const ARTIFACT_RE = /artifact[ :=]+([0-9a-f]{40})/g;
// Fold records open with "[cachefold fold <id>]" (src/digest.rs).
const FOLD_RE = /\[cachefold fold ([^\]\s]+)\]/g;
const IDENT_RE = /\b[A-Z][A-Z0-9]{2,}-\d{2,}\b/;

/** Build a script marker for a user message. */
export function scriptMarker(script) {
  return `[[cf ${JSON.stringify(script)} cf]]`;
}

function isInternal(m) {
  return m?.role === "user" && contentText(m.content).includes(INTERNAL_CONTEXT_MARK);
}

// A `tool` message of chat completions holds text only, so the host sends a vision model's
// tool-result images in a user message after the tool messages ("Image(s) from tool result #1
// (read):" and `image_url` parts). It belongs to the tool round, not to the user.
const TOOL_IMAGES_RE = /^Image\(s\) from tool result #\d+/;
function isToolImages(m) {
  const c = m?.role === "user" ? m.content : null;
  return Array.isArray(c) && c.length > 0 && TOOL_IMAGES_RE.test(c[0]?.text ?? "") && c.every((p) => p?.type === "image_url" || (p?.type === "text" && TOOL_IMAGES_RE.test(p.text ?? "")));
}

/** Index of the real prompt (last user message that is neither internal context nor tool-result images), or -1. */
export function realPromptIndex(messages) {
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i]?.role === "user" && !isInternal(messages[i]) && !isToolImages(messages[i])) return i;
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

function firstMatch(re, texts) {
  for (const t of texts) {
    re.lastIndex = 0;
    const m = re.exec(t);
    if (m) return m[1];
  }
  return null;
}

/**
 * Flatten a script's steps for one turn: `{unlessKnown, steps}` groups expand in place when
 * `known(needle)` is false and vanish when it is true (nested groups likewise).
 */
export function expandSteps(steps, known) {
  const out = [];
  for (const s of Array.isArray(steps) ? steps : []) {
    if (s && typeof s === "object" && s.unlessKnown != null) {
      if (!known(String(s.unlessKnown))) out.push(...expandSteps(s.steps, known));
    } else out.push(s);
  }
  return out;
}

/** What the model knew when the turn began: every message before the real prompt (system included). */
export function knownBeforePrompt(messages, pi) {
  const texts = messages.slice(0, Math.max(0, pi)).map((m) => contentText(m?.content));
  return (needle) => texts.some((t) => t.includes(needle));
}

/** Resolve "$ARTIFACT"/"$FOLD"/"$FOLD_FIRST" in a JSON value. Returns {value, unresolved}. */
export function resolvePlaceholders(value, messages) {
  const toolTexts = messages.filter((m) => m?.role === "tool").map((m) => contentText(m.content));
  const allTexts = messages.map((m) => contentText(m.content));
  const table = {
    $ARTIFACT: () => lastMatch(ARTIFACT_RE, toolTexts),
    $FOLD: () => lastMatch(FOLD_RE, allTexts),
    $FOLD_FIRST: () => firstMatch(FOLD_RE, allTexts),
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

// OpenClaw's own "opaque identifier" pattern (compaction-safeguard quality audit, 2026.9.6):
// URLs, paths, host:port, numbers with units, and tokens holding >= 8 hex chars or >= 6 digits.
// A competent summarizer copies these; the host rejects summaries that drop them.
const OPAQUE_ID_RE = /(https?:\/\/\S+|(?<![A-Za-z0-9._-])\/[\w.-]{2,}(?:\/[\w.-]+)+|[A-Za-z]:\\[\w\\.-]+|(?<![A-Za-z0-9._-])[A-Za-z0-9._-]+\.[A-Za-z0-9._/-]+:\d{1,5})|(?<![A-Za-z0-9_-])(?=[A-Za-z0-9_-]*(?:[A-Fa-f0-9]{8,}|\d{6,}))([A-Za-z0-9_-]+)/g;
const SUMMARY_BUDGET = 14_000; // the host asks for <= 16,000 UTF-16 units

function opaqueIdentifiers(text) {
  // newest first, unique
  const all = [];
  for (const m of text.matchAll(OPAQUE_ID_RE)) {
    const v = (m[1] ?? m[2] ?? "").replace(/[.,;:)\]}>"'`]+$/, "");
    if (v.length >= 4) all.push(v);
  }
  const seen = new Set();
  const out = [];
  for (let i = all.length - 1; i >= 0; i--) {
    if (!seen.has(all[i])) {
      seen.add(all[i]);
      out.push(all[i]);
    }
  }
  return out;
}

const stripScript = (t) => t.replace(/\[\[cf [\s\S]*? cf\]\]/g, "").trim();

/**
 * Deterministic summary for tool-less requests (see header): fills every "## Heading" the
 * prompt asks for (OpenClaw's compaction asks for Decisions / Open TODOs / Constraints/Rules /
 * Pending user asks / Exact identifiers, or Original Request / Early Progress / Context for
 * Suffix for a split turn), keeps every line naming an identifier like ABC-123 (the planted
 * fact), foregrounds the latest user ask, and lists the opaque identifiers newest first.
 */
export function summarize(messages) {
  const texts = messages.filter((m) => m?.role !== "system").map((m) => contentText(m.content));
  const all = texts.join("\n");
  const convEnd = all.lastIndexOf("</conversation>");
  const conversation = convEnd >= 0 ? all.slice(0, convEnd) : all;
  const instructions = convEnd >= 0 ? all.slice(convEnd) : "";
  const headings = [...new Set((instructions.match(/^## [^\n]+$/gm) ?? []).map((h) => h.trim()))];
  // User turns as the host renders them ("[User]: ..."), else the raw user messages.
  let userTurns = [...conversation.matchAll(/^\[User\]: ([\s\S]*?)(?=^\[[A-Z][A-Za-z ]*\]:|(?![\s\S]))/gm)].map((m) => stripScript(m[1]));
  if (userTurns.length === 0) userTurns = messages.filter((m) => m?.role === "user").map((m) => stripScript(contentText(m.content)));
  const identLines = [];
  const seen = new Set();
  for (const raw of conversation.split(/\n|(?<=\.)\s+/)) {
    const line = stripScript(raw).replace(/^[-*]\s+/, "").trim();
    if (!line || !IDENT_RE.test(line) || seen.has(line)) continue;
    seen.add(line);
    identLines.push(line.length > 200 ? line.slice(0, 200) : line);
  }
  const latest = (userTurns[userTurns.length - 1] ?? "").replace(/\s+/g, " ").slice(0, 300);
  const latestCtx = /Latest user request context: [^\n]+/.exec(all)?.[0] ?? null;
  const missing = [...instructions.matchAll(/missing_identifiers:([^,)\s]+(?:,[^,)\s:]+)*)/g)].flatMap((m) => m[1].split(","));
  const ids = [...new Set([...missing, ...opaqueIdentifiers(conversation)])];
  const digest = userTurns.slice(-12).map((t) => `- User asked: ${t.replace(/\s+/g, " ").slice(0, 120)}`);
  const facts = identLines.slice(-30).map((l) => `- ${l}`);
  const sections = headings.length ? headings : ["## Summary", "## Exact identifiers"];
  const idHeading = sections.find((h) => /identifier/i.test(h)) ?? sections[sections.length - 1];
  const body = new Map();
  for (const h of sections) {
    if (h === idHeading) continue;
    if (/pending|original request/i.test(h)) body.set(h, [latestCtx ? latestCtx : `- ${latest || "none"}`]);
    else if (/decision|progress|summary/i.test(h)) body.set(h, [...facts, ...digest]);
    else if (/constraint|rule|context/i.test(h)) body.set(h, facts.length ? facts : ["- none"]);
    else body.set(h, ["- none"]);
  }
  let text = sections.filter((h) => h !== idHeading).map((h) => `${h}\n${body.get(h).join("\n")}`).join("\n\n");
  text = text.slice(0, SUMMARY_BUDGET / 2);
  let idText = "";
  for (const id of ids) {
    if (text.length + idText.length + id.length + 4 > SUMMARY_BUDGET) break;
    idText += `- ${id}\n`;
  }
  return `${text}\n\n${idHeading}\n${idText || "- none\n"}`.trim();
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
  // OpenClaw's pre-compaction memory flush (its own agent run with read/write tools only):
  // answer as a model with nothing to store would.
  if (/Pre-compaction memory flush/.test(prompt)) return { kind: "text", text: "NO_REPLY", note: "flush" };
  const script = parseScript(prompt);
  const after = pi >= 0 ? messages.slice(pi + 1) : [];
  const step = after.filter((m) => m?.role === "assistant").length;
  const steps = expandSteps(script?.steps, knownBeforePrompt(messages, pi));
  const finalText = () => `${script?.reply ?? "Done."} (${filler(seed, 40)})`;
  const tool = (name, args) => {
    const r = resolvePlaceholders(args, messages);
    if (r.unresolved) return { kind: "text", text: `UNRESOLVED ${r.unresolved}`, note: "unresolved" };
    return { kind: "tool_calls", calls: [{ id: callId(seed % 10000), name, arguments: JSON.stringify(r.value) }], note: `step${step}:${name}` };
  };
  const prev = step > 0 ? steps[step - 1] : null;
  if (prev?.check != null && prev.recoverFold) {
    // The check step called cachefold_recover on a fold; judge its result.
    const needle = String(prev.check);
    const lastTool = [...after].reverse().find((m) => m?.role === "tool");
    const found = lastTool ? contentText(lastTool.content).includes(needle) : false;
    return { kind: "text", text: `CHECK ${needle}: ${found ? "recovered" : "absent"}`, note: `step${step}:check-recovered` };
  }
  if (!script || step >= steps.length) return { kind: "text", text: finalText(), note: script ? "final" : "default" };
  const s = steps[step] ?? {};
  if (s.reply != null) return { kind: "text", text: String(s.reply), note: `step${step}:reply` };
  if (s.check != null) {
    const needle = String(s.check);
    const present = messages.some((m) => m !== messages[pi] && contentText(m.content).includes(needle));
    if (present) return { kind: "text", text: `CHECK ${needle}: present`, note: `step${step}:check` };
    // Not in context: a model would follow a fold record's pointer and recover the oldest fold.
    if (s.recoverFold && firstMatch(FOLD_RE, messages.map((m) => contentText(m.content)))) {
      return tool("tool_call", { id: "cachefold_recover", args: { id: "$FOLD_FIRST", maxChars: 32000 } });
    }
    return { kind: "text", text: `CHECK ${needle}: absent`, note: `step${step}:check` };
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
