  "use strict";
  var q = new URLSearchParams(location.search);
  var theme = q.get("theme");
  if (theme === "dark" || theme === "light") document.documentElement.setAttribute("data-theme", theme);
  var root = document.getElementById("app");
  var money = function (x) { return "$" + (x == null ? 0 : x).toFixed(4); };
