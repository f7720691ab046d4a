// Tool hooks: safe default arguments, and oversized tool results → preview + artifact.
//
// - before_tool_call: fills `toolDefaults` (read: offset/limit, web_fetch: maxChars, ...) where the
//   model gave none. Never overrides an explicit value, never blocks. OpenClaw fails closed when
//   this hook throws or times out, so every path is wrapped and returns undefined on any error.
// - agent tool-result middleware (runtime "openclaw"): shrinks the result before the model sees
//   it. Needs manifest `contracts.agentToolResultMiddleware: ["openclaw"]` and an explicitly
//   enabled plugin (`plugins.entries.cachefold.enabled: true`, or selected in
//   `plugins.slots.contextEngine`).
// - tool_result_persist (synchronous): the same transform for the stored transcript. After the
//   middleware ran, the content already carries our header, so only oversized `details` are
//   compacted here; without the middleware it shrinks the content itself (then the model sees
//   the original in the current turn and the preview from the next turn on: one cache break).
//
// All decisions are made by the Rust core (processToolResult, applyToolDefaults); this file moves
// data and writes artifacts. If the artifact cannot be written, the original result is kept.
import { withArtifactPath, writeArtifact } from "./artifacts.js";
import { scheduleGc } from "./artifacts/gc.js";
import { toolsCore, toolsCoreSync } from "./core.js";
import { cutOversized } from "./oversize.js";

/** The hooks' wasm core for synchronous paths (their own instance, see core.js), or null. */
function syncCore(ctx) {
  return ctx.core ?? toolsCoreSync();
}

async function asyncCore(ctx) {
  return ctx.core ?? toolsCore();
}

/** The first string among `names` (a host may hand over a number or an object), else "". */
function toolNameOf(...names) {
  return names.find((n) => typeof n === "string") ?? "";
}

function warn(ctx, where, err) {
  try {
    ctx.logger?.warn?.(`cachefold: ${where} skipped: ${err?.message ?? err}`);
    ctx.log?.({ event: "hook_error", hook: where, code: err?.code ?? null, message: String(err?.message ?? err) });
  } catch {}
}

function hasDefaultsFor(ctx, toolName) {
  // Routing only: the table's keys come from config, not from message content.
  const table = ctx.config?.toolDefaults;
  if (!table || typeof table !== "object") return true; // unknown config shape: let the core decide
  const lower = toolName.toLowerCase();
  return Object.keys(table).some((k) => k === toolName || k.toLowerCase() === lower);
}

/** before_tool_call handler: `{params}` with defaults added, or undefined. */
export async function beforeToolCall(ctx, event, hookCtx) {
  try {
    const toolName = event?.toolName ?? hookCtx?.toolName;
    if (typeof toolName !== "string" || !toolName || !hasDefaultsFor(ctx, toolName)) return undefined;
    const params = event.params ?? null;
    const core = syncCore(ctx) ?? (await asyncCore(ctx));
    const out = core.applyToolDefaults(ctx.configJson, toolName, JSON.stringify(params));
    if (out == null) return undefined;
    const next = JSON.parse(out);
    const added = Object.keys(next).filter((k) => params == null || params[k] == null);
    ctx.log?.({ event: "tool_defaults", tool: toolName, toolCallId: event.toolCallId ?? hookCtx?.toolCallId ?? null, added });
    return { params: next };
  } catch (err) {
    warn(ctx, "before_tool_call", err);
    return undefined;
  }
}

/**
 * Shared by both rewrite paths: run the core, store the artifact, return the rewritten object
 * (parsed from the core's JSON) or null when nothing changes or storing failed.
 */
function transform(ctx, core, { toolName, payload, compactDetails, path, session, sessionId, callId }) {
  // A huge text is stored and cut here, before it is copied into the core (see oversize.js).
  const big = cutOversized(ctx.stateDir, payload, { tool: toolName || null, callId: callId ?? null, session, sessionId });
  if (big.cuts.length) ctx.log?.({ event: "tool_result_cut", path, tool: toolName || null, toolCallId: callId ?? null, session, cuts: big.cuts });
  payload = big.payload;
  const p = core.processToolResult(ctx.configJson, toolName, JSON.stringify(payload), compactDetails);
  if (!p || p.action === "none" || p.messageJson == null) return null;
  if (p.artifactId) {
    // Store first: a preview without its artifact would lose data.
    const w = writeArtifact(ctx.stateDir, p.artifactId, p.artifactText, {
      tool: p.toolName,
      callId: callId ?? null,
      session,
      sessionId,
      originalChars: p.originalChars,
      shrunkChars: p.shrunkChars,
    });
    if (w.created) {
      scheduleGc(ctx.stateDir, {
        maxBytes: ctx.config?.artifacts?.maxBytes,
        onReport: (r) => (r.evicted.length || r.overBudget || r.staleRefFiles) && ctx.log?.({ event: "artifact_gc", ...r }),
        onError: (err) => warn(ctx, "artifact_gc", err),
      });
    }
  }
  ctx.log?.({
    event: p.action === "shrink" ? "tool_result_shrunk" : "tool_result_details",
    path,
    tool: p.toolName,
    toolCallId: callId ?? null,
    session,
    artifactId: p.artifactId ?? null,
    originalChars: p.originalChars ?? null,
    shrunkChars: p.shrunkChars ?? null,
    detailsCompacted: p.detailsCompacted,
  });
  return withArtifactPath(JSON.parse(p.messageJson), ctx.stateDir, p.artifactId);
}

/** Agent tool-result middleware: `{result}` with shrunk content, or undefined. Never throws
 * (a throwing middleware makes OpenClaw replace the result with an error text). */
export async function toolResultMiddleware(ctx, event, mwCtx) {
  try {
    const result = event?.result;
    if (!result || !Array.isArray(result.content)) return undefined;
    const core = await asyncCore(ctx); // waits for the hooks' own instance when it is being replaced
    const out = transform(ctx, core, {
      toolName: toolNameOf(event.toolName, mwCtx?.toolName),
      // Content only: details never reach the model, and host code reads them after us.
      payload: { content: result.content },
      compactDetails: false,
      path: "middleware",
      session: mwCtx?.sessionKey ?? mwCtx?.sessionId ?? "unknown",
      sessionId: mwCtx?.sessionId,
      callId: event.toolCallId,
    });
    if (!out) return undefined;
    return { result: { ...result, content: out.content } };
  } catch (err) {
    warn(ctx, "tool_result_middleware", err);
    return undefined;
  }
}

/** tool_result_persist handler (synchronous): `{message}` or undefined. */
export function persistToolResult(ctx, event, hookCtx) {
  try {
    const message = event?.message;
    if (!message || typeof message !== "object" || message.role !== "toolResult") return undefined;
    const core = syncCore(ctx);
    if (!core) return undefined;
    const out = transform(ctx, core, {
      toolName: toolNameOf(event.toolName, hookCtx?.toolName, message.toolName),
      payload: message,
      compactDetails: true,
      path: "persist",
      // tool_result_persist's context has sessionKey but no sessionId (OpenClaw 2026.9.6).
      session: hookCtx?.sessionKey ?? "unknown",
      callId: event.toolCallId ?? hookCtx?.toolCallId ?? message.toolCallId,
    });
    return out ? { message: out } : undefined;
  } catch (err) {
    warn(ctx, "tool_result_persist", err);
    return undefined;
  }
}

/** Register the three hooks. `ctx` = {config, configJson, stateDir, logger, log, core?}. */
export function registerHooks(api, ctx) {
  // The hooks' own instance, ready before the first result (tool_result_persist is synchronous).
  if (!ctx.core) toolsCore().catch((err) => warn(ctx, "core load", err));
  // One "fired" line per hook call (the e2e suite proves the hooks run from these).
  const fired = (hook, event, hookCtx, changed) =>
    ctx.log?.({ event: hook, tool: event?.toolName ?? hookCtx?.toolName ?? null, toolCallId: event?.toolCallId ?? hookCtx?.toolCallId ?? null, changed });
  api.on("before_tool_call", async (event, hookCtx) => {
    const out = await beforeToolCall(ctx, event, hookCtx);
    fired("before_tool_call", event, hookCtx, !!out);
    return out;
  });
  api.on("tool_result_persist", (event, hookCtx) => {
    const out = persistToolResult(ctx, event, hookCtx);
    fired("tool_result_persist", event, hookCtx, !!out);
    return out;
  });
  if (ctx.config?.persist?.middleware === false) {
    ctx.logger?.info?.("cachefold: tool-result middleware off (persist.middleware false): shrunk results break the prompt cache once, on the next turn");
  } else if (typeof api.registerAgentToolResultMiddleware === "function") {
    try {
      api.registerAgentToolResultMiddleware(
        async (event, mwCtx) => {
          const out = await toolResultMiddleware(ctx, event, mwCtx);
          fired("tool_result_middleware", event, mwCtx, !!out);
          return out;
        },
        { runtimes: ["openclaw"] },
      );
    } catch (err) {
      warn(ctx, "registerAgentToolResultMiddleware", err);
    }
  } else {
    ctx.logger?.warn?.("cachefold: this OpenClaw has no agent tool-result middleware; tool results are shrunk at persist time only (one prompt-cache break per shrunk result)");
  }
}
