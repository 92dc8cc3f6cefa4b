"""A ``multipart/form-data`` body read as a stream (issue 15 §3, the upload form): the
fields before the file part come first, so the page checks the CSRF token (and the bot
name and game) before a byte of the file is read; the file's bytes then flow on, chunk
by chunk, to :func:`arena.submissions.accept_async`, which caps them. Nothing is ever
held whole: python-multipart's push parser sees each chunk as it arrives.

Bounds, each refused with its own sentence (:class:`~arena.web.forms.Refused`): the
whole body (the archive's cap and :data:`SLACK` for the fields), :data:`FIELD_BYTES`
per field, :data:`MAX_PARTS` parts, python-multipart's limits on headers per part.
"""

from __future__ import annotations

import asyncio
import tarfile
import tempfile
from collections import deque
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from python_multipart.multipart import MultipartParseError, MultipartParser, parse_options_header

from .forms import Refused

SLACK = 64 * 1024
"""Bytes a form may have beyond its file: the fields, the parts' headers, boundaries."""
FIELD_BYTES = 4096
"""Bytes of one field that is not a file (a CSRF token, a bot name, a game)."""
MAX_PARTS = 10
"""Parts of a form with one archive; a folder's files may be ``uploads.max_entries``."""
SPOOL = 1 << 20
"""Bytes of a packed folder (and of each of its files) held in memory before a temporary
file takes them."""


@dataclass
class Part:
    """A part's headers: its field ``name``, and for a file part its ``filename``."""

    name: str = ""
    filename: str | None = None
    content_type: str = ""
    headers: dict[str, str] = field(default_factory=dict)


def boundary_of(content_type: str) -> bytes:
    """The boundary of a ``multipart/form-data`` Content-Type, or a 400/415 Refused."""
    kind, params = parse_options_header(content_type)
    if kind != b"multipart/form-data":
        raise Refused(415, "The upload form is sent as multipart/form-data, not "
                           f"{kind.decode('latin-1')[:60]!r}.")
    boundary = params.get(b"boundary", b"")
    if not boundary or len(boundary) > 200:
        raise Refused(400, "The upload has no multipart boundary.")
    return boundary


class StreamedForm:
    """The parts of one multipart body, as events pulled one at a time:
    ``("field", name, value)``, ``("file", Part)``, ``("data", bytes)``,
    ``("file-end",)``, then ``("end",)``."""

    def __init__(self, stream: AsyncIterator[bytes], boundary: bytes, cap: int,
                 max_parts: int = MAX_PARTS) -> None:
        self.stream, self.cap, self.size, self.max_parts = stream, cap, 0, max_parts
        self.events: deque[tuple[Any, ...]] = deque()
        self.part = Part()
        self.parts = 0
        self.value = bytearray()
        self._header = [bytearray(), bytearray()]
        self.ended = False
        self.parser = MultipartParser(boundary, {
            "on_part_begin": self._begin, "on_part_data": self._data,
            "on_part_end": self._end, "on_header_field": self._header_field,
            "on_header_value": self._header_value, "on_header_end": self._header_end,
            "on_headers_finished": self._headers_done, "on_end": self._all_done})

    # ---------------------------------------------- python-multipart's callbacks
    def _begin(self) -> None:
        self.parts += 1
        if self.parts > self.max_parts:
            raise Refused(413, f"The form has more than {self.max_parts} parts (files "
                               "and fields; uploads.max_entries) [archive-entries].")
        self.part, self.value = Part(), bytearray()

    def _header_field(self, data: bytes, start: int, end: int) -> None:
        self._header[0] += data[start:end]

    def _header_value(self, data: bytes, start: int, end: int) -> None:
        self._header[1] += data[start:end]

    def _header_end(self) -> None:
        name, value = (bytes(h).decode("latin-1") for h in self._header)
        self.part.headers[name.strip().lower()] = value.strip()
        self._header = [bytearray(), bytearray()]

    def _headers_done(self) -> None:
        _, params = parse_options_header(self.part.headers.get("content-disposition", ""))
        self.part.name = params.get(b"name", b"").decode("utf-8", "replace")
        filename = params.get(b"filename")
        self.part.filename = None if filename is None else filename.decode("utf-8",
                                                                            "replace")
        self.part.content_type = self.part.headers.get("content-type", "")
        if self.part.filename is not None:
            self.events.append(("file", self.part))

    def _data(self, data: bytes, start: int, end: int) -> None:
        if self.part.filename is not None:
            self.events.append(("data", bytes(data[start:end])))
            return
        self.value += data[start:end]
        if len(self.value) > FIELD_BYTES:
            raise Refused(413, f"The form's field {self.part.name[:40]!r} is over "
                               f"{FIELD_BYTES} bytes.")

    def _end(self) -> None:
        if self.part.filename is not None:
            self.events.append(("file-end",))
        else:
            self.events.append(("field", self.part.name,
                                self.value.decode("utf-8", "replace")))

    def _all_done(self) -> None:
        self.ended = True
        self.events.append(("end",))

    # ------------------------------------------------------------------ reading
    async def next(self) -> tuple[Any, ...]:
        """The next event; more of the body is read only when none is waiting."""
        while not self.events:
            try:
                chunk = await anext(self.stream)
            except StopAsyncIteration:
                if self.ended:
                    return ("end",)
                raise Refused(400, "The upload ended before its last part did (the "
                                   "connection was cut?).") from None
            self.size += len(chunk)
            if self.size > self.cap:
                raise Refused(413, f"The upload passed {self.cap} bytes (the archive's cap, "
                                   "uploads.max_compressed_mb, and the form's fields); it "
                                   "was refused before it was read whole "
                                   "[archive-compressed-size].")
            try:
                self.parser.write(chunk)
            except MultipartParseError as err:
                raise Refused(400, f"The upload is not a readable form: {err}") from None
        return self.events.popleft()

    async def fields_until_file(self) -> tuple[dict[str, str], Part | None]:
        """Every field before the first file part (first value of each), and that
        part (None: the form had no file)."""
        fields: dict[str, str] = {}
        while True:
            event = await self.next()
            if event[0] == "field":
                fields.setdefault(event[1], event[2])
            elif event[0] == "file":
                return fields, event[1]
            elif event[0] == "end":
                return fields, None

    async def file_data(self) -> AsyncIterator[bytes]:
        """The current file part's bytes, as they arrive."""
        while True:
            event = await self.next()
            if event[0] == "data":
                yield event[1]
            elif event[0] in ("file-end", "end"):
                return

    async def next_file(self) -> Part | None:
        """The next file part after the current one (whose bytes are skipped), or None
        at the end of the form; fields on the way are ignored."""
        while True:
            event = await self.next()
            if event[0] == "file":
                part: Part = event[1]
                return part
            if event[0] == "end":
                return None


async def pack_folder(form: StreamedForm, first: Part, field: str, cap: int,
                      max_files: int) -> tempfile.SpooledTemporaryFile[bytes]:
    """The files of a folder input (``<input type=file webkitdirectory>``: one part of
    ``field`` per file, named by its path, the folder's own name first), packed as one
    tar.gz with nothing changed but the modes (0644), so that every archive rule is
    then checked on it as on an uploaded archive (names, ``..``, duplicates, sizes).
    At most ``cap`` bytes of files and ``max_files`` files, refused as they pass."""
    out = tempfile.SpooledTemporaryFile(max_size=SPOOL)  # noqa: SIM115 - the caller's
    try:
        await _pack(form, first, field, cap, max_files, out)
    except BaseException:
        out.close()
        raise
    out.seek(0)
    return out


async def _pack(form: StreamedForm, first: Part, field: str, cap: int, max_files: int,
                out: tempfile.SpooledTemporaryFile[bytes]) -> None:
    total = files = 0
    part: Part | None = first
    with tarfile.open(fileobj=out, mode="w:gz") as tar:
        while part is not None:
            if part.name == field and part.filename:
                files += 1
                if files > max_files:
                    raise Refused(413, f"The folder has more than {max_files} files "
                                       "(uploads.max_entries) [archive-entries].")
                with tempfile.SpooledTemporaryFile(max_size=SPOOL) as data:
                    size = 0
                    async for chunk in form.file_data():
                        size += len(chunk)
                        total += len(chunk)
                        if total > cap:
                            raise Refused(413, f"The folder's files pass {cap} bytes "
                                               "(uploads.max_compressed_mb); refused before "
                                               "they were read whole "
                                               "[archive-compressed-size].")
                        data.write(chunk)
                    data.seek(0)
                    info = tarfile.TarInfo(part.filename)
                    info.size, info.mode = size, 0o644
                    await asyncio.to_thread(tar.addfile, info, data)
            part = await form.next_file()


async def chunks_of(file: tempfile.SpooledTemporaryFile[bytes]) -> AsyncIterator[bytes]:
    """A packed folder's bytes, 64 KiB at a time."""
    while chunk := file.read(1 << 16):
        yield chunk
