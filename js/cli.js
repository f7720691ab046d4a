// `openclaw cachefold …`: the plugin's root CLI command and a small dispatcher.
//
// Subcommands live in COMMANDS (name -> {description, usage, options, maxPositionals, needs,
// run}; the modules under cli/). dispatch() parses the arguments strictly against the command's
// options (cli/args.js: node:util parseArgs) before anything runs, so a typo never runs a command.
// A command throws UsageError (exit 2, with its usage) or NotFound (exit 1). Each
// `run({values, positionals}, io)` resolves to an exit code and writes through
// `io.o.out(data, text)`, which prints JSON when `--json` is given or stdout is not a TTY.
//
// Exit codes: 0 ok · 1 not found (no such lesson, candidate or session) · 2 usage error ·
//             3 `lessons stale` found stale lessons · 4 internal error ·
//             5 `doctor` found a failing check.
import { loadCore } from "./core.js";
import { configContext } from "./config.js";
import { EXIT, NotFound, parseCommand, UsageError } from "./cli/args.js";
import { statusCommand, reportCommand } from "./cli/status.js";
import { doctorCommand } from "./cli/doctor.js";
import { exportCommand, gcCommand, restoreCommand } from "./cli/gc.js";
import { replayCommand } from "./cli/replay.js";
import { lessonsCommand } from "./cli/lessons.js";

export { EXIT };

export const ROOT = { name: "cachefold", description: "Inspect and manage cachefold (status, report, doctor, gc, export, restore, replay, lessons)", hasSubcommands: true };

export const COMMANDS = new Map(Object.entries({ status: statusCommand, report: reportCommand, doctor: doctorCommand, gc: gcCommand, export: exportCommand, restore: restoreCommand, replay: replayCommand, lessons: lessonsCommand }));

/** Context for CLI actions: the resolved config and state dir (as makeContext, without side effects). */
export async function cliContext(pluginConfig = {}, logger = console) {
  return configContext(await loadCore(), pluginConfig, logger);
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
  const cmd = COMMANDS.get(name);
  if (!cmd) {
    const o = makeIo(io, false);
    const list = [...COMMANDS].map(([n, c]) => `  ${n.padEnd(10)} ${c.description}`).join("\n");
    o.err(`${name === undefined || name === "help" || name === "--help" ? "" : `unknown command ${JSON.stringify(name)}\n`}usage: openclaw cachefold <command> …\n${list}`);
    return name === undefined || name === "help" || name === "--help" ? EXIT.ok : EXIT.usage;
  }
  const usage = `usage: openclaw cachefold ${cmd.usage ?? name}`;
  let parsed;
  try {
    parsed = parseCommand(rest, cmd);
  } catch (err) {
    makeIo(io, false).err(`cachefold ${name}: ${err.message}\n${usage}`);
    return EXIT.usage;
  }
  const o = makeIo(io, parsed.values.json);
  if (parsed.values.help) {
    o.err(usage);
    return EXIT.ok;
  }
  try {
    const ctx = io.ctx ?? (await cliContext(io.pluginConfig, io.logger));
    return await cmd.run(parsed, { ...io, ctx, o });
  } catch (err) {
    if (err instanceof UsageError) {
      o.err(`cachefold ${name}: ${err.message}\n${usage}`);
      return EXIT.usage;
    }
    if (err instanceof NotFound) {
      o.err(err.message);
      return EXIT.notFound;
    }
    o.err(`cachefold ${name}: ${err?.message ?? err}`);
    return EXIT.error;
  }
}

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
