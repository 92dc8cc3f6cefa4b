"""What keeps slow, idle and too many clients from denying ``arena serve`` (issue 13 A9):
the numbers and the pieces that need no event loop; :mod:`arena.web.server` applies
them to uvicorn's connections.

A thread per connection with no timeout and no cap let 130 idle connections at a
128-descriptor limit stop the server until they closed, and past the limit its accept
loop spun on EMFILE. Now:

- a **connection cap**, kept below the process's ``RLIMIT_NOFILE`` minus a reserve of
  descriptors for everything else the server opens (:func:`connection_cap`);
- a **total deadline per request**: the request line, headers and any body must arrive
  within ``request_timeout_s`` of the connection (or of the first byte of a keep-alive
  connection's next request), however slowly the bytes trickle (a per-``recv`` timeout
  alone lets one byte a second go on for ever);
- an **idle timeout** for a keep-alive connection waiting for its next request;
- at the cap, the connection that has waited longest on its client, for its request or
  for the client to take its answer, is **cut off** to make room, so a
  flood of idle connections, or of clients that pipeline requests and never read the
  answers, cannot keep a real client out; only when every slot is busy building a page
  is a newcomer **refused** with a ``503`` (:func:`refuse`);
- a **spare descriptor**, given up to accept and refuse one connection when the process
  is out of descriptors anyway, so that accept never spins on EMFILE (:class:`Spare`).
"""

from __future__ import annotations

import os
import resource
import socket
from dataclasses import dataclass

RENDER_SLOTS = 4
"""Pages built at once (each in a worker thread). More gain nothing under the GIL, and
each build holds a SQLite connection (up to three descriptors: the database, its WAL
and its shm)."""

CLOSING_FDS = 8
"""Connections cut off but not yet closed by the event loop (it closes them on its next
turn)."""

RESERVE_FDS = 16 + 3 * RENDER_SLOTS + CLOSING_FDS
"""Descriptors kept out of the connection cap: stdio, the listening socket, the event
loop's selector and self-pipe, the spare, logs and imported modules (16), the page
builds' SQLite files, and the connections being cut off."""

WRITE_TIMEOUT_S = 30.0
"""How long one write of a response may take: a client that does not read its page
gives up its slot after this (a 600 KB replay page needs 20 KB/s)."""

HEAD_BYTES = 64 * 1024
"""Bytes of a request's line and headers the server buffers (uvicorn's
``h11_max_incomplete_event_size``): more is answered 414 or 431. http.server alone
allowed 100 lines of 64 KiB each and kept them all: 120 connections held 790 MB."""


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
    upload_timeout_s: float = 300.0
    """An upload's body (a bot's archive, to the API or the form) must arrive within this
    of its request's head: 20 MB in the request deadline would need 2 MB/s (found by the
    end-to-end tests)."""


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
