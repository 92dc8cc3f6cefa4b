"""Uploaded archives (issue 15 §3): every trick is refused by name, before anything is
unpacked; a good archive unpacks with normalised modes, and nothing is ever followed."""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from arena.submissions.archive import (
    GZIP,
    TAR,
    ZIP,
    ArchiveError,
    ArchiveLimits,
    check_archive,
    detect,
    format_of,
    normalise,
    unpack,
)
from tests.hostile import archives as hostile

TRICKS: list[tuple[Callable[[], bytes], str, str]] = [
    (hostile.symlink, "archive-symlink", "bot.py"),
    (hostile.hardlink, "archive-hardlink", "bot.py"),
    (hostile.device, "archive-device", "null"),
    (hostile.fifo, "archive-fifo", "pipe"),
    (hostile.sparse, "archive-sparse", "holes"),
    (hostile.absolute, "archive-absolute", "/etc/cron.d/bot"),
    (hostile.dotdot, "archive-dotdot", "bot/../../escape.py"),
    (hostile.long_dotdot, "archive-dotdot", "a" * 120 + "/../../../x"),
    (hostile.gnu_long_dotdot, "archive-dotdot", "b" * 120 + "/../../../x"),
    (hostile.duplicate, "archive-duplicate", "bot.py"),
    (hostile.dot_duplicate, "archive-duplicate", "a/./b"),
    (hostile.case_duplicate, "archive-duplicate", "bot.py"),
    (hostile.bad_utf8_tar, "archive-name-utf8", "\\xff.py"),
    (hostile.bad_utf8_zip, "archive-name-utf8", "\\xff.py"),
    (hostile.control_name, "archive-name-control", "a\x1b[2Jb"),
    (hostile.zip_symlink, "archive-symlink", "bot.py"),
    (hostile.zip_fifo, "archive-fifo", "pipe"),
    (hostile.zip_bomb, "archive-ratio", "zeros"),
    (hostile.tar_bomb, "archive-unpacked-size", "zeros"),
]


def write(tmp_path: Path, data: bytes, name: str = "upload") -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


@pytest.mark.parametrize(("make", "rule", "entry"), TRICKS, ids=[t[0].__name__ for t in TRICKS])
def test_every_trick_is_refused_by_rule_and_entry_and_nothing_is_unpacked(
        tmp_path: Path, make: Callable[[], bytes], rule: str, entry: str) -> None:
    path = write(tmp_path, make())
    with pytest.raises(ArchiveError) as refused:
        check_archive(path)
    assert (refused.value.rule, refused.value.entry) == (rule, entry)
    assert rule in str(refused.value) and repr(entry) in str(refused.value)
    dest = tmp_path / "out"
    with pytest.raises(ArchiveError):
        unpack(path, dest)
    assert not dest.exists(), "a refused archive left a folder"


def test_a_good_archive_unpacks_with_normalised_modes(tmp_path: Path) -> None:
    data = hostile.tar([
        (hostile._info("./", hostile.tarfile.DIRTYPE, mode=0o700), b""),
        (hostile._info("./src//", hostile.tarfile.DIRTYPE, mode=0o700), b""),
        (hostile._info("src/run.sh", size=3, mode=0o700), b"hi\n"),
        (hostile._info("src/secret", size=1, mode=0o600), b"s"),
        (hostile._info("deep/er/file", size=1, mode=0o4777), b"x"),
    ])
    checked = unpack(write(tmp_path, data), tmp_path / "out")
    assert checked.fmt == GZIP and checked.unpacked_bytes == 5
    modes = {str(p.relative_to(tmp_path / "out")): stat.S_IMODE(p.stat().st_mode)
             for p in (tmp_path / "out").rglob("*")}
    assert modes == {"src": 0o755, "src/run.sh": 0o755, "src/secret": 0o644,
                     "deep": 0o755, "deep/er": 0o755, "deep/er/file": 0o755}
    assert (tmp_path / "out" / "src" / "run.sh").read_bytes() == b"hi\n"


@pytest.mark.parametrize("kind", [TAR, ZIP])
def test_plain_tar_and_zip_are_taken_too(tmp_path: Path, kind: str) -> None:
    data = (hostile.files(hostile.GOOD_FILES, gz=False) if kind == TAR
            else hostile.zipped(hostile.GOOD_FILES))
    checked = unpack(write(tmp_path, data), tmp_path / "out", kind)
    assert checked.fmt == kind
    assert sorted(os.listdir(tmp_path / "out")) == ["bot.py", "bot.toml"]


def test_the_format_is_told_by_the_bytes_and_a_mismatch_is_refused(tmp_path: Path) -> None:
    assert detect(hostile.good_tar_gz()) == GZIP
    assert detect(hostile.zipped({"a": b"b"})) == ZIP
    assert detect(hostile.files({"a": b"b"}, gz=False)) == TAR
    assert format_of("application/gzip; charset=x") == GZIP and format_of("text/html") is None
    path = write(tmp_path, hostile.good_tar_gz(), "bot.zip")  # a misleading name
    with pytest.raises(ArchiveError) as refused:
        check_archive(path, ZIP)
    assert refused.value.rule == "archive-format-mismatch"
    with pytest.raises(ArchiveError) as refused:
        check_archive(write(tmp_path, b"#!/bin/sh\nrm -rf /\n" * 40))
    assert refused.value.rule == "archive-format"
    with pytest.raises(ArchiveError) as refused:  # gzip, but of no tar
        check_archive(write(tmp_path, hostile.zlib_gzip(b"hello" * 200)))
    assert refused.value.rule == "archive-format"


def test_too_many_entries_stop_at_the_first_past_the_cap(tmp_path: Path) -> None:
    path = write(tmp_path, hostile.many_entries(10_001))
    with pytest.raises(ArchiveError) as refused:
        check_archive(path)
    assert (refused.value.rule, refused.value.entry) == ("archive-entries", "f10000")
    assert len(check_archive(path, limits=ArchiveLimits(max_entries=10_001)).entries) == 10_001
    zipped = write(tmp_path, hostile.zipped({f"f{i}": b"" for i in range(6)}), "z")
    with pytest.raises(ArchiveError) as refused:
        check_archive(zipped, limits=ArchiveLimits(max_entries=5))
    assert (refused.value.rule, refused.value.entry) == ("archive-entries", "f5")


def test_a_compressed_size_over_the_cap_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path, hostile.good_tar_gz())
    with pytest.raises(ArchiveError) as refused:
        check_archive(path, limits=ArchiveLimits(max_compressed_bytes=100))
    assert refused.value.rule == "archive-compressed-size"


def test_a_zip_whose_headers_lie_about_a_size_is_refused_while_unpacking(
        tmp_path: Path) -> None:
    path = write(tmp_path, hostile.zip_lying_size())
    with pytest.raises(ArchiveError) as refused:
        unpack(path, tmp_path / "out")
    assert refused.value.rule in ("archive-size-lie", "archive-corrupt")
    assert refused.value.entry == "bot.py"
    assert not (tmp_path / "out").exists()


def test_the_gzip_stream_is_counted_as_it_is_decompressed(tmp_path: Path) -> None:
    """256 MiB of zeros after the tar's end: no file's header counts them, so only the
    count of the decompressed stream refuses them, as it grows, long before it is all
    read. (A pax header of that size, which this test used, is now refused by its own
    size first: tests/test_archive_review.py.)"""
    path = write(tmp_path, hostile.padding_bomb())
    started = time.monotonic()
    with pytest.raises(ArchiveError) as refused:
        check_archive(path)
    assert (refused.value.rule, refused.value.entry) == ("archive-ratio", "")
    assert time.monotonic() - started < 30
    with pytest.raises(ArchiveError) as refused:
        check_archive(path, limits=ArchiveLimits(max_ratio=10_000, max_unpacked_bytes=8 << 20))
    assert refused.value.rule == "archive-unpacked-size"


@pytest.mark.parametrize(("name", "rule"), [
    ("a\0b", "archive-name-nul"), ("C:/x", "archive-absolute"), ("a\\b", "archive-name-backslash"),
    ("a/\u202ebot", "archive-name-control"), ("x/" + "y" * 256, "archive-name-long"),
    ("", "archive-name-empty"), ("./", "archive-name-empty")])
def test_names_are_refused_by_rule(name: str, rule: str) -> None:
    with pytest.raises(ArchiveError) as refused:
        normalise(name)
    assert refused.value.rule == rule


def test_names_are_normalised() -> None:
    assert normalise("./a//b/./c/") == "a/b/c"
    assert normalise("./", folder=True) == ""


def test_a_file_where_a_folder_is_needed_is_refused(tmp_path: Path) -> None:
    for named in ({"a": b"x", "a/b": b"y"}, {"a/b": b"y", "a": b"x"}, {"a/x": b"", "A/y": b""}):
        with pytest.raises(ArchiveError) as refused:
            check_archive(write(tmp_path, hostile.files(named)))
        assert refused.value.rule == "archive-duplicate"


def test_deep_nesting_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path, hostile.files({"/".join(["d"] * 40) + "/f": b"x"}))
    with pytest.raises(ArchiveError) as refused:
        check_archive(path)
    assert refused.value.rule == "archive-depth"


def test_unpack_never_follows_anything_in_the_destination(tmp_path: Path) -> None:
    """The destination must be new: an existing one (a symlink an attacker placed, say)
    is refused, and nothing is written through it."""
    target = tmp_path / "elsewhere"
    target.mkdir()
    (tmp_path / "out").symlink_to(target)
    with pytest.raises(FileExistsError):
        unpack(write(tmp_path, hostile.good_tar_gz()), tmp_path / "out")
    assert list(target.iterdir()) == []
