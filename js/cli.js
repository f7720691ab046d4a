// `openclaw cachefold …`: the plugin's root CLI command and a small dispatcher.
//
// Subcommands live in COMMANDS (name -> {description, usage, run}); another module adds its own
// with addCommand() before registration (status, doctor, …). Each `run(args, io)` resolves to
// an exit code and writes through `io.out(data, text)`, which prints JSON when `--json` is given
// or stdout is not a TTY, readable text otherwise.
//
// Exit codes: 0 ok · 1 not found (no such lesson, candidate or session) · 2 usage error ·
//             3 `lessons stale` found stale lessons · 4 internal error ·
//             5 `doctor` found a failing check.
import { homedir } from "node:os";
import { isAbsolute, join, resolve } from "node:path";
import { loadCore } from "./core.js";
import * as lessons from "./lessons.js";
import { userCommands } from "./commands.js";
import { replayCommand } from "./replay.js";
import { resolveConfig } from "./config.js";

export const EXIT = { ok: 0, notFound: 1, usage: 2, stale: 3, error: 4, doctorFail: 5 };

export const ROOT = { name: "cachefold", description: "Inspect and manage cachefold (status, report, doctor, gc, export, restore, replay, lessons)", hasSubcommands: true };

export const COMMANDS = new Map();

/** Register a subcommand of `openclaw cachefold`. */
export function addCommand(name, spec) {
  COMMANDS.set(name, spec);
}

/** Context for CLI actions: the resolved config and state dir (as makeContext, without side effects). */
export async function cliContext(pluginConfig = {}, logger = console) {
  const core = await loadCore();
  const { config, problems } = resolveConfig(core, pluginConfig ?? {});
  const base = process.env.OPENCLAW_STATE_DIR || join(homedir(), ".openclaw");
  const stateDir = config.stateDir ? (isAbsolute(config.stateDir) ? config.stateDir : resolve(config.stateDir)) : join(base, "cachefold");
  return { config, configJson: JSON.stringify(config), configProblems: problems, stateDir, logger, log: () => {} };
}

function parseArgs(argv) {
  const pos = [];
  const opts = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--json") opts.json = true;
    else if (a === "--global") opts.global = true;
    else if (a === "--help" || a === "-h") opts.help = true;
    else if (a === "--workspace") opts.workspace = argv[++i];
    else if (a.startsWith("--workspace=")) opts.workspace = a.slice(12);
    else if (a.startsWith("-")) opts.unknown = a;
    else pos.push(a);
  }
  return { pos, opts };
}

function makeIo(io, json) {
  const stdout = io.stdout ?? process.stdout;
  const stderr = io.stderr ?? process.stderr;
  const asJson = json || !stdout.isTTY;
  return {
    asJson,
    out(data, text) {
      stdout.write(asJson ? `${JSON.stringify(data, null, 2)}\n` : `${text}\n`);
    },
    err(msg) {
      stderr.write(`${msg}\n`);
    },
  };
}

/**
 * Run `openclaw cachefold <argv…>`; resolves to the exit code.
 * `io`: `{stdout, stderr, ctx?, pluginConfig?, workspace?}` (stdout/stderr need `write`).
 */
export async function dispatch(argv, io = {}) {
  const [name, ...rest] = argv;
  const { opts } = parseArgs(rest);
  const o = makeIo(io, opts.json);
  const cmd = COMMANDS.get(name);
  if (!cmd) {
    const list = [...COMMANDS].map(([n, c]) => `  ${n.padEnd(10)} ${c.description}`).join("\n");
    o.err(`usage: openclaw cachefold <command> …\n${list}`);
    return name === undefined || name === "help" || name === "--help" ? EXIT.ok : EXIT.usage;
  }
  try {
    const ctx = io.ctx ?? (await cliContext(io.pluginConfig, io.logger));
    return await cmd.run(rest, { ...io, ctx, o });
  } catch (err) {
    o.err(`cachefold ${name}: ${err?.message ?? err}`);
    return EXIT.error;
  }
}

// ---- lessons ---------------------------------------------------------------------------------

const LESSONS_USAGE = `usage: openclaw cachefold lessons <list|show|promote|rm|stale> [name] [--json] [--workspace DIR] [--global]
  list            lessons and candidates of the workspace and global scopes
  show <name>     one lesson (or candidate): file, fields, staleness
  promote <name>  candidate -> lesson
  rm <name>       remove a lesson or candidate (a removed candidate is never proposed again)
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

async function lessonsRun(args, io) {
  const { pos, opts } = parseArgs(args);
  const o = io.o;
  const [action, name] = pos;
  if (opts.help || !action) {
    o.err(LESSONS_USAGE);
    return opts.help ? EXIT.ok : EXIT.usage;
  }
  if (opts.unknown) {
    o.err(`unknown option ${opts.unknown}\n${LESSONS_USAGE}`);
    return EXIT.usage;
  }
  const core = await loadCore();
  const ctx = io.ctx ?? (await cliContext(io.pluginConfig));
  const workspace = resolve(opts.workspace ?? io.workspace ?? process.cwd());
  const needName = () => {
    if (!name || !core.lessonSlug(name) || core.lessonSlug(name) !== name) {
      o.err(`${action}: a lesson name is required ([a-z0-9][a-z0-9._-]*)\n${LESSONS_USAGE}`);
      return false;
    }
    return true;
  };
  switch (action) {
    case "list": {
      const all = lessons.inspect(core, ctx, workspace);
      o.out({ workspace, lessons: all.map(summary) }, all.length ? all.map(row).join("\n") : `no lessons (project: ${join(workspace, lessons.PROJECT_DIR)}, global: ${join(ctx.stateDir, "lessons")})`);
      return EXIT.ok;
    }
    case "show": {
      if (!needName()) return EXIT.usage;
      const all = lessons.inspect(core, ctx, workspace).filter((x) => x.lesson?.name === name || x.file === `${name}.md`);
      if (!all.length) {
        o.err(`no lesson or candidate named ${name}`);
        return EXIT.notFound;
      }
      o.out(
        { lessons: all.map((x) => ({ ...summary(x), text: x.text, lesson: x.lesson ?? null })) },
        all.map((x) => `# ${x.kind} (${x.scope}) ${x.path}${x.stale ? `\n# STALE: ${x.changed.map((c) => `${c.entry} ${c.what}`.trim()).join(", ")}` : ""}\n${x.text}`).join("\n"),
      );
      return EXIT.ok;
    }
    case "promote": {
      if (!needName()) return EXIT.usage;
      const p = lessons.promote(core, ctx, workspace, name);
      if (!p) {
        o.err(`no candidate named ${name}`);
        return EXIT.notFound;
      }
      o.out({ promoted: p }, `promoted ${p.name} (${p.scope}) -> ${p.path}`);
      return EXIT.ok;
    }
    case "rm": {
      if (!needName()) return EXIT.usage;
      const gone = lessons.remove(ctx, workspace, name, opts.global ? { scope: "global" } : {});
      if (!gone.length) {
        o.err(`no lesson or candidate named ${name}`);
        return EXIT.notFound;
      }
      o.out({ removed: gone }, gone.map((g) => `removed ${g.kind} ${g.path}`).join("\n"));
      return EXIT.ok;
    }
    case "stale": {
      const stale = lessons.inspect(core, ctx, workspace).filter((x) => x.kind === "lesson" && x.stale);
      o.out({ workspace, stale: stale.map(summary) }, stale.length ? stale.map((x) => `${x.lesson.name} (${x.scope}): ${x.changed.map((c) => `${c.entry} ${c.what}`.trim()).join(", ")}`).join("\n") : "no stale lessons");
      return stale.length ? EXIT.stale : EXIT.ok;
    }
    default:
      o.err(`unknown lessons action ${action}\n${LESSONS_USAGE}`);
      return EXIT.usage;
  }
}

for (const [name, spec] of userCommands()) addCommand(name, spec);
addCommand("replay", replayCommand);
addCommand("lessons", { description: "workspace lessons: list, show, promote, rm, stale", run: lessonsRun });

/**
 * Register `openclaw cachefold` (descriptors for lazy root help; the manifest's cliCommands
 * holds the same row). Cheap: nothing is loaded until a command runs.
 */
export function registerCli(api) {
  if (typeof api?.registerCli !== "function") return;
  api.registerCli(
    ({ program, workspaceDir, logger, config }) => {
      const root = program.command(ROOT.name).description(ROOT.description);
      for (const [name, spec] of COMMANDS) {
        root
          .command(name)
          .description(spec.description)
          .argument("[args...]")
          .allowUnknownOption()
          .helpOption(false)
          .action(async (args) => {
            process.exitCode = await dispatch([name, ...(args ?? [])], { pluginConfig: api.pluginConfig, hostConfig: config, workspace: workspaceDir, logger, inHost: true });
          });
      }
    },
    { descriptors: [ROOT] },
  );
}
