"""The one interface that every game engine implements.

A game is a state machine over *joint actions*. At every moment the state says
which seats must act now (:meth:`Game.to_act`): one seat is an ordinary turn,
several seats are a simultaneous decision (RULES.md C3); the two look the same
to the caller. Each acting seat has :meth:`~Game.legal_actions` and a
:meth:`~Game.default_action` (what the referee plays for it on a timeout, RULES.md
C6). :meth:`Game.apply` takes one action per acting seat and returns the events
that happened; every event says which seats may see it. :meth:`Game.view` is the
censored observation of one seat, :meth:`Game.full_view` the omniscient one for
replays. When :attr:`Game.over` is true, :attr:`Game.result` holds the ranks
(1 = best, ties shared, RULES.md C5), the scores and the reason.

Actions, views and events are plain JSON-able data: they go over the wire to
bots written in any language. The engines import nothing else of Arena's.
"""

from __future__ import annotations

import difflib
import json
import math
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, NamedTuple

from .errors import (
    ConfigError,
    GameOverError,
    IllegalActionError,
    MalformedActionError,
)
from .meta import GameInfo, GameType
from .rng import GameRandom

Action = Any
"""An action is a JSON value: a string such as ``"GO"`` or a small object."""


class Event(NamedTuple):
    """Something that happened, with the seats allowed to see it.

    ``to is None`` means public. A tuple lists the seats that may see the event;
    the empty tuple means nobody sees it during play (for example the hidden
    value of a reward token): it exists only in the omniscient replay log.

    Immutable, as a frozen dataclass was, but a tuple: a frozen dataclass's
    ``__init__`` sets each field through ``object.__setattr__``, three times slower,
    and a game emits several events per step (issue 20: a twentieth of a short
    game's referee time went to making them).
    """

    type: str
    data: Mapping[str, Any]
    to: tuple[int, ...] | None = None

    def visible_to(self, seat: int) -> bool:
        """Whether ``seat`` may see this event during play (:func:`seat_sees`)."""
        return seat_sees(self.to, seat)

    def to_json(self) -> dict[str, Any]:
        """The event as one flat JSON object: ``type``, then ``to`` if private, then the data."""
        # One dict display, not a dict and an update (every event is converted once).
        if self.to is None:
            return {"type": self.type, **self.data}
        return {"type": self.type, "to": list(self.to), **self.data}


_make_event = tuple.__new__
"""``_make_event(Event, (type, data, to))``: an Event without the Python-level
``__new__`` of a NamedTuple, for the several events of every step (issue 20)."""


def seat_sees(to: Sequence[int] | None, seat: int | None) -> bool:
    """The one visibility rule (RULES.md C4): whether an event addressed ``to`` is in
    ``seat``'s view. Public events (``to is None``) are in every view, private ones in
    their seats' views; ``seat=None``, the full view of a replay, sees every event.

    The referee's delivery (:meth:`Event.visible_to`), the replays and the narration of
    stored events (:func:`referee.history.visible`) all decide with this function.
    """
    return seat is None or to is None or seat in to


_JSON_NAMES: dict[type, str] = {int: "an integer", float: "a number", str: "a string",
                                list: "a list", dict: "an object", bool: "true or false",
                                type(None): "null"}


def did_you_mean(word: Any, known: Iterable[str]) -> str:
    """``" (did you mean 'stop-me'?)"`` for a near miss of one of ``known``, else ``""``.

    A typo of a game or option name is the commonest wrong input of a new user
    (issue 13 B, outsider); the list of known names follows in the same error.
    """
    if not isinstance(word, str):
        return ""
    close = difflib.get_close_matches(word.lower(), list(known), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def quote_value(value: Any) -> str:
    """A refused option value in JSON words, cut to 80 characters: ``the string "True"``.

    A value that JSON cannot hold as it is (a tuple, a set: only a Python caller can pass
    one) is quoted as Python writes it, so the message never shows another value."""
    text = json.dumps(value, ensure_ascii=True) if _is_json(value) else repr(value)
    text = text if len(text) <= 80 else text[:77] + "..."
    return f"the string {text}" if isinstance(value, str) else text


def _is_json(value: Any) -> bool:
    """Whether ``value`` is made only of what JSON reads back as itself."""
    if value is None or isinstance(value, (str, bool, int)):
        return True
    if isinstance(value, float):
        return math.isfinite(value)  # NaN and the infinities are not JSON
    if isinstance(value, list):
        return all(_is_json(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _is_json(v) for k, v in value.items())
    return False


@dataclass(frozen=True, slots=True)
class Option:
    """A game option: a component list or house-rule constant with its RULES.md default."""

    default: Any
    help: str
    types: tuple[type, ...] = field(default=())

    def describe(self) -> str:
        """What a value must be, for errors: ``like 4``, or the JSON types when the
        default alone would mislead (``null`` for a cap that may also be an integer)."""
        # JSON words, not Python's: "like False" sent a new user to type `True`, which
        # the command line reads as a string (issue 13 B, outsider).
        if not self.types:
            like = json.dumps(self.default)
            like = like if len(like) <= 60 else like[:57] + "..."
            return f"{_JSON_NAMES.get(type(self.default), 'JSON')} (JSON), like {like}"
        return " or ".join(_JSON_NAMES.get(t, t.__name__) for t in self.types) + " (JSON)"

    def accepts(self, value: Any) -> bool:
        """Whether ``value`` has an acceptable JSON type (bool is never an int here)."""
        types = self.types or (type(self.default),)
        if isinstance(value, bool) and bool not in types:
            return False
        return isinstance(value, types)


@dataclass(frozen=True, slots=True)
class Result:
    """The end of a game: why it ended, and per seat a rank, a score and details."""

    reason: str
    ranks: tuple[int, ...]
    scores: tuple[int | float, ...]
    details: tuple[Mapping[str, Any], ...]

    def to_json(self) -> dict[str, Any]:
        """The result as a JSON object."""
        return {
            "reason": self.reason,
            "ranks": list(self.ranks),
            "scores": list(self.scores),
            "details": [dict(d) for d in self.details],
        }


def shared_ranks(keys: Sequence[Any]) -> list[int]:
    """Ranks from comparable keys, higher is better: ``1 + #strictly better`` (RULES.md C5)."""
    return [1 + sum(1 for other in keys if other > key) for key in keys]


def clone_json(value: Any) -> Any:
    """A deep copy of JSON data (dicts, lists, scalars), several times faster than deepcopy.

    Views hand out copies so that no caller can reach into the engine's state.
    """
    kind = type(value)
    if kind is dict:
        return {k: clone_json(v) for k, v in value.items()}
    if kind is list:
        return [clone_json(v) for v in value]
    return value


_RESOLVED: dict[tuple[type, int, str], dict[str, Any]] = {}
"""Option sets already resolved (:meth:`Game.resolve_options`), at most _RESOLVED_MAX."""
_RESOLVED_MAX = 256


def _plain_json(value: Any) -> bool:
    """Whether ``value`` is JSON data of exactly the types JSON gives (no subclasses,
    no tuples, no bools where a number is meant), with string keys and finite numbers."""
    kind = type(value)
    if kind is dict:
        return all(type(k) is str and _plain_json(v) for k, v in value.items())
    if kind is list:
        return all(_plain_json(v) for v in value)
    if kind is float:
        return math.isfinite(value)
    return kind in (str, int, bool) or value is None


def canonical_json(value: Any) -> str:
    """Compact, key-ordered JSON: the form in which logs are compared byte for byte."""
    return json.dumps(value, separators=(",", ":"), sort_keys=True, ensure_ascii=False)


class Game(ABC):
    """Base class of every game engine. Subclasses fill in the rules.

    Create a game with ``Cls(players, seed, options, rig=...)``. ``options`` override
    the defaults in :attr:`option_specs`; ``rig`` fixes named shuffles and draws for
    tests (see :mod:`referee.games.rng`). The game owns its :class:`GameRandom`.
    """

    id: ClassVar[str]
    name: ClassVar[str]
    min_players: ClassVar[int]
    max_players: ClassVar[int]
    option_specs: ClassVar[Mapping[str, Option]]
    action_help: ClassVar[str]
    """A one-line description of the action format, quoted in malformed-action errors."""
    game_type: ClassVar[GameType]
    """What the game declares about its views and score (see :mod:`referee.games.meta`)."""

    def __init__(
        self,
        players: int,
        seed: int,
        options: Mapping[str, Any] | None = None,
        *,
        rig: Mapping[str, Sequence[Any]] | None = None,
    ) -> None:
        self._start(players, seed, self.resolve_options(players, options), rig)

    def _start(self, players: int, seed: int, options: dict[str, Any],
               rig: Mapping[str, Sequence[Any]] | None) -> None:
        """Set the game up with ``options`` already resolved (its own copy)."""
        self.options: dict[str, Any] = options
        self.players = players
        self.seed = seed
        self.rng = GameRandom(seed, rig)
        self.log: list[Event] = []
        self.decisions = 0
        self.steps = 0
        self.max_decisions = self.decision_bound(players, self.options)
        self._result: Result | None = None
        self._setup()

    # ----------------------------------------------------------- configuration
    @classmethod
    def default_options(cls) -> dict[str, Any]:
        """A fresh copy of every option's default."""
        return {k: clone_json(o.default) for k, o in cls.option_specs.items()}

    @classmethod
    def resolve_options(cls, players: int, options: Mapping[str, Any] | None) -> dict[str, Any]:
        """Check the player count and merge ``options`` over the defaults, or raise ConfigError.

        The same count and options give the same result, so it is kept (issue 20: a
        match creates a game for each of its games, and for a short game the checks
        were a tenth of the referee's work); each caller gets its own copy.
        """
        key = None
        # Only plain JSON is kept, by its repr (which tells 1, 1.0 and True apart, as the
        # options' checks may): a subclass or a tuple is checked anew every time.
        if type(players) is int and (options is None or _plain_json(options)):
            key = (cls, players, repr(options or {}))
        if key is not None and (known := _RESOLVED.get(key)) is not None:
            return clone_json(known)
        merged = cls._resolve_options(players, options)
        if key is not None:
            if len(_RESOLVED) >= _RESOLVED_MAX:
                _RESOLVED.clear()
            _RESOLVED[key] = clone_json(merged)
        return merged

    @classmethod
    def _resolve_options(cls, players: int, options: Mapping[str, Any] | None) -> dict[str, Any]:
        if isinstance(players, bool) or not isinstance(players, int):
            raise ConfigError(f"{cls.id}: the number of players must be an integer, got {players!r}")
        low, high = cls.player_range(options or {})
        if not low <= players <= high:
            raise ConfigError(
                f"{cls.id}: cannot play with {players!r} players; "
                f"this game takes {low} to {high} players"
            )
        merged = cls.default_options()
        for key, value in (options or {}).items():
            spec = cls.option_specs.get(key)
            if spec is None:
                raise ConfigError(
                    f"{cls.id}: unknown option {key!r}{did_you_mean(key, cls.option_specs)}; "
                    f"known options: {', '.join(cls.option_specs)}"
                )
            if not spec.accepts(value):
                raise ConfigError(
                    f"{cls.id}: option {key!r} must be {spec.describe()}, "
                    f"got {quote_value(value)}"
                )
            merged[key] = clone_json(value)
        cls.check_options(players, merged)
        return merged

    @classmethod
    def player_range(cls, options: Mapping[str, Any]) -> tuple[int, int]:
        """The player counts :meth:`resolve_options` accepts, given the caller's raw ``options``.

        By default ``(min_players, max_players)``: the registry's range, which the
        conformance suite plays without options. A game with a variant option that
        admits more seats (for example an unofficial 2-player game) widens the range
        here and refuses the variant without its option in :meth:`check_options`.
        """
        return cls.min_players, cls.max_players

    @classmethod
    def check_options(cls, players: int, options: dict[str, Any]) -> None:
        """Game-specific checks of a merged option set; raise ConfigError on a bad one."""

    @classmethod
    @abstractmethod
    def decision_bound(cls, players: int, options: Mapping[str, Any]) -> int:
        """The hard maximum of seat decisions in one game (RULES.md gives it per game)."""

    @classmethod
    @abstractmethod
    def step_bound(cls, players: int, options: Mapping[str, Any]) -> int:
        """The most steps (joint actions) one game can last (RULES.md, "Hard bound on length")."""

    @classmethod
    @abstractmethod
    def score_bounds(cls, players: int, options: Mapping[str, Any]) -> tuple[int | float, int | float]:
        """The lowest and the highest score a seat can end with, given merged ``options``."""

    @classmethod
    def game_info(cls, players: int, options: Mapping[str, Any] | None = None) -> GameInfo:
        """The bounds of one configuration (OpenSpiel's ``GameInfo``), or ConfigError.

        ``options`` are the caller's raw options, checked and merged over the defaults
        as a game would be created with them.
        """
        merged = cls.resolve_options(players, options)
        low, high = cls.player_range(options or {})
        allowed = [n for n in range(low, high + 1) if cls._accepts(n, options)]
        min_score, max_score = cls.score_bounds(players, merged)
        return GameInfo(cls.id, players, min(allowed), max(allowed),
                        cls.step_bound(players, merged), cls.decision_bound(players, merged),
                        min_score, max_score)

    @classmethod
    def _accepts(cls, players: int, options: Mapping[str, Any] | None) -> bool:
        """Whether ``options`` can be played by ``players`` (a variant may need its option)."""
        try:
            cls.resolve_options(players, options)
        except ConfigError:
            return False
        return True

    # ------------------------------------------------------------- the rules
    @abstractmethod
    def _setup(self) -> None:
        """Deal and set up; may emit events and must leave a decision pending or end the game."""

    @abstractmethod
    def to_act(self) -> tuple[int, ...]:
        """The seats that must act now, in seat order; empty exactly when the game is over."""

    @abstractmethod
    def legal_actions(self, seat: int) -> list[Action]:
        """The legal actions of ``seat`` now (empty if it need not act)."""

    @abstractmethod
    def default_action(self, seat: int) -> Action:
        """What the referee plays for an acting ``seat`` that times out (RULES.md C6)."""

    @abstractmethod
    def is_well_formed(self, action: Action) -> bool:
        """Whether ``action`` has the shape of an action of this game (legal or not)."""

    @abstractmethod
    def _apply(self, actions: dict[int, Action]) -> None:
        """Carry out validated joint actions, emitting events, until the next decision or the end."""

    @abstractmethod
    def view(self, seat: int) -> dict[str, Any]:
        """The censored observation of ``seat``: only what that seat may know.

        A view is a read-only snapshot: parts that never change again (a finished
        round's record, say) may be shared with the engine rather than copied, since
        a view is built for every seat at every decision. Copy before mutating.
        """

    @abstractmethod
    def full_view(self) -> dict[str, Any]:
        """The omniscient observation, for replays and debugging."""

    def public_view(self) -> dict[str, Any]:
        """What every seat sees alike, and so what a spectator may see while the game
        runs (issue 19 §3): a seat's view without the game's ``private_keys``, the keys
        that may differ between seats (RULES.md C4; the conformance suite checks that
        every other key is the same in every seat's view). A game whose private key has
        a public part (stop-me's table: which gangsters lie there, not the cards on
        them) adds that part; it must be contained in every seat's view."""
        view = self.view(0)
        for key in self.game_type.private_keys:
            view.pop(key, None)
        return view

    @abstractmethod
    def _standings(self) -> tuple[list[Any], list[int | float], list[dict[str, Any]]]:
        """Per seat: a ranking key (higher is better), a score and details, for :meth:`_finish`."""

    @abstractmethod
    def components(self) -> dict[str, list[Any]]:
        """Every physical component, by kind, wherever it is now (hand, pile, table, box...).

        The conformance suite checks at every decision point that each kind's multiset
        never changes: cards and tokens are moved, never created or destroyed.
        """

    @abstractmethod
    def resample_hidden(self, seat: int, seed: int) -> Game:
        """A copy that ``seat`` cannot tell apart from this state, with every hidden fact redrawn.

        Everything ``seat`` knows (its own cards, the public table and history) stays
        as it is; what it cannot know (other seats' cards, deck orders, hidden token
        values, future randomness) is drawn afresh from ``seed``, consistent with the
        public history. The conformance suite checks ``view(seat)`` is unchanged.
        """

    # --------------------------------------------------------- the machinery
    @property
    def over(self) -> bool:
        """Whether the game has ended."""
        return self._result is not None

    @property
    def result(self) -> Result:
        """The result of an ended game."""
        if self._result is None:
            raise GameOverError(f"{self.id}: the game is not over yet; no result")
        return self._result

    def apply(self, actions: Mapping[int, Action],
              legal: Mapping[int, list[Action]] | None = None) -> list[Event]:
        """Apply one action for every seat in :meth:`to_act` and return the new events.

        ``legal`` may give seats' :meth:`legal_actions` lists at this state, as the
        caller already has them (the referee does: issue 20), so that they are not
        made again; each action is still checked against them.

        Raises MalformedActionError for input that is not an action of this game
        (or a mapping whose keys are not integer seats),
        IllegalActionError for a legal-looking action the rules forbid now or for
        a wrong set of seats, and GameOverError after the end. Nothing changes
        when an error is raised.
        """
        if self._result is not None:
            raise GameOverError(
                f"{self.id}: the game is over ({self._result.reason}); cannot apply {actions!r}"
            )
        # Every check below runs on every step, so each is written for speed (issue 20):
        # a plain dict skips the ABC check, and plain loops cost less than generators.
        if type(actions) is not dict and not isinstance(actions, Mapping):
            raise MalformedActionError(
                f"{self.id}: joint actions must map seat to action, got {actions!r}"
            )
        for seat in actions:
            if type(seat) is not int:
                raise MalformedActionError(
                    f"{self.id}: seats must be integers, got {list(actions)!r}"
                )
        acting = self.to_act()
        if type(actions) is dict:
            # A dict's keys are what it iterates, so the same count and every acting seat
            # among them is the same set; another Mapping may answer for seats it does
            # not iterate (found by review), so it is compared as it iterates.
            wrong = len(actions) != len(acting)
            for seat in acting:
                wrong = wrong or seat not in actions
        else:
            wrong = sorted(actions) != list(acting)
        if wrong:
            raise IllegalActionError(
                f"{self.id}: seats {sorted(actions)!r} acted, but seats {list(acting)!r} must act now"
            )
        well_formed = self.is_well_formed
        for seat in acting:
            action = actions[seat]
            if not well_formed(action):
                raise MalformedActionError(
                    f"{self.id}: seat {seat}: {action!r} is not an action of this game "
                    f"({self.action_help})"
                )
            allowed = legal.get(seat) if legal is not None else None
            if allowed is None:
                allowed = self.legal_actions(seat)
            if action not in allowed:
                raise IllegalActionError(
                    f"{self.id}: seat {seat}: {action!r} is not legal now; legal: {allowed!r}"
                )
        start = len(self.log)
        self.decisions += len(acting)
        self.steps += 1
        self._apply(dict(actions))  # the engine's own: the caller may reuse its mapping
        if self._result is None and self.decisions >= self.max_decisions:
            # A safety net: every game's own caps end it long before this bound.
            self._finish("decision_limit")
        return self.log[start:]

    def _emit(self, type_: str, to: tuple[int, ...] | None = None, **data: Any) -> None:
        """Append an event to the log (``to=None``: public)."""
        self.log.append(_make_event(Event, (type_, data, to)))

    def _finish(self, reason: str) -> None:
        """End the game: rank the seats from :meth:`_standings` and emit ``game_over``."""
        keys, scores, details = self._standings()
        ranks = shared_ranks(keys)
        self._result = Result(reason, tuple(ranks), tuple(scores), tuple(details))
        self._emit("game_over", reason=reason, ranks=ranks, scores=list(scores),
                   details=[dict(d) for d in details])

    def check_seat(self, seat: int) -> None:
        """Raise ConfigError unless ``seat`` is a seat of this game."""
        if type(seat) is int and 0 <= seat < self.players:
            return  # the common case first: every view and legal list asks (issue 20)
        if isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < self.players:
            raise ConfigError(f"{self.id}: no seat {seat!r} in a {self.players}-player game")

    def events_for(self, seat: int) -> list[Event]:
        """The events ``seat`` has been allowed to see so far."""
        return [e for e in self.log if e.visible_to(seat)]

    def log_json(self) -> list[dict[str, Any]]:
        """The full (omniscient) event log as JSON objects."""
        return [e.to_json() for e in self.log]

    def describe(self) -> dict[str, Any]:
        """The configuration of this game: id, players, seed and options."""
        return {"game": self.id, "players": self.players, "seed": self.seed, "options": self.options}

    @classmethod
    def info(cls) -> dict[str, Any]:
        """Registry information: id, name, player counts and default options with help."""
        return {
            "id": cls.id,
            "name": cls.name,
            "min_players": cls.min_players,
            "max_players": cls.max_players,
            "options": {k: {"default": o.default, "help": o.help} for k, o in cls.option_specs.items()},
        }
