"""The HTTP API for authors and the organiser, ``/api/v1/...`` (issue 15 §3; docs/server.md).

Every call needs ``Authorization: Bearer TOKEN`` (:func:`arena.web.auth.api_author`);
every answer is JSON, errors as ``{"error": {"code", "message"}}``. An author sees and
changes only their own bots and submissions: another author's is a 404 worded exactly
as for one that does not exist, so names do not leak (§5). An admin token (``arena
author add NAME --admin``) sees every submission and may disable or enable bots and
authors.

The upload is the request body itself (no multipart), streamed to a file under its cap
and checked before anything is unpacked (:func:`arena.submissions.accept_async`).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import BaseRoute, Route

from arena import accounts
from arena.submissions import (
    ArchiveError,
    SubmissionLimitError,
    accept_async,
    archive_path,
    format_of,
    submission_json,
)
from leaderboard.store import Store, StoreBusyError, StoreError, StoreReader
from leaderboard.store.rows import Author
from leaderboard.store.writes_submissions import BotRetired
from leaderboard.web.author_data import LOG_CHARS, author_bots, bot_logs
from leaderboard.web.data import PageError
from referee.errors import BotSpecError
from referee.games.errors import ConfigError as GameConfigError

from .auth import AuthError, api_author
from .config import ConfigError, ServerConfig

MAX_LIST = 500
"""Rows a list call returns at most."""
MAX_ID = (1 << 63) - 1
"""The largest id or version SQLite can hold: a path's number past it is a 404, never an
OverflowError (a 500; found by review)."""


class ApiError(HTTPException):
    """An API refusal with a stable ``code`` (``archive-symlink``, ``not-found``...)."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(status, message)
        self.code = code


def _config(request: Request) -> ServerConfig:
    config: ServerConfig = request.app.state.config
    return config


def _not_found(what: str) -> ApiError:
    return ApiError(404, "not-found", what)


async def _read(request: Request, step: Callable[..., Any], *args: Any) -> Any:
    """``step(reader, *args)`` over a read-only store, in a worker thread."""
    def run() -> Any:
        reader = StoreReader(_config(request).db_path)
        try:
            return step(reader, *args)
        finally:
            reader.close()
    return await _guarded(run)


async def _write(request: Request, step: Callable[..., Any], *args: Any) -> Any:
    """``step(store, *args)`` over the writing store, in a worker thread."""
    def run() -> Any:
        store = Store(_config(request).db_path, create=False)
        try:
            return step(store, *args)
        finally:
            store.close()
    return await _guarded(run)


async def _guarded(run: Callable[[], Any]) -> Any:
    try:
        return await run_in_threadpool(run)
    except StoreBusyError:
        raise ApiError(503, "busy", "the database is busy; try again in a moment") from None
    except PageError as err:
        raise ApiError(err.status, "not-found" if err.status == 404 else "bad-request",
                       err.message) from None
    except StoreError as err:
        raise ApiError(503, "database", f"the database cannot be used now: {err}") from None


def _author_json(author: Author) -> dict[str, Any]:
    return {"name": author.name, "admin": author.admin, "created_at": author.created_at,
            "disabled": author.disabled_at is not None}


async def me(request: Request) -> Response:
    """``GET /api/v1/me``: who the token belongs to."""
    author = await run_in_threadpool(api_author, request)
    return JSONResponse(_author_json(author))


def _visible_submission(reader: StoreReader, author: Author, submission_id: int) -> Any:
    row = reader.submission(submission_id)
    if row is None or (row.author_id != author.id and not author.admin):
        raise _not_found(f"you have no submission {submission_id}")
    return row


async def submission(request: Request) -> Response:
    """``GET /api/v1/submissions/{id}``: one submission's state, report and logs."""
    author = await run_in_threadpool(api_author, request)
    row = await _read(request, _visible_submission, author,
                      _path_int(request, "submission_id", "submission"))
    return JSONResponse(submission_json(row))


async def submissions(request: Request) -> Response:
    """``GET /api/v1/submissions``: mine, newest first; ``?all=1`` for an admin: all."""
    author = await run_in_threadpool(api_author, request)
    every = request.query_params.get("all") in ("1", "true", "yes")
    if every and not author.admin:
        raise ApiError(403, "admin-only", "only an admin token lists every submission")

    def rows(reader: StoreReader) -> list[Any]:
        return reader.all_submissions(MAX_LIST) if every \
            else reader.submissions_of(author.id, MAX_LIST)
    return JSONResponse({"submissions": [submission_json(r)
                                         for r in await _read(request, rows)]})


def _names(reader: StoreReader, author: Author) -> list[str]:
    return accounts.owned_bots(reader, author)


async def bots(request: Request) -> Response:
    """``GET /api/v1/bots``: my bots, each with its versions and its submissions."""
    author = await run_in_threadpool(api_author, request)
    return JSONResponse({"bots": await _read(request, bots_of, author)})


def bots_of(reader: StoreReader, author: Author,
            names: list[str] | None = None) -> list[dict[str, Any]]:
    """The author's bots (or those of ``names`` among them), each with its versions
    (:func:`~leaderboard.web.author_data.author_bots`) and its newest 50 submissions as
    the API shows them: ``GET /api/v1/bots`` and the author's pages alike."""
    owned = _names(reader, author)
    listed = author_bots(reader, owned if names is None else [n for n in names if n in owned])
    for bot in listed:
        bot["submissions"] = [submission_json(s)
                              for s in reader.submissions_of_bot(bot["name"], 50)]
    return listed


async def logs(request: Request) -> Response:
    """``GET /api/v1/bots/{name}/logs[?version=V]``: my bot's stderr per match."""
    author = await run_in_threadpool(api_author, request)
    name = request.path_params["name"]
    version = _int_param(request, "version")

    def read(reader: StoreReader) -> list[dict[str, Any]]:
        return bot_logs(reader, _names(reader, author), name, version, 100, LOG_CHARS * 16)
    return JSONResponse({"bot": name, "logs": await _read(request, read)})


def _path_int(request: Request, key: str, what: str) -> int:
    """A path's id or version: digits within SQLite's integers, else the 404 of a thing
    that does not exist (Starlette's ``int`` convertor took any digits, and a number
    past SQLite's range or Python's 4300 digits was a 500; found by review)."""
    value = request.path_params[key]
    if not (value.isascii() and value.isdigit() and len(value) <= 19
            and int(value) <= MAX_ID):
        raise _not_found(f"you have no {what} {value[:40]!r}")
    return int(value)


def _int_param(request: Request, key: str) -> int | None:
    value = request.query_params.get(key)
    if value is None:
        return None
    if not (value.isascii() and value.isdigit() and len(value) <= 9):
        raise ApiError(400, "bad-request", f"?{key}= must be a whole number, not "
                                           f"{value[:40]!r}")
    return int(value)


async def archive(request: Request) -> Response:
    """``GET /api/v1/bots/{name}/versions/{version}/archive``: the archive I submitted."""
    author = await run_in_threadpool(api_author, request)
    name = request.path_params["name"]
    version = _path_int(request, "version", f"version of bot {name[:80]!r} numbered")

    def find(reader: StoreReader) -> Any:
        if name not in _names(reader, author) and not author.admin:
            raise _not_found(f"you have no bot named {name[:80]!r}")
        for row in reader.submissions_of_bot(name, MAX_LIST):
            if row.state == "active" and row.version == version:
                return row
        raise _not_found(f"bot {name[:80]!r} has no submitted version {version}")
    row = await _read(request, find)
    return archive_file(_config(request), row, f"bot-v{version}")


def archive_file(config: ServerConfig, row: Any, stem: str) -> Response:
    """The stored archive of submission ``row`` as a download named ``stem.SUFFIX``;
    410 when the data folder no longer has it."""
    path: Path = archive_path(config, row.archive_sha256)
    if not path.is_file():
        raise ApiError(410, "archive-gone", f"the archive of {row.bot_name[:80]!r} "
                                            f"(submission {row.id}) is no longer kept")
    suffix = {"tar.gz": "tar.gz", "tar": "tar", "zip": "zip"}.get(row.archive_format, "bin")
    return FileResponse(path, media_type="application/octet-stream",
                        filename=f"{stem}.{suffix}")


async def submit(request: Request) -> Response:
    """``POST /api/v1/bots/{name}/versions?game=GAME``: the body is the archive."""
    author = await run_in_threadpool(api_author, request)
    config = _config(request)
    name, game = request.path_params["name"], request.query_params.get("game", "")
    if not game:
        raise ApiError(400, "game-missing", "say which game the bot plays: ?game=GAME")
    declared = request.headers.get("content-length")
    if declared is not None and not (declared.isascii() and declared.isdigit()):
        # Behind uvicorn its parser refuses these first; in the app, '²' passed isdigit()
        # and 5000 digits passed Python's int() limit: each was a 500 (found by review).
        raise ApiError(400, "bad-request", f"Content-Length {declared[:40]!r} is not a "
                                           f"number of bytes")
    if declared is not None and (len(declared) > 18
                                 or int(declared) > config.uploads.max_compressed_bytes):
        # Refused before a byte of the body is read (issue 15 §3).
        raise ApiError(413, "archive-compressed-size",
                       f"the upload is {declared[:40]} bytes; at most "
                       f"{config.uploads.max_compressed_bytes} bytes are taken")
    fmt = format_of(request.headers.get("content-type"))
    claim = claim_for(config)
    try:
        row = await accept_async(config, author, name, game, request.stream(), fmt, claim)
    except REFUSALS as err:
        raise refusal(err) from None
    wake_pipeline(request)
    return JSONResponse(submission_json(row), 202,
                        headers={"Location": f"/api/v1/submissions/{row.id}"})


REFUSALS = (ArchiveError, SubmissionLimitError, accounts.BotLimitReached,
            accounts.BotOwned, accounts.BotNameError, BotRetired, BotSpecError, ConfigError,
            GameConfigError, StoreBusyError)
"""What accepting a submission may refuse it with (:func:`refusal` says how)."""


def refusal(err: Exception) -> ApiError:
    """A submission's refusal as the API's error (status, rule code, message), for the
    API and the upload form alike (issue 15 §3: each refusal names its rule)."""
    if isinstance(err, ArchiveError):
        return ApiError(413 if err.rule == "archive-compressed-size" else 400, err.rule,
                        str(err))
    if isinstance(err, SubmissionLimitError):
        return ApiError(409 if err.limit == "in-flight" else 429, f"limit-{err.limit}",
                        str(err))
    if isinstance(err, accounts.BotLimitReached):
        return ApiError(429, "limit-bots-per-author", str(err))
    if isinstance(err, accounts.BotOwned):
        return ApiError(403, "bot-owned", str(err))
    if isinstance(err, BotRetired):
        return ApiError(403, "bot-disabled", str(err))
    if isinstance(err, GameConfigError):  # no such game: it was a 500 (found by review)
        return ApiError(400, "game-unknown", str(err))
    if isinstance(err, StoreBusyError):
        return ApiError(503, "busy", "the database is busy; try again in a moment")
    return ApiError(400, "bad-request", str(err))


def wake_pipeline(request: Request) -> None:
    """A submission was received: the app's pipeline, if it runs one, looks now."""
    pipeline = getattr(request.app.state, "pipeline", None)
    if pipeline is not None:
        pipeline.wake()


def claim_for(config: ServerConfig) -> Callable[[Store, Any, str], object]:
    """The accounts' claim of a bot name, with the server's limit of bots per author."""
    def claim(store: Store, author: Any, name: str) -> object:
        return accounts.claim_bot(store, author, name,
                                  max_bots=config.limits.bots_per_author)
    return claim


async def admin_action(request: Request) -> Response:
    """``POST /api/v1/admin/{authors|bots}/{name}/{disable|enable}`` (admin token)."""
    author = await run_in_threadpool(api_author, request)
    if not author.admin:
        raise ApiError(403, "admin-only", "this needs an admin token")
    kind, name, action = (request.path_params[k] for k in ("kind", "name", "action"))
    return JSONResponse(await _write(request, admin_change, kind, name, action))


def admin_change(store: Store, kind: str, name: str, action: str) -> dict[str, Any]:
    """The organiser's disable or enable of an author or a bot (``kind`` authors|bots,
    ``action`` disable|enable), for the API and the admin page alike; ApiError 404 for
    an unknown one, 409 for one already so."""
    if kind not in ("authors", "bots") or action not in ("disable", "enable"):
        raise _not_found(f"no admin action {kind[:20]!r}/{action[:20]!r}: it is "
                         "authors|bots/NAME/disable|enable")
    try:
        if kind == "authors":
            changed = (accounts.disable if action == "disable" else accounts.enable)(
                store, name)
            return _author_json(changed)
        return _bot_action(store, name, action)
    except accounts.UnknownAuthor:
        raise _not_found(f"no author named {name[:80]!r}") from None
    except accounts.AccountError as err:
        raise ApiError(409, "unchanged", str(err)) from None


def _bot_action(store: Store, name: str, action: str) -> dict[str, Any]:
    if not store.bot_exists(name):
        raise _not_found(f"no bot named {name[:80]!r}")
    try:
        changed = store.remove_bot(name) if action == "disable" else store.restore_bot(name)
    except StoreBusyError:
        raise
    except StoreError as err:  # disabled already, enabled already, a built-in bot
        raise ApiError(409, "unchanged", str(err)) from None
    return {"bot": name, "disabled": action == "disable", "versions_changed": changed}


async def _api_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    code = getattr(exc, "code", f"http-{exc.status_code}")
    return JSONResponse({"error": {"code": code, "message": exc.detail}}, exc.status_code,
                        headers=dict(exc.headers or {}))


EXCEPTION_HANDLERS = {ApiError: _api_error, AuthError: _api_error}


def routes() -> list[BaseRoute]:
    """The API's routes, for :func:`arena.web.app.create_app`'s ``extra_routes``."""
    v1 = "/api/v1"
    return [
        Route(f"{v1}/me", me, methods=["GET"]),
        Route(f"{v1}/bots", bots, methods=["GET"]),
        Route(f"{v1}/bots/{{name}}/versions", submit, methods=["POST"]),
        Route(f"{v1}/bots/{{name}}/logs", logs, methods=["GET"]),
        Route(f"{v1}/bots/{{name}}/versions/{{version}}/archive", archive,
              methods=["GET"]),
        Route(f"{v1}/submissions", submissions, methods=["GET"]),
        Route(f"{v1}/submissions/{{submission_id}}", submission, methods=["GET"]),
        Route(f"{v1}/admin/{{kind:str}}/{{name}}/{{action:str}}", admin_action,
              methods=["POST"]),
    ]

