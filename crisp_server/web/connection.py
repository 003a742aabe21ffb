"""One WebSocket as a room member: a bounded outbound queue and the relay task that drains it.

A room calls :meth:`Connection.send` from its own task and never waits: the frame is queued, and the
relay task writes it to the socket. A phone that stops reading is dropped when its queue is full (it
resumes with its token and a snapshot) instead of slowing its table down.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Final

from starlette.websockets import WebSocket, WebSocketDisconnect

if TYPE_CHECKING:
    from crisp_server.rooms.room import Room

log = logging.getLogger("crisp.web")

#: The peer reads too slowly: its queue overflowed (RFC 6455 "try again later").
CLOSE_TOO_SLOW: Final = 1013


class Connection:
    """Implements ``crisp_server.rooms.room.Member`` over a Starlette WebSocket."""

    def __init__(
        self, websocket: WebSocket, max_queue: int, client: str, on_send: Callable[[], None] | None = None
    ) -> None:
        self.websocket = websocket
        self._on_send = on_send
        self.client = client
        self.lang = "en"
        self.room: Room | None = None  # set by the room when it admits this connection
        self.target: Room | None = None  # the room this connection last addressed
        self._queue: deque[bytes | tuple[int, str]] = deque()
        self._max = max_queue
        self._wake = asyncio.Event()
        self._closing = False
        self.relay_task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self.relay_task = asyncio.get_running_loop().create_task(self._relay())

    @property
    def closing(self) -> bool:
        return self._closing

    def send(self, data: bytes) -> None:
        if self._closing:
            return
        if len(self._queue) >= self._max:
            log.info("dropping a connection that does not keep up", extra={"client": self.client})
            self._queue.clear()
            self.close(CLOSE_TOO_SLOW, "too slow")
            return
        self._queue.append(data)
        self._wake.set()

    def close(self, code: int, reason: str = "") -> None:
        if self._closing:
            return
        self._closing = True
        self._queue.append((code, reason))
        self._wake.set()

    async def _relay(self) -> None:
        ws = self.websocket
        try:
            while True:
                await self._wake.wait()
                self._wake.clear()
                while self._queue:
                    item = self._queue.popleft()
                    if isinstance(item, tuple):
                        await ws.close(item[0], item[1])
                        return
                    await ws.send_text(item.decode())
                    if self._on_send is not None:
                        self._on_send()
        except (WebSocketDisconnect, RuntimeError, OSError):
            return  # the peer is gone; the receive loop notices and detaches

    async def finish(self, timeout: float = 2.0) -> None:
        """Wait briefly for the queued frames to go out, then stop the relay."""
        task = self.relay_task
        if task is None:
            return
        if not task.done():
            self.close(1000)
            with contextlib.suppress(TimeoutError, asyncio.CancelledError):
                await asyncio.wait_for(asyncio.shield(task), timeout)
        if not task.done():
            task.cancel()
