"""What the competition server's own HTML pages share (issue 15 §2, §4): small forms read
under a cap, pages rendered over a read-only store in a worker thread, and every refusal
as the site's HTML error page (never the API's JSON, never a traceback).

The pages are served only (``arena export-html`` has none of them), so their links are
absolute: ``root`` is ``/``. Every page is ``no-store`` like every response of the app
(:func:`arena.web.app.security_headers`): a signed-in page is never cached.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from functools import wraps
from typing import Any
from urllib.parse import parse_qsl

from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect, Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.types import ASGIApp, Receive, Scope, Send

from leaderboard.store import StoreBusyError, StoreError, StoreReader
from leaderboard.store.rows import Author
from leaderboard.web.data import PageError, boards

from .auth import SESSION_COOKIE, check_csrf, cookie_name, csrf_cookie, csrf_token, page_author
from .config import ServerConfig
from .pages import ERROR_TITLES
from .templating import ACCOUNT_NAV, render

ROOT = "/"
FORM_BYTES = 16 * 1024
"""A form without a file (sign-in, sign-out, registration, the organiser's) is at most
this big: a bigger body is refused before it is read whole (issue 15 §3's rule, kept
for every form)."""
FORM_FIELDS = 20
NOT_A_PAGE = "There is no page at this address; the start page links every page."
"""The site's own 404 sentence: the organiser's pages answer it to anyone else."""

Endpoint = Callable[[Request], Awaitable[Response]]


class Refused(HTTPException):
    """A page's refusal: its status and one sentence for the error page."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(status, message)


def config_of(request: Request) -> ServerConfig:
    """The server's settings."""
    config: ServerConfig = request.app.state.config
    return config


def html_errors(endpoint: Endpoint) -> Endpoint:
    """``endpoint`` with every refusal as the site's HTML error page: a wrong CSRF token
    (403), a 404 of another author's bot (worded as for none), a busy database (503).
    The app's handlers would answer the accounts' and the API's refusals as JSON."""
    @wraps(endpoint)
    async def guarded(request: Request) -> Response:
        try:
            return await endpoint(request)
        except ClientDisconnect:  # gone mid-upload: nothing was kept, nobody to tell
            return Response(status_code=400)
        except HTTPException as err:
            return error_response(request, err.status_code, str(err.detail),
                                  dict(err.headers or {}))
        except PageError as err:
            return error_response(request, err.status, err.message)
        except StoreBusyError:
            return error_response(request, 503, "The database is busy; try again in a "
                                  "moment.", {"Retry-After": "2"})
        except StoreError as err:
            return error_response(request, 503, f"The database cannot be used now: {err}",
                                  {"Retry-After": "2"})
    return guarded


def error_response(request: Request, status: int, message: str,
                   headers: dict[str, str] | None = None) -> Response:
    """The site's error page, the navigation saying who is signed in (as every page of
    these does)."""
    signed_in = _known_author(request)
    body = render("error.html", status=status, heading=_heading(status), message=message,
                  root=ROOT, games=_games(request), signed_in=signed_in,
                  sign_in_link=True)
    return HTMLResponse(body, status_code=status, headers=headers)


def _heading(status: int) -> str:
    return ERROR_TITLES.get(status, "Error")


def _known_author(request: Request) -> str | None:
    """The signed-in author's name if this request looked it up already (no new read)."""
    found = getattr(request.state, "arena_session", None)
    return found[0].name if found else None


def _games(request: Request) -> list[str]:
    games: list[str] = getattr(request.state, "arena_games", [])
    return games


async def read(request: Request, step: Callable[..., Any], *args: Any) -> Any:
    """``step(reader, *args)`` over a read-only store, in a worker thread; the
    navigation's leaderboards are read on the way (for the page and its errors)."""
    def run() -> Any:
        reader = StoreReader(config_of(request).db_path)
        try:
            request.state.arena_games = boards(reader)
            return step(reader, *args)
        finally:
            reader.close()
    return await run_in_threadpool(run)


async def signed_in(request: Request) -> Author | None:
    """The author of the request's session, or None (read in a worker thread)."""
    author: Author | None = await run_in_threadpool(page_author, request)
    return author


def to_sign_in() -> Response:
    """Where a page that needs an author sends a visitor: the sign-in form."""
    return RedirectResponse("/signin/", status_code=303)


def page(request: Request, template: str, *, status: int = 200,
         author: Author | None = None, headers: dict[str, str] | None = None,
         **context: Any) -> Response:
    """``template`` rendered for this request: ``root`` ``/``, the navigation's
    leaderboards and who is signed in, and ``csrf`` (the token of its forms; a
    visitor's new one is set as its cookie)."""
    body = render(template, root=ROOT, games=_games(request),
                  signed_in=author.name if author else None, sign_in_link=True,
                  csrf=csrf_token(request), **context)
    return csrf_cookie(request, HTMLResponse(body, status_code=status, headers=headers))


async def small_form(request: Request) -> dict[str, str]:
    """A posted ``application/x-www-form-urlencoded`` form of at most
    :data:`FORM_BYTES` (refused with 413 before more is read), each field's first
    value; 415 for another kind of body (a body of no declared kind is read as one,
    so that a bare POST is refused for its missing CSRF token)."""
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind not in ("application/x-www-form-urlencoded", ""):  # none: an empty form
        raise Refused(415, f"This form is sent as application/x-www-form-urlencoded, not "
                           f"{kind[:60]!r}.")
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > FORM_BYTES:
        raise Refused(413, f"The form is {int(declared)} bytes; at most {FORM_BYTES} are "
                           "taken.")
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > FORM_BYTES:
            raise Refused(413, f"The form passed {FORM_BYTES} bytes; it was refused "
                               "before it was read whole.")
    try:
        pairs = parse_qsl(body.decode("utf-8"), keep_blank_values=True,
                          max_num_fields=FORM_FIELDS)
    except (UnicodeDecodeError, ValueError) as err:
        raise Refused(400, f"The form cannot be read: {str(err)[:80]}.") from None
    fields: dict[str, str] = {}
    for key, value in pairs:
        fields.setdefault(key, value)
    return fields


async def checked_form(request: Request) -> tuple[dict[str, str], Author | None]:
    """A small form whose CSRF token is right (else 403), and who sent it: the session's
    token when signed in, the visitor cookie's before."""
    form = await small_form(request)
    author = await signed_in(request)  # the session read in a worker thread, not here
    check_csrf(request, form)
    return form, author


class AccountNav:
    """ASGI middleware of the competition server: every page's navigation links to
    sign in, or, when the request holds a session cookie, to ``/me/`` (issue 15 §2).
    The cookie is not checked here (no database read per public page): a forged or
    ended one leads to ``/me/``, which sends a visitor on to ``/signin/``."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request = Request(scope)
        has_session = cookie_name(request, SESSION_COOKIE) in request.cookies
        token = ACCOUNT_NAV.set("me" if has_session else "signin")
        try:
            await self.app(scope, receive, send)
        finally:
            ACCOUNT_NAV.reset(token)
