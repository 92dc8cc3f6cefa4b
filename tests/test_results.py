"""Typed, versioned results (issue 14 §2): game records, worker outcomes and supervisor
reports are msgspec Structs; a record of an unknown schema version is refused by name;
a record is validated where it is stored, and a game stored twice counts once.

Records here come from real games (built-in bots through the real match runner), and
are stored in a real SQLite file.
"""

from __future__ import annotations

from collections.abc import Generator, Iterable
from pathlib import Path

import msgspec
import pytest

from arena import tournament
from arena.executors import (
    Executor,
    GamePlayed,
    InlineExecutor,
    MatchDone,
    MatchJob,
    Outcome,
)
from arena.jobs import MatchLogs, decode_outcome, encode_outcome
from leaderboard import board
from leaderboard.store import Store
from referee.match import Match
from referee.records import (
    KNOWN_SCHEMAS,
    FaultKind,
    GameRecord,
    ResultError,
    decode_record,
    encode_record,
    validate,
)
from referee.reports import (
    Acted,
    Died,
    Faulted,
    Greeted,
    Stop,
    decode_command,
    decode_report,
    encode_command,
    encode_report,
)

from .helpers import sql, sql_one

BOTS = ["builtin:heuristic", "builtin:random", "builtin:random"]


@pytest.fixture(scope="module")
def record() -> GameRecord:
    return Match("stop-me", BOTS, 1, seed=3).run()[0]


def test_a_record_crosses_a_process_boundary_whole(record: GameRecord) -> None:
    back = decode_record(encode_record(record))
    assert back == record and back.replay_json() == record.replay_json()
    assert back.schema == 1 and KNOWN_SCHEMAS == (1,)


def test_a_record_of_an_unknown_schema_version_is_refused_by_name(record: GameRecord) -> None:
    future = msgspec.structs.replace(record, schema=2)
    with pytest.raises(ResultError, match=r"schema version 2 cannot be read: this arena "
                                          r"knows version\(s\) 1"):
        decode_record(encode_record(future))
    with pytest.raises(ResultError, match="schema version 2"):
        validate(future, seats=3)
    as_json = {**msgspec.to_builtins(record), "schema": 7, "seats": "changed"}
    with pytest.raises(ResultError, match="schema version 7"):  # the version, not a field
        validate(as_json, seats=3)
    # In a worker's message too: the outcome is refused, naming the version.
    with pytest.raises(ResultError, match="schema version 2"):
        decode_outcome(encode_outcome(GamePlayed(4, 0, future)))


def test_a_record_is_validated_by_type_seats_and_ranks(record: GameRecord) -> None:
    assert validate(msgspec.to_builtins(record), seats=3) == record
    with pytest.raises(ResultError, match="has 3 seats, the schedule 4"):
        validate(record, seats=4)
    with pytest.raises(ResultError, match=r"ranks \[1, 1, 3\] are not|ranks \[1, 3, 3\]"):
        bad = tuple(msgspec.structs.replace(s, rank=r) for s, r in zip(record.seats, [1, 3, 3]))
        validate(msgspec.structs.replace(record, seats=bad), seats=3)
    with pytest.raises(ResultError, match="a void game ranks every seat 0"):
        validate(msgspec.structs.replace(record, void=True), seats=3)
    with pytest.raises(ResultError, match="seat status 'winning' is not one of"):
        odd = (msgspec.structs.replace(record.seats[0], status="winning"), *record.seats[1:])
        validate(msgspec.structs.replace(record, seats=odd), seats=3)
    with pytest.raises(ResultError, match="not valid: Expected `int`, got `str`"):
        validate({**msgspec.to_builtins(record), "seed": "3"}, seats=3)


def test_fault_kinds_keep_their_stored_names() -> None:
    assert [k.value for k in FaultKind] == ["timeout", "crash", "malformed", "illegal",
                                            "no_show"]
    assert FaultKind.NO_SHOW == "no_show" and f"{FaultKind.CRASH}" == "crash"


def test_outcomes_and_reports_are_tagged_structs(record: GameRecord) -> None:
    for outcome in (GamePlayed(1, 0, record), MatchLogs(1, {0: "stderr"}), MatchDone(1)):
        assert decode_outcome(encode_outcome(outcome)) == outcome
    assert msgspec.msgpack.decode(encode_outcome(MatchDone(2)))["type"] == "done"
    for report in (Greeted("x"), Acted(3, {"a": [1]}), Faulted(FaultKind.MALFORMED, "bad")):
        assert decode_report(encode_report(report)) == report
    assert isinstance(decode_report(b"\x93\x01"), Died)  # never an exception: a dead seat
    assert msgspec.msgpack.decode(encode_report(Greeted("x"))) == {"type": "hello", "name": "x"}
    for command in (Stop(0.2), Stop()):
        assert decode_command(encode_command(command)) == command
    assert decode_command(b"\xc1") == Stop()  # not a command: the supervisor stops


class Replaying(Executor):
    """An executor that yields the given records for the jobs' games (no play at all):
    as one that ran elsewhere, and sent what it sent."""

    def __init__(self, records: dict[int, GameRecord]) -> None:
        self.records = records  # by the scheduled game's index

    def stream(self, jobs: Iterable[MatchJob]) -> Generator[Outcome, None, None]:
        for job in jobs:
            for position, row in enumerate(job.games):
                if row["idx"] in self.records:
                    yield GamePlayed(job.key, position, self.records[row["idx"]])
            yield MatchDone(job.key)


def _tournament(store: Store, name: str) -> None:
    for bot in ("builtin:heuristic", "builtin:random"):
        tournament._entrant(store, "stop-me", bot)
    tournament.create(store, name=name, game="stop-me", bots=BOTS[:2], seats=2,
                      games_per_seating=1, duplicate=False, fmt="round-robin", seed=1,
                      options={}, settings=tournament.Settings())


def test_a_tournament_stores_only_valid_results_of_its_schedule(tmp_path: Path) -> None:
    """The executor is passed in (issue 14 §3); what it streams is validated where it
    is stored: a record of another version, game or seed is refused and not stored."""
    store = Store(tmp_path / "arena.db")
    _tournament(store, "cup")
    rows = store.missing_games(store.tournament("cup")["id"])
    assert len(rows) == 2
    real = [Match("stop-me", BOTS[:2], 1, seed=0, seeds=[r["seed"]]).run()[0] for r in rows]
    future = msgspec.structs.replace(real[0], schema=3)
    done = tournament.run(store, "cup", Replaying({0: future, 1: real[1]}))
    assert done.done == 1 and len(done.errors) == 1 and "schema version 3" in done.errors[0]
    wrong_seed = msgspec.structs.replace(real[0], seed=real[0].seed + 1)
    done = tournament.run(store, "cup", Replaying({0: wrong_seed}))
    assert done.done == 1 and "seed" in done.errors[0]
    done = tournament.run(store, "cup", Replaying({0: real[0]}))
    assert (done.done, done.errors) == (2, [])
    store.close()


def test_a_result_stored_twice_counts_once(tmp_path: Path, record: GameRecord) -> None:
    store = Store(tmp_path / "arena.db")
    _tournament(store, "twice")
    t = store.tournament("twice")
    row = store.missing_games(t["id"])[0]
    record = validate(Match("stop-me", BOTS[:2], 1, 0, seeds=[row["seed"]]).run()[0], seats=2)
    first = store.record_game(t["id"], row, "stop-me", record)
    assert first is not None
    assert store.record_game(t["id"], row, "stop-me", record) is None
    assert sql_one(store, "SELECT COUNT(*) AS n FROM games")["n"] == 1
    assert sql_one(store, "SELECT COUNT(*) AS n FROM seats")["n"] == 2
    stored = sql(store, "SELECT rank, status FROM seats ORDER BY seat")
    assert [(r["rank"], r["status"]) for r in stored] == [
        (s.rank, s.status) for s in record.seats]
    store.close()


def test_a_tournament_rates_its_prefix_on_a_ladders_board(tmp_path: Path) -> None:
    """Found by review: on a leaderboard rated in match-number order (a ladder's), a
    tournament's finished prefix, a (tournament, idx) key, was compared with the board's
    three-part key, and the run failed on its first game. It rates, as a rebuild would."""
    store = Store(tmp_path / "arena.db")
    store.ensure_leaderboard("stop-me", 25.0, 25 / 3, 25 / 6, 25 / 300, 0.0, order="match_no")
    _tournament(store, "cup")
    progress = tournament.run(store, "cup", InlineExecutor())
    assert progress.errors == [] and store.stored_count(store.tournament("cup")["id"]) == 2
    live = {(r.bot_id, r.mu, r.sigma, r.games) for r in store.ratings_of("stop-me")}
    assert store.leaderboard("stop-me").order == "match_no" and len(live) == 2
    board.rebuild(store, "stop-me")
    assert {(r.bot_id, r.mu, r.sigma, r.games) for r in store.ratings_of("stop-me")} == live
    store.close()
