// Durable per-session state on disk: all of the engine's file I/O.
//
// Layout under <stateDir>/sessions/<safe name>/ (the safe name comes from the core):
//   journal.jsonl   append-only event lines produced by the core (write cost ∝ new content)
//   snapshot.json   whole state, written atomically (tmp + fsync + rename) when the journal grows
//   folds/<id>.jsonl raw host messages of each folded region (lossless recovery)
//   lock            cross-process lock file (pid + time), created with O_EXCL
// Directories are 0700 and files 0600. The core decides what to write; this module only writes.
import { mkdirSync, fstatSync, openSync, closeSync, writeSync, fsyncSync, renameSync, readFileSync, statSync, unlinkSync, existsSync, readdirSync } from "node:fs";
import { join } from "node:path";

const DIR_MODE = 0o700;
const FILE_MODE = 0o600;
const LOCK_STALE_MS = 30_000;
const LOCK_WAIT_MS = 10_000;

export function ensureDir(dir) {
  mkdirSync(dir, { recursive: true, mode: DIR_MODE });
  return dir;
}

/** Paths for one session; `safeName` must come from the core's sessionDirName(). */
export function sessionPaths(stateDir, safeName) {
  const dir = join(stateDir, "sessions", safeName);
  return {
    dir,
    journal: join(dir, "journal.jsonl"),
    snapshot: join(dir, "snapshot.json"),
    folds: join(dir, "folds"),
    lock: join(dir, "lock"),
  };
}

function readOr(path, fallback) {
  try {
    return readFileSync(path, "utf8");
  } catch (err) {
    if (err.code === "ENOENT") return fallback;
    throw err;
  }
}

/** Read snapshot (or null) and the journal text; `journalBytes` lets callers detect outside writes. */
export function readState(paths) {
  const snapshot = readOr(paths.snapshot, null);
  const journal = readOr(paths.journal, "");
  return { snapshot, journal, journalBytes: Buffer.byteLength(journal) };
}

/** Size of the journal file now (0 if absent). */
export function journalSize(paths) {
  try {
    return statSync(paths.journal).size;
  } catch {
    return 0;
  }
}

/**
 * Append journal lines; returns the new journal size. `sync` fsyncs (commitTurn: the
 * idempotency record must survive a crash). Assemble's lines are not fsynced: losing them in
 * a crash only means the next assemble re-ingests those messages, and a torn last line is
 * ignored by the replay, so the ~1-3 ms fsync stays off the per-call path.
 */
export function appendJournal(paths, text, sync = false) {
  if (!text) return journalSize(paths);
  ensureDir(paths.dir);
  const fd = openSync(paths.journal, "a", FILE_MODE);
  try {
    writeSync(fd, text);
    if (sync) fsyncSync(fd);
    return fstatSync(fd).size;
  } finally {
    closeSync(fd);
  }
}

/** Atomically replace a file: write tmp, fsync, rename. */
export function writeAtomic(path, text) {
  const tmp = `${path}.tmp-${process.pid}`;
  const fd = openSync(tmp, "w", FILE_MODE);
  try {
    writeSync(fd, text);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, path);
}

/**
 * Write a snapshot and start an empty journal. The snapshot carries the event sequence number,
 * so a crash between the two steps only leaves journal lines the restore skips as already applied.
 */
export function writeSnapshot(paths, snapshotText) {
  // The snapshot replaces the journal: an empty or non-text one would lose the session.
  if (typeof snapshotText !== "string" || snapshotText.length === 0) {
    throw Object.assign(new Error("refusing to write an empty snapshot"), { code: "CACHEFOLD_STATE" });
  }
  ensureDir(paths.dir);
  writeAtomic(paths.snapshot, snapshotText);
  writeAtomic(paths.journal, "");
}

/** Store the raw JSON lines of a folded region (idempotent). */
export function writeFold(paths, foldId, text) {
  if (!/^[fc][0-9]{1,9}$/.test(foldId)) throw Object.assign(new Error(`bad fold id ${foldId}`), { code: "CACHEFOLD_INVALID_ID" });
  ensureDir(paths.folds);
  const file = join(paths.folds, `${foldId}.jsonl`);
  if (!existsSync(file)) writeAtomic(file, text);
  return file;
}

/** Read one fold's raw text, or null. */
export function readFold(paths, foldId) {
  if (!/^[fc][0-9]{1,9}$/.test(foldId)) return null;
  return readOr(join(paths.folds, `${foldId}.jsonl`), null);
}

/** All fold ids stored for a session. */
export function listFolds(paths) {
  try {
    return readdirSync(paths.folds)
      .filter((f) => /^[fc][0-9]+\.jsonl$/.test(f))
      .map((f) => f.slice(0, -6))
      .sort((a, b) => Number(a.slice(1)) - Number(b.slice(1)));
  } catch {
    return [];
  }
}

// ---- locking -------------------------------------------------------------------------------

const queues = new Map(); // in-process: one promise chain per session dir

function pidAlive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return err.code === "EPERM";
  }
}

function tryLock(lockPath) {
  try {
    const fd = openSync(lockPath, "wx", FILE_MODE);
    writeSync(fd, JSON.stringify({ pid: process.pid, at: Date.now() }));
    closeSync(fd);
    return true;
  } catch (err) {
    if (err.code !== "EEXIST") throw err;
    // Break a stale lock: holder gone, or older than LOCK_STALE_MS.
    try {
      const info = JSON.parse(readFileSync(lockPath, "utf8") || "{}");
      if (!pidAlive(info.pid) || Date.now() - (info.at ?? 0) > LOCK_STALE_MS) {
        unlinkSync(lockPath);
        return tryLock(lockPath);
      }
    } catch {
      // Unreadable lock file (torn write): treat as stale.
      try {
        unlinkSync(lockPath);
      } catch {
        /* raced with another breaker */
      }
    }
    return false;
  }
}

/**
 * Run fn with exclusive access to one session: serialised within this process and guarded
 * against other processes by an O_EXCL lock file.
 */
export async function withSessionLock(paths, fn) {
  const prev = queues.get(paths.dir) ?? Promise.resolve();
  let release;
  const mine = new Promise((r) => (release = r));
  const chain = prev.then(() => mine);
  queues.set(paths.dir, chain);
  await prev;
  ensureDir(paths.dir);
  const started = Date.now();
  try {
    while (!tryLock(paths.lock)) {
      if (Date.now() - started > LOCK_WAIT_MS) {
        throw Object.assign(new Error(`session lock busy: ${paths.lock}`), { code: "CACHEFOLD_LOCKED" });
      }
      await new Promise((r) => setTimeout(r, 25));
    }
    try {
      return await fn();
    } finally {
      try {
        unlinkSync(paths.lock);
      } catch {
        /* already gone */
      }
    }
  } finally {
    release();
    if (queues.get(paths.dir) === chain) queues.delete(paths.dir);
  }
}

/** Append one JSON line to the decision log (best effort, never throws). */
export function logLine(file, obj) {
  if (!file) return;
  try {
    const fd = openSync(file, "a", FILE_MODE);
    try {
      writeSync(fd, `${JSON.stringify({ at: new Date().toISOString(), ...obj })}\n`);
    } finally {
      closeSync(fd);
    }
  } catch {
    /* logging must never break a turn */
  }
}

