"""The seats, a part of a room: who sits where and may do what (join, resume, watch, leave, kick, the host and
its hand-over, tokens).

It reads and changes the room's ``RoomState``; what it needs of its neighbours comes through its constructor:
the publisher (``Greeter``), the table's flow (``Flow``: a seat that goes or comes back may pause or resume the
game), the room's close and the computer players' word on a seat taken back (``claimed``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any, Protocol

import orjson

from crisp_server.engine import Event
from crisp_server.wire import protocol as p

from .driver import CLOSE_KICKED, CLOSE_LEFT, CLOSE_REPLACED, RoomHandle, SeatDriver
from .messages import RoomError
from .phase import GAME_PHASES, Phase
from .seats import MAX_SEATS, Seat, TokenBucket, clean_name
from .state import RoomState
from .tokens import hash_token, new_token, token_index


class Greeter(Protocol):
    """What the seats ask of the publisher (``Publisher``)."""

    def greet(self, conn: SeatDriver, index: int | None, token: str | None, again: bool) -> None: ...

    def publish(self, events: Sequence[Event], room_events: list[dict[str, Any]]) -> None: ...


class Flow(Protocol):
    """What the seats ask of the table (``Table``)."""

    def wait_if_deserted(self) -> None: ...

    def maybe_all_ready(self) -> None: ...

    def unpause(self) -> list[Event]: ...

    def advance(self) -> list[Event]: ...

    def after_play(self, events: list[Event], room_events: list[dict[str, Any]]) -> None: ...

    def abandon(self) -> None: ...


class Seating:
    """Who sits where and may do what: join, resume (a seat token), watch, leave, kick, the host and its
    hand-over, and a member's going away. ``room``: what its drivers are given to post to; ``close``: the
    room's, when nobody is left; ``claimed``: called with a seat taken back by its player (a reload)."""

    def __init__(
        self,
        state: RoomState,
        publisher: Greeter,
        table: Flow,
        *,
        room: RoomHandle,
        close: Callable[[], None],
        claimed: Callable[[Seat], None],
    ) -> None:
        self.state = state
        self._publisher = publisher
        self._table = table
        self._room = room
        self._close = close
        self._claimed = claimed

    def seat_of(self, conn: SeatDriver) -> Seat:
        st = self.state
        seat = st.members.get(conn)
        if seat is None:
            raise RoomError(p.ProtocolCode.NOT_SEATED)
        return seat

    def require_host(self, seat: Seat) -> None:
        st = self.state
        if st.seats.index(seat) != st.host:
            raise RoomError(p.ProtocolCode.NOT_HOST)

    def _admit(self, conn: SeatDriver) -> None:
        if conn.room is not None:
            raise RoomError(p.ProtocolCode.ALREADY_IN_ROOM)
        conn.room = self._room

    def join(self, conn: SeatDriver, raw_name: str) -> None:
        self._take_seat(conn, raw_name, entering=True)

    def sit(self, conn: SeatDriver, raw_name: str) -> None:
        """A spectator takes a free seat in the lobby: answered as a ``join`` (a welcome with a fresh token,
        then the ``joined`` update, which also shows one spectator fewer)."""
        st = self.state
        if st.members.get(conn) is not None:
            raise RoomError(p.ProtocolCode.ALREADY_SEATED)
        self._take_seat(conn, raw_name, entering=False)

    def _take_seat(self, conn: SeatDriver, raw_name: str, *, entering: bool) -> None:
        """Seat ``conn`` at the end under ``raw_name``: one that enters the room (``join``, ``create``), or a
        spectator of it (``sit``), by the same rules."""
        st = self.state
        name = clean_name(raw_name)
        if name is None:
            raise RoomError(p.ProtocolCode.BAD_NAME)
        if st.phase is not Phase.LOBBY:
            raise RoomError(p.ProtocolCode.GAME_RUNNING)
        if len(st.seats) >= MAX_SEATS:
            raise RoomError(p.ProtocolCode.ROOM_FULL)
        if any(s.name.casefold() == name.casefold() for s in st.seats):
            raise RoomError(p.ProtocolCode.NAME_TAKEN)
        if entering:
            self._admit(conn)
        token = new_token()
        seat = Seat(
            name,
            hash_token(token),
            TokenBucket(st.settings.reaction_burst, 1 / st.settings.reaction_seconds, st.clock.now()),
            conn,
            connected_at=datetime.now(UTC),
        )
        st.seats.append(seat)
        st.members[conn] = seat
        index = len(st.seats) - 1
        st.save_room()
        self._publisher.greet(conn, index, token, again=False)
        self._publisher.publish([], [{"type": "joined", "seat": index, "name": name}])

    def claim_seat(self, conn: SeatDriver, token: str) -> Seat:
        """The seat of ``token``, now on ``conn`` (an older connection of the same player is replaced)."""
        st = self.state
        index = token_index(token, (s.token_hash for s in st.seats))
        if index is None:
            raise RoomError(p.ProtocolCode.BAD_TOKEN)
        seat = st.seats[index]
        if conn.room is not None and conn is not seat.conn:
            raise RoomError(p.ProtocolCode.ALREADY_IN_ROOM)
        old = seat.conn
        seat.standing_in = False  # whoever stood in goes: the player is back
        seat.away_since = None
        if old is not None and old is not conn:
            # The same player on a new connection (a reload, another tab): the new one wins.
            st.members.pop(old, None)
            old.room = None
            st.send(old, orjson.dumps({"type": "replaced", "v": st.v}))
            st.hang_up(old, CLOSE_REPLACED, "replaced by a newer connection")
        conn.room = self._room
        seat.conn = conn
        st.members[conn] = seat
        self._claimed(seat)
        return seat

    def resume(self, conn: SeatDriver, token: str) -> None:
        st = self.state
        seat = self.claim_seat(conn, token)
        seat.connected_at = datetime.now(UTC)
        index = st.seats.index(seat)
        if seat.left:
            # Back after Leave: the seat is the player's again, durably. A reconnect changes nothing the database
            # keeps (a restart brings every seat back as it was), so it writes nothing: 8,000 players coming
            # back after a restart would otherwise each rewrite their room and its seats.
            seat.left = False
            if st.paused:
                # A seat that left counted as ready; the game waited for everyone, and its peek or pause between
                # rounds starts again in full: its player, back first, may say ready again.
                seat.ready = False
            if st.seats[st.host].left:  # everyone had left: the first one back hosts
                st.host = index
            st.save_room()
        if st.relink and index == st.host and conn.origin is not None:
            # The room's link is its host's page's address: after a restore, the address the server has now.
            st.relink = False
            link = f"{conn.origin}/r/{st.code}"
            if link != st.link:
                st.link = link
                st.save_room()
        self._publisher.greet(conn, index, None, again=True)
        events = self._table.unpause()
        self._publisher.publish(events, [{"type": "connected", "seat": index}])

    def watch(self, conn: SeatDriver) -> None:
        st = self.state
        # In every phase: a link page follows the room live from its lobby on (and may ``sit`` there).
        self._admit(conn)
        st.members[conn] = None
        self._publisher.greet(conn, None, None, again=True)
        self._publisher.publish([], [{"type": "spectator_joined"}])

    def detach(self, conn: SeatDriver) -> None:
        st = self.state
        if conn not in st.members:
            return
        seat = st.members.pop(conn)
        conn.room = None
        if seat is None:
            self._publisher.publish([], [{"type": "spectator_left"}])
            return
        if seat.conn is conn:
            seat.conn = None
            if st.phase in GAME_PHASES:
                seat.away_since = st.clock.now()  # a computer player may stand in after a while
            # The last player gone: the game waits before anyone hears of it (no clock runs in that update).
            self._table.wait_if_deserted()
            self._publisher.publish([], [{"type": "disconnected", "seat": st.seats.index(seat)}])
            # Only connected players are waited for: if this one was the last not ready, nobody is now.
            self._table.maybe_all_ready()

    def remove_seat(self, seat: Seat) -> int:
        """Take a seat out of the lobby; the host passes on if it was theirs. The old index."""
        st = self.state
        index = st.seats.index(seat)
        st.seats.pop(index)
        if index < st.host:
            st.host -= 1
        elif index == st.host:
            st.host = index % len(st.seats) if st.seats else 0
            if st.seats and st.seats[st.host].bot is not None:
                self._pass_host(st.host)  # to the next person, if any is left
        return index

    def leave(self, conn: SeatDriver) -> None:
        st = self.state
        seat = st.members.pop(conn, None)
        conn.room = None
        st.send(conn, orjson.dumps({"type": "left", "v": st.v}))
        st.hang_up(conn, CLOSE_LEFT, "left the room")
        if seat is None:
            self._publisher.publish([], [{"type": "spectator_left"}])
            return
        seat.conn = None
        if st.phase is Phase.LOBBY:
            index = self.remove_seat(seat)
            if all(s.bot is not None for s in st.seats):  # nobody left but computer players
                self._close()
                return
            st.save_room()
            self._publisher.publish([], [{"type": "left", "seat": index, "host": st.host}])
            return
        index = st.seats.index(seat)
        everyone_left = all(s is seat or s.left or s.bot is not None for s in st.seats)
        if everyone_left and st.phase is Phase.GAME_OVER:
            self._close()  # the game has ended and is kept: nobody is left to start another
            return
        if everyone_left and st.lesson_step is not None:
            self._table.abandon()  # a lesson left (skipped, or done): nobody comes back to it
            return
        if everyone_left:
            # The last person leaves mid-game: the game waits where it stands, as when everyone is away, for
            # anyone who held a seat to take it back (``resume``); after ``idle_game_hours`` it is abandoned.
            # It waits before the seat is marked left: no move of a seat that left is played on meanwhile.
            self._table.wait_if_deserted()
        seat.left = True
        if st.phase in (Phase.PEEK, Phase.ROUND_OVER):
            seat.ready = True  # a seat that left is not waited for
        if index == st.host:
            self._pass_host(index)
        st.save_room()
        # The last player here gone: the game waits before anyone hears of it (no clock runs in that update).
        self._table.wait_if_deserted()
        if st.phase is Phase.PLAY and not st.paused:
            events = self._table.advance()  # if it is their move, it is played on now
            self._table.after_play(events, [{"type": "left", "seat": index, "host": st.host}])
        else:
            self._publisher.publish([], [{"type": "left", "seat": index, "host": st.host}])
            self._table.maybe_all_ready()

    def _pass_host(self, index: int) -> None:
        st = self.state
        n = len(st.seats)
        for k in range(1, n + 1):
            seat = st.seats[(index + k) % n]
            if not seat.left and seat.bot is None:  # the host is a person
                st.host = (index + k) % n
                return

    def kick(self, seat: Seat, target: int) -> None:
        st = self.state
        self.require_host(seat)
        if st.phase is not Phase.LOBBY:
            raise RoomError(p.ProtocolCode.GAME_RUNNING)
        if not 0 <= target < len(st.seats) or target == st.host:
            raise RoomError(p.ProtocolCode.NO_SUCH_SEAT)
        victim = st.seats[target]
        self.remove_seat(victim)
        if victim.conn is not None:
            conn = victim.conn
            st.members.pop(conn, None)
            conn.room = None
            st.send(conn, orjson.dumps({"type": "kicked", "v": st.v}))
            st.hang_up(conn, CLOSE_KICKED, "removed by the host")
        st.save_room()
        self._publisher.publish([], [{"type": "kicked", "seat": target}])
