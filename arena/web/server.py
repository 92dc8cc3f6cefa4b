"""A small read-only web server over the arena database (standard library only).

GET and HEAD only; every other method gets a 405 page. Each request opens
the database read-only (SQLite ``mode=ro``), so the server never writes and
sees a running tournament's newest games; a database that stays locked past
the busy timeout gets a 503 page with a sentence, never a traceback.
"""

from __future__ import annotations

import base64
import hashlib
import logging
import socket
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urlsplit

from leaderboard.store import StoreError
from leaderboard.web import ReadOnlyStore, error_page, is_busy

from .replay_js import SCRIPT
from .site import render, root_of

log = logging.getLogger(__name__)

# The only script a page may run is the replay viewer's: allowed by its hash, not with
# 'unsafe-inline', so markup that ever slipped past the escaping could run nothing.
SCRIPT_HASH = "sha256-" + base64.b64encode(hashlib.sha256(SCRIPT.encode()).digest()).decode()

HEADERS = {
    "Content-Type": "text/html; charset=utf-8",
    "Cache-Control": "no-store",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    # Everything is inline and nothing is fetched: say so, so a page can load nothing else.
    "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; "
                               f"script-src '{SCRIPT_HASH}'; img-src data:; base-uri 'none'; "
                               "form-action 'none'",
}


class ArenaServer(ThreadingHTTPServer):
    """The HTTP server, with the database it shows."""

    daemon_threads = True

    def __init__(self, address: tuple[str, int], db_path: Path, busy_timeout_s: float) -> None:
        self.db_path = db_path
        self.busy_timeout_s = busy_timeout_s
        super().__init__(address, Handler)


class ArenaServer6(ArenaServer):
    """The same over IPv6 (``--host ::1``)."""

    address_family = socket.AF_INET6


class Handler(BaseHTTPRequestHandler):
    """GET and HEAD of the site's pages; 405 for anything else."""

    server: ArenaServer
    server_version = "arena-web"
    sys_version = ""

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
        segments = self._segments()
        if segments is None:
            return 400, error_page(400, "This address is not a page of this site.", "/")
        try:
            store = ReadOnlyStore(self.server.db_path, self.server.busy_timeout_s)
        except StoreError as err:
            message = ("The database is busy (a tournament is writing to it); try again in a "
                       "moment." if is_busy(err) else f"The database cannot be read now: {err}")
            return 503, error_page(503, message, root_of(segments))
        try:
            return render(store, segments)
        finally:
            store.close()

    def _send(self, status: int, body: str, head: bool = False,
              extra: dict[str, str] | None = None) -> None:
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
        self._send(status, body, head=True)

    def _refuse(self) -> None:
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:  # "Content-Length: abc" was a ValueError and no answer at all
            length = 0
        if 0 < length <= 1 << 20:
            self.rfile.read(length)  # read what was sent, so the client sees the answer
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
        self._send(code, error_page(code, f"{sentence}.", "/"), head=self.command == "HEAD")

    def log_message(self, format: str, *args: object) -> None:
        log.info("%s %s", self.address_string(), format % args)


def make_server(db_path: str | Path, host: str = "127.0.0.1", port: int = 8000,
                busy_timeout_s: float = 2.0) -> ArenaServer:
    """A bound server (port 0: any free port, see ``server.server_address``); call
    ``serve_forever()`` to run it and ``shutdown()``/``server_close()`` to stop it."""
    cls = ArenaServer6 if ":" in host else ArenaServer
    return cls((host, port), Path(db_path), busy_timeout_s)


def is_loopback(host: str) -> bool:
    """Whether ``host`` is reachable only from this machine."""
    return host in ("localhost", "::1") or host.startswith("127.")
