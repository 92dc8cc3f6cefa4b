"""The conformance suite: every registered game, every allowed player count.

Written once against the engine interface (referee.games.base.Game); a new game
registered in referee.games.GAMES is picked up with no change here. Seeds come
from hypothesis, so a failure shrinks to a small seed that replays it exactly.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from referee.games import (
    GAMES,
    ConfigError,
    Game,
    GameInfo,
    GameMaker,
    GameOverError,
    IllegalActionError,
    MalformedActionError,
    canonical_json,
    new_game,
)
from referee.games.base import clone_json
from referee.games.rng import SplitMix64

CASES = [
    pytest.param(game_id, n, id=f"{game_id}-{n}p")
    for game_id, cls in GAMES.items()
    for n in range(cls.min_players, cls.max_players + 1)
]

seeds = st.integers(min_value=0, max_value=2**64 - 1)
FAST = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SLOW = settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def random_joint(game: Game, rng: SplitMix64) -> dict[int, Any]:
    """A uniformly random legal action for every seat that must act."""
    out = {}
    for seat in game.to_act():
        legal = game.legal_actions(seat)
        out[seat] = legal[rng.below(len(legal))]
    return out


def playout(game_id: str, players: int, seed: int, policy: str = "random") -> tuple[Game, list]:
    """Play one game to the end; return it and the joint actions played."""
    game = new_game(game_id, players, seed)
    rng = SplitMix64(seed ^ 0x5EED)
    history = []
    while not game.over:
        if policy == "random":
            joint = random_joint(game, rng)
        else:
            joint = {s: game.default_action(s) for s in game.to_act()}
        history.append(joint)
        game.apply(joint)
    return game, history


def roundtrip(value: Any) -> bool:
    """Whether ``value`` survives JSON unchanged (no tuples, no non-string keys, no NaN)."""
    return json.loads(json.dumps(value, allow_nan=False)) == value


def _multisets(game: Game) -> dict[str, Counter]:
    return {kind: Counter(map(repr, items)) for kind, items in game.components().items()}


# --------------------------------------------------------------------- playouts
@pytest.mark.slow
@pytest.mark.parametrize(("game_id", "players"), CASES)
@FAST
@given(seed=seeds)
def test_random_playout_respects_the_interface(game_id: str, players: int, seed: int) -> None:
    """Terminates within the bound; acting seats have legal actions and a legal default;
    cards and tokens are conserved; everything is JSON."""
    game = new_game(game_id, players, seed)
    rng = SplitMix64(seed)
    initial = _multisets(game)
    assert roundtrip(game.describe())
    while not game.over:
        acting = game.to_act()
        assert acting, "a game that is not over must have seats to act"
        assert list(acting) == sorted(set(acting))
        assert all(0 <= s < players for s in acting)
        for seat in range(players):
            legal = game.legal_actions(seat)
            if seat in acting:
                assert legal, f"seat {seat} must act but has no legal action"
                assert game.default_action(seat) in legal
                assert all(game.is_well_formed(a) for a in legal)
                assert roundtrip(legal)
            else:
                assert legal == []
            assert roundtrip(game.view(seat))
        assert roundtrip(game.full_view())
        assert _multisets(game) == initial, "components were created or destroyed"
        events = game.apply(random_joint(game, rng))
        assert all(roundtrip(e.to_json()) for e in events)
        assert game.decisions <= game.max_decisions
    assert game.to_act() == ()
    result = game.result
    assert result.reason != "decision_limit", "the game's own caps must end it first"
    assert len(result.ranks) == len(result.scores) == len(result.details) == players
    assert roundtrip(result.to_json())
    assert game.log[-1].type == "game_over" and game.log[-1].to is None
    # RULES.md C5: rank = 1 + number of strictly better seats; rank 1 always exists.
    assert min(result.ranks) == 1
    for seat in range(players):
        assert roundtrip(game.view(seat))
        assert result.ranks[seat] == 1 + sum(1 for r in result.ranks if r < result.ranks[seat])
    with pytest.raises(GameOverError):
        game.apply({})


@pytest.mark.parametrize(("game_id", "players"), CASES)
@SLOW
@given(seed=seeds)
def test_default_actions_alone_end_the_game(game_id: str, players: int, seed: int) -> None:
    """A table of bots that all time out (default actions) still ends within the bound."""
    game, _ = playout(game_id, players, seed, policy="default")
    assert game.decisions <= game.max_decisions
    assert game.result.reason != "decision_limit"


@pytest.mark.parametrize(("game_id", "players"), CASES)
@SLOW
@given(seed=seeds)
def test_same_seed_and_actions_give_the_same_log_byte_for_byte(
    game_id: str, players: int, seed: int
) -> None:
    first, history = playout(game_id, players, seed)
    replay = new_game(game_id, players, seed)
    for joint in history:
        replay.apply(joint)
    assert canonical_json(replay.log_json()) == canonical_json(first.log_json())
    assert replay.result == first.result


@pytest.mark.parametrize(("game_id", "players"), CASES)
@SLOW
@given(seed=seeds)
def test_a_view_never_changes_once_made(game_id: str, players: int, seed: int) -> None:
    """Views are read-only snapshots that may share with the engine only what never
    changes again (Game.view; issue 20): every view, public view (the live page diffs
    each against the one before) and full view made during a game still encodes as
    it did when made, once the game is over."""
    game = new_game(game_id, players, seed)
    rng = SplitMix64(seed)
    made: list[tuple[Any, str]] = []
    while not game.over:
        for value in [*(game.view(s) for s in range(players)), game.public_view(),
                      game.full_view()]:
            made.append((value, canonical_json(value)))
        game.apply(random_joint(game, rng))
    changed = [i for i, (value, text) in enumerate(made) if canonical_json(value) != text]
    assert changed == [], f"views {changed[:5]} of {len(made)} changed after they were made"


@pytest.mark.parametrize(("game_id", "players"), CASES)
def test_different_seeds_give_different_deals(game_id: str, players: int) -> None:
    """The seed really drives the randomness (a constant deal would pass the test above)."""
    logs = {canonical_json(new_game(game_id, players, seed).full_view()) for seed in range(8)}
    assert len(logs) > 1


# ---------------------------------------------------------------- hidden info
def find_leak(game: Game, seat: int, seed: int) -> str | None:
    """Redraw everything ``seat`` cannot know; its view and legal actions must not move.

    Returns a description of the leak, or None. A view that depended on another
    seat's hidden cards, a deck order or a hidden token would differ between the
    two indistinguishable states.
    """
    twin = game.resample_hidden(seat, seed)
    if twin.view(seat) != game.view(seat):
        mine, theirs = game.view(seat), twin.view(seat)
        keys = sorted(k for k in set(mine) | set(theirs) if mine.get(k) != theirs.get(k))
        return f"seat {seat}'s view changed with hidden information; keys {keys}"
    if game.over:
        return None
    if (seat in game.to_act()) != (seat in twin.to_act()):
        return f"whether seat {seat} must act depends on hidden information"
    if game.to_act() != twin.to_act():
        # RULES.md C3: who is asked must not depend on what this seat cannot know, or it
        # could tell from the time to its next act whether another seat had a choice.
        return (f"who must act, {list(game.to_act())}, depends on what seat {seat} cannot "
                f"know (RULES.md C3: the time to its next act would tell)")
    if twin.legal_actions(seat) != game.legal_actions(seat):
        return f"seat {seat}'s legal actions depend on hidden information"
    return None


def _check_every_step(game: Game, rng: SplitMix64) -> tuple[int, int]:
    """Play ``game`` out, checking every seat at every step for leaks.

    Returns how often a resample changed hidden state, and how often it changed
    what another seat sees: both must happen, or the check proves nothing.
    """
    changed_hidden = changed_other_view = 0
    while True:
        for seat in range(game.players):
            resample_seed = rng.next_u64()
            leak = find_leak(game, seat, resample_seed)
            assert leak is None, leak
            twin = game.resample_hidden(seat, resample_seed)
            changed_hidden += twin.full_view() != game.full_view()
            changed_other_view += any(
                twin.view(p) != game.view(p) for p in range(game.players) if p != seat
            )
        if game.over:
            return changed_hidden, changed_other_view
        game.apply(random_joint(game, rng))


@pytest.mark.slow
@pytest.mark.parametrize(("game_id", "players"), CASES)
@SLOW
@given(seed=seeds)
def test_no_view_depends_on_another_seats_hidden_information(
    game_id: str, players: int, seed: int
) -> None:
    _check_every_step(new_game(game_id, players, seed), SplitMix64(seed))


@pytest.mark.slow
@pytest.mark.parametrize(("game_id", "players"), CASES)
def test_resampling_really_changes_hidden_information(game_id: str, players: int) -> None:
    """Over a few games, resampling changes hidden state and other seats' views
    (a resample that changed nothing would make the leak check vacuous)."""
    hidden = others = 0
    for seed in range(3):
        h, o = _check_every_step(new_game(game_id, players, seed), SplitMix64(seed))
        hidden, others = hidden + h, others + o
    assert hidden > 0, "resample_hidden never changed anything hidden"
    assert others > 0, "resample_hidden never changed what another seat sees"


@pytest.mark.parametrize("game_id", list(GAMES))
def test_the_leak_check_catches_a_leaky_view(game_id: str) -> None:
    """A view that shows the other seats' private views must be caught by find_leak."""
    cls = GAMES[game_id]

    class Leaky(cls):  # type: ignore[misc, valid-type]
        def view(self, seat: int) -> dict[str, Any]:
            return {**super().view(seat), "peek": [cls.view(self, p) for p in range(self.players)]}

    game = Leaky(cls.min_players, 3)
    rng = SplitMix64(3)
    caught = False
    for _ in range(20):
        caught |= any(find_leak(game, s, rng.next_u64()) for s in range(game.players))
        if game.over:
            break
        game.apply(random_joint(game, rng))
    assert caught


@pytest.mark.parametrize(("game_id", "players"), CASES)
@SLOW
@given(seed=seeds)
def test_private_events_reach_only_their_seats(game_id: str, players: int, seed: int) -> None:
    game, _ = playout(game_id, players, seed)
    for event in game.log:
        if event.to is not None:
            assert all(0 <= s < players for s in event.to)
        seen = [s for s in range(players) if event.visible_to(s)]
        assert seen == (list(range(players)) if event.to is None else sorted(event.to))
        assert event in game.events_for(seen[0]) if seen else True


# ------------------------------------------------------------------- bad input
@pytest.mark.parametrize(("game_id", "players"), CASES)
@SLOW
@given(seed=seeds)
def test_a_game_maker_makes_exactly_the_game_of_new_game(
    game_id: str, players: int, seed: int
) -> None:
    """Issue 20: a match resolves its options once (GameMaker); each game it makes plays
    byte for byte as ``new_game``'s, with its own dict of the options, and the legal
    lists handed to ``apply`` change nothing. Its games share the option values, so
    playing, viewing and resampling one must change none of them."""
    first, history = playout(game_id, players, seed)
    make = GameMaker(game_id, players, {})
    pristine = clone_json(make.options)
    made = make(seed)
    assert made.options == make.options and made.options is not make.options
    for step, joint in enumerate(history):
        for s in range(players):
            made.view(s)
        made.public_view(), made.full_view(), made.components()
        if step % 7 == 0:
            made.resample_hidden(step % players, step).full_view()
        made.apply(joint, {s: made.legal_actions(s) for s in joint})
    assert make.options == pristine, "a game changed the options its maker shares"
    assert canonical_json(made.log_json()) == canonical_json(first.log_json())
    assert made.result == first.result
    with pytest.raises(ConfigError):
        GameMaker(game_id, players, {"no such option": 1})


class _Answering(Mapping):  # type: ignore[type-arg]
    """A mapping that iterates some seats but answers for every seat."""

    def __init__(self, data: dict[int, Any], default: Any) -> None:
        self.data, self.default = data, default

    def __getitem__(self, seat: int) -> Any:
        return self.data.get(seat, self.default)

    def __iter__(self) -> Any:
        return iter(self.data)

    def __len__(self) -> int:
        return len(self.data)


@pytest.mark.parametrize("game_id", GAMES)
def test_a_mapping_is_judged_by_the_seats_it_iterates(game_id: str) -> None:
    """Review of issue 20's faster checks: a Mapping that answers for a seat it does not
    iterate has acted with the seats it iterates, and is refused with nothing changed."""
    game = new_game(game_id, GAMES[game_id].min_players, 3)
    acting = game.to_act()
    joint = {s: game.default_action(s) for s in acting}
    wrong = dict(joint)
    del wrong[acting[0]]
    wrong[max(acting) + 100] = joint[acting[0]]
    before = canonical_json(game.full_view()), len(game.log), game.decisions
    with pytest.raises(IllegalActionError):
        game.apply(_Answering(wrong, joint[acting[0]]))
    assert (canonical_json(game.full_view()), len(game.log), game.decisions) == before


@pytest.mark.parametrize(("game_id", "players"), CASES)
def test_an_action_outside_the_given_legal_list_is_refused(game_id: str, players: int) -> None:
    """``apply(actions, legal)`` checks every action against the lists it is given."""
    game = new_game(game_id, players, 11)
    acting = game.to_act()
    good = {s: game.default_action(s) for s in acting}
    before = (canonical_json(game.full_view()), len(game.log), game.decisions)
    others = {s: [a for a in game.legal_actions(s) if a != good[s]] for s in acting}
    with pytest.raises(IllegalActionError, match="is not legal now"):
        game.apply(good, others)
    assert (canonical_json(game.full_view()), len(game.log), game.decisions) == before
    game.apply(good, {acting[0]: game.legal_actions(acting[0])})  # the others made anew


@pytest.mark.parametrize(("game_id", "players"), CASES)
def test_bad_joint_actions_are_refused_and_change_nothing(game_id: str, players: int) -> None:
    game = new_game(game_id, players, 11)
    before = (canonical_json(game.full_view()), len(game.log), game.decisions)
    acting = game.to_act()
    good = {s: game.default_action(s) for s in acting}
    garbage: list[Any] = [None, 1.5, [], {"nonsense": True}, "\x00", 10**100]
    for bad in garbage:
        with pytest.raises(MalformedActionError) as err:
            game.apply({**good, acting[0]: bad})
        assert repr(bad) in str(err.value)
    with pytest.raises(IllegalActionError):
        game.apply({s: a for s, a in good.items() if s != acting[0]})  # a seat missing
    with pytest.raises(IllegalActionError):
        game.apply({**good, players: good[acting[0]]})  # a seat that does not exist
    with pytest.raises(MalformedActionError):
        game.apply([good[s] for s in acting])  # type: ignore[arg-type]
    with pytest.raises(MalformedActionError, match="seats must be integers"):
        game.apply({str(s) if s == acting[0] else s: a for s, a in good.items()})
    assert (canonical_json(game.full_view()), len(game.log), game.decisions) == before


@pytest.mark.parametrize("game_id", list(GAMES))
def test_registry_information_is_complete(game_id: str) -> None:
    cls = GAMES[game_id]
    info = cls.info()
    assert info["id"] == game_id and info["name"]
    assert 2 <= info["min_players"] <= info["max_players"]
    assert roundtrip(info)
    assert info["options"], "every component list and house-rule constant is an option"
    assert all(o["help"] for o in info["options"].values())
    # The defaults, passed back explicitly, give the same game as no options at all.
    n = cls.min_players
    assert canonical_json(cls(n, 5, cls.default_options()).log_json()) == canonical_json(
        cls(n, 5).log_json()
    )


# ------------------------------------------------- declared type and info (issue 14 §6)
PUBLIC_PARTS = {"stop-me": {"table"}}
"""The private keys whose public part a game's public view keeps (stop-me: the gangsters
on the table, not the cards on them)."""


def contained(small: Any, big: Any) -> bool:
    """Whether ``small`` is part of ``big``: a dict's keys with contained values, a list
    of as many contained entries, or an equal value."""
    if isinstance(small, dict):
        return isinstance(big, dict) and all(k in big and contained(v, big[k])
                                             for k, v in small.items())
    if isinstance(small, list):
        return (isinstance(big, list) and len(small) == len(big)
                and all(contained(a, b) for a, b in zip(small, big, strict=True)))
    return bool(small == big)


def info_problems(game: Game, info: GameInfo) -> list[str]:
    """What in ``game``'s state now breaks its declared GameType or ``info``."""
    kind = type(game).game_type
    problems = []
    if not info.min_players <= game.players <= info.max_players:
        problems.append(f"{game.players} players outside {info.min_players}..{info.max_players}")
    if game.steps > info.max_steps:
        problems.append(f"{game.steps} steps, more than max_steps {info.max_steps}")
    if game.decisions > info.max_decisions:
        problems.append(f"{game.decisions} decisions, more than max_decisions {info.max_decisions}")
    views = [game.view(s) for s in range(game.players)]
    differ = {k for k in set().union(*views) if any(v.get(k, KeyError) != views[0].get(k, KeyError)
                                                    for v in views)}
    if not differ <= set(kind.private_keys):
        problems.append(f"keys {sorted(differ - set(kind.private_keys))} differ between seats' "
                        "views but are not declared private")
    public = game.public_view()
    for s, view in enumerate(views):
        # Issue 19 §3: a spectator sees nothing that some seat does not see alike.
        if not contained(public, view):
            problems.append(f"the public view is not contained in seat {s}'s view")
    if set(public) & set(kind.private_keys) - PUBLIC_PARTS.get(game.id, set()):
        problems.append(f"the public view holds private keys "
                        f"{sorted(set(public) & set(kind.private_keys))}")
    for where, view in [("full view", game.full_view()), *(
            (f"seat {s}'s view", v) for s, v in enumerate(views))]:
        for key in kind.seat_keys:
            value = view.get(key, [None] * game.players)
            if not (isinstance(value, list) and len(value) == game.players):
                problems.append(f"{where}: seat key {key!r} is not one entry per seat: {value!r}")
    if game.over:
        low, high = info.min_score, info.max_score
        if not all(low <= score <= high for score in game.result.scores):
            problems.append(f"scores {list(game.result.scores)} outside {low}..{high}")
    return problems


@pytest.mark.parametrize(("game_id", "players"), CASES)
@SLOW
@given(seed=seeds)
def test_played_games_keep_to_the_declared_type_and_info(
    game_id: str, players: int, seed: int
) -> None:
    """At every position: within the length bounds, only the private keys differ between
    seats, every seat key holds one entry per seat; at the end the scores are in scale."""
    game = new_game(game_id, players, seed)
    info = type(game).game_info(players, game.options)
    rng = SplitMix64(seed)
    while True:
        assert info_problems(game, info) == []
        if game.over:
            break
        game.apply(random_joint(game, rng))
    assert roundtrip(type(game).game_type.to_json())
    assert roundtrip(type(game).game_info(players).to_json())


def _key_census(game_id: str, seeds: range) -> tuple[set[str], set[str], set[str]]:
    """Over playouts of every player count: the keys that ever differed between seats'
    views, every key seen, and the keys that, wherever seen, held one entry per seat
    that does not name its seat (a dict with a "seat" names it)."""
    cls = GAMES[game_id]
    differ: set[str] = set()
    seen: set[str] = set()
    not_per_seat: set[str] = set()
    for n in range(cls.min_players, cls.max_players + 1):
        for seed in seeds:
            game, rng = new_game(game_id, n, seed), SplitMix64(seed)
            while True:
                views = [game.view(s) for s in range(n)]
                differ |= {k for k in set().union(*views)
                           if any(v.get(k, KeyError) != views[0].get(k, KeyError) for v in views)}
                for view in (*views, game.full_view()):
                    seen |= set(view)
                    not_per_seat |= {k for k, v in view.items() if not (
                        isinstance(v, list) and len(v) == n
                        and not any(isinstance(e, dict) and "seat" in e for e in v))}
                if game.over:
                    break
                game.apply(random_joint(game, rng))
    return differ, seen, seen - not_per_seat


@pytest.mark.parametrize("game_id", list(GAMES))
def test_the_declared_view_keys_are_exactly_the_ones_played(game_id: str) -> None:
    """Over a few games of every size, the private keys are exactly the keys that differed
    between seats' views, and the seat keys exactly the keys that always held one entry
    per seat (so a declaration can neither miss a key nor name one that never plays)."""
    kind = GAMES[game_id].game_type
    differ, seen, per_seat = _key_census(game_id, range(4))
    assert differ == set(kind.private_keys)
    assert per_seat == set(kind.seat_keys)
    assert set(kind.seat_keys) <= seen


@pytest.mark.parametrize("game_id", list(GAMES))
def test_the_info_check_catches_a_view_that_breaks_the_declaration(game_id: str) -> None:
    """A view with an undeclared seat-dependent key, and a shortened length bound, are
    both caught by info_problems (it would otherwise prove nothing)."""
    cls = GAMES[game_id]

    class Chatty(cls):  # type: ignore[misc, valid-type]
        def view(self, seat: int) -> dict[str, Any]:
            return {**super().view(seat), "whoami": seat}

        @classmethod
        def step_bound(cls, players: int, options: Any) -> int:
            return 1

    game = Chatty(cls.min_players, 3)
    info = Chatty.game_info(cls.min_players)
    problems = info_problems(game, info)
    assert any("'whoami'" in p for p in problems), problems
    game.apply(random_joint(game, SplitMix64(3)))
    if not game.over:
        game.apply(random_joint(game, SplitMix64(4)))
    assert any("max_steps 1" in p for p in info_problems(game, info))


@pytest.mark.parametrize("game_id", list(GAMES))
def test_the_info_check_catches_a_public_view_that_tells_a_secret(game_id: str) -> None:
    """A public view with one seat's own information, or the full view's, is caught."""
    cls = GAMES[game_id]

    class Leaky(cls):  # type: ignore[misc, valid-type]
        def public_view(self) -> dict[str, Any]:
            return self.view(0)

    class Omniscient(cls):  # type: ignore[misc, valid-type]
        def public_view(self) -> dict[str, Any]:
            return {**super().public_view(), **{k: v for k, v in self.full_view().items()
                                                if k not in self.view(1)}}

    for leaky in (Leaky, Omniscient):
        game = leaky(max(3, cls.min_players), 3)
        assert info_problems(game, leaky.game_info(game.players)), leaky.__name__
    sound = cls(max(3, cls.min_players), 3)
    assert not info_problems(sound, cls.game_info(sound.players))


@pytest.mark.parametrize(("game_id", "players"), CASES)
def test_game_info_agrees_with_the_engine(game_id: str, players: int) -> None:
    cls = GAMES[game_id]
    info = cls.game_info(players)
    game = new_game(game_id, players, 1)
    assert info.max_decisions == game.max_decisions
    assert info.max_steps <= info.max_decisions  # every step asks at least one seat
    assert (info.min_players, info.max_players) == (cls.min_players, cls.max_players)
    assert info.min_score <= info.max_score


VARIANTS = [
    pytest.param("stand-and-deliver", 6, {"encounter_talk": True}, id="sad-talk-6p"),
    pytest.param("dagens-brott", 2, {"unofficial_2p": True}, id="db-2p"),
    pytest.param("stop-me", 4, {"max_rounds": 2, "max_failed_arrests_per_round": 2}, id="sm-caps"),
]


@pytest.mark.parametrize(("game_id", "players", "options"), VARIANTS)
@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=seeds)
def test_option_variants_keep_to_their_game_info(
    game_id: str, players: int, options: dict[str, Any], seed: int
) -> None:
    """The bounds follow the options that change a game's length (the talk step, the
    2-player variant, the round and arrest caps), played with every seat's default too."""
    info = GAMES[game_id].game_info(players, options)
    for policy in ("random", "default"):
        game, rng = new_game(game_id, players, seed, options), SplitMix64(seed)
        while not game.over:
            assert info_problems(game, info) == []
            game.apply(random_joint(game, rng) if policy == "random"
                       else {s: game.default_action(s) for s in game.to_act()})
        assert info_problems(game, info) == []


@pytest.mark.parametrize(("game_id", "n"), CASES)
def test_resolved_options_are_kept_but_never_shared(game_id: str, n: int) -> None:
    """Issue 20: resolve_options keeps what it resolved (a match creates a game per game
    it plays). Each caller gets its own copy, and what is refused stays refused."""
    cls = GAMES[game_id]
    first = cls.resolve_options(n, {})
    for value in first.values():
        if isinstance(value, (list, dict)):
            value.clear()  # a caller may change its copy...
    assert cls.resolve_options(n, {}) == cls.default_options()  # ...but not the next one's
    assert cls.resolve_options(n, None) is not cls.resolve_options(n, None)
    for _ in range(2):
        with pytest.raises(ConfigError):
            cls.resolve_options(n, {"no such option": 1})
        with pytest.raises(ConfigError):
            cls.resolve_options(cls.max_players + 1, {})
