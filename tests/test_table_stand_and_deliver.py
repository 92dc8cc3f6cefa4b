"""The table of Stand & Deliver in the replay viewer (issue 19 §1): the renderer
``arena/web/static/table-stand-and-deliver.js`` in headless Chromium, over real games.

Every position of a stored game, in the full view and in each seat's view, goes through
the shared harness (tests/table_helpers.py): no script error, no fall back to the raw data,
the cards drawn face up exactly those the engine's view holds (:func:`cards`, read from
the engine's view here, not from the page), and no seat's page naming a card it may not
see. Then: the road and one's own hand on a phone's first screen, bot names holding markup
shown as text, and a colour of the palette for each kind of card, coin and seat.

Screenshots go to test-artifacts/web/tables/; with ARENA_DOCS_SCREENSHOTS=DIR the table of
the full view is also written to DIR (docs/web/table-stand-and-deliver.png).
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import closing
from pathlib import Path
from typing import Any, TypeVar

import pytest

from arena import botstore, tournament
from arena.executors import ProcessExecutor
from arena.web import make_server
from arena.web.templating import STATIC_FILES, replay_scripts
from leaderboard.store import Store
from referee.games import new_game

from .browser_helpers import HAVE_BROWSER, browser_errors, chromium
from .table_helpers import (
    ARTIFACTS,
    ROOT,
    Position,
    check_golden,
    check_replay,
    css_selectors,
    positions,
    table_db,
)

GAME = "stand-and-deliver"
SEATS = 4
SCRIPT = ROOT / "arena" / "web" / "static" / f"table-{GAME}.js"
CSS = ROOT / "arena" / "web" / "static" / "arena.css"
CSS_BLOCK = "/* The stand-and-deliver table (issue 19 §1). */"
EVIL = ["<img src=x onerror=alert(1)>", '"><svg onload=alert(2)><b>bold']
COACH_KINDS = ["traveller", "merchant", "gentleman", "noble", "mail", "bullion", "trap"]
ABILITY_KINDS = ["spyglass", "surgeon", "fast_horse", "inside_man", "lucky_charm", "bribe_judge"]

needs_browser = pytest.mark.skipif(not HAVE_BROWSER and not os.environ.get("CI"),
                                   reason="chromium and chromium-driver are not installed")
Test = TypeVar("Test", bound=Callable[..., None])


def browser_test(test: Test) -> Test:
    """A test in headless Chromium: marked browser and slow, skipped only where chromium
    is missing and CI is unset (the module's first tests need no browser)."""
    return pytest.mark.slow(pytest.mark.browser(needs_browser(test)))


def cards(view: Mapping[str, Any]) -> list[str]:
    """The cards face up in an engine view (RULES.md 4.9), as the renderer names them.

    Coaches (``coachK:KIND``): those revealed; in the full view every coach on the road
    (its ``table`` holds the face-down ones); in a seat's view also those it looked at with
    its spyglass. Ability cards (``ability:KIND``): the seat's own hand, or every hand in
    the full view, and the two cards of a pending D7 for the seat that picks (and in the
    full view)."""
    full = "table" in view
    peeked = {p["coach"]: p["card"]["kind"] for p in view["me"]["peeks"]} if not full else {}
    found = []
    for coach in view["coaches"]:
        k = coach["position"]
        kind = (coach["card"]["kind"] if coach["card"] else
                view["table"][k - 1]["kind"] if full else peeked.get(k))
        if kind:
            found.append(f"coach{k}:{kind}")
    hands = view["hands"] if full else [view["me"]["abilities"]]
    offer = (view["candidates"] if full else
             (view["decision"] or {}).get("candidates", []) if (view["decision"] or {}).get(
                 "id") == "D7" else [])
    return found + [f"ability:{kind}" for hand in hands for kind in hand] + [
        f"ability:{kind}" for kind in offer]


def busy(position: Position) -> int:
    """How much a position has on the table: coaches, those revealed, encounter steps and
    the hazards drawn (the phone check and the docs' picture take the busiest)."""
    view = position.full
    return (len(view["coaches"]) + 2 * sum(c["card"] is not None for c in view["coaches"])
            + sum(len(e["steps"]) + 1 for e in view["encounters"])
            + sum(sum(h["hazards"].values()) for h in view["highwaymen"]))


def longest_game(db: Path) -> int:
    """The stored game with the most steps."""
    with closing(sqlite3.connect(db)) as con:
        rows = con.execute("SELECT id, moves FROM games").fetchall()
    return max(rows, key=lambda row: len(json.loads(row[1])))[0]


def serve(db: Path) -> Iterator[str]:
    """Arena's web server over ``db`` on 127.0.0.1 (any free port), as tests/test_web.py
    and tests/test_ladder_web.py serve theirs: its URL, then its shutdown."""
    server = make_server(db, "127.0.0.1", 0, 2.0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


def shot(driver: Any, name: str, element: str | None = None) -> None:
    """A screenshot (of the whole window, or of one element by id) into
    test-artifacts/web/tables/, and into ARENA_DOCS_SCREENSHOTS if that is set."""
    for folder in (str(ARTIFACTS), os.environ.get("ARENA_DOCS_SCREENSHOTS")):
        if folder:
            Path(folder).mkdir(parents=True, exist_ok=True)
            target = str(Path(folder) / f"{name}.png")
            if element:
                driver.find_element("id", element).screenshot(target)
            else:
                driver.save_screenshot(target)


# ------------------------------------------------------------------ fast, no browser
def test_the_renderer_is_served_on_its_games_pages_only() -> None:
    assert SCRIPT.name in STATIC_FILES
    assert replay_scripts(GAME) == ["table.js", SCRIPT.name, "replay.js"]
    assert SCRIPT.name not in replay_scripts("stop-me")


def test_the_renderer_sets_text_and_classes_never_markup_or_style() -> None:
    """Strings reach the page as text (textContent, via table.js), styles as classes of
    arena.css: the CSP allows no inline style, and names come from uploaders."""
    source = SCRIPT.read_text(encoding="utf-8")
    for banned in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write",
                   'setAttribute("style"', "style=", "eval(", "http:", "https:"):
        assert banned not in source, banned
    assert 'T.register("stand-and-deliver"' in source
    assert len(source.splitlines()) <= 300


def test_its_css_is_one_block_with_its_own_prefix() -> None:
    """One block in arena.css, every selector under .t-sd: merging the other games'
    blocks stays trivial."""
    selectors = css_selectors("stand-and-deliver")
    assert selectors and all(s.startswith(".t-sd ") for s in selectors), selectors


def test_cards_follow_what_each_view_holds() -> None:
    """:func:`cards` itself: a seat sees its own hand and no other; the full view every
    coach on the road and every hand; a seat sees a subset of the full view's cards."""
    game = new_game(GAME, 3, 7, {})
    for _ in range(40):
        if game.over:
            break
        full = cards(game.full_view())
        assert sum(c.startswith("coach") for c in full) == len(game.full_view()["coaches"])
        for seat in range(3):
            mine = cards(game.view(seat))
            assert all(full.count(c) >= mine.count(c) for c in mine), (mine, full)
            held = [f"ability:{k}" for k in game.full_view()["hands"][seat]]
            assert [c for c in mine if c.startswith("ability:")][:len(held)] == held
        game.apply({s: game.legal_actions(s)[0] for s in game.to_act()})


# ------------------------------------------------------------------ in the browser
@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished tournament: the example bot against random bots, four seats."""
    return table_db(tmp_path_factory.mktemp("sad-table"), GAME, seats=SEATS)


@pytest.fixture(scope="module")
def base(db: Path) -> Iterator[str]:
    yield from serve(db)


@pytest.fixture(scope="module")
def driver() -> Iterator[Any]:
    """One headless Chromium for the module."""
    with chromium("--window-size=1100,900") as browser:
        yield browser


@browser_test
def test_every_position_of_every_perspective(driver: Any, base: str, db: Path) -> None:
    """The harness over the longest stored game: the full view and each seat's view."""
    driver.set_window_size(1100, 900)
    gid = longest_game(db)
    checked = check_replay(driver, base, db, gid, None, cards, shot=f"{GAME}-full")
    assert checked == len(positions(db, gid, None)) > 10
    for seat in range(SEATS):
        assert check_replay(driver, base, db, gid, seat, cards, shot=f"{GAME}-seat{seat}") > 1
    # The docs' picture: the table of the full view at its busiest position.
    shown = positions(db, gid, None)
    step = max(range(len(shown)), key=lambda i: busy(shown[i]))
    driver.set_window_size(1100, 1700)  # the whole table in sight: an element's
    try:                                 # screenshot is cut at the window's edge
        driver.get(f"{base}replay/{gid}.html#step={step}")
        driver.refresh()
        assert not browser_errors(driver)
        shot(driver, f"table-{GAME}", element="view-card")
    finally:
        driver.set_window_size(1100, 900)


@browser_test
def test_the_road_and_ones_hand_fit_a_phones_first_screen(driver: Any, base: str,
                                                          db: Path) -> None:
    """On a phone (390x844), at each seat's busiest position, the centre of the table and
    the seat's own hand lie within the first screen, and nothing is wider than it."""
    gid = longest_game(db)
    driver.set_window_size(390, 844)
    try:
        for seat in range(SEATS):
            shown = positions(db, gid, seat)
            step = max(range(len(shown)), key=lambda i: busy(shown[i]))
            driver.get(f"{base}replay/{gid}-seat{seat}.html#step={step}")
            driver.refresh()  # from the address: the position loads, not a hash change
            assert not browser_errors(driver)
            boxes = driver.execute_script(
                "return Object.fromEntries([...document.querySelectorAll('#table [data-zone]')]"
                ".map(e => [e.dataset.zone, e.getBoundingClientRect().bottom]));")
            assert set(boxes) == {"centre", "hand"}, boxes
            assert max(boxes.values()) <= 844, (seat, step, boxes)
            wide = driver.execute_script(
                "return document.documentElement.scrollWidth - window.innerWidth;")
            assert wide <= 1, (seat, wide)
            if seat == 0:
                shot(driver, f"{GAME}-phone")
    finally:
        driver.set_window_size(1100, 900)


@pytest.fixture(scope="module")
def hostile_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A game of random bots whose names are markup."""
    tmp = tmp_path_factory.mktemp("sad-hostile")
    store = Store(tmp / "arena.db")
    for name in EVIL:
        botstore.add_bot(store, name, str(ROOT / "bots" / "random_bot.py"))
    tournament.create(store, name="hostile", game=GAME, bots=EVIL, seats=2,
                      games_per_seating=1, duplicate=False, fmt="round-robin", seed=3,
                      options={}, settings=tournament.Settings())
    tournament.run(store, "hostile", ProcessExecutor(2))
    store.close()
    return tmp / "arena.db"


@pytest.fixture(scope="module")
def hostile_base(hostile_db: Path) -> Iterator[str]:
    yield from serve(hostile_db)


@browser_test
def test_bot_names_with_markup_are_text(driver: Any, hostile_base: str,
                                        hostile_db: Path) -> None:
    """A name like <img onerror> shows on the table as the characters it is made of: no
    element is made of it, no script runs, nothing is logged (check_replay: every
    position, every perspective)."""
    from selenium.common.exceptions import NoAlertPresentException

    gid = longest_game(hostile_db)
    for seat in (None, 0, 1):
        check_replay(driver, hostile_base, hostile_db, gid, seat, cards)
        with pytest.raises(NoAlertPresentException):
            driver.switch_to.alert  # noqa: B018 - no alert() ran
        found = driver.execute_script(
            "const t = document.getElementById('table');"
            "return [t.innerText, t.querySelectorAll('img, [onload], [onerror]').length,"
            " [...t.querySelectorAll('b')].filter(b => b.textContent === 'bold').length,"
            " document.images.length];")
        assert all(name in found[0] for name in EVIL), found[0]
        assert found[1:] == [0, 0, 0], found


DRAW_ALL = """
const [view, seats] = arguments;
const draw = ArenaTable.get('stand-and-deliver');
const ctx = {seat: null, players: seats, seats: [], name: s => 'seat ' + s, step: 1, last: 2,
             acting: [0], events: [], previous: null, over: false};
const box = document.getElementById('table');
box.textContent = '';
box.appendChild(draw(view, ctx));
const hue = e => [...e.classList].filter(c => /^h[0-7]$/.test(c)).join(' ');
const colour = e => getComputedStyle(e).borderTopColor;
return {
  cards: [...box.querySelectorAll('[data-card]')].map(e =>
    [e.dataset.card.replace(/^coach\\d+:/, 'coach:'), hue(e), colour(e),
     e.querySelector('.label').textContent]),
  tokens: [...box.querySelectorAll('[data-token]')].map(e =>
    [[...e.classList].find(c => c.startsWith('t-sd-')), hue(e), colour(e), e.textContent]),
  seats: [...box.querySelectorAll('.seat-area')].map(e => getComputedStyle(e).borderLeftColor)};
"""


@browser_test
def test_every_kind_of_card_coin_and_seat_has_its_own_colour_and_word(
        driver: Any, base: str, db: Path) -> None:
    """The renderer on a full view holding every coach kind, every ability kind, every
    coin and hazard, and six seats: within each sort of thing a different palette class,
    a different colour on the screen, and always a word or letter beside the colour."""
    view: dict[str, Any] = new_game(GAME, 6, 1, {}).full_view()
    view["coaches"] = [{"position": k + 1, "card": None, "peeked_by": [], "choosers": [],
                        "outcome": None, "robbers": []} for k in range(len(COACH_KINDS))]
    view["table"] = [{"kind": kind, "revealed": False, "peeked": []} for kind in COACH_KINDS]
    view["hands"] = [ABILITY_KINDS] + [[] for _ in range(5)]
    view["pouches"][0] = ["gold", "silver", "copper"]
    view["highwaymen"][0]["hazards"] = {"shot": 1, "redcoat": 1}
    driver.get(f"{base}replay/{longest_game(db)}.html")
    drawn = driver.execute_script(DRAW_ALL, view, 6)
    assert not browser_errors(driver)
    for sort, kinds in (("coach:", COACH_KINDS), ("ability:", ABILITY_KINDS)):
        mine = {c[0]: c[1:] for c in drawn["cards"] if c[0].startswith(sort)}
        assert sorted(mine) == sorted(sort + k for k in kinds)
        for index in (0, 1, 2):  # palette class, computed colour, words
            values = [v[index] for v in mine.values()]
            assert all(values) and len(set(values)) == len(values), (sort, index, mine)
    tokens = {t[0]: t[1:] for t in drawn["tokens"] if t[0]}
    assert {f"t-sd-{k}" for k in ("gold", "silver", "copper", "shot", "redcoat")} <= set(tokens)
    for index in (0, 1, 2):
        values = [v[index] for v in tokens.values()]
        assert len(set(values)) == len(values), (index, tokens)
    assert len(drawn["seats"]) == 6 and len(set(drawn["seats"])) == 6, drawn["seats"]


@browser_test
def test_the_golden_game_every_step_every_perspective(driver: Any, tmp_path: Path) -> None:
    """Issue 19 §5: the golden game (tests/golden, the reviewed playthrough), every step,
    in the full view and in every seat's view, drawn as the engine's views say."""
    check_golden(driver, tmp_path, "stand-and-deliver", cards)
