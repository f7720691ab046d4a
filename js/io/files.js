// The file primitives every other module uses: complete writes, atomic replacement, capped reads
// of regular files only (whole, head or tail), and a timeout for promises. Nothing else in js/
// calls writeSync or renames a temporary file itself.
import { randomUUID } from "node:crypto";
import { closeSync, constants as C, fstatSync, fsyncSync, linkSync, mkdirSync, openSync, readSync, realpathSync, renameSync, statSync, unlinkSync, writeSync, writevSync } from "node:fs";
import { dirname, sep } from "node:path";

export const DIR_MODE = 0o700;
export const FILE_MODE = 0o600;
export const NOFOLLOW = C.O_NOFOLLOW ?? 0;
const NONBLOCK = C.O_NONBLOCK ?? 0;

/** An error for a path cachefold refuses to use (a symlink, a FIFO, a device, outside its root). */
export function unsafe(message) {
  return Object.assign(new Error(message), { code: "CACHEFOLD_UNSAFE_PATH" });
}

export function ensureDir(dir) {
  mkdirSync(dir, { recursive: true, mode: DIR_MODE });
  return dir;
}

/**
 * Throw CACHEFOLD_UNSAFE_PATH unless `path` (when it exists) resolves inside `root`: a symlinked
 * directory would make every later write land outside the store.
 */
export function assertInside(root, path) {
  let real;
  try {
    real = realpathSync.native(path);
  } catch (err) {
    if (err.code === "ENOENT") return;
    throw err;
  }
  const top = realpathSync.native(root);
  if (real !== top && !real.startsWith(top + sep)) throw unsafe(`refusing ${path}: it resolves to ${real}, outside ${top}`);
}

/**
 * Write all of `data` (a string, bytes, or a list of byte chunks written in order with
 * `writev`, never joined into one copy) at the descriptor's position. A write may take fewer
 * bytes than asked (a disk filling up); the rest is written by further calls, and a call that
 * writes nothing is ENOSPC. Throws unless every byte was handed to the kernel.
 */
export function writeAll(fd, data) {
  let chunks = Array.isArray(data) ? data : [typeof data === "string" ? Buffer.from(data, "utf8") : data];
  let total = 0;
  for (const c of chunks) total += c.length;
  let off = 0;
  while (off < total) {
    const n = chunks.length === 1 ? writeSync(fd, chunks[0]) : writevSync(fd, chunks);
    if (!(n > 0)) throw Object.assign(new Error(`no space left on device: ${off} of ${total} bytes written`), { code: "ENOSPC" });
    off += n;
    // Drop what was written: whole chunks, then the front of a partly written one.
    let left = n;
    let k = 0;
    while (left > 0 && chunks[k].length <= left) left -= chunks[k++].length;
    chunks = chunks.slice(k);
    if (left > 0) chunks[0] = chunks[0].subarray(left);
  }
  return off;
}

export function fsyncDir(dir) {
  try {
    const fd = openSync(dir, C.O_RDONLY);
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  } catch {
    /* not supported on every platform */
  }
}

/**
 * Replace `path` atomically: a fresh temporary file (O_EXCL, never a planted link) gets every
 * byte and an fsync, then is renamed over `path` (or, with `exclusive`, linked to it: the call
 * fails with EEXIST when `path` exists, and nobody ever sees a half-written file). The
 * directory is created (0700) unless `mkdir` is false. `sync: false` skips the fsyncs (content
 * that may be lost in a power cut but never torn: the artifact store's hot path).
 */
export function writeFileAtomic(path, data, { mode = FILE_MODE, exclusive = false, mkdir = true, sync = true } = {}) {
  if (mkdir) mkdirSync(dirname(path), { recursive: true, mode: DIR_MODE });
  // randomUUID draws from a cached pool: a fraction of randomBytes' cost on every lock and write.
  const tmp = `${path}.tmp-${process.pid}-${randomUUID().slice(0, 8)}`;
  const fd = openSync(tmp, C.O_WRONLY | C.O_CREAT | C.O_EXCL | NOFOLLOW, mode);
  try {
    try {
      writeAll(fd, data);
      if (sync) fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    if (exclusive) linkSync(tmp, path);
    else renameSync(tmp, path);
    if (sync) fsyncDir(dirname(path));
  } finally {
    try {
      unlinkSync(tmp);
    } catch {
      /* renamed */
    }
  }
}

/** Up to `length` bytes from `position` of an open file (fewer at its end). */
function readFully(fd, length, position) {
  const buf = Buffer.alloc(length);
  let n = 0;
  for (let r; n < length && (r = readSync(fd, buf, n, length - n, position + n)) > 0; ) n += r;
  return buf.subarray(0, n);
}

/**
 * Read a file only when it is a regular file of at most `maxBytes`: opened without following a
 * final symlink (unless `follow`) and non-blocking, so a FIFO or a device never blocks the call,
 * then checked with fstat. Returns the text (or a Buffer with `encoding: null`), `fallback` when
 * the file is absent; throws CACHEFOLD_UNSAFE_PATH for a symlink, FIFO, device or directory and
 * CACHEFOLD_TOO_LARGE above the cap.
 */
export function readRegular(path, { maxBytes = 8 << 20, follow = false, encoding = "utf8", fallback = null } = {}) {
  let fd;
  try {
    fd = openSync(path, C.O_RDONLY | NONBLOCK | (follow ? 0 : NOFOLLOW));
  } catch (err) {
    if (err.code === "ENOENT" || err.code === "ENOTDIR") return fallback;
    if (err.code === "ELOOP") throw unsafe(`refusing to follow the symlink ${path}`);
    throw err;
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw unsafe(`refusing ${path}: not a regular file`);
    if (st.size > maxBytes) throw Object.assign(new Error(`refusing ${path}: ${st.size} bytes, more than ${maxBytes}`), { code: "CACHEFOLD_TOO_LARGE", size: st.size });
    // Read at most maxBytes + 1 whatever the size said (a file growing while it is read).
    const out = readFully(fd, Math.min(st.size, maxBytes) + 1, 0);
    if (out.length > maxBytes) throw Object.assign(new Error(`refusing ${path}: more than ${maxBytes} bytes`), { code: "CACHEFOLD_TOO_LARGE" });
    return encoding ? out.toString(encoding) : out;
  } finally {
    closeSync(fd);
  }
}

/**
 * The first `bytes` of a regular file as text, opened as readRegular opens it (no final
 * symlink, non-blocking); "" when it is absent, not a regular file or unreadable.
 */
export function readHead(path, bytes) {
  let fd;
  try {
    fd = openSync(path, C.O_RDONLY | NONBLOCK | NOFOLLOW);
  } catch {
    return "";
  }
  try {
    if (!fstatSync(fd).isFile()) return "";
    return readFully(fd, bytes, 0).toString("utf8");
  } catch {
    return "";
  } finally {
    closeSync(fd);
  }
}

/**
 * The last `bytes` of a log file (8 MiB), from its first whole line: read from the end, never the
 * whole file (a log grows without bound). A final symlink is followed (a configured log path may
 * be one) but the open never blocks and only a regular file is read. null when it cannot be read.
 */
export function readTail(path, bytes = 8 << 20) {
  let fd;
  try {
    fd = openSync(path, C.O_RDONLY | NONBLOCK);
  } catch {
    return null;
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) return null;
    const from = Math.max(0, st.size - bytes);
    const text = readFully(fd, st.size - from, from).toString("utf8");
    return from > 0 ? text.slice(text.indexOf("\n") + 1) : text;
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}

/** A regular file of any size, never through a final symlink; `fallback` when it is absent. */
export function readNoFollow(path, fallback = null) {
  return readRegular(path, { maxBytes: 2 ** 31, fallback });
}

/** The values of a JSON-lines text, in order; blank, torn and unparsable lines are skipped. */
export function jsonLines(text) {
  const out = [];
  for (const line of (text ?? "").split("\n")) {
    if (!line) continue;
    try {
      out.push(JSON.parse(line));
    } catch {}
  }
  return out;
}

/** The modification time of `path` (ms; a final symlink is followed), 0 when it cannot be read. */
export function mtimeMs(path) {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return 0;
  }
}

/** `promise`, or a rejection after `ms` (the timer never keeps the process alive). */
export function withTimeout(promise, ms, what = "call") {
  let timer;
  const limit = new Promise((_, reject) => {
    timer = setTimeout(() => reject(Object.assign(new Error(`${what} timed out after ${ms} ms`), { code: "CACHEFOLD_TIMEOUT" })), ms);
    timer.unref?.();
  });
  return Promise.race([promise, limit]).finally(() => clearTimeout(timer));
}
