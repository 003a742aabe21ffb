"""Why an action is refused: stable codes. Their texts for players, in each language, are in
``crisp_server.texts`` (the engine has no words of its own).

The order of :class:`Code` is the precedence of ``docs/record-format.md``: where several apply, the
first one listed wins. A refused action changes nothing.
"""

from __future__ import annotations

from enum import Enum


class Code(Enum):
    """A rule the action breaks. The value is the stable code used in records and on the wire."""

    ROUND_OVER = "round_over"
    """The round has ended."""
    NOT_YOUR_TURN = "not_your_turn"
    """A move by a seat whose move it is not."""
    TOO_EARLY = "too_early"
    """A draw during the two-second block of the previous player's crisp window."""
    ALREADY_DRAWN = "already_drawn"
    """A draw when this move's card is already drawn."""
    NOTHING_DRAWN = "nothing_drawn"
    """Playing a card before drawing one."""
    DISCARD_DRAW_DISABLED = "discard_draw_disabled"
    """A draw from the discard pile in a room where the host has not enabled it."""
    DISCARD_EMPTY = "discard_empty"
    """A draw from an empty discard pile."""
    FACE_CARD_FROM_DECK = "face_card_from_deck"
    """A Jack, Queen or King from the draw pile cannot be swapped into a hand."""
    MUST_SWAP = "must_swap"
    """A card taken from the discard pile must be swapped in."""
    KING_MUST_BE_PLAYED = "king_must_be_played"
    """A King from the draw pile must be used."""
    WRONG_CARD = "wrong_card"
    """Using a Jack, Queen or King effect with another card, or with one taken from the discard pile."""
    BAD_TARGET = "bad_target"
    """A Queen aimed at oneself or at no seat."""
    CRISP_NOT_ALLOWED = "crisp_not_allowed"
    """A Crisp call outside one's own open crisp window."""


class Rejected(ValueError):
    """The action breaks a rule. Nothing was changed. Still a ``ValueError`` for generic callers, whose
    message is the code (``not_your_turn``)."""

    def __init__(self, code: Code) -> None:
        super().__init__(code.value)
        self.code = code
