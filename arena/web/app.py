"""The one web app (issue 15 §1): Starlette routing over the pages of :mod:`arena.web.site`,
the static files, a status endpoint, and whatever routes other parts add.

Every response carries the site's headers (no-store, nosniff, no-referrer) and a CSP
that allows nothing but the app's own stylesheet (``style-src 'self'``) and the replay
viewer's script, by its SHA-256 hash (``script-src 'sha256-...'``, which the script tag
repeats as ``integrity``). Each page is built in a worker thread over a read-only
:class:`~leaderboard.store.StoreReader` opened for it, at most
:data:`~arena.web.limits.RENDER_SLOTS` at once, so a slow page never stalls the event
loop; a database that stays locked gets the 503 page, an unknown page the 404 page.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from leaderboard.store import StoreBusyError, StoreError, StoreReader

from .config import ServerConfig
from .limits import HEAD_BYTES, RENDER_SLOTS
from .pages import error_page
from .site import render, root_of
from .templating import STATIC_DIR, STATIC_FILES, STATIC_PREFIX, static_hash

log = logging.getLogger(__name__)

BUSY_TIMEOUT_S = 2.0
"""How long a page waits for a database that a writer has locked, before its 503."""
MAX_HEADERS = 100
"""Header lines a request may send (http.server's limit, kept: more is a 431)."""


SCRIPTS = tuple(name for name in STATIC_FILES if name.endswith(".js"))
"""The site's scripts, each allowed by its hash: the replay viewer, the ladder's refresh,
the game tables' helpers and each game's renderer."""


def content_security_policy(forms: bool = False) -> str:
    """The CSP of every response: nothing but the app's own stylesheet and scripts
    (by hash, so markup that ever slipped past the escaping could run nothing).
    Forms may post only to the app itself, and only with ``forms`` (--submissions)."""
    action = "'self'" if forms else "'none'"
    scripts = " ".join(f"'{static_hash(name)}'" for name in SCRIPTS)
    # connect-src: the ladder's live page asks for itself again (issue 16 §4), and only that.
    return (f"default-src 'none'; style-src 'self'; script-src {scripts}; "
            f"connect-src 'self'; img-src data:; base-uri 'none'; form-action {action}; "
            f"frame-ancestors 'none'")


def security_headers(forms: bool = False) -> dict[str, str]:
    """The headers every response of the app gets."""
    return {"Cache-Control": "no-store", "X-Content-Type-Options": "nosniff",
            "Referrer-Policy": "no-referrer",
            "Content-Security-Policy": content_security_policy(forms)}


def page_response(status: int, body: str, *, head: bool = False,
                  headers: dict[str, str] | None = None) -> Response:
    """An HTML answer; a 503 says when to come back."""
    extra = dict(headers or {})
    if status == 503:
        extra.setdefault("Retry-After", "2")
    response = HTMLResponse(body, status_code=status, headers=extra)
    if head:  # the headers a GET would have, Content-Length included, and no body
        response.body = b""
    return response


def error_response(request: Request, status: int, message: str,
                   headers: dict[str, str] | None = None) -> Response:
    """The site's error page for ``request`` (links relative to its path)."""
    root = root_of(request.url.path.split("/")[1:])
    return page_response(status, error_page(status, message, root),
                         head=request.method == "HEAD", headers=headers)


def segments_of(raw_path: bytes) -> list[str] | None:
    """The request path as decoded segments, or None if it tries to leave the site. Split
    before decoding (the raw path), so a "%2F" in a bot's name stays in its segment."""
    path = raw_path.decode("latin-1").split("?", 1)[0]
    segments = [unquote(s, errors="replace") for s in path.split("/")[1:]]
    if any(s in (".", "..") or "/" in s or "\x00" in s for s in segments):
        return None
    if segments and segments[-1] and not segments[-1].endswith(".html"):
        segments[-1] += ".html"  # /leaderboard/stop-me works as well as ...stop-me.html
    return segments


def _build(db_path: Path, busy_timeout_s: float, segments: list[str],
           spectator: bool = False) -> tuple[int, str]:
    """(status, HTML) of one page, over a read-only store opened for it (in a thread);
    ``spectator``: submissions are on, so the pages hide every author's output (§4)."""
    try:
        store = StoreReader(db_path, busy_timeout_s)
    except StoreError as err:
        message = ("The database is busy (a tournament is writing to it); try again in a "
                   "moment." if isinstance(err, StoreBusyError)
                   else f"The database cannot be read now: {err}")
        return 503, error_page(503, message, root_of(segments))
    try:
        return render(store, segments, spectator=spectator)
    finally:
        store.close()


def _render_slots(state: Any) -> asyncio.Semaphore:
    """The cap on pages built at once, one per event loop (a TestClient may run several)."""
    loop = asyncio.get_running_loop()
    if getattr(state, "render_loop", None) is not loop:
        state.render_loop, state.render_slots = loop, asyncio.Semaphore(RENDER_SLOTS)
    slots: asyncio.Semaphore = state.render_slots
    return slots


async def site_page(request: Request) -> Response:
    """Any address of the public site: the page, or its error page; GET and HEAD only."""
    if request.method not in ("GET", "HEAD"):
        return error_response(request, 405, f"This server only shows pages: {request.method} "
                              "is not allowed, only GET and HEAD.", {"Allow": "GET, HEAD"})
    segments = segments_of(request.scope.get("raw_path") or request.url.path.encode())
    if segments is None:
        return page_response(400, error_page(400, "This address is not a page of this site.",
                                             "/"), head=request.method == "HEAD")
    app_state = request.app.state
    slots = _render_slots(app_state)
    try:
        await asyncio.wait_for(slots.acquire(), app_state.config.server.request_timeout_s)
    except TimeoutError:
        return page_response(503, error_page(503, "The server is busy building other pages; "
                                             "try again in a moment.", root_of(segments)),
                             head=request.method == "HEAD")
    try:
        status, body = await run_in_threadpool(_build, app_state.db_path,
                                                  app_state.busy_timeout_s, segments,
                                                  app_state.config.server.submissions)
    finally:
        slots.release()
    return page_response(status, body, head=request.method == "HEAD")


def _health(db_path: Path) -> dict[str, Any]:
    store = StoreReader(db_path, BUSY_TIMEOUT_S)
    try:
        return {"status": "ok", "schema": store.schema_version,
                "bots": len(store.bot_names()), "tournaments": len(store.tournament_ids()),
                "games": len(store.game_ids())}
    finally:
        store.close()


async def healthz(request: Request) -> Response:
    """``/healthz``: the database's schema version and counts, as JSON (a load balancer's
    or a monitor's check; docs/web.md)."""
    if request.method not in ("GET", "HEAD"):
        return JSONResponse({"error": {"code": "method", "message": "only GET and HEAD"}},
                            405, headers={"Allow": "GET, HEAD"})
    try:
        body = await run_in_threadpool(_health, request.app.state.db_path)
    except StoreError as err:
        return JSONResponse({"status": "unavailable", "error": str(err)}, 503,
                            headers={"Retry-After": "2"})
    return JSONResponse(body)


async def _http_error(request: Request, exc: Exception) -> Response:
    """Starlette's own errors (a static file not found, a method a route refuses) as the
    site's pages."""
    assert isinstance(exc, HTTPException)
    messages = {404: "There is no page at this address; the start page links every page.",
                405: f"{request.method} is not allowed here."}
    message = exc.detail if exc.detail and exc.status_code not in messages \
        else messages.get(exc.status_code, "This request cannot be answered.")
    return error_response(request, exc.status_code, str(message), dict(exc.headers or {}))


async def _server_error(request: Request, exc: Exception) -> Response:
    log.error("error answering %s", request.url.path, exc_info=exc)
    return error_response(request, 500, "Something went wrong while making this page; the "
                          "server's log has the details.")


class AnyMethod:
    """An endpoint as a plain ASGI app, so that its route takes every method (Starlette
    gives a function endpoint GET only, and its own 405 page): the endpoint answers the
    405 itself, with the site's page and ``Allow``."""

    def __init__(self, endpoint: Any) -> None:
        self.endpoint = endpoint

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        response = await self.endpoint(Request(scope, receive))
        await response(scope, receive, send)


class SiteHeaders:
    """ASGI middleware: the security headers on every response, and a request with more
    than :data:`MAX_HEADERS` header lines answered 431 before any route sees it."""

    def __init__(self, app: ASGIApp, forms: bool = False) -> None:
        self.app = app
        self.headers = [(k.lower().encode(), v.encode())
                        for k, v in security_headers(forms).items()]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                given = {k.lower() for k, _ in message.get("headers", [])}
                message["headers"] = [*message.get("headers", []),
                                      *(h for h in self.headers if h[0] not in given)]
            await send(message)

        target = len(scope.get("raw_path") or b"") + len(scope.get("query_string") or b"")
        if target > HEAD_BYTES:  # as the server does for a line it has not parsed
            response = page_response(414, error_page(
                414, f"Request-URI Too Long: the address is longer than {HEAD_BYTES // 1024} "
                "KiB.", "/"), head=scope["method"] == "HEAD", headers={"Connection": "close"})
            await response(scope, receive, send_with_headers)
            return
        if len(scope["headers"]) > MAX_HEADERS:
            response = page_response(431, error_page(
                431, f"Request Header Fields Too Large: Too many headers (more than "
                f"{MAX_HEADERS}).", "/"), head=scope["method"] == "HEAD",
                headers={"Connection": "close"})
            await response(scope, receive, send_with_headers)
            return
        await self.app(scope, receive, send_with_headers)


def create_app(config: ServerConfig, *, extra_routes: Sequence[BaseRoute] = (),
               busy_timeout_s: float = BUSY_TIMEOUT_S) -> Starlette:
    """The web app over ``config.db_path``: ``extra_routes`` first (accounts, uploads, the
    API), then the static files under ``/static/``, ``/healthz`` and the public pages.
    ``app.state.config`` and ``app.state.db_path`` are set for every route;
    ``busy_timeout_s`` is how long a page waits for a locked database (then its 503)."""
    routes: list[BaseRoute] = [
        *extra_routes,
        Mount(f"/{STATIC_PREFIX}", app=StaticFiles(directory=STATIC_DIR), name="static"),
        Route("/healthz", AnyMethod(healthz)),
        Route("/{path:path}", AnyMethod(site_page)),
    ]
    app = Starlette(routes=routes, exception_handlers={HTTPException: _http_error,
                                                       Exception: _server_error})
    app.add_middleware(SiteHeaders, forms=config.server.submissions)
    app.state.config = config
    app.state.db_path = config.db_path
    app.state.busy_timeout_s = busy_timeout_s
    return app
