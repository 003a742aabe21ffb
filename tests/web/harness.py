"""A real server on a free loopback port, in the test's event loop, with a clock the test moves."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import uvicorn
from fastapi import FastAPI

from crisp_server.remote.client import CrispClient
from crisp_server.rooms.clock import ManualClock
from crisp_server.serve import SHUTDOWN_SECONDS
from crisp_server.settings import Settings
from crisp_server.web.app import create_app
from crisp_server.web.httpprotocol import CrispHttp
from crisp_server.web.wsprotocol import CrispWebSocket


@dataclass
class Harness:
    app: FastAPI
    clock: ManualClock
    port: int
    stack: contextlib.AsyncExitStack = field(default_factory=contextlib.AsyncExitStack)

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/ws"

    @property
    def http(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def client(self, origin: str | None = None) -> CrispClient:
        """A connected client, closed when the test ends."""
        return await self.stack.enter_async_context(CrispClient.connect(self.url, origin=origin))

    async def advance(self, ms: int) -> None:
        """Move the server's clock; the rooms' timers fire and their messages go out."""
        self.clock.advance(ms)
        await asyncio.sleep(0)

    async def lobby(self, names: Sequence[str]) -> tuple[str, list[CrispClient]]:
        """A room with these players seated (the first is the host)."""
        clients = [await self.client() for _ in names]
        code = await clients[0].create(names[0])
        for c, name in zip(clients[1:], names[1:], strict=True):
            await c.join(code, name)
        n = len(names)
        for c in clients:
            await c.wait_for(lambda c: c.state is not None and len(c.state["room"]["seats"]) == n, what="all seated")
        return code, clients

    async def table(self, names: Sequence[str], **options: Any) -> tuple[str, list[CrispClient]]:
        """A room whose game has started and whose first round is in play."""
        code, clients = await self.lobby(names)
        if options:
            await clients[0].set_options(**options)
        await clients[0].start()
        for c in clients:
            await c.wait_for(lambda c: c.phase == "peek", what="peek")
        for c in clients:
            await c.ready()
        for c in clients:
            await c.wait_for(lambda c: c.phase == "play", what="play")
        return code, clients


@contextlib.asynccontextmanager
async def uvicorn_serving(app: Any, **config: Any) -> AsyncIterator[int]:
    """Serve ``app`` with uvicorn in this event loop on a free loopback port (yielded), with the WebSocket
    protocol the real server uses and no compression, as ``crisp_server.serve`` sets it up (so frames take
    the direct path), and its graceful shutdown's limit: without it, a connection that has not ended when the
    test is over held the shutdown, and the test run, for ever (a CI run waited 15 minutes); ``config`` adds
    or overrides uvicorn options."""
    options: dict[str, Any] = {
        "http": CrispHttp,
        "ws": CrispWebSocket,
        "ws_per_message_deflate": False,
        "log_level": "warning",
        "timeout_graceful_shutdown": SHUTDOWN_SECONDS,
    }
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, **{**options, **config}))
    task = asyncio.get_running_loop().create_task(server.serve())
    while not server.started:
        if task.done():
            task.result()
        await asyncio.sleep(0.01)
    try:
        yield server.servers[0].sockets[0].getsockname()[1]
    finally:
        server.should_exit = True
        await task


@contextlib.asynccontextmanager
async def running_server(
    *, persist: bool = False, ping_interval: float = 20.0, **settings: Any
) -> AsyncIterator[Harness]:
    """A server on a free port, with the WebSocket protocol the real one uses. Without ``persist`` it keeps
    no database (the protocol tests do not need one); with it, pass ``database_url`` or ``data_dir``."""
    clock = ManualClock()
    app = create_app(Settings(**settings), clock, persist=persist)
    async with uvicorn_serving(app, ws_ping_interval=ping_interval, lifespan="on", ws_max_size=65536) as port:
        harness = Harness(app, clock, port)
        async with harness.stack:
            yield harness
