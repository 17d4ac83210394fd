// Refreshes the page's <main> while the tab is visible, every data-refresh seconds (set on
// <body>). The new HTML comes from the same server, already escaped: it is parsed as a
// document, never run (this file is the page's only script: see the Content-Security-Policy).
(function () {
  "use strict";
  var seconds = parseInt(document.body.getAttribute("data-refresh") || "0", 10);
  if (!seconds) { return; }
  function refresh() {
    if (document.hidden) { return; }
    var active = document.activeElement;
    if (active && (active.tagName === "INPUT" || active.tagName === "SELECT")) { return; }
    fetch(window.location.href, { credentials: "same-origin", headers: { Accept: "text/html" } })
      .then(function (response) { return response.ok ? response.text() : null; })
      .then(function (text) {
        if (!text) { return; }
        var fresh = new DOMParser().parseFromString(text, "text/html").querySelector("main");
        var current = document.querySelector("main");
        if (fresh && current) { current.replaceWith(fresh); }
      })
      .catch(function () { /* offline for a moment: the next tick tries again */ });
  }
  window.setInterval(refresh, seconds * 1000);
})();
