"""Game histories: a stored game loaded, replayed step by step, and dumped again.

A :class:`History` is what it takes to replay one game: the game's id, the number
of players, the seed, the options and the moves (per step, by seat, the action and
how it was chosen), as a game record stores them; optionally the omniscient event
log that was stored with them, and every other field of the record, kept as it
is. It is plain JSON-able data, modelled on PokerKit's hand histories::

    >>> h = History.load({"game": "stop-me", "players": 2, "seed": 7, "moves": []})
    >>> History.load(h.dump()) == h
    True

:meth:`History.replay` rebuilds the game on a fresh engine (RULES.md C2: the same
seed, options and actions give the same game) and gives, as OpenSpiel's
playthroughs do, every *position*: after the setup (step 0), then after each step.
At each position a :class:`Replay` holds the full view, each seat's view (exactly
the observation the referee sent that seat when it was asked), who had to act
and with which legal actions, and the events of the step. A stored move the
engine refuses (a void game, an engine changed since) ends the replay there; it is
recorded, never raised, so a viewer can still show what was stored.

Which events a seat may see is decided by the one rule of the engines,
:func:`referee.games.base.seat_sees` (RULES.md C4), through :func:`visible` for
events as stored; :func:`public_view` is a spectator's: the public events and the
result, nothing a seat alone saw (issue 15 §4). This module imports only ``referee.games``: the web viewer, the
``arena replay`` narration and anything else reading stored games build on it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from referee.games import Game, GameError, new_game
from referee.games.base import clone_json, seat_sees

OWN_FIELDS = ("game", "players", "seed", "options", "moves", "events")
"""The fields a history reads; a record's other fields are kept in :attr:`History.extra`."""


class HistoryError(ValueError):
    """A stored game that cannot be read as a history, or a question it cannot answer."""


def visible(event: Mapping[str, Any], seat: int | None) -> bool:
    """Whether a stored event (JSON, ``to`` only when private) is in ``seat``'s view;
    ``None``, the full view, sees all (RULES.md C4, :func:`seat_sees`)."""
    return seat_sees(event.get("to"), seat)


def seat_events(events: Iterable[Mapping[str, Any]], seat: int | None) -> list[Mapping[str, Any]]:
    """The stored events ``seat`` was allowed to see (all of them for ``None``)."""
    return [e for e in events if visible(e, seat)]


def public_events(events: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The stored events that every seat saw and nobody was addressed alone: those with
    no ``to`` (RULES.md C4). An event with ``to: []`` (hidden from everyone: a deck
    order, the token values of stop-me) or naming seats (a hand) is left out."""
    return [clone_json(dict(e)) for e in events if e.get("to") is None]


END_EVENT = "game_over"
"""The public event that ends every game, carrying its result (``Game._finish``): the
result each seat is sent at the end (the referee's ``end`` message)."""


@dataclass(frozen=True)
class PublicGame:
    """What a spectator may see of a stored game (issue 15 §4): the game, its number of
    seats and options, the public events in order, and the result.

    Built from the public events alone (:func:`public_view`): never the seed (which
    deals every hidden card), the moves (a seat's choices are private until an event
    reveals them, and the number of steps would tell forced moves from chosen ones,
    RULES.md C3), a seat's view or a private event.
    """

    game: str
    players: int
    options: Mapping[str, Any]
    events: tuple[Mapping[str, Any], ...]
    result: Mapping[str, Any] | None
    """The result every seat was sent at the end; None for a game that did not end."""

    def to_json(self) -> dict[str, Any]:
        """The public game as one JSON object (the public site's replay data)."""
        return {"game": self.game, "players": self.players,
                "options": clone_json(dict(self.options)),
                "events": [clone_json(dict(e)) for e in self.events],
                "result": None if self.result is None else clone_json(dict(self.result))}


def public_view(history: History) -> PublicGame:
    """A spectator's view of a stored game, for the public site when authors submit
    bots (issue 15 §4): the events every seat saw (:func:`public_events`) and the
    result, taken from the public ``game_over`` event. A pure function of the public
    events, so it can hold nothing of any seat's hidden state: tests/test_history.py
    changes every private event, the seed and the moves and finds the same view.

    A history stored without an event log gets the engine's (replayed from the seed:
    only its public events are kept); one the engine cannot replay shows no event.
    """
    if history.events is not None:
        events = public_events(history.events)
    else:
        replay = history.replay(())
        events = public_events(replay.events)
    ends = [e for e in events if e.get("type") == END_EVENT]
    result = ({k: v for k, v in ends[-1].items() if k != "type"} if ends else None)
    return PublicGame(history.game, history.players, clone_json(dict(history.options)),
                      tuple(events), result)


def seat_moves(moves: Iterable[Mapping[str, Any]], seat: int | None) -> list[Mapping[str, Any]]:
    """What a seat's record shows of the moves: its own decisions only, one entry per
    step where it acted (all moves for ``None``). Not the steps between them: how many
    there were would tell whether the others had a real choice (RULES.md C3)."""
    if seat is None:
        return list(moves)
    key = str(seat)
    return [{key: m[key]} for m in moves if key in m]


def _need(data: Mapping[str, Any], name: str, kind: type | tuple[type, ...], what: str) -> Any:
    value = data.get(name)
    if isinstance(value, bool) or not isinstance(value, kind):
        raise HistoryError(f"a stored game's {name!r} must be {what}, got {value!r:.80}")
    return value


@dataclass(frozen=True)
class History:
    """A stored game: its configuration and moves, the stored event log, the rest as stored.

    ``moves`` are as a game record stores them: one object per step, mapping each
    acting seat (a string, as JSON keys are) to ``{"action": ..., "by": ..., "ms": ...}``;
    only ``action`` is needed to replay. ``events`` is the stored omniscient event log,
    or ``None`` when none was stored. ``extra`` holds every other field of the record
    (``seats``, ``reason``, ``index``, ...), given back unchanged by :meth:`dump`.
    """

    game: str
    players: int
    seed: int
    options: Mapping[str, Any] = field(default_factory=dict)
    moves: tuple[Mapping[str, Any], ...] = ()
    events: tuple[Mapping[str, Any], ...] | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        clash = sorted(set(self.extra) & set(OWN_FIELDS))
        if clash:
            raise HistoryError(f"extra fields {clash} are fields of the history itself")

    # ------------------------------------------------------------- load, dump
    @classmethod
    def load(cls, data: Mapping[str, Any], *, players: int | None = None,
             options: Mapping[str, Any] | None = None) -> History:
        """A history from a stored game: a :meth:`dump`, or a game record's ``replay_json``.

        A record leaves two fields implicit: the number of players is its number of
        ``seats``, and the options are the match's, which the caller passes as
        ``options`` (the defaults when omitted). ``players`` and ``options`` given here
        must agree with the data when it has them. Raises HistoryError naming the
        field that is missing or of the wrong type; the moves' contents are checked
        only when replayed, where a refused move ends the replay (:class:`Replay`).
        """
        if not isinstance(data, Mapping):
            raise HistoryError(f"a stored game must be a JSON object, got {data!r:.80}")
        data = dict(data)
        seats = data.get("seats")
        if isinstance(seats, list):
            if "players" not in data:
                data["players"] = len(seats)
            elif data["players"] != len(seats):
                raise HistoryError(f"the stored game has {data['players']!r:.20} players but "
                                   f"{len(seats)} seats")
        for name, given in (("players", players), ("options", options)):
            if given is None:
                continue
            if name in data and data[name] != given:
                raise HistoryError(f"the stored game's {name} {data[name]!r:.80} differ from "
                                   f"the {name} given, {given!r:.80}")
            data[name] = given
        game = _need(data, "game", str, "a game id (a string)")
        count = _need(data, "players", int, "a number of players (or the record's seats)")
        seed = _need(data, "seed", int, "an integer")
        opts = data.get("options")
        opts = {} if opts is None else opts
        if not isinstance(opts, Mapping):
            raise HistoryError(f"a stored game's 'options' must be an object, got {opts!r:.80}")
        moves = data.get("moves", [])
        if not isinstance(moves, list) or not all(isinstance(m, Mapping) for m in moves):
            raise HistoryError("a stored game's 'moves' must be a list of objects, one per step, "
                               f"got {moves!r:.80}")
        events = data.get("events")
        if events is not None and (not isinstance(events, list)
                                   or not all(isinstance(e, Mapping) for e in events)):
            raise HistoryError(f"a stored game's 'events' must be a list of objects, got "
                               f"{events!r:.80}")
        extra = {k: clone_json(v) for k, v in data.items() if k not in OWN_FIELDS}
        return cls(game, count, seed, clone_json(dict(opts)),
                   tuple(clone_json(dict(m)) for m in moves),
                   None if events is None else tuple(clone_json(dict(e)) for e in events),
                   extra)

    def dump(self) -> dict[str, Any]:
        """The history as one JSON object: :meth:`load` gives it back equal.

        Loaded from a game record, it is that record with ``players`` and ``options``
        made explicit: every stored field comes back unchanged.
        """
        out: dict[str, Any] = {**clone_json(dict(self.extra)), "game": self.game,
                               "players": self.players, "seed": self.seed,
                               "options": clone_json(dict(self.options)),
                               "moves": [clone_json(dict(m)) for m in self.moves]}
        if self.events is not None:
            out["events"] = [clone_json(dict(e)) for e in self.events]
        return out

    # ----------------------------------------------------------------- replay
    def joint_actions(self) -> list[dict[int, Any]]:
        """Per step, the joint action to apply (seat numbers as integers); HistoryError
        for a move that is not ``{seat: {"action": ...}}``."""
        return [_joint(step, move) for step, move in enumerate(self.moves, 1)]

    def new_game(self) -> Game:
        """A fresh engine for this game, as set up before the first step (GameError if
        the configuration is refused: an unknown game, a bad option)."""
        return new_game(self.game, self.players, self.seed, self.options)

    def states(self) -> Iterator[Game]:
        """The engine after the setup, then after each step: one engine, advancing.

        Strict, unlike :meth:`replay`: a move the engine refuses raises HistoryError
        naming its step. Copy what you keep (views are snapshots already)."""
        game = self.new_game()
        yield game
        for step, move in enumerate(self.moves, 1):
            try:
                game.apply(_joint(step, move))
            except GameError as err:
                raise HistoryError(f"step {step} of the stored game cannot be replayed: "
                                   f"{err}") from err
            yield game

    def replay(self, perspectives: Iterable[int | None] | None = None) -> Replay:
        """Rebuild the game position by position, keeping the views of ``perspectives``
        (a seat number, or ``None`` for the full view; default: the full view and every
        seat). Never raises for what was stored: see :class:`Replay`."""
        wanted = [None, *range(self.players)] if perspectives is None else list(perspectives)
        for p in wanted:
            if p is not None and (isinstance(p, bool) or not isinstance(p, int)
                                  or not 0 <= p < self.players):
                raise HistoryError(f"{self.game} game with {self.players} seats has no seat "
                                   f"{p!r}; seats are 0 to {self.players - 1}")
        return Replay.build(self, tuple(dict.fromkeys(wanted)))

    def replayed(self) -> History:
        """This history with the event log the engine gives when it replays the moves:
        equal to this one exactly when the stored log is the engine's (HistoryError
        when a move cannot be replayed)."""
        game = None
        for game in self.states():
            pass
        assert game is not None  # states() yields at least the setup
        return History(self.game, self.players, self.seed, self.options, self.moves,
                       tuple(game.log_json()), self.extra)


def _joint(step: int, move: Mapping[str, Any]) -> dict[int, Any]:
    """Step ``step``'s stored move as a joint action, or HistoryError quoting it."""
    try:
        return {int(s): m["action"] for s, m in move.items()}
    except (TypeError, ValueError, KeyError, AttributeError):
        raise HistoryError(f"step {step}'s stored move must map each seat number to "
                           f'{{"action": ...}}, got {move!r:.120}') from None


@dataclass(frozen=True)
class Position:
    """The game at one moment: after the setup (``step`` 0) or after step ``step``.

    ``to_act`` are the seats asked here, with their ``legal`` actions (for the seats
    among the replay's perspectives); both are empty at the end, and where the replay
    stopped. The events that happened to reach this position are
    ``Replay.events[start:end]``. ``views`` holds the views of the replay's
    perspectives (``None``: the full view); a view is a read-only snapshot.
    """

    step: int
    to_act: tuple[int, ...]
    legal: Mapping[int, list[Any]]
    start: int
    end: int
    views: Mapping[int | None, Mapping[str, Any]]


@dataclass
class Replay:
    """A history replayed: every position with its views, events and decisions.

    ``events`` is the stored event log when the history has one (the narrative as
    recorded), else the engine's. ``error`` says why no engine could be built (then
    there is one position, with no views); ``failed_step`` is the step whose stored
    move the engine refused, and ``failure`` why: the replay stops there, and that
    last position repeats the views before it. ``matches_events`` tells whether the
    engine's log equals the stored one (False when the engine has changed since).
    """

    history: History
    perspectives: tuple[int | None, ...]
    events: list[Mapping[str, Any]]
    engine_events: list[dict[str, Any]] = field(default_factory=list)
    positions: list[Position] = field(default_factory=list)
    result: dict[str, Any] | None = None
    error: str | None = None
    failed_step: int | None = None
    failure: str | None = None

    @classmethod
    def build(cls, history: History, perspectives: tuple[int | None, ...]) -> Replay:
        """Replay ``history`` keeping ``perspectives``' views (see :meth:`History.replay`)."""
        stored = history.events
        out = cls(history, perspectives, list(stored) if stored is not None else [])
        try:
            game = history.new_game()
        except GameError as err:
            out.error = str(err)
            out.positions.append(Position(0, (), {}, 0, len(out.events), {}))
            return out
        ends = [len(game.log)]
        out.positions.append(_position(game, 0, perspectives))
        for step, move in enumerate(history.moves, 1):
            try:
                game.apply(_joint(step, move))
            except Exception as err:  # noqa: BLE001 - a stored move refused: the replay stops
                out.failed_step, out.failure = step, f"{type(err).__name__}: {err}"
                last = out.positions[-1]
                out.positions.append(Position(step, (), {}, 0, 0, last.views))
                ends.append(len(game.log))
                break
            out.positions.append(_position(game, step, perspectives))
            ends.append(len(game.log))
        out.engine_events = game.log_json()
        if stored is None:
            out.events = list(out.engine_events)
        out.result = game.result.to_json() if game.over else None
        # Each position's events are its slice of the log; the last position takes
        # whatever is left, so a stored log longer than the engine's is all shown.
        total = len(out.events)
        bounds = [min(e, total) for e in ends]
        bounds[-1] = total
        for i, pos in enumerate(out.positions):
            start = bounds[i - 1] if i else 0
            out.positions[i] = Position(pos.step, pos.to_act, pos.legal, min(start, bounds[i]),
                                        bounds[i], pos.views)
        return out

    # ---------------------------------------------------------------- reading
    @property
    def matches_events(self) -> bool:
        """Whether the engine's event log equals the stored one (True when none was stored)."""
        return self.history.events is None or self.engine_events == list(self.history.events)

    @property
    def moves(self) -> tuple[Mapping[str, Any], ...]:
        """The stored moves that were replayed, the refused one included."""
        if self.error is not None:
            return ()
        return self.history.moves[: self.failed_step or len(self.history.moves)]

    def view(self, step: int, seat: int | None = None) -> Mapping[str, Any]:
        """``seat``'s view (``None``: the full view) at position ``step``."""
        views = self._at(step).views
        if seat not in self.perspectives:
            raise HistoryError(f"seat {seat}'s views were not kept; replay with it among "
                               f"the perspectives (kept: {list(self.perspectives)})")
        if seat not in views:
            raise HistoryError(f"position {step} has no views: {self.error}")
        return views[seat]

    def full_view(self, step: int) -> Mapping[str, Any]:
        """The omniscient view at position ``step``."""
        return self.view(step, None)

    def events_at(self, step: int, seat: int | None = None) -> list[Mapping[str, Any]]:
        """The events of position ``step`` (the setup's at 0) that ``seat`` may see."""
        pos = self._at(step)
        return seat_events(self.events[pos.start:pos.end], seat)

    def observations(self, seat: int) -> list[dict[str, Any]]:
        """What the referee sends ``seat`` in a game played as stored, seat always asked:
        at each position where it must act, its view, its legal actions and the events
        it may see since its previous act (RULES.md C4); then, at the end, the events
        since its last act and the result (``None`` when the game did not end)."""
        if seat not in self.perspectives:
            self.view(0, seat)  # raises, naming the perspectives kept
        out: list[dict[str, Any]] = []
        since = 0
        for pos in self.positions:
            if seat in pos.to_act:
                out.append({"step": pos.step, "observation": pos.views[seat],
                            "legal": pos.legal[seat],
                            "events": seat_events(self.events[since:pos.end], seat)})
                since = pos.end
        out.append({"step": self.positions[-1].step, "end": True, "result": self.result,
                    "events": seat_events(self.events[since:], seat)})
        return out

    def _at(self, step: int) -> Position:
        if isinstance(step, bool) or not isinstance(step, int) or not (
                0 <= step < len(self.positions)):
            raise HistoryError(f"no position {step!r}: this replay has positions 0 to "
                               f"{len(self.positions) - 1}")
        return self.positions[step]


def _position(game: Game, step: int, perspectives: Sequence[int | None]) -> Position:
    """The position ``game`` is in after ``step`` steps (its events are placed later)."""
    acting = game.to_act()
    return Position(step, acting,
                    {s: game.legal_actions(s) for s in acting if s in perspectives}, 0, 0,
                    {p: game.full_view() if p is None else game.view(p) for p in perspectives})
