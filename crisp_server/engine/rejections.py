"""Why an action is refused: stable codes with a message fit to show a player.

The order of :class:`Code` is the precedence of ``docs/record-format.md``: where several apply, the
first one listed wins. A refused action changes nothing.
"""

from __future__ import annotations

from enum import Enum
from typing import Final


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


MESSAGES: Final[dict[str, dict[Code, str]]] = {
    "en": {
        Code.ROUND_OVER: "The round is over.",
        Code.NOT_YOUR_TURN: "It isn't your turn.",
        Code.TOO_EARLY: "Wait a moment: the previous player may still call Crisp.",
        Code.ALREADY_DRAWN: "You have already drawn a card this move.",
        Code.NOTHING_DRAWN: "Draw a card first.",
        Code.DISCARD_DRAW_DISABLED: "Drawing from the discard pile is off in this room.",
        Code.DISCARD_EMPTY: "The discard pile is empty.",
        Code.FACE_CARD_FROM_DECK: "A Jack, Queen or King from the draw pile can't go into your hand.",
        Code.MUST_SWAP: "A card from the discard pile must be swapped into your hand.",
        Code.KING_MUST_BE_PLAYED: "A King from the draw pile must be played.",
        Code.WRONG_CARD: "Your drawn card can't do that.",
        Code.BAD_TARGET: "Pick a card of another player.",
        Code.CRISP_NOT_ALLOWED: "You can't call Crisp now.",
    },
    "de": {
        Code.ROUND_OVER: "Die Runde ist vorbei.",
        Code.NOT_YOUR_TURN: "Du bist nicht dran.",
        Code.TOO_EARLY: "Einen Moment: Der vorige Spieler darf noch Crisp rufen.",
        Code.ALREADY_DRAWN: "Du hast in diesem Zug schon eine Karte gezogen.",
        Code.NOTHING_DRAWN: "Zieh zuerst eine Karte.",
        Code.DISCARD_DRAW_DISABLED: "Ziehen vom Ablagestapel ist in diesem Raum aus.",
        Code.DISCARD_EMPTY: "Der Ablagestapel ist leer.",
        Code.FACE_CARD_FROM_DECK: "Bube, Dame oder König vom Nachziehstapel darf nicht in deine Hand.",
        Code.MUST_SWAP: "Eine Karte vom Ablagestapel musst du in deine Hand tauschen.",
        Code.KING_MUST_BE_PLAYED: "Einen König vom Nachziehstapel musst du ausspielen.",
        Code.WRONG_CARD: "Das kann deine gezogene Karte nicht.",
        Code.BAD_TARGET: "Wähle eine Karte eines anderen Spielers.",
        Code.CRISP_NOT_ALLOWED: "Du kannst jetzt nicht Crisp rufen.",
    },
}


def message(code: Code, lang: str = "en") -> str:
    """The player-facing text for ``code`` in ``lang`` (``en`` or ``de``; English otherwise)."""
    return MESSAGES.get(lang, MESSAGES["en"])[code]


class Rejected(ValueError):
    """The action breaks a rule. Nothing was changed. Still a ``ValueError`` for generic callers."""

    def __init__(self, code: Code) -> None:
        super().__init__(message(code))
        self.code = code
