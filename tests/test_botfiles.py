"""Hostile bot folders against the bot store and the referee (issue 13 A1, A6, B1).

Each folder is made in a tmp dir and given to the library and to `arena bot add`
(a real subprocess, with a timeout: a FIFO used to hang it for good), in the real
sandbox. Every refusal must be a clear error naming the file and the cap, never a
traceback, and nothing may be created outside the folders the arena owns.
"""

from __future__ import annotations

import hashlib
import os
import stat
import time
from pathlib import Path

import pytest

from arena import botstore
from leaderboard.store import Store
from referee.botfiles import BotFileLimits, content_hash, copy_tree, inside
from referee.errors import BotSpecError
from referee.match import play_match
from referee.programs import BotProgram, build_program, load_program
from referee.sandbox import probe

from .helpers import FAST, GOOD_BOT, HOSTILE, arena, sql

pytestmark = [pytest.mark.sandbox, pytest.mark.skipif(
    not probe().namespaces and not os.environ.get("CI"),
    reason=f"bubblewrap cannot run here: {probe().reason}")]

ROOT = Path(__file__).resolve().parents[1]


def bot_folder(tmp_path: Path, manifest: str | None = None, name: str = "hostile") -> Path:
    """A folder bot that plays well (GOOD_BOT), with ``manifest`` (default: just run)."""
    folder = tmp_path / name
    folder.mkdir()
    (folder / "bot.py").write_text(GOOD_BOT)
    (folder / "bot.toml").write_text(manifest if manifest is not None
                                     else 'run = ["bot.py"]\n')
    return folder


def add_refused(tmp_path: Path, folder: Path, *words: str, seconds: float = 60) -> str:
    """`arena bot add` refuses ``folder`` within ``seconds``, saying ``words``; nothing is
    stored. The library's add_bot refuses it with the same words. Returns the CLI's error."""
    db = tmp_path / "arena.db"
    start = time.monotonic()
    out = arena("bot", "add", "x", str(folder), "--db", str(db), "--sandbox", "required",
                timeout=seconds)
    assert out.returncode != 0, out.stdout
    assert "Traceback" not in out.stderr, out.stderr
    assert out.stderr.startswith("Error: "), out.stderr
    for word in words:
        assert word in out.stderr, out.stderr
    assert time.monotonic() - start < seconds
    store = Store(db)
    try:
        with pytest.raises(BotSpecError) as raised:
            botstore.add_bot(store, "x", str(folder), sandbox="required")
        for word in words:
            assert word in str(raised.value)
        assert sql(store, "SELECT * FROM bots") == []
    finally:
        store.close()
    stored = botstore.store_folder(db)
    assert not stored.exists() or not any(stored.iterdir()), "a refused bot left files"
    return out.stderr


# ------------------------------------------------------------------ A1: names
@pytest.mark.parametrize("name", ["../../escaped", "a/b", ".hidden", "x" * 65, "a b", ""])
def test_a_manifest_name_must_be_a_plain_name(tmp_path: Path, name: str) -> None:
    folder = bot_folder(tmp_path, f'name = "{name}"\nrun = ["bot.py"]\nbuild = ["true"]\n')
    with pytest.raises(BotSpecError, match="'name'"):
        load_program(str(folder))
    if name == "../../escaped":
        add_refused(tmp_path, folder, repr(name), "plain name")
        # The build used to be copied to workdir/"build-../../escaped", out of the workdir.
        assert not (tmp_path / "escaped").exists()
        assert not list(Path("/tmp").glob("escaped*"))


def test_a_build_never_makes_a_path_of_the_bots_name(tmp_path: Path) -> None:
    """Even a program whose name did not come through load_program builds inside
    its workdir."""
    folder = bot_folder(tmp_path, 'run = ["bot.py"]\nbuild = ["true"]\n')
    program = load_program(str(folder))
    evil = BotProgram("../../../escaped-build", program.path, program.command, program.cwd,
                      build=("true",))
    work = tmp_path / "deep" / "er" / "work"
    work.mkdir(parents=True)
    built = build_program(evil, work, "required")
    assert work.resolve() in built.path.parents
    assert not (tmp_path / "escaped-build").exists()
    assert not list(tmp_path.rglob("*escaped-build*"))


def test_default_names_are_made_plain() -> None:
    from referee.programs import NAME, safe_name

    for text in ("my bot", "..", "ünïcode", "a/b", "-x", ""):
        assert NAME.fullmatch(safe_name(text)), text


def test_a_run_entry_outside_the_folder_is_never_probed(tmp_path: Path) -> None:
    outside = tmp_path / "outside.py"
    outside.write_text("")
    outside.chmod(0o755)
    folder = bot_folder(tmp_path, 'run = ["../outside.py"]\n')
    # Executable or not, a path outside the folder is not looked at: Python runs it.
    assert load_program(str(folder)).command[1:] == ("../outside.py",)
    with pytest.raises(BotSpecError, match="leads outside"):
        inside(folder, "../outside.py")


# --------------------------------------------------------- A6: what is taken
def test_a_fifo_is_refused_by_name_and_never_opened(tmp_path: Path) -> None:
    folder = bot_folder(tmp_path)
    os.mkfifo(folder / "pipe")
    add_refused(tmp_path, folder, "'pipe'", "is a FIFO", "regular files, folders and symlinks",
                seconds=60)


def test_a_sparse_file_is_refused_by_its_apparent_size_before_it_is_read(
        tmp_path: Path) -> None:
    folder = bot_folder(tmp_path)
    with open(folder / "sparse.bin", "wb") as out:
        out.truncate(512 << 20)  # 512 MiB that take no disk
    start = time.monotonic()
    add_refused(tmp_path, folder, "'sparse.bin'", "256 MiB", "apparent sizes")
    assert time.monotonic() - start < 60


def test_a_huge_manifest_is_refused_fast(tmp_path: Path) -> None:
    folder = bot_folder(tmp_path)
    with open(folder / "bot.toml", "ab") as out:
        out.write(b"# " + b"x" * (1 << 20) + b"\n")  # a real megabyte of it
        out.truncate(200 << 20)  # and 200 MiB in all
    start = time.monotonic()
    words = ("bot.toml", "64 KiB")
    add_refused(tmp_path, folder, *words)
    out = arena("bot", "check", str(folder), "--game", "stop-me", "--sandbox", "required")
    assert out.returncode != 0 and "Traceback" not in out.stderr
    assert all(w in out.stderr for w in words), out.stderr
    assert time.monotonic() - start < 60


def test_deeply_nested_toml_is_a_clear_error(tmp_path: Path) -> None:
    folder = bot_folder(tmp_path, 'run = ["bot.py"]\nx = ' + "[" * 20_000 + "]" * 20_000 + "\n")
    add_refused(tmp_path, folder, "bot.toml", "not valid TOML", "nested too deeply")


def test_an_invalid_utf8_file_name_is_a_clear_error(tmp_path: Path) -> None:
    folder = bot_folder(tmp_path)
    with open(os.fsencode(folder) + b"/bad\xff.txt", "wb") as out:
        out.write(b"x")
    add_refused(tmp_path, folder, "bad\\xff.txt", "not valid UTF-8")


def test_folders_1500_deep_are_a_clear_error(tmp_path: Path) -> None:
    folder = bot_folder(tmp_path)
    fds = [os.open(folder, os.O_RDONLY)]
    try:
        for _ in range(1500):  # not os.makedirs: it recurses, past Python's limit
            os.mkdir("d", dir_fd=fds[-1])
            fds.append(os.open("d", os.O_RDONLY, dir_fd=fds[-1]))
        add_refused(tmp_path, folder, "nested more than 32 folders deep")
    finally:
        for parent in reversed(fds[:-1]):  # and not shutil.rmtree, for the same reason
            os.rmdir("d", dir_fd=parent)
        for fd in fds:
            os.close(fd)


@pytest.mark.parametrize("target", ["/etc/passwd", "../../outside", "sub/../.."])
def test_a_symlink_out_of_the_folder_is_refused(tmp_path: Path, target: str) -> None:
    folder = bot_folder(tmp_path)
    (folder / "sub").mkdir()
    (folder / "link").symlink_to(target)
    add_refused(tmp_path, folder, "'link'", "leads outside")


def test_a_symlink_chain_that_leaves_the_folder_is_refused(tmp_path: Path) -> None:
    """Each link alone points inside; followed in turn they lead out."""
    folder = bot_folder(tmp_path)
    (folder / "sub").mkdir()
    (folder / "d").symlink_to("sub")
    (folder / "sub" / "e").symlink_to("..")
    (folder / "f").symlink_to("d/e/..")
    with pytest.raises(BotSpecError, match="'f' is a symlink that leads outside"):
        copy_tree(folder, tmp_path / "copy")
    assert not (tmp_path / "copy").exists()


def test_a_hard_link_to_a_root_only_file_is_never_shown_to_the_bot(tmp_path: Path) -> None:
    """The bot's build copy used to be made mode 0666: a hard link to a 0600 root file
    then became readable by the sandbox user, and the bot printed it."""
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET-CONTENT")
    secret.chmod(0o600)
    folder = tmp_path / "reader"
    folder.mkdir()
    os.link(secret, folder / "data.txt")
    text = HOSTILE.read_text().replace("main(sys.argv[1])", "main('read_files')")
    (folder / "bot.py").write_text(text.replace("PARAMS: dict = {}",
                                                "PARAMS: dict = {'paths': ['/bot/data.txt']}"))
    (folder / "bot.toml").write_text('run = ["bot.py"]\nbuild = ["true"]\n')
    logs = tmp_path / "logs"
    with pytest.raises(BotSpecError, match="'data.txt' is a hard link"):
        play_match("stop-me", [str(folder), "builtin:random"], 1, 1, clocks=FAST,
                   log_dir=logs, sandbox="required")
    assert "TOP-SECRET" not in "".join(p.read_text(errors="replace")
                                       for p in logs.rglob("*") if p.is_file())
    add_refused(tmp_path, folder, "'data.txt' is a hard link", "copy the file")


def test_hard_links_among_the_bots_own_files_are_fine(tmp_path: Path) -> None:
    folder = bot_folder(tmp_path)
    os.link(folder / "bot.py", folder / "same.py")
    copy_tree(folder, tmp_path / "copy")
    assert (tmp_path / "copy" / "same.py").read_text() == GOOD_BOT


@pytest.mark.parametrize("cap, words", [
    (BotFileLimits(files=3), "at most 3 files"),
    (BotFileLimits(total_mb=1), "past 1 MiB"),
])
def test_the_file_count_and_total_size_are_capped(tmp_path: Path, cap: BotFileLimits,
                                                  words: str) -> None:
    folder = bot_folder(tmp_path)
    for n in range(3):
        (folder / f"data{n}.bin").write_bytes(b"x" * (400 << 10))
    with pytest.raises(BotSpecError, match=words):
        copy_tree(folder, tmp_path / "copy", cap)
    assert not (tmp_path / "copy").exists()


# -------------------------------------------------- A6, B1: the modes of copies
def test_copies_have_fixed_modes_and_a_0600_bot_plays(tmp_path: Path) -> None:
    """B1: a 0600 bot file used to be unreadable by the sandbox user (a no_show)."""
    folder = bot_folder(tmp_path)
    (folder / "bot.py").chmod(0o600)
    (folder / "tool.sh").write_text("#!/bin/sh\n")
    (folder / "tool.sh").chmod(0o700)
    (folder / "private").mkdir(mode=0o700)
    (folder / "private" / "notes").write_text("n")
    (folder / "private" / "notes").chmod(0o000)
    db = tmp_path / "arena.db"
    out = arena("bot", "add", "private", str(folder), "--db", str(db), "--sandbox", "required")
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("added private version 1")
    (stored,) = botstore.store_folder(db).glob("private/*/hostile")
    modes = {str(p.relative_to(stored)): stat.S_IMODE(p.lstat().st_mode)
             for p in [stored, *stored.rglob("*")]}
    assert modes == {".": 0o755, "bot.py": 0o644, "bot.toml": 0o644, "tool.sh": 0o755,
                     "private": 0o755, "private/notes": 0o644}
    (single := tmp_path / "single.py").write_text(GOOD_BOT)
    single.chmod(0o600)
    (record,) = play_match("stop-me", [str(single), "builtin:random"], 1, 1, clocks=FAST,
                           sandbox="required")
    assert record.seats[0].status == "ok"


def test_the_hash_is_chunked_and_keeps_the_old_versions(tmp_path: Path) -> None:
    """The store's hash reads in chunks now; for the same files it must give the same
    digest as before, or every bot re-added would become a new version."""
    folder = bot_folder(tmp_path)
    (folder / "a b").mkdir()
    (folder / "a").mkdir()
    (folder / "a" / "x").write_text("1")
    (folder / "a b" / "y").write_text("2")
    (folder / "link").symlink_to("bot.py")

    def before(path: Path) -> str:  # the store's hash until issue 13, verbatim
        digest = hashlib.sha256()
        for folder, dirs, files in sorted(os.walk(path)):
            dirs.sort()
            for name in sorted(files):
                full = Path(folder) / name
                digest.update(str(full.relative_to(path)).encode() + b"\0")
                digest.update(full.read_bytes() if not full.is_symlink()
                              else os.readlink(full).encode())
                digest.update(b"\0")
        return digest.hexdigest()

    assert content_hash(folder) == before(folder)
    assert content_hash(folder / "bot.py") == hashlib.sha256(GOOD_BOT.encode()).hexdigest()


def test_a_folder_swapped_for_a_symlink_on_the_way_to_the_bot_is_refused(
        tmp_path: Path) -> None:
    """Found by review: the author's folder is checked (load_program), then copied
    (build_program). The copy opened the bot's path, following every symlink on the way
    but the last, so an author who swapped a folder above the bot for a symlink
    meanwhile (rename is atomic, and can be looped until it lands) had the referee,
    as root, copy a folder of the author's choosing: a root-only key became 0644 in
    the bot's copy, run with the author's command. Now the path is walked folder by
    folder without following a symlink."""
    home = tmp_path / "home"
    (home / "x").mkdir(parents=True)
    folder = bot_folder(home / "x", name="ssh")
    program = load_program(str(folder))  # checked while it is the author's
    secret = tmp_path / "etc" / "ssh"
    secret.mkdir(parents=True)
    (secret / "ssh_host_key").write_text("PRIVATE KEY")
    os.chmod(secret / "ssh_host_key", 0o600)
    (home / "x").rename(home / "old")
    (home / "x").symlink_to(tmp_path / "etc")  # now .../x/ssh is the secret folder
    work = tmp_path / "work"
    work.mkdir()
    with pytest.raises(BotSpecError, match="on the way to it is a symlink"):
        copy = build_program(program, work)
        print("copied:", sorted(p.name for p in copy.path.iterdir()))
    assert not list(work.rglob("ssh_host_key"))


@pytest.mark.parametrize("name", ["a\nb", "a\tb", "a\u202eb", "a\u200bb", "a\u2028b",
                                  "a\x00b"], ids=["newline", "tab", "bidi", "zero-width",
                                                  "line-separator", "nul"])
def test_a_store_name_with_a_control_or_invisible_character_is_refused(
        tmp_path: Path, name: str) -> None:
    """Found by review: a store name with a NUL was a ValueError out of add_bot, and one
    with a newline, a bidi override or a zero-width space was stored: a folder of that
    name, and a name that forges lines or reorders text in every table that shows it."""
    folder = bot_folder(tmp_path)
    db = tmp_path / "arena.db"
    if "\x00" not in name:  # a command line cannot hold a NUL
        out = arena("bot", "add", name, str(folder), "--db", str(db), "--sandbox", "required")
        assert out.returncode != 0 and "Traceback" not in out.stderr, out.stderr
        assert "control or invisible character" in out.stderr, out.stderr
    store = Store(db)
    try:
        with pytest.raises(BotSpecError, match="control or invisible character"):
            botstore.add_bot(store, name, str(folder), sandbox="required")
        assert sql(store, "SELECT * FROM bots") == []
    finally:
        store.close()
    stored = botstore.store_folder(db)
    assert not stored.exists() or not any(stored.iterdir())


@pytest.mark.parametrize("manifest", ['run = ["bot\\u0000.py"]\n', 'run = ["bot\\u0000"]\n',
                                      'run = ["bot.py"]\nbuild = ["ma\\u0000ke"]\n'],
                         ids=["run-py", "run", "build"])
def test_a_nul_in_a_manifests_command_is_a_clear_error(tmp_path: Path, manifest: str) -> None:
    """Found by review: TOML lets a string hold \\u0000; a NUL in `run` was a ValueError
    traceback out of the check of a .py entry or out of the build's start, and in a
    `run` without .py the seat's supervisor died "of a bot that sent more than it may"."""
    folder = bot_folder(tmp_path, manifest)
    with pytest.raises(BotSpecError, match="holds a NUL character"):
        load_program(str(folder))
    add_refused(tmp_path, folder, "holds a NUL character")


def test_a_long_chain_of_symlinks_is_refused_at_once(tmp_path: Path) -> None:
    """Found by review: each symlink was checked with os.path.realpath, which follows a
    chain of any length by recursing once per link: 1,200 links in a chain were a
    RecursionError traceback, and 20,000 in chains of 900 took two minutes of the
    referee. Linux follows 40 at most: a longer chain is refused, fast."""
    folder = bot_folder(tmp_path)
    count = 1200
    for n in range(count):
        (folder / f"link{n}").symlink_to(f"link{n + 1}" if n + 1 < count else "bot.py")
    began = time.monotonic()
    with pytest.raises(BotSpecError, match="a chain of more than 40 symlinks"):
        copy_tree(folder, tmp_path / "copy")
    assert time.monotonic() - began < 10
    assert not (tmp_path / "copy").exists()
    add_refused(tmp_path, folder, "a chain of more than 40 symlinks")


def test_a_chain_of_symlinks_the_system_follows_is_kept(tmp_path: Path) -> None:
    folder = bot_folder(tmp_path)
    (folder / "sub").mkdir()
    for n in range(40):  # sub/l0 -> l1 -> ... -> l39 -> ../bot.py: 40 links in all
        (folder / "sub" / f"l{n}").symlink_to(f"l{n + 1}" if n < 39 else "../bot.py")
    copy_tree(folder, tmp_path / "copy")
    assert (tmp_path / "copy" / "sub" / "l0").read_text() == GOOD_BOT


def test_a_manifest_that_is_a_folder_is_called_one(tmp_path: Path) -> None:
    """Found by review: a folder named bot.toml was "of an unknown kind"."""
    folder = tmp_path / "bot"
    (folder / "bot.toml").mkdir(parents=True)
    with pytest.raises(BotSpecError, match="bot.toml: is a folder, not a regular file"):
        load_program(str(folder))


def test_a_copy_onto_an_existing_folder_leaves_it_alone(tmp_path: Path) -> None:
    """Found by review: a copy onto a folder that exists failed, and its clean-up then
    removed that folder, which was not the copy's."""
    folder = bot_folder(tmp_path)
    dest = tmp_path / "kept"
    dest.mkdir()
    (dest / "precious.txt").write_text("mine")
    with pytest.raises(BotSpecError, match="it exists"):
        copy_tree(folder, dest)
    assert (dest / "precious.txt").read_text() == "mine"
