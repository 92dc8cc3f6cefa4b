"""The stop-me table in the replay viewer (issue 19 §1): arena/web/static/table-stop-me.js.

Real games (tests/table_helpers.py: the example bot against random bots, four seats;
and a three-seat tournament of bots with hostile names and the built-in heuristic, in
which the 1 beats the 10) are served by the real web server and walked in headless
Chromium, position by position, in the full view and in every seat's view: the cards
drawn face up are exactly the ones the engine's view holds (``cards`` below, computed
from the engine, not from the page), and a seat's page names no card hidden from it.

The screenshots go to test-artifacts/web/tables/; with ARENA_DOCS_SCREENSHOTS=DIR the
full view's table is also written to DIR/table-stop-me.png (docs/web/ for the docs).
"""

from __future__ import annotations

import json
import os
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

from .browser_helpers import HAVE_BROWSER, chromium, serving, viewport
from .table_helpers import (
    ARTIFACTS,
    browser_errors,
    check_golden,
    check_replay,
    css_selectors,
    positions,
    table_db,
)

ROOT = Path(__file__).parent.parent
STATIC = ROOT / "arena" / "web" / "static"
browser_test = pytest.mark.skipif(not HAVE_BROWSER and not os.environ.get("CI"),
                                  reason="chromium and chromium-driver are not installed")
EVIL = ["<img src=x onerror=alert(1)>", '"><script>alert(2)&']
"""Bot names as an uploader may choose them (a bot name cannot hold "/")."""
HUES = {"gangster": "h0", "GO": "h2", "STOP": "h5"}
"""The palette hue of each kind of card (one hue a kind, never shared)."""


def cards(view: Mapping[str, Any]) -> list[str]:
    """Every card face up in a stop-me view, as ids: ``G7`` the gangster 7, ``s2-GO`` and
    ``s2-STOP`` seat 2's action cards (docs/games/stop-me.md §4, the table's rule):

    - the gangsters on the table and in the discard (face up, R2, A3);
    - the action cards this perspective knows: a seat's own hand and its own card on
      each gangster (``mine``); every hand and every laid card in the full view;
    - the cards turned face up (A16): during a round the last reveal; at a round's start
      and at the end, the round before from its last arrest on (R4, R5);
    - the gangsters each seat captured, round by round (R5)."""
    seat = view.get("seat")
    out: list[str] = []

    def actions(p: int, card: str | None, count: int = 1) -> None:
        if card is not None:
            out.extend([f"s{p}-{card}"] * count)

    if "result" not in view:
        for g in view["table"]:
            out.append(f"G{g['gangster']}")
            laid = enumerate(g["cards"]) if seat is None else [(seat, g["mine"])]
            for p, card in laid:
                actions(p, card)
        out += [f"G{v}" for v in view["discard"]]
        hands = enumerate(view["hands"]) if seat is None else [(seat, view["hand"])]
        for p, hand in hands:
            actions(p, "GO", hand["GO"])
            actions(p, "STOP", hand["STOP"])
    if view.get("reveals") and "result" not in view:
        shown = view["reveals"][-1:]
    elif view["history"]:
        last = view["history"][-1]["reveals"]
        arrests = [i for i, r in enumerate(last) if r["phase"] == "arrest"]
        shown = last[arrests[-1] if arrests else 0:]
    else:
        shown = []
    for r in shown:
        out.append(f"G{r['gangster']}")
        for p, card in enumerate(r["cards"]):
            actions(p, card)
    for h in view["history"]:
        out += [f"G{v}" for v in h["captured"] if v is not None]
    return out


def _play(store: Store, name: str, bots: list[str], seats: int, seed: int) -> None:
    tournament.create(store, name=name, game="stop-me", bots=bots, seats=seats,
                      games_per_seating=1, duplicate=False, fmt="round-robin", seed=seed,
                      options={}, settings=tournament.Settings())
    tournament.run(store, name, ProcessExecutor(2))


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """table_db's four-seat stop-me tournament, and one of two random bots with hostile
    names against the built-in heuristic (seed 6: in its first game the 1 beats the 10)."""
    tmp = tmp_path_factory.mktemp("table-stop-me")
    path = table_db(tmp, "stop-me", seats=4)
    store = Store(path)
    for i, name in enumerate(EVIL):  # two random bots that do not play alike
        bot = tmp / f"evil{i}.py"
        bot.write_text((ROOT / "bots" / "random_bot.py").read_text()
                       .replace('"ARENA_BOT_SEED", "1"', f'"ARENA_BOT_SEED", "{i + 7}"'))
        botstore.add_bot(store, name, str(bot))
    _play(store, "hostile", [*EVIL, "builtin:heuristic"], 3, seed=6)
    store.close()
    return path


def games(db: Path, tournament_name: str) -> list[int]:
    """The ids of a tournament's games, in the order of its schedule (an id is given when
    a game ends, and two run at once)."""
    with closing(sqlite3.connect(db)) as con:
        return [r[0] for r in con.execute(
            "SELECT g.id FROM games g JOIN tournaments t ON t.id = g.tournament_id "
            "WHERE t.name = ? ORDER BY g.idx", (tournament_name,))]


def beats(db: Path) -> tuple[int, int]:
    """A game in which the 1 beat the 10 (R6), and the first position after that round."""
    for gid in games(db, "hostile"):
        for pos in positions(db, gid, None):
            history = pos.view["history"]
            if history and not pos.view.get("reveals"):
                h = history[-1]
                won = h["winner"] is not None and h["captured"][h["winner"]] == 1
                if won and 10 in h["captured"]:
                    return gid, pos.index
    raise AssertionError("no stored game in which the 1 beats the 10")


@pytest.fixture(scope="module")
def base(db: Path) -> Iterator[str]:
    """The real web server over the module's database, on a free loopback port."""
    yield from serving(db)


@pytest.fixture(scope="module")
def driver() -> Iterator[Any]:
    """One headless Chromium for the module, at a desktop size."""
    if not HAVE_BROWSER and not os.environ.get("CI"):
        pytest.skip("chromium and chromium-driver are not installed")
    with chromium() as browser:
        viewport(browser, 1100, 900)
        yield browser


def busy(db: Path, gid: int) -> int:
    """A mid-game position with much on the table: a full row of gangsters, a discard,
    a reveal, tokens won, and seat 0 holding both kinds of card. (Every seat acts at
    every step, so a seat's page shows every position and this index is its #step= too.)"""
    def load(view: Mapping[str, Any]) -> int:
        if "result" in view:
            return -1
        both = view["hand"]["GO"] > 0 and view["hand"]["STOP"] > 0
        return (len(view["table"]) + len(view["discard"]) + 2 * bool(view["reveals"])
                + sum(view["tokens"]) + len(view["history"]) + 100 * both)
    return max(positions(db, gid, 0), key=lambda p: load(p.view)).index


def open_at(driver: Any, url: str) -> None:
    """Open a replay page (the table drawn at once) with no browser error."""
    driver.get(url)
    assert not browser_errors(driver), browser_errors(driver)


# ------------------------------------------------------------------- pure tests
def test_cards_of_a_seat_are_cards_of_the_full_view() -> None:
    """The oracle itself: at the setup a seat sees the gangster and its own hand only;
    all along, what a seat sees face up is face up in the full view too; at the end
    everything drawn is public."""
    game = new_game("stop-me", 3, 1)
    first = game.view(1)["current"]
    assert sorted(cards(game.view(1))) == [f"G{first}", *["s1-GO"] * 4, "s1-STOP"]
    step = 0
    while game.to_act():
        full = Counter(cards(game.full_view()))
        for seat in range(3):
            mine = Counter(cards(game.view(seat)))
            assert mine <= full, (step, seat)
        game.apply({s: ("STOP" if (step + s) % 3 == 0 and "STOP" in game.legal_actions(s)
                        else "GO") for s in range(3)})
        step += 1
    assert step > 4 and "result" in game.full_view()
    assert cards(game.view(0)) == cards(game.full_view())  # everything is public at the end


def test_the_renderer_sets_text_and_no_inline_style() -> None:
    """No markup from a string, no style attribute (the CSP is style-src 'self')."""
    source = (STATIC / "table-stop-me.js").read_text()
    for bad in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write",
                'setAttribute("style"', ".style."):
        assert bad not in source, bad
    assert len(source.splitlines()) <= 300


def test_its_css_is_one_block_at_the_end_every_selector_its_own() -> None:
    """The block starts with its comment and ends at the next game's block (or the end
    of the file): every selector in it starts with .t-sm, so the blocks merge cleanly."""
    selectors = css_selectors("stop-me")
    assert selectors and all(s.startswith(".t-sm ") for s in selectors), selectors


# ----------------------------------------------------------------- in a browser
@browser_test
def test_every_position_of_every_perspective(driver: Any, base: str, db: Path) -> None:
    """A four-seat game, then the game in which the 1 beats the 10: the full view and
    every seat's view, every position."""
    gid = games(db, "stop-me-table")[0]
    checked = check_replay(driver, base, db, gid, None, cards, shot="stop-me-full")
    for seat in range(4):
        checked += check_replay(driver, base, db, gid, seat, cards, shot=f"stop-me-seat{seat}")
    won, _ = beats(db)
    perspectives: list[int | None] = [None, 0, 1, 2]
    for perspective in perspectives:
        checked += check_replay(driver, base, db, won, perspective, cards)
    assert checked > 100


@browser_test
def test_the_full_view_shows_every_hand_and_laid_card(driver: Any, base: str, db: Path) -> None:
    gid = games(db, "stop-me-table")[0]
    step = busy(db, gid)
    open_at(driver, f"{base}replay/{gid}.html#step={step}")
    table = driver.find_element("id", "table")
    assert not table.find_elements("css selector", "[data-back=action], [data-back=hand]")
    assert len(table.find_elements("css selector", "[data-zone=centre]")) == 1
    viewport(driver, 1100, 1600)  # the whole table on the screen, for its picture
    try:
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        table.screenshot(str(ARTIFACTS / "stop-me-desktop.png"))
        docs = os.environ.get("ARENA_DOCS_SCREENSHOTS")
        if docs:
            Path(docs).mkdir(parents=True, exist_ok=True)
            table.screenshot(str(Path(docs) / "table-stop-me.png"))
    finally:
        viewport(driver, 1100, 900)


@browser_test
def test_the_table_and_ones_hand_fit_a_phone(driver: Any, base: str, db: Path) -> None:
    """At 390 x 844, on every seat's page, the centre of the table and one's own hand are
    on the first screen: mid-round with the table full, and at a round's start with the
    end of the round before (its reveals come after one's hand there)."""
    gid = games(db, "stop-me-table")[0]
    won, start = beats(db)
    viewport(driver, 390, 844)
    try:
        for game, step, seats in ((gid, busy(db, gid), 4), (won, start, 3)):
            for seat in range(seats):
                open_at(driver, f"{base}replay/{game}-seat{seat}.html#step={step}")
                boxes = driver.execute_script(
                    "return ['centre', 'hand'].map(z => document.querySelector("
                    "'#table [data-zone=' + z + ']').getBoundingClientRect().bottom)")
                assert all(0 < bottom <= 844 for bottom in boxes), (game, seat, boxes)
                wide = driver.execute_script(
                    "return document.documentElement.scrollWidth - window.innerWidth")
                assert wide <= 1, (game, seat, wide)
                if seat == 0:
                    ARTIFACTS.mkdir(parents=True, exist_ok=True)
                    driver.save_screenshot(str(ARTIFACTS / f"stop-me-phone-{game}.png"))
    finally:
        viewport(driver, 1100, 900)


@browser_test
def test_hostile_bot_names_are_text(driver: Any, base: str, db: Path) -> None:
    gid = games(db, "hostile")[0]
    for page in (f"{gid}.html", f"{gid}-seat2.html"):
        open_at(driver, f"{base}replay/{page}#step=3")
        table = driver.find_element("id", "table")
        assert not table.find_elements("css selector", "img, script, iframe, [onerror]")
        for name in EVIL:
            assert name in table.text, (page, name)


@browser_test
def test_kinds_of_card_have_their_own_hues(driver: Any, base: str, db: Path) -> None:
    """Gangsters, GO and STOP cards each carry one palette hue, a different one a kind,
    doubled by their words; laid cards also carry their seat's colour and number."""
    gid = games(db, "stop-me-table")[0]
    open_at(driver, f"{base}replay/{gid}.html#step={busy(db, gid)}")
    seen = driver.execute_script(
        "return [...document.querySelectorAll('#table [data-card]')].map(e => "
        "[e.dataset.card, [...e.classList].filter(c => /^h[0-7]$/.test(c)), e.textContent])")
    by_kind: dict[str, set[str]] = {}
    for card, hues, text in seen:
        kind = "gangster" if card.startswith("G") else card.split("-")[1]
        assert len(hues) == 1, (card, hues)
        by_kind.setdefault(kind, set()).update(hues)
        if kind == "gangster":
            assert text.startswith(card[1:]), (card, text)  # its number
    assert by_kind == {k: {h} for k, h in HUES.items()}, by_kind
    # Action cards in a hand say their word; those laid on a gangster their seat's number.
    words = {t for c, _, t in seen if not c.startswith("G")}
    assert {"GO", "STOP"} <= words and words & {"0", "1", "2", "3"}


@browser_test
def test_the_round_winner_and_the_1_beating_the_10(driver: Any, base: str, db: Path) -> None:
    gid, step = beats(db)
    open_at(driver, f"{base}replay/{gid}.html#step={step}")
    text = driver.find_element("id", "table").text
    with closing(sqlite3.connect(db)) as con:
        seats = dict(con.execute("SELECT s.seat, b.name || '@' || b.version FROM seats s "
                                 "JOIN bots b ON b.id = s.bot_id WHERE s.game_id = ?",
                                 (gid,)).fetchall())
    view = positions(db, gid, None)[step].view
    winner = view["history"][-1]["winner"]
    assert f"seat {winner} ({seats[winner]}) wins a token with the 1" in text, text
    assert "The 1 beats the 10" in text
    assert json.dumps(view["history"][-1]["round"]) in text
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    driver.find_element("id", "view-card").screenshot(str(ARTIFACTS / "stop-me-beats.png"))


@browser_test
def test_the_golden_game_every_step_every_perspective(driver: Any, tmp_path: Path) -> None:
    """Issue 19 §5: the golden game (tests/golden, the reviewed playthrough), every step,
    in the full view and in every seat's view, drawn as the engine's views say."""
    check_golden(driver, tmp_path, "stop-me", cards)
