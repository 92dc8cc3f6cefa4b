"""The page shell of the web views: inline CSS, navigation, tables, error pages.

Every page is one self-contained HTML string: the CSS (and, on the replay page,
the JavaScript) is inline, nothing is loaded from anywhere else, so pages work
offline and from files. Links are relative to the page (``root`` is the path
from the page back to the site root, ``""`` or ``"../"``), so the same pages
work from the web server and from a folder written by ``arena export-html``.
Every value from the database goes through :func:`esc`.
"""

from __future__ import annotations

import hashlib
import html
from collections.abc import Callable, Iterable, Sequence
from typing import Any
from urllib.parse import quote

# Bot names, tournament names and game option values are anyone's text, any length: long
# words break (main) and chips end in an ellipsis, so no text makes a page wider than a phone.
CSS = """
:root{--bg:#f7f7f5;--fg:#1d1d1f;--muted:#66666e;--card:#fff;--line:#dcdce0;--accent:#2458b3;
--good:#1f8a4c;--bad:#b3261e;--chip:#eef1f7;--hl:#fff6d6}
@media (prefers-color-scheme:dark){:root{--bg:#16171a;--fg:#e8e8ea;--muted:#a0a0a8;
--card:#1f2024;--line:#34353b;--accent:#7aa7ff;--good:#5cc98a;--bad:#ff8a80;--chip:#2a2d35;
--hl:#3a3320}}
*{box-sizing:border-box}
body{margin:0;font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;
background:var(--bg);color:var(--fg)}
header.top{background:var(--card);border-bottom:1px solid var(--line)}
header.top nav{max-width:1100px;margin:0 auto;padding:.5rem 1rem;display:flex;flex-wrap:wrap;
gap:.25rem 1rem;align-items:baseline}
header.top nav .brand{font-weight:700;margin-right:.5rem}
main{max-width:1100px;margin:0 auto;padding:1rem;overflow-wrap:break-word}
a{color:var(--accent);text-decoration:none}a:hover{text-decoration:underline}
h1{font-size:1.5rem;margin:.3rem 0 .8rem}h2{font-size:1.15rem;margin:1.6rem 0 .5rem}
h3{font-size:1rem;margin:1rem 0 .4rem}
p.lead{color:var(--muted);margin-top:0}.muted{color:var(--muted)}
.scroll{overflow-x:auto;-webkit-overflow-scrolling:touch;max-width:100%}
table{border-collapse:collapse;background:var(--card);font-variant-numeric:tabular-nums}
th,td{padding:.3rem .6rem;border-bottom:1px solid var(--line);text-align:left;
vertical-align:top}
th{font-weight:600;white-space:nowrap}td.num,th.num{text-align:right;white-space:nowrap}
tbody tr:hover{background:var(--hl)}
.cards{display:grid;grid-template-columns:repeat(auto-fit,minmax(300px,1fr));gap:1rem}
.card{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:.8rem 1rem;
min-width:0}
.card h2,.card h3{margin-top:0}
.bar{display:inline-block;width:8rem;height:.7rem;background:var(--chip);border-radius:4px;
overflow:hidden;vertical-align:middle;margin-right:.4rem}
.bar span{display:block;height:100%;background:var(--good)}
.chip{display:inline-block;padding:0 .4rem;margin:.1rem .15rem .1rem 0;border-radius:4px;
background:var(--chip);border:1px solid var(--line);font-size:.9em;white-space:nowrap;
max-width:100%;overflow:hidden;text-overflow:ellipsis;vertical-align:bottom}
.badge{display:inline-block;padding:0 .35rem;border-radius:4px;font-size:.8em;
border:1px solid var(--line);color:var(--muted)}
.status-ok{color:var(--good)}.status-bad{color:var(--bad)}
pre{white-space:pre-wrap;word-break:break-word;margin:.2rem 0;font-size:.85em}
svg.chart{width:100%;height:auto;max-width:720px;display:block;background:var(--card);
border:1px solid var(--line);border-radius:6px}
svg.chart text{font-size:11px;fill:var(--muted)}
svg.chart .grid{stroke:var(--line);stroke-width:1}
.legend{font-size:.85em;color:var(--muted)}.legend span{margin-right:1rem}
.error{border-left:4px solid var(--bad);padding:.6rem 1rem;background:var(--card)}
td.h2h{text-align:center;min-width:4.5rem}td.h2h small{display:block;color:var(--muted)}
footer{max-width:1100px;margin:2rem auto;padding:0 1rem;color:var(--muted);font-size:.85em}
@media (max-width:600px){body{font-size:14px}main{padding:.6rem}th,td{padding:.25rem .4rem}
h1{font-size:1.25rem}}
"""


def esc(value: Any) -> str:
    """HTML-escaped text of any value (``None`` is an empty string)."""
    return "" if value is None else html.escape(str(value), quote=True)


def href(root: str, *parts: str) -> str:
    """A relative link: ``root`` then each path part URL-quoted (bot names may hold spaces)."""
    return esc(root + "/".join(quote(p, safe="") for p in parts))


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


def link(root: str, kind: str, key: str | int, text: Any) -> str:
    """``<a>`` to a page under ``kind/``, e.g. ``link(root, "bot", "alpha", "alpha")``."""
    folder, name = page_path(kind, key)
    return f'<a href="{href(root, folder, name)}">{esc(text)}</a>'


def page(title: str, body: str, root: str, games: Sequence[str] = (),
         head: str = "") -> str:
    """A whole page: viewport meta, inline CSS, the navigation bar and ``body``."""
    nav = [f'<a class="brand" href="{href(root, "index.html")}">Arena</a>']
    nav += [link(root, "leaderboard", g, g) for g in games]
    nav.append(f'<a href="{href(root, "tournaments.html")}">tournaments</a>')
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
        f"<title>{esc(title)} · Arena</title>"
        "<link rel=\"icon\" href=\"data:,\">"  # no favicon request
        f"<style>{CSS}</style>{head}</head><body>"
        f"<header class=\"top\"><nav>{''.join(nav)}</nav></header>"
        f"<main>{body}</main>"
        "<footer>Arena: read-only views of the arena database.</footer></body></html>\n")


def error_page(status: int, message: str, root: str = "", games: Sequence[str] = ()) -> str:
    """A clear page for a bad request: the status and one sentence, never a traceback."""
    titles = {400: "Bad request", 403: "Forbidden", 404: "Not found",
              405: "Method not allowed", 500: "Server error", 503: "Try again soon"}
    title = titles.get(status, "Error")
    body = (f"<h1>{status} · {esc(title)}</h1><div class=\"error\" id=\"error\">"
            f"<p>{esc(message)}</p></div>"
            f"<p><a href=\"{href(root, 'index.html')}\">Back to the start page</a></p>")
    return page(f"{status} {title}", body, root, games)


Column = tuple[str, str, Callable[[dict[str, Any]], str] | None]
"""(key, heading, cell renderer returning HTML or None for the escaped value)."""


def table(rows: Iterable[dict[str, Any]], columns: Sequence[Column], *, numeric: Iterable[str] = (),
          table_id: str = "", row_attrs: Callable[[dict[str, Any]], str] | None = None,
          empty: str = "Nothing yet.") -> str:
    """An HTML table in a horizontal scroller; ``numeric`` columns are right-aligned."""
    rows = list(rows)
    if not rows:
        return f'<p class="muted">{esc(empty)}</p>'
    nums = set(numeric)
    head = "".join(f'<th class="num" scope="col">{esc(h)}</th>' if k in nums
                   else f'<th scope="col">{esc(h)}</th>' for k, h, _ in columns)
    lines = []
    for row in rows:
        cells = []
        for key, _, render in columns:
            content = render(row) if render else esc(row.get(key))
            cells.append(f'<td class="num">{content}</td>' if key in nums else f"<td>{content}</td>")
        attrs = (" " + row_attrs(row)) if row_attrs else ""
        lines.append(f"<tr{attrs}>{''.join(cells)}</tr>")
    ident = f' id="{esc(table_id)}"' if table_id else ""
    return (f'<div class="scroll"><table{ident}><thead><tr>{head}</tr></thead>'
            f"<tbody>{''.join(lines)}</tbody></table></div>")


def num(value: Any, digits: int = 2) -> str:
    """A number with ``digits`` decimals; blank for None."""
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return esc(value)


def progress(done: int, total: int) -> str:
    """A small bar and "done/total" text."""
    share = 0 if total <= 0 else min(100, round(100 * done / total))
    return (f'<span class="bar" role="img" aria-label="{share}%"><span style="width:{share}%">'
            f"</span></span><span class=\"progress\">{int(done)}/{int(total)}</span>")


def when(value: str | None) -> str:
    """An ISO 8601 UTC time shortened to "2026-01-31 12:34:56 UTC", the full value as a
    tooltip (the zone is shown: a reader's own clock may be hours away)."""
    if not value:
        return ""
    return (f'<time datetime="{esc(value)}" title="{esc(value)}" style="white-space:nowrap">'
            f"{esc(value[:10])} {esc(value[11:19])} UTC</time>")


def status(value: str) -> str:
    """A seat status, green when ``ok``."""
    cls = "status-ok" if value == "ok" else "status-bad"
    return f'<span class="{cls}">{esc(value)}</span>'
