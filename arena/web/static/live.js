/* A game watched as it plays (issue 19 §3): the page's #live-data holds the game's public
   positions (arena/web/live.py: the public view and the public events only), drawn with
   the game's renderer (static/table-GAME.js) as the replay viewer draws a position, and
   told in the play by play. Every data-refresh-s seconds the page asks the server for
   itself again, reads the new #live-data from the fetched page (parsed by DOMParser,
   which runs nothing; its JSON is read as text, never as markup) and draws the newest
   position while it follows the game. When the game has ended the state line and the
   link to the replay are taken from the fetched page, and the asking stops. Allowed by
   its hash (CSP script-src), checked by integrity=; it fetches only its own address. */
(function () {
  "use strict";
  var T = window.ArenaTable, el = T.el;  // table.js comes first: its helpers, as text
  function $(id) { return document.getElementById(id); }
  var data = JSON.parse($("live-data").textContent);
  var states = [], at = 0, follow = true, draw = T.get(data.game), failed = false;
  function seatName(s) {
    var x = data.seats[s];
    return x ? "seat " + s + " (" + x.bot + ")" : "seat " + s;
  }
  function build() {
    var cur = {};
    states = data.positions.map(function (p) {
      var next = Object.assign({}, cur, p.d || {});
      (p.x || []).forEach(function (k) { delete next[k]; });
      cur = next;
      return next;
    });
  }
  function raw(view) {  // no renderer, or one that cannot draw this view: its data
    var dl = el("dl", "kv");
    Object.keys(view).forEach(function (k) {
      dl.appendChild(el("dt", "", k));
      dl.appendChild(el("dd", "", JSON.stringify(view[k])));
    });
    return dl;
  }
  function show(n) {
    var last = states.length - 1;
    at = Math.max(0, Math.min(last, n | 0));
    var box = $("table"); box.textContent = "";
    if (last < 0) {
      box.appendChild(el("p", "muted", data.state === "over"
        ? "The game is over: its replay shows every view."
        : data.state === "withheld" ? "Not shown until its deal's other seatings are over."
        : "Nothing to show yet."));
      return;
    }
    var p = data.positions[at];
    var ctx = {seat: null, public: true, players: data.players, seats: data.seats, name: seatName,
               step: at, last: last, acting: [], over: data.state === "over",
               events: p.e.map(function (x) { return x[1]; }),
               previous: at > 0 ? states[at - 1] : null};
    if (draw && !failed) {
      try { box.appendChild(draw(states[at], ctx)); }
      catch (err) { failed = true; box.textContent = ""; }
    }
    if (!draw || failed) box.appendChild(raw(states[at]));
    $("step-label").textContent = (at === last ? "Now: " : "") + "position " + (at + 1) + " of " + (last + 1);
    $("slider").max = String(last); $("slider").value = String(at);
    $("prev").disabled = at === 0; $("next").disabled = at === last;
    $("follow").setAttribute("aria-pressed", String(follow));
    var lines = $("play-by-play").children;
    for (var i = 0; i < lines.length; i++) {
      var k = +lines[i].getAttribute("data-step");
      lines[i].hidden = k > at;
      lines[i].classList.toggle("now", k === at);
    }
  }
  function tell() {
    // The play by play, built from the positions each time: a game played twice at once
    // (a cluster's retry) may be reported by either, and the list is then the newest's.
    var list = $("play-by-play"), keep = list.scrollTop;
    list.textContent = "";
    data.positions.forEach(function (p, n) {
      p.e.forEach(function (x) {
        var li = el("li", "", x[2]); li.setAttribute("data-step", n); list.appendChild(li);
        (x[3] || []).forEach(function (s) {  // the summaries this event ends
          var sum = el("li", "summary", s); sum.setAttribute("data-step", n); list.appendChild(sum);
        });
      });
    });
    list.scrollTop = follow ? list.scrollHeight : keep;
  }
  function update(fresh) {
    data = fresh;
    build(); tell();
    show(follow ? states.length - 1 : at);
  }
  function stepTo(n) { follow = n >= states.length - 1; show(n); }
  $("prev").onclick = function () { stepTo(at - 1); };
  $("next").onclick = function () { stepTo(at + 1); };
  $("follow").onclick = function () { follow = true; show(states.length - 1); };
  $("slider").oninput = function () { stepTo(+this.value); };
  document.addEventListener("keydown", function (e) {
    var tag = e.target && e.target.tagName;
    if (tag === "INPUT" || tag === "SELECT" || e.ctrlKey || e.metaKey || e.altKey) return;
    if (e.key === "ArrowRight" || e.key === "l") stepTo(at + 1);
    else if (e.key === "ArrowLeft" || e.key === "h") stepTo(at - 1);
    else if (e.key === "End") stepTo(states.length - 1);
    else return;
    e.preventDefault();
  });
  build(); tell(); show(states.length - 1);

  var status = $("live-status"), main = document.querySelector("main[data-refresh-s]");
  if (data.state === "over" || !main || location.protocol === "file:") return;
  var every = Math.max(1, parseInt(main.getAttribute("data-refresh-s"), 10) || 1) * 1000;
  var failures = 0, timer = null;
  function say(text, bad) { status.textContent = text; status.className = bad ? "live status-bad" : "live"; }
  function schedule(ms) { if (timer !== null) clearTimeout(timer); timer = setTimeout(refresh, ms); }
  function refresh() {
    timer = null;
    if (document.hidden) return;  // asked again when the tab is shown
    fetch(location.pathname, {cache: "no-store", credentials: "same-origin",
                              headers: {"Accept": "text/html"}})
      .then(function (r) { if (!r.ok) throw new Error("HTTP " + r.status); return r.text(); })
      .then(function (text) {
        var page = new DOMParser().parseFromString(text, "text/html");
        var fresh = page.getElementById("live-data"), state = page.getElementById("live-state");
        if (!fresh || !state) throw new Error("not a live page");
        var next = JSON.parse(fresh.textContent);
        failures = 0;
        if (next.state !== data.state) {  // the state line (and the replay's link) anew
          $("live-state").replaceWith(document.importNode(state, true));
          status = $("live-status");
        }
        if (next.state === "over") {  // the replay now shows it all
          data.state = "over"; show(at);
          return;
        }
        if (next.state === "playing") update(next);
        else { data.state = next.state; show(at); }
        say("updated " + new Date().toLocaleTimeString(), false);
        schedule(every);
      })
      .catch(function (err) {
        failures += 1;  // backs off to a minute while the server is away
        say("updates paused (" + err.message + "); trying again", true);
        schedule(Math.min(60000, every * Math.pow(2, failures)));
      });
  }
  document.addEventListener("visibilitychange", function () {
    if (!document.hidden && timer === null) refresh();
  });
  schedule(every);
})();
