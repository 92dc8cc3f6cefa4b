"""A seat's transport in the referee's process (issue 20), driven directly: real pipes,
a real Unix socket, raw ZMTP bytes. What one read of a flood may cost, and what a
connection that does not begin with the seat's hello gets."""

from __future__ import annotations

import json
import os
import select
import socket
import struct
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from referee import seat_checks, transport_zmq
from referee.reports import Acted, Faulted, Greeted
from referee.seat_checks import DECODED_PER_READ, FLOOD_LIMIT, SeatChecks
from referee.transport_stdio import StdioTransport
from referee.transport_zmq import PAUSE_FIRST_S, ZmqTransport

TOKEN = "t" * 32
HELLO = json.dumps({"type": "hello", "protocol": 1, "token": TOKEN, "name": "x"}).encode()


@pytest.fixture
def decoded(monkeypatch: pytest.MonkeyPatch) -> list[bytes]:
    """Every message the seat's checks decode."""
    seen: list[bytes] = []
    real = seat_checks.decode_bot_message

    def counting(data: bytes):  # type: ignore[no-untyped-def]
        seen.append(data)
        return real(data)

    monkeypatch.setattr(seat_checks, "decode_bot_message", counting)
    monkeypatch.setattr(transport_zmq, "decode_bot_message", counting)
    return seen


def reports(checks: SeatChecks) -> list[object]:
    found = []
    while (report := checks.reports.pop()) is not None:
        found.append(report)
    return found


def test_one_read_of_tiny_lines_decodes_only_the_first(decoded: list[bytes]) -> None:
    to_bot_r, to_bot_w = os.pipe()
    from_bot_r, from_bot_w = os.pipe()
    checks = SeatChecks(0, TOKEN, lambda payload: None)
    transport = StdioTransport(to_bot_w, from_bot_r, checks, select.epoll())
    os.write(from_bot_w, HELLO + b"\n")
    transport.read()
    assert reports(checks) == [Greeted("x")]
    checks.expect(5)
    flood = b"1\n" * 8000  # 16,000 bytes: one read
    os.write(from_bot_w, flood)
    decoded.clear()
    assert transport.read() == len(flood)
    assert len(decoded) == DECODED_PER_READ
    assert checks.unsolicited == 8000  # the rest counted, not decoded
    (first,) = reports(checks)  # it ends the decision; the rest wait for the next act
    assert isinstance(first, Faulted) and "wrong shape" in first.detail, first
    assert checks.flood_reported
    # The answer after the flood still counts: the seat is not broken by it.
    os.write(from_bot_w, b'{"type":"action","seq":5,"action":"GO"}\n')
    transport.read()
    assert reports(checks)[-1] == Acted(5, "GO")
    transport.close_all()
    for fd in (to_bot_r, from_bot_w):
        os.close(fd)


def raw_link(path: str) -> socket.socket:
    """A raw ZMTP 3.0 DEALER connection, greeting and READY sent."""
    raw = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    raw.connect(path)
    raw.sendall(b"\xff" + b"\x00" * 8 + b"\x7f\x03\x00" + b"NULL".ljust(20, b"\x00")
                + b"\x00" * 32)
    body = b"\x05READY\x0bSocket-Type" + struct.pack(">I", 6) + b"DEALER"
    raw.sendall(b"\x04" + bytes([len(body)]) + body)
    return raw


def frame(payload: bytes) -> bytes:
    return b"\x00" + bytes([len(payload)]) + payload


def serve(transport: ZmqTransport, epoll: select.epoll, seconds: float = 0.2,
          until: Callable[[], bool] | None = None) -> None:
    """Handle what the transport's descriptors report, as a seat's pump does, for
    ``seconds`` or until ``until()`` holds."""
    end = time.monotonic() + seconds
    while time.monotonic() < end and not (until and until()):
        for fd, events in epoll.poll(0.005):
            transport.on_event(fd, events)
        transport.tick()


def greeted_seat(tmp_path: Path
                 ) -> tuple[ZmqTransport, select.epoll, SeatChecks, str, socket.socket]:
    """A seat's transport on its socket's path, and its bot's raw connection past the
    hello."""
    epoll = select.epoll()
    checks = SeatChecks(0, TOKEN, lambda payload: None)
    path = str(tmp_path / "seat.sock")
    transport = ZmqTransport(path, checks, epoll)
    raw = raw_link(path)
    raw.sendall(frame(HELLO))
    serve(transport, epoll)
    assert reports(checks) == [Greeted("x")]
    return transport, epoll, checks, path, raw


def test_zmq_a_flood_on_the_seats_connection_decodes_only_the_first(
        tmp_path: Path, decoded: list[bytes]) -> None:
    transport, epoll, checks, _, raw = greeted_seat(tmp_path)
    checks.expect(3)
    decoded.clear()
    raw.sendall(frame(b"1") * 5000)  # 15,000 bytes: within one read
    serve(transport, epoll)
    assert len(decoded) == DECODED_PER_READ
    assert checks.unsolicited == 5000
    assert checks.unsolicited > FLOOD_LIMIT and checks.flood_reported
    transport.close_all()
    raw.close()


def test_zmq_a_stranger_is_closed_at_its_first_message_and_the_socket_pauses(
        tmp_path: Path, decoded: list[bytes]) -> None:
    """Issue 13 A7 and issue 20: after the seat's hello, a new connection must say it
    too; one that sends anything else is closed then and there (nothing more of it is
    read), and new connections wait a while, so a loop of them costs the referee little."""
    transport, epoll, checks, path, seat = greeted_seat(tmp_path)
    stranger = raw_link(path)
    stranger.sendall(frame(b'{"type":"action","seq":1,"action":"STOP"}') + frame(b"1") * 3000)
    serve(transport, epoll)
    decoded_by_stranger = [d for d in decoded if d != HELLO]
    assert len(decoded_by_stranger) == 1, "only its first message was decoded"
    stranger.settimeout(1)
    data = b""
    while chunk := stranger.recv(65536):  # the seat's greeting, then the end: closed
        data += chunk
    assert len(data) == 64 + len(b"\x04\x1c\x05READY\x0bSocket-Type\x00\x00\x00\x06DEALER")
    assert transport.backoff == PAUSE_FIRST_S and len(transport.links) == 1
    second = raw_link(path)  # the pause is over: taken, and turned away too
    second.sendall(frame(b"not a hello"))
    serve(transport, epoll, 5, until=lambda: transport.backoff == 2 * PAUSE_FIRST_S)
    assert transport.paused_until > 0, "the second turned away pauses the socket twice as long"
    late = raw_link(path)  # waits in the kernel's queue while the socket pauses
    serve(transport, epoll, PAUSE_FIRST_S / 5)
    assert len(transport.links) == 1
    serve(transport, epoll, 5, until=lambda: len(transport.links) == 2)
    assert len(transport.links) == 2, "taken once the pause is over"
    late.sendall(frame(HELLO))  # the seat's own hello: it serves now, the backoff ends
    serve(transport, epoll)
    assert transport.current is not None and transport.backoff == 0.0
    assert reports(checks) == [], "a stranger is never the seat's fault"
    transport.close_all()
    for sock in (seat, stranger, second, late):
        sock.close()


LAST_WORDS = r'''import json, os, socket, struct
raw = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
raw.connect(os.environ["ARENA_ENDPOINT"].removeprefix("ipc://"))
raw.sendall(b"\xff" + b"\x00" * 8 + b"\x7f\x03\x00" + b"NULL".ljust(20, b"\x00")
            + b"\x00" * 32)
body = b"\x05READY\x0bSocket-Type" + struct.pack(">I", 6) + b"DEALER"
raw.sendall(b"\x04" + bytes([len(body)]) + body)
buffer = b""

def send(message):
    data = json.dumps(message).encode()
    raw.sendall(b"\x02" + struct.pack(">Q", len(data)) + data)

def messages():
    global buffer
    buffer = raw.recv(65536)
    while len(buffer) < 64:
        buffer += raw.recv(65536)
    buffer = buffer[64:]
    while True:
        while len(buffer) < 9 or len(buffer) < (9 if buffer[0] & 2 else 2) + (
                struct.unpack(">Q", buffer[1:9])[0] if buffer[0] & 2 else buffer[1]):
            buffer += raw.recv(65536)
        head, size = (9, struct.unpack(">Q", buffer[1:9])[0]) if buffer[0] & 2 else (2, buffer[1])
        flags, body, buffer = buffer[0], buffer[head:head + size], buffer[head + size:]
        if not flags & 4:
            yield json.loads(body)

send({"type": "hello", "protocol": 1, "token": os.environ["ARENA_TOKEN"], "name": "last"})
for message in messages():
    if message["type"] == "act":
        # A valid answer, 150 KB with an unknown field, and the process ends at once.
        send({"type": "action", "seq": message["seq"], "action": message["legal"][-1],
              "pad": "x" * 150_000})
        os._exit(0)
'''


def test_an_answer_sent_just_before_the_bot_ends_still_counts(tmp_path: Path) -> None:
    """Found by review: when the referee came back to a seat after its bot had answered
    and ended (it was busy with another seat), the bot's end was seen first and the rest
    of its connection never read, so an answer larger than one read was lost."""
    from protocol.messages import Act, Welcome
    from referee.programs import load_program
    from referee.seats import ProgramSeat

    bot = tmp_path / "last.py"
    bot.write_text(LAST_WORDS)
    seat = ProgramSeat(0, load_program(str(bot)), None)
    seat.start()
    try:
        assert seat.wait_report(10) == Greeted("last")
        seat.send(Welcome(seq=seat.next_seq(), name="last", games=1))
        seq = seat.next_seq()
        seat.send(Act(seq=seq, game_index=0, deadline_ms=1000, time_bank_ms=0, observation={},
                      legal=["GO", "STOP"], events=[]), await_seq=seq)
        time.sleep(1.0)  # busy elsewhere: the bot answers and ends meanwhile
        first = seat.wait_report(5)
        assert first == Acted(seq, "STOP"), first
        assert type(seat.wait_report(5)).__name__ == "Exited"
    finally:
        seat.stop()


RECONNECTOR = '''\
import json, os, time, zmq
ORDER = {order!r}
context = zmq.Context()

def connect():
    sock = context.socket(zmq.DEALER)
    sock.setsockopt(zmq.LINGER, 0)
    sock.connect(os.environ["ARENA_ENDPOINT"])
    sock.send_json({{"type": "hello", "protocol": 1, "token": os.environ["ARENA_TOKEN"],
                    "name": "reconnector"}})
    return sock

def stranger():  # a connection whose first message is not the hello: the seat pauses
    other = context.socket(zmq.DEALER)
    other.setsockopt(zmq.LINGER, 0)
    other.connect(os.environ["ARENA_ENDPOINT"])
    other.send_json({{"type": "action", "seq": 0, "action": 0}})
    time.sleep(0.02)
    other.close()

sock, acts = connect(), 0
while True:
    message = json.loads(sock.recv())
    if message["type"] == "bye":
        break
    if message["type"] != "act":
        continue
    acts += 1
    if acts == 3:
        if ORDER == "stranger first":
            stranger()
            sock.close()
            time.sleep(0.1)
        else:
            sock.close()
            time.sleep(0.05)
            stranger()
        sock = connect()  # the bot's own reconnect, hello first, as the SDK's
    sock.send_json({{"type": "action", "seq": message["seq"], "action": message["legal"][0]}})
'''


@pytest.mark.parametrize("order", ["stranger first", "drop first"])
def test_a_bot_reconnects_beside_a_stranger_and_plays_on(tmp_path: Path, order: str) -> None:
    """Found by review: a stranger paused the seat's socket while the bot's own connection
    dropped, and nothing ended the pause while no connection served the seat, so the bot's
    reconnect waited for the rest of the game and the seat was forfeited. Now no pause
    starts while no connection serves, and the end of the serving one ends a pause."""
    from referee.match import Clocks, Match

    bot = tmp_path / "reconnector.py"
    bot.write_text(RECONNECTOR.format(order=order))
    (record,) = Match("stop-me", [str(bot), "builtin:random"], 1, seed=1,
                      clocks=Clocks(deadline_ms=1000, time_bank_ms=200, startup_ms=5000)).run()
    seat = record.seats[0]
    assert (seat.status, dict(seat.faults), seat.forfeited) == ("ok", {}, False), seat.fault_log
    assert all(move["0"]["by"] == "bot" for move in record.moves if "0" in move)
