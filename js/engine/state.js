// One session's state as the engine keeps it: the per-process cache of restored core Sessions,
// the session lock, the journal and snapshots (through store.js), and the read-only views the
// agent tools and /cachefold use. Sessions are cached per process (Gateway mode) and reloaded
// from disk when another process wrote their journal.
import { loadCore } from "../core.js";
import * as store from "../store.js";

// Snapshot when the journal outgrows half the last snapshot (at least 256 KiB): replaying
// journal lines costs ~3× loading the same state from a snapshot, and a fresh process runs the
// wasm in its baseline tier, so a short journal keeps cold start low. Amortised, a turn still
// writes O(its new content): a snapshot of S bytes follows S/2 bytes of journal.
const SNAPSHOT_MIN_BYTES = 256 << 10;
const live = new Map(); // sessionId -> { session, core, stamp: journal {gen, size}, snapshotBytes }

export function nowMs() {
  return Date.now();
}

// Paths of the sessions this process serves, by state dir and session id: the same on every
// call (the directory name is a pure function of the id), built once instead of per call.
const pathCache = new Map();
const PATH_CACHE_MAX = 1024;

/** The loaded core and the on-disk paths of one session. */
export async function pathsFor(ctx, sessionId) {
  const core = await loadCore();
  const key = `${ctx.stateDir}\0${sessionId}`;
  let paths = pathCache.get(key);
  if (!paths) {
    paths = Object.freeze(store.sessionPaths(ctx.stateDir, core.sessionDirName(sessionId)));
    if (pathCache.size >= PATH_CACHE_MAX) pathCache.delete(pathCache.keys().next().value);
    pathCache.set(key, paths);
  }
  return { core, paths };
}

async function openSession(ctx, sessionId, paths) {
  // Loaded again inside the lock: a trap while waiting may have replaced the instance.
  const core = await loadCore();
  const cached = live.get(sessionId);
  // Trust the cache only when the journal is exactly the file this process last wrote or read:
  // its generation (new with every snapshot) and size (grows with every append) both match.
  // Anything else means another process wrote since, and appending on top of state this process
  // has not read would fork the sequence (issue 10, item 4).
  if (cached && cached.core === core && sameStamp(cached.stamp, store.journalStamp(paths))) {
    return { ...cached, paths };
  }
  cached?.session?.free?.();
  live.delete(sessionId);
  const { snapshot, journal, stamp, headerless } = store.readStateBytes(paths);
  const restored = core.Session.restore(ctx.configJson, sessionId, snapshot, journal);
  // synthetic: the texts of the last plan's synthetic messages by key (js/engine.js).
  const entry = { session: restored, core, stamp, snapshotBytes: snapshot ? snapshot.length : 0, synthetic: new Map() };
  const report = restored.replayReport();
  if (report?.ignoredBytes > 0 || headerless) {
    // A torn or corrupt tail (crash mid-append): lines appended after it would never replay,
    // so seal the consistent state now and start a clean journal. A journal without a
    // generation header (older versions) is sealed the same way.
    if (report?.ignoredBytes > 0) {
      ctx.log({ event: "journal_repaired", sessionId, ignoredBytes: report.ignoredBytes, stopped: report.stopped ?? null });
    }
    const snap = restored.snapshot();
    entry.stamp = store.writeSnapshot(paths, snap);
    entry.snapshotBytes = snap.length;
  }
  live.set(sessionId, entry);
  return { ...entry, paths };
}

function sameStamp(a, b) {
  return !!a && !!b && a.gen === b.gen && a.size === b.size;
}

// The journal is replaced by a snapshot when it would grow past this size (see above).
function snapshotDue(h) {
  return Math.max(SNAPSHOT_MIN_BYTES, h.snapshotBytes / 2);
}

// The journal's size before this call's lines (a new file starts with its header line).
function journalBase(h) {
  return h.stamp?.size > 0 ? h.stamp.size : store.JOURNAL_HEADER_BYTES;
}

// The journal bytes this call may append before a snapshot replaces them (persist): the core
// encodes no lines past it (a first ingest of a long history encodes none it would discard).
function journalLimit(h) {
  return Math.max(0, snapshotDue(h) - journalBase(h));
}

function persist(sessionId, h, sync, lease) {
  const pending = h.session.journalBytes();
  if (!pending) return;
  lease?.assert(); // never write once the lease was lost (another process may hold it now)
  let stamp;
  if (journalBase(h) + pending > snapshotDue(h)) {
    // A snapshot is due: it holds these events (and is fsynced, as a synced append would be),
    // so the journal append it would supersede at once is skipped. Should the snapshot fail,
    // the lines are appended as before and the failure is reported; when the core encoded no
    // lines past the limit (journalLimit), nothing is appended: withSession drops this handle,
    // and the next call restores the state on disk and ingests the host's messages again.
    try {
      const snap = h.session.snapshotBytes();
      stamp = store.writeSnapshot(h.paths, snap);
      h.session.dropJournal();
      h.snapshotBytes = snap.length;
    } catch (err) {
      let lines = null;
      try {
        lines = h.session.takeJournal();
      } catch {
        /* past the limit: only a snapshot could hold this call's events */
      }
      if (lines) store.appendJournal(h.paths, lines, sync);
      throw err;
    }
  } else {
    const appended = store.appendJournal(h.paths, h.session.takeJournal(), sync);
    stamp = { gen: appended.gen === undefined ? h.stamp?.gen : appended.gen, size: appended.size };
  }
  const entry = live.get(sessionId);
  if (entry) {
    entry.stamp = stamp;
    entry.snapshotBytes = h.snapshotBytes;
  }
}

export async function withSession(ctx, sessionId, fn, { sync = false } = {}) {
  const { paths } = await pathsFor(ctx, sessionId);
  return store.withSessionLock(paths, async (lease) => {
    const h = await openSession(ctx, sessionId, paths);
    try {
      h.session.setJournalLimit(journalLimit(h));
      const out = await fn(h);
      persist(sessionId, h, sync, lease);
      return out;
    } catch (err) {
      // Drop the cached handle: the next call reloads from disk, which holds every event
      // persisted so far. A trap has already dropped the wasm instance (core.js).
      live.delete(sessionId);
      try {
        h.session?.free?.();
      } catch {
        /* a trapped instance */
      }
      throw err;
    }
  });
}

// ---- read-only views for the agent tools (js/tools.js) ----------------------------------------

/** Stats of one session (as the core reports them), or null when the session is unknown. */
export async function sessionStats(ctx, sessionId) {
  return sessionView(ctx, sessionId, "stats");
}

/**
 * A read-only view of one session (`topicsView`, `preview`, `recoverPlan`): the core renders it
 * from the stored state. Null when the session has no state yet.
 */
export async function sessionView(ctx, sessionId, method, ...args) {
  const { core, paths } = await pathsFor(ctx, sessionId);
  const state = store.storedState(paths);
  if (!state) return null;
  const s = core.Session.restore(ctx.configJson, sessionId, state.snapshot, state.journal);
  try {
    return s[method](...args);
  } finally {
    s.free?.();
  }
}

/** `cachefold_pin`: journal a pin of turn `id` under the session lock; the core's answer. */
export async function pinTurn(ctx, sessionId, id) {
  const { paths } = await pathsFor(ctx, sessionId);
  if (!store.storedState(paths)) return null;
  const answer = await withSession(ctx, sessionId, async (h) => h.session.pinTurn(id));
  ctx.log?.({ event: "pin", sessionId, turn: id, pinned: answer?.details?.pinned ?? null });
  return answer;
}

/** Folded regions of a session as searchable documents. */
export async function foldedDocs(ctx, sessionId) {
  const { paths } = await pathsFor(ctx, sessionId);
  return store.listFolds(paths).map((id) => ({ id, kind: "fold", text: store.readFold(paths, id) ?? "" }));
}

/** Raw text of one folded region (JSON lines of the original messages), or null. */
export async function foldText(ctx, sessionId, foldId) {
  return store.readFold((await pathsFor(ctx, sessionId)).paths, foldId);
}

/**
 * Ask for a fold now (`/cachefold fold`): recorded through the core as compact() does
 * (compactRequest), emitted by the session's next assemble. Returns the core's answer.
 */
export async function requestFold(ctx, sessionId, { model = null } = {}) {
  const answer = await withSession(ctx, sessionId, async (h) => h.session.compactRequest(JSON.stringify({ model, tokenBudget: null, currentTokenCount: null, contextWindow: null, nowMs: nowMs() })));
  ctx.log({ event: "compact", sessionId, trigger: "command", answer });
  return answer;
}
