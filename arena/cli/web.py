"""``arena serve`` and ``arena export-html``: the web app over the database
(docs/web.md), served by uvicorn or written as static files."""

from __future__ import annotations

from pathlib import Path

import click
from click.core import ParameterSource

from arena.web import LimitError, ServeLimits, export_html, is_loopback, make_server
from arena.web.auth import SecretError, load_secret
from arena.web.competition import build_app
from arena.web.config import ConfigError, ServerConfig, load_config, with_overrides
from leaderboard.store import StoreError, StoreReader

from .options import db_option


def _open(db_path: Path) -> StoreReader:
    try:
        return StoreReader(db_path)
    except StoreError as err:
        raise click.ClickException(str(err)) from None


@click.command("serve")
@db_option
@click.option("--config", "config_path", type=click.Path(dir_okay=False, path_type=Path),
              default=None, help="An arena.toml with the server's settings (docs/server.md); "
                                 "the options given here override it.")
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
@click.option("--submissions/--no-submissions", default=False, show_default=True,
              help="Accounts, sign-in and uploads (issue 15); off: the public, read-only site.")
@click.option("--open-registration/--no-open-registration", default=False,
              show_default=True,
              help="With --submissions: anyone may make an account on a web form "
                   "(limited per address an hour: [limits] registrations_per_hour).")
@click.pass_context
def serve(ctx: click.Context, db_path: Path, config_path: Path | None, host: str, port: int,
          max_connections: int, request_timeout: float, idle_timeout: float,
          submissions: bool, open_registration: bool) -> None:
    """Serve the leaderboards, bots, head-to-head tables, tournaments and replays as a
    web site (read-only unless --submissions). The database is opened read-only for
    the pages, so a running tournament can go on writing to it. Slow and idle clients
    are cut off and connections are capped (docs/web.md, "Limits"). Ctrl-C stops the
    server."""
    config = _config(ctx, config_path, database=str(db_path), host=host, port=port,
                     max_connections=max_connections, request_timeout_s=request_timeout,
                     idle_timeout_s=idle_timeout, submissions=submissions,
                     open_registration=open_registration)
    if config.server.open_registration and not config.server.submissions:
        raise click.UsageError("--open-registration makes accounts for submitting bots: "
                               "it needs --submissions (or submissions = true)")
    _open(config.db_path).close()  # a clear error now for a missing or foreign database
    if config.server.submissions:
        try:  # a key file others may read is refused now, not at the first sign-in
            load_secret(config.secret_path)
        except SecretError as err:
            raise click.ClickException(str(err)) from None
    try:
        server = make_server(config, app=build_app(config))
    except LimitError as err:
        raise click.ClickException(str(err)) from None
    except OSError as err:
        where = f"{config.server.host}:{config.server.port}"
        raise click.ClickException(f"cannot listen on {where}: {err.strerror}") from None
    bound_host, bound_port = server.server_address
    shown = f"[{bound_host}]" if ":" in bound_host else bound_host
    mode = "with submissions" if config.server.submissions else "read-only"
    click.echo(f"serving {config.db_path} {mode} at http://{shown}:{bound_port}/ "
               "(Ctrl-C stops)")
    cap = server.cap
    click.echo(f"at most {cap} connection{'s' if cap != 1 else ''} at once, "
               f"{config.server.request_timeout_s:g} s to send a request, "
               f"{config.server.idle_timeout_s:g} s idle", err=True)
    if config.server.submissions:
        click.echo(f"accounts and uploads on: archives and bots in {config.data_path}, "
                   f"{config.jobs.workers} submission job{'s' if config.jobs.workers != 1 else ''}"
                   " at a time", err=True)
    if not is_loopback(config.server.host):
        click.echo(f"warning: {config.server.host} is reachable from other machines; the "
                   "pages show every bot's results and fault logs", err=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


def _config(ctx: click.Context, path: Path | None, **options: object) -> ServerConfig:
    """The settings: ``arena.toml`` (if given), then each option given on the command line
    (or ARENA_DB) over it; without a file, every option as it stands."""
    names = {"database": "db_path", "request_timeout_s": "request_timeout",
             "idle_timeout_s": "idle_timeout"}
    try:
        config = load_config(path)
        if path is not None:  # only what was given overrides the file
            options = {k: v for k, v in options.items()
                       if ctx.get_parameter_source(names.get(k, k))
                       not in (ParameterSource.DEFAULT, None)}
        return with_overrides(config, **options)
    except ConfigError as err:
        raise click.ClickException(str(err)) from None


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
