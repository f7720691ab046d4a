// Hostile workspace files for the fault campaign (tests/faults/campaign.test.mjs): run as a child
// (a call that blocks forever is ended by the parent's timeout, and counted).
//
// argv[2] = JSON {variants: [...], reps, hugeBytes}. For each variant a workspace is built with
// one hostile file where cachefold reads one (a lesson fingerprint entry, a lesson file, the
// session's lessons.json), then three calls run: a code-gen assemble (lessons decided: fingerprint
// inputs read), `lessons list`, and inputFor on the hostile entry. Each call's longest event-loop
// block is measured (monitorEventLoopDelay, 1 ms resolution); the shortest over `reps` runs is
// reported (a hostile file blocks on every run, machine noise does not).
// For a damaged lessons.json the assemble must still inject the session's lessons.
// stdout, one line per call: "H <variant> <call> <blockMs> <ok|error:...>", then "done".
// Each run's workspace and state dir (a huge-lesson workspace holds up to 512 MiB) are removed as
// soon as its calls are measured, and any left at exit.
import { mkdirSync, rmSync, symlinkSync, truncateSync, writeFileSync, writeSync, openSync, ftruncateSync, closeSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { join } from "node:path";
import { tempDir, fakeApi } from "../js/helpers.mjs";

const o = JSON.parse(process.argv[2]);
const say = (l) => process.stdout.write(`${l}\n`);
const made = new Set();
function scratch(prefix) {
  const dir = tempDir(prefix);
  made.add(dir);
  return dir;
}
function remove(...dirs) {
  for (const d of dirs) {
    rmSync(d, { recursive: true, force: true });
    made.delete(d);
  }
}
process.on("exit", () => remove(...made));

/** Workspace with `variant` planted; returns {ws, entry, after?} (after: damage to do once the session decided). */
function build(variant) {
  const ws = scratch("cachefold-hostile-ws-");
  writeFileSync(join(ws, "package.json"), JSON.stringify({ scripts: { test: "node --test tests/" } }));
  mkdirSync(join(ws, "tests"));
  const dir = join(ws, ".cachefold/lessons");
  mkdirSync(dir, { recursive: true });
  const lesson = (name, fp) => writeFileSync(join(dir, `${name}.md`), `---\nname: ${name}\ndescription: Test runner and test file layout for the store module\n${fp.length ? `fingerprint:\n${fp.map((e) => `  - ${e}`).join("\n")}\n` : ""}---\n- run \`npm test\`; tests in tests/*.test.mjs\n`);
  let entry = "package.json";
  switch (variant) {
    case "fifo":
      execFileSync("mkfifo", [join(ws, "fifo")]);
      entry = "fifo";
      break;
    case "fifo-json":
      execFileSync("mkfifo", [join(ws, "conf.json")]);
      entry = "conf.json#a";
      break;
    case "dev-zero":
      symlinkSync("/dev/zero", join(ws, "zero"));
      entry = "zero";
      break;
    case "dev-zero-json":
      symlinkSync("/dev/zero", join(ws, "zero.json"));
      entry = "zero.json#a";
      break;
    case "huge-input": {
      const fd = openSync(join(ws, "huge.bin"), "w");
      ftruncateSync(fd, o.hugeBytes); // sparse: huge, instant to make
      closeSync(fd);
      entry = "huge.bin";
      break;
    }
    case "huge-lesson": {
      // Written in 1 MiB chunks (a 2 GiB string cannot be made), at most 512 MiB.
      const fd = openSync(join(dir, "huge.md"), "w");
      writeSync(fd, "---\nname: huge\ndescription: Test runner and test file layout\n---\n");
      const chunk = Buffer.from("- x\n".repeat(1 << 18));
      for (let left = Math.min(o.hugeBytes, 512 << 20); left > 0; left -= chunk.length) writeSync(fd, chunk);
      closeSync(fd);
      break;
    }
    case "dir-input":
      mkdirSync(join(ws, "adir.json"));
      entry = "adir.json#a";
      break;
    case "dir-lesson":
      mkdirSync(join(dir, "notafile.md"));
      break;
    case "fifo-lesson":
      execFileSync("mkfifo", [join(dir, "pipe.md")]);
      break;
    case "zero-lesson":
      symlinkSync("/dev/zero", join(dir, "zero.md"));
      break;
    case "torn-lessons-json":
    case "dir-lessons-json":
    case "fifo-lessons-json":
      break;
    default:
      throw new Error(`unknown variant ${variant}`);
  }
  // A damaged decision file: the lesson carries no fingerprint (a plain, injectable lesson).
  lesson("testing", variant.endsWith("lessons-json") ? [] : [entry]);
  return { ws, entry };
}

async function timed(fn) {
  const h = monitorEventLoopDelay({ resolution: 1 });
  h.enable();
  const t0 = performance.now();
  let res = "ok";
  try {
    await fn();
  } catch (err) {
    res = `error:${String(err?.code ?? err?.message ?? err).replace(/\s+/g, "_").slice(0, 60)}`;
  }
  // One more turn of the loop so a block at the very end is sampled.
  await new Promise((r) => setTimeout(r, 5));
  h.disable();
  const wall = performance.now() - t0;
  return { block: Math.min(h.max / 1e6, wall), res };
}

const { default: plugin } = await import("../../js/index.js");
const lessons = await import("../../js/lessons.js");
const { dispatch } = await import("../../js/cli.js");
const { loadCore } = await import("../../js/core.js");
const core = await loadCore();
const prompt = "Add a unit test for the store module";
const MODEL = "deepseek-v4-flash";

// Warm up (wasm compiled, modules loaded) on a benign workspace.
{
  const { ws } = build("dir-lesson");
  const stateDir = scratch("cachefold-hostile-state-");
  const { api, reg } = fakeApi({ stateDir, mode: "always" });
  plugin.register(api);
  const engine = await reg.engines.cachefold({ workspaceDir: ws });
  await engine.assemble({ sessionId: "warm", messages: [], prompt, model: MODEL });
  remove(ws, stateDir);
}

for (const variant of o.variants) {
  const best = {};
  for (let rep = 0; rep < o.reps; rep++) {
    const { ws, entry } = build(variant);
    const stateDir = scratch("cachefold-hostile-state-");
    try {
      const { api, reg } = fakeApi({ stateDir, mode: "always" });
      plugin.register(api);
      const engine = await reg.engines.cachefold({ workspaceDir: ws });
      const sid = `s-${variant}-${rep}`;
      const calls = {
        assemble: () => engine.assemble({ sessionId: sid, messages: [], prompt, model: MODEL }),
        list: async () => {
          let out = "";
          const code = await dispatch(["lessons", "list", "--json", "--workspace", ws], { pluginConfig: { stateDir }, stdout: { write: (t) => (out += t) }, stderr: { write() {} } });
          if (code !== 0) throw new Error(`exit ${code}`);
          JSON.parse(out);
        },
        input: async () => lessons.inputFor(ws, entry),
      };
      if (variant.endsWith("lessons-json")) {
        const first = await engine.assemble({ sessionId: sid, messages: [], prompt, model: MODEL });
        if (!first.systemPromptAddition) throw new Error(`${variant}: no lesson injected before the damage`);
        const file = join(stateDir, "sessions", core.sessionDirName(sid), "lessons.json");
        if (variant === "torn-lessons-json") truncateSync(file, 20);
        else {
          rmSync(file);
          if (variant === "dir-lessons-json") mkdirSync(file);
          else execFileSync("mkfifo", [file]);
        }
        lessons.forgetDecisions(); // as a fresh process
        calls.assemble = async () => {
          const r = await engine.assemble({ sessionId: sid, messages: [{ role: "user", content: [{ type: "text", text: prompt }], timestamp: 1 }], prompt: "go on", model: MODEL });
          // The session's lessons survive a damaged decision file.
          if (r.systemPromptAddition !== first.systemPromptAddition) throw new Error("lessons dropped");
        };
      }
      for (const [name, fn] of Object.entries(calls)) {
        const m = await timed(fn);
        if (!best[name] || m.block < best[name].block) best[name] = m;
      }
    } finally {
      remove(ws, stateDir);
    }
  }
  for (const [name, m] of Object.entries(best)) say(`H ${variant} ${name} ${m.block.toFixed(1)} ${m.res}`);
}
say("done");
