"""``arena serve`` and ``arena export-html``: the web pages over the database
(docs/web.md), served read-only or written as static files."""

from __future__ import annotations

from pathlib import Path

import click

from arena.web import LimitError, ServeLimits, export_html, is_loopback, make_server
from leaderboard.store import StoreError, StoreReader

from .options import db_option


def _open(db_path: Path) -> StoreReader:
    try:
        return StoreReader(db_path)
    except StoreError as err:
        raise click.ClickException(str(err)) from None


@click.command("serve")
@db_option
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on (loopback by default: only this machine).")
@click.option("--port", type=click.IntRange(0, 65535), default=8000, show_default=True,
              help="Port to listen on (0: any free port).")
@click.option("--max-connections", type=click.IntRange(1, 100_000),
              default=ServeLimits.max_connections, show_default=True,
              help="Connections served at once (lowered to fit the open-file limit); "
                   "when all are taken, the one idle longest is closed for a newcomer.")
@click.option("--request-timeout", type=click.FloatRange(0.1, 3600),
              default=ServeLimits.request_timeout_s, show_default=True,
              help="Seconds a client has to send a whole request (line, headers, body).")
@click.option("--idle-timeout", type=click.FloatRange(0.1, 3600),
              default=ServeLimits.idle_timeout_s, show_default=True,
              help="Seconds a kept-alive connection may wait for its next request.")
def serve(db_path: Path, host: str, port: int, max_connections: int,
          request_timeout: float, idle_timeout: float) -> None:
    """Serve the leaderboards, bots, head-to-head tables, tournaments and replays as a
    read-only web site. The database is opened read-only, so a running tournament
    can go on writing to it. Slow and idle clients are cut off and connections are
    capped (docs/web.md, "Limits"). Ctrl-C stops the server."""
    _open(db_path).close()  # a clear error now for a missing or foreign database
    limits = ServeLimits(max_connections, request_timeout, idle_timeout)
    try:
        server = make_server(db_path, host, port, limits=limits)
    except LimitError as err:
        raise click.ClickException(str(err)) from None
    except OSError as err:
        raise click.ClickException(f"cannot listen on {host}:{port}: {err.strerror}") \
            from None
    bound_host, bound_port = str(server.server_address[0]), int(server.server_address[1])
    shown = f"[{bound_host}]" if ":" in bound_host else bound_host
    click.echo(f"serving {db_path} read-only at http://{shown}:{bound_port}/ "
               "(Ctrl-C stops)")
    cap = server.slots.cap
    click.echo(f"at most {cap} connection{'s' if cap != 1 else ''} at once, "
               f"{request_timeout:g} s to send a request, {idle_timeout:g} s idle",
               err=True)
    if not is_loopback(host):
        click.echo(f"warning: {host} is reachable from other machines; the pages show "
                   "every bot's results and fault logs", err=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


@click.command("export-html")
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path))
@db_option
def export(directory: Path, db_path: Path) -> None:
    """Write every page into DIRECTORY as static files (no server needed: open
    DIRECTORY/index.html, or copy the folder to any web host)."""
    store = _open(db_path)
    try:
        count = export_html(store, directory)
    except StoreError as err:
        raise click.ClickException(str(err)) from None
    except OSError as err:  # a folder that cannot be made or written
        where = f" ({err.filename})" if err.filename else ""
        raise click.ClickException(f"cannot write the pages to {str(directory)!r}: "
                                   f"{err.strerror or err}{where}") from None
    finally:
        store.close()
    click.echo(f"wrote {count} pages to {directory}; open {directory / 'index.html'}")
