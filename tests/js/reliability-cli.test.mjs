// Destructive flags and strict argument parsing of every `openclaw cachefold` command (issue 24,
// item 4): nothing is deleted without an explicit, strictly parsed --yes; --dry-run wins; unknown
// flags, non-boolean values of boolean flags, bad numbers and flags missing their value are usage
// errors (exit 2) before anything runs.
import test from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tempDir, pkgSkip } from "./helpers.mjs";

const skip = pkgSkip();

function stateWithData() {
  const stateDir = tempDir("cachefold-cli-state-");
  for (const d of ["sessions/s-1", "artifacts/ab", "lessons", "reports"]) mkdirSync(join(stateDir, d), { recursive: true });
  writeFileSync(join(stateDir, "sessions/s-1/journal.jsonl"), "");
  writeFileSync(join(stateDir, "artifacts/ab", "ab".padEnd(40, "0")), "x");
  return stateDir;
}

async function run(argv, stateDir) {
  const { dispatch } = await import("../../js/cli.js");
  let out = "";
  let err = "";
  const ctx = { stateDir, config: { artifacts: { maxBytes: 1 << 30 } }, configJson: "{}", configProblems: [], log() {} };
  const code = await dispatch(argv, { ctx, stdout: { write: (t) => (out += t) }, stderr: { write: (t) => (err += t) }, workspace: stateDir });
  return { code, out, err };
}

const intact = (stateDir) => ["sessions", "artifacts", "lessons", "reports"].every((d) => existsSync(join(stateDir, d)));

test("gc --all deletes only with a literal --yes, never with --dry-run or a non-boolean value", { skip }, async () => {
  const refused = [
    ["gc", "--all=false", "--yes"],
    ["gc", "--all", "--yes=no"],
    ["gc", "--all=0", "--yes=0"],
    ["gc", "--all", "--yes=true"],
    ["gc", "--all"],
    ["gc", "--all", "--yes", "--bogus"],
    ["gc", "--all", "--yes", "extra"],
  ];
  for (const argv of refused) {
    const stateDir = stateWithData();
    const r = await run(argv, stateDir);
    assert.equal(r.code, 2, `${argv.join(" ")}: exit ${r.code} ${r.err}`);
    assert.ok(intact(stateDir), `${argv.join(" ")} deleted state`);
  }
  const dry = stateWithData();
  const d = await run(["gc", "--all", "--yes", "--dry-run", "--json"], dry);
  assert.equal(d.code, 0, d.err);
  assert.ok(intact(dry), "--dry-run deleted state");
  assert.equal(JSON.parse(d.out).dryRun, true);
  // The control: the explicit form does delete.
  const yes = stateWithData();
  assert.equal((await run(["gc", "--all", "--yes"], yes)).code, 0);
  assert.equal(existsSync(join(yes, "sessions")), false);
});

test("unknown flags, bad numbers and flags missing their value are usage errors that name the flag", { skip }, async () => {
  const cases = [
    [["gc", "--bogus"], /unknown option --bogus/],
    [["gc", "--max-bytes", ""], /--max-bytes needs a value/],
    [["gc", "--max-bytes=0x10"], /--max-bytes: not a whole number/],
    [["gc", "--max-bytes", "1e3"], /--max-bytes: not a whole number/],
    [["gc", "--max-bytes"], /--max-bytes needs a value/],
    [["status", "--limit", "-1"], /--limit: not a whole number/],
    [["status", "--limit", "0"], /--limit: not a whole number/],
    [["status", "--limit", "ten"], /--limit: not a whole number/],
    [["status", "--verbose"], /unknown option --verbose/],
    [["lessons", "list", "--workspace", "--json"], /--workspace needs a value/],
    [["lessons", "list", "--workspace"], /--workspace needs a value/],
    [["lessons", "list", "--global=yes"], /--global takes no value/],
    [["replay", "--jobs", "-1"], /--jobs: not a number of worker threads/],
    [["replay", "--jobs", "100000"], /--jobs: not a number of worker threads/],
    [["replay", "--jobs", "0"], /--jobs: not a number of worker threads/],
    [["replay", "--window", "0x10"], /--window: not a whole number/],
    [["export", "s-1", "--out"], /--out needs a value/],
    [["restore", "s-1", "--db", "--json"], /--db needs a value/],
    [["report", "a", "b"], /unexpected argument "b"/],
    [["doctor", "--fix"], /unknown option --fix/],
  ];
  const failures = [];
  for (const [argv, msg] of cases) {
    const stateDir = stateWithData();
    const r = await run(argv, stateDir);
    if (r.code !== 2 || !msg.test(r.err)) failures.push(`${argv.join(" ")}: exit ${r.code}, ${r.err.split("\n")[0]}`);
    if (!intact(stateDir)) failures.push(`${argv.join(" ")}: deleted state`);
  }
  assert.deepEqual(failures, []);
});
