"""The server's settings: ``arena.toml``, for everything a long-running server needs.

Every field has a default, so a missing file or a missing table means the defaults;
CLI options override the file. An unknown key, a value of the wrong type or out of
range is refused by name (a typo must not silently leave a limit at its default)::

    [server]
    database = "arena.db"
    host = "127.0.0.1"
    port = 8000
    submissions = true          # accounts and uploads (off: the public read-only site)

    [uploads]
    max_compressed_mb = 20

See docs/server.md for every field.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Annotated, Literal

import msgspec

MB = 1024 * 1024

Positive = Annotated[int, msgspec.Meta(ge=1)]
Seconds = Annotated[float, msgspec.Meta(gt=0, le=86_400)]


class ConfigError(ValueError):
    """An ``arena.toml`` that cannot be read or holds a wrong value; says which and where."""


class ServerSection(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    """``[server]``: where the server listens and what it offers."""

    database: str = "arena.db"
    host: str = "127.0.0.1"
    port: Annotated[int, msgspec.Meta(ge=0, le=65535)] = 8000
    submissions: bool = False
    """Accounts, sign-in and uploads (issue 15 §1); off, the site is public and read-only."""
    open_registration: bool = False
    """Anyone may make an account on a web form (rate-limited per address, §2)."""
    data_dir: str = ""
    """Where archives and unpacked bots are kept; empty: ``DB.server/`` next to the db."""
    secret_file: str = ""
    """The key that signs session cookies; empty: ``DATA_DIR/secret``, made on first run."""
    https: bool = False
    """Behind a TLS proxy: session cookies get ``Secure``."""
    trusted_proxies: tuple[str, ...] = ("127.0.0.1", "::1")
    """Addresses whose ``X-Forwarded-For`` names the client (a reverse proxy on this
    machine by default); the per-address registration limit counts that client."""
    session_hours: Annotated[float, msgspec.Meta(gt=0, le=24 * 366)] = 24 * 7
    max_connections: Positive = 256
    request_timeout_s: Seconds = 10.0
    idle_timeout_s: Seconds = 5.0
    upload_timeout_s: Seconds = 300.0
    """An upload's body must arrive within this of its request's head (a 20 MB bot at
    70 KB/s); every other request keeps ``request_timeout_s``."""


class UploadSection(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    """``[uploads]``: what an archive may be, checked before anything is unpacked (§3)."""

    max_compressed_mb: Positive = 20
    max_unpacked_mb: Positive = 100
    max_entries: Positive = 10_000
    max_ratio: Positive = 100
    """Unpacked bytes per compressed byte, for the whole archive and each entry (bombs)."""
    at_once: Positive = 8
    """Uploads streamed in at once, over every author: each may hold max_compressed_mb
    of disk until it is checked (256 slow uploads at once held 5 GB; found by review)."""
    at_once_per_author: Positive = 2

    @property
    def max_compressed_bytes(self) -> int:
        return self.max_compressed_mb * MB

    @property
    def max_unpacked_bytes(self) -> int:
        return self.max_unpacked_mb * MB


class LimitSection(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    """``[limits]``: what one author may do (§3)."""

    submissions_per_day: Positive = 10
    bots_per_author: Positive = 5
    registrations_per_hour: Positive = 5
    """Accounts one address may make an hour with open registration."""


class JobSection(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    """``[jobs]``: the submission pipeline's time limits (§3)."""

    build_timeout_s: Seconds = 300.0
    check_timeout_s: Seconds = 300.0
    check_games: Positive = 3
    workers: Positive = 1
    """Submissions built and checked at once."""
    sandbox: Literal["auto", "required", "none"] = "required"
    """How uploaded bots are built and checked: a server runs strangers' code, so the
    default refuses to run without bubblewrap (``none`` is for tests only)."""
    max_attempts: Positive = 3
    """Times a job is started before a server that keeps stopping during it gives up."""
    log_kb: Positive = 64
    """Of a build log and of a bot's stderr, what is kept for its author (a tail)."""


class ServerConfig(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    """The whole ``arena.toml``."""

    server: ServerSection = ServerSection()
    uploads: UploadSection = UploadSection()
    limits: LimitSection = LimitSection()
    jobs: JobSection = JobSection()

    @property
    def db_path(self) -> Path:
        return Path(self.server.database)

    @property
    def data_path(self) -> Path:
        """The folder for archives, unpacked bots and the session key."""
        if self.server.data_dir:
            return Path(self.server.data_dir)
        return self.db_path.with_suffix(".server")

    @property
    def secret_path(self) -> Path:
        return Path(self.server.secret_file) if self.server.secret_file \
            else self.data_path / "secret"


def load_config(path: Path | None) -> ServerConfig:
    """The settings in ``path`` (``None``: every default), or ConfigError naming the fault."""
    if path is None:
        return ServerConfig()
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"no config file at {str(path)!r}") from None
    except (OSError, UnicodeDecodeError) as err:
        raise ConfigError(f"cannot read {str(path)!r}: {err}") from None
    except tomllib.TOMLDecodeError as err:
        raise ConfigError(f"{str(path)!r} is not valid TOML: {err}") from None
    return parse_config(raw, str(path))


def parse_config(raw: dict, where: str = "the config") -> ServerConfig:
    """A ServerConfig from parsed TOML, or ConfigError naming the key (``$.uploads.x``)."""
    try:
        return msgspec.convert(raw, ServerConfig)
    except msgspec.ValidationError as err:
        raise ConfigError(f"{where}: {err}") from None


def with_overrides(config: ServerConfig, **server: object) -> ServerConfig:
    """``config`` with the ``[server]`` fields given (the CLI's options; None: unset)."""
    given = {k: v for k, v in server.items() if v is not None}
    if not given:
        return config
    merged = msgspec.to_builtins(config)
    merged["server"].update(given)
    return parse_config(merged, "the options")
