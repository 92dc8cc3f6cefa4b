"""``arena worker``, ``arena workers``, and the executor options of every command that
plays matches (issue 17 §1): ``--executor local|dask --scheduler URL`` and TLS.

Dask is an optional dependency (``pip install 'arena[distributed]'``): it is imported
only when a command asks for it, and its absence is one clear error.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

import click

from arena import executors, progress

from .common import echo_json

F = TypeVar("F", bound=Callable[..., Any])

ENV = "ARENA_DASK_SCHEDULER"
_INSTALL = "Dask is not installed here: pip install 'arena[distributed]'"


@dataclass(frozen=True)
class ExecutorChoice:
    """Where a command's matches play: the options of :func:`executor_options`."""

    kind: str = "local"
    scheduler: str | None = None
    tls: tuple[str | None, str | None, str | None] = (None, None, None)


def _tls_options(func: F) -> F:
    for flag, text in reversed((
        ("--tls-ca-file", "The CA certificate that signed the cluster's certificates."),
        ("--tls-cert", "This process's certificate (PEM)."),
        ("--tls-key", "This process's private key (PEM)."),
    )):
        func = click.option(flag, type=click.Path(dir_okay=False), help=text)(func)
    return func


def executor_options(func: F) -> F:
    """``--executor``, ``--scheduler`` (or ``ARENA_DASK_SCHEDULER``) and the TLS files,
    handed to the command as one ``executor_choice``."""

    @functools.wraps(func)
    def wrapper(*args: Any, executor: str, scheduler: str | None, tls_ca_file: str | None,
                tls_cert: str | None, tls_key: str | None, **kwargs: Any) -> Any:
        ctx = click.get_current_context()
        given = ctx.get_parameter_source("scheduler") == click.core.ParameterSource.COMMANDLINE
        if executor == "local" and given:
            raise click.UsageError("--scheduler is for --executor dask")
        if executor == "dask" and not scheduler:
            raise click.UsageError(f"--executor dask needs --scheduler tcp://HOST:PORT "
                                   f"(or {ENV})")
        choice = ExecutorChoice(executor, scheduler, (tls_ca_file, tls_cert, tls_key))
        return func(*args, executor_choice=choice, **kwargs)

    wrapped: Any = _tls_options(wrapper)
    wrapped = click.option("--scheduler", envvar=ENV, metavar="URL",
                           help=f"The Dask scheduler of --executor dask, tcp://HOST:PORT or "
                                f"tls://HOST:PORT (or set {ENV}).")(wrapped)
    return click.option("--executor", type=click.Choice(["local", "dask"]), default="local",
                        show_default=True,
                        help="local: worker processes on this machine (--workers); dask: "
                             "the workers of a Dask cluster (docs/distributed.md).")(wrapped)


LOCAL = ExecutorChoice()
"""The default: this machine's worker processes."""


@contextmanager
def executor(choice: ExecutorChoice, workers: int | None, label: str,
             every: float = progress.EVERY_S) -> Iterator[executors.Executor]:
    """The executor ``choice`` names, connected, closed at the end; ClickException if it
    cannot be made (no Dask, no scheduler, bad TLS files). On a cluster, the workers
    and what each plays are reported on stderr at the start and every ``every`` seconds
    while that changes (issue 17 §1)."""
    if choice.kind == "local":
        yield executors.for_workers(workers)
        return
    if workers is not None:
        raise click.UsageError("--workers is for --executor local: a Dask cluster plays as "
                               "many matches as its workers have slots")
    try:
        from arena.distributed.cluster import ClusterError, report, security, watching
        from arena.distributed.cluster import workers as connected
        from arena.distributed.executor import DaskExecutor
    except ImportError:
        raise click.ClickException(_INSTALL) from None
    assert choice.scheduler is not None
    try:
        ex = DaskExecutor(choice.scheduler, security(*choice.tls), label=label)
        found = connected(ex.client())
    except ClusterError as err:
        raise click.ClickException(str(err)) from None
    click.echo(f"on the Dask cluster of {choice.scheduler}:", err=True)
    shown = report(found, ex.label)
    for line in shown:
        click.echo(line, err=True)
    try:
        with watching(ex.client(), ex.label, lambda line: click.echo(line, err=True), every,
                      shown):
            yield ex
    finally:
        ex.close()


@click.command("worker")
@click.option("--scheduler", envvar=ENV, required=True, metavar="URL",
              help=f"The Dask scheduler, tcp://HOST:PORT or tls://HOST:PORT (or {ENV}).")
@click.option("--slots", type=click.IntRange(1, 256), default=1, show_default=True,
              help="Matches played at once (one thread and one MATCH resource each).")
@click.option("--sandbox", type=click.Choice(["required", "none"]), default="required",
              show_default=True,
              help="required: refuse to start without bubblewrap and cgroups; none: run "
                   "bots unsandboxed, on purpose (trusted bots only; such a worker takes "
                   "only matches run with --sandbox none).")
@click.option("--cache", type=click.Path(file_okay=False),
              help="The folder of bots fetched by hash [default: ~/.cache/arena/bots].")
@click.option("--name", help="The worker's name on the cluster.")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="The address to listen on: loopback unless the cluster spans machines "
                   "(then a private network's, with TLS).")
@_tls_options
def worker(scheduler: str, slots: int, sandbox: str, cache: str | None, name: str | None,
           host: str, tls_ca_file: str | None, tls_cert: str | None,
           tls_key: str | None) -> None:
    """Start a Dask worker that plays Arena's matches, until Ctrl-C or SIGTERM.

    It checks the sandbox first, advertises MATCH=SLOTS (and SANDBOX=SLOTS), fetches
    each bot version once by its content hash and builds folder bots once."""
    try:
        from arena.distributed.cluster import ClusterError, check_url, security
        from arena.distributed.serve import serve
        from arena.distributed.worker import ArenaPlugin, WorkerRefused
    except ImportError:
        raise click.ClickException(_INSTALL) from None
    try:
        check_url(scheduler)
        sec = security(tls_ca_file, tls_cert, tls_key, role="worker")
        plugin = ArenaPlugin(sandbox, cache)
    except (ClusterError, WorkerRefused) as err:
        raise click.ClickException(str(err)) from None
    # A worker's log is its operator's record, as Dask's own INFO lines are: the bots it
    # fetched and built, the matches it stopped.
    arena_log = logging.getLogger("arena")
    arena_log.setLevel(min(logging.INFO, logging.getLogger().getEffectiveLevel()))
    click.echo(f"arena worker: {slots} slots, sandbox {sandbox}, bots cached in "
               f"{plugin.cache_root}; scheduler {scheduler}", err=True)
    try:
        serve(scheduler, slots, plugin, name, host, sec)
    except (OSError, TimeoutError) as err:
        raise click.ClickException(f"the worker stopped: {err}") from None


@click.command("workers")
@click.option("--scheduler", envvar=ENV, required=True, metavar="URL",
              help=f"The Dask scheduler, tcp://HOST:PORT or tls://HOST:PORT (or {ENV}).")
@_tls_options
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def workers_command(scheduler: str, tls_ca_file: str | None, tls_cert: str | None,
                    tls_key: str | None, as_json: bool) -> None:
    """List the workers connected to the scheduler, with their slots and the matches
    each is playing now."""
    try:
        from arena.distributed.cluster import ClusterError, connect, security, workers
    except ImportError:
        raise click.ClickException(_INSTALL) from None
    try:
        client = connect(scheduler, security(tls_ca_file, tls_cert, tls_key))
    except ClusterError as err:
        raise click.ClickException(str(err)) from None
    try:
        found = workers(client)
    finally:
        client.close()
    if as_json:
        echo_json([w.to_json() for w in found])
        return
    from leaderboard import views
    from referee.text import one_line, printable

    rows = [{"worker": one_line(w.address), "name": one_line(w.name), "slots": w.slots,
             "sandbox": "yes" if w.sandbox else "no",
             "in_flight": printable(", ".join(f"{f['run']} match {f['match']}"
                                              for f in w.in_flight) or "-")}
            for w in found]
    views.console().print(views.table(
        f"Workers of {printable(scheduler)}", rows,
        [("worker", "worker"), ("name", "name"), ("slots", "slots"), ("sandbox", "sandbox"),
         ("in_flight", "in flight")]))
    if not found:
        click.echo("no worker is connected", err=True)

