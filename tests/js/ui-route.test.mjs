// The report page's data route and the dashboard widget (js/ui/), through the real wasm build:
// the route is gateway-auth under the plugin's id, pages thousands of sessions, answers bad
// parameters with 400, and its figures are exactly those `status --json` / `report --json` print
// for the same sessions (the same functions, compared here through the CLI's own output).
import test from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import { cpSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fakeApi, tempDir, user, assistantText, assistantCall, toolResult, pkgSkip } from "./helpers.mjs";

const skip = pkgSkip();
const usage = (input, cacheRead, output = 20) => ({ input, output, cacheRead, cacheWrite: 0, totalTokens: input + cacheRead + output, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } });

/** Register the plugin with a recording api (routes and descriptors too); drive `turns` turns of one session. */
async function drive(sessionId, turns, config, budget) {
  const { default: plugin } = await import("../../js/index.js");
  const { api, reg } = fakeApi(config);
  reg.routes = [];
  reg.descriptors = [];
  api.registerHttpRoute = (r) => reg.routes.push(r);
  api.session = { controls: { registerControlUiDescriptor: (d) => reg.descriptors.push(d) } };
  plugin.register(api);
  const history = [user("read the big file")];
  for (let t = 0; t < turns; t++) {
    const eng = await reg.engines.cachefold({});
    await eng.assemble({ sessionId, messages: history, model: "deepseek-v4-flash", tokenBudget: budget });
    const turn = [assistantCall(`c${t}`, "read", { path: `f${t}.txt` }), toolResult(`c${t}`, "read", `line ${t} of a file with words\n`.repeat(400)), assistantText(`done ${t}`, usage(300, 1000 + 500 * t))];
    history.push(...turn);
    await eng.commitTurn({ sessionId, advancementKey: `k${t}`, messages: [history[history.length - 4] ?? history[0], ...turn] });
    history.push(user(`next ${t}`));
  }
  return reg;
}

function sink() {
  let text = "";
  return { isTTY: false, write: (s) => (text += s), get text() { return text; } };
}

async function cli(argv, config) {
  const { dispatch } = await import("../../js/cli.js");
  const stdout = sink();
  const stderr = sink();
  const code = await dispatch(argv, { stdout, stderr, pluginConfig: config, hostLogFiles: [], transcriptDbs: [] });
  assert.equal(code, 0, stderr.text);
  return JSON.parse(stdout.text);
}

/** Serve the registered handler on a loopback port; returns {get(path) -> {status, headers, body}, close}. */
async function serve(route) {
  const server = http.createServer((req, res) => {
    Promise.resolve(route.handler(req, res)).then((handled) => {
      if (!handled && !res.writableEnded) {
        res.statusCode = 599;
        res.end();
      }
    });
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address();
  return {
    async get(path, method = "GET") {
      const r = await fetch(`http://127.0.0.1:${port}${path}`, { method });
      const text = await r.text();
      let body = text;
      if ((r.headers.get("content-type") ?? "").startsWith("application/json") && text) body = JSON.parse(text);
      return { status: r.status, headers: r.headers, body };
    },
    close: () => new Promise((r) => server.close(r)),
  };
}

let fixture;
async function setup() {
  if (fixture) return fixture;
  const stateDir = tempDir();
  const config = { stateDir, logFile: join(stateDir, "decisions.jsonl") };
  const reg = await drive("sess-ui-a", 10, config, 6000); // folds (the budget is small)
  await drive("sess-ui-b", 3, config, 100000);
  fixture = { stateDir, config, reg };
  return fixture;
}

test("the route is one gateway-auth prefix route under /plugins/cachefold; the widget and tab descriptors point into it", { skip }, async () => {
  const { reg } = await setup();
  assert.equal(reg.routes.length, 1);
  const r = reg.routes[0];
  assert.equal(r.auth, "gateway", "the Gateway authenticates every request before the handler");
  assert.equal(r.path, "/plugins/cachefold");
  assert.equal(r.match, "prefix");
  const widget = reg.descriptors.find((d) => d.surface === "widget");
  assert.ok(widget, JSON.stringify(reg.descriptors));
  assert.equal(widget.id, "savings");
  assert.deepEqual(widget.requiredScopes, ["operator.read"]);
  assert.ok(widget.path.startsWith(`${r.path}/`), widget.path);
  const tab = reg.descriptors.find((d) => d.surface === "tab");
  assert.ok(tab.path.startsWith(`${r.path}/`), tab.path);
  assert.deepEqual(reg.errors, []);
});

test("api/sessions answers exactly status --json for the same sessions", { skip }, async () => {
  const { reg, config } = await setup();
  const srv = await serve(reg.routes[0]);
  try {
    const status = await cli(["status", "--json", "--limit", "50"], config);
    const page = await srv.get("/plugins/cachefold/api/sessions?limit=50");
    assert.equal(page.status, 200);
    assert.equal(page.body.total, 2);
    assert.equal(page.body.sessions.length, 2);
    // Every figure of every row, as status prints it (same order: most recently written first).
    assert.deepEqual(page.body.sessions, status.sessions);
    assert.deepEqual(page.body.artifacts, status.artifacts);
    assert.equal(page.body.legacyEstimate, status.legacyEstimate);
    const a = page.body.sessions.find((s) => s.sessionId === "sess-ui-a");
    assert.ok(a.folds > 0, "the small budget made folds");
    assert.ok(a.savedUsd > 0 && a.legacyEstimateUsd > a.costUsd, JSON.stringify(a));
  } finally {
    await srv.close();
  }
});

test("api/session answers report --json's calls and totals, status's row, folds with cachefold_recover's answer, and the two charts", { skip }, async () => {
  const { reg, config } = await setup();
  const srv = await serve(reg.routes[0]);
  try {
    const report = await cli(["report", "sess-ui-a", "--json", "--out", join(config.stateDir, "r.svg")], config);
    const status = await cli(["status", "--json"], config);
    const v = await srv.get("/plugins/cachefold/api/session?id=sess-ui-a");
    assert.equal(v.status, 200);
    assert.deepEqual(v.body.calls, report.calls);
    assert.deepEqual(v.body.totals, report.totals);
    assert.deepEqual(v.body.status, status.sessions.find((s) => s.sessionId === "sess-ui-a"));
    assert.ok(v.body.folds.length > 0);
    for (const f of v.body.folds) {
      assert.match(f.id, /^[fc][0-9]+$/);
      assert.ok(f.to > f.from, JSON.stringify(f));
      assert.ok(f.storedBytes > 0, `${f.id} is stored`);
      assert.match(f.recover.text, new RegExp(`^\\[cachefold_recover\\] ${f.id} `), "the tool's own answer");
    }
    const folds = v.body.marks.filter((m) => m.kind === "fold");
    assert.ok(folds.length >= v.body.status.folds, `every fold is marked: ${folds.length} vs ${v.body.status.folds}`);
    for (const m of folds) assert.ok(m.call >= 0 && m.call <= report.calls.length, JSON.stringify(m));
    // One bar per call in the hit/miss chart, carrying the report's figures.
    const bars = [...v.body.charts.hitMiss.matchAll(/data-call="(\d+)" data-hit="(\d+)" data-miss="(\d+)"/g)].map((x) => ({ call: +x[1], hit: +x[2], miss: +x[3] }));
    assert.deepEqual(bars, report.calls.map((c) => ({ call: c.call, hit: c.hit, miss: c.miss })));
    assert.equal((v.body.charts.hitMiss.match(/class="cf-mark cf-mark-fold"/g) ?? []).length, folds.length);
    assert.match(v.body.charts.cost, /cachefold \(spent\)/);
    assert.match(v.body.charts.cost, /legacy estimate/);
    // An id resolves as `report` resolves it: an ambiguous prefix or an unknown id is a 404.
    assert.equal((await srv.get("/plugins/cachefold/api/session?id=sess-ui-")).status, 404);
    const none = await srv.get("/plugins/cachefold/api/session?id=nope");
    assert.equal(none.status, 404);
    assert.match(none.body.error, /no cachefold session matches/);
  } finally {
    await srv.close();
  }
});

test("api/sessions pages a gateway with thousands of sessions; bad paging parameters are a 400", { skip }, async () => {
  const { config } = await setup();
  // 2,000 session dirs: copies of the two driven ones (listing reads only each snapshot's head).
  const many = tempDir();
  const src = join(config.stateDir, "sessions");
  mkdirSync(join(many, "sessions"));
  const names = readdirSync(src);
  for (let i = 0; i < 1000; i++) for (const n of names) cpSync(join(src, n), join(many, "sessions", `${n}-copy${i}`), { recursive: true });
  const { createHandler } = await import("../../js/ui/route.js");
  const { cliContext } = await import("../../js/cli.js");
  const ctx = await cliContext({ stateDir: many });
  const srv = await serve({ handler: createHandler(ctx) });
  try {
    const first = await srv.get("/plugins/cachefold/api/sessions?limit=200");
    assert.equal(first.status, 200);
    assert.equal(first.body.total, 2000);
    assert.equal(first.body.sessions.length, 200, "one page, not the whole store");
    assert.equal(first.body.nextOffset, 200);
    const last = await srv.get("/plugins/cachefold/api/sessions?offset=1950&limit=200");
    assert.equal(last.body.sessions.length, 50);
    assert.equal(last.body.nextOffset, null);
    const dflt = await srv.get("/plugins/cachefold/api/sessions");
    assert.equal(dflt.body.sessions.length, 50);
    assert.equal(dflt.body.limit, 50);
    for (const q of ["limit=0", "limit=201", "offset=-1", "offset=abc", "limit=1e3"]) {
      const r = await srv.get(`/plugins/cachefold/api/sessions?${q}`);
      assert.equal(r.status, 400, q);
      assert.match(r.body.error, /must be an integer/, q);
    }
  } finally {
    await srv.close();
  }
});

/** The JSON block a page embeds. */
function embedded(html) {
  const at = html.indexOf('<script type="application/json" id="cf-data">');
  assert.ok(at >= 0, "the page embeds its data");
  const from = html.indexOf(">", at) + 1;
  return JSON.parse(html.slice(from, html.indexOf("</script>", from)));
}

test("the page embeds the data route's own answers: the sessions table, one session's view, the widget's summary", { skip }, async () => {
  const { reg } = await setup();
  const srv = await serve(reg.routes[0]);
  try {
    const list = await srv.get("/plugins/cachefold/report?limit=1");
    assert.equal(list.status, 200);
    assert.match(list.headers.get("content-security-policy"), /script-src 'nonce-[A-Za-z0-9+/=]{20,}'/);
    const data = embedded(list.body);
    assert.deepEqual(data.sessions, (await srv.get("/plugins/cachefold/api/sessions?limit=1")).body);
    assert.equal(data.sessions.nextOffset, 1, "paged: one of two");
    assert.deepEqual(Object.keys(data.summary).sort(), Object.keys((await srv.get("/plugins/cachefold/api/summary")).body).sort());
    const one = await srv.get("/plugins/cachefold/report?session=sess-ui-a");
    assert.deepEqual(embedded(one.body).session, (await srv.get("/plugins/cachefold/api/session?id=sess-ui-a")).body);
    const missing = await srv.get("/plugins/cachefold/report?session=nope");
    assert.equal(missing.status, 404);
    assert.match(embedded(missing.body).session.error, /no cachefold session matches/);
    const bad = await srv.get("/plugins/cachefold/report?limit=9999");
    assert.equal(bad.status, 400);
    assert.match(embedded(bad.body).sessions.error, /must be an integer/);
    const w = await srv.get("/plugins/cachefold/widget");
    assert.equal(w.status, 200);
    assert.ok(embedded(w.body).summary.savedThisWeekUsd > 0);
    // Two responses, two nonces.
    const n1 = list.headers.get("content-security-policy");
    const n2 = (await srv.get("/plugins/cachefold/report")).headers.get("content-security-policy");
    assert.notEqual(n1, n2);
  } finally {
    await srv.close();
  }
});

test("the widget's summary adds up the saving of this week's calls as report lists them", { skip }, async () => {
  const { reg, config } = await setup();
  const srv = await serve(reg.routes[0]);
  try {
    const s = await srv.get("/plugins/cachefold/api/summary");
    assert.equal(s.status, 200);
    let week = 0;
    for (const id of ["sess-ui-a", "sess-ui-b"]) {
      const r = await cli(["report", id, "--json", "--out", join(config.stateDir, `${id}.svg`)], config);
      for (const c of r.calls) if (c.at >= Date.parse(s.body.weekStart)) week += c.legacyEstimateUsd - c.costUsd;
    }
    assert.ok(week > 0);
    assert.ok(Math.abs(s.body.savedThisWeekUsd - week) < 1e-6, `${s.body.savedThisWeekUsd} vs ${week}`);
    assert.ok(s.body.savedTodayUsd <= s.body.savedThisWeekUsd + 1e-9);
    assert.equal(s.body.sessionsThisWeek, 2);
    assert.ok(Array.isArray(s.body.recentBreaks));
  } finally {
    await srv.close();
  }
});

test("only GET and HEAD; unknown paths are a 404; the handler never throws to the Gateway", { skip }, async () => {
  const { reg } = await setup();
  const srv = await serve(reg.routes[0]);
  try {
    assert.equal((await srv.get("/plugins/cachefold/api/sessions", "POST")).status, 405);
    assert.equal((await srv.get("/plugins/cachefold/nope")).status, 404);
    assert.equal((await srv.get("/plugins/cachefold/report", "HEAD")).status, 200);
    assert.equal((await srv.get("/plugins/cachefold/api/session")).status, 400);
    assert.equal((await srv.get(`/plugins/cachefold/api/session?id=${"x".repeat(600)}`)).status, 400);
  } finally {
    await srv.close();
  }
});

test("the widget's summary is read at most once per 30 s per handler, then afresh", { skip }, async () => {
  const stateDir = tempDir();
  const config = { stateDir, logFile: join(stateDir, "decisions.jsonl") };
  await drive("sess-ttl-a", 2, config, 100000);
  const { createHandler, SUMMARY_TTL_MS } = await import("../../js/ui/route.js");
  const { cliContext } = await import("../../js/cli.js");
  let clock = Date.now();
  const srv = await serve({ handler: createHandler(await cliContext(config), { now: () => clock }) });
  try {
    const first = (await srv.get("/plugins/cachefold/api/summary")).body;
    await drive("sess-ttl-b", 2, config, 100000);
    assert.deepEqual((await srv.get("/plugins/cachefold/api/summary")).body, first, "within the TTL: the same answer");
    clock += SUMMARY_TTL_MS;
    const later = (await srv.get("/plugins/cachefold/api/summary")).body;
    assert.equal(later.sessionsThisWeek, first.sessionsThisWeek + 1);
    assert.ok(later.savedThisWeekUsd > first.savedThisWeekUsd);
  } finally {
    await srv.close();
  }
});

test("axis marks: folds, divergences and model changes from the decision log, placed before the next call", async () => {
  const { axisMarks } = await import("../../js/ui/data.js");
  const t = (s) => `2026-11-26T10:00:${String(s).padStart(2, "0")}.000Z`;
  const calls = [1, 5, 9].map((s, i) => ({ call: i + 1, at: Date.parse(t(s)) }));
  const events = [
    { event: "assemble", at: t(0), report: { fold: null, divergence: null, envChanges: [] } },
    { event: "assemble", at: t(4), report: { folds: [{ id: "f1", from: 3, to: 7, reason: "priced", foldedTokens: 900 }], divergence: null, envChanges: [] } },
    { event: "assemble", at: t(8), report: { divergence: { at: 5, cause: "host_compaction", action: "truncate" }, envChanges: [] } },
    { event: "assemble", at: t(10), report: { divergence: null, envChanges: ["model_changed"] } },
    { event: "commitTurn", at: t(11) },
    { event: "assemble", at: "not a time", report: { fold: { id: "f9" } } },
  ];
  assert.deepEqual(
    axisMarks(events, calls).map((m) => [m.kind, m.call, m.id ?? m.cause]),
    [
      ["fold", 1, "f1"],
      ["break", 2, "host_compaction"],
      ["break", 3, "model_changed"],
    ],
  );
});

test("api/session shows the lessons decision the engine uses: a damaged lessons.json is read from its copy, and the page writes nothing", { skip }, async () => {
  const { reg, stateDir } = await setup();
  const dir = join(stateDir, "sessions", readdirSync(join(stateDir, "sessions")).find((n) => n.startsWith("sess-ui-b")));
  const decision = { v: 1, sessionId: "sess-ui-b", inject: true, text: "- run the tests first", tokens: 7, chosen: ["tests-first"], reason: "code-gen request" };
  writeFileSync(join(dir, "lessons.json"), '{"v":1,"text":');
  writeFileSync(join(dir, "lessons.json.copy"), `${JSON.stringify(decision)}\n`);
  const srv = await serve(reg.routes[0]);
  try {
    const v = await srv.get("/plugins/cachefold/api/session?id=sess-ui-b");
    assert.equal(v.status, 200);
    assert.deepEqual(v.body.lessons, { inject: true, chosen: ["tests-first"], tokens: 7, reason: "code-gen request", decidedAt: null, text: "- run the tests first" });
    assert.equal(readFileSync(join(dir, "lessons.json"), "utf8"), '{"v":1,"text":', "a read-only view repairs nothing");
  } finally {
    await srv.close();
  }
});
