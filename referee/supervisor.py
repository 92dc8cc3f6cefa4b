"""The per-seat supervisor: the only process that ever touches a bot's bytes.

Each seat of a bot program gets one supervisor process, forked by the referee.
The supervisor starts the bot, owns the seat's socket (bound on the seat's own
``ipc://`` path, where the bot's DEALER connects: one connection, never a
ROUTER, so no routing-id squatting can abort anything), or the bot's
stdin/stdout for a ``stdio`` bot, and checks everything the bot sends. It speaks
the ZeroMQ wire protocol itself (:mod:`referee.zmtp`), so every frame is
checked by its header before its body is kept. Only decoded, validated messages
reach the referee, over a pipe that no bot can reach. The supervisor's address
space is capped as well, so whatever a bot sends, the worst it can do is kill
its own supervisor: the referee records that as a crash of that seat (see
``../shared/notes/zeromq-sandbox-facts.md`` for the verified facts).

This module is the entry, :func:`supervise`, which picks the seat's transport:
:mod:`referee.supervisor_zmq` (:class:`ZmqSupervisor`) or
:mod:`referee.supervisor_stdio` (:class:`StdioSupervisor`). What they share, the
:class:`Supervisor` state machine and :class:`LaunchSpec`, is in
:mod:`referee.supervisor_base`; this module exports them too.

Referee to supervisor (the tagged commands of :mod:`referee.reports`, msgpack):
    Send(payload, await_seq)      pass ``payload`` (encoded JSON) to the bot; if
                                  ``await_seq`` is not None, an action with that seq is awaited
    Stop(bye)                     say goodbye (``bye``, optional), end the bot's process
                                  tree, exit

Supervisor to referee: the tagged reports of :mod:`referee.reports` (msgspec Structs,
msgpack-encoded, issue 14 §2), tagged as they were named when they were tuples:
    Greeted(name)                 "hello": a valid hello with the right token
    Refused(detail)               "no_show": a hello that was refused (the bot is ignored
                                  from then on)
    Acted(seq, action)            "action": the awaited action (stale and duplicate seqs
                                  are dropped)
    Faulted(kind, detail)         "fault": kind FaultKind.MALFORMED: not JSON, wrong shape,
                                  oversize, several frames, broken ZMTP (that connection
                                  is closed), flooding
    Exited(returncode, detail)    "exited": the bot's process ended

Reports never block the supervisor (issue 13 A3): they wait in a small queue while
the pipe is full (the referee reads a seat only while it waits for that seat), and
after the first fault of a decision, the faults until the next act are merged, per
kind, into one report whose detail counts them: ``"x37: <the first one's detail>"``.
"""

from __future__ import annotations

import faulthandler
import signal
from collections.abc import Sequence
from multiprocessing.connection import Connection

from .supervisor_base import LaunchSpec, Supervisor
from .supervisor_stdio import StdioSupervisor
from .supervisor_zmq import ZmqSupervisor

__all__ = ["LaunchSpec", "StdioSupervisor", "Supervisor", "ZmqSupervisor", "supervise"]


def supervise(conn: Connection, spec: LaunchSpec, close: Sequence[Connection] = ()) -> None:
    """The supervisor process's entry point (the target of a forked Process)."""
    for other in close:
        other.close()  # the referee's ends of other seats' pipes: not ours to hold
    faulthandler.disable()  # a supervisor killed by its bot dies quietly; the referee reports it
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the referee decides when we stop
    supervisor = (StdioSupervisor if spec.protocol == "stdio" else ZmqSupervisor)(conn, spec)
    try:
        supervisor.serve()
    finally:
        supervisor.kill_bot()
        supervisor.drain_stderr(1.0)
        supervisor.reports.drain(2.0)  # the bot's exit, say, still waiting for room
