"""One identity per thing (issue 13 B6), and log file names no bot controls (A1).

Real bots, real SQLite files, the real ``arena`` command.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from leaderboard.store import StoreError, check_tournament_name
from referee.errors import BotSpecError
from referee.match import Match, log_file, safe_label

from .helpers import arena

ROOT = Path(__file__).resolve().parents[1]
RANDOM_BOT = ROOT / "bots" / "random_bot.py"
NOISY_BOT = """\
import sys
from protocol.client import run

def act(observation, legal):
    print("thinking", file=sys.stderr, flush=True)
    return legal[0]

run(act, name="noisy")
"""


@pytest.fixture
def db(tmp_path: Path) -> Path:
    db = tmp_path / "arena.db"
    noisy = tmp_path / "noisy.py"
    noisy.write_text(NOISY_BOT)
    for name, path in (("alpha", RANDOM_BOT), ("beta", noisy)):
        out = arena("bot", "add", name, str(path), db=db)
        assert out.returncode == 0, out.stderr
    return db


@pytest.mark.slow
def test_tournaments_are_listed_and_found_by_id_as_the_web_names_them(db: Path) -> None:
    out = arena("tournament", "run", "stop-me", "--bots", "alpha,beta", "--workers", "1",
                "--name", "first-cup", db=db)
    assert out.returncode == 0, out.stderr
    (row,) = json.loads(arena("tournament", "list", "--json", db=db).stdout)
    assert row["name"] == "first-cup" and isinstance(row["id"], int)
    table = arena("tournament", "list", db=db).stdout
    assert table.splitlines()[2].startswith("┃ id ┃ name ")
    assert any(line.startswith(f"│ {row['id']:>2} │ first-cup ") for line in table.splitlines())
    by_id = json.loads(arena("tournament", "show", str(row["id"]), "--json", db=db).stdout)
    by_name = json.loads(arena("tournament", "show", "first-cup", "--json", db=db).stdout)
    assert by_id == by_name and by_name["id"] == row["id"]
    shown = arena("tournament", "show", "first-cup", db=db).stdout
    assert shown.startswith(f"first-cup (id {row['id']}): stop-me, round-robin")
    results = json.loads(arena("results", "stop-me", "--tournament", str(row["id"]), "--json",
                               db=db).stdout)
    assert {g["tournament"] for g in results} == {"first-cup"}
    missing = arena("tournament", "show", "77", db=db)
    assert missing.returncode != 0 and "no tournament '77'; known: first-cup (id" in missing.stderr


def test_a_tournament_name_cannot_be_a_number(db: Path) -> None:
    out = arena("tournament", "run", "stop-me", "--bots", "alpha,beta", "--name", "2026", db=db)
    assert out.returncode != 0 and "Traceback" not in out.stderr
    assert "tournament name '2026' is a number, and numbers are tournament ids" in out.stderr
    with pytest.raises(StoreError, match="must not be empty"):
        check_tournament_name(" ")


@pytest.mark.slow
def test_log_files_are_named_by_store_name_version_and_game_id(db: Path,
                                                               tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    out = arena("tournament", "run", "stop-me", "--bots", "alpha,beta", "--workers", "2",
                "--games-per-seating", "2", "--name", "logged", "--log-dir", str(logs), db=db)
    assert out.returncode == 0, out.stderr
    results = json.loads(arena("results", "stop-me", "--json", db=db).stdout)
    ids = sorted(g["id"] for g in results)
    # The game files, by the id that `arena replay ID` and replay/ID.html use.
    assert sorted(p.name for p in logs.glob("game-*.json")) == sorted(
        f"game-{i}.json" for i in ids)
    for game in results:
        saved = json.loads((logs / f"game-{game['id']}.json").read_text())
        replay = json.loads(arena("replay", str(game["id"]), "--json", db=db).stdout)
        assert saved["seed"] == game["seed"] and saved["events"] == replay["events"]
    # The stderr files, by the store's name and version: not the manifest's name
    # ("noisy" here), which the bot's author chose.
    stderr = sorted(str(p.relative_to(logs)) for p in logs.rglob("*.stderr.log"))
    assert stderr == ["match-00000/seat0-alpha@1.stderr.log",
                      "match-00000/seat1-beta@1.stderr.log",
                      "match-00001/seat0-beta@1.stderr.log",
                      "match-00001/seat1-alpha@1.stderr.log"]
    assert "thinking" in (logs / "match-00000" / "seat1-beta@1.stderr.log").read_text()


@pytest.mark.parametrize(("text", "label"), [
    ("alpha@2", "alpha@2"), ("random_bot", "random_bot"), ("../../etc/cron.d/x",
                                                           "_.._etc_cron.d_x"),
    ("..", "bot"), ("", "bot"), ("-rf", "rf"), ("a b\nc", "a_b_c"), ("é" * 100, "_" * 64),
])
def test_a_label_is_one_safe_part_of_a_file_name(text: str, label: str) -> None:
    assert safe_label(text) == label


def test_a_log_path_never_leaves_its_folder(tmp_path: Path) -> None:
    assert log_file(tmp_path, "seat0-x.stderr.log") == tmp_path / "seat0-x.stderr.log"
    with pytest.raises(BotSpecError, match="leaves the folder"):
        log_file(tmp_path, "../seat0-x.stderr.log")


def test_a_hostile_label_writes_its_log_inside_the_log_dir(tmp_path: Path) -> None:
    logs = tmp_path / "deep" / "logs"
    match = Match("stop-me", [str(RANDOM_BOT), "builtin:random"], 1, 1, log_dir=logs,
                  labels=["../../../escaped", "builtin:random"])
    (record,) = match.run()
    assert record.seats[0].status == "ok"
    assert sorted(p.name for p in logs.iterdir()) == ["game-0000.json",
                                                      "seat0-_.._.._escaped.stderr.log"]
    assert [p.parent for p in tmp_path.rglob("*escaped*")] == [logs]
