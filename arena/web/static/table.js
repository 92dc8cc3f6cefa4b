/* Arena's game tables (issue 19 §1): the drawing helpers every game's renderer shares, and
   the registry the replay viewer asks. A renderer (static/table-GAME.js) is a function
   draw(view, ctx) -> Element that draws one position as the players would see it.

   Every string drawn comes from a stored game, so from bots and uploaders: it is set as
   text (textContent, SVG text nodes), never parsed as markup. Cards carry their identity
   in data-card (face-down ones carry none, only data-back), so that the browser tests can
   compare the cards drawn with the engine's view; nothing drawn face down says what it is.
   Colours follow Okabe and Ito's palette (distinct under the common colour-blindnesses),
   and every colour is doubled by a letter, glyph or word, so colour is never the only cue. */
(function () {
  "use strict";
  var SVG_NS = "http://www.w3.org/2000/svg";
  var drawers = {};

  /** An HTML element with a class and text (as text: never markup). */
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }

  /** An SVG element with attributes (values set as attributes, never markup). */
  function svg(tag, attrs) {
    var e = document.createElementNS(SVG_NS, tag);
    Object.keys(attrs || {}).forEach(function (k) { e.setAttribute(k, String(attrs[k])); });
    return e;
  }

  /** Append children (elements, strings as text, null skipped) and return the parent. */
  function add(parent) {
    for (var i = 1; i < arguments.length; i++) {
      var c = arguments[i];
      if (c === null || c === undefined) continue;
      if (Array.isArray(c)) { c.forEach(function (x) { add(parent, x); }); continue; }
      parent.appendChild(typeof c === "object" ? c : document.createTextNode(String(c)));
    }
    return parent;
  }

  var GLYPHS = {
    // Simple 24x24 outlines: what an icon says is also said in the card's words.
    star: "M12 2l3 7h7l-5.5 4.5 2 7.5-6.5-4.5-6.5 4.5 2-7.5L2 9h7z",
    shield: "M12 2l8 3v6c0 5-3.5 9-8 11-4.5-2-8-6-8-11V5z",
    run: "M13 4a2 2 0 1 0 0.01 0M9 21l2-6 3 3v3M7 12l3-4 4 1 2 4 3 1M10 8l-2 7",
    coin: "M12 3a9 9 0 1 0 0.01 0M12 7v10M9 9.5h4.5a2 2 0 0 1 0 4H10a2 2 0 0 0 0 4h4.5",
    heart: "M12 21l-8-8a5 5 0 0 1 8-6 5 5 0 0 1 8 6z",
    skull: "M12 3a8 8 0 0 0-5 14v4h10v-4a8 8 0 0 0-5-14M9 11h.01M15 11h.01",
    mask: "M3 9c3-2 15-2 18 0-1 6-5 7-9 4-4 3-8 2-9-4M8 10h2M14 10h2",
    wheel: "M12 2a10 10 0 1 0 0.01 0M12 2v20M2 12h20M5 5l14 14M19 5L5 19",
    coach: "M3 8h14l3 5v3H3zM6 16a2 2 0 1 0 0.01 0M16 16a2 2 0 1 0 0.01 0",
    hand: "M7 11V5a1.5 1.5 0 0 1 3 0v5V3.5a1.5 1.5 0 0 1 3 0V10V5a1.5 1.5 0 0 1 3 0v8c0 5-3 8-7 8-3 0-5-2-6-5l-1.5-4a1.5 1.5 0 0 1 3-1z",
    stop: "M8 2h8l6 6v8l-6 6H8l-6-6V8zM7 12h10",
    go: "M5 12h13M13 6l6 6-6 6",
    eye: "M2 12c3-6 17-6 20 0-3 6-17 6-20 0M12 9a3 3 0 1 0 0.01 0"
  };

  /** A small SVG icon by name (GLYPHS); decorative, so hidden from screen readers. */
  function icon(name, cls) {
    var s = svg("svg", {viewBox: "0 0 24 24", "class": "icon" + (cls ? " " + cls : ""),
                        "aria-hidden": "true", focusable: "false"});
    s.appendChild(svg("path", {d: GLYPHS[name] || GLYPHS.star}));
    return s;
  }

  /** A card face up: data-card = its identity (the engine's id, e.g. "ROB10").
      o.rank (big corner value), o.label (the words under it, default the id),
      o.glyph (an icon name), o.hue (0-7: the palette colour of its kind),
      o.title (a tooltip), o.small, o.cls (more classes). */
  function card(id, o) {
    o = o || {};
    var c = el("span", "pc" + (o.hue !== undefined ? " h" + o.hue : "") +
                       (o.small ? " small" : "") + (o.cls ? " " + o.cls : ""));
    c.setAttribute("data-card", String(id));
    c.title = o.title || String(id);
    if (o.rank !== undefined && o.rank !== null) c.appendChild(el("b", "rank", o.rank));
    if (o.glyph) c.appendChild(icon(o.glyph));
    c.appendChild(el("span", "label", o.label !== undefined ? o.label : id));
    return c;
  }

  /** A card face down: no identity anywhere in it (data-back says only whose or what
      kind, e.g. "hand" or "coach"). */
  function back(kind, o) {
    o = o || {};
    var c = el("span", "pc back" + (o.small ? " small" : "") + (o.cls ? " " + o.cls : ""));
    c.setAttribute("data-back", kind || "");
    c.title = o.title || "face down";
    var s = svg("svg", {viewBox: "0 0 20 28", "class": "back-art", "aria-hidden": "true"});
    s.appendChild(svg("rect", {x: 2, y: 2, width: 16, height: 24, rx: 2}));
    s.appendChild(svg("path", {d: "M2 8l16 12M2 20L18 8M10 2v24"}));
    c.appendChild(s);
    if (o.label) c.appendChild(el("span", "label", o.label));
    return c;
  }

  /** A round token with a value (a number or short word); data-token = the value, or
      data-back with no value when it is face down (o.hidden). o.hue as for cards. */
  function token(value, o) {
    o = o || {};
    var t = el("span", "tok" + (o.hue !== undefined ? " h" + o.hue : "") +
                        (o.hidden ? " hidden-tok" : "") + (o.cls ? " " + o.cls : ""));
    if (o.hidden) { t.setAttribute("data-back", o.kind || "token"); t.textContent = "?"; }
    else { t.setAttribute("data-token", String(value)); t.textContent = String(value); }
    t.title = o.title || (o.hidden ? "face down" : String(value));
    return t;
  }

  /** A labelled area of the table (the draw pile, the trick, the bag...). */
  function zone(title, cls) {
    var z = el("section", "zone" + (cls ? " " + cls : ""));
    if (title) z.appendChild(el("h3", "zone-title", title));
    return z;
  }

  /** A seat's area: its colour (the palette, by seat), "seat N · bot", marked when it is
      the perspective's own seat (ctx.seat) or to act now (ctx.acting). */
  function seat(ctx, s, extra) {
    var me = ctx.seat === s;
    var box = el("section", "seat-area s" + (s % 8) + (me ? " me" : "") +
                            (ctx.acting && ctx.acting.indexOf(s) >= 0 ? " acting" : ""));
    box.setAttribute("data-seat", String(s));
    var head = el("h3", "seat-title");
    head.appendChild(el("span", "seat-dot", String(s)));
    head.appendChild(document.createTextNode(" " + ctx.name(s) + (me ? " · you" : "")));
    if (extra) head.appendChild(el("span", "muted", " " + extra));
    box.appendChild(head);
    return box;
  }

  /** A row of cards or tokens that wraps. */
  function row(items, cls) {
    var r = el("div", "cardrow" + (cls ? " " + cls : ""));
    if (!items.length) r.appendChild(el("span", "muted", "none"));
    items.forEach(function (x) { r.appendChild(x); });
    return r;
  }

  /** Register the renderer of a game (its name as Arena's games list it). */
  function register(game, draw) { drawers[game] = draw; }

  /** The renderer of a game, or null when this page has none (the viewer then shows
      the view's data as it is). */
  function get(game) { return Object.prototype.hasOwnProperty.call(drawers, game) ? drawers[game] : null; }

  window.ArenaTable = {el: el, svg: svg, add: add, icon: icon, card: card, back: back,
                       token: token, zone: zone, seat: seat, row: row,
                       register: register, get: get};
})();
