"""The publisher alone: what each member is sent, from a room's data alone (no event loop, no store)."""

from __future__ import annotations

from typing import Any

import orjson

from crisp_server.rooms import taps
from crisp_server.rooms.publishing import VERSION_BLOCK, Publisher
from crisp_server.store.operations import ReserveVersion

from .fakes import Phone, seat, state


def frames(outbox: list[Any]) -> dict[Any, dict[str, Any]]:
    return {conn: orjson.loads(data) for conn, data in outbox}


def test_each_member_gets_its_own_update_at_the_next_version() -> None:
    st = state()
    ana, ben, watcher = Phone(), Phone(), Phone()
    seat(st, "Ana", ana)
    seat(st, "Ben", ben)
    st.members[watcher] = None
    publisher = Publisher(st, auto_timeout_at=lambda: None, subject=None)
    publisher.publish([], [{"type": "joined", "seat": 1, "name": "Ben"}])
    sent = frames(st.outbox)
    assert st.v == 1
    assert set(sent) == {ana, ben, watcher}
    assert [sent[c]["you"]["seat"] for c in (ana, ben, watcher)] == [0, 1, None]
    assert sent[ana]["you"]["host"]
    assert not sent[ben]["you"]["host"]
    assert sent[watcher]["you"]["spectator"]
    for frame in sent.values():
        assert frame["type"] == "update"
        assert frame["v"] == 1
        assert frame["events"] == [{"type": "joined", "seat": 1, "name": "Ben"}]
        assert frame["room"]["spectators"] == 1
        assert [s["name"] for s in frame["room"]["seats"]] == ["Ana", "Ben"]
        assert frame["table"] is None


def test_versions_are_reserved_a_block_ahead_in_the_commit_that_carries_them() -> None:
    st = state(keeps=True)
    publisher = Publisher(st, auto_timeout_at=lambda: None, subject=None)
    publisher.next_version()
    assert st.ops == [ReserveVersion("room-1", 1 + VERSION_BLOCK)]
    st.ops.clear()
    publisher.next_version()
    assert st.v == 2
    assert st.ops == []


def test_a_welcome_is_remembered_until_delivered_and_the_taps_see_the_subject() -> None:
    st = state()
    phone = Phone()
    publisher = Publisher(st, auto_timeout_at=lambda: None, subject="the room")
    publisher.greet(phone, 0, "token", again=True)
    data, again = st.greeting[phone]
    assert again
    assert st.outbox == [(phone, data)]
    assert orjson.loads(data) == {
        "type": "welcome",
        "v": 0,
        "room": "ABCDEF",
        "seat": 0,
        "token": "token",
        "link": "http://test/r/ABCDEF",
        "idle_game_hours": st.settings.idle_game_hours,
    }
    seen: list[Any] = []
    taps.PUBLISHED.append(seen.append)
    try:
        publisher.publish([], [])
    finally:
        taps.PUBLISHED.remove(seen.append)
    assert seen == ["the room"]
