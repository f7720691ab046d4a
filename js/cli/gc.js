// `openclaw cachefold gc`, `export` and `restore`. gc deletes; nothing is deleted without an
// explicit `--yes`, and `--dry-run` only reports. export and restore write a new file atomically
// and never replace an existing one unless `--force`.
import { existsSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { loadCore } from "../core.js";
import * as store from "../store.js";
import { artifactMeta, readArtifact, sessionArtifactIds } from "../artifacts.js";
import { collectGarbage } from "../artifacts/gc.js";
import { jsonLines, writeFileAtomic } from "../io/files.js";
import { agentStores, hostStateDir, openTranscriptStore } from "../host/openclaw.js";
import { EXIT, intFlag, NotFound, UsageError } from "./args.js";
import { findSession, readSession } from "./sessions.js";

/** Write an output file atomically; one the user named (--out) is never replaced without --force. */
function writeOutput(path, text, opts) {
  try {
    writeFileAtomic(path, text, { mode: 0o600, exclusive: opts.out !== undefined && opts.force !== true });
  } catch (err) {
    if (err.code === "EEXIST") throw new UsageError(`${path} exists; choose another --out or add --force to replace it`);
    throw err;
  }
}

const OWNED = ["sessions", "artifacts", "lessons", "reports", "exports", "restored"];

async function gcRun({ values }, io) {
  const ctx = io.ctx;
  const dry = values["dry-run"] === true;
  if (values.all) {
    const present = OWNED.map((d) => join(ctx.stateDir, d)).filter((p) => existsSync(p));
    const list = present.map((p) => p.slice(ctx.stateDir.length + 1)).join(", ") || "nothing yet";
    if (dry) {
      io.o.out({ dryRun: true, wouldRemove: present, stateDir: ctx.stateDir }, `dry run: gc --all would remove ${list} under ${ctx.stateDir}`);
      return EXIT.ok;
    }
    if (values.yes !== true) {
      io.o.err(`gc --all removes everything cachefold stored under ${ctx.stateDir} (${list}); add --yes to confirm`);
      return EXIT.usage;
    }
    for (const p of present) rmSync(p, { recursive: true, force: true });
    io.o.out({ removed: present, stateDir: ctx.stateDir }, present.length ? present.map((p) => `removed ${p}`).join("\n") : "nothing to remove");
    return EXIT.ok;
  }
  if (values.yes) throw new UsageError("--yes confirms gc --all; a plain gc evicts within the size budget and needs no confirmation");
  const maxBytes = intFlag(values, "max-bytes", { min: 0, fallback: ctx.config.artifacts?.maxBytes });
  const r = await collectGarbage(ctx.stateDir, { maxBytes, dryRun: dry });
  io.o.out(r, `${dry ? "dry run: " : ""}scanned ${r.scanned} artifacts, ${r.bytesBefore} → ${r.bytesAfter} bytes; ${dry ? "would evict" : "evicted"} ${r.evicted.length}; kept ${r.liveKept} referenced by live sessions${r.overBudget ? " (still over budget: live references)" : ""}`);
  return EXIT.ok;
}

/**
 * Which artifacts a session may export or restore: those its own reference files name (by
 * session id and the given session keys), and one named by a shrunk tool result whose tool call
 * the artifact's metadata records. A preview of another session's artifact quoted in this one
 * (pasted, read from a file) matches neither.
 */
export function artifactOwner(stateDir, keys) {
  const own = new Set(keys.filter(Boolean).flatMap((k) => sessionArtifactIds(stateDir, k)));
  return (id, callId) => {
    if (own.has(id)) return true;
    if (typeof callId !== "string" || !callId) return false;
    try {
      return (artifactMeta(stateDir, id)?.refs ?? []).some((r) => r?.callId === callId);
    } catch {
      return false;
    }
  };
}

/** [id, toolCallId] of every shrunk tool result in a fold's raw message lines. */
function foldPreviews(core, text) {
  const out = [];
  for (const m of jsonLines(text)) {
    if (m?.role !== "toolResult" || !Array.isArray(m.content)) continue;
    for (const part of m.content) {
      const id = part?.type === "text" && typeof part.text === "string" ? core.isShrunk(part.text) : null;
      if (id) out.push([id, m.toolCallId ?? null]);
    }
  }
  return out;
}

async function exportRun({ values: opts, positionals: pos }, io) {
  const ctx = io.ctx;
  const s = await findSession(ctx.stateDir, pos[0]);
  if (!s) throw new NotFound(`no cachefold session matches ${pos[0]}`);
  const { stats, snapshot, paths } = await readSession(ctx, s);
  const core = await loadCore();
  const owns = artifactOwner(ctx.stateDir, [s.sessionId, opts["session-key"]]);
  const folds = {};
  const ids = new Set();
  const foreign = new Set();
  for (const id of store.listFolds(paths)) {
    folds[id] = store.readFold(paths, id) ?? "";
    for (const [aid, callId] of foldPreviews(core, folds[id])) (owns(aid, callId) ? ids : foreign).add(aid);
  }
  for (const key of [s.sessionId, opts["session-key"]].filter(Boolean)) for (const id of sessionArtifactIds(ctx.stateDir, key)) ids.add(id);
  for (const id of ids) foreign.delete(id);
  const artifacts = {};
  const missing = [];
  for (const id of ids) {
    const t = readArtifact(ctx.stateDir, id);
    if (t == null) missing.push(id);
    else artifacts[id] = t;
  }
  const bundle = { format: "cachefold-export", version: 1, sessionId: s.sessionId, exportedAt: new Date().toISOString(), stats, state: JSON.parse(snapshot), folds, artifacts, missingArtifacts: missing, notThisSession: foreign.size };
  const out = resolve(opts.out ?? join(ctx.stateDir, "exports", `${s.name}.json`));
  writeOutput(out, JSON.stringify(bundle), opts);
  io.o.out({ path: out, sessionId: s.sessionId, folds: Object.keys(folds).length, artifacts: Object.keys(artifacts).length, missingArtifacts: missing.length }, `wrote ${out} (${Object.keys(folds).length} folds, ${Object.keys(artifacts).length} artifacts${missing.length ? `, ${missing.length} missing` : ""}${foreign.size ? `, ${foreign.size} named in the text but not this session's: left out` : ""})`);
  return EXIT.ok;
}

/**
 * Replace every shrunk preview in a transcript event by its artifact's original text; with
 * `owns` (artifactOwner), only the previews of this session's own artifacts.
 */
export function restoreEvent(core, stateDir, event, counts, owns = null) {
  const content = event?.message?.content;
  if (!Array.isArray(content)) return event;
  let changed = false;
  const next = content.map((part) => {
    if (part?.type !== "text" || typeof part.text !== "string") return part;
    const id = core.isShrunk(part.text);
    if (!id) return part;
    if (owns && !owns(id, event?.message?.role === "toolResult" ? event.message.toolCallId : null)) {
      counts.foreign = (counts.foreign ?? 0) + 1;
      return part;
    }
    const original = readArtifact(stateDir, id);
    if (original == null) {
      counts.missing.push(id);
      return part;
    }
    counts.restored += 1;
    changed = true;
    return { ...part, text: original };
  });
  return changed ? { ...event, message: { ...event.message, content: next } } : event;
}

async function restoreRun({ values: opts, positionals: pos }, io) {
  const ctx = io.ctx;
  const sessionId = pos[0];
  const core = await loadCore();
  const dbs = opts.db ? [resolve(opts.db)] : agentStores(hostStateDir(), opts.agent ?? null).map((a) => a.path);
  for (const db of dbs) {
    const st = await openTranscriptStore(db);
    if (!st) {
      io.o.err(`restore reads OpenClaw's SQLite transcript with node:sqlite, which needs Node >= 22.5 (this is ${process.version}; OpenClaw itself runs on Node 24)`);
      return EXIT.error;
    }
    const counts = { events: 0, restored: 0, missing: [], foreign: 0 };
    const owns = artifactOwner(ctx.stateDir, [sessionId, opts["session-key"]]);
    const lines = [];
    try {
      for (const { event } of st.events(sessionId)) {
        counts.events += 1;
        if (event) lines.push(JSON.stringify(restoreEvent(core, ctx.stateDir, event, counts, owns)));
      }
    } finally {
      st.close();
    }
    if (!counts.events) continue;
    const out = resolve(opts.out ?? join(ctx.stateDir, "restored", `${core.sessionDirName(sessionId)}.jsonl`));
    writeOutput(out, `${lines.join("\n")}\n`, opts);
    io.o.out({ path: out, db, sessionId, events: counts.events, restored: counts.restored, missing: counts.missing, notThisSession: counts.foreign }, `wrote ${out}: ${counts.events} events, ${counts.restored} previews replaced by their originals${counts.missing.length ? `, ${counts.missing.length} artifacts missing` : ""} (the host database ${db} was only read)`);
    return EXIT.ok;
  }
  io.o.err(`no transcript of session ${sessionId} in ${dbs.length ? dbs.join(", ") : `${join(hostStateDir(), "agents")}/*/agent/openclaw-agent.sqlite`}`);
  return EXIT.notFound;
}

export const gcCommand = {
  description: "evict artifacts over the size budget (live sessions kept); --all --yes removes everything",
  usage: "gc [--max-bytes N] [--dry-run] | gc --all --yes [--dry-run]",
  options: { all: { type: "boolean" }, yes: { type: "boolean" }, "dry-run": { type: "boolean" }, "max-bytes": { type: "string" } },
  run: gcRun,
};
export const exportCommand = {
  description: "one session's state, folds and referenced artifacts as a JSON bundle",
  usage: "export <session> [--out FILE] [--force] [--session-key KEY]",
  options: { out: { type: "string" }, force: { type: "boolean" }, "session-key": { type: "string" } },
  maxPositionals: 1,
  needs: "<session>",
  run: exportRun,
};
export const restoreCommand = {
  description: "copy of a session's transcript with every shrunk preview replaced by its original",
  usage: "restore <sessionId> [--db FILE] [--agent ID] [--session-key KEY] [--out FILE.jsonl] [--force]",
  options: { db: { type: "string" }, agent: { type: "string" }, "session-key": { type: "string" }, out: { type: "string" }, force: { type: "boolean" } },
  maxPositionals: 1,
  needs: "<sessionId>",
  run: restoreRun,
};
