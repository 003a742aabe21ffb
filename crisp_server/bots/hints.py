"""Hints: what the hard level would do with a seat's own knowledge, and why, in one line in the player's
language (the lines are in ``crisp_server.texts``).

The seat's :class:`~crisp_server.bots.memory.Memory` is fed the updates that seat received, so a hint uses
nothing the player was not shown (it remembers better than a person does: that is the help).
"""

from __future__ import annotations

from dataclasses import dataclass
from random import Random
from typing import Any

from crisp_server.texts import Texts, texts

from .bot import decide, due
from .hard import HardLevel
from .memory import Memory
from .moves import Message, Reason


@dataclass(frozen=True, slots=True)
class Hint:
    """The move the hard level suggests (``None``: let the crisp window pass) and why."""

    message: Message | None
    reason: Reason

    def text(self, lang: str = "en") -> str:
        """The reason as one line in ``lang`` (English for a language the server does not have)."""
        return _render(self.reason, texts(lang))


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


def _card(code: str | None, catalog: Texts) -> str:
    return "?" if code is None else catalog.cards.name(code)


def _render(reason: Reason, catalog: Texts) -> str:
    a = reason.args
    fields: dict[str, Any] = {}
    code = reason.code
    slot = catalog.slots.name
    if code in ("draw_known", "discard"):
        fields["card"] = _card(a[0], catalog)
    elif code == "take":
        fields.update(card=_card(a[0], catalog), slot=slot(a[1]), about=a[2])
    elif code == "take_known":
        fields.update(card=_card(a[0], catalog), slot=slot(a[1]), old=_card(a[2], catalog))
    elif code == "swap":
        fields.update(slot=slot(a[0]), card=_card(a[1], catalog))
    elif code == "swap_known":
        fields.update(slot=slot(a[0]), old=_card(a[1], catalog), card=_card(a[2], catalog))
    elif code == "must_swap":
        fields["slot"] = slot(a[1])
    elif code == "queen":
        fields.update(slot=slot(a[0]), player=a[1], their_slot=slot(a[2]), about=a[3])
    elif code in ("crisp", "no_crisp"):
        fields.update(sum=a[0], chance=a[1])
    return catalog.hint(code).format(**fields)
