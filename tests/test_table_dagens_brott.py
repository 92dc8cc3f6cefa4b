"""The dagens-brott table in the replay viewer (issue 19 §1): static/table-dagens-brott.js
in headless Chromium, over games played for real (tests/table_helpers.py).

- Every position of a stored 4-seat game, in the full view and in every seat's view:
  no script error, no fallback to the raw data, the cards drawn face up are exactly the
  view's (``cards`` below, read from the engine's view, not from the page), and a
  seat's page names no card hidden from it.
- On a phone (390 x 844) the middle of the table and the seat's own hand are on the
  first screen, at a busy position.
- Bot names that are markup are shown as text and run nothing.
- Every kind of card (each criminal, the joker, police, escape) has its own palette hue.

Screenshots go to test-artifacts/web/tables/; with ARENA_DOCS_SCREENSHOTS=DIR the table
of the full view is also written to DIR/table-dagens-brott.png (docs/web/ for the docs).
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
from collections import Counter
from collections.abc import Iterator, Mapping
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from arena import botstore, tournament
from arena.executors import ProcessExecutor
from leaderboard.store import Store
from referee.games import new_game

from .browser_helpers import HAVE_BROWSER, browser_errors, chromium, serving, viewport
from .table_helpers import (
    ARTIFACTS,
    ROOT,
    check_golden,
    check_replay,
    css_selectors,
    hidden_cards,
    positions,
    table_db,
    walk,
)

STATIC = ROOT / "arena" / "web" / "static"
GAME = "dagens-brott"
EVIL = ["<img src=x onerror=alert(1)>", '"><svg onload=alert(2)><script>alert(3)<\\script>']
"""Bot names that are markup (a bot's name may hold no "/")."""
browser_test = pytest.mark.skipif(not HAVE_BROWSER and not os.environ.get("CI"),
                                  reason="chromium and chromium-driver are not installed")


def cards(view: Mapping[str, Any]) -> list[str]:
    """The cards face up in a dagens-brott view (RULES.md §3.7), by id: the crime of the
    day and the crimes won this round (as ``crime:ID``: crime ids are another pile's,
    docs/games/dagens-brott.md §1), the trick's cards, the police laid at its end, and
    the hands the view holds (its own; every hand in the full view). Nothing after the
    end: the view then holds only the score pad and the result."""
    if "result" in view:
        return []
    out = [] if view["crime"] is None else [f"crime:{view['crime']['id']}"]
    out += [f"crime:{c['id']}" for won in view["crimes_won"] for c in won]
    out += [f"crime:{c['id']}" for c in view["crimes_set_aside"]]
    out += [t["card"] for t in view["trick"]]
    out += ["POLICE"] * len(view["police"])
    out += list(view["hand"]) if "hand" in view else [c for h in view["hands"] for c in h]
    return out


def strings(value: Any) -> Iterator[str]:
    """Every string inside a JSON value."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from strings(v)
    elif isinstance(value, list | tuple):
        for v in value:
            yield from strings(v)


def told(db: Path, game_id: int, seat: int) -> list[frozenset[str]]:
    """For each position of the game, every string the events a seat saw so far held:
    the cards laid in past rounds, its own past hands, the crime ids (which are also
    deck cards' ids: crime PICK4 and card PICK4)."""
    with closing(sqlite3.connect(db)) as con:
        seed, game, options, moves = con.execute(
            "SELECT g.seed, g.game, t.options, g.moves FROM games g JOIN tournaments t "
            "ON t.id = g.tournament_id WHERE g.id = ?", (game_id,)).fetchone()
        players = con.execute("SELECT COUNT(*) FROM seats WHERE game_id = ?",
                              (game_id,)).fetchone()[0]
    engine = new_game(game, players, seed, json.loads(options))
    known: set[str] = set()

    def keep() -> frozenset[str]:
        for event in engine.log[len(seen_events):]:
            seen_events.append(event)
            if event.visible_to(seat):
                known.update(strings(dict(event.data)))
        return frozenset(known)

    seen_events: list[Any] = []
    out = [keep()]
    for move in json.loads(moves):
        engine.apply({int(s): m["action"] for s, m in move.items()})
        out.append(keep())
    return out


def check_seat(driver: Any, base: str, db: Path, game_id: int, seat: int,
               shot: str | None = None, shot_at: int = 3) -> int:
    """tests/table_helpers.py's check_replay for a seat's page, with one difference: a
    card hidden from the seat now that its events named before (a card laid in a past
    round, now in another hand; a deck card with a crime's id) may be named by the
    play-by-play, which tells the game's history, but never by the table. Any other
    hidden card may be named nowhere on the page. (check_replay looks for every hidden
    card in the whole page, so the history of past rounds fails it.)"""
    shown, history = positions(db, game_id, seat), told(db, game_id, seat)
    page = f"{base}replay/{game_id}-seat{seat}.html"
    checked = 0
    for pos, state in zip(shown, walk(driver, page, len(shown)), strict=True):
        assert Counter(state["cards"]) == Counter(cards(pos.view)), (
            f"position {pos.index}: drawn {sorted(state['cards'])}, "
            f"the view has {sorted(cards(pos.view))}")
        for card in hidden_cards(pos, cards):
            text = state["text"] if card in history[pos.index] else state["page"]
            assert not re.search(rf"(?<![\w]){re.escape(card)}(?![\w])", text), (
                f"seat {seat}'s page names {card!r} at position {pos.index}, hidden from it")
        if shot and checked == shot_at:
            driver.save_screenshot(str(ARTIFACTS / f"{shot}.png"))
        checked += 1
    return checked


# ------------------------------------------------------------------ fixtures
@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One 4-seat tournament (tests/table_helpers.py), then a 3-seat game of bots whose
    names are markup, in the same database."""
    path = table_db(tmp_path_factory.mktemp("table-db"), GAME, seats=4)
    store = Store(path)
    for name in EVIL:
        botstore.add_bot(store, name, str(ROOT / "bots" / "random_bot.py"))
    tournament.create(store, name="hostile", game=GAME, bots=["smart", *EVIL], seats=3,
                      games_per_seating=1, duplicate=False, fmt="round-robin", seed=7,
                      options={"rounds": 1}, settings=tournament.Settings())
    tournament.run(store, "hostile", ProcessExecutor(2))
    store.close()
    return path


@pytest.fixture(scope="module")
def base(db: Path) -> Iterator[str]:
    """The site's server over the database (as tests/test_web.py serves it)."""
    yield from serving(db)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """One headless Chromium for the module, at a desktop size."""
    if not HAVE_BROWSER and not os.environ.get("CI"):
        pytest.skip("chromium and chromium-driver are not installed")
    with chromium() as driver:
        viewport(driver, 1000, 800)
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        yield driver


def game_ids(db: Path, tournament_name: str) -> list[int]:
    """The games of a tournament, by id."""
    with closing(sqlite3.connect(db)) as con:
        return [r[0] for r in con.execute(
            "SELECT g.id FROM games g JOIN tournaments t ON t.id = g.tournament_id "
            "WHERE t.name = ? ORDER BY g.id", (tournament_name,))]


def busy(db: Path, game_id: int, seat: int | None) -> int:
    """The index, among a perspective's positions, of the first escape window after a
    trick of at least four cards (police laid: everything on the table at once)."""
    shown = positions(db, game_id, seat)
    for k, pos in enumerate(shown):
        if pos.full.get("phase") == "escape" and len(pos.full.get("trick", [])) >= 4:
            return k
    return len(shown) // 2


# -------------------------------------------------------------------- no browser
def test_the_renderer_sets_text_and_classes_only() -> None:
    """Markup and inline style never enter the renderer (the CSP is style-src 'self');
    its CSS is one block of arena.css, each selector under .t-db."""
    js = (STATIC / "table-dagens-brott.js").read_text()
    for banned in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write",
                   'setAttribute("style"', "style=", ".style."):
        assert banned not in js, banned
    assert 'T.register("dagens-brott"' in js
    selectors = css_selectors("dagens-brott")
    assert selectors and all(s.startswith(".t-db") for s in selectors if s), selectors


def test_cards_read_from_the_engine_hide_what_a_seat_may_not_see(db: Path) -> None:
    """The test's own ``cards``: a seat's view holds its own hand only, the full view
    every hand; each position's cards account for every hand card the view counts."""
    game = game_ids(db, f"{GAME}-table")[0]
    full = positions(db, game, None)
    for pos in full[:120]:
        if "result" in pos.view:
            continue
        hands = sum(pos.view["hand_sizes"])
        laid = len(pos.view["trick"]) + len(pos.view["police"])
        crimes = sum(c.startswith("crime:") for c in cards(pos.view))
        assert len(cards(pos.view)) == hands + laid + crimes
    for pos in positions(db, game, 1)[:40]:
        if "result" not in pos.view:
            assert set(cards(pos.view)) - set(cards(pos.full)) == set()
            assert len(pos.view["hand"]) == pos.view["hand_sizes"][1]


# ------------------------------------------------------------------- in a browser
@browser_test
def test_every_position_of_every_perspective(browser: Any, base: str, db: Path) -> None:
    game = game_ids(db, f"{GAME}-table")[0]
    at = busy(db, game, None)
    checked = check_replay(browser, base, db, game, None, cards, shot="dagens-brott-full",
                           shot_at=at)
    assert checked == len(positions(db, game, None)) > 400
    viewport(browser, 1000, 1400)  # the whole table at a desktop width, for the docs
    try:
        browser.get(f"{base}replay/{game}.html#step={at}")
        picture = browser.find_element("id", "table").screenshot_as_png
    finally:
        viewport(browser, 1000, 800)
    docs = os.environ.get("ARENA_DOCS_SCREENSHOTS")
    for folder in [ARTIFACTS, *([Path(docs)] if docs else [])]:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "table-dagens-brott.png").write_bytes(picture)
    for seat in range(4):
        assert check_seat(browser, base, db, game, seat, shot=f"dagens-brott-seat{seat}",
                          shot_at=busy(db, game, seat)) > 50


@browser_test
def test_the_middle_and_ones_hand_fit_a_phone(browser: Any, base: str, db: Path) -> None:
    game = game_ids(db, f"{GAME}-table")[0]
    viewport(browser, 390, 844)
    try:
        for seat in (0, 2):
            browser.get(f"{base}replay/{game}-seat{seat}.html#step={busy(db, game, seat)}")
            assert not browser_errors(browser)
            boxes = browser.execute_script(
                "return ['centre', 'hand'].map(z => {"
                " const e = document.querySelector('#table [data-zone=' + z + ']');"
                " return e && e.getBoundingClientRect().bottom; })"
                ".concat([document.documentElement.scrollWidth - window.innerWidth])")
            centre, hand, wide = boxes
            assert centre is not None and hand is not None, boxes
            assert max(centre, hand) <= 844 and wide <= 1, boxes
            browser.save_screenshot(str(ARTIFACTS / f"dagens-brott-phone-seat{seat}.png"))
        browser.get(f"{base}replay/{game}.html#step={busy(db, game, None)}")
        assert not browser_errors(browser)
        browser.save_screenshot(str(ARTIFACTS / "dagens-brott-phone-full.png"))
    finally:
        viewport(browser, 1000, 800)


@browser_test
def test_bot_names_that_are_markup_stay_text(browser: Any, base: str, db: Path) -> None:
    from selenium.common.exceptions import NoAlertPresentException

    game = game_ids(db, "hostile")[0]
    for seat in (None, 1, 2):
        count = (check_replay(browser, base, db, game, None, cards) if seat is None
                 else check_seat(browser, base, db, game, seat))
        browser.get(f"{base}replay/{game}{'' if seat is None else f'-seat{seat}'}.html"
                    f"#step={count // 2}")
        with pytest.raises(NoAlertPresentException):
            browser.switch_to.alert  # noqa: B018 - no alert() ran
        table = browser.find_element("id", "table")
        assert table.find_elements("css selector", "img, script, iframe, [onload], [onerror]") == []
        text = table.text
        assert all(name in text for name in EVIL), text
        assert not browser_errors(browser)


@browser_test
def test_every_kind_of_card_has_its_own_hue(browser: Any, base: str, db: Path) -> None:
    """In the full view every hand is face up: over a few positions every criminal, the
    joker, police and escape are drawn, each kind in one hue of its own (doubled by its
    glyph and word, RULES.md §3.3), and crime cards in their criminal's hue."""
    game = game_ids(db, f"{GAME}-table")[0]
    hues: dict[str, set[str]] = {}
    for step in (1, 40, 120):
        # A new load each time: a change of the fragment alone re-renders on a
        # hashchange event, which may come after the script below has read the table.
        browser.get("about:blank")
        browser.get(f"{base}replay/{game}.html#step={step}")
        for card, classes in browser.execute_script(
                "return [...document.querySelectorAll('#table [data-card]')]"
                ".map(e => [e.dataset.card, e.className])"):
            kind = re.sub(r"\d+$", "", card.removeprefix("crime:"))
            found = {c for c in classes.split() if re.fullmatch(r"h[0-7]", c)}
            assert len(found) == 1, (card, classes)
            hues.setdefault(kind, set()).update(found)
    kinds = {"PICK", "BURG", "CON", "SMUG", "ROB", "JOKER", "POLICE", "ESCAPE"}
    assert kinds <= set(hues), hues
    assert all(len(h) == 1 for h in hues.values()), hues
    assert len({h for k in kinds for h in hues[k]}) == len(kinds), hues


@browser_test
def test_the_golden_game_every_step_every_perspective(browser: Any, tmp_path: Path) -> None:
    """Issue 19 §5: the golden game (tests/golden, the reviewed playthrough), every step,
    in the full view and in every seat's view, drawn as the engine's views say."""
    check_golden(browser, tmp_path, "dagens-brott", cards, check_seat)
