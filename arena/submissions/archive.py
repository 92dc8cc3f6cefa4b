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
import stat
import tarfile
import unicodedata
import zipfile
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Protocol

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


def _mode(mode: int, folder: bool) -> int:
    """Issue 15 §3: the sandbox user can always read the bot, and no more is given."""
    return 0o755 if folder or mode & 0o111 else 0o644


def _fold(name: str) -> str:
    """The key under which two names are one: Unicode's canonical caseless match
    (NFD, casefold, NFC), as a case-insensitive or normalising file system (macOS)
    would make them one; 'é' precomposed and 'e' + U+0301 were two (found by review)."""
    return unicodedata.normalize("NFC", unicodedata.normalize("NFD", name).casefold())


class _Tally:
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
        entry = Entry(name, folder, _mode(mode, folder), size)
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


class _Gunzip:
    """A gzip stream's decompressed bytes, read lazily and counted: past ``cap`` bytes
    (the headers' total plus a tar's own overhead) or the ratio cap it is refused, so
    a stream whose headers lie cannot make the server decompress more."""

    def __init__(self, raw: IO[bytes], cap: int, tally: _Tally) -> None:
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


def _tar_entries(tar: tarfile.TarFile, tally: _Tally) -> Iterator[tuple[Entry, Reader]]:
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


def _zip_entries(archive: zipfile.ZipFile, tally: _Tally) -> Iterator[tuple[Entry, Reader]]:
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


def _entries(path: Path, fmt: str | None, limits: ArchiveLimits,
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
        tally = _Tally(limits, size)
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


def check_archive(path: Path, fmt: str | None = None,
                  limits: ArchiveLimits = DEFAULT_LIMITS) -> Checked:
    """Check every rule on every entry of the archive at ``path``, writing nothing.

    ``fmt`` is the declared format (None: none declared); the bytes decide."""
    entries = []
    found = fmt
    with path.open("rb") as raw:
        found = detect(raw.read(512)) or fmt
    for entry, read in _entries(path, fmt, limits):
        # The bytes too, to nowhere: a zip's local header, sizes and CRC are checked
        # only as an entry is read, so a lie is refused at upload, not in the job.
        if not entry.folder:
            for _ in read():
                pass
        entries.append(entry)
    return Checked(found or "", tuple(entries), sum(e.size for e in entries))


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
        for entry, read in _entries(path, fmt, limits):
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
