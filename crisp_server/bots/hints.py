"""Hints: what the hard level would do with a seat's own knowledge, and why, in one line (English or German).

The seat's :class:`~crisp_server.bots.memory.Memory` is fed the updates that seat received, so a hint uses
nothing the player was not shown (it remembers better than a person does: that is the help).
"""

from __future__ import annotations

from dataclasses import dataclass
from random import Random
from typing import Any, Final

from .bot import decide, due
from .hard import HardLevel
from .memory import Memory
from .moves import Message, Reason

_RANKS: Final = {
    "en": {"A": "ace", "T": "10", "J": "jack", "Q": "queen", "K": "king"},
    "de": {"A": "Ass", "T": "10", "J": "Bube", "Q": "Dame", "K": "König"},
}
_SLOTS: Final = {
    "en": ("left", "middle", "right"),
    "de": ("linke", "mittlere", "rechte"),
}

#: One line per reason code; ``{slot}`` etc. are filled by :func:`_render`.
_TEXTS: Final[dict[str, dict[str, str]]] = {
    "en": {
        "draw_only": "Draw a card from the draw pile.",
        "draw": "Draw from the draw pile: the discard pile does not help you now.",
        "draw_known": "Draw from the draw pile: you know its top card is the {card}.",
        "take": "Take the {card} from the discard pile for your {slot} card (probably about {about}).",
        "take_known": "Take the {card} from the discard pile for your {slot} card, the {old}.",
        "swap": "Swap: your {slot} card is probably higher than {card}.",
        "swap_known": "Swap: your {slot} card is the {old}, higher than {card}.",
        "must_swap": "Swap it for your {slot} card: a card from the discard pile must be kept.",
        "discard": "Discard: the {card} would not lower your sum.",
        "jack": "Jack: look at your middle card, you do not know it yet.",
        "jack_known": "Discard the Jack: you already know your middle card.",
        "queen": "Queen: give your {slot} card for {player}'s {their_slot} card (probably about {about}).",
        "queen_none": "Discard the Queen: no exchange is likely to help you.",
        "king": "King: it must be played, and you get two extra moves.",
        "crisp": "Call Crisp: your sum is about {sum}, likely the lowest ({chance} %).",
        "no_crisp": "Do not call Crisp yet: your sum is about {sum}, only {chance} % likely to be the lowest.",
    },
    "de": {
        "draw_only": "Zieh eine Karte vom Nachziehstapel.",
        "draw": "Zieh vom Nachziehstapel: der Ablagestapel hilft dir gerade nicht.",
        "draw_known": "Zieh vom Nachziehstapel: du weißt, dass oben {card} liegt.",
        "take": "Nimm {card} vom Ablagestapel für deine {slot} Karte (wahrscheinlich etwa {about}).",
        "take_known": "Nimm {card} vom Ablagestapel für deine {slot} Karte, {old}.",
        "swap": "Tausche: deine {slot} Karte ist wahrscheinlich höher als {card}.",
        "swap_known": "Tausche: deine {slot} Karte ist {old}, höher als {card}.",
        "must_swap": "Tausche sie gegen deine {slot} Karte: eine Karte vom Ablagestapel musst du behalten.",
        "discard": "Leg sie ab: {card} würde deine Summe nicht senken.",
        "jack": "Bube: sieh dir deine mittlere Karte an, du kennst sie noch nicht.",
        "jack_known": "Leg den Buben ab: deine mittlere Karte kennst du schon.",
        "queen": "Dame: gib deine {slot} Karte gegen {player}s {their_slot} Karte (wahrscheinlich etwa {about}).",
        "queen_none": "Leg die Dame ab: kein Tausch hilft dir wahrscheinlich.",
        "king": "König: er muss gespielt werden, und du bekommst zwei Extrazüge.",
        "crisp": "Ruf Crisp: deine Summe ist etwa {sum}, wahrscheinlich die niedrigste ({chance} %).",
        "no_crisp": "Ruf noch nicht Crisp: deine Summe ist etwa {sum}, nur zu {chance} % die niedrigste.",
    },
}


@dataclass(frozen=True, slots=True)
class Hint:
    """The move the hard level suggests (``None``: let the crisp window pass) and why."""

    message: Message | None
    reason: Reason

    def text(self, lang: str = "en") -> str:
        """The reason as one line in ``lang`` (``en`` or ``de``; anything else is English)."""
        return _render(self.reason, lang if lang in _TEXTS else "en")


def hint(memory: Memory) -> Hint | None:
    """The hard level's move for the seat whose knowledge is ``memory``, or ``None`` if it has nothing to do.

    Deterministic: the hard level draws no random numbers, so a fixed generator is enough.
    """
    now = due(memory)
    if now is None or now.kind == "ready" or (now.kind == "crisp" and "crisp" not in memory.can):
        return None
    level = HardLevel()
    decision = decide(level, memory, Random(0))
    if decision is None:  # the window may pass
        total, chance = level.chance_lowest_alone(memory, memory.pool())
        return Hint(None, Reason("no_crisp", (round(total), round(chance * 100))))
    assert decision.reason is not None
    return Hint(decision.message, decision.reason)


def _card(code: str | None, lang: str) -> str:
    if code is None:
        return "?"
    return _RANKS[lang].get(code[0], code[0])


def _render(reason: Reason, lang: str) -> str:
    a = reason.args
    fields: dict[str, Any] = {}
    code = reason.code
    slot_names = _SLOTS[lang]
    if code in ("draw_known", "discard"):
        fields["card"] = _card(a[0], lang)
    elif code == "take":
        fields.update(card=_card(a[0], lang), slot=slot_names[a[1]], about=a[2])
    elif code == "take_known":
        fields.update(card=_card(a[0], lang), slot=slot_names[a[1]], old=_card(a[2], lang))
    elif code == "swap":
        fields.update(slot=slot_names[a[0]], card=_card(a[1], lang))
    elif code == "swap_known":
        fields.update(slot=slot_names[a[0]], old=_card(a[1], lang), card=_card(a[2], lang))
    elif code == "must_swap":
        fields["slot"] = slot_names[a[1]]
    elif code == "queen":
        fields.update(slot=slot_names[a[0]], player=a[1], their_slot=slot_names[a[2]], about=a[3])
    elif code in ("crisp", "no_crisp"):
        fields.update(sum=a[0], chance=a[1])
    return _TEXTS[lang][code].format(**fields)
