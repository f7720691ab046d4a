// Agent tools: cachefold_recover, cachefold_search, cachefold_stats, cachefold_topics,
// cachefold_preview, cachefold_pin.
//
// Each is registered as a factory so it learns the calling session from OpenClaw's tool context
// ({sessionId, sessionKey, ...}). Artifact references are keyed by sessionKey (falling back to
// sessionId): tool_result_persist only knows the sessionKey. Folded history and engine stats are
// keyed by sessionId (js/engine.js). Names must match manifest `contracts.tools`. By default
// OpenClaw keeps plugin tools behind Tool Search, so models reach them with
// `tool_call {"id":"cachefold_recover","args":{...}}`.
//
// Ranges, search and rendering happen in the Rust core; this file finds the texts.
import { loadCore } from "./core.js";
import { readArtifact, readSessionArtifact, sessionArtifactIds, sessionShrinkStats, touchArtifact } from "./artifacts.js";

/** Search reads at most this many bytes of artifacts (newest first) per call. */
export const SEARCH_MAX_BYTES = 32 * 1024 * 1024;
/** ... and at most this many documents. */
export const SEARCH_MAX_DOCS = 200;
export const DEFAULT_MAX_HITS = 20;
export const MAX_MAX_HITS = 50;

async function core(ctx) {
  return ctx.core ?? loadCore();
}

/** Session views (js/engine/state.js); missing functions degrade to null/empty. */
async function engineView(ctx) {
  if (ctx.engine) return ctx.engine;
  try {
    return await import("./engine/state.js");
  } catch {
    return {};
  }
}

function textResult(text, details) {
  return { content: [{ type: "text", text }], details };
}

function sessionOf(toolCtx) {
  return { refKey: toolCtx?.sessionKey ?? toolCtx?.sessionId ?? "unknown", sessionId: toolCtx?.sessionId ?? null };
}

const RANGE = { type: "array", items: { type: "integer", minimum: 0 }, minItems: 2, maxItems: 2 };

/** cachefold_recover */
export function recoverTool(ctx, toolCtx = {}) {
  return {
    name: "cachefold_recover",
    label: "cachefold recover",
    description:
      "Read part of a stored tool output or folded history region. `id` is the artifact id (40 hex) from a '[cachefold] … → artifact <id>' header, a fold id like 'f3' or a condensed id like 'c1' (from a '[cachefold fold …]' record), a turn id like 't12' or a topic id like 'T3' (from a record or cachefold_topics): the exact original messages, one JSON message per line. Give `lines: [start, end]` (1-based, inclusive) or `chars: [start, end)` (0-based); the answer is capped (default 8,000 chars) and says which range to ask for next.",
    parameters: {
      type: "object",
      required: ["id"],
      properties: {
        id: { type: "string", description: "Artifact id (40 lowercase hex), fold id (f1, f2, ...), condensed id (c1, c2, ...), turn id (t1, t2, ...) or topic id (T1, T2, ...)." },
        lines: { ...RANGE, description: "[start, end], 1-based inclusive line numbers." },
        chars: { ...RANGE, description: "[start, end), 0-based char offsets; wins over lines." },
        maxChars: { type: "integer", minimum: 1, maximum: 32000, description: "Cap on returned chars (default 8000)." },
      },
    },
    async execute(_toolCallId, params) {
      const c = await core(ctx);
      const { refKey, sessionId } = sessionOf(toolCtx);
      const target = c.parseRecoverTarget(String(params?.id ?? "")); // throws CACHEFOLD_INVALID_ID
      if (target.kind === "turn" || target.kind === "topic") return recoverTurns(c, ctx, sessionId, target, params);
      let text = null;
      if (target.kind === "artifact") {
        // Only this session's own artifacts: a foreign id answers like an unknown one.
        text = readSessionArtifact(ctx.stateDir, refKey, target.id);
        if (text != null) touchArtifact(ctx.stateDir, target.id, { tool: "cachefold_recover", session: refKey, sessionId }, text);
      } else if (sessionId) {
        const engine = await engineView(ctx);
        // Folds (f<k>) and condensed ranges (c<k>) are both stored by store.writeFold.
        text = (await engine.foldText?.(ctx, sessionId, target.id)) ?? null;
      }
      if (text == null) {
        const why =
          target.kind === "artifact"
            ? "is not in the artifact store (never stored here, or evicted by the size budget)"
            : "is not a folded region of this session";
        return textResult(`[cachefold_recover] ${target.id} ${why}.`, { id: target.id, found: false });
      }
      const ans = c.recoverAnswer(target.id, text, JSON.stringify(params ?? {}));
      ctx.log?.({ event: "tool_recover", id: target.id, kind: target.kind, ...ans.details });
      return textResult(ans.text, { ...ans.details, kind: target.kind, found: true });
    },
  };
}

/**
 * cachefold_recover by turn (t<k>) or topic (T<n>): the core names the stored fold lines that
 * hold those messages (one JSON message per line); this reads them and the core bounds the answer.
 */
async function recoverTurns(c, ctx, sessionId, target, params) {
  const engine = await engineView(ctx);
  if (!sessionId || typeof engine.sessionView !== "function") {
    return textResult(`[cachefold_recover] ${target.id}: no session state to look it up in.`, { id: target.id, found: false });
  }
  const plan = await engine.sessionView(ctx, sessionId, "recoverPlan", target.id); // throws CACHEFOLD_INVALID_ID for an unknown turn/topic
  if (plan == null) return textResult(`[cachefold_recover] ${target.id}: this session has no recorded turns yet.`, { id: target.id, found: false });
  const lines = [];
  const missing = [];
  for (const p of plan.parts ?? []) {
    const text = (await engine.foldText?.(ctx, sessionId, p.fold)) ?? null;
    if (text == null) {
      missing.push(p.fold);
      continue;
    }
    const all = text.split("\n");
    lines.push(...all.slice(p.lines[0] - 1, p.lines[1]));
  }
  let note = plan.note;
  if (missing.length) note += ` Not stored here: ${missing.join(", ")}.`;
  if (!lines.length) {
    ctx.log?.({ event: "tool_recover", id: target.id, kind: target.kind, lines: 0 });
    return textResult(note, { id: target.id, kind: target.kind, found: true, from: plan.from, to: plan.to, inContext: plan.inContext, missing });
  }
  const ans = c.recoverAnswer(target.id, lines.join("\n"), JSON.stringify(params ?? {}));
  ctx.log?.({ event: "tool_recover", id: target.id, kind: target.kind, ...ans.details });
  return textResult(`${note}\n${ans.text}`, { ...ans.details, kind: target.kind, found: true, from: plan.from, to: plan.to, inContext: plan.inContext, missing });
}

/** Documents of one session for search: folded regions first, then artifacts newest first. */
export async function searchDocs(ctx, toolCtx = {}) {
  const { refKey, sessionId } = sessionOf(toolCtx);
  const docs = [];
  let bytes = 0;
  let skipped = 0;
  /** Take a document while the scan limits allow (an artifact is read only then). */
  const add = (id, kind, text) => {
    if (docs.length >= SEARCH_MAX_DOCS) return (skipped += 1);
    if (typeof text === "function") text = text();
    if (text == null) return;
    if (bytes + text.length > SEARCH_MAX_BYTES) return (skipped += 1);
    docs.push({ id, kind, text });
    bytes += text.length;
  };
  const engine = sessionId ? await engineView(ctx) : {};
  const folded = (await engine.foldedDocs?.(ctx, sessionId)) ?? [];
  for (const d of folded) if (typeof d?.text === "string") add(String(d.id), d.kind ?? "fold", d.text);
  for (const id of sessionArtifactIds(ctx.stateDir, refKey)) add(id, "artifact", () => readArtifact(ctx.stateDir, id));
  return { docs, skipped };
}

/** cachefold_search */
export function searchTool(ctx, toolCtx = {}) {
  return {
    name: "cachefold_search",
    label: "cachefold search",
    description:
      "Search this session's stored tool outputs (artifacts) and folded history. Substring match by default (case-insensitive unless the query has uppercase); `regex: true` allows . * + ? [] \\d \\w \\s ^ $ and a|b. Returns ids and line numbers to pass to cachefold_recover.",
    parameters: {
      type: "object",
      required: ["query"],
      properties: {
        query: { type: "string", minLength: 1, maxLength: 1000, description: "Text (or regex) to find." },
        regex: { type: "boolean", description: "Treat query as a regex (small subset). Default false." },
        maxHits: { type: "integer", minimum: 1, maximum: MAX_MAX_HITS, description: `Most hits to return (default ${DEFAULT_MAX_HITS}).` },
      },
    },
    async execute(_toolCallId, params) {
      const c = await core(ctx);
      const query = typeof params?.query === "string" ? params.query : "";
      const n = Number(params?.maxHits);
      const maxHits = Number.isInteger(n) ? Math.min(Math.max(n, 1), MAX_MAX_HITS) : DEFAULT_MAX_HITS;
      const { docs, skipped } = await searchDocs(ctx, toolCtx);
      const ans = c.searchAnswer(JSON.stringify(docs), query, params?.regex === true, maxHits);
      let text = ans.text;
      if (skipped) text += `\n(${skipped} older documents not searched: over the ${SEARCH_MAX_BYTES / 1048576} MiB / ${SEARCH_MAX_DOCS}-document scan limit)`;
      ctx.log?.({ event: "tool_search", hits: ans.hits.length, more: ans.more, docs: docs.length, skipped });
      return textResult(text, { hits: ans.hits.slice(0, MAX_MAX_HITS), more: ans.more, documents: docs.length, skipped });
    },
  };
}

function flatten(obj, prefix, out, depth) {
  for (const [k, v] of Object.entries(obj ?? {})) {
    if (out.length >= 60) return;
    const key = prefix ? `${prefix}.${k}` : k;
    if (v && typeof v === "object" && !Array.isArray(v) && depth < 2) flatten(v, key, out, depth + 1);
    else if (v == null || typeof v !== "object") out.push(`${key}: ${typeof v === "number" && !Number.isInteger(v) ? Number(v.toFixed(4)) : v}`);
    else out.push(`${key}: ${JSON.stringify(v).slice(0, 200)}`);
  }
}

/** Stats text: engine stats (as the core reports them) plus this session's shrink totals. */
export function renderStats(sessionLabel, engineStats, shrink) {
  const lines = [`[cachefold_stats] session ${sessionLabel}`];
  if (engineStats && typeof engineStats === "object") {
    const flat = [];
    flatten(engineStats, "", flat, 0);
    lines.push(...flat);
  } else {
    lines.push("engine: no recorded turns for this session yet");
  }
  lines.push(
    `shrink.resultsShrunk: ${shrink.shrunkResults}`,
    `shrink.artifacts: ${shrink.artifacts}`,
    `shrink.originalChars: ${shrink.originalChars}`,
    `shrink.charsSaved: ${shrink.savedChars}`,
  );
  return lines.join("\n");
}

/** cachefold_stats */
export function statsTool(ctx, toolCtx = {}) {
  return {
    name: "cachefold_stats",
    label: "cachefold stats",
    description:
      "This session's cache numbers: model calls, prompt tokens, cache hit %, predicted vs reported hits, folds, chars saved by shrinking tool output, estimated $ saved.",
    parameters: { type: "object", properties: {} },
    async execute() {
      const { refKey, sessionId } = sessionOf(toolCtx);
      const engineStats = (sessionId && (await (await engineView(ctx)).sessionStats?.(ctx, sessionId))) || null;
      const shrink = sessionShrinkStats(ctx.stateDir, refKey);
      const text = renderStats(sessionId ?? refKey, engineStats, shrink);
      return textResult(text, { sessionId, shrink, engine: engineStats ? true : false });
    },
  };
}

/**
 * A tool answered by the engine's view of the session (`{text, details}`, null before its first
 * turn): `answer(engine, sessionId, params)`; `log` names the tool in the decision log.
 */
function viewTool(ctx, toolCtx, { name, description, parameters = { type: "object", properties: {} }, answer, log = true }) {
  return {
    name,
    label: name.replace("_", " "),
    description,
    parameters,
    async execute(_toolCallId, params) {
      const { sessionId } = sessionOf(toolCtx);
      const ans = sessionId ? ((await answer(await engineView(ctx), sessionId, params)) ?? null) : null;
      if (ans == null) return textResult(`[${name}] No recorded turns for this session yet.`, { sessionId, found: false });
      if (log) ctx.log?.({ event: `tool_${name.slice("cachefold_".length)}` });
      return textResult(ans.text, ans.details);
    },
  };
}

/** A tool answered by one read-only core view of the session (`method` of its Session). */
const sessionViewTool = (name, method, description) => (ctx, toolCtx = {}) =>
  viewTool(ctx, toolCtx, { name, description, answer: (engine, sessionId) => engine.sessionView?.(ctx, sessionId, method) });

export const topicsTool = sessionViewTool(
  "cachefold_topics",
  "topicsView",
  "List this session's topics: id (T1, T2, ...), turn range (t<a>–t<b>), estimated tokens, folded or live, label. Pass a topic or turn id to cachefold_recover for the exact messages, or a turn id to cachefold_pin.",
);

export const previewTool = sessionViewTool(
  "cachefold_preview",
  "preview",
  "Show what the model sees now: the pinned head, each fold record (with its recover id), the live tail kept verbatim, with estimated tokens for each part.",
);

/** cachefold_pin */
export function pinTool(ctx, toolCtx = {}) {
  return viewTool(ctx, toolCtx, {
    name: "cachefold_pin",
    log: false,
    answer: (engine, sessionId, params) => engine.pinTurn?.(ctx, sessionId, String(params?.turn ?? "")), // throws CACHEFOLD_INVALID_ID
    description:
      "Keep one turn (t<k>, from cachefold_topics) verbatim through later folds. Applies from the next fold on, so nothing already sent changes; a turn already folded stays folded (recover it instead).",
    parameters: {
      type: "object",
      required: ["turn"],
      properties: { turn: { type: "string", pattern: "^t[0-9]{1,9}$", description: "Turn id, e.g. t12." } },
    },
  });
}

const FACTORIES = {
  cachefold_recover: recoverTool,
  cachefold_search: searchTool,
  cachefold_stats: statsTool,
  cachefold_topics: topicsTool,
  cachefold_preview: previewTool,
  cachefold_pin: pinTool,
};
export const TOOL_NAMES = Object.keys(FACTORIES);

/** Register the agent tools, one factory each (OpenClaw passes the session in the tool context). */
export function registerTools(api, ctx) {
  for (const [name, factory] of Object.entries(FACTORIES)) api.registerTool((toolCtx) => factory(ctx, toolCtx ?? {}), { name });
}
