// Lesson files: the project and global scopes, candidates, fingerprint inputs (the file side of
// src/lessons/). Every workspace file is read only when it is a regular file under a size cap,
// without blocking (a FIFO or /dev/zero is refused, never read), and everything written is
// redacted first (lessons/redact.js). Candidates are owner-only (0600) in every scope.
import { lstatSync, readdirSync, unlinkSync } from "node:fs";
import { isAbsolute, join, relative, resolve } from "node:path";
import { readRegular, writeFileAtomic } from "../io/files.js";
import { redactSync } from "./redact.js";

export const PROJECT_DIR = join(".cachefold", "lessons");
export const CANDIDATES = "_candidates";
const REJECTED = ".rejected.json";
/** Fingerprint inputs above this size count by size and mtime, not content. */
const MAX_INPUT_BYTES = 8 << 20;
/** A lesson file is a few lines; anything larger is refused. */
export const MAX_LESSON_BYTES = 64 << 10;
/** Entries of a fingerprinted directory taken into its listing. */
const MAX_LISTING = 10_000;
const CANDIDATE_MODE = 0o600;

// ---- paths and files -----------------------------------------------------------------------

/** The lesson scopes for a workspace (project first) and the state dir; `mode` is the promoted lessons' mode. */
export function scopes(ctx, workspace) {
  const out = [];
  if (workspace) out.push({ scope: "project", dir: join(resolve(workspace), PROJECT_DIR), mode: 0o644 });
  out.push({ scope: "global", dir: join(ctx.stateDir, "lessons"), mode: 0o600 });
  return out;
}

/** The lesson object with its free text (description, body lines) redacted. */
export function redactLesson(l, core) {
  return { ...l, description: redactSync(l.description, core), body: Array.isArray(l.body) ? l.body.map((line) => redactSync(line, core)) : l.body };
}

/** A lesson file's text, or null when it is absent, too large or not a regular file. */
export function readLesson(path) {
  try {
    return readRegular(path, { maxBytes: MAX_LESSON_BYTES });
  } catch {
    return null;
  }
}

function mdFiles(dir) {
  try {
    return readdirSync(dir, { withFileTypes: true })
      .filter((d) => d.isFile() && d.name.endsWith(".md"))
      .map((d) => d.name)
      .sort();
  } catch {
    return [];
  }
}

/** The lesson folders, scope by scope: `[{scope, kind: "lesson"|"candidate", dir, root, mode}]` (root: the scope's dir). */
function folders(ctx, workspace, { candidates = true } = {}) {
  return scopes(ctx, workspace).flatMap((s) => [
    { scope: s.scope, kind: "lesson", dir: s.dir, root: s.dir, mode: s.mode },
    ...(candidates ? [{ scope: s.scope, kind: "candidate", dir: join(s.dir, CANDIDATES), root: s.dir, mode: s.mode }] : []),
  ]);
}

/** Lesson files of every scope: `[{scope, kind: "lesson"|"candidate", file, path, text}]`. */
export function readAll(ctx, workspace, opts) {
  const out = [];
  for (const { scope, kind, dir } of folders(ctx, workspace, opts)) {
    for (const file of mdFiles(dir)) {
      const path = join(dir, file);
      const text = readLesson(path); // null: vanished, too large or not a regular file
      if (text != null) out.push({ scope, kind, file, path, text });
    }
  }
  return out;
}

function rejected(dir) {
  try {
    return new Set(JSON.parse(readRegular(join(dir, CANDIDATES, REJECTED), { maxBytes: 1 << 20 }) ?? "[]"));
  } catch {
    return new Set();
  }
}

function reject(dir, name, mode) {
  const set = rejected(dir);
  set.add(name);
  writeFileAtomic(join(dir, CANDIDATES, REJECTED), `${JSON.stringify([...set].sort())}\n`, { mode });
}

// ---- fingerprint inputs --------------------------------------------------------------------

function inside(root, p) {
  const abs = resolve(root, p);
  const rel = relative(root, abs);
  return rel.startsWith("..") || isAbsolute(rel) ? null : abs;
}

function canonical(v) {
  if (Array.isArray(v)) return `[${v.map(canonical).join(",")}]`;
  if (v && typeof v === "object") return `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${canonical(v[k])}`).join(",")}}`;
  return JSON.stringify(v);
}

function listing(abs) {
  const names = readdirSync(abs, { withFileTypes: true });
  const shown = names
    .slice(0, MAX_LISTING)
    .map((d) => (d.isDirectory() ? `${d.name}/` : d.name))
    .sort();
  if (names.length > MAX_LISTING) shown.push(`… ${names.length} entries`);
  return shown.join("\n");
}

/**
 * The content of one fingerprint entry, or null when it does not exist: a directory = its sorted
 * entry names, `file#a.b` = the canonical JSON of that field, a file = its bytes (latin-1, so
 * every byte counts).
 */
export function inputFor(workspace, entry) {
  try {
    if (!workspace) return null;
    const hash = entry.indexOf("#");
    const path = hash >= 0 ? entry.slice(0, hash) : entry;
    const abs = inside(resolve(workspace), path);
    if (!abs) return null;
    // lstat, not stat: a symlink is never followed (it may name /dev/zero, a FIFO or a file
    // outside the workspace); its entry counts as absent.
    const st = lstatSync(abs);
    if (hash >= 0) {
      if (!st.isFile() || st.size > MAX_INPUT_BYTES) return null;
      let v = JSON.parse(readRegular(abs, { maxBytes: MAX_INPUT_BYTES }));
      for (const k of entry.slice(hash + 1).split(".").filter(Boolean)) {
        if (v === null || typeof v !== "object" || !Object.hasOwn(v, k)) return null;
        v = v[k];
      }
      return canonical(v);
    }
    if (st.isDirectory()) return listing(abs);
    if (path.endsWith("/") || !st.isFile()) return null;
    if (st.size > MAX_INPUT_BYTES) return `large file: ${st.size} bytes, mtime ${st.mtimeMs}`;
    return readRegular(abs, { maxBytes: MAX_INPUT_BYTES, encoding: "latin1" });
  } catch {
    return null;
  }
}

/** Inputs for every entry of every lesson text that parses. */
export function gatherInputs(core, workspace, texts) {
  const entries = new Set();
  for (const t of texts) {
    try {
      for (const e of core.lessonParse(t).fingerprint) entries.add(e);
    } catch {
      /* invalid files are reported by the caller */
    }
  }
  return [...entries].sort().map((entry) => ({ entry, content: inputFor(workspace, entry) }));
}

// ---- operations shared by capture, injection and the CLI ------------------------------------

/** Find a lesson or candidate by name: `[{scope, kind, path, text, dir, mode}]`. */
export function find(ctx, workspace, name) {
  const out = [];
  for (const f of folders(ctx, workspace)) {
    const path = join(f.dir, `${name}.md`);
    const text = readLesson(path);
    if (text != null) out.push({ scope: f.scope, kind: f.kind, path, text, dir: f.root, mode: f.mode });
  }
  return out;
}

/** Promote a candidate (REFRESH notes and refresh-of dropped; hashed now if it never was). */
export function promote(core, ctx, workspace, name) {
  const c = find(ctx, workspace, name).find((x) => x.kind === "candidate");
  if (!c) return null;
  const l = core.lessonParse(c.text);
  l.refreshOf = "";
  l.body = l.body.filter((line) => !line.startsWith("- REFRESH:"));
  let text = core.lessonRender(JSON.stringify(redactLesson(l, core)));
  if (!l.fingerprintHash && l.fingerprint.length) text = core.lessonStamp(text, JSON.stringify(gatherInputs(core, workspace, [text])));
  const path = join(c.dir, `${l.name}.md`);
  writeFileAtomic(path, text, { mode: c.mode });
  unlinkSync(c.path);
  return { name: l.name, scope: c.scope, path };
}

/** Remove a lesson and/or candidate; a removed candidate is remembered as rejected. */
export function remove(ctx, workspace, name, { scope } = {}) {
  const hits = find(ctx, workspace, name).filter((x) => !scope || x.scope === scope);
  for (const h of hits) {
    unlinkSync(h.path);
    if (h.kind === "candidate") reject(h.dir, name, h.mode);
  }
  return hits.map((h) => ({ scope: h.scope, kind: h.kind, path: h.path }));
}

/** Every lesson and candidate with its parse result and staleness. */
export function inspect(core, ctx, workspace) {
  const files = readAll(ctx, workspace);
  const inputs = gatherInputs(core, workspace, files.map((f) => f.text));
  return files.map((f) => {
    try {
      const l = core.lessonParse(f.text);
      const st = core.lessonStaleness(f.text, JSON.stringify(inputs));
      return { ...f, lesson: l, stale: st.stale, changed: st.changed };
    } catch (err) {
      return { ...f, error: err.message };
    }
  });
}

/** Promote candidates older than lessons.autoPromoteAfterMs, fresh and never rejected. */
export function autoPromote(core, ctx, workspace, now = Date.now()) {
  const after = Number(ctx.config.lessons?.autoPromoteAfterMs ?? 0);
  if (!(after > 0)) return [];
  const done = [];
  for (const s of scopes(ctx, workspace)) {
    const no = rejected(s.dir);
    for (const file of mdFiles(join(s.dir, CANDIDATES))) {
      try {
        const text = readLesson(join(s.dir, CANDIDATES, file));
        if (text == null) continue;
        const l = core.lessonParse(text);
        const at = Date.parse(l.capturedAt);
        if (l.refreshOf || no.has(l.name) || !(now - at >= after)) continue;
        if (core.lessonStaleness(text, JSON.stringify(gatherInputs(core, workspace, [text]))).stale) continue;
        const p = promote(core, ctx, workspace, l.name);
        if (p) done.push(p);
      } catch (err) {
        ctx.log({ event: "lessons_skip", file: join(s.dir, CANDIDATES, file), error: String(err?.message ?? err) });
      }
    }
  }
  if (done.length) ctx.log({ event: "lessons_promoted", auto: true, names: done.map((d) => d.name) });
  return done;
}

/** Write candidates (lesson objects from the core) into `_candidates/` of the right scope. */
export function writeCandidates(core, ctx, workspace, lessons) {
  const s = scopes(ctx, workspace)[0];
  const no = rejected(s.dir);
  const written = [];
  for (const l of lessons) {
    try {
      if (no.has(l.name)) continue;
      const same = (path) => {
        try {
          return JSON.stringify(core.lessonParse(readLesson(path) ?? "").body) === JSON.stringify(l.body);
        } catch {
          return false;
        }
      };
      // The same fact already promoted, or already waiting (its capture time is kept).
      if (same(join(s.dir, `${l.name}.md`)) || same(join(s.dir, CANDIDATES, `${l.name}.md`))) continue;
      // Redacted before it is written; owner-only even inside the workspace.
      let text = core.lessonRender(JSON.stringify(redactLesson(l, core)));
      text = core.lessonStamp(text, JSON.stringify(gatherInputs(core, workspace, [text])));
      writeFileAtomic(join(s.dir, CANDIDATES, `${l.name}.md`), text, { mode: CANDIDATE_MODE });
      written.push(l.name);
    } catch (err) {
      ctx.log({ event: "lessons_skip", candidate: l?.name ?? null, error: String(err?.message ?? err) });
    }
  }
  return written;
}

