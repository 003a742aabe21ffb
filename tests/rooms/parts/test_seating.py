"""The seats alone: who sits where, tokens and the host, with fakes of the publisher and the table."""

from __future__ import annotations

import pytest

from crisp_server.rooms.driver import CLOSE_KICKED, CLOSE_REPLACED
from crisp_server.rooms.messages import RoomError
from crisp_server.rooms.phase import Phase
from crisp_server.rooms.seating import Seating
from crisp_server.rooms.seats import Seat
from crisp_server.rooms.state import RoomState
from crisp_server.rooms.tokens import hash_token
from crisp_server.wire import protocol as p

from .fakes import Flow, Handle, Phone, Publisher, state


class Parts:
    def __init__(self) -> None:
        self.st: RoomState = state()
        self.publisher = Publisher(self.st)
        self.table = Flow()
        self.room = Handle()
        self.closes = 0
        self.claimed: list[Seat] = []
        self.seating = Seating(
            self.st, self.publisher, self.table, room=self.room, close=self._close, claimed=self.claimed.append
        )

    def _close(self) -> None:
        self.closes += 1

    def join(self, name: str) -> tuple[Phone, str]:
        """``name`` joins; the connection and the token it was welcomed with."""
        phone = Phone()
        self.seating.join(phone, name)
        token = self.publisher.greeted[-1][2]
        assert token is not None
        return phone, token


def test_a_join_takes_the_next_seat_welcomes_with_a_token_and_is_published() -> None:
    parts = Parts()
    ana, token = parts.join("Ana")
    ben, _ = parts.join("  Ben ")
    assert [s.name for s in parts.st.seats] == ["Ana", "Ben"]
    assert parts.st.seats[0].token_hash == hash_token(token)  # only the hash is kept
    assert parts.st.members == {ana: parts.st.seats[0], ben: parts.st.seats[1]}
    assert ana.room is parts.room
    assert ben.room is parts.room
    assert parts.publisher.kinds() == ["joined", "joined"]
    assert parts.st.host == 0
    assert parts.table.calls == []  # the lobby: nothing for the table


def test_a_name_taken_or_a_game_running_is_refused_and_changes_nothing() -> None:
    parts = Parts()
    parts.join("Ana")
    with pytest.raises(RoomError) as refused:
        parts.seating.join(Phone(), "ana")
    assert refused.value.code is p.ProtocolCode.NAME_TAKEN
    parts.st.phase = Phase.PLAY
    latecomer = Phone()
    with pytest.raises(RoomError) as refused:
        parts.seating.join(latecomer, "Cleo")
    assert refused.value.code is p.ProtocolCode.GAME_RUNNING
    assert len(parts.st.seats) == 1
    assert latecomer.room is None


def test_a_resume_on_a_new_connection_replaces_the_old_one_and_tells_the_table() -> None:
    parts = Parts()
    old, token = parts.join("Ana")
    parts.st.outbox.clear()
    new = Phone()
    parts.seating.resume(new, token)
    seat = parts.st.seats[0]
    assert seat.conn is new
    assert parts.st.members == {new: seat}
    assert old.room is None
    assert new.room is parts.room
    assert parts.claimed == [seat]  # the computer players hear of it (hints forget)
    assert "unpause" in parts.table.calls
    sent_to_old = [item for conn, item in parts.st.outbox if conn is old]
    assert sent_to_old[-1] == (CLOSE_REPLACED, "replaced by a newer connection")
    with pytest.raises(RoomError) as refused:
        parts.seating.resume(Phone(), "not-a-token")
    assert refused.value.code is p.ProtocolCode.BAD_TOKEN


def test_the_host_leaving_the_lobby_passes_the_host_on_and_the_last_one_closes_the_room() -> None:
    parts = Parts()
    ana, _ = parts.join("Ana")
    ben, _ = parts.join("Ben")
    parts.seating.leave(ana)
    assert [s.name for s in parts.st.seats] == ["Ben"]
    assert parts.st.host == 0
    assert parts.closes == 0
    parts.seating.leave(ben)
    assert parts.closes == 1


def test_only_the_host_kicks_in_the_lobby_and_the_kicked_connection_is_closed() -> None:
    parts = Parts()
    _ana, _ = parts.join("Ana")
    ben, _ = parts.join("Ben")
    host, guest = parts.st.seats
    with pytest.raises(RoomError) as refused:
        parts.seating.kick(guest, 0)
    assert refused.value.code is p.ProtocolCode.NOT_HOST
    parts.seating.kick(host, 1)
    assert [s.name for s in parts.st.seats] == ["Ana"]
    assert ben.room is None
    assert (ben, (CLOSE_KICKED, "removed by the host")) in parts.st.outbox
    assert parts.publisher.kinds()[-1] == "kicked"


def test_a_player_gone_during_a_game_lets_the_table_wait_and_counts_as_not_waited_for() -> None:
    parts = Parts()
    ana, _ = parts.join("Ana")
    parts.join("Ben")
    parts.st.phase = Phase.PEEK
    parts.seating.detach(ana)
    seat = parts.st.seats[0]
    assert seat.conn is None
    assert seat.away_since == parts.st.clock.now()
    assert parts.table.calls == ["wait_if_deserted", "maybe_all_ready"]
    assert parts.publisher.kinds()[-1] == "disconnected"
