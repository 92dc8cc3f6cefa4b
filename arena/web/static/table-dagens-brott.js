/* The dagens-brott table (issue 19 §1): one position of "Dagens brott" drawn as it lies on
   a table. In the middle, the crime of the day, the cards laid in this trick with their
   owners (the best one marked), who has passed, and the police and escape of the trick's
   end; then the seats with their hands, the crimes each won this round and its points;
   then the score pad and the used pile. (RULES.md §3, docs/games/dagens-brott.md.)

   What is face up is what the perspective's view holds (RULES.md §3.7): a seat's page
   shows its own hand and only the size of the others' (face-down backs carry no
   identity), the full view shows every hand. The crime deck and the set-aside deck
   cards are face down for everyone, in the full view too: nobody at the table sees them.

   Every kind of card has its own colour of the palette (h0-h7, Okabe-Ito) AND its own
   glyph and word, so colour is never the only cue: each criminal, the joker, police and
   escape. Every string (bot names above all) is set as text by the ArenaTable helpers. */
(function () {
  "use strict";
  var T = window.ArenaTable;
  if (!T) return;

  // The glyphs ArenaTable lacks, as 24x24 outlines like its own.
  var LOCAL = {
    house: "M3 11l9-8 9 8M5 9.5V21h14V9.5M10 21v-6h4v6",
    boat: "M2 15h20l-3.5 5h-13zM5 15V9h9l4 6M8 9V5h3v4",
    bag: "M9 3h6l-2 3.5h-2zM12 6.5c-5 0-8 6-8 9.5a4.5 4.5 0 0 0 4.5 4.5h7a4.5 4.5 0 0 0 4.5-4.5c0-3.5-3-9.5-8-9.5M10 13.5h3.5a1.5 1.5 0 0 1 0 3H10"
  };
  // The five criminals of RULES.md §3.3 [DATA]: a hue, a glyph and a word each. Criminals
  // of other options get a criminal's hue by their name (never the joker's, police's or
  // escape's), and their id as their word.
  var CRIMINALS = {
    PICK: {hue: 0, glyph: "hand", name: "Pickpocket"},
    BURG: {hue: 1, glyph: "house", name: "Burglar"},
    CON: {hue: 2, glyph: "mask", name: "Con artist"},
    SMUG: {hue: 6, glyph: "boat", name: "Smuggler"},
    ROB: {hue: 5, glyph: "bag", name: "Robber"}
  };
  var OTHER_HUES = [0, 1, 2, 6, 5];
  // The special cards: words in lower case, so that no text of a seat's page reads as the
  // id of a card it may not see (the cards' ids are only in data-card and title).
  var SPECIAL = {
    JOKER: {hue: 3, glyph: "star", word: "joker", title: "joker: beats every criminal card; the last-laid joker wins (RULES.md §3.3, B2)"},
    POLICE: {hue: 4, glyph: "shield", word: "police", title: "police: stops the crime at the trick's end (RULES.md §3.5 T4)"},
    ESCAPE: {hue: 7, glyph: "run", word: "escape", title: "escape: cancels every police card of the trick (RULES.md §3.5 T5, B9)"}
  };

  function criminal(id) {
    if (Object.prototype.hasOwnProperty.call(CRIMINALS, id)) return CRIMINALS[id];
    var h = 0;
    for (var i = 0; i < id.length; i++) h = (h * 31 + id.charCodeAt(i)) % 997;
    return {hue: OTHER_HUES[h % OTHER_HUES.length], glyph: "eye", name: id};
  }

  /** An icon: ArenaTable's, or one of LOCAL built the same way. */
  function glyph(name) {
    if (!LOCAL[name]) return T.icon(name);
    var s = T.svg("svg", {viewBox: "0 0 24 24", "class": "icon", "aria-hidden": "true", focusable: "false"});
    s.appendChild(T.svg("path", {d: LOCAL[name]}));
    return s;
  }

  /** A card with a glyph of either set (ArenaTable.card knows only its own). */
  function withGlyph(id, name, o) {
    var c = T.card(id, o);
    c.insertBefore(glyph(name), c.querySelector(".label"));
    return c;
  }

  /** A deck card face up: a criminal's card (RULES.md §3.3: id = criminal + value) or a
      special one. */
  function deckCard(id, small, cls) {
    var sp = SPECIAL[id];
    if (sp) return withGlyph(id, sp.glyph, {label: sp.word, hue: sp.hue, small: small, title: sp.title,
                                            cls: "t-db-sp" + (cls ? " " + cls : "")});
    var m = /^([A-Z]+)(\d+)$/.exec(id) || [id, id, ""];
    var k = criminal(m[1]);
    return withGlyph(id, k.glyph, {rank: m[2], label: m[1], hue: k.hue, small: small, cls: cls,
                                   title: k.name + " " + m[2] + " (" + id + ")"});
  }

  /** A crime-of-the-day card: tinted and double-edged, unlike a deck card; its id is
      "crime:" + the crime id, which never meets a deck card's id (RULES.md §3.3). */
  function crimeCard(c, small) {
    var k = criminal(c.criminal);
    var card = withGlyph("crime:" + c.id, k.glyph, {
      rank: c.value, label: small ? c.criminal : c.name, hue: k.hue, small: small,
      cls: "t-db-crime", title: "crime: " + c.name + " (" + k.name + ", " + c.value + " points)"});
    if (!small) {
      card.insertBefore(T.el("span", "t-db-unit", "points"), card.children[1]);
      card.insertBefore(T.el("span", "t-db-who", k.name), card.querySelector(".label"));
    }
    return card;
  }

  function dot(s) { return T.el("span", "seat-dot s" + (s % 8), s); }

  function tag(text, cls, title) {
    var t = T.el("span", "t-db-tag" + (cls ? " " + cls : ""), text);
    if (title) t.title = title;
    return t;
  }

  /** A card with its owner's seat under it (the trick, the police laid). */
  function owned(cardEl, s, extra) {
    return T.add(T.el("div", "t-db-play"), cardEl, T.add(T.el("span", "t-db-owner"), dot(s), extra || null));
  }

  function seatList(seats, ctx) {
    return seats.map(function (s) { return ctx.name(s); }).join(", ");
  }

  /** What happened since the last position shown, from this step's public events: how
      the last trick ended (RULES.md §3.5 T3-T5) and a round's end. While the trick's end
      is still on the table (D2, D3) the table itself shows its winner and police. */
  function happened(view, ctx) {
    var out = [], open = view.phase === "police" || view.phase === "escape";
    (ctx.events || []).forEach(function (e) {
      if (open) return;
      if (e.type === "trick_won") out.push(ctx.name(e.seat) + " won the trick.");
      else if (e.type === "police" && e.count) out.push("Police from " + seatList(e.seats, ctx) + ".");
      else if (e.type === "escape") out.push(e.escaped ? ctx.name(e.seat) + " escaped." : "No escape.");
      else if (e.type === "crime_scored") out.push(ctx.name(e.seat) + " scored " + e.points + " points.");
      else if (e.type === "crime_stopped") out.push("The crime was stopped: nobody scores it (T5, B12).");
      else if (e.type === "crime_set_aside") out.push("Nobody laid a card: the crime is set aside (T3, B7).");
      else if (e.type === "round_end") out.push("Round " + e.round + " ended: " +
        (e.reason === "hand_empty" ? "a hand was empty (T6)." : "the crime deck was spent (T0)."));
    });
    return out;
  }

  /** The middle of the table: piles, the crime, the trick, passes, police and escape. */
  function centre(view, ctx) {
    var z = T.el("section", "zone t-db-centre");
    z.setAttribute("data-zone", "centre");
    var head = T.el("div", "t-db-head");
    T.add(head, T.el("b", "", "Round " + view.round + " of " + view.rounds));
    if (view.result) {
      T.add(head, " · the game is over");
    } else {
      // The crime deck and the set-aside cards: face down for everyone (RS2, RS3).
      T.add(head, T.add(T.el("span", "pile", ""), T.back("crimes", {small: true, title: "the crime deck, face down"}),
                        T.el("span", "", view.crimes_left + " crimes to come")),
            T.add(T.el("span", "pile", ""), T.back("set-aside", {small: true, title: "set aside, unseen by everyone (RS3)"}),
                  T.el("span", "", view.set_aside + " set aside")));
      // Crimes nobody took this round (T3 B7, T5 B12): public, face up.
      if (view.crimes_set_aside.length) {
        T.add(head, T.add(T.el("span", "pile", ""), T.el("span", "", "crimes set aside:"),
                          view.crimes_set_aside.map(function (c) { return crimeCard(c, true); })));
      }
    }
    z.appendChild(head);
    var body = T.el("div", "t-db-mid");
    if (view.crime) body.appendChild(crimeCard(view.crime, false));
    else if (!view.result) body.appendChild(T.el("p", "muted", "No crime turned up."));
    var trick = T.el("div", "t-db-trick");
    if (!view.result) {
      trick.appendChild(T.el("h3", "zone-title", "This trick"));
      var trickCards = view.trick || [], best = -1;
      // The best card: the last one laid equal to view.best (B2: the last joker; B3: of
      // equal values the later).
      trickCards.forEach(function (t, i) {
        if (view.best && t.seat === view.best.seat && t.card === view.best.card) best = i;
      });
      trick.appendChild(T.row(trickCards.map(function (t, i) {
        return owned(deckCard(t.card, false, i === best ? "win" : ""), t.seat,
                     i === best ? tag("best", "t-db-best", "the best card so far (T3: B2-B4)") : null);
      }), "t-db-laid"));
      var passed = [];
      (view.passed || []).forEach(function (p, s) { if (p) passed.push(s); });
      if (view.phase === "lay") {
        // T2: a pass is final for the trick.
        trick.appendChild(T.add(T.el("div", "t-db-passes"), T.el("span", "muted", "passed: "),
                                passed.length ? passed.map(dot) : T.el("span", "muted", "nobody yet")));
      }
      if (view.phase === "police" || view.phase === "escape" || (view.police || []).length) trick.appendChild(lawZone(view));
    }
    body.appendChild(trick);
    z.appendChild(body);
    var notes = happened(view, ctx), now = T.el("p", "gnote t-db-now");
    if (!view.result && ctx.acting && ctx.acting.length) {
      var what = {lay: " to lay a card or pass (D1)", police: " may lay police (D2)",
                  escape: " may escape (D3)"}[view.phase] || " to act";
      notes.push(seatList(ctx.acting, ctx) + what + ".");
    }
    if (notes.length) { now.textContent = notes.join(" "); z.appendChild(now); }
    return z;
  }

  /** The trick's end: police (T4: every other seat decides at once) and escape (T5). */
  function lawZone(view) {
    var box = T.el("div", "t-db-law");
    if (view.phase === "police") {
      box.appendChild(T.el("span", "muted", "Police? The others decide at once (T4)."));
    } else {
      // D3: the police laid are shown, by whom (RULES.md §3.7); one escape cancels them all (B9).
      T.add(box, (view.police || []).map(function (s) { return owned(deckCard("POLICE", true), s); }),
            T.el("span", "muted", "Police laid: one escape card cancels them all (T5, B9)."));
    }
    return box;
  }

  /** One seat: its hand (face up if the perspective may see it), its tags, the crimes it
      won this round and its points. */
  function seatArea(view, ctx, s) {
    var full = ctx.seat === null && !ctx.public, tags = [];  // live: nobody's hand (§3)
    if (!view.result) {
      if (view.dealer === s) tags.push(tag("dealer", "", "deals this round (RS1)"));
      if (view.leader === s) tags.push(tag("leads", "", "leads this trick (T1)"));
      if (view.winner === s) tags.push(tag("wins the trick", "t-db-best"));
      if ((view.police || []).indexOf(s) >= 0) tags.push(tag("laid police", "t-db-cop"));
    }
    var box = T.seat(ctx, s);
    T.add(box.firstChild, tags);
    if (!view.result) {
      var hand, n = view.hand_sizes[s];
      if (full) hand = T.row(view.hands[s].map(function (c) { return deckCard(c, true); }), "t-db-hand");
      else if (ctx.seat === s) hand = T.row(view.hand.map(function (c) { return deckCard(c, false); }), "t-db-hand");
      else hand = T.add(T.el("div", "cardrow t-db-hand"), n ? T.back("hand", {small: true, title: "a hand, face down"}) : null,
                        T.el("span", "muted", n + (n === 1 ? " card" : " cards")));
      if (ctx.seat === s) hand.setAttribute("data-zone", "hand");
      box.appendChild(hand);
      var won = view.crimes_won[s] || [];
      if (won.length) {
        var wonRow = T.row(won.map(function (c) { return crimeCard(c, true); }), "t-db-won");
        wonRow.insertBefore(T.el("span", "muted", "crimes won:"), wonRow.firstChild);
        box.appendChild(wonRow);
      }
    }
    var pad = view.score_pad, row = pad.length ? pad[pad.length - 1][s] : 0;
    box.appendChild(T.add(T.el("div", "t-db-pts"),
      view.result ? T.el("span", "", "rank " + view.result.ranks[s] + (view.result.ranks[s] === 1 ? " (wins) · " : " · ")) : T.el("span", "", "round " + row + " · "),
      T.el("b", "", "total " + view.totals[s])));
    return box;
  }

  /** The score pad (RULES.md §3.6): a row per round, a column per seat, the totals.
      Not a <table>: the viewer's tests take a table in #table for its raw fallback. */
  function scorePad(view, ctx) {
    var z = T.zone("Score pad", "t-db-pad");
    var n = view.totals.length, seats = [];
    for (var s = 0; s < n; s++) seats.push(s);
    function line(label, cells, cls) {
      return T.add(T.el("div", "t-db-padrow" + (cls ? " " + cls : "")), T.el("span", "t-db-padlabel", label), cells);
    }
    z.appendChild(line("", seats.map(function (s) {
      var c = T.add(T.el("span", ctx.seat === s ? "me" : ""), dot(s));
      c.title = ctx.name(s);
      return c;
    }), "t-db-padhead"));
    view.score_pad.forEach(function (r, i) {
      z.appendChild(line("R" + (i + 1), r.map(function (p) { return T.el("span", "", p); }),
                         !view.result && i === view.score_pad.length - 1 ? "t-db-live" : ""));
    });
    z.appendChild(line("total", view.totals.map(function (p) { return T.el("b", "", p); }), "t-db-total"));
    return z;
  }

  /** The used pile of this round (public, RULES.md §3.7), by kind: values, not cards. */
  function usedPile(view) {
    var z = T.zone("Used pile · " + view.used.length, "t-db-used"), groups = {}, order = [];
    view.used.forEach(function (id) {
      var m = /^([A-Z]+)(\d+)$/.exec(id), key = m && !SPECIAL[id] ? m[1] : id;
      if (!groups[key]) { groups[key] = []; order.push(key); }
      groups[key].push(m && !SPECIAL[id] ? +m[2] : 1);
    });
    T.add(z, order.map(function (key) {
      var sp = SPECIAL[key], k = sp || criminal(key), vals = groups[key];
      var g = T.add(T.el("span", "t-db-group h" + k.hue), glyph(k.glyph));
      if (sp) g.appendChild(T.el("span", "", sp.word + " ×" + vals.length));
      else g.appendChild(T.el("span", "", key + " " + vals.sort(function (a, b) { return a - b; }).join(" ")));
      return g;
    }));
    if (!order.length) z.appendChild(T.el("span", "muted", "empty"));
    return z;
  }

  T.register("dagens-brott", function draw(view, ctx) {
    var root = T.el("div", "gtable t-db" + (ctx.seat === null && !ctx.public ? " t-db-full" : ""));
    root.appendChild(centre(view, ctx));
    // A seat's own area comes first under the middle (on a phone: on the first screen).
    var order = [], others = T.el("div", "seats");
    for (var s = 0; s < view.totals.length; s++) if (s !== ctx.seat) order.push(s);
    if (ctx.seat !== null && ctx.seat !== undefined) root.appendChild(seatArea(view, ctx, ctx.seat));
    order.forEach(function (s) { others.appendChild(seatArea(view, ctx, s)); });
    root.appendChild(others);
    root.appendChild(T.add(T.el("div", "zones"), scorePad(view, ctx), view.result ? null : usedPile(view)));
    return root;
  });
})();
