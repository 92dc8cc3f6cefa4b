"""The site: which page lives at which path, for the server and for the static export.

One scheme for both (links are relative, so the same pages work over HTTP and
from files)::

    index.html                   start page
    tournaments.html             every tournament with its progress
    leaderboard/GAME.html        one game's leaderboard
    head-to-head/GAME.html       who finishes ahead of whom in one game
    head-to-head/GAME/A-B.html   the games of one cell: bot versions A and B (ids)
    bot/NAME.html                a bot: versions, rating history, seats, faults
    tournament/ID.html           one tournament and its games (served: also
                                 tournament/NAME.html)
    ladders.html                 every ladder (issue 16 §4)
    ladder/ID.html               one ladder's live page, ID its tournament id
                                 (served: also ladder/NAME.html)
    replay/ID.html               a game's replay from the full view
    replay/ID-seatN.html         the same game from seat N's view
    live/TID-IDX.html            game IDX of tournament TID as it plays, public only
                                 (issue 19 §3; exported: a snapshot)

With submissions on (``spectator``: the public side of the competition server,
issue 15 §4) the bot pages show no logs or fault causes, ``replay/ID.html`` is the
spectator's public view of the game (its public events and result), and the full
and seat views are served to nobody here (404): an author sees their own seat's
view on their own pages.
"""

from __future__ import annotations

import logging
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from leaderboard.store import StoreBusyError, StoreError, StoreReader
from leaderboard.web import PageError, bad_request, not_found
from leaderboard.web.data import boards, head_to_head_table
from leaderboard.web.paths import page_key_matches, page_path

from .ladder_pages import ladder_names, ladder_page, ladders_page
from .live import live_file, live_page
from .pages import (
    bot_page,
    error_page,
    head_to_head_page,
    index_page,
    leaderboard_page,
    pair_page,
    tournament_page,
    tournaments_page,
)
from .replay import load, public_replay_page, rebuild, replay_file, replay_page
from .templating import STATIC_DIR, STATIC_FILES, STATIC_PREFIX, for_files

log = logging.getLogger(__name__)

_REPLAY = re.compile(r"(0|[1-9][0-9]{0,17})(?:-seat(0|[1-9][0-9]{0,3}))?", re.ASCII)
_NUMBER = re.compile(r"0|[1-9][0-9]{0,17}", re.ASCII)  # one spelling per page


def root_of(segments: list[str]) -> str:
    """The relative path from a page at ``segments`` back to the site root."""
    return "../" * max(0, len(segments) - 1)


def _replay(store: StoreReader, key: str, spectator: bool) -> str:
    match = _REPLAY.fullmatch(key)
    if not match:
        raise bad_request(f"{key!r} is not a replay: replays are named by game id, as "
                          "replay/12.html, or replay/12-seat0.html for one seat's view.")
    game_id, seat = int(match[1]), None if match[2] is None else int(match[2])
    row = load(store, game_id)
    _deal_over(store, row)
    if spectator:  # issue 15 §4: no seat's view and no full view on the public side
        if seat is not None:
            raise not_found(f"There is no public page of game {game_id} from a seat: a "
                            "seat's view is shown only to its bot's author, signed in.")
        return public_replay_page(store, row)
    if seat is not None and seat >= len(row["seat_rows"]):
        raise not_found(f"Game {game_id} has seats 0 to {len(row['seat_rows']) - 1}; there is "
                        f"no seat {seat}.")
    return replay_page(store, rebuild(row, [seat]), seat)


def _deal_over(store: StoreReader, row: dict[str, Any]) -> None:
    """404 while the game's deal is still to be played in another seating (duplicate
    deals): its replay would show that game's hidden cards (issue 19 §3, found by review)."""
    pending = store.deal_unplayed(row["tournament_id"], row["idx"])
    if pending:
        raise not_found(f"Game {row['id']}'s deal is played in other seatings too, and "
                        f"{pending} of them {'is' if pending == 1 else 'are'} not over: its "
                        "replay would show their hidden cards. It opens once they have all "
                        "been played.")


def _tournament(store: StoreReader, key: str, spectator: bool) -> str:
    """A tournament's page by its id or, served, by its name (issue 13 B6: the names
    `arena tournament list` shows work here too; a name is never all digits)."""
    if _NUMBER.fullmatch(key):
        return tournament_page(store, int(key))
    found = store.tournament_id(key)
    if found is None:
        raise not_found(f"There is no tournament named {key!r}; the tournaments page links "
                        "every one, by its id (tournament/1.html) or its name.")
    return tournament_page(store, found)


def _bot(store: StoreReader, key: str, spectator: bool) -> str:
    """A bot's page by its file name: the bot's name, or page_path's shortening of a long one."""
    if "@" in key:  # bot names hold no "@": the shortened file name of a long name (page_path)
        for name in store.bot_names():
            if page_key_matches("bot", name, key):
                return bot_page(store, name, spectator=spectator)
    return bot_page(store, key, spectator=spectator)


_PAGES: dict[str, Callable[[StoreReader, str, bool], str]] = {
    "leaderboard": lambda store, key, _: leaderboard_page(store, key),
    "head-to-head": lambda store, key, _: head_to_head_page(store, key),
    "bot": _bot,
    "tournament": _tournament,
    "replay": _replay,
    "ladder": lambda store, key, _: ladder_page(store, key),
    "live": lambda store, key, _: live_page(store, key),
}


def _page_key(segment: str) -> str | None:
    """A page's key from its file name (``stop-me.html``: ``stop-me``), or None."""
    return segment[:-5] if segment.endswith(".html") and len(segment) > 5 else None


def page_for(store: StoreReader, segments: list[str], *, spectator: bool = False) -> str:
    """The page at a path (its decoded segments), or PageError; ``spectator``: the public
    side of a server with submissions (see the module's docstring)."""
    if segments in ([], [""], ["index.html"]):
        return index_page(store)
    if segments == ["tournaments.html"]:
        return tournaments_page(store)
    if segments == ["ladders.html"]:
        return ladders_page(store)
    if len(segments) == 2 and segments[0] in _PAGES and (key := _page_key(segments[1])):
        return _PAGES[segments[0]](store, key, spectator)
    if len(segments) == 3 and segments[0] == "head-to-head" and segments[1] \
            and (key := _page_key(segments[2])):
        return pair_page(store, segments[1], key)
    raise not_found("There is no page at this address; the start page links every page.")


def render(store: StoreReader, segments: list[str], *,
           spectator: bool = False) -> tuple[int, str]:
    """(HTTP status, HTML) for a path: the page, or a clear error page, never a traceback.
    ``spectator``: the public side of a server with submissions (no author's output)."""
    root = root_of(segments)
    try:
        return 200, page_for(store, segments, spectator=spectator)
    except PageError as err:
        return err.status, error_page(err.status, err.message, root, _games(store))
    except StoreBusyError:
        return 503, error_page(503, "The database is busy (a tournament is writing to it); "
                               "try again in a moment.", root)
    except StoreError as err:
        return 503, error_page(503, f"The database cannot be read now: {err}", root)
    except Exception:  # the visitor gets a sentence, the log the details
        log.exception("error while making the page /%s", "/".join(segments))
        return 500, error_page(500, "Something went wrong while making this page; the "
                               "server's log has the details.", root, _games(store))


def _games(store: StoreReader) -> list[str]:
    try:
        return boards(store)
    except Exception:  # noqa: BLE001 - only the navigation bar is lost
        return []


def export_html(store: StoreReader, directory: str | Path,
                progress: Callable[[str], None] | None = None) -> int:
    """Write every page under ``directory`` and the static files under
    ``directory/static/`` (links relative: open index.html from disk); returns the number
    of pages written."""
    with for_files():
        return _export(store, Path(directory), progress)


def _export(store: StoreReader, out: Path, progress: Callable[[str], None] | None) -> int:
    count = 0

    def write(relative: str, html: str) -> None:
        nonlocal count
        path = out / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(html, encoding="utf-8")
        count += 1
        if progress:
            progress(relative)

    # The same templates as served; the static files too, so the pages work from disk.
    (out / STATIC_PREFIX).mkdir(parents=True, exist_ok=True)
    for name in STATIC_FILES:
        shutil.copyfile(STATIC_DIR / name, out / STATIC_PREFIX / name)
    write("index.html", index_page(store))
    write("tournaments.html", tournaments_page(store))
    write("404.html", error_page(404, "There is no page at this address; the start page links "
                                 "every page.", "", boards(store)))
    for game in boards(store):
        write(f"leaderboard/{game}.html", leaderboard_page(store, game))
        write(f"head-to-head/{game}.html", head_to_head_page(store, game))
        for row in head_to_head_table(store, game)["rows"]:  # each cell's games (§4)
            for cell in (c for c in row["cells"] if c):
                write(f"head-to-head/{game}/{cell['key']}.html",
                      pair_page(store, game, cell["key"]))
    for name in store.bot_names():
        write("/".join(page_path("bot", name)), bot_page(store, name))
    for tid in store.tournament_ids():
        write(f"tournament/{tid}.html", tournament_page(store, tid))
    write("ladders.html", ladders_page(store))
    for tid, _ in ladder_names(store):  # a snapshot: the live parts stay as they were
        write(f"ladder/{tid}.html", ladder_page(store, str(tid)))
    for row in store.live_games():  # a snapshot of each game in progress, public only
        key = live_file(row["tournament_id"], row["idx"])
        write(f"live/{key}.html", live_page(store, key))
    for game_id in store.game_ids():
        stored = load(store, game_id)
        if store.deal_unplayed(stored["tournament_id"], stored["idx"]):
            continue  # not yet: its deal is played again in a seating still to come
        seats: list[int | None] = [None, *range(len(stored["seat_rows"]))]
        rebuilt = rebuild(stored, seats)
        for seat in seats:
            write(f"replay/{replay_file(game_id, seat)}.html",
                  replay_page(store, rebuilt, seat))
    return count
