(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("replay-data").textContent);
  var steps = data.steps, states = [], cur = {};
  steps.forEach(function (s) {
    var next = Object.assign({}, cur, s.d || {});
    (s.x || []).forEach(function (k) { delete next[k]; });
    states.push(next); cur = next;
  });
  var last = steps.length - 1, at = 0;
  function $(id) { return document.getElementById(id); }
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function seatName(s) {
    var x = data.seats[s];
    return x ? "seat " + s + " (" + x.bot + ")" : "seat " + s;
  }
  function scalar(v) { return v === null || typeof v !== "object"; }
  function text(v) {
    if (v === null || v === undefined) return "—";
    if (typeof v === "boolean") return v ? "yes" : "no";
    if (typeof v === "object") return JSON.stringify(v);
    return String(v);
  }
  function hue(s) {
    var key = String(s).replace(/[^A-Za-z_]/g, ""), h = 0;
    for (var i = 0; i < key.length; i++) h = (h * 31 + key.charCodeAt(i)) % 360;
    return h;
  }
  function chip(v, plain) {
    var c = el("span", "chip", text(v));
    if (typeof v === "string" && !plain) c.style.background = "hsla(" + hue(v) + ",65%,55%,.18)";
    return c;
  }
  function chips(list) {
    var span = el("span", list.length <= 6 ? "chipset" : "");
    if (!list.length) span.appendChild(el("span", "muted", "none"));
    list.forEach(function (v) { span.appendChild(chip(v)); });
    return span;
  }
  function table(rows, head, labels) {
    var t = el("table"), th = el("thead"), tr = el("tr"), tb = el("tbody");
    if (labels) tr.appendChild(el("th", "", ""));
    head.forEach(function (h) { tr.appendChild(el("th", "", h)); });
    th.appendChild(tr); t.appendChild(th);
    rows.forEach(function (cells, i) {
      var r = el("tr");
      if (labels) {
        r.appendChild(el("th", "", labels[i]));
        if (labels[i] === seatName(data.seat)) r.className = "me";
      }
      cells.forEach(function (c) { var td = el("td"); td.appendChild(render(c, "")); r.appendChild(td); });
      tb.appendChild(r);
    });
    t.appendChild(tb);
    var wrap = el("div", "scroll"); wrap.appendChild(t);
    return wrap;
  }
  function render(v, key) {
    if (scalar(v)) return v === null ? el("span", "muted", "—") : el("span", "", text(v));
    if (Array.isArray(v)) {
      if (!v.length) return el("span", "muted", "none");
      var perSeat = data.perSeat.indexOf(key) >= 0 && v.length === data.players;
      if (perSeat) {
        var dl = el("dl", "kv");
        v.forEach(function (x, i) {
          var dt = el("dt", "", seatName(i)), dd = el("dd");
          if (i === data.seat) { dt.className = "me"; dd.className = "me"; }
          dd.appendChild(Array.isArray(x) && x.every(scalar) ? chips(x) : render(x, ""));
          dl.appendChild(dt); dl.appendChild(dd);
        });
        return dl;
      }
      if (v.every(scalar)) return chips(v);
      if (v.every(function (x) { return x && typeof x === "object" && !Array.isArray(x); })) {
        var keys = [];
        v.forEach(function (x) { Object.keys(x).forEach(function (k) { if (keys.indexOf(k) < 0) keys.push(k); }); });
        return table(v.map(function (x) { return keys.map(function (k) { return x[k] === undefined ? null : x[k]; }); }), keys);
      }
      if (v.every(function (x) { return Array.isArray(x) && x.every(scalar); })) {
        var width = Math.max.apply(null, v.map(function (x) { return x.length; }));
        var head = [];
        for (var i = 0; i < width; i++) head.push(width === data.players ? "seat " + i : String(i));
        return table(v, head, v.map(function (_, j) { return String(j + 1); }));
      }
      var ol = el("ol");
      v.forEach(function (x) { var li = el("li"); li.appendChild(render(x, "")); ol.appendChild(li); });
      return ol;
    }
    var ks = Object.keys(v);
    if (!ks.length) return el("span", "muted", "none");
    if (ks.every(function (k) { return scalar(v[k]); }) && ks.length <= 8) {
      var line = el("span");
      ks.forEach(function (k, i) {
        if (i) line.appendChild(document.createTextNode(" · "));
        line.appendChild(el("span", "muted", k + " "));
        line.appendChild(el("b", "", text(v[k])));
      });
      return line;
    }
    var d = el("dl", "kv");
    ks.forEach(function (k) {
      d.appendChild(el("dt", "", k));
      var dd = el("dd"); dd.appendChild(render(v[k], k)); d.appendChild(dd);
    });
    return d;
  }
  var draw = window.ArenaTable ? window.ArenaTable.get(data.game) : null, drawFailed = false;
  function context(n) {
    return {seat: data.seat, players: data.players, seats: data.seats, name: seatName,
            step: n, last: last, acting: steps[n].a, events: steps[n].e.map(function (p) { return p[1]; }),
            previous: n > 0 ? states[n - 1] : null, over: n === last};
  }
  function drawTable(n) {
    // The game's own renderer (static/table-GAME.js); the view's data as it is if this
    // page has none, or if it fails on a view it does not know (an older engine's).
    var box = $("table"); box.textContent = "";
    if (draw && !drawFailed) {
      try { box.appendChild(draw(states[n], context(n))); return; }
      catch (err) { drawFailed = true; box.textContent = ""; }
    }
    box.appendChild(el("p", "muted", drawFailed ? "This position cannot be drawn; its data:" : ""));
    box.appendChild(render(states[n], ""));
  }
  // The play-by-play (issue 19 §2): every step's decisions, then the events they caused,
  // then the summaries of the rounds that ended there, as the server narrated them
  // (referee.narration, the sentences `arena replay` prints). Built once; showing a step
  // hides what comes after it.
  var play = $("play-by-play"), lines = [];
  function line(n, cls, sentence, index) {
    var li = el("li", cls, sentence);
    li.setAttribute("data-step", n);
    if (index !== undefined) li.setAttribute("data-index", index);
    play.appendChild(li); lines.push(li);
  }
  function fields(ev) {
    return ev.type + ": " + Object.keys(ev).filter(function (k) { return k !== "type" && k !== "to"; })
      .map(function (k) { return k + "=" + text(ev[k]); }).join(", ");
  }
  steps.forEach(function (s, n) {
    s.m.forEach(function (m) {
      line(n, "decision", m[4] || seatName(m[0]) + " chose " + text(m[1]));
    });
    s.e.forEach(function (pair) {
      line(n, pair[1].to ? "private" : "", pair[2] || fields(pair[1]), pair[0]);
      (pair[3] || []).forEach(function (sentence) { line(n, "summary", sentence); });
    });
  });
  // Rounds: the first position of each (the views say which round they are in).
  var rounds = [];
  states.forEach(function (v, n) {
    if (typeof v.round === "number" && (!rounds.length || rounds[rounds.length - 1].round !== v.round))
      rounds.push({round: v.round, step: n});
  });
  var roundSel = $("round");
  rounds.forEach(function (r) {
    var o = el("option", "", "round " + r.round); o.value = String(r.step); roundSel.appendChild(o);
  });
  roundSel.hidden = rounds.length < 2;
  function roundAt(n) {
    var found = null;
    rounds.forEach(function (r, i) { if (r.step <= n) found = i; });
    return found;
  }
  function show(n) {
    at = Math.max(0, Math.min(last, n | 0));
    var s = steps[at];
    $("step-label").textContent = at === 0 ? "Setup (step 0 of " + last + ")" : "Step " + at + " of " + last;
    $("slider").value = String(at);
    $("first").disabled = $("prev").disabled = at === 0;
    $("next").disabled = $("last").disabled = at === last;
    var r = roundAt(at);
    if (r !== null) roundSel.value = String(rounds[r].step);
    var act = $("to-act");
    act.textContent = "";
    if (s.a.length) {
      act.appendChild(el("span", "muted", "Next to act: "));
      s.a.forEach(function (seat) { act.appendChild(chip(seatName(seat), true)); });
    } else if (at === last) {
      act.appendChild(el("span", "muted", "The game is over."));
    }
    drawTable(at);
    // With a drawn table the seats to act are marked on it; on a phone the line goes.
    act.classList.toggle("drawn", !!draw && !drawFailed);
    var view = $("view"); view.textContent = ""; view.appendChild(render(states[at], ""));
    var body = $("decisions").tBodies[0]; body.textContent = "";
    s.m.forEach(function (m) {
      var tr = el("tr"); tr.setAttribute("data-seat", m[0]);
      if (m[0] === data.seat) tr.className = "me";
      var who = el("td"), bot = data.seats[m[0]];
      who.appendChild(el("b", "", m[0]));
      if (bot) who.appendChild(el("span", "muted", " " + bot.bot));
      tr.appendChild(who);
      var td = el("td"); td.appendChild(scalar(m[1]) ? chip(m[1]) : render(m[1], "")); tr.appendChild(td);
      tr.appendChild(el("td", m[2] === "default" ? "by-default" : "", m[2]));
      tr.appendChild(el("td", "num ms", (Math.round(m[3] * 10) / 10) + " ms"));
      body.appendChild(tr);
    });
    $("no-decision").textContent = s.m.length ? "" : at === 0
      ? "The setup: no decision yet." : "No decision of this seat at this step.";
    var ol = $("events"); ol.textContent = "";
    if (!s.e.length) ol.appendChild(el("li", "muted", "No events."));
    s.e.forEach(function (pair) {
      var ev = pair[1], li = el("li", ev.to ? "private" : "");
      li.value = pair[0]; li.setAttribute("data-index", pair[0]);
      li.appendChild(el("b", "ev-type", ev.type));
      if (ev.to) li.appendChild(el("span", "badge", ev.to.length ? "only seat " + ev.to.join(", ") : "hidden from all"));
      li.appendChild(document.createTextNode(" " + fields(ev).slice(ev.type.length + 2)));
      ol.appendChild(li);
    });
    var newest = null;
    lines.forEach(function (li) {
      var k = +li.getAttribute("data-step");
      li.hidden = k > at;
      li.classList.toggle("now", k === at);
      if (k <= at) newest = li;
    });
    // Scroll the list itself, not the page (on a phone the table stays in sight).
    if (newest) play.scrollTop = Math.max(0, newest.offsetTop - play.clientHeight + newest.offsetHeight + 8);
    else play.scrollTop = 0;
    if (history.replaceState) history.replaceState(null, "", "#step=" + at);
  }
  // Play and pause, at a speed (steps a second); it stops at the end.
  var timer = null, speedSel = $("speed");
  function pause() {
    if (timer !== null) { clearInterval(timer); timer = null; }
    $("play").textContent = "▶ play"; $("play").setAttribute("aria-pressed", "false");
  }
  function start() {
    if (at === last) show(0);
    pause();
    timer = setInterval(function () { if (at >= last) pause(); else show(at + 1); },
                        1000 / (+speedSel.value || 1));
    $("play").textContent = "❚❚ pause"; $("play").setAttribute("aria-pressed", "true");
  }
  function toggle() { if (timer === null) start(); else pause(); }
  function faster(by) {
    var i = Math.max(0, Math.min(speedSel.options.length - 1, speedSel.selectedIndex + by));
    speedSel.selectedIndex = i;
    if (timer !== null) start();
  }
  function stepTo(n) { pause(); show(n); }
  function nextRound(by) {
    var r = roundAt(at), i = r === null ? (by > 0 ? 0 : -1) : r + by;
    if (by < 0 && r !== null && rounds[r].step < at) i = r;  // back: to this round's start first
    if (i >= 0 && i < rounds.length) stepTo(rounds[i].step);
    else stepTo(by > 0 ? last : 0);
  }
  $("slider").max = String(last);
  $("first").onclick = function () { stepTo(0); };
  $("prev").onclick = function () { stepTo(at - 1); };
  $("next").onclick = function () { stepTo(at + 1); };
  $("last").onclick = function () { stepTo(last); };
  $("play").onclick = toggle;
  speedSel.onchange = function () { if (timer !== null) start(); };
  roundSel.onchange = function () { stepTo(+this.value); };
  $("slider").oninput = function () { stepTo(+this.value); };
  document.addEventListener("keydown", function (e) {
    var tag = e.target && e.target.tagName;
    if (tag === "INPUT" || tag === "SELECT" || tag === "TEXTAREA" || e.ctrlKey || e.metaKey || e.altKey) return;
    if (e.key === "ArrowRight" || e.key === "l") stepTo(at + 1);
    else if (e.key === "ArrowLeft" || e.key === "h") stepTo(at - 1);
    else if (e.key === "Home") stepTo(0);
    else if (e.key === "End") stepTo(last);
    else if (e.key === " " || e.key === "k") { if (tag === "BUTTON") return; toggle(); }
    else if (e.key === "PageDown" || e.key === "n") nextRound(1);
    else if (e.key === "PageUp" || e.key === "p") nextRound(-1);
    else if (e.key === "+" || e.key === "=") faster(1);
    else if (e.key === "-") faster(-1);
    else return;
    e.preventDefault();
  });
  function fromHash() {
    var m = /step=(\d+)/.exec(location.hash);
    return m ? +m[1] : 0;
  }
  window.addEventListener("hashchange", function () { if (fromHash() !== at) stepTo(fromHash()); });
  show(fromHash());
})();
