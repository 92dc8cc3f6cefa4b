"""The organiser's side of a Dask cluster: its address, its security, and what runs on it.

Dask runs whatever its clients submit (docs/distributed.md): a scheduler is for a
private network, with TLS. :func:`security` makes Dask's own
``distributed.security.Security`` from a CA and a certificate with its key; without
them, Dask's configuration (``DASK_DISTRIBUTED__COMM__TLS__...``) applies as usual.
"""

from __future__ import annotations

import os
import re
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from distributed import Client, Security

ENV = "ARENA_DASK_SCHEDULER"
"""The environment variable that gives the scheduler, as ``--scheduler`` does."""
MATCH_PREFIX = "arena-match-"
"""Every match task's key starts so: ``arena-match-LABEL-MATCH-TOKEN``."""

_URL = re.compile(r"(tcp|tls)://(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):([0-9]{1,5})")
_KEY = re.compile(re.escape(MATCH_PREFIX) + r"(.*)-([0-9]+)-[0-9a-f]{6}")


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
                                int(resources.get("MATCH", 0)),
                                bool(resources.get("SANDBOX", 0)),
                                sorted(flying, key=lambda f: (f["run"], f["match"]))))
    return out
