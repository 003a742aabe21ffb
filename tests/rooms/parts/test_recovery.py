"""Recovery alone: a room's data rebuilt from what the database has, and what a suspended room answers, with
fakes of the publisher and of the room's ends (no event loop, no store)."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

from crisp_server.rooms.messages import Detach, Inbound, MoveAway, Reload
from crisp_server.rooms.phase import Phase
from crisp_server.rooms.recovery import Recovery
from crisp_server.rooms.seats import Seat
from crisp_server.store.operations import SeatData
from crisp_server.store.reads import StoredRoom

from .fakes import Phone, Publisher, inbound, seat, state


class Parts:
    def __init__(self) -> None:
        self.st = state()
        self.publisher = Publisher(self.st)
        self.ends: list[str] = []
        self.claims: list[str] = []
        self.recovery = Recovery(
            self.st,
            self.publisher,
            claim_seat=self._claim,
            unpause=list,
            seat_computers=lambda: self.ends.append("seat_computers"),
            shutdown=lambda: self.ends.append("shutdown"),
            move_away=lambda: self.ends.append("move_away"),
            gone=lambda: self.ends.append("gone"),
        )

    def _claim(self, conn: object, token: str) -> Seat:
        self.claims.append(token)
        return self.st.seats[0]


def stored(phase: str, *, hours_ago: float = 0) -> StoredRoom:
    return StoredRoom(
        "room-1",
        "ABCDEF",
        "http://test/r/ABCDEF",
        phase,
        1,
        {"score_limit": 50, "turn_seconds": None, "discard_draw": False, "stand_in": 60},
        [SeatData("Ana", "h-ana", False, None, None), SeatData("Ada", "h-ada", True, None, "easy")],
        updated_at=datetime.now(UTC) - timedelta(hours=hours_ago),
        v=2000,
    )


def test_the_lobby_is_loaded_as_the_database_has_it() -> None:
    parts = Parts()
    parts.recovery.load(stored("lobby"))
    st = parts.st
    assert [(s.name, s.left, s.bot, s.ready) for s in st.seats] == [
        ("Ana", False, None, False),
        ("Ada", True, "easy", True),
    ]
    assert (st.host, st.stand_in, st.options.score_limit, st.v_reserved) == (1, 60, 50, 2000)
    assert st.phase is Phase.LOBBY
    assert not st.paused
    assert st.saved


def test_the_big_screen_is_loaded_as_saved_and_off_for_a_room_saved_without_it() -> None:
    parts = Parts()
    parts.recovery.load(stored("lobby"))  # (saved before the option existed: no key)
    assert parts.st.big_screen is False
    on = stored("lobby")
    parts = Parts()
    parts.recovery.load(replace(on, options={**on.options, "big_screen": True}))
    assert parts.st.big_screen is True
    assert parts.st.options.score_limit == 50


def test_a_game_that_was_never_saved_goes_back_to_the_lobby() -> None:
    parts = Parts()
    parts.recovery.load(stored("play", hours_ago=1))
    assert parts.st.phase is Phase.LOBBY
    assert parts.st.game is None
    assert not parts.st.paused


def test_a_suspended_room_answers_its_members_and_changes_nothing() -> None:
    parts = Parts()
    st = parts.st
    phone, stranger = Phone(), Phone()
    seat(st, "Ana", phone)
    st.suspended = True
    parts.recovery.while_suspended(Inbound(phone, inbound("ping")))
    parts.recovery.while_suspended(Inbound(stranger, inbound("ping")))
    parts.recovery.while_suspended(Inbound(phone, inbound("ready")))
    answers = [(conn, item) for conn, item in st.outbox]
    assert [conn for conn, _ in answers] == [phone, stranger, phone]
    assert b'"pong"' in answers[0][1]
    assert b'"unavailable"' in answers[1][1]
    assert b'"unavailable"' in answers[2][1]
    parts.recovery.while_suspended(Inbound(Phone(), inbound("resume", room="ABCDEF", token="t")))
    assert parts.claims == ["t"]
    parts.recovery.while_suspended(Detach(phone))
    assert phone not in st.members
    assert st.seats[0].conn is None
    parts.recovery.while_suspended(MoveAway())
    parts.recovery.while_suspended(Reload(None))  # the database has no open room
    assert parts.ends == ["move_away", "gone"]
    assert not st.suspended
    assert parts.publisher.published == []


def test_the_members_are_told_once_per_outage_and_a_resumed_seat_is_welcomed_again() -> None:
    parts = Parts()
    st = parts.st
    ana, ben = Phone(), Phone()
    seat(st, "Ana", ana)
    seat(st, "Ben", ben)
    parts.recovery.tell_unavailable({ben: (b"welcome", True)}, first=True)
    assert st.suspended
    assert [m["type"] for m in ana.sent] == ["unavailable"]
    assert [m["type"] for m in ben.sent] == ["welcome", "unavailable"]
    assert ben.sent[0]["seat"] == 1
    parts.recovery.tell_unavailable({}, first=False)
    assert len(ana.sent) == 1
