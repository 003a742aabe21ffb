"""All the rooms of this process, by code."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from crisp_server.settings import Settings
from crisp_server.store.store import Store, StoredRoom

from .clock import Clock
from .room import Abandon, Expire, Phase, Room, Shutdown
from .tokens import new_room_code

log = logging.getLogger("crisp.rooms")


class Registry:
    def __init__(self, settings: Settings, clock: Clock, store: Store | None = None) -> None:
        self.settings = settings
        self.clock = clock
        self.store = store
        self.rooms: dict[str, Room] = {}
        #: Given to every room: called with each accepted action's latency in seconds (metrics).
        self.observe_action: Callable[[float], None] | None = None

    def create(self, base_url: str) -> Room:
        """A new empty room with a fresh code."""
        code = new_room_code()
        while code in self.rooms:
            code = new_room_code()
        room = Room(code, f"{base_url}/r/{code}", self.settings, self.clock, self._closed, store=self.store)
        room.observe_action = self.observe_action
        self.rooms[code] = room
        log.info("room created", extra={"room": code})
        return room

    async def restore(self, stored: list[StoredRoom]) -> None:
        """Bring back the rooms the database has (after a restart or a crash), and save what that changed."""
        restored: list[Room] = []
        for item in stored:
            if item.code in self.rooms:
                continue
            room = Room.restore(item, self.settings, self.clock, self.store, self._closed)
            room.observe_action = self.observe_action
            self.rooms[room.code] = room
            restored.append(room)
        # Each room's new version reserve is saved before anyone hears from it; all in a few group commits
        # (one room after the other, 2,000 rooms would wait for 2,000 commits).
        await asyncio.gather(*(room.flush() for room in restored))
        if stored:
            log.info("rooms restored", extra={"rooms": len(stored)})
        # Games whose players had been gone long enough before the restart end now.
        self.expire_abandoned(int(self.settings.idle_game_hours * 3_600_000))

    def get(self, code: str) -> Room | None:
        return self.rooms.get(code)

    def _closed(self, room: Room) -> None:
        if self.rooms.get(room.code) is room:
            del self.rooms[room.code]
            log.info("room closed", extra={"room": room.code})

    def idle(self, idle_ms: int) -> list[Room]:
        """Rooms nobody is connected to and nothing happened in for ``idle_ms``, in the lobby or after a game."""
        now = self.clock.now()
        return [
            r
            for r in self.rooms.values()
            if not r.members and now - r.touched >= idle_ms and r.phase in (Phase.LOBBY, Phase.GAME_OVER)
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
        rooms = list(self.rooms.values())
        for room in rooms:
            room.post(Shutdown())
        try:
            await asyncio.wait_for(asyncio.gather(*(room.flush() for room in rooms)), 5)
        except TimeoutError:
            log.warning("some rooms had not saved everything when the server stopped")
        self.rooms.clear()
