// Hostile workspace files (issue 24, item 3): a lesson fingerprint naming a FIFO, a symlink to
// /dev/zero or a directory, and an oversized lesson file are refused, never read (a FIFO would
// block the call forever, /dev/zero would fill memory); a damaged lessons.json keeps the
// session's lessons.
import test from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, symlinkSync, truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fakeApi, tempDir, user, assistantText, pkgSkip } from "./helpers.mjs";

const skip = pkgSkip();
const CLI = new URL("../../js/cli.js", import.meta.url).href;

function hostileWorkspace() {
  const ws = tempDir("cachefold-ws-hostile-");
  writeFileSync(join(ws, "package.json"), JSON.stringify({ scripts: { test: "node --test" } }));
  execFileSync("mkfifo", [join(ws, "fifo")]);
  execFileSync("mkfifo", [join(ws, "fifo.json")]);
  symlinkSync("/dev/zero", join(ws, "zero"));
  symlinkSync("/dev/zero", join(ws, "zero.json"));
  const dir = join(ws, ".cachefold/lessons");
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "hostile.md"), "---\nname: hostile\ndescription: reads hostile files\nfingerprint:\n  - fifo\n  - zero\n  - fifo.json#a\n  - zero.json#a\n---\n- nothing\n");
  writeFileSync(join(dir, "huge.md"), `---\nname: huge\ndescription: huge\n---\n${"- x\n".repeat(600_000)}`);
  return ws;
}

test("lessons list and the fingerprint inputs refuse FIFOs, /dev/zero links and oversized lesson files", { skip, timeout: 120_000 }, async () => {
  const ws = hostileWorkspace();
  const stateDir = tempDir("cachefold-state-hostile-");
  // In a child process: on a blocking read the parent's timeout ends it instead of hanging the suite.
  const script = `import { dispatch } from ${JSON.stringify(CLI)};
    process.exitCode = await dispatch(["lessons", "list", "--json", "--workspace", ${JSON.stringify(ws)}], { pluginConfig: { stateDir: ${JSON.stringify(stateDir)} } });`;
  let out;
  try {
    out = execFileSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8", timeout: 60_000, maxBuffer: 64 << 20 });
  } catch (err) {
    assert.fail(`lessons list did not finish: ${err.code ?? err.signal ?? err.message}`);
  }
  const names = JSON.parse(out).lessons.map((l) => l.name);
  assert.ok(names.includes("hostile"), names.join(", "));
  assert.equal(names.includes("huge"), false, "an oversized lesson file is not read");
  const { inputFor } = await import("../../js/lessons.js");
  for (const entry of ["fifo", "zero", "fifo.json#a", "zero.json#a"]) assert.equal(inputFor(ws, entry), null, entry);
});

test("a damaged lessons.json does not drop the session's lessons", { skip }, async () => {
  const ws = tempDir("cachefold-ws-torn-");
  writeFileSync(join(ws, "package.json"), JSON.stringify({ scripts: { test: "node --test tests/" } }));
  mkdirSync(join(ws, "tests"));
  const dir = join(ws, ".cachefold/lessons");
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "testing.md"), "---\nname: testing\ndescription: Test runner and test file layout for the store module\n---\n- run `npm test` (node --test); tests in tests/*.test.mjs\n");
  const stateDir = tempDir("cachefold-state-torn-");
  const { default: plugin } = await import("../../js/index.js");
  const { api, reg } = fakeApi({ stateDir, mode: "always" });
  plugin.register(api);
  const lessons = await import("../../js/lessons.js");
  const { loadCore } = await import("../../js/core.js");
  const core = await loadCore();
  const engine = await reg.engines.cachefold({ workspaceDir: ws });
  const prompt = "Add a unit test for the store module";
  const first = await engine.assemble({ sessionId: "s-torn", messages: [], prompt, model: "deepseek-v4-flash" });
  assert.ok(first.systemPromptAddition, "lessons injected");
  const file = join(stateDir, "sessions", core.sessionDirName("s-torn"), "lessons.json");
  truncateSync(file, 20); // a torn write, a full disk or a bad edit
  lessons.forgetDecisions(); // as a fresh process
  const later = await engine.assemble({ sessionId: "s-torn", messages: [user(prompt), assistantText("ok")], prompt: "go on", model: "deepseek-v4-flash" });
  assert.equal(later.systemPromptAddition, first.systemPromptAddition);
});
