// The README stays true: its two commands exist, every config key is documented, and every
// command it shows is backed by the project: npm scripts exist (and the options passed to them
// are parsed by the program the script runs), `cargo` lines are run verbatim by a CI script,
// and each OpenClaw command is run by the e2e suite (named here, checked by content).
import test from "node:test";
import assert from "node:assert/strict";
import { readFileSync, existsSync, readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { join } from "node:path";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const readme = readFileSync(join(ROOT, "README.md"), "utf8");
const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"));
const manifest = JSON.parse(readFileSync(join(ROOT, "openclaw.plugin.json"), "utf8"));

function commands() {
  const out = [];
  for (const block of readme.matchAll(/```bash\n([\s\S]*?)```/g)) {
    for (const line of block[1].split("\n")) {
      const cmd = line.replace(/#.*$/, "").trim();
      if (cmd) out.push(cmd);
    }
  }
  return out;
}

function filesUnder(dir) {
  const abs = join(ROOT, dir);
  if (!existsSync(abs)) return [];
  return readdirSync(abs, { recursive: true })
    .filter((f) => /\.(mjs|js|sh)$/.test(f) || !f.includes("."))
    .map((f) => join(abs, f))
    .filter((f) => {
      try {
        return readFileSync(f, "utf8").length >= 0;
      } catch {
        return false;
      }
    });
}

function exercised(pattern, dirs) {
  for (const d of dirs) {
    for (const f of filesUnder(d)) {
      if (readFileSync(f, "utf8").includes(pattern)) return f;
    }
  }
  return null;
}

/** Text of every CI script (.ci/*) and every package.json script, whitespace collapsed. */
function ciText() {
  const dir = join(ROOT, ".ci");
  const files = readdirSync(dir).map((f) => readFileSync(join(dir, f), "utf8"));
  return [...files, ...Object.values(pkg.scripts)].join("\n").replace(/[ \t]+/g, " ");
}

// The program that parses the options of each npm script the README passes options to.
const PROGRAM = { bench: "crates/bench/src/main.rs", compare: "tests/e2e/compare.mjs" };

/** `npm run <script> [-- options]`: the script exists and its program parses each --option. */
function npmRun(m) {
  const [, script, args] = m;
  assert.ok(pkg.scripts[script], `package.json has no script ${script}`);
  const flags = (args ?? "").split(/\s+/).filter((a) => a.startsWith("--"));
  if (!flags.length) return;
  assert.ok(PROGRAM[script], `README passes ${flags.join(" ")} to npm run ${script}: name the program that parses them in PROGRAM`);
  const text = readFileSync(join(ROOT, PROGRAM[script]), "utf8");
  for (const f of flags) {
    // A match arm ("--loso" =>) or a node:util parseArgs option (scenario: { type: ...).
    const name = f.slice(2).replace(/=.*$/, "");
    const parsed = text.includes(`"--${name}"`) || new RegExp(`^\\s*"?${name}"?: \\{ type:`, "m").test(text);
    assert.ok(parsed, `${PROGRAM[script]} does not parse --${name} (README: ${m[0]})`);
  }
}

// How each kind of README command is exercised.
const RULES = [
  {
    match: /^npm test$/,
    check: () => {
      assert.match(pkg.scripts.test, /\.ci\/test/, "npm test runs .ci/test");
      assert.match(readFileSync(join(ROOT, ".ci/run"), "utf8"), /^npm test$/m, "CI (.ci/run) runs npm test");
    },
  },
  { match: /^npm run (\w[\w:-]*)(?: -- (.*))?$/, check: npmRun },
  { match: /^npm pack$/, check: () => assert.ok(exercised('"pack"', ["tests/js"]) || exercised("npm pack", ["tests/js", "tests/e2e"])) },
  { match: /^openclaw plugins install -l /, check: () => assert.ok(exercised("--accept-capabilities", ["tests/e2e"]), "e2e installs with -l") },
  { match: /^openclaw plugins install npm-pack:/, check: () => assert.ok(exercised("npm-pack:", ["tests/e2e"]), "e2e installs from npm pack") },
  { match: /^openclaw config set plugins\.slots\.contextEngine /, check: () => assert.ok(exercised("plugins.slots.contextEngine", ["tests/e2e"])) },
  { match: /^openclaw config set plugins\.entries\.cachefold\.config\./, check: () => assert.ok(exercised("plugins.entries.cachefold.config.", ["tests/e2e"]) || exercised("plugins.entries.${this.pluginId}.config.", ["tests/e2e"])) },
  { match: /^openclaw config set plugins\.entries\.cachefold\.hooks\./, check: () => assert.ok(exercised("plugins.entries.cachefold.hooks.", ["tests/e2e"])) },
  { match: /^openclaw config set plugins\.entries\.cachefold\.enabled /, check: () => assert.ok(exercised("plugins.entries.cachefold.enabled", ["tests/e2e"]) || exercised("plugins.entries.${this.pluginId}.enabled", ["tests/e2e"])) },
  { match: /^node tests\/js\/(\S+)/, check: (m) => assert.ok(existsSync(join(ROOT, "tests/js", m[1])), m[1]) },
  { match: /^(CACHEFOLD_\w+=\S+ )?(\.\/)?target\/release\/cachefold-bench/, check: () => assert.ok(readFileSync(join(ROOT, ".ci/bench"), "utf8").includes("cachefold-bench")) },
  { match: /^cargo /, check: (m) => assert.ok(ciText().includes(m.input.replace(/\s+/g, " ")), `no CI script runs \`${m.input}\``) },
  { match: /^(bash )?\.ci\/(\S+)/, check: (m) => assert.ok(existsSync(join(ROOT, ".ci", m[2])), m[2]) },
];

test("the README's two commands are npm scripts that set up and run", () => {
  const block = readme.match(/## Two commands\s+```bash\n([\s\S]*?)```/);
  assert.ok(block, "README has a Two commands block");
  const cmds = block[1].split("\n").map((l) => l.replace(/#.*$/, "").trim()).filter(Boolean);
  assert.deepEqual(cmds, ["npm run demo", "npm test"]);
  for (const s of ["demo", "test"]) assert.match(pkg.scripts[s], /\.ci\//);
  for (const f of [".ci/demo", ".ci/test"]) assert.match(readFileSync(join(ROOT, f), "utf8"), /\.ci\/setup/, `${f} sets up`);
});

test("every command shown in the README is exercised", () => {
  const cmds = commands();
  assert.ok(cmds.length >= 4);
  for (const cmd of cmds) {
    const rule = RULES.find((r) => r.match.test(cmd));
    assert.ok(rule, `no test covers README command: ${cmd}`);
    rule.check(cmd.match(rule.match));
  }
});

test("every config key is documented in the README", () => {
  const defaults = new Map(); // dotted key -> schema default
  const walk = (props, prefix) => {
    for (const [k, v] of Object.entries(props)) {
      if (v.properties) walk(v.properties, `${prefix}${k}.`);
      else defaults.set(`${prefix}${k}`, v.default);
    }
  };
  walk(manifest.configSchema.properties, "");
  const keys = [...defaults.keys()];
  for (const k of keys) {
    assert.ok(readme.includes(`\`${k}\``), `README does not document ${k}`);
    const row = `| \`${k}\` | \`${JSON.stringify(defaults.get(k))}\` |`;
    assert.ok(readme.includes(row), `README's default for ${k} differs from the manifest (want ${row})`);
  }
});
