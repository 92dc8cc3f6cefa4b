"""A small read-only web server over the arena database (standard library only).

GET and HEAD only; every other method gets a 405 page. Each request opens
the database read-only (SQLite ``mode=ro``), so the server never writes and
sees a running tournament's newest games; a database that stays locked past
the busy timeout gets a 503 page with a sentence, never a traceback. Slow, idle
and too many clients are held to the limits of :mod:`arena.web.limits`.
"""

from __future__ import annotations

import base64
import errno
import hashlib
import logging
import socket
import sys
import threading
import time
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urlsplit

from leaderboard.store import StoreBusyError, StoreError, StoreReader

from .limits import (
    HEAD_BYTES,
    RENDER_SLOTS,
    WRITE_TIMEOUT_S,
    DeadlineReader,
    ServeLimits,
    Slots,
    Spare,
    connection_cap,
    refuse,
)
from .pages import error_page
from .site import render, root_of

log = logging.getLogger(__name__)

# The only script a page may run is the replay viewer's: allowed by its hash, not with
# 'unsafe-inline', so markup that ever slipped past the escaping could run nothing.
from .templating import static_hash
SCRIPT_HASH = static_hash("replay.js")

HEADERS = {
    "Content-Type": "text/html; charset=utf-8",
    "Cache-Control": "no-store",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    # Everything is inline and nothing is fetched: say so, so a page can load nothing else.
    "Content-Security-Policy": "default-src 'none'; style-src 'self'; "
                               f"script-src '{SCRIPT_HASH}'; img-src data:; base-uri 'none'; "
                               "form-action 'none'",
}


_Request = socket.socket | tuple[bytes, socket.socket]  # socketserver's request type


class ArenaServer(ThreadingHTTPServer):
    """The HTTP server, with the database it shows and the limits it keeps (issue 13 A9)."""

    daemon_threads = True
    request_queue_size = 128  # the kernel's backlog: a burst waits there, not refused

    def __init__(self, address: tuple[str, int], db_path: Path, busy_timeout_s: float,
                 limits: ServeLimits) -> None:
        self.db_path = db_path
        self.busy_timeout_s = busy_timeout_s
        self.limits = limits
        self.slots = Slots(connection_cap(limits.max_connections))
        self.render_slots = threading.BoundedSemaphore(RENDER_SLOTS)
        self.busy_response = _busy_response()
        self.spare = Spare()
        super().__init__(address, Handler)

    def get_request(self) -> tuple[socket.socket, object]:
        """Accept; out of descriptors (EMFILE), give up the spare to accept and refuse one
        connection, so the listening socket is drained and the loop never spins."""
        try:
            return self.socket.accept()
        except OSError as err:
            if err.errno in (errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM):
                self._shed()
            raise  # socketserver drops this round and selects again

    def _shed(self) -> None:
        shed = False
        if self.spare.give_up():
            try:
                sock, _ = self.socket.accept()
            except OSError:
                pass
            else:
                refuse(sock, self.busy_response)
                shed = True
        if not (self.spare.take() and shed):
            time.sleep(0.1)  # even the spare did not help: wait, never spin

    def process_request(self, request: _Request, client_address: object) -> None:
        """A thread for the connection if it gets a slot; else a 503 at once."""
        assert isinstance(request, socket.socket)  # a stream server's requests are sockets
        if not self.slots.admit(request, self.limits.request_timeout_s):
            refuse(request, self.busy_response)
            return
        try:
            super().process_request(request, client_address)
        except RuntimeError:  # no thread could be started: refused, not dropped
            self.slots.release(request)
            refuse(request, self.busy_response)

    def process_request_thread(self, request: _Request, client_address: object) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            assert isinstance(request, socket.socket)
            self.slots.release(request)

    def handle_error(self, request: object, client_address: object) -> None:
        """A client that went away mid-answer is a line in the log, not a traceback."""
        if isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            log.info("%s: %s", client_address, sys.exc_info()[1])
        else:
            log.exception("error answering %s", client_address)

    def server_close(self) -> None:
        super().server_close()
        self.spare.close()


def _busy_response() -> bytes:
    """The 503 sent to a connection refused before its request is read."""
    body = error_page(503, "The server is busy: too many connections are open. Try again "
                      "in a moment.", "/").encode()
    head = "".join(f"{key}: {value}\r\n" for key, value in HEADERS.items())
    return (f"HTTP/1.1 503 Service Unavailable\r\n{head}Retry-After: 2\r\n"
            f"Connection: close\r\nContent-Length: {len(body)}\r\n\r\n").encode() + body


class ArenaServer6(ArenaServer):
    """The same over IPv6 (``--host ::1``)."""

    address_family = socket.AF_INET6


class Handler(BaseHTTPRequestHandler):
    """GET and HEAD of the site's pages; 405 for anything else."""

    server: ArenaServer
    server_version = "arena-web"
    sys_version = ""
    protocol_version = "HTTP/1.1"  # keep-alive, each connection held to the idle timeout
    served = False

    def setup(self) -> None:
        """Reads bounded by the connection's deadline, each answer by WRITE_TIMEOUT_S."""
        super().setup()
        self.connection.settimeout(WRITE_TIMEOUT_S)
        self.rfile.close()
        self.reader = self.server.slots.reader(self.connection,
                                               self.server.limits.request_timeout_s)
        self.rfile = self.reader
        self.wfile.close()
        self.writer = self.server.slots.writer(self.connection)
        self.wfile = self.writer

    def handle_one_request(self) -> None:
        """One request; on a kept-alive connection first wait for it, at most the idle
        timeout, then give it the request timeout from its first byte (issue 13 A9)."""
        slots, limits = self.server.slots, self.server.limits
        if self.served:
            slots.waiting(self.request, limits.idle_timeout_s)
            try:
                if not self.reader.peek(1):
                    self.close_connection = True
                    return
            except OSError:  # the idle timeout (TimeoutError), or cut off for a newcomer
                self.close_connection = True
                return
            slots.waiting(self.request, limits.request_timeout_s)
        self.served = True
        self.writer.start(WRITE_TIMEOUT_S)  # for a "100 Continue", before any _send
        super().handle_one_request()

    def parse_request(self) -> bool:
        """The request line and headers, reading at most HEAD_BYTES of headers (issue 13
        A9: each connection could make the server keep 6.5 MB of them)."""
        raw = self.reader.raw
        assert isinstance(raw, DeadlineReader)
        raw.budget = HEAD_BYTES
        try:
            return super().parse_request()
        finally:
            raw.budget = None

    def _segments(self) -> list[str] | None:
        """The request path as decoded segments, or None if it tries to leave the site."""
        path = urlsplit(self.path).path
        segments = [unquote(s) for s in path.split("/")[1:]]
        if any(s in (".", "..") or "/" in s or "\x00" in s for s in segments):
            return None
        if segments and segments[-1] and not segments[-1].endswith(".html"):
            segments[-1] += ".html"  # /leaderboard/stop-me works as well as ...stop-me.html
        return segments

    def _page(self) -> tuple[int, str]:
        self.server.slots.answering(self.request)
        segments = self._segments()
        if segments is None:
            return 400, error_page(400, "This address is not a page of this site.", "/")
        if not self.server.render_slots.acquire(timeout=self.server.limits.request_timeout_s):
            return 503, error_page(503, "The server is busy building other pages; try again "
                                   "in a moment.", root_of(segments))
        try:
            return self._render(segments)
        finally:
            self.server.render_slots.release()

    def _render(self, segments: list[str]) -> tuple[int, str]:
        try:
            store = StoreReader(self.server.db_path, self.server.busy_timeout_s)
        except StoreError as err:
            message = ("The database is busy (a tournament is writing to it); try again in a "
                       "moment." if isinstance(err, StoreBusyError)
                       else f"The database cannot be read now: {err}")
            return 503, error_page(503, message, root_of(segments))
        try:
            return render(store, segments)
        finally:
            store.close()

    def _send(self, status: int, body: str, head: bool = False,
              extra: dict[str, str] | None = None) -> None:
        self.writer.start(WRITE_TIMEOUT_S)
        data = body.encode("utf-8")
        self.send_response(status)
        for key, value in {**HEADERS, **(extra or {})}.items():
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if not head:
            self.wfile.write(data)

    def do_GET(self) -> None:  # the http.server naming
        """A page."""
        status, body = self._page()
        self._send(status, body, extra={"Retry-After": "2"} if status == 503 else None)

    def do_HEAD(self) -> None:
        """A page's headers."""
        status, body = self._page()
        self._send(status, body, head=True,
                   extra={"Retry-After": "2"} if status == 503 else None)

    def _refuse(self) -> None:
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:  # "Content-Length: abc" was a ValueError and no answer at all
            length = 0
        if 0 < length <= 1 << 20:
            # Read what was sent, so the client sees the answer; in chunks, dropped: a
            # body of 1 MiB held whole while it trickled in cost 1 MiB a connection.
            while length > 0 and (chunk := self.rfile.read(min(length, 64 * 1024))):
                length -= len(chunk)
        self.close_connection = True
        self._send(405, error_page(405, f"This server only shows pages: {self.command} is not "
                                   "allowed, only GET and HEAD.", "/"),
                   extra={"Allow": "GET, HEAD"})

    do_POST = do_PUT = do_DELETE = do_PATCH = do_OPTIONS = do_TRACE = do_CONNECT = _refuse

    def send_error(self, code: int, message: str | None = None,
                   explain: str | None = None) -> None:
        """http.server's own errors (a malformed request, a line or headers too long, a
        method it does not know) as this site's pages, with its headers: its stock page
        had neither, and any unknown method (PROPFIND...) gets the 405 every other does."""
        if code == HTTPStatus.NOT_IMPLEMENTED and self.command:
            self._refuse()
            return
        self.close_connection = True
        sentence = message or HTTPStatus(code).phrase
        if code == HTTPStatus.REQUEST_HEADER_FIELDS_TOO_LARGE and explain:
            sentence = f"{sentence}: {explain}"  # which limit: lines, their count or bytes
        self._send(code, error_page(code, f"{sentence}.", "/"), head=self.command == "HEAD")

    def log_message(self, format: str, *args: object) -> None:
        log.info("%s %s", self.address_string(), format % args)


def make_server(db_path: str | Path, host: str = "127.0.0.1", port: int = 8000,
                busy_timeout_s: float = 2.0, limits: ServeLimits | None = None) -> ArenaServer:
    """A bound server (port 0: any free port, see ``server.server_address``); call
    ``serve_forever()`` to run it and ``shutdown()``/``server_close()`` to stop it.
    Raises :class:`arena.web.limits.LimitError` if ``RLIMIT_NOFILE`` leaves no room."""
    cls = ArenaServer6 if ":" in host else ArenaServer
    return cls((host, port), Path(db_path), busy_timeout_s, limits or ServeLimits())


def is_loopback(host: str) -> bool:
    """Whether ``host`` is reachable only from this machine."""
    return host in ("localhost", "::1") or host.startswith("127.")
