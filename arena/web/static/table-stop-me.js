/* The stop-me table (issue 19 §1): "Stop me or let me go" drawn as it lies on a table.

   In the middle, the gangster slots around the draw pile and the reward pool: each
   gangster face up (RULES.md §2.4 R2, A3) with the action cards every seat laid on it
   face down (R3), the discard pile below, then the cards turned face up at the last
   arrest (R4), or at a round's start the end of the round before: its deciding arrest,
   the gangsters revealed at END OF ROUND (R5), who won the round and whether the 1 beat
   the 10 (R6). Around it, each seat's hand and, in front of it, its reward tokens and the
   gangsters it captured round by round.

   What is face up is only what the perspective's view holds (docs/games/stop-me.md §4):
   on a seat's page its own hand and its own card on each gangster; every other action
   card is a back() with no identity. Token values stay hidden from everyone, the owner
   too, until the end (S2, A13); the full view shows every card and every value.
   Card ids (data-card, what tests/test_table_stop_me.py compares): "G7" the gangster 7,
   "s2-STOP" seat 2's STOP, "s2-GO" one of its GO cards.

   Colours: one palette hue a kind of card (gangster orange, GO bluish green, STOP
   vermillion, tokens yellow), each doubled by its number, arrow or octagon and word; a
   laid card carries its seat's colour and number. Every string is set as text. */
(function () {
  "use strict";
  var T = window.ArenaTable, el = T.el, add = T.add;
  var HUE = {gangster: 0, GO: 2, STOP: 5, token: 3};

  function ordinal(n) { return n + (n === 1 ? "st" : n === 2 ? "nd" : n === 3 ? "rd" : "th"); }

  /** A gangster card: its value is its rank and its id ("G7"). */
  function gangster(v, o) {
    o = o || {};
    return T.card("G" + v, {rank: v, glyph: "mask", label: o.label || "", hue: HUE.gangster,
                            small: o.small, cls: o.cls, title: o.title || "gangster " + v});
  }

  /** Seat p's action card face up; o.mini: a small card laid on a gangster, with the
      seat's colour and number (whose it is is public, R3). */
  function action(p, c, o) {
    o = o || {};
    return T.card("s" + p + "-" + c, {glyph: c === "STOP" ? "stop" : "go", hue: HUE[c],
      label: o.mini ? String(p) : c, small: o.small,
      cls: o.mini ? "t-sm-mini s" + (p % 8) : "", title: "seat " + p + ": " + c});
  }

  /** Seat p's card laid face down on a gangster: its seat, nothing of what it is. */
  function laidBack(p) {
    return T.back("action", {label: String(p), cls: "t-sm-mini s" + (p % 8),
                             title: "seat " + p + "'s card, face down"});
  }

  /** The hand of seat p if this perspective may see it ({GO: n, STOP: 0|1}), else null. */
  function handOf(view, ctx, p) {
    if (ctx.public) return null;  // a game watched live: nobody's hand (issue 19 §3)
    if (ctx.seat === null) return view.hands[p];
    return ctx.seat === p ? view.hand : null;
  }

  /** Seat p's card on a gangster if this perspective knows it, else null. */
  function laidCard(g, ctx, p) {
    if (ctx.public) return null;
    return ctx.seat === null ? g.cards[p] : ctx.seat === p ? g.mine : null;
  }

  /** How many slots a round has: go_cards, which the view does not hold; but a hand plus
      the cards it laid is always go_cards + 1 (S1, R3, A11). */
  function slotCount(view, ctx) {
    if (ctx.public) {  // no hand in sight: as many slots as the table has used
      return Math.max.apply(null, [view.table.length].concat(
        view.table.map(function (g) { return g.slot + 1; })));
    }
    var me = ctx.seat === null ? 0 : ctx.seat, hand = handOf(view, ctx, me), laid = 0;
    view.table.forEach(function (g) { if (laidCard(g, ctx, me)) laid++; });
    return hand.GO + hand.STOP + laid - 1;
  }

  /** The reveals to show (the same rule as the test's cards()): during a round the last
      one (R4); otherwise the end of the round before, from its last arrest on (R4, R5). */
  function shownReveals(view) {
    var rev = view.reveals || [];
    if (rev.length && !view.result) return {round: null, list: rev.slice(-1)};
    var h = view.history[view.history.length - 1];
    if (!h) return null;
    var from = 0;
    h.reveals.forEach(function (r, i) { if (r.phase === "arrest") from = i; });
    return {round: h, list: h.reveals.slice(from)};
  }

  function outcome(r, ctx) {
    if (r.outcome === "captured") return "captured by " + ctx.name(r.by);
    var stops = r.cards.filter(function (c) { return c === "STOP"; }).length;
    return r.outcome === "escaped" ? "escaped (no STOP)" : "escaped (" + stops + " STOPs: confusion)";
  }

  /** One revealed gangster: it, every seat's card on it face up (A16), what happened. */
  function revealLine(r, ctx, winner) {
    var line = el("div", "t-sm-rev" + (r.outcome === "captured" ? " t-sm-caught" : ""));
    add(line, gangster(r.gangster, {small: true, cls: r.by !== null && r.by === winner ? "win" : ""}),
        r.cards.map(function (c, p) { return action(p, c, {mini: true}); }),
        el("span", "t-sm-out", (r.phase === "end" ? "end: " : "arrest: ") + outcome(r, ctx)));
    return line;
  }

  /** Who won round h; R6: the lowest gangster beats the highest when another seat
      captured the highest, so a winner holding less than another capture won by it. */
  function roundWinner(h, ctx) {
    var p = el("p", "gnote t-sm-winner");
    if (h.winner === null) return add(p, "Round " + h.round + ": nothing captured, no token (A6).");
    var v = h.captured[h.winner], top = Math.max.apply(null, h.captured.filter(function (x) {
      return x !== null; }));
    add(p, T.icon("star"), el("b", "", "Round " + h.round + ": " + ctx.name(h.winner)),
        " wins a token with the " + v + ".");
    if (v < top) add(p, " ", el("b", "t-sm-beats", "The " + v + " beats the " + top),
        " (R6: the lowest beats the highest when another seat captured it).");
    return p;
  }

  /** A gangster slot: its caption (place in the arrest queue, R4), the gangster and the
      cards laid on it; the newest gangster is the one every seat lays a card on now. */
  function slotBox(entry, n, ctx, players) {
    var box = el("div", "t-sm-slot");
    if (!entry) return add(box, el("span", "t-sm-cap", "empty"), el("span", "t-sm-empty"));
    var g = entry.g, now = entry.i === n - 1;
    if (now) box.className += " t-sm-now";
    if (entry.i === 0 && !now) box.className += " t-sm-next";
    box.title = now ? "every seat lays a card on it now (R3)" :
      "arrested " + ordinal(entry.i + 1) + ": the oldest goes first (R4)";
    add(box, add(el("span", "t-sm-cap"), now ? T.icon("hand") : entry.i === 0 ? T.icon("shield") : null,
                 now ? "now" : ordinal(entry.i + 1), now ? null : el("span", "t-sm-wide", " in line")),
        gangster(g.gangster));
    var laid = [];
    for (var p = 0; p < players && !now; p++) {
      var c = laidCard(g, ctx, p);
      laid.push(c ? action(p, c, {mini: true}) : laidBack(p));
    }
    box.appendChild(T.row(now ? [el("span", "t-sm-cap", "laying…")] : laid, "t-sm-laid"));
    return box;
  }

  /** The draw pile (face down; the full view knows its order) and the reward pool. */
  function pile(view, ctx) {
    var box = el("div", "t-sm-pile");
    var draw = T.back("draw", {label: view.draw_pile + " left", title: ctx.seat === null && !ctx.public
      ? "draw pile, top first: " + view.draw_order.join(", ") : "draw pile, face down"});
    var pool = ctx.seat === null && !ctx.public
      ? view.pool_values.map(function (v) { return T.token(v, {hue: HUE.token, title: "reward pool (full view)"}); })
      : [T.token(null, {hidden: true, kind: "pool", hue: HUE.token,
                        title: "reward pool: values hidden from everyone (A13)"})];
    return add(box, draw, T.row(pool, "t-sm-pool"),
               el("span", "t-sm-cap", view.pool + " token" + (view.pool === 1 ? "" : "s")));
  }

  /** A seat: its hand (face up if this perspective sees it, else its backs), then in
      front of it its reward tokens and the gangsters it captured (R5-R7). */
  function seatArea(view, ctx, p) {
    var res = view.result, box = T.seat(ctx, p, res ? "· rank " + res.ranks[p] + ", " +
                                        res.scores[p] + " points" : "");
    if (!res && ctx.public) {  // watched live: every hand face down, its size untold
      box.appendChild(T.row([T.back("hand", {small: true, label: "hand"})], "t-sm-hand"));
    } else if (!res) {
      var hand = handOf(view, ctx, p), cards = [], own = ctx.seat === p;
      var mine = handOf(view, ctx, ctx.seat === null ? p : ctx.seat);
      var size = mine.GO + mine.STOP;  // every hand has the same size (R3, A11)
      for (var i = 0; i < size; i++) {
        cards.push(!hand ? T.back("hand", {small: true})
          : action(p, i < hand.GO ? "GO" : "STOP", {small: !own}));
      }
      var row = T.row(cards, "t-sm-hand" + (hand ? "" : " t-sm-fan"));  // backs overlap
      if (own) row.setAttribute("data-zone", "hand");
      box.appendChild(row);
    }
    var values = res ? res.details[p].token_values
      : ctx.seat === null && !ctx.public ? view.token_values[p] : null;
    var front = [];
    for (var t = 0; t < view.tokens[p]; t++) {
      front.push(values ? T.token(values[t], {hue: HUE.token, title: "reward token " + values[t]})
        : T.token(null, {hidden: true, kind: "reward", hue: HUE.token,
                         title: "reward token: its value is hidden from everyone until the end (A13)"}));
    }
    view.history.forEach(function (h) {
      var v = h.captured[p];
      if (v !== null) front.push(gangster(v, {small: true, label: "r" + h.round,
        cls: h.winner === p ? "win" : "", title: "captured the " + v + " in round " + h.round +
        (h.winner === p ? ", won the round" : "")}));
    });
    var fr = T.row(front, "t-sm-front");
    if (!front.length) fr.firstChild.textContent = "nothing won yet";
    box.appendChild(fr);
    return box;
  }

  var REASONS = {instant_win: "enough tokens win at once (E1)",
                 tokens_exhausted: "the reward pool is empty, the highest total wins (E2)",
                 round_cap: "the round cap is reached, the highest total wins (E3)"};

  function status(view, ctx) {
    var p = el("p", "gnote t-sm-status");
    if (view.result) {
      var firsts = [];
      view.result.ranks.forEach(function (r, s) { if (r === 1) firsts.push(ctx.name(s)); });
      return add(p, el("b", "", "Game over: " + firsts.join(" and ") + " first"),
                 ", " + (REASONS[view.result.reason] || view.result.reason) + ".");
    }
    return add(p, el("b", "", "Round " + view.round), " of at most " + view.max_rounds,
               " · failed arrests " + view.failed);
  }

  function draw(view, ctx) {
    var root = el("div", "gtable t-sm"), players = view.players;
    var seats = [];
    for (var s = 0; s < players; s++) seats.push(s);
    var others = seats.filter(function (x) { return x !== ctx.seat; });
    root.appendChild(status(view, ctx));
    var top = el("div", "seats t-sm-others");
    if (ctx.seat !== null) {  // a seat's page: the others across the table, oneself below
      others.forEach(function (x) { top.appendChild(seatArea(view, ctx, x)); });
      root.appendChild(top);
    }
    var centre = T.zone(null, "t-sm-centre");
    centre.setAttribute("data-zone", "centre");
    if (!view.result) {
      var n = slotCount(view, ctx), bySlot = {}, row = el("div", "t-sm-slots");
      view.table.forEach(function (g, i) { bySlot[g.slot] = {g: g, i: i}; });
      for (var k = 0; k < n; k++) {
        if (k === Math.floor(n / 2)) row.appendChild(pile(view, ctx));  // slots around the pile
        row.appendChild(slotBox(bySlot[k], view.table.length, ctx, players));
      }
      centre.appendChild(row);
      if (view.discard.length) {
        add(centre, add(el("div", "t-sm-discard"), el("span", "t-sm-cap", "discard"),
            T.row(view.discard.map(function (v) { return gangster(v, {small: true}); }))));
      }
    }
    root.appendChild(centre);
    // The cards turned face up: below the slots (on a phone below one's hand too); at the
    // end, with nothing else left on the table, in the middle of it.
    var shown = shownReveals(view);
    if (shown) {
      var fresh = ctx.events.some(function (e) { return e.type === "reveal"; });
      var rv = view.result ? centre : T.zone(null, "t-sm-reveals");
      if (fresh) rv.className += " t-sm-fresh";
      add(rv, el("h3", "zone-title", shown.round ? "End of round " + shown.round.round
                                                 : "Last arrest, face up"),
          shown.list.map(function (r) { return revealLine(r, ctx, shown.round && shown.round.winner); }),
          shown.round ? roundWinner(shown.round, ctx) : null);
      if (rv !== centre) root.appendChild(rv);
    }
    var bottom = el("div", "seats t-sm-mine");
    (ctx.seat === null ? seats : [ctx.seat]).forEach(function (x) {
      bottom.appendChild(seatArea(view, ctx, x));
    });
    root.appendChild(bottom);
    return root;
  }

  T.register("stop-me", draw);
})();
