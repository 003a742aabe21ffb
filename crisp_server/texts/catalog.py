"""The shape of a language's catalog: every text the server sends to a player, one field each.

A catalog is built with every field named, so that a language missing a text is a type error (mypy) and an
error at import. The field names are the codes the texts stand for: an error's code on the wire
(``docs/protocol.md``), a rule's code (``crisp_server.engine.Code``), a hint's reason code
(``crisp_server.bots.moves.Reason``). ``tests/test_texts.py`` checks that each code has its field, that no
text is empty and that every language fills in the same ``{names}`` as English.
"""

from __future__ import annotations

from dataclasses import dataclass, fields


@dataclass(frozen=True, slots=True)
class Errors:
    """The errors of the protocol and the rooms (``crisp_server.wire.protocol.ProtocolCode``)."""

    bad_message: str
    too_large: str
    rate_limited: str
    room_not_found: str
    room_full: str
    name_taken: str
    bad_name: str
    bad_token: str
    not_host: str
    game_running: str
    not_in_room: str
    already_in_room: str
    not_seated: str
    wrong_phase: str
    not_enough_players: str
    no_such_seat: str
    already_seated: str
    bad_reaction: str
    unavailable: str
    not_a_bot: str
    no_hints: str
    nothing_to_hint: str
    not_a_lesson: str
    lesson_other_move: str
    lesson_no_step: str


@dataclass(frozen=True, slots=True)
class Rules:
    """Why the rules refuse a move (the engine's rejection codes)."""

    round_over: str
    not_your_turn: str
    too_early: str
    already_drawn: str
    nothing_drawn: str
    discard_draw_disabled: str
    discard_empty: str
    face_card_from_deck: str
    must_swap: str
    king_must_be_played: str
    wrong_card: str
    bad_target: str
    crisp_not_allowed: str


@dataclass(frozen=True, slots=True)
class Hints:
    """A hint's one line per reason. ``{card}``, ``{old}``: a card as :class:`Cards` names it; ``{slot}``,
    ``{their_slot}``: a card of a hand as :class:`Slots` names it; ``{player}``: a name; ``{about}``,
    ``{sum}``: a whole number of points; ``{chance}``: a percentage without its sign."""

    draw_only: str
    draw: str
    draw_known: str
    take: str
    take_known: str
    swap: str
    swap_known: str
    must_swap: str
    discard: str
    jack: str
    jack_known: str
    queen: str
    queen_none: str
    king: str
    crisp: str
    no_crisp: str


@dataclass(frozen=True, slots=True)
class Cards:
    """The ranks as a hint names a card: with the article where the language's sentences need one there
    (French ``le roi``, ``l'as``); English and German put theirs in the sentence, or none."""

    ace: str
    two: str
    three: str
    four: str
    five: str
    six: str
    seven: str
    eight: str
    nine: str
    ten: str
    jack: str
    queen: str
    king: str

    def name(self, code: str) -> str:
        """The name of card ``code`` (``KH``: its rank ``K``, the king); the suit never matters."""
        return _text(self, _RANK_FIELDS[code[0]])


#: A card code's first letter (``docs/record-format.md``) to its field of :class:`Cards`.
_RANK_FIELDS = dict(zip("A23456789TJQK", (f.name for f in fields(Cards)), strict=True))


@dataclass(frozen=True, slots=True)
class Slots:
    """One of the player's three cards, as a hint names it after a possessive (your *left card*)."""

    left: str
    middle: str
    right: str

    def name(self, index: int) -> str:
        """The card in slot ``index`` (0 left, 1 middle, 2 right)."""
        return (self.left, self.middle, self.right)[index]


@dataclass(frozen=True, slots=True)
class Texts:
    """Every text of one language."""

    errors: Errors
    rules: Rules
    #: The ``unavailable`` message: the room's changes cannot be saved for now.
    unavailable: str
    hints: Hints
    cards: Cards
    slots: Slots

    def error(self, code: str) -> str:
        """The text of the protocol's error ``code``."""
        return _text(self.errors, code)

    def rule(self, code: str) -> str:
        """The text of the rule ``code`` a refused move breaks."""
        return _text(self.rules, code)

    def hint(self, code: str) -> str:
        """The line of hint reason ``code``, its ``{names}`` still to fill in."""
        return _text(self.hints, code)


def _text(section: object, name: str) -> str:
    text = getattr(section, name)
    if not isinstance(text, str):
        raise TypeError(f"{name} is not a text of {type(section).__name__}")
    return text
