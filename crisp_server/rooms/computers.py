"""The computer players, a part of a room: seats the host fills with them, practice rooms, stand-ins for people
who left or are away, and hints in practice games. It reads and changes the room's ``RoomState``; the table
tells it of a game starting, a rematch and a pause ending (it is the table's ``TableHooks``), the seats of a
seat taken back (``claimed``).

A computer player is a seat driven by a ``BotDriver`` (``botseat.py``): it is sent what a person at that
seat would be sent, and posts the same messages a client does. It never plays on alone: a game with no
person connected waits (``Table.wait_if_deserted``), one whose people have all left too.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any, Protocol

import orjson

from crisp_server.bots import Memory, hint
from crisp_server.engine import Event
from crisp_server.wire import protocol as p

from .botseat import BOT_NAMES, STAND_IN_LEVEL, BotDriver, LessonDriver
from .driver import RoomHandle, SeatDriver
from .messages import RoomError
from .phase import GAME_PHASES, Phase
from .seats import MAX_SEATS, Seat, TokenBucket
from .state import RoomState
from .tokens import hash_token, new_token


class Announcer(Protocol):
    """What the computer players ask of the publisher (``Publisher``)."""

    def publish(self, events: Sequence[Event], room_events: list[dict[str, Any]]) -> None: ...

    def message(self, conn: SeatDriver, kind: str, events: list[Any]) -> bytes: ...


class Computers:
    """Computer players: ``add_bot``, ``remove_bot``, ``bot_level``, practice rooms (``create`` with bots),
    stand-ins, and ``hint``. ``room``: what their drivers post to; ``remove_seat``: the seats' (a computer
    player taken out of the lobby), which returns the seat's index."""

    def __init__(
        self,
        state: RoomState,
        publisher: Announcer,
        *,
        room: RoomHandle,
        remove_seat: Callable[[Seat], int],
    ) -> None:
        self.state = state
        self._publisher = publisher
        self._room = room
        self._remove_seat = remove_seat

    # -- drivers ---------------------------------------------------------------------------------------

    def _driver(self, level: str, *, stand_in: bool = False) -> SeatDriver:
        st = self.state
        driver: BotDriver | LessonDriver
        if st.lesson_step is not None:
            driver = LessonDriver()  # a lesson plays its computer players' moves itself
        else:
            driver = BotDriver(level, st.clock, st.settings.bot_pause, stand_in=stand_in)
        driver.room = self._room
        return driver

    def _seat_driver(self, seat: Seat, driver: SeatDriver) -> None:
        st = self.state
        seat.conn = driver
        st.members[driver] = seat

    def _drop_driver(self, seat: Seat) -> None:
        """Take a computer player's driver off ``seat`` (it stops at once; nothing is sent to it)."""
        st = self.state
        driver = seat.conn
        if isinstance(driver, BotDriver):
            st.members.pop(driver, None)
            driver.room = None
            driver.close(1000)
            seat.conn = None
        seat.standing_in = False

    def seat_computers(self) -> None:
        """Give every computer player's seat its driver (a room rebuilt from the database)."""
        st = self.state
        for seat in st.seats:
            if seat.bot is not None and seat.conn is None:
                self._seat_driver(seat, self._driver(seat.bot))

    def people_here(self) -> bool:
        """Someone who is not a computer player is connected (a player or a spectator)."""
        st = self.state
        return any(not isinstance(conn, (BotDriver, LessonDriver)) for conn in st.members)

    # -- the lobby -------------------------------------------------------------------------------------

    def add_bot(self, level: str) -> int:
        st = self.state
        if st.phase is not Phase.LOBBY:
            raise RoomError(p.ProtocolCode.GAME_RUNNING)
        if len(st.seats) >= MAX_SEATS:
            raise RoomError(p.ProtocolCode.ROOM_FULL)
        taken = {s.name.casefold() for s in st.seats}
        name = next(n for n in BOT_NAMES if n.casefold() not in taken)  # 8 names, at most 7 others
        seat = Seat(
            name,
            hash_token(new_token()),  # nobody holds its token: nobody can resume a computer player's seat
            TokenBucket(st.settings.reaction_burst, 1 / st.settings.reaction_seconds, st.clock.now()),
            connected_at=datetime.now(UTC),
            bot=level,
        )
        st.seats.append(seat)
        self._seat_driver(seat, self._driver(level))
        index = len(st.seats) - 1
        st.save_room()
        self._publisher.publish([], [{"type": "bot_added", "seat": index, "name": name, "level": level}])
        return index

    def _bot_seat(self, index: int) -> Seat:
        st = self.state
        if st.phase is not Phase.LOBBY:
            raise RoomError(p.ProtocolCode.GAME_RUNNING)
        if not 0 <= index < len(st.seats):
            raise RoomError(p.ProtocolCode.NO_SUCH_SEAT)
        seat = st.seats[index]
        if seat.bot is None:
            raise RoomError(p.ProtocolCode.NOT_A_BOT)
        return seat

    def remove_bot(self, index: int) -> None:
        st = self.state
        seat = self._bot_seat(index)
        self._drop_driver(seat)
        self._remove_seat(seat)
        st.save_room()
        self._publisher.publish([], [{"type": "bot_removed", "seat": index}])

    def set_bot_level(self, index: int, level: str) -> None:
        st = self.state
        seat = self._bot_seat(index)
        if seat.bot == level:
            return
        self._drop_driver(seat)
        seat.bot = level
        self._seat_driver(seat, self._driver(level))
        st.save_room()
        self._publisher.publish([], [{"type": "bot_level", "seat": index, "level": level}])

    # -- the game (``TableHooks``) ---------------------------------------------------------------------

    def starting(self) -> None:
        """A game is dealt: hints for a practice game's person, and the stand-in clock of who is away."""
        st = self.state
        now = st.clock.now()
        for seat in st.seats:  # hints know what their person was shown from the first deal on
            seat.memory = Memory() if st.practice and seat.bot is None and st.lesson_step is None else None
            if seat.conn is None and seat.bot is None:
                seat.away_since = now  # away when the game starts: a stand-in may come for them too

    def rematching(self) -> None:
        """The game is over: whoever stood in goes, with the seats that were left."""
        st = self.state
        for seat in st.seats:
            if seat.left or seat.standing_in:
                # Dropped from the next game, with whoever stood in for them; and nobody stands in in the
                # lobby: a player still away gets a stand-in again once the next game runs.
                self._drop_driver(seat)
            seat.away_since = None

    def unpaused(self) -> None:
        """The game goes on after waiting for its players: the waiting counted against nobody, and the
        stand-in clock of who is still away starts again."""
        st = self.state
        now = st.clock.now()
        for seat in st.seats:
            if seat.conn is None and seat.bot is None:
                seat.away_since = now

    def claimed(self, seat: Seat) -> None:
        """A player took their seat back (``Seating.claim_seat``)."""
        if seat.memory is not None:
            # The page starts again from the state it is now sent (a reload, a reconnect): the updates sent to
            # its old connection may never have been read, so hints forget them too (docs/computer-players.md).
            seat.memory = Memory()

    # -- stand-ins -------------------------------------------------------------------------------------

    def _stand_in_at(self, seat: Seat) -> int | None:
        """When (room clock) a computer player should take over ``seat``, if it should."""
        st = self.state
        if (
            st.stand_in is None
            or st.paused
            or st.phase not in GAME_PHASES
            or seat.bot is not None
            or seat.conn is not None
        ):
            return None
        if seat.left:
            return st.clock.now()
        if seat.away_since is None:
            return None
        return seat.away_since + st.stand_in * 1000

    def stand_ins(self) -> None:
        """Seat a computer player for every person who left, or has been away long enough."""
        st = self.state
        now = st.clock.now()
        for index, seat in enumerate(st.seats):
            at = self._stand_in_at(seat)
            if at is not None and at <= now:
                seat.standing_in = True
                self._seat_driver(seat, self._driver(STAND_IN_LEVEL, stand_in=True))
                self._publisher.publish([], [{"type": "stand_in", "seat": index}])

    def wake_at(self, when: int | None) -> int | None:
        """``when`` (the table's next tick), or earlier if a computer player should stand in before."""
        st = self.state
        if st.stand_in is None:  # the usual case: nothing more to look at after every message
            return when
        for seat in st.seats:
            at = self._stand_in_at(seat)
            if at is not None:
                when = at if when is None else min(when, at)
        return when

    # -- hints -----------------------------------------------------------------------------------------

    def hint(self, conn: SeatDriver, seat: Seat) -> None:
        st = self.state
        if not st.practice or seat.bot is not None or st.lesson_step is not None:
            raise RoomError(p.ProtocolCode.NO_HINTS)  # (a lesson says what to do itself)
        if st.phase is not Phase.PLAY or st.paused:
            raise RoomError(p.ProtocolCode.WRONG_PHASE)
        if seat.memory is None:  # rebuilt after a restart: it knows what the table shows from now on
            seat.memory = Memory()
            self._publisher.message(
                conn, "snapshot", []
            )  # what a message to this seat would be, taken in by its memory
        advice = hint(seat.memory)
        if advice is None:
            raise RoomError(p.ProtocolCode.NOTHING_TO_HINT)
        body = {"type": "hint", "v": st.v, "move": advice.message, "text": advice.text(conn.lang)}
        st.send(conn, orjson.dumps(body))
