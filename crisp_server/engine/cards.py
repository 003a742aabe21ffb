"""Cards, the deck and card values.

A card is its two-letter code: rank ``A 2 3 4 5 6 7 8 9 T J Q K`` then suit ``S H D C``
(``TS`` is the ten of spades). Codes are plain strings so that states, records and views share
one spelling; suits never matter for play or score.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from enum import IntEnum
from typing import Final

RANKS: Final = "A23456789TJQK"
SUITS: Final = "SHDC"

#: The 52 codes in a fixed order (rank-major). Shuffles are done by the caller: the engine never draws
#: randomness itself.
FULL_DECK: Final[tuple[str, ...]] = tuple(r + s for r in RANKS for s in SUITS)
_FULL_SET: Final = frozenset(FULL_DECK)

#: Value of a card once it is one of a player's three cards. J, Q and K count 10 there.
VALUES: Final[dict[str, int]] = {
    code: (1 if code[0] == "A" else 10 if code[0] in "TJQK" else int(code[0])) for code in FULL_DECK
}

JACK: Final = "J"
QUEEN: Final = "Q"
KING: Final = "K"
FACE_RANKS: Final = frozenset((JACK, QUEEN, KING))


class Slot(IntEnum):
    """One of a player's three card positions, left to right as the player sees them."""

    LEFT = 0
    MIDDLE = 1
    RIGHT = 2

    @property
    def label(self) -> str:
        """The name used in records and on the wire: ``left``, ``middle``, ``right``."""
        return _SLOT_LABELS[self]

    @classmethod
    def parse(cls, label: str) -> Slot:
        """The slot named ``label``; ``ValueError`` for anything else."""
        try:
            return _SLOTS_BY_LABEL[label]
        except (KeyError, TypeError):
            raise ValueError(f"unknown slot {label!r} (left, middle or right)") from None


_SLOT_LABELS: Final = {Slot.LEFT: "left", Slot.MIDDLE: "middle", Slot.RIGHT: "right"}
_SLOTS_BY_LABEL: Final = {v: k for k, v in _SLOT_LABELS.items()}

#: The slots a player looks at when a card lands there (at the deal, or through a Queen).
SEEN_SLOTS: Final = frozenset((Slot.LEFT, Slot.RIGHT))


def is_card(code: object) -> bool:
    """Whether ``code`` is one of the 52 card codes."""
    return isinstance(code, str) and code in _FULL_SET


def value(code: str) -> int:
    """The card's value in a hand (A = 1, 2-9 face value, T J Q K = 10)."""
    return VALUES[code]


def hand_sum(cards: Iterable[str]) -> int:
    """The sum of a hand's values."""
    return sum(VALUES[c] for c in cards)


def deck_problem(deck: Sequence[object]) -> str | None:
    """Why ``deck`` is not the 52 cards once each, or ``None`` if it is."""
    try:
        if len(deck) == len(FULL_DECK) and set(deck) == _FULL_SET:
            return None
    except TypeError:  # an unhashable item: described below
        pass
    if len(deck) != len(FULL_DECK):
        return f"a deck has 52 cards, not {len(deck)}"
    seen: set[str] = set()
    for i, code in enumerate(deck):
        if not is_card(code):
            return f"card {i} is not a card code: {code!r}"
        assert isinstance(code, str)
        if code in seen:
            return f"card {i} ({code}) appears twice"
        seen.add(code)
    return None


def card_name(code: str) -> str:
    """An English name for a card, for messages (``"7 of hearts"``)."""
    ranks = {"A": "ace", "T": "10", "J": "jack", "Q": "queen", "K": "king"}
    suits = {"S": "spades", "H": "hearts", "D": "diamonds", "C": "clubs"}
    return f"{ranks.get(code[0], code[0])} of {suits[code[1]]}"
