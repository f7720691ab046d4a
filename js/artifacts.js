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
// while any session ref file that names it belongs to a session active in the last
// LIVE_SESSION_DAYS days (30). A ref file's activity is the latest of its own mtime and the last
// write of every session it belongs to (journal, snapshot, folds, lessons decision under
// sessions/<dir>/): the session whose id hashes to the file's name, and every session id its
// lines name (`sid`, recorded when the caller knows it: a ref keyed by the session key). A
// session active today keeps an artifact it shrank 31 days ago. Live artifacts are never evicted,
// even over budget. Above the budget, the others go in order of least recent reference (metadata
// lastRefAt, then id). Inactive ref files are deleted by GC. GC runs off the hot path
// (setImmediate, async fs), at most once a minute per process, after a new artifact was written.
//
// GC against concurrent references (other processes, no lock: tool_result_persist is
// synchronous and cannot wait for one): every reference writes the metadata first, then its ref
// line, then checks the artifact is still there and writes it again if not. GC evicts by renaming
// the artifact and its metadata aside (tombstones), then compares the metadata with what its scan
// read: changed means a reference came in, and both are put back. A reference whose metadata
// write came after that comparison finds the artifact gone and writes it again. Ref files are
// removed the same way (renamed aside, size compared, lines written meanwhile appended back), and
// an append checks afterwards that its file is still the one at the path.
//
// The write path is synchronous (tool_result_persist is synchronous in OpenClaw): one
// existsSync, one tmp write + rename for new content, one small metadata rewrite, one append.
import { createHash, randomBytes } from "node:crypto";
import {
  chmodSync,
  closeSync,
  constants as C,
  existsSync,
  fstatSync,
  lstatSync,
  linkSync,
  mkdirSync,
  openSync,
  readFileSync,
  realpathSync,
  renameSync,
  unlinkSync,
} from "node:fs";
import { appendFile, lstat, open, readdir, readFile, rename, stat, unlink } from "node:fs/promises";
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

/** Lowercase hex sha1 of a UTF-8 string (or of a Buffer's bytes). */
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
 * Store the full text of a shrunk result (a string, or its UTF-8 bytes) and record the reference.
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
  const buf = Buffer.isBuffer(text) ? text : Buffer.from(text, "utf8");
  const bytes = buf.length;
  if (!isRegularFile(path)) {
    // Absent (or a planted non-file, which the rename replaces).
    writeFileAtomic(path, buf);
    created = true;
  }
  recordRef(stateDir, id, path, { ...ref, bytes, chars: ref.originalChars });
  // A GC in another process may have evicted it between the check and the reference.
  if (!isRegularFile(path)) {
    writeFileAtomic(path, buf);
    created = true;
  }
  return { id, path, created, bytes };
}

/**
 * Note that a session referenced an existing artifact (recover keeps it live). `text` is its
 * content when the caller has it (read otherwise): a GC evicting it meanwhile is undone.
 */
export function touchArtifact(stateDir, id, ref = {}, text = undefined) {
  const path = artifactPath(stateDir, id);
  if (!isRegularFile(path)) return false;
  const body = text ?? readArtifact(stateDir, id);
  if (body == null) return false;
  const buf = Buffer.from(body, "utf8");
  recordRef(stateDir, id, path, { ...ref, bytes: buf.length });
  if (!isRegularFile(path)) writeFileAtomic(path, buf);
  return true;
}

function recordRef(stateDir, id, path, ref) {
  const at = Number.isFinite(ref.nowMs) ? ref.nowMs : Date.now();
  const session = ref.session ?? "unknown";
  // The ref line first, then the metadata: a GC whose scan missed the line sees a metadata
  // written after its start (see collectGarbage).
  const line = {
    id,
    tool: ref.tool ?? null,
    callId: ref.callId ?? null,
    at,
    ...(typeof ref.sessionId === "string" && ref.sessionId && ref.sessionId !== session ? { sid: ref.sessionId } : {}),
    ...(ref.originalChars != null ? { originalChars: ref.originalChars, shrunkChars: ref.shrunkChars ?? null } : {}),
  };
  appendRef(stateDir, sessionRefsPath(stateDir, session), `${JSON.stringify(line)}\n`);
  const entry = { tool: ref.tool ?? null, callId: ref.callId ?? null, session, at };
  const meta = readMeta(path) ?? { id, bytes: ref.bytes, chars: ref.chars ?? null, tool: ref.tool ?? null, createdAt: at, refs: [] };
  meta.lastRefAt = at;
  meta.refs = [...(Array.isArray(meta.refs) ? meta.refs : []), entry].slice(-META_REFS);
  meta.touchedAt = Date.now();
  writeFileAtomic(`${path}.json`, JSON.stringify(meta));
}

function appendRef(stateDir, file, text, opts = {}) {
  ensureStore(stateDir);
  assertInStore(stateDir, file);
  let fd;
  try {
    fd = openSync(file, C.O_WRONLY | C.O_APPEND | C.O_CREAT | NOFOLLOW, FILE_MODE);
  } catch (err) {
    if (err.code === "ELOOP") throw unsafe(`refusing to follow the symlink ${file}`);
    throw err;
  }
  let ino;
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw unsafe(`refusing ${file}: not a regular file`);
    ino = st.ino;
    writeAll(fd, text);
  } finally {
    closeSync(fd);
  }
  // A GC that renamed the file aside before this line landed in it: write the line again.
  let now = null;
  try {
    now = lstatSync(file).ino;
  } catch {}
  if (now !== ino && !(opts.again === false)) appendRef(stateDir, file, text, { again: false });
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
  const started = Date.now(); // before the ref files are read (see evict)
  const root = storeRoot(stateDir);
  const report = { scanned: 0, bytesBefore: 0, bytesAfter: 0, evicted: [], liveKept: 0, staleRefFiles: 0, overBudget: false };
  const activity = await sessionActivity(stateDir);

  // Live set from the ref files of sessions active within the window.
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
    const text = await readFile(p, "utf8").catch(() => "");
    const ids = [];
    let active = Math.max(st.mtimeMs, activity.byRefName.get(name.slice(0, 40)) ?? 0);
    for (const line of text.split("\n")) {
      const m = /"id":"([0-9a-f]{40})"/.exec(line);
      if (m) ids.push(m[1]);
      const sid = /"sid":("(?:[^"\\]|\\.)*")/.exec(line);
      if (sid) {
        try {
          active = Math.max(active, (await activity.ofSession(JSON.parse(sid[1]))) ?? 0);
        } catch {}
      }
    }
    if (now - active > liveDays * DAY_MS) {
      if (!opts.dryRun) await removeRefFile(p, Buffer.byteLength(text));
      report.staleRefFiles += 1;
      continue;
    }
    for (const id of ids) live.add(id);
  }

  // Every artifact with its size, last reference and metadata as scanned.
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
      const metaText = await readFile(`${path}.json`, "utf8").catch(() => null);
      let meta = null;
      try {
        meta = JSON.parse(metaText);
      } catch {}
      const lastRefAt = Number.isFinite(meta?.lastRefAt) ? meta.lastRefAt : st.mtimeMs;
      all.push({ id: name, path, bytes: st.size, lastRefAt, metaText });
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
      if (!opts.dryRun && !(await evict(a, started))) continue;
      total -= a.bytes;
      report.evicted.push(a.id);
    }
  }
  report.bytesAfter = total;
  report.overBudget = total > maxBytes;
  return report;
}

/**
 * Evict one artifact unless a reference came in since the scan: artifact and metadata are
 * renamed aside, then the metadata aside is compared with the scanned one and its last write
 * (`touchedAt`, the clock of the referencing process) with the GC's start. A reference writes its
 * ref line, then the metadata, then checks the artifact: a line the ref scan missed has its
 * metadata written after `started` (caught here), or after the rename (the referencing process
 * finds the artifact gone and writes it again). Returns true when the artifact was deleted.
 */
async function evict(a, started) {
  // Not set aside at all when a reference is visible already (the common race, no gap).
  if (!unreferencedSince(readText(`${a.path}.json`), a.metaText, started)) return false;
  // The set-aside, compare and put-back run synchronously: the artifact is missing from its
  // path for a few system calls only, never across a turn of the event loop.
  const tag = `.gc-${process.pid}-${randomBytes(4).toString("hex")}`;
  const tomb = `${a.path}${tag}`;
  const metaTomb = `${a.path}.json${tag}`;
  try {
    renameSync(a.path, tomb);
  } catch {
    return false; // gone already (another GC): not ours to count
  }
  let metaMoved = true;
  try {
    renameSync(`${a.path}.json`, metaTomb);
  } catch {
    metaMoved = false;
  }
  const metaNow = metaMoved ? readText(metaTomb) : null;
  if (!unreferencedSince(metaNow, a.metaText, started)) {
    // Referenced meanwhile: put both back (a copy a referencing process wrote again wins).
    for (const [from, to] of metaMoved ? [[tomb, a.path], [metaTomb, `${a.path}.json`]] : [[tomb, a.path]]) {
      try {
        linkSync(from, to);
      } catch {}
      try {
        unlinkSync(from);
      } catch {}
    }
    return false;
  }
  await unlink(tomb).catch(() => {});
  if (metaMoved) await unlink(metaTomb).catch(() => {});
  return true;
}

/** True when the metadata is what the scan read and was not written since the GC started. */
function unreferencedSince(metaNow, scanned, started) {
  if (metaNow !== scanned) return false;
  try {
    const m = JSON.parse(metaNow);
    return !((m?.touchedAt ?? 0) >= started || (m?.lastRefAt ?? 0) >= started);
  } catch {
    return true;
  }
}

function readText(path) {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return null;
  }
}

/** Remove an inactive ref file unless lines were appended since the scan (then they are kept). */
async function removeRefFile(path, scannedBytes) {
  const tomb = `${path}.gc-${process.pid}-${randomBytes(4).toString("hex")}`;
  try {
    await rename(path, tomb);
  } catch {
    return;
  }
  const text = await readFile(tomb).catch(() => null);
  if (text && text.length > scannedBytes) {
    // An append raced the removal: keep the whole file (its appender may also write its line
    // again; a duplicate ref line is harmless).
    await appendFile(path, text, { mode: FILE_MODE, flag: "a" }).catch(() => {});
  }
  await unlink(tomb).catch(() => {});
}

/**
 * When each session was last active: the latest mtime of its journal, snapshot, folds and
 * lessons decision. `byRefName` maps sha1(session id) (a ref file keyed by the session id) to it;
 * `ofSession(id)` answers for any session id (through the core's directory name).
 */
async function sessionActivity(stateDir) {
  const dir = join(stateDir, "sessions");
  const byDir = new Map();
  const byRefName = new Map();
  for (const name of await listDir(dir)) {
    const d = join(dir, name);
    let t = 0;
    for (const f of ["journal.jsonl", "snapshot.json", "folds", "lessons.json"]) {
      try {
        t = Math.max(t, (await lstat(join(d, f))).mtimeMs);
      } catch {}
    }
    if (!t) continue;
    byDir.set(name, t);
    const ids = new Set([name.replace(/-[0-9a-f]{12}$/, "")]);
    try {
      const head = await readHead(join(d, "snapshot.json"), 4096);
      const m = /"sessionId":("(?:[^"\\]|\\.)*")/.exec(head);
      if (m) ids.add(JSON.parse(m[1]));
    } catch {}
    for (const id of ids) byRefName.set(sha1Hex(id), Math.max(t, byRefName.get(sha1Hex(id)) ?? 0));
  }
  let core = null;
  return {
    byRefName,
    async ofSession(id) {
      if (!byDir.size) return null;
      core ??= await import("./core.js").then((m) => m.loadCore());
      return byDir.get(core.sessionDirName(id)) ?? null;
    },
  };
}

async function readHead(path, n) {
  const fh = await open(path, C.O_RDONLY | NOFOLLOW | (C.O_NONBLOCK ?? 0));
  try {
    if (!(await fh.stat()).isFile()) return "";
    const buf = Buffer.alloc(n);
    const { bytesRead } = await fh.read(buf, 0, n, 0);
    return buf.toString("utf8", 0, bytesRead);
  } finally {
    await fh.close();
  }
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
