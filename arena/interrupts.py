"""Ctrl-C and SIGTERM that are never lost: every interrupt ends the process.

A Python signal handler runs in the main thread at the next bytecode, wherever that
is, and raises there: ``KeyboardInterrupt`` for SIGINT, ``SystemExit`` for SIGTERM.
In a few places the interpreter cannot let an exception out and drops it, printing
"Exception ignored in: ...": the callbacks ``os.fork`` runs around every fork (the
logging module's ``_releaseLock`` among them), ``__del__`` methods, weakref
finalisers. A signal that arrives during a fork is handled exactly there, because
the parent's first bytecode after the fork is such a callback. The referee forks a
supervisor per seat and a tournament worker forks them too, so under load a SIGTERM
of ``arena play`` was swallowed at a seat's start and the referee played on for a
hanging bot, and a worker whose organiser was killed (its parent-death SIGTERM lost
the same way) played on for nobody (issue 13 B3 and A10).

:func:`install` makes such a loss harmless: an interrupt dropped by the interpreter
(seen by :data:`sys.unraisablehook`) is sent again to the main thread a moment later,
when it runs ordinary code again and the exception can unwind. An interrupt that
unwinds normally is never sent twice, so clean-up on the way out is not cut short.
"""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

REDELIVER_S = 0.02
"""How long after a dropped interrupt it is sent again: enough for the main thread to
leave the callback that dropped it, short enough to be prompt."""


class Interrupt(SystemExit):
    """SIGTERM, unwinding as ``SystemExit(code)`` (so ``except SystemExit`` sees it)."""

    def __init__(self, code: int, signum: int) -> None:
        super().__init__(code)
        self.signum = signum


def install(on_term: Callable[[int], int] = lambda signum: 128 + signum,
            sigint: Any = signal.default_int_handler) -> None:
    """Make SIGTERM raise ``Interrupt(on_term(15))`` and SIGINT call ``sigint`` (by default
    raise ``KeyboardInterrupt``) in the main thread, and send either again if the
    interpreter drops its exception.

    Call it from the main thread (as :func:`signal.signal` requires).
    """

    def term(signum: int, frame: Any) -> None:
        raise Interrupt(on_term(signum), signum)

    signal.signal(signal.SIGTERM, term)
    signal.signal(signal.SIGINT, sigint)
    if getattr(sys.unraisablehook, "arena_interrupts", False):
        return  # already chained (a forked child inherits the hook)
    previous = sys.unraisablehook

    def hook(unraisable: Any) -> None:
        signum = _signal_of(unraisable.exc_value)
        if signum is not None:
            _redeliver(signum)
        previous(unraisable)

    hook.arena_interrupts = True  # type: ignore[attr-defined]
    sys.unraisablehook = hook


def _signal_of(exc: BaseException | None) -> int | None:
    """The signal whose handler raised ``exc``, if it is an interrupt."""
    if isinstance(exc, Interrupt):
        return exc.signum
    if isinstance(exc, KeyboardInterrupt):
        return signal.SIGINT
    return None


def _redeliver(signum: int) -> None:
    """Send ``signum`` to the main thread again, from a thread of its own, shortly.

    Not at once: the hook runs inside the callback that dropped the exception, and the
    handler would run, and be dropped, there again.
    """
    main = threading.main_thread().ident
    if main is None:
        return
    timer = threading.Timer(REDELIVER_S, _send, (main, signum))
    timer.daemon = True
    timer.start()


def _send(thread: int, signum: int) -> None:
    try:
        signal.pthread_kill(thread, signum)
    except (OSError, ValueError):  # the main thread has ended: the process is exiting
        pass


@contextmanager
def deferred() -> Iterator[None]:
    """Hold Ctrl-C and SIGTERM back until the block is done, then deliver the first one
    that came, to the handlers in force before it (main thread only).

    For a step that must happen whole: ``arena play --db`` storing a finished game and
    counting it as reported, so that a signal between the two leaves no game stored
    but unreported (issue 19 §4)."""
    caught: list[int] = []
    signums = (signal.SIGINT, signal.SIGTERM)
    previous = {s: signal.signal(s, lambda signum, frame: caught.append(signum))
                for s in signums}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        if caught:
            signal.raise_signal(caught[0])  # its handler raises here, as it would have
