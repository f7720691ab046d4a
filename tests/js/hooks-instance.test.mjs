// The tool hooks' wasm instance through the real pkg/ build: a bad toolName never traps it,
// and after a trap the next call (synchronous) gets a fresh instance that still shrinks. The
// engine's main instance is never touched by either.
import test from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { registerHooks } from "../../js/hooks.js";
import { fakeApi, tempDir, toolResult, skipUnless } from "./helpers.mjs";

const built = existsSync(new URL("../../pkg/cachefold_bg.wasm", import.meta.url));
// With CACHEFOLD_PKG (another build under test) these need js/core.js's own pkg/ instance.
const skip = skipUnless(built, "needs pkg/ (js/core.js loads it)") || (process.env.CACHEFOLD_PKG ? "CACHEFOLD_PKG is set: these test js/core.js's own pkg/ instance" : false);

async function setup() {
  const coreJs = await import("../../js/core.js");
  const main = await coreJs.loadCore();
  const config = main.parseConfig("{}");
  const logs = [];
  const warnings = [];
  const ctx = { config, configJson: JSON.stringify(config), stateDir: tempDir(), logger: { warn: (m) => warnings.push(m), info() {}, error() {} }, log: (e) => logs.push(e) };
  const { api, reg } = fakeApi();
  registerHooks(api, ctx);
  await coreJs.toolsCore(); // what registerHooks warms up in the background
  const persist = (event, hookCtx = { sessionKey: "k" }) => reg.hooks.tool_result_persist[0].handler(event, hookCtx);
  return { coreJs, main, ctx, logs, warnings, persist, reg };
}

const big = (tag, n = 3000) => `${tag}\n` + "a line of tool output that repeats\n".repeat(n);

test("a non-string toolName never traps the core, and the next calls still shrink", { skip }, async () => {
  const { coreJs, main, warnings, persist } = await setup();
  const tools = coreJs.toolsCoreSync();
  // At the boundary: a clear input error, not a trap.
  assert.throws(
    () => tools.processToolResult("{}", 42, JSON.stringify(toolResult("c", "exec", "x")), true),
    (e) => e.code === "CACHEFOLD_INPUT" && /toolName must be a string, got number/.test(e.message),
  );
  assert.throws(() => tools.applyToolDefaults("{}", { name: "read" }, "{}"), (e) => e.code === "CACHEFOLD_INPUT");
  assert.equal(coreJs.toolsCoreSync(), tools, "the instance is kept");
  // Through the hook: the first string name wins (here the message's own), else "".
  for (const bad of [42, {}, true, ["exec"], 3.5]) {
    const r = persist({ toolName: bad, message: toolResult("c1", "exec", big(`bad ${JSON.stringify(bad)}`)) });
    assert.ok(r?.message.content[0].text.startsWith("[cachefold] exec output"), `toolName ${JSON.stringify(bad)}`);
    const nameless = { ...toolResult("c2", "exec", big(`nameless ${JSON.stringify(bad)}`)), toolName: bad };
    assert.ok(persist({ toolName: bad, message: nameless })?.message, "shrunk under the default threshold");
    const next = persist({ toolName: "exec", message: toolResult("c3", "exec", big(`next ${JSON.stringify(bad)}`)) });
    assert.ok(next?.message.content[0].text.startsWith("[cachefold] exec output"), "the next call still shrinks");
  }
  assert.deepEqual(warnings, []);
  assert.equal(coreJs.coreIfLoaded(), main, "the engine's instance is untouched");
});

test("after a trap in the hooks' instance the next call gets a fresh one at once and shrinks", { skip }, async () => {
  const { coreJs, main, warnings, persist } = await setup();
  const before = coreJs.toolsCoreSync();
  assert.notEqual(before, main, "the hooks have an instance of their own");
  // Asking a session for 2^32 - 1 indices aborts on the allocation: a trap in the hooks' instance.
  assert.throws(() => new before.Session("{}", "trap").need(-1), (e) => e.code === "CACHEFOLD_TRAP");
  // Synchronously after: a fresh instance, and it shrinks.
  const next = persist({ toolName: "exec", message: toolResult("h2", "exec", big("after")) });
  assert.ok(next?.message.content[0].text.startsWith("[cachefold] exec output"));
  const after = coreJs.toolsCoreSync();
  assert.notEqual(after, before);
  assert.notEqual(after, main);
  assert.equal(coreJs.coreIfLoaded(), main, "the engine's instance is untouched");
  assert.deepEqual(warnings, []);
});
