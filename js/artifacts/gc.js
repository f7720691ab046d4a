// Artifact garbage collection: the size budget and the live set of the store (js/artifacts.js).
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
import { randomBytes } from "node:crypto";
import { linkSync, readFileSync, renameSync, unlinkSync } from "node:fs";
import { appendFile, lstat, readdir, readFile, rename, stat, unlink } from "node:fs/promises";
import { join } from "node:path";
import { isArtifactId, sha1Hex, storeRoot } from "../artifacts.js";
import { FILE_MODE, readHead } from "../io/files.js";
import { sessionPaths } from "../store.js";

export const LIVE_SESSION_DAYS = 30;
export const GC_INTERVAL_MS = 60_000;
const DAY_MS = 86_400_000;
const SHARD_RE = /^[0-9a-f]{2}$/;
const REFS_RE = /^[0-9a-f]{40}\.jsonl$/;

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
  for await (const { id, path, st } of storedArtifacts(stateDir)) {
    const metaText = await readFile(`${path}.json`, "utf8").catch(() => null);
    let meta = null;
    try {
      meta = JSON.parse(metaText);
    } catch {}
    const lastRefAt = Number.isFinite(meta?.lastRefAt) ? meta.lastRefAt : st.mtimeMs;
    all.push({ id, path, bytes: st.size, lastRefAt, metaText });
    report.bytesBefore += st.size;
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

/** Every artifact file of the store (`<2 hex>/<40 hex>`, metadata left out) with its stat: {id, path, st}. */
export async function* storedArtifacts(stateDir) {
  const root = storeRoot(stateDir);
  for (const shard of await listDir(root)) {
    if (!SHARD_RE.test(shard)) continue;
    for (const id of await listDir(join(root, shard))) {
      if (!isArtifactId(id) || !id.startsWith(shard)) continue;
      const path = join(root, shard, id);
      const st = await stat(path).catch(() => null);
      if (st) yield { id, path, st };
    }
  }
}

/** Count and total size of the artifact files in the store. */
export async function storeSize(stateDir) {
  let count = 0;
  let bytes = 0;
  for await (const { st } of storedArtifacts(stateDir)) {
    count += 1;
    bytes += st.size;
  }
  return { count, bytes, path: storeRoot(stateDir) };
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
  const byDir = new Map();
  const byRefName = new Map();
  for (const name of await listDir(join(stateDir, "sessions"))) {
    const p = sessionPaths(stateDir, name);
    let t = 0;
    for (const f of [p.journal, p.snapshot, p.folds, join(p.dir, "lessons.json")]) {
      try {
        t = Math.max(t, (await lstat(f)).mtimeMs);
      } catch {}
    }
    if (!t) continue;
    byDir.set(name, t);
    const ids = new Set([name.replace(/-[0-9a-f]{12}$/, "")]);
    try {
      const head = readHead(p.snapshot, 4096);
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
      core ??= await import("../core.js").then((m) => m.loadCore());
      return byDir.get(core.sessionDirName(id)) ?? null;
    },
  };
}

async function listDir(dir) {
  try {
    return (await readdir(dir)).sort();
  } catch {
    return [];
  }
}
