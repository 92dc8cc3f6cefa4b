"""Bots as they travel to Dask workers (issue 17 §2): packed by content hash, unpacked
under the store's caps and nowhere else, cached by hash and entry, checked every use."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

import pytest

from arena.distributed.bundles import BotCache, BundleError, pack, unpack
from referee.botfiles import content_hash

BOT = "from protocol.client import run\nrun(lambda o, legal: legal[0])\n"


def _tar(*members: tuple[str, str | None, str | None]) -> bytes:
    """A tar of (name, file text or None, symlink target or None) members."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for name, text, link in members:
            info = tarfile.TarInfo(name)
            if link is not None:
                info.type, info.linkname = tarfile.SYMTYPE, link
                tar.addfile(info)
            elif text is None:
                info.type = tarfile.DIRTYPE
                tar.addfile(info)
            else:
                data = text.encode()
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def test_a_bot_round_trips_by_its_hash(tmp_path: Path) -> None:
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "bot.py").write_text(BOT)
    (folder / "lib").mkdir()
    (folder / "lib" / "x.py").write_text("X = 1\n")
    digest, entry, data = pack(folder)
    assert (digest, entry) == (content_hash(folder), "mine")
    (tmp_path / "out").mkdir()
    path = unpack(data, digest, entry, tmp_path / "out")
    assert content_hash(path) == digest and (path / "lib" / "x.py").read_text() == "X = 1\n"


@pytest.mark.parametrize(("members", "why"), [
    ((("mine", None, None), ("mine/../evil.py", "x", None)), "leads out of its folder"),
    ((("mine", None, None), ("other.py", "x", None)), "is not under 'mine'"),
    ((("mine", None, None), ("mine/up", None, "../../etc")), "points out of 'mine'"),
    ((("mine", None, None), ("mine/abs", None, "/etc/passwd")), "points to the absolute"),
    ((("mine", None, "/etc"),), "is a symlink"),
])
def test_a_hostile_bundle_is_refused_before_anything_is_written(
        tmp_path: Path, members: tuple, why: str) -> None:
    dest = tmp_path / "out"
    dest.mkdir()
    with pytest.raises(BundleError, match=why):
        unpack(_tar(*members), "0" * 64, "mine", dest)
    assert list(dest.iterdir()) == []


def test_a_bundle_not_of_its_hash_is_refused(tmp_path: Path) -> None:
    (tmp_path / "out").mkdir()
    with pytest.raises(BundleError, match="hash to"):
        unpack(_tar(("mine.py", BOT, None)), "0" * 64, "mine.py", tmp_path / "out")


def test_two_names_of_the_same_bytes_are_cached_apart(tmp_path: Path) -> None:
    """alice_bot.py and bob_bot.py of one content share a hash (found by review)."""
    sent = {}
    for name in ("alice_bot.py", "bob_bot.py"):
        (tmp_path / name).write_text(BOT)
        digest, entry, data = pack(tmp_path / name)
        sent[entry] = (digest, data)
    assert sent["alice_bot.py"][0] == sent["bob_bot.py"][0]
    cache = BotCache(tmp_path / "cache")
    paths = {e: cache.get(d, e, lambda data=data: data) for e, (d, data) in sent.items()}
    assert {p.name for p in paths.values()} == {"alice_bot.py", "bob_bot.py"}
    assert all(p.read_text() == BOT for p in paths.values())
    assert cache.fetched == 2 and cache.refetched == 0
    again = {e: cache.get(d, e, lambda: pytest.fail("fetched again")) for e, (d, _) in
             sent.items()}
    assert again == paths


def test_a_tampered_cached_bot_is_fetched_again_never_run(tmp_path: Path) -> None:
    (tmp_path / "bot.py").write_text(BOT)
    digest, entry, data = pack(tmp_path / "bot.py")
    cache = BotCache(tmp_path / "cache")
    path = cache.get(digest, entry, lambda: data)
    path.write_text("raise SystemExit('tampered')\n")
    assert cache.get(digest, entry, lambda: data).read_text() == BOT
    assert (cache.fetched, cache.refetched) == (2, 1)
