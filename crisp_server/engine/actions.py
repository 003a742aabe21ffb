"""What a player (or the server on a player's behalf) can do: small immutable value types.

Each action names the seat that does it; whether that seat may do it now is decided by
:func:`crisp_server.engine.game.Game.apply`, never here.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any

from .cards import Slot


class Source(Enum):
    """Where a move's card is drawn from."""

    DECK = "deck"
    """The top of the face-down draw pile: only the drawer sees the card."""
    DISCARD = "discard"
    """The top of the face-up discard pile (host option): everyone sees it, and it must be swapped in."""


@dataclass(frozen=True, slots=True)
class Draw:
    """Draw the move's card."""

    seat: int
    source: Source = Source.DECK


@dataclass(frozen=True, slots=True)
class Swap:
    """Put the drawn card into ``slot``; the card that was there goes face up onto the discard pile."""

    seat: int
    slot: Slot


@dataclass(frozen=True, slots=True)
class Discard:
    """Put the drawn card face up onto the discard pile unused."""

    seat: int


@dataclass(frozen=True, slots=True)
class UseJack:
    """Use a Jack drawn from the draw pile: look once at one's own middle card."""

    seat: int


@dataclass(frozen=True, slots=True)
class UseQueen:
    """Use a Queen drawn from the draw pile: exchange own ``slot`` with ``target``'s ``target_slot``, blind."""

    seat: int
    slot: Slot
    target: int
    target_slot: Slot


@dataclass(frozen=True, slots=True)
class UseKing:
    """Use a King drawn from the draw pile: two extra moves."""

    seat: int


@dataclass(frozen=True, slots=True)
class CallCrisp:
    """Call Crisp in one's own crisp window."""

    seat: int


@dataclass(frozen=True, slots=True)
class TimeOut:
    """Time the seat's current move out now (the server does it, e.g. for a disconnected player)."""

    seat: int


Action = Draw | Swap | Discard | UseJack | UseQueen | UseKing | CallCrisp | TimeOut

#: The ``do`` word of each action in records and on the wire.
ACTION_NAMES: dict[type[Action], str] = {
    Draw: "draw",
    Swap: "swap",
    Discard: "discard",
    UseJack: "jack",
    UseQueen: "queen",
    UseKing: "king",
    CallCrisp: "crisp",
    TimeOut: "timeout",
}


def action_fields(action: Action) -> dict[str, Any]:
    """``action``'s own fields in record form, beyond its seat and its ``do`` word (``ACTION_NAMES``): a draw's
    ``from``, a swap's ``slot``, a Queen's ``slot``, ``target`` and ``target_slot``; nothing for the others."""
    if isinstance(action, Draw):
        return {"from": action.source.value}
    if isinstance(action, Swap):
        return {"slot": action.slot.label}
    if isinstance(action, UseQueen):
        return {"slot": action.slot.label, "target": action.target, "target_slot": action.target_slot.label}
    return {}
