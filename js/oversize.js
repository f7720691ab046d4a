// Oversized tool text is cut in JS before it crosses into the wasm core: a 100 MB result would
// otherwise be copied into the core's linear memory (which never shrinks: the hooks' instance
// stayed at 380 MB) and shrunk there for seconds on the event loop.
//
// Nothing is lost: the full text is first stored as a content-addressed artifact (the same store
// and id scheme as every shrunk result, referenced by the calling session), then the text the
// core sees keeps its first and last OVERSIZE_KEEP chars around one line that names that
// artifact. The core shrinks the cut text as usual (its preview and artifact follow); recovering
// the core's artifact shows the line, and recovering the id on it gives every original byte.
import { artifactPath, sha1Hex, writeArtifact } from "./artifacts.js";

/** Text longer than this (UTF-16 code units) is cut before the core sees it. */
export const OVERSIZE_CHARS = 4 << 20;
/** Chars kept from each end of a cut text. */
export const OVERSIZE_KEEP = 256 << 10;
const MAX_DEPTH = 4;

/** Cut `text` (longer than OVERSIZE_CHARS) after storing it; returns the cut text. */
function cut(stateDir, text, ref, cuts) {
  const bytes = Buffer.from(text, "utf8"); // once: hashed and written
  const id = sha1Hex(bytes);
  writeArtifact(stateDir, id, bytes, { ...ref, originalChars: text.length, shrunkChars: 2 * OVERSIZE_KEEP });
  // Cut at line ends near the limits when there are any (a preview of whole lines).
  let headEnd = text.lastIndexOf("\n", OVERSIZE_KEEP);
  if (headEnd < OVERSIZE_KEEP / 2) headEnd = OVERSIZE_KEEP;
  else headEnd += 1;
  let tailStart = text.indexOf("\n", text.length - OVERSIZE_KEEP);
  if (tailStart < 0 || tailStart > text.length - OVERSIZE_KEEP / 2) tailStart = text.length - OVERSIZE_KEEP;
  else tailStart += 1;
  const omitted = tailStart - headEnd;
  cuts.push({ id, chars: text.length, omitted });
  const note = `[cachefold] ${omitted.toLocaleString("en")} of ${text.length.toLocaleString("en")} chars cut here before shrinking; every byte is in artifact ${id} (file ${artifactPath(stateDir, id)}): cachefold_recover id ${id}\n`;
  return `${text.slice(0, headEnd)}${headEnd > 0 && text[headEnd - 1] !== "\n" ? "\n" : ""}${note}${text.slice(tailStart)}`;
}

function walk(stateDir, value, ref, cuts, depth) {
  if (typeof value === "string") return value.length > OVERSIZE_CHARS ? cut(stateDir, value, ref, cuts) : value;
  if (!value || typeof value !== "object" || depth > MAX_DEPTH) return value;
  let out = value; // copied on the first cut inside (an array stays an array)
  for (const [k, v] of Object.entries(value)) {
    const next = walk(stateDir, v, ref, cuts, depth + 1);
    if (next !== v) {
      if (out === value) out = Array.isArray(value) ? [...value] : { ...value };
      out[k] = next;
    }
  }
  return out;
}

/**
 * `payload` (a tool result message or `{content}`) with every string over OVERSIZE_CHARS in its
 * text parts and details cut, each one stored first. `ref` = the artifact reference
 * ({tool, callId, session, sessionId}). Returns {payload, cuts: [{id, chars, omitted}]}; the
 * payload is the same object when nothing was cut. Throws when an artifact cannot be stored
 * (the caller then keeps the original result, as for any failed store).
 */
export function cutOversized(stateDir, payload, ref) {
  const cuts = [];
  if (!payload || typeof payload !== "object") return { payload, cuts };
  let out = payload;
  const big = (part) => part?.type === "text" && typeof part.text === "string" && part.text.length > OVERSIZE_CHARS;
  if (Array.isArray(payload.content) && payload.content.some(big)) {
    out = { ...payload, content: payload.content.map((part) => (big(part) ? { ...part, text: cut(stateDir, part.text, ref, cuts) } : part)) };
  }
  if (payload.details !== undefined) {
    const details = walk(stateDir, payload.details, ref, cuts, 0);
    if (details !== payload.details) out = { ...out, details };
  }
  return { payload: out, cuts };
}

/** True when walk() would cut a string in `value` (the same keys: own enumerable; same depths). */
function walkFinds(value, depth) {
  if (typeof value === "string") return value.length > OVERSIZE_CHARS;
  if (!value || typeof value !== "object" || depth > MAX_DEPTH) return false;
  for (const k in value) if (Object.hasOwn(value, k) && walkFinds(value[k], depth + 1)) return true;
  return false;
}

/** True when cutOversized(payload) would cut something; allocates nothing. */
export function hasOversized(payload) {
  if (!payload || typeof payload !== "object") return false;
  const content = payload.content;
  if (Array.isArray(content)) {
    for (let i = 0; i < content.length; i++) {
      const part = content[i];
      if (part?.type === "text" && typeof part.text === "string" && part.text.length > OVERSIZE_CHARS) return true;
    }
  }
  return payload.details !== undefined && walkFinds(payload.details, 0);
}

const cutMessages = new WeakMap(); // host message -> its cut copy (the same bytes every turn)

/**
 * A tool result of the history with every oversized text cut (see cutOversized), for the
 * engine: results that were never shrunk (written before cachefold ran, or with the hooks off)
 * are cut before the core reads them, and the same copy is sent on every turn. `ref` as for
 * cutOversized (the tool and call id come from the message); `onCut(cuts)` is called once per
 * message cut. Any other message is returned as is.
 */
export function cutHistoryMessage(stateDir, message, ref, onCut) {
  if (message?.role !== "toolResult") return message;
  const known = cutMessages.get(message);
  if (known) return known;
  // Called for every tool result of the assembled output on every turn: the check allocates
  // nothing, and only a message with something to cut goes through cutOversized.
  if (!hasOversized(message)) return message;
  const { payload, cuts } = cutOversized(stateDir, message, { ...ref, tool: message.toolName ?? null, callId: message.toolCallId ?? null });
  if (!cuts.length) return message;
  cutMessages.set(message, payload);
  onCut?.(cuts);
  return payload;
}
