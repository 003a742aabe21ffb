"""The room's actor: the mailbox (one message at a time, on the event loop), the write-ahead (changes committed
before what they cause is sent), its one timer, and its end. ``Room`` holds one; it hands each message to the
room's ``handle`` and reads the room's data and buffers from its ``RoomState``."""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from collections.abc import Callable, Sequence

import orjson

from crisp_server.store.leases import Fenced
from crisp_server.store.operations import CloseRoom
from crisp_server.store.store import Store
from crisp_server.wire import protocol as p

from .clock import TimerHandle
from .driver import CLOSE_LEFT, CLOSE_MOVED, CLOSE_REPLACED, CLOSE_RESTART, RoomHandle, SeatDriver
from .messages import Reload, RoomMessage, Tick
from .state import Outgoing, RoomState

log = logging.getLogger("crisp.room")


class Actor:
    """A room as an actor: :meth:`post` is the only way in, from any coroutine; each message is handled at once
    (``handle``), then what it changed is submitted to the store and what it caused waits for that commit.

    What it needs of its room comes through its constructor: ``room`` (what its members' drivers post to),
    ``handle`` (one message), ``wake_at`` (when the room next needs a tick), ``left`` (the room leaves the
    registry), ``suspended`` (a commit failed: the registry retries) and ``tell_unavailable`` (recovery tells
    the members, with the welcomes taken back and whether this outage is new)."""

    def __init__(
        self,
        state: RoomState,
        store: Store | None,
        *,
        room: RoomHandle,
        handle: Callable[[RoomMessage], None],
        wake_at: Callable[[], int | None],
        left: Callable[[], None],
        suspended: Callable[[], None],
        tell_unavailable: Callable[[dict[SeatDriver, tuple[bytes, bool]], bool], None],
    ) -> None:
        self.state = state
        self.store = store
        self._room = room
        self._handle = handle
        self._wake_at = wake_at
        self._left = left
        self._on_suspend = suspended
        self._tell_unavailable = tell_unavailable
        self._pending: deque[RoomMessage] = deque()  # posted while a message is being handled
        self._handling = False
        self.in_flight = 0  # submissions to the store not yet committed and delivered
        self._drained = asyncio.Event()
        self._drained.set()
        # Bumped when a commit fails: what the room submitted before is dropped, and not delivered.
        self._epoch = 0
        self._notified = False  # members were told ``unavailable`` and not yet that it is over
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
        #: Called with each accepted action's seconds from arrival to publication (metrics), if set.
        self.observe_action: Callable[[float], None] | None = None

    # -- running ---------------------------------------------------------------------------------------

    def post(self, message: RoomMessage) -> None:
        """Handle ``message`` now (or right after the one being handled); what it sends goes out once what
        it changed is committed."""
        st = self.state
        self._pending.append(message)
        if self._handling:
            return
        self._handling = True
        try:
            while self._pending:
                message = self._pending.popleft()
                if st.closed:
                    continue
                try:
                    self._handle(message)
                except Exception:  # a bug must not take the whole room down with it
                    log.exception("room %s: error handling %s", st.code, type(message).__name__)
            self._submit()
        finally:
            self._handling = False
        self._schedule()

    def _submit(self) -> None:
        """Commit what changed, then send what it caused: nobody hears of a change the database lacks.
        Frames that follow a change still being committed wait behind it, so everything keeps its order."""
        st = self.state
        ops, out, accepted, movers = st.ops, st.outbox, st.accepted, st.movers
        st.ops, st.outbox, st.accepted, st.movers = [], [], [], []
        if not ops and not out:
            return
        if st.suspended:
            # Nothing changes while suspended (``_while_suspended``): what goes out are answers and notices
            # about what was last saved, and the changes submitted before are dropped: nothing to wait for.
            assert not ops, "a suspended room changed"
            if self._lease_trusted():
                _deliver(out)
            else:
                self._fence_out(out)
            return
        if self.store is None or (not ops and self.in_flight == 0):
            self._published(out, accepted, st.v)
            return
        self.in_flight += 1
        self._drained.clear()
        epoch, v = self._epoch, st.v

        def done(error: BaseException | None) -> None:
            self.in_flight -= 1
            if self.in_flight == 0:
                self._drained.set()
            if error is not None and not isinstance(error, Fenced) and not self._lease_trusted():
                # The lease may have run out (its renewal is overdue: the node was frozen or cut off), and a
                # database that ended this node's session looks like an outage. Another node may run the
                # room now: telling its players ``unavailable`` would be a lie; they are sent there.
                self._fence_out(out, "a commit failed when its lease may have run out (not renewed in time)")
                return
            if isinstance(error, Fenced):
                if not st.closed:
                    self.lose()
                return
            if error is not None and epoch == self._epoch and not st.closed:
                self._suspend(error)
            if error is not None and not st.closed:
                for conn in movers:  # their move was not made: they may make it again when the game goes on
                    conn.send(p.error_message(st.v, p.ProtocolCode.UNAVAILABLE, conn.lang))
            if epoch != self._epoch:
                self._dropped(out)
                return
            # A closed room's goodbyes go out even if its close was not saved: it has left memory regardless.
            if ops and error is None:
                st.saved = True
            self._published(out, accepted, v)

        fence = (st.code, self.lease) if self.lease is not None else None
        self.store.submit(ops, done, skip=lambda: epoch != self._epoch, fence=fence)

    def _published(self, out: list[Outgoing], accepted: list[float], v: int) -> None:
        st = self.state
        if not self._lease_trusted():
            self._fence_out(out)
            return
        st.v_sent = max(st.v_sent, v)
        self._notified = False
        if st.greeting:
            for conn, item in out:
                if st.greeting.get(conn, (None,))[0] is item:
                    del st.greeting[conn]
        _deliver(out)
        if accepted and self.observe_action is not None:
            done = time.perf_counter()
            for arrived in accepted:
                self.observe_action(done - arrived)

    async def flush(self) -> None:
        """Submit what is waiting, and wait until everything this room submitted is committed and sent."""
        self._submit()
        await self._drained.wait()

    async def recover(self) -> bool:
        """Rebuild the room from the database and go on from there; whether it is back (its first commit
        went through). Raises if the database cannot be read yet."""
        st = self.state
        if not st.suspended or st.closed:
            return True
        assert self.store is not None
        stored = await self.store.load_room(st.room_id)
        self.post(Reload(stored))
        await self.flush()
        return not st.suspended

    def _suspend(self, error: BaseException) -> None:
        """Saving failed: what players were not told never happened for them. The room takes back what it
        did not save (it is rebuilt from the database when that answers, ``recover``), tells its members
        it is ``unavailable`` and changes nothing meanwhile; the connections stay open."""
        st = self.state
        self._epoch += 1  # what it submitted after the failed change followed from it: dropped
        outbox, greeting = st.outbox, st.greeting
        st.ops, st.outbox, st.accepted, st.movers, st.greeting = [], [], [], [], {}
        st.v = st.v_sent  # nobody saw the versions that were not saved
        self._dropped(outbox)
        if not st.saved:
            # Its first save failed: there is nothing to go back to. Its creator is told to try again.
            log.warning("room %s: its creation could not be saved; it is closed", st.code)
            for conn in st.members:
                conn.room = None
                conn.send(p.error_message(st.v, p.ProtocolCode.UNAVAILABLE, conn.lang))
            st.members.clear()
            st.closed = True
            self._left()
        else:
            self._tell_unavailable(greeting, not self._notified)
            self._notified = True
        self._schedule()  # no timer runs while suspended
        self._on_suspend()  # the registry tries the database again until it answers

    # -- write-ahead: what was not sent ------------------------------------------------------------------

    def _dropped(self, out: Sequence[Outgoing]) -> None:
        """What followed a failed commit is not sent, but a connection that left the room meanwhile (replaced
        by a newer one of the same player, kicked, gone) is still closed: it is in no room any more."""
        st = self.state
        if st.closed:
            return
        for conn, item in out:
            if isinstance(item, tuple) and conn not in st.members:
                if item[0] == CLOSE_REPLACED:
                    conn.send(orjson.dumps({"type": "replaced", "v": st.v}))
                conn.close(*item)

    # -- scheduling ------------------------------------------------------------------------------------

    def _schedule(self) -> None:
        st = self.state
        when = None if st.closed else self._wake_at()
        if when == self._timer_at:
            return
        if self._timer is not None:
            self._timer.cancel()
        self._timer = None
        self._timer_at = when
        if when is not None:
            self._timer = st.clock.call_at(when, self._wake)

    def _wake(self) -> None:
        st = self.state
        self._timer = None
        self._timer_at = None
        if not st.closed:
            self.post(Tick())

    # -- closing ---------------------------------------------------------------------------------------

    def close(self) -> None:
        """The last player left: let the spectators go, and leave the registry."""
        st = self.state
        st.save(CloseRoom(st.room_id))
        self.gone()

    def gone(self) -> None:
        """The room is closed (here, or in the database meanwhile): its members are sent away."""
        self._send_away("room_closed", CLOSE_LEFT, "the room closed", leave_registry=True)

    def shutdown(self) -> None:
        """The server stops: tell everyone to come back in a moment, and close."""
        self._send_away("restarting", CLOSE_RESTART, "server restarting", leave_registry=False)

    def move_away(self) -> None:
        """Hand the room over (cluster): after what is being committed, members are sent to reconnect."""
        self._send_away("moved", CLOSE_MOVED, "moved", leave_registry=True)

    def _lease_trusted(self) -> bool:
        """Whether the room may send anything but ``moved``: on one server always; in a cluster while its
        lease is surely this node's (``lease_until``). Read from the monotonic clock at the moment of
        sending: after a freeze (SIGSTOP, a stalled VM) the first callback that runs finds it past."""
        return self.lease is None or time.monotonic() < self.lease_until

    def _fence_out(
        self,
        out: Sequence[Outgoing],
        why: str = "its lease may have run out (not renewed in time)",
    ) -> None:
        """Frames were due but the lease may be gone: none of them is sent. Their recipients (a goodbye's too,
        no longer members) and every member get ``moved`` instead, and the room stops here (``lose``)."""
        st = self.state
        recipients = [conn for conn in dict.fromkeys(conn for conn, _ in out) if conn not in st.members]
        if st.closed and not self.lost:
            # A room that stopped (closed, handed over) has left the registry already: only its goodbyes.
            self._moved(recipients)
        elif not st.closed:
            self.lose(also=recipients, why=why)

    def lose(self, also: Sequence[SeatDriver] = (), why: str = "another node holds it now") -> None:
        """Another node holds the room now (a commit was fenced, or the lease was not renewed), or may (the
        lease ran out unrenewed): what was not committed never happened and is not sent; every member (and
        ``also``) is told ``moved`` (closed with 4005, to reconnect and find the room on its new node) and
        the room stops here."""
        st = self.state
        self._epoch += 1  # what it submitted is dropped, never delivered
        st.ops, st.outbox, st.accepted, st.movers = [], [], [], []
        st.greeting.clear()
        self.lost = True
        log.warning("room %s: %s; its players are sent there", st.code, why)
        self._moved([*st.members, *(conn for conn in also if conn not in st.members)])
        st.members.clear()
        st.closed = True
        if self._timer is not None:
            self._timer.cancel()
        self._left()

    def _moved(self, conns: Sequence[SeatDriver]) -> None:
        """Tell each of ``conns`` ``moved`` and close it with 4005, now (nothing of this room follows it)."""
        st = self.state
        data = p.moved_message(st.v_sent)
        for conn in conns:
            conn.send(data)
            conn.close(CLOSE_MOVED, "moved")
            if conn.room is self._room:
                conn.room = None

    def _send_away(self, kind: str, code: int, reason: str, *, leave_registry: bool) -> None:
        """Tell every member ``kind``, close their sockets after it, and stop the room."""
        st = self.state
        data = orjson.dumps({"type": kind, "v": st.v})
        for conn in list(st.members):
            st.send(conn, data)
            st.hang_up(conn, code, reason)
            conn.room = None
        st.members.clear()
        st.closed = True
        if self._timer is not None:
            self._timer.cancel()
        if leave_registry:
            self._left()


def _deliver(items: Sequence[Outgoing]) -> None:
    """Hand queued frames and closes to their connections, in order."""
    for conn, item in items:
        if isinstance(item, tuple):
            conn.close(*item)
        else:
            conn.send(item)
