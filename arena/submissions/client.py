"""The ``arena submit`` client (issue 15 §3): pack a bot, send it, follow its job.

Standard library only (``urllib.request``, ``tarfile``), so an author needs nothing
but Arena itself. A folder is packed as tar.gz under the server's own archive
rules (:mod:`.archive`), and the packed archive (or a ready one) is checked with
the server's own check before it is sent: what the server would refuse is
refused here, with the same rule code. The token comes from ``ARENA_TOKEN`` or
``~/.config/arena/token`` (``$XDG_CONFIG_HOME/arena/token``), never from an argument
that ``ps`` would show; a token file others may read is refused. Redirects are not
followed: a redirect would carry the token to wherever it points.
"""

from __future__ import annotations

import http.client
import io
import json
import os
import stat
import tarfile
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

from .archive import (
    CONTENT_TYPES,
    DEFAULT_LIMITS,
    GZIP,
    ArchiveError,
    ArchiveLimits,
    check_archive,
    detect,
)
from .rules import MAX_DEPTH

SKIPPED = frozenset({".git", "__pycache__", ".hg", ".svn"})
"""Folders never packed: version control and caches (their entries add up fast)."""
DONE = ("active", "failed")
TIMEOUT_S = 60.0
"""How long one HTTP request may take."""
MEDIA = {fmt: kind for kind, fmt in reversed(CONTENT_TYPES.items())}
"""The Content-Type sent for each format (the first the API names for it)."""


class ClientError(Exception):
    """A submission that could not be made or followed; ``code`` is the server's error
    code (``archive-symlink``), or the client's own (``unreachable``, ``token``)."""

    def __init__(self, message: str, code: str = "", status: int | None = None) -> None:
        super().__init__(message)
        self.code, self.status = code, status


# ------------------------------------------------------------------ the token
def token_path() -> Path:
    """Where the token file is looked for."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "arena" / "token"


def read_token() -> str:
    """The API token: ``ARENA_TOKEN``, else the token file (which others must not be
    able to read or write); ClientError saying how to set one if there is none."""
    token = os.environ.get("ARENA_TOKEN", "").strip()
    if token:
        return _plain(token, "ARENA_TOKEN")
    path = token_path()
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        raise ClientError(f"no API token: set ARENA_TOKEN, or put the token that "
                          f"`arena author add` printed in {path} (chmod 600)",
                          "token") from None
    except OSError as err:
        raise ClientError(f"cannot read the token file {path}: {err.strerror} (it must "
                          f"be a regular file, not a symlink)", "token") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise ClientError(f"the token file {path} is not a regular file", "token")
        if st.st_mode & 0o077:
            raise ClientError(f"the token file {path} may be read by others (mode "
                              f"{stat.S_IMODE(st.st_mode):04o}): run chmod 600 {path}",
                              "token")
        data = os.read(fd, 4096)
    finally:
        os.close(fd)
    return _plain(data.decode("utf-8", "replace").strip(), str(path))


def _plain(token: str, where: str) -> str:
    if not token or any(ord(c) < 33 or ord(c) > 126 for c in token):
        raise ClientError(f"the token in {where} is empty or holds spaces or control "
                          f"characters", "token")
    return token


# -------------------------------------------------------------------- packing
def pack(folder: Path, limits: ArchiveLimits = DEFAULT_LIMITS) -> bytes:
    """``folder``'s contents as a tar.gz at the archive's root, checked with the
    server's rules (ArchiveError with its rule code if they refuse it)."""
    buffer = io.BytesIO()
    entries = 0
    total = 0
    with tarfile.open(fileobj=buffer, mode="w:gz", format=tarfile.PAX_FORMAT) as out:
        for rel, st in _walk(folder):
            entries += 1
            if entries > limits.max_entries:
                raise ArchiveError("archive-entries", rel, f"one entry too many: an "
                                   f"archive may hold at most {limits.max_entries}")
            info = tarfile.TarInfo(rel)
            info.mtime = int(st.st_mtime)
            if stat.S_ISDIR(st.st_mode):
                info.type, info.mode = tarfile.DIRTYPE, 0o755
                out.addfile(info)
                continue
            info.size = st.st_size
            total += st.st_size
            if total > limits.max_unpacked_bytes:
                raise ArchiveError("archive-unpacked-size", rel, f"takes the bot past "
                                   f"{limits.max_unpacked_bytes} bytes")
            info.mode = 0o755 if st.st_mode & 0o111 else 0o644
            with open(folder / rel, "rb") as data:
                out.addfile(info, data)
    packed = buffer.getvalue()
    check(packed, GZIP, limits)
    return packed


def _walk(folder: Path, rel: str = "", depth: int = 0) -> list[tuple[str, os.stat_result]]:
    """Every entry below ``folder`` (sorted, folders before their contents), refused
    as the server would: a symlink, a device, a FIFO or a socket, and folders nested
    deeper than the server takes (a folder 1200 deep was a RecursionError)."""
    if depth > MAX_DEPTH:
        raise ArchiveError("archive-depth", rel, f"nested more than {MAX_DEPTH} folders "
                           f"deep")
    found = []
    with os.scandir(folder / rel if rel else folder) as listing:
        items = sorted(listing, key=lambda e: e.name)
    for entry in items:
        if entry.name in SKIPPED:
            continue
        path = f"{rel}/{entry.name}" if rel else entry.name
        st = entry.stat(follow_symlinks=False)
        if stat.S_ISLNK(st.st_mode):
            raise ArchiveError("archive-symlink", path, "is a symlink: the server takes only "
                               "regular files and folders (copy the file it points to)")
        if stat.S_ISDIR(st.st_mode):
            found.append((path, st))
            found += _walk(folder, path, depth + 1)
        elif stat.S_ISREG(st.st_mode):
            found.append((path, st))
        else:
            rule = "archive-fifo" if stat.S_ISFIFO(st.st_mode) else "archive-device"
            raise ArchiveError(rule, path, "is a device, FIFO or socket: the server takes "
                               "only regular files and folders")
    return found


def check(data: bytes, fmt: str | None, limits: ArchiveLimits = DEFAULT_LIMITS) -> str:
    """Check an archive's bytes with the server's own rules; its format."""
    with tempfile.NamedTemporaryFile(prefix="arena-submit-") as tmp:
        tmp.write(data)
        tmp.flush()
        return check_archive(Path(tmp.name), fmt, limits).fmt


def archive_of(path: Path, limits: ArchiveLimits = DEFAULT_LIMITS) -> tuple[bytes, str]:
    """The archive to send for ``path`` (a folder: packed; a file: a ready archive,
    told by its bytes) and its format."""
    if path.is_dir():
        return pack(path, limits), GZIP
    data = _read_archive(path, limits)
    fmt = detect(data[:512])
    if fmt is None:
        raise ArchiveError("archive-format", "", f"{path} is not a tar.gz, tar or zip "
                           f"archive (nor a folder)")
    return data, check(data, fmt, limits)


def _read_archive(path: Path, limits: ArchiveLimits) -> bytes:
    """A ready archive's bytes: a regular file (opened without blocking, so a FIFO
    cannot hang the client) read to at most the cap. A FIFO blocked for ever, and
    /dev/zero, whose size is 0, was read without end (found by review)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY)
    except OSError as err:
        raise ArchiveError("archive-format", "", f"{path} cannot be read: "
                           f"{err.strerror}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise ArchiveError("archive-format", "", f"{path} is not a regular file (nor "
                               f"a folder): give a .tar.gz, .tar or .zip file")
        os.set_blocking(fd, True)
        cap = limits.max_compressed_bytes
        with os.fdopen(os.dup(fd), "rb") as source:
            data = source.read(cap + 1)
    finally:
        os.close(fd)
    if len(data) > cap:
        raise ArchiveError("archive-compressed-size", "", f"{path} is over {cap} bytes: "
                           f"an archive may be at most {cap}")
    return data


# ------------------------------------------------------------------- the API
class _NoRedirects(urllib.request.HTTPRedirectHandler):
    """Refuse every redirect: it would carry the token elsewhere."""

    def redirect_request(self, req: Any, fp: Any, code: int, msg: str, headers: Any,
                         newurl: str) -> None:
        raise ClientError(f"the server redirected to {newurl!r} ({code}); a redirect is "
                          f"never followed with a token: use that address in --server",
                          "redirect", code)


class _AnswerFirst:
    """An HTTP connection whose upload may be cut short by the server's answer: a server
    that refuses an upload before it has read it (a wrong token, a size over its cap)
    answers at once and, once its request deadline passes, closes the connection. The
    rest of the body then fails with a broken pipe, which urllib reported as "cannot
    reach the server", hiding the answer waiting in the socket (found by the end-to-end
    tests: a 3 MB bot at 1 MB/s). The send's error is dropped so that the answer is
    read; a server that said nothing still fails at reading it."""

    def request(self, method: str, url: str, body: Any = None, headers: Any = None, *,
                encode_chunked: bool = False) -> None:
        try:
            super().request(method, url, body, headers or {},  # type: ignore[misc]
                            encode_chunked=encode_chunked)
        except (BrokenPipeError, ConnectionResetError):
            if body is None:
                raise


class _HTTP(_AnswerFirst, http.client.HTTPConnection):
    pass


class _HTTPS(_AnswerFirst, http.client.HTTPSConnection):
    pass


class _HTTPHandler(urllib.request.HTTPHandler):
    def http_open(self, req: Any) -> Any:
        return self.do_open(_HTTP, req)


class _HTTPSHandler(urllib.request.HTTPSHandler):
    def https_open(self, req: Any) -> Any:
        return self.do_open(_HTTPS, req, context=self._context)  # type: ignore[attr-defined]


class Client:
    """The server's submissions API (issue 15 plan, HTTP API) for one token."""

    def __init__(self, server: str, token: str, timeout_s: float = TIMEOUT_S) -> None:
        parts = urlsplit(server)
        if parts.scheme not in ("http", "https") or not parts.netloc or parts.query \
                or parts.username or parts.password:
            raise ClientError(f"--server {server!r} must be an http:// or https:// address "
                              f"(no query, no user name or password in it)", "server")
        self.server = server.rstrip("/")
        self.token = token
        self.timeout_s = timeout_s
        self.opener = urllib.request.build_opener(_NoRedirects(), _HTTPHandler(),
                                                  _HTTPSHandler())

    def _call(self, method: str, path: str, body: bytes | None = None,
              content_type: str | None = None) -> tuple[int, dict[str, Any]]:
        headers = {"Authorization": f"Bearer {self.token}", "Accept": "application/json",
                   "User-Agent": "arena-submit"}
        if content_type:
            headers["Content-Type"] = content_type
        request = urllib.request.Request(self.server + path, data=body, method=method,
                                         headers=headers)
        try:
            with self.opener.open(request, timeout=self.timeout_s) as reply:
                return reply.status, _json(reply.read(1 << 22), reply.status)
        except urllib.error.HTTPError as err:
            said = _json(err.read(1 << 20), err.code)
            found = said.get("error")
            error: dict[str, Any] = found if isinstance(found, dict) else {}
            code = str(error.get("code") or "")
            message = str(error.get("message") or err.reason)
            hint = (" (check ARENA_TOKEN or the token file: "
                    f"{token_path()})" if err.code == 401 else "")
            raise ClientError(f"the server refused it ({err.code}"
                              f"{', ' + code if code else ''}): {message}{hint}",
                              code, err.code) from None
        except urllib.error.URLError as err:
            raise ClientError(f"cannot reach the server at {self.server}: {err.reason}",
                              "unreachable") from None
        except (TimeoutError, ConnectionError) as err:
            raise ClientError(f"the server at {self.server} did not answer: {err}",
                              "unreachable") from None

    def submit(self, name: str, game: str, data: bytes, fmt: str) -> dict[str, Any]:
        """POST a new version of bot ``name``; the submission, as the server says it."""
        path = f"/api/v1/bots/{quote(name, safe='')}/versions?game={quote(game, safe='')}"
        _, said = self._call("POST", path, data, MEDIA[fmt])
        return said

    def status(self, submission_id: int) -> dict[str, Any]:
        """The submission ``submission_id`` now."""
        return self._call("GET", f"/api/v1/submissions/{int(submission_id)}")[1]

    def wait(self, submission_id: int, on_change: Callable[[dict[str, Any]], None],
             timeout_s: float, poll_s: float = 1.0) -> dict[str, Any]:
        """Poll until the submission is active or failed, calling ``on_change`` with it
        at every new state; its last state (ClientError after ``timeout_s``)."""
        deadline = time.monotonic() + timeout_s
        last = None
        while True:
            now = self.status(submission_id)
            if now.get("state") != last:
                last = now.get("state")
                on_change(now)
            if last in DONE:
                return now
            if time.monotonic() > deadline:
                raise ClientError(f"submission {submission_id} is still {last} after "
                                  f"{timeout_s:.0f} s; ask again later", "timeout")
            time.sleep(poll_s)


def _json(data: bytes, status: int) -> dict[str, Any]:
    try:
        said = json.loads(data)
    except ValueError:
        said = None
    if not isinstance(said, dict):
        if status >= 400:
            return {}
        raise ClientError(f"the server's answer ({status}) is not a JSON object: "
                          f"{data[:200]!r}", "answer", status)
    return said
