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
// Garbage collection: js/artifacts/gc.js.
//
// The write path is synchronous (tool_result_persist is synchronous in OpenClaw): one
// existsSync, one tmp write + rename for new content, one small metadata rewrite, one append.
import { createHash } from "node:crypto";
import { chmodSync, closeSync, constants as C, existsSync, fstatSync, lstatSync, mkdirSync, openSync } from "node:fs";
import { dirname, join, resolve, sep } from "node:path";
import { assertInside, DIR_MODE, FILE_MODE, jsonLines, NOFOLLOW, readNoFollow, unsafe, writeAll, writeFileAtomic } from "./io/files.js";

const META_REFS = 16;
const ID_RE = /^[0-9a-f]{40}$/;

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

/** Throw unless the store resolves inside the state dir and `path`'s directory inside the store (no symlinked dirs). */
function assertInStore(stateDir, path) {
  assertInside(stateDir, storeRoot(stateDir));
  assertInside(storeRoot(stateDir), dirname(path));
}

function isRegularFile(path) {
  try {
    return lstatSync(path).isFile();
  } catch {
    return false;
  }
}

/** Store files are written whole but without fsync (the hot path; see io/files.js). */
const STORE_WRITE = { mkdir: false, sync: false };

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
    writeFileAtomic(path, buf, STORE_WRITE);
    created = true;
  }
  recordRef(stateDir, id, path, { ...ref, bytes, chars: ref.originalChars });
  // A GC in another process may have evicted it between the check and the reference.
  if (!isRegularFile(path)) {
    writeFileAtomic(path, buf, STORE_WRITE);
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
  if (!isRegularFile(path)) writeFileAtomic(path, buf, STORE_WRITE);
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
  writeFileAtomic(`${path}.json`, JSON.stringify(meta), STORE_WRITE);
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
  return jsonLines(text).filter((r) => isArtifactId(r?.id));
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
