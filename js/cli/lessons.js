// `openclaw cachefold lessons <list|show|promote|rm|stale>`: the workspace's lessons.
import { join, resolve } from "node:path";
import { loadCore } from "../core.js";
import * as lessons from "../lessons.js";
import { EXIT, NotFound, UsageError } from "./args.js";

const USAGE = `lessons <list|show|promote|rm|stale> [name] [--json] [--workspace DIR] [--global] [--yes]
  list            lessons and candidates of the workspace and global scopes
  show <name>     one lesson (or candidate): file, fields, staleness
  promote <name>  candidate -> lesson
  rm <name> --yes remove a lesson or candidate (a removed candidate is never proposed again)
  stale           lessons whose fingerprint inputs changed, and what changed (exit 3 if any)
exit codes: 0 ok, 1 not found, 2 usage, 3 stale lessons found, 4 error`;

function row(x) {
  const state = x.error ? `INVALID: ${x.error}` : x.stale ? "stale" : "fresh";
  const desc = x.lesson?.description ?? "";
  return `${x.kind === "candidate" ? "candidate" : "lesson   "} ${x.scope.padEnd(7)} ${(x.lesson?.name ?? x.file).padEnd(20)} ${state.padEnd(6)} ${desc}`;
}

function summary(x) {
  return { name: x.lesson?.name ?? x.file.replace(/\.md$/, ""), scope: x.scope, kind: x.kind, path: x.path, description: x.lesson?.description ?? null, stale: x.error ? null : x.stale, changed: x.changed ?? [], error: x.error ?? null };
}

const changes = (x) => x.changed.map((c) => `${c.entry} ${c.what}`.trim()).join(", ");

async function lessonsRun({ values: opts, positionals: [action, name] }, io) {
  const o = io.o;
  if (opts.yes && action !== "rm") throw new UsageError(`--yes confirms lessons rm; ${action} removes nothing`);
  const core = await loadCore();
  const ctx = io.ctx;
  const workspace = resolve(opts.workspace ?? io.workspace ?? process.cwd());
  const needName = () => {
    if (!name || core.lessonSlug(name) !== name) throw new UsageError(`${action} needs a lesson name ([a-z0-9][a-z0-9._-]*)`);
  };
  const notFound = () => new NotFound(`no lesson or candidate named ${name}`);
  switch (action) {
    case "list": {
      const all = lessons.inspect(core, ctx, workspace);
      o.out({ workspace, lessons: all.map(summary) }, all.length ? all.map(row).join("\n") : `no lessons (project: ${join(workspace, lessons.PROJECT_DIR)}, global: ${join(ctx.stateDir, "lessons")})`);
      return EXIT.ok;
    }
    case "show": {
      needName();
      const all = lessons.inspect(core, ctx, workspace).filter((x) => x.lesson?.name === name || x.file === `${name}.md`);
      if (!all.length) throw notFound();
      o.out({ lessons: all.map((x) => ({ ...summary(x), text: x.text, lesson: x.lesson ?? null })) }, all.map((x) => `# ${x.kind} (${x.scope}) ${x.path}${x.stale ? `\n# STALE: ${changes(x)}` : ""}\n${x.text}`).join("\n"));
      return EXIT.ok;
    }
    case "promote": {
      needName();
      const p = await lessons.promote(core, ctx, workspace, name);
      if (!p) throw new NotFound(`no candidate named ${name}`);
      o.out({ promoted: p }, `promoted ${p.name} (${p.scope}) -> ${p.path}`);
      return EXIT.ok;
    }
    case "rm": {
      needName();
      const scope = opts.global ? { scope: "global" } : {};
      if (opts.yes !== true) {
        const hits = lessons.find(ctx, workspace, name).filter((x) => !scope.scope || x.scope === scope.scope);
        if (!hits.length) throw notFound();
        o.err(`lessons rm deletes ${hits.map((h) => h.path).join(", ")}; add --yes to confirm`);
        return EXIT.usage;
      }
      const gone = lessons.remove(ctx, workspace, name, scope);
      if (!gone.length) throw notFound();
      o.out({ removed: gone }, gone.map((g) => `removed ${g.kind} ${g.path}`).join("\n"));
      return EXIT.ok;
    }
    case "stale": {
      const stale = lessons.inspect(core, ctx, workspace).filter((x) => x.kind === "lesson" && x.stale);
      o.out({ workspace, stale: stale.map(summary) }, stale.length ? stale.map((x) => `${x.lesson.name} (${x.scope}): ${changes(x)}`).join("\n") : "no stale lessons");
      return stale.length ? EXIT.stale : EXIT.ok;
    }
    default:
      throw new UsageError(`unknown lessons action ${JSON.stringify(action)}`);
  }
}

export const lessonsCommand = {
  description: "workspace lessons: list, show, promote, rm, stale",
  usage: USAGE,
  options: { workspace: { type: "string" }, global: { type: "boolean" }, yes: { type: "boolean" } },
  maxPositionals: 2,
  needs: "<list|show|promote|rm|stale>",
  run: lessonsRun,
};
