"""The continuous ladder with built-in bots (played in process, so fast): a run through
the CLI, rated by match number and rebuilt exactly, recomputed with the ``trueskill``
package; the snapshot's contract; the organiser's pause and resume; the finals (the
roster frozen, tau 0 from their first match, submissions of the game refused, then
the ladder finished); in-flight games left by a kill, replayed or withdrawn
(issue 16 §1-§3)."""

from __future__ import annotations

import json
import os
from collections.abc import Generator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import trueskill
from starlette.testclient import TestClient

from arena import accounts
from arena.executors import InlineExecutor, MatchJob, Outcome, ProcessExecutor
from arena.ladder import actions, service, snapshot
from arena.ladder.roster import roster
from arena.ladder.tally import Tally
from arena.submissions.accept import precheck
from arena.tournament import Settings
from arena.web.competition import competition_app
from arena.web.config import ServerConfig, parse_config
from leaderboard import board
from leaderboard.store import Store, StoreError, SubmissionLimitError

from .helpers import RANDOM_BOT, Invoke, sql, sql_one

BASELINES = "builtin:random,builtin:heuristic"
SNAPSHOT_KEYS = {"name", "game", "state", "seat_counts", "duplicate", "games", "failures",
                 "heartbeat_at", "finals", "standings", "in_flight", "queue", "recent"}
STANDING_KEYS = {"rank", "bot", "version", "author", "mu", "sigma", "low", "high",
                 "ahead_of_next", "significant", "games", "games_last_hour", "last_fault",
                 "paused"}


def direct_ratings(store: Store, game: str) -> dict[int, tuple[float, float]]:
    """The board recomputed with the trueskill package alone, in match-number order, with
    tau switched at each tau epoch (issue 16 §3)."""
    env = sql_one(store, "SELECT * FROM leaderboards WHERE game = ?", (game,))
    epochs = sql(store, "SELECT from_match_no, tau FROM tau_epochs WHERE game = ? "
                        "ORDER BY from_match_no", (game,))

    def ts(tau: float) -> trueskill.TrueSkill:
        return trueskill.TrueSkill(mu=env["mu"], sigma=env["sigma"], beta=env["beta"],
                                   tau=tau, draw_probability=env["draw_probability"])

    ratings: dict[int, trueskill.Rating] = {}
    for g in sql(store, "SELECT g.id, sc.match_no FROM games g JOIN schedule sc ON "
                        "sc.tournament_id = g.tournament_id AND sc.idx = g.idx WHERE "
                        "g.game = ? AND g.void = 0 ORDER BY sc.match_no, g.tournament_id, "
                        "g.idx", (game,)):
        tau = env["tau"]
        for epoch in epochs:
            if g["match_no"] >= epoch["from_match_no"]:
                tau = epoch["tau"]
        seats = sql(store, "SELECT bot_id, rank FROM seats WHERE game_id = ? ORDER BY seat",
                    (g["id"],))
        rated = ts(tau).rate([(ratings.get(s["bot_id"], ts(tau).create_rating()),)
                              for s in seats], ranks=[s["rank"] - 1 for s in seats])
        for s, (r,) in zip(seats, rated, strict=True):
            ratings[s["bot_id"]] = r
    return {k: (r.mu, r.sigma) for k, r in ratings.items()}


def stored(store: Store, game: str) -> dict[int, tuple[float, float]]:
    return {r.bot_id: (r.mu, r.sigma) for r in store.ratings_of(game)}


def test_a_ladder_runs_from_the_cli_rates_by_match_number_and_rebuilds_exactly(
        cli: Invoke, tmp_path: Path) -> None:
    db = str(tmp_path / "arena.db")
    out = cli("ladder", "run", "stop-me", "--baselines", BASELINES, "--games", "6",
              "--workers", "1", "--seed", "5", "--db", db)
    assert out.exit_code == 0, out.output
    assert "ladder stop-me-ladder: created (stop-me, seats 2,3,4)" in out.stdout
    assert "6 games played in this run, 6 in all" in out.stdout
    again = cli("ladder", "run", "stop-me", "--games", "2", "--workers", "1", "--db", db)
    assert again.exit_code == 0 and "2 games played in this run, 8 in all" in again.stdout
    repeated = cli("ladder", "run", "stop-me", "--baselines", BASELINES, "--games", "1",
                   "--workers", "1", "--seed", "5", "--seats", "2,3,4", "--deadline-ms",
                   "1000", "--strikes", "3", "--db", db)  # a service unit's command again
    assert repeated.exit_code == 0 and "1 game played in this run, 9 in all" in \
        repeated.stdout, repeated.output
    changed = cli("ladder", "run", "stop-me", "--seats", "3", "--db", db)
    assert changed.exit_code == 1 and "settings were fixed when it was created" in changed.stderr
    clocks = cli("ladder", "run", "stop-me", "--deadline-ms", "500", "--db", db)
    assert clocks.exit_code == 1 and "without --deadline-ms" in clocks.stderr
    store = Store(db)
    assert store.leaderboard("stop-me").order == "match_no"
    matches = sql(store, "SELECT idx, match, match_no FROM schedule ORDER BY idx")
    assert [m["idx"] for m in matches] == list(range(9))
    assert [m["match_no"] for m in matches] == sorted({m["match_no"] for m in matches})
    before = stored(store, "stop-me")
    for bot, expected in direct_ratings(store, "stop-me").items():
        assert before[bot] == pytest.approx(expected, abs=1e-9)
    board.rebuild(store, "stop-me")
    assert stored(store, "stop-me") == before  # bit for bit
    shown = json.loads(cli("ladder", "show", "stop-me-ladder", "--json", "--db", db).stdout)
    assert set(shown) == SNAPSHOT_KEYS
    assert shown == snapshot.snapshot(store, "stop-me-ladder")
    assert shown["state"] == "stopped" and shown["games"] == 9 and shown["failures"] == 0
    assert [set(r) for r in shown["standings"]] == [STANDING_KEYS] * 2
    assert sorted(r["games"] for r in shown["standings"]) == [9, 9]
    top = shown["standings"][0]
    assert top["low"] == pytest.approx(top["mu"] - 1.96 * top["sigma"])
    assert len(shown["recent"]) == 9 and shown["recent"][0]["idx"] == 8
    assert sorted(shown["queue"]) == ["builtin:heuristic@1", "builtin:random@1"]
    status = json.loads(cli("ladder", "status", "stop-me-ladder", "--json", "--db", db).stdout)
    assert status["running"] is False and status["games"] == 9 and status["in_flight"] == 0
    listed = json.loads(cli("ladder", "list", "--json", "--db", db).stdout)
    assert [r["name"] for r in listed] == ["stop-me-ladder"]
    resume = cli("tournament", "resume", "stop-me-ladder", "--db", db)
    assert resume.exit_code == 1 and "is a ladder" in resume.stderr
    store.close()


@pytest.fixture
def ladder(tmp_path: Path) -> Store:
    """A store with a ladder 'L' of stop-me, two built-in baselines, 2 seats."""
    store = Store(tmp_path / "arena.db")
    service.create(store, "L", service.LadderSpec(
        "stop-me", (2,), baselines=("builtin:random", "builtin:heuristic")), 11, Settings())
    return store


def run(store: Store, games: int | None, until_s: float | None = None) -> service.RunResult:
    until = None if until_s is None else datetime.now(UTC) + timedelta(seconds=until_s)
    return service.Runner(store, "L", InlineExecutor(), games=games, until=until,
                          poll_s=0.01).run()


def test_the_organiser_pauses_and_resumes_a_version(ladder: Store) -> None:
    run(ladder, 2)
    paused = actions.pause(ladder, "L", "builtin:random", "testing")
    with pytest.raises(StoreError, match="paused already"):
        actions.pause(ladder, "L", "builtin:random@1")
    entry = next(e for e in roster(ladder, ladder.ladder("L")).entries
                 if e.bot_id == paused.bot_id)
    assert entry.paused and entry.paused["reason"] == "paused by the organiser: testing"
    # One bot left: no match can be made, and the ladder waits (until its --until).
    assert run(ladder, None, until_s=0.5).played == 0
    actions.resume(ladder, "L", "builtin:random")
    with pytest.raises(StoreError, match="not paused"):
        actions.resume(ladder, "L", "builtin:random")
    with pytest.raises(StoreError, match="is not on ladder 'L'"):
        actions.pause(ladder, "L", "nobody")
    assert run(ladder, 2).played == 2


def test_games_a_kill_left_are_replayed_or_withdrawn(ladder: Store) -> None:
    """The schedule a killed runner left: a match whose bots are all on the roster is
    played again (its games stored once), one with a bot gone is withdrawn."""
    run(ladder, 2)
    t = ladder.ladder("L")
    ids = [b for b in t.baselines]
    ladder.extend_schedule(t.tournament_id, [
        {"idx": t.scheduled, "match": 3, "deal_group": 9, "seed": 1234, "seating": ids}])
    ladder.extend_schedule(t.tournament_id, [
        {"idx": t.scheduled + 1, "match": 4, "deal_group": 9, "seed": 99,
         "seating": [ids[0], 999_999]}])
    done = run(ladder, 1)
    assert done.withdrawn == 1 and done.played == 2  # match 3 again, then one new game
    games = sql(ladder, "SELECT idx, seed FROM games ORDER BY idx")
    assert [g["idx"] for g in games] == [0, 1, 2, 4]
    assert games[2]["seed"] == 1234
    info = snapshot.snapshot(ladder, "L")
    assert info["failures"] == 1 and info["in_flight"] == [] and info["games"] == 4


def test_finals_freeze_the_roster_set_tau_0_refuse_submissions_then_end(
        ladder: Store, tmp_path: Path) -> None:
    run(ladder, 3)
    t = ladder.ladder("L")
    assert ladder.ladder_in_finals("stop-me") is None
    ladder.extend_schedule(t.tournament_id, [  # a match a kill left, of a bot not on it
        {"idx": t.scheduled, "match": 4, "deal_group": 9, "seed": 5,
         "seating": [t.baselines[0], 999_999]}])
    finals = actions.start_finals(ladder, "L", 3)
    assert finals.finalists == t.baselines and finals.finals_games == 3
    assert ladder.tau_epochs("stop-me") == [(finals.finals_from, 0.0)]
    assert ladder.ladder_in_finals("stop-me") == "L"
    with pytest.raises(StoreError, match="began its finals with --games-per-bot 3"):
        actions.start_finals(ladder, "L", 4)
    # A bot added during the finals never enters them.
    ladder.add_bot("late", "h-late", str(RANDOM_BOT), "file")
    assert "late" not in [e.name for e in roster(ladder, ladder.ladder("L")).entries]
    author, _ = accounts.add_author(ladder, "ada")
    config = ServerConfig()
    with pytest.raises(SubmissionLimitError, match="closed while ladder 'L' plays its finals"):
        precheck(ladder, config, author, "newbot", "stop-me", owned=False)
    done = run(ladder, 100)
    assert done.finished and done.withdrawn == 1
    info = snapshot.snapshot(ladder, "L")
    assert info["state"] == "finished"
    assert info["finals"] == {"games_per_bot": 3, "from_match": finals.finals_from,
                              "started_at": finals.finals_started_at}
    finals_games = sql(ladder, "SELECT COUNT(*) AS n FROM games g JOIN schedule sc ON "
                               "sc.tournament_id = g.tournament_id AND sc.idx = g.idx "
                               "WHERE sc.match_no >= ?", (finals.finals_from,))
    assert finals_games[0]["n"] == 3  # two finalists, two seats: 3 games give each 3
    assert ladder.ladder_in_finals("stop-me") is None
    precheck(ladder, config, author, "newbot", "stop-me", owned=False)
    with pytest.raises(StoreError, match="finished at"):
        run(ladder, 1)
    before = stored(ladder, "stop-me")
    for bot, expected in direct_ratings(ladder, "stop-me").items():  # the finals' tau 0
        assert before[bot] == pytest.approx(expected, abs=1e-9)
    board.rebuild(ladder, "stop-me")
    assert stored(ladder, "stop-me") == before


def test_a_second_runner_is_refused_naming_the_first(ladder: Store) -> None:
    first = service.Runner(ladder, "L", InlineExecutor(), games=1)
    first._lock()
    ladder.ladder_heartbeat(ladder.ladder("L").id, "host-a pid 1")
    try:
        with pytest.raises(service.LadderBusy, match="is run by host-a pid 1"):
            run(ladder, 1)
    finally:
        first._unlock()
    assert run(ladder, 1).played == 1


def test_bad_ladders_are_refused_clearly(tmp_path: Path, cli: Invoke) -> None:
    db = str(tmp_path / "a.db")
    for args, message in (
            (("--seats", "1"), "stop-me seats 2 to 6 players, not 1"),
            (("--seats", "x"), "expected seat counts such as 3,4"),
            (("--baselines", "builtin:nope"), "no built-in policy 'nope'"),
            (("--games", "3", "--until", "1h"), "not both"),
            (("--until", "soon"), "neither a time"),
            (("--until", "999999999d"), "after the year 9999"),
            (("--crash-streak", str(2**64)), "is not in the range"),  # found by review
            (("--name", "a\x1bb"), "control or invisible character")):
        out = cli("ladder", "run", "stop-me", *args, "--db", db)
        assert out.exit_code != 0 and message in out.stderr, (args, out.output)
        assert "Traceback" not in out.output
    out = cli("ladder", "show", "nope", "--db", db)
    assert out.exit_code == 1 and "no ladder 'nope'" in out.stderr
    assert cli("ladder", "run", "stop-me", "--baselines", BASELINES, "--games", "1",
               "--db", db).exit_code == 0
    out = cli("ladder", "pause", "stop-me-ladder", "builtin:random", "--note",
              "x\x1b]0;owned\x07\nforged: line", "--db", db)  # found by review
    assert out.exit_code == 1 and "U+001B" in out.stderr and "Traceback" not in out.output
    assert "is paused" not in cli("ladder", "show", "stop-me-ladder", "--db", db).stdout
    out = cli("ladder", "finals", "stop-me-ladder", "--games-per-bot", str(2**64), "--db", db)
    assert out.exit_code == 2 and "is not in the range" in out.stderr, out.output


def test_duplicate_deals_rotate_one_seed_through_the_seats_one_match_at_a_time(
        tmp_path: Path) -> None:
    store = Store(tmp_path / "arena.db")
    service.create(store, "D", service.LadderSpec(
        "stop-me", (2,), duplicate=True, baselines=("builtin:random", "builtin:heuristic")),
        4, Settings())
    done = service.Runner(store, "D", InlineExecutor(), games=4).run()
    assert done.played == 4
    rows = sql(store, "SELECT idx, match, match_no, deal_group, seed, seating FROM schedule "
                      "ORDER BY idx")
    assert [r["match"] for r in rows] == [1, 2, 3, 4]  # a match per rotation
    for first, second in (rows[0:2], rows[2:4]):
        assert first["deal_group"] == second["deal_group"] and first["seed"] == second["seed"]
        assert json.loads(second["seating"]) == json.loads(first["seating"])[::-1]
    assert rows[0]["seed"] != rows[2]["seed"]
    assert snapshot.snapshot(store, "D")["duplicate"] is True
    store.close()


def test_stop_ends_a_run_after_its_matches_in_flight(ladder: Store) -> None:
    asked: list[bool] = []

    def stop_at_two(now: service.RunResult) -> None:
        if now.played == 2:
            assert snapshot.snapshot(ladder, "L")["state"] == "running"
            asked.append(actions.stop(ladder, "L"))

    done = service.Runner(ladder, "L", InlineExecutor(), on_game=stop_at_two).run()
    assert asked == [True] and done.played == 2  # no --games: only the stop ended it
    after = ladder.ladder("L")
    assert after.runner is None and snapshot.state(after) == "stopped"
    assert actions.stop(ladder, "L") is False  # nothing runs: nothing to ask
    assert run(ladder, 1).played == 1  # the next run is not stopped by the old request


def test_the_api_refuses_submissions_of_a_game_in_its_finals(tmp_path: Path) -> None:
    config = parse_config({"server": {"database": str(tmp_path / "arena.db"),
                                      "data_dir": str(tmp_path / "data"),
                                      "submissions": True}})
    store = Store(config.db_path)
    _, token = accounts.add_author(store, "ada")
    service.create(store, "L", service.LadderSpec(
        "stop-me", (2,), baselines=("builtin:random", "builtin:heuristic")), 1, Settings())
    actions.start_finals(store, "L", 1)
    store.close()
    with TestClient(competition_app(config)) as client:
        def post(game: str) -> Any:
            return client.post("/api/v1/bots/adas/versions", params={"game": game},
                               content=b"\0" * 64, headers={
                                   "Authorization": f"Bearer {token}",
                                   "Content-Type": "application/gzip"})
        refused = post("stop-me")
        assert refused.status_code == 429, refused.text
        assert refused.json()["error"]["code"] == "limit-ladder-finals"
        assert "ladder 'L' plays its finals" in refused.json()["error"]["message"]
        other = post("dagens-brott")  # another game's submissions stay open
        assert other.status_code == 400 and other.json()["error"]["code"].startswith("archive")


def test_a_second_runner_through_a_symlink_of_the_database_is_refused(ladder: Store) -> None:
    """One runner per ladder whatever path names its database (found by review: the
    lock file was named after the path given, so a runner through a symlink ran too)."""
    first = service.Runner(ladder, "L", InlineExecutor(), games=1)
    first._lock()
    alias = ladder.path.with_name("alias.db")
    alias.symlink_to(ladder.path)
    other = Store(alias, create=False)
    try:
        with pytest.raises(service.LadderBusy, match="one runner per ladder"):
            service.Runner(other, "L", InlineExecutor(), games=1).run()
    finally:
        first._unlock()
        other.close()


def test_the_roster_is_read_once_a_match_and_not_while_idle(
        ladder: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    """The roster reads the ladder's whole history (1.3 s at 54,000 games, measured), so
    a runner reads it once per match, and an idle runner not at every poll, only when
    something changed (found by review: two reads a match, and an idle runner polling
    every second spent a core on a long ladder)."""
    reads = []
    real = service.roster

    def counted(store: Any, ladder_row: Any, tally: Any = None) -> Any:
        reads.append(1)
        return real(store, ladder_row, tally)

    monkeypatch.setattr(service, "roster", counted)
    assert run(ladder, 10).played == 10
    assert len(reads) <= 10 + 2, len(reads)  # one a match, the recovery's, the last look
    actions.pause(ladder, "L", "builtin:random")
    reads.clear()
    assert run(ladder, None, until_s=1.0).played == 0  # polled every 0.01 s: ~100 looks
    assert len(reads) <= 3, len(reads)
    actions.resume(ladder, "L", "builtin:random")  # a change: seen at the next look
    assert run(ladder, 2).played == 2


def test_a_version_submitted_for_another_game_stays_off_the_ladder(
        ladder: Store, tmp_path: Path) -> None:
    """A bot's versions are numbered per name, whatever game each was submitted for:
    the ladder plays the newest version submitted for its game, never one built and
    checked for another (found by review: alpha@2, submitted for dagens-brott, took
    alpha@1's place on the stop-me ladder)."""
    author, _ = accounts.add_author(ladder, "ann")
    code = tmp_path / "other.py"
    code.write_bytes(RANDOM_BOT.read_bytes() + b"\n# another game's\n")
    for game, path, digest in (("stop-me", RANDOM_BOT, "a" * 64),
                               ("dagens-brott", code, "b" * 64)):
        row = ladder.add_submission(author.id, "alpha", game, digest, 1, "zip",
                                    per_day=None, since="", bots_per_author=None)
        assert ladder.move_submission(row.id, "received", "building")
        assert ladder.move_submission(row.id, "building", "checking")
        ladder.activate_submission(row.id, digest, str(path), "program")
    labels = {e.label for e in roster(ladder, ladder.ladder("L")).entries}
    assert "alpha@1" in labels and "alpha@2" not in labels, labels


def test_a_kept_tally_reads_only_what_is_new_and_equals_the_whole_history(
        ladder: Store) -> None:
    """The runner's tally folds only the rows stored since its last look (one range of
    each table's key), and what it says equals a fold of the whole history: games, the
    last hour's, last matches, faults, pauses, in-flight matches (found by review: the
    roster read the whole history before each match, 1.3 s at 54,000 games)."""
    run(ladder, 6)
    row = ladder.ladder("L")
    kept = Tally(row.tournament_id, row.finals_from)
    assert roster(ladder, row, kept) == roster(ladder, row)
    assert kept.rows_read == 6 + 6 * 2  # every schedule row and seat, once
    roster(ladder, row, kept)
    assert kept.rows_read == 0  # nothing new: nothing read
    runner = service.Runner(ladder, "L", InlineExecutor(), games=3, poll_s=0.01)
    assert runner.run().played == 3
    assert roster(ladder, row, kept) == roster(ladder, row) == roster(ladder, row,
                                                                      runner.tally)
    assert kept.rows_read == 3 + 3 * 2  # only the three new games and their rows


class _KillsItsWorker(MatchJob):
    """A match whose worker process dies under it (SIGKILL-like: os._exit), every time:
    the infrastructure failing, as a broken sandbox or an OOM killer would."""

    def play(self, prebuilt: Any = None, live: Any = None) -> Generator[Outcome, None, None]:
        os._exit(9)
        yield from ()  # a generator, as MatchJob.play is


def test_matches_that_fail_again_and_again_make_the_runner_back_off(
        ladder: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every match kills its real worker process: after FAIL_STREAK failures in a row the
    runner pairs nothing for 1 s, then 2, 4, ... (found by review: it paired again at
    once, forking a new worker for every failure, for ever); nothing is stored, every
    failed match is withdrawn, and the errors kept stay bounded."""
    monkeypatch.setattr(service, "MatchJob", _KillsItsWorker)
    until = datetime.now(UTC) + timedelta(seconds=4)
    done = service.Runner(ladder, "L", ProcessExecutor(1), until=until, poll_s=0.01).run()
    paired = ladder.ladder("L").scheduled
    assert done.played == 0 and done.withdrawn == paired
    assert service.FAIL_STREAK <= paired <= service.FAIL_STREAK + 4, paired  # not hundreds
    assert len(done.errors) <= service.MAX_ERRORS and "worker process died" in done.errors[0]
