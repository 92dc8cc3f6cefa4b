"""Games watched as they play (issue 19 §3): the progress a worker reports, the one
writer's transient rows, and the live page, which shows public information only until
the game ends. Real matches, worker processes, SQLite files, a real uvicorn and Chromium.
"""

from __future__ import annotations

import json
import random
import re
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.executors import GamePlayed, InlineExecutor, ProcessExecutor
from arena.jobs import GameStep, MatchJob, _Reporter
from arena.web.live import public_positions
from arena.web.site import render
from leaderboard.store import Store, StoreError, StoreReader
from referee.games import GAMES, new_game

from .browser_helpers import HAVE_BROWSER, browser_errors, chromium, serving, viewport
from .helpers import ROOT, environment, game_record

NAMES = ["a", "b", "c", "d"]


def random_moves(game: str, players: int, seed: int, limit: int) -> list[dict[str, Any]]:
    engine, rng = new_game(game, players, seed), random.Random(seed)
    moves: list[dict[str, Any]] = []
    while engine.to_act() and len(moves) < limit:
        joint = {s: rng.choice(engine.legal_actions(s)) for s in engine.to_act()}
        moves.append({str(s): {"action": a, "by": "bot", "ms": 1.0} for s, a in joint.items()})
        engine.apply(joint)
    return moves


def states(positions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The public views the page rebuilds from its positions (as live.js does)."""
    out: list[dict[str, Any]] = []
    cur: dict[str, Any] = {}
    for p in positions:
        cur = {k: v for k, v in {**cur, **p["d"]}.items() if k not in p["x"]}
        out.append(cur)
    return out


# --------------------------------------------------------------- what is shown
@settings(max_examples=15, deadline=None)
@given(game=st.sampled_from(sorted(GAMES)), seed=st.integers(0, 2**31), cut=st.integers(0, 400))
def test_the_live_positions_hold_public_information_only(game: str, seed: int, cut: int) -> None:
    """Every event shown is public; the newest position is the engine's public view,
    which every seat's view contains; no position repeats the one before it."""
    players = 3
    moves = random_moves(game, players, seed, cut)
    positions, note = public_positions(game, players, seed, {}, moves, NAMES)
    assert note is None and positions
    engine = new_game(game, players, seed)
    for move in moves:
        engine.apply({int(s): m["action"] for s, m in move.items()})
    assert states(positions)[-1] == engine.public_view()
    shown = [e for p in positions for _, e, *_ in p["e"]]
    assert shown == [e.to_json() for e in engine.log if e.to is None]
    assert all("to" not in e for e in shown)
    assert [n for p in positions for n, *_ in p["e"]] == list(range(1, len(shown) + 1))
    assert all(p["e"] or p["d"] or p["x"] for p in positions[1:])
    private = set(GAMES[game].game_type.private_keys) - ({"table"} if game == "stop-me" else set())
    assert not private & {k for s in states(positions) for k in s}


def test_a_stop_me_table_shows_the_gangsters_and_not_the_cards_on_them() -> None:
    moves = random_moves("stop-me", 3, 4, 2)
    positions, _ = public_positions("stop-me", 3, 4, {}, moves, NAMES)
    table = states(positions)[-1]["table"]
    assert table and all(set(g) == {"gangster", "slot"} for g in table)


def test_a_move_the_engine_refuses_stops_the_positions_with_a_note() -> None:
    """The note never quotes the engine's error: an illegal action's message lists the
    seat's legal actions, which name its hidden cards."""
    moves = random_moves("dagens-brott", 3, 2, 5)
    engine = new_game("dagens-brott", 3, 2)
    for move in moves:
        engine.apply({int(s): m["action"] for s, m in move.items()})
    [seat] = engine.to_act()
    hand = [a["lay"] for a in engine.legal_actions(seat) if isinstance(a, dict)]
    assert hand  # the seat is laying: its legal actions name its cards
    bad = {"lay": "ROB99"}
    positions, note = public_positions("dagens-brott", 3, 2, {},
                                       [*moves, {str(seat): {"action": bad}}], NAMES)
    assert positions and note is not None and "cannot be shown live" in note
    assert not any(card in note for card in hand) and "ROB99" not in note


def test_a_game_has_one_address(tmp_path: Path) -> None:
    _, tid, _ = tournament(tmp_path)
    reader = StoreReader(tmp_path / "arena.db")
    for alias in (f"0{tid}-0", f"{tid}-00", "\u0661-0", "𝟏-0"):
        assert render(reader, ["live", f"{alias}.html"])[0] == 400, alias


# ------------------------------------------------------------------- the store
def tournament(tmp_path: Path, game: str = "stop-me", *, duplicate: bool = False,
               names: tuple[str, ...] = ("a", "b", "c"), seed: int = 1
               ) -> tuple[Store, int, list[dict[str, Any]]]:
    """A three-seat round-robin of random bots, not played: its store, id and schedule."""
    from arena import botstore
    from arena import tournament as tour

    store = Store(tmp_path / "arena.db")
    for name in names:
        botstore.add_bot(store, name, str(ROOT / "bots" / "random_bot.py"))
    tour.create(store, name="t", game=game, bots=list(names), seats=3, games_per_seating=1,
                duplicate=duplicate, fmt="round-robin", seed=seed, options={},
                settings=tour.Settings())
    tid = store.tournament("t")["id"]
    return store, tid, store.missing_games(tid)


def first_deal(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The games of the schedule's first deal group: with duplicate deals, one per seating."""
    group = [r for r in rows if r["deal_group"] == rows[0]["deal_group"]]
    assert len(group) == 3 and len({r["seed"] for r in group}) == 1
    return group


def test_the_writer_keeps_a_game_in_progress_until_it_is_stored(tmp_path: Path) -> None:
    store, tid, schedule = tournament(tmp_path)
    first = schedule[0]
    moves = random_moves("stop-me", 3, first["seed"], 6)
    assert store.live_step(tid, first["idx"], moves[:3])
    assert store.live_step(tid, first["idx"], moves)
    assert store.live_step(tid, first["idx"], moves[:2])  # a match played again: anew
    assert store.live_step(tid, first["idx"], moves)
    reader = StoreReader(tmp_path / "arena.db")
    [row] = reader.live_games(tid)
    assert (row["idx"], row["steps"]) == (first["idx"], 6)
    live = reader.live_game(tid, first["idx"])
    assert live is not None and live.moves == moves and live.seed == first["seed"]
    # Stored: gone in the same transaction, and a late report does not bring it back.
    record = game_record([{"rank": 1}, {"rank": 2}, {"rank": 3}], seed=first["seed"])
    assert store.record_game(tid, first, "stop-me", record) is not None
    assert reader.live_game(tid, first["idx"]) is None and reader.live_games(tid) == []
    assert not store.live_step(tid, first["idx"], moves)
    assert reader.game_at(tid, first["idx"]) is not None
    # A run clears what a killed run left.
    store.live_step(tid, schedule[1]["idx"], moves[:1])
    assert store.live_clear(tid) == 1 and reader.live_games() == []


def test_a_reader_of_an_older_database_finds_no_game_in_progress(tmp_path: Path) -> None:
    from .helpers import as_schema

    store, tid, _ = tournament(tmp_path)
    store.close()
    as_schema(tmp_path / "arena.db", 7)
    reader = StoreReader(tmp_path / "arena.db")
    assert reader.live_games() == [] and reader.live_game(tid, 0) is None


def test_a_duplicate_deal_is_shown_when_every_seating_of_it_is_over(tmp_path: Path) -> None:
    """While another seating of its deal is still to play, a game is not shown live nor
    replayed (not even its public events): its cards would be that seating's hidden ones.
    """
    store, tid, rows = tournament(tmp_path, "dagens-brott", duplicate=True)
    group = first_deal(rows)
    first, *others = group
    store.live_step(tid, first["idx"], random_moves("dagens-brott", 3, first["seed"], 30))
    reader = StoreReader(tmp_path / "arena.db")
    status, html = render(reader, ["live", f"{tid}-{first['idx']}.html"])
    assert status == 200 and 'data-state="withheld"' in html and '"positions":[]' in html
    for n, row in enumerate([first, *others]):
        record = game_record([{"rank": 1}, {"rank": 2}, {"rank": 3}], game="dagens-brott",
                             seed=row["seed"])
        game_id = store.record_game(tid, row, "dagens-brott", record)
        for spectator in (False, True):
            status, _ = render(reader, ["replay", f"{game_id}.html"], spectator=spectator)
            assert status == (404 if n < len(group) - 1 else 200), (n, spectator)
    status, html = render(reader, ["live", f"{tid}-{first['idx']}.html"])
    assert status == 200 and 'data-state="over"' in html


def test_a_duplicate_deals_fault_logs_wait_for_its_other_seatings(tmp_path: Path) -> None:
    """A fault log may quote a seat's legal actions, so its hand: on a bot's page it is
    kept back while the deal is to be played in another seating, as the bot's output."""
    store, tid, rows = tournament(tmp_path, "dagens-brott", duplicate=True)
    group = first_deal(rows)
    secret = "{'lay': 'ROB7'} is not one of the legal actions ['pass', {'lay': 'ROB9'}]"
    faulty = {"rank": 1, "status": "illegal", "faults": {"illegal": 1},
              "fault_log": [f"illegal: {secret}"]}
    for n, row in enumerate(group):
        seats = [faulty if s == 0 else {"rank": 2 + s} for s in range(3)]
        store.record_game(tid, row, "dagens-brott",
                          game_record(seats, game="dagens-brott", seed=row["seed"]))
        store.record_logs(tid, row["match"], row["seating"], {0: f"my hand holds {secret}"})
        reader = StoreReader(tmp_path / "arena.db")
        names = {b["id"]: b["name"] for b in reader.bots()}
        shown = render(reader, ["bot", f"{names[row['seating'][0]]}.html"])[1]
        assert ("ROB9" in shown) == (n == len(group) - 1), n
        reader.close()
def test_a_game_a_killed_run_left_in_progress_goes_from_the_pages(tmp_path: Path) -> None:
    """A row not written for longer than any step can take (a run killed with kill -9,
    never resumed) is no game in progress."""
    store, tid, schedule = tournament(tmp_path)
    store.live_step(tid, schedule[0]["idx"], random_moves("stop-me", 3, 1, 3))
    reader = StoreReader(tmp_path / "arena.db")
    assert reader.live_games(tid)
    with closing(sqlite3.connect(tmp_path / "arena.db")) as con, con:  # as a killed run left it
        con.execute("UPDATE live_games SET updated_at = '2026-01-01T00:00:00Z'")
    assert reader.live_games(tid) == [] and reader.live_game(tid, schedule[0]["idx"]) is None


# ---------------------------------------------------------------- the executors
def job(key: int, games: int, bots: tuple[str, ...] = ("builtin:random",) * 3) -> MatchJob:
    rows = tuple({"idx": i, "seed": 100 + i, "deal_group": i, "seating": [0, 1, 2]}
                 for i in range(games))
    return MatchJob(key, "dagens-brott", bots, rows)


@pytest.mark.parametrize("make", [InlineExecutor, lambda: ProcessExecutor(1)],
                         ids=["inline", "process"])
def test_an_executor_hands_each_games_progress_to_its_live_hook(make: Any,
                                                                tmp_path: Path) -> None:
    """Inline, each step when the interval is over; on a worker, on its ticker (so the
    games last a few seconds: a program bot that waits a little each move)."""
    executor = make()
    steps: list[GameStep] = []
    executor.live = steps.append
    bot = tmp_path / "slow.py"
    bot.write_text(SLOW_BOT.replace("0.03", "0.01"))
    bots = ("builtin:random",) * 3 if isinstance(executor, InlineExecutor) else \
        (str(bot), "builtin:random", "builtin:random")
    with closing(executor.stream([job(7, 2, bots)])) as outcomes:
        played = {o.position: o.record for o in outcomes if isinstance(o, GamePlayed)}
    assert set(played) == {0, 1}
    assert {s.position for s in steps} == {0, 1} and all(s.key == 7 for s in steps)
    for step in steps:  # each report is a prefix of the game's moves
        moves = played[step.position].moves
        assert step.moves and step.moves == list(moves[:len(step.moves)])


def test_the_reporter_reports_at_most_every_interval_and_never_fails_a_game() -> None:
    got: list[GameStep] = []
    report = _Reporter(3, got.append, every_s=60)
    for n in range(1, 50):
        report(0, [{}] * n)
    report(1, [{}])
    assert [(s.position, len(s.moves)) for s in got] == [(0, 1), (1, 1)]

    def broken(step: GameStep) -> None:
        raise OSError("the pipe is gone")

    _Reporter(3, broken)(0, [{}])  # logged, not raised


def test_a_workers_reports_come_on_a_ticker_not_when_steps_end() -> None:
    """A worker's hook (thread-safe) gets a game's moves every interval while they
    change, whenever its steps end, the first ones too: a game waiting on a slow
    decision is shown up to its last finished step, and a report's time tells nothing
    finer of when a step ended. Nothing comes after the match."""
    got: list[tuple[float, int]] = []

    def hook(step: GameStep) -> None:
        got.append((time.monotonic(), len(step.moves)))

    hook.thread_safe = True  # type: ignore[attr-defined]
    report = _Reporter(4, hook, every_s=0.3)
    moves: list[dict[str, Any]] = []
    for _ in range(3):
        moves.append({})
        report(0, moves)  # none sent now: the ticker sends the list as it is then
    assert got == []
    deadline = time.monotonic() + 5
    while not got and time.monotonic() < deadline:
        time.sleep(0.05)
    assert [n for _, n in got] == [3]
    time.sleep(0.7)
    assert len(got) == 1  # unchanged moves are not sent again
    moves.append({})
    while len(got) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert [n for _, n in got] == [3, 4]
    report.close()
    moves.append({})
    time.sleep(0.7)
    assert len(got) == 2  # the match is over


# --------------------------------------------------------------------- the page
def test_the_page_of_a_game_not_in_any_schedule_is_a_404(tmp_path: Path) -> None:
    _, tid, _ = tournament(tmp_path)
    reader = StoreReader(tmp_path / "arena.db")
    assert render(reader, ["live", f"{tid}-999.html"])[0] == 404
    assert render(reader, ["live", "x-1.html"])[0] == 400
    status, html = render(reader, ["live", f"{tid}-0.html"])
    assert status == 200 and 'data-state="waiting"' in html


def game_db(tmp_path: Path, game: str) -> tuple[Path, int, int, Any]:
    """A tournament of ``game`` whose first scheduled game is in progress, some way in,
    as its run's writer keeps it; with the engine at that point."""
    store, tid, schedule = tournament(tmp_path, game, names=("alpha", "<b>bold<b>", "gamma"),
                                      seed=2)
    first = schedule[0]
    moves = random_moves(game, 3, first["seed"], 400)[:-1]  # not the last: still playing
    moves = moves[:max(1, len(moves) * 2 // 3)]
    store.live_step(tid, first["idx"], moves)
    store.close()
    engine = new_game(game, 3, first["seed"])
    for move in moves:
        engine.apply({int(s): m["action"] for s, m in move.items()})
    return tmp_path / "arena.db", tid, first["idx"], engine


@pytest.mark.skipif(not HAVE_BROWSER, reason="chromium and chromium-driver are not installed")
@pytest.mark.parametrize("game", sorted(GAMES))
def test_each_games_table_draws_a_game_in_progress_from_public_information(
        game: str, tmp_path: Path) -> None:
    """Every game's renderer draws the public view (no fallback to the raw data, no
    script error); every card face up on it is in the public view or a public event,
    and none of the hidden cards of the full view is named; on a phone the table comes
    on the first screen."""
    db, tid, idx, engine = game_db(tmp_path, game)
    public = json.dumps(engine.public_view()) + json.dumps(
        [e.to_json() for e in engine.log if e.to is None])
    full = json.dumps(engine.full_view())
    hidden = {c for c in re.findall(r'"([A-Z]+\d+)"', full) if not re.search(rf"\b{c}\b", public)}
    server = serving(db)
    base = next(server)
    try:
        with chromium() as driver:
            for width, height in ((1000, 900), (390, 844)):
                viewport(driver, width, height)
                driver.get(f"{base}live/{tid}-{idx}.html")
                state = driver.execute_script(
                    "const t = document.getElementById('table');"
                    "return {cards: [...t.querySelectorAll('[data-card]')].map(e => e.dataset.card),"
                    " fallback: !!t.querySelector('dl.kv'), text: document.body.innerText,"
                    " top: t.getBoundingClientRect().top,"
                    " injected: document.body.innerHTML.includes('<b>bold<b>')}")
                assert browser_errors(driver) == []
                assert not state["fallback"], f"{game}: the renderer fell back to the data"
                for card in state["cards"]:
                    shown = re.split(r"[:-]", card)[-1]  # "ability:spyglass", "s0-GO"
                    if game == "stop-me" and re.fullmatch(r"G\d+", shown):
                        shown = shown[1:]  # gangster 6 is drawn as G6
                    assert re.search(rf"\b{re.escape(shown)}\b", public, re.IGNORECASE), card
                named = [c for c in hidden if re.search(rf"\b{c}\b", state["text"])]
                assert not named, f"{game}: the live page names {named}"
                assert "<b>bold<b>" in state["text"] and not state["injected"]  # as text
                assert state["top"] < height / 2, state["top"]  # the table on the first screen
    finally:
        next(server, None)


SLOW_BOT = """\
import random, time
from protocol.client import run
rng = random.Random(1)
def act(observation, legal):
    time.sleep(0.03)
    return rng.choice(legal)
run(act, name="slow")
"""


@pytest.fixture(scope="module")
def playing(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, subprocess.Popen[str]]]:
    """A dagens-brott tournament of three slow bots playing in another process."""
    from arena import botstore
    from arena import tournament as tour

    tmp = tmp_path_factory.mktemp("live")
    bot = tmp / "slow.py"
    bot.write_text(SLOW_BOT)
    store = Store(tmp / "arena.db")
    for name in ("slow", "steady", "<img src=x onerror=alert(1)>"):
        botstore.add_bot(store, name, str(bot))
    tour.create(store, name="live", game="dagens-brott", bots=["slow", "steady",
                "<img src=x onerror=alert(1)>"], seats=3, games_per_seating=1,
                duplicate=False, fmt="round-robin", seed=3, options={},
                settings=tour.Settings())
    store.close()
    proc = subprocess.Popen([sys.executable, "-m", "arena", "tournament", "resume", "live",
                             "--workers", "2", "--db", str(tmp / "arena.db")], cwd=ROOT,
                            env=environment(), stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    yield tmp / "arena.db", proc
    proc.kill()
    proc.wait()


def stored_rows(db: Path) -> int:
    """The live rows of ``db`` now, or -1 while it cannot be read (not yet an Arena
    database: its run is making it)."""
    try:
        reader = StoreReader(db)
    except StoreError:
        return -1
    try:
        return len(reader.live_games())
    finally:
        reader.close()


def hidden_now(db: Path) -> tuple[int, set[str]]:
    """A game in progress and the criminal cards in its hands now that nothing public
    has shown (each criminal card is unique): none of them may be on its page."""
    reader = StoreReader(db)
    try:
        rows = reader.live_games()
        if not rows:
            return -1, set()
        live = reader.live_game(rows[0]["tournament_id"], rows[0]["idx"])
    finally:
        reader.close()
    if live is None:
        return -1, set()
    engine = new_game(live.game, len(live.seating), live.seed, live.options)
    for move in live.moves:
        engine.apply({int(s): m["action"] for s, m in move.items()})
    public = json.dumps([e.to_json() for e in engine.log if e.to is None]) + json.dumps(
        engine.public_view())
    hands = {c for hand in engine.full_view()["hands"] for c in hand if c[-1].isdigit()}
    return live.idx, {c for c in hands if not re.search(rf"\b{c}\b", public)}


@pytest.mark.skipif(not HAVE_BROWSER, reason="chromium and chromium-driver are not installed")
def test_a_game_is_watched_as_it_plays_and_opens_when_it_ends(
        playing: tuple[Path, subprocess.Popen[str]]) -> None:
    """The live page updates without a reload, shows no card a seat holds, quotes a
    hostile name as text, and links the replay when the game has ended."""
    db, proc = playing
    deadline = time.monotonic() + 120
    idx = -1
    while idx < 0 and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.3)
        idx, _ = hidden_now(db)
    assert idx >= 0, proc.stderr.read() if proc.stderr and proc.poll() is not None else ""
    server = serving(db)
    base = next(server)
    try:
        with chromium() as driver:
            viewport(driver, 1000, 900)
            driver.get(f"{base}live/1-{idx}.html")
            driver.execute_script("window.arenaMarker = 7;")
            labels = set()
            checked = 0
            while time.monotonic() < deadline:
                state = driver.execute_script(
                    "return {label: document.getElementById('step-label').textContent,"
                    " text: document.body.innerText, over: document.getElementById("
                    "'live-state').dataset.state,"
                    " cards: [...document.querySelectorAll('#table [data-card]')]"
                    ".map(e => e.dataset.card),"
                    " keys: Object.keys(Object.assign({}, ...((window.__x = JSON.parse("
                    "document.getElementById('live-data').textContent)).positions"
                    ".map(p => p.d))))}")
                assert browser_errors(driver) == []
                if state["over"] == "over":
                    break
                now, secret = hidden_now(db)
                if now == idx:
                    named = [c for c in secret if re.search(rf"\b{c}\b", state["text"])]
                    assert not named, f"the live page names {named}, held in a hand"
                    assert not set(state["cards"]) & secret
                    checked += 1
                assert not {"hand", "hands", "seat"} & set(state["keys"])
                labels.add(state["label"])
                assert "<img src=x onerror=alert(1)>" in state["text"] or \
                    driver.find_elements("css selector", "#seats a")
                time.sleep(0.7)
            assert checked >= 3 and len(labels) >= 3, (checked, labels)
            assert driver.execute_script("return window.arenaMarker;") == 7  # no reload
            assert not driver.find_elements("css selector", "#table img, #table script")
            link = driver.find_element("id", "replay-link")
            link.click()
            assert "/replay/" in driver.current_url
            assert driver.find_elements("css selector", "#table [data-card]")
    finally:
        next(server, None)


def test_a_ladders_page_links_its_games_in_progress(tmp_path: Path) -> None:
    """The ladder, its one writer and its page: a match in flight links its game's live
    page while it plays (issue 19 §3), and nothing is left in progress after the run."""
    from .helpers import arena

    bot = tmp_path / "slow.py"
    bot.write_text(SLOW_BOT.replace("0.03", "0.05"))
    db = tmp_path / "arena.db"
    for name in ("slow", "steady"):
        assert arena("bot", "add", name, str(bot), db=db).returncode == 0
    proc = subprocess.Popen([sys.executable, "-m", "arena", "ladder", "run", "stop-me",
                             "--name", "L", "--games", "2", "--seats", "2", "--workers", "2",
                             "--db", str(db)], cwd=ROOT, env=environment(),
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        linked = None
        while linked is None and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.3)
            if not db.exists() or stored_rows(db) < 0:
                continue
            reader = StoreReader(db)
            try:
                rows = reader.live_games()
                if rows:
                    html = render(reader, ["ladder", f"{rows[0]['tournament_id']}.html"])[1]
                    found = re.search(r'href="\.\./live/(\d+-\d+)\.html" class="live-link"',
                                      html)
                    linked = found[1] if found else None
            finally:
                reader.close()
        assert linked is not None, "no match in flight linked its live game"
        assert proc.wait(timeout=180) == 0, proc.stderr.read() if proc.stderr else ""
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    reader = StoreReader(db)
    try:
        assert reader.live_games() == []
        tid, idx = map(int, linked.split("-"))
        assert reader.game_at(tid, idx) is not None  # and the game it linked is stored
    finally:
        reader.close()

