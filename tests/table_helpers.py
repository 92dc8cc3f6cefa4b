"""The game tables in headless Chromium (issue 19 §5): one harness for every game's renderer.

A game's test module gives a function ``cards(view) -> list of card ids`` that reads, from
an engine view, every card that is face up in it (its own hand in a seat view, every
hand in the full view). The harness steps through a replay page in the browser and, at
every position the page shows, checks:

- the page logged no error (a script error, something the CSP blocked);
- the cards drawn face up in the table (``#table [data-card]``) are exactly the view's
  cards, as a multiset, computed here from a fresh engine and not from the page's data;
- on a seat's page, no text of the page names a card that only the full view holds at
  that position (a card some other seat may see, or nobody).

Screenshots go to test-artifacts/web/tables/.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena import botstore, tournament
from arena.executors import ProcessExecutor
from leaderboard.store import Store
from referee.games import new_game

ROOT = Path(__file__).parent.parent
ARTIFACTS = ROOT / "test-artifacts" / "web" / "tables"
Cards = Callable[[Mapping[str, Any]], list[str]]

GAME_BOTS = {"stop-me": "stop_me_bot.py", "dagens-brott": "dagens_brott_bot.py",
             "stand-and-deliver": "stand_and_deliver_bot.py"}


def table_db(tmp: Path, game: str, seats: int = 4, games: int = 1) -> Path:
    """A database with one finished tournament of ``game``: the game's own example bot
    against random bots (one of each seating with ``games`` games), ``seats`` seats."""
    store = Store(tmp / "arena.db")
    botstore.add_bot(store, "smart", str(ROOT / "bots" / GAME_BOTS[game]))
    bots = ["smart"] + [f"random{i}" for i in range(1, seats)]
    for name in bots[1:]:
        botstore.add_bot(store, name, str(ROOT / "bots" / "random_bot.py"))
    tournament.create(store, name=f"{game}-table", game=game, bots=bots, seats=seats,
                      games_per_seating=games, duplicate=False, fmt="round-robin", seed=5,
                      options={}, settings=tournament.Settings())
    tournament.run(store, f"{game}-table", ProcessExecutor(2))
    store.close()
    return tmp / "arena.db"


@dataclass(frozen=True)
class Position:
    """One position a replay page shows: its index and the view the engine gives."""

    index: int
    view: Mapping[str, Any]
    full: Mapping[str, Any]


def positions(db: Path, game_id: int, seat: int | None) -> list[Position]:
    """From the database and a fresh engine, independently of the viewer: the positions
    a perspective's page shows (the full view: all; a seat: the setup, each position where
    it was asked, and the end; arena.web.replay._shown) with that perspective's view."""
    with closing(sqlite3.connect(db)) as con:
        seed, game, options, moves = con.execute(
            "SELECT g.seed, g.game, t.options, g.moves FROM games g JOIN tournaments t "
            "ON t.id = g.tournament_id WHERE g.id = ?", (game_id,)).fetchone()
        players = con.execute("SELECT COUNT(*) FROM seats WHERE game_id = ?",
                              (game_id,)).fetchone()[0]
    engine = new_game(game, players, seed, json.loads(options))
    seen: list[tuple[Mapping[str, Any], Mapping[str, Any], tuple[int, ...]]] = []

    def keep() -> None:
        view = engine.full_view() if seat is None else engine.view(seat)
        seen.append((view, engine.full_view(), tuple(engine.to_act())))

    keep()
    for move in json.loads(moves):
        engine.apply({int(s): m["action"] for s, m in move.items()})
        keep()
    last = len(seen) - 1
    return [Position(i, view, full) for i, (view, full, acting) in enumerate(seen)
            if seat is None or i in (0, last) or seat in acting]


def table_state(driver: Any) -> dict[str, Any]:
    """What the table shows now: the face-up cards' ids, the face-down cards' kinds, the
    step label, the table's text and the whole page's rendered text (innerText: not the
    play-by-play's lines of later steps, which are hidden, nor closed details)."""
    return driver.execute_script(
        "const t = document.getElementById('table');"
        "return {cards: [...t.querySelectorAll('[data-card]')].map(e => e.dataset.card),"
        " backs: [...t.querySelectorAll('[data-back]')].map(e => e.dataset.back),"
        " label: document.getElementById('step-label').textContent,"
        " text: t.innerText, page: document.body.innerText,"
        " fallback: !!t.querySelector('dl.kv, table')}")


def browser_errors(driver: Any) -> list[dict[str, Any]]:
    return [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]


def walk(driver: Any, url: str, count: int) -> Iterator[dict[str, Any]]:
    """Open ``url`` and yield the table's state at each of its ``count`` positions,
    stepping with the forward button; no browser error at any of them."""
    driver.get(url)
    assert not browser_errors(driver), browser_errors(driver)
    forward = driver.find_element("id", "next")
    for i in range(count):
        if i:
            forward.click()
        state = table_state(driver)
        errors = browser_errors(driver)
        assert not errors, (i, errors)
        assert not state["fallback"], f"position {i}: the renderer fell back to the raw data"
        yield state


def hidden_cards(position: Position, cards: Cards) -> set[str]:
    """The cards of the full view at a position that the seat's view does not hold at all."""
    return set(cards(position.full)) - set(cards(position.view))


def check_replay(driver: Any, base: str, db: Path, game_id: int, seat: int | None,
                 cards: Cards, shot: str | None = None, shot_at: int = 3) -> int:
    """Step through one perspective of a stored game and check every position (the module
    docstring); return how many positions were checked."""
    shown = positions(db, game_id, seat)
    page = f"{base}replay/{game_id}{'' if seat is None else f'-seat{seat}'}.html"
    checked = 0
    for pos, state in zip(shown, walk(driver, page, len(shown)), strict=True):
        assert Counter(state["cards"]) == Counter(cards(pos.view)), (
            f"position {pos.index} ({state['label']}): drawn {sorted(state['cards'])}, "
            f"the view has {sorted(cards(pos.view))}")
        if seat is not None:
            for card in hidden_cards(pos, cards):
                # As a word: a hidden ROB1 must not be found inside one's own ROB10.
                named = re.search(rf"(?<![\w]){re.escape(card)}(?![\w])", state["page"])
                assert not named, (
                    f"seat {seat}'s page names {card!r} at position {pos.index}, which it "
                    "may not see")
        if shot and checked == shot_at:
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            driver.save_screenshot(str(ARTIFACTS / f"{shot}.png"))
        checked += 1
    return checked


def css_selectors(game: str) -> list[str]:
    """The selectors of ``game``'s block in arena.css: from its comment ``/* The GAME
    table (issue 19 §1). */`` to the next game's block or the end of the file (each
    renderer's rules in one block of its own, so that they merge cleanly)."""
    css = (ROOT / "arena" / "web" / "static" / "arena.css").read_text(encoding="utf-8")
    head = f"/* The {game} table (issue 19 §1). */"
    assert css.count(head) == 1, f"arena.css has {css.count(head)} blocks {head!r}"
    block = css[css.index(head) + len(head):]
    after = re.search(r"^/\* The [\w-]+ table \(issue 19 §1\)\. \*/$", block, re.MULTILINE)
    block = block[:after.start()] if after else block
    body = re.sub(r"@media[^{]*\{", "", re.sub(r"/\*.*?\*/", "", block, flags=re.DOTALL))
    return [s.strip() for rule in re.findall(r"([^{}]+)\{[^{}]*\}", body)
            for s in rule.split(",")]


GOLDEN = ROOT / "tests" / "golden"


def golden_db(tmp: Path, game: str) -> tuple[Path, int]:
    """A database holding ``game``'s golden game (tests/golden/GAME-*.txt, the reviewed
    playthrough of tests/test_golden.py): the same seed and built-in seats, played by
    ``arena play --db``, so that its replay is the golden game step for step (the stored
    event log is checked against the playthrough's engine). Its id, too."""
    from referee.playthrough import playthrough

    from .helpers import arena

    [path] = sorted(GOLDEN.glob(f"{game}-*.txt"))
    text = path.read_text(encoding="utf-8")
    seed = int(re.search(r"seed (\d+)", text.splitlines()[0])[1])  # type: ignore[index]
    bots = [b.split("=", 1)[1] for b in text.splitlines()[1].removeprefix("# seats: ")
            .split(", ")]
    assert playthrough(game, seed, bots) == text, f"{path.name} is not the engine's now"
    db = tmp / "golden.db"
    done = arena("play", game, *bots, "--seed", str(seed), "--db", str(db))
    assert done.returncode == 0, done.stderr
    with closing(sqlite3.connect(db)) as con:
        [(game_id, stored_seed, events)] = con.execute(
            "SELECT id, seed, events FROM games").fetchall()
    engine = new_game(game, len(bots), seed)
    assert stored_seed == seed and json.loads(events)[:3] == engine.log_json()[:3]
    return db, game_id


def check_golden(driver: Any, tmp: Path, game: str, cards: Cards,
                 check_seat: Callable[[Any, str, Path, int, int], int] | None = None) -> int:
    """Issue 19 §5: walk ``game``'s golden game (:func:`golden_db`), every step, in the
    full view and in every seat's view (with ``check_seat`` for a seat's page where a game
    needs its own, else :func:`check_replay`); how many positions were checked."""
    from .browser_helpers import serving

    db, gid = golden_db(tmp, game)
    server = serving(db)
    base = next(server)
    try:
        checked = check_replay(driver, base, db, gid, None, cards)
        with closing(sqlite3.connect(db)) as con:
            [(seats,)] = con.execute("SELECT COUNT(*) FROM seats WHERE game_id = ?",
                                     (gid,)).fetchall()
        for seat in range(seats):
            checked += (check_seat(driver, base, db, gid, seat) if check_seat
                        else check_replay(driver, base, db, gid, seat, cards))
        assert checked > seats + 1
        return checked
    finally:
        next(server, None)

