"""The computer players alone: seats of their own, stand-ins and hints' memory, with fakes of the publisher
and the seats (no event loop, no store)."""

from __future__ import annotations

import pytest

from crisp_server.bots import Memory
from crisp_server.rooms.botseat import STAND_IN_LEVEL, BotDriver
from crisp_server.rooms.computers import Computers
from crisp_server.rooms.messages import RoomError
from crisp_server.rooms.phase import Phase
from crisp_server.rooms.seats import Seat
from crisp_server.wire import protocol as p

from .fakes import Handle, Phone, Publisher, advance, seat, state


class Parts:
    def __init__(self) -> None:
        self.st = state()
        self.publisher = Publisher(self.st)
        self.room = Handle()
        self.removed: list[Seat] = []
        self.computers = Computers(self.st, self.publisher, room=self.room, remove_seat=self._remove_seat)

    def _remove_seat(self, taken: Seat) -> int:
        self.removed.append(taken)
        index = self.st.seats.index(taken)
        self.st.seats.remove(taken)
        return index


def test_the_host_adds_a_computer_player_that_posts_to_the_room_and_is_no_person_here() -> None:
    parts = Parts()
    seat(parts.st, "Ana", Phone())
    index = parts.computers.add_bot("easy")
    bot = parts.st.seats[index]
    assert (index, bot.bot, bot.name) == (1, "easy", "Ada")
    assert isinstance(bot.conn, BotDriver)
    assert bot.conn.room is parts.room
    assert parts.st.members[bot.conn] is bot
    assert parts.publisher.kinds() == ["bot_added"]
    assert parts.computers.people_here()
    parts.st.members.pop(parts.st.seats[0].conn)  # type: ignore[arg-type]
    assert not parts.computers.people_here()  # only a computer player is left


def test_removing_one_stops_its_driver_and_hands_the_seat_to_the_seats() -> None:
    parts = Parts()
    seat(parts.st, "Ana", Phone())
    parts.computers.add_bot("easy")
    driver = parts.st.seats[1].conn
    assert isinstance(driver, BotDriver)
    parts.computers.remove_bot(1)
    assert [s.name for s in parts.removed] == ["Ada"]
    assert driver.room is None
    assert driver not in parts.st.members
    with pytest.raises(RoomError) as refused:
        parts.computers.remove_bot(0)  # a person's seat
    assert refused.value.code is p.ProtocolCode.NOT_A_BOT


def test_a_practice_game_starting_gives_its_person_a_memory_for_hints() -> None:
    parts = Parts()
    ana = seat(parts.st, "Ana", Phone())
    parts.computers.add_bot("easy")
    parts.st.save_room()  # (what decides a practice room)
    parts.computers.starting()
    assert parts.st.practice
    assert isinstance(ana.memory, Memory)
    assert parts.st.seats[1].memory is None
    before = ana.memory
    parts.computers.claimed(ana)  # the player took the seat back on a new page: hints forget
    assert isinstance(ana.memory, Memory)
    assert ana.memory is not before


def test_a_stand_in_comes_for_a_person_away_long_enough_and_goes_at_the_rematch() -> None:
    parts = Parts()
    st = parts.st
    st.stand_in = 30
    ana = seat(st, "Ana", Phone())
    ben = seat(st, "Ben")  # away
    st.phase = Phase.PLAY
    parts.computers.starting()
    due = st.clock.now() + 30_000
    assert ben.away_since == st.clock.now()
    assert ana.away_since is None
    assert parts.computers.wake_at(None) == due
    assert parts.computers.wake_at(due - 1) == due - 1  # the table's tick comes first
    parts.computers.stand_ins()
    assert not ben.standing_in
    advance(st, 30_000)
    parts.computers.stand_ins()
    assert ben.standing_in
    assert isinstance(ben.conn, BotDriver)
    assert ben.conn.level == STAND_IN_LEVEL
    assert parts.publisher.kinds() == ["stand_in"]
    parts.computers.rematching()
    assert ben.conn is None
    assert not ben.standing_in
    assert ben.away_since is None


def test_the_waiting_counted_against_nobody_the_stand_in_clock_starts_again() -> None:
    parts = Parts()
    st = parts.st
    ben = seat(st, "Ben")
    ben.away_since = st.clock.now()
    advance(st, 5_000)
    parts.computers.unpaused()
    assert ben.away_since == st.clock.now()


def test_hints_only_in_a_practice_game_and_only_for_its_person() -> None:
    parts = Parts()
    phone = Phone()
    ana = seat(parts.st, "Ana", phone)
    with pytest.raises(RoomError) as refused:
        parts.computers.hint(phone, ana)
    assert refused.value.code is p.ProtocolCode.NO_HINTS
