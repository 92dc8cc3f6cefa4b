"""The portable, seeded randomness that every game owns (RULES.md C2).

SplitMix64 is tiny, has no state beyond one 64-bit word and is easy to port,
so an engine written in another language can reproduce every deal:

* ``next_u64``: ``state += 0x9E3779B97F4A7C15``; ``z = state``;
  ``z = (z ^ z>>30) * 0xBF58476D1CE4E5B9``; ``z = (z ^ z>>27) * 0x94D049BB133111EB``;
  return ``z ^ z>>31`` (all modulo 2**64).
* ``below(n)``: draw ``x = next_u64()`` until ``x < 2**64 - (2**64 % n)``, return ``x % n``
  (rejection sampling, so every value is exactly equally likely).
* ``shuffle``: Fisher-Yates from the back: for ``i = n-1 .. 1``: swap ``a[i]`` and
  ``a[below(i+1)]``. The item at index 0 afterwards is the top of the pile.

Tests *rig* the randomness by name: ``GameRandom(seed, rig={"gangsters": [[10, 1, ...]]})``
makes the next shuffle named ``"gangsters"`` return exactly that order (it must be
a permutation of the items), and ``pick`` returns the next rigged item. A rig that
runs out falls back to the seeded generator, so a test fixes only what it needs.
The global :mod:`random` module is never touched.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

from .errors import ConfigError

T = TypeVar("T")

_MASK = (1 << 64) - 1
_SPAN = 1 << 64
_GOLDEN = 0x9E3779B97F4A7C15


class SplitMix64:
    """The SplitMix64 generator (Steele, Lea and Flood, 2014)."""

    __slots__ = ("state",)

    def __init__(self, seed: int) -> None:
        self.state = seed & _MASK

    def next_u64(self) -> int:
        """Return the next 64-bit output."""
        self.state = z = (self.state + _GOLDEN) & _MASK
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
        return z ^ (z >> 31)

    def below(self, n: int) -> int:
        """Return a uniform integer in ``[0, n)`` by rejection sampling."""
        if n <= 0:
            raise ValueError(f"below() needs a positive bound, got {n!r}")
        limit = _SPAN - _SPAN % n
        while True:
            x = self.next_u64()
            if x < limit:
                return x % n


class GameRandom:
    """A game's only source of randomness: named shuffles and picks, riggable for tests."""

    __slots__ = ("_gen", "_rig")

    def __init__(self, seed: int, rig: Mapping[str, Sequence[Any]] | None = None) -> None:
        self._gen = SplitMix64(seed)
        # Each rig entry is consumed front to back; copy so the caller's data is untouched.
        self._rig: dict[str, list[Any]] = {k: list(v) for k, v in (rig or {}).items()}

    def below(self, n: int) -> int:
        """A uniform integer in ``[0, n)`` (not riggable: use a named draw for that)."""
        return self._gen.below(n)

    def shuffle(self, name: str, items: Sequence[T]) -> list[T]:
        """Return a new list with ``items`` shuffled; index 0 is the top of the pile."""
        queue = self._rig.get(name)
        if queue:
            order = list(queue.pop(0))
            if Counter(map(_key, order)) != Counter(map(_key, items)):
                raise ConfigError(
                    f"rigged {name!r} order {order!r} is not a permutation of {list(items)!r}"
                )
            return order
        out = list(items)
        # SplitMix64.below inlined, the state kept local (issue 20: a deal's shuffles
        # were a twentieth of the referee's work in a short game); the same draws.
        gen = self._gen
        state = gen.state
        for i in range(len(out) - 1, 0, -1):
            n = i + 1
            limit = _SPAN - _SPAN % n
            while True:
                state = (state + _GOLDEN) & _MASK
                z = ((state ^ (state >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
                z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
                z ^= z >> 31
                if z < limit:
                    break
            j = z % n
            out[i], out[j] = out[j], out[i]
        gen.state = state
        return out

    def pick(self, name: str, items: Sequence[T]) -> int:
        """Return the index of a uniformly chosen item of ``items`` (rigged: the next named item)."""
        if not items:
            raise ValueError(f"cannot pick {name!r} from an empty sequence")
        queue = self._rig.get(name)
        if queue:
            wanted = queue.pop(0)
            for i, item in enumerate(items):
                if item == wanted:
                    return i
            raise ConfigError(f"rigged {name!r} item {wanted!r} is not among {list(items)!r}")
        return self._gen.below(len(items))


def _key(item: Any) -> str:
    """A hashable stand-in for any JSON-able item, for multiset comparison."""
    return repr(item)
