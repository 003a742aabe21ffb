"""The messages a bot may send now, derived from its view, and the shape every level's choice takes.

Legality comes from the seat's own view only: ``you.can`` names the kinds of move the rules allow now
(``docs/protocol.md``), and the table gives the rest (how many seats a Queen may target, whether the
discard pile may be drawn from). Every level chooses among :func:`play_options` / :func:`draw_options`,
so an illegal message is a bug in this module, never a level's guess.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Protocol

from .memory import SLOTS, Memory

if TYPE_CHECKING:  # the type only: randomness is always the caller's seeded generator
    from random import Random

Message = dict[str, Any]

#: The kinds in ``you.can`` that play a drawn card.
PLAY_KINDS: Final = ("swap", "discard", "jack", "queen", "king")


@dataclass(frozen=True, slots=True)
class Reason:
    """Why a level chose a move: a code and its figures, rendered in a language by :mod:`.hints`."""

    code: str
    args: tuple[Any, ...] = ()


@dataclass(frozen=True, slots=True)
class Decision:
    """A message to send and, for the levels that can explain themselves, why."""

    message: Message
    reason: Reason | None = None


class Level(Protocol):
    """A level's three decisions. Each is asked only when its moment has come (see ``Bot.due``)."""

    name: str

    def draw(self, m: Memory, rng: Random) -> Decision:
        """Where to draw from (``m.can`` allows a draw, or will once the draw block ends)."""
        ...

    def play(self, m: Memory, rng: Random) -> Decision:
        """What to do with the drawn card ``m.drawn``."""
        ...

    def crisp(self, m: Memory, rng: Random) -> Decision | None:
        """Whether to call Crisp now that this seat's window is open: the call, or ``None`` to let it pass."""
        ...


def draw(source: str) -> Message:
    return {"type": "draw", "from": source}


def swap(slot: int) -> Message:
    return {"type": "swap", "slot": SLOTS[slot]}


def simple(kind: str) -> Message:
    """``discard``, ``jack``, ``king`` or ``crisp``: a message with no fields."""
    return {"type": kind}


def queen(slot: int, target: int, target_slot: int) -> Message:
    return {"type": "queen", "slot": SLOTS[slot], "target": target, "target_slot": SLOTS[target_slot]}


def draw_options(m: Memory) -> list[str]:
    """The piles this seat may draw from: ``deck`` always, ``discard`` with the host option and a card there.

    During the two-second draw block ``you.can`` is still empty, so the table decides (the room waits for the
    block's end before it sends the draw)."""
    can = m.can
    if "draw_deck" in can:
        return ["deck", "discard"] if "draw_discard" in can else ["deck"]
    return ["deck", "discard"] if m.discard_draw and m.discard else ["deck"]


def play_options(m: Memory) -> list[str]:
    """The kinds of play the view allows for the drawn card, in ``you.can``'s order."""
    return [k for k in m.can if k in PLAY_KINDS]


def all_plays(m: Memory) -> list[Message]:
    """Every legal message for the drawn card (a Queen: every own slot, other seat and its slot)."""
    assert m.me is not None
    out: list[Message] = []
    for kind in play_options(m):
        if kind == "swap":
            out.extend(swap(s) for s in range(3))
        elif kind == "queen":
            out.extend(queen(a, t, b) for a in range(3) for t in m.opponents() for b in range(3))
        else:
            out.append(simple(kind))
    return out
