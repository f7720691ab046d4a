// The report page and the dashboard widget: one self-contained HTML document each (inline CSS
// and script under a per-response CSP nonce, no outside URL). The server embeds the document's
// data (the same objects the JSON data route answers) as a JSON block, so the page needs no
// request of its own: inside the Control UI it runs in an opaque sandboxed frame whose fetches
// would be cross-origin. Paging and the session view are plain links (GET navigations, which the
// frame's grant covers). The script fills the DOM with textContent only; the charts arrive as
// SVG drawn by the core's chart module on the server (js/ui/chart.js), every value escaped there,
// coloured by the core's chart stylesheet (chartCss), which follows the same light/dark switch.
import { readFileSync } from "node:fs";

// The documents' browser side lives in ./client/: the stylesheets, and the two client scripts,
// each run as one strict-mode function: common.js (the theme from ?theme=, the mount point, the
// CLI's money format) followed by report.js or widget.js. Read once, at load.
const client = (name) => readFileSync(new URL(`./client/${name}`, import.meta.url), "utf8");
const COMMON = client("common.js");
const script = (name) => `\n(function () {\n${COMMON}${client(name)}})();\n`;
const CSS = client("page.css");
const SCRIPT = script("report.js");
/** The widget's client script. */
export const WIDGET_SCRIPT = script("widget.js");
const WIDGET_CSS = `${CSS}${client("widget.css")}`;

/** JSON for a <script type="application/json"> block: nothing in it can close the element. */
export function embedJson(data) {
  return JSON.stringify(data).replace(/</g, "\\u003c").replace(/>/g, "\\u003e").replace(/&/g, "\\u0026").replace(/\u2028/g, "\\u2028").replace(/\u2029/g, "\\u2029");
}

function doc(title, nonce, css, script, data) {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><meta name="referrer" content="no-referrer"><link rel="icon" href="data:,"><title>${title}</title><style nonce="${nonce}">${css}</style></head>
<body><main id="app"></main><script type="application/json" id="cf-data">${embedJson(data ?? {})}</script><script nonce="${nonce}">${script}</script></body></html>
`;
}

/**
 * The report page: `data` is {sessions, summary} (the sessions table) or {session} (one
 * session's view), each the JSON data route's answer or {error}. `chartCss`: the charts'
 * stylesheet (the core's chartCss()).
 */
export function reportPage(nonce, data, { chartCss = "" } = {}) {
  return doc("cachefold report", nonce, `${CSS}${chartCss}`, SCRIPT, data);
}

/** The dashboard widget's document (`data.summary`: saving today / this week, recent breaks). */
export function widgetPage(nonce, data) {
  return doc("cachefold savings", nonce, WIDGET_CSS, WIDGET_SCRIPT, data);
}

const escAttr = (v) => String(v).replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

/**
 * The body of the dashboard's board widget (the Gateway wraps it in its sandboxed document): the
 * widget's stylesheet, its data as a JSON block (`data.summary`, `data.links`: absolute URLs of
 * the report) and its client script from `scriptUrl` (the capability-scoped resource URL).
 */
export function boardWidgetBody(data, scriptUrl) {
  return `<style>${WIDGET_CSS}</style><main id="app"></main><script type="application/json" id="cf-data">${embedJson(data ?? {})}</script><script src="${escAttr(scriptUrl)}"></script>`;
}

/**
 * The board widget's script (served from the capability URL): the summary as the route had it
 * when the script was requested (fresher than the one composed into the document), then the
 * widget's client script. `summary` null: the document's own summary is shown.
 */
export function boardWidgetScript(summary) {
  return `window.cachefoldSummary = ${embedJson(summary ?? null)};\n${WIDGET_SCRIPT}`;
}

/** The Content-Security-Policy of both documents: nothing but this response's inline code (no request at all). */
export function csp(nonce) {
  return `default-src 'none'; script-src 'nonce-${nonce}'; style-src 'nonce-${nonce}'; img-src data:; base-uri 'none'; form-action 'none'`;
}
