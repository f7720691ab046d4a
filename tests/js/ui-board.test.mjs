// The dashboard's board widget content kind: registered with its capability route where the host
// has the API; a host without it, or one whose registration throws, loses the widget only (the
// plugin loads, the context engine runs turns). composeDocument is synchronous and serves the
// summary the report route computed (one cache, one computation).
import test from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import { join } from "node:path";
import { fakeApi, tempDir, user, assistantText, pkgSkip } from "./helpers.mjs";

const skip = pkgSkip();
const usage = (input, cacheRead, output = 20) => ({ input, output, cacheRead, cacheWrite: 0, totalTokens: input + cacheRead + output, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } });

/** Register the plugin on a fake api extended by `extend(api, reg)`. */
async function register(config, extend) {
  const { default: plugin } = await import("../../js/index.js");
  const { api, reg } = fakeApi(config);
  reg.routes = [];
  reg.descriptors = [];
  reg.kinds = [];
  api.registerHttpRoute = (r) => reg.routes.push(r);
  api.session = { controls: { registerControlUiDescriptor: (d) => reg.descriptors.push(d) } };
  extend?.(api, reg);
  plugin.register(api);
  return reg;
}

/** Two turns of one session through the registered engine: assemble passes the history, commit stores it. */
async function runTurns(reg, sessionId) {
  assert.equal(typeof reg.engines.cachefold, "function", "the context engine is registered");
  const history = [user("hello")];
  for (let t = 0; t < 2; t++) {
    const eng = await reg.engines.cachefold({});
    const out = await eng.assemble({ sessionId, messages: history, model: "deepseek-v4-flash", tokenBudget: 100000 });
    assert.ok(Array.isArray(out.messages) && out.messages.length >= history.length, "assemble answers the history");
    const turn = [assistantText(`reply ${t}`, usage(300, 1000 + 500 * t))];
    history.push(...turn);
    await eng.commitTurn({ sessionId, advancementKey: `k${t}`, messages: [history[history.length - 2], ...turn] });
    history.push(user(`next ${t}`));
  }
}

async function serve(handler) {
  const server = http.createServer((req, res) => void Promise.resolve(handler(req, res)));
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address();
  return {
    async get(path, method = "GET") {
      const r = await fetch(`http://127.0.0.1:${port}${path}`, { method });
      return { status: r.status, type: r.headers.get("content-type") ?? "", text: await r.text() };
    },
    close: () => new Promise((r) => server.close(r)),
  };
}

const dataOf = (html) => JSON.parse(/<script type="application\/json" id="cf-data">([^<]*)<\/script>/.exec(html)[1]);
const RESOURCE = "http://127.0.0.1:18789/__openclaw__/cap/tok123/plugins/cachefold-board/widget.js";

test("a host without registerBoardWidgetContentKind: no capability route, no error, the engine runs", { skip }, async () => {
  const stateDir = tempDir();
  const reg = await register({ stateDir });
  assert.deepEqual(reg.routes.map((r) => r.path), ["/plugins/cachefold"], "only the gateway-auth report route");
  assert.equal(reg.descriptors.length, 2);
  assert.deepEqual(reg.errors, []);
  await runTurns(reg, "sess-board-none");
  assert.deepEqual(reg.errors, []);
});

test("a host whose registerBoardWidgetContentKind throws: the error is logged, the page, tab and engine stay", { skip }, async () => {
  const stateDir = tempDir();
  const reg = await register({ stateDir }, (api) => {
    api.registerBoardWidgetContentKind = () => {
      throw new Error("invalid board widget content kind");
    };
  });
  assert.ok(reg.errors.some((e) => e.includes("dashboard widget kind") && e.includes("invalid board widget content kind")), JSON.stringify(reg.errors));
  assert.equal(reg.routes.filter((r) => r.path === "/plugins/cachefold").length, 1, "the report route is still registered");
  assert.equal(reg.routes.filter((r) => r.nodeCapability).length, 0, "no capability route without its kind");
  assert.equal(reg.descriptors.length, 2, "the tab and widget descriptors are still registered");
  const before = reg.errors.length;
  await runTurns(reg, "sess-board-throws");
  assert.equal(reg.errors.length, before, "the turns log no error");
});

test("a host whose registerHttpRoute and descriptors throw too: the engine still runs turns", { skip }, async () => {
  const stateDir = tempDir();
  const reg = await register({ stateDir }, (api) => {
    api.registerHttpRoute = () => {
      throw new Error("no routes here");
    };
    api.session = { controls: { registerControlUiDescriptor: () => { throw new Error("no descriptors here"); } } };
    api.registerBoardWidgetContentKind = (k) => {
      throw new Error(`no kinds here (${k.kind})`);
    };
  });
  assert.ok(reg.errors.length >= 2, JSON.stringify(reg.errors));
  await runTurns(reg, "sess-board-all-throw");
});

test("the board widget kind: capability route on its surface, synchronous composeDocument over the report route's cached summary", { skip }, async () => {
  const stateDir = tempDir();
  const config = { stateDir, logFile: join(stateDir, "decisions.jsonl") };
  const reg = await register(config, (api, r) => {
    api.registerBoardWidgetContentKind = (k) => r.kinds.push(k);
  });
  assert.deepEqual(reg.errors, []);
  assert.equal(reg.kinds.length, 1);
  const kind = reg.kinds[0];
  assert.equal(kind.kind, "savings");
  assert.match(kind.kind, /^[a-z][a-z0-9-]{0,31}$/u, "the host's kind pattern");
  const cap = reg.routes.find((r) => r.nodeCapability);
  assert.ok(cap, JSON.stringify(reg.routes.map((r) => r.path)));
  assert.equal(cap.nodeCapability.surface, kind.resources.surface, "the kind's resources are on the capability route's surface");
  assert.equal(cap.auth, "plugin");
  assert.equal(cap.match, "prefix");
  const gw = reg.routes.find((r) => r.path === "/plugins/cachefold");
  assert.ok(!cap.path.startsWith(`${gw.path}/`), "the plugin-auth route does not overlap the gateway-auth one");
  for (const p of kind.resources.paths) assert.ok(p.startsWith(`${cap.path}/`), `${p} is served by the capability route`);

  const resourceUrls = { [kind.resources.paths[0]]: RESOURCE };
  await runTurns(reg, "sess-board-ok");
  // Before any summary was computed: a document that says so (never a promise, never a throw).
  const early = kind.composeDocument({ source: "{}", title: "t", resourceUrls, promptGranted: false });
  assert.equal(typeof early, "string", "composeDocument is synchronous");
  assert.match(dataOf(early).summary.error, /still reading/);

  // Sources: "" or a JSON object.
  for (const ok of ["", "{}", ' {"x":1} ']) kind.validateSource(ok);
  for (const bad of ["[1]", "x", "null", 7, "x".repeat(5000)]) assert.throws(() => kind.validateSource(bad), /source/);

  assert.throws(() => kind.composeDocument({ source: "{}", title: "t", resourceUrls: {}, promptGranted: false }), /resource unavailable/);


  // The report route computes the summary; the widget serves that same object.
  const srv = await serve(gw.handler);
  const board = await serve(cap.handler);
  try {
    const r = await srv.get("/plugins/cachefold/api/summary");
    assert.equal(r.status, 200);
    const summary = JSON.parse(r.text);
    assert.ok(summary.savedThisWeekUsd > 0, r.text);
    const body = kind.composeDocument({ source: "{}", title: "t", resourceUrls, promptGranted: false });
    assert.equal(typeof body, "string");
    const data = dataOf(body);
    assert.deepEqual(data.summary, summary, "the widget's figures are the route's summary");
    assert.equal(data.links.report, "http://127.0.0.1:18789/plugin?plugin=cachefold&id=report");
    assert.ok(body.includes(`<script src="${RESOURCE}"></script>`), "the client script comes from the capability URL");
    assert.ok(!/<script>/.test(body), "no inline script of its own");

    const js = await board.get(kind.resources.paths[0]);
    assert.equal(js.status, 200);
    assert.match(js.type, /^text\/javascript/);
    assert.ok(js.text.includes('getElementById("cf-data")'), "the widget's client script");
    // The script carries the summary the route has now: a document composed before it (the
    // "still reading" one above) shows the figures once its script loads.
    const m = /^window\.cachefoldSummary = (.*);\n/.exec(js.text);
    assert.ok(m, js.text.slice(0, 200));
    assert.deepEqual(JSON.parse(m[1]), summary, "the script's summary is the route's");
    assert.equal((await board.get(`${cap.path}/other`)).status, 404);
    assert.equal((await board.get(kind.resources.paths[0], "POST")).status, 405);
  } finally {
    await srv.close();
    await board.close();
  }
});
