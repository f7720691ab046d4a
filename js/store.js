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
//                   the heartbeat (see "locking" below)
//   lockq/          one ticket file per waiting call, served oldest first (fair waiting)
// Directories are 0700 and files 0600. Every file is opened with O_NOFOLLOW, and the session
// directory must resolve inside the state directory: a planted symlink is refused, not followed.
// The core decides what to write; this module only writes.
import {
  mkdirSync,
  fstatSync,
  openSync,
  closeSync,
  writeSync,
  readSync,
  fsyncSync,
  renameSync,
  readFileSync,
  unlinkSync,
  readdirSync,
  realpathSync,
  utimesSync,
  statSync,
  linkSync,
  constants as C,
} from "node:fs";
import { hostname } from "node:os";
import { randomBytes } from "node:crypto";
import { join, sep } from "node:path";

const DIR_MODE = 0o700;
const FILE_MODE = 0o600;
const NOFOLLOW = C.O_NOFOLLOW ?? 0;
const HEADER_PREFIX = '{"cachefold":"journal","gen":"';
/** A lock whose heartbeat is older than this is abandoned (holder hung or dead on another host). */
export const LEASE_MS = 5_000;
const HEARTBEAT_MS = 1_000;
/** Longest wait for a session lock before the call gives up (assemble then passes history through). */
export const LOCK_WAIT_MS = 10_000;
const POLL_MS = 10;

export function ensureDir(dir) {
  mkdirSync(dir, { recursive: true, mode: DIR_MODE });
  return dir;
}

export function unsafe(message) {
  return Object.assign(new Error(message), { code: "CACHEFOLD_UNSAFE_PATH" });
}

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

/**
 * Throw CACHEFOLD_UNSAFE_PATH unless `path` (when it exists) resolves inside `root`: a symlinked
 * session or folds directory would make every later write land outside the store.
 */
export function assertInside(root, path) {
  let real;
  try {
    real = realpathSync(path);
  } catch (err) {
    if (err.code === "ENOENT") return;
    throw err;
  }
  const top = realpathSync(root);
  if (real !== top && !real.startsWith(top + sep)) throw unsafe(`refusing ${path}: it resolves to ${real}, outside ${top}`);
}

/** Read a regular file without following a final symlink; `fallback` when it is absent. */
export function readNoFollow(path, fallback = null) {
  let fd;
  try {
    fd = openSync(path, C.O_RDONLY | NOFOLLOW);
  } catch (err) {
    if (err.code === "ENOENT") return fallback;
    if (err.code === "ELOOP") throw unsafe(`refusing to follow the symlink ${path}`);
    throw err;
  }
  try {
    if (!fstatSync(fd).isFile()) throw unsafe(`refusing ${path}: not a regular file`);
    return readFileSync(fd, "utf8");
  } finally {
    closeSync(fd);
  }
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

/**
 * Read snapshot (or null) and the journal's event lines. `stamp` = {gen, size} identifies the
 * journal file exactly (see journalStamp).
 */
export function readState(paths) {
  const snapshot = readNoFollow(paths.snapshot, null);
  const raw = readNoFollow(paths.journal, null);
  const { gen, body } = splitHeader(raw ?? "");
  return { snapshot, journal: body, stamp: { gen, size: raw == null ? -1 : Buffer.byteLength(raw) }, headerless: raw != null && gen == null && raw.length > 0 };
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

/**
 * Append journal lines; returns the journal's new stamp. A new journal starts with a header
 * line (fresh generation). `sync` fsyncs (commitTurn: the idempotency record must survive a
 * crash). Assemble's lines are not fsynced: losing them in a crash only means the next assemble
 * re-ingests those messages, and a torn last line is ignored by the replay.
 */
export function appendJournal(paths, text, sync = false) {
  if (!text) return journalStamp(paths);
  ensureDir(paths.dir);
  let fd;
  try {
    fd = openSync(paths.journal, C.O_WRONLY | C.O_APPEND | C.O_CREAT | NOFOLLOW, FILE_MODE);
  } catch (err) {
    if (err.code === "ELOOP") throw unsafe(`refusing to follow the symlink ${paths.journal}`);
    throw err;
  }
  try {
    let head = "";
    if (fstatSync(fd).size === 0) head = header();
    writeSync(fd, head + text);
    if (sync) fsyncSync(fd);
    const size = fstatSync(fd).size;
    return head ? { gen: splitHeader(head).gen, size } : { gen: undefined, size };
  } finally {
    closeSync(fd);
  }
}

function fsyncDir(dir) {
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

/** Atomically replace a file: write a fresh tmp (O_EXCL, never a planted link), fsync, rename. */
export function writeAtomic(path, text) {
  const tmp = `${path}.tmp-${process.pid}-${randomBytes(4).toString("hex")}`;
  const fd = openSync(tmp, C.O_WRONLY | C.O_CREAT | C.O_EXCL | NOFOLLOW, FILE_MODE);
  try {
    try {
      writeSync(fd, text);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, path);
  } catch (err) {
    try {
      unlinkSync(tmp);
    } catch {
      /* already renamed or gone */
    }
    throw err;
  }
}

/**
 * Write a snapshot and start a new journal generation (header only); returns its stamp. The
 * snapshot carries the event sequence number, so a crash between the two steps only leaves
 * journal lines the restore skips as already applied.
 */
export function writeSnapshot(paths, snapshotText) {
  // The snapshot replaces the journal: an empty or non-text one would lose the session.
  if (typeof snapshotText !== "string" || snapshotText.length === 0) {
    throw Object.assign(new Error("refusing to write an empty snapshot"), { code: "CACHEFOLD_STATE" });
  }
  ensureDir(paths.dir);
  writeAtomic(paths.snapshot, snapshotText);
  fsyncDir(paths.dir);
  const head = header();
  writeAtomic(paths.journal, head);
  fsyncDir(paths.dir);
  return { gen: splitHeader(head).gen, size: Buffer.byteLength(head) };
}

/** Store the raw JSON lines of a folded region (idempotent). */
export function writeFold(paths, foldId, text) {
  if (!/^[fc][0-9]{1,9}$/.test(foldId)) throw Object.assign(new Error(`bad fold id ${foldId}`), { code: "CACHEFOLD_INVALID_ID" });
  ensureDir(paths.folds);
  assertInside(paths.stateDir ?? paths.dir, paths.folds);
  const file = join(paths.folds, `${foldId}.jsonl`);
  if (readNoFollow(file, null) == null) writeAtomic(file, text);
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

// ---- locking -------------------------------------------------------------------------------
//
// One writer per session across processes, with a lease instead of a bare pid:
// - The holder creates `lock` with O_EXCL, naming {pid, start, host, token}; `token` is random
//   per acquisition and `start` is the process start time (Linux /proc), so a reused pid or a
//   restarted gateway with the same pid is recognised as a different process at once. While
//   holding, it touches the file every second (heartbeat); a lock whose heartbeat is older than
//   LEASE_MS is abandoned whatever its pid says.
// - Before writing, the holder checks the lock still carries its token (`lease.assert()`), so a
//   holder whose lease was broken (blocked for > LEASE_MS) never writes over the new holder.
// - Waiting is fair: each waiter drops a ticket `lockq/<ms>-<pid>-<start>-<token>` and only the
//   oldest live ticket may take the lock, so a holder that re-locks at once queues behind them.
//   Tickets of dead waiters (pid gone, or not touched for LEASE_MS) are removed by the others.
// Breaking a stale lock renames it aside first and checks it was the stale one (two breakers
// cannot delete each other's fresh lock).

const queues = new Map(); // in-process: one promise chain per session dir
const held = new Set(); // tokens this process holds now
const HOST = hostname();
let selfStart;

function procStart(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19] ?? "0";
  } catch (err) {
    return err.code === "ENOENT" && process.platform === "linux" ? null : "0";
  }
}

function myStart() {
  selfStart ??= procStart(process.pid) ?? "0";
  return selfStart;
}

/** True when the process named by (pid, start, host, token) certainly no longer holds anything. */
function ownerDead(pid, start, host, token) {
  if (!Number.isInteger(pid) || pid <= 0) return true;
  if (host && host !== HOST) return false; // another machine: only the lease can tell
  if (pid === process.pid && (!start || start === myStart())) return !held.has(token);
  try {
    process.kill(pid, 0);
  } catch (err) {
    if (err.code === "ESRCH") return true;
  }
  if (!start || start === "0") return false;
  const now = procStart(pid);
  return now === null || (now !== "0" && now !== start);
}

function readLock(lockPath) {
  try {
    const text = readNoFollow(lockPath, null);
    if (text == null) return null;
    const info = JSON.parse(text || "{}");
    return info && typeof info === "object" ? info : {};
  } catch (err) {
    if (err.code === "CACHEFOLD_UNSAFE_PATH") throw err;
    return {}; // torn write: judged by its age
  }
}

function ageMs(path) {
  try {
    return Date.now() - statSync(path).mtimeMs;
  } catch {
    return Infinity;
  }
}

function touch(path) {
  try {
    const t = new Date();
    utimesSync(path, t, t);
    return true;
  } catch {
    return false;
  }
}

function tryCreateLock(lockPath, token) {
  // Written in full under a private name, then linked into place: link() fails when the lock
  // exists, and nobody can ever read a half-written lock.
  const tmp = `${lockPath}.new-${token}`;
  const fd = openSync(tmp, C.O_WRONLY | C.O_CREAT | C.O_TRUNC | NOFOLLOW, FILE_MODE);
  try {
    writeSync(fd, JSON.stringify({ pid: process.pid, start: myStart(), host: HOST, token, at: Date.now() }));
  } finally {
    closeSync(fd);
  }
  try {
    linkSync(tmp, lockPath);
    return true;
  } catch (err) {
    if (err.code === "EEXIST") return false;
    throw err;
  } finally {
    try {
      unlinkSync(tmp);
    } catch {
      /* gone */
    }
  }
}

/** Break `lockPath` if it is (still) the stale lock `seen`; true when it was removed. */
function breakLock(lockPath, seen, myToken) {
  const aside = `${lockPath}.broken-${myToken}`;
  try {
    renameSync(lockPath, aside);
  } catch {
    return false; // gone already
  }
  const moved = readLock(aside);
  const same = !moved || moved.token === seen.token;
  if (!same) {
    // A fresh lock replaced the stale one between our read and the rename: put it back.
    try {
      linkSync(aside, lockPath);
    } catch {
      /* a newer lock exists; the displaced holder's lease.assert() fails and it writes nothing */
    }
  }
  try {
    unlinkSync(aside);
  } catch {
    /* raced */
  }
  return same;
}

function lockStale(lockPath, info) {
  if (!info) return false;
  if (ageMs(lockPath) > LEASE_MS) return true;
  return ownerDead(info.pid, info.start, info.host, info.token);
}

function parseTicket(name) {
  const m = /^(\d{15})-(\d+)-(\d+)-([0-9a-f]+)$/.exec(name);
  return m ? { name, pid: Number(m[2]), start: m[3], token: m[4] } : null;
}

/** The oldest live ticket's name (dead ones are removed on the way). */
function queueHead(queueDir) {
  let names;
  try {
    names = readdirSync(queueDir).sort();
  } catch {
    return null;
  }
  for (const name of names) {
    const t = parseTicket(name);
    const p = join(queueDir, name);
    if (!t) continue;
    const own = t.pid === process.pid && t.start === myStart();
    if (own ? held.has(t.token) : !ownerDead(t.pid, t.start, HOST, t.token) && ageMs(p) <= LEASE_MS) return name;
    try {
      unlinkSync(p);
    } catch {
      /* removed by another waiter */
    }
  }
  return null;
}

async function acquire(paths) {
  const token = randomBytes(8).toString("hex");
  const started = Date.now();
  held.add(token); // before the lock exists, so our own tickets/lock never look dead to us
  ensureDir(paths.queue);
  const ticket = join(paths.queue, `${String(Date.now()).padStart(15, "0")}-${process.pid}-${myStart()}-${token}`);
  closeSync(openSync(ticket, C.O_WRONLY | C.O_CREAT | C.O_EXCL | NOFOLLOW, FILE_MODE));
  let touched = Date.now();
  try {
    for (;;) {
      if (queueHead(paths.queue) === ticket.slice(paths.queue.length + 1)) {
        if (tryCreateLock(paths.lock, token)) return token;
        const info = readLock(paths.lock);
        if (lockStale(paths.lock, info) && breakLock(paths.lock, info, token)) continue;
      }
      if (Date.now() - started > LOCK_WAIT_MS) {
        const info = readLock(paths.lock);
        throw Object.assign(
          new Error(`session lock busy for ${LOCK_WAIT_MS / 1000} s: ${paths.lock} (holder pid ${info?.pid ?? "?"})`),
          { code: "CACHEFOLD_LOCKED" },
        );
      }
      if (Date.now() - touched > HEARTBEAT_MS / 2) {
        touch(ticket);
        touched = Date.now();
      }
      await new Promise((r) => setTimeout(r, POLL_MS));
    }
  } catch (err) {
    held.delete(token);
    throw err;
  } finally {
    try {
      unlinkSync(ticket);
    } catch {
      /* removed as dead by a waiter: we were blocked for > LEASE_MS */
    }
  }
}

function release(paths, token) {
  held.delete(token);
  const info = readLock(paths.lock);
  if (info?.token === token) {
    try {
      unlinkSync(paths.lock);
    } catch {
      /* already gone */
    }
  }
}

/**
 * Run fn(lease) with exclusive access to one session: serialised within this process and
 * guarded against other processes by the lease above. `lease.assert()` throws
 * CACHEFOLD_LOCK_LOST when the lock no longer carries this acquisition's token; call it right
 * before writing.
 */
export async function withSessionLock(paths, fn) {
  const prev = queues.get(paths.dir) ?? Promise.resolve();
  let releaseQueue;
  const mine = new Promise((r) => (releaseQueue = r));
  const chain = prev.then(() => mine);
  queues.set(paths.dir, chain);
  await prev;
  try {
    const root = paths.stateDir ?? paths.dir;
    // Checked before anything is created: a symlinked sessions/ or session dir is refused.
    assertInside(root, join(paths.dir, ".."));
    assertInside(root, paths.dir);
    ensureDir(paths.dir);
    assertInside(root, paths.dir);
    assertInside(root, paths.queue);
    const token = await acquire(paths);
    const beat = setInterval(() => touch(paths.lock), HEARTBEAT_MS);
    beat.unref?.();
    const lease = {
      token,
      assert() {
        const info = readLock(paths.lock);
        if (info?.token !== token) {
          throw Object.assign(new Error(`session lock lost (lease expired or broken): ${paths.lock}`), { code: "CACHEFOLD_LOCK_LOST" });
        }
      },
    };
    try {
      return await fn(lease);
    } finally {
      clearInterval(beat);
      release(paths, token);
    }
  } finally {
    releaseQueue();
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

