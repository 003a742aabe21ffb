"""All the rooms of this process, by code."""

from __future__ import annotations

import asyncio
import logging

from crisp_server.settings import Settings

from .clock import Clock
from .room import Room, Shutdown
from .tokens import new_room_code

log = logging.getLogger("crisp.rooms")


class Registry:
    def __init__(self, settings: Settings, clock: Clock) -> None:
        self.settings = settings
        self.clock = clock
        self.rooms: dict[str, Room] = {}

    def create(self, base_url: str) -> Room:
        """A new empty room with a fresh code; its task runs on the current loop."""
        code = new_room_code()
        while code in self.rooms:
            code = new_room_code()
        room = Room(code, f"{base_url}/r/{code}", self.settings, self.clock, on_close=self._closed)
        self.rooms[code] = room
        room.start()
        log.info("room created", extra={"room": code})
        return room

    def get(self, code: str) -> Room | None:
        return self.rooms.get(code)

    def _closed(self, room: Room) -> None:
        if self.rooms.get(room.code) is room:
            del self.rooms[room.code]
            log.info("room closed", extra={"room": room.code})

    async def shutdown(self) -> None:
        """Tell every room to say goodbye to its players, and wait for them (a few seconds at most)."""
        rooms = list(self.rooms.values())
        for room in rooms:
            room.post(Shutdown())
        tasks = [r.task for r in rooms if r.task is not None]
        if tasks:
            _, pending = await asyncio.wait(tasks, timeout=5)
            for task in pending:
                task.cancel()
        self.rooms.clear()
