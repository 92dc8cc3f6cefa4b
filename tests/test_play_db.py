"""``arena play --db`` keeps its games as a quick play (issue 19 §4): stored, replayable
by ``arena replay`` and the web pages, repeatable, never rated, refused clearly where
it cannot be stored.

Real ``arena`` processes, a real bot program and real SQLite files.
"""

from __future__ import annotations

import json
import shutil
import signal
import sqlite3
import subprocess
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from arena import interrupts, quickplay, tournament
from arena.web.site import export_html, render
from leaderboard.store import PLAY_FORMAT, Store, StoreReader

from .helpers import ROOT, arena

STOP_ME_BOT = ROOT / "bots" / "stop_me_bot.py"


def _play(db: Path, *args: str, games: int = 3, bot: Path = STOP_ME_BOT) -> dict[str, Any]:
    """``arena play stop-me BOT builtin:random --games GAMES ARGS --json --db DB``."""
    done = arena("play", "stop-me", str(bot), "builtin:random", "--games", str(games),
                 "--json", *args, db=db)
    assert done.returncode == 0, done.stderr
    data: dict[str, Any] = json.loads(done.stdout)
    return data


def test_a_quick_play_is_stored_and_replays_in_the_cli_and_the_web(tmp_path: Path) -> None:
    db, logs = tmp_path / "quick.db", tmp_path / "logs"
    data = _play(db, "--log-dir", str(logs))
    stored = data["stored"]
    ids = stored["game_ids"]
    assert len(ids) == len(data["games"]) == 3
    assert stored["db"] == str(db) and stored["rated"] is False
    assert stored["play"].startswith("play ")
    assert stored["replay"] == f"arena replay {ids[0]} --db {db}"
    with closing(StoreReader(db)) as reader:
        t = reader.tournament(stored["play"])
        assert (t["format"], t["id"], t["scheduled"]) == (PLAY_FORMAT,
                                                          stored["tournament_id"], 3)
        assert t["finished_at"] is not None
        assert [b["name"] for b in reader.bots()] == ["builtin:random", "stop_me_bot"]
        for game_id, seat in ((ids[0], None), (ids[1], 0), (ids[2], 1)):
            page = f"{game_id}.html" if seat is None else f"{game_id}-seat{seat}.html"
            status, html = render(reader, ["replay", page])
            assert status == 200 and "stop_me_bot" in html, html
        status, html = render(reader, ["tournament", f"{stored['tournament_id']}.html"])
        assert status == 200 and all(f"replay/{i}.html" in html for i in ids), html
        site = tmp_path / "site"
        export_html(reader, site)
    assert (site / "replay" / f"{ids[0]}.html").is_file()
    assert (site / "replay" / f"{ids[0]}-seat1.html").is_file()
    for game_id, played in zip(ids, data["games"], strict=True):
        text = arena("replay", str(game_id), db=db)
        assert text.returncode == 0, text.stderr
        assert "seat 0: stop_me_bot v1" in text.stdout
        assert "seat 1: builtin:random v1" in text.stdout
        got = json.loads(arena("replay", str(game_id), "--json", db=db).stdout)
        assert (got["tournament"], got["seed"]) == (stored["play"], played["seed"])
        assert [s["rank"] for s in got["seats"]] == [s["rank"] for s in played["seats"]]
        # The stored events are the game played: its log, written as it ended, by game id.
        logged = json.loads((logs / f"game-{game_id}.json").read_text())
        assert got["events"] == logged["events"]
    seat = json.loads(arena("replay", str(ids[0]), "--json", "--seat", "1", db=db).stdout)
    assert seat["seed"] is None and seat["events"]


def test_the_text_output_says_where_the_games_went(tmp_path: Path) -> None:
    db = tmp_path / "quick.db"
    done = arena("play", "stop-me", str(STOP_ME_BOT), "builtin:random", "--games", "2",
                 "--name", "my test", db=db)
    assert done.returncode == 0, done.stderr
    assert "Summary" in done.stdout
    assert (f"stored 2 game(s) in {db} as quick play 'my test' (tournament 1, not rated): "
            f"game ids 1..2") in done.stdout
    assert f"replay one with: arena replay 1 --db {db}" in done.stdout


def test_runs_again_add_new_plays_and_versions(tmp_path: Path) -> None:
    db, bot = tmp_path / "quick.db", tmp_path / "mine.py"
    shutil.copy(STOP_ME_BOT, bot)
    first = _play(db, bot=bot, games=2)["stored"]
    second = _play(db, bot=bot, games=2)["stored"]
    assert second["play"] != first["play"]
    assert second["game_ids"] == [first["game_ids"][-1] + 1, first["game_ids"][-1] + 2]
    bot.write_text(bot.read_text() + "\n# changed\n")
    third = _play(db, bot=bot, games=1)["stored"]
    with closing(StoreReader(db)) as reader:
        assert [(b["name"], b["version"]) for b in reader.bots()] == [
            ("builtin:random", 1), ("mine", 1), ("mine", 2)]
        assert len(reader.game_ids()) == 5
    assert "seat 0: mine v2" in arena("replay", str(third["game_ids"][0]), db=db).stdout
    again = arena("play", "stop-me", "builtin:random", "builtin:heuristic", "--name",
                  first["play"], db=db)
    assert again.returncode == 1 and "choose another --name" in again.stderr, again.stderr
    with closing(StoreReader(db)) as reader:
        assert len(reader.game_ids()) == 5


def test_plays_started_in_the_same_second_get_names_of_their_own(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(quickplay, "_default_names",
                        lambda: ["play 2026-12-03 15:40:12", "play 2026-12-03 15:40:12 (2)"])
    with closing(Store(tmp_path / "quick.db")) as store:
        names = [quickplay.start(store, game="stop-me", bots=["builtin:random"] * 2, count=1,
                                 seed=1, options={}, settings=tournament.Settings()).name
                 for _ in range(2)]
        assert names == ["play 2026-12-03 15:40:12", "play 2026-12-03 15:40:12 (2)"]
        with pytest.raises(Exception, match="no free name"):
            quickplay.start(store, game="stop-me", bots=["builtin:random"] * 2, count=1,
                            seed=1, options={}, settings=tournament.Settings())


def _tournament(db: Path, name: str, seed: int) -> None:
    done = arena("tournament", "run", "stop-me", "--bots", "builtin:random,builtin:heuristic",
                 "--games-per-seating", "3", "--seed", str(seed), "--name", name,
                 "--workers", "1", db=db)
    assert done.returncode == 0, done.stderr


def _board(db: Path) -> Any:
    done = arena("leaderboard", "stop-me", "--json", db=db)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_quick_plays_leave_the_leaderboard_its_rebuild_and_head_to_head_alone(
        tmp_path: Path) -> None:
    """The same two tournaments with a quick play between them, and without: the same
    ratings, bit for bit, before and after a rebuild, and the same head-to-head."""
    with_play, without = tmp_path / "with.db", tmp_path / "without.db"
    for db in (with_play, without):
        _tournament(db, "first", 7)
    before = _board(with_play)
    play = arena("play", "stop-me", "builtin:heuristic", "builtin:random", "--games", "6",
                 "--json", db=with_play)
    assert play.returncode == 0, play.stderr
    assert _board(with_play) == before
    for db in (with_play, without):
        _tournament(db, "second", 8)
    assert _board(with_play) == _board(without) != before
    rebuilt = arena("leaderboard", "rebuild", "stop-me", db=with_play)
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert _board(with_play) == _board(without)
    with closing(StoreReader(with_play)) as a, closing(StoreReader(without)) as b:
        assert len(a.game_ids()) == len(b.game_ids()) + 6
        assert a.head_to_head_pairs("stop-me") == b.head_to_head_pairs("stop-me")
        board, other = a.leaderboard("stop-me"), b.leaderboard("stop-me")
        assert board is not None and other is not None
        assert board.rated_games == other.rated_games
        # The play's unrated games sort before the second tournament's: were they counted
        # as waiting, every update of the board would be a whole rebuild.
        assert not a.unrated_before("stop-me", board.last_key)
        rated = sqlite3.connect(with_play).execute(
            "SELECT COUNT(*) FROM games g JOIN tournaments t ON t.id = g.tournament_id "
            "WHERE t.format = 'play' AND g.rated = 1").fetchone()[0]
        assert rated == 0
    resume = arena("tournament", "resume", json.loads(play.stdout)["stored"]["play"],
                   db=with_play)
    assert resume.returncode == 1 and "quick play" in resume.stderr, resume.stderr


def test_a_quick_play_only_of_built_ins_on_a_fresh_database_makes_no_leaderboard(
        tmp_path: Path) -> None:
    db = tmp_path / "quick.db"
    arena("play", "stop-me", "builtin:heuristic", "builtin:random", db=db)
    board = arena("leaderboard", "stop-me", db=db)
    assert board.returncode == 1 and "no leaderboard" in board.stderr


def _unchanged(db: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``arena play`` on ``db`` with ``args``, which must fail naming ``db``, changing
    nothing there."""
    before = db.read_bytes() if db.is_file() else None
    done = arena("play", "stop-me", str(STOP_ME_BOT), "builtin:random", *args, db=db)
    assert done.returncode in (1, 2), (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr and str(db) in done.stderr, done.stderr
    assert "Summary" not in done.stdout  # refused before any game was played
    assert (db.read_bytes() if db.is_file() else None) == before
    return done


def test_a_folder_a_corrupt_file_or_another_database_is_a_clear_error(tmp_path: Path) -> None:
    folder = tmp_path / "folder.db"
    folder.mkdir()
    assert "is a directory" in _unchanged(folder).stderr
    corrupt = tmp_path / "corrupt.db"
    corrupt.write_bytes(b"this is not sqlite" * 100)
    assert "not a usable SQLite database" in _unchanged(corrupt).stderr
    truncated = tmp_path / "truncated.db"
    _play(tmp_path / "good.db", games=1)
    truncated.write_bytes((tmp_path / "good.db").read_bytes()[:3000])
    _unchanged(truncated)
    other = tmp_path / "other.db"
    with closing(sqlite3.connect(other)) as conn:
        conn.execute("CREATE TABLE notes (text TEXT)")
        conn.execute("INSERT INTO notes VALUES ('keep me')")
        conn.commit()
    assert "Arena will not touch it" in _unchanged(other).stderr
    missing = tmp_path / "no such folder" / "quick.db"
    assert "does not exist" in _unchanged(missing).stderr


def test_an_unwritable_database_is_a_clear_error_and_keeps_its_games(tmp_path: Path) -> None:
    if shutil.which("chattr") is None:
        pytest.skip("chattr is not installed")
    db = tmp_path / "quick.db"
    kept = _play(db, games=2)["stored"]["game_ids"]
    subprocess.run(["chattr", "+i", str(db)], check=True)
    try:
        done = _unchanged(db)
    finally:
        subprocess.run(["chattr", "-i", str(db)], check=True)
    assert "read-only" in done.stderr
    with closing(StoreReader(db)) as reader:
        assert reader.game_ids() == kept


def test_a_database_that_keeps_a_ladder_takes_no_quick_play_bot(tmp_path: Path) -> None:
    db = tmp_path / "ladder.db"
    with closing(Store(db)) as store:
        store.create_ladder(
            {"name": "open", "game": "stop-me", "format": tournament.LADDER, "seats": 2,
             "games_per_seating": 1, "duplicate": False, "seed": 1, "options": {},
             "settings": tournament.Settings().to_json()},
            {"seat_counts": [2], "same_author": False, "baselines": [], "crash_streak": 5,
             "placement_sigma": 3.0})
    done = _unchanged(db)
    assert "ladder 'open'" in done.stderr and "database of their own" in done.stderr
    with closing(StoreReader(db)) as reader:
        assert reader.bots() == []


def test_name_without_db_is_a_usage_error() -> None:
    done = arena("play", "stop-me", "builtin:random", "builtin:random", "--name", "x")
    assert done.returncode == 2 and "give --db too" in done.stderr


def test_a_signal_while_a_game_is_stored_waits_for_the_step_to_end() -> None:
    """What keeps the report and the store of an interrupted play alike: a SIGTERM in
    the middle of :func:`arena.interrupts.deferred` ends it only once the block is done."""
    previous = signal.getsignal(signal.SIGTERM)

    def term(signum: int, frame: object) -> None:
        raise SystemExit(143)

    signal.signal(signal.SIGTERM, term)
    done: list[str] = []
    try:
        with pytest.raises(SystemExit) as stop, interrupts.deferred():
            signal.raise_signal(signal.SIGTERM)
            done.append("stored")
            signal.raise_signal(signal.SIGTERM)  # a second one is delivered once
            done.append("reported")
        assert stop.value.code == 143 and done == ["stored", "reported"]
        assert signal.getsignal(signal.SIGTERM) is term  # the handler is back
    finally:
        signal.signal(signal.SIGTERM, previous)
