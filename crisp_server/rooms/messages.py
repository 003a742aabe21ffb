"""What is posted to a room (``RoomMessage``): a driver's inbound message, its detach, timer ticks, the
registry's expiries and shutdown, and the reload after an outage; and ``RoomError``, a refused request."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from crisp_server.store.reads import StoredRoom
from crisp_server.wire import protocol as p

from .driver import SeatDriver


@dataclass(frozen=True, slots=True)
class Inbound:
    conn: SeatDriver
    message: Any  # a protocol.Inbound model
    arrived: float = field(default_factory=time.perf_counter)  # for the action-to-publish latency


@dataclass(frozen=True, slots=True)
class Detach:
    conn: SeatDriver


@dataclass(frozen=True, slots=True)
class Tick:
    pass


@dataclass(frozen=True, slots=True)
class Shutdown:
    pass


@dataclass(frozen=True, slots=True)
class Expire:
    """Nobody has been here for long: close the room if that is still so."""


@dataclass(frozen=True, slots=True)
class Abandon:
    """No player has been connected to the game for long: end it unfinished if that is still so."""


@dataclass(frozen=True, slots=True)
class Reload:
    """The database answers again: go on from what it has of the room (``None``: it has no open room)."""

    stored: StoredRoom | None


@dataclass(frozen=True, slots=True)
class MoveAway:
    """In a cluster: hand the room over to another node (asked by it, or this node drains): after what is
    being committed, every member is sent ``moved`` and closed with 4005, and the room stops here."""


RoomMessage = Inbound | Detach | Tick | Shutdown | Expire | Abandon | Reload | MoveAway


class RoomError(Exception):
    """A request refused by the room: answered to its sender only, nothing changed."""

    def __init__(self, code: p.ErrorCode) -> None:
        super().__init__(code.value)
        self.code = code
