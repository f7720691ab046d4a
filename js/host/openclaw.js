// What cachefold reads of OpenClaw itself: its state dir, its config file (JSON5), and its
// per-agent SQLite transcript stores. The one reader of those stores: capture, doctor, restore
// and replay all go through openTranscriptStore (read-only, streamed row by row).
import { existsSync, readdirSync } from "node:fs";
import { homedir } from "node:os";
import { isAbsolute, join, resolve } from "node:path";
import JSON5 from "json5";
import { readRegular } from "../io/files.js";

const MAX_CONFIG_BYTES = 16 << 20;

/** OpenClaw's state dir as the host resolves it: $OPENCLAW_STATE_DIR (with ~), else ~/.openclaw (or an existing legacy ~/.clawdbot). */
export function hostStateDir(env = process.env) {
  const home = env.OPENCLAW_HOME?.trim() ? resolve(env.OPENCLAW_HOME.trim().replace(/^~(?=$|\/)/, homedir())) : homedir();
  const tilde = (p) => resolve(p.replace(/^~(?=$|\/)/, home));
  const override = env.OPENCLAW_STATE_DIR?.trim();
  if (override) return tilde(override);
  const dir = join(home, ".openclaw");
  if (existsSync(dir)) return dir;
  const legacy = join(home, ".clawdbot");
  return existsSync(legacy) ? legacy : dir;
}

/** cachefold's own state dir: the config's `stateDir` (relative to the cwd), else <OpenClaw state>/cachefold. */
export function cachefoldStateDir(config, env = process.env) {
  const dir = config?.stateDir;
  if (dir) return isAbsolute(dir) ? dir : resolve(dir);
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
