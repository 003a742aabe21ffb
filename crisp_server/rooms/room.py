"""One private room, the only writer of its state.

Joins, options, actions, disconnects and timer expiries are messages posted to the room and handled at
once, one at a time, on the event loop; no locks, no races, no task hop. What a message changed is handed
to the store's group commit, and what it caused is delivered only once that commit is done (in order:
the room goes on with the next message meanwhile). Nothing here awaits a socket: every outgoing message
goes to the recipient connection (``SeatDriver.send``), which never blocks the room.
Every message published to the room bumps the version ``v``, which never goes back, across restarts too
(``VERSION_BLOCK``); each recipient gets its own message built from the engine's view of its seat
(``crisp_server.engine.views``) and the events it may see.

Time: the room reads a monotonic ``Clock`` (real in the server, manual in tests). A round's engine
clock is "milliseconds since play started" (the peek phase is not counted).

The room is built in layers, one module each: ``actor.py`` (the loop, the write-ahead, the timer),
``publishing.py`` (what each member is sent), ``table.py`` (the game's flow and timers), ``seating.py`` (who
sits where), ``recovery.py`` (restart and outage); this module dispatches each message. What drives a seat
is a ``SeatDriver`` (``driver.py``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from crisp_server.engine import Options
from crisp_server.settings import Settings
from crisp_server.store.reads import StoredRoom
from crisp_server.store.store import Store
from crisp_server.wire import protocol as p

from .clock import Clock
from .driver import SeatDriver
from .messages import Abandon, Detach, Expire, Inbound, MoveAway, RoomError, RoomMessage, Shutdown, Tick
from .phase import Phase
from .recovery import Recovery
from .seats import MAX_SEATS


class Room(Recovery):
    """A private room; :meth:`post` is the only way in, from any coroutine. Its layers, each built on the one
    before: ``RoomActor`` (loop, write-ahead, timer), ``Publishing``, ``TableFlow``, ``Seating``, ``Recovery``;
    this class dispatches each message to them."""

    @classmethod
    def restore(
        cls,
        stored: StoredRoom,
        settings: Settings,
        clock: Clock,
        store: Store | None,
        on_close: Callable[[Room], None] | None = None,
    ) -> Room:
        """Rebuild a room after a restart from what the database has: the lobby, and the game by
        replaying its record. Nobody is connected yet: a game waits for its first player back (the downtime
        counts towards abandoning it); then the round clock goes on from the last stored instant (the
        downtime counts against nobody), an open crisp window closes and the current move gets a fresh full
        clock. Its version goes on above every one it may have sent (saved before anyone hears from it).
        Its link follows this server's address, not the one it was created under (a backup restored on another
        server, a server that moved): ``CRISP_PUBLIC_URL`` if set, else the address its host's page comes back
        at (``Seating._resume``)."""
        public = settings.public_url
        link = f"{public}/r/{stored.code}" if public else stored.link
        room = cls(stored.code, link, settings, clock, on_close, store=store, room_id=stored.id)
        room._load(stored)
        room.relink = not public
        if link != stored.link:
            room._save_room()
        room._seat_computers()
        # Above every version a client may have seen: saved before anything is sent (Registry.restore).
        room.v = room._v_sent = stored.v
        room._next_version()
        return room

    def handle(self, message: RoomMessage) -> None:
        """Handle one message; what it sends goes out once what it changed is committed (:meth:`post`)."""
        self.touched = self.clock.now()
        if self.suspended:
            self._while_suspended(message)
        elif isinstance(message, Inbound):
            self._arrived = message.arrived
            self._inbound(message.conn, message.message)
        elif isinstance(message, Detach):
            self._detach(message.conn)
        elif isinstance(message, Tick):
            self._tick()
        elif isinstance(message, Expire):
            if not self.people_here():
                self._close()
        elif isinstance(message, Abandon):
            if self.paused:
                self._abandon()
        elif isinstance(message, Shutdown):
            self._shutdown()
        elif isinstance(message, MoveAway):
            self._move_away()

    def _inbound(self, conn: SeatDriver, msg: Any) -> None:
        try:
            if isinstance(msg, p.Create | p.Join):
                self._join(conn, msg.name)
                if isinstance(msg, p.Create) and msg.bots:
                    self._practice_room(msg.bots, msg.level)
            elif isinstance(msg, p.Resume):
                self._resume(conn, msg.token)
            elif isinstance(msg, p.Watch):
                self._watch(conn)
            elif isinstance(msg, p.Ping):  # in order with what this room sent; v only for its members
                self._send(conn, p.pong_message(self.v if conn in self.members else 0))
            elif conn not in self.members:
                raise RoomError(p.ProtocolCode.NOT_IN_ROOM)
            elif isinstance(msg, p.Sync):
                self._send(conn, self._message(conn, "snapshot", []))
            else:
                self._seated_command(conn, msg)
        except RoomError as err:
            v = self.v if conn in self.members else 0  # a refused entry learns nothing of the room
            self._send(conn, p.error_message(v, err.code, conn.lang))
            if not self.seats and not self.members:  # a create that was refused: nobody will ever come
                self._close()

    def _seated_command(self, conn: SeatDriver, msg: Any) -> None:
        if isinstance(msg, p.Leave):
            self._leave(conn)
            return
        if isinstance(msg, p.Sit):  # a spectator's: before the seat is looked for
            self._sit(conn, msg.name)
            return
        seat = self._seat_of(conn)
        if isinstance(msg, p.ACTION_MESSAGES):
            self._action(conn, seat, msg)
        elif isinstance(msg, p.Ready):
            self._ready(seat)
        elif isinstance(msg, p.React):
            self._react(seat, msg.emoji)
        elif isinstance(msg, p.Kick):
            self._kick(seat, msg.seat)
        elif isinstance(msg, p.SetOptions):
            self._require_host(seat)
            if self.phase is not Phase.LOBBY:
                raise RoomError(p.ProtocolCode.GAME_RUNNING)
            self.options = Options(msg.score_limit, msg.turn_seconds, msg.discard_draw)
            if "stand_in" in msg.model_fields_set:
                self.stand_in = msg.stand_in
            self._save_room()
            self._publish([], [{"type": "options_changed"}])
        elif isinstance(msg, p.Start):
            self._require_host(seat)
            if self.phase is not Phase.LOBBY:
                raise RoomError(p.ProtocolCode.GAME_RUNNING)
            if not 2 <= len(self.seats) <= MAX_SEATS:
                raise RoomError(p.ProtocolCode.NOT_ENOUGH_PLAYERS)
            self._start_game()
        elif isinstance(msg, p.AddBot):
            self._require_host(seat)
            self._add_bot(msg.level)
        elif isinstance(msg, p.RemoveBot):
            self._require_host(seat)
            self._remove_bot(msg.seat)
        elif isinstance(msg, p.SetBotLevel):
            self._require_host(seat)
            self._set_bot_level(msg.seat, msg.level)
        elif isinstance(msg, p.HintMsg):
            self._hint(conn, seat)
        elif isinstance(msg, p.Rematch):
            self._require_host(seat)
            if self.phase is not Phase.GAME_OVER:
                raise RoomError(p.ProtocolCode.WRONG_PHASE)
            self._rematch()
        else:
            raise RoomError(p.ProtocolCode.BAD_MESSAGE)
