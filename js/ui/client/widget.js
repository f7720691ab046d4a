  function el(tag, attrs, text) { var e = document.createElement(tag); for (var k in attrs) e.setAttribute(k, attrs[k]); if (text != null) e.textContent = text; return e; }
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
