"""A room's phases, and each round's commitment to its deck (``Fairness``)."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Final


class Phase(Enum):
    LOBBY = "lobby"
    """Players join; the host sets the options and starts."""
    PEEK = "peek"
    """A round was dealt: players look at their left and right card."""
    PLAY = "play"
    ROUND_OVER = "round_over"
    """Hands are shown; the next round deals when all are ready or after a pause."""
    GAME_OVER = "game_over"


#: The phases of a game under way: they wait while no player is connected.
GAME_PHASES: Final = frozenset({Phase.PEEK, Phase.PLAY, Phase.ROUND_OVER})


@dataclass(frozen=True, slots=True)
class Fairness:
    """The commitment to a round's deck: ``sha256(salt + deck)`` before the deal, salt and deck after."""

    salt: str
    deck: tuple[str, ...]
    commitment: str = field(init=False)  # in every room state: hashed once

    def __post_init__(self) -> None:
        object.__setattr__(self, "commitment", deck_commitment(self.salt, self.deck))


def deck_commitment(salt: str, deck: Sequence[str]) -> str:
    """Hex SHA-256 of the UTF-8 text ``salt`` followed by the 52 codes joined without separator."""
    return hashlib.sha256((salt + "".join(deck)).encode()).hexdigest()
