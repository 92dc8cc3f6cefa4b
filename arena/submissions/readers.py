"""The entries of an uploaded archive, read one at a time and checked against
:mod:`.rules` as they come (issue 15 §3): tar (plain or gzip, its extension headers
capped, nothing after its end) and zip (names strictly UTF-8, sizes checked against
the bytes), each entry with a reader of exactly its declared bytes."""

from __future__ import annotations

import stat
import tarfile
import zipfile
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

from .rules import (
    CHUNK,
    GZIP,
    RATIO_FLOOR,
    ZIP,
    ArchiveError,
    ArchiveLimits,
    Entry,
    Tally,
    detect,
)


class _Gunzip:
    """A gzip stream's decompressed bytes, read lazily and counted: past ``cap`` bytes
    (the headers' total plus a tar's own overhead) or the ratio cap it is refused, so
    a stream whose headers lie cannot make the server decompress more."""

    def __init__(self, raw: IO[bytes], cap: int, tally: Tally) -> None:
        self.raw, self.cap, self.tally = raw, cap, tally
        self.zlib = zlib.decompressobj(16 + zlib.MAX_WBITS)
        self.out = 0
        self.buffer = b""

    def read(self, size: int = -1) -> bytes:
        want = CHUNK if size is None or size < 0 else size
        while len(self.buffer) < want and not self.zlib.eof:
            data = self.zlib.unconsumed_tail or self.raw.read(CHUNK)
            if not data:
                raise ArchiveError("archive-corrupt", "", "the gzip stream ends early")
            try:
                more = self.zlib.decompress(data, CHUNK)
            except zlib.error as err:
                raise ArchiveError("archive-corrupt", "", f"not a valid gzip stream: "
                                   f"{err}") from None
            self.out += len(more)
            if self.out > self.cap:
                raise ArchiveError("archive-unpacked-size", "", f"the gzip stream unpacks "
                                   f"to more than {self.cap} bytes")
            self.tally.ratio("", self.out)
            self.buffer += more
        data, self.buffer = self.buffer[:want], self.buffer[want:]
        return data


MAX_HEADER_BYTES = 64 << 10
"""A pax or GNU long-name header's size at most: a name is at most 4096 bytes, and
tarfile reads such a header whole into memory (16 MiB of one passed every cap)."""
MAX_HEADER_CHAIN = 8
"""Extension headers in a row before an entry: tarfile reads each by recursion into the
next, and 5000 of them were a RecursionError, not a refusal (found by review)."""


class _Header(tarfile.TarInfo):
    """A tar header whose extension headers (pax, GNU long names) are refused when
    they are large or chained, before tarfile reads them (issue 15 §3: a limit holds
    at every step)."""

    def _proc_gnulong(self, tarfile: tarfile.TarFile) -> tarfile.TarInfo:
        with self._guard(tarfile):
            return super()._proc_gnulong(tarfile)  # type: ignore[misc]

    def _proc_pax(self, tarfile: tarfile.TarFile) -> tarfile.TarInfo:
        with self._guard(tarfile):
            return super()._proc_pax(tarfile)  # type: ignore[misc]

    @contextmanager
    def _guard(self, tarfile: tarfile.TarFile) -> Iterator[None]:
        if self.size > MAX_HEADER_BYTES:
            raise ArchiveError("archive-header", "", f"an extension header (type "
                               f"{self.type!r}) of {self.size} bytes: at most "
                               f"{MAX_HEADER_BYTES} are taken")
        depth = getattr(tarfile, "_arena_chain", 0) + 1
        if depth > MAX_HEADER_CHAIN:
            raise ArchiveError("archive-header", "", f"more than {MAX_HEADER_CHAIN} "
                               f"extension headers in a row")
        setattr(tarfile, "_arena_chain", depth)  # noqa: B010
        try:
            yield
        finally:
            setattr(tarfile, "_arena_chain", depth - 1)  # noqa: B010


Reader = Callable[[], Iterator[bytes]]
"""An entry's bytes, in chunks, exactly as many as its header says (else ArchiveError)."""


def _tar_entries(tar: tarfile.TarFile, tally: Tally) -> Iterator[tuple[Entry, Reader]]:
    for member in tar:
        raw = member.name
        kinds = {tarfile.SYMTYPE: ("archive-symlink", "a symlink"),
                 tarfile.LNKTYPE: ("archive-hardlink", "a hard link"),
                 tarfile.CHRTYPE: ("archive-device", "a character device"),
                 tarfile.BLKTYPE: ("archive-device", "a block device"),
                 tarfile.FIFOTYPE: ("archive-fifo", "a FIFO"),
                 tarfile.CONTTYPE: ("archive-special", "a contiguous file"),
                 tarfile.GNUTYPE_SPARSE: ("archive-sparse", "a sparse file")}
        if member.type in kinds:
            rule, what = kinds[member.type]
            raise ArchiveError(rule, raw, f"is {what}: an archive may hold only regular "
                               f"files and folders")
        if member.sparse is not None or any(k.startswith("GNU.sparse")
                                            for k in member.pax_headers):
            raise ArchiveError("archive-sparse", raw, "is a sparse file: an archive may "
                               "hold only regular files and folders")
        if not (member.isreg() or member.isdir()):
            raise ArchiveError("archive-special", raw, f"is of type {member.type!r}: an "
                               f"archive may hold only regular files and folders")
        entry = tally.add(raw, member.isdir(), member.mode, 0 if member.isdir()
                          else member.size)

        def read(member: tarfile.TarInfo = member) -> Iterator[bytes]:
            source = tar.extractfile(member)
            assert source is not None
            left = member.size
            while left > 0:
                chunk = source.read(min(CHUNK, left))
                if not chunk:
                    raise ArchiveError("archive-corrupt", member.name, "the entry ends "
                                       "before its size")
                left -= len(chunk)
                yield chunk
        yield entry, read


def _zip_name(info: zipfile.ZipInfo) -> str:
    """The entry's name as the UTF-8 it must be (zipfile decodes unflagged names as
    cp437, which takes any bytes: they are taken back to bytes and decoded strictly)."""
    if info.flag_bits & 0x800:
        return info.filename
    raw = info.orig_filename.encode("cp437")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        shown = raw.decode("utf-8", "backslashreplace")
        raise ArchiveError("archive-name-utf8", shown, "the name is not valid UTF-8") \
            from None


def _unicode_path(info: zipfile.ZipInfo, raw: str) -> None:
    """Refuse an Info-ZIP Unicode Path extra field (0x7075) naming another file than the
    header: unzip (and Python from 3.12) name the entry by it, Python 3.11 by the header
    this module checked, so the two would unpack different names (found by review)."""
    extra = info.extra
    while len(extra) >= 4:
        kind = int.from_bytes(extra[:2], "little")
        size = int.from_bytes(extra[2:4], "little")
        body, extra = extra[4:4 + size], extra[4 + size:]
        if kind != 0x7075:
            continue
        try:
            named = body[5:].decode("utf-8") if body[:1] == b"\x01" else None
        except UnicodeDecodeError:
            named = None
        if named != raw:
            shown = body[5:].decode("utf-8", "backslashreplace")
            raise ArchiveError("archive-name-mismatch", raw, f"its Unicode Path field "
                               f"names {shown!r}, which other tools would unpack instead")


def _zip_entries(archive: zipfile.ZipFile, tally: Tally) -> Iterator[tuple[Entry, Reader]]:
    infos = archive.infolist()
    if len(infos) > tally.limits.max_entries:
        raise ArchiveError("archive-entries", infos[tally.limits.max_entries].filename,
                           f"{len(infos)} entries: an archive may hold at most "
                           f"{tally.limits.max_entries}")
    for info in infos:
        raw = _zip_name(info)
        _unicode_path(info, raw)
        unix = info.external_attr >> 16
        kind = stat.S_IFMT(unix)
        if stat.S_ISLNK(unix):
            raise ArchiveError("archive-symlink", raw, "is a symlink: an archive may hold "
                               "only regular files and folders")
        if kind and not (stat.S_ISREG(unix) or stat.S_ISDIR(unix)):
            rule = "archive-fifo" if stat.S_ISFIFO(unix) else "archive-device"
            raise ArchiveError(rule, raw, "is a device, FIFO or socket: an archive may hold "
                               "only regular files and folders")
        if info.flag_bits & 0x1:
            raise ArchiveError("archive-encrypted", raw, "is encrypted")
        if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
            raise ArchiveError("archive-compression", raw, f"uses compression method "
                               f"{info.compress_type}; only stored and deflate are taken")
        folder = info.is_dir() or stat.S_ISDIR(unix)
        if (info.file_size > RATIO_FLOOR
                and info.file_size > tally.limits.max_ratio * max(info.compress_size, 1)):
            raise ArchiveError("archive-ratio", raw, f"unpacks to {info.file_size} bytes, "
                               f"over {tally.limits.max_ratio} times its "
                               f"{info.compress_size} compressed bytes (a bomb?)")
        entry = tally.add(raw, folder, unix, info.file_size)

        def read(info: zipfile.ZipInfo = info, raw: str = raw) -> Iterator[bytes]:
            left = info.file_size
            try:
                with archive.open(info) as source:
                    while left >= 0:
                        # One byte more than declared is read: a lying size is refused.
                        chunk = source.read(min(CHUNK, left + 1))
                        if not chunk:
                            break
                        left -= len(chunk)
                        if left < 0:
                            raise ArchiveError("archive-size-lie", raw, f"holds more than "
                                               f"the {info.file_size} bytes its header says")
                        yield chunk
            except (zipfile.BadZipFile, zlib.error, EOFError, OSError) as err:
                raise ArchiveError("archive-corrupt", raw, f"cannot be read: {err}") \
                    from None
            if left > 0:
                raise ArchiveError("archive-size-lie", raw, f"holds fewer than the "
                                   f"{info.file_size} bytes its header says")
        yield entry, read


def entries(path: Path, fmt: str | None, limits: ArchiveLimits,
             ) -> Iterator[tuple[Entry, Reader]]:
    """Each entry of the archive at ``path``, checked, with a reader of its bytes."""
    size = path.stat().st_size
    if size > limits.max_compressed_bytes:
        raise ArchiveError("archive-compressed-size", "", f"{size} bytes: an archive may be "
                           f"at most {limits.max_compressed_bytes} bytes")
    with path.open("rb") as raw:
        found = detect(raw.read(512))
        raw.seek(0)
        if found is None:
            raise ArchiveError("archive-format", "", "not a tar.gz, tar or zip archive (told "
                               "by its first bytes)")
        if fmt is not None and fmt != found:
            raise ArchiveError("archive-format-mismatch", "", f"declared {fmt}, but its "
                               f"bytes are a {found} archive")
        tally = Tally(limits, size)
        try:
            if found == ZIP:
                try:
                    archive = zipfile.ZipFile(raw)
                except (zipfile.BadZipFile, ValueError, OSError) as err:
                    raise ArchiveError("archive-corrupt", "", f"not a valid zip: {err}") \
                        from None
                with archive:
                    yield from _zip_entries(archive, tally)
                return
            source: Any = raw
            if found == GZIP:
                # The tar's own bytes: each entry's header (pax ones too) and padding.
                cap = limits.max_unpacked_bytes + (limits.max_entries * 4 + 20) * 512
                source = _Gunzip(raw, cap, tally)
                head = source.read(512)
                if head[257:262] != b"ustar":
                    raise ArchiveError("archive-format", "", "a gzip stream, but not of a "
                                       "tar archive")
                source.buffer = head + source.buffer
            with tarfile.open(fileobj=source, mode="r|", encoding="utf-8",
                              errors="surrogateescape", tarinfo=_Header) as tar:
                yield from _tar_entries(tar, tally)
                _nothing_after(tar, source if found == GZIP else None, raw)
        except tarfile.TarError as err:
            raise ArchiveError("archive-corrupt", "", f"not a valid tar: {err}") from None


def _nothing_after(tar: tarfile.TarFile, gunzip: _Gunzip | None, raw: IO[bytes]) -> None:
    """After the tar's end, only its zero padding, then the end of the gzip stream and of
    the file. A second gzip member (``cat a.tar.gz b.tar.gz``) or entries after the end
    marker were silently dropped here, while ``tar -i`` or GNU tar read them: what an
    organiser reads must be what runs, and nothing is dropped silently (found by review)."""
    stream: Any = tar.fileobj  # tarfile's own buffer holds the first of the rest
    while True:
        chunk = stream.read(CHUNK)
        if not chunk:
            break
        if chunk.strip(b"\0"):
            raise ArchiveError("archive-trailing", "", "data after the tar archive's end "
                               "(entries after its end marker?): an archive must end there")
    if gunzip is not None and (gunzip.zlib.unused_data or raw.read(1)):
        raise ArchiveError("archive-trailing", "", "data after the gzip stream's end (a "
                           "second gzip member?): pack the bot as one tar.gz")
