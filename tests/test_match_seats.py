"""The match runner against in-memory fake seats (issue 14 §3: ``Match`` takes a seat
factory), where no process is needed.

A :class:`FakeSeat` stands where a :class:`referee.seats.ProgramSeat` would: it
decodes each message the referee sends it (the real protocol codec) and answers with
the typed reports a supervisor sends (:mod:`referee.reports`), over a real pipe that
the match waits on. Each test checks the seat status the referee records. The same
faults from real bot processes are tested in tests/test_faults.py.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from protocol.codec import decode_referee_message, encode
from protocol.messages import Act, Start
from referee.match import Clocks, Match
from referee.programs import BotProgram
from referee.records import FaultKind, GameRecord
from referee.reports import (
    Acted,
    Died,
    Exited,
    Faulted,
    Greeted,
    Refused,
    Report,
    decode_report,
    encode_report,
)
from referee.seats import Seat

BOT = str(Path(__file__).parent.parent / "bots" / "random_bot.py")
"""A real program, loaded and copied by the match but never started: its seat is fake."""
FAST = Clocks(deadline_ms=50, time_bank_ms=0, startup_ms=2000, max_strikes=3)

Behaviour = Callable[[Any, "FakeSeat"], Iterator[Report]]
"""What a fake bot answers to one referee message (a decoded protocol struct)."""


class FakeSeat:
    """An in-memory seat: a real pipe, no process; its bot is a Python function."""

    def __init__(self, seat: int, behave: Behaviour, hello: Report | None = None) -> None:
        self.seat, self.behave = seat, behave
        self.hello = hello or Greeted("fake")
        self.name, self.greeted, self.seq, self.starts = "", False, 0, 0
        self.conn: Any = None
        self._bot: Any = None
        self.received: list[Any] = []

    @property
    def running(self) -> bool:
        return self.conn is not None

    def start(self, others: Sequence[Seat] = ()) -> None:
        self.conn, self._bot = multiprocessing.Pipe()
        self.seq, self.greeted = 0, False
        self.starts += 1
        self._report(self.hello)

    def _report(self, report: Report) -> None:
        self._bot.send_bytes(encode_report(report))

    def next_seq(self) -> int:
        self.seq += 1
        return self.seq

    def send(self, message: Any, await_seq: int | None = None) -> None:
        self.send_encoded(encode(message), await_seq)

    def send_encoded(self, payload: bytes, await_seq: int | None = None) -> None:
        if self.conn is None:
            return
        message = decode_referee_message(payload)  # what the referee sent is valid
        self.received.append(message)
        for report in self.behave(message, self):
            self._report(report)

    def recv(self) -> Report:
        try:
            return decode_report(self.conn.recv_bytes())
        except (EOFError, OSError):
            return Died("the fake seat is gone")

    def stop(self, bye: Any | None = None, *, wait: bool = True) -> None:
        if bye is not None and self.conn is not None:
            self.received.append(bye)
        for end in (self.conn, self._bot):
            if end is not None:
                end.close()
        self.conn = self._bot = None


def plays_first(message: Any, seat: FakeSeat) -> Iterator[Report]:
    if isinstance(message, Act):
        yield Acted(message.seq, message.legal[0])


def never_answers(message: Any, seat: FakeSeat) -> Iterator[Report]:
    return iter(())


def sends_garbage(message: Any, seat: FakeSeat) -> Iterator[Report]:
    if isinstance(message, Act):  # what a supervisor reports of bytes that are not JSON
        yield Faulted(FaultKind.MALFORMED, "not JSON: b'\\xff'")


def first(fault: Behaviour) -> Behaviour:
    """``fault`` at the seat's first act only; then it plays."""

    def behave(message: Any, seat: FakeSeat) -> Iterator[Report]:
        asked = sum(isinstance(m, Act) for m in seat.received)
        return (fault if asked == 1 else plays_first)(message, seat)

    return behave


def plays_illegal(message: Any, seat: FakeSeat) -> Iterator[Report]:
    if isinstance(message, Act):
        yield Acted(message.seq, "NOT-AN-ACTION")


def crashes_in_its_first_game(message: Any, seat: FakeSeat) -> Iterator[Report]:
    if isinstance(message, Act):
        if seat.starts == 1:
            yield Exited(1, "the bot process ended (exit status 1)")
        else:
            yield Acted(message.seq, message.legal[0])


def play(behaviours: dict[int, Behaviour], games: int = 1,
         hello: Report | None = None) -> tuple[list[GameRecord], dict[int, FakeSeat]]:
    """A stop-me match: program seats (fakes) as in ``behaviours``, the rest built-in."""
    fakes: dict[int, FakeSeat] = {}

    def factory(seat: int, program: BotProgram, stderr: Path | None) -> Seat:
        fakes[seat] = FakeSeat(seat, behaviours[seat], hello if seat == 0 else None)
        return fakes[seat]

    bots = [BOT if s in behaviours else "builtin:random" for s in range(3)]
    match = Match("stop-me", bots, games, seed=5, clocks=FAST, sandbox="none",
                  seat_factory=factory)
    return match.run(), fakes


def faults_of(record: GameRecord, seat: int) -> tuple[str, dict[str, int], bool]:
    result = record.seats[seat]
    return result.status, dict(result.faults), result.forfeited


def test_a_fake_seat_that_plays_is_ok_and_hears_the_whole_protocol() -> None:
    records, fakes = play({0: plays_first, 2: plays_first})
    assert not records[0].void
    assert faults_of(records[0], 0) == faults_of(records[0], 2) == ("ok", {}, False)
    assert records[0].seats[0].asked > 0
    kinds = [type(m).__name__ for m in fakes[0].received]
    assert kinds[:2] == ["Welcome", "Start"] and "Act" in kinds and kinds[-1] == "Bye"
    assert isinstance(fakes[0].received[1], Start)


def test_a_fake_seat_that_does_not_answer_once_times_out() -> None:
    records, _ = play({0: first(never_answers), 2: plays_first})
    assert faults_of(records[0], 0) == ("timeout", {"timeout": 1}, False)
    assert records[0].seats[0].fault_log[0].startswith("timeout: no action for seq ")
    assert faults_of(records[0], 2) == ("ok", {}, False)


def test_a_fake_seat_that_never_answers_is_forfeited_after_three_strikes() -> None:
    records, _ = play({0: never_answers, 2: plays_first})
    assert faults_of(records[0], 0) == ("forfeit", {"timeout": 3}, True)
    assert records[0].seats[0].rank == 3  # forfeited: last
    assert faults_of(records[0], 2) == ("ok", {}, False)


def test_a_fake_seat_that_sends_garbage_once_is_malformed() -> None:
    records, fakes = play({0: first(sends_garbage)})
    assert faults_of(records[0], 0) == ("malformed", {"malformed": 1}, False)
    assert records[0].seats[0].fault_log == ("malformed: not JSON: b'\\xff'",)
    errors = [m for m in fakes[0].received if type(m).__name__ == "Error"]
    act = next(m for m in fakes[0].received if isinstance(m, Act))
    assert [(e.code, e.ref_seq) for e in errors] == [("malformed", act.seq)]


def test_a_fake_seat_that_always_sends_garbage_is_forfeited() -> None:
    records, fakes = play({0: sends_garbage})
    assert faults_of(records[0], 0) == ("forfeit", {"malformed": 3}, True)
    errors = [m for m in fakes[0].received if type(m).__name__ == "Error"]
    assert [e.code for e in errors] == ["malformed"] * 3 + ["forfeit"]


def test_a_fake_seats_illegal_action_is_illegal() -> None:
    records, _ = play({0: plays_illegal})
    assert faults_of(records[0], 0) == ("forfeit", {"illegal": 3}, True)
    assert '"NOT-AN-ACTION" is not one of the legal actions' in records[0].seats[0].fault_log[0]


def test_a_fake_seat_that_crashes_is_restarted_for_the_next_game() -> None:
    records, fakes = play({0: crashes_in_its_first_game}, games=2)
    assert faults_of(records[0], 0) == ("crash", {"crash": 1}, True)
    assert faults_of(records[1], 0) == ("ok", {}, False)
    assert fakes[0].starts == 2


def test_a_fake_seat_whose_hello_is_refused_is_a_no_show() -> None:
    records, _ = play({0: plays_first}, hello=Refused("the hello was refused: not JSON"))
    status, faults, forfeited = faults_of(records[0], 0)
    assert (status, faults, forfeited) == ("no_show", {"no_show": 1}, True)
    assert records[0].seats[0].fault_log == ("no_show: the hello was refused: not JSON",)
