/* The table of Stand & Deliver (issue 19 §1): one position as the highwaymen would see it.

   The middle of the table (data-zone="centre") is the road: this round's coaches at their
   positions, face down until revealed (RULES.md 4.4 Step 6a), with who chose each, who
   peeked at it and how its hold-up came out; under it the bag and the decks. Then the
   encounters of this round, step by step (4.5). Around it one area per seat: health,
   notoriety, coins, ability cards, wheel choice, the hazards drawn this round.

   What is drawn is what the perspective's view holds (RULES.md 4.9), nothing more: a seat
   sees its own coin denominations and ability cards and its spyglass peeks; of the others
   only the counts (coins, cards), which is what the view gives. The full view holds every
   pouch, hand and face-down coach, so it draws them all face up, the coaches still marked
   face down. Card ids (data-card) are "coach2:mail" and "ability:spyglass", made from the
   view alone. Every string (bot names, character names) is set as text. Colour is never
   the only cue: each coach kind, ability kind and coin has its own hue of the palette and
   its own word or letter; each seat its colour and its number. */
(function () {
  "use strict";
  var T = window.ArenaTable, el = T.el, add = T.add;

  // Coach kinds (RULES.md 4.2, C1): a hue and a short word each; the full name is the title.
  var COACH = {traveller: [7, "Traveller"], merchant: [2, "Merchant"], gentleman: [1, "Gentleman"],
               noble: [6, "Nobleman"], mail: [4, "Mail coach"], bullion: [3, "Bullion"],
               trap: [5, "Trap!"]};
  // Ability kinds (4.2, 4.7): hue, glyph, words.
  var ABILITY = {spyglass: [1, "eye", "Spyglass"], surgeon: [2, "heart", "Surgeon"],
                 fast_horse: [0, "run", "Fast horse"], inside_man: [6, "mask", "Inside man"],
                 lucky_charm: [3, "star", "Lucky charm"], bribe_judge: [4, "shield", "Bribe judge"]};
  // Coins and hazards: a hue and a letter each (the letter doubles the colour).
  var TOKEN = {gold: [3, "G"], silver: [7, "S"], copper: [0, "C"], shot: [4, "✸"], redcoat: [5, "R"]};
  var COINS = ["gold", "silver", "copper"];
  var PHASE = {D1: "planning: abilities", D2: "the wheel of fate", D3: "an encounter",
               D3t: "an encounter: talk", D4: "before the loot: abilities", D5: "the judge",
               D6: "after the draw: lucky charm", D7: "an ability pick"};
  var OUTCOME = {escaped: "got away", solo: "alone", share: "shared"};
  // Glyphs table.js does not have (24x24 outlines, as its own).
  var GLYPH = {noose: "M12 2v5M12 7c-3 0-5 2.5-5 5.5S9 18 12 18s5-2.5 5-5.5S15 7 12 7zM12 18v4",
               horse: "M7 21V11a5 5 0 0 1 10 0v10M5 21h4M15 21h4",
               aim: "M12 4a8 8 0 1 0 .01 0M12 1v6M12 17v6M1 12h6M17 12h6"};

  function glyph(name) {
    if (!GLYPH[name]) return T.icon(name);
    var s = T.svg("svg", {viewBox: "0 0 24 24", "class": "icon", "aria-hidden": "true",
                          focusable: "false"});
    s.appendChild(T.svg("path", {d: GLYPH[name]}));
    return s;
  }
  /** An icon, a word (hidden on a phone, where the icon and the title remain) and a value. */
  function stat(icon, text, title, word) {
    var s = add(el("span", "stat"), glyph(icon), word ? el("span", "t-sd-w", word + " ") : null,
                String(text));
    s.title = title;
    return s;
  }
  function dot(s) { var d = el("span", "seat-dot s" + (s % 8), s); d.title = "seat " + s; return d; }
  function dots(list) { return list.map(dot); }
  function tok(kind, n) {
    return T.token(TOKEN[kind][1] + n, {hue: TOKEN[kind][0], cls: "t-sd-" + kind, title: n + " " + kind});
  }
  function counts(list) {
    var c = {gold: 0, silver: 0, copper: 0};
    (list || []).forEach(function (k) { c[k] = (c[k] || 0) + 1; });
    return c;
  }

  /** A coach card face up: its kind's hue and word, treasure as the rank, nooses and
      guards below; "down" marks one that is face down at the table (full view, peek). */
  function coachCard(pos, card, down) {
    var k = COACH[card.kind] || [0, card.kind];
    var c = T.card("coach" + pos + ":" + card.kind, {
      rank: card.trap ? null : card.treasure, glyph: card.trap ? "skull" : "coach", hue: k[0], label: k[1],
      cls: "t-sd-coach" + (down ? " t-sd-down" : ""),
      title: (card.name || card.kind) + (card.treasure !== undefined
        ? ": treasure " + card.treasure + ", nooses " + card.nooses + ", guards " + card.guards
        : "") + (down ? " (face down at the table)" : "")});
    if (card.nooses !== undefined) {
      var f = el("span", "t-sd-ng");
      if (card.nooses) add(f, glyph("noose"), String(card.nooses));
      if (card.guards) add(f, T.icon("shield"), String(card.guards));
      c.appendChild(f);
    }
    return c;
  }
  function abilityCard(kind) {
    var a = ABILITY[kind] || [7, "star", kind];
    return T.card("ability:" + kind, {hue: a[0], glyph: a[1], label: a[2], small: true,
                                      cls: "t-sd-ab", title: a[2] + " (ability card)"});
  }

  /** The road (Steps 1, 4-6): each coach at its position with what is public about it. */
  function road(view) {
    var peeks = {}, table = view.table || [];
    ((view.me || {}).peeks || []).forEach(function (p) { peeks[p.coach] = p.card; });
    return T.row((view.coaches || []).map(function (c) {
      var slot = el("div", "t-sd-slot"), t = table[c.position - 1], mine = peeks[c.position];
      // Face down until revealed (6a); the full view knows the card, a peek shows it to
      // the seat that used the spyglass alone (D1, RULES.md 4.9).
      if (c.card) slot.appendChild(coachCard(c.position, c.card, false));
      else if (mine) slot.appendChild(coachCard(c.position, mine, true));
      else if (t) slot.appendChild(coachCard(c.position, {kind: t.kind}, true));
      else slot.appendChild(T.back("coach", {cls: "t-sd-coach", title: "coach " + c.position + ", face down"}));
      var under = add(el("div", "t-sd-under"), el("b", "", c.position));
      if (c.choosers.length) add(under, " ", dots(c.choosers));
      if (c.peeked_by.length) add(under, " ", glyph("eye"), dots(c.peeked_by));
      slot.appendChild(under);
      if (c.outcome) {
        var o = el("div", "t-sd-out t-sd-" + c.outcome, OUTCOME[c.outcome] || c.outcome);
        // The robbers, when not all who chose it (some withdrew or were shot, 4.5).
        if (c.robbers.length && c.robbers.join() !== c.choosers.join()) add(o, " ", dots(c.robbers));
        slot.appendChild(o);
      }
      if (mine && !c.card) slot.appendChild(el("div", "t-sd-out", "you peeked"));
      return slot;
    }), "t-sd-road");
  }

  function centre(view, ctx) {
    var z = T.zone(null, "t-sd-centre");
    z.setAttribute("data-zone", "centre");
    var head = add(el("div", "gnote t-sd-head"), el("b", "", "Round " + view.round + " of " + view.rounds));
    var pending = view.pending ? view.pending.id : (view.decision || {}).id;
    if (pending && !ctx.over) add(head, " · ", PHASE[pending] || pending);
    if (view.result) add(head, " · the game is over");
    if (view.table && view.table.some(function (t) { return !t.revealed; }))
      add(head, el("span", "muted", " · hatched: face down"));
    z.appendChild(head);
    z.appendChild(view.coaches && view.coaches.length ? road(view)
      : el("p", "muted", "No coaches on the road."));
    // The bag (SU3, Step 8): its counts are public, its coins by kind only in the full view.
    var bag = add(el("div", "cardrow t-sd-bag"), el("span", "muted", "Bag"));
    var inside = view.bag_contents;
    if (inside) COINS.forEach(function (k) { if (inside[k]) bag.appendChild(tok(k, inside[k])); });
    else bag.appendChild(stat("coin", view.bag.coins, view.bag.coins + " coins"));
    bag.appendChild(tok("shot", view.bag.shot));
    bag.appendChild(tok("redcoat", view.bag.redcoat));
    // Silver and gold join the bag once someone reaches notoriety 4 and 7 (Step 8, C8).
    add(bag, el("span", "muted", (view.silver_added ? "silver in" : "no silver yet") + " · " +
                (view.gold_added ? "gold in" : "no gold yet")));
    add(bag, add(el("span", "t-sd-decks"),
                 stat("coach", view.coach_deck, "coaches in the deck (" + view.coach_discard + " discarded)"),
                 stat("star", view.ability_deck, "ability cards in the deck")));
    z.appendChild(bag);
    return z;
  }

  /** This round's encounters (4.5): each step's actions and where it led. */
  function encounters(view) {
    if (!view.encounters || !view.encounters.length) return null;
    var z = T.zone("Encounters", "t-sd-enc");
    view.encounters.forEach(function (e) {
      var p = add(el("div", "gnote"), el("b", "", "Coach " + e.coach + ":"), " ", dots(e.participants));
      e.steps.forEach(function (s, i) {
        var line = add(el("span", "t-sd-step"), " " + (i + 1) + ". ");
        s.participants.forEach(function (q, j) {
          var a = s.actions[j];
          var act = add(el("span", "t-sd-act"), dot(q));
          if (a && typeof a === "object" && a.shoot !== undefined) add(act, glyph("aim"), "shoots", dot(a.shoot));
          else add(act, a === "SHARE" ? "shares" : a === "WITHDRAW" ? "withdraws" : String(a));
          line.appendChild(act);
        });
        p.appendChild(line);
      });
      if (e.outcome) add(p, " → ", el("b", "", OUTCOME[e.outcome] || e.outcome), " ", dots(e.robbers));
      z.appendChild(p);
    });
    return z;
  }

  function choice(h) {
    var c = h.choice;
    if (c === null || c === undefined) return null;
    if (typeof c === "object") return stat("wheel", c.coach, "wheel of fate: coach " + c.coach, "coach");
    return stat(c === "HORSE" ? "horse" : "stop", c === "HORSE" ? "sits out" : "retires", "wheel of fate: " + c);
  }

  /** One seat's area: public counts for all, denominations and cards where the view has them. */
  function seatArea(view, ctx, h) {
    var s = h.seat, me = ctx.seat === s, full = ctx.seat === null && !ctx.public;  // §3
    var box = T.seat(ctx, s);
    box.classList.add("t-sd-seat");
    box.firstChild.title = ctx.name(s);  // the whole name, where a phone cuts it short
    box.appendChild(el("div", "t-sd-char", h.character));
    var line = add(el("div", "t-sd-stats"), stat("heart", h.health, "health " + h.health),
                   stat("noose", h.notoriety, "notoriety " + h.notoriety, "notoriety"));
    if (h.status !== "ACTIVE") line.appendChild(el("b", "t-sd-status", h.status === "HANGED"
      ? "hanged (round " + h.hanged_round + ")" : "retired"));
    else if (h.forced_sitout && !view.result) line.appendChild(el("span", "t-sd-status", "must sit out"));
    if (h.sits_out_next && !view.result) line.appendChild(el("span", "t-sd-status", "sits out next round"));
    add(line, choice(h));
    box.appendChild(line);
    // Coins: the count is public, the denominations private (RULES.md 4.9); the end of the
    // game shows everyone's (the result's coins_by_kind).
    var detail = view.result && view.result.details ? view.result.details[s] : null;
    var coins = me ? view.me.coins : full ? counts(view.pouches[s]) : detail ? detail.coins_by_kind : null;
    var hand = el("div", "t-sd-hand");
    if (me) hand.setAttribute("data-zone", "hand");
    var purse = el("div", "cardrow t-sd-purse");
    if (coins) COINS.forEach(function (k) { if (coins[k]) purse.appendChild(tok(k, coins[k])); });
    else purse.appendChild(stat("coin", h.coins, h.coins + " coins (their kinds are hidden)", "coins"));
    if (coins && !h.coins) purse.appendChild(el("span", "muted", "no coins"));
    var money = me ? view.me.money : detail ? detail.money : null;
    if (money !== null && money !== undefined) add(purse, el("b", "t-sd-money", "money " + money));
    // Hazards drawn this hold-up lie in front of the seat, in sight of all (6d).
    if (h.hazards.shot || h.hazards.redcoat) purse.appendChild(el("span", "t-sd-w muted", "drawn"));
    if (h.hazards.shot) purse.appendChild(tok("shot", h.hazards.shot));
    if (h.hazards.redcoat) purse.appendChild(tok("redcoat", h.hazards.redcoat));
    hand.appendChild(purse);
    // Ability cards: one's own face up, the others' as backs (only their number is public).
    var held = me ? view.me.abilities : full ? view.hands[s] : null, cards = [];
    if (held) cards = held.map(abilityCard);
    else for (var i = 0; i < h.abilities; i++) cards.push(T.back("ability", {cls: "t-sd-mini", title: "an ability card, face down"}));
    if (cards.length) hand.appendChild(T.row(cards, "t-sd-cards"));
    // D7: the two candidates, seen only by the seat that picks (and the full view).
    var offer = me && view.decision && view.decision.id === "D7" ? view.decision.candidates
      : full && view.pending && view.pending.seats[0] === s ? view.candidates : null;
    if (offer && offer.length) hand.appendChild(add(el("div", "t-sd-offer"),
      el("div", "muted", "keeps one of"), T.row(offer.map(abilityCard))));
    box.appendChild(hand);
    if (h.used.length) box.appendChild(el("div", "t-sd-used muted", "used " + h.used.map(function (u) {
      return ((ABILITY[u.ability] || [0, 0, u.ability])[2]) + " (round " + u.round + ")";
    }).join(", ")));
    if (view.result) box.appendChild(el("div", "t-sd-rank", "rank " + view.result.ranks[s] +
                                         " · score " + view.result.scores[s]));
    return box;
  }

  T.register("stand-and-deliver", function draw(view, ctx) {
    var root = el("div", "gtable t-sd"), mine = null, seats = el("div", "seats t-sd-seats");
    (view.highwaymen || []).forEach(function (h) {
      var area = seatArea(view, ctx, h);
      if (h.seat === ctx.seat) mine = area; else seats.appendChild(area);
    });
    // A seat's page is laid out as it sits at the table: the others across, the road in
    // the middle, its own area nearest; the encounters after it, so that on a phone the
    // road and the hand come first (issue 19 §1).
    if (mine) add(root, seats, centre(view, ctx), mine, encounters(view));
    else add(root, centre(view, ctx), encounters(view), seats);
    return root;
  });
})();
