"""Bots that travel by content hash (issue 17 §2): packed on the organiser, cached on
each worker under their hash, checked on arrival and before every use.

A bot version's files (the store's own copy: a file or a folder) are packed into one
uncompressed tar by :func:`pack`, and named by :func:`referee.botfiles.content_hash`
of those files, the hash the store already versions them by. A worker keeps what it
fetched in a :class:`BotCache` folder, ``HASH/ENTRY``. A cached copy whose files no
longer hash to its name (a disk error, someone's edit) is removed and fetched again,
never run.

The tar comes from the organiser's store, but its files are a bot author's: it is
unpacked under the store's caps (:data:`referee.botfiles.DEFAULT_LIMITS`) and with
tarfile's ``data`` filter, so that no member lands outside the cache, and nothing but
files, folders and links inside the bot is made.
"""

from __future__ import annotations

import io
import logging
import re
import shutil
import tarfile
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path, PurePosixPath

from referee.botfiles import DEFAULT_LIMITS, BotFileLimits, content_hash
from referee.errors import BotSpecError

log = logging.getLogger(__name__)

HASH = re.compile(r"[0-9a-f]{64}")
"""A bot version's content hash: SHA-256 in lower-case hex."""
ENTRY = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+@-]{0,127}")
"""The name of a bot's file or folder in a bundle: one plain part, never a path."""


class BundleError(BotSpecError):
    """A bundle that cannot be used: malformed, over the caps, or not of its hash."""


def check_ref(digest: str, entry: str) -> None:
    """BundleError unless ``digest`` is a content hash and ``entry`` one plain name."""
    if not HASH.fullmatch(digest):
        raise BundleError(f"a bot's hash must be 64 hex digits, got {digest!r}")
    if not ENTRY.fullmatch(entry) or entry in {".", ".."}:
        raise BundleError(f"a bot's entry must be one plain file name, got {entry!r}")


def pack(path: Path) -> tuple[str, str, bytes]:
    """The bot at ``path`` (a store copy) as ``(hash, entry, tar bytes)``."""
    path = Path(path)
    digest, entry = content_hash(path), path.name
    check_ref(digest, entry)
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        tar.add(path, arcname=entry)
    return digest, entry, buffer.getvalue()


def _check_member(m: tarfile.TarInfo, entry: str, digest: str) -> None:
    """BundleError for a name with ``..`` or a symlink whose target is absolute or leads
    out of ``entry``, checked here by hand: the ``data`` filter alone had holes before
    the Python releases of June 2025 (CVE-2025-4517, -4138, -4330; found by review)."""
    parts = PurePosixPath(m.name).parts
    if ".." in parts or m.name.startswith("/"):
        raise BundleError(f"bot {digest[:12]}: the member {m.name!r} leads out of its folder")
    if m.issym():
        target = PurePosixPath(m.linkname)
        if len(parts) == 1:
            raise BundleError(f"bot {digest[:12]}: its entry {m.name!r} is a symlink")
        if target.is_absolute():
            raise BundleError(f"bot {digest[:12]}: the symlink {m.name!r} points to the "
                              f"absolute {m.linkname!r}")
        depth = len(parts) - 1  # folders the link sits in, entry's own among them
        for part in target.parts:
            depth += -1 if part == ".." else 0 if part == "." else 1
            if depth < 1:
                raise BundleError(f"bot {digest[:12]}: the symlink {m.name!r} points "
                                  f"out of {entry!r} ({m.linkname!r})")


def unpack(data: bytes, digest: str, entry: str, dest: Path,
           limits: BotFileLimits = DEFAULT_LIMITS) -> Path:
    """Unpack ``data`` into the empty folder ``dest``; the path of its ``entry``.

    BundleError if the tar is malformed, holds anything but ``entry`` and what is under
    it, or is over ``limits``, or if what it unpacks to does not hash to ``digest``."""
    check_ref(digest, entry)
    if len(data) > limits.total_mb * 2 << 20:  # tar headers cost at most a block a file
        raise BundleError(f"bot {digest[:12]}: a bundle of {len(data)} bytes is over the "
                          f"cap of {limits.total_mb} MB of files")
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:") as tar:
            members = tar.getmembers()
            if len(members) > limits.files:
                raise BundleError(f"bot {digest[:12]}: {len(members)} entries, over the cap "
                                  f"of {limits.files}")
            size = 0
            for m in members:
                if m.name != entry and not m.name.startswith(entry + "/"):
                    raise BundleError(f"bot {digest[:12]}: the member {m.name!r} is not "
                                      f"under {entry!r}")
                if not (m.isfile() or m.isdir() or m.issym()):
                    raise BundleError(f"bot {digest[:12]}: the member {m.name!r} is "
                                      f"neither a file, a folder nor a symlink")
                _check_member(m, entry, digest)
                size += m.size
            if size > limits.total_mb << 20:
                raise BundleError(f"bot {digest[:12]}: {size} bytes of files, over the cap "
                                  f"of {limits.total_mb} MB")
            # The data filter (PEP 706) refuses absolute names, '..' and links that lead
            # out of dest, and drops set-id bits and group or other write permissions.
            tar.extractall(dest, members=members, filter="data")
    except (tarfile.TarError, OSError, UnicodeError) as err:
        raise BundleError(f"bot {digest[:12]}: not a readable bundle: {err}") from None
    path = dest / entry
    found = content_hash(path)
    if found != digest:
        raise BundleError(f"bot {digest[:12]}: its files hash to {found[:12]}, not to their "
                          f"name")
    return path


class BotCache:
    """A worker's bots by content hash and entry, in ``root/HASH/ENTRY/ENTRY``.

    :meth:`get` returns a cached bot only after its files hash to its name again (issue
    17 §2: a cached bot that fails its check is fetched again, never run); otherwise
    it fetches the bundle, unpacks it beside the cache and moves it in. A lock per
    hash makes two slots of one worker that need the same bot fetch it once.
    """

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)
        self.fetched = 0
        """Bundles fetched by this worker process (counted for its log and the tests)."""
        self.refetched = 0
        """Of those, fetched again because a cached copy failed its hash check."""
        self._locks: dict[str, threading.Lock] = {}
        self._guard = threading.Lock()

    def _lock(self, digest: str, entry: str) -> threading.Lock:
        with self._guard:
            return self._locks.setdefault(f"{digest}/{entry}", threading.Lock())

    def get(self, digest: str, entry: str, fetch: Callable[[], bytes]) -> Path:
        """The checked path of bot ``digest``'s ``entry``; ``fetch()`` gives its bundle
        when it is not cached, or its cached copy no longer matches its hash."""
        check_ref(digest, entry)
        # By hash and entry: the hash is of the contents, not of the entry's own name, so
        # alice_bot.py and bob_bot.py of the same bytes are one hash (found by review).
        folder = self.root / digest / entry
        with self._lock(digest, entry):
            path = folder / entry
            if folder.exists():
                try:
                    if path.exists() and content_hash(path) == digest:
                        return path
                except (OSError, BotSpecError):
                    pass  # unreadable: as good as changed
                log.warning("cached bot %s failed its hash check: removed, fetched again",
                            digest[:12])
                shutil.rmtree(folder, ignore_errors=True)
                self.refetched += 1
            data = fetch()
            self.fetched += 1
            folder.parent.mkdir(exist_ok=True)
            stage = Path(tempfile.mkdtemp(dir=self.root, prefix=".fetch-"))
            try:
                unpack(data, digest, entry, stage)
                stage.rename(folder)  # whole or not at all
            finally:
                shutil.rmtree(stage, ignore_errors=True)
            log.info("fetched bot %s (%d bytes)", digest[:12], len(data))
            return path
