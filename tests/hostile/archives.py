"""Hostile bot archives for the upload tests (issue 15 §3): each plays one trick.

Every builder returns the archive's bytes, made in memory; nothing large is ever
written: a bomb is a small compressed stream whose headers or content promise much,
and the 1 GB upload is a lazy generator (:func:`gigabyte`).
"""

from __future__ import annotations

import io
import stat
import tarfile
import zipfile
import zlib
from collections.abc import Iterator

GOOD_FILES = {"bot.toml": b'run = ["python3", "bot.py"]\n', "bot.py": b"print('hi')\n"}


def _info(name: str, kind: bytes = tarfile.REGTYPE, size: int = 0, mode: int = 0o644,
          link: str = "") -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.size, info.mode, info.linkname = kind, size, mode, link
    return info


def tar(entries: list[tuple[tarfile.TarInfo, bytes]], gz: bool = True,
        fmt: int = tarfile.PAX_FORMAT) -> bytes:
    """A tar (gzip-compressed if ``gz``) of ``entries`` exactly as given."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz" if gz else "w", format=fmt,
                      encoding="utf-8", errors="surrogateescape") as out:
        for info, data in entries:
            out.addfile(info, io.BytesIO(data) if info.isreg() else None)
    return buffer.getvalue()


def files(named: dict[str, bytes], gz: bool = True) -> bytes:
    """A plain tar(.gz) of regular files."""
    return tar([(_info(n, size=len(d)), d) for n, d in named.items()], gz)


def good_tar_gz() -> bytes:
    return files(GOOD_FILES)


def zipped(named: dict[str, bytes], modes: dict[str, int] | None = None) -> bytes:
    """A zip of ``named`` files (deflated); ``modes``: a Unix mode per name."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as out:
        for name, data in named.items():
            info = zipfile.ZipInfo(name)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = ((modes or {}).get(name, stat.S_IFREG | 0o644)) << 16
            out.writestr(info, data)
    return buffer.getvalue()


def symlink() -> bytes:
    return tar([(_info("bot.toml", size=0), b""),
                (_info("bot.py", tarfile.SYMTYPE, link="/etc/passwd"), b"")])


def hardlink() -> bytes:
    return tar([(_info("bot.py", tarfile.LNKTYPE, link="/etc/shadow"), b"")])


def device() -> bytes:
    info = _info("null", tarfile.CHRTYPE)
    info.devmajor, info.devminor = 1, 3
    return tar([(info, b"")])


def fifo() -> bytes:
    return tar([(_info("pipe", tarfile.FIFOTYPE), b"")])


def sparse() -> bytes:
    """A GNU sparse member (type 'S'), written as a GNU header by hand."""
    info = _info("holes", tarfile.REGTYPE, size=0)
    block = bytearray(info.tobuf(tarfile.GNU_FORMAT))
    block[156:157] = tarfile.GNUTYPE_SPARSE
    block[148:156] = b" " * 8
    block[148:156] = b"%06o\0 " % sum(block)
    return zlib_gzip(bytes(block) + b"\0" * 1024)


def zlib_gzip(data: bytes) -> bytes:
    compress = zlib.compressobj(6, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    return compress.compress(data) + compress.flush()


def absolute() -> bytes:
    return files({"/etc/cron.d/bot": b"x"})


def dotdot() -> bytes:
    return files({"bot/../../escape.py": b"x"})


def long_dotdot() -> bytes:
    """A pax long name (over 100 characters) that resolves above the archive."""
    return tar([(_info("a" * 120 + "/../../../x", size=1), b"x")])


def gnu_long_dotdot() -> bytes:
    """A GNU long-name record (type 'L') that resolves above the archive."""
    return tar([(_info("b" * 120 + "/../../../x", size=1), b"x")], fmt=tarfile.GNU_FORMAT)


def duplicate() -> bytes:
    return tar([(_info("bot.py", size=1), b"a"), (_info("bot.py", size=1), b"b")])


def dot_duplicate() -> bytes:
    return tar([(_info("a/b", size=1), b"a"), (_info("a/./b", size=1), b"b")])


def case_duplicate() -> bytes:
    return files({"Bot.py": b"a", "bot.py": b"b"})


def bad_utf8_tar() -> bytes:
    return tar([(_info("\udcff.py", size=1), b"x")])


def bad_utf8_zip() -> bytes:
    """An unflagged zip name of bytes that are no UTF-8 (0xff), patched in."""
    return zipped({"X.py": b"x"}).replace(b"X.py", b"\xff.py")


def control_name() -> bytes:
    return files({"a\x1b[2Jb": b"x"})


def many_entries(count: int) -> bytes:
    return tar([(_info(f"f{i}", size=0), b"") for i in range(count)])


def tar_bomb(size: int = 256 << 20) -> bytes:
    """A tar.gz whose one file's header says ``size`` bytes of zeros (256 MiB), stored as a
    gzip stream made chunk by chunk: a quarter of a megabyte, never the whole."""
    header = _info("zeros", size=size).tobuf(tarfile.PAX_FORMAT)
    compress = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    out = [compress.compress(header)]
    zeros = bytes(1 << 20)
    for _ in range(size >> 20):
        out.append(compress.compress(zeros))
    out.append(compress.compress(bytes(1024)))
    out.append(compress.flush())
    return b"".join(out)


def pax_bomb(size: int = 256 << 20) -> bytes:
    """A tar.gz whose first entry is a pax extended header claiming ``size`` bytes: no
    file's header counts them, and tarfile reads such a header whole into memory."""
    info = _info("././@PaxHeader", tarfile.XHDTYPE, size=size)
    compress = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    out = [compress.compress(info.tobuf(tarfile.USTAR_FORMAT))]
    zeros = bytes(1 << 20)
    out += [compress.compress(zeros) for _ in range(size >> 20)]
    out.append(compress.flush())
    return b"".join(out)


def padding_bomb(size: int = 256 << 20) -> bytes:
    """A good tar.gz whose stream goes on with ``size`` bytes of zeros after the tar's end
    (a tar's own padding is zeros): no header counts them, only the stream's count."""
    compress = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    out = [compress.compress(files(GOOD_FILES, gz=False))]
    zeros = bytes(1 << 20)
    out += [compress.compress(zeros) for _ in range(size >> 20)]
    out.append(compress.flush())
    return b"".join(out)


def zip_bomb(size: int = 64 << 20) -> bytes:
    """A zip of one file of ``size`` zeros (64 MiB, deflated to about 64 KiB)."""
    buffer = io.BytesIO()
    with (zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as out,
          out.open("zeros", "w", force_zip64=True) as entry):
        zeros = bytes(1 << 20)
        for _ in range(size >> 20):
            entry.write(zeros)
    return buffer.getvalue()


def zip_lying_size() -> bytes:
    """A zip whose headers say its file holds 10 bytes, when it holds 200 KiB."""
    data = zipped({"bot.py": b"y" * 200_000})
    info = zipfile.ZipFile(io.BytesIO(data)).getinfo("bot.py")
    real = info.file_size.to_bytes(4, "little")
    assert data.count(real) == 2, "the size field must be patchable in both headers"
    return data.replace(real, (10).to_bytes(4, "little"))


def zip_symlink() -> bytes:
    return zipped({"bot.py": b"/etc/passwd"}, {"bot.py": stat.S_IFLNK | 0o777})


def zip_fifo() -> bytes:
    return zipped({"pipe": b""}, {"pipe": stat.S_IFIFO | 0o644})


def gigabyte(chunk: int = 1 << 20) -> Iterator[bytes]:
    """A 1 GiB upload, made lazily one chunk at a time (never held or written whole);
    it begins like a tar.gz."""
    yield good_tar_gz()[:chunk]
    for _ in range((1 << 30) // chunk):
        yield bytes(chunk)
