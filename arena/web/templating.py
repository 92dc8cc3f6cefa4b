"""The Jinja2 environment of every page, for ``arena serve`` and ``arena export-html`` alike.

Autoescaping is on for every template and an undefined name is an error
(``StrictUndefined``), so a value from the database is escaped unless a template
says otherwise, and a misspelt one fails a test instead of printing nothing
(issue 15 §1). Pages link the static files under ``static/`` relative to the
page (``root``), so the same output works served and from a folder on disk.
"""

from __future__ import annotations

import base64
import hashlib
import html
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from functools import cache
from pathlib import Path
from typing import Any
from urllib.parse import quote

from jinja2 import Environment, PackageLoader, StrictUndefined
from markupsafe import Markup

from leaderboard.confidence import chance
from leaderboard.web.paths import page_path

STATIC_DIR = Path(__file__).parent / "static"
STATIC_PREFIX = "static"
"""The one path prefix of the static files: ``/static/arena.css``, ``DIR/static/...``."""
TABLES = tuple(sorted(f.name for f in STATIC_DIR.glob("table-*.js")))
"""Each game's renderer of its table (issue 19 §1): ``table-GAME.js``, over ``table.js``."""
STATIC_FILES = ("arena.css", "replay.js", "ladder.js", "live.js", "table.js", *TABLES)


def replay_scripts(game: str) -> list[str]:
    """The scripts of a replay page, in order: the table helpers and ``game``'s renderer
    when Arena has one, then the viewer. ``game`` comes from a stored row, so it is only
    ever compared with the names of the files there, never made into a path."""
    table = f"table-{game}.js"
    return ["table.js", table, "replay.js"] if table in TABLES else ["table.js", "replay.js"]


_FOR_FILES: ContextVar[bool] = ContextVar("arena_pages_for_files", default=False)


@contextmanager
def for_files() -> Iterator[None]:
    """Render pages for ``export-html``: the same templates, but the script tag without
    ``integrity``, which Chromium cannot check on a ``file://`` page (an opaque origin:
    the script would be blocked). There is no CSP there to need it."""
    token = _FOR_FILES.set(True)
    try:
        yield
    finally:
        _FOR_FILES.reset(token)


def integrity(name: str) -> str:
    """The ``integrity`` value of a static file's tag; empty for exported pages."""
    return "" if _FOR_FILES.get() else static_hash(name)


@cache
def static_hash(name: str) -> str:
    """The CSP / subresource-integrity hash of a static file: ``sha256-BASE64``."""
    digest = hashlib.sha256((STATIC_DIR / name).read_bytes()).digest()
    return "sha256-" + base64.b64encode(digest).decode()


def href(root: str, *parts: str | int) -> str:
    """A relative link: ``root`` then each part URL-quoted (bot names may hold spaces, "?")."""
    return root + "/".join(quote(str(p), safe="") for p in parts)


def page_href(root: str, kind: str, key: str | int) -> str:
    """The relative link to the page of ``key`` under ``kind/`` (``bot/alpha.html``)."""
    return href(root, *page_path(kind, key))


def static_href(root: str, name: str) -> str:
    """The relative link to a static file."""
    return href(root, STATIC_PREFIX, name)


def num(value: Any, digits: int = 2) -> str:
    """A number with ``digits`` decimals; blank for None."""
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def _finalize(value: Any) -> Any:
    """Every ``{{ value }}``: None is blank, markup made by a macro stays, anything else is
    escaped as :func:`html.escape` does (quotes too, ``'`` as ``&#x27;``: the pages' bytes
    did not change with the move to templates)."""
    if value is None:
        return ""
    if hasattr(value, "__html__"):
        return value
    return Markup(html.escape(str(value), quote=True))


@cache
def environment() -> Environment:
    """The one environment (autoescape on, StrictUndefined)."""
    env = Environment(loader=PackageLoader("arena.web", "templates"), autoescape=True,
                      undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True,
                      keep_trailing_newline=True, finalize=_finalize,
                      auto_reload=False)  # templates change only with the code: no stat per page
    env.globals.update(href=href, page_href=page_href, static_href=static_href,
                       static_hash=static_hash, integrity=integrity)
    env.filters["num"] = num
    env.filters["chance"] = chance  # P(ahead), as the terminal shows it (issue 18 §4)
    return env


ACCOUNT_NAV: ContextVar[str | None] = ContextVar("arena_account_nav", default=None)
"""The public pages' account link on the competition server (issue 15 §2): ``"signin"``
or, with a session cookie, ``"me"``; None (a read-only server, the export): none.
Set per request by :class:`arena.web.forms.AccountNav`."""


def render(template: str, **context: Any) -> str:
    """Render ``template`` (a file in arena/web/templates) with ``context``. Every page
    template extends ``base.html``, which needs ``root`` (the relative path from the page
    to the site root: ``""`` or ``"../"``), ``games`` (the navigation's leaderboards) and
    takes an optional ``signed_in`` (an author's name, shown in the navigation) or
    ``sign_in_link`` (a link to sign in, or ``"me"``: to the author's pages)."""
    context.setdefault("signed_in", None)
    context.setdefault("sign_in_link", ACCOUNT_NAV.get())
    context.setdefault("games", [])
    return environment().get_template(template).render(**context)
