// What cachefold reads of OpenClaw itself: its state dir, its config file (JSON5), its per-agent
// SQLite transcript stores, its logs, its view of the plugin (`plugins inspect`), and its own
// compaction (delegateToRuntime, for a compact() cachefold hands over). The one
// reader of those stores: capture, doctor, restore and replay all go through openTranscriptStore
// (read-only, streamed row by row).
import { existsSync, readdirSync } from "node:fs";
import { createRequire } from "node:module";
import { homedir, hostname, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import JSON5 from "json5";
import { mtimeMs, readRegular, readTail } from "../io/files.js";

const MAX_CONFIG_BYTES = 16 << 20;

/** `p` with a leading `~` (alone or before `/`) as `home`, resolved against the cwd. */
export function expandHome(p, home = homedir()) {
  return resolve(p.replace(/^~(?=$|\/)/, home));
}

/** OpenClaw's state dir as the host resolves it: $OPENCLAW_STATE_DIR (with ~), else ~/.openclaw (or an existing legacy ~/.clawdbot). */
export function hostStateDir(env = process.env) {
  const home = env.OPENCLAW_HOME?.trim() ? expandHome(env.OPENCLAW_HOME.trim()) : homedir();
  const override = env.OPENCLAW_STATE_DIR?.trim();
  if (override) return expandHome(override, home);
  const dir = join(home, ".openclaw");
  if (existsSync(dir)) return dir;
  const legacy = join(home, ".clawdbot");
  return existsSync(legacy) ? legacy : dir;
}

/** cachefold's own state dir: the config's `stateDir` (relative to the cwd), else <OpenClaw state>/cachefold. */
export function cachefoldStateDir(config, env = process.env) {
  const dir = config?.stateDir;
  if (dir) return resolve(dir);
  return join(hostStateDir(env), "cachefold");
}

/** The host config: the CLI context's (preferred), else the config file (JSON5, as OpenClaw writes it). */
export function loadHostConfig(io = {}, env = process.env) {
  if (io.hostConfig && typeof io.hostConfig === "object") return { config: io.hostConfig, source: "openclaw (loaded config)" };
  const file = env.OPENCLAW_CONFIG_PATH || join(hostStateDir(env), "openclaw.json");
  try {
    const text = readRegular(file, { maxBytes: MAX_CONFIG_BYTES, follow: true });
    if (text == null) return { config: null, source: file, error: "not found" };
    return { config: JSON5.parse(text), source: file };
  } catch (err) {
    return { config: null, source: file, error: err.message };
  }
}

/** The per-agent stores under a state dir: [{agent, path}]. */
export function agentStores(stateDir, agent = null) {
  let agents = [];
  try {
    agents = agent ? [agent] : readdirSync(join(stateDir, "agents")).sort();
  } catch {
    return [];
  }
  return agents.map((a) => ({ agent: a, path: join(stateDir, "agents", a, "agent", "openclaw-agent.sqlite") })).filter((s) => existsSync(s.path));
}

/** The transcript store of a session: the runtime's storePath, else the agent's default. */
export function transcriptDb(params, hctx, env = process.env) {
  const rc = params?.runtimeContext ?? {};
  const target = rc.sessionTarget ?? params?.sessionTarget ?? null;
  const store = target?.storePath ?? rc.storePath ?? null;
  if (typeof store === "string" && store.endsWith(".sqlite")) return store;
  const agent = target?.agentId ?? hctx?.agentId ?? params?.agentId ?? "main";
  return join(hostStateDir(env), "agents", String(agent), "agent", "openclaw-agent.sqlite");
}

/**
 * Open one store read-only. Returns null when this Node has no node:sqlite (< 22.5; OpenClaw
 * itself runs on 24); throws when the file is not an OpenClaw store. The result:
 *   sessions()                 [{sessionId, events, firstAt, lastAt}]
 *   events(sessionId, {since}) an iterator of {seq, at, event} (event null when undecodable),
 *                              rows after `since` (ms) only when given, oldest first
 *   close()
 */
export async function openTranscriptStore(path) {
  let sqlite;
  let zlib;
  try {
    sqlite = await import("node:sqlite");
    zlib = await import("node:zlib");
  } catch {
    return null;
  }
  const db = new sqlite.DatabaseSync(path, { readOnly: true });
  try {
    const cols = db.prepare("PRAGMA table_info(transcript_events)").all().map((c) => c.name);
    if (!cols.length) throw new Error(`${path}: no transcript_events table (not an OpenClaw agent store?)`);
    const z = cols.includes("event_zstd") ? ", event_zstd AS z" : "";
    const bySession = db.prepare(`SELECT seq, created_at AS at, event_json AS j${z} FROM transcript_events WHERE session_id = ? ORDER BY seq`);
    const since = db.prepare(`SELECT seq, created_at AS at, event_json AS j${z} FROM transcript_events WHERE session_id = ? AND created_at > ? ORDER BY seq`);
    const decode = (r) => {
      try {
        const text = r.j ?? (r.z && typeof zlib.zstdDecompressSync === "function" ? zlib.zstdDecompressSync(Buffer.from(r.z)).toString("utf8") : null);
        return text == null ? null : JSON.parse(text);
      } catch {
        return null;
      }
    };
    const rows = (stmt, args) => (typeof stmt.iterate === "function" ? stmt.iterate(...args) : stmt.all(...args));
    return {
      path,
      sessions: () =>
        db
          .prepare("SELECT session_id AS sessionId, COUNT(*) AS events, MIN(created_at) AS firstAt, MAX(created_at) AS lastAt FROM transcript_events GROUP BY session_id ORDER BY session_id")
          .all()
          .map((r) => ({ sessionId: r.sessionId, events: Number(r.events), firstAt: Number(r.firstAt), lastAt: Number(r.lastAt) })),
      *events(sessionId, opts = {}) {
        const it = opts.since === undefined ? rows(bySession, [sessionId]) : rows(since, [sessionId, Math.floor(opts.since)]);
        for (const r of it) yield { seq: Number(r.seq), at: Number(r.at), event: decode(r) };
      },
      close: () => db.close(),
    };
  } catch (err) {
    db.close();
    throw err;
  }
}

// ---- what OpenClaw recorded about cachefold (for `openclaw cachefold doctor`) ------------------

/** OpenClaw's log files: `logging.file`, else its rolling logs in /tmp/openclaw (and $TMPDIR/openclaw), and `<state>/logs`. */
export function hostLogFiles(host, now = Date.now()) {
  const files = new Set();
  if (typeof host?.logging?.file === "string" && host.logging.file) files.add(expandHome(host.logging.file));
  for (const dir of [...new Set([join(tmpdir(), "openclaw"), "/tmp/openclaw"])]) {
    let names = [];
    try {
      names = readdirSync(dir);
    } catch {}
    // The rolling daily logs of the last two days.
    for (const n of names) if (/^openclaw-.*\.log$/.test(n) && now - mtimeMs(join(dir, n)) < 2 * 864e5) files.add(join(dir, n));
  }
  const logs = join(hostStateDir(), "logs");
  try {
    for (const n of readdirSync(logs)) if (/\.(log|jsonl)$/.test(n) && !n.startsWith("cache-trace")) files.add(join(logs, n));
  } catch {}
  return [...files];
}

// What OpenClaw 2026.9.6 logs when it does not run the configured engine: `Context engine "X"
// degraded to "legacy" for this logical turn: <reason>` and `Context engine "X" failed during
// <op>: <reason>; quarantining it for this process and falling back to default engine "legacy"`.
const DEGRADE_RE = /context engine "?cachefold"?[^\n]*?(degraded to "?legacy"?|quarantin|falling back to (default engine )?"?legacy"?)/i;
const ISO_RE = /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:?\d\d)/;

/**
 * Host log lines saying cachefold was degraded to legacy or quarantined, newer than `since` (ms:
 * cachefold's last managed turn; a turn it served since then shows it recovered). A JSON file-log
 * line naming a session (`session_id`) counts from that session's own last write (`sessions`:
 * [{sessionId, updatedAt}]); one naming another host (`hostname`) is another gateway's and does
 * not count. Lines without a time count. null when no log could be read.
 */
export function hostLogHits(files, since = 0, { sessions = [], host = hostname() } = {}) {
  const hits = [];
  let read = 0;
  for (const f of files) {
    const text = readTail(f);
    if (text == null) continue;
    read += 1;
    for (const line of text.split("\n")) {
      // The JSON file log escapes the quotes of the message.
      if (!DEGRADE_RE.test(line.replace(/\\"/g, '"'))) continue;
      let j = null;
      try {
        j = JSON.parse(line);
      } catch {
        /* a text log line */
      }
      if (typeof j?.hostname === "string" && j.hostname && j.hostname !== host) continue;
      const own = typeof j?.session_id === "string" ? sessions.find((s) => s.sessionId === j.session_id) : null;
      const at = Date.parse(ISO_RE.exec(line)?.[0] ?? "");
      if (Number.isFinite(at) && at <= (own ? Math.max(own.updatedAt, since) : since)) continue;
      const msg = (j && Object.keys(j).filter((k) => /^\d+$/.test(k)).map((k) => j[k]).filter((v) => typeof v === "string" && DEGRADE_RE.test(v)).join(" ")) || line;
      const who = [typeof j?.hostname === "string" ? `gateway ${j.hostname}` : "", own ? `session ${own.sessionId}` : ""].filter(Boolean).join(", ");
      hits.push(`${f}: ${Number.isFinite(at) ? new Date(at).toISOString() + " " : ""}${who ? `(${who}) ` : ""}${msg.replace(/^\S*\s*\[context-engine\]\s*/, "").slice(0, 300)}`);
    }
  }
  return read ? hits : null;
}

/** `openclaw plugins inspect cachefold --json` through the running OpenClaw CLI (doctor runs inside it). */
export async function inspectThroughHost(argv = process.argv, execPath = process.execPath) {
  const entry = argv[1];
  if (!entry || !/openclaw(\.mjs)?$/.test(entry)) return { error: "not running inside the openclaw CLI" };
  const { execFile } = await import("node:child_process");
  return new Promise((done) => {
    execFile(execPath, [entry, "plugins", "inspect", "cachefold", "--json"], { timeout: 90_000, maxBuffer: 32 << 20, env: process.env }, (err, stdout, stderr) => {
      const text = String(stdout ?? "");
      try {
        done(JSON.parse(text.slice(Math.max(0, text.indexOf("{")))));
      } catch {
        done({ error: `openclaw plugins inspect cachefold --json: ${err?.code ?? "exit 0"}, ${String(stderr || text).trim().split("\n").pop()?.slice(0, 200) ?? "no output"}` });
      }
    });
  });
}

/** An assistant message OpenClaw wrote itself (command answers, chat.inject, delivery mirrors): no model call. */
function hostWritten(m) {
  return (m?.provider === "openclaw" && (m.model === "gateway-injected" || m.model === "delivery-mirror")) || typeof m?.openclawDeliveryMirror?.kind === "string";
}

/**
 * Model calls OpenClaw recorded in its own transcript store for `sessions` after cachefold last
 * wrote their state: turns another engine served (the slot's plugin disabled, e.g. by an enable
 * refused for capability consent; slot changed; quarantine). `dbs`: the host's SQLite stores.
 * Returns [{sessionId, calls, firstAt, lastAt}] for the sessions with such calls, or null when
 * the stores cannot be read (no node:sqlite, none found).
 */
export async function callsCachefoldMissed(sessions, dbs) {
  if (!dbs.length || !sessions.length) return null;
  const out = [];
  let read = 0;
  for (const db of dbs) {
    let st = null;
    try {
      st = await openTranscriptStore(db);
      if (!st) return null; // no node:sqlite in this Node
      read += 1;
      for (const s of sessions) {
        let calls = 0;
        let firstAt = null;
        let lastAt = null;
        for (const { at, event } of st.events(s.sessionId, { since: s.updatedAt })) {
          const m = event?.type === "message" ? event.message : null;
          if (m?.role !== "assistant" || hostWritten(m)) continue;
          calls += 1;
          firstAt ??= at;
          lastAt = at;
        }
        if (calls) out.push({ sessionId: s.sessionId, db, calls, firstAt, lastAt });
      }
    } catch {
      /* not an OpenClaw store, or locked: skip it */
    } finally {
      try {
        st?.close();
      } catch {}
    }
  }
  return read ? out : null;
}

/**
 * Messages of the session's last conversation in the host transcript (`reset` entries split the
 * conversations that share one sessionId), and the session's cwd. Null when it cannot be read.
 */
export async function hostTranscript(db, sessionId) {
  const st = db && existsSync(db) ? await openTranscriptStore(db) : null;
  if (!st) return null;
  const parts = [[]];
  let cwd = null;
  let rows = 0;
  try {
    for (const { event: e } of st.events(sessionId)) {
      rows += 1;
      if (!e) continue; // one unreadable event never stops the capture
      if (e.type === "session" && typeof e.cwd === "string") cwd = e.cwd;
      else if (e.type === "reset") parts.push([]);
      else if (e.type === "message" && e.message && typeof e.message === "object") parts[parts.length - 1].push(e.message);
    }
  } finally {
    st.close();
  }
  return rows ? { messages: parts.filter((p) => p.length).pop() ?? [], cwd } : null;
}

// delegateCompactionToRuntime lives in the host package; resolve it from the host's own entry
// point (plugins are imported from a copy outside the host's node_modules).
export async function delegateToRuntime(params) {
  const specs = ["openclaw/plugin-sdk/core"];
  try {
    specs.push(pathToFileURL(createRequire(process.argv[1] ?? import.meta.url).resolve("openclaw/plugin-sdk/core")).href);
  } catch {
    /* host entry not resolvable */
  }
  for (const spec of specs) {
    try {
      const mod = await import(spec);
      if (typeof mod.delegateCompactionToRuntime === "function") return await mod.delegateCompactionToRuntime(params);
    } catch {
      /* try the next way */
    }
  }
  return null;
}
