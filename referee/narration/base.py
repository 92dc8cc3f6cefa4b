"""The narrator every game's narration builds on: seat names, decisions, the generic
sentence of an event no game narrates, and the end of the game.

A :class:`Narrator` reads one perspective's events in order, as that perspective saw
them: it is only ever handed the events the perspective may see (RULES.md C4, by
:func:`referee.history.visible`) and its own decisions, so that a sentence, or a round
summary built from many events, can say nothing the perspective was not told. It is
stateful for that reason (a round summary adds up the round's events), and pure: no
input or output, plain strings out.

A sentence is plain text. The bot names in it come from uploaders: whoever shows a
sentence escapes it for its medium (the web sets it as text, the terminal through
:func:`referee.text.printable`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

ORDINALS = ("1st", "2nd", "3rd")


def ordinal(rank: int) -> str:
    """``1st``, ``2nd``, ``3rd``, ``4th``..."""
    return ORDINALS[rank - 1] if 1 <= rank <= 3 else f"{rank}th"


def value(v: Any) -> str:
    """A JSON value in words: lists comma-separated, dicts as ``key value``."""
    if isinstance(v, list):
        return ", ".join(value(x) for x in v) if v else "none"
    if isinstance(v, dict):
        return ", ".join(f"{k} {value(x)}" for k, x in v.items())
    if v is None:
        return "none"
    if isinstance(v, bool):
        return "yes" if v else "no"
    return str(v)


def words(identifier: Any) -> str:
    """An engine's identifier as words: ``instant_win`` -> ``instant win``."""
    return str(identifier).replace("_", " ")


def sentence(text: str) -> str:
    """``text`` with its first letter capitalised (a seat's name may open a sentence)."""
    return text[:1].upper() + text[1:] if text else text


def count(n: int, one: str, many: str | None = None) -> str:
    """``1 card``, ``2 cards``; ``many`` for an irregular plural."""
    return f"{n} {one if n == 1 else (many or one + 's')}"


class Narrator:
    """Sentences for one game from one perspective (the module docstring).

    ``names`` holds each seat's bot name. A game's narrator names its events' sentences
    in methods ``on_TYPE(event) -> str`` and its actions in :meth:`action`; an event it
    does not know, or one whose fields are not what it expects (a game stored by an
    older engine), gets the generic sentence, so that narration never fails."""

    game = ""

    def __init__(self, names: Sequence[str]) -> None:
        self.names = list(names)
        self._summaries: list[str] = []

    # ------------------------------------------------------------------ names
    def bot(self, seat: Any) -> str:
        """A seat's bot name (``seat N`` if it is unknown)."""
        if isinstance(seat, int) and 0 <= seat < len(self.names):
            return self.names[seat]
        return f"seat {seat}"

    def short(self, seat: Any) -> str:
        """A seat in a list of seats: its bot's name where no other seat has that bot,
        else ``seat N`` (two copies of one bot are told apart)."""
        name = self.bot(seat)
        return name if self.names.count(name) == 1 else f"seat {seat}"

    def who(self, seat: Any) -> str:
        """``seat 2 (sneaky)``."""
        if isinstance(seat, int) and 0 <= seat < len(self.names):
            return f"seat {seat} ({self.names[seat]})"
        return f"seat {seat}"

    def seats(self, seats: Sequence[Any]) -> str:
        """``seat 1 (a) and seat 3 (b)``; ``nobody`` for none."""
        named = [self.who(s) for s in seats]
        if not named:
            return "nobody"
        return named[0] if len(named) == 1 else ", ".join(named[:-1]) + " and " + named[-1]

    # -------------------------------------------------------------- decisions
    def action(self, action: Any, step_events: Sequence[Mapping[str, Any]]) -> str:
        """What a seat decides, as a verb phrase after "decides to" (a game overrides
        it); ``step_events`` are the events the decision's step caused."""
        return f"play {value(action)}"

    def decision(self, seat: int, action: Any, by: str = "bot",
                 step_events: Sequence[Mapping[str, Any]] = ()) -> str:
        """``Seat 2 (sneaky) decides to lay ROB10``, marked when the referee chose for
        it (``by == "default"``: a fault or a timeout, RULES.md C3)."""
        try:
            phrase = self.action(action, step_events)
        except (KeyError, TypeError, ValueError, IndexError, AttributeError):
            phrase = f"play {value(action)}"
        mark = " (by default: the referee chose)" if by == "default" else ""
        return sentence(f"{self.who(seat)} decides to {phrase}{mark}")

    # ------------------------------------------------------------------ events
    def event(self, event: Mapping[str, Any]) -> str:
        """The sentence of one event; the generic one where the game has none."""
        method = getattr(self, "on_" + str(event.get("type", "")), None)
        if method is not None:
            try:
                return sentence(method(event))
            except (KeyError, TypeError, ValueError, IndexError, AttributeError):
                pass
        return self.generic(event)

    def feed(self, event: Mapping[str, Any]) -> tuple[str, list[str]]:
        """The sentence of the next event in order, and the summaries it ends (a round's,
        the game's): what a game adds with :meth:`summarise`."""
        self._summaries = []
        text = self.event(event)
        try:
            self.summarise(event)
        except (KeyError, TypeError, ValueError, IndexError, AttributeError):
            pass
        return text, self._summaries

    def summarise(self, event: Mapping[str, Any]) -> None:
        """Keep what a summary needs from ``event``, and :meth:`summary` one when it ends
        a round; the game's end is summarised here for every game."""
        if event.get("type") == "game_over":
            self.summary(self.final(event))

    def summary(self, text: str) -> None:
        """Add a summary to the ones the event being fed ends."""
        self._summaries.append(sentence(text))

    @staticmethod
    def generic(event: Mapping[str, Any]) -> str:
        """``type: key value, ...``: an event as its fields say it."""
        fields = "; ".join(f"{k} {value(v)}" for k, v in event.items() if k not in ("type", "to"))
        return f"{words(event.get('type', 'event'))}: {fields}" if fields else \
            words(event.get("type", "event"))

    # --------------------------------------------------------------- the end
    def on_game_over(self, event: Mapping[str, Any]) -> str:
        return f"The game is over ({words(event['reason'])})"

    def final(self, event: Mapping[str, Any]) -> str:
        """The standings: ``Final: 1st seat 0 (a) with 6, 2nd ...``; shared ranks shown."""
        ranks, scores = event["ranks"], event["scores"]
        order = sorted(range(len(ranks)), key=lambda s: (ranks[s], s))
        return "Final standings: " + "; ".join(
            f"{ordinal(ranks[s])} {self.who(s)} with {value(scores[s])}" for s in order)
