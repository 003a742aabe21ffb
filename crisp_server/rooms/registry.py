"""All the rooms of this process, by code; and their way back after the database failed a commit."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from crisp_server.settings import Settings
from crisp_server.store.outage import describe
from crisp_server.store.reads import StoredRoom
from crisp_server.store.store import Store

from .clock import Clock
from .messages import Abandon, Expire, Shutdown
from .phase import Phase
from .room import Room
from .tokens import new_room_code

if TYPE_CHECKING:
    from .cluster import Cluster

log = logging.getLogger("crisp.rooms")

#: After a failed commit, the database is tried again after this many seconds, then twice as long each
#: time it still fails, up to ``RETRY_CAP_SECONDS``: a short blip costs a quarter of a second, a long outage
#: costs a try every few seconds (each a connection attempt, or a read of one room).
RETRY_FIRST_SECONDS = 0.25
RETRY_CAP_SECONDS = 5.0
#: Rooms read back at once when the database answers (PostgreSQL's pool holds 5 connections, and 10 more).
RECOVER_AT_ONCE = 4


class Registry:
    def __init__(self, settings: Settings, clock: Clock, store: Store | None = None) -> None:
        self.settings = settings
        self.clock = clock
        self.store = store
        self.rooms: dict[str, Room] = {}
        #: Given to every room: called with each accepted action's latency in seconds (metrics).
        self.observe_action: Callable[[float], None] | None = None
        #: Rooms waiting for the database (a commit of theirs failed); ``_recover`` brings them back.
        self.suspended: set[Room] = set()
        self.retry_first = RETRY_FIRST_SECONDS
        self.retry_cap = RETRY_CAP_SECONDS
        self._recovery: asyncio.Task[None] | None = None
        self._outage_since: float | None = None  # monotonic, while rooms wait or commits fail
        self._outage_seconds = 0.0  # outages that ended
        #: In a cluster (``CRISP_CLUSTER``): this node's leases; its rooms are the ones it holds.
        self.cluster: Cluster | None = None
        if store is not None:
            store.on_failure.append(self._store_failed)

    def create(
        self, base_url: str, *, code: str | None = None, lease: int | None = None, lease_until: float = 0.0
    ) -> Room:
        """A new empty room with a fresh code (in a cluster: the code its lease was claimed for, the lease's
        epoch and until when it is trusted, ``Room.lease_until``)."""
        if code is None:
            code = new_room_code()
            while code in self.rooms:
                code = new_room_code()
        room = Room(code, f"{base_url}/r/{code}", self.settings, self.clock, self._closed, store=self.store)
        room.lease, room.lease_until = lease, lease_until
        self._adopt(room)
        log.info("room created", extra={"room": code})
        return room

    async def restore(self, stored: list[StoredRoom]) -> None:
        """Bring back the rooms the database has (after a restart or a crash), and save what that changed."""
        restored: list[Room] = []
        for item in stored:
            if item.code in self.rooms:
                continue
            room = Room.restore(item, self.settings, self.clock, self.store, self._closed)
            self._adopt(room)
            restored.append(room)
        # Each room's new version reserve is saved before anyone hears from it; all in a few group commits
        # (one room after the other, 2,000 rooms would wait for 2,000 commits).
        await asyncio.gather(*(room.flush() for room in restored))
        if stored:
            log.info("rooms restored", extra={"rooms": len(stored)})
        # Games whose players had been gone long enough before the restart end now.
        self.expire_abandoned(int(self.settings.idle_game_hours * 3_600_000))

    def restore_one(self, stored: StoredRoom, lease: int, lease_until: float) -> Room:
        """A room this node has just claimed (cluster: the lease's epoch, and until when it is trusted), rebuilt
        from the database as after a restart; the caller awaits its ``flush``. A game abandoned long enough
        ends now."""
        room = Room.restore(stored, self.settings, self.clock, self.store, self._closed)
        room.lease, room.lease_until = lease, lease_until
        self._adopt(room)
        idle_ms = int(self.settings.idle_game_hours * 3_600_000)
        if room.paused and room.paused_at is not None and self.clock.now() - room.paused_at >= idle_ms:
            room.post(Abandon())
        return room

    def _adopt(self, room: Room) -> None:
        room.observe_action = self.observe_action
        room.on_suspend = self._suspended
        self.rooms[room.code] = room

    # -- outages ---------------------------------------------------------------------------------------

    def _suspended(self, room: Room) -> None:
        self.suspended.add(room)
        if self._outage_since is None:
            self._outage_since = time.monotonic()
        if self._recovery is None:
            self._recovery = asyncio.get_running_loop().create_task(self._recover(), name="rooms recovery")

    def _store_failed(self, _reason: str) -> None:
        """A commit failed. Usually a room is suspended by it, and its recovery ends the outage; but a room
        that failed on a node whose lease may be gone stops instead (``Room.lose``), and then nothing
        would ever try the database again: ``/healthz`` would say 503 until some commit went through."""
        if self._recovery is None:
            self._recovery = asyncio.get_running_loop().create_task(self._recover(), name="rooms recovery")

    def problem(self) -> str | None:
        """Why the server cannot play right now (``/healthz``), or ``None``."""
        if self.cluster is not None and self.cluster.draining:
            return f"draining: {len(self.rooms)} room(s) are being handed over to other nodes"
        outage = self.store.outage if self.store is not None else None
        if outage is None and not self.suspended:
            return None
        why = f"the database cannot be written ({outage.reason})" if outage else "the database answers again"
        return f"{why}; {len(self.suspended)} room(s) wait for it"

    def outage_seconds(self) -> float:
        """Seconds this process has spent with rooms waiting for the database (metrics)."""
        since = self._outage_since
        return self._outage_seconds + (time.monotonic() - since if since is not None else 0.0)

    async def _recover(self) -> None:
        """Try the database again, with back-off, until every suspended room is back."""
        delay = self.retry_first
        try:
            while self.suspended or (self.store is not None and self.store.outage is not None):
                await asyncio.sleep(delay)
                delay = self.retry_first if await self._retry() else min(delay * 2, self.retry_cap)
        finally:
            self._recovery = None
            if self._outage_since is not None:
                self._outage_seconds += time.monotonic() - self._outage_since
                self._outage_since = None

    async def _retry(self) -> bool:
        """One try: the waiting rooms come back one after the other, until one cannot; with none waiting,
        a probe. Whether everything is back."""
        if not self.suspended:
            assert self.store is not None
            try:
                await self.store.probe()
            except Exception as exc:
                log.info("the database does not answer yet: %s", describe(exc))
                return False
            return True
        first, *rest = self.suspended
        if not await self._recover_room(first):
            return False
        # The database answers: the others come back together (their reads a few at a time, their commits
        # grouped), not one commit after the other (30 rooms took 4 s so).
        reads = asyncio.Semaphore(RECOVER_AT_ONCE)

        async def one(room: Room) -> bool:
            async with reads:
                return await self._recover_room(room)

        back = all(await asyncio.gather(*(one(room) for room in rest)))
        if back:
            log.info("rooms are back after a database outage", extra={"rooms": len(rest) + 1})
        return back

    async def _recover_room(self, room: Room) -> bool:
        try:
            back = await room.recover()
        except Exception as exc:  # its read failed: the database does not answer yet
            log.info("the database does not answer yet: %s", describe(exc))
            return False
        if back:
            self.suspended.discard(room)
        return back

    def get(self, code: str) -> Room | None:
        return self.rooms.get(code)

    def _closed(self, room: Room) -> None:
        if self.rooms.get(room.code) is room:
            del self.rooms[room.code]
            log.info("room closed", extra={"room": room.code})
            if self.cluster is not None:
                self.cluster.closed(room)

    def idle(self, idle_ms: int) -> list[Room]:
        """Rooms nobody is connected to and nothing happened in for ``idle_ms``, in the lobby or after a game."""
        now = self.clock.now()
        return [
            r
            for r in self.rooms.values()
            if not r.people_here() and now - r.touched >= idle_ms and r.phase in (Phase.LOBBY, Phase.GAME_OVER)
        ]

    def expire_idle(self, idle_ms: int) -> int:
        """Close the rooms idle for ``idle_ms``; how many."""
        rooms = self.idle(idle_ms)
        for room in rooms:
            room.post(Expire())
        return len(rooms)

    def abandoned(self, idle_ms: int) -> list[Room]:
        """Games no player has been connected to for ``idle_ms`` (they wait for their players meanwhile)."""
        now = self.clock.now()
        return [r for r in self.rooms.values() if r.paused and r.paused_at is not None and now - r.paused_at >= idle_ms]

    def expire_abandoned(self, idle_ms: int) -> int:
        """End the games abandoned for ``idle_ms`` and close their rooms; how many."""
        rooms = self.abandoned(idle_ms)
        for room in rooms:
            room.post(Abandon())
        return len(rooms)

    async def shutdown(self) -> None:
        """Tell every room to say goodbye to its players, and wait for them (a few seconds at most)."""
        if self._recovery is not None:
            self._recovery.cancel()
        rooms = list(self.rooms.values())
        for room in rooms:
            room.post(Shutdown())
        try:
            async with asyncio.timeout(5):
                await asyncio.gather(*(room.flush() for room in rooms))
        except TimeoutError:
            log.warning("some rooms had not saved everything when the server stopped")
        self.rooms.clear()
