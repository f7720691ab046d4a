// Secrets never reach a lesson, the system prompt or the decision log (issue 24, item 2), and
// candidate files are owner-only.
import test from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { codeGenSession, fakeApi, tempDir, pkgSkip } from "./helpers.mjs";

const skip = pkgSkip();

// [text carrying a secret, the secret itself]
const SECRETS = [
  ["PGPASSWORD=pgS3cretValue9 psql -h db", "pgS3cretValue9"],
  ["deploy --token tokS3cretValue9", "tokS3cretValue9"],
  ["OPENAI_KEY=sk-proj-abcdefghijklmnopqrstuvwxyzABCDEF0123456789", "sk-proj-abcdefghijklmnopqrstuvwxyzABCDEF0123456789"],
  ["huggingface-cli login hf_abcdefghijklmnopqrstuvwxyzABCDEFGH", "hf_abcdefghijklmnopqrstuvwxyzABCDEFGH"],
  ["DBPASS=dbS3cretValue9 make migrate", "dbS3cretValue9"],
  ["STRIPE_KEY=sk_live_51Habcdefghijklmnopqrstuvwx", "sk_live_51Habcdefghijklmnopqrstuvwx"],
  ["psql --password pwS3cretValue9", "pwS3cretValue9"],
  ["mysql -uroot -pmyS3cretValue9 app", "myS3cretValue9"],
  ["curl -H 'Authorization: token ghp_abcdefghijklmnopqrstuvwxyz0123456789' api", "ghp_abcdefghijklmnopqrstuvwxyz0123456789"],
  ["git clone https://x:glpat-abcdefghijklmnopqrst@gitlab.com/a/b", "glpat-abcdefghijklmnopqrst"],
  ["echo //registry.npmjs.org/:_authToken=npm_abcdefghijklmnopqrstuvwxyz0123456789", "npm_abcdefghijklmnopqrstuvwxyz0123456789"],
  ["aws configure set x wJalrXUtnFEMI/K7MDENG/bPxRfiCYzK8aQ3pL2m", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzK8aQ3pL2m"],
  ["SLACK=xapp-1-A0123456789-0123456789012-abcdef0123456789abcdef0123456789abcdef", "xapp-1-A0123456789-0123456789012-abcdef0123456789abcdef0123456789abcdef"],
  ["age -d -i AGE-SECRET-KEY-1QQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQ f", "AGE-SECRET-KEY-1QQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQ"],
  ["doctl auth init -t dop_v1_0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", "dop_v1_0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"],
  ["twilio api:core --api-key SK0123456789abcdef0123456789abcdef", "SK0123456789abcdef0123456789abcdef"],
  ["GITHUB_TOKEN=ghp_zyxwvutsrqponmlkjihgfedcba9876543210 gh pr list", "ghp_zyxwvutsrqponmlkjihgfedcba9876543210"],
  ["export AWS_ACCESS_KEY_ID=AKIAZ7VRSQ5TEXAMPLQ2", "AKIAZ7VRSQ5TEXAMPLQ2"],
];

const PLAIN = ["run `npm test` (node --test); tests in tests/*.test.mjs", "mkdir -p build && ssh -p 22 host", "git checkout 0123456789abcdef0123456789abcdef01234567"];

test("the core's redactor alone (the rules the core applies itself) removes every secret of the set", { skip }, async () => {
  const { loadCore } = await import("../../js/core.js");
  const core = await loadCore();
  const missed = SECRETS.filter(([text, secret]) => core.redactSecrets(text).includes(secret)).map(([text]) => text);
  assert.deepEqual(missed, []);
  for (const plain of PLAIN) assert.equal(core.redactSecrets(plain), plain);
});

test("redactSync without a core object still goes through the core's redactor", { skip }, async () => {
  const { redactSync } = await import("../../js/lessons/redact.js");
  // Secrets only the core's scanner knows (URL credentials, a Slack bot token, a PEM block).
  const text = "psql postgres://admin:pa55word@db:5432/app; xoxb-123456789012-abcdefghij\n-----BEGIN PRIVATE KEY-----\nMIIEow\n-----END PRIVATE KEY-----";
  const out = redactSync(text);
  for (const secret of ["pa55word", "abcdefghij", "MIIEow"]) assert.ok(!out.includes(secret), out);
  for (const [t, secret] of SECRETS) assert.ok(!redactSync(t).includes(secret), t);
});

test("the redactor removes every secret of the set and keeps ordinary commands", { skip }, async () => {
  const { redact } = await import("../../js/lessons/redact.js");
  const missed = [];
  for (const [text, secret] of SECRETS) if ((await redact(text)).includes(secret)) missed.push(text);
  assert.deepEqual(missed, []);
  for (const plain of PLAIN) {
    assert.equal(await redact(plain), plain);
  }
});

function filesUnder(dir, out = []) {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) filesUnder(p, out);
    else if (e.isFile()) out.push(p);
  }
  return out;
}

test("a session whose test commands carry secrets: no secret in any candidate, lesson, prompt or log; candidates 0600", { skip }, async () => {
  const ws = tempDir("cachefold-ws-secret-");
  writeFileSync(join(ws, "package.json"), JSON.stringify({ name: "demo", scripts: { test: "node --test tests/" } }));
  mkdirSync(join(ws, "tests"));
  writeFileSync(join(ws, "tests", "a.test.mjs"), "// a\n");
  mkdirSync(join(ws, "src"));
  writeFileSync(join(ws, "src", "store.js"), "export {}\n");
  const stateDir = tempDir("cachefold-state-secret-");
  const logFile = join(stateDir, "decisions.jsonl");
  const { default: plugin } = await import("../../js/index.js");
  const { api, reg } = fakeApi({ stateDir, logFile, mode: "always" });
  plugin.register(api);
  const engine = await reg.engines.cachefold({ workspaceDir: ws });
  await codeGenSession(engine, "s-secret", ws, { testCommand: "npm test -- --token tokS3cretValue9 --password pwS3cretValue9" });
  await engine.maintain({ sessionId: "s-secret", runtimeContext: { workspaceDir: ws } });
  const cand = join(ws, ".cachefold/lessons/_candidates");
  const candidates = existsSync(cand) ? readdirSync(cand).filter((f) => f.endsWith(".md")) : [];
  assert.ok(candidates.includes("testing.md"), "the test command was captured (the test exercises the capture)");
  assert.match(readFileSync(join(cand, "testing.md"), "utf8"), /`npm test -- --token \[REDACTED\] --password \[REDACTED\]`/);
  for (const f of candidates) assert.equal(statSync(join(cand, f)).mode & 0o777, 0o600, `${f} is not owner-only`);
  // Promote everything, then a new session injects it.
  const { dispatch } = await import("../../js/cli.js");
  const sink = { write() {} };
  for (const f of candidates) await dispatch(["lessons", "promote", f.replace(/\.md$/, "")], { stdout: sink, stderr: sink, pluginConfig: { stateDir, logFile, mode: "always" }, workspace: ws });
  const next = await engine.assemble({ sessionId: "s-secret-2", messages: [], prompt: "Add a unit test for the store module in src/store.js", model: "deepseek-v4-flash" });
  const leaks = [];
  // What lessons write: the workspace, the global lessons, each session's decision, the decision
  // log (the engine's own session state keeps the raw history by design and is not scanned).
  const written = [...filesUnder(ws), ...filesUnder(stateDir).filter((p) => /\/lessons\/|lessons[^/]*\.json[^/]*$|decisions\.jsonl$/.test(p))];
  assert.ok(written.some((p) => p.endsWith("decisions.jsonl")) && written.some((p) => /lessons\.json$/.test(p)), written.join(", "));
  const texts = written.map((p) => [p, readFileSync(p, "latin1")]);
  texts.push(["systemPromptAddition", next.systemPromptAddition ?? ""]);
  for (const [where, text] of texts) for (const [, secret] of SECRETS) if (text.includes(secret)) leaks.push(`${where}: ${secret}`);
  assert.deepEqual(leaks, []);
});

test("hostile texts (secret names, flags and mysql words whose values are kept) cost what prose of the same size costs", { skip }, async () => {
  // A rule that rescans the rest of the text after each kept match is quadratic: ~10 s for
  // 50 kB of `maxTokens=`, ~100x prose. Each text is timed twice, alternating with prose, and
  // the faster run counts.
  const { loadCore } = await import("../../js/core.js");
  const core = await loadCore();
  const N = 50_000;
  const fill = (s) => s.repeat(Math.ceil(N / s.length)).slice(0, N);
  const prose = fill("Please refactor the store module; run npm test. ");
  const hostile = ["maxTokens=", "PASSWORD=[REDACTED]", "--token [REDACTED] ", "mysql ", "mysql -p[REDACTED] ", "X_AUTH=token "];
  const time = (text) => {
    const t0 = performance.now();
    core.redactSecrets(text);
    return performance.now() - t0;
  };
  for (const unit of hostile) {
    const text = fill(unit);
    let best = Infinity;
    let base = Infinity;
    for (let run = 0; run < 2; run++) {
      base = Math.min(base, time(prose));
      best = Math.min(best, time(text));
    }
    assert.ok(best <= 10 * base + 100, `${JSON.stringify(unit)} x ${N / unit.length}: ${best.toFixed(0)} ms, prose ${base.toFixed(0)} ms`);
  }
});
