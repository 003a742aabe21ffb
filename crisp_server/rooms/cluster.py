"""This process as one node of a cluster (``CRISP_CLUSTER``): the rooms it runs are the ones it holds a lease
on (``store/leases.py``); it claims a room when a connection for it arrives, asks the owner to let go when
another live node has it, renews its leases, hands rooms over when asked or when it drains, and stops a room
at once when its lease is lost.

The routing is HAProxy's (``deploy/haproxy.cfg``): every socket of a room names it (``/ws?room=CODE``) and
lands on one node by a consistent hash, so the traffic inside a room needs no message bus. What moves
between nodes is the room's record: the new owner rebuilds it from the database, as after a restart.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any, Final, Protocol

from crisp_server import tasks
from crisp_server.settings import Settings
from crisp_server.store.leases import Leases, Listener
from crisp_server.store.reads import StoredRoom
from crisp_server.store.store import Store

from .messages import MoveAway
from .tokens import new_room_code

if TYPE_CHECKING:
    from .room import Room

log = logging.getLogger("crisp.cluster")

#: A draining node says 503 this long before it hands rooms over: the load balancer's health checks (every
#: second) stop sending it new sockets first, so that players sent away do not come back to it.
DRAIN_NOTICE_SECONDS: Final = 2.0
#: Rooms handed over at once while draining (the receiving nodes rebuild them while their players
#: reconnect: all at once, each room would wait for the slowest), and how long one may take.
DRAIN_AT_ONCE: Final = 8
DRAIN_ROOM_SECONDS: Final = 2.0
#: While another node still holds a room: claims are tried this often, and the owner asked again this often.
CLAIM_EVERY_SECONDS: Final = 0.05
ASK_EVERY_SECONDS: Final = 1.0
#: A lease is trusted until this much before it would run out, counted from the start of the claim or
#: renewal that set it (at most: a quarter of the lease): the database's clock and this process's may run
#: at slightly different rates, and a frame sent just before the end still has to reach its socket.
TRUST_MARGIN_SECONDS: Final = 1.0


class Busy(Exception):
    """The room's owner did not let it go in time (a node stopped, not yet expired): try again later."""


class Draining(Exception):
    """This node is draining: it takes no room; the player is sent to reconnect (to another node)."""


class Rooms(Protocol):
    """What the cluster needs of this node's rooms (``Registry`` is this; it imports the cluster, not the
    other way round): the open rooms by code, a new one, a stored one rebuilt, and where it hooks in."""

    rooms: dict[str, Room]
    cluster: Cluster | None

    def create(
        self, base_url: str, *, code: str | None = None, lease: int | None = None, lease_until: float = 0.0
    ) -> Room: ...

    def restore_one(self, stored: StoredRoom, lease: int, lease_until: float) -> Room: ...

    def get(self, code: str) -> Room | None: ...


class Cluster:
    """One per process in cluster mode: the registry's rooms are the leases this node holds."""

    def __init__(self, registry: Rooms, store: Store, settings: Settings) -> None:
        self.registry = registry
        self.store = store
        self.settings = settings
        self.node = settings.node_name()
        self.leases = Leases(store.engine, self.node, settings.lease_seconds)
        #: How long after the start of a successful claim or renewal a room's lease is trusted (``Room.lease_until``).
        self.trust_seconds = settings.lease_seconds - min(TRUST_MARGIN_SECONDS, settings.lease_seconds / 4)
        store.leases = self.leases  # every group commit checks its rooms' leases
        self.listener = Listener(store.url, self.node, self._asked)
        self.draining = False
        self._acquiring: dict[str, asyncio.Task[Room | None]] = {}
        self._tasks: set[asyncio.Task[Any]] = set()
        self._renewer: asyncio.Task[None] | None = None
        #: Counters for /metrics: rooms claimed, handed over, lost, and claims that waited for a live owner.
        self.claimed = 0
        self.handed_over = 0
        self.lost = 0
        registry.cluster = self

    # -- start and stop --------------------------------------------------------------------------------

    async def start(self) -> None:
        # The leases this node's name holds are from its previous life (a crash): nothing of them is in
        # memory now; their rooms are rebuilt wherever their players come back.
        await self.leases.release_all()
        self.listener.start()
        self._renewer = asyncio.get_running_loop().create_task(self._renew_loop(), name="lease renewal")

    async def stop(self) -> None:
        """After the registry's shutdown: let go of every lease at once (other nodes need not wait for them
        to expire)."""
        if self._renewer is not None:
            await tasks.stop(self._renewer)
        await self.listener.stop()
        if self._tasks:
            await asyncio.wait(list(self._tasks), timeout=5)
        try:
            await self.leases.release_all()
        except Exception as exc:
            log.warning("could not release this node's leases (%s); they expire by themselves", exc)

    def _spawn(self, coro: Coroutine[Any, Any, Any]) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # -- rooms coming here -------------------------------------------------------------------------------

    async def create(self, base_url: str) -> Room:
        """A new room with a code no open room has, and its lease."""
        if self.draining:
            raise Draining
        for _ in range(20):
            code = new_room_code()
            if code in self.registry.rooms or code in self._acquiring:
                continue
            if await self.store.open_room_id(code) is not None:
                continue  # an open room of another node, or one waiting for its players to come back
            started = time.monotonic()
            epoch = await self.leases.claim(code)
            if epoch is None:
                continue  # another node is making a room with this code right now
            return self.registry.create(base_url, code=code, lease=epoch, lease_until=started + self.trust_seconds)
        raise Busy

    async def acquire(self, code: str) -> Room | None:
        """The room with ``code``, run here: already, or claimed and rebuilt from the database (asking its
        owner to let go first). ``None``: no open room has that code. Raises ``Busy`` or ``Draining``."""
        room = self.registry.get(code)
        if room is not None:
            return room
        if self.draining:
            raise Draining
        task = self._acquiring.get(code)
        if task is None:
            task = asyncio.get_running_loop().create_task(self._acquire(code), name=f"acquire {code}")
            self._acquiring[code] = task
            task.add_done_callback(lambda _: self._acquiring.pop(code, None))
        return await asyncio.shield(task)

    async def _acquire(self, code: str) -> Room | None:
        if await self.store.open_room_id(code) is None:
            return None
        # A dead owner's lease runs out by itself; a live owner lets go within a commit.
        deadline = time.monotonic() + self.settings.lease_seconds + 2 * self.settings.lease_renew_seconds + 3
        asked_at = -ASK_EVERY_SECONDS
        while True:
            if self.draining:
                raise Draining
            started = time.monotonic()
            epoch = await self.leases.claim(code)
            if epoch is not None:
                return await self._rebuild(code, epoch, started + self.trust_seconds)
            now = time.monotonic()
            if now > deadline:
                raise Busy
            owner = await self.leases.owner(code)
            if owner is not None and owner.node and owner.node != self.node and now - asked_at >= ASK_EVERY_SECONDS:
                asked_at = now
                await self.leases.ask_release(owner.node, code)
            if owner is not None and owner.live and owner.remaining > 0.5 and now - asked_at > 0.5:
                # Asked and not let go: a stopped or dead owner. Its lease runs out in ``remaining``.
                await asyncio.sleep(min(owner.remaining - 0.4, 0.5))
            else:
                await asyncio.sleep(CLAIM_EVERY_SECONDS)

    async def _rebuild(self, code: str, epoch: int, lease_until: float) -> Room | None:
        try:
            room_id = await self.store.open_room_id(code)
            stored = await self.store.load_room(room_id) if room_id is not None else None
        except Exception:
            self._spawn(self.leases.release(code, epoch))
            raise
        if stored is None:  # closed meanwhile
            await self.leases.release(code, epoch)
            return None
        if self.registry.get(code) is not None:  # cannot happen: one acquisition per code at a time
            return self.registry.get(code)
        room = self.registry.restore_one(stored, epoch, lease_until)
        await room.flush()
        self.claimed += 1
        log.info("room claimed", extra={"room": code})
        return None if room.closed else room

    # -- rooms going away ----------------------------------------------------------------------------

    def closed(self, room: Room) -> None:
        """The room stopped here (closed, or handed over): release its lease after its last commit. A room
        that was lost is not ours to release."""
        if room.lost:
            self.lost += 1
            return
        if room.lease is not None:
            self._spawn(self._release(room, room.lease))

    async def _release(self, room: Room, epoch: int) -> None:
        await room.flush()
        try:
            await self.leases.release(room.code, epoch)
        except Exception as exc:
            log.warning("room %s: its lease could not be released (%s); it expires by itself", room.code, exc)

    def _asked(self, code: str) -> None:
        """Another node needs the room: hand it over (nothing to do if it is not here)."""
        room = self.registry.get(code)
        if room is not None and not room.closed:
            self.handed_over += 1
            log.info("room handed over on request", extra={"room": code})
            room.post(MoveAway())
        elif room is None and code not in self._acquiring:
            self._spawn(self.leases.release(code))  # a lease of ours with no room in memory: let it go

    async def _renew_loop(self) -> None:
        while True:
            await asyncio.sleep(self.settings.lease_renew_seconds)
            rooms = {code: room for code, room in self.registry.rooms.items() if room.lease is not None}
            if not rooms:
                continue
            # Counted from before the statement: the database set the new expiry at some instant after this.
            # A renewal that was under way when the process froze thus renews no trust once it wakes.
            started = time.monotonic()
            try:
                held = await self.leases.renew(list(rooms))
            except Exception as exc:
                log.warning("leases could not be renewed (%s); commits stay fenced", exc)
                continue
            until = started + self.trust_seconds
            for code, room in rooms.items():
                if held.get(code) == room.lease:
                    room.lease_until = max(room.lease_until, until)
                elif not room.closed and self.registry.rooms.get(code) is room:
                    room.lose()

    async def sweep_abandoned(self) -> int:
        """Retention in a cluster: games no node holds whose players have been gone for
        ``idle_game_hours`` are claimed here and end abandoned, as a restart ends them on one node alone
        (``Registry.restore_one``). How many rooms were taken for it."""
        if self.draining:
            return 0
        codes = await self.leases.unowned_games(self.settings.idle_game_hours * 3600)
        for code in codes:
            try:
                await self.acquire(code)
            except (Busy, Draining):
                continue
        return len(codes)

    # -- draining ----------------------------------------------------------------------------------------

    async def drain(self) -> None:
        """SIGTERM: ``/healthz`` says 503 at once; after ``DRAIN_NOTICE_SECONDS`` the rooms are handed over
        a few at a time (each one's players reconnect and reach another node), until none is left or
        ``drain_seconds`` have passed."""
        self.draining = True
        log.info("draining: handing %d room(s) over", len(self.registry.rooms))
        deadline = time.monotonic() + self.settings.drain_seconds
        await asyncio.sleep(min(DRAIN_NOTICE_SECONDS, self.settings.drain_seconds))
        pending = list(self.registry.rooms.values())
        moving: dict[str, float] = {}
        while (pending or moving) and time.monotonic() < deadline:
            while pending and len(moving) < DRAIN_AT_ONCE:
                room = pending.pop()
                if room.closed:
                    continue
                awaited = room.people_here()
                self.handed_over += 1
                room.post(MoveAway())
                if awaited:  # someone will reconnect: the next room goes once another node has this one
                    moving[room.code] = time.monotonic()
            await asyncio.sleep(CLAIM_EVERY_SECONDS)
            if moving:
                try:
                    owners = await self.leases.owners_of(list(moving))
                except Exception:
                    owners = {}
                now = time.monotonic()
                for code, since in list(moving.items()):
                    node = owners.get(code)
                    if (node is not None and node != self.node) or now - since > DRAIN_ROOM_SECONDS:
                        del moving[code]
        if self._tasks:
            await asyncio.wait(list(self._tasks), timeout=5)
        log.info("drained", extra={"rooms": len(self.registry.rooms)})
