"""The games' portable randomness (RULES.md C2): SplitMix64, ``below`` and ``shuffle``
exactly as :mod:`referee.games.rng` describes them, so that another language can
reproduce every deal."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from referee.games.rng import GameRandom, SplitMix64


def test_splitmix64_gives_the_published_outputs() -> None:
    """The first outputs of SplitMix64 from state 0, as in Vigna's reference code."""
    gen = SplitMix64(0)
    assert [gen.next_u64() for _ in range(3)] == [
        0xE220A8397B1DCDAF, 0x6E789E6AA1B965F4, 0x06C45D188009454F]


@given(seed=st.integers(min_value=0, max_value=2**64 - 1), n=st.integers(1, 2**64))
def test_below_is_rejection_sampling_over_next_u64(seed: int, n: int) -> None:
    gen, ref = SplitMix64(seed), SplitMix64(seed)
    limit = 2**64 - 2**64 % n
    while (x := ref.next_u64()) >= limit:
        pass
    assert gen.below(n) == x % n and gen.state == ref.state


@given(seed=st.integers(min_value=0, max_value=2**64 - 1), size=st.integers(0, 80))
def test_shuffle_is_fisher_yates_from_the_back(seed: int, size: int) -> None:
    """Issue 20 inlined the generator in ``shuffle``: the same order and the same state
    after it as the documented loop over ``below``."""
    items = [f"card{i}" for i in range(size)]
    rng = GameRandom(seed)
    got = rng.shuffle("deck", items)
    ref, out = SplitMix64(seed), list(items)
    for i in range(size - 1, 0, -1):
        j = ref.below(i + 1)
        out[i], out[j] = out[j], out[i]
    assert got == out and items == [f"card{i}" for i in range(size)]
    assert rng.below(1000) == ref.below(1000)  # the stream goes on where the loop left it
