// Argument parsing of every `openclaw cachefold` command: node:util parseArgs in strict mode.
// Unknown flags are refused, a boolean flag takes no value (`--yes=no` is an error, never a yes),
// a flag that needs a value never takes the next flag as it, and numbers are whole decimal
// numbers in a stated range (no "", 0x10, 1e3, -1).
import { parseArgs } from "node:util";

/** Exit codes of every `openclaw cachefold` command. */
export const EXIT = { ok: 0, notFound: 1, usage: 2, stale: 3, error: 4, doctorFail: 5 };

export class UsageError extends Error {
  constructor(message) {
    super(message);
    this.code = "CACHEFOLD_USAGE";
  }
}

/** No such session, lesson or candidate: the command exits 1 with this message. */
export class NotFound extends Error {}

const COMMON = { json: { type: "boolean" }, help: { type: "boolean", short: "h" } };

/**
 * Parse `argv` for a command declaring `options` (parseArgs option specs, names in kebab case),
 * at most `maxPositionals` positionals and, with `needs` (e.g. "<session>"), a first one.
 * Returns `{values, positionals}`; throws UsageError.
 */
export function parseCommand(argv, { options = {}, maxPositionals = 0, needs = null } = {}) {
  const all = { ...COMMON, ...options };
  // `--limit -1`: a negative number is the flag's (refused by its range check with a clear
  // message), not taken for another flag.
  const args = [];
  for (let i = 0; i < argv.length; i++) {
    const m = /^--([^=]+)$/.exec(argv[i]);
    if (m && all[m[1]]?.type === "string" && /^-[0-9]/.test(argv[i + 1] ?? "")) args.push(`${argv[i]}=${argv[++i]}`);
    else args.push(argv[i]);
  }
  let parsed;
  try {
    parsed = parseArgs({ args, options: all, strict: true, allowPositionals: true });
  } catch (err) {
    throw new UsageError(wording(err));
  }
  if (parsed.positionals.length > maxPositionals) {
    throw new UsageError(`unexpected argument ${JSON.stringify(parsed.positionals[maxPositionals])}`);
  }
  for (const [name, spec] of Object.entries(options)) {
    if (spec.type === "string" && parsed.values[name] === "") throw new UsageError(`--${name} needs a value`);
  }
  if (needs && !parsed.positionals[0] && !parsed.values.help) throw new UsageError(`needs ${needs}`);
  return { values: parsed.values, positionals: parsed.positionals };
}

/** parseArgs' errors in the words of the other messages. */
function wording(err) {
  const msg = String(err?.message ?? err);
  // parseArgs names a flag with a short alias as '-h, --help': the long name is the one to show.
  const flag = /'(?:-[^-' ], )?(-[^' ]+)/.exec(msg)?.[1] ?? "";
  if (err?.code === "ERR_PARSE_ARGS_UNKNOWN_OPTION") return `unknown option ${flag}`;
  if (/does not take an argument/.test(msg)) return `${flag} takes no value (a flag is on when given, off when not)`;
  if (/argument missing|ambiguous/.test(msg)) return `${flag} needs a value${/ambiguous/.test(msg) ? " (the next argument is a flag; write " + flag + "=VALUE for a value starting with -)" : ""}`;
  return msg.split("\n")[0];
}

/**
 * A whole decimal number from `--name` in [min, max], or `fallback` when the flag is absent.
 * `_` may group digits (1_000_000); anything else (empty, signs, hex, exponents, fractions) is a
 * usage error naming the flag and the range.
 */
export function intFlag(values, name, { min = 0, max = Number.MAX_SAFE_INTEGER, fallback, what = "a whole number" } = {}) {
  const raw = values[name];
  if (raw === undefined) return fallback;
  const text = String(raw);
  const n = /^[0-9]+(_[0-9]+)*$/.test(text) ? Number(text.replace(/_/g, "")) : NaN;
  if (!Number.isSafeInteger(n) || n < min || n > max) {
    throw new UsageError(`--${name}: not ${what} (${min.toLocaleString("en")} to ${max.toLocaleString("en")}): ${JSON.stringify(text)}`);
  }
  return n;
}
