"""Write-ahead: a room hands what changed to the store and sends what it caused only once that is
committed, in order, while it goes on handling messages; a failed commit suspends the room and nobody
hears of what was not saved (tests/web/test_outage.py: how it comes back)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Any

import orjson

from crisp_server import protocol as p
from crisp_server.rooms.clock import ManualClock
from crisp_server.rooms.messages import Inbound
from crisp_server.rooms.room import Room
from crisp_server.settings import Settings
from crisp_server.store.operations import Op, ReserveVersion, SaveRoom

Done = Callable[[BaseException | None], None]


class HeldStore:
    """A store that commits only when the test says so."""

    def __init__(self) -> None:
        self.waiting: list[tuple[Sequence[Op], Done, Callable[[], bool]]] = []
        self.committed: list[Op] = []

    def submit(
        self,
        ops: Sequence[Op],
        done: Done,
        skip: Callable[[], bool] = lambda: False,
        fence: tuple[str, int] | None = None,
    ) -> None:
        assert fence is None, "one node alone: no lease"
        self.waiting.append((ops, done, skip))

    def commit_next(self, error: BaseException | None = None) -> None:
        ops, done, skip = self.waiting.pop(0)
        if skip():
            done(RuntimeError("dropped"))
            return
        if error is None:
            self.committed.extend(ops)
        done(error)


class Phone:
    def __init__(self) -> None:
        self.lang = "en"
        self.room: Room | None = None
        self.frames: list[dict[str, Any]] = []
        self.closed: tuple[int, str] | None = None

    def send(self, data: bytes) -> None:
        self.frames.append(orjson.loads(data))

    def close(self, code: int, reason: str = "") -> None:
        self.closed = (code, reason)

    def kinds(self) -> list[str]:
        return [f["type"] for f in self.frames]


def room_with(store: HeldStore) -> Room:
    return Room("ABCDEF", "http://test/r/ABCDEF", Settings(), ManualClock(), store=store)  # type: ignore[arg-type]


def say(room: Room, phone: Phone, message: dict[str, Any]) -> None:
    room.post(Inbound(phone, p.parse_inbound(orjson.dumps(message))))


def test_nothing_is_sent_before_its_commit_and_order_is_kept() -> None:
    store = HeldStore()
    room = room_with(store)
    ana, ben = Phone(), Phone()
    say(room, ana, {"type": "create", "name": "Ana"})
    assert ana.frames == [], "the welcome waits for the room's first save"
    say(room, ben, {"type": "join", "room": "ABCDEF", "name": "Ben"})
    say(room, ben, {"type": "react", "emoji": "nope"})  # refused: no change, but it waits its turn
    assert ana.frames == ben.frames == []
    assert len(store.waiting) == 3, "the room went on handling while its first change was in the store"

    store.commit_next()
    assert ana.kinds()[0] == "welcome"
    assert ben.frames == []
    store.commit_next()
    assert ben.kinds()[0] == "welcome"
    assert "error" not in ben.kinds(), "the refusal came after the join: it is not sent before it"
    store.commit_next()
    assert ben.kinds()[-1] == "error"
    assert all(isinstance(op, SaveRoom | ReserveVersion) for op in store.committed)


def test_a_failed_commit_suspends_the_room_and_drops_what_followed() -> None:
    store = HeldStore()
    room = room_with(store)
    ana, ben = Phone(), Phone()
    say(room, ana, {"type": "create", "name": "Ana"})
    store.commit_next()
    v = room.v
    say(room, ben, {"type": "join", "room": "ABCDEF", "name": "Ben"})
    say(room, ana, {"type": "options", "score_limit": 50, "turn_seconds": 30, "discard_draw": True})
    before = list(ana.frames)

    store.commit_next(RuntimeError("disk full"))
    assert room.suspended
    assert not room.closed
    # Nobody is told of Ben's join or the options: the room says it is unavailable, at the version last sent.
    assert room.v == v
    assert [f["type"] for f in ana.frames if f not in before] == ["unavailable"]
    assert ana.frames[-1]["v"] == v
    assert ana.closed is None, "the connections stay open"
    assert "welcome" not in ben.kinds()

    committed = len(store.committed)
    store.commit_next()  # the options change, queued behind the failed one: dropped, not written
    assert len(store.committed) == committed
    say(room, ana, {"type": "start"})  # refused while suspended: nothing changes, nothing is submitted
    assert store.waiting == []
    assert ana.frames[-1]["code"] == "unavailable"
    assert room.phase.value == "lobby"


def test_a_room_whose_creation_was_not_saved_closes_and_says_so() -> None:
    store = HeldStore()
    closed: list[Room] = []
    room = Room("ABCDEF", "http://test/r/ABCDEF", Settings(), ManualClock(), closed.append, store=store)  # type: ignore[arg-type]
    ana = Phone()
    say(room, ana, {"type": "create", "name": "Ana"})
    store.commit_next(RuntimeError("database is locked"))
    assert closed == [room], "there is nothing to come back to: it leaves the registry"
    assert ana.kinds() == ["error"]
    assert ana.frames[0]["code"] == "unavailable"
    assert ana.room is None


async def test_flush_waits_until_everything_submitted_is_committed_and_sent() -> None:
    store = HeldStore()
    room = room_with(store)
    ana = Phone()
    say(room, ana, {"type": "create", "name": "Ana"})
    flushing = asyncio.ensure_future(room.flush())
    await asyncio.sleep(0)
    assert not flushing.done()
    store.commit_next()
    await asyncio.wait_for(flushing, 1)
    assert ana.kinds()[0] == "welcome"
