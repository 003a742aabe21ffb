"""Write-ahead: a room hands what changed to the store and sends what it caused only once that is
committed, in order, while it goes on handling messages; a failed commit suspends the room and nobody
hears of what was not saved (tests/web/test_outage.py: how it comes back)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Any

import orjson

from crisp_server.rooms.clock import ManualClock
from crisp_server.rooms.driver import CLOSE_REPLACED, RoomHandle
from crisp_server.rooms.messages import Inbound, Reload
from crisp_server.rooms.room import Room
from crisp_server.settings import Settings
from crisp_server.store.operations import Op, ReserveVersion, SaveRoom
from crisp_server.store.reads import StoredRoom
from crisp_server.wire import protocol as p

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
        self.room: RoomHandle | None = None
        self.origin: str | None = "http://test"
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


def stored_as_committed(room: Room, store: HeldStore) -> StoredRoom:
    """The lobby as the database has it: the last saved ``SaveRoom`` and version reserved."""
    saved = [op for op in store.committed if isinstance(op, SaveRoom)][-1]
    reserved = max(op.v for op in store.committed if isinstance(op, ReserveVersion))
    options, seats = dict(saved.options), list(saved.seats)
    return StoredRoom(saved.room_id, saved.code, saved.link, saved.phase, saved.host, options, seats, v=reserved)


def lobby_of_two(store: HeldStore) -> tuple[Room, Phone, Phone, str]:
    """Ana's room with Ben in it, everything committed; Ana's token."""
    room = room_with(store)
    ana, ben = Phone(), Phone()
    say(room, ana, {"type": "create", "name": "Ana"})
    say(room, ben, {"type": "join", "room": "ABCDEF", "name": "Ben"})
    while store.waiting:
        store.commit_next()
    token = ana.frames[0]["token"]
    assert isinstance(token, str)
    return room, ana, ben, token


def test_a_player_back_while_a_failing_commit_is_in_flight_is_welcomed_and_told() -> None:
    store = HeldStore()
    room, ana, ben, token = lobby_of_two(store)
    marks = {ana: len(ana.frames), ben: len(ben.frames)}
    say(room, ana, {"type": "options", "score_limit": 50, "turn_seconds": 30, "discard_draw": True})
    again = Phone()  # Ana reloads the page while her change is being saved
    say(room, again, {"type": "resume", "room": "ABCDEF", "token": token})
    assert again.frames == []

    store.commit_next(RuntimeError("disk full"))
    assert room.suspended
    # The resume followed the failed change, so the welcome queued behind it is not sent: it is given now,
    # with what holds.
    assert again.kinds() == ["welcome", "unavailable"]
    assert again.frames[0]["seat"] == 0
    assert again.frames[0]["token"] is None
    assert again.closed is None
    assert ben.kinds()[marks[ben] :] == ["unavailable"]
    store.commit_next()  # the resume's own commit, behind the failed one: dropped, nothing is sent twice,
    assert again.kinds() == ["welcome", "unavailable"]
    assert ana.kinds()[marks[ana] :] == ["replaced"]  # and the older tab is closed as replaced, as it would be
    assert ana.closed is not None
    assert ana.closed[0] == CLOSE_REPLACED


def test_a_player_back_while_the_room_tries_the_database_again_is_welcomed_and_told() -> None:
    store = HeldStore()
    room, ana, ben, token = lobby_of_two(store)
    say(room, ben, {"type": "react", "emoji": "nope"})  # anything that waits behind a commit
    say(room, ana, {"type": "options", "score_limit": 50, "turn_seconds": 30, "discard_draw": True})
    while store.waiting:
        store.commit_next(RuntimeError("disk full"))
    assert room.suspended
    marks = {ana: len(ana.frames), ben: len(ben.frames)}

    room.post(Reload(stored_as_committed(room, store)))  # the registry's next try: it is saving the room again
    assert not room.suspended
    again = Phone()
    say(room, again, {"type": "resume", "room": "ABCDEF", "token": token})
    store.commit_next(RuntimeError("disk full"))  # the try fails: the room waits again, its members told once
    assert room.suspended
    assert again.kinds() == ["welcome", "unavailable"]
    assert ben.kinds()[marks[ben] :] == []
    while store.waiting:
        store.commit_next()
    assert again.kinds() == ["welcome", "unavailable"]
    assert ana.kinds()[marks[ana] :] == ["replaced"]
    assert ana.closed is not None

    # The database answers: the player on the new tab is back in the game, the old one stays closed.
    room.post(Reload(stored_as_committed(room, store)))
    store.commit_next()
    assert not room.suspended
    assert again.kinds()[-1] == "update"
    assert {"type": "available"} in again.frames[-1]["events"]
    assert ana.kinds()[marks[ana] :] == ["replaced"]


def test_a_join_while_a_failing_commit_is_in_flight_is_told_and_not_welcomed() -> None:
    store = HeldStore()
    room, ana, _, _ = lobby_of_two(store)
    say(room, ana, {"type": "options", "score_limit": 50, "turn_seconds": 30, "discard_draw": True})
    cleo = Phone()
    say(room, cleo, {"type": "join", "room": "ABCDEF", "name": "Cleo"})
    store.commit_next(RuntimeError("disk full"))
    assert cleo.kinds() == ["unavailable"], "nobody hears of a seat the database may lack"
    room.post(Reload(stored_as_committed(room, store)))
    while store.waiting:
        store.commit_next()
    assert cleo.kinds() == ["unavailable", "error"]
    assert cleo.frames[-1]["code"] == "unavailable"
    assert cleo.room is None


def commit_all(store: HeldStore) -> None:
    while store.waiting:
        store.commit_next()


def back_on_new_phone(room: Room, store: HeldStore, token: str) -> int:
    """A player resumes with ``token`` on a new connection, everything committed: the seat it is welcomed to."""
    phone = Phone()
    say(room, phone, {"type": "resume", "room": "ABCDEF", "token": token})
    commit_all(store)
    assert phone.kinds()[0] == "welcome"
    seat = phone.frames[0]["seat"]
    assert isinstance(seat, int)
    return seat


def _saved_seats(store: HeldStore, since: int = 0) -> list[tuple[bool, ...]]:
    """Each ``SaveRoom`` committed from ``since`` on: whether each seat had left."""
    return [tuple(s.left for s in op.seats) for op in store.committed[since:] if isinstance(op, SaveRoom)]


def test_a_reconnect_writes_nothing_and_a_seat_taken_back_after_leaving_is_saved() -> None:
    """A player back on a new connection changes nothing the database keeps: 8,000 players back after a restart
    write no room. A player who left a game and takes the seat back is saved as seated again."""
    store = HeldStore()
    room, ana, ben, token = lobby_of_two(store)
    ben_token = ben.frames[0]["token"]
    say(room, ana, {"type": "start"})
    commit_all(store)
    mark = len(store.committed)
    assert back_on_new_phone(room, store, token) == 0
    assert _saved_seats(store, mark) == []

    say(room, ben, {"type": "leave"})
    commit_all(store)
    assert _saved_seats(store)[-1] == (False, True)
    assert back_on_new_phone(room, store, ben_token) == 1
    assert _saved_seats(store)[-1] == (False, False)
