"""The Python bot SDK: write one function, call :func:`run`.

    from protocol.client import run

    def act(observation, legal):
        return legal[0]

    run(act, name="first-legal")

The SDK reads ``ARENA_ENDPOINT`` and ``ARENA_TOKEN`` (set by the referee), says
hello (again on each new connection, should ZeroMQ reconnect), then answers every ``act`` with what your function returns, until the
referee says ``bye``. Optional hooks ``on_start(message)`` and ``on_end(message)``
see the start and end of each game. It depends on pyzmq and the standard library
only, so a bot needs nothing else of Arena's.
"""

from __future__ import annotations

import json
import os
import sys
import traceback
from collections.abc import Callable
from typing import Any

import zmq

from protocol import PROTOCOL_VERSION

ActFn = Callable[[dict[str, Any], list[Any]], Any]
Hook = Callable[[dict[str, Any]], None]


class BotError(RuntimeError):
    """The bot cannot run: started outside Arena, or refused by the referee."""


def _log(text: str) -> None:
    print(f"[arena-sdk] {text}", file=sys.stderr, flush=True)


def run(
    act: ActFn,
    *,
    name: str = "",
    on_start: Hook | None = None,
    on_end: Hook | None = None,
    on_events: Callable[[list[dict[str, Any]]], None] | None = None,
    endpoint: str | None = None,
    token: str | None = None,
) -> None:
    """Play until the referee says ``bye``; ``act(observation, legal)`` returns an action.

    ``on_events(events)``, if given, first receives the game events that came with
    each ``act`` and ``end`` (everything this seat may see, piece by piece).

    ``endpoint`` and ``token`` default to the environment the referee sets. An
    exception raised by ``act`` is printed with its traceback and ends the bot
    (the referee records a crash), so bugs show instead of hiding.
    """
    endpoint = endpoint or os.environ.get("ARENA_ENDPOINT")
    token = token if token is not None else os.environ.get("ARENA_TOKEN")
    if not endpoint or token is None:
        raise BotError(
            "ARENA_ENDPOINT and ARENA_TOKEN are not set: a bot is started by the referee, "
            "for example `arena play stop-me ./my_bot.py builtin:random`"
        )
    context = zmq.Context()  # created here, after the process started, never before a fork
    sock = context.socket(zmq.DEALER)
    sock.setsockopt(zmq.LINGER, 0)
    # Every connection must begin with a hello, and ZeroMQ reconnects by itself after a
    # drop without saying it again: so it is said again at each new connection.
    monitor = sock.get_monitor_socket(zmq.EVENT_CONNECTED)
    poller = zmq.Poller()
    poller.register(sock, zmq.POLLIN)
    poller.register(monitor, zmq.POLLIN)
    connections = 0
    sock.connect(endpoint)
    try:
        name = (name or os.path.basename(sys.argv[0]))[:64]  # the protocol's limit
        hello = json.dumps({"type": "hello", "protocol": PROTOCOL_VERSION, "token": token,
                            "name": name}).encode()
        sock.send(hello)  # queued until the first connection, whose first message it is
        while True:
            ready = dict(poller.poll())
            if monitor in ready:
                monitor.recv_multipart()  # one event: a connection was made
                connections += 1
                if connections > 1:
                    sock.send(hello)
            if sock not in ready:
                continue
            message = json.loads(sock.recv())
            kind = message.get("type")
            if on_events and kind in ("act", "end") and message.get("events"):
                on_events(message["events"])
            if kind == "act":
                legal = message["legal"]
                action = act(message["observation"], legal)
                if action not in legal:
                    _log(f"act() returned {action!r}, which is not legal; legal: {legal!r}")
                sock.send(json.dumps({"type": "action", "seq": message["seq"],
                                      "action": action}).encode())
            elif kind == "start" and on_start:
                on_start(message)
            elif kind == "end" and on_end:
                on_end(message)
            elif kind == "error":
                _log(f"referee reports {message.get('code')}: {message.get('message')}")
                if message.get("code") in ("bad_token", "unsupported_protocol"):
                    raise BotError(f"refused by the referee: {message.get('message')}")
            elif kind == "bye":
                return
    except Exception:
        traceback.print_exc()
        raise
    finally:
        sock.disable_monitor()
        monitor.close(0)
        sock.close(0)
        context.term()
