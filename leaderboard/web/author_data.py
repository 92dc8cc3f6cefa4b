"""What an author's own pages show (issue 15 §4), given the names of their bots.

Ownership is the accounts part's (``arena.accounts``): every function here takes the
author's bot names, ``names``, and shows nothing of any other bot. A bot name asked
for that is not among them is a 404 worded exactly as for a name that does not exist,
so that the pages never tell whether another author's bot is there (issue 15 §5).
The submissions' states and check reports are the submissions part's reads; the
lead joins them to :func:`author_bots` by name and version.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..store import StoreReader
from .data import RECENT_GAMES, games_with_opponents, label, not_found, replay_name

LOG_CHARS = 4000
"""How many characters of each stderr log a list shows (the whole size is said)."""
LOGS = 20
"""How many logs a list shows, newest first."""
FAULTS = 50
"""How many faulted seats a list shows, newest first."""


def owned(names: Sequence[str], name: str) -> None:
    """A 404 unless ``name`` is one of the author's bots, worded as for an unknown bot."""
    if name not in names:
        raise not_found(f"You have no bot named {name[:80]!r}.")


def author_bots(store: StoreReader, names: Sequence[str]) -> list[dict[str, Any]]:
    """The author's bots, by name, each with every version, oldest first::

        [{"name", "newest": the newest version not removed (None: all removed or
          none yet), "removed": every version removed,
          "versions": [{"id", "version", "label", "hash", "kind", "added_at",
                        "removed_at", "removed"}]}]

    A name with no version yet (its first submission still in the pipeline) is
    listed with no versions.
    """
    versions = store.bot_versions_named(sorted(set(names)))
    out = []
    for name in sorted(set(names)):
        mine = [v for v in versions if v.name == name]
        active = [v.version for v in mine if v.removed_at is None]
        out.append({"name": name, "newest": max(active) if active else None,
                    "removed": bool(mine) and not active,
                    "versions": [{"id": v.id, "version": v.version,
                                  "label": label(v.name, v.version), "hash": v.hash,
                                  "kind": v.kind, "added_at": v.added_at,
                                  "removed_at": v.removed_at,
                                  "removed": v.removed_at is not None} for v in mine]})
    return out


def bot_logs(store: StoreReader, names: Sequence[str], name: str,
             version: int | None = None, limit: int = LOGS,
             max_chars: int = LOG_CHARS) -> list[dict[str, Any]]:
    """The stderr a bot of the author's wrote in each match (all its versions, or
    ``version``), newest first, ``limit`` of them::

        [{"id", "tournament", "tid", "match", "seat", "version", "label", "stored_at",
          "bytes": the whole log's size in bytes (UTF-8), "chars": its length,
          "text": its first max_chars characters, "truncated": whether it was cut}]

    A 404 for a bot not the author's, or a version it does not have. The referee
    already caps what it keeps of a match (64 KiB); ``max_chars`` cuts it for a page.
    """
    owned(names, name)
    with store.snapshot():
        versions = [v for v in store.bot_versions_named([name])
                    if version is None or v.version == version]
        if not versions:
            raise not_found(f"Your bot {name[:80]!r} has no version {version}."
                            if version is not None else f"You have no bot named {name[:80]!r}.")
        logs = store.version_logs([v.id for v in versions], limit, max_chars)
    return [{"id": g.id, "tournament": g.tournament, "tid": g.tid, "match": g.match,
             "seat": g.seat, "version": g.version, "label": label(name, g.version),
             "stored_at": g.stored_at, "bytes": g.bytes, "chars": g.chars, "text": g.text,
             "truncated": g.chars > len(g.text)} for g in logs]


def author_games(store: StoreReader, names: Sequence[str],
                 limit: int = RECENT_GAMES) -> list[dict[str, Any]]:
    """The newest games of the author's bots with their opponents, each from the bot's
    own seat (``replay`` is ``ID-seatN``: the only replay the author's page links,
    issue 15 §4): :func:`~leaderboard.web.data.games_with_opponents`."""
    return games_with_opponents(store, names, limit)


def cause(entry: Any) -> dict[str, str]:
    """One fault log entry, ``"kind: detail"`` as the referee writes it
    (referee/match.py), split for a table: ``{"kind", "detail"}``."""
    kind, sep, detail = str(entry).partition(": ")
    return {"kind": kind, "detail": detail} if sep else {"kind": "", "detail": kind}


def author_faults(store: StoreReader, names: Sequence[str],
                  limit: int = FAULTS) -> list[dict[str, Any]]:
    """The newest ``limit`` seats where a bot of the author's faulted (a status other
    than ok, or a fault logged), newest game first, with the causes::

        [{"id", "game", "tournament", "tid", "finished_at", "bot", "version", "label",
          "seat", "status", "faults": {kind: count},
          "causes": [{"kind", "detail"}] (the fault log, in order),
          "replay": "ID-seatN"}]
    """
    with store.snapshot():
        ids = [v.id for v in store.bot_versions_named(sorted(set(names)))]
        faults = store.seat_faults(ids, limit)
    return [{"id": f.id, "game": f.game, "tournament": f.tournament, "tid": f.tid,
             "finished_at": f.finished_at, "bot": f.bot, "version": f.version,
             "label": label(f.bot, f.version), "seat": f.seat, "status": f.status,
             "faults": dict(f.faults), "causes": [cause(e) for e in f.fault_log],
             "replay": replay_name(f.id, f.seat)} for f in faults]


def seat_of(reader: StoreReader, game_id: int, names: Sequence[str]) -> list[int]:
    """The seats of game ``game_id`` held by a version of one of the author's bots, in
    order. Empty (an unknown game, or one their bots did not play): the page must be a
    404, since an author sees only seat views of their own bot (issue 15 §4)."""
    return reader.seats_held(game_id, sorted(set(names)))
