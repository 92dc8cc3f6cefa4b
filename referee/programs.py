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
import shlex
import shutil
import subprocess
import sys
import tomllib
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from .errors import BotSpecError
from .sandbox import Limits, Sandbox, share_build

MANIFEST = "bot.toml"
PROTOCOLS = ("zmq", "stdio")
BUILD_TIMEOUT_S = 300


@dataclass(frozen=True)
class BotProgram:
    """A runnable bot: its name, command, working folder and protocol."""

    name: str
    path: Path
    command: tuple[str, ...]
    cwd: Path
    protocol: str = "zmq"
    build: tuple[str, ...] = ()


def _command(value: Any, key: str, manifest: Path) -> tuple[str, ...]:
    if isinstance(value, str):
        value = shlex.split(value)
    if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
        raise BotSpecError(f"{manifest}: {key!r} must be a command (a string or a list of "
                           f"strings), got {value!r}")
    return tuple(value)


def load_program(spec: str) -> BotProgram:
    """Resolve a bot given on the command line (a file or a folder) to a :class:`BotProgram`."""
    path = Path(spec).expanduser()
    if not path.exists():
        raise BotSpecError(f"bot {spec!r}: no such file or folder")
    path = path.resolve()
    if path.is_file():
        if path.suffix == ".py":
            return BotProgram(path.stem, path, (sys.executable, str(path)), path.parent)
        if not os.access(path, os.X_OK):
            raise BotSpecError(f"bot {spec!r} is neither a .py file nor executable "
                               f"(make it executable with chmod +x)")
        return BotProgram(path.stem, path, (str(path),), path.parent)
    manifest = path / MANIFEST
    if not manifest.is_file():
        raise BotSpecError(f"bot folder {spec!r} has no {MANIFEST} manifest "
                           f"(it needs at least: run = [\"command\", \"args\"])")
    try:
        data = tomllib.loads(manifest.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as err:
        raise BotSpecError(f"{manifest}: not valid TOML: {err}") from None
    unknown = set(data) - {"name", "run", "build", "protocol"}
    if unknown:
        raise BotSpecError(f"{manifest}: unknown keys {sorted(unknown)!r}; "
                           f"known: name, run, build, protocol")
    if "run" not in data:
        raise BotSpecError(f"{manifest}: missing 'run', the command that starts the bot")
    protocol = data.get("protocol", "zmq")
    if protocol not in PROTOCOLS:
        raise BotSpecError(f"{manifest}: protocol must be one of {PROTOCOLS!r}, got {protocol!r}")
    name = data.get("name", path.name)
    if not isinstance(name, str) or not name:
        raise BotSpecError(f"{manifest}: 'name' must be a non-empty string, got {name!r}")
    command = _command(data["run"], "run", manifest)
    if command[0].endswith(".py") and not os.access(path / command[0], os.X_OK):
        command = (sys.executable, *command)  # a Python entry file runs with our Python
    build = _command(data["build"], "build", manifest) if "build" in data else ()
    return BotProgram(name, path, command, path, protocol, build)


def build_program(program: BotProgram, workdir: Path, sandbox: str = "auto",
                  limits: Limits | None = None,
                  timeout_s: float = BUILD_TIMEOUT_S) -> BotProgram:
    """Build a folder bot once, in the sandbox, on a copy under ``workdir``.

    The copy is writable by the sandbox's unprivileged user; the original folder
    is never written. Returns the program to run (the built copy), or the program
    itself when it has no build command. Raises BotSpecError if the build fails.
    """
    if not program.build:
        return program
    copy = workdir / f"build-{program.name}"
    shutil.copytree(program.path, copy, symlinks=True)
    for folder, dirs, files in os.walk(copy):
        for name in dirs + files + ["."]:
            path = os.path.join(folder, name)
            if not os.path.islink(path):
                os.chmod(path, os.stat(path).st_mode | 0o666 | (0o111 if os.path.isdir(path)
                                                                  else 0))
    built = replace(program, path=copy, cwd=copy,
                    command=tuple(str(copy) + a[len(str(program.path)):]
                                  if a.startswith(str(program.path)) else a
                                  for a in program.command))
    box = Sandbox(sandbox, limits or Limits(), copy, str(workdir))
    argv = box.argv(program.build, writable_bot=True)
    try:
        done = subprocess.run(argv, cwd=copy, env=box.env({}), capture_output=True,
                              timeout=timeout_s, check=False)
    except FileNotFoundError:
        raise BotSpecError(f"bot {program.name!r}: build command {program.build[0]!r} "
                           f"not found") from None
    except subprocess.TimeoutExpired:
        raise BotSpecError(f"bot {program.name!r}: build took over {timeout_s:.0f} s") from None
    finally:
        box.release()  # its uid (issue 13 A5)
    share_build(copy)  # the seats run as other uids than the build's
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).decode(errors="replace")[-2000:]
        raise BotSpecError(f"bot {program.name!r}: build {' '.join(program.build)!r} failed "
                           f"with exit status {done.returncode}:\n{tail}")
    return built
