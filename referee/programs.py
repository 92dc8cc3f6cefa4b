"""Bot programs: what a bot is on disk and how to start it.

A bot is one of:

* a ``.py`` file, run with the referee's own Python;
* any other executable file, run directly;
* a folder with a manifest ``bot.toml``::

      name = "js-random"              # optional; default: the folder name
      run = ["node", "random_bot.js"] # required: the command, run in the folder
      build = ["make"]                # optional: run once before the match
      protocol = "stdio"              # "zmq" (default) or "stdio"

A ``stdio`` bot speaks the same JSON messages one per line on stdin/stdout and
the referee bridges it, so a language without a ZeroMQ library can still play.
"""

from __future__ import annotations

import os
import re
import shlex
import sys
import tempfile
import tomllib
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from .botfiles import (
    DEFAULT_LIMITS,
    MANIFEST,
    BotFileLimits,
    copy_tree,
    inside,
    plain_part,
    read_manifest,
)
from .errors import BotSpecError
from .sandbox import Limits

PROTOCOLS = ("zmq", "stdio")
BUILD_TIMEOUT_S = 300
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
"""A bot's own name (issue 13 A1): it names log files, so it is a plain file name, never a
path: letters, digits, '.', '_' and '-', starting with a letter or digit, at most 64."""

__all__ = ["MANIFEST", "NAME", "BotProgram", "build_program", "load_program", "safe_name"]


@dataclass(frozen=True)
class BotProgram:
    """A runnable bot: its name, command, working folder and protocol."""

    name: str
    path: Path
    command: tuple[str, ...]
    cwd: Path
    protocol: str = "zmq"
    build: tuple[str, ...] = ()
    build_log: str = ""
    """The end of a successful build's output (its author reads it; issue 15 §3)."""


def safe_name(text: str) -> str:
    """``text`` (a file or folder name) made a valid bot name: every run of other
    characters becomes '_', and it starts with a letter or digit (:data:`NAME`); "bot" if
    nothing is left."""
    return plain_part(text, "._-", lead="._-", squeeze=True, limit=64)


def _command(value: Any, key: str, manifest: Path) -> tuple[str, ...]:
    if isinstance(value, str):
        value = shlex.split(value)
    if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
        raise BotSpecError(f"{manifest}: {key!r} must be a command (a string or a list of "
                           f"strings), got {value!r}")
    if any("\0" in v for v in value):  # TOML allows "\u0000"; no argv or path can hold it
        raise BotSpecError(f"{manifest}: {key!r} holds a NUL character, which no command "
                           f"can: {value!r}")
    return tuple(value)


def _is_executable(folder: Path, entry: str) -> bool:
    """Whether the bot's own file ``entry`` is executable; False for one outside it
    (issue 13 A1: a manifest's string is checked before it is used as a path)."""
    try:
        return os.access(inside(folder, entry), os.X_OK)
    except BotSpecError:
        return False


def load_program(spec: str, limits: BotFileLimits = DEFAULT_LIMITS) -> BotProgram:
    """Resolve a bot given on the command line (a file or a folder) to a :class:`BotProgram`."""
    path = Path(spec).expanduser()
    if not path.exists():
        raise BotSpecError(f"bot {spec!r}: no such file or folder")
    path = path.resolve()
    if path.is_file():
        if path.suffix == ".py":
            return BotProgram(safe_name(path.stem), path, (sys.executable, str(path)),
                              path.parent)
        if not os.access(path, os.X_OK):
            raise BotSpecError(f"bot {spec!r} is neither a .py file nor executable "
                               f"(make it executable with chmod +x)")
        return BotProgram(safe_name(path.stem), path, (str(path),), path.parent)
    if not path.is_dir():
        raise BotSpecError(f"bot {spec!r} is neither a file nor a folder")
    manifest = path / MANIFEST
    text = read_manifest(path, limits)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise BotSpecError(f"{manifest}: not valid TOML: {err}") from None
    except RecursionError:
        raise BotSpecError(f"{manifest}: not valid TOML: nested too deeply") from None
    unknown = set(data) - {"name", "run", "build", "protocol"}
    if unknown:
        raise BotSpecError(f"{manifest}: unknown keys {sorted(unknown)!r}; "
                           f"known: name, run, build, protocol")
    if "run" not in data:
        raise BotSpecError(f"{manifest}: missing 'run', the command that starts the bot")
    protocol = data.get("protocol", "zmq")
    if protocol not in PROTOCOLS:
        raise BotSpecError(f"{manifest}: protocol must be one of {PROTOCOLS!r}, got {protocol!r}")
    name = data.get("name", safe_name(path.name))
    if not isinstance(name, str) or not name:
        raise BotSpecError(f"{manifest}: 'name' must be a non-empty string, got {name!r}")
    if not NAME.fullmatch(name):
        raise BotSpecError(f"{manifest}: 'name' {name!r} is not a plain name: use at most 64 "
                           f"letters, digits, '.', '_' and '-', starting with a letter or "
                           f"digit")
    command = _command(data["run"], "run", manifest)
    if command[0].endswith(".py") and not _is_executable(path, command[0]):
        command = (sys.executable, *command)  # a Python entry file runs with our Python
    build = _command(data["build"], "build", manifest) if "build" in data else ()
    return BotProgram(name, path, command, path, protocol, build)


def moved(program: BotProgram, folder: Path) -> BotProgram:
    """``program`` with its files at ``folder`` instead (a copy of them)."""
    old = str(program.path)
    return replace(program, path=folder, cwd=folder if program.path.is_dir() else folder.parent,
                   command=tuple(str(folder) + a[len(old):]
                                 if a == old or a.startswith(old + "/") else a
                                 for a in program.command))


def build_program(program: BotProgram, workdir: Path, sandbox: str = "auto",
                  limits: Limits | None = None, timeout_s: float = BUILD_TIMEOUT_S,
                  files: BotFileLimits = DEFAULT_LIMITS) -> BotProgram:
    """The program to run: a copy of the bot under ``workdir``, built if it has a build.

    The copy has fixed modes (issue 13 A6, B1: the sandbox user can read every file the
    author gave, whatever its mode was) and is made under the caps of ``files``, so a
    FIFO, a huge or sparse file or a hard link is refused before anything runs. A build
    runs once, in the sandbox (see :mod:`referee.build`); the original is never written.
    Raises BotSpecError if the copy is refused or the build fails.
    """
    from .build import run_build  # build imports this module

    workdir = workdir.resolve()
    stage = Path(tempfile.mkdtemp(dir=workdir, prefix="bot-"))
    copy = inside(stage, program.path.name)
    copy_tree(program.path, copy, files)
    staged = moved(program, copy)
    if not program.build:
        return staged
    return run_build(staged, workdir, sandbox, limits or Limits(), timeout_s, files)
