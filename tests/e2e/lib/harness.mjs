// Runner library: one isolated OpenClaw installation per engine run, driven through a Gateway.
//
//   const h = await Harness.create({ engine: "cachefold", pluginDir: REPO_ROOT, contextWindow: 48000,
//                                    pluginConfig: { logFile: "<auto>" } });
//   await h.startGateway();
//   const t = await h.turn("s1", "hello");      // one `openclaw agent --json` turn via the Gateway
//   ...; await h.close();                       // stops the Gateway and the fake provider
//
// Isolation: HOME, OPENCLAW_STATE_DIR, OPENCLAW_CONFIG_PATH and TMPDIR all point into a fresh
// temp dir; the model is `fake/deepseek-v4-flash` served by the in-process fake provider on
// 127.0.0.1; the Gateway binds loopback on a free port with token auth. Every child process
// has a timeout; everything started is killed on close, on failure and on process exit.
// The Gateway launcher re-parents the real `openclaw-gateway` process, so it is found (and
// stopped) by scanning /proc for our OPENCLAW_STATE_DIR in its environment
// (docs/host-integration.md).

import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import os from "node:os";
import { locateToolchain, freePort, run, spawnLogged, pidsWithEnv, alive, sleep, onExit, REPO_ROOT } from "./env.mjs";
import { startFakeProvider } from "./fake-provider.mjs";
import { findKey, extractReplyText, turnError } from "./turn-result.mjs";
import { stagePlugin } from "./stage-plugin.mjs";

export { findKey, extractReplyText, turnError, stagePlugin };

export const MODEL_ID = "deepseek-v4-flash";
export const PLUGIN_ID = "cachefold";

/** Default per-command time limits (ms). Slow machine (2 shared cores): generous but bounded. */
/** Reasons with which `sessions compact` skips without failing (nothing new to compact). */
export const BENIGN_COMPACT_SKIP = /already compacted|nothing to (compact|fold)|no compactable/i;

export const TIMEOUTS = { cli: 90_000, install: 180_000, gatewayReady: 120_000, turn: 240_000, stop: 20_000 };

function flattenConfig(obj, prefix = "") {
  // {persist:{enabled:false}} → [["persist.enabled", false]]
  const out = [];
  for (const [k, v] of Object.entries(obj ?? {})) {
    const key = prefix ? `${prefix}.${k}` : k;
    if (v && typeof v === "object" && !Array.isArray(v)) out.push(...flattenConfig(v, key));
    else out.push([key, v]);
  }
  return out;
}

export class Harness {
  /**
   * @param {object} o
   * @param {"legacy"|string} [o.engine]  context-engine slot value ("legacy" installs nothing)
   * @param {string} [o.pluginDir]        plugin checkout to link (default: repo root) when engine != legacy
   * @param {Record<string,unknown>} [o.pluginConfig] values for plugins.entries.<id>.config (nested ok)
   * @param {string} [o.pluginId]
   * @param {number} [o.contextWindow]
   * @param {number} [o.maxTokens]
   * @param {string} [o.baseDir]          where the temp dir goes (default os.tmpdir())
   * @param {boolean} [o.keep]            keep the temp dir after close
   * @param {"strict"|"optimistic"} [o.cacheMode]
   * @param {(s:string)=>void} [o.log]
   * @param {Record<string,unknown>} [o.extraConfig] deep-merged into openclaw.json before start
   * @param {Record<string,string>} [o.files] workspace files to create (name → content)
   * @param {boolean} [o.reasoning]      a thinking model: `reasoning: true` in the model entry and a
   *                                     fake provider that streams reasoning_content and requires it back
   * @param {number} [o.tokenScale]     the fake provider reports this many tokens per estimated token
   * @param {boolean} [o.local]          drive turns with `openclaw agent --local` (no Gateway)
   * @param {boolean} [o.settle]         after each turn, wait for the host's post-turn work (default
   *                                     true; see Harness#settle)
   * @param {boolean} [o.installLater]   configure the slot as legacy now; call installPlugin() later
   * @param {boolean} [o.batchConfig]    set the plugin config with one `config set` of the whole object
   */
  static async create(o = {}) {
    const h = new Harness(o);
    try {
      await h.setup();
    } catch (e) {
      await h.close().catch(() => {});
      throw e;
    }
    return h;
  }

  constructor(o) {
    this.o = o;
    this.engine = o.engine ?? "legacy";
    this.pluginId = o.pluginId ?? PLUGIN_ID;
    this.pluginDir = o.pluginDir ?? REPO_ROOT;
    this.log = o.log ?? (() => {});
    this.tc = locateToolchain();
    this.dir = fs.mkdtempSync(path.join(o.baseDir ?? os.tmpdir(), "cfe2e-"));
    this.home = path.join(this.dir, "home");
    this.state = path.join(this.dir, "state");
    this.work = path.join(this.dir, "work");
    this.tmp = path.join(this.dir, "tmp");
    this.configPath = path.join(this.state, "openclaw.json");
    this.decisionLogPath = path.join(this.dir, "cachefold-decisions.jsonl");
    this.requestsPath = path.join(this.dir, "requests.jsonl");
    this.gatewayLogPath = path.join(this.dir, "gateway.log");
    this.cliLogPath = path.join(this.dir, "cli.log");
    this.fileLogPath = path.join(this.dir, "openclaw-file.log");
    for (const d of [this.home, this.state, this.work, this.tmp]) fs.mkdirSync(d, { recursive: true });
    this.token = `e2e-${Math.random().toString(36).slice(2)}`;
    this.gateway = null;
    this.gatewayPids = [];
    this.turns = [];
    this.cliCalls = [];
    this.unhook = onExit(() => {
      this.killGatewaySync();
      if (!this.o.keep) fs.rmSync(this.dir, { recursive: true, force: true });
    });
  }

  env(extra = {}) {
    const env = {
      PATH: `${this.tc.nodeDir}:${process.env.PATH ?? "/usr/bin:/bin"}`,
      HOME: this.home,
      OPENCLAW_STATE_DIR: this.state,
      OPENCLAW_CONFIG_PATH: this.configPath,
      TMPDIR: this.tmp,
      LANG: process.env.LANG ?? "C.UTF-8",
      TZ: "UTC",
      NO_COLOR: "1",
      FORCE_COLOR: "0",
      CI: "1",
      OPENCLAW_GATEWAY_TOKEN: this.token,
      ...(this.gatewayPort ? { OPENCLAW_GATEWAY_PORT: String(this.gatewayPort) } : {}),
      ...extra,
    };
    return env;
  }

  /** Run `openclaw <args>` (bounded). Throws on failure unless `allowFail`. */
  async oc(args, { timeoutMs = TIMEOUTS.cli, allowFail = false, env } = {}) {
    const r = await run(this.tc.node, [this.tc.openclaw, ...args], { env: this.env(env), cwd: this.work, timeoutMs });
    const entry = { args, code: r.code, ms: r.ms, timedOut: r.timedOut };
    this.cliCalls.push(entry);
    fs.appendFileSync(this.cliLogPath, `\n$ openclaw ${args.join(" ")}\n[exit ${r.code}${r.timedOut ? " TIMEOUT" : ""} ${r.ms} ms]\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}\n`);
    if (!allowFail && (r.code !== 0 || r.timedOut)) {
      throw new Error(`openclaw ${args.join(" ")} failed (exit ${r.code}${r.timedOut ? ", timed out" : ""} after ${r.ms} ms)\n${r.stderr.slice(-3000)}\n${r.stdout.slice(-2000)}\n(logs: ${this.dir})`);
    }
    return r;
  }

  baseConfig() {
    const cw = this.o.contextWindow ?? 128_000;
    const cfg = {
      agents: {
        defaults: {
          model: { primary: `fake/${MODEL_ID}` },
          workspace: this.work,
          heartbeat: { every: "0m" },
        },
      },
      models: {
        mode: "merge",
        providers: {
          fake: {
            baseUrl: this.provider.baseUrl,
            apiKey: "sk-local-e2e",
            api: "openai-completions",
            timeoutSeconds: 120,
            models: [
              {
                id: MODEL_ID,
                name: "Fake DeepSeek V4 Flash",
                reasoning: !!this.o.reasoning,
                input: ["text"],
                cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
                contextWindow: cw,
                maxTokens: this.o.maxTokens ?? 4096,
              },
            ],
          },
        },
      },
      gateway: { port: this.gatewayPort, bind: "loopback", auth: { mode: "token" } },
      // Keep the host's JSONL file log inside the run dir (default is the shared /tmp/openclaw).
      logging: { file: this.fileLogPath },
    };
    return deepMerge(cfg, this.o.extraConfig ?? {});
  }

  async setup() {
    const t0 = Date.now();
    this.provider = await startFakeProvider({ logFile: this.requestsPath, model: MODEL_ID, cacheMode: this.o.cacheMode, thinking: !!this.o.reasoning, tokenScale: this.o.tokenScale });
    this.gatewayPort = await freePort();
    fs.writeFileSync(this.configPath, JSON.stringify(this.baseConfig(), null, 2));
    for (const [name, content] of Object.entries(this.o.files ?? {})) {
      const p = path.join(this.work, name);
      fs.mkdirSync(path.dirname(p), { recursive: true });
      fs.writeFileSync(p, content);
    }
    if (this.engine !== "legacy" && !this.o.installLater) await this.installPlugin();
    await this.configSet("plugins.slots.contextEngine", this.o.installLater ? "legacy" : this.engine);
    this.setupMs = Date.now() - t0;
  }

  /** Install the plugin (pack/stage/link), enable it, apply its config; selects its slot. */
  async installPlugin() {
    {
      // Linking the checkout itself fails when it holds `.cache/openclaw` (OpenClaw's own bundled
      // plugin manifests under it: "package owner has conflicting child rows"), so link a staged
      // copy of exactly the files package.json publishes.
      // Default: the README's route for users, `npm pack` + `plugins install npm-pack:<tgz>`,
      // which also proves the tarball carries everything (pkg/*.wasm included).
      const mode = this.o.install ?? process.env.CACHEFOLD_E2E_INSTALL ?? "pack";
      if (mode === "pack") {
        const packDir = path.join(this.dir, "pack");
        fs.mkdirSync(packDir, { recursive: true });
        const out = execFileSync("npm", ["pack", "--pack-destination", packDir, "--ignore-scripts", "--silent"], { cwd: this.pluginDir, encoding: "utf8", timeout: 60_000 });
        this.installedFrom = path.join(packDir, out.trim().split("\n").pop());
        await this.oc(["plugins", "install", `npm-pack:${this.installedFrom}`, "--force", "--accept-capabilities"], { timeoutMs: TIMEOUTS.install });
      } else if (mode === "link") {
        this.installedFrom = this.pluginDir;
        await this.oc(["plugins", "install", "-l", this.pluginDir, "--force", "--accept-capabilities"], { timeoutMs: TIMEOUTS.install });
      } else {
        this.installedFrom = stagePlugin(this.pluginDir, path.join(this.dir, "plugin"));
        await this.oc(["plugins", "install", "-l", this.installedFrom, "--force", "--accept-capabilities"], { timeoutMs: TIMEOUTS.install });
      }
      this.log(`[${this.engine}] plugins install ${mode === "pack" ? "npm-pack:" : "-l "}${this.installedFrom} (${mode})`);
      // The README's explicit enablement (install already sets it; setting it again must be
      // accepted and keep the tool-result middleware active).
      await this.configSet(`plugins.entries.${this.pluginId}.enabled`, true);
      const pc = { ...(this.o.pluginConfig ?? {}) };
      if (pc.logFile === "<auto>" || pc.logFile === undefined) pc.logFile = this.decisionLogPath;
      if (this.o.batchConfig) await this.configSet(`plugins.entries.${this.pluginId}.config`, pc);
      else for (const [key, value] of flattenConfig(pc)) await this.configSet(`plugins.entries.${this.pluginId}.config.${key}`, value);
      for (const [key, value] of flattenConfig(this.o.pluginHooks ?? {})) await this.configSet(`plugins.entries.${this.pluginId}.hooks.${key}`, value);
    }
  }

  /** Select a context engine (`plugins.slots.contextEngine`); restarts a running Gateway. */
  async setSlot(engine) {
    const wasRunning = !!this.gateway;
    if (wasRunning) await this.stopGateway();
    await this.configSet("plugins.slots.contextEngine", engine);
    this.slot = engine;
    if (wasRunning) await this.startGateway();
  }

  /** Stop and start the Gateway (a user's `openclaw gateway restart`, or a crash and respawn). */
  async restartGateway() {
    await this.stopGateway();
    await this.startGateway();
  }

  /** `openclaw config set <key> <value>`; non-strings go through --strict-json. */
  async configSet(key, value) {
    const args = typeof value === "string" ? ["config", "set", key, value] : ["config", "set", key, JSON.stringify(value), "--strict-json"];
    return this.oc(args);
  }

  /** Read the current openclaw.json (plain JSON after the CLI rewrote it). */
  readConfig() {
    return JSON.parse(fs.readFileSync(this.configPath, "utf8"));
  }

  async startGateway() {
    if (this.gateway) return;
    const t0 = Date.now();
    const args = [this.tc.openclaw, "gateway", "run", "--allow-unconfigured", "--bind", "loopback", "--port", String(this.gatewayPort), "--auth", "token"];
    fs.appendFileSync(this.gatewayLogPath, `\n=== gateway start ${new Date().toISOString()} port ${this.gatewayPort}\n`);
    this.gateway = spawnLogged(this.tc.node, args, { env: this.env(), cwd: this.work, logFile: this.gatewayLogPath });
    const deadline = Date.now() + TIMEOUTS.gatewayReady;
    while (Date.now() < deadline) {
      await sleep(500);
      const text = this.gatewayLog();
      if (/\bready\b/i.test(text.slice(text.lastIndexOf("=== gateway start")))) {
        const ok = await this.probeGateway();
        if (ok) break;
      }
      if (this.gateway.exitCode != null && this.findGatewayPids().length === 0) {
        throw new Error(`gateway exited (code ${this.gateway.exitCode}) before ready; log: ${this.gatewayLogPath}\n${text.slice(-3000)}`);
      }
    }
    if (Date.now() >= deadline) throw new Error(`gateway not ready after ${TIMEOUTS.gatewayReady} ms; log: ${this.gatewayLogPath}\n${this.gatewayLog().slice(-3000)}`);
    this.gatewayPids = this.findGatewayPids().map((p) => p.pid);
    this.gatewayReadyMs = Date.now() - t0;
    this.log(`[${this.engine}] gateway ready in ${this.gatewayReadyMs} ms (pids ${this.gatewayPids.join(",")})`);
  }

  probeGateway() {
    return fetch(`http://127.0.0.1:${this.gatewayPort}/`, { signal: AbortSignal.timeout(3000) })
      .then(() => true)
      .catch(() => false);
  }

  /** Every process running with our state dir (the launcher and the re-parented openclaw-gateway). */
  findGatewayPids() {
    return pidsWithEnv("OPENCLAW_STATE_DIR", this.state).filter((p) => p.pid !== process.pid);
  }

  async stopGateway() {
    const pids = new Set([...this.gatewayPids, ...this.findGatewayPids().map((p) => p.pid)]);
    if (this.gateway?.pid) pids.add(this.gateway.pid);
    for (const pid of pids) {
      try {
        process.kill(pid, "SIGTERM");
      } catch {}
    }
    const deadline = Date.now() + TIMEOUTS.stop;
    while (Date.now() < deadline && [...pids].some(alive)) await sleep(200);
    for (const pid of pids) {
      if (alive(pid)) {
        try {
          process.kill(pid, "SIGKILL");
        } catch {}
      }
    }
    this.gateway = null;
    this.gatewayPids = [];
  }

  killGatewaySync() {
    for (const p of this.findGatewayPids()) {
      try {
        process.kill(p.pid, "SIGKILL");
      } catch {}
    }
  }

  /**
   * One user turn through the Gateway. Returns {ok, ms, code, json, text, stderr, requests}
   * where `requests` are the provider requests recorded during the turn.
   */
  async turn(session, message, { timeoutMs = TIMEOUTS.turn } = {}) {
    if (!this.gateway && !this.o.local) await this.startGateway();
    const before = this.provider.requests.length;
    const startedAt = Date.now();
    const local = this.o.local ? ["--local"] : [];
    const r = await this.oc(["agent", ...local, "--agent", "main", "--session-key", `agent:main:${session}`, "--message", message, "--json", "--timeout", String(Math.ceil(timeoutMs / 1000) - 10)], {
      timeoutMs,
      allowFail: true,
    });
    let json = null;
    try {
      json = JSON.parse(r.stdout);
    } catch {
      const i = r.stdout.indexOf("{");
      if (i >= 0) {
        try {
          json = JSON.parse(r.stdout.slice(i));
        } catch {}
      }
    }
    const text = extractReplyText(json);
    const error = turnError({ code: r.code, timedOut: r.timedOut, json, text, stdout: r.stdout, stderr: r.stderr });
    const t = {
      session,
      index: this.turns.length,
      ok: error == null,
      error,
      code: r.code,
      timedOut: r.timedOut,
      ms: r.ms,
      startedAt,
      endedAt: Date.now(),
      sessionId: findKey(json, "sessionId"),
      json,
      text: text ?? r.stdout.trim(),
      stderr: r.stderr,
      requests: this.provider.requests.slice(before),
    };
    this.turns.push(t);
    if (this.o.settle !== false && !this.o.local) t.settled = await this.settle();
    const after = t.settled?.requests ? `, then ${t.settled.requests} after it (${t.settled.ms} ms)` : "";
    this.log(`[${this.engine}] turn ${t.index} ${t.ok ? "ok" : `FAILED: ${error.slice(0, 300)}`} ${r.ms} ms, ${t.requests.length} requests${after}`);
    return t;
  }

  /**
   * Wait until the Gateway's work after a reply has run. OpenClaw starts its optional
   * maintenance (the pre-compaction memory flush, then the compaction) once the reply is
   * delivered, and a new message cancels it: a script that sends the next message at once
   * races it, so whether the host flushed and compacted depended on machine speed (legacy's
   * cost moved by a fifth between runs). A user reading the reply gives that work its time;
   * so does this: it returns once neither the provider nor the plugin's decision log has moved
   * for `quietMs`, or for `workQuietMs` when some request came after the reply (a flush is
   * followed by its compaction seconds later), and at the latest after `maxMs`.
   * The requests it saw belong to no turn (`turn.requests` stays the turn's own).
   */
  async settle({ quietMs = 1000, workQuietMs = 6000, maxMs = 45_000 } = {}) {
    const t0 = Date.now();
    const start = this.provider.requests.length;
    const logSize = () => {
      try {
        return fs.statSync(this.decisionLogPath).size;
      } catch {
        return 0;
      }
    };
    let sig = `${start}/${logSize()}`;
    let since = t0;
    while (Date.now() - t0 < maxMs) {
      await sleep(100);
      const now = `${this.provider.requests.length}/${logSize()}`;
      if (now !== sig) {
        sig = now;
        since = Date.now();
      }
      const need = this.provider.requests.length > start ? workQuietMs : quietMs;
      if (Date.now() - since >= need) break;
    }
    return { requests: this.provider.requests.length - start, ms: Date.now() - t0 };
  }

  /**
   * The user's /compact for a session. `openclaw agent --message "/compact"` is refused by the CLI
   * ("Slash commands cannot be executed via --message from the CLI. Use: openclaw sessions
   * compact <key>"), so this drives the same Gateway RPC (`sessions.compact`) the slash command
   * does. Recorded as a turn; fails on a non-zero exit (the CLI's "failed compaction").
   */
  async compactSession(session, { timeoutMs = TIMEOUTS.turn } = {}) {
    if (!this.gateway) await this.startGateway();
    const before = this.provider.requests.length;
    const startedAt = Date.now();
    const r = await this.oc(["sessions", "compact", `agent:main:${session}`, "--json"], { timeoutMs, allowFail: true });
    let json = null;
    try {
      json = JSON.parse(r.stdout.slice(Math.max(0, r.stdout.indexOf("{"))));
    } catch {}
    const tail = (r.stderr || r.stdout).trim().split("\n").slice(-3).join(" | ");
    // "Already compacted" / nothing to compact is the host's benign skip (the CLI still exits 1).
    const benign = json && json.compacted === false && BENIGN_COMPACT_SKIP.test(String(json.reason ?? ""));
    const error = r.timedOut ? `timed out: ${tail}` : benign ? null : r.code !== 0 ? `sessions compact exit ${r.code}: ${tail}` : json?.ok === false ? `sessions compact: ${JSON.stringify(json).slice(0, 300)}` : null;
    const t = { session, index: this.turns.length, ok: error == null, error, code: r.code, timedOut: r.timedOut, ms: r.ms, startedAt, endedAt: Date.now(), sessionId: null, json, text: JSON.stringify(json ?? r.stdout.trim()).slice(0, 2000), stderr: r.stderr, requests: this.provider.requests.slice(before) };
    this.turns.push(t);
    this.log(`[${this.engine}] turn ${t.index} /compact ${t.ok ? "ok" : `FAILED: ${error.slice(0, 300)}`} ${r.ms} ms, ${t.requests.length} requests`);
    return t;
  }

  gatewayLog() {
    try {
      return fs.readFileSync(this.gatewayLogPath, "utf8");
    } catch {
      return "";
    }
  }

  /** Gateway stdout/stderr plus the host's own file logs under $TMPDIR/openclaw and state/logs. */
  allLogs() {
    let s = this.gatewayLog();
    try {
      s += `\n=== ${this.fileLogPath}\n` + fs.readFileSync(this.fileLogPath, "utf8");
    } catch {}
    for (const d of [path.join(this.tmp, "openclaw"), path.join(this.state, "logs")]) {
      let names = [];
      try {
        names = fs.readdirSync(d);
      } catch {}
      for (const n of names.sort()) {
        if (!/\.(log|jsonl)$/.test(n) || n === "cache-trace.jsonl") continue;
        try {
          s += `\n=== ${path.join(d, n)}\n` + fs.readFileSync(path.join(d, n), "utf8");
        } catch {}
      }
    }
    return s;
  }

  /** Parsed decision-log events (JSON lines written by the plugin when config logFile is set). */
  decisionEvents() {
    let text = "";
    try {
      text = fs.readFileSync(this.decisionLogPath, "utf8");
    } catch {
      return [];
    }
    const out = [];
    for (const line of text.split("\n")) {
      if (!line.trim()) continue;
      try {
        out.push(JSON.parse(line));
      } catch {
        out.push({ event: "<unparsable>", line });
      }
    }
    return out;
  }

  /** The persisted transcript of a session (OpenClaw's SQLite store), oldest event first. */
  async transcript(sessionId) {
    const db = path.join(this.state, "agents", "main", "agent", "openclaw-agent.sqlite");
    const script = path.join(path.dirname(new URL(import.meta.url).pathname), "read-transcript.mjs");
    const r = await run(this.tc.node, [script, db, ...(sessionId ? [sessionId] : [])], { timeoutMs: 60_000 });
    if (r.code !== 0) throw new Error(`reading the transcript failed: ${r.stderr.slice(-2000)}`);
    return JSON.parse(r.stdout);
  }

  artifactsDir() {
    return path.join(this.state, "cachefold", "artifacts");
  }

  async close({ keep = this.o.keep } = {}) {
    try {
      await this.stopGateway();
    } catch {}
    try {
      await this.provider?.close();
    } catch {}
    this.unhook?.();
    if (!keep) fs.rmSync(this.dir, { recursive: true, force: true });
  }
}

export function deepMerge(a, b) {
  if (!b || typeof b !== "object" || Array.isArray(b)) return b === undefined ? a : b;
  const out = { ...(a ?? {}) };
  for (const [k, v] of Object.entries(b)) out[k] = v && typeof v === "object" && !Array.isArray(v) ? deepMerge(out[k], v) : v;
  return out;
}
