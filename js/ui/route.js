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
import { BadRequest, intParam, PAGE_DEFAULT, PAGE_MAX, sessionsPage, sessionView, widgetSummary } from "./data.js";
import { chartCss, costChart, hitMissChart } from "./chart.js";
import { csp, reportPage, widgetPage } from "./page.js";

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

const json = (res, status, data) => send(res, status, "application/json; charset=utf-8", JSON.stringify(data));

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
    const offset = intParam(p, "offset", { min: 0, fallback: 0 });
    const limit = intParam(p, "limit", { min: 1, max: PAGE_MAX, fallback: PAGE_DEFAULT });
    sessions = await sessionsPage(ctx, { offset, limit });
  } catch (err) {
    if (!(err instanceof BadRequest)) throw err;
    sessions = { error: err.message };
    status = 400;
  }
  return { status, data: { sessions, summary: await summary() } };
}

/** The widget's summary reads every session written this week: kept for SUMMARY_TTL_MS. */
export const SUMMARY_TTL_MS = 30_000;

/** The route handler: answers every request under BASE (true), never throws to the Gateway. */
export function createHandler(ctx, { now = Date.now } = {}) {
  let cached = null;
  const summary = async () => {
    const t = now();
    if (!cached || t - cached.at >= SUMMARY_TTL_MS || t < cached.at) cached = { at: t, value: await widgetSummary(ctx, t) };
    return cached.value;
  };
  return async function cachefoldUi(req, res) {
    try {
      const url = new URL(req.url ?? "/", "http://gateway.invalid");
      let sub = url.pathname.startsWith(BASE) ? url.pathname.slice(BASE.length) : url.pathname;
      if (sub === "" || sub === "/") sub = "/report";
      if (req.method !== "GET" && req.method !== "HEAD") {
        send(res, 405, "application/json; charset=utf-8", JSON.stringify({ error: "only GET and HEAD" }), { allow: "GET, HEAD" });
        return true;
      }
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
        case "/api/sessions": {
          const offset = intParam(p, "offset", { min: 0, fallback: 0 });
          const limit = intParam(p, "limit", { min: 1, max: PAGE_MAX, fallback: PAGE_DEFAULT });
          json(res, 200, await sessionsPage(ctx, { offset, limit }));
          return true;
        }
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

/** Register the route and the descriptors (each is optional on older hosts). */
export function registerUi(api, ctx) {
  if (typeof api.registerHttpRoute === "function") {
    api.registerHttpRoute({ path: BASE, match: "prefix", auth: "gateway", handler: createHandler(ctx) });
  }
  const controls = api.session?.controls;
  if (typeof controls?.registerControlUiDescriptor === "function") {
    controls.registerControlUiDescriptor({ ...widgetDescriptor });
    controls.registerControlUiDescriptor({ ...tabDescriptor });
  }
}
