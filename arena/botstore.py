"""The arena's bot store: registered bots, copied and versioned by content hash.

``arena bot add NAME PATH`` checks the bot (it must say a valid hello in the
sandbox), then copies its file or folder into the store folder next to the
database (``arena.db`` keeps its bots in ``arena.bots/``), under
``NAME/HASH/``. Adding changed files under the same name makes a new version;
the old version and its results stay.
"""

from __future__ import annotations

import os
import shutil
import unicodedata
from pathlib import Path

from leaderboard.store import Store, StoreReader
from referee import scratch
from referee.botfiles import DEFAULT_LIMITS, BotFileLimits, content_hash, copy_tree, inside
from referee.errors import BotSpecError
from referee.programs import build_program, load_program
from referee.reports import Greeted
from referee.sandbox import Limits
from referee.seats import ProgramSeat
from referee.text import hidden

HANDSHAKE_S = 10.0

__all__ = ["add_bot", "check_bot_name", "content_hash", "handshake", "keep_bot",
           "store_folder"]


def store_folder(db_path: Path) -> Path:
    """Where the bots of the database at ``db_path`` are kept."""
    return db_path.with_suffix(".bots")


def handshake(path: str, sandbox: str = "auto", limits: Limits | None = None,
              shown: str | None = None) -> str:
    """Start the bot in the sandbox and wait for a valid hello; its name, or BotSpecError.

    ``shown`` is what errors call the bot (the author's path, for a copy of it)."""
    program = load_program(path)
    path = shown or path
    # Named by its owner: the next referee removes it after a kill -9 (issue 13 A11).
    with scratch.TemporaryDirectory("arena-add-") as work:
        program = build_program(program, Path(work), sandbox, limits)
        log = Path(work) / "stderr.log"
        seat = ProgramSeat(0, program, log, sandbox=sandbox, limits=limits)
        seat.start()
        try:
            report = seat.wait_report(HANDSHAKE_S)
            if report is None:
                raise BotSpecError(f"bot {path!r} said no valid hello within "
                                   f"{HANDSHAKE_S:.0f} s")
        finally:
            seat.stop()
        if not isinstance(report, Greeted):
            tail = log.read_text(errors="replace")[-1500:] if log.exists() else ""
            # Every other report says why in its detail (an Acted cannot come first).
            why = getattr(report, "detail", repr(report))
            raise BotSpecError(f"bot {path!r} failed its handshake: {why}"
                               + (f"\nits stderr ends with:\n{tail}" if tail else ""))
        return report.name


_ONE_SCRIPT = {"HIRAGANA": "CJK", "KATAKANA": "CJK", "HANGUL": "CJK",
               "FULLWIDTH": "LATIN", "HALFWIDTH": "CJK"}
"""Scripts written together (Japanese, Korean with Han) or folded into one (NFKC)."""


def _scripts(name: str) -> set[str]:
    """The scripts of the letters in ``name``, by the first word of each letter's Unicode
    name (LATIN, CYRILLIC, GREEK, CJK...); digits, marks and punctuation have none."""
    found = set()
    for char in name:
        if unicodedata.category(char).startswith("L"):
            word = unicodedata.name(char, "UNKNOWN").split(" ")[0]
            found.add(_ONE_SCRIPT.get(word, word))
    return found


def check_bot_name(store: StoreReader, name: str) -> str:
    """``name`` if it can name a new bot or version in ``store``; BotSpecError otherwise
    (shared by ``arena bot add`` and the server's submissions, issue 15 §3)."""
    # ',' separates the names of `tournament run --bots` and '@' starts a version there
    # (NAME@2), so a name holding either could never be entered in a tournament.
    if (not name or any(c in name for c in "/,@") or name.startswith(".")
            or name != name.strip()):
        raise BotSpecError(f"bot name {name!r} must be a plain name (no '/', ',' or '@', "
                           f"no leading dot)")
    # The name is a folder's name and shown in every table and log line: a NUL was a
    # ValueError, a newline forged lines, a bidi override reordered a table's text, and
    # a zero-width space made two names look alike (found by review).
    unseen = sorted({f"U+{ord(c):04X}" for c in name if hidden(c)})
    if unseen:
        raise BotSpecError(f"bot name {name!r} holds a control or invisible character "
                           f"({', '.join(unseen)}): use letters, digits and punctuation")
    # One script per name (UTS #39's "single script" idea): 'gооd' with two Cyrillic o's
    # passed every fold (NFKC, case) and showed as another author's 'good' on every page
    # (found by review). Whole-script look-alikes remain: the pages show each bot's owner.
    scripts = sorted(_scripts(name))
    if len(scripts) > 1:
        raise BotSpecError(f"bot name {name!r} mixes letters of {' and '.join(scripts)}: "
                           f"write a name in one script, so it cannot pose as another")
    # The store keeps a bot's files in a folder of its name, and the web export a page of
    # it: on a case-insensitive file system (macOS, Windows) 'Foo' and 'foo' would be one.
    for known in store.bot_names():
        if known != name and known.casefold() == name.casefold():
            raise BotSpecError(f"bot name {name!r} differs only in case from {known!r}; "
                               f"their files and pages would be one on a case-insensitive "
                               f"file system: choose another name")
    return name


def add_bot(store: Store, name: str, path: str, sandbox: str = "auto",
            limits: Limits | None = None,
            files: BotFileLimits = DEFAULT_LIMITS) -> tuple[dict, bool]:
    """Check, copy and register a bot; returns (bot row, whether a new version was made).

    The bot is copied first, under the caps of ``files`` and with fixed modes (issue 13
    A6); the check, the hash and the store all use that copy, so what was checked is
    what is kept, whatever happens to the author's folder meanwhile.
    """
    digest, stored = keep_bot(store, name, path, sandbox, limits, files)
    return store.add_bot(name, digest, str(stored), "folder" if stored.is_dir() else "file")


def keep_bot(store: StoreReader, name: str, path: str, sandbox: str = "auto",
             limits: Limits | None = None, files: BotFileLimits = DEFAULT_LIMITS,
             greet: bool = True) -> tuple[str, Path]:
    """Copy a bot into the store folder (after its handshake, if ``greet``) under
    ``NAME/HASH/``; its content hash and stored path, for :meth:`Store.add_bot`.

    Storing the same content again finds the copy already there, so a job run again
    after a kill -9 (issue 15 §3) keeps one copy."""
    check_bot_name(store, name)
    source = Path(path).expanduser()
    load_program(str(source), files)  # a clear error for a missing or unrunnable bot, first
    source = source.resolve()
    # An absolute path: a relative one would only work from the folder of this command.
    root = store_folder(store.path.absolute())
    root.mkdir(parents=True, exist_ok=True)
    # The copy is staged in a hidden folder named by its owner (no bot name starts with
    # a dot), which the next `bot add` removes if this one is killed (issue 13 A11).
    scratch.sweep(str(root))
    folder = inside(root, name)
    staging = Path(scratch.mkdtemp(".arena-incoming-", dir=str(root)))
    try:
        copy = inside(staging, source.name)
        copy_tree(source, copy, files)
        if greet:
            handshake(str(copy), sandbox, limits, shown=path)
        digest = content_hash(copy)
        target = inside(folder, digest[:16])
        for _ in range(3):
            if target.exists():
                break
            folder.mkdir(exist_ok=True)
            try:
                os.replace(staging, target)  # appears whole or not at all
            except FileNotFoundError:
                continue  # a refused add of this name removed the empty folder meanwhile
            except OSError:
                if not target.is_dir():  # else another `bot add` stored it meanwhile
                    raise
            break
        else:
            raise BotSpecError(f"bot {name!r} could not be stored: its folder {folder} was "
                               f"removed three times while it was being stored")
    finally:
        shutil.rmtree(staging, ignore_errors=True)
        try:
            folder.rmdir()  # only if empty: a refused first bot of this name leaves nothing
        except OSError:
            pass
    return digest, target / source.name
