"""The room's dispatch: one table, message type -> the part's method; every message of the protocol is in it."""

from __future__ import annotations

from typing import get_args

from crisp_server.rooms import messages
from crisp_server.rooms import room as rooms
from crisp_server.rooms.clock import ManualClock
from crisp_server.rooms.room import Room
from crisp_server.settings import Settings
from crisp_server.wire import protocol as p

from .fakes import Phone, inbound


def room() -> Room:
    return Room("ABCDEF", "http://test/r/ABCDEF", Settings(), ManualClock())


def test_every_inbound_message_of_the_protocol_has_one_handler() -> None:
    anyone, members = rooms.ANYONE, rooms.MEMBERS
    protocol = set(get_args(get_args(p.Inbound)[0]))
    assert set(anyone) | set(members) == protocol
    assert not set(anyone) & set(members)
    assert set(anyone) == {*p.ENTRY_MESSAGES, p.Ping}  # the rest only from a member


def test_every_message_posted_to_a_room_has_a_handler_but_a_late_reload() -> None:
    posted = set(get_args(messages.RoomMessage))
    assert set(rooms.MESSAGES) == posted - {messages.Reload}


def test_a_stranger_is_refused_what_only_a_member_may_do_and_learns_no_version() -> None:
    r = room()
    stranger = Phone()
    r.post(messages.Inbound(stranger, inbound("ready")))
    assert stranger.sent == [{"type": "error", "v": 0, "code": "not_in_room", "message": stranger.sent[0]["message"]}]
