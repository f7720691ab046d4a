// Durable per-session state on disk: all of the engine's file I/O.
//
// Layout under <stateDir>/sessions/<safe name>/ (the safe name comes from the core):
//   journal.jsonl   a header line {"cachefold":"journal","gen":"<hex>"} then append-only event
//                   lines produced by the core (write cost ∝ new content). `gen` is random per
//                   journal file: (gen, size) changes on every write, so a process knows whether
//                   its cached state is what is on disk (the size alone repeats after a snapshot).
//   snapshot.json   whole state, written atomically (tmp + fsync + rename) when the journal grows
//   folds/<id>.jsonl raw host messages of each folded region (lossless recovery)
//   lock            the lease of the current holder: {pid, start, host, token, at}; its mtime is
//                   the heartbeat (see io/lock.js)
//   lockq/          one ticket file per waiting call, served oldest first (fair waiting)
// Directories are 0700 and files 0600. Every file is opened with O_NOFOLLOW, and the session
// directory must resolve inside the state directory: a planted symlink is refused, not followed.
// The core decides what to write; this module only writes.
import { fstatSync, openSync, closeSync, readSync, fsyncSync, readdirSync, ftruncateSync, constants as C } from "node:fs";
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { assertInside, ensureDir, FILE_MODE, NOFOLLOW, readNoFollow, readRegular, unsafe, writeAll, writeFileAtomic } from "./io/files.js";

export { assertInside, ensureDir, readNoFollow, unsafe, writeAll } from "./io/files.js";
export { LEASE_MS, LOCK_WAIT_MS, withSessionLock } from "./io/lock.js";
export { logLine } from "./io/log.js";

const HEADER_PREFIX = '{"cachefold":"journal","gen":"';

/** Paths for one session; `safeName` must come from the core's sessionDirName(). */
export function sessionPaths(stateDir, safeName) {
  const dir = join(stateDir, "sessions", safeName);
  return {
    stateDir,
    dir,
    journal: join(dir, "journal.jsonl"),
    snapshot: join(dir, "snapshot.json"),
    folds: join(dir, "folds"),
    lock: join(dir, "lock"),
    queue: join(dir, "lockq"),
  };
}

function splitHeader(text) {
  if (!text.startsWith(HEADER_PREFIX)) return { gen: null, body: text };
  const nl = text.indexOf("\n");
  if (nl < 0) return { gen: null, body: "" }; // torn header: nothing after it was written
  let gen = null;
  try {
    gen = JSON.parse(text.slice(0, nl)).gen ?? null;
  } catch {
    /* torn header */
  }
  return { gen, body: text.slice(nl + 1) };
}

const NEWLINE = 0x0a;

/**
 * The snapshot and the journal's event lines as the files' bytes (Buffers; the
 * journal's a view past its header line): what the core restores from, copied into it in one
 * piece and decoded there (invalid UTF-8 replaced as Node's "utf8" decoding replaces it, so
 * both forms restore the same state). `snapshot` is null when absent; `journal` is empty when
 * absent. `stamp` = {gen, size} identifies the journal file exactly (see journalStamp).
 */
export function readStateBytes(paths) {
  const snapshot = readRegular(paths.snapshot, { maxBytes: 2 ** 31, encoding: null, fallback: null });
  const raw = readRegular(paths.journal, { maxBytes: 2 ** 31, encoding: null, fallback: null });
  let gen = null;
  let journal = raw ?? Buffer.alloc(0);
  // The header line is short: only its first bytes are decoded.
  if (raw && raw.length >= HEADER_PREFIX.length && raw.toString("latin1", 0, HEADER_PREFIX.length) === HEADER_PREFIX) {
    const nl = raw.indexOf(NEWLINE);
    if (nl < 0) journal = raw.subarray(raw.length);
    else {
      gen = splitHeader(raw.toString("utf8", 0, nl + 1)).gen;
      journal = raw.subarray(nl + 1);
    }
  }
  return { snapshot, journal, stamp: { gen, size: raw == null ? -1 : raw.length }, headerless: raw != null && gen == null && raw.length > 0 };
}

/** readStateBytes, or null when the session has no state yet (no snapshot, no journal line). */
export function storedState(paths) {
  const state = readStateBytes(paths);
  return state.snapshot?.length || state.journal.length ? state : null;
}

/** {gen, size} of the journal now ({null, -1} if absent): changes on every append and snapshot. */
export function journalStamp(paths) {
  let fd;
  try {
    fd = openSync(paths.journal, C.O_RDONLY | NOFOLLOW);
  } catch (err) {
    if (err.code === "ENOENT") return { gen: null, size: -1 };
    if (err.code === "ELOOP") throw unsafe(`refusing to follow the symlink ${paths.journal}`);
    throw err;
  }
  try {
    const size = fstatSync(fd).size;
    const buf = Buffer.alloc(96);
    const n = readSync(fd, buf, 0, buf.length, 0);
    return { gen: splitHeader(buf.toString("utf8", 0, n)).gen, size };
  } finally {
    closeSync(fd);
  }
}

function header() {
  return `${HEADER_PREFIX}${randomBytes(8).toString("hex")}"}\n`;
}

/** Bytes of the header line a new journal file starts with (every generation's has the same length). */
export const JOURNAL_HEADER_BYTES = Buffer.byteLength(header());

/**
 * Append journal lines; returns the journal's new stamp. A new journal starts with a header
 * line (fresh generation). `sync` fsyncs (commitTurn: the idempotency record must survive a
 * crash). Assemble's lines are not fsynced: losing them in a crash only means the next assemble
 * re-ingests those messages, and a torn last line is ignored by the replay.
 */
export function appendJournal(paths, text, sync = false) {
  if (!text) return journalStamp(paths);
  const open = () => openSync(paths.journal, C.O_WRONLY | C.O_APPEND | C.O_CREAT | NOFOLLOW, FILE_MODE);
  let fd;
  try {
    try {
      fd = open();
    } catch (err) {
      if (err.code !== "ENOENT") throw err;
      ensureDir(paths.dir); // the session directory is gone (or never was): created again
      fd = open();
    }
  } catch (err) {
    if (err.code === "ELOOP") throw unsafe(`refusing to follow the symlink ${paths.journal}`);
    throw err;
  }
  try {
    const before = fstatSync(fd).size;
    const head = before === 0 ? header() : "";
    let size;
    try {
      // The size this call knows of: what was there plus its own bytes (under the session lock
      // nobody else appends; if someone did, the stamp differs from the file and the next call
      // reloads it).
      size = before + writeAll(fd, head + text);
      if (sync) fsyncSync(fd);
    } catch (err) {
      // Not all of it reached the disk: cut the partial lines off again, so the journal never
      // holds a torn record that was answered as failed (the caller reports the turn as not
      // recorded, and the next call reloads from this exact file).
      try {
        ftruncateSync(fd, before);
      } catch {
        /* the replay ignores a torn last line */
      }
      throw err;
    }
    return head ? { gen: splitHeader(head).gen, size } : { gen: undefined, size };
  } finally {
    closeSync(fd);
  }
}

/**
 * Write a snapshot and start a new journal generation (header only); returns its stamp. The
 * snapshot carries the event sequence number, so a crash between the two steps only leaves
 * journal lines the restore skips as already applied.
 */
export function writeSnapshot(paths, snapshotText) {
  // The snapshot replaces the journal: an empty or non-text one would lose the session. Text or
  // the core's UTF-8 bytes (snapshotBytes) are accepted.
  if (!(typeof snapshotText === "string" || snapshotText instanceof Uint8Array) || snapshotText.length === 0) {
    throw Object.assign(new Error("refusing to write an empty snapshot"), { code: "CACHEFOLD_STATE" });
  }
  ensureDir(paths.dir);
  writeFileAtomic(paths.snapshot, snapshotText, { mkdir: false });
  const head = header();
  writeFileAtomic(paths.journal, head, { mkdir: false });
  return { gen: splitHeader(head).gen, size: Buffer.byteLength(head) };
}

/** Store the raw JSON lines of a folded region (idempotent). */
export function writeFold(paths, foldId, text) {
  if (!/^[fc][0-9]{1,9}$/.test(foldId)) throw Object.assign(new Error(`bad fold id ${foldId}`), { code: "CACHEFOLD_INVALID_ID" });
  ensureDir(paths.folds);
  assertInside(paths.stateDir ?? paths.dir, paths.folds);
  const file = join(paths.folds, `${foldId}.jsonl`);
  if (readNoFollow(file, null) == null) writeFileAtomic(file, text, { mkdir: false });
  return file;
}

/** Read one fold's raw text, or null. */
export function readFold(paths, foldId) {
  if (!/^[fc][0-9]{1,9}$/.test(foldId)) return null;
  try {
    assertInside(paths.stateDir ?? paths.dir, paths.folds);
    return readNoFollow(join(paths.folds, `${foldId}.jsonl`), null);
  } catch (err) {
    if (err.code === "CACHEFOLD_UNSAFE_PATH") return null;
    throw err;
  }
}

/** All fold ids stored for a session. */
export function listFolds(paths) {
  try {
    assertInside(paths.stateDir ?? paths.dir, paths.folds);
    return readdirSync(paths.folds)
      .filter((f) => /^[fc][0-9]+\.jsonl$/.test(f))
      .map((f) => f.slice(0, -6))
      .sort((a, b) => Number(a.slice(1)) - Number(b.slice(1)));
  } catch {
    return [];
  }
}
