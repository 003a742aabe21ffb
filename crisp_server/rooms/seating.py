"""Seating: who sits where in a room and may do what (join, resume, watch, leave, kick, host hand-over, tokens)."""

from __future__ import annotations

from datetime import UTC, datetime

import orjson

from crisp_server import protocol as p

from .driver import CLOSE_KICKED, CLOSE_LEFT, CLOSE_REPLACED, SeatDriver
from .messages import RoomError
from .phase import GAME_PHASES, Phase
from .seats import MAX_SEATS, Seat, TokenBucket, clean_name
from .table import TableFlow
from .tokens import hash_token, new_token, token_index


class Seating(TableFlow):
    """Who sits where and may do what: join, resume (a seat token), watch, leave, kick, the host and its
    hand-over, and a member's going away."""

    def _seat_of(self, conn: SeatDriver) -> Seat:
        seat = self.members.get(conn)
        if seat is None:
            raise RoomError(p.ProtocolCode.NOT_SEATED)
        return seat

    def _require_host(self, seat: Seat) -> None:
        if self.seats.index(seat) != self.host:
            raise RoomError(p.ProtocolCode.NOT_HOST)

    def _admit(self, conn: SeatDriver) -> None:
        if conn.room is not None:
            raise RoomError(p.ProtocolCode.ALREADY_IN_ROOM)
        conn.room = self

    def _join(self, conn: SeatDriver, raw_name: str) -> None:
        self._take_seat(conn, raw_name, entering=True)

    def _sit(self, conn: SeatDriver, raw_name: str) -> None:
        """A spectator takes a free seat in the lobby: answered as a ``join`` (a welcome with a fresh token,
        then the ``joined`` update, which also shows one spectator fewer)."""
        if self.members.get(conn) is not None:
            raise RoomError(p.ProtocolCode.ALREADY_SEATED)
        self._take_seat(conn, raw_name, entering=False)

    def _take_seat(self, conn: SeatDriver, raw_name: str, *, entering: bool) -> None:
        """Seat ``conn`` at the end under ``raw_name``: one that enters the room (``join``, ``create``), or a
        spectator of it (``sit``), by the same rules."""
        name = clean_name(raw_name)
        if name is None:
            raise RoomError(p.ProtocolCode.BAD_NAME)
        if self.phase is not Phase.LOBBY:
            raise RoomError(p.ProtocolCode.GAME_RUNNING)
        if len(self.seats) >= MAX_SEATS:
            raise RoomError(p.ProtocolCode.ROOM_FULL)
        if any(s.name.casefold() == name.casefold() for s in self.seats):
            raise RoomError(p.ProtocolCode.NAME_TAKEN)
        if entering:
            self._admit(conn)
        token = new_token()
        seat = Seat(
            name,
            hash_token(token),
            TokenBucket(self.settings.reaction_burst, 1 / self.settings.reaction_seconds, self.clock.now()),
            conn,
            connected_at=datetime.now(UTC),
        )
        self.seats.append(seat)
        self.members[conn] = seat
        index = len(self.seats) - 1
        self._save_room()
        self._greet(conn, index, token, again=False)
        self._publish([], [{"type": "joined", "seat": index, "name": name}])

    def _claim_seat(self, conn: SeatDriver, token: str) -> Seat:
        """The seat of ``token``, now on ``conn`` (an older connection of the same player is replaced)."""
        index = token_index(token, (s.token_hash for s in self.seats))
        if index is None:
            raise RoomError(p.ProtocolCode.BAD_TOKEN)
        seat = self.seats[index]
        if conn.room is not None and conn is not seat.conn:
            raise RoomError(p.ProtocolCode.ALREADY_IN_ROOM)
        old = seat.conn
        seat.standing_in = False  # whoever stood in goes: the player is back
        seat.away_since = None
        if old is not None and old is not conn:
            # The same player on a new connection (a reload, another tab): the new one wins.
            self.members.pop(old, None)
            old.room = None
            self._send(old, orjson.dumps({"type": "replaced", "v": self.v}))
            self._hang_up(old, CLOSE_REPLACED, "replaced by a newer connection")
        conn.room = self
        seat.conn = conn
        self.members[conn] = seat
        return seat

    def _resume(self, conn: SeatDriver, token: str) -> None:
        seat = self._claim_seat(conn, token)
        seat.connected_at = datetime.now(UTC)
        index = self.seats.index(seat)
        if seat.left:
            # Back after Leave: the seat is the player's again, durably. A reconnect changes nothing the database
            # keeps (a restart brings every seat back as it was), so it writes nothing: 8,000 players coming
            # back after a restart would otherwise each rewrite their room and its seats.
            seat.left = False
            if self.paused:
                # A seat that left counted as ready; the game waited for everyone, and its peek or pause between
                # rounds starts again in full: its player, back first, may say ready again.
                seat.ready = False
            if self.seats[self.host].left:  # everyone had left: the first one back hosts
                self.host = index
            self._save_room()
        if self.relink and index == self.host and conn.origin is not None:
            # The room's link is its host's page's address: after a restore, the address the server has now.
            self.relink = False
            link = f"{conn.origin}/r/{self.code}"
            if link != self.link:
                self.link = link
                self._save_room()
        self._greet(conn, index, None, again=True)
        events = self._unpause()
        self._publish(events, [{"type": "connected", "seat": index}])

    def _watch(self, conn: SeatDriver) -> None:
        # In every phase: a link page follows the room live from its lobby on (and may ``sit`` there).
        self._admit(conn)
        self.members[conn] = None
        self._greet(conn, None, None, again=True)
        self._publish([], [{"type": "spectator_joined"}])

    def _detach(self, conn: SeatDriver) -> None:
        if conn not in self.members:
            return
        seat = self.members.pop(conn)
        conn.room = None
        if seat is None:
            self._publish([], [{"type": "spectator_left"}])
            return
        if seat.conn is conn:
            seat.conn = None
            if self.phase in GAME_PHASES:
                seat.away_since = self.clock.now()  # a computer player may stand in after a while
            # The last player gone: the game waits before anyone hears of it (no clock runs in that update).
            self._wait_if_deserted()
            self._publish([], [{"type": "disconnected", "seat": self.seats.index(seat)}])
            # Only connected players are waited for: if this one was the last not ready, nobody is now.
            self._maybe_all_ready()

    def _remove_seat(self, seat: Seat) -> int:
        """Take a seat out of the lobby; the host passes on if it was theirs. The old index."""
        index = self.seats.index(seat)
        self.seats.pop(index)
        if index < self.host:
            self.host -= 1
        elif index == self.host:
            self.host = index % len(self.seats) if self.seats else 0
            if self.seats and self.seats[self.host].bot is not None:
                self._pass_host(self.host)  # to the next person, if any is left
        return index

    def _leave(self, conn: SeatDriver) -> None:
        seat = self.members.pop(conn, None)
        conn.room = None
        self._send(conn, orjson.dumps({"type": "left", "v": self.v}))
        self._hang_up(conn, CLOSE_LEFT, "left the room")
        if seat is None:
            self._publish([], [{"type": "spectator_left"}])
            return
        seat.conn = None
        if self.phase is Phase.LOBBY:
            index = self._remove_seat(seat)
            if all(s.bot is not None for s in self.seats):  # nobody left but computer players
                self._close()
                return
            self._save_room()
            self._publish([], [{"type": "left", "seat": index, "host": self.host}])
            return
        index = self.seats.index(seat)
        everyone_left = all(s is seat or s.left or s.bot is not None for s in self.seats)
        if everyone_left and self.phase is Phase.GAME_OVER:
            self._close()  # the game has ended and is kept: nobody is left to start another
            return
        if everyone_left:
            # The last person leaves mid-game: the game waits where it stands, as when everyone is away, for
            # anyone who held a seat to take it back (``resume``); after ``idle_game_hours`` it is abandoned.
            # It waits before the seat is marked left: no move of a seat that left is played on meanwhile.
            self._wait_if_deserted()
        seat.left = True
        if self.phase in (Phase.PEEK, Phase.ROUND_OVER):
            seat.ready = True  # a seat that left is not waited for
        if index == self.host:
            self._pass_host(index)
        self._save_room()
        # The last player here gone: the game waits before anyone hears of it (no clock runs in that update).
        self._wait_if_deserted()
        if self.phase is Phase.PLAY and not self.paused:
            events = self._advance()  # if it is their move, it is played on now
            self._after_play(events, [{"type": "left", "seat": index, "host": self.host}])
        else:
            self._publish([], [{"type": "left", "seat": index, "host": self.host}])
            self._maybe_all_ready()

    def _pass_host(self, index: int) -> None:
        n = len(self.seats)
        for k in range(1, n + 1):
            seat = self.seats[(index + k) % n]
            if not seat.left and seat.bot is None:  # the host is a person
                self.host = (index + k) % n
                return

    def _kick(self, seat: Seat, target: int) -> None:
        self._require_host(seat)
        if self.phase is not Phase.LOBBY:
            raise RoomError(p.ProtocolCode.GAME_RUNNING)
        if not 0 <= target < len(self.seats) or target == self.host:
            raise RoomError(p.ProtocolCode.NO_SUCH_SEAT)
        victim = self.seats[target]
        self._remove_seat(victim)
        if victim.conn is not None:
            conn = victim.conn
            self.members.pop(conn, None)
            conn.room = None
            self._send(conn, orjson.dumps({"type": "kicked", "v": self.v}))
            self._hang_up(conn, CLOSE_KICKED, "removed by the host")
        self._save_room()
        self._publish([], [{"type": "kicked", "seat": target}])
