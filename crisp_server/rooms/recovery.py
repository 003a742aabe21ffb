"""Recovery: a room rebuilt from the database after a restart, and suspended while the database cannot be
written (it shows what it last saved, changes nothing, and goes on from the database's record when it answers)."""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from typing import Self

import orjson

from crisp_server.engine import Options, replay_game
from crisp_server.store.reads import StoredRoom
from crisp_server.wire import protocol as p

from .botseat import BotDriver
from .computers import Computers
from .driver import CLOSE_LEFT
from .messages import Detach, Inbound, MoveAway, Reload, RoomError, RoomMessage, Shutdown
from .phase import GAME_PHASES, Fairness, Phase
from .seats import Seat, TokenBucket

log = logging.getLogger("crisp.room")


class Recovery(Computers):
    """A room rebuilt from what the database has: after a restart (``Room.restore`` loads it), and after a
    failed commit (``_suspend``, then ``recover`` once the database answers)."""

    def _load(self, stored: StoredRoom) -> None:
        """Take the lobby and the game from what the database has (``restore``, and ``_reload`` after a
        failed commit). The versions reserved are the database's: a reserve whose commit failed is not."""
        settings = self.settings
        self._saved = True
        options = dict(stored.options)
        self.stand_in = options.pop("stand_in", None)
        self.options = Options(**options)
        self.host = stored.host
        self.v_reserved = stored.v
        now = self.clock.now()
        self.seats = [
            Seat(
                s.name,
                s.token_hash,
                TokenBucket(settings.reaction_burst, 1 / settings.reaction_seconds, now),
                left=s.left,
                connected_at=s.connected_at,
                bot=s.bot,
            )
            for s in stored.seats
        ]
        self.game, self.record, self.game_id, self.fair = None, None, None, []
        self.round_zero = self.peek_ends = self.next_round_at = None
        self.paused = False
        phase = Phase(stored.phase)
        sg = stored.game
        if sg is not None and phase is not Phase.LOBBY:
            game, _ = replay_game(sg.record)  # the log holds accepted actions only: nothing is refused
            self.game, self.record, self.game_id = game, sg.record, sg.id
            self.fair = [Fairness(salt, rr.deck) for salt, rr in zip(sg.salts, sg.record.rounds, strict=True)]
            r = game.round
            if r is None or r.ended:
                phase = Phase.GAME_OVER if game.game_over else Phase.ROUND_OVER
            elif phase not in (Phase.PEEK, Phase.PLAY):
                phase = Phase.PLAY
        elif phase is not Phase.LOBBY:
            phase = Phase.LOBBY  # a game that was never saved: back to the lobby, nothing was played
        self.phase = phase
        for seat in self.seats:
            seat.ready = seat.left
        # Nobody is connected yet: the game waits, and the first player back resumes it (_unpause; after a
        # failed commit, _reload does so at once for the members still there).
        self.paused = phase in GAME_PHASES
        if self.paused:
            # Waiting since the room was last saved (when its last player went, or just before a crash):
            # the downtime counts towards abandoning it.
            self.paused_at = now - _ms_since(stored.updated_at)

    def _suspend(self: Self, error: BaseException) -> None:
        """Saving failed: what players were not told never happened for them. The room takes back what it
        did not save (it is rebuilt from the database when that answers, ``recover``), tells its members
        it is ``unavailable`` and changes nothing meanwhile; the connections stay open."""
        self._epoch += 1  # what it submitted after the failed change followed from it: dropped
        outbox, greeting = self._outbox, self._greeting
        self._ops, self._outbox, self._accepted, self._movers, self._greeting = [], [], [], [], {}
        self.v = self._v_sent  # nobody saw the versions that were not saved
        self._dropped(outbox)
        if not self._saved:
            # Its first save failed: there is nothing to go back to. Its creator is told to try again.
            log.warning("room %s: its creation could not be saved; it is closed", self.code)
            for conn in self.members:
                conn.room = None
                conn.send(p.error_message(self.v, p.ProtocolCode.UNAVAILABLE, conn.lang))
            self.members.clear()
            self.closed = True
            if self._on_close is not None:
                self._on_close(self)
        else:
            self.suspended = True
            if not self._notified:  # once per outage, not at every failed try to come back
                self._notified = True
                log.warning("room %s: a change could not be saved; the room waits for the database", self.code)
                for conn in self.members:
                    if conn not in greeting:
                        conn.send(p.unavailable_message(self.v, conn.lang))
            # Who came in meanwhile and was not welcomed yet: a player back on their seat, or a spectator, is
            # welcomed and told; a join (its seat may not be saved) is only told (``_reload`` settles it).
            for conn, (_, again) in greeting.items():
                if conn in self.members:
                    if again:
                        seat = self.members[conn]
                        conn.send(self._welcome(None if seat is None else self.seats.index(seat), None))
                    conn.send(p.unavailable_message(self.v, conn.lang))
        self._schedule()  # no timer runs while suspended
        if self.on_suspend is not None:  # the registry tries the database again until it answers
            self.on_suspend(self)

    async def recover(self) -> bool:
        """Rebuild the room from the database and go on from there; whether it is back (its first commit
        went through). Raises if the database cannot be read yet."""
        if not self.suspended or self.closed:
            return True
        assert self.store is not None
        stored = await self.store.load_room(self.room_id)
        self.post(Reload(stored))
        await self.flush()
        return not self.suspended

    def _while_suspended(self, message: RoomMessage) -> None:
        """A message for a suspended room: nothing changes; members come and go, and are answered."""
        if isinstance(message, Inbound):
            conn, msg = message.conn, message.message
            try:
                if isinstance(msg, p.Resume):
                    index = self.seats.index(self._claim_seat(conn, msg.token))
                    self._send(conn, self._welcome(index, None))
                    self._send(conn, p.unavailable_message(self.v, conn.lang))
                elif isinstance(msg, p.Ping) and conn in self.members:
                    self._send(conn, orjson.dumps({"type": "pong", "v": self.v}))
                elif isinstance(msg, p.Sync) and conn in self.members:
                    self._send(conn, p.unavailable_message(self.v, conn.lang))
                else:
                    raise RoomError(p.ProtocolCode.UNAVAILABLE)
            except RoomError as err:
                self._send(conn, p.error_message(self.v, err.code, conn.lang))
        elif isinstance(message, Detach):
            seat = self.members.pop(message.conn, None)
            message.conn.room = None
            if seat is not None and seat.conn is message.conn:
                seat.conn = None
        elif isinstance(message, Reload):
            self._reload(message.stored)
        elif isinstance(message, Shutdown):
            self._shutdown()
        elif isinstance(message, MoveAway):
            self._move_away()

    def _reload(self, stored: StoredRoom | None) -> None:
        """Go on from what the database has: every member gets it (an ``update`` with the event
        ``available``); the current move gets a fresh clock, as after a restart."""
        self.suspended = False
        if stored is None:  # closed meanwhile (its close was saved just before the failure)
            self._send_away("room_closed", CLOSE_LEFT, "the room closed", leave_registry=True)
            return
        members = list(self.members.items())
        self._load(stored)
        seats = {s.token_hash: s for s in self.seats}
        self.members = {}
        for conn, before in members:
            seat = seats.get(before.token_hash) if before is not None else None
            if before is not None and seat is None:
                # Seated by a change that was not saved: their join did not happen.
                conn.room = None
                self._send(conn, p.error_message(self.v, p.ProtocolCode.UNAVAILABLE, conn.lang))
                continue
            if seat is not None:
                seat.conn = conn
                seat.standing_in = isinstance(conn, BotDriver) and conn.stand_in
            self.members[conn] = seat
        self._seat_computers()
        events = self._unpause() if any(s.person_here for s in self.seats) else []
        self._save_room()
        self._publish(events, [{"type": "available"}])


def _ms_since(instant: datetime | None) -> int:
    """Milliseconds from a stored instant to now (none if unknown; SQLite gives back instants without zone: UTC)."""
    if instant is None:
        return 0
    if instant.tzinfo is None:
        instant = instant.replace(tzinfo=UTC)
    return max(0, int((datetime.now(UTC) - instant).total_seconds() * 1000))
