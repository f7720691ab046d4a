// The report page and the dashboard widget: one self-contained HTML document each (inline CSS
// and script under a per-response CSP nonce, no outside URL). The server embeds the document's
// data (the same objects the JSON data route answers) as a JSON block, so the page needs no
// request of its own: inside the Control UI it runs in an opaque sandboxed frame whose fetches
// would be cross-origin. Paging and the session view are plain links (GET navigations, which the
// frame's grant covers). The script fills the DOM with textContent only; the charts arrive as
// SVG drawn by the core's chart module on the server (js/ui/chart.js), every value escaped there,
// coloured by the core's chart stylesheet (chartCss), which follows the same light/dark switch.

const CSS = `
:root{color-scheme:light dark;--bg:#ffffff;--fg:#111827;--muted:#4b5563;--line:#e5e7eb;--card:#f9fafb;--accent:#2563eb;--bad:#dc2626;--good:#059669;--warn:#f59e0b}
@media (prefers-color-scheme:dark){:root:not([data-theme=light]){--bg:#0f1115;--fg:#e5e7eb;--muted:#9ca3af;--line:#2a2f3a;--card:#171a21;--accent:#60a5fa;--bad:#f87171;--good:#34d399;--warn:#fbbf24}}
:root[data-theme=dark]{--bg:#0f1115;--fg:#e5e7eb;--muted:#9ca3af;--line:#2a2f3a;--card:#171a21;--accent:#60a5fa;--bad:#f87171;--good:#34d399;--warn:#fbbf24}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--fg);font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
main{max-width:1200px;margin:0 auto;padding:16px}
h1{font-size:20px;margin:0 0 4px}h2{font-size:16px;margin:20px 0 8px}
a{color:var(--accent)}
.muted{color:var(--muted)}.bad{color:var(--bad)}.good{color:var(--good)}
.cards{display:grid;grid-template-columns:repeat(auto-fit,minmax(150px,1fr));gap:8px;margin:12px 0}
.card{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:10px}
.card .k{font-size:12px;color:var(--muted)}.card .v{font-size:20px;font-variant-numeric:tabular-nums;overflow-wrap:anywhere}
.scroll{overflow-x:auto;border:1px solid var(--line);border-radius:8px}
table{border-collapse:collapse;width:100%;font-variant-numeric:tabular-nums}
th,td{padding:6px 8px;border-bottom:1px solid var(--line);text-align:right;white-space:nowrap}
th{background:var(--card);font-weight:600;position:sticky;top:0}
td.l,th.l{text-align:left}td.wrap{white-space:normal;min-width:12em;text-align:left}
tr:last-child td{border-bottom:0}
.pager{display:flex;gap:8px;align-items:center;margin:8px 0;flex-wrap:wrap}
button{background:var(--card);color:var(--fg);border:1px solid var(--line);border-radius:6px;padding:4px 10px;font:inherit;cursor:pointer}
button:disabled{opacity:.5;cursor:default}
.chart{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:8px;margin:8px 0}
.chart{overflow-x:auto}.chart svg{width:100%;min-width:560px;height:auto;display:block}
pre{white-space:pre-wrap;overflow-wrap:anywhere;background:var(--card);border:1px solid var(--line);border-radius:6px;padding:8px;margin:4px 0;max-height:16em;overflow:auto;font-size:12px}
details summary{cursor:pointer}
.err{border:1px solid var(--bad);color:var(--bad);border-radius:8px;padding:8px;margin:8px 0}
@media (max-width:640px){main{padding:10px}h1{font-size:18px}.card .v{font-size:17px}th,td{padding:5px 6px}}
`;

// The start both client scripts share (no template literals inside, so they embed verbatim):
// strict mode, the theme from ?theme=, the mount point, the money format (the CLI's money()).
const PRELUDE = String.raw`
(function () {
  "use strict";
  var q = new URLSearchParams(location.search);
  var theme = q.get("theme");
  if (theme === "dark" || theme === "light") document.documentElement.setAttribute("data-theme", theme);
  var root = document.getElementById("app");
  var money = function (x) { return "$" + (x == null ? 0 : x).toFixed(4); };
`;

// The report page's client script.
const SCRIPT = PRELUDE + String.raw`  var pct = function (x) { return (x == null ? 0 : x).toFixed(1) + "%"; };
  function el(tag, attrs, kids) {
    var e = document.createElement(tag);
    for (var k in attrs || {}) {
      if (k === "text") e.textContent = attrs[k];
      else if (k === "cls") e.className = attrs[k];
      else e.setAttribute(k, attrs[k]);
    }
    (kids || []).forEach(function (c) { if (c != null) e.appendChild(typeof c === "string" ? document.createTextNode(c) : c); });
    return e;
  }
  function field(name, value, text) { return el("span", { "data-field": name, "data-value": String(value), text: text }); }
  function card(k, name, value, text) { return el("div", { cls: "card" }, [el("div", { cls: "k", text: k }), el("div", { cls: "v" }, [field(name, value, text)])]); }
  function link(params, text) {
    var p = new URLSearchParams(params);
    if (theme) p.set("theme", theme);
    return el("a", { href: "?" + p.toString(), text: text });
  }
  var DATA = JSON.parse(document.getElementById("cf-data").textContent);
  function getJson(key) {
    var d = DATA[key];
    if (!d) return Promise.reject(new Error("no data"));
    if (d.error) return Promise.reject(new Error(d.error));
    return Promise.resolve(d);
  }
  function fail(err) { root.appendChild(el("div", { cls: "err", role: "alert", text: "cachefold: " + (err && err.message ? err.message : String(err)) })); }
  function brk(b) { return b ? "message " + b.messageIndex + " (" + b.cause + ")" : "no cache break"; }
  function table(head, rows) {
    var thead = el("thead", {}, [el("tr", {}, head.map(function (h) { return el("th", { cls: h[1] || "", text: h[0] }); }))]);
    return el("div", { cls: "scroll" }, [el("table", {}, [thead, el("tbody", {}, rows)])]);
  }
  function td(cls, kids) { return el("td", { cls: cls || "" }, kids); }

  function sessionsView() {
    root.appendChild(el("h1", { text: "cachefold: sessions" }));
    root.appendChild(el("p", { cls: "muted", id: "legacy-note" }));
    var cards = el("div", { cls: "cards", id: "summary" });
    root.appendChild(cards);
    getJson("summary").then(function (s) {
      cards.appendChild(card("saved today (UTC)", "savedTodayUsd", s.savedTodayUsd, money(s.savedTodayUsd)));
      cards.appendChild(card("saved this week (UTC, from Monday)", "savedThisWeekUsd", s.savedThisWeekUsd, money(s.savedThisWeekUsd)));
      cards.appendChild(card("sessions written this week", "sessionsThisWeek", s.sessionsThisWeek, String(s.sessionsThisWeek)));
    }).catch(fail);
    var holder = el("div", { id: "sessions" });
    var pager = el("div", { cls: "pager" });
    root.appendChild(pager);
    root.appendChild(holder);
    (function () {
      getJson("sessions").then(function (d) {
        var offset = d.offset;
        var limit = d.limit;
        document.getElementById("legacy-note").textContent = d.legacyEstimate;
        var rows = d.sessions.map(function (r) {
          if (r.error) return el("tr", { "data-session": r.sessionId }, [td("l", [link({ session: r.sessionId }, r.sessionId)]), el("td", { cls: "wrap bad", colspan: "10", text: "unreadable: " + r.error })]);
          return el("tr", { "data-session": r.sessionId }, [
            td("l", [link({ session: r.sessionId }, r.sessionId)]),
            td("l", [field("engine", r.engine, r.engine)]),
            td("", [field("turns", r.turns, String(r.turns))]),
            td("", [field("calls", r.calls, String(r.calls))]),
            td("", [field("folds", r.folds, String(r.folds))]),
            td("", [field("costUsd", r.costUsd, money(r.costUsd))]),
            td("", [field("legacyEstimateUsd", r.legacyEstimateUsd, money(r.legacyEstimateUsd))]),
            td("", [field("savedUsd", r.savedUsd, money(r.savedUsd))]),
            td("", [field("hitPct", r.hitPct, pct(r.hitPct))]),
            td("", [field("predictedHitPct", r.predictedHitPct, pct(r.predictedHitPct))]),
            td("wrap", [field("lastCacheBreak", r.lastCacheBreak ? r.lastCacheBreak.cause : "", brk(r.lastCacheBreak))]),
          ]);
        });
        holder.textContent = "";
        if (!rows.length) holder.appendChild(el("p", { cls: "muted", text: "no sessions recorded yet" }));
        else holder.appendChild(table([["session", "l"], ["engine", "l"], ["turns"], ["calls"], ["folds"], ["spent"], ["legacy estimate"], ["saved"], ["hit"], ["predicted"], ["last cache break", "l"]], rows));
        pager.textContent = "";
        var prev = offset > 0 ? link({ offset: String(Math.max(0, offset - limit)), limit: String(limit) }, "← newer") : el("span", { cls: "muted", text: "← newer" });
        var next = d.nextOffset != null ? link({ offset: String(d.nextOffset), limit: String(limit) }, "older →") : el("span", { cls: "muted", text: "older →" });
        prev.setAttribute("id", "page-prev");
        next.setAttribute("id", "page-next");
        pager.appendChild(prev);
        pager.appendChild(el("span", { cls: "muted", id: "page-info", text: (d.total ? offset + 1 : 0) + "–" + (offset + d.sessions.length) + " of " + d.total }));
        pager.appendChild(next);
      }).catch(fail);
    })();
  }

  function oneSession(id) {
    root.appendChild(el("p", {}, [link({}, "← all sessions")]));
    getJson("session").then(function (v) {
      var s = v.status;
      root.appendChild(el("h1", {}, ["session ", el("span", { "data-field": "sessionId", text: v.sessionId })]));
      root.appendChild(el("p", { cls: "muted", text: s.engine + (s.engineReason ? " (" + s.engineReason + ")" : "") + " · model " + (s.model || "?") + " · updated " + s.updatedAt }));
      var cards = el("div", { cls: "cards" });
      cards.appendChild(card("spent", "costUsd", s.costUsd, money(s.costUsd)));
      cards.appendChild(card("legacy estimate", "legacyEstimateUsd", s.legacyEstimateUsd, money(s.legacyEstimateUsd)));
      cards.appendChild(card("saved", "savedUsd", s.savedUsd, money(s.savedUsd)));
      cards.appendChild(card("hit (reported)", "hitPct", s.hitPct, pct(s.hitPct)));
      cards.appendChild(card("hit (predicted)", "predictedHitPct", s.predictedHitPct, pct(s.predictedHitPct)));
      cards.appendChild(card("turns · calls · folds", "calls", s.calls, s.turns + " · " + s.calls + " · " + s.folds));
      cards.appendChild(card("last cache break", "lastCacheBreak", s.lastCacheBreak ? s.lastCacheBreak.cause : "", brk(s.lastCacheBreak)));
      root.appendChild(cards);
      root.appendChild(el("h2", { text: "prompt tokens per model call (" + v.calls.length + " recent of " + v.totals.calls + ")" }));
      var c1 = el("div", { cls: "chart", id: "chart-calls" });
      c1.innerHTML = v.charts.hitMiss;
      root.appendChild(c1);
      root.appendChild(el("h2", { text: "cumulative cost vs the legacy estimate" }));
      var c2 = el("div", { cls: "chart", id: "chart-cost" });
      c2.innerHTML = v.charts.cost;
      root.appendChild(c2);
      root.appendChild(el("h2", { text: "folds and host breaks on the time axis" }));
      if (!v.marks.length) root.appendChild(el("p", { cls: "muted", text: v.decisionLog ? "none in the decision log" : "no decision log (set logFile): folds and host breaks are logged there" }));
      else root.appendChild(table([["before call"], ["what", "l"], ["when", "l"]], v.marks.map(function (m) {
        return el("tr", { "data-mark": m.kind }, [td("", [String(m.call + 1)]), td("wrap", [m.kind === "fold" ? "fold " + m.id + " (" + (m.reason || "") + ", messages " + m.from + "–" + m.to + ", " + m.foldedTokens + " tokens)" : "host break: " + m.cause + (m.action ? " → " + m.action : "")]), td("l", [m.at])]);
      })));
      root.appendChild(el("h2", { text: "fold records (" + v.folds.length + ")" }));
      if (!v.folds.length) root.appendChild(el("p", { cls: "muted", text: "no folds yet" }));
      v.folds.forEach(function (f) {
        var det = el("details", { "data-fold": f.id }, [el("summary", { text: f.id + " · host messages " + f.from + "–" + (f.to - 1) + " · covers " + f.covers.join(", ") + (f.summary ? " · LLM summary" : "") + (f.storedBytes != null ? " · " + f.storedBytes + " bytes stored" : " · not stored") })]);
        det.appendChild(el("div", { cls: "muted", text: "cachefold_recover {\"id\":\"" + f.id + "\"} returns:" }));
        det.appendChild(el("pre", { text: f.recover ? f.recover.text : "(nothing stored for this id)" }));
        root.appendChild(det);
      });
      root.appendChild(el("h2", { text: "artifacts (" + v.artifacts.length + ")" }));
      if (!v.artifacts.length) root.appendChild(el("p", { cls: "muted", text: "no tool output stored as an artifact" }));
      else root.appendChild(table([["id", "l"], ["tool", "l"], ["original chars"], ["stored bytes"], ["when", "l"]], v.artifacts.map(function (a) {
        return el("tr", { "data-artifact": a.id }, [td("l", [a.id]), td("l", [a.tool]), td("", [String(a.chars)]), td("", [a.storedBytes == null ? "evicted" : String(a.storedBytes)]), td("l", [a.at || ""])]);
      })));
      root.appendChild(el("h2", { text: "lessons" }));
      var L = v.lessons;
      if (!L) root.appendChild(el("p", { cls: "muted", text: "no lessons decision for this session" }));
      else {
        root.appendChild(el("p", { "data-field": "lessonsInjected", "data-value": String(L.inject), text: (L.inject ? "injected " + L.chosen.length + " lesson(s), " + L.tokens + " tokens" : "none injected") + (L.reason ? " · " + L.reason : "") }));
        if (L.chosen.length) root.appendChild(el("ul", {}, L.chosen.map(function (c) { return el("li", { text: typeof c === "string" ? c : (c.name || JSON.stringify(c)) }); })));
        if (L.text) root.appendChild(el("pre", { text: L.text }));
      }
    }).catch(fail);
  }

  var id = q.get("session");
  if (id) oneSession(id); else sessionsView();
})();
`;

// The widget's client script.
export const WIDGET_SCRIPT = PRELUDE + String.raw`  function el(tag, attrs, text) { var e = document.createElement(tag); for (var k in attrs) e.setAttribute(k, attrs[k]); if (text != null) e.textContent = text; return e; }
  var DATA = JSON.parse(document.getElementById("cf-data").textContent);
  // On a dashboard the script itself carries the summary read when it was served (boardWidgetScript).
  if (window.cachefoldSummary && typeof window.cachefoldSummary === "object") DATA.summary = window.cachefoldSummary;
  (DATA.summary && !DATA.summary.error ? Promise.resolve(DATA.summary) : Promise.reject(new Error((DATA.summary && DATA.summary.error) || "no data"))).then(function (s) {
    var cards = el("div", { class: "cards" });
    [["saved today", "savedTodayUsd"], ["saved this week", "savedThisWeekUsd"]].forEach(function (c) {
      var d = el("div", { class: "card" });
      d.appendChild(el("div", { class: "k" }, c[0]));
      var v = el("div", { class: "v" });
      v.appendChild(el("span", { "data-field": c[1], "data-value": String(s[c[1]]) }, money(s[c[1]])));
      d.appendChild(v);
      cards.appendChild(d);
    });
    root.appendChild(cards);
    root.appendChild(el("div", { class: "k muted" }, "most recent cache breaks"));
    var ul = el("ul", { id: "breaks" });
    if (!s.recentBreaks.length) ul.appendChild(el("li", { class: "muted" }, s.decisionLog ? "none logged" : "no decision log (set logFile)"));
    s.recentBreaks.forEach(function (b) {
      var li = el("li", { "data-session": b.sessionId });
      var a = el("a", { href: DATA.links ? DATA.links.session : "report?session=" + encodeURIComponent(b.sessionId), target: "_blank", rel: "noopener" }, b.sessionId.slice(0, 24));
      li.appendChild(a);
      li.appendChild(document.createTextNode(" · " + b.cause + " · " + b.at.slice(0, 16).replace("T", " ")));
      ul.appendChild(li);
    });
    root.appendChild(ul);
    var p = el("p");
    p.appendChild(el("a", { href: DATA.links ? DATA.links.report : "report", target: "_blank", rel: "noopener", id: "open-report" }, "open the cachefold report →"));
    root.appendChild(p);
  }).catch(function (e) { root.appendChild(el("div", { class: "err", role: "alert" }, "cachefold: " + e.message)); });
})();
`;

const WIDGET_CSS = `${CSS}
main{padding:10px}.cards{grid-template-columns:repeat(2,minmax(0,1fr));margin:0 0 8px}ul{margin:4px 0;padding-left:18px}li{margin:2px 0;overflow-wrap:anywhere}p{margin:6px 0}`;

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
