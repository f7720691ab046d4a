// The Gateway side of the report page and the dashboard widget: one HTTP route (prefix
// /plugins/cachefold, gateway auth: the Gateway refuses a request without its token or the
// Control UI's frame grant before this handler runs) and the Control UI descriptors.
//
//   GET /plugins/cachefold/report[?offset&limit | ?session=<id>]   the page (HTML, its data embedded)
//   GET /plugins/cachefold/widget                  the dashboard widget's document (HTML)
//   GET /plugins/cachefold/api/sessions?offset&limit   one page of `status --json`
//   GET /plugins/cachefold/api/session?id=<id>     one session's view, with its two charts (SVG)
//   GET /plugins/cachefold/api/summary             the widget's figures
import { randomBytes } from "node:crypto";
import { BadRequest, pageParams, sessionsPage, sessionView, widgetSummary } from "./data.js";
import { chartCss, costChart, hitMissChart } from "./chart.js";
import { boardWidgetBody, boardWidgetScript, csp, reportPage, widgetPage } from "./page.js";

export const PLUGIN_ID = "cachefold";
export const BASE = `/plugins/${PLUGIN_ID}`;
export const WIDGET_ID = "savings";
export const TAB_ID = "report";

function send(res, status, type, body, extra = {}) {
  const buf = Buffer.from(body);
  res.statusCode = status;
  res.setHeader("content-type", type);
  res.setHeader("content-length", String(buf.length));
  res.setHeader("cache-control", "no-store");
  res.setHeader("x-content-type-options", "nosniff");
  res.setHeader("referrer-policy", "no-referrer");
  for (const [k, v] of Object.entries(extra)) res.setHeader(k, v);
  res.end(res.req?.method === "HEAD" ? undefined : buf);
}

const json = (res, status, data, extra) => send(res, status, "application/json; charset=utf-8", JSON.stringify(data), extra);

/** Answer 405 to anything but GET and HEAD; true when it did. */
function refusedMethod(req, res) {
  if (req.method === "GET" || req.method === "HEAD") return false;
  json(res, 405, { error: "only GET and HEAD" }, { allow: "GET, HEAD" });
  return true;
}

function html(res, page, data, status = 200) {
  const nonce = randomBytes(16).toString("base64");
  send(res, status, "text/html; charset=utf-8", page(nonce, data), { "content-security-policy": csp(nonce) });
}

/** One session's view with its two charts, or null. */
async function sessionWithCharts(ctx, id) {
  if (!id || id.length > 512) throw new BadRequest("id must name a session (1 to 512 characters)");
  const view = await sessionView(ctx, id);
  return view && { ...view, charts: { hitMiss: await hitMissChart(view.calls, view.marks), cost: await costChart(view.calls, view.marks) } };
}

const notFound = (id) => `no cachefold session matches ${JSON.stringify(String(id).slice(0, 80))}`;

/** The page's data: the sessions table (with the widget's summary) or one session's view. */
async function pageData(ctx, p, summary) {
  const id = p.get("session");
  if (id != null) {
    try {
      const session = await sessionWithCharts(ctx, id);
      return session ? { status: 200, data: { session } } : { status: 404, data: { session: { error: notFound(id) } } };
    } catch (err) {
      if (err instanceof BadRequest) return { status: 400, data: { session: { error: err.message } } };
      throw err;
    }
  }
  let sessions;
  let status = 200;
  try {
    sessions = await sessionsPage(ctx, pageParams(p));
  } catch (err) {
    if (!(err instanceof BadRequest)) throw err;
    sessions = { error: err.message };
    status = 400;
  }
  return { status, data: { sessions, summary: await summary() } };
}

/** The widget's summary reads every session written this week: kept for SUMMARY_TTL_MS. */
export const SUMMARY_TTL_MS = 30_000;

/**
 * The one cache of the widget's summary (widgetSummary over the sessions, as the page shows it),
 * shared by the route (`get`, awaited) and the board widget kind (`peek`, synchronous: the last
 * value computed, or null; `refresh` starts a new computation when the value is older than the
 * TTL and none is running, and never throws).
 */
export function createSummaryCache(ctx, { now = Date.now } = {}) {
  let cached = null;
  let running = null;
  const stale = (t) => !cached || t - cached.at >= SUMMARY_TTL_MS || t < cached.at;
  const compute = () => {
    if (!running) {
      const t = now();
      running = widgetSummary(ctx, t)
        .then((value) => {
          cached = { at: t, value };
          return value;
        })
        .finally(() => {
          running = null;
        });
    }
    return running;
  };
  return {
    async get() {
      return stale(now()) ? await compute() : cached.value;
    },
    peek() {
      return cached ? cached.value : null;
    },
    refresh() {
      if (!stale(now())) return;
      compute().catch((err) => ctx.logger?.warn?.(`cachefold: dashboard summary: ${err?.message ?? err}`));
    },
  };
}

/** The route handler: answers every request under BASE (true), never throws to the Gateway. */
export function createHandler(ctx, { now = Date.now, summaryCache = createSummaryCache(ctx, { now }) } = {}) {
  const summary = () => summaryCache.get();
  return async function cachefoldUi(req, res) {
    try {
      const url = new URL(req.url ?? "/", "http://gateway.invalid");
      let sub = url.pathname.startsWith(BASE) ? url.pathname.slice(BASE.length) : url.pathname;
      if (sub === "" || sub === "/") sub = "/report";
      if (refusedMethod(req, res)) return true;
      const p = url.searchParams;
      switch (sub) {
        case "/report": {
          const { status, data } = await pageData(ctx, p, summary);
          const css = await chartCss();
          html(res, (nonce, d) => reportPage(nonce, d, { chartCss: css }), data, status);
          return true;
        }
        case "/widget":
          html(res, widgetPage, { summary: await summary() });
          return true;
        case "/api/sessions":
          json(res, 200, await sessionsPage(ctx, pageParams(p)));
          return true;
        case "/api/session": {
          const id = p.get("id");
          const view = await sessionWithCharts(ctx, id);
          if (!view) json(res, 404, { error: notFound(id) });
          else json(res, 200, view);
          return true;
        }
        case "/api/summary":
          json(res, 200, await summary());
          return true;
        default:
          json(res, 404, { error: `no such cachefold page: ${sub.slice(0, 80)}` });
          return true;
      }
    } catch (err) {
      const status = err instanceof BadRequest ? 400 : 500;
      if (status === 500) ctx.logger?.warn?.(`cachefold: report page: ${err?.message ?? err}`);
      try {
        if (!res.headersSent) json(res, status, { error: String(err?.message ?? err) });
        else res.end();
      } catch {}
      return true;
    }
  };
}

/** The widget descriptor (the Control UI's dashboard, no labs flag needed: the Gateway renders its path in a sandboxed frame). */
export const widgetDescriptor = Object.freeze({
  id: WIDGET_ID,
  surface: "widget",
  label: "cachefold savings",
  description: "What cachefold saved today and this week on this Gateway, the sessions whose prompt cache broke most recently, and a link to the full report.",
  requiredScopes: ["operator.read"],
  path: `${BASE}/widget`,
  schema: { type: "object", additionalProperties: false, properties: {} },
});

/** A Control UI tab with the report page (a sandboxed frame over the gateway-auth route). */
export const tabDescriptor = Object.freeze({
  id: TAB_ID,
  surface: "tab",
  label: "cachefold",
  description: "cachefold's sessions: spend vs the legacy estimate, cache hits, folds and cache breaks.",
  icon: "chart",
  group: "control",
  requiredScopes: ["operator.read"],
  path: `${BASE}/report`,
});

// ---- the board widget content kind (what the Control UI's dashboard frames) ----
// The dashboard frames a plugin widget only for a kind registered with
// api.registerBoardWidgetContentKind whose resource surface has a capability URL on the
// dashboard's connection: the Gateway mints one at the handshake for each surface of an HTTP route
// registered with nodeCapability (the Canvas plugin's A2UI kind is built the same way). The frame's
// document is composeDocument's synchronous answer: the cached summary embedded as JSON, and the
// widget's client script loaded from the capability-scoped resource URL.

export const BOARD_KIND = "savings";
export const BOARD_SURFACE = PLUGIN_ID;
/** The capability route (auth "plugin": the Gateway checks the connection-scoped capability). */
export const BOARD_BASE = `/plugins/${PLUGIN_ID}-board`;
export const BOARD_SCRIPT_PATH = `${BOARD_BASE}/widget.js`;
/** The source a board widget of this kind takes: "" or a JSON object (it has no options yet). */
const MAX_SOURCE_CHARS = 4096;

function parseSource(source) {
  if (typeof source !== "string" || source.length > MAX_SOURCE_CHARS) throw new Error(`a cachefold savings widget's source is a string of at most ${MAX_SOURCE_CHARS} characters ("" or "{}")`);
  if (source.trim() === "") return {};
  let v;
  try {
    v = JSON.parse(source);
  } catch (err) {
    throw new Error(`a cachefold savings widget's source is "" or a JSON object: ${err.message}`);
  }
  if (!v || typeof v !== "object" || Array.isArray(v)) throw new Error(`a cachefold savings widget's source is "" or a JSON object`);
  return v;
}

/** The board widget content kind, over the route's summary cache. */
export function boardWidgetKind(summaryCache) {
  return {
    kind: BOARD_KIND,
    label: "cachefold savings",
    resources: { surface: BOARD_SURFACE, paths: [BOARD_SCRIPT_PATH] },
    validateSource(source) {
      parseSource(source);
      summaryCache.refresh();
    },
    composeDocument({ source, resourceUrls }) {
      parseSource(source);
      const scriptUrl = resourceUrls?.[BOARD_SCRIPT_PATH];
      if (!scriptUrl) throw new Error(`cachefold widget resource unavailable: ${BOARD_SCRIPT_PATH}`);
      summaryCache.refresh();
      const summary = summaryCache.peek() ?? { error: "cachefold is still reading its sessions: reopen the dashboard in a moment" };
      // The report opens as the Control UI's cachefold tab, on the Gateway serving the resource.
      const origin = new URL(scriptUrl).origin;
      const report = `${origin}/plugin?plugin=${PLUGIN_ID}&id=${TAB_ID}`;
      return boardWidgetBody({ summary, links: { report, session: report } }, scriptUrl);
    },
  };
}

/**
 * The capability route: serves the widget's client script (GET/HEAD) with the summary awaited
 * from the same cache (so a document composed from an older summary, or before the first one,
 * shows the current one), 404 for anything else.
 */
export function createBoardHandler(ctx, summaryCache) {
  return async function cachefoldBoard(req, res) {
    try {
      if (refusedMethod(req, res)) return true;
      if (new URL(req.url ?? "/", "http://gateway.invalid").pathname !== BOARD_SCRIPT_PATH) {
        json(res, 404, { error: "no such cachefold resource" });
        return true;
      }
      const summary = await summaryCache.get().catch((err) => {
        ctx?.logger?.warn?.(`cachefold: dashboard summary: ${err?.message ?? err}`);
        return null;
      });
      send(res, 200, "text/javascript; charset=utf-8", boardWidgetScript(summary));
    } catch {
      try {
        if (!res.headersSent) json(res, 500, { error: "cachefold board resource failed" });
      } catch {}
    }
    return true;
  };
}

/** Register the board widget kind and its capability route (only where the host has both APIs). */
export function registerBoardWidget(api, ctx, summaryCache) {
  if (typeof api.registerBoardWidgetContentKind !== "function" || typeof api.registerHttpRoute !== "function") return false;
  api.registerBoardWidgetContentKind(boardWidgetKind(summaryCache));
  api.registerHttpRoute({ path: BOARD_BASE, auth: "plugin", match: "prefix", nodeCapability: { surface: BOARD_SURFACE }, handler: createBoardHandler(ctx, summaryCache) });
  return true;
}

/**
 * The route, the descriptors and the board widget kind as [what, register] pairs, over one
 * summary cache. Each part is optional on older hosts and registered on its own (index.js): a
 * host without an API, or one that throws, loses that part only (logged), never the others nor
 * the plugin.
 */
export function uiParts(api, ctx) {
  const summaryCache = createSummaryCache(ctx);
  return [
    ["report page route", () => typeof api.registerHttpRoute === "function" && api.registerHttpRoute({ path: BASE, match: "prefix", auth: "gateway", handler: createHandler(ctx, { summaryCache }) })],
    [
      "Control UI descriptors",
      () => {
        const controls = api.session?.controls;
        if (typeof controls?.registerControlUiDescriptor !== "function") return;
        controls.registerControlUiDescriptor({ ...widgetDescriptor });
        controls.registerControlUiDescriptor({ ...tabDescriptor });
      },
    ],
    ["dashboard widget kind", () => registerBoardWidget(api, ctx, summaryCache)],
  ];
}
