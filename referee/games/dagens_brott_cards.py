"""Components and options of "Dagens brott" (RULES.md 3.3): the data half of the engine.

Card ids are short, stable strings:

* a criminal card is its criminal's id followed by its value: ``"PICK7"``, ``"ROB10"``;
* the special cards are ``"JOKER"``, ``"POLICE"`` and ``"ESCAPE"``. Identical cards
  share an id: which joker counts is decided by the order the jokers were laid
  (RULES.md 3.3, B2), never by which physical joker it is.

A crime-of-the-day card has the id criminal + points (``"PICK4"``, ``"ROB12"``) and is
shown as ``{"id", "criminal", "value", "name"}``. Crime ids and deck-card ids live
in different piles and are never compared with each other.

The canonical orders (RULES.md C2, 3.3) are the ones the shuffles start from:
the crime cards as listed in the ``crime_cards`` option, and the deck as criminals
in option order with values in option order, then jokers, police and escape.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from .base import Option
from .errors import ConfigError

JOKER = "JOKER"
POLICE = "POLICE"
ESCAPE = "ESCAPE"
SPECIAL = (JOKER, POLICE, ESCAPE)

# Kinds of deck card, as stored in the card table.
CRIMINAL_CARD, JOKER_CARD, POLICE_CARD, ESCAPE_CARD = range(4)

CRIMINALS = ["PICK", "BURG", "CON", "SMUG", "ROB"]
"""RULES.md 3.3 [DATA]: Ficktjuven, Inbrottstjuven, Bedragaren, Smugglaren, Rånaren."""

_CRIME_NAMES = {
    "PICK": ("Wallet lifted at the market", "Railway-station sweep", "Royal gala pickpocketing"),
    "BURG": ("Garden-shed break-in", "Villa burglary", "Museum night break-in"),
    "CON": ("Fake lottery tickets", "Pyramid scheme", "Selling the Royal Palace"),
    "SMUG": ("Cigarettes over the border", "Stolen art on the ferry", "Diamond shipment"),
    "ROB": ("Kiosk hold-up", "Post-office robbery", "Bank-vault heist"),
}

CRIME_CARDS = [
    {"criminal": c, "value": v, "name": name}
    for c in CRIMINALS
    for v, name in zip((4, 8, 12), _CRIME_NAMES[c])
]
"""RULES.md 3.3 [DATA]: 15 crime cards, 5 criminals x {4, 8, 12}, in canonical order."""

OPTION_SPECS: dict[str, Option] = {
    "criminals": Option(
        list(CRIMINALS),
        "criminal ids (capital letters), one suit of cards each [DATA, RULES.md 3.3, B1]",
    ),
    "criminal_values": Option(
        list(range(1, 11)),
        "values of each criminal's cards, one card per entry; a repeated value makes "
        "identical cards, and the later-laid of two equal values wins [DATA, 3.3, B1, B3]",
    ),
    "jokers": Option(4, "joker cards in the deck; they beat every criminal card [DATA, 3.3, B2]"),
    "police": Option(6, "police cards in the deck [DATA, 3.3, B1]"),
    "escape": Option(4, "escape cards in the deck [DATA, 3.3, B1]"),
    "crime_cards": Option(
        [dict(c) for c in CRIME_CARDS],
        "crime-of-the-day cards {criminal, value (points), name}; (criminal, value) "
        "pairs distinct [DATA, 3.3, RS2]",
    ),
    "hand_size": Option(
        {"2": 10, "3": 10, "4": 10, "5": 8, "6": 8},
        "cards dealt to each player, by player count (JSON keys); N*H must not exceed "
        "the deck [TEXT 3-6, HOUSE 2; RS3, B20]",
    ),
    "rounds": Option(5, "rounds in a game [TEXT, 3.6]"),
    "unofficial_2p": Option(
        False, "allow the unofficial 2-player game, 10 cards each [HOUSE, 3.2, B14]"
    ),
}

_ID = re.compile(r"[A-Z]+\Z")


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def check_options(players: int, options: Mapping[str, Any]) -> None:
    """Game-specific checks of a merged option set (RULES.md 3.2, 3.3, B20)."""
    if players == 2 and options["unofficial_2p"] is not True:
        raise ConfigError(
            "dagens-brott: 2 players is the unofficial variant (RULES.md 3.2, B14); "
            "set the option unofficial_2p to true to play it (on the command line: "
            "-o unofficial_2p=true)"
        )
    criminals = options["criminals"]
    if (
        not criminals
        or not all(isinstance(c, str) and _ID.match(c) and c not in SPECIAL for c in criminals)
        or len(set(criminals)) != len(criminals)
    ):
        raise ConfigError(
            "dagens-brott: 'criminals' must be distinct ids of capital letters "
            f"(not JOKER, POLICE or ESCAPE), got {criminals!r}"
        )
    values = options["criminal_values"]
    if not values or not all(_is_int(v) and v >= 1 for v in values):
        raise ConfigError(
            f"dagens-brott: 'criminal_values' must be integers of at least 1, got {values!r}"
        )
    for key in ("jokers", "police", "escape"):
        if options[key] < 0:
            raise ConfigError(f"dagens-brott: {key!r} must be at least 0, got {options[key]!r}")
    crimes = options["crime_cards"]
    seen = set()
    for crime in crimes:
        if (
            not isinstance(crime, dict)
            or set(crime) != {"criminal", "value", "name"}
            or crime["criminal"] not in criminals
            or not _is_int(crime["value"])
            or crime["value"] < 0
            or not isinstance(crime["name"], str)
        ):
            raise ConfigError(
                "dagens-brott: each crime card must be {criminal, value, name} with a "
                f"criminal of 'criminals' and a value of at least 0, got {crime!r}"
            )
        seen.add((crime["criminal"], crime["value"]))
    if not crimes or len(seen) != len(crimes):
        raise ConfigError(
            "dagens-brott: 'crime_cards' must be a non-empty list with distinct "
            f"(criminal, value) pairs, got {crimes!r}"
        )
    sizes = options["hand_size"]
    size = sizes.get(str(players))
    if not _is_int(size) or size < 1:
        raise ConfigError(
            f"dagens-brott: 'hand_size' needs a count of at least 1 for {players} players "
            f"under the key {str(players)!r}, got {sizes!r}"
        )
    deck = deck_size(options)
    if players * size > deck:
        raise ConfigError(
            f"dagens-brott: {players} players x {size} cards = {players * size} cards, "
            f"but the deck has only {deck} (RULES.md B20: N*H <= deck size); "
            f"got hand_size {sizes!r}"
        )
    if options["rounds"] < 1:
        raise ConfigError(f"dagens-brott: 'rounds' must be at least 1, got {options['rounds']!r}")


def deck_size(options: Mapping[str, Any]) -> int:
    """Cards in the deck: every criminal x every value, plus jokers, police and escape."""
    return (
        len(options["criminals"]) * len(options["criminal_values"])
        + options["jokers"] + options["police"] + options["escape"]
    )


CardInfo = tuple[int, str | None, int]
"""A deck card's (kind, criminal or None, value or 0)."""


def build_deck(options: Mapping[str, Any]) -> tuple[list[str], dict[str, CardInfo]]:
    """The deck in canonical order and the card table ``id -> (kind, criminal, value)``."""
    deck: list[str] = []
    table: dict[str, CardInfo] = {}
    for criminal in options["criminals"]:
        for value in options["criminal_values"]:
            card = f"{criminal}{value}"
            deck.append(card)
            table[card] = (CRIMINAL_CARD, criminal, value)
    for card, kind, count in (
        (JOKER, JOKER_CARD, options["jokers"]),
        (POLICE, POLICE_CARD, options["police"]),
        (ESCAPE, ESCAPE_CARD, options["escape"]),
    ):
        deck += [card] * count
        table[card] = (kind, None, 0)
    return deck, table


def build_crimes(options: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """The crime cards by id (criminal + points), in canonical order."""
    return {
        f"{c['criminal']}{c['value']}": {
            "id": f"{c['criminal']}{c['value']}",
            "criminal": c["criminal"],
            "value": c["value"],
            "name": c["name"],
        }
        for c in options["crime_cards"]
    }
