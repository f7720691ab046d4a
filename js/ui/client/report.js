  var pct = function (x) { return (x == null ? 0 : x).toFixed(1) + "%"; };
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
