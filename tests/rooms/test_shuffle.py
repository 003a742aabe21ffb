"""The deal's shuffle: every order equally likely, from one read of the CSPRNG."""

from __future__ import annotations

import collections
import itertools
import secrets
from collections.abc import Iterator

import pytest

from crisp_server.engine.cards import FULL_DECK
from crisp_server.rooms.tokens import shuffle


def test_a_shuffled_deck_is_the_same_cards() -> None:
    deck = list(FULL_DECK)
    shuffle(deck)
    assert sorted(deck) == sorted(FULL_DECK)
    assert deck != list(FULL_DECK)  # (one chance in 52! of a false failure)


def test_every_order_of_four_comes_up_as_often() -> None:
    """24 orders, 48,000 shuffles: 2,000 each expected, standard deviation about 44. A shuffle that swaps
    with any position (not only the ones not yet placed) favours some orders by 10% and more."""
    counts = collections.Counter[tuple[int, ...]]()
    for _ in range(48_000):
        items = [0, 1, 2, 3]
        shuffle(items)
        counts[tuple(items)] += 1
    assert set(counts) == set(itertools.permutations(range(4)))
    assert all(1_800 < n < 2_200 for n in counts.values()), counts


def test_one_read_for_a_deck_and_a_draw_in_the_uneven_top_is_drawn_again(monkeypatch: pytest.MonkeyPatch) -> None:
    reads: list[int] = []
    real = secrets.token_bytes
    pools: Iterator[bytes] | None = None  # what the CSPRNG gives, when the test decides it

    def counted(n: int) -> bytes:
        reads.append(n)
        return real(n) if pools is None else next(pools)

    monkeypatch.setattr(secrets, "token_bytes", counted)
    deck = list(FULL_DECK)
    shuffle(deck)
    assert reads == [8 * 52]

    # Three items: the first draw picks from 3. 2^64 - 1 lies in the top 2^64 mod 3 = 1 numbers, which
    # would favour position 0: it is drawn again (from a fresh read, the pool being used up).
    top = (2**64 - 1).to_bytes(8, "little")
    two = (2).to_bytes(8, "little")
    reads.clear()
    pools = iter([top + top + top, two + (0).to_bytes(8, "little")])
    items = ["a", "b", "c"]
    shuffle(items)
    # Pool 1: top (redrawn), top (redrawn), top (redrawn, pool used up); pool 2: 2 % 3 = 2 (stays), 0 % 2 = 0.
    assert items == ["b", "a", "c"]
    assert reads == [24, 16]
