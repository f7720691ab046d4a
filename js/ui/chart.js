// SVG charts of one session, drawn the way a careful plotting library draws them: axis ticks
// on 1-2-5 steps (0, 50K, 100K; never 99K), integer call ticks, every series named in a legend,
// distinct strokes (solid vs dashed) so two series that coincide stay visible, and the titles say
// what the axis holds. Colours come from CSS classes (the page's light and dark themes);
// `standalone: true` embeds a light stylesheet for an .svg file on disk.

const esc = (t) => String(t).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
const f1 = (x) => (Math.round(x * 10) / 10).toString();

/** Ticks from 0 (or `min`) covering `max` on a 1-2-5 step, about `count` of them. */
export function niceTicks(max, count = 5, min = 0) {
  if (!(max > min)) return [min, min + 1];
  const raw = (max - min) / Math.max(1, count);
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * mag).find((s) => s >= raw) ?? 10 * mag;
  const top = Math.ceil(max / step - 1e-9) * step;
  const out = [];
  for (let v = min; v <= top + step / 1e6; v += step) out.push(+v.toPrecision(12));
  return out;
}

/** Integer ticks for calls 1..n (at most ~`count`). */
export function callTicks(n, count = 10) {
  if (n <= 1) return [1];
  const step = niceTicks(n, count).find((v, i, a) => i > 0 && v > 0) ?? 1;
  const s = Math.max(1, Math.round(step));
  const out = [1];
  for (let v = s; v <= n; v += s) if (v > 1) out.push(v);
  return out;
}

/** 1500 → "1.5K", 100000 → "100K", 2e6 → "2M". */
export function fmtTokens(v) {
  if (v >= 1e6) return `${f1(v / 1e6)}M`;
  if (v >= 1e3) return `${f1(v / 1e3)}K`;
  return f1(v);
}

/** Dollars with as many decimals as the tick step needs. */
export function fmtUsd(v, step = v) {
  let d = 0;
  while (d < 8 && Math.abs(Math.round(step * 10 ** d) - step * 10 ** d) > 1e-6) d += 1;
  return `$${v.toFixed(d)}`;
}

const LIGHT = `.cf-axis{stroke:#6b7280}.cf-grid{stroke:#e5e7eb}.cf-text{fill:#111827}.cf-muted{fill:#4b5563}.cf-hit{fill:#2563eb}.cf-miss{fill:#f59e0b}.cf-pred{stroke:#111827;fill:none}.cf-cf{stroke:#2563eb;fill:none}.cf-legacy{stroke:#dc2626;fill:none}.cf-fold{stroke:#059669}.cf-break{stroke:#dc2626}.cf-fold-t{fill:#059669}.cf-break-t{fill:#dc2626}.cf-sw-cf{fill:#2563eb}.cf-sw-legacy{fill:#dc2626}`;

function frame({ width, height, title, standalone, body }) {
  const style = standalone ? `<style>${LIGHT}text{font-family:system-ui,sans-serif}</style><rect width="100%" height="100%" fill="#fff"/>` : "";
  return `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" role="img" aria-label="${esc(title)}" class="cf-chart" font-size="12">${style}<title>${esc(title)}</title>${body}</svg>`;
}

function axes({ x0, x1, y0, y1, yTicks, yScale, yFmt, xTicks, xScale, xTitle, yTitle }) {
  let s = "";
  for (const t of yTicks) {
    const y = yScale(t).toFixed(1);
    s += `<line class="cf-grid" x1="${x0}" x2="${x1}" y1="${y}" y2="${y}"/><text class="cf-muted" x="${x0 - 6}" y="${y}" text-anchor="end" dominant-baseline="middle">${esc(yFmt(t))}</text>`;
  }
  for (const t of xTicks) {
    const x = xScale(t).toFixed(1);
    s += `<line class="cf-axis" x1="${x}" x2="${x}" y1="${y0}" y2="${y0 + 4}"/><text class="cf-muted" x="${x}" y="${y0 + 16}" text-anchor="middle">${t}</text>`;
  }
  s += `<line class="cf-axis" x1="${x0}" x2="${x1}" y1="${y0}" y2="${y0}"/><line class="cf-axis" x1="${x0}" x2="${x0}" y1="${y1}" y2="${y0}"/>`;
  s += `<text class="cf-text" x="${(x0 + x1) / 2}" y="${y0 + 32}" text-anchor="middle">${esc(xTitle)}</text>`;
  s += `<text class="cf-text" transform="translate(14 ${(y0 + y1) / 2}) rotate(-90)" text-anchor="middle">${esc(yTitle)}</text>`;
  return s;
}

function markLines(marks, xScale, y0, y1, x0min, x1max) {
  let s = "";
  const byCall = new Map();
  for (const m of marks ?? []) {
    const k = byCall.get(m.call) ?? 0;
    byCall.set(m.call, k + 1);
    const x = Math.min(x1max, Math.max(x0min, xScale(m.call))).toFixed(1);
    const cls = m.kind === "fold" ? "fold" : "break";
    const label = m.kind === "fold" ? `fold ${m.id}` : `break: ${m.cause}`;
    s += `<g class="cf-mark cf-mark-${cls}" data-kind="${cls}"><line class="cf-${cls}" x1="${x}" x2="${x}" y1="${y1}" y2="${y0}" stroke-dasharray="4 3" stroke-width="1.5"/><text class="cf-${cls}-t" x="${(+x + 3).toFixed(1)}" y="${y1 + 10 + 12 * k}" font-size="10">${esc(label)}</text><title>${esc(label)}${m.at ? ` · ${esc(m.at)}` : ""}</title></g>`;
  }
  return s;
}

function legend(items, x, y) {
  let s = "";
  let dx = 0;
  for (const it of items) {
    s += `<g transform="translate(${x + dx} ${y})">${it.swatch}<text class="cf-text" x="18" y="4" dominant-baseline="middle">${esc(it.name)}</text></g>`;
    dx += 30 + it.name.length * 6.4;
  }
  return s;
}

/**
 * Per model call: prompt tokens stacked as cache hit (bottom) and miss (top), the engine's
 * predicted hit as a step line, folds and host breaks as dashed verticals before the call they
 * precede. `calls`: [{call, hit, miss, predictedHit}], `marks`: [{kind, call, id?, cause?}].
 */
export function hitMissChart(calls, marks = [], { width = 760, height = 280, standalone = false, title = "prompt tokens per model call" } = {}) {
  const m = { l: 64, r: 16, t: 34, b: 44 };
  const x0 = m.l;
  const x1 = width - m.r;
  const y0 = height - m.b;
  const y1 = m.t;
  const n = Math.max(1, calls.length);
  const max = Math.max(1, ...calls.map((c) => c.hit + c.miss), ...calls.map((c) => c.predictedHit ?? 0));
  const yTicks = niceTicks(max, 4);
  const top = yTicks[yTicks.length - 1];
  const yScale = (v) => y0 - ((y0 - y1) * v) / top;
  const band = (x1 - x0) / n;
  const xScale = (c) => x0 + band * (c - 0.5);
  let body = axes({ x0, x1, y0, y1, yTicks, yScale, yFmt: fmtTokens, xTicks: callTicks(n), xScale, xTitle: "model call (this session, oldest first)", yTitle: "prompt tokens" });
  const w = Math.max(1, band * 0.72);
  let pred = "";
  calls.forEach((c, i) => {
    const x = (xScale(i + 1) - w / 2).toFixed(1);
    const hy = yScale(c.hit);
    const my = yScale(c.hit + c.miss);
    body += `<g class="cf-bar" data-call="${c.call}" data-hit="${c.hit}" data-miss="${c.miss}"><rect class="cf-hit" x="${x}" y="${hy.toFixed(1)}" width="${w.toFixed(1)}" height="${(y0 - hy).toFixed(1)}"/><rect class="cf-miss" x="${x}" y="${my.toFixed(1)}" width="${w.toFixed(1)}" height="${(hy - my).toFixed(1)}"/><title>call ${c.call}: ${c.hit} hit, ${c.miss} miss, ${c.predictedHit ?? 0} predicted hit</title></g>`;
    const py = yScale(c.predictedHit ?? 0).toFixed(1);
    pred += `${i ? "L" : "M"}${(xScale(i + 1) - band / 2).toFixed(1)} ${py}H${(xScale(i + 1) + band / 2).toFixed(1)}`;
  });
  if (calls.length) body += `<path class="cf-pred" d="${pred}" stroke-width="1.5" stroke-dasharray="5 3"/>`;
  body += markLines(marks, (c) => x0 + band * c, y0, y1, x0, x1);
  body += legend(
    [
      { name: "cache hit", swatch: `<rect class="cf-hit" x="0" y="-5" width="12" height="10"/>` },
      { name: "cache miss", swatch: `<rect class="cf-miss" x="0" y="-5" width="12" height="10"/>` },
      { name: "predicted hit", swatch: `<line class="cf-pred" x1="0" x2="14" y1="0" y2="0" stroke-width="1.5" stroke-dasharray="5 3"/>` },
    ],
    x0,
    14,
  );
  return frame({ width, height, title, standalone, body });
}

/**
 * Cumulative cost of the session's calls: what cachefold spent (solid) and the legacy estimate
 * (the same calls with no cache hit, dashed, drawn first so a coinciding cachefold line stays on
 * top). `calls`: [{costUsd, legacyEstimateUsd}].
 */
export function costChart(calls, marks = [], { width = 760, height = 240, standalone = false, title = "cumulative cost" } = {}) {
  const m = { l: 64, r: 16, t: 34, b: 44 };
  const x0 = m.l;
  const x1 = width - m.r;
  const y0 = height - m.b;
  const y1 = m.t;
  let a = 0;
  let b = 0;
  const cum = calls.map((c) => ({ cf: (a += c.costUsd), lg: (b += c.legacyEstimateUsd) }));
  const n = Math.max(1, calls.length);
  const max = Math.max(1e-6, ...cum.map((c) => Math.max(c.cf, c.lg)));
  const yTicks = niceTicks(max, 4);
  const top = yTicks[yTicks.length - 1];
  const step = yTicks[1] - yTicks[0];
  const yScale = (v) => y0 - ((y0 - y1) * v) / top;
  const xScale = n === 1 ? () => (x0 + x1) / 2 : (c) => x0 + ((x1 - x0) * (c - 1)) / (n - 1);
  let body = axes({ x0, x1, y0, y1, yTicks, yScale, yFmt: (v) => fmtUsd(v, step), xTicks: callTicks(n), xScale, xTitle: "model call (this session, oldest first)", yTitle: "USD, cumulative" });
  const path = (key) => cum.map((c, i) => `${i ? "L" : "M"}${xScale(i + 1).toFixed(1)} ${yScale(c[key]).toFixed(1)}`).join("");
  if (cum.length) {
    body += `<path class="cf-legacy" d="${path("lg")}" stroke-width="2" stroke-dasharray="6 4"/>`;
    body += `<path class="cf-cf" d="${path("cf")}" stroke-width="2.5"/>`;
  }
  const span = (x1 - x0) / Math.max(1, n - 1);
  body += markLines(marks, n === 1 ? () => (x0 + x1) / 2 : (c) => x0 + span * (c - 0.5), y0, y1, x0, x1);
  body += legend(
    [
      { name: "cachefold (spent)", swatch: `<line class="cf-cf" x1="0" x2="14" y1="0" y2="0" stroke-width="2.5"/>` },
      { name: "legacy estimate (no cache hit)", swatch: `<line class="cf-legacy" x1="0" x2="14" y1="0" y2="0" stroke-width="2" stroke-dasharray="6 4"/>` },
    ],
    x0,
    14,
  );
  return frame({ width, height, title, standalone, body });
}
