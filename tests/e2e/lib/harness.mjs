// Runner library: one isolated OpenClaw installation per engine configuration, driven through a
// Gateway over one WebSocket connection, as a chat UI drives it.
//
//   const h = await Harness.create({ engine: "cachefold", pluginDir: REPO_ROOT, contextWindow: 48000,
//                                    pluginConfig: { logFile: "<auto>" } });
//   await h.startGateway();                     // `openclaw gateway run`, then one WebSocket
//   const t = await h.turn("s1", "hello");      // `chat.send`, the run's events, the host's post-turn work
//   const c = await h.command("s1", "/compact");// a slash command through the same chat surface
//   ...; await h.close();                       // stops the Gateway and the fake provider
//
// Isolation: HOME, OPENCLAW_STATE_DIR, OPENCLAW_CONFIG_PATH and TMPDIR all point into a fresh
// temp dir; the model is `fake/deepseek-v4-flash` served by the in-process fake provider on
// 127.0.0.1; the Gateway binds loopback on a free port with token auth. The config is written as
// JSON (plugin entry, slot, plugin config) instead of one `openclaw config set` process per key;
// the plugin is installed once per run (lib/install-once.mjs) and copied in. Every wait is bounded
// by progress (lib/progress.mjs): a step fails, naming itself, when nothing moved for a while.
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
import { GatewayConnection, chatText } from "./gateway.mjs";
import { Progress } from "./progress.mjs";
import { HostLogTail } from "./host-log.mjs";
import { pluginTemplate, adoptTemplate, npmPack } from "./install-once.mjs";

export { findKey, extractReplyText, turnError, stagePlugin };

export const MODEL_ID = "deepseek-v4-flash";
export const PLUGIN_ID = "cachefold";

/** Default per-command time limits (ms). Slow machine (2 shared cores): generous but bounded. */
/** Reasons with which `sessions compact` skips without failing (nothing new to compact). */
export const BENIGN_COMPACT_SKIP = /already compacted|nothing to (compact|fold)|no compactable/i;

/**
 * Hard limits for CLI child processes (they print nothing until done, so there is no progress to
 * watch): generous, and the error names the command. Gateway steps are bounded by progress.
 */
export const TIMEOUTS = { cli: 300_000, install: 600_000, turn: 600_000, stop: 20_000 };

/** Environment a child needs to reach a package registry through this machine's TLS/proxy setup. */
const PASS_ENV = ["NODE_EXTRA_CA_CERTS", "SSL_CERT_FILE", "SSL_CERT_DIR", "HTTPS_PROXY", "HTTP_PROXY", "NO_PROXY", "https_proxy", "http_proxy", "no_proxy"];
export function passEnv() {
  return Object.fromEntries(PASS_ENV.filter((k) => process.env[k] != null).map((k) => [k, process.env[k]]));
}

/** The isolated environment of an OpenClaw state (HOME, state, config and TMPDIR inside it). */
export function isolatedEnv(tc, { home, state, configPath, tmp }, extra = {}) {
  return {
    PATH: `${tc.nodeDir}:${process.env.PATH ?? "/usr/bin:/bin"}`,
    HOME: home,
    OPENCLAW_STATE_DIR: state,
    OPENCLAW_CONFIG_PATH: configPath,
    TMPDIR: tmp,
    LANG: process.env.LANG ?? "C.UTF-8",
    TZ: "UTC",
    NO_COLOR: "1",
    FORCE_COLOR: "0",
    CI: "1",
    ...passEnv(),
    ...extra,
  };
}

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
   * @param {Record<string,string|Buffer>} [o.files] workspace files to create (name → content)
   * @param {boolean} [o.reasoning]      a thinking model: `reasoning: true` in the model entry and a
   *                                     fake provider that streams reasoning_content and requires it back
   * @param {number} [o.tokenScale]     the fake provider reports this many tokens per estimated token
   * @param {string[]} [o.input]         the model's input modalities (default ["text"]; ["text", "image"]:
   *                                     a vision model, whose `read` of an image returns the image)
   * @param {boolean} [o.local]          drive turns with `openclaw agent --local` (no Gateway)
   * @param {boolean} [o.settle]         after each turn, wait for the host's post-turn work (default
   *                                     true; see Harness#settle)
   * @param {boolean} [o.installLater]   configure the slot as legacy now; call installPlugin() later
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
    this.ws = null;
    this.hostLog = new HostLogTail(this.fileLogPath);
    this.progress = new Progress({
      files: () => [this.gatewayLogPath, this.fileLogPath, this.decisionLogPath],
      counters: () => [this.provider?.requests.length ?? 0],
      describe: () => `provider requests ${this.provider?.requests.length ?? 0}, last Gateway event "${this.ws?.lastEvent ?? "-"}", run dir ${this.dir}`,
    });
    this.unhook = onExit(() => {
      this.killGatewaySync();
      if (!this.o.keep) fs.rmSync(this.dir, { recursive: true, force: true });
    });
  }

  env(extra = {}) {
    return isolatedEnv(this.tc, this, {
      OPENCLAW_GATEWAY_TOKEN: this.token,
      ...(this.gatewayPort ? { OPENCLAW_GATEWAY_PORT: String(this.gatewayPort) } : {}),
      ...extra,
    });
  }

  /** Run `openclaw <args>` (bounded). Throws on failure unless `allowFail`. */
  async oc(args, { timeoutMs = TIMEOUTS.cli, allowFail = false, env } = {}) {
    const r = await run(this.tc.node, [this.tc.openclaw, ...args], { env: this.env(env), cwd: this.work, timeoutMs });
    const entry = { args, code: r.code, ms: r.ms, timedOut: r.timedOut };
    this.cliCalls.push(entry);
    this.log(`[${this.engine}] openclaw ${args.slice(0, 3).join(" ")}: exit ${r.code}${r.timedOut ? " (timed out)" : ""}, ${r.ms} ms`);
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
                input: this.o.input ?? ["text"],
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
      // debug: the host's session-maintenance lifecycle records (lib/host-log.mjs) are debug lines.
      logging: { file: this.fileLogPath, level: "debug" },
      plugins: { slots: { contextEngine: this.o.installLater ? "legacy" : this.engine } },
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
    this.setupMs = Date.now() - t0;
  }

  /**
   * Install the plugin and write its entry (enabled, config, hooks) into openclaw.json; selects
   * its slot. Modes (`o.install`, CACHEFOLD_E2E_INSTALL): `pack` (default) copies the run's one
   * `plugins install npm-pack:<tgz>` (lib/install-once.mjs: the README's route, which also proves
   * the tarball carries pkg/*.wasm); `pack-fresh` runs that install for this harness alone;
   * `stage` runs `plugins install -l` on a staged copy of the files package.json publishes
   * (linking the checkout itself fails once it holds `.cache/openclaw`: OpenClaw finds its own
   * bundled plugin manifests there); `link` links the checkout.
   */
  async installPlugin() {
    const mode = this.o.install ?? process.env.CACHEFOLD_E2E_INSTALL ?? "pack";
    const t0 = Date.now();
    if (mode === "pack") {
      const tpl = await pluginTemplate({ pluginDir: this.pluginDir, tc: this.tc, baseEnv: (dirs) => isolatedEnv(this.tc, dirs), log: this.log });
      this.installedFrom = tpl.tarball;
      this.installedRoot = await adoptTemplate(tpl, this.state);
      this.log(`[${this.engine}] plugin copied from the run's npm-pack install ${tpl.hash} (${tpl.built ? "built now" : "reused"}, ${Date.now() - t0} ms)`);
    } else {
      if (mode === "pack-fresh") {
        this.installedFrom = npmPack(this.pluginDir, path.join(this.dir, "pack"));
        await this.oc(["plugins", "install", `npm-pack:${this.installedFrom}`, "--force", "--accept-capabilities"], { timeoutMs: TIMEOUTS.install });
      } else if (mode === "link") {
        this.installedFrom = this.pluginDir;
        await this.oc(["plugins", "install", "-l", this.pluginDir, "--force", "--accept-capabilities"], { timeoutMs: TIMEOUTS.install });
      } else if (mode === "stage") {
        this.installedFrom = stagePlugin(this.pluginDir, path.join(this.dir, "plugin"));
        // A linked plugin runs with its own node_modules (a developer's checkout after `npm ci`):
        // the staged copy gets the checkout's production dependencies (copied: OpenClaw's install
        // scan refuses a node_modules symlink that leaves the plugin's root).
        for (const name of productionDeps(this.pluginDir)) fs.cpSync(path.join(this.pluginDir, "node_modules", name), path.join(this.installedFrom, "node_modules", name), { recursive: true });
        await this.oc(["plugins", "install", "-l", this.installedFrom, "--force", "--accept-capabilities"], { timeoutMs: TIMEOUTS.install });
      } else throw new Error(`unknown install mode ${mode} (pack|pack-fresh|stage|link)`);
      this.log(`[${this.engine}] plugins install ${mode} ${this.installedFrom} (${Date.now() - t0} ms)`);
    }
    const pc = { ...(this.o.pluginConfig ?? {}) };
    if (pc.logFile === "<auto>" || pc.logFile === undefined) pc.logFile = this.decisionLogPath;
    this.patchConfig((c) => {
      c.plugins ??= {};
      c.plugins.entries ??= {};
      c.plugins.entries[this.pluginId] = deepMerge(c.plugins.entries[this.pluginId], { enabled: true, config: pc, ...(this.o.pluginHooks ? { hooks: this.o.pluginHooks } : {}) });
      c.plugins.slots = { ...(c.plugins.slots ?? {}), contextEngine: this.engine };
    });
  }

  /** Read openclaw.json, let `fn` change it, write it back (what `openclaw config set` would do). */
  patchConfig(fn) {
    const c = this.readConfig();
    fn(c);
    fs.writeFileSync(this.configPath, JSON.stringify(c, null, 2));
  }

  /** Select a context engine (`plugins.slots.contextEngine`); restarts a running Gateway. */
  async setSlot(engine) {
    const wasRunning = !!this.gateway;
    if (wasRunning) await this.stopGateway();
    this.patchConfig((c) => {
      c.plugins ??= {};
      c.plugins.slots = { ...(c.plugins.slots ?? {}), contextEngine: engine };
    });
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

  /**
   * Start the Gateway and open the WebSocket. Ready = its log says "ready" and the HTTP port
   * answers; the wait fails when the log stops growing (progress), or the process exits. With a
   * cachefold slot, the Gateway must report the plugin loaded (its `health` event).
   */
  async startGateway() {
    if (this.gateway) return;
    const t0 = Date.now();
    const args = [this.tc.openclaw, "gateway", "run", "--allow-unconfigured", "--bind", "loopback", "--port", String(this.gatewayPort), "--auth", "token"];
    fs.appendFileSync(this.gatewayLogPath, `\n=== gateway start ${new Date().toISOString()} port ${this.gatewayPort}\n`);
    this.gateway = spawnLogged(this.tc.node, args, { env: this.env(), cwd: this.work, logFile: this.gatewayLogPath });
    // The poll ends with the wait: left running after a failed start, it kept the test process
    // alive (a Gateway that refused its config failed the test in seconds, then hung the run).
    let waiting = true;
    const ready = (async () => {
      while (waiting) {
        await sleep(250);
        const text = this.gatewayLog();
        if (/\bready\b/i.test(text.slice(text.lastIndexOf("=== gateway start"))) && (await this.probeGateway())) return;
      }
    })();
    const check = () => {
      if (this.gateway?.exitCode != null && this.findGatewayPids().length === 0) throw new Error(`gateway exited (code ${this.gateway.exitCode}) before ready; log: ${this.gatewayLogPath}\n${this.gatewayLog().slice(-3000)}`);
    };
    try {
      await this.progress.wait(ready, `[${this.engine}] Gateway start (port ${this.gatewayPort})`, { check });
      this.ws = await GatewayConnection.open({ openclawEntry: this.tc.openclaw, port: this.gatewayPort, token: this.token, env: this.env(), progress: this.progress, log: this.log });
      const slot = this.readConfig().plugins?.slots?.contextEngine ?? "legacy";
      if (slot !== "legacy") {
        const health = await this.ws.request("health", {}, `[${this.engine}] Gateway health`);
        const loaded = health?.plugins?.loaded ?? [];
        if (!loaded.includes(slot)) throw new Error(`the Gateway did not load plugin ${slot}: loaded ${loaded.join(", ")}; errors ${JSON.stringify(health?.plugins?.errors ?? null).slice(0, 1500)}`);
      }
    } catch (e) {
      e.message += `\n(gateway log tail:\n${this.gatewayLog().slice(-2000)})`;
      throw e;
    } finally {
      waiting = false;
    }
    this.gatewayPids = this.findGatewayPids().map((p) => p.pid);
    this.gatewayReadyMs = Date.now() - t0;
    this.gatewayStarts = (this.gatewayStarts ?? 0) + 1;
    this.log(`[${this.engine}] gateway ready in ${this.gatewayReadyMs} ms (pids ${this.gatewayPids.join(",")})`);
  }

  /** One Gateway RPC over the connection (e.g. `sessions.reset`, `chat.history`). */
  async request(method, params, step) {
    await this.connected();
    return this.ws.request(method, params, step ?? `[${this.engine}] ${method}`);
  }

  /**
   * A running Gateway with an open connection. The Gateway restarts itself after some config
   * changes (`openclaw plugins enable|disable` rewrites the config it watches), which closes the
   * connection; a user's client connects again, and so does this one, while the Gateway's
   * processes are alive (a Gateway that exited is an error of the step that needs it).
   */
  async connected() {
    if (!this.ws) return this.startGateway();
    if (!this.ws.closed) return;
    const was = this.ws.closed;
    const t0 = Date.now();
    let last = null;
    while (Date.now() - t0 < 120_000) {
      if (this.findGatewayPids().length === 0) break;
      try {
        if (await this.probeGateway()) {
          this.ws = await GatewayConnection.open({ openclawEntry: this.tc.openclaw, port: this.gatewayPort, token: this.token, env: this.env(), progress: this.progress, log: this.log });
          this.log(`[${this.engine}] the Gateway closed the connection (${was.code} ${was.reason}); connected again in ${Date.now() - t0} ms`);
          return;
        }
      } catch (e) {
        last = e;
      }
      await new Promise((r) => setTimeout(r, 500));
    }
    throw new Error(`the Gateway closed the connection (${was.code} ${was.reason}) and could not be reached again${last ? `: ${last.message}` : ""}`);
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
    this.ws?.close();
    this.ws = null;
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
   * One user turn through the Gateway's chat surface (`chat.send` on the WebSocket, the run's
   * `chat`/`agent` events until its terminal `chat` event), then the host's post-turn work
   * (`settle`). Returns {ok, error, ms, text, sessionId, requests, settled, ...} where `requests`
   * are the provider requests recorded during the turn. `o.local` cells run
   * `openclaw agent --local` instead (no Gateway).
   */
  async turn(session, message) {
    if (this.o.local) return this.turnLocal(session, message);
    const t = await this.chat(session, message, { kind: "turn" });
    if (this.o.settle !== false) t.settled = await this.settle(t);
    const after = t.settled ? `; post-turn work ${t.settled.phases}, ${t.settled.requests} requests, ${t.settled.ms} ms` : "";
    this.log(`[${this.engine}] turn ${t.index} ${t.ok ? "ok" : `FAILED: ${String(t.error).slice(0, 300)}`} ${t.ms} ms, ${t.requests.length} requests${after}`);
    return t;
  }

  /**
   * A slash command typed into the chat (`/compact`, `/cachefold`): the same `chat.send`, answered
   * by the host's command path. Recorded as a turn.
   */
  async command(session, text) {
    const t = await this.chat(session, text, { kind: "command" });
    this.log(`[${this.engine}] turn ${t.index} ${text} ${t.ok ? "ok" : `FAILED: ${String(t.error).slice(0, 300)}`} ${t.ms} ms, ${t.requests.length} requests: ${t.text.slice(0, 200)}`);
    return t;
  }

  async chat(session, message, { kind }) {
    await this.connected();
    const sessionKey = `agent:main:${session}`;
    const index = this.turns.length;
    const before = this.provider.requests.length;
    const startedAt = Date.now();
    const runId = `cf-e2e-${index}-${session}`.replace(/[^a-zA-Z0-9_-]/g, "-");
    const step = `[${this.engine}] turn ${index} (${kind} in ${session})`;
    const mark = this.hostLog.seen(sessionKey);
    const run = this.ws.watchRun(runId);
    let end = null;
    let error = null;
    try {
      const ack = await this.ws.request("chat.send", { sessionKey, message, idempotencyKey: runId }, `${step}: chat.send`);
      if (ack?.runId && ack.runId !== runId) throw new Error(`${step}: chat.send answered run ${ack.runId}, not ${runId}`);
      end = await this.progress.wait(run.done, `${step}: waiting for the reply`);
      if (end.state !== "final") error = `${end.state}: ${end.errorMessage ?? JSON.stringify(end).slice(0, 500)}`;
    } catch (e) {
      error = String(e.message ?? e);
    }
    const text = chatText(end?.message);
    if (!error && !text.trim()) error = "no reply text";
    const t = {
      session,
      sessionKey,
      kind,
      index,
      runId,
      ok: error == null,
      error,
      state: end?.state ?? null,
      ms: Date.now() - startedAt,
      startedAt,
      endedAt: Date.now(),
      sessionId: run.sessionId,
      text,
      stderr: error ?? "",
      maintenanceMark: mark,
      requests: this.provider.requests.slice(before),
    };
    this.turns.push(t);
    return t;
  }

  /** `openclaw agent --local` (the `local` cell: no Gateway, one process per turn). */
  async turnLocal(session, message, { timeoutMs = TIMEOUTS.turn } = {}) {
    const before = this.provider.requests.length;
    const startedAt = Date.now();
    const r = await this.oc(["agent", "--local", "--agent", "main", "--session-key", `agent:main:${session}`, "--message", message, "--json", "--timeout", String(Math.ceil(timeoutMs / 1000) - 10)], { timeoutMs, allowFail: true });
    let json = null;
    try {
      json = JSON.parse(r.stdout.slice(Math.max(0, r.stdout.indexOf("{"))));
    } catch {}
    const text = extractReplyText(json);
    const error = turnError({ code: r.code, timedOut: r.timedOut, json, text, stdout: r.stdout, stderr: r.stderr });
    const t = { session, kind: "turn", index: this.turns.length, ok: error == null, error, code: r.code, timedOut: r.timedOut, ms: r.ms, startedAt, endedAt: Date.now(), sessionId: findKey(json, "sessionId"), json, text: text ?? r.stdout.trim(), stderr: r.stderr, requests: this.provider.requests.slice(before) };
    this.turns.push(t);
    this.log(`[${this.engine}] turn ${t.index} (--local) ${t.ok ? "ok" : `FAILED: ${error.slice(0, 300)}`} ${r.ms} ms, ${t.requests.length} requests`);
    return t;
  }

  /**
   * Wait until the host's post-turn work for this turn has landed. OpenClaw runs optional
   * maintenance after each Gateway reply (the pre-compaction memory flush, then compaction)
   * under a maintenance owner for the session key, and a new message cancels it; a user reading
   * the reply gives it its time, so the script does too: the turn's owner (the first one created
   * after the turn began, lib/host-log.mjs) must reach `settled`. Bounded by progress: a host that
   * stops moving fails the wait with the step's name. A failed turn may schedule none, so after a
   * failure the wait gives up quietly once nothing moves for a few seconds.
   * The requests it saw belong to no turn (`turn.requests` stays the turn's own).
   */
  async settle(t) {
    const t0 = Date.now();
    const start = this.provider.requests.length;
    const landed = (async () => {
      for (;;) {
        const owners = this.hostLog.since(t.sessionKey, t.maintenanceMark);
        if (owners.length && owners.every((o) => o.settled)) return owners;
        await sleep(100);
      }
    })();
    let owners = [];
    try {
      owners = await this.progress.wait(landed, `[${this.engine}] turn ${t.index} (${t.session}): the host's post-turn maintenance`, t.ok ? {} : { stallMs: 5_000 });
    } catch (e) {
      if (t.ok) throw e;
    }
    return { requests: this.provider.requests.length - start, ms: Date.now() - t0, phases: owners.map((o) => o.phases.join(">")).join(", ") || "none" };
  }

  /**
   * The user's /compact for a session, typed into the chat (`chat.send "/compact"`: the host's
   * command path runs the session's compaction). Recorded as a turn; fails when the reply reports
   * a failure other than the host's benign "nothing to compact".
   */
  async compactSession(session) {
    const t = await this.command(session, "/compact");
    t.kind = "compact";
    if (t.ok && /fail|error|unable|could not/i.test(t.text) && !BENIGN_COMPACT_SKIP.test(t.text)) {
      t.ok = false;
      t.error = `/compact: ${t.text.slice(0, 300)}`;
    }
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

/** The package names a checkout's production dependencies need, from its installed node_modules. */
export function productionDeps(dir) {
  const out = new Set();
  const visit = (pkgJson) => {
    for (const name of Object.keys(JSON.parse(fs.readFileSync(pkgJson, "utf8")).dependencies ?? {})) {
      if (out.has(name)) continue;
      const p = path.join(dir, "node_modules", name, "package.json");
      if (!fs.existsSync(p)) throw new Error(`dependency ${name} is not installed in ${dir}/node_modules (run npm ci, or .ci/setup)`);
      out.add(name);
      visit(p);
    }
  };
  visit(path.join(dir, "package.json"));
  return [...out];
}

export function deepMerge(a, b) {
  if (!b || typeof b !== "object" || Array.isArray(b)) return b === undefined ? a : b;
  const out = { ...(a ?? {}) };
  for (const [k, v] of Object.entries(b)) out[k] = v && typeof v === "object" && !Array.isArray(v) ? deepMerge(out[k], v) : v;
  return out;
}
