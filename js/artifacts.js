// Content-addressed artifact store: the only file doing artifact I/O.
//
// Layout under <stateDir>/artifacts/ (directories 0700, files 0600):
//   <2 hex>/<40 hex>        full original text of a shrunk tool result (name = sha1 of the text,
//                           so identical outputs are stored once)
//   <2 hex>/<40 hex>.json   metadata: {id, bytes, chars, tool, createdAt, lastRefAt, refs: [...]}
//                           (refs = last 16 {tool, callId, session, at}; they accumulate)
//   sessions/<sha1(session)>.jsonl
//                           one line per reference a session made: {id, tool, callId, at,
//                           originalChars, shrunkChars}. Append-only; search, stats and GC read it.
//
// Ids are checked twice: exact /^[0-9a-f]{40}$/ and the resolved path must sit inside the store.
// Every file is opened with O_NOFOLLOW and its directory must resolve inside the store, so a
// symlink planted in the store is refused (reads answer "not stored", writes fail), never followed.
//
// Session isolation: recover and search serve only artifacts the calling session referenced
// itself (its ref file names them, see readSessionArtifact); a foreign id gets the same answer
// as an unknown one, and reading never adds a reference for an artifact the session did not have.
//
// Garbage collection (size budget `artifacts.maxBytes`, 1 GiB by default): an artifact is *live*
// while any session ref file that names it was modified in the last LIVE_SESSION_DAYS days (30).
// Live artifacts are never evicted, even over budget. Above the budget, the others go in order of
// least recent reference (metadata lastRefAt, then id). Ref files older than the window are
// deleted by GC (they no longer protect anything). GC runs off the hot path (setImmediate, async
// fs), at most once a minute per process, after a new artifact was written.
//
// The write path is synchronous (tool_result_persist is synchronous in OpenClaw): one
// existsSync, one tmp write + rename for new content, one small metadata rewrite, one append.
import { createHash } from "node:crypto";
import {
  chmodSync,
  closeSync,
  constants as C,
  existsSync,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  realpathSync,
} from "node:fs";
import { readdir, readFile, stat, unlink } from "node:fs/promises";
import { dirname, join, resolve, sep } from "node:path";
import { readNoFollow, unsafe, writeAll, writeFileAtomic as writeAtomic } from "./io/files.js";

export const DIR_MODE = 0o700;
export const FILE_MODE = 0o600;
export const LIVE_SESSION_DAYS = 30;
export const GC_INTERVAL_MS = 60_000;
const META_REFS = 16;
const DAY_MS = 86_400_000;
const ID_RE = /^[0-9a-f]{40}$/;
const SHARD_RE = /^[0-9a-f]{2}$/;
const REFS_RE = /^[0-9a-f]{40}\.jsonl$/;

function invalidId(id) {
  const shown = typeof id === "string" ? JSON.stringify(id.slice(0, 48)) : typeof id;
  const err = new Error(`invalid id: artifact id must be 40 lowercase hex digits, got ${shown}`);
  err.code = "CACHEFOLD_INVALID_ID";
  return err;
}

/** True for exactly 40 lowercase hex digits. */
export function isArtifactId(id) {
  return typeof id === "string" && ID_RE.test(id);
}

/** <stateDir>/artifacts */
export function storeRoot(stateDir) {
  return join(stateDir, "artifacts");
}

/** Absolute path of an artifact; throws CACHEFOLD_INVALID_ID for anything but 40 lowercase hex. */
export function artifactPath(stateDir, id) {
  if (!isArtifactId(id)) throw invalidId(id);
  const root = resolve(storeRoot(stateDir));
  const path = resolve(root, id.slice(0, 2), id);
  // Belt and braces: the regex already excludes separators and dots.
  if (!path.startsWith(root + sep)) throw invalidId(id);
  return path;
}

/** Lowercase hex sha1 of a UTF-8 string (session ref file names). */
export function sha1Hex(text) {
  return createHash("sha1").update(text, "utf8").digest("hex");
}

function sessionRefsPath(stateDir, session) {
  return join(storeRoot(stateDir), "sessions", `${sha1Hex(String(session ?? "unknown"))}.jsonl`);
}

const preparedRoots = new Set();

/** Create the store directories (0700); tighten modes once per process if they pre-existed. */
export function ensureStore(stateDir) {
  const root = storeRoot(stateDir);
  if (preparedRoots.has(root)) return root;
  mkdirSync(join(root, "sessions"), { recursive: true, mode: DIR_MODE });
  chmodSync(root, DIR_MODE);
  chmodSync(join(root, "sessions"), DIR_MODE);
  preparedRoots.add(root);
  return root;
}

const NOFOLLOW = C.O_NOFOLLOW ?? 0;


/** Throw unless the directory holding `path` resolves inside the store root (no symlinked dirs). */
function assertInStore(stateDir, path) {
  const root = realpathSync(storeRoot(stateDir));
  const top = realpathSync(stateDir);
  if (!root.startsWith(top + sep)) throw unsafe(`refusing the artifact store: it resolves to ${root}, outside ${top}`);
  let dir;
  try {
    dir = realpathSync(dirname(path));
  } catch (err) {
    if (err.code === "ENOENT") return;
    throw err;
  }
  if (dir !== root && !dir.startsWith(root + sep)) throw unsafe(`refusing ${path}: its directory resolves to ${dir}, outside ${root}`);
}

function isRegularFile(path) {
  try {
    return lstatSync(path).isFile();
  } catch {
    return false;
  }
}

function writeFileAtomic(path, data) {
  writeAtomic(path, data, { mkdir: false, sync: false });
}

function readMeta(path) {
  try {
    const m = JSON.parse(readNoFollow(`${path}.json`));
    return m && typeof m === "object" ? m : null;
  } catch {
    return null;
  }
}

/**
 * Store the full text of a shrunk result and record the reference.
 * `ref` = {tool, callId, session, nowMs, originalChars, shrunkChars}.
 * Returns {id, path, created, bytes}. Throws on I/O failure (callers then keep the original result).
 */
export function writeArtifact(stateDir, id, text, ref = {}) {
  const path = artifactPath(stateDir, id);
  ensureStore(stateDir);
  const shard = join(storeRoot(stateDir), id.slice(0, 2));
  if (!existsSync(shard)) mkdirSync(shard, { recursive: true, mode: DIR_MODE });
  assertInStore(stateDir, path);
  let created = false;
  let bytes;
  if (isRegularFile(path)) {
    bytes = lstatSync(path).size;
  } else {
    // Absent (or a planted non-file, which the rename replaces).
    const buf = Buffer.from(text, "utf8");
    bytes = buf.length;
    writeFileAtomic(path, buf);
    created = true;
  }
  recordRef(stateDir, id, path, { ...ref, bytes, chars: ref.originalChars });
  return { id, path, created, bytes };
}

/** Note that a session referenced an existing artifact (recover keeps it live). */
export function touchArtifact(stateDir, id, ref = {}) {
  const path = artifactPath(stateDir, id);
  if (!isRegularFile(path)) return false;
  recordRef(stateDir, id, path, { ...ref, bytes: lstatSync(path).size });
  return true;
}

function recordRef(stateDir, id, path, ref) {
  const at = Number.isFinite(ref.nowMs) ? ref.nowMs : Date.now();
  const session = ref.session ?? "unknown";
  const entry = { tool: ref.tool ?? null, callId: ref.callId ?? null, session, at };
  const meta = readMeta(path) ?? { id, bytes: ref.bytes, chars: ref.chars ?? null, tool: ref.tool ?? null, createdAt: at, refs: [] };
  meta.lastRefAt = at;
  meta.refs = [...(Array.isArray(meta.refs) ? meta.refs : []), entry].slice(-META_REFS);
  writeFileAtomic(`${path}.json`, JSON.stringify(meta));
  const line = {
    id,
    tool: ref.tool ?? null,
    callId: ref.callId ?? null,
    at,
    ...(ref.originalChars != null ? { originalChars: ref.originalChars, shrunkChars: ref.shrunkChars ?? null } : {}),
  };
  appendRef(stateDir, sessionRefsPath(stateDir, session), `${JSON.stringify(line)}\n`);
}

function appendRef(stateDir, file, text) {
  ensureStore(stateDir);
  assertInStore(stateDir, file);
  let fd;
  try {
    fd = openSync(file, C.O_WRONLY | C.O_APPEND | C.O_CREAT | NOFOLLOW, FILE_MODE);
  } catch (err) {
    if (err.code === "ELOOP") throw unsafe(`refusing to follow the symlink ${file}`);
    throw err;
  }
  try {
    if (!fstatSync(fd).isFile()) throw unsafe(`refusing ${file}: not a regular file`);
    writeAll(fd, text);
  } finally {
    closeSync(fd);
  }
}

/** Full text of an artifact, or null when it is not stored (never stored, or evicted). */
export function readArtifact(stateDir, id) {
  const path = artifactPath(stateDir, id);
  try {
    assertInStore(stateDir, path);
    return readNoFollow(path);
  } catch (err) {
    if (err.code === "ENOENT" || err.code === "CACHEFOLD_UNSAFE_PATH") return null;
    throw err;
  }
}

/**
 * Full text of an artifact the session `session` referenced itself, or null: an artifact of
 * another session answers exactly like one that was never stored.
 */
export function readSessionArtifact(stateDir, session, id) {
  artifactPath(stateDir, id); // validates the id (throws CACHEFOLD_INVALID_ID)
  if (!sessionRefs(stateDir, session).some((r) => r.id === id)) return null;
  return readArtifact(stateDir, id);
}

/** Metadata sidecar of an artifact, or null. */
export function artifactMeta(stateDir, id) {
  return readMeta(artifactPath(stateDir, id));
}

/** Reference lines of a session, oldest first (torn or foreign lines are skipped). */
export function sessionRefs(stateDir, session) {
  let text;
  try {
    const file = sessionRefsPath(stateDir, session);
    assertInStore(stateDir, file);
    text = readNoFollow(file);
  } catch {
    return [];
  }
  if (text == null) return [];
  const out = [];
  for (const line of text.split("\n")) {
    if (!line) continue;
    try {
      const r = JSON.parse(line);
      if (isArtifactId(r?.id)) out.push(r);
    } catch {}
  }
  return out;
}

/** Distinct artifact ids a session referenced, most recent first. */
export function sessionArtifactIds(stateDir, session) {
  const seen = new Set();
  const refs = sessionRefs(stateDir, session);
  for (let i = refs.length - 1; i >= 0; i -= 1) seen.add(refs[i].id);
  return [...seen];
}

/** Shrink totals of a session: results shrunk, distinct artifacts, chars before/after/saved. */
export function sessionShrinkStats(stateDir, session) {
  let shrunkResults = 0;
  let originalChars = 0;
  let shrunkChars = 0;
  const ids = new Set();
  for (const r of sessionRefs(stateDir, session)) {
    ids.add(r.id);
    if (Number.isFinite(r.originalChars) && Number.isFinite(r.shrunkChars)) {
      shrunkResults += 1;
      originalChars += r.originalChars;
      shrunkChars += r.shrunkChars;
    }
  }
  return { shrunkResults, artifacts: ids.size, originalChars, shrunkChars, savedChars: originalChars - shrunkChars };
}

// ---- garbage collection ----------------------------------------------------------------------

const lastGc = new Map();

/** Run GC soon (off the hot path) unless one ran in this process in the last minute. */
export function scheduleGc(stateDir, opts = {}) {
  const root = storeRoot(stateDir);
  const now = Date.now();
  if (now - (lastGc.get(root) ?? -Infinity) < GC_INTERVAL_MS) return false;
  lastGc.set(root, now);
  setImmediate(() => {
    collectGarbage(stateDir, opts).then(
      (report) => opts.onReport?.(report),
      (err) => opts.onError?.(err),
    );
  });
  return true;
}

/**
 * Enforce the size budget. opts = {maxBytes, liveDays, nowMs, dryRun} (dryRun: report, delete nothing).
 * Returns {scanned, bytesBefore, bytesAfter, evicted: [ids], liveKept, staleRefFiles, overBudget}.
 */
export async function collectGarbage(stateDir, opts = {}) {
  const maxBytes = Number.isFinite(opts.maxBytes) ? opts.maxBytes : 2 ** 30;
  const liveDays = Number.isFinite(opts.liveDays) ? opts.liveDays : LIVE_SESSION_DAYS;
  const now = Number.isFinite(opts.nowMs) ? opts.nowMs : Date.now();
  const started = Date.now();
  const root = storeRoot(stateDir);
  const report = { scanned: 0, bytesBefore: 0, bytesAfter: 0, evicted: [], liveKept: 0, staleRefFiles: 0, overBudget: false };

  // Live set from session ref files.
  const live = new Set();
  const sessionsDir = join(root, "sessions");
  for (const name of await listDir(sessionsDir)) {
    if (!REFS_RE.test(name)) continue;
    const p = join(sessionsDir, name);
    let st;
    try {
      st = await stat(p);
    } catch {
      continue;
    }
    if (now - st.mtimeMs > liveDays * DAY_MS) {
      if (!opts.dryRun) await unlink(p).catch(() => {});
      report.staleRefFiles += 1;
      continue;
    }
    const text = await readFile(p, "utf8").catch(() => "");
    for (const line of text.split("\n")) {
      const m = /"id":"([0-9a-f]{40})"/.exec(line);
      if (m) live.add(m[1]);
    }
  }

  // Every artifact with its size and last reference.
  const all = [];
  for (const shard of await listDir(root)) {
    if (!SHARD_RE.test(shard)) continue;
    for (const name of await listDir(join(root, shard))) {
      if (!ID_RE.test(name) || !name.startsWith(shard)) continue;
      const path = join(root, shard, name);
      let st;
      try {
        st = await stat(path);
      } catch {
        continue;
      }
      const meta = await readFile(`${path}.json`, "utf8").then(JSON.parse).catch(() => null);
      const lastRefAt = Number.isFinite(meta?.lastRefAt) ? meta.lastRefAt : st.mtimeMs;
      all.push({ id: name, path, bytes: st.size, lastRefAt });
      report.bytesBefore += st.size;
    }
  }
  report.scanned = all.length;
  let total = report.bytesBefore;
  if (total > maxBytes) {
    const candidates = all.filter((a) => !live.has(a.id));
    report.liveKept = all.length - candidates.length;
    candidates.sort((a, b) => a.lastRefAt - b.lastRefAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    for (const a of candidates) {
      if (total <= maxBytes) break;
      // A reference made while we scanned (another turn, another process) wins.
      const meta = await readFile(`${a.path}.json`, "utf8").then(JSON.parse).catch(() => null);
      if (Number.isFinite(meta?.lastRefAt) && meta.lastRefAt >= started) continue;
      if (!opts.dryRun) {
        try {
          await unlink(a.path);
        } catch {
          continue;
        }
        await unlink(`${a.path}.json`).catch(() => {});
      }
      total -= a.bytes;
      report.evicted.push(a.id);
    }
  }
  report.bytesAfter = total;
  report.overBudget = total > maxBytes;
  return report;
}

async function listDir(dir) {
  try {
    return (await readdir(dir)).sort();
  } catch {
    return [];
  }
}

/**
 * Name the artifact's file in a shrunk result's header (`→ artifact <id> (file <path>). `), so
 * the plain `read` tool still reaches the full text when cachefold is gone. The core's header
 * parser (`isShrunk`) reads the id right after "→ artifact ", so it is unaffected.
 */
export function withArtifactPath(message, stateDir, id) {
  if (!isArtifactId(id) || !Array.isArray(message?.content)) return message;
  const tag = `→ artifact ${id}. `;
  const path = artifactPath(stateDir, id);
  for (const part of message.content) {
    if (part?.type === "text" && typeof part.text === "string" && part.text.startsWith("[cachefold] ")) {
      const nl = part.text.indexOf("\n");
      const at = part.text.indexOf(tag);
      if (at >= 0 && (nl < 0 || at < nl)) part.text = `${part.text.slice(0, at)}→ artifact ${id} (file ${path}). ${part.text.slice(at + tag.length)}`;
      break;
    }
  }
  return message;
}
