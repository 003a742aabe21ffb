"""Recovery, a part of a room: a room rebuilt from the database after a restart, and suspended while the database
cannot be written (it shows what it last saved, changes nothing, and goes on from the database's record when
it answers). It reads and changes the room's ``RoomState``; ``Room`` takes back the write-ahead of a failed
commit, this part tells the members and rebuilds the room from what the database has."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any, Protocol

import orjson

from crisp_server.engine import Event, Options, replay_game
from crisp_server.store.reads import StoredRoom
from crisp_server.wire import protocol as p

from .botseat import BotDriver
from .driver import SeatDriver
from .messages import Detach, Inbound, MoveAway, Reload, RoomError, RoomMessage, Shutdown
from .phase import GAME_PHASES, Fairness, Phase
from .seats import Seat, TokenBucket
from .state import RoomState

log = logging.getLogger("crisp.room")


class Answers(Protocol):
    """What recovery asks of the publisher (``Publisher``)."""

    def welcome(self, index: int | None, token: str | None) -> bytes: ...

    def publish(self, events: Sequence[Event], room_events: list[dict[str, Any]]) -> None: ...


class Recovery:
    """A room rebuilt from what the database has: after a restart (``Room.restore`` loads it), and after a
    failed commit (``Actor._suspend``, then ``Room.recover`` once the database answers).

    What it needs of its neighbours: the publisher; the seats' ``claim_seat`` (a player back while the room
    waits); the table's ``unpause``; the computer players' ``seat_computers``; and the room's ``shutdown``,
    ``move_away`` and ``gone`` (the database has no open room: its members are sent away)."""

    def __init__(
        self,
        state: RoomState,
        publisher: Answers,
        *,
        claim_seat: Callable[[SeatDriver, str], Seat],
        unpause: Callable[[], list[Event]],
        seat_computers: Callable[[], None],
        shutdown: Callable[[], None],
        move_away: Callable[[], None],
        gone: Callable[[], None],
    ) -> None:
        self.state = state
        self._publisher = publisher
        self._claim_seat = claim_seat
        self._unpause = unpause
        self._seat_computers = seat_computers
        self._shutdown = shutdown
        self._move_away = move_away
        self._gone = gone

    def load(self, stored: StoredRoom) -> None:
        """Take the lobby and the game from what the database has (``Room.restore``, and ``reload`` after a
        failed commit). The versions reserved are the database's: a reserve whose commit failed is not."""
        st = self.state
        settings = st.settings
        st.saved = True
        options = dict(stored.options)
        st.stand_in = options.pop("stand_in", None)
        st.big_screen = bool(options.pop("big_screen", False))  # (a room saved before the option: off)
        lesson = options.pop("lesson", None)
        if lesson is not None:
            st.lesson_step, st.lesson_shown, st.lesson_done = lesson["step"], lesson["shown"], lesson["done"]
            st.lesson_due = None  # the computer players' next move, if any, comes once the learner is back
        st.options = Options(**options)
        st.host = stored.host
        st.v_reserved = stored.v
        now = st.clock.now()
        st.seats = [
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
        st.game, st.record, st.game_id, st.fair = None, None, None, []
        st.round_zero = st.peek_ends = st.next_round_at = None
        st.paused = False
        phase = Phase(stored.phase)
        sg = stored.game
        if sg is not None and phase is not Phase.LOBBY:
            game, _ = replay_game(sg.record)  # the log holds accepted actions only: nothing is refused
            st.game, st.record, st.game_id = game, sg.record, sg.id
            st.fair = [Fairness(salt, rr.deck) for salt, rr in zip(sg.salts, sg.record.rounds, strict=True)]
            r = game.round
            if r is not None:
                st.lesson_now = r.now  # (a lesson's clock: where its record stopped)
            if r is None or r.ended:
                phase = Phase.GAME_OVER if game.game_over else Phase.ROUND_OVER
            elif phase not in (Phase.PEEK, Phase.PLAY):
                phase = Phase.PLAY
        elif phase is not Phase.LOBBY:
            phase = Phase.LOBBY  # a game that was never saved: back to the lobby, nothing was played
        st.phase = phase
        for seat in st.seats:
            seat.ready = seat.left
        # Nobody is connected yet: the game waits, and the first player back resumes it (``Table.unpause``; after a
        # failed commit, ``reload`` does so at once for the members still there).
        st.paused = phase in GAME_PHASES
        if st.paused:
            # Waiting since the room was last saved (when its last player went, or just before a crash):
            # the downtime counts towards abandoning it.
            st.paused_at = now - _ms_since(stored.updated_at)

    def tell_unavailable(self, greeting: dict[SeatDriver, tuple[bytes, bool]], *, first: bool) -> None:
        """A commit failed and the room waits for the database (``Actor._suspend``): its members are told it is
        ``unavailable`` (``first``: once per outage, not at every failed try to come back), and who came in
        meanwhile and was not welcomed yet (``greeting``, taken back): a player back on their seat, or a
        spectator, is welcomed and told; a join (its seat may not be saved) is only told (``reload`` settles
        it). Sent at once: nothing of it waits for a commit."""
        st = self.state
        st.suspended = True
        if first:
            log.warning("room %s: a change could not be saved; the room waits for the database", st.code)
            for conn in st.members:
                if conn not in greeting:
                    conn.send(p.unavailable_message(st.v, conn.lang))
        for conn, (_, again) in greeting.items():
            if conn in st.members:
                if again:
                    seat = st.members[conn]
                    conn.send(self._publisher.welcome(None if seat is None else st.seats.index(seat), None))
                conn.send(p.unavailable_message(st.v, conn.lang))

    def while_suspended(self, message: RoomMessage) -> None:
        """A message for a suspended room: nothing changes; members come and go, and are answered."""
        st = self.state
        if isinstance(message, Inbound):
            conn, msg = message.conn, message.message
            try:
                if isinstance(msg, p.Resume):
                    index = st.seats.index(self._claim_seat(conn, msg.token))
                    st.send(conn, self._publisher.welcome(index, None))
                    st.send(conn, p.unavailable_message(st.v, conn.lang))
                elif isinstance(msg, p.Ping) and conn in st.members:
                    st.send(conn, orjson.dumps({"type": "pong", "v": st.v}))
                elif isinstance(msg, p.Sync) and conn in st.members:
                    st.send(conn, p.unavailable_message(st.v, conn.lang))
                elif isinstance(msg, p.SetLang) and conn in st.members:
                    conn.lang = msg.lang  # nothing to save
                else:
                    raise RoomError(p.ProtocolCode.UNAVAILABLE)
            except RoomError as err:
                st.send(conn, p.error_message(st.v, err.code, conn.lang))
        elif isinstance(message, Detach):
            seat = st.members.pop(message.conn, None)
            message.conn.room = None
            if seat is not None and seat.conn is message.conn:
                seat.conn = None
        elif isinstance(message, Reload):
            self.reload(message.stored)
        elif isinstance(message, Shutdown):
            self._shutdown()
        elif isinstance(message, MoveAway):
            self._move_away()

    def reload(self, stored: StoredRoom | None) -> None:
        """Go on from what the database has: every member gets it (an ``update`` with the event
        ``available``); the current move gets a fresh clock, as after a restart."""
        st = self.state
        st.suspended = False
        if stored is None:  # closed meanwhile (its close was saved just before the failure)
            self._gone()
            return
        members = list(st.members.items())
        self.load(stored)
        seats = {s.token_hash: s for s in st.seats}
        st.members = {}
        for conn, before in members:
            seat = seats.get(before.token_hash) if before is not None else None
            if before is not None and seat is None:
                # Seated by a change that was not saved: their join did not happen.
                conn.room = None
                st.send(conn, p.error_message(st.v, p.ProtocolCode.UNAVAILABLE, conn.lang))
                continue
            if seat is not None:
                seat.conn = conn
                seat.standing_in = isinstance(conn, BotDriver) and conn.stand_in
            st.members[conn] = seat
        self._seat_computers()
        events = self._unpause() if any(s.person_here for s in st.seats) else []
        st.save_room()
        self._publisher.publish(events, [{"type": "available"}])


def _ms_since(instant: datetime | None) -> int:
    """Milliseconds from a stored instant to now (none if unknown; SQLite gives back instants without zone: UTC)."""
    if instant is None:
        return 0
    if instant.tzinfo is None:
        instant = instant.replace(tzinfo=UTC)
    return max(0, int((datetime.now(UTC) - instant).total_seconds() * 1000))
