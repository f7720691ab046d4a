// The charts of one session, drawn by the core's chart module (src/chart: nice 1-2-5 ticks,
// call ticks, K/M and $ labels, the headline line drawn last and solid, a line hidden under
// another one marked and named in the legend, light and dark palettes). This file only says
// what to draw: the series, their names and the axis titles. The report page, the `report`
// command's SVG file and the bench's SVG all draw through that one module.
import { loadCore } from "../core.js";

const X_TITLE = "model call (this session, oldest first)";

/** Folds and host breaks (js/ui/data.js axisMarks) as chart marks: `call` calls precede each. */
export function chartMarks(marks = []) {
  return marks.map((m) => ({
    kind: m.kind === "fold" ? "fold" : "break",
    at: m.call + 0.5,
    label: m.kind === "fold" ? `fold ${m.id}` : `break: ${m.cause}`,
    detail: `${m.kind === "fold" ? `fold ${m.id}` : `break: ${m.cause}`}${m.at ? ` · ${m.at}` : ""}`,
  }));
}

/** Prompt tokens per call, stacked hit (bottom) and miss, with the engine's predicted hit. */
export function hitMissSpec(calls, marks = [], { standalone = false, title = "prompt tokens per model call" } = {}) {
  return {
    title,
    xTitle: X_TITLE,
    yTitle: "prompt tokens",
    yUnit: "tokens",
    bars: [
      { name: "cache hit", values: calls.map((c) => c.hit), key: "hit", color: 0 },
      { name: "cache miss", values: calls.map((c) => c.miss), key: "miss", color: 2 },
    ],
    lines: [{ name: "predicted hit", values: calls.map((c) => c.predictedHit ?? 0), step: true, color: 7 }],
    marks: chartMarks(marks),
    height: 280,
    standalone,
  };
}

/** Cumulative cost: what cachefold spent (the headline) and the legacy estimate (no cache hit). */
export function costSpec(calls, marks = [], { standalone = false, title = "cumulative cost", xTitle = X_TITLE } = {}) {
  let a = 0;
  let b = 0;
  return {
    title,
    xTitle,
    yTitle: "USD, cumulative",
    yUnit: "usd",
    lines: [
      { name: "cachefold (spent)", values: calls.map((c) => (a += c.costUsd)), headline: true, color: 0 },
      { name: "legacy estimate (no cache hit)", values: calls.map((c) => (b += c.legacyEstimateUsd)), color: 1 },
    ],
    marks: chartMarks(marks),
    height: 240,
    standalone,
  };
}

/** Prompt tokens of each call (the context the model saw). */
export function contextSpec(calls, { standalone = false, title = "context size per model call", xTitle = X_TITLE } = {}) {
  return { title, xTitle, yTitle: "prompt tokens", yUnit: "tokens", lines: [{ name: "prompt tokens", values: calls.map((c) => c.prompt), color: 3, headline: true }], height: 220, standalone };
}

/** The SVG of a chart spec (src/wasm.d.ts ChartSpec). */
export async function chartSvg(spec) {
  return (await loadCore()).chartSvg(JSON.stringify(spec));
}

/** Panels one above the other in one standalone SVG document under `title`. */
export async function chartFigure(title, specs) {
  return (await loadCore()).chartFigure(String(title), JSON.stringify(specs));
}

/** The charts' stylesheet for a page that shows them inline. */
export async function chartCss() {
  return (await loadCore()).chartCss();
}

export const hitMissChart = (calls, marks, opts) => chartSvg(hitMissSpec(calls, marks, opts));
export const costChart = (calls, marks, opts) => chartSvg(costSpec(calls, marks, opts));
