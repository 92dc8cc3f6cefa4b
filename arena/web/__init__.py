"""The leaderboard and replays on web pages, for ``arena serve`` and ``arena export-html``.

The pages that need only the database are in :mod:`leaderboard.web`; this
package adds the replay viewer (which rebuilds games with the engines), the
read-only HTTP server and the static export. The two commands are in
:mod:`arena.cli.web`.
"""

from __future__ import annotations

from .limits import LimitError, ServeLimits
from .server import is_loopback, make_server
from .site import export_html, render

__all__ = ["LimitError", "ServeLimits", "export_html", "is_loopback", "make_server", "render"]
