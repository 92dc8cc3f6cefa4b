"""The seat's ZMTP peer (referee/zmtp.py) against real libzmq sockets, and fuzzed.

Every test with a client uses a real pyzmq socket connected over a real Unix
socket: what libzmq sends is what bots send.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import zmq
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.zmtp import GREETING_BYTES, ZmtpError, ZmtpPeer, command, frame, ready_command

LIMIT = 1 << 20


class Seat:
    """The supervisor's side, reduced to a listening socket and a ZmtpPeer per connection."""

    def __init__(self, folder: Path) -> None:
        self.path = str(folder / "seat.sock")
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(self.path)
        self.listener.listen(4)
        self.listener.settimeout(5)

    @property
    def endpoint(self) -> str:
        return f"ipc://{self.path}"

    def accept(self) -> tuple[socket.socket, ZmtpPeer]:
        sock, _ = self.listener.accept()
        sock.settimeout(0.05)
        peer = ZmtpPeer(LIMIT)
        sock.sendall(peer.take_outgoing())
        return sock, peer

    @staticmethod
    def pump(sock: socket.socket, peer: ZmtpPeer, seconds: float = 5.0,
             until: int = 1, pong: bool = True) -> list[bytes]:
        """Feed what arrives to ``peer`` until ``until`` messages or ``seconds`` pass."""
        messages: list[bytes] = []
        end = time.monotonic() + seconds
        while len(messages) < until and time.monotonic() < end:
            try:
                data = sock.recv(65536)
            except TimeoutError:
                continue
            if not data:
                break
            was_ready = peer.ready
            messages += peer.feed(data)
            owed = peer.take_outgoing()  # our READY once, then PONGs
            if owed and (pong or not was_ready):
                sock.sendall(owed)
        return messages


@pytest.fixture()
def seat(tmp_path: Path) -> Iterator[Seat]:
    s = Seat(tmp_path)
    yield s
    s.listener.close()


@pytest.fixture()
def context() -> Iterator[zmq.Context]:
    ctx = zmq.Context()
    yield ctx
    ctx.destroy(linger=0)


def dealer(context: zmq.Context, seat: Seat, **options: int | bytes) -> zmq.Socket:
    sock = context.socket(zmq.DEALER)
    sock.setsockopt(zmq.LINGER, 0)
    sock.setsockopt(zmq.RCVTIMEO, 5000)
    for name, value in options.items():
        sock.setsockopt(getattr(zmq, name.upper()), value)
    sock.connect(seat.endpoint)
    return sock


@pytest.mark.parametrize("size", [0, 1, 255, 256, 70_000, LIMIT])
def test_a_libzmq_dealer_talks_both_ways(seat: Seat, context: zmq.Context, size: int) -> None:
    client = dealer(context, seat)
    sock, peer = seat.accept()
    payload = bytes(range(256)) * (size // 256) + b"x" * (size % 256)
    client.send(payload)
    assert seat.pump(sock, peer) == [payload]
    assert peer.ready
    sock.sendall(frame(payload[::-1]))
    assert client.recv() == payload[::-1]


def test_many_messages_in_one_read_all_arrive_in_order(seat: Seat,
                                                       context: zmq.Context) -> None:
    client = dealer(context, seat)
    sock, peer = seat.accept()
    for n in range(500):
        client.send(b'{"seq":%d}' % n)
    assert seat.pump(sock, peer, until=500) == [b'{"seq":%d}' % n for n in range(500)]


def test_an_oversize_message_is_refused_by_its_header(seat: Seat,
                                                      context: zmq.Context) -> None:
    client = dealer(context, seat)
    sock, peer = seat.accept()
    client.send(b"x" * (LIMIT + 1))
    with pytest.raises(ZmtpError, match=f"a message of {LIMIT + 1} bytes is over the limit"):
        seat.pump(sock, peer)
    # Refused at the header, in the first read: the body was never kept.
    assert len(peer._buffer) <= GREETING_BYTES + 65536


def test_a_multipart_message_is_refused_at_its_first_frame(seat: Seat,
                                                           context: zmq.Context) -> None:
    client = dealer(context, seat)
    sock, peer = seat.accept()
    client.send_multipart([b'{"type":', b'"action"}'])
    with pytest.raises(ZmtpError, match="several frames"):
        seat.pump(sock, peer)


@pytest.mark.parametrize(("kind", "name"), [(zmq.ROUTER, "ROUTER"), (zmq.REP, "REP")])
def test_a_socket_other_than_a_dealer_is_refused(seat: Seat, context: zmq.Context,
                                                 kind: int, name: str) -> None:
    client = context.socket(kind)
    client.setsockopt(zmq.LINGER, 0)
    client.connect(seat.endpoint)
    sock, peer = seat.accept()
    with pytest.raises(ZmtpError, match=f"a {name} socket cannot talk to this DEALER: "
                                        f"connect a DEALER"):
        seat.pump(sock, peer)


def test_a_security_mechanism_other_than_null_is_refused() -> None:
    greeting = b"\xff" + bytes(8) + b"\x7f\x03\x01" + b"PLAIN".ljust(20, b"\0") + bytes(32)
    with pytest.raises(ZmtpError, match='security mechanism "PLAIN" is not supported'):
        ZmtpPeer(LIMIT).feed(greeting)


def test_a_libzmq_client_with_a_mechanism_hangs_up_itself(seat: Seat,
                                                          context: zmq.Context) -> None:
    """libzmq sees the mismatch first and hangs up: the handshake never completes."""
    dealer(context, seat, plain_username=b"bot", plain_password=b"secret").send(b"x")
    sock, _ = seat.listener.accept()
    sock.settimeout(0.05)
    peer = ZmtpPeer(LIMIT)
    try:
        sock.sendall(peer.take_outgoing())
        assert seat.pump(sock, peer, seconds=1) == []
    except (ZmtpError, ConnectionResetError, BrokenPipeError):
        pass  # whichever side notices first
    assert not peer.ready


@pytest.mark.parametrize(("pong", "drops"), [(True, 0), (False, 1)])
def test_heartbeats_are_answered(seat: Seat, context: zmq.Context, pong: bool,
                                 drops: int) -> None:
    """A bot with ZMTP heartbeats keeps its connection only if each PING gets its PONG."""
    client = dealer(context, seat, heartbeat_ivl=20, heartbeat_timeout=100)
    monitor = client.get_monitor_socket(zmq.EVENT_DISCONNECTED)
    sock, peer = seat.accept()
    client.send(b"first")
    assert seat.pump(sock, peer, seconds=0.6, until=2, pong=pong) == [b"first"]
    assert monitor.poll(300 if drops else 0) == (zmq.POLLIN if drops else 0)
    monitor.close()


def test_our_ready_waits_for_the_peers_and_a_ping_before_it_is_ignored() -> None:
    peer = ZmtpPeer(LIMIT)
    assert peer.take_outgoing() == stream([])[:GREETING_BYTES]  # the greeting alone
    peer.feed(stream([])[:GREETING_BYTES] + command(b"PING", b"\x00\x0aab"))
    assert peer.take_outgoing() == b"" and not peer.ready
    peer.feed(ready_command(b"DEALER") + command(b"PING", b"\x00\x0aab"))
    assert peer.take_outgoing() == ready_command(b"DEALER") + command(b"PONG", b"ab")


def test_messages_before_a_bad_byte_in_the_same_read_still_count() -> None:
    with pytest.raises(ZmtpError, match="several frames") as caught:
        ZmtpPeer(LIMIT).feed(stream([b'{"one":1}', b"two"]) + b"\x01\x01x")
    assert caught.value.messages == [b'{"one":1}', b"two"]


@pytest.mark.parametrize(("start", "words"), [
    (b"GET / HTTP/1.1\r\nHost: x\r\n\r\n", "not ZMTP"),
    (b"\xff" + bytes(8) + b"\x7f\x01\x00", "ZMTP 1.x is not supported"),
    (b"\x01\x00", "not ZMTP"),  # ZMTP 1.0: a bare identity frame
])
def test_what_is_not_zmtp_3_is_refused_at_once(start: bytes, words: str) -> None:
    with pytest.raises(ZmtpError, match=words):
        ZmtpPeer(LIMIT).feed(start)


def stream(payloads: list[bytes]) -> bytes:
    """What a DEALER sends: its greeting, its READY, then one frame per message."""
    greeting = b"\xff" + bytes(8) + b"\x7f\x03\x01" + b"NULL".ljust(20, b"\0") + bytes(32)
    return greeting + ready_command(b"DEALER") + b"".join(frame(p) for p in payloads)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.binary(max_size=600), max_size=8), st.data())
def test_any_chunking_of_a_stream_gives_the_same_messages(payloads: list[bytes],
                                                          data: st.DataObject) -> None:
    wire = stream(payloads)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(wire)), max_size=20)))
    peer, got, last = ZmtpPeer(LIMIT), [], 0
    for cut in [*cuts, len(wire)]:
        got += peer.feed(wire[last:cut])
        last = cut
    assert got == payloads


@settings(max_examples=300, deadline=None)
@given(st.lists(st.binary(min_size=1, max_size=300), max_size=6))
def test_garbage_after_the_handshake_only_ever_raises_zmtp_error(chunks: list[bytes]) -> None:
    peer = ZmtpPeer(limit := 1000)
    peer.feed(stream([]))
    try:
        for chunk in chunks:
            for message in peer.feed(chunk):
                assert len(message) <= limit
            # Memory is bounded by one message and its header, whatever arrives.
            assert len(peer._buffer) <= limit + 9
    except ZmtpError:
        pass
