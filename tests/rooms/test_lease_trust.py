"""A room of a cluster node sends nothing but ``moved`` once its lease may have run out.

The lease is trusted until ``Room.lease_until`` (the monotonic instant the cluster derives from the start of
its last successful claim or renewal); past it, another node may run the room. Whatever the room would send
then (an answer, an update after a commit, a timer's update, an ``unavailable`` after a failed commit) is
replaced by ``moved`` and the 4005 close, and the room stops here. tests/cluster/test_woken.py does it with
a real node frozen and woken.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from crisp_server.rooms.clock import ManualClock
from crisp_server.rooms.driver import CLOSE_MOVED
from crisp_server.rooms.room import Room
from crisp_server.settings import Settings
from crisp_server.store.operations import Op
from tests.rooms.test_write_ahead import Phone, say

Done = Callable[[BaseException | None], None]


class LeasedStore:
    """A cluster node's store that commits only when the test says so, and notes each room's fence."""

    def __init__(self) -> None:
        self.waiting: list[tuple[Sequence[Op], Done, Callable[[], bool]]] = []
        self.fences: list[tuple[str, int] | None] = []

    def submit(
        self,
        ops: Sequence[Op],
        done: Done,
        skip: Callable[[], bool] = lambda: False,
        fence: tuple[str, int] | None = None,
    ) -> None:
        self.fences.append(fence)
        self.waiting.append((ops, done, skip))

    def commit_next(self, error: BaseException | None = None) -> None:
        _ops, done, skip = self.waiting.pop(0)
        done(RuntimeError("dropped") if skip() else error)

    def commit_all(self) -> None:
        while self.waiting:
            self.commit_next()


def leased_room(store: LeasedStore) -> tuple[Room, list[Room], Phone, Phone]:
    """A room with a trusted lease (epoch 3), Ana and Ben in its lobby, everything committed and sent."""
    closed: list[Room] = []
    room = Room("ABCDEF", "http://test/r/ABCDEF", Settings(), ManualClock(), closed.append, store=store)  # type: ignore[arg-type]
    room.lease, room.lease_until = 3, time.monotonic() + 60
    ana, ben = Phone(), Phone()
    say(room, ana, {"type": "create", "name": "Ana"})
    say(room, ben, {"type": "join", "room": "ABCDEF", "name": "Ben"})
    store.commit_all()
    assert ana.kinds()[0] == ben.kinds()[0] == "welcome"
    assert store.fences
    assert all(fence == ("ABCDEF", 3) for fence in store.fences), "every commit carries the room's lease"
    return room, closed, ana, ben


def only_moved(phone: Phone, mark: int) -> None:
    assert phone.kinds()[mark:] == ["moved"]
    assert phone.closed == (CLOSE_MOVED, "moved")


def test_a_commit_that_ends_after_the_lease_ran_out_sends_moved_not_its_update() -> None:
    store = LeasedStore()
    room, closed, ana, ben = leased_room(store)
    say(room, ana, {"type": "options", "score_limit": 50, "turn_seconds": 30, "discard_draw": True})
    store.commit_next()
    assert ben.kinds()[-1] == "update", "while the lease is trusted, updates go out"
    marks = len(ana.frames), len(ben.frames)
    say(room, ana, {"type": "options", "score_limit": 50, "turn_seconds": 60, "discard_draw": True})
    room.lease_until = time.monotonic() - 0.001  # the renewal is overdue by the time the commit answers
    store.commit_next()
    only_moved(ana, marks[0])
    only_moved(ben, marks[1])
    assert room.lost
    assert room.closed
    assert closed == [room]
    assert ana.room is None


def test_an_answer_without_a_commit_is_moved_once_the_lease_ran_out() -> None:
    store = LeasedStore()
    room, _, ana, ben = leased_room(store)
    marks = len(ana.frames), len(ben.frames)
    room.lease_until = time.monotonic() - 0.001
    say(room, ana, {"type": "ping"})  # answered at once, nothing to commit
    assert store.waiting == []
    only_moved(ana, marks[0])
    only_moved(ben, marks[1])
    assert room.lost


def test_a_failed_commit_after_the_lease_ran_out_is_a_lost_lease_not_an_outage() -> None:
    store = LeasedStore()
    room, closed, ana, ben = leased_room(store)
    marks = len(ana.frames), len(ben.frames)
    say(room, ana, {"type": "options", "score_limit": 50, "turn_seconds": 30, "discard_draw": True})
    room.lease_until = time.monotonic() - 0.001
    store.commit_next(ConnectionError("connection was closed in the middle of operation"))
    only_moved(ana, marks[0])
    only_moved(ben, marks[1])
    assert not room.suspended
    assert room.lost
    assert closed == [room]


def test_a_failed_commit_while_the_lease_is_trusted_is_still_an_outage() -> None:
    store = LeasedStore()
    room, _, ana, _ben = leased_room(store)
    mark = len(ana.frames)
    say(room, ana, {"type": "options", "score_limit": 50, "turn_seconds": 30, "discard_draw": True})
    store.commit_next(ConnectionError("connection refused"))
    assert room.suspended
    assert ana.kinds()[mark:] == ["unavailable"]
    assert ana.closed is None
    # ... and once the lease runs out unrenewed, a suspended room's answer is ``moved`` too.
    room.lease_until = time.monotonic() - 0.001
    say(room, ana, {"type": "ping"})
    only_moved(ana, mark + 1)
    assert room.lost
