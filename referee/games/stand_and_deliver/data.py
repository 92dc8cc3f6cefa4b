"""Stand & Deliver: default component data, options and their checks (RULES.md 4.1-4.2, 4.11).

Everything here is data or a pure function of the options; the engine is
:mod:`referee.games.stand_and_deliver.game`. Every count of RULES.md 4.2 is an
option with its RULES.md default and tag.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..base import Option
from ..errors import ConfigError

GAME_ID = "stand-and-deliver"

# Token kinds in the canonical order of RULES.md 4.12 (bag draws).
GOLD, SILVER, COPPER, SHOT, REDCOAT = "gold", "silver", "copper", "shot", "redcoat"
TOKEN_KINDS = (GOLD, SILVER, COPPER, SHOT, REDCOAT)
COIN_KINDS = (GOLD, SILVER, COPPER)  # canonical order of random coin losses (4.12)
HAZARDS = (SHOT, REDCOAT)
COIN_BIT = {COPPER: 1, SILVER: 2, GOLD: 4}  # bitmask of the denominations ever put in the bag

# The 18 ability cards: 6 kinds, each with one timing window (RULES.md 4.2, 4.7) [DATA/HOUSE].
SPYGLASS, SURGEON = "spyglass", "surgeon"
FAST_HORSE, INSIDE_MAN = "fast_horse", "inside_man"
LUCKY_CHARM, BRIBE_JUDGE = "lucky_charm", "bribe_judge"
ABILITY_KINDS = (SPYGLASS, SURGEON, FAST_HORSE, INSIDE_MAN, LUCKY_CHARM, BRIBE_JUDGE)
WINDOWS = {
    "planning": (SPYGLASS, SURGEON),  # Step 2, D1
    "pre_loot": (FAST_HORSE, INSIDE_MAN),  # Step 6b, D4
    "judgement": (BRIBE_JUDGE,),  # Step 6c, D5
    "post_draw": (LUCKY_CHARM,),  # Step 6d, D6
}

# Player status (RULES.md 4.4).
ACTIVE, RETIRED, HANGED = "ACTIVE", "RETIRED", "HANGED"

DEFAULT_COACH_CARDS = [
    {"kind": "traveller", "name": "Humble traveller", "count": 12,
     "treasure": 1, "nooses": 1, "guards": 0, "trap": False},
    {"kind": "merchant", "name": "Merchant", "count": 12,
     "treasure": 2, "nooses": 1, "guards": 0, "trap": False},
    {"kind": "gentleman", "name": "Mr William Blackstock", "count": 10,
     "treasure": 2, "nooses": 2, "guards": 0, "trap": False},
    {"kind": "noble", "name": "Nobleman's carriage", "count": 8,
     "treasure": 3, "nooses": 2, "guards": 0, "trap": False},
    {"kind": "mail", "name": "London to York mail coach", "count": 8,
     "treasure": 3, "nooses": 2, "guards": 1, "trap": False},
    {"kind": "bullion", "name": "Bullion coach", "count": 4,
     "treasure": 4, "nooses": 3, "guards": 2, "trap": False},
    {"kind": "trap", "name": "Is a Trap", "count": 6,
     "treasure": 0, "nooses": 0, "guards": 0, "trap": True},
]
COACH_FIELDS = {"kind": str, "name": str, "count": int, "treasure": int, "nooses": int,
                "guards": int, "trap": bool}

OPTION_SPECS: dict[str, Option] = {
    "characters": Option(
        ["Dick Turpin", "Tom King", "Claude Duval", "William Plunkett", "James MacLaine",
         "Lady Katherine Ferrers (The Wicked Lady)"],
        "character of each seat, cosmetic, no special powers [source/INTERP, RULES.md 4.2, C34]",
    ),
    "coach_cards": Option(
        DEFAULT_COACH_CARDS,
        "the coach deck in canonical order: rows of kind, name, count, treasure, nooses, "
        "guards, trap [DATA, RULES.md 4.2, C1]",
    ),
    "bag_initial": Option(
        {COPPER: 30, SHOT: 6, REDCOAT: 4},
        "tokens in the large pouch (the draw bag) at setup; coins come from the supply "
        "[TEXT copper, DATA shot/redcoat, RULES.md SU3, C2, C3]",
    ),
    "coin_values": Option({COPPER: 1, SILVER: 3, GOLD: 5}, "money per coin [TEXT, RULES.md 4.8]"),
    "coins_supply": Option(
        {COPPER: 30, SILVER: 30, GOLD: 30}, "coins in the game by denomination [TEXT, RULES.md 4.2]"
    ),
    "silver_at": Option(
        4, "notoriety that, once reached by anyone, adds all silver to the bag at round end "
        "[TEXT, RULES.md Step 8, C8]"
    ),
    "gold_at": Option(
        7, "notoriety that, once reached by anyone, adds all gold to the bag at round end "
        "[TEXT, RULES.md Step 8, C8]"
    ),
    "ability_at": Option(
        [4, 7], "notoriety levels at which each player receives one more ability card, once "
        "each (draw 2, keep 1) [TEXT/INTERP, RULES.md 4.6 f, C7]"
    ),
    "ability_offer": Option(
        2, "ability cards drawn at a threshold, of which one is kept [INTERP, RULES.md 4.6 f, C7]"
    ),
    "ability_copies": Option(
        {SPYGLASS: 3, SURGEON: 3, FAST_HORSE: 3, INSIDE_MAN: 3, LUCKY_CHARM: 3, BRIBE_JUDGE: 3},
        "copies of each ability kind; the deck's canonical order is the RULES.md row order "
        "[DATA/HOUSE, RULES.md 4.2, C5]",
    ),
    "start_abilities": Option(1, "ability cards dealt to each seat at setup [TEXT, RULES.md SU4]"),
    "health": Option(3, "starting and maximum health [TEXT, RULES.md SU1]"),
    "start_notoriety": Option(0, "starting notoriety [HOUSE, RULES.md C9]"),
    "notoriety_max": Option(9, "notoriety cap (levels I-IX) [TEXT, RULES.md 4.6 d, C9]"),
    "surgeon_heal": Option(2, "wounds healed by the surgeon ability [DATA, RULES.md 4.2]"),
    "rounds": Option(10, "rounds in a game [TEXT, RULES.md Step 8, C35]"),
    "encounter_talk": Option(
        False, "a non-binding public declaration (D3t) before each encounter step "
        "[HOUSE, RULES.md 4.5, C31]"
    ),
}


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _counts(name: str, value: Any, allowed: tuple[str, ...], exact: bool = False) -> None:
    """A mapping from token kind to a non-negative integer."""
    if not isinstance(value, Mapping) or not all(k in allowed for k in value) or (
        exact and set(value) != set(allowed)
    ) or not all(_is_int(v) and v >= 0 for v in value.values()):
        keys = "exactly" if exact else "some of"
        raise ConfigError(
            f"{GAME_ID}: {name!r} must map {keys} {', '.join(allowed)} to non-negative "
            f"integers, got {value!r}"
        )


def check_options(players: int, options: Mapping[str, Any]) -> None:
    """Refuse an option set that cannot be played, quoting the bad input (ConfigError)."""
    chars = options["characters"]
    if len(chars) < players or not all(isinstance(c, str) for c in chars):
        raise ConfigError(f"{GAME_ID}: 'characters' needs {players} names, got {chars!r}")
    cards = options["coach_cards"]
    kinds: set[str] = set()
    for row in cards:
        if (not isinstance(row, Mapping) or set(row) != set(COACH_FIELDS) or not all(
            isinstance(row[k], t) and (t is bool or not isinstance(row[k], bool))
            for k, t in COACH_FIELDS.items()
        ) or any(row[k] < 0 for k in ("count", "treasure", "nooses", "guards"))
                or row["kind"] in kinds):
            raise ConfigError(
                f"{GAME_ID}: each 'coach_cards' row needs a new kind and the fields "
                f"{', '.join(COACH_FIELDS)} (non-negative counts), got {row!r}"
            )
        kinds.add(row["kind"])
    total = sum(row["count"] for row in cards)
    if total < players:
        raise ConfigError(
            f"{GAME_ID}: {players} players need at least {players} coach cards, "
            f"'coach_cards' has {total}"
        )
    _counts("coins_supply", options["coins_supply"], COIN_KINDS, exact=True)
    _counts("coin_values", options["coin_values"], COIN_KINDS, exact=True)
    bag = options["bag_initial"]
    _counts("bag_initial", bag, TOKEN_KINDS)
    for coin in COIN_KINDS:
        if bag.get(coin, 0) > options["coins_supply"][coin]:
            raise ConfigError(
                f"{GAME_ID}: 'bag_initial' puts {bag[coin]} {coin} in the bag but "
                f"'coins_supply' has only {options['coins_supply'][coin]}"
            )
    copies = options["ability_copies"]
    _counts("ability_copies", copies, ABILITY_KINDS)
    for key in ("silver_at", "gold_at", "start_abilities", "start_notoriety", "notoriety_max",
                "surgeon_heal"):
        if options[key] < 0:
            raise ConfigError(f"{GAME_ID}: {key!r} must be at least 0, got {options[key]!r}")
    for key in ("health", "rounds", "ability_offer"):
        if options[key] < 1:
            raise ConfigError(f"{GAME_ID}: {key!r} must be at least 1, got {options[key]!r}")
    if options["start_notoriety"] > options["notoriety_max"]:
        raise ConfigError(
            f"{GAME_ID}: 'start_notoriety' {options['start_notoriety']!r} is above "
            f"'notoriety_max' {options['notoriety_max']!r}"
        )
    levels = options["ability_at"]
    if not all(_is_int(t) and t >= 0 for t in levels) or len(set(levels)) != len(levels):
        raise ConfigError(
            f"{GAME_ID}: 'ability_at' must be distinct non-negative integers, got {levels!r}"
        )
    dealt = players * options["start_abilities"]
    if sum(copies.values()) < dealt:
        raise ConfigError(
            f"{GAME_ID}: {players} players are dealt {dealt} ability cards but "
            f"'ability_copies' has {sum(copies.values())}: {copies!r}"
        )


def decision_bound(players: int, options: Mapping[str, Any]) -> int:
    """RULES.md 4.11 in seat decisions, per round, times the rounds.

    D1 <= N (riders), D2 = N, D3: an encounter of m seats asks at most
    m + (m-1) + ... + 2 = m(m+1)/2 - 1 seats, largest when all N share one coach,
    doubled by the talk step; D4, D5 and D6 <= N (one hold-up each); D7 <= one per
    ability threshold per seat.
    """
    n = players
    encounter = n * (n + 1) // 2 - 1
    if options["encounter_talk"]:
        encounter *= 2
    per_round = n + n + encounter + 3 * n + len(options["ability_at"]) * n
    return options["rounds"] * per_round


def step_bound(players: int, options: Mapping[str, Any]) -> int:
    """RULES.md 4.11 in steps (joint actions), per round, times the rounds.

    D1 <= 1 and D2 = 1 (every seat at once); D3: each step of an encounter removes a
    player or ends it (4.5, C13), so the coaches' encounters last at most
    sum(m_k - 1) <= N - 1 steps, doubled by the talk step; D4, D5 and D6 ask one
    robber at a time, <= N each; D7 <= one per ability threshold per seat.
    """
    n = players
    encounters = (n - 1) * (2 if options["encounter_talk"] else 1)
    per_round = 1 + 1 + encounters + 3 * n + len(options["ability_at"]) * n
    return options["rounds"] * per_round


def score_bounds(options: Mapping[str, Any]) -> tuple[int, int]:
    """RULES.md 4.8: a survivor scores its money, the hanged 0; no seat can hold more
    coins than the supply has (coins are moved, never made)."""
    values = options["coin_values"]
    return 0, sum(count * values[coin] for coin, count in options["coins_supply"].items())


def coach_table(options: Mapping[str, Any]) -> tuple[list[str], dict[str, dict[str, Any]]]:
    """The coach deck in canonical order (kind per card) and each kind's card data."""
    deck: list[str] = []
    data: dict[str, dict[str, Any]] = {}
    for row in options["coach_cards"]:
        deck += [row["kind"]] * row["count"]
        data[row["kind"]] = {k: row[k] for k in ("kind", "name", "treasure", "nooses",
                                                 "guards", "trap")}
    return deck, data


def ability_deck(options: Mapping[str, Any]) -> list[str]:
    """The ability deck in canonical order (RULES.md 4.2 row order)."""
    copies = options["ability_copies"]
    return [kind for kind in ABILITY_KINDS for _ in range(copies.get(kind, 0))]
