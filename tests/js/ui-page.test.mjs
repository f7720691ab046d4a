// The report page's and the widget's HTML, and the shared SVG charts (js/ui/page.js, chart.js):
// self-contained (no outside URL: nothing to load from anywhere but the plugin's own route),
// locked by a per-response CSP nonce, and charts drawn on 1-2-5 ticks with integer call ticks.
import test from "node:test";
import assert from "node:assert/strict";
import { csp, embedJson, reportPage, widgetPage } from "../../js/ui/page.js";
import { chartCss, costChart, hitMissChart } from "../../js/ui/chart.js";
import { reportSvg } from "../../js/cli/status.js";
import { pkgSkip } from "./helpers.mjs";

const skip = pkgSkip(); // the charts are drawn by the core (pkg/)

const SVG_NS = "http://www.w3.org/2000/svg"; // an XML namespace name, never fetched

/** Every absolute or protocol-relative URL in `text`, the SVG namespace left out. */
function outsideUrls(text) {
  return [...text.matchAll(/(?:[a-z][a-z0-9+.-]*:)?\/\/[^\s"'<>)]+/gi)].map((m) => m[0]).filter((u) => u !== SVG_NS && !/^\/\/\s*$/.test(u));
}

const calls = Array.from({ length: 7 }, (_, i) => ({ call: i + 1, hit: 1000 * i, miss: 300 + 10 * i, predictedHit: 900 * i, costUsd: 0.0001 * (i + 1), legacyEstimateUsd: 0.0004 * (i + 1) }));
const marks = [
  { kind: "fold", call: 3, id: "f1", at: "2026-11-26T00:00:00.000Z" },
  { kind: "break", call: 5, cause: "host_compaction", at: "2026-11-26T00:01:00.000Z" },
];

test("the page, the widget and the charts name no outside URL", { skip }, async () => {
  for (const [name, text] of [
    ["report page", reportPage("n0nce", {}, { chartCss: await chartCss() })],
    ["widget", widgetPage("n0nce", {})],
    ["hit/miss chart", await hitMissChart(calls, marks)],
    ["cost chart", await costChart(calls, marks, { standalone: true })],
    ["report command's chart", await reportSvg("s1", calls.map((c) => ({ costUsd: c.costUsd, uncachedUsd: c.legacyEstimateUsd, prompt: c.hit + c.miss })))],
  ]) {
    assert.deepEqual(outsideUrls(text), [], name);
    assert.doesNotMatch(text, /<(link|script|img|iframe)[^>]+(src|href)=["'](?!data:)/i, `${name} loads no external resource`);
    assert.doesNotMatch(text, /@import|url\(/i, `${name}: no CSS fetch`);
  }
  // The check itself catches one.
  assert.deepEqual(outsideUrls('<img src="https://example.org/x.png">'), ["https://example.org/x.png"]);
  assert.deepEqual(outsideUrls('<script src="//cdn.example/x.js">'), ["//cdn.example/x.js"]);
});

test("inline style and script run only under the response's nonce; the data is embedded, no request is made", () => {
  const html = reportPage("abc123", { sessions: { error: "x" } });
  assert.equal((html.match(/<script nonce="abc123">/g) ?? []).length, 1);
  assert.equal((html.match(/<style nonce="abc123">/g) ?? []).length, 1);
  assert.equal((html.match(/<script type="application\/json" id="cf-data">/g) ?? []).length, 1);
  assert.doesNotMatch(html, /<script(?! nonce="abc123"| type="application\/json" id="cf-data")/);
  assert.doesNotMatch(html, /\son[a-z]+=/i, "no inline event handler attributes");
  assert.doesNotMatch(html + widgetPage("x"), /fetch\(|XMLHttpRequest|WebSocket|EventSource/, "the documents make no request");
  const policy = csp("abc123");
  assert.match(policy, /default-src 'none'/);
  assert.match(policy, /script-src 'nonce-abc123'/);
  assert.doesNotMatch(policy, /connect-src|unsafe-inline|unsafe-eval|https?:/);
});

test("embedded data cannot close its script element", () => {
  const evil = { sessions: { sessions: [{ sessionId: "</script><script>alert(1)</script>", note: "a & b \u2028" }] } };
  const html = reportPage("n", evil);
  const block = html.slice(html.indexOf('id="cf-data">') + 13, html.indexOf("</script>", html.indexOf('id="cf-data">')));
  assert.doesNotMatch(block, /[<>]/);
  assert.deepEqual(JSON.parse(block), evil);
  assert.deepEqual(JSON.parse(embedJson(evil)), evil);
});

test("light and dark themes, a phone layout", () => {
  const html = reportPage("n", {});
  assert.match(html, /@media \(prefers-color-scheme:dark\)/);
  assert.match(html, /:root\[data-theme=dark\]/);
  assert.match(html, /@media \(max-width:640px\)/);
  assert.match(html, /<meta name="viewport" content="width=device-width, initial-scale=1">/);
});

/** The y tick labels of an SVG drawn by the core, in order. */
const yTicks = (svg) => [...svg.matchAll(/class="cf-muted cf-ytick"[^>]*>([^<]*)</g)].map((m) => m[1]);
const xTicks = (svg) => [...svg.matchAll(/class="cf-muted cf-xtick"[^>]*>([^<]*)</g)].map((m) => m[1]);

test("the charts' axes: 1-2-5 y ticks from 0 covering the maximum, in K/$ units, call ticks on x", { skip }, async () => {
  // The old charts' odd ticks: 0.08, 0.17 and 50K, 99K.
  const big = [{ hit: 40_000, miss: 9_000, predictedHit: 40_000, costUsd: 0.08, legacyEstimateUsd: 0.085 }, { hit: 90_000, miss: 9_000, predictedHit: 90_000, costUsd: 0.09, legacyEstimateUsd: 0.085 }];
  assert.deepEqual(yTicks(await hitMissChart(big, [])), ["0", "50K", "100K"]);
  assert.deepEqual(yTicks(await costChart(big, [])), ["$0.00", "$0.05", "$0.10", "$0.15", "$0.20"]);
  assert.deepEqual(xTicks(await costChart(big, [])), ["1", "2"]);
  const many = Array.from({ length: 48 }, () => big[0]);
  assert.deepEqual(xTicks(await hitMissChart(many, [])), ["5", "10", "15", "20", "25", "30", "35", "40", "45"]);
});

test("the hit/miss chart stacks each call, marks folds and breaks, and names its series", { skip }, async () => {
  const svg = await hitMissChart(calls, marks);
  assert.equal((svg.match(/<g class="cf-bar"/g) ?? []).length, calls.length);
  assert.match(svg, /data-call="7" data-hit="6000" data-miss="360"/);
  assert.equal((svg.match(/class="cf-mark cf-mark-fold"/g) ?? []).length, 1);
  assert.equal((svg.match(/class="cf-mark cf-mark-break"/g) ?? []).length, 1);
  assert.match(svg, /break: host_compaction/);
  for (const name of ["cache hit", "cache miss", "predicted hit", "model call (this session, oldest first)", "prompt tokens"]) assert.ok(svg.includes(name), name);
  assert.doesNotMatch(svg, /sessions concatenated/);
});

test("the cost chart: the headline line is drawn last and solid, one under it is marked and named", { skip }, async () => {
  // Identical series: the cachefold line must stay visible above the legacy one.
  const same = calls.map((c) => ({ ...c, legacyEstimateUsd: c.costUsd }));
  const svg = await costChart(same, []);
  const legacy = svg.indexOf('data-series="legacy estimate (no cache hit)"');
  const cf = svg.indexOf('data-series="cachefold (spent)"');
  assert.ok(legacy > 0 && cf > legacy, "legacy first, cachefold drawn over it");
  assert.match(svg, /<path class="cf-l cf-s1" stroke-width="1.6" stroke-dasharray="6 4" d="[^"]+" data-series="legacy/);
  assert.match(svg, /<path class="cf-l cf-s0" stroke-width="2.5" d="[^"]+" data-series="cachefold/);
  assert.match(svg, /legacy estimate \(no cache hit\) \(under cachefold \(spent\): same values\)/);
  assert.ok((svg.match(/<circle class="cf-o cf-s1"/g) ?? []).length >= calls.length, "markers on the hidden line");
  // Apart: no note.
  assert.doesNotMatch(await costChart(calls, []), /same values/);
});

test("the report command's SVG: the shared drawing, both palettes, an axis that says which calls it shows", { skip }, async () => {
  const rows = calls.map((c) => ({ costUsd: c.costUsd, uncachedUsd: c.legacyEstimateUsd, prompt: c.hit + c.miss }));
  const svg = await reportSvg("s1", rows, 40);
  assert.match(svg, /^<svg xmlns="http:\/\/www.w3.org\/2000\/svg"/);
  assert.match(svg, /<style>.*prefers-color-scheme:dark/s);
  assert.match(svg, /model call \(the last 7 of this session&#39;s 40, oldest first\)/);
  assert.match(await reportSvg("s1", rows), /model call \(this session, oldest first\)/);
  assert.equal(await reportSvg("s1", rows), await reportSvg("s1", rows), "deterministic");
});

test("chart text is escaped", { skip }, async () => {
  const svg = await hitMissChart(calls, [{ kind: "break", call: 1, cause: '<script>alert("x")</script>' }]);
  assert.doesNotMatch(svg, /<script>/);
  assert.match(svg, /&lt;script&gt;/);
});
