// One writer per session across processes: the session lock (a lease with a heartbeat and a
// fair queue of waiters). store.js re-exports withSessionLock; nothing else locks.
import { closeSync, constants as C, linkSync, openSync, readdirSync, readFileSync, realpathSync, renameSync, statSync, unlinkSync, utimesSync } from "node:fs";
import { hostname } from "node:os";
import { randomUUID } from "node:crypto";
import { join, relative } from "node:path";
import { assertInside, ensureDir, FILE_MODE, NOFOLLOW, readRegular, writeFileAtomic } from "./files.js";

/** A lock whose heartbeat is older than this is abandoned (holder hung or dead on another host). */
export const LEASE_MS = 5_000;
const HEARTBEAT_MS = 1_000;
/** Longest wait for a session lock before the call gives up (assemble then passes history through). */
export const LOCK_WAIT_MS = 10_000;
const POLL_MS = 10;

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
// - When no ticket is queued, a call tries the lock at once without dropping a ticket of its
//   own (the ticket would be the only one, so the head at once): a waiter that queues meanwhile
//   simply comes after it, as if it had queued a moment later. With any ticket queued (a
//   waiter, or a dead one still to be removed) the call queues as above.

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
    // A lock is ~100 bytes: a larger file is not one this code wrote (read as torn).
    const text = readRegular(lockPath, { maxBytes: 4096, fallback: null });
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
  // Written in full under a private name, then linked into place (writeFileAtomic, exclusive):
  // the link fails when the lock exists, and nobody can ever read a half-written lock.
  try {
    writeFileAtomic(lockPath, JSON.stringify({ pid: process.pid, start: myStart(), host: HOST, token, at: Date.now() }), { exclusive: true, mkdir: false, sync: false });
    return true;
  } catch (err) {
    if (err.code === "EEXIST") return false;
    throw err;
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

/** True when `queueDir` holds no ticket (live or dead) and can be read. */
function queueEmpty(queueDir) {
  try {
    return !readdirSync(queueDir).some((name) => parseTicket(name));
  } catch {
    return false;
  }
}

async function acquire(paths, queueExists = false) {
  // 16 hex digits (60 random bits: randomUUID's pooled draw, not a fresh randomBytes call).
  const token = randomUUID().replaceAll("-", "").slice(0, 16);
  const started = Date.now();
  held.add(token); // before the lock exists, so our own tickets/lock never look dead to us
  // Nobody queued: no ticket needed (see above). Any failure takes the queued path.
  try {
    if (queueExists && queueEmpty(paths.queue) && tryCreateLock(paths.lock, token)) return token;
  } catch {
    /* the queued path below reports what is wrong */
  }
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

// `root\0path` -> the real path `path` must resolve to (the real path of `root` joined with
// the rest), remembered; any mismatch forgets it, so a moved state dir is looked up again.
const inPlacePaths = new Map();

/**
 * True when `path` exists and resolves to itself under the real path of `root` (no component
 * below `root` is a symlink leading elsewhere). False when it does not exist or resolves
 * anywhere else: the caller then runs its full checks. The real path of `root` is remembered;
 * a stale one only makes this answer false.
 */
export function resolvesInPlace(root, path) {
  const key = `${root}\0${path}`;
  try {
    let want = inPlacePaths.get(key);
    if (want === undefined) {
      const rel = relative(root, path);
      if (!rel || rel.startsWith("..")) return false;
      want = join(realpathSync.native(root), rel);
      if (inPlacePaths.size >= 1024) inPlacePaths.clear();
      inPlacePaths.set(key, want);
    }
    if (realpathSync.native(path) === want) return true;
  } catch {
    /* absent or unreadable: not in place */
  }
  inPlacePaths.delete(key);
  return false;
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
    // The session's directories exist where they should: the queue directory resolves to its
    // own path under the real state directory, so neither sessions/, the session dir nor lockq/
    // is a symlink leading elsewhere (one realpath instead of the four checks below).
    const inPlace = resolvesInPlace(root, paths.queue);
    if (!inPlace) {
      // Checked before anything is created: a symlinked sessions/ or session dir is refused.
      assertInside(root, join(paths.dir, ".."));
      assertInside(root, paths.dir);
      ensureDir(paths.dir);
      assertInside(root, paths.dir);
      assertInside(root, paths.queue);
    }
    const token = await acquire(paths, inPlace);
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
