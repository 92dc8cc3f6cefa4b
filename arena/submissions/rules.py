"""The rules an uploaded archive is held to (issue 15 §3), entry by entry and across
entries: its formats, the refusal every rule raises, the limits, a name's normal form,
and the tally of count, size, ratio and duplicates. :mod:`.readers` applies them to the
tar and zip entries it reads; :mod:`.archive` checks and unpacks."""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from typing import Protocol

GZIP, ZIP, TAR = "tar.gz", "zip", "tar"
FORMATS = (GZIP, ZIP, TAR)
CONTENT_TYPES = {"application/gzip": GZIP, "application/x-gzip": GZIP,
                 "application/x-tar": TAR, "application/zip": ZIP,
                 "application/x-zip-compressed": ZIP}
"""The API's Content-Types (issue 15 plan, HTTP API) and the format each declares."""
CHUNK = 1 << 16
MAX_DEPTH = 32
"""Folders nested in a bot (the bot store's cap, referee.botfiles.BotFileLimits.depth)."""
MAX_PART_BYTES = 255
MAX_NAME_BYTES = 4096
RATIO_FLOOR = 1 << 20
"""Below this many unpacked bytes no ratio is refused: a tar's 10 KiB of padding alone
compresses a hundredfold, and a bomb needs far more than a MiB to matter."""


class ArchiveError(ValueError):
    """An archive refused: ``rule`` is a stable code (``archive-symlink``), ``entry``
    the entry's name as the archive spells it (``""`` for the whole archive)."""

    def __init__(self, rule: str, entry: str, message: str) -> None:
        self.rule, self.entry = rule, entry
        shown = f"{entry!r}: " if entry else ""
        super().__init__(f"{shown}{message} [{rule}]")
        self.message = message


class Uploads(Protocol):
    """The ``[uploads]`` settings (arena.web.config.UploadSection) that apply here."""

    max_entries: int
    max_ratio: int

    @property
    def max_compressed_bytes(self) -> int: ...

    @property
    def max_unpacked_bytes(self) -> int: ...


@dataclass(frozen=True)
class ArchiveLimits:
    """The caps of issue 15 §3 (defaults: ``[uploads]`` in arena.toml)."""

    max_compressed_bytes: int = 20 << 20
    max_unpacked_bytes: int = 100 << 20
    max_entries: int = 10_000
    max_ratio: int = 100
    max_depth: int = MAX_DEPTH

    @classmethod
    def of(cls, uploads: Uploads) -> ArchiveLimits:
        """The limits of a config's ``[uploads]`` section."""
        return cls(uploads.max_compressed_bytes, uploads.max_unpacked_bytes,
                   uploads.max_entries, uploads.max_ratio)


DEFAULT_LIMITS = ArchiveLimits()


@dataclass(frozen=True)
class Entry:
    """One checked entry: its normalised name, whether a folder, its mode and size."""

    name: str
    folder: bool
    mode: int
    size: int


@dataclass(frozen=True)
class Checked:
    """What :func:`check_archive` found: the format, the entries, their bytes in all."""

    fmt: str
    entries: tuple[Entry, ...]
    unpacked_bytes: int


def detect(head: bytes) -> str | None:
    """The format of an archive that begins with ``head`` (its first 512 bytes), or None."""
    if head[:2] == b"\x1f\x8b":
        return GZIP
    if head[:4] in (b"PK\x03\x04", b"PK\x05\x06"):
        return ZIP
    if head[257:262] == b"ustar":
        return TAR
    return None


def format_of(content_type: str | None) -> str | None:
    """The format a Content-Type declares (parameters ignored), None for none or another."""
    if not content_type:
        return None
    return CONTENT_TYPES.get(content_type.split(";")[0].strip().lower())


def normalise(name: str, folder: bool = False) -> str:
    """The archive name ``name`` as a relative path of plain parts, or ArchiveError.

    ``""`` is the archive's root (``./``), allowed only for a folder."""
    if "\0" in name:
        raise ArchiveError("archive-name-nul", name, "the name holds a NUL character")
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        shown = name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
        raise ArchiveError("archive-name-utf8", shown, "the name is not valid UTF-8") from None
    odd = sorted({f"U+{ord(c):04X}" for c in name
                  if unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp")})
    if odd:
        raise ArchiveError("archive-name-control", name, f"the name holds a control or "
                           f"invisible character ({', '.join(odd)})")
    if "\\" in name:
        raise ArchiveError("archive-name-backslash", name, "the name holds a backslash (a "
                           "Windows path separator): use '/' between folders")
    if name.startswith("/") or (len(name) > 1 and name[1] == ":" and name[0].isalpha()):
        raise ArchiveError("archive-absolute", name, "the name is an absolute path")
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise ArchiveError("archive-dotdot", name, "the name goes up a folder ('..')")
    if not parts and not folder:
        raise ArchiveError("archive-name-empty", name, "a file without a name")
    if len(name.encode()) > MAX_NAME_BYTES or any(len(p.encode()) > MAX_PART_BYTES
                                                  for p in parts):
        raise ArchiveError("archive-name-long", name, f"the name is longer than "
                           f"{MAX_NAME_BYTES} bytes or has a part over {MAX_PART_BYTES}")
    return "/".join(parts)


def mode_of(mode: int, folder: bool) -> int:
    """Issue 15 §3: the sandbox user can always read the bot, and no more is given."""
    return 0o755 if folder or mode & 0o111 else 0o644


def _fold(name: str) -> str:
    """The key under which two names are one: Unicode's canonical caseless match
    (NFD, casefold, NFC), as a case-insensitive or normalising file system (macOS)
    would make them one; 'é' precomposed and 'e' + U+0301 were two (found by review)."""
    return unicodedata.normalize("NFC", unicodedata.normalize("NFD", name).casefold())


class Tally:
    """The rules that span entries: count, total size, ratio, duplicates, parents."""

    def __init__(self, limits: ArchiveLimits, compressed: int) -> None:
        self.limits, self.compressed = limits, compressed
        self.entries: list[Entry] = []
        self.total = 0
        self.seen: dict[str, tuple[str, bool, bool]] = {}
        """Each name met, casefolded: (its name, a folder, only implied by a later name)."""

    def add(self, raw: str, folder: bool, mode: int, size: int) -> Entry:
        limits = self.limits
        if len(self.entries) >= limits.max_entries:
            raise ArchiveError("archive-entries", raw, f"one entry too many: an archive may "
                               f"hold at most {limits.max_entries} entries")
        name = normalise(raw, folder)
        if name.count("/") >= limits.max_depth:
            raise ArchiveError("archive-depth", raw, f"nested more than {limits.max_depth} "
                               f"folders deep")
        if size < 0 or (folder and size):
            raise ArchiveError("archive-corrupt", raw, f"a size of {size} bytes for a "
                               f"{'folder' if folder else 'file'}")
        self.total += size
        if self.total > limits.max_unpacked_bytes:
            raise ArchiveError("archive-unpacked-size", raw, f"takes the unpacked size past "
                               f"{limits.max_unpacked_bytes} bytes")
        self.ratio(raw, self.total)
        if name:
            self.place(raw, name, folder)
        entry = Entry(name, folder, mode_of(mode, folder), size)
        self.entries.append(entry)
        return entry

    def place(self, raw: str, name: str, folder: bool) -> None:
        """Refuse a duplicate (by case or Unicode normalisation too) and a file where a
        folder is needed."""
        key = _fold(name)
        first = self.seen.get(key)
        if first is not None and not (first[2] and folder):
            if first[2]:
                raise ArchiveError("archive-duplicate", raw, f"a file where earlier entries "
                                   f"need a folder {first[0]!r}")
            how = ("the same name as" if first[0] == name else
                   "a name differing only in case, Unicode normalisation (NFC/NFD) or "
                   "'.' and '/' from")
            raise ArchiveError("archive-duplicate", raw, f"{how} an earlier entry "
                               f"{first[0]!r}")
        parts = name.split("/")
        for i in range(1, len(parts)):
            above = "/".join(parts[:i])
            met = self.seen.get(_fold(above))
            if met is not None and not met[1]:
                raise ArchiveError("archive-duplicate", raw, f"its folder {met[0]!r} is a "
                                   f"file earlier in the archive")
            if met is not None and met[0] != above:
                raise ArchiveError("archive-duplicate", raw, f"its folder {above!r} differs "
                                   f"only in case or Unicode normalisation from an "
                                   f"earlier {met[0]!r}")
            if met is None:
                self.seen[_fold(above)] = (above, True, True)
        self.seen[key] = (name, folder, False)

    def ratio(self, raw: str, unpacked: int) -> None:
        """The whole archive's compression ratio, ``unpacked`` bytes so far."""
        if unpacked > RATIO_FLOOR and unpacked > self.limits.max_ratio * max(self.compressed,
                                                                             1):
            raise ArchiveError("archive-ratio", raw, f"the archive unpacks to over "
                               f"{self.limits.max_ratio} times its {self.compressed} "
                               f"compressed bytes (a bomb?)")
