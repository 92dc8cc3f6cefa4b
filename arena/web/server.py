"""``arena serve``: the web app (:mod:`arena.web.app`) on uvicorn, held to the limits of
:mod:`arena.web.limits` (issue 13 A9, kept on the new stack by issue 15 §1).

uvicorn alone has an idle keep-alive timeout and a cap on an incomplete request's
bytes, but no deadline for a whole request and no cap on connections that it would
keep below the descriptor limit. Here:

- :class:`GuardedH11` (uvicorn's h11 protocol) arms a **deadline** when a connection
  opens and at the first byte of each next request: the request line, headers and
  body must all be in by then, however slowly they trickle, or the connection is
  closed without an answer; an answer the client does not take within
  :data:`~arena.web.limits.WRITE_TIMEOUT_S` is dropped too;
- at the **connection cap** a newcomer closes the connection that has waited longest
  on its client (for its request, or for the client to read its answer); if every
  connection is being answered, the newcomer gets a ``503``;
- a request that HTTP itself rejects gets the site's error page (``414``, ``431``,
  ``405``, ``400``) with the site's headers, not uvicorn's plain text;
- :class:`Listener` accepts connections itself and, out of descriptors (``EMFILE``),
  gives up a **spare** descriptor to accept and refuse one, so it never spins.
"""

from __future__ import annotations

import asyncio
import errno
import functools
import logging
import re
import socket
import sys
import threading
import time
from http import HTTPStatus
from pathlib import Path
from typing import Any

import h11
import uvicorn
from starlette.applications import Starlette
from uvicorn.protocols.http.h11_impl import H11Protocol

from .app import MAX_HEADERS, create_app, security_headers
from .config import ServerConfig, with_overrides
from .limits import HEAD_BYTES, WRITE_TIMEOUT_S, ServeLimits, Spare, connection_cap, refuse
from .pages import error_page

log = logging.getLogger(__name__)

BACKLOG = 128
"""The kernel's queue of connections not yet accepted: a burst waits there, not refused."""


def raw_response(status: int, message: str, *, head: bool = False,
                 extra: dict[str, str] | None = None) -> bytes:
    """A whole HTTP/1.1 answer with the site's error page and headers, then a close: for
    what is answered before (or instead of) the app."""
    body = b"" if head else error_page(status, message, "/").encode()
    length = len(error_page(status, message, "/").encode())
    headers = {"Content-Type": "text/html; charset=utf-8", **security_headers(), **(extra or {}),
               "Connection": "close", "Content-Length": str(length)}
    lines = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
    phrase = HTTPStatus(status).phrase
    return f"HTTP/1.1 {status} {phrase}\r\n{lines}\r\n".encode("latin-1") + body


BUSY = raw_response(503, "The server is busy: too many connections are open. Try again in a "
                    "moment.", extra={"Retry-After": "2"})


class Guard:
    """The limits every connection of one server shares."""

    def __init__(self, limits: ServeLimits, cap: int) -> None:
        self.limits = limits
        self.cap = cap
        self.connections: set[GuardedH11] = set()

    def admit(self, newcomer: GuardedH11) -> bool:
        """Room for ``newcomer``: at the cap, close the connection that has waited longest on
        its client; False if every one is being answered (then the newcomer is refused)."""
        if len(self.connections) < self.cap:
            self.connections.add(newcomer)
            return True
        waiting = [c for c in self.connections if c.waiting_since is not None]
        if not waiting:
            return False
        victim = min(waiting, key=lambda c: c.waiting_since or 0.0)
        victim.cut_off("cut off to make room for a newer connection")
        self.connections.add(newcomer)
        return True


_UPLOAD = re.compile(r"/api/v1/bots/[^/]+/versions|/me/upload")


def is_upload(method: str, path: str) -> bool:
    """Whether a request is a bot's upload (the API's or the form's), whose body may take
    ``upload_timeout_s``; decided on the head alone, before the app sees the request."""
    return method == "POST" and _UPLOAD.fullmatch(path) is not None


class GuardedH11(H11Protocol):
    """uvicorn's h11 protocol with a deadline per request, a write timeout, eviction at the
    connection cap and the site's error pages for malformed requests."""

    def __init__(self, *args: Any, guard: Guard, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.guard = guard
        self.waiting_since: float | None = None
        """When it began to wait on its client (for a request, or to read its answer);
        None while its answer is being built (it is not cut off then)."""
        self._deadline: asyncio.TimerHandle | None = None
        self._write_timer: asyncio.TimerHandle | None = None
        self._request_start = b""
        self._line_bytes: int | None = None
        """Bytes of the current request line so far (negative once it has ended)."""
        self._head_lines = 0
        self._served = False
        """Whether it has answered a request (the next one's deadline runs from its first
        byte; the first one's from the connection)."""
        self._uploading: bool | None = False
        """Whether the current request is an upload (None: looked at, and it is not)."""

    # -- the connection
    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        if not self.guard.admit(self):
            transport.write(BUSY)
            transport.close()
            return
        self._arm_deadline()

    def connection_lost(self, exc: Exception | None) -> None:
        self.guard.connections.discard(self)
        self._cancel_deadline()
        if self._write_timer is not None:
            self._write_timer.cancel()
        super().connection_lost(exc)

    def cut_off(self, why: str) -> None:
        """Close now, dropping whatever is unsent."""
        log.info("%s: %s", self.client, why)
        self.guard.connections.discard(self)
        self.waiting_since = None
        self.transport.abort()

    # -- the request deadline (issue 13 A9: a per-read timeout lets a slowloris go on)
    def _arm_deadline(self) -> None:
        self._cancel_deadline()
        self.waiting_since = time.monotonic()
        self._deadline = self.loop.call_later(self.guard.limits.request_timeout_s,
                                              self._too_slow)

    def _cancel_deadline(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _too_slow(self) -> None:
        self._deadline = None
        if not self._request_in():
            log.info("%s: the request did not arrive in time", self.client)
            self.guard.connections.discard(self)
            self.transport.close()

    def _between_requests(self) -> bool:
        return self.cycle is None or self.cycle.response_complete

    def _request_in(self) -> bool:
        """Whether the current request has arrived whole (it is being answered)."""
        return self.cycle is not None and not self.cycle.response_complete \
            and not self.cycle.more_body

    def _after_events(self) -> None:
        if self._request_in():
            self._cancel_deadline()
            self.waiting_since = None
        elif self._uploading is False and self.cycle is not None and self.cycle.more_body:
            # The head is in: an upload's body gets the upload deadline, from now; any
            # other body keeps the request's (docs/server.md, upload_timeout_s).
            self._uploading = is_upload(self.cycle.scope["method"],
                                        self.cycle.scope["path"]) or None
            if self._uploading and self._deadline is not None:
                self._deadline.cancel()
                self._deadline = self.loop.call_later(self.guard.limits.upload_timeout_s,
                                                      self._too_slow)

    def data_received(self, data: bytes) -> None:
        if self._between_requests() and self.conn.their_state is h11.IDLE \
                and not self._request_start:
            self._request_start = data[:64]  # its method, should h11 refuse the request
            self._line_bytes, self._head_lines = 0, 0
            if self._served or self._deadline is None:
                self._arm_deadline()  # from the first byte of a kept-alive one's next request
        if self.conn.their_state is h11.IDLE:  # the head's lines, for a 431 if h11 refuses it
            self._head_lines += data.count(b"\n")
        if self._line_bytes is not None:  # how long the request line is, for a 414
            end = data.find(b"\n")
            self._line_bytes += len(data) if end < 0 else end
            if end >= 0:
                self._line_bytes = -self._line_bytes  # ended: its length, kept negative
        super().data_received(data)
        self._after_events()

    def on_response_complete(self) -> None:
        self._request_start, self._line_bytes, self._served = b"", None, True
        self._uploading = False
        super().on_response_complete()  # arms uvicorn's idle keep-alive timeout
        if not self.transport.is_closing() and self._between_requests():
            self.waiting_since = time.monotonic()
        self._after_events()  # a pipelined request already in

    # -- the answer: a client that does not read it waits on itself
    def pause_writing(self) -> None:
        super().pause_writing()
        self.waiting_since = time.monotonic()
        if self._write_timer is None:
            self._write_timer = self.loop.call_later(
                WRITE_TIMEOUT_S, self.cut_off, "the client did not take its answer in time")

    def resume_writing(self) -> None:
        super().resume_writing()
        if self._write_timer is not None:
            self._write_timer.cancel()
            self._write_timer = None
        if not self._between_requests():
            self.waiting_since = None

    # -- what h11 refuses, as the site's pages
    def send_400_response(self, msg: str) -> None:
        """Called by uvicorn inside its ``except h11.RemoteProtocolError``: which error."""
        error = sys.exc_info()[1]
        buffered = self.conn.trailing_data[0]
        method = self._request_start.split(b" ", 1)[0]
        head = method == b"HEAD"
        line = abs(self._line_bytes or 0)
        if line > HEAD_BYTES or (str(error) == "Receive buffer too long"
                                 and b"\n" not in buffered):
            answer = raw_response(414, "Request-URI Too Long: the request line is longer "
                                  f"than {HEAD_BYTES // 1024} KiB.", head=head)
        elif str(error) == "Receive buffer too long":
            answer = raw_response(431, "Request Header Fields Too Large: they take more "
                                  f"than {HEAD_BYTES // 1024} KiB, the most this server "
                                  "reads.", head=head)
        elif self._head_lines > MAX_HEADERS + 1:  # h11 found no Host: among the 100
            answer = raw_response(431, "Request Header Fields Too Large: Too many headers "
                                  f"(more than {MAX_HEADERS}).", head=head)
        elif method.isalpha() and method not in (b"GET", b"HEAD"):
            name = method.decode("ascii")
            answer = raw_response(405, f"This server only shows pages: {name} is not allowed, "
                                  "only GET and HEAD.", extra={"Allow": "GET, HEAD"})
        else:
            answer = raw_response(400, f"Bad request: {error or msg}.", head=head)
        log.info("%s: refused a malformed request (%s)", self.client, error)
        self.guard.connections.discard(self)
        self.transport.write(answer)
        self.transport.close()


class Listener:
    """Accepts connections for uvicorn (in place of ``loop.create_server``), so that out of
    descriptors it can refuse one with its spare instead of leaving the listening socket
    readable for ever: the accept loop never spins on EMFILE."""

    def __init__(self, sock: socket.socket, loop: asyncio.AbstractEventLoop,
                 factory: Any) -> None:
        self.sock, self.loop, self.factory = sock, loop, factory
        self.spare = Spare()
        self.closed = False
        sock.setblocking(False)
        loop.add_reader(sock.fileno(), self._accept)

    def _accept(self) -> None:
        for _ in range(BACKLOG):
            try:
                conn, _ = self.sock.accept()
            except BlockingIOError:
                return
            except OSError as err:
                if err.errno in (errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM):
                    self._shed()
                else:
                    log.warning("accept failed: %s", err)
                return
            conn.setblocking(False)
            self.loop.create_task(self._connect(conn))

    async def _connect(self, conn: socket.socket) -> None:
        try:
            await self.loop.connect_accepted_socket(self.factory, conn)
        except OSError:
            conn.close()

    def _shed(self) -> None:
        shed = False
        if self.spare.give_up():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                pass
            else:
                refuse(conn, BUSY)
                shed = True
        if not (self.spare.take() and shed):
            # Even the spare did not help: stop reading the socket a moment, never spin.
            self.loop.remove_reader(self.sock.fileno())
            self.loop.call_later(0.1, self._resume)

    def _resume(self) -> None:
        if not self.closed:
            self.loop.add_reader(self.sock.fileno(), self._accept)

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self.loop.remove_reader(self.sock.fileno())
            self.spare.close()

    async def wait_closed(self) -> None:
        """Nothing to wait for (uvicorn's shutdown calls it)."""


class _Uvicorn(uvicorn.Server):
    """uvicorn, its connections made by :class:`Listener` with the guarded protocol."""

    def __init__(self, config: uvicorn.Config, sock: socket.socket, guard: Guard) -> None:
        super().__init__(config)
        self.sock, self.guard = sock, guard

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        # The app's lifespan first (the competition server starts its submission
        # pipeline there), as uvicorn's own startup does; a failed start stops the server.
        await self.lifespan.startup()
        if self.lifespan.should_exit:
            raise SystemExit(3)
        loop = asyncio.get_running_loop()
        factory = functools.partial(GuardedH11, config=self.config,
                                    server_state=self.server_state,
                                    app_state=self.lifespan.state, _loop=loop,
                                    guard=self.guard)
        self.servers = [Listener(self.sock, loop, factory)]  # type: ignore[list-item]
        self.started = True


class ArenaServer:
    """uvicorn on a socket bound beforehand (so ``port 0`` is known at once), with the
    guarded protocol and the listener above; ``serve_forever``/``shutdown``/
    ``server_close`` as before, so it also runs in a thread (the tests, the bench)."""

    def __init__(self, app: Starlette, sock: socket.socket, limits: ServeLimits,
                 cap: int, trusted_proxies: tuple[str, ...] = ("127.0.0.1", "::1")) -> None:
        self.app = app
        self.sock = sock
        self.guard = Guard(limits, cap)
        self.uvicorn = _Uvicorn(uvicorn.Config(
            app, http="h11", ws="none", lifespan="auto", log_config=None, access_log=False,
            # Only these peers' X-Forwarded-For is believed (docs/server.md, the proxy).
            proxy_headers=True, forwarded_allow_ips=list(trusted_proxies),
            timeout_keep_alive=limits.idle_timeout_s,  # type: ignore[arg-type]
            h11_max_incomplete_event_size=HEAD_BYTES, backlog=BACKLOG,
            timeout_graceful_shutdown=2), sock, self.guard)
        self._done = threading.Event()

    @property
    def server_address(self) -> tuple[str, int]:
        host, port = self.sock.getsockname()[:2]
        return str(host), int(port)

    @property
    def cap(self) -> int:
        """Connections served at once (``--max-connections``, lowered to fit the limit)."""
        return self.guard.cap

    def serve_forever(self) -> None:
        """Serve until :meth:`shutdown` (or SIGINT/SIGTERM, in the main thread)."""
        try:
            asyncio.run(self.uvicorn.serve())
        finally:
            self._done.set()

    def shutdown(self) -> None:
        """Stop serving (from another thread) and wait for it."""
        self.uvicorn.should_exit = True
        self._done.wait(15)

    def server_close(self) -> None:
        self.sock.close()


def bind(host: str, port: int) -> socket.socket:
    """The listening socket (IPv6 for a host with ":"); OSError if it cannot be had."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    return socket.create_server((host, port), family=family, backlog=BACKLOG)


def make_server(config: ServerConfig | str | Path, host: str | None = None,
                port: int | None = None, busy_timeout_s: float = 2.0,
                limits: ServeLimits | None = None, *, app: Starlette | None = None
                ) -> ArenaServer:
    """A bound server over the app of ``config`` (or a database path, with ``host`` and
    ``port``); call ``serve_forever()`` to run it and ``shutdown()``/``server_close()`` to
    stop it. Raises :class:`arena.web.limits.LimitError` if ``RLIMIT_NOFILE`` leaves no
    room, OSError if the address cannot be had."""
    if not isinstance(config, ServerConfig):
        config = with_overrides(ServerConfig(), database=str(config), host=host, port=port)
    if limits is None:
        limits = ServeLimits(config.server.max_connections, config.server.request_timeout_s,
                             config.server.idle_timeout_s, config.server.upload_timeout_s)
    cap = connection_cap(limits.max_connections)
    sock = bind(config.server.host if host is None else host,
                config.server.port if port is None else port)
    return ArenaServer(app or create_app(config, busy_timeout_s=busy_timeout_s), sock,
                       limits, cap, config.server.trusted_proxies)


def is_loopback(host: str) -> bool:
    """Whether ``host`` is reachable only from this machine."""
    return host in ("localhost", "::1") or host.startswith("127.")
