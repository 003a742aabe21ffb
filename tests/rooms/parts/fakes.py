"""Fakes of a room's parts' neighbours, so that each part is tested alone: no event loop, no store, no room."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import orjson

from crisp_server.engine import Event
from crisp_server.rooms.clock import ManualClock
from crisp_server.rooms.driver import RoomHandle
from crisp_server.rooms.seats import Seat, TokenBucket
from crisp_server.rooms.state import RoomState
from crisp_server.settings import Settings
from crisp_server.wire import protocol as p


def state(*, keeps: bool = False) -> RoomState:
    """A room's data on a manual clock; ``keeps``: as if it had a store (its changes are collected)."""
    return RoomState("ABCDEF", "http://test/r/ABCDEF", "room-1", Settings(), ManualClock(), keeps=keeps)


def inbound(kind: str, **fields: Any) -> Any:
    """An inbound message of ``kind``, parsed as a client's frame is."""
    return p.parse_inbound(orjson.dumps({"type": kind, **fields}))


def advance(st: RoomState, ms: int) -> None:
    """Move the room's manual clock on by ``ms`` (timers due fire)."""
    assert isinstance(st.clock, ManualClock)
    st.clock.advance(ms)


def seat(st: RoomState, name: str, conn: Phone | None = None, *, bot: str | None = None) -> Seat:
    """A seat taken directly in ``st`` (``conn`` a member on it)."""
    taken = Seat(name, f"hash-{name}", TokenBucket(3, 1.0, st.clock.now()), conn, bot=bot)
    st.seats.append(taken)
    if conn is not None:
        st.members[conn] = taken
    return taken


class Phone:
    """A member's connection: what the room sends it at once (not through the outbox) is kept."""

    lang = "en"
    origin: str | None = "http://test"

    def __init__(self) -> None:
        self.room: RoomHandle | None = None
        self.sent: list[dict[str, Any]] = []
        self.closed: tuple[int, str] | None = None

    def send(self, data: bytes) -> None:
        self.sent.append(orjson.loads(data))

    def close(self, code: int, reason: str = "") -> None:
        self.closed = (code, reason)


class Handle:
    """The room as its drivers see it."""

    code = "ABCDEF"
    v = 0

    def __init__(self) -> None:
        self.posted: list[Any] = []

    def post(self, message: Any, /) -> None:
        self.posted.append(message)


class Publisher:
    """Records what a part publishes; greets and answers as the real one would, in short."""

    def __init__(self, st: RoomState) -> None:
        self.st = st
        self.published: list[tuple[list[Event], list[dict[str, Any]]]] = []
        self.greeted: list[tuple[Any, int | None, str | None, bool]] = []

    def publish(self, events: Sequence[Event], room_events: list[dict[str, Any]]) -> None:
        self.st.v += 1
        self.published.append((list(events), room_events))

    def greet(self, conn: Any, index: int | None, token: str | None, again: bool) -> None:
        self.greeted.append((conn, index, token, again))
        self.st.send(conn, orjson.dumps({"type": "welcome", "seat": index, "token": token}))

    def welcome(self, index: int | None, token: str | None) -> bytes:
        return orjson.dumps({"type": "welcome", "v": self.st.v, "seat": index, "token": token})

    def message(self, conn: Any, kind: str, events: list[Any]) -> bytes:
        return orjson.dumps({"type": kind, "v": self.st.v, "events": events})

    def kinds(self) -> list[str]:
        """The type of each room event published, in order."""
        return [e["type"] for _, room_events in self.published for e in room_events]


class Flow:
    """The table as the seats see it: records each call."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def wait_if_deserted(self) -> None:
        self.calls.append("wait_if_deserted")

    def maybe_all_ready(self) -> None:
        self.calls.append("maybe_all_ready")

    def unpause(self) -> list[Event]:
        self.calls.append("unpause")
        return []

    def advance(self) -> list[Event]:
        self.calls.append("advance")
        return []

    def after_play(self, events: list[Event], room_events: list[dict[str, Any]]) -> None:
        self.calls.append("after_play")

    def abandon(self) -> None:
        self.calls.append("abandon")


class Hooks:
    """The computer players as the table sees them: records each call, with the phase it came in."""

    def __init__(self, st: RoomState) -> None:
        self.st = st
        self.calls: list[tuple[str, str]] = []

    def starting(self) -> None:
        self.calls.append(("starting", self.st.phase.value))

    def rematching(self) -> None:
        self.calls.append(("rematching", self.st.phase.value))

    def unpaused(self) -> None:
        self.calls.append(("unpaused", self.st.phase.value))
