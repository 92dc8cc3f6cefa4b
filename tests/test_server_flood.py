"""The competition server under hostile traffic (issue 15 §5), over real sockets on
loopback to the real ``arena serve --submissions`` in a subprocess: a 1 GB upload
(streamed lazily, with and without a Content-Length), a thousand submissions in a
minute by one author, and slow and idle connections holding the server. Traffic is
bounded in count and time; every timing is generous (a loaded machine)."""

from __future__ import annotations

import os
import socket
import threading
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from pathlib import Path

import pytest

from tests.hostile import archives as hostile
from tests.server_helpers import (
    GOOD_FILES,
    HOST,
    Served,
    add_author,
    bearer,
    http,
    push,
    serving,
    write_config,
)

pytestmark = pytest.mark.slow

SERVED_WITHIN_S = 10.0
"""A real client gets its answer this soon despite the flood."""


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Served, str, Path]]:
    """One server for the upload tests: the server, ada's token, its folder."""
    tmp_path = tmp_path_factory.mktemp("flood")
    config = write_config(tmp_path)
    token = add_author(tmp_path / "arena.db", "ada")
    with serving(config) as server:
        yield server, token, tmp_path


def upload_head(token: str, name: str, *, length: int | None) -> bytes:
    framing = f"Content-Length: {length}" if length is not None \
        else "Transfer-Encoding: chunked"
    return (f"POST /api/v1/bots/{name}/versions?game=stop-me HTTP/1.1\r\nHost: arena\r\n"
            f"Authorization: Bearer {token}\r\nContent-Type: application/gzip\r\n"
            f"{framing}\r\n\r\n").encode()


@pytest.mark.parametrize("declared", [True, False], ids=["content-length", "chunked"])
def test_a_gigabyte_upload_is_refused_at_the_cap_in_little_memory(
        site: tuple[Served, str, Path], declared: bool) -> None:
    server, token, tmp_path = site
    cap = 20 << 20  # the default uploads.max_compressed_mb
    before_rss, before_peak = server.rss_mb(), server.peak_mb()
    pushed = push(server.port, upload_head(token, "huge", length=(1 << 30) if declared
                                           else None), hostile.gigabyte(), chunked=not declared)
    assert pushed.status == 413, (pushed.answer[:300], server.log()[-2000:])
    assert b'"archive-compressed-size"' in pushed.answer, pushed.answer[:500]
    # Refused at the cap: at most the cap and the sockets' buffers were taken, never 1 GB
    # (declared too long, before a byte of it is read).
    assert pushed.sent < (cap if not declared else 0) + (48 << 20), pushed.sent
    grew = server.peak_mb() - before_peak
    assert grew < 64, f"the server's peak memory grew {grew:.0f} MB"
    assert server.rss_mb() - before_rss < 64
    incoming = tmp_path / "data" / "incoming"
    assert not incoming.exists() or os.listdir(incoming) == []  # nothing of it is kept
    listed = http(server.port, "GET", "/api/v1/submissions", headers=bearer(token)).json()
    assert [s for s in listed["submissions"] if s["bot"] == "huge"] == []
    assert http(server.port, "GET", "/").status == 200 and server.alive()
    print(f"1 GiB upload ({'Content-Length' if declared else 'chunked'}): refused after "
          f"{pushed.sent >> 20} MiB sent, in {pushed.seconds:.2f} s; peak memory +{grew:.1f} MB")


class Watch(threading.Thread):
    """Fetches a public page every ``every_s`` until stopped: each answer's status and
    time (a public visitor during the flood)."""

    def __init__(self, port: int, path: str = "/", every_s: float = 0.5) -> None:
        super().__init__(daemon=True)
        self.port, self.path, self.every_s = port, path, every_s
        self.stop = threading.Event()
        self.answers: list[tuple[int, float]] = []

    def run(self) -> None:
        while not self.stop.is_set():
            began = time.monotonic()
            try:
                status = http(self.port, "GET", self.path, timeout=30).status
            except OSError:
                status = 0
            self.answers.append((status, time.monotonic() - began))
            self.stop.wait(self.every_s)


def test_a_thousand_submissions_in_a_minute_hold_the_daily_limit_exactly(
        tmp_path: Path) -> None:
    per_day = 10
    config = write_config(tmp_path, limits={"submissions_per_day": per_day,
                                            "bots_per_author": 5000},
                          # all 16 clients' uploads at once: the daily limit is tested
                          uploads={"at_once": 16, "at_once_per_author": 16})
    token = add_author(tmp_path / "arena.db", "ada")
    other = add_author(tmp_path / "arena.db", "bob")
    body = hostile.files(GOOD_FILES)
    with serving(config) as server:
        watch = Watch(server.port)
        watch.start()

        def one(n: int) -> tuple[int, str]:
            reply = http(server.port, "POST", f"/api/v1/bots/flood-{n}/versions?game=stop-me",
                         body, bearer(token, **{"Content-Type": "application/gzip"}),
                         timeout=60)
            code = reply.json().get("error", {}).get("code", "") if reply.status != 202 else ""
            return reply.status, code

        began = time.monotonic()
        with ThreadPoolExecutor(16) as pool:
            answers = list(pool.map(one, range(1000)))
        took = time.monotonic() - began
        time.sleep(1.0)
        watch.stop.set()
        watch.join(60)
        counted = Counter(answers)
        assert counted[(202, "")] == per_day, counted
        assert set(counted) <= {(202, ""), (429, "limit-submissions-per-day"),
                                (503, "busy")}, counted
        # The store agrees: exactly the limit, no more.
        listed = http(server.port, "GET", "/api/v1/submissions", headers=bearer(token))
        assert len(listed.json()["submissions"]) == per_day
        # The public page answered all along; another author is not limited by ada.
        assert watch.answers and all(s == 200 for s, _ in watch.answers), watch.answers
        slowest = max(t for _, t in watch.answers)
        assert slowest < SERVED_WITHIN_S, watch.answers
        reply = http(server.port, "POST", "/api/v1/bots/bobs/versions?game=stop-me", body,
                     bearer(other, **{"Content-Type": "application/gzip"}))
        assert reply.status == 202, reply.text
        assert server.alive(), server.log()
    print(f"1000 submissions in {took:.1f} s: {dict(counted)}; the public page answered "
          f"{len(watch.answers)} times, slowest {slowest:.2f} s")


class Trickle(threading.Thread):
    """Sends ``head``, then ``body`` one byte every ``interval_s``, until the server
    closes the connection or ``limit_s`` passes: when it was cut off."""

    def __init__(self, port: int, head: bytes, body: bytes, interval_s: float = 0.5,
                 limit_s: float = 30.0) -> None:
        super().__init__(daemon=True)
        self.port, self.head, self.body = port, head, body
        self.interval_s, self.limit_s = interval_s, limit_s
        self.cut_after: float | None = None
        self.answer = b""
        self.sent = 0

    def run(self) -> None:
        with socket.create_connection((HOST, self.port), timeout=10) as sock:
            began = time.monotonic()
            try:
                sock.sendall(self.head)
                while time.monotonic() - began < self.limit_s and self.sent < len(self.body):
                    sock.sendall(self.body[self.sent:self.sent + 1])
                    self.sent += 1
                    sock.settimeout(self.interval_s)
                    try:
                        data = sock.recv(65536)
                    except TimeoutError:
                        continue
                    self.answer += data
                    if not data:
                        break
            except OSError:
                pass
            self.cut_after = time.monotonic() - began


def test_slow_and_idle_connections_leave_room_for_a_real_author(tmp_path: Path) -> None:
    """At a cap of 16 connections, a 2 s request deadline and a 4 s upload deadline:
    24 idle connections, a slowloris on the headers, three uploads whose bodies trickle
    in, and kept-alive connections left idle. A real author still submits a bot and reads its status
    within seconds, the slow uploads are cut at the deadline, and no half upload
    is kept."""
    config = write_config(tmp_path, server={"upload_timeout_s": 4})
    token = add_author(tmp_path / "arena.db", "ada")
    body = hostile.files(GOOD_FILES)
    with serving(config, "--request-timeout", "2", "--max-connections", "16",
                 "--idle-timeout", "3") as server, ExitStack() as stack:
        # First alone, so that no eviction at the cap cuts them: the deadline does.
        slow_head = Trickle(server.port, b"GET / HTTP/1.1\r\nHost: arena\r\nX-Slow: ",
                            b"a" * 1000)
        uploads = [Trickle(server.port, upload_head(token, f"slow{n}", length=len(body)),
                           body) for n in range(3)]
        for thread in (slow_head, *uploads):
            thread.start()
        for thread, deadline_s in ((slow_head, 2), *((u, 4) for u in uploads)):
            thread.join(30)  # a head by the request deadline, a body by the upload one
            assert thread.cut_after is not None \
                and deadline_s - 0.5 <= thread.cut_after < deadline_s + 8, thread.cut_after
            assert 3 <= thread.sent < len(thread.body), "it was never cut off"
        # Then all at once, and more: the cap makes room for a real client.
        slowloris = Trickle(server.port, b"GET / HTTP/1.1\r\nHost: arena\r\nX-Slow: ",
                            b"a" * 1000)
        late = Trickle(server.port, upload_head(token, "late", length=len(body)), body)
        slowloris.start()
        late.start()
        for n in range(24):  # idle: nothing, half a request line, a line and a header
            sock = stack.enter_context(socket.create_connection((HOST, server.port),
                                                                timeout=10))
            sock.sendall([b"", b"POST /api/v1/bo", b"GET / HTTP/1.1\r\nHost: a\r\n"][n % 3])
        for _ in range(4):  # kept alive after one answer, then silent
            sock = stack.enter_context(socket.create_connection((HOST, server.port),
                                                                timeout=10))
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: arena\r\n\r\n")
            sock.recv(65536)
        began = time.monotonic()
        reply = None
        while time.monotonic() - began < SERVED_WITHIN_S:
            try:
                reply = http(server.port, "POST", "/api/v1/bots/real/versions?game=stop-me",
                             body, bearer(token, **{"Content-Type": "application/gzip"}),
                             timeout=SERVED_WITHIN_S)
            except OSError:
                reply = None  # cut off, or refused at the cap: a fair answer; try again
            if reply is not None and reply.status == 202:
                break
            time.sleep(0.2)
        took = time.monotonic() - began
        assert reply is not None and reply.status == 202, (reply, server.log()[-2000:])
        sid = reply.json()["id"]
        status = http(server.port, "GET", f"/api/v1/submissions/{sid}", headers=bearer(token))
        assert status.status == 200 and status.json()["bot"] == "real"
        for thread in (slowloris, late):
            thread.join(30)
            assert thread.cut_after is not None and thread.cut_after < 10.0
        incoming = tmp_path / "data" / "incoming"
        deadline = time.monotonic() + 10
        while os.listdir(incoming) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert os.listdir(incoming) == [], "a cut-off upload left its file"
        listed = http(server.port, "GET", "/api/v1/submissions", headers=bearer(token)).json()
        assert [s["bot"] for s in listed["submissions"]] == ["real"]
        assert server.alive(), server.log()
    print(f"the slow uploads were cut after {max(u.cut_after or 0 for u in uploads):.1f} s; "
          f"a real author got in after {took:.2f} s")


def test_an_upload_may_take_longer_than_a_page_request(tmp_path: Path) -> None:
    """A bot's archive sent slowly, over longer than the request deadline (2 s) but
    within the upload deadline, is taken: 20 MB would need 2 MB/s otherwise (found by
    the end-to-end tests); a page request of the same pace is cut at 2 s."""
    config = write_config(tmp_path, server={"upload_timeout_s": 60})
    token = add_author(tmp_path / "arena.db", "ada")
    body = hostile.files(GOOD_FILES)
    with serving(config, "--request-timeout", "2") as server:
        with socket.create_connection((HOST, server.port), timeout=30) as sock:
            sock.sendall(upload_head(token, "patient", length=len(body)))
            began = time.monotonic()
            pieces = 8
            for n in range(pieces):  # the body over about 4 s
                sock.sendall(body[n * len(body) // pieces:(n + 1) * len(body) // pieces])
                time.sleep(0.5)
            answer = sock.recv(65536)
        assert time.monotonic() - began > 3
        assert answer.startswith(b"HTTP/1.1 202"), answer[:300]
        page = Trickle(server.port, b"GET / HTTP/1.1\r\nHost: arena\r\nX-Slow: ", b"a" * 100)
        page.start()
        page.join(30)
        assert page.cut_after is not None and 1.5 <= page.cut_after < 10, page.cut_after
