"""Where each page lives: one file-name scheme for the server and the static export."""

from __future__ import annotations

import hashlib

FILE_NAME_BYTES = 255
"""The longest file name most file systems take (ext4, APFS, NTFS), in bytes."""


def page_path(kind: str, key: str | int) -> tuple[str, str]:
    """The (folder, file) of a page, e.g. ``("bot", "alpha.html")``: one scheme for the server
    and the exported files.

    A bot name may be as long as a file name (the bot store keeps it as a folder), so
    ``NAME.html`` can be too long to write; such a page is ``PREFIX@DIGEST.html`` instead
    (see :func:`page_key_matches`). Bot names cannot hold "@", so it is no other bot's page.
    """
    name = f"{key}.html"
    if len(name.encode()) <= FILE_NAME_BYTES:
        return kind, name
    text = str(key)
    prefix = text.encode()[:200].decode(errors="ignore")
    return kind, f"{prefix}@{hashlib.sha256(text.encode()).hexdigest()[:16]}.html"


def page_key_matches(kind: str, key: str | int, file_key: str) -> bool:
    """Whether ``file_key`` (a page's file name without ``.html``) is the page of ``key``."""
    return page_path(kind, key)[1] == f"{file_key}.html"
