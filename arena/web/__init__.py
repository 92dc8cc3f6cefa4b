"""The web app: leaderboards, bots, tournaments and replays, for ``arena serve`` and
``arena export-html`` (issue 15 §1).

:mod:`arena.web.app` is the Starlette app (``create_app``), :mod:`arena.web.server`
runs it on uvicorn within the limits of :mod:`arena.web.limits`, the pages are
Jinja2 templates (:mod:`arena.web.templating`, ``templates/``, ``static/``) filled by
:mod:`arena.web.pages` and :mod:`arena.web.replay`, and :mod:`arena.web.site` maps
addresses to pages and writes the static export. The two commands are in
:mod:`arena.cli.web`.
"""

from __future__ import annotations

from .app import create_app
from .limits import LimitError, ServeLimits
from .server import is_loopback, make_server
from .site import export_html, render

__all__ = ["LimitError", "ServeLimits", "create_app", "export_html", "is_loopback",
           "make_server", "render"]
