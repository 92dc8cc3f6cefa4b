"""What keeps slow, idle and too many clients from denying ``arena serve`` (issue 13 A9).

A thread per connection with no timeout and no cap let 130 idle connections at a
128-descriptor limit stop the server until they closed, and past the limit its accept
loop spun on EMFILE. Here:

- a **connection cap**, kept below the process's ``RLIMIT_NOFILE`` minus a reserve of
  descriptors for everything else the server opens (:func:`connection_cap`);
- a **total deadline per request**: the request line, headers and any body must arrive
  within ``request_timeout_s`` of the connection (or of the first byte of a keep-alive
  connection's next request), however slowly the bytes trickle (:class:`DeadlineReader`;
  a per-``recv`` timeout alone lets one byte a second go on for ever);
- an **idle timeout** for a keep-alive connection waiting for its next request;
- at the cap, the connection that has waited longest on its client, for its request or
  for the client to take its answer, is **cut off** to make room (:class:`Slots`), so a
  flood of idle connections, or of clients that pipeline requests and never read the
  answers, cannot keep a real client out; only when every slot is busy building a page
  is a newcomer **refused** with a ``503`` (:func:`refuse`);
- a **spare descriptor**, given up to accept and refuse one connection when the process
  is out of descriptors anyway, so that accept never spins on EMFILE (:class:`Spare`).
"""

from __future__ import annotations

import http.client
import io
import os
import resource
import socket
import threading
import time
from dataclasses import dataclass

RENDER_SLOTS = 4
"""Pages built at once. More threads gain nothing under the GIL, and each build holds a
SQLite connection (up to three descriptors: the database, its WAL and its shm)."""

EVICTING_MAX = 8
"""Connections cut off but not yet closed by their threads: beyond this a newcomer is
refused instead, so the descriptors in use stay bounded even under a fast flood."""

RESERVE_FDS = 16 + 3 * RENDER_SLOTS + EVICTING_MAX
"""Descriptors kept out of the connection cap: stdio, the listening socket, the selector,
the spare, logs and imported modules (16), the page builds' SQLite files, and the
connections being cut off."""

WRITE_TIMEOUT_S = 30.0
"""How long one write of a response may take: a client that does not read its page
gives up its slot after this (a 600 KB replay page needs 20 KB/s)."""

HEAD_BYTES = 64 * 1024
"""Bytes of headers a request may send. http.server alone allows 100 lines of 64 KiB
each, and keeps them all: 120 connections held 790 MB of the server's memory."""

WRITE_CHUNK = 64 * 1024
"""Bytes of a response sent at a time: each chunk the client takes shows it is reading."""


@dataclass(frozen=True)
class ServeLimits:
    """The limits of ``arena serve`` (its ``--max-connections``, ``--request-timeout`` and
    ``--idle-timeout`` options)."""

    max_connections: int = 128
    """Connections served at once; lowered to fit ``RLIMIT_NOFILE`` (:func:`connection_cap`)."""
    request_timeout_s: float = 10.0
    """The whole request (line, headers, body) must arrive within this."""
    idle_timeout_s: float = 5.0
    """A keep-alive connection is closed after this long without a new request."""


class LimitError(ValueError):
    """The descriptor limit leaves no room to serve."""


def connection_cap(wanted: int) -> int:
    """``wanted``, lowered to the soft ``RLIMIT_NOFILE`` minus :data:`RESERVE_FDS`, so
    that a full house of connections never runs the process out of descriptors."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return wanted
    room = soft - RESERVE_FDS
    if room < 1:
        raise LimitError(f"the open-file limit (ulimit -n) is {soft}: the server needs more "
                         f"than {RESERVE_FDS} descriptors; raise it with ulimit -n")
    return min(wanted, room)


@dataclass
class _Connection:
    sock: socket.socket
    deadline: float | None
    """While waiting on the client (for a request, or for it to take its answer): when to
    give up (time.monotonic). None while its answer is being built."""
    since: float
    """When the current wait began (for an answer, when the client last took a chunk of
    it): the longest waiting is cut off first."""
    evicted: bool = False


class Slots:
    """The connections being served, each waiting for its request or being answered."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self._lock = threading.Lock()
        self._connections: dict[socket.socket, _Connection] = {}

    def admit(self, sock: socket.socket, timeout_s: float) -> bool:
        """Take a slot for a new connection, cutting off the one that has waited longest
        for its request if all are taken; False if none can be freed (then refuse it)."""
        now = time.monotonic()
        with self._lock:
            if len(self._connections) >= self.cap:
                waiting = [c for c in self._connections.values()
                           if c.deadline is not None and not c.evicted]
                evicting = sum(c.evicted for c in self._connections.values())
                if not waiting or evicting >= EVICTING_MAX:
                    return False
                victim = min(waiting, key=lambda c: c.since)
                victim.evicted = True
                try:  # wakes its thread's recv (shutdown, never close, from another thread)
                    victim.sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass  # already gone
            self._connections[sock] = _Connection(sock, now + timeout_s, now)
            return True

    def waiting(self, sock: socket.socket, timeout_s: float) -> None:
        """The connection now waits for (the rest of) a request, for at most ``timeout_s``."""
        now = time.monotonic()
        with self._lock:
            if (connection := self._connections.get(sock)) is not None:
                connection.deadline, connection.since = now + timeout_s, now

    def answering(self, sock: socket.socket) -> None:
        """The connection's request is in: it is answered, and is not cut off meanwhile."""
        with self._lock:
            if (connection := self._connections.get(sock)) is not None:
                connection.deadline = None

    def sending(self, sock: socket.socket, deadline: float) -> None:
        """The connection now waits for its client to take (the next chunk of) its answer,
        until ``deadline``: a client that stops reading can be cut off for a newcomer, as
        one that stops sending can (issue 13 A9: pipelined requests whose answers are
        never read held every slot for the whole write timeout)."""
        with self._lock:
            if (connection := self._connections.get(sock)) is not None:
                connection.deadline, connection.since = deadline, time.monotonic()

    def release(self, sock: socket.socket) -> None:
        """The connection is closed: its slot is free."""
        with self._lock:
            self._connections.pop(sock, None)

    def reader(self, sock: socket.socket, timeout_s: float) -> io.BufferedReader:
        """The connection's request bytes, bounded by its deadline (an unadmitted socket,
        as a test may hand one over, gets a deadline ``timeout_s`` from now)."""
        with self._lock:
            connection = self._connections.get(sock)
        if connection is None:
            now = time.monotonic()
            connection = _Connection(sock, now + timeout_s, now)
        return io.BufferedReader(DeadlineReader(sock, connection))

    def writer(self, sock: socket.socket) -> DeadlineWriter:
        """The connection's answers, sent in chunks within a deadline per answer."""
        with self._lock:
            connection = self._connections.get(sock)
        if connection is None:
            now = time.monotonic()
            connection = _Connection(sock, None, now)
        return DeadlineWriter(sock, connection, self)

    def __len__(self) -> int:
        with self._lock:
            return len(self._connections)


class HeadersTooLarge(http.client.HTTPException):
    """A request's headers are over :data:`HEAD_BYTES` (http.server answers it 431)."""


class DeadlineReader(io.RawIOBase):
    """A socket's bytes, each ``recv`` bounded by the time left until the connection's
    deadline: a request trickled one byte at a time still ends at its deadline. While
    ``budget`` is set (the headers are read), at most that many bytes more are read."""

    def __init__(self, sock: socket.socket, connection: _Connection) -> None:
        super().__init__()
        self._sock = sock
        self._connection = connection
        self.budget: int | None = None

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        connection = self._connection
        if connection.evicted:
            raise TimeoutError("cut off to make room for a newer connection")
        if connection.deadline is not None:
            left = connection.deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("the request did not arrive in time")
            self._sock.settimeout(left)
        if self.budget is not None:
            if self.budget <= 0:
                raise HeadersTooLarge(f"they take more than {HEAD_BYTES // 1024} KiB, "
                                      f"the most this server reads")
            buffer = buffer[:self.budget]
        count = self._sock.recv_into(buffer)
        if self.budget is not None:
            self.budget -= count
        if connection.evicted:  # its recv was woken by the shutdown: not a client's EOF
            raise TimeoutError("cut off to make room for a newer connection")
        return count


class DeadlineWriter(io.BufferedIOBase):
    """A socket's answers: each answer must be taken within WRITE_TIMEOUT_S of its start
    (:meth:`start`), and while the client is taking it the connection counts as waiting
    on it (:meth:`Slots.sending`), so a client that never reads can be cut off."""

    def __init__(self, sock: socket.socket, connection: _Connection, slots: Slots) -> None:
        super().__init__()
        self._sock, self._connection, self._slots = sock, connection, slots
        self._deadline: float | None = None

    def writable(self) -> bool:
        return True

    def start(self, timeout_s: float = WRITE_TIMEOUT_S) -> None:
        """A new answer begins: it has ``timeout_s`` to be taken."""
        self._deadline = time.monotonic() + timeout_s

    def write(self, data: bytes | bytearray | memoryview) -> int:  # type: ignore[override]
        if self._deadline is None:
            self.start()
        assert self._deadline is not None
        with memoryview(data) as view, view.cast("B") as raw:
            for at in range(0, len(raw), WRITE_CHUNK):
                left = self._deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError("the client did not take its answer in time")
                self._slots.sending(self._sock, self._deadline)
                self._sock.settimeout(left)
                try:
                    self._sock.sendall(raw[at:at + WRITE_CHUNK])
                except OSError:
                    if self._connection.evicted:  # woken by the shutdown of admit
                        raise TimeoutError("cut off to make room for a newer connection") \
                            from None
                    raise
            return len(raw)

    def fileno(self) -> int:
        return self._sock.fileno()


def refuse(sock: socket.socket, response: bytes) -> None:
    """Answer ``response`` (a 503) without waiting on the client, then close."""
    try:
        sock.setblocking(False)
        try:
            sock.recv(65536)  # what has come of the request: unread, it would turn into a RST
        except OSError:
            pass
        sock.send(response)
        sock.shutdown(socket.SHUT_WR)
    except OSError:
        pass  # a client that is gone or not reading: nothing is owed to it
    finally:
        sock.close()


class Spare:
    """One descriptor held in reserve, given up to accept a connection (and refuse it)
    when the process is out of descriptors: a listening socket that cannot be accepted
    from stays readable, and the accept loop would spin on it."""

    def __init__(self) -> None:
        self._fd: int | None = None
        self.take()

    def take(self) -> bool:
        """Hold the spare again; False if there is no descriptor for it yet."""
        if self._fd is None:
            try:
                self._fd = os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC)
            except OSError:
                return False
        return True

    def give_up(self) -> bool:
        """Close the spare, so one descriptor is free; False if there was none to close."""
        if self._fd is None:
            return False
        os.close(self._fd)
        self._fd = None
        return True

    def close(self) -> None:
        """Close it for good."""
        self.give_up()
