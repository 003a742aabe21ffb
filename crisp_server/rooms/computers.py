"""Computer players in a room: seats the host fills with them, practice rooms, stand-ins for people who left or
are away, and hints in practice games.

A computer player is a seat driven by a ``BotDriver`` (``botseat.py``): it is sent what a person at that
seat would be sent, and posts the same messages a client does. It never plays on alone: a game with no
person connected waits (``TableFlow._wait_if_deserted``), one whose people have all left too.
"""

from __future__ import annotations

from datetime import UTC, datetime

import orjson

from crisp_server import protocol as p
from crisp_server.bots import Memory, hint
from crisp_server.engine import Event

from .botseat import BOT_NAMES, STAND_IN_LEVEL, BotDriver
from .driver import SeatDriver
from .messages import RoomError
from .phase import GAME_PHASES, Phase
from .seating import Seating
from .seats import MAX_SEATS, Seat, TokenBucket
from .tokens import hash_token, new_token


class Computers(Seating):
    """Computer players: ``add_bot``, ``remove_bot``, ``bot_level``, practice rooms (``create`` with bots),
    stand-ins, and ``hint``."""

    # -- drivers ---------------------------------------------------------------------------------------

    def _driver(self, level: str, *, stand_in: bool = False) -> BotDriver:
        driver = BotDriver(level, self.clock, self.settings.bot_pause, stand_in=stand_in)
        driver.room = self
        return driver

    def _seat_driver(self, seat: Seat, driver: BotDriver) -> None:
        seat.conn = driver
        self.members[driver] = seat

    def _drop_driver(self, seat: Seat) -> None:
        """Take a computer player's driver off ``seat`` (it stops at once; nothing is sent to it)."""
        driver = seat.conn
        if isinstance(driver, BotDriver):
            self.members.pop(driver, None)
            driver.room = None
            driver.close(1000)
            seat.conn = None
        seat.standing_in = False

    def _seat_computers(self) -> None:
        """Give every computer player's seat its driver (a room rebuilt from the database)."""
        for seat in self.seats:
            if seat.bot is not None and seat.conn is None:
                self._seat_driver(seat, self._driver(seat.bot))

    def people_here(self) -> bool:
        """Someone who is not a computer player is connected (a player or a spectator)."""
        return any(not isinstance(conn, BotDriver) for conn in self.members)

    # -- the lobby -------------------------------------------------------------------------------------

    def _add_bot(self, level: str) -> int:
        if self.phase is not Phase.LOBBY:
            raise RoomError(p.ProtocolCode.GAME_RUNNING)
        if len(self.seats) >= MAX_SEATS:
            raise RoomError(p.ProtocolCode.ROOM_FULL)
        taken = {s.name.casefold() for s in self.seats}
        name = next(n for n in BOT_NAMES if n.casefold() not in taken)  # 8 names, at most 7 others
        seat = Seat(
            name,
            hash_token(new_token()),  # nobody holds its token: nobody can resume a computer player's seat
            TokenBucket(self.settings.reaction_burst, 1 / self.settings.reaction_seconds, self.clock.now()),
            connected_at=datetime.now(UTC),
            bot=level,
        )
        self.seats.append(seat)
        self._seat_driver(seat, self._driver(level))
        index = len(self.seats) - 1
        self._save_room()
        self._publish([], [{"type": "bot_added", "seat": index, "name": name, "level": level}])
        return index

    def _bot_seat(self, index: int) -> Seat:
        if self.phase is not Phase.LOBBY:
            raise RoomError(p.ProtocolCode.GAME_RUNNING)
        if not 0 <= index < len(self.seats):
            raise RoomError(p.ProtocolCode.NO_SUCH_SEAT)
        seat = self.seats[index]
        if seat.bot is None:
            raise RoomError(p.ProtocolCode.NOT_A_BOT)
        return seat

    def _remove_bot(self, index: int) -> None:
        seat = self._bot_seat(index)
        self._drop_driver(seat)
        self._remove_seat(seat)
        self._save_room()
        self._publish([], [{"type": "bot_removed", "seat": index}])

    def _set_bot_level(self, index: int, level: str) -> None:
        seat = self._bot_seat(index)
        if seat.bot == level:
            return
        self._drop_driver(seat)
        seat.bot = level
        self._seat_driver(seat, self._driver(level))
        self._save_room()
        self._publish([], [{"type": "bot_level", "seat": index, "level": level}])

    def _practice_room(self, bots: int, level: str) -> None:
        """``create`` with computer players: they sit down with the host, and the game starts at once."""
        for _ in range(bots):
            self._add_bot(level)
        self._start_game()

    # -- the game --------------------------------------------------------------------------------------

    def _start_game(self) -> None:
        now = self.clock.now()
        for seat in self.seats:  # hints know what their person was shown from the first deal on
            seat.memory = Memory() if self.practice and seat.bot is None else None
            if seat.conn is None and seat.bot is None:
                seat.away_since = now  # away when the game starts: a stand-in may come for them too
        super()._start_game()

    def _rematch(self) -> None:
        for seat in self.seats:
            if seat.left or seat.standing_in:
                # Dropped from the next game, with whoever stood in for them; and nobody stands in in the
                # lobby: a player still away gets a stand-in again once the next game runs.
                self._drop_driver(seat)
            seat.away_since = None
        super()._rematch()

    def _claim_seat(self, conn: SeatDriver, token: str) -> Seat:
        seat = super()._claim_seat(conn, token)
        if seat.memory is not None:
            # The page starts again from the state it is now sent (a reload, a reconnect): the updates sent to
            # its old connection may never have been read, so hints forget them too (docs/computer-players.md).
            seat.memory = Memory()
        return seat

    # -- stand-ins -------------------------------------------------------------------------------------

    def _stand_in_at(self, seat: Seat) -> int | None:
        """When (room clock) a computer player should take over ``seat``, if it should."""
        if (
            self.stand_in is None
            or self.paused
            or self.phase not in GAME_PHASES
            or seat.bot is not None
            or seat.conn is not None
        ):
            return None
        if seat.left:
            return self.clock.now()
        if seat.away_since is None:
            return None
        return seat.away_since + self.stand_in * 1000

    def _stand_ins(self) -> None:
        """Seat a computer player for every person who left, or has been away long enough."""
        now = self.clock.now()
        for index, seat in enumerate(self.seats):
            at = self._stand_in_at(seat)
            if at is not None and at <= now:
                seat.standing_in = True
                self._seat_driver(seat, self._driver(STAND_IN_LEVEL, stand_in=True))
                self._publish([], [{"type": "stand_in", "seat": index}])

    def _end_stand_in(self, seat: Seat) -> None:
        """``seat``'s person is back: whoever stood in for them goes."""
        if seat.standing_in:
            self._drop_driver(seat)
        seat.away_since = None

    def _wake_at(self) -> int | None:
        when = super()._wake_at()
        if self.stand_in is None:  # the usual case: nothing more to look at after every message
            return when
        for seat in self.seats:
            at = self._stand_in_at(seat)
            if at is not None:
                when = at if when is None else min(when, at)
        return when

    def _tick(self) -> None:
        self._stand_ins()
        super()._tick()

    def _unpause(self) -> list[Event]:
        was = self.paused
        events = super()._unpause()
        if was and not self.paused:
            now = self.clock.now()
            for seat in self.seats:  # the waiting counted against nobody: the stand-in clock starts again
                if seat.conn is None and seat.bot is None:
                    seat.away_since = now
        return events

    # -- hints -----------------------------------------------------------------------------------------

    def _hint(self, conn: SeatDriver, seat: Seat) -> None:
        if not self.practice or seat.bot is not None:
            raise RoomError(p.ProtocolCode.NO_HINTS)
        if self.phase is not Phase.PLAY or self.paused:
            raise RoomError(p.ProtocolCode.WRONG_PHASE)
        if seat.memory is None:  # rebuilt after a restart: it knows what the table shows from now on
            seat.memory = Memory()
            self._message(conn, "snapshot", [])  # what a message to this seat would be, taken in by its memory
        advice = hint(seat.memory)
        if advice is None:
            raise RoomError(p.ProtocolCode.NOTHING_TO_HINT)
        body = {"type": "hint", "v": self.v, "move": advice.message, "text": advice.text(conn.lang)}
        self._send(conn, orjson.dumps(body))
