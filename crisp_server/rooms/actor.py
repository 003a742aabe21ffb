"""The room's actor: its state, the message loop (one message at a time, on the event loop), the write-ahead
(changes committed before what they cause is sent), its one timer, and its end."""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
from abc import ABC, abstractmethod
from collections import deque
from collections.abc import Callable, Sequence
from typing import Self

import orjson

from crisp_server.engine import Game, Options, Record
from crisp_server.settings import Settings
from crisp_server.store.leases import Fenced
from crisp_server.store.operations import CloseRoom, Op, SaveRoom, SeatData
from crisp_server.store.store import Store
from crisp_server.wire import protocol as p

from .clock import Clock, TimerHandle
from .driver import CLOSE_LEFT, CLOSE_MOVED, CLOSE_REPLACED, CLOSE_RESTART, SeatDriver
from .messages import RoomMessage, Tick
from .phase import Fairness, Phase
from .seats import Seat

log = logging.getLogger("crisp.room")


class RoomActor(ABC):
    """A room as an actor: :meth:`post` is the only way in, from any coroutine; each message is handled at once
    (``handle``), then what it changed is submitted to the store and what it caused waits for that commit.
    The layers above it (``Publishing``, ``TableFlow``, ``Seating``, ``Recovery``, ``Room``) hold the rest."""

    def __init__(
        self,
        code: str,
        link: str,
        settings: Settings,
        clock: Clock,
        on_close: Callable[[Self], None] | None = None,
        *,
        store: Store | None = None,
        room_id: str | None = None,
    ) -> None:
        self.code = code
        self.room_id = room_id or secrets.token_hex(8)
        self.store = store
        self.link = link
        #: A room rebuilt from the database without ``CRISP_PUBLIC_URL``: the first time its host's page comes
        #: back, the link takes that page's address (the server may have moved, or a backup was restored
        #: on another machine).
        self.relink = False
        self.settings = settings
        self.clock = clock
        self._on_close = on_close
        self._pending: deque[RoomMessage] = deque()  # posted while a message is being handled
        self._handling = False
        self._in_flight = 0  # submissions to the store not yet committed and delivered
        self._drained = asyncio.Event()
        self._drained.set()
        #: A commit failed: the room shows what it last saved, changes nothing and waits for the database
        #: (see ``_suspend``); ``recover`` rebuilds it from the database's record.
        self.suspended = False
        #: Called when the room is suspended (the registry retries until the database answers).
        self.on_suspend: Callable[[Self], None] | None = None
        # Bumped when a commit fails: what the room submitted before is dropped, and not delivered.
        self._epoch = 0
        self._saved = False  # the database has this room (one whose first save failed has nothing to go back to)
        self._notified = False  # members were told ``unavailable`` and not yet that it is over
        self.v = 0
        self.v_reserved = 0  # the highest version the database allows (see VERSION_BLOCK)
        self._v_sent = 0  # the version of the last message delivered: uncommitted versions are taken back
        self.phase = Phase.LOBBY
        self.seats: list[Seat] = []
        self.host = 0
        self.members: dict[SeatDriver, Seat | None] = {}  # None: a spectator
        self.options = Options()
        #: A computer player stands in for a person away this many seconds during a game (``None``: never).
        self.stand_in: int | None = None
        #: Every seat but one is a computer player's: hints are offered to that one person.
        self.practice = False
        self.game: Game | None = None
        self.record: Record | None = None
        self.game_id: str | None = None
        self.fair: list[Fairness] = []
        self.round_zero: int | None = None  # clock instant of the current round's engine time 0
        self.peek_ends: int | None = None
        self.next_round_at: int | None = None
        self.closed = False
        #: In a cluster: the epoch of this node's lease of the room, checked by each of its commits.
        self.lease: int | None = None
        #: In a cluster: until when (``time.monotonic()``) the lease is surely still this node's: the start of
        #: its last successful claim or renewal, plus the lease, less a margin (``Cluster``). Past it, another
        #: node may hold the room: nothing is sent to its sockets but ``moved`` (``_lease_trusted``).
        self.lease_until = 0.0
        #: In a cluster: another node took the room over; it stopped here and its members were sent there.
        self.lost = False
        self._timer: TimerHandle | None = None
        self._timer_at: int | None = None
        self.touched = clock.now()  # the last message handled (idle rooms are closed)
        #: A game with no player connected waits (peek, play or the pause between rounds): nothing times out
        #: for nobody to see, and the first player back resumes it.
        self.paused = False
        self.paused_at: int | None = None  # since when (clock instant): a game paused for long is abandoned
        # Write-ahead: what changed waits in _ops, what it causes waits in _outbox, until the commit.
        self._ops: list[Op] = []
        self._outbox: list[tuple[SeatDriver, bytes | tuple[int, str]]] = []
        #: Welcomes queued and not yet delivered: the frame, and whether it may be given again while the room
        #: is suspended (a resume or a watch: the seat is the database's; not a join, which may not be).
        self._greeting: dict[SeatDriver, tuple[bytes, bool]] = {}
        #: Called with each accepted action's seconds from arrival to publication (metrics), if set.
        self.observe_action: Callable[[float], None] | None = None
        self._arrived = 0.0
        self._accepted: list[float] = []
        self._movers: list[SeatDriver] = []  # who made the accepted actions waiting for a commit

    # -- running ---------------------------------------------------------------------------------------

    def post(self, message: RoomMessage) -> None:
        """Handle ``message`` now (or right after the one being handled); what it sends goes out once what
        it changed is committed."""
        self._pending.append(message)
        if self._handling:
            return
        self._handling = True
        try:
            while self._pending:
                message = self._pending.popleft()
                if self.closed:
                    continue
                try:
                    self.handle(message)
                except Exception:  # a bug must not take the whole room down with it
                    log.exception("room %s: error handling %s", self.code, type(message).__name__)
            self._submit()
        finally:
            self._handling = False
        self._schedule()

    def _submit(self) -> None:
        """Commit what changed, then send what it caused: nobody hears of a change the database lacks.
        Frames that follow a change still being committed wait behind it, so everything keeps its order."""
        ops, out, accepted, movers = self._ops, self._outbox, self._accepted, self._movers
        self._ops, self._outbox, self._accepted, self._movers = [], [], [], []
        if not ops and not out:
            return
        if self.suspended:
            # Nothing changes while suspended (``_while_suspended``): what goes out are answers and notices
            # about what was last saved, and the changes submitted before are dropped: nothing to wait for.
            assert not ops, "a suspended room changed"
            if self._lease_trusted():
                _deliver(out)
            else:
                self._fence_out(out)
            return
        if self.store is None or (not ops and self._in_flight == 0):
            self._published(out, accepted, self.v)
            return
        self._in_flight += 1
        self._drained.clear()
        epoch, v = self._epoch, self.v

        def done(error: BaseException | None) -> None:
            self._in_flight -= 1
            if self._in_flight == 0:
                self._drained.set()
            if error is not None and not isinstance(error, Fenced) and not self._lease_trusted():
                # The lease may have run out (its renewal is overdue: the node was frozen or cut off), and a
                # database that ended this node's session looks like an outage. Another node may run the
                # room now: telling its players ``unavailable`` would be a lie; they are sent there.
                self._fence_out(out, "a commit failed when its lease may have run out (not renewed in time)")
                return
            if isinstance(error, Fenced):
                if not self.closed:
                    self.lose()
                return
            if error is not None and epoch == self._epoch and not self.closed:
                self._suspend(error)
            if error is not None and not self.closed:
                for conn in movers:  # their move was not made: they may make it again when the game goes on
                    conn.send(p.error_message(self.v, p.ProtocolCode.UNAVAILABLE, conn.lang))
            if epoch != self._epoch:
                self._dropped(out)
                return
            # A closed room's goodbyes go out even if its close was not saved: it has left memory regardless.
            if ops and error is None:
                self._saved = True
            self._published(out, accepted, v)

        fence = (self.code, self.lease) if self.lease is not None else None
        self.store.submit(ops, done, skip=lambda: epoch != self._epoch, fence=fence)

    def _published(self, out: list[tuple[SeatDriver, bytes | tuple[int, str]]], accepted: list[float], v: int) -> None:
        if not self._lease_trusted():
            self._fence_out(out)
            return
        self._v_sent = max(self._v_sent, v)
        self._notified = False
        if self._greeting:
            for conn, item in out:
                if self._greeting.get(conn, (None,))[0] is item:
                    del self._greeting[conn]
        _deliver(out)
        if accepted and self.observe_action is not None:
            done = time.perf_counter()
            for arrived in accepted:
                self.observe_action(done - arrived)

    async def flush(self) -> None:
        """Submit what is waiting, and wait until everything this room submitted is committed and sent."""
        self._submit()
        await self._drained.wait()

    @abstractmethod
    def handle(self, message: RoomMessage) -> None:
        """Handle one message; what it sends goes out once what it changed is committed (``Room``)."""

    @abstractmethod
    def _welcome(self, index: int | None, token: str | None) -> bytes:
        """The ``welcome`` frame of a seat (``index``) or a spectator (``None``) (``Publishing``)."""

    @abstractmethod
    def _suspend(self, error: BaseException) -> None:
        """A commit failed: take back what was not saved and wait for the database (``Recovery``)."""

    # -- write-ahead: what changed, and what it causes -----------------------------------------------------

    def _send(self, conn: SeatDriver, data: bytes) -> None:
        self._outbox.append((conn, data))

    def _greet(self, conn: SeatDriver, index: int | None, token: str | None, again: bool) -> None:
        """Send ``welcome``; ``again``: if what it follows is not saved, it is sent again with ``unavailable``
        (the player's seat is the database's), else ``unavailable`` alone (``_suspend``)."""
        data = self._welcome(index, token)
        self._greeting[conn] = (data, again)
        self._send(conn, data)

    def _hang_up(self, conn: SeatDriver, code: int, reason: str) -> None:
        self._outbox.append((conn, (code, reason)))

    def _dropped(self, out: Sequence[tuple[SeatDriver, bytes | tuple[int, str]]]) -> None:
        """What followed a failed commit is not sent, but a connection that left the room meanwhile (replaced
        by a newer one of the same player, kicked, gone) is still closed: it is in no room any more."""
        if self.closed:
            return
        for conn, item in out:
            if isinstance(item, tuple) and conn not in self.members:
                if item[0] == CLOSE_REPLACED:
                    conn.send(orjson.dumps({"type": "replaced", "v": self.v}))
                conn.close(*item)

    def _save(self, *ops: Op) -> None:
        if self.store is not None:
            self._ops.extend(ops)

    def _save_room(self) -> None:
        self.practice = len(self.seats) >= 2 and sum(1 for s in self.seats if s.bot is None) == 1
        self._save(
            SaveRoom(
                self.room_id,
                self.code,
                self.link,
                self.phase.value,
                self.host,
                {**self.options.as_dict(), "stand_in": self.stand_in},
                tuple(SeatData(s.name, s.token_hash, s.left, s.connected_at, s.bot) for s in self.seats),
            )
        )

    # -- scheduling ------------------------------------------------------------------------------------

    @abstractmethod
    def _wake_at(self) -> int | None:
        """The clock instant at which the table next needs a tick, if any (``TableFlow``)."""

    def _schedule(self) -> None:
        when = None if self.closed else self._wake_at()
        if when == self._timer_at:
            return
        if self._timer is not None:
            self._timer.cancel()
        self._timer = None
        self._timer_at = when
        if when is not None:
            self._timer = self.clock.call_at(when, self._wake)

    def _wake(self) -> None:
        self._timer = None
        self._timer_at = None
        if not self.closed:
            self.post(Tick())

    # -- closing ---------------------------------------------------------------------------------------

    def _close(self) -> None:
        """The last player left: let the spectators go, and leave the registry."""
        self._save(CloseRoom(self.room_id))
        self._send_away("room_closed", CLOSE_LEFT, "the room closed", leave_registry=True)

    def _shutdown(self) -> None:
        """The server stops: tell everyone to come back in a moment, and close."""
        self._send_away("restarting", CLOSE_RESTART, "server restarting", leave_registry=False)

    def _move_away(self) -> None:
        """Hand the room over (cluster): after what is being committed, members are sent to reconnect."""
        self._send_away("moved", CLOSE_MOVED, "moved", leave_registry=True)

    def _lease_trusted(self) -> bool:
        """Whether the room may send anything but ``moved``: on one server always; in a cluster while its
        lease is surely this node's (``lease_until``). Read from the monotonic clock at the moment of
        sending: after a freeze (SIGSTOP, a stalled VM) the first callback that runs finds it past."""
        return self.lease is None or time.monotonic() < self.lease_until

    def _fence_out(
        self,
        out: Sequence[tuple[SeatDriver, bytes | tuple[int, str]]],
        why: str = "its lease may have run out (not renewed in time)",
    ) -> None:
        """Frames were due but the lease may be gone: none of them is sent. Their recipients (a goodbye's too,
        no longer members) and every member get ``moved`` instead, and the room stops here (``lose``)."""
        recipients = [conn for conn in dict.fromkeys(conn for conn, _ in out) if conn not in self.members]
        if self.closed and not self.lost:
            # A room that stopped (closed, handed over) has left the registry already: only its goodbyes.
            self._moved(recipients)
        elif not self.closed:
            self.lose(also=recipients, why=why)

    def lose(self: Self, also: Sequence[SeatDriver] = (), why: str = "another node holds it now") -> None:
        """Another node holds the room now (a commit was fenced, or the lease was not renewed), or may (the
        lease ran out unrenewed): what was not committed never happened and is not sent; every member (and
        ``also``) is told ``moved`` (closed with 4005, to reconnect and find the room on its new node) and
        the room stops here."""
        self._epoch += 1  # what it submitted is dropped, never delivered
        self._ops, self._outbox, self._accepted, self._movers = [], [], [], []
        self._greeting.clear()
        self.lost = True
        log.warning("room %s: %s; its players are sent there", self.code, why)
        self._moved([*self.members, *(conn for conn in also if conn not in self.members)])
        self.members.clear()
        self.closed = True
        if self._timer is not None:
            self._timer.cancel()
        if self._on_close is not None:
            self._on_close(self)

    def _moved(self, conns: Sequence[SeatDriver]) -> None:
        """Tell each of ``conns`` ``moved`` and close it with 4005, now (nothing of this room follows it)."""
        data = p.moved_message(self._v_sent)
        for conn in conns:
            conn.send(data)
            conn.close(CLOSE_MOVED, "moved")
            if conn.room is self:
                conn.room = None

    def _send_away(self: Self, kind: str, code: int, reason: str, *, leave_registry: bool) -> None:
        """Tell every member ``kind``, close their sockets after it, and stop the room."""
        data = orjson.dumps({"type": kind, "v": self.v})
        for conn in list(self.members):
            self._send(conn, data)
            self._hang_up(conn, code, reason)
            conn.room = None
        self.members.clear()
        self.closed = True
        if self._timer is not None:
            self._timer.cancel()
        if leave_registry and self._on_close is not None:
            self._on_close(self)


def _deliver(items: Sequence[tuple[SeatDriver, bytes | tuple[int, str]]]) -> None:
    """Hand queued frames and closes to their connections, in order."""
    for conn, item in items:
        if isinstance(item, tuple):
            conn.close(*item)
        else:
            conn.send(item)
