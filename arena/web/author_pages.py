"""An author's own pages, after sign-in (issue 15 §4), and the upload form (§3).

- ``/me/``: the author's bots, each with its versions and its submissions, newest
  first (state, the check's report, the build log and the bot's stderr, cut with the
  whole size said, a download of the archive); the upload form. While a submission is
  in flight the page refreshes itself (``<meta http-equiv="refresh">``: the CSP runs
  no inline script).
- ``POST /me/upload``: the form, streamed (:mod:`arena.web.multipart`): the CSRF token,
  the bot's name and game are checked before a byte of the file is read, and the file
  goes to the same :func:`~arena.submissions.accept_async` as the API's upload, under
  the same cap; each refusal is shown on the page with its rule and entry.
- ``/me/bot/NAME/``: one bot's per-match stderr logs, recent games with opponents and a
  replay from the bot's own seat, faults with their causes.
- ``/me/replay/ID-seatN``: the seat replay, only for a seat one of the author's bots
  held (:func:`~leaderboard.web.author_data.seat_of`).
- ``/me/submissions/ID/archive``: the archive as submitted.

Another author's bot, log, archive or replay is a 404 worded exactly as for one that
does not exist (§5). A visitor is sent to ``/signin/``.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import quote

from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Route

from arena import accounts
from arena.submissions import accept_async
from leaderboard.store import StoreReader
from leaderboard.store.rows import Author
from leaderboard.web.author_data import author_faults, author_games, bot_logs, seat_of
from referee.games import GAMES

from .api import REFUSALS, ApiError, archive_file, bots_of, claim_for, refusal, wake_pipeline
from .auth import check_csrf_value
from .forms import Refused, config_of, html_errors, page, read, signed_in, to_sign_in
from .ladder_pages import ladder_standing
from .multipart import MAX_PARTS, SLACK, StreamedForm, boundary_of, chunks_of, pack_folder
from .replay import load, rebuild, replay_page

IN_FLIGHT = ("received", "building", "checking")
REFRESH_S = 3
"""Seconds between a page's refreshes while a submission is in flight."""
TEXT_CHARS = 8000
"""Characters of a build log or of a bot's stderr a page shows (the end; the whole
size is said)."""
ME_SUBMISSIONS = 3
"""Submissions per bot on /me/, newest first (the bot's page lists its newest 50)."""
_REPLAY = re.compile(r"(0|[1-9][0-9]{0,17})-seat(0|[1-9][0-9]{0,3})", re.ASCII)


def _cut(text: str | None, whole_bytes: int | None = None) -> dict[str, Any] | None:
    """The end of a long text for a page: ``{"text", "bytes", "shown", "cut"}``."""
    if not text:
        return None
    size = max(whole_bytes or 0, len(text.encode()))
    shown = text[-TEXT_CHARS:]
    return {"text": shown, "bytes": size, "shown": len(shown.encode()),
            "cut": len(shown.encode()) < size}


def _games(report: dict[str, Any]) -> list[dict[str, Any]]:
    """The check's games, the bot's seat (0) of each: how it ended, rank, faults."""
    out = []
    for n, game in enumerate(g for g in report.get("games") or [] if isinstance(g, dict)):
        seats = [s for s in game.get("seats") or [] if isinstance(s, dict)]
        own = seats[0] if seats else {}
        out.append({"n": n + 1, "reason": game.get("reason", ""), "rank": own.get("rank"),
                    "status": own.get("status", ""),
                    "faults": {k: v for k, v in (own.get("faults") or {}).items() if v},
                    "fault_log": [str(x) for x in own.get("fault_log") or []][:20]})
    return out


def submission_view(s: dict[str, Any]) -> dict[str, Any]:
    """A submission as :func:`~arena.submissions.submission_json` gives it, with what a
    page shows of it: the report's findings readably, the logs cut."""
    report = s.get("report") if isinstance(s.get("report"), dict) else None
    return {**s, "in_flight": s["state"] in IN_FLIGHT,
            "findings": {kind: [str(x) for x in (report or {}).get(kind) or []]
                         for kind in ("problems", "warnings", "notes", "hints")},
            "check_games": _games(report) if report else [],
            "passed": None if report is None else bool(report.get("passed")),
            "build": _cut(s.get("build_log")),
            "err": _cut(s.get("stderr"), s.get("stderr_bytes"))}


def _bots(reader: StoreReader, author: Author, names: list[str] | None = None,
          ) -> list[dict[str, Any]]:
    listed = bots_of(reader, author, names)
    for bot in listed:
        bot["versions"] = list(reversed(bot["versions"]))  # newest first
        bot["submissions"] = [submission_view(s) for s in bot["submissions"]]
    return listed


def _me(request: Request, author: Author, status: int = 200, **form: Any) -> Any:
    """The /me/ page (with an upload's refusal, if ``form`` says one)."""
    async def build() -> Response:
        bots = await read(request, _bots, author)
        flying = any(s["in_flight"] for b in bots for s in b["submissions"])
        for b in bots:  # the rest on the bot's own page: a page stays small
            b["more"] = max(0, len(b["submissions"]) - ME_SUBMISSIONS)
            b["submissions"] = b["submissions"][:ME_SUBMISSIONS]
        context = {"error": None, "rule": None, "form_name": "", "form_game": "", **form}
        return page(request, "author/me.html", status=status, author=author, bots=bots,
                    in_flight=flying, refresh_s=REFRESH_S, refresh_url=_here(request),
                    game_choices=sorted(GAMES),
                    max_mb=config_of(request).uploads.max_compressed_mb, **context)
    return build()


@html_errors
async def me(request: Request) -> Response:
    """``GET /me/``: the author's bots and versions, and the upload form."""
    author = await signed_in(request)
    if author is None:
        return to_sign_in()
    response: Response = await _me(request, author)
    return response


@html_errors
async def upload(request: Request) -> Response:
    """``POST /me/upload``: a new version through the form (fields ``csrf``, ``name``,
    ``game``, then the file ``archive`` or the files of the folder input ``folder``)."""
    author = await signed_in(request)
    config = config_of(request)
    cap = config.uploads.max_compressed_bytes + SLACK
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > cap:
        # Refused before a byte of the body is read (issue 15 §3), as the API does.
        raise Refused(413, f"The upload is {int(declared)} bytes; at most "
                           f"{config.uploads.max_compressed_bytes} bytes of archive are "
                           "taken (uploads.max_compressed_mb) [archive-compressed-size].")
    form = StreamedForm(request.stream(), boundary_of(request.headers.get(
        "content-type", "")), cap, config.uploads.max_entries + MAX_PARTS)
    fields, part = await form.fields_until_file()
    check_csrf_value(request, fields.get("csrf"))  # before the file is read at all
    if author is None:  # a visitor's form, CSRF right: sign in first
        return to_sign_in()
    name, game = fields.get("name", "").strip(), fields.get("game", "").strip()
    shown = {"form_name": name, "form_game": game}
    while part is not None and not (part.filename and part.name in ("archive", "folder")):
        part = await form.next_file()  # an input left empty (the archive, or the folder)
    if part is None:
        response: Response = await _me(request, author, 400, error="Choose the archive "
                                       "(.tar.gz, .zip or .tar) or the folder to upload.",
                                       **shown)
        return response
    try:
        if part.name == "archive":
            row = await accept_async(config, author, name, game, form.file_data(), None,
                                     claim_for(config))
        else:  # the bot's folder, one part per file: packed, then checked as an archive
            packed = await pack_folder(form, part, "folder", config.uploads.
                                       max_compressed_bytes, config.uploads.max_entries)
            with packed:
                row = await accept_async(config, author, name, game, chunks_of(packed),
                                         "tar.gz", claim_for(config))
    except REFUSALS as err:
        said = refusal(err)
        response = await _me(request, author, said.status_code, error=said.detail,
                             rule=said.code, **shown)
        return response
    wake_pipeline(request)
    return RedirectResponse(f"/me/#submission-{row.id}", status_code=303)


def _bot(reader: StoreReader, author: Author, name: str) -> dict[str, Any]:
    found = _bots(reader, author, [name])
    if not found:
        raise Refused(404, f"You have no bot named {name[:80]!r}.")
    bot = found[0]
    names = [name]
    return {"bot": bot,
            "logs": bot_logs(reader, names, name) if bot["versions"] else [],
            "recent": author_games(reader, names), "faults": author_faults(reader, names),
            "ladders": ladder_standing(reader, name)}


@html_errors
async def bot(request: Request) -> Response:
    """``GET /me/bot/NAME/``: one of the author's bots, its logs, games and faults."""
    author = await signed_in(request)
    if author is None:
        return to_sign_in()
    found = await read(request, _bot, author, request.path_params["name"])
    in_flight = any(s["in_flight"] for s in found["bot"]["submissions"])
    return page(request, "author/bot.html", author=author, in_flight=in_flight,
                refresh_s=REFRESH_S, refresh_url=_here(request), **found)


def _here(request: Request) -> str:
    """The page's own address for its refresh, without the fragment: Chromium treats a
    refresh to the same URL with a fragment (``/me/#submission-7``, where an upload
    lands) as a same-document navigation and never reloads (found by the end-to-end
    tests). Percent-encoded, so no bot name can end the attribute or the ``url=``."""
    return quote(request.url.path, safe="/")


def _seat_replay(reader: StoreReader, author: Author, key: str) -> str:
    match = _REPLAY.fullmatch(key)
    gone = Refused(404, f"None of your bots has a seat replay {key[:40]!r}: the replays "
                        "of your bots' games are linked from their pages.")
    if match is None:
        raise gone
    game_id, seat = int(match[1]), int(match[2])
    names = accounts.owned_bots(reader, author)
    if seat not in seat_of(reader, game_id, names):
        raise gone  # not theirs, or no such game or seat: one answer (issue 15 §4, §5)
    row = load(reader, game_id)
    if reader.deal_unplayed(row["tournament_id"], row["idx"]):
        # Its deal is still to be played in another seating (duplicate deals): the hand
        # it shows is another bot's there (issue 19 §3, found by review).
        raise Refused(404, f"Game {game_id}'s deal is played in other seatings too, not all "
                           "over yet: its replay opens once they are.")
    html: str = replay_page(reader, rebuild(row, [seat]), seat,
                            root="/", perspectives=False, signed_in=author.name)
    return html


@html_errors
async def seat_replay(request: Request) -> Response:
    """``GET /me/replay/ID-seatN``: a game from the seat of one of the author's bots."""
    author = await signed_in(request)
    if author is None:
        return to_sign_in()
    html = await read(request, _seat_replay, author, request.path_params["key"])
    return HTMLResponse(html)


def _submission(reader: StoreReader, author: Author, submission_id: int) -> Any:
    row = reader.submission(submission_id)
    # The author's own, or one the organiser made of the author's bot (listed on their
    # page as well); anything else is answered as a submission that does not exist.
    if row is None or (row.author_id != author.id
                       and row.bot_name not in accounts.owned_bots(reader, author)):
        raise Refused(404, f"You have no submission {submission_id}.")
    return row


@html_errors
async def archive(request: Request) -> Response:
    """``GET /me/submissions/ID/archive``: the archive of one of the author's
    submissions, exactly as it was sent."""
    author = await signed_in(request)
    if author is None:
        return to_sign_in()
    row = await read(request, _submission, author, request.path_params["submission_id"])
    try:
        return archive_file(config_of(request), row, f"submission-{row.id}")
    except ApiError as err:
        raise Refused(err.status_code, str(err.detail)) from None


async def _slash(request: Request) -> Response:
    return RedirectResponse(request.url.path + "/", status_code=308)


def routes() -> list[BaseRoute]:
    """The author pages' routes (before the public site's catch-all)."""
    return [
        Route("/me/", me, methods=["GET"]),
        Route("/me", _slash, methods=["GET"]),
        Route("/me/upload", upload, methods=["POST"]),
        Route("/me/bot/{name}/", bot, methods=["GET"]),
        Route("/me/bot/{name}", _slash, methods=["GET"]),
        Route("/me/replay/{key}", seat_replay, methods=["GET"]),
        Route("/me/submissions/{submission_id:int}/archive", archive, methods=["GET"]),
    ]
