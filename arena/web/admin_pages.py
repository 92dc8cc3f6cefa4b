"""The organiser's pages (issue 15 §4): every submission, and disabling or enabling a bot
or an author, for a signed-in admin author (``arena author add NAME --admin``).

Anyone else, signed in or not, gets the site's own 404 for ``/admin/``, as for a page
that does not exist. The actions are forms (CSRF checked) over the very function the
API's ``POST /api/v1/admin/...`` uses (:func:`arena.web.api.admin_change`).
"""

from __future__ import annotations

from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import BaseRoute, Route

from leaderboard.store import Store, StoreReader
from leaderboard.store.rows import Author
from leaderboard.web.author_data import author_bots

from .api import ApiError, admin_change
from .forms import NOT_A_PAGE, Refused, checked_form, config_of, html_errors, page, read, signed_in

ADMIN_ROWS = 200
"""Submissions the page lists, newest first (the API's ``?all=1`` lists up to 500)."""
ERROR_CHARS = 300


def _admin(author: Author | None) -> Author:
    if author is None or not author.admin:
        raise Refused(404, NOT_A_PAGE)  # the page is not there for anyone else
    return author


def _overview(reader: StoreReader) -> dict[str, Any]:
    authors = reader.authors()
    names = {a.id: a.name for a in authors}
    owners = reader.bot_owners()
    submissions = [{"id": s.id, "author": names.get(s.author_id, "?"), "bot": s.bot_name,
                    "game": s.game, "state": s.state, "received_at": s.received_at,
                    "updated_at": s.updated_at, "version": s.version,
                    "error": (s.error or "")[:ERROR_CHARS]}
                   for s in reader.all_submissions(ADMIN_ROWS)]
    bots = [{"name": b["name"], "owner": owners.get(b["name"]), "removed": b["removed"],
             "newest": b["newest"], "versions": len(b["versions"])}
            for b in author_bots(reader, reader.bot_names())]
    return {"submissions": submissions, "limit": ADMIN_ROWS, "authors": authors,
            "bots": bots}


async def _show(request: Request, author: Author, status: int = 200,
                **said: Any) -> Response:
    found = await read(request, _overview)
    return page(request, "admin/index.html", status=status, author=author,
                **{"done": None, "error": None, **said}, **found)


@html_errors
async def index(request: Request) -> Response:
    """``GET /admin/``: every submission, every author and bot, with their forms."""
    author = _admin(await signed_in(request))
    return await _show(request, author)


@html_errors
async def act(request: Request) -> Response:
    """``POST /admin/``: fields ``kind`` (authors|bots), ``name``, ``action``
    (disable|enable), ``csrf``."""
    _admin(await signed_in(request))
    form, author = await checked_form(request)
    admin = _admin(author)
    kind, name, action = (form.get(k, "") for k in ("kind", "name", "action"))

    def change() -> dict[str, Any]:
        store = Store(config_of(request).db_path, create=False)
        try:
            return admin_change(store, kind, name, action)
        finally:
            store.close()
    try:
        await run_in_threadpool(change)
    except ApiError as err:
        return await _show(request, admin, err.status_code, error=str(err.detail))
    what = "author" if kind == "authors" else "bot"
    return await _show(request, admin, done=f"The {what} {name!r} is {action}d.")


async def _slash(request: Request) -> Response:
    return RedirectResponse("/admin/", status_code=308)


def routes() -> list[BaseRoute]:
    """The organiser's routes (before the public site's catch-all)."""
    return [Route("/admin/", index, methods=["GET"]), Route("/admin/", act, methods=["POST"]),
            Route("/admin", _slash, methods=["GET"])]
