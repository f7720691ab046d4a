// The `/cachefold` chat command: this session's status, `fold`, `recover <id>`.
import { loadCore } from "../core.js";
import { readDecisionLog, sessionEntry, sessionStatus, statusLine } from "./sessions.js";

/** Handler of the `/cachefold` chat command: status | fold | recover <id>. */
export function chatCommand(ctx) {
  return {
    name: "cachefold",
    description: "cachefold: this session's cache status; `/cachefold fold` folds now; `/cachefold recover <id>` shows a stored output",
    acceptsArgs: true,
    requireAuth: true,
    async handler(cmd) {
      try {
        const [action = "", ...rest] = String(cmd?.args ?? "").trim().split(/\s+/).filter(Boolean);
        const sessionId = cmd?.sessionId ? String(cmd.sessionId) : null;
        if (action === "recover") {
          if (!rest[0]) return { text: "usage: /cachefold recover <artifact id | f1 | c1>" };
          const { recoverTool } = await import("../tools.js");
          const res = await recoverTool(ctx, { sessionId, sessionKey: cmd?.sessionKey }).execute("cachefold-command", { id: rest[0] });
          return { text: res.content[0].text };
        }
        if (!sessionId) return { text: "cachefold: no active session here" };
        if (action === "fold") {
          const { requestFold } = await import("../engine/state.js");
          const a = await requestFold(ctx, sessionId);
          return { text: a?.pending ? `cachefold: fold recorded; the next turn sends ~${a.tokensAfter} tokens instead of ~${a.tokensBefore}` : `cachefold: nothing to fold (${a?.reason ?? "no history recorded"})` };
        }
        if (action && action !== "status") return { text: "usage: /cachefold [status | fold | recover <id>]" };
        const core = await loadCore();
        const s = sessionEntry(core, ctx.stateDir, core.sessionDirName(sessionId), sessionId);
        if (!s) return { text: "cachefold: no turns recorded for this session yet" };
        return { text: `cachefold: ${statusLine(await sessionStatus(ctx, s, readDecisionLog(ctx)))}` };
      } catch (err) {
        return { text: `cachefold: ${err?.message ?? err}` };
      }
    },
  };
}
