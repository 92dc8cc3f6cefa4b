"""An uploaded bot archive: checked whole before anything is unpacked, then unpacked safely.

Issue 15 §3. An archive is a stranger's: every rule below is checked on every entry
by :func:`check_archive`, before a byte is written, and again by :func:`unpack`
while it writes (headers can lie: a zip's sizes, a gzip stream's length):

* the format is told by its magic bytes (gzip ``1f 8b``, zip ``PK``, tar ``ustar``
  at 257), never by a name or a Content-Type alone; a declared format that the
  bytes contradict is refused (``archive-format-mismatch``);
* at most ``max_entries`` entries, ``max_unpacked_bytes`` in all, counted from the
  headers and again from the bytes actually decompressed; the compression ratio,
  of the whole archive and of each zip entry, at most ``max_ratio`` (bombs);
* regular files and folders only: no symlink, hard link, device, FIFO, sparse file
  or GNU/pax special; no encrypted zip entry, no compression but stored/deflate;
* names: valid UTF-8, no control or invisible character, no NUL, no backslash, not
  absolute, no ``..``; ``.`` parts and repeated or trailing slashes are normalised
  away, and then no two entries may have the same name, even by case alone (a
  case-insensitive file system would make them one), nor a file stand where a
  folder is needed;
* modes are normalised: files 0644, or 0755 if any x bit was set; folders 0755.

Every refusal is an :class:`ArchiveError` with a stable rule code and the entry.
Unpacking writes into a fresh folder through descriptors only (``openat`` style,
``O_NOFOLLOW``, ``O_EXCL``): nothing in the destination is ever followed.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from .readers import entries
from .rules import (
    CONTENT_TYPES,
    DEFAULT_LIMITS,
    FORMATS,
    GZIP,
    TAR,
    ZIP,
    ArchiveError,
    ArchiveLimits,
    Checked,
    Entry,
    Uploads,
    detect,
    format_of,
    normalise,
)

__all__ = ["CONTENT_TYPES", "DEFAULT_LIMITS", "FORMATS", "GZIP", "TAR", "ZIP", "ArchiveError",
           "ArchiveLimits", "Checked", "Entry", "Uploads", "check_archive", "detect",
           "format_of", "normalise", "unpack"]


def check_archive(path: Path, fmt: str | None = None,
                  limits: ArchiveLimits = DEFAULT_LIMITS) -> Checked:
    """Check every rule on every entry of the archive at ``path``, writing nothing.

    ``fmt`` is the declared format (None: none declared); the bytes decide."""
    checked = []
    found = fmt
    with path.open("rb") as raw:
        found = detect(raw.read(512)) or fmt
    for entry, read in entries(path, fmt, limits):
        # The bytes too, to nowhere: a zip's local header, sizes and CRC are checked
        # only as an entry is read, so a lie is refused at upload, not in the job.
        if not entry.folder:
            for _ in read():
                pass
        checked.append(entry)
    return Checked(found or "", tuple(checked), sum(e.size for e in checked))


def unpack(path: Path, dest: Path, fmt: str | None = None,
           limits: ArchiveLimits = DEFAULT_LIMITS) -> Checked:
    """Check the archive, then unpack it into ``dest``, a folder made here (it must not
    exist); every rule is enforced again on the bytes as they are written."""
    checked = check_archive(path, fmt, limits)
    os.mkdir(dest, 0o755)
    try:
        _write(path, dest, fmt, limits)
    except BaseException:
        shutil.rmtree(dest, ignore_errors=True)  # half an unpack is never left (§3)
        raise
    return checked


def _write(path: Path, dest: Path, fmt: str | None, limits: ArchiveLimits) -> None:
    """Write the checked archive's entries under ``dest`` through descriptors only."""
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW
    root = os.open(dest, flags)
    try:
        os.fchmod(root, 0o755)
        written = 0
        for entry, read in entries(path, fmt, limits):
            if not entry.name:
                continue
            *folders, last = entry.name.split("/")
            parent = _folders(root, folders if not entry.folder else [*folders, last])
            try:
                if entry.folder:
                    os.fchmod(parent, 0o755)
                    continue
                out = os.open(last, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
                              | os.O_NOCTTY, entry.mode, dir_fd=parent)
                try:
                    for chunk in read():
                        written += len(chunk)
                        if written > limits.max_unpacked_bytes:
                            raise ArchiveError("archive-unpacked-size", entry.name, "takes "
                                               "the unpacked size past "
                                               f"{limits.max_unpacked_bytes} bytes")
                        os.write(out, chunk)
                    os.fchmod(out, entry.mode)  # whatever the umask
                finally:
                    os.close(out)
            finally:
                os.close(parent)
    finally:
        os.close(root)


def _folders(root: int, parts: list[str]) -> int:
    """A descriptor of the folder ``parts`` below ``root``, each made (0755) if missing
    and opened without following a symlink; the caller closes it."""
    fd = os.dup(root)
    try:
        for part in parts:
            try:
                os.mkdir(part, 0o755, dir_fd=fd)
            except FileExistsError:
                pass
            below = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
            os.close(fd)
            fd = below
    except BaseException:
        os.close(fd)
        raise
    return fd
