// The report page's and the widget's HTML, and the shared SVG charts (js/ui/page.js, chart.js):
// self-contained (no outside URL: nothing to load from anywhere but the plugin's own route),
// locked by a per-response CSP nonce, and charts drawn on 1-2-5 ticks with integer call ticks.
import test from "node:test";
import assert from "node:assert/strict";
import { csp, embedJson, reportPage, widgetPage } from "../../js/ui/page.js";
import { callTicks, costChart, fmtTokens, fmtUsd, hitMissChart, niceTicks } from "../../js/ui/chart.js";

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

test("the page, the widget and the charts name no outside URL", () => {
  for (const [name, text] of [
    ["report page", reportPage("n0nce", {})],
    ["widget", widgetPage("n0nce", {})],
    ["hit/miss chart", hitMissChart(calls, marks)],
    ["cost chart", costChart(calls, marks, { standalone: true })],
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

test("axis ticks fall on 1-2-5 steps from 0 and cover the maximum", () => {
  for (const [max, want] of [
    [99_000, [0, 20_000, 40_000, 60_000, 80_000, 100_000]],
    [0.17, [0, 0.05, 0.1, 0.15, 0.2]],
    [8, [0, 2, 4, 6, 8]],
    [1, [0, 0.2, 0.4, 0.6, 0.8, 1]],
  ]) assert.deepEqual(niceTicks(max, 5), want, String(max));
  for (const max of [3, 7.7, 123, 4567, 0.0123, 98_765]) {
    const t = niceTicks(max, 4);
    const step = t[1] - t[0];
    const mant = step / 10 ** Math.floor(Math.log10(step));
    assert.ok([1, 2, 2.5, 5].some((m) => Math.abs(m - mant) < 1e-9), `${max}: step ${step}`);
    assert.ok(t[t.length - 1] >= max && t[t.length - 2] < max, `${max}: ${t}`);
  }
  assert.deepEqual(callTicks(1), [1]);
  assert.deepEqual(callTicks(7), [1, 2, 3, 4, 5, 6, 7]);
  for (const n of [24, 48, 300]) for (const t of callTicks(n)) assert.ok(Number.isInteger(t) && t >= 1 && t <= n, `${n}: ${t}`);
  assert.equal(fmtTokens(50_000), "50K");
  assert.equal(fmtTokens(2_500), "2.5K");
  assert.equal(fmtUsd(0.0025, 0.0025), "$0.0025");
  assert.equal(fmtUsd(0.2, 0.05), "$0.20");
});

test("the hit/miss chart stacks each call, marks folds and breaks, and names its series", () => {
  const svg = hitMissChart(calls, marks);
  assert.equal((svg.match(/<g class="cf-bar"/g) ?? []).length, calls.length);
  assert.equal((svg.match(/class="cf-mark cf-mark-fold"/g) ?? []).length, 1);
  assert.equal((svg.match(/class="cf-mark cf-mark-break"/g) ?? []).length, 1);
  assert.match(svg, /break: host_compaction/);
  for (const name of ["cache hit", "cache miss", "predicted hit", "model call (this session, oldest first)", "prompt tokens"]) assert.ok(svg.includes(name), name);
  assert.doesNotMatch(svg, /sessions concatenated/);
});

test("the cost chart draws the two series with different strokes, the headline one on top", () => {
  // Identical series: the cachefold line must stay visible above the legacy one.
  const same = calls.map((c) => ({ ...c, legacyEstimateUsd: c.costUsd }));
  const svg = costChart(same, []);
  const legacy = svg.indexOf('class="cf-legacy" d=');
  const cf = svg.indexOf('class="cf-cf" d=');
  assert.ok(legacy > 0 && cf > legacy, "legacy first, cachefold drawn over it");
  assert.match(svg, /class="cf-legacy" d="[^"]+" stroke-width="2" stroke-dasharray="6 4"/);
  assert.match(svg, /class="cf-cf" d="[^"]+" stroke-width="2.5"\/>/);
  assert.match(svg, /cachefold \(spent\)/);
  assert.match(svg, /legacy estimate \(no cache hit\)/);
});

test("chart text is escaped", () => {
  const svg = hitMissChart(calls, [{ kind: "break", call: 1, cause: '<script>alert("x")</script>' }]);
  assert.doesNotMatch(svg, /<script>/);
  assert.match(svg, /&lt;script&gt;/);
});
