"""The room's actor alone: one message at a time, nothing sent before what it follows is committed, and a
failed commit taken back, with a held store and a handler of its own (no room, no parts)."""

from __future__ import annotations

from typing import Any

import orjson

from crisp_server.rooms.actor import Actor
from crisp_server.rooms.driver import CLOSE_RESTART, SeatDriver
from crisp_server.rooms.messages import Detach, RoomMessage, Shutdown
from crisp_server.store.operations import SaveRoom
from tests.rooms.test_write_ahead import HeldStore

from .fakes import Handle, Phone, seat, state


class Parts:
    def __init__(self, store: HeldStore | None) -> None:
        self.st = state(keeps=store is not None)
        self.phone = Phone()
        seat(self.st, "Ana", self.phone)
        self.handled: list[RoomMessage] = []
        self.told: list[tuple[dict[SeatDriver, tuple[bytes, bool]], bool]] = []
        self.events: list[str] = []
        self.actor = Actor(
            self.st,
            store,  # type: ignore[arg-type]
            room=Handle(),
            handle=self.handle,
            wake_at=lambda: None,
            left=lambda: self.events.append("left"),
            suspended=lambda: self.events.append("suspended"),
            tell_unavailable=lambda greeting, first: self.told.append((greeting, first)),
        )

    def handle(self, message: RoomMessage) -> None:
        """Each message changes the room, and tells Ana; the first one posts another while handled."""
        self.handled.append(message)
        if len(self.handled) == 1:
            self.actor.post(Detach(self.phone))  # handled after this one, not inside it
        self.st.v += 1
        self.st.save_room()
        self.st.send(self.phone, orjson.dumps({"type": "update", "v": self.st.v, "n": len(self.handled)}))

    def kinds(self) -> list[Any]:
        return [m.get("n") for m in self.phone.sent]


def test_a_message_posted_while_one_is_handled_waits_its_turn() -> None:
    parts = Parts(store=None)
    parts.actor.post(Shutdown())
    assert [type(m).__name__ for m in parts.handled] == ["Shutdown", "Detach"]
    assert parts.kinds() == [1, 2]  # no store: sent at once, in order


def test_nothing_is_sent_before_the_commit_of_what_it_follows() -> None:
    store = HeldStore()
    parts = Parts(store)
    parts.actor.post(Shutdown())
    assert parts.phone.sent == []
    assert parts.actor.in_flight == 1
    assert all(isinstance(op, SaveRoom) for op in store.waiting[0][0])
    store.commit_next()
    assert parts.kinds() == [1, 2]
    assert parts.actor.in_flight == 0
    assert parts.st.v_sent == 2
    assert parts.st.saved


def test_a_first_commit_that_fails_takes_back_what_it_caused_and_closes_the_room() -> None:
    store = HeldStore()
    parts = Parts(store)
    parts.actor.post(Shutdown())
    store.commit_next(RuntimeError("the database is down"))
    # What followed the failed change is never sent; nobody saw those versions.
    assert parts.st.v == parts.st.v_sent == 0
    # The room's first save failed: there is nothing to go back to, and its creator is told to try again.
    assert [(m["type"], m["code"]) for m in parts.phone.sent] == [("error", "unavailable")]
    assert parts.st.closed
    assert parts.events == ["left", "suspended"]
    assert parts.told == []


def test_after_a_saved_state_a_failed_commit_suspends_and_recovery_tells_the_members() -> None:
    store = HeldStore()
    parts = Parts(store)
    parts.actor.post(Shutdown())
    store.commit_next()
    parts.actor.post(Shutdown())
    store.commit_next(RuntimeError("the database is down"))
    assert parts.told == [({}, True)]
    assert parts.events == ["suspended"]
    assert parts.st.v == parts.st.v_sent == 2


def test_shutdown_sends_everyone_away_after_what_is_queued() -> None:
    parts = Parts(store=None)
    parts.actor.shutdown()
    parts.actor.post(Detach(parts.phone))  # a closed room handles nothing more
    assert parts.st.closed
    assert parts.st.members == {}
    assert [m["type"] for m in parts.phone.sent] == ["restarting"]
    assert parts.phone.closed == (CLOSE_RESTART, "server restarting")
    assert parts.handled == []
    assert parts.events == []
