// One WebSocket connection to a running OpenClaw Gateway, as a chat UI holds it: requests
// (`chat.send`, `chat.history`, `sessions.reset`, ...) and the event stream (`chat`, `agent`).
//
// The connection is OpenClaw's own client (`GatewayClient` from the package's public
// `openclaw/plugin-sdk/gateway-runtime` subpath, Node 24), loaded from the pinned install the
// harness runs, so the handshake, auth and framing are the host's and not a copy of them.
//
//   const gw = await GatewayConnection.open({ openclawEntry, port, token, env, step: "connect" });
//   const run = gw.watchRun(runId);                 // before sending: events may come first
//   await gw.request("chat.send", { sessionKey, message, idempotencyKey: runId });
//   const end = await progress.wait(run.done, "turn 3 (s1)");   // {state, message, ...}
//   gw.close();

import path from "node:path";
import { pathToFileURL } from "node:url";

/** Terminal `chat` event states of a run. */
export const FINAL_STATES = new Set(["final", "error", "aborted"]);

let clientModule = null;
async function loadClient(openclawEntry) {
  if (!clientModule) {
    const file = path.join(path.dirname(openclawEntry), "dist", "plugin-sdk", "gateway-runtime.js");
    clientModule = await import(pathToFileURL(file).href);
    if (typeof clientModule.GatewayClient !== "function") throw new Error(`${file} exports no GatewayClient (OpenClaw version?)`);
  }
  return clientModule;
}

export class GatewayConnection {
  /**
   * @param {{openclawEntry: string, port: number, token: string, env: object, progress: import("./progress.mjs").Progress, log?: (s: string) => void}} o
   */
  static async open(o) {
    const { GatewayClient } = await loadClient(o.openclawEntry);
    const conn = new GatewayConnection(o);
    let settle;
    const hello = new Promise((resolve, reject) => (settle = { resolve, reject }));
    conn.client = new GatewayClient({
      url: `ws://127.0.0.1:${o.port}`,
      token: o.token,
      env: o.env,
      clientName: "cli",
      mode: "cli",
      role: "operator",
      scopes: ["operator.read", "operator.write", "operator.admin"],
      onHelloOk: (h) => settle.resolve(h),
      onConnectError: (e) => settle.reject(new Error(`Gateway connect on port ${o.port} failed: ${e?.message ?? e}`)),
      onEvent: (e) => conn.onEvent(e),
      onClose: (code, reason) => {
        conn.closed = { code, reason: String(reason ?? "") };
        for (const r of conn.runs.values()) r.fail?.(new Error(`Gateway connection closed (${code} ${reason}) while run ${r.runId} was open`));
      },
    });
    conn.client.start();
    try {
      conn.hello = await o.progress.wait(hello, `Gateway WebSocket handshake (port ${o.port})`);
    } catch (e) {
      conn.close();
      throw e;
    }
    return conn;
  }

  constructor(o) {
    this.o = o;
    this.client = null;
    this.closed = null;
    this.events = 0;
    this.lastEvent = "";
    /** runId → {runId, events, sessionId, done, fail} */
    this.runs = new Map();
    this.listeners = new Set();
  }

  onEvent(e) {
    this.events++;
    this.o.progress?.tick();
    const p = e.payload ?? {};
    if (e.event !== "tick" && e.event !== "health") this.lastEvent = `${e.event}${p.state ? ` ${p.state}` : ""}${p.stream ? ` ${p.stream}` : ""}${p.phase ? ` ${p.phase}` : p.data?.phase ? ` ${p.data.phase}` : ""}`;
    if (e.event === "health") this.health = p;
    for (const fn of this.listeners) fn(e);
    const run = p.runId ? this.runs.get(p.runId) : null;
    if (!run) return;
    run.events.push(e);
    if (p.sessionId && !run.sessionId) run.sessionId = p.sessionId;
    if (e.event === "chat" && FINAL_STATES.has(p.state)) run.finish(p);
  }

  /**
   * Start collecting the events of `runId` (call before the request that starts it). `done`
   * resolves with the run's terminal `chat` payload ({state: "final"|"error"|"aborted", message,
   * errorMessage, ...}).
   */
  watchRun(runId) {
    const run = { runId, events: [], sessionId: null };
    run.done = new Promise((resolve, reject) => {
      run.finish = (p) => {
        this.runs.delete(runId);
        resolve(p);
      };
      run.fail = (e) => {
        this.runs.delete(runId);
        reject(e);
      };
    });
    run.done.catch(() => {});
    this.runs.set(runId, run);
    return run;
  }

  /** One RPC; fails with the step's name when the Gateway stops answering (see Progress). */
  async request(method, params, step = method) {
    if (this.closed) throw new Error(`${step}: the Gateway connection is closed (${this.closed.code} ${this.closed.reason})`);
    return this.o.progress.wait(this.client.request(method, params, { timeoutMs: null }), `${step} (${method})`);
  }

  close() {
    try {
      this.client?.stop();
    } catch {}
    for (const r of this.runs.values()) r.fail(new Error(`connection closed with run ${r.runId} open`));
  }
}

/** Reply text of a `chat` message ({content: string | [{type:"text", text}]}). */
export function chatText(message) {
  if (!message) return "";
  if (typeof message.content === "string") return message.content;
  return (message.content ?? []).map((p) => (typeof p?.text === "string" ? p.text : "")).join("");
}
