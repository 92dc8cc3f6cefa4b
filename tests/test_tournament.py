"""Tournaments end to end: real bots, real SQLite files, real processes.

Schedules (fairness, duplicate groups, determinism), the bot store, exact
resume after ``kill -9`` of the organiser at random moments, ratings equal to a
direct recomputation with the trueskill package, identical rebuilds, and clear
errors for bad input.
"""

from __future__ import annotations

import itertools
import json
import multiprocessing
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import trueskill

from arena import botstore, tournament
from arena.schedule import ScheduleError, make_schedule
from leaderboard import board
from leaderboard.store import SCHEMA_VERSION, Store, StoreError
from leaderboard.stream import Ratings
from referee.records import GameRecord, validate

from .helpers import arena, as_schema, processes_mentioning, sql, sql_one, stored_games

pytestmark = pytest.mark.slow

ROOT = Path(__file__).parent.parent
RANDOM_BOT = ROOT / "bots" / "random_bot.py"
FIRST_BOT = """\
from protocol.client import run
run(lambda observation, legal: legal[0], name="first")
"""


# ------------------------------------------------------------------ schedules
@pytest.mark.parametrize(("bots", "seats", "duplicate"), [
    (3, 3, False), (4, 3, False), (5, 3, True), (4, 2, True), (6, 4, False)])
def test_round_robin_is_fair(bots: int, seats: int, duplicate: bool) -> None:
    games = make_schedule(list(range(bots)), seats, 2, duplicate, "round-robin", seed=9)
    # Every bot in every seat position equally often.
    positions = Counter((bot, pos) for g in games for pos, bot in enumerate(g.seating))
    assert len(set(positions.values())) == 1 and len(positions) == bots * seats
    # Every pair of bots meets equally often.
    pairs = Counter(p for g in games for p in itertools.combinations(sorted(g.seating), 2))
    assert len(set(pairs.values())) == 1 and len(pairs) == bots * (bots - 1) // 2
    assert [g.idx for g in games] == list(range(len(games)))
    # A match is one seating: consecutive games, same bots in the same seats.
    for _, group in itertools.groupby(games, key=lambda g: g.match):
        assert len({g.seating for g in group}) == 1


def test_duplicate_deals_rotate_one_seed_through_every_seat() -> None:
    games = make_schedule([10, 20, 30], 3, 2, True, "round-robin", seed=4)
    by_group: dict[int, list] = {}
    for g in games:
        by_group.setdefault(g.deal_group, []).append(g)
    assert len(by_group) == 2
    for group in by_group.values():
        assert len({g.seed for g in group}) == 1
        assert {g.seating for g in group} == {(10, 20, 30), (20, 30, 10), (30, 10, 20)}
    assert len({g.seed for g in games}) == 2


def test_schedules_are_deterministic_from_the_seed() -> None:
    one = make_schedule([1, 2, 3, 4], 3, 2, False, "round-robin", seed=5)
    assert one == make_schedule([1, 2, 3, 4], 3, 2, False, "round-robin", seed=5)
    assert one != make_schedule([1, 2, 3, 4], 3, 2, False, "round-robin", seed=6)
    assert len({g.seed for g in one}) == len(one)


def test_gauntlet_is_one_bot_against_the_field() -> None:
    games = make_schedule([7, 1, 2, 3], 2, 1, False, "gauntlet", seed=1)
    assert all(7 in g.seating for g in games)
    assert Counter(b for g in games for b in g.seating if b != 7) == {1: 2, 2: 2, 3: 2}


@pytest.mark.parametrize(("args", "message"), [
    (([1, 2], 3, 1, False, "round-robin"), "2 bots cannot fill 3 seats"),
    (([1, 1, 2], 2, 1, False, "round-robin"), "entered twice"),
    (([1, 2], 2, 1, False, "swiss"), "'swiss' is not one of"),
    (([1, 2], 2, 1, False, "gauntlet"), "more bots than seats"),
    # Refused before it is built (a mistyped --games-per-seating filled the memory).
    (([1, 2], 2, 500_001, False, "round-robin"),
     "1000002 games is more than one tournament may schedule"),
])
def test_bad_schedules_are_refused(args: tuple, message: str) -> None:
    with pytest.raises(ScheduleError, match=message):
        make_schedule(*args, seed=1)


# ------------------------------------------------------------------ bot store
@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "arena.db"


@pytest.fixture
def registered(db: Path, tmp_path: Path) -> Path:
    """Three registered bots: random, random again (another name), first-legal."""
    first = tmp_path / "first.py"
    first.write_text(FIRST_BOT)
    for name, path in (("alpha", RANDOM_BOT), ("beta", RANDOM_BOT), ("gamma", first)):
        out = arena("bot", "add", name, str(path), db=db)
        assert out.returncode == 0, out.stderr
    return db


def test_bot_versions_follow_the_content(registered: Path, tmp_path: Path) -> None:
    db = registered
    again = arena("bot", "add", "gamma", str(tmp_path / "first.py"), db=db)
    assert "unchanged: gamma version 1" in again.stdout
    (tmp_path / "first.py").write_text(FIRST_BOT.replace("first", "first-v2"))
    changed = arena("bot", "add", "gamma", str(tmp_path / "first.py"), db=db)
    assert "added gamma version 2" in changed.stdout
    listed = json.loads(arena("bot", "list", "--json", db=db).stdout)
    assert sorted((b["name"], b["version"]) for b in listed) == [
        ("alpha", 1), ("beta", 1), ("gamma", 1), ("gamma", 2)]
    stored = [Path(b["path"]) for b in listed]
    assert all(p.exists() and db.parent in p.parents for p in stored)
    removed = arena("bot", "remove", "beta", db=db)
    assert removed.returncode == 0
    assert "beta" not in [b["name"] for b in json.loads(arena("bot", "list", "--json",
                                                              db=db).stdout)]


def test_a_bot_that_fails_its_handshake_is_not_added(db: Path, tmp_path: Path) -> None:
    bad = tmp_path / "silent.py"
    bad.write_text("import sys; print('no hello', file=sys.stderr); sys.exit(2)\n")
    out = arena("bot", "add", "silent", str(bad), db=db)
    assert out.returncode != 0 and "failed its handshake" in out.stderr
    assert "no hello" in out.stderr


# ----------------------------------------------------------------- tournaments
def direct_ratings(store: Store, game: str) -> dict[str, tuple[float, float]]:
    """The leaderboard recomputed here with the trueskill package alone."""
    env_row = sql_one(store, "SELECT * FROM leaderboards WHERE game = ?", (game,))
    env = trueskill.TrueSkill(mu=env_row["mu"], sigma=env_row["sigma"], beta=env_row["beta"],
                              tau=env_row["tau"], draw_probability=env_row["draw_probability"])
    ratings: dict[str, trueskill.Rating] = {}
    games = sql(store, "SELECT id FROM games WHERE game = ? AND void = 0 "
                       "ORDER BY tournament_id, idx", (game,))
    for g in games:
        seats = sql(store, "SELECT b.name || '@' || b.version AS who, s.rank FROM seats s "
                           "JOIN bots b ON b.id = s.bot_id WHERE s.game_id = ? ORDER BY s.seat",
                           (g["id"],))
        groups = [(ratings.get(s["who"], env.create_rating()),) for s in seats]
        rated = env.rate(groups, ranks=[s["rank"] - 1 for s in seats])
        for s, (r,) in zip(seats, rated, strict=True):
            ratings[s["who"]] = r
    return {k: (r.mu, r.sigma) for k, r in ratings.items()}


def stored_ratings(store: Store, game: str) -> dict[str, tuple[float, float]]:
    return {f"{r['bot']}@{r['version']}": (r["mu"], r["sigma"])
            for r in board.standings(store, game)}


def test_a_tournament_runs_rates_and_rebuilds_exactly(registered: Path) -> None:
    db = registered
    out = arena("tournament", "run", "stop-me", "--bots", "alpha,beta,gamma",
                "--games-per-seating", "2", "--duplicate", "--workers", "2", "--name", "t1", db=db)
    assert out.returncode == 0, out.stderr
    assert "t1: 6 of 6 games played" in out.stdout
    store = Store(db, create=False)
    assert sql_one(store, "SELECT COUNT(*) AS n FROM games")["n"] == 6
    groups = sql(store, "SELECT deal_group, COUNT(DISTINCT seed) AS seeds, COUNT(*) AS n "
                        "FROM games GROUP BY deal_group")
    assert [(g["seeds"], g["n"]) for g in groups] == [(1, 3), (1, 3)]
    before = stored_ratings(store, "stop-me")
    direct = direct_ratings(store, "stop-me")
    for who, (mu, sigma) in direct.items():
        assert before[who] == pytest.approx((mu, sigma), abs=1e-9)
    rebuilt = arena("leaderboard", "rebuild", "stop-me", db=db)
    assert rebuilt.returncode == 0
    assert stored_ratings(store, "stop-me") == before  # bit for bit
    board_json = json.loads(arena("leaderboard", "stop-me", "--json", db=db).stdout)
    assert [r["conservative"] for r in board_json["leaderboard"]] == sorted(
        (r["conservative"] for r in board_json["leaderboard"]), reverse=True)
    assert board_json["trueskill"]["draw_probability"] == 0.1
    results = json.loads(arena("results", "stop-me", "--json", db=db).stdout)
    assert [(g["tournament"], g["idx"]) for g in results] == [("t1", i) for i in range(6)]
    shown = json.loads(arena("tournament", "show", "t1", "--json", db=db).stdout)
    assert shown["played"] == shown["scheduled"] == 6 and shown["finished_at"]
    replay = arena("replay", str(results[0]["id"]), "--seat", "1", db=db)
    assert replay.returncode == 0 and "from seat 1's view" in replay.stdout
    assert "[only seat 0]" not in replay.stdout and "[only seat 1]" in replay.stdout
    # Its own decisions only, each told with the events it caused (issue 19 §2).
    decided = [line for line in replay.stdout.splitlines() if line.startswith("   > ")]
    assert decided and all(line.startswith("   > Seat 1 (beta) decides to ") for line in decided)
    full = json.loads(arena("replay", str(results[0]["id"]), "--json", db=db).stdout)
    steps = sql_one(Store(db, create=False), "SELECT steps FROM games WHERE id = ?",
                                        (results[0]["id"],))["steps"]
    assert len(full["moves"]) == steps > 0
    assert all(m["by"] == "bot" for move in full["moves"] for m in move.values())
    # A seat's replay: its own decisions only, one per entry, and no seed (with the seed,
    # every hidden card of the game could be rebuilt).
    mine = json.loads(arena("replay", str(results[0]["id"]), "--seat", "1", "--json",
                            db=db).stdout)
    assert full["seed"] is not None and mine["seed"] is None
    assert mine["moves"] and all(list(move) == ["1"] for move in mine["moves"])
    store.close()


def test_resume_after_kill_9_counts_every_game_exactly_once(registered: Path) -> None:
    """Kill the organiser at random moments (mid-game, mid-write), resume, repeat."""
    db = registered
    rng = random.Random(2026)
    run = ["tournament", "run", "stop-me", "--bots", "alpha,beta,gamma",
           "--games-per-seating", "4", "--workers", "2", "--name", "crashy"]
    resume = ["tournament", "resume", "crashy", "--workers", "2"]
    for attempt in range(5):
        cmd = [sys.executable, "-m", "arena", *(run if attempt == 0 else resume),
               "--db", str(db)]
        target = stored_games(db) + rng.randint(1, 3)
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                start_new_session=True)
        deadline = time.monotonic() + 60
        while (stored_games(db) < target and proc.poll() is None
               and time.monotonic() < deadline):
            time.sleep(rng.uniform(0.0, 0.05))
        time.sleep(rng.uniform(0.0, 0.3))  # and somewhere in the next game
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    final = arena("tournament", "resume", "crashy", "--workers", "2", db=db)
    assert final.returncode == 0, final.stderr
    # No orphan worker (they die with their organiser) nor bot outlived its organiser.
    assert processes_mentioning(str(db)) == []
    store = Store(db, create=False)
    t = store.tournament("crashy")
    idx = [r["idx"] for r in sql(store, "SELECT idx FROM games WHERE tournament_id = ?",
                                        (t["id"],))]
    assert sorted(idx) == list(range(t["scheduled"]))  # none lost, none twice
    assert sql_one(store, "SELECT COUNT(*) AS n FROM seats")["n"] == 3 * t["scheduled"]
    ratings = stored_ratings(store, "stop-me")
    board.rebuild(store, "stop-me")
    assert stored_ratings(store, "stop-me") == ratings
    for who, expected in direct_ratings(store, "stop-me").items():
        assert ratings[who] == pytest.approx(expected, abs=1e-9)
    store.close()



# The organiser is killed just as a worker forks a seat's supervisor, so that the
# worker's parent-death SIGTERM is handled inside the fork's at-fork callbacks, where
# the interpreter drops its exception: under load, such a worker once played on for
# nobody and outlived its organiser's `kill -9` (issue 13 A10).
DIES_IN_A_FORK = """\
import os
import signal
import sys
import time

organiser = os.getpid()

def after_in_parent():
    if os.getppid() != organiser:
        return  # the organiser's own forks, or a supervisor's of its bot
    try:
        os.kill(organiser, signal.SIGKILL)
    except ProcessLookupError:
        return
    # The parent-death SIGTERM comes as the organiser's exit ends, while we wait here,
    # in the fork's callback.
    while os.getppid() == organiser:
        time.sleep(0.01)
    time.sleep(0.5)

os.register_at_fork(after_in_parent=after_in_parent)
from arena.cli import main
sys.argv = ["arena", *sys.argv[1:]]
main()
"""


def test_a_worker_whose_organiser_dies_as_it_forks_a_seat_ends(registered: Path,
                                                               tmp_path: Path) -> None:
    """Its lost SIGTERM is sent again: it stops its match and exits, leaving nothing."""
    db = registered
    driver = tmp_path / "dies_in_a_fork.py"
    driver.write_text(DIES_IN_A_FORK)
    # Long enough that a worker playing on for nobody would still play when checked.
    proc = subprocess.Popen([sys.executable, str(driver), "tournament", "run", "stop-me",
                             "--bots", "alpha,beta,gamma", "--games-per-seating", "100",
                             "--workers", "2", "--name", "doomed", "--db", str(db)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    assert proc.wait(timeout=120) == -signal.SIGKILL
    try:
        assert processes_mentioning(str(db), grace_s=30.0) == [], \
            "a worker (or its seat) outlived its organiser"
    finally:
        for pid in processes_mentioning(str(db), grace_s=0.0):
            os.kill(pid, signal.SIGKILL)

@pytest.mark.parametrize(("args", "message"), [
    (("tournament", "run", "stop-me", "--bots", "alpha,nobody"), "no bot 'nobody'"),
    (("tournament", "run", "chess", "--bots", "alpha,beta"), "unknown game 'chess'"),
    (("tournament", "run", "stop-me", "--bots", "alpha", "--seats", "2"),
     "1 bots cannot fill 2 seats"),
    (("tournament", "run", "dagens-brott", "--bots", "alpha,beta"),
     "2 players is the unofficial variant"),
    (("tournament", "resume", "nope"), "no tournament 'nope'"),
    # An unknown game, not "no leaderboard for 'go-fish'" (issue 13 B, outsider: a typo).
    (("leaderboard", "go-fish"), "unknown game 'go-fish'"),
    (("replay", "999"), "no game with id 999"),
    # Beyond SQLite's 64-bit integers (these were OverflowError tracebacks).
    (("replay", "99999999999999999999999"), "is not in the range 0<=x<=9223372036854775807"),
    (("tournament", "run", "stop-me", "--bots", "alpha,beta", "--seed",
      "99999999999999999999999"), "is not in the range 0<=x<=9223372036854775807"),
    (("results", "go-fish"), "unknown game 'go-fish'"),  # was an empty list
    (("bot", "add", "a,b", str(RANDOM_BOT)), "bot name 'a,b' must be a plain name"),
    (("bot", "add", "a@2", str(RANDOM_BOT)), "bot name 'a@2' must be a plain name"),
    (("bot", "add", "Alpha", str(RANDOM_BOT)), "differs only in case from 'alpha'"),
])
def test_bad_input_is_a_clear_error(registered: Path, args: tuple[str, ...],
                                    message: str) -> None:
    out = arena(*args, db=registered)
    assert out.returncode != 0
    assert message in out.stderr and "Traceback" not in out.stderr


@pytest.mark.parametrize("content", [b"this is not a database at all" * 100, b""])
def test_a_corrupt_or_foreign_database_is_refused_untouched(tmp_path: Path,
                                                            content: bytes) -> None:
    db = tmp_path / "arena.db"
    if content:
        db.write_bytes(content)
    else:
        conn = sqlite3.connect(db)
        conn.execute("CREATE TABLE invoices (id INTEGER)")
        conn.commit()
        conn.close()
    before = db.read_bytes()
    out = arena("bot", "list", db=db)
    assert out.returncode != 0 and "Traceback" not in out.stderr
    assert ("not a usable SQLite database" in out.stderr
            or "database of something else" in out.stderr)
    assert db.read_bytes() == before


def test_a_newer_schema_is_refused(db: Path) -> None:
    Store(db).close()
    conn = sqlite3.connect(db)
    conn.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
    conn.commit()
    conn.close()
    with pytest.raises(StoreError, match="schema version 99, newer than"):
        Store(db)


def test_a_missing_database_is_a_clear_error(tmp_path: Path) -> None:
    out = arena("leaderboard", "stop-me", db=tmp_path / "absent.db")
    assert out.returncode != 0 and "no database at" in out.stderr
    assert not (tmp_path / "absent.db").exists()


def test_the_same_content_is_one_version_and_names_are_unique(db: Path) -> None:
    store = Store(db)
    first, created = botstore.add_bot(store, "r", str(RANDOM_BOT))
    second, again = botstore.add_bot(store, "r", str(RANDOM_BOT))
    assert created and not again and first["id"] == second["id"]
    botstore.add_bot(store, "s", str(RANDOM_BOT))
    kwargs = {"game": "stop-me", "bots": ["r", "s@1"], "seats": 2, "games_per_seating": 1,
              "duplicate": False, "fmt": "round-robin", "seed": 1, "options": {},
              "settings": tournament.Settings()}
    tournament.create(store, name="same", **kwargs)
    with pytest.raises(StoreError, match="a tournament named 'same' exists already"):
        tournament.create(store, name="same", **kwargs)
    with pytest.raises(ScheduleError, match="entered twice"):
        tournament.create(store, name="twice", **{**kwargs, "bots": ["r", "r@1"]})
    store.close()


def test_a_removed_bot_enters_no_new_tournament_even_by_version(db: Path) -> None:
    store = Store(db)
    botstore.add_bot(store, "r", str(RANDOM_BOT))
    botstore.add_bot(store, "s", str(RANDOM_BOT))
    store.remove_bot("s")
    kwargs = {"game": "stop-me", "seats": 2, "games_per_seating": 1, "duplicate": False,
              "fmt": "round-robin", "seed": 1, "options": {}, "settings": tournament.Settings()}
    for spec, message in (("s", "no bot 's'"), ("s@1", "'s@1' was removed")):
        with pytest.raises(StoreError, match=message):
            tournament.create(store, name=f"with-{spec}", bots=["r", spec], **kwargs)
    assert sql(store, "SELECT * FROM tournaments") == []
    store.close()


def test_a_locked_database_is_a_clear_error_and_loses_nothing(registered: Path) -> None:
    holder = sqlite3.connect(registered)
    holder.execute("BEGIN IMMEDIATE")  # another writer holds the database
    try:
        out = arena("bot", "add", "delta", str(RANDOM_BOT), db=registered)
    finally:
        holder.rollback()
        holder.close()
    assert out.returncode != 0 and "is locked by another process" in out.stderr
    listed = json.loads(arena("bot", "list", "--json", db=registered).stdout)
    assert sorted(b["name"] for b in listed) == ["alpha", "beta", "gamma"]


@pytest.mark.parametrize(("how", "status"), [
    ("ctrl-c", 130),  # SIGINT to the whole foreground group, as a terminal sends it
    ("sigterm", 143),  # SIGTERM to the organiser alone, as a service manager sends it
])
def test_ctrl_c_stops_cleanly_and_keeps_finished_games(registered: Path, how: str,
                                                       status: int) -> None:
    cmd = [sys.executable, "-m", "arena", "tournament", "run", "stop-me", "--bots",
           "alpha,beta,gamma", "--games-per-seating", "4", "--workers", "2", "--name", "int",
           "--db", str(registered)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    deadline = time.monotonic() + 60
    while stored_games(registered) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    if how == "ctrl-c":
        os.killpg(proc.pid, signal.SIGINT)
    else:
        proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == status, err
    assert "finished games are kept" in err and "Traceback" not in err
    kept = stored_games(registered)
    assert kept >= 2
    assert processes_mentioning(str(registered)) == []
    resumed = arena("tournament", "resume", "int", db=registered)
    assert resumed.returncode == 0, resumed.stderr
    assert stored_games(registered) == 12


def test_an_older_schema_is_migrated_keeping_its_data(db: Path) -> None:
    store = Store(db)
    botstore.add_bot(store, "r", str(RANDOM_BOT))
    store.close()
    as_schema(db, 1)  # a schema-1 database, as an older Arena left it
    store = Store(db)
    assert sql_one(store, "SELECT value FROM meta WHERE key = 'schema_version'")["value"] == str(
        SCHEMA_VERSION)
    assert {r["name"] for r in sql(store, "PRAGMA table_info(games)")} >= {"moves"}
    assert sql_one(store, "SELECT name FROM sqlite_master WHERE name = 'logs'")
    assert [b["name"] for b in store.bots()] == ["r"]
    store.close()


def test_a_read_command_leaves_an_empty_file_empty(tmp_path: Path) -> None:
    db = tmp_path / "arena.db"
    db.touch()  # a valid, empty SQLite database
    for args in (("bot", "list"), ("tournament", "list"), ("results", "stop-me")):
        out = arena(*args, db=db)
        assert out.returncode != 0 and "Traceback" not in out.stderr
        assert "is empty, not an Arena database" in out.stderr
    assert db.read_bytes() == b""
    assert sorted(p.name for p in tmp_path.iterdir()) == ["arena.db"]


def test_a_database_in_a_missing_folder_is_a_clear_error(tmp_path: Path) -> None:
    out = arena("bot", "add", "r", str(RANDOM_BOT), db=tmp_path / "nowhere" / "arena.db")
    assert out.returncode != 0 and "Traceback" not in out.stderr
    assert f"the folder {str(tmp_path / 'nowhere')!r} does not exist" in out.stderr


def test_a_tournament_with_an_unknown_game_creates_no_database(tmp_path: Path) -> None:
    out = arena("tournament", "run", "chess", "--bots", "a,b", db=tmp_path / "new.db")
    assert out.returncode != 0 and "unknown game 'chess'" in out.stderr
    assert not (tmp_path / "new.db").exists()


def test_results_of_a_tournament_of_another_game_is_an_error(registered: Path) -> None:
    out = arena("tournament", "run", "stop-me", "--bots", "alpha,beta", "--workers", "1",
                "--name", "sm", db=registered)
    assert out.returncode == 0, out.stderr
    other = arena("results", "dagens-brott", "--tournament", "sm", db=registered)
    assert other.returncode != 0
    assert "tournament 'sm' is of game 'stop-me', not 'dagens-brott'" in other.stderr


def test_an_unwritable_log_dir_fails_before_the_tournament_is_created(registered: Path,
                                                                       tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    out = arena("tournament", "run", "stop-me", "--bots", "alpha,beta", "--workers", "2",
                "--log-dir", str(tmp_path / "file" / "logs"), db=registered)
    assert out.returncode != 0 and "Traceback" not in out.stderr
    assert "cannot create the folder" in out.stderr
    assert json.loads(arena("tournament", "list", "--json", db=registered).stdout) == []


def test_the_bot_store_works_from_any_folder_and_names_vanished_files(tmp_path: Path) -> None:
    home, elsewhere = tmp_path / "home", tmp_path / "elsewhere"
    home.mkdir()
    elsewhere.mkdir()

    def run_in(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
        # The default --db, relative to the folder the command runs in.
        return arena(*args, cwd=folder, env={"ARENA_DB": "arena.db"})

    for name in ("r", "s"):
        assert run_in(home, "bot", "add", name, str(RANDOM_BOT)).returncode == 0
    # Stored paths are absolute, so the database works from another folder too.
    out = run_in(elsewhere, "tournament", "run", "stop-me", "--bots", "r,s", "--workers", "1",
                 "--db", str(home / "arena.db"), "--name", "away")
    assert out.returncode == 0 and "2 of 2 games played" in out.stdout, out.stderr
    # A stored copy that vanished is one clear error, and no tournament is created.
    shutil.rmtree(home / "arena.bots" / "s")
    gone = run_in(home, "tournament", "run", "stop-me", "--bots", "r,s", "--workers", "1")
    assert gone.returncode != 0 and "Traceback" not in gone.stderr
    assert "the stored files of bot s@1" in gone.stderr and "arena bot add" in gone.stderr
    assert len(json.loads(run_in(home, "tournament", "list", "--json").stdout)) == 1
    # Registering the same files again restores the copy: same version, results kept.
    again = run_in(home, "bot", "add", "s", str(RANDOM_BOT))
    assert "unchanged: s version 1" in again.stdout
    assert run_in(home, "tournament", "run", "stop-me", "--bots", "r,s",
                  "--workers", "1").returncode == 0
    assert stored_games(home / "arena.db") == 4


def test_failed_matches_on_workers_are_reported_and_exit_non_zero(db: Path,
                                                                  tmp_path: Path) -> None:
    folder = tmp_path / "folderbot"
    folder.mkdir()
    shutil.copy(RANDOM_BOT, folder / "bot.py")
    (folder / "bot.toml").write_text(f'run = [{json.dumps(sys.executable)}, "bot.py"]\n')
    for name, path in (("f", folder), ("r", RANDOM_BOT)):
        out = arena("bot", "add", name, str(path), db=db)
        assert out.returncode == 0, out.stderr
    manifest = Path(json.loads(arena("bot", "show", "f", "--json", db=db).stdout)
                    ["versions"][0]["path"]) / "bot.toml"
    good = manifest.read_text()
    manifest.write_text("run = [")  # the stored copy breaks: every match of it fails
    out = arena("tournament", "run", "stop-me", "--bots", "f,r", "--workers", "2",
                "--name", "broken", db=db)
    assert "Traceback" not in out.stderr  # was: ValueError in the organiser
    assert out.returncode == 1 and "error: match 0" in out.stderr
    assert "arena tournament resume broken" in out.stderr
    manifest.write_text(good)
    resumed = arena("tournament", "resume", "broken", "--workers", "2", db=db)
    assert resumed.returncode == 0, resumed.stderr
    assert stored_games(db) == 2


def test_strikes_and_startup_time_are_tournament_options_too(db: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text('from protocol.client import run\nrun(lambda o, legal: "NOPE", name="bad")\n')
    for name, path in (("r", RANDOM_BOT), ("bad", bad)):
        assert arena("bot", "add", name, str(path), db=db).returncode == 0
    out = arena("tournament", "run", "stop-me", "--bots", "r,bad", "--strikes", "1",
                "--startup-ms", "4000", "--workers", "1", "--name", "strict", db=db)
    assert out.returncode == 0, out.stderr
    shown = json.loads(arena("tournament", "show", "strict", "--json", db=db).stdout)
    assert shown["settings"]["clocks"]["max_strikes"] == 1
    assert shown["settings"]["clocks"]["startup_ms"] == 4000
    # One illegal action forfeits the seat at once: it is asked once per game, not three times.
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT s.faults, s.asked FROM seats s JOIN bots b "
                            "ON b.id = s.bot_id WHERE b.name = 'bad'").fetchall()
    assert rows and all(json.loads(f) == {"illegal": 1} and asked == 1 for f, asked in rows)


def _rate_when_told(db: Path, barrier: Any, stop: Any) -> None:
    """An organiser's rating step, in its own process: update the leaderboard on cue."""
    store = Store(db)
    while True:
        barrier.wait()
        if stop.is_set():
            return
        board.update(store, "stop-me")
        barrier.wait()


def test_organisers_rating_at_the_same_moment_count_every_game_once(db: Path) -> None:
    """Two tournaments of one game (or two resumes of one) finish games at the same
    moment and both update the leaderboard: neither may rate a game the other has just
    rated (it read the rated state before the other's save, then loaded the ratings
    after it: every game between was counted twice, for good)."""
    store = Store(db)
    bots = [store.add_bot(name, name, str(RANDOM_BOT), "file")[0]["id"] for name in "abc"]
    board.environment(store, "stop-me")
    rounds, per_round = 1000, 2
    scheduled = [{"idx": i, "match": i, "deal_group": i, "seed": i, "seating": bots}
                 for i in range(rounds * per_round)]
    tid = store.create_tournament(
        {"name": "busy", "game": "stop-me", "format": "round-robin", "seats": 3,
         "games_per_seating": 1, "duplicate": False, "seed": 1, "options": {},
         "settings": {}}, bots, scheduled)
    fork = multiprocessing.get_context("fork")
    barrier, stop = fork.Barrier(5), fork.Event()
    organisers = [fork.Process(target=_rate_when_told, args=(db, barrier, stop))
                  for _ in range(4)]
    for proc in organisers:
        proc.start()
    rng = random.Random(7)
    try:
        for r in range(rounds):
            for row in scheduled[r * per_round:(r + 1) * per_round]:
                ranks = rng.sample([1, 2, 3], 3)
                store.record_game(tid, row, "stop-me", _synthetic_record(row, ranks))
            barrier.wait(timeout=30)  # go: all four update at once
            barrier.wait(timeout=30)  # all done
            played = (r + 1) * per_round
            seats = sql_one(store, "SELECT SUM(games) AS n FROM ratings")["n"]
            assert (seats, sql_one(store, "SELECT rated_games AS n FROM leaderboards")["n"]) == (
                3 * played, played), f"round {r}"
    finally:
        stop.set()
        barrier.wait(timeout=30)
        for proc in organisers:
            proc.join(30)
    ratings = stored_ratings(store, "stop-me")
    board.rebuild(store, "stop-me")
    assert stored_ratings(store, "stop-me") == ratings  # bit for bit
    store.close()


def _synthetic_record(row: dict[str, Any], ranks: list[int]) -> GameRecord:
    """A made-up record for scheduled ``row``, as the store takes one (a GameRecord)."""
    return validate({
        "game": "stop-me", "seed": row["seed"], "index": row["idx"], "reason": "synthetic",
        "decisions": 1, "steps": 1, "seats": [
            {"bot": f"bot{b}", "rank": rank, "score": 0.0, "status": "ok", "forfeited": False,
             "faults": {}, "fault_log": [], "time_ms": 1, "asked": 1, "details": {}}
            for b, rank in zip(row["seating"], ranks, strict=True)]}, seats=len(ranks))


def _synthetic_game(store: Store, tid: int, row: dict[str, Any], ranks: list[int]) -> None:
    store.record_game(tid, row, "stop-me", _synthetic_record(row, ranks))


def _slow_rebuild(db: Path, computing: Any) -> None:
    """A rebuild whose computation takes a while (0.1 s a game), saying when it started."""
    apply = Ratings.apply

    def slow(*args: Any) -> Any:
        computing.set()
        time.sleep(0.1)
        return apply(*args)

    Ratings.apply = slow  # type: ignore[method-assign]  # in this forked process only
    board.rebuild(Store(db), "stop-me")


def test_a_rebuild_blocks_no_writer_and_starts_over_when_one_rates(db: Path) -> None:
    """A rebuild computes from a snapshot without the write lock, so an organiser storing
    and rating a game meanwhile does not wait for it; as that organiser saved ratings,
    the rebuild then computes again, and what it saves equals a rebuild from scratch."""
    store = Store(db)
    bots = [store.add_bot(name, name, str(RANDOM_BOT), "file")[0]["id"] for name in "abc"]
    board.environment(store, "stop-me")
    scheduled = [{"idx": i, "match": i, "deal_group": i, "seed": i, "seating": bots}
                 for i in range(21)]
    tid = store.create_tournament(
        {"name": "long", "game": "stop-me", "format": "round-robin", "seats": 3,
         "games_per_seating": 1, "duplicate": False, "seed": 1, "options": {},
         "settings": {}}, bots, scheduled)
    rng = random.Random(3)
    for row in scheduled[:20]:
        _synthetic_game(store, tid, row, rng.sample([1, 2, 3], 3))
    board.update(store, "stop-me")
    fork = multiprocessing.get_context("fork")
    computing = fork.Event()
    rebuilding = fork.Process(target=_slow_rebuild, args=(db, computing))
    rebuilding.start()
    assert computing.wait(30)
    _synthetic_game(store, tid, scheduled[20], [2, 1, 3])
    assert board.update(store, "stop-me") == 1
    assert rebuilding.is_alive(), "the writer waited for the whole rebuild"
    rebuilding.join(60)
    assert rebuilding.exitcode == 0
    assert sql_one(store, "SELECT rated_games AS n FROM leaderboards")["n"] == 21
    assert sql_one(store, "SELECT SUM(games) AS n FROM ratings")["n"] == 63
    ratings = stored_ratings(store, "stop-me")
    board.rebuild(store, "stop-me")
    assert stored_ratings(store, "stop-me") == ratings  # bit for bit
    store.close()


def test_two_organisers_resuming_at_once_store_each_game_once(registered: Path) -> None:
    """Two `arena tournament resume T` at the same moment both play the missing games:
    each game is stored once (the second result is dropped), the ratings equal a
    rebuild, and both say how many games the tournament now has, not how many they
    happened to store first."""
    store = Store(registered)
    tournament.create(store, name="both", game="stop-me", bots=["alpha", "beta", "gamma"],
                      seats=3, games_per_seating=3, duplicate=False, fmt="round-robin",
                      seed=3, options={}, settings=tournament.Settings())
    store.close()
    cmd = [sys.executable, "-m", "arena", "tournament", "resume", "both", "--workers", "1",
           "--db", str(registered)]
    procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(2)]
    outputs = [proc.communicate(timeout=120) for proc in procs]
    for proc, (out, err) in zip(procs, outputs, strict=True):
        assert proc.returncode == 0, err
        assert "Traceback" not in err
        assert "both: 9 of 9 games played" in out
    store = Store(registered, create=False)
    idx = [r["idx"] for r in sql(store, "SELECT idx FROM games")]
    assert sorted(idx) == list(range(9))
    assert sql_one(store, "SELECT COUNT(*) AS n FROM seats")["n"] == 27
    assert store.tournament("both")["finished_at"]
    ratings = stored_ratings(store, "stop-me")
    assert sum(r["games"] for r in board.standings(store, "stop-me")) == 27
    board.rebuild(store, "stop-me")
    assert stored_ratings(store, "stop-me") == ratings  # bit for bit
    store.close()


def test_a_removed_bot_is_still_shown_and_not_removed_twice(registered: Path) -> None:
    assert arena("bot", "remove", "beta", db=registered).returncode == 0
    again = arena("bot", "remove", "beta", db=registered)
    assert again.returncode == 1 and "bot 'beta' was removed already, at " in again.stderr
    shown = arena("bot", "show", "beta", "--json", db=registered)
    assert shown.returncode == 0, shown.stderr  # its results stay, and so does its page
    assert json.loads(shown.stdout)["versions"][0]["removed_at"]
    unknown = arena("bot", "show", "nobody", db=registered)
    assert unknown.returncode == 1 and "no bot 'nobody'" in unknown.stderr


def test_the_default_seed_is_random_and_kept(registered: Path) -> None:
    """Bots may import the engines: a known seed (it was 1) would give them every deal."""
    seeds = []
    for name in ("one", "two"):
        out = arena("tournament", "run", "stop-me", "--bots", "alpha,beta", "--name", name,
                    "--workers", "1", db=registered)
        assert out.returncode == 0, out.stderr
        seeds.append(json.loads(arena("tournament", "show", name, "--json",
                                      db=registered).stdout)["seed"])
    assert seeds[0] != seeds[1] and 1 not in seeds


def test_a_write_inside_a_snapshot_is_refused(db: Path) -> None:
    """A snapshot holds no write lock: a save inside one could rest on stale reads."""
    store = Store(db)
    with store.snapshot(), pytest.raises(RuntimeError, match="inside a snapshot"), \
            store.transaction():
        pass
    with store.transaction(), store.snapshot():  # a read inside a write joins it
        assert sql_one(store, "SELECT COUNT(*) AS n FROM bots") == {"n": 0}
    store.close()
