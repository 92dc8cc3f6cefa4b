"""The organiser's side of a Dask cluster: its address, its security, and what runs on it.

Dask runs whatever its clients submit (docs/distributed.md): a scheduler is for a
private network, with TLS. :func:`security` makes Dask's own
``distributed.security.Security`` from a CA and a certificate with its key; without
them, Dask's configuration (``DASK_DISTRIBUTED__COMM__TLS__...``) applies as usual.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from referee.text import one_line

if TYPE_CHECKING:
    from distributed import Client, Security

ENV = "ARENA_DASK_SCHEDULER"
"""The environment variable that gives the scheduler, as ``--scheduler`` does."""
MATCH_PREFIX = "arena-match-"
"""Every match task's key starts so: ``arena-match-LABEL-MATCH-TOKEN-TRY``."""

_URL = re.compile(r"(tcp|tls)://(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):([0-9]{1,5})")
_KEY = re.compile(re.escape(MATCH_PREFIX) + r"(.*)-([0-9]+)-[0-9a-f]{6}-[0-9]+")


class ClusterError(Exception):
    """A scheduler that cannot be used: a bad address, no connection, bad TLS files."""


def check_url(url: str) -> str:
    """``url`` if it is a scheduler's address, ``tcp://HOST:PORT`` or ``tls://HOST:PORT``;
    ClusterError quoting it otherwise."""
    match = _URL.fullmatch(url)
    if not match or not 0 < int(match.group(3)) < 65536:
        raise ClusterError(f"scheduler {url!r} is not an address like "
                           f"tcp://127.0.0.1:8786 or tls://HOST:8786")
    return url


def security(ca_file: str | None, cert: str | None, key: str | None,
             role: str = "client") -> Security | None:
    """Dask's TLS settings for ``role`` (``client`` or ``worker``) from a CA file and a
    certificate and key, all three or none (None: Dask's own configuration)."""
    given = [x for x in (ca_file, cert, key) if x]
    if not given:
        return None
    if len(given) != 3:
        raise ClusterError("TLS needs all three of --tls-ca-file, --tls-cert and --tls-key")
    for path in (ca_file, cert, key):
        assert path is not None
        if not os.path.isfile(path):
            raise ClusterError(f"TLS file {path!r}: no such file")
    from distributed import Security

    return Security(require_encryption=True, tls_ca_file=ca_file,
                    **{f"tls_{role}_cert": cert, f"tls_{role}_key": key})


def connect(url: str, sec: Security | None = None, timeout_s: float = 10.0) -> Client:
    """A client of the scheduler at ``url``; ClusterError if it cannot connect."""
    from distributed import Client

    check_url(url)
    if url.startswith("tls://") and sec is None:
        import dask.config
        from distributed import Security

        if not dask.config.get("distributed.comm.tls.ca-file", None):
            # Else Dask fails obscurely ("TLS expects a ssl_context"), after 20 s.
            raise ClusterError(f"{url!r} is a TLS address: give --tls-ca-file, --tls-cert "
                               f"and --tls-key (or Dask's distributed.comm.tls settings)")
        sec = Security()  # Dask's configuration, which names the files
    try:
        return Client(url, security=sec, timeout=timeout_s, set_as_default=False)
    except (OSError, TimeoutError, ValueError, TypeError) as err:
        raise ClusterError(f"cannot connect to the scheduler {url!r}: {err}") from None


@dataclass
class WorkerStatus:
    """One connected worker, as ``arena workers`` shows it."""

    address: str
    name: str
    slots: int
    sandbox: bool
    in_flight: list[dict[str, Any]] = field(default_factory=list)
    """Its match tasks now: ``{"run": LABEL, "match": N}`` each."""

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def workers(client: Client) -> list[WorkerStatus]:
    """The workers connected to ``client``'s scheduler, each with its matches in flight,
    sorted by address. A worker without ``MATCH`` slots is not an Arena worker: shown
    with 0 slots, as it gets no match."""
    info = client.scheduler_info(n_workers=-1).get("workers", {})
    processing = client.processing()
    out = []
    for address, w in sorted(info.items()):
        resources = w.get("resources", {})
        flying = []
        for key in processing.get(address, ()):
            match = _KEY.fullmatch(str(key))
            if match:
                flying.append({"run": match.group(1), "match": int(match.group(2))})
        out.append(WorkerStatus(address, str(w.get("name", address)),
                                _count(resources.get("MATCH", 0)),
                                bool(resources.get("SANDBOX", 0)),
                                sorted(flying, key=lambda f: (f["run"], f["match"]))))
    return out


def _count(value: Any) -> int:
    """A worker's advertised slots as a count: anything but a finite number (a worker
    may say ``MATCH=inf``) is 0, so one odd worker cannot end every organiser."""
    try:
        return max(0, int(value))
    except (TypeError, ValueError, OverflowError):
        return 0


JOIN_S = 2.0
"""How long the end of a run waits for the report's thread (seconds)."""

SHOWN = 20
"""At most this many workers are listed in a line of a run's cluster report; ``arena
workers`` lists them all."""


def report(found: Sequence[WorkerStatus], label: str) -> list[str]:
    """What the workers in ``found`` are doing, in lines: a heading, then one line per
    worker (at most :data:`SHOWN`) with the matches of run ``label`` it holds now,
    playing or queued (the scheduler gives a worker more matches than slots, so that
    none idles between two), and how many of other runs. Names are the operators'
    text: made printable here."""
    from referee.match import safe_label

    slots = sum(w.slots for w in found)
    flying = sum(len(w.in_flight) for w in found)
    heading = (f"{_plural(len(found), 'worker')} connected, "
               f"{_plural(slots, 'match slot')}, {flying} in flight (playing or queued)")
    lines = [heading]
    run = safe_label(label)  # a task key holds the label made safe (executor.submit)
    for w in found[:SHOWN]:
        ours = [f["match"] for f in w.in_flight if f["run"] == run]
        others = len(w.in_flight) - len(ours)
        doing = ", ".join([*([("matches " if len(ours) > 1 else "match ")
                              + ", ".join(map(str, ours))] if ours else []),
                           *([f"{others} of other runs"] if others else [])]) or "idle"
        sandbox = "sandbox" if w.sandbox else "no sandbox"
        lines.append(f"  {one_line(w.name)} {one_line(w.address)} ({_plural(w.slots, 'slot')}, "
                     f"{sandbox}): {doing}")
    if len(found) > SHOWN:
        lines.append(f"  and {len(found) - SHOWN} more (arena workers lists them all)")
    return lines


def _plural(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


@contextmanager
def watching(client: Client, label: str, echo: Callable[[str], None],
             every: float, first: Sequence[str] = ()) -> Iterator[None]:
    """While the block runs: every ``every`` seconds, if what the cluster's workers do has
    changed, ``echo`` :func:`report` of them (issue 17 §1: the organiser says which
    workers are connected and each one's matches in flight), from a thread, so that a
    long match does not silence it; ``first`` is the report already shown. A scheduler
    that does not answer is said once, never raised: the run itself notices a lost
    cluster."""
    stop = threading.Event()

    def tick() -> None:
        last = first
        while not stop.wait(every):
            try:
                now = report(workers(client), label)
            except Exception as err:  # noqa: BLE001 - a report must never end a run
                now = [one_line(f"the cluster's workers could not be listed: "
                             f"{type(err).__name__}: {err}")]
            if stop.is_set():  # the run ended while the scheduler was asked
                return
            if now != last:
                for line in now:
                    echo(line)
                last = now

    thread = threading.Thread(target=tick, daemon=True, name="arena-cluster-report")
    thread.start()
    try:
        yield
    finally:
        stop.set()
        # Not for ever: a scheduler that stopped answering holds the thread in its
        # call; it is a daemon, and says nothing once stopped.
        thread.join(timeout=JOIN_S)
