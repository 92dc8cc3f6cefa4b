"""The organiser's actions on a ladder: stop its runner, pause or resume a bot version,
and begin the finals (issue 16 §2, §3). Each is one write; the runner reads it
before its next match."""

from __future__ import annotations

from leaderboard.store import Store, StoreError
from leaderboard.store.rows_ladders import LadderRow
from referee.text import hidden

from ..tournament import name_version
from .roster import Entry, roster
from .snapshot import running


def stop(store: Store, name: str) -> bool:
    """Ask ladder ``name``'s runner to stop once its matches in flight end; whether one
    is running (if none is, nothing is asked: the next run would stop at once)."""
    ladder = store.ladder(name)
    if not running(ladder):
        return False
    store.request_ladder_stop(ladder.id)
    return True


def _entry(store: Store, ladder: LadderRow, spec: str) -> Entry:
    """The roster's entry of ``spec`` (``NAME``: its version on the roster)."""
    bot, version = name_version(spec)
    entries = roster(store, ladder).entries
    for entry in entries:
        if entry.name == bot and version in (None, entry.version):
            return entry
    on = ", ".join(e.label for e in entries) or "nobody"
    raise StoreError(f"bot {spec!r} is not on ladder {ladder.name!r} (on it: {on})")


def pause(store: Store, name: str, spec: str, note: str | None = None) -> Entry:
    """Pause bot version ``spec`` (``NAME`` or ``NAME@V``) in ladder ``name``: it
    begins no match until it is resumed or its author submits a new version."""
    unseen = sorted({f"U+{ord(c):04X}" for c in note or "" if hidden(c)})
    if unseen:  # the note is in arena ladder show's lines and the public page (found
        # by review: an escape sequence in it acted on the terminal, a newline forged lines)
        raise StoreError(f"note {note!r} holds a control or invisible character "
                         f"({', '.join(unseen)}): use letters, digits and punctuation")
    ladder = store.ladder(name)
    entry = _entry(store, ladder, spec)
    if entry.paused is not None:
        raise StoreError(f"{entry.label} is paused already in ladder {name!r} since "
                         f"{entry.paused['since']}: {entry.paused['reason']}")
    store.add_ladder_action(ladder.id, entry.bot_id, "pause", ladder.scheduled - 1, note)
    return entry


def resume(store: Store, name: str, spec: str) -> Entry:
    """Resume paused bot version ``spec`` in ladder ``name``; its crash streak counts
    again from the games scheduled after now (issue 16 §2)."""
    ladder = store.ladder(name)
    entry = _entry(store, ladder, spec)
    if entry.paused is None:
        raise StoreError(f"{entry.label} is not paused in ladder {name!r}")
    store.add_ladder_action(ladder.id, entry.bot_id, "resume", ladder.scheduled - 1)
    return entry


def start_finals(store: Store, name: str, games_per_bot: int) -> LadderRow:
    """Begin ladder ``name``'s finals, or check the ones begun: the roster frozen as it
    stands (paused versions left out), tau 0 from the next match, ``games_per_bot``
    finals games for every finalist (issue 16 §3)."""
    if games_per_bot < 1:
        raise StoreError(f"--games-per-bot must be at least 1, got {games_per_bot}")
    ladder = store.ladder(name)
    if ladder.finished_at is not None:
        raise StoreError(f"ladder {name!r} finished at {ladder.finished_at}: its finals "
                         f"are over")
    if ladder.in_finals:
        if ladder.finals_games != games_per_bot:
            raise StoreError(f"ladder {name!r} began its finals with --games-per-bot "
                             f"{ladder.finals_games}, not {games_per_bot}; continue them "
                             f"with that number")
        return ladder
    finalists = [e.bot_id for e in roster(store, ladder).active]
    if len(finalists) < min(ladder.seat_counts):
        raise StoreError(f"ladder {name!r} has {len(finalists)} active bot(s), too few "
                         f"for a match of {min(ladder.seat_counts)}: no finals")
    store.start_finals(ladder.id, ladder.game, games_per_bot, finalists)
    return store.ladder(name)
