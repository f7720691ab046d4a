// `openclaw cachefold replay`: the native addon replays an OpenClaw SQLite store and gives the
// same totals as `cachefold-bench` on the same file; without the addon the command says why and
// how to build it, then falls back (recorded usage via node:sqlite, or an error naming the build
// command where this Node has no node:sqlite).
//
// The store is written by tests/js/sqlite-store.mjs (node:sqlite + zstd): in-process on Node >= 22.15,
// else with Node 24 ($CACHEFOLD_NODE24 or .cache/node24, installed by `.ci/setup node24`).
import test from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { tempDir, skipUnless, skipOrFail } from "./helpers.mjs";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const NODE24 = process.env.CACHEFOLD_NODE24 ?? join(ROOT, ".cache/node24/node_modules/node/bin/node");
const FIX = join(ROOT, "crates/bench/tests/fixtures");
const SESSIONS = [
  { id: "s-small", file: join(FIX, "pi_small.jsonl"), t0: Date.UTC(2026, 0, 1) },
  { id: "s-branch", file: join(FIX, "pi_branch.jsonl"), t0: Date.UTC(2026, 5, 1) },
];

const zstdInProcess = await import("node:sqlite").then(
  async () => typeof (await import("node:zlib")).zstdCompressSync === "function",
  () => false,
);

/** A state dir with agents/main/agent/openclaw-agent.sqlite holding SESSIONS; null + why when it cannot be made. */
async function makeStateDir() {
  const state = join(tempDir("replay"), "state");
  const agentDir = join(state, "agents", "main", "agent");
  mkdirSync(agentDir, { recursive: true });
  const db = join(agentDir, "openclaw-agent.sqlite");
  let compressed;
  if (zstdInProcess) {
    const { writeStore } = await import("./sqlite-store.mjs");
    ({ compressed } = await writeStore(db, SESSIONS));
  } else if (existsSync(NODE24)) {
    ({ compressed } = JSON.parse(execFileSync(NODE24, [join(ROOT, "tests/js/sqlite-store.mjs"), db, JSON.stringify(SESSIONS)], { encoding: "utf8" })));
  } else return { why: `needs node:sqlite with zstd (Node >= 22.15) or Node 24 at ${NODE24} (.ci/setup node24)` };
  assert.ok(compressed > 3, "the fixture exercises the zstd rows");
  return { state, db };
}

async function cli(argv, extra = {}) {
  const { dispatch } = await import("../../js/cli.js");
  let out = "";
  let err = "";
  const stdout = { isTTY: false, write: (s) => (out += s) };
  const stderr = { isTTY: false, write: (s) => (err += s) };
  const code = await dispatch(argv, { stdout, stderr, ctx: { stateDir: extra.cachefoldState }, ...extra });
  return { code, out, err };
}

function tokenizerArgs() {
  for (const p of [process.env.CACHEFOLD_TOKENIZER, join(ROOT, ".cache/tokenizer/deepseek-v4/tokenizer.json")]) {
    if (p && existsSync(p)) return ["--tokenizer", p];
  }
  return ["--o200k"];
}

/** The newest built cachefold-bench (cargo test builds target/debug, npm run bench target/release). */
function benchBinary() {
  const c = ["release", "debug"].map((p) => join(ROOT, "target", p, "cachefold-bench")).filter((p) => existsSync(p));
  return c.sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs)[0] ?? null;
}

const { loadNative } = await import("../../js/native.js");
const native = loadNative();
const bench = benchBinary();
const skipAddon = skipUnless(native.addon, `addon not built: ${native.reason}`);
const skipNative = skipAddon || skipUnless(bench, "no target/*/cachefold-bench (cargo build -p cachefold-bench)");

test("replay through the addon gives cachefold-bench's totals on the same store", { skip: skipNative }, async (t) => {
  const made = await makeStateDir();
  if (!made.state) return skipOrFail(t, made.why);
  const tok = tokenizerArgs();
  const svg = join(made.state, "..", "replay.svg");
  const r = await cli(["replay", "--all", "--json", "--state-dir", made.state, "--out", svg, "--jobs", "2", ...tok], { cachefoldState: join(made.state, "cachefold") });
  assert.equal(r.code, 0, r.err);
  const got = JSON.parse(r.out);
  assert.equal(got.source, "native");
  assert.deepEqual(got.stores, [{ path: made.db, sessions: ["s-branch", "s-small"] }]);
  assert.deepEqual(got.report.header.sessions.map((s) => s.name), ["main#s-branch", "main#s-small"]);
  assert.ok(readFileSync(svg, "utf8").startsWith("<svg"), "chart written");

  const json = join(made.state, "..", "bench.json");
  execFileSync(bench, [made.db, "--json", json, "--quiet", "--jobs", "1", ...tok], { stdio: ["ignore", "ignore", "pipe"] });
  const want = JSON.parse(readFileSync(json, "utf8"));
  assert.equal(got.report.header.tokenizer, want.header.tokenizer);
  assert.deepEqual(
    got.report.header.sessions.map((s) => s.calls),
    want.header.sessions.map((s) => s.calls),
  );
  assert.equal(got.report.totals.length, 8, "every strategy (S3 and S3o: topics on and off)");
  assert.ok(got.report.totals.every((x) => x.metrics.calls > 0 && x.metrics.promptTokens > 0));
  // Identical figures, strategy by strategy (metrics: tokens, hits, costs, recall; derived ratios).
  assert.deepEqual(
    got.report.totals.map((x) => ({ s: x.strategy, m: x.metrics, d: x.derived })),
    want.totals.map((x) => ({ s: x.strategy, m: x.metrics, d: x.derived })),
  );
  const s1a = want.totals.find((x) => x.strategy === "S1a").metrics.cost.headline;
  const s3 = want.totals.find((x) => x.strategy === "S3").metrics.cost.headline;
  assert.equal(got.saving.savedUsd, s1a - s3);

  // One session by prefix, and --since leaving only the newer one.
  const one = await cli(["replay", "--session", "s-sm", "--json", "--state-dir", made.state, "--out", svg, ...tok]);
  assert.equal(one.code, 0, one.err);
  assert.deepEqual(JSON.parse(one.out).stores[0].sessions, ["s-small"]);
  const since = await cli(["replay", "--since", "2026-03-01", "--json", "--state-dir", made.state, "--out", svg, "--strategy", "S1a,S3", ...tok]);
  assert.equal(since.code, 0, since.err);
  const s = JSON.parse(since.out);
  assert.deepEqual(s.stores[0].sessions, ["s-branch"]);
  assert.deepEqual(s.report.totals.map((x) => x.strategy), ["S1a", "S3"]);
  // No tokenizer file: says where it looked, replays with o200k and says so.
  const missing = join(made.state, "no-tokenizer.json");
  const o200k = await cli(["replay", "--all", "--json", "--state-dir", made.state, "--out", svg, "--strategy", "S1a", "--tokenizer", missing]);
  assert.equal(o200k.code, 0, o200k.err);
  assert.ok(o200k.err.includes(`DeepSeek-V4 tokenizer not found (looked at ${missing}`), o200k.err);
  assert.match(o200k.err, /using the o200k fallback/);
  const ro = JSON.parse(o200k.out);
  assert.equal(ro.report.header.tokenizer, "o200k");
  assert.equal(ro.tokenizer.path, null);
  const badStrategy = await cli(["replay", "--all", "--state-dir", made.state, "--strategy", "S9", "--o200k"]);
  assert.equal(badStrategy.code, 2);
  assert.match(badStrategy.err, /unknown strategy S9/);
  const none = await cli(["replay", "--session", "nope", "--state-dir", made.state]);
  assert.equal(none.code, 1);
  assert.match(none.err, /no session matches nope/);
});

test("--tokens bytes4 counts UTF-8 bytes / 4 and --prefix-tokens sizes the static prefix", { skip: skipAddon }, async (t) => {
  const made = await makeStateDir();
  if (!made.state) return skipOrFail(t, made.why);
  const svg = join(made.state, "..", "replay.svg");
  const replay = async (...args) => {
    const r = await cli(["replay", "--session", "s-small", "--json", "--state-dir", made.state, "--out", svg, "--strategy", "S0,S3", "--cold", "--jobs", "1", ...args]);
    assert.equal(r.code, 0, r.err);
    const j = JSON.parse(r.out);
    return { j, by: Object.fromEntries(j.report.totals.map((x) => [x.strategy, x.metrics])) };
  };
  const a = await replay("--tokens", "bytes4", "--prefix-tokens", "1000");
  assert.equal(a.j.report.header.tokenizer, "bytes4");
  assert.equal(a.j.tokenizer.name, "bytes4");
  assert.match(a.j.tokenizer.note, /UTF-8 bytes \/ 4/);
  assert.deepEqual(a.j.prefix, { profile: "openclaw-sized-1000", tokens: 1000 });
  const b = await replay("--tokens", "bytes4", "--prefix-tokens", "1_250");
  assert.equal(b.j.prefix.tokens, 1250);
  // S0 sends the whole history on every call: 250 more prefix tokens on each of its calls.
  const calls = a.by.S0.calls;
  assert.ok(calls > 0);
  assert.equal(b.by.S0.promptTokens - a.by.S0.promptTokens, 250 * calls);
  const o = await replay("--tokens", "o200k", "--prefix-tokens", "1000");
  assert.equal(o.j.report.header.tokenizer, "o200k");
  assert.notEqual(o.by.S0.promptTokens, a.by.S0.promptTokens, "bytes4 is not o200k");
  // --o200k is --tokens o200k.
  const alias = await replay("--o200k", "--prefix-tokens", "1000");
  assert.equal(alias.by.S0.promptTokens, o.by.S0.promptTokens);
});

test("README sample of replay is the command's current output", { skip: skipAddon }, async (t) => {
  const made = await makeStateDir();
  if (!made.state) return skipOrFail(t, made.why);
  const { dispatch } = await import("../../js/cli.js");
  const cfState = join(made.state, "cachefold");
  let text = "";
  const tty = { isTTY: true, write: (s) => (text += s) };
  const code = await dispatch(["replay", "--session", "s-small", "--state-dir", made.state, "--tokens", "bytes4", "--prefix-tokens", "14425", "--strategy", "S1a,S3", "--cold", "--jobs", "1", "--quiet"], { stdout: tty, stderr: tty, ctx: { stateDir: cfState } });
  assert.equal(code, 0, text);
  const got = text.split(cfState).join("<stateDir>").replace(/ · [\d.]+ s\n/, " · <seconds> s\n").trimEnd();
  const readme = readFileSync(join(ROOT, "README.md"), "utf8");
  const want = readme.match(/<!-- sample:replay -->\n```text\n([\s\S]*?)```/)?.[1];
  assert.ok(want, "README has no sample of replay");
  assert.equal(got, want.trimEnd(), "README sample of replay is stale");
});

test("--tokens and --prefix-tokens: bad values are usage errors", async () => {
  for (const [args, msg] of [
    [["--tokens", "words"], /--tokens: words is not one of deepseek, o200k, bytes4/],
    [["--o200k", "--tokens", "bytes4"], /--o200k and --tokens bytes4 exclude each other/],
    [["--tokens", "bytes4", "--tokenizer", "/x.json"], /--tokenizer is the DeepSeek tokenizer's file; it does not go with --tokens bytes4/],
    [["--prefix-tokens", "-1"], /--prefix-tokens: not a token count/],
    [["--prefix-tokens", "12k"], /--prefix-tokens: not a token count/],
    [["--prefix-tokens"], /--prefix-tokens needs a value/],
  ]) {
    const r = await cli(["replay", ...args]);
    assert.equal(r.code, 2, `${args.join(" ")}: ${r.err}`);
    assert.match(r.err, msg);
  }
});

test("replay usage errors and a missing store", async () => {
  const bad = await cli(["replay", "--frobnicate"]);
  assert.equal(bad.code, 2);
  assert.match(bad.err, /unknown option --frobnicate/);
  const both = await cli(["replay", "--all", "--session", "x"]);
  assert.equal(both.code, 2);
  const empty = tempDir("replay-empty");
  const r = await cli(["replay", "--state-dir", empty]);
  assert.equal(r.code, 1);
  assert.ok(r.err.includes(join(empty, "agents")), r.err);
});

test("missing addon: the reason, the build command, then the recorded-usage fallback", async (t) => {
  const made = await makeStateDir();
  if (!made.state) return skipOrFail(t, made.why);
  const gone = join(made.state, "no-such-addon.node");
  const expected = { calls: 0, prompt: 0, cached: 0, output: 0 };
  for (const s of SESSIONS) {
    for (const l of readFileSync(s.file, "utf8").split("\n")) {
      if (!l.startsWith("{")) continue;
      const e = JSON.parse(l);
      if (e.type !== "message" || e.message?.role !== "assistant") continue;
      const u = e.message.usage ?? {};
      expected.calls += 1;
      expected.prompt += (u.input ?? 0) + (u.cacheRead ?? 0) + (u.cacheWrite ?? 0);
      expected.cached += u.cacheRead ?? 0;
      expected.output += u.output ?? 0;
    }
  }
  assert.ok(expected.calls >= 4 && expected.cached > 0);
  const check = (code, out, err) => {
    assert.match(err, new RegExp(`native addon not found at ${gone.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}`));
    assert.match(err, /build it: npm run build/);
    assert.match(err, /cargo build --profile native -p cachefold-native/);
    assert.match(err, /falling back to the usage your provider recorded/);
    assert.equal(code, 0, err);
    const got = JSON.parse(out);
    assert.equal(got.source, "recorded-usage");
    assert.equal(got.addon.path, gone);
    assert.deepEqual(
      got.sessions.map((s) => s.sessionId),
      ["s-branch", "s-small"],
    );
    const { hitPct, ...tot } = got.totals;
    assert.deepEqual(tot, expected);
    assert.ok(hitPct > 0 && hitPct < 100);
  };
  const args = ["replay", "--all", "--json", "--state-dir", made.state];
  if (zstdInProcess) {
    const r = await cli(args, { addonPath: gone });
    check(r.code, r.out, r.err);
  } else {
    // This Node cannot read SQLite: the command says so (exit 4) after the build command …
    const r = await cli(args, { addonPath: gone });
    assert.equal(r.code, 4);
    assert.match(r.err, /native addon not found at/);
    assert.match(r.err, /build it: npm run build/);
    assert.match(r.err, /no node:sqlite to read the store without the addon/);
    assert.equal(r.out, "");
    // … and under the host's Node 24 the fallback reads the store.
    if (!existsSync(NODE24)) return skipOrFail(t, `the Node 24 half needs ${NODE24}`);
    const script = `import { dispatch } from ${JSON.stringify(join(ROOT, "js/cli.js"))}; process.exitCode = await dispatch(${JSON.stringify(args)}, { ctx: { stateDir: "/nonexistent" } });`;
    const r24 = spawnSync(NODE24, ["--input-type=module", "-e", script], { encoding: "utf8", env: { ...process.env, CACHEFOLD_NATIVE_ADDON: gone } });
    const [code, out, err] = [r24.status, r24.stdout, r24.stderr];
    check(code, out, err);
  }
});

test("state dir, --since and session selection follow the host's rules", async () => {
  const { hostStateDir, parseSince, selectSessions } = await import("../../js/cli/replay.js");
  const home = tempDir("replay-home");
  assert.equal(hostStateDir({ OPENCLAW_STATE_DIR: " /srv/oc ", HOME: home }), "/srv/oc");
  assert.equal(hostStateDir({ OPENCLAW_STATE_DIR: "~/state", OPENCLAW_HOME: home }), join(home, "state"));
  // No ~/.openclaw but a legacy ~/.clawdbot: the host uses the legacy dir.
  mkdirSync(join(home, ".clawdbot"));
  assert.equal(hostStateDir({ OPENCLAW_HOME: home }), join(home, ".clawdbot"));
  mkdirSync(join(home, ".openclaw"));
  assert.equal(hostStateDir({ OPENCLAW_HOME: home }), join(home, ".openclaw"));

  const now = Date.UTC(2026, 10, 23, 12);
  assert.equal(parseSince("12h", now), now - 12 * 3600e3);
  assert.equal(parseSince("2w", now), now - 14 * 86400e3);
  assert.equal(parseSince("2026-11-01", now), Date.UTC(2026, 10, 1));
  assert.equal(parseSince("yesterday-ish", now), null);

  const store = { path: "/x.sqlite" };
  const rows = [
    { sessionId: "aaa-1", events: 3, firstAt: 1, lastAt: now - 3 * 86400e3 },
    { sessionId: "aab-2", events: 3, firstAt: 1, lastAt: now - 3600e3 },
    { sessionId: "b-3", events: 3, firstAt: 1, lastAt: now - 30 * 86400e3 },
  ];
  const ids = (r) => r.picked.map((p) => p.sessionId);
  assert.deepEqual(ids(selectSessions([{ store, rows }], {}, now)), ["aab-2"], "default: the most recent");
  assert.deepEqual(ids(selectSessions([{ store, rows }], { all: true }, now)), ["aaa-1", "aab-2", "b-3"]);
  assert.deepEqual(ids(selectSessions([{ store, rows }], { since: "7d" }, now)), ["aaa-1", "aab-2"]);
  assert.deepEqual(ids(selectSessions([{ store, rows }], { session: "b" }, now)), ["b-3"]);
  assert.match(selectSessions([{ store, rows }], { session: "aa" }, now).error, /ambiguous: aaa-1, aab-2/);
  assert.match(selectSessions([{ store, rows }], { session: "aab", since: "1m" }, now).error, /no session matches aab/);
  assert.equal(selectSessions([{ store, rows }], { since: "soon" }, now).usage, true);
});
