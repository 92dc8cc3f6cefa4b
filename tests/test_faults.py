"""Hostile bots against the real referee: real processes, real sockets.

Each hostile bot (tests/hostile/hostile.py) plays stop-me with a well-behaved
program bot and a built-in bot. For every one: the game completes for the
others, the fault is recorded with its cause against that seat only, and no
process of the bot is left running.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from referee.match import Clocks, play_match
from referee.records import GameRecord

from .helpers import (
    FAST,
    GOOD_BOT,
    NORMAL_END,
    bot_file,
    processes_mentioning,
    processes_mentioning_now,
)

pytestmark = pytest.mark.slow


def play(tmp_path: Path, mode: str, games: int = 1, clocks: Clocks = FAST) -> list[GameRecord]:
    hostile = bot_file(tmp_path, mode)
    good = tmp_path / f"good_{tmp_path.name}.py"
    good.write_text(GOOD_BOT)
    records = play_match("stop-me", [hostile, "builtin:random", str(good)], games, seed=5,
                         clocks=clocks, log_dir=tmp_path / "logs")
    assert processes_mentioning(tmp_path.name) == [], "a bot process outlived its match"
    for record in records:
        assert not record.void and record.reason in NORMAL_END
        for seat in record.seats[1:]:  # the well-behaved seats are untouched
            assert (seat.status, dict(seat.faults), seat.forfeited) == ("ok", {}, False)
    return records


@pytest.mark.parametrize(("mode", "kind", "words"), [
    ("crash_mid_game", "crash", "exit status 1"),
    ("hang", "timeout", "no action for seq"),
    ("late", "timeout", "no action for seq"),
    ("stale", "timeout", "no action for seq"),
    ("not_json", "malformed", "not JSON"),
    ("wrong_shape", "malformed", "wrong shape"),
    ("deep", "malformed", "wrong shape"),
    ("multipart", "malformed", "several frames"),
    ("illegal", "illegal", '"FOLD" is not one of the legal actions ["GO","STOP"]'),
    ("oversize", "malformed", "over the limit of 1048576 bytes"),
    ("flood", "malformed", "flooding"),
    # One endless message of tiny frames: refused at its first frame header, before
    # anything is buffered; the bot then dies of the closed connection.
    ("raw_zmtp", "malformed", "several frames"),
])
def test_a_faulty_bot_is_recorded_and_forfeited(tmp_path: Path, mode: str, kind: str,
                                               words: str) -> None:
    (record,) = play(tmp_path, mode)
    seat = record.seats[0]
    assert seat.forfeited
    assert seat.rank == 3, "a forfeited seat ranks last"
    assert seat.faults.get(kind, 0) >= 1, seat.faults
    assert any(f.startswith(kind) and words in f for f in seat.fault_log), seat.fault_log
    assert not any("supervisor died" in f for f in seat.fault_log), seat.fault_log
    dies = kind == "crash" or mode == "raw_zmtp"
    assert seat.status == ("crash" if dies else "forfeit")


def test_a_bots_undecodable_bytes_are_quoted_as_json_text(tmp_path: Path) -> None:
    """Issue 13 B4: the fault message quotes the bot's bytes as a JSON string (invalid
    UTF-8 as \\xNN inside it), not as Python's b'...' repr."""
    (record,) = play(tmp_path, "not_utf8")
    seat = record.seats[0]
    assert seat.forfeited and seat.faults == {"malformed": 3}, seat.faults
    for entry in seat.fault_log:
        assert entry.startswith("malformed") and "not JSON" in entry, entry
        assert "b'" not in entry and "b\"" not in entry, entry
        quoted, _ = json.JSONDecoder().raw_decode(entry[entry.index(' in "') + 4:])
        assert re.fullmatch(r'\{"type":"action","seq":\d+,"action":"\\xff\\xfeGO\x00"\}',
                            quoted), quoted

def test_a_bots_string_in_a_decoders_message_is_escaped_and_cut(tmp_path: Path) -> None:
    """Issue 13 B4, found by review: msgspec's own message quotes an unknown ``type`` raw
    ("Invalid value '...'"), so a bot wrote a forged line into the log, a bidi control
    into a terminal, and 200 KB into every fault message."""
    (record,) = play(tmp_path, "forged_type")
    seat = record.seats[0]
    assert seat.forfeited and seat.faults == {"malformed": 3}, seat.faults
    for entry in seat.fault_log:
        assert entry.startswith("malformed") and "wrong shape" in entry, entry
        assert "\n" not in entry and "\u202e" not in entry, entry
        assert all(" " <= c <= "~" for c in entry), entry
        assert len(entry) < 1000, f"{len(entry)} characters"
        assert "GO\\n2026-12-01 INFO" in entry, entry  # escaped, still readable


def test_an_illegal_action_is_quoted_in_ascii(tmp_path: Path) -> None:
    """Issue 13 B4, found by review: an illegal action was quoted as JSON but not in
    ASCII, so a bidi override or a line separator of the bot's reached the log and the
    terminal as it was."""
    (record,) = play(tmp_path, "illegal_bidi")
    seat = record.seats[0]
    assert seat.faults.get("illegal", 0) >= 1, seat.faults
    for entry in seat.fault_log:
        assert all(" " <= c <= "~" for c in entry), entry
    assert any('"\\u202eGO\\u2028OK" is not one of the legal actions' in entry
               for entry in seat.fault_log), seat.fault_log


def test_a_forfeited_bot_is_stopped_at_once_and_fresh_for_the_next_game(tmp_path: Path) -> None:
    records = play(tmp_path, "illegal", games=2)
    for record in records:
        assert record.seats[0].status == "forfeit"
        assert record.seats[0].asked == 3  # three strikes, then no more questions
    # Game 2 asked three times again: a fresh process, not the stopped one ("not running").
    assert records[1].seats[0].faults == {"illegal": 3}


@pytest.mark.parametrize(("mode", "words", "startup_ms"), [
    ("crash_at_start", "exit status 3", 3000),
    ("wrong_token", "wrong token", 3000),
    ("no_hello", "no valid hello within 1000 ms", 1000),
    ("rep_socket", "a REP socket cannot talk to this DEALER: connect a DEALER", 3000),
    ("req_socket", "a REQ socket cannot talk to this DEALER: connect a DEALER", 3000),
])
def test_a_bot_without_a_valid_hello_is_a_no_show(tmp_path: Path, mode: str, words: str,
                                                  startup_ms: int) -> None:
    clocks = Clocks(FAST.deadline_ms, FAST.time_bank_ms, startup_ms, FAST.max_strikes)
    (record,) = play(tmp_path, mode, clocks=clocks)
    seat = record.seats[0]
    assert (seat.status, seat.forfeited, seat.asked, seat.rank) == ("no_show", True, 0, 3)
    assert words in seat.fault_log[0]


def test_a_bot_with_a_security_mechanism_is_told_to_use_null(tmp_path: Path) -> None:
    """A PLAIN socket: the seat refuses its greeting, or the bot's own ZeroMQ hangs up
    first (whichever sees the mismatch first); the no-show says what to change."""
    clocks = Clocks(FAST.deadline_ms, FAST.time_bank_ms, 1000, FAST.max_strikes)
    (record,) = play(tmp_path, "plain_auth", clocks=clocks)
    seat = record.seats[0]
    assert seat.status == "no_show"
    assert ('security mechanism "PLAIN" is not supported' in seat.fault_log[0]
            or "no security mechanism" in seat.fault_log[0]), seat.fault_log


def test_a_crashed_bot_is_restarted_for_the_next_game(tmp_path: Path) -> None:
    records = play(tmp_path, "crash_every_game", games=2)
    for record in records:
        seat = record.seats[0]
        assert seat.status == "crash" and seat.asked == 4  # three answers, then the crash
    (log,) = (tmp_path / "logs").glob("seat0-crash_every_game*.stderr.log")
    assert "crashing on purpose" in log.read_text()


def test_squatting_a_routing_id_is_harmless(tmp_path: Path) -> None:
    (record,) = play(tmp_path, "squat")
    assert record.seats[0].status == "ok" and record.seats[0].asked > 0


def test_a_new_connection_takes_over_the_seat(tmp_path: Path) -> None:
    """A bot may reconnect (its libzmq does so by itself after a drop): the newest
    connection serves the seat, and nothing is lost or counted against it."""
    (record,) = play(tmp_path, "reconnect")
    seat = record.seats[0]
    assert (seat.status, dict(seat.faults)) == ("ok", {})
    assert seat.asked > 3


def test_stderr_is_capped_per_match(tmp_path: Path) -> None:
    (record,) = play(tmp_path, "stderr_flood")
    assert record.seats[0].status == "ok"
    (path,) = (tmp_path / "logs").glob("seat0-stderr_flood*.stderr.log")
    log = path.read_bytes()
    assert 64 * 1024 <= len(log) < 64 * 1024 + 200
    assert b"more bytes of output dropped over the 65536-byte cap" in log


def test_a_crashing_bots_last_words_reach_its_log(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """The supervisor waits for its stderr sink before it exits, so the traceback of a
    bot that dies is in the log even when the sink thread is slow to run."""
    from referee import supervisor

    run = supervisor._StderrSink.run

    def slow_run(self: supervisor._StderrSink) -> None:
        time.sleep(0.3)  # a thread the scheduler has not run yet when the bot dies
        run(self)

    # The supervisor is forked from this process, so it inherits the slow sink.
    monkeypatch.setattr(supervisor._StderrSink, "run", slow_run)
    bot = tmp_path / "dying.py"
    bot.write_text("raise SystemExit('the last words of a dying bot')\n")
    (record,) = play_match("stop-me", [str(bot), "builtin:random"], 1, seed=1, clocks=FAST,
                           log_dir=tmp_path / "logs")
    assert record.seats[0].status == "no_show"
    (path,) = (tmp_path / "logs").glob("seat0-*.stderr.log")
    assert "the last words of a dying bot" in path.read_text()


def test_fault_notices_reach_the_bot_and_the_game_log_is_kept(tmp_path: Path) -> None:
    (_record,) = play(tmp_path, "illegal")
    saved = (tmp_path / "logs" / "game-0000.json").read_text()
    assert '"type":"game_over"' in saved and '"fault_log"' in saved



def test_the_time_bank_absorbs_slow_decisions_until_it_is_spent(tmp_path: Path) -> None:
    """A bot 200 ms over a 300 ms deadline lives on a 500 ms bank for two decisions.

    The third cannot fit whatever the machine's speed (3 x 200 > 500), and the first
    two leave 50 ms each for the round trip, so a loaded machine does not change it.
    """
    clocks = Clocks(deadline_ms=300, time_bank_ms=500, startup_ms=3000, max_strikes=1)
    (record,) = play(tmp_path, "slow", clocks=clocks)
    seat = record.seats[0]
    assert seat.status == "forfeit" and seat.faults == {"timeout": 1}
    assert seat.asked == 3, "two decisions paid from the bank, the third timed out"


def test_a_referee_failure_voids_the_game_and_the_match_goes_on(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from referee.games import GAMES, StopMe

    class Broken(StopMe):
        id = "broken-stop-me"

        def _apply(self, actions):  # type: ignore[no-untyped-def]
            if self.seed == 5 and self.steps == 3:
                raise RuntimeError("engine bug")
            super()._apply(actions)

    monkeypatch.setitem(GAMES, Broken.id, Broken)
    good = tmp_path / f"good_{tmp_path.name}.py"
    good.write_text(GOOD_BOT)
    records = play_match(Broken.id, [str(good), "builtin:random"], 2, seed=5, clocks=FAST)
    assert records[0].void and records[0].reason == "void"
    assert "RuntimeError: engine bug" in (records[0].error or "")
    assert not records[1].void and records[1].seats[0].status == "ok"
    assert processes_mentioning(tmp_path.name) == []


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_interrupting_the_referee_leaves_no_bot_behind(tmp_path: Path, signum: int) -> None:
    """Ctrl-C or SIGTERM of `arena play` while a bot hangs: every bot process goes."""
    hanging = bot_file(tmp_path, "hang")
    good = tmp_path / f"good_{tmp_path.name}.py"
    good.write_text(GOOD_BOT)
    proc = subprocess.Popen([sys.executable, "-m", "arena", "play", "stop-me", hanging,
                             str(good), "--deadline-ms", "60000"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            start_new_session=True)
    # Until both bots run, each in its sandbox (/bot/NAME): a generous deadline, as a
    # loaded machine can take many seconds to start them; the referee and its
    # supervisors alone (whose command lines name the files too) do not count.
    inside = [f"/bot/{Path(hanging).name}", f"/bot/{good.name}"]
    deadline = time.monotonic() + 120
    while (not all(processes_mentioning_now(name) for name in inside)
           and proc.poll() is None and time.monotonic() < deadline):
        time.sleep(0.05)
    if not all(processes_mentioning_now(name) for name in inside):
        os.killpg(proc.pid, signal.SIGKILL)
        _, err = proc.communicate()
        raise AssertionError(f"the bots did not both start (arena play's exit status "
                             f"{proc.returncode}): {err.decode(errors='replace')[-2000:]}")
    time.sleep(0.5)
    proc.send_signal(signum)
    proc.wait(timeout=30)
    assert processes_mentioning(tmp_path.name) == [], "a bot process outlived the referee"
