"""An attacker's archives (issue 15 §3), beyond tests/test_archive.py: each is refused by
rule and entry before anything is unpacked, or unpacks exactly as checked; nothing ever
raises anything but an ArchiveError, and no header makes the server hold much memory."""

from __future__ import annotations

import bz2
import io
import lzma
import os
import tarfile
import tracemalloc
import zipfile
import zlib
from pathlib import Path

import pytest

from arena.submissions.archive import ArchiveError, ArchiveLimits, check_archive, unpack
from tests.hostile import archives as hostile


def write(tmp_path: Path, data: bytes, name: str = "upload") -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


def refusal(tmp_path: Path, data: bytes, limits: ArchiveLimits | None = None) -> ArchiveError:
    """The ArchiveError of both the check and the unpack (which leaves no folder)."""
    path = write(tmp_path, data)
    with pytest.raises(ArchiveError) as refused:
        check_archive(path, limits=limits or ArchiveLimits())
    dest = tmp_path / "out"
    with pytest.raises(ArchiveError):
        unpack(path, dest, limits=limits or ArchiveLimits())
    assert not dest.exists()
    return refused.value


def gz(data: bytes) -> bytes:
    return hostile.zlib_gzip(data)


def raw_header(name: str, kind: bytes, size: int) -> bytes:
    info = hostile._info(name, kind, size=size)
    return info.tobuf(tarfile.GNU_FORMAT if kind in (tarfile.GNUTYPE_LONGNAME,
                                                     tarfile.GNUTYPE_LONGLINK)
                      else tarfile.USTAR_FORMAT)


def padded(data: bytes) -> bytes:
    return data + bytes(-len(data) % 512)


# ------------------------------------------------------------------ names
def test_two_names_equal_once_unicode_normalised_are_duplicates(tmp_path: Path) -> None:
    """'é' precomposed (NFC) and as 'e' + a combining accent (NFD) are one name on
    macOS's file systems and look alike everywhere: like a case-only duplicate."""
    error = refusal(tmp_path, hostile.files({"caf\u00e9.py": b"a", "cafe\u0301.py": b"b"}))
    assert (error.rule, error.entry) == ("archive-duplicate", "cafe\u0301.py")
    error = refusal(tmp_path, hostile.files({"d\u00e9/a": b"a", "de\u0301/b": b"b"}))
    assert error.rule == "archive-duplicate"


def test_a_folder_entry_after_its_files_and_dot_prefixes_unpack_as_one(tmp_path: Path) -> None:
    data = hostile.tar([(hostile._info("./a/b", size=1), b"x"),
                        (hostile._info("a/", tarfile.DIRTYPE, mode=0o700), b""),
                        (hostile._info(".//a/c", size=1, mode=0o777), b"y")])
    checked = unpack(write(tmp_path, data), tmp_path / "out")
    assert [e.name for e in checked.entries] == ["a/b", "a", "a/c"]
    assert sorted(os.listdir(tmp_path / "out" / "a")) == ["b", "c"]
    assert os.stat(tmp_path / "out" / "a").st_mode & 0o777 == 0o755


def test_a_nested_archive_is_only_a_file(tmp_path: Path) -> None:
    inner = hostile.symlink()
    data = hostile.zipped({"bot.toml": b'run = ["x"]\n', "inner.tar.gz": inner,
                           "inner.zip": hostile.zip_symlink()})
    unpack(write(tmp_path, data), tmp_path / "out")
    assert (tmp_path / "out" / "inner.tar.gz").read_bytes() == inner
    assert not any(p.is_symlink() for p in (tmp_path / "out").rglob("*"))


# ---------------------------------------------------------------- tar tricks
def test_a_global_pax_header_cannot_move_a_later_entry_out(tmp_path: Path) -> None:
    """A 'g' header's path applies to the entries after it (with tarfile, those with
    their own pax header): the name checked is the one unpacked."""
    glob = tarfile.TarInfo("pax_global_header")
    glob.type = tarfile.XGLTYPE
    glob.pax_headers = {"path": "../../escaped"}
    data = padded(glob.tobuf(tarfile.PAX_FORMAT))
    member = hostile._info("x" * 120, size=1)  # a long name: a pax header of its own
    data += member.tobuf(tarfile.PAX_FORMAT) + padded(b"x") + bytes(1024)
    path = write(tmp_path, gz(data))
    try:
        checked = check_archive(path)
    except ArchiveError as err:
        assert err.rule in ("archive-dotdot", "archive-corrupt")
        return
    unpack(path, tmp_path / "out")
    assert not (tmp_path / "escaped").exists()
    assert [e.name for e in checked.entries] == sorted(
        str(p.relative_to(tmp_path / "out")) for p in (tmp_path / "out").rglob("*"))


@pytest.mark.parametrize("kind", [tarfile.GNUTYPE_LONGNAME, tarfile.XHDTYPE])
def test_a_huge_name_header_is_refused_before_it_is_read_whole(
        tmp_path: Path, kind: bytes) -> None:
    """A GNU long-name record or a pax header of 16 MiB of incompressible bytes, under
    every size and ratio cap: tarfile reads such a header whole into memory (and a
    100 MiB one passes the caps as well), so it is refused by its header's size."""
    size = 16 << 20
    data = raw_header("././@LongLink", kind, size) + os.urandom(size) + bytes(1024)
    path = write(tmp_path, gz(data))
    tracemalloc.start()
    try:
        with pytest.raises(ArchiveError) as refused:
            check_archive(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert refused.value.rule == "archive-header", refused.value
    assert peak < 4 << 20, f"checking held {peak} bytes"


def test_a_pax_header_bomb_is_refused_by_its_size_at_once(tmp_path: Path) -> None:
    error = refusal(tmp_path, hostile.pax_bomb())
    assert (error.rule, error.entry) == ("archive-header", "")


@pytest.mark.parametrize("kind", [tarfile.GNUTYPE_LONGNAME, tarfile.XHDTYPE,
                                  tarfile.XGLTYPE])
def test_a_chain_of_thousands_of_name_headers_is_an_archive_error(
        tmp_path: Path, kind: bytes) -> None:
    """tarfile reads each extension header by recursion into the next: 5000 in a row
    were a RecursionError, which is no ArchiveError (a 500, a broken job)."""
    body = b"10 path=a\n" if kind != tarfile.GNUTYPE_LONGNAME else b"a\0"
    one = raw_header("././@LongLink", kind, len(body)) + padded(body)
    data = one * 5000 + hostile._info("a", size=0).tobuf(tarfile.USTAR_FORMAT) + bytes(1024)
    error = refusal(tmp_path, gz(data))
    assert error.rule == "archive-header"


def test_an_old_gnu_sparse_chain_is_refused_at_its_first_header(tmp_path: Path) -> None:
    block = bytearray(hostile._info("holes", size=0).tobuf(tarfile.GNU_FORMAT))
    block[156:157] = tarfile.GNUTYPE_SPARSE
    block[482] = 1  # isextended: sparse blocks follow
    block[148:156] = b" " * 8
    block[148:156] = b"%06o\0 " % sum(block)
    extended = bytearray(512)
    extended[504] = 1  # and another, and another
    data = bytes(block) + bytes(extended) * 1500 + bytes(1024)
    error = refusal(tmp_path, gz(data))
    assert error.rule == "archive-sparse"


def test_a_second_gzip_member_is_refused_not_silently_dropped(tmp_path: Path) -> None:
    """`cat a.tar.gz b.tar.gz`: GNU tar reads both members, and read only the first,
    the second's files were silently dropped from what runs (issue 15 §3: nothing
    fails silently; and what the organiser reads is what runs)."""
    first = hostile.files({"bot.toml": b"run = []\n"}, gz=False)[:1024]  # no end marker
    second = hostile.files({"hidden.py": b"import os\n"}, gz=False)
    error = refusal(tmp_path, gz(first) + gz(second))
    assert error.rule == "archive-trailing"
    error = refusal(tmp_path, hostile.good_tar_gz() + b"garbage after the gzip stream")
    assert error.rule == "archive-trailing"


def test_entries_after_the_tars_end_are_refused_not_hidden(tmp_path: Path) -> None:
    """Data after the two zero blocks that end a tar is read by `tar -i` but was
    ignored here: a reader of the archive would see files that never ran."""
    good = hostile.files(hostile.GOOD_FILES, gz=False)
    hidden = hostile.files({"hidden.py": b"import os\n"}, gz=False)
    for data in (gz(good + hidden), good + hidden):
        error = refusal(tmp_path, data)
        assert error.rule == "archive-trailing"


@pytest.mark.parametrize("compress", [bz2.compress, lzma.compress])
def test_bz2_and_xz_tars_are_refused_by_format(tmp_path: Path, compress) -> None:
    error = refusal(tmp_path, compress(hostile.files(hostile.GOOD_FILES, gz=False)))
    assert error.rule == "archive-format" and "tar.gz, tar or zip" in str(error)


def test_an_empty_archive_is_empty_or_refused_by_format(tmp_path: Path) -> None:
    """An empty tar is only zero blocks (no 'ustar' to tell it by): refused as no tar;
    an empty zip is checked as empty (the job then says it holds no bot.toml)."""
    for data in (hostile.tar([]), hostile.tar([], gz=False)):
        assert refusal(tmp_path, data).rule == "archive-format"
    assert check_archive(write(tmp_path, hostile.zipped({}))).entries == ()


# ---------------------------------------------------------------- zip tricks
def test_a_zip_whose_local_name_differs_from_its_central_one_is_refused(
        tmp_path: Path) -> None:
    """unzip and other readers use the local header's name; the central directory's
    'bot.py' was checked. The upload's check refuses it, not only the job's unpack."""
    data = hostile.zipped({"bot.py": b"print(1)\n"})
    first = data.index(b"bot.py")  # the local header's copy comes first
    data = data[:first] + b"../x.py"[:6] + data[first + 6:]
    error = refusal(tmp_path, data)
    assert error.rule == "archive-corrupt" and error.entry == "bot.py"


def test_a_zip_with_a_bad_crc_is_refused_at_the_check(tmp_path: Path) -> None:
    data = bytearray(hostile.zipped({"bot.py": b"print('hello')\n" * 10}))
    crc = zipfile.ZipFile(io.BytesIO(bytes(data))).getinfo("bot.py").CRC.to_bytes(4, "little")
    data = bytearray(bytes(data).replace(crc, bytes(4)))
    error = refusal(tmp_path, bytes(data))
    assert error.rule == "archive-corrupt" and error.entry == "bot.py"


def test_a_zip_with_data_descriptors_unpacks(tmp_path: Path) -> None:
    class Unseekable(io.RawIOBase):
        def __init__(self) -> None:
            self.out = bytearray()

        def writable(self) -> bool:
            return True

        def write(self, b) -> int:
            self.out += b
            return len(b)

    sink = Unseekable()
    with zipfile.ZipFile(sink, "w", zipfile.ZIP_DEFLATED) as out:
        out.writestr("bot.py", b"print(1)\n" * 100)
    assert zipfile.ZipFile(io.BytesIO(bytes(sink.out))).getinfo("bot.py").flag_bits & 0x8
    unpack(write(tmp_path, bytes(sink.out)), tmp_path / "out")
    assert (tmp_path / "out" / "bot.py").read_bytes() == b"print(1)\n" * 100


def test_a_zip64_size_of_exabytes_is_refused_by_ratio(tmp_path: Path) -> None:
    data = bytearray(hostile.zip_bomb(2 << 20))
    info = zipfile.ZipFile(io.BytesIO(bytes(data))).getinfo("zeros")
    real = info.file_size.to_bytes(8, "little")
    assert real in data
    data = bytearray(bytes(data).replace(real, (1 << 62).to_bytes(8, "little")))
    error = refusal(tmp_path, bytes(data))
    assert error.rule in ("archive-ratio", "archive-unpacked-size")


def test_a_zip_naming_one_entry_twice_in_its_directory_is_refused(tmp_path: Path) -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as out:
        out.writestr("bot.py", b"a")
        with pytest.warns(UserWarning):
            out.writestr("bot.py", b"b")
    error = refusal(tmp_path, buffer.getvalue())
    assert (error.rule, error.entry) == ("archive-duplicate", "bot.py")


def test_a_zip_unicode_path_field_naming_another_file_is_refused(tmp_path: Path) -> None:
    """Info-ZIP's Unicode Path extra field (0x7075): unzip (and Python from 3.12) name
    the entry by it, Python 3.11 by the header. The header's 'bot.py' was checked while
    unzip would write '../.hidden/evil.py': what an organiser unpacks must be what runs."""
    shown = b"../.hidden/evil.py"
    field = b"\x01" + zlib.crc32(b"bot.py").to_bytes(4, "little") + shown
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as out:
        info = zipfile.ZipInfo("bot.py")
        info.extra = (0x7075).to_bytes(2, "little") + len(field).to_bytes(2, "little") + field
        out.writestr(info, b"print(1)\n")
    error = refusal(tmp_path, buffer.getvalue())
    assert (error.rule, error.entry) == ("archive-name-mismatch", "bot.py")
    # The same field naming the same file is taken.
    same = b"\x01" + zlib.crc32(b"bot.py").to_bytes(4, "little") + b"bot.py"
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as out:
        info = zipfile.ZipInfo("bot.py")
        info.extra = (0x7075).to_bytes(2, "little") + len(same).to_bytes(2, "little") + same
        out.writestr(info, b"print(1)\n")
    assert [e.name for e in check_archive(write(tmp_path, buffer.getvalue())).entries] \
        == ["bot.py"]
