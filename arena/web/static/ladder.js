/* The ladder's live page (issue 16 §4): every few seconds the page asks the server for
   itself again and swaps in the parts marked data-live (standings, matches in flight,
   the queue, recent games), so it refreshes without a reload. The server renders them
   with the same template as the first load: nothing here builds markup from data. The
   fetched page is parsed with DOMParser, which runs no script in it, and only elements
   whose id is already on this page are replaced. An exported page (file://) is a
   snapshot and is left as it is. Allowed by its hash (CSP script-src), checked by
   integrity=, and it fetches only this page's own address (CSP connect-src 'self'). */
(function () {
  "use strict";
  var status = document.getElementById("live-status");
  var main = document.querySelector("main[data-refresh-s]");
  if (!status || !main || location.protocol === "file:") { return; }
  var every = Math.max(2, parseInt(main.getAttribute("data-refresh-s"), 10) || 5) * 1000;
  var failures = 0;
  var timer = null;

  function say(text, bad) {
    status.textContent = text;
    status.className = bad ? "live status-bad" : "live";
  }

  function swap(fresh) {
    var parts = fresh.querySelectorAll("[data-live][id]");
    for (var i = 0; i < parts.length; i++) {
      var old = document.getElementById(parts[i].id);
      if (old && old.hasAttribute("data-live")) {
        old.replaceWith(document.importNode(parts[i], true));
      }
    }
  }

  function schedule(ms) {
    if (timer !== null) { clearTimeout(timer); }
    timer = setTimeout(refresh, ms);
  }

  function refresh() {
    timer = null;
    if (document.hidden) { return; }  // asked again when the tab is shown
    fetch(location.pathname + location.search, {cache: "no-store", credentials: "same-origin",
                                                 headers: {"Accept": "text/html"}})
      .then(function (response) {
        if (!response.ok) { throw new Error("HTTP " + response.status); }
        return response.text();
      })
      .then(function (text) {
        swap(new DOMParser().parseFromString(text, "text/html"));
        failures = 0;
        say("live: updated " + new Date().toLocaleTimeString(), false);
        schedule(every);
      })
      .catch(function (err) {
        // Backs off to a minute while the server is away; the page keeps what it has.
        failures += 1;
        say("live updates paused (" + err.message + "); trying again", true);
        schedule(Math.min(60000, every * Math.pow(2, failures)));
      });
  }

  document.addEventListener("visibilitychange", function () {
    if (!document.hidden && timer === null) { refresh(); }
  });
  say("live: refreshes every " + every / 1000 + " s", false);
  schedule(every);
})();
