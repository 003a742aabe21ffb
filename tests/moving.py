"""A room that moves to another server node, as the clients see it: :class:`MovingProxy` stands between the
clients and one real server, relays every socket's frames both ways, and on :meth:`MovingProxy.move` does
what a node handing a room over does to that room's sockets: ``moved`` (or nothing) and the close 4005. The
server behind it only sees those connections go; the client that follows the move reconnects, through the
proxy, and resumes there. Every socket is written down (:class:`Leg`: its URL, its first message, how it
ended), for the tests to check that the clients came back at once, at ``/ws?room=CODE``, with ``resume``.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlsplit

import orjson
from websockets.asyncio.client import ClientConnection
from websockets.asyncio.client import connect as ws_connect
from websockets.asyncio.server import ServerConnection, serve
from websockets.exceptions import ConnectionClosed

#: The close of a socket whose room went to another node, and a restarting server's (docs/protocol.md).
CLOSE_MOVED = 4005
CLOSE_RESTARTING = 1012


@dataclass
class Leg:
    """One client socket through the proxy."""

    path: str  # as the client asked for it: "/ws?room=K7QMXT"
    opened: float  # loop time
    entry: dict[str, Any] | None = None  # the first message the client sent
    code: str | None = None  # the room, as the server's welcome on this socket said
    v: int = 0  # the last version the server sent on it
    refused: bool = False  # closed with 4005 before anything was relayed (see ``MovingProxy.refuse``)
    moved: float | None = None  # loop time of the move's close (or the restart's)
    sent: list[str] = field(default_factory=list)  # the type of every message the client sent
    done: asyncio.Event = field(default_factory=asyncio.Event)  # set when the socket has ended
    client: ServerConnection | None = None
    server: ClientConnection | None = None
    relays: list[asyncio.Task[None]] = field(default_factory=list)

    @property
    def room(self) -> str | None:
        """The ``room`` query parameter of its URL, if it had one."""
        values = parse_qs(urlsplit(self.path).query).get("room")
        return values[0] if values else None


class MovingProxy:
    """See the module's doc. ``refuse``: that many of the next sockets are closed with 4005 as soon as they
    open (a node that has not taken the room yet: the client's immediate reconnect fails)."""

    def __init__(self, upstream: str) -> None:
        self.upstream = upstream.rstrip("/")  # ws://127.0.0.1:PORT
        self.legs: list[Leg] = []
        self.refuse = 0

    @contextlib.asynccontextmanager
    async def serving(self) -> AsyncIterator[str]:
        """Listen on a free loopback port; yields the server address clients are given (``http://...``)."""
        async with serve(self._handle, "127.0.0.1", 0, max_size=2**22) as server:
            port = next(iter(server.sockets)).getsockname()[1]
            try:
                yield f"http://127.0.0.1:{port}"
            finally:
                for leg in self.legs:
                    for task in leg.relays:
                        task.cancel()

    def of(self, code: str) -> list[Leg]:
        """The sockets of room ``code`` that are open now."""
        return [leg for leg in self.legs if leg.code == code and not leg.done.is_set() and leg.moved is None]

    async def move(self, code: str, *, announce: bool = True) -> int:
        """Room ``code`` goes to another node: each of its open sockets gets ``moved`` (unless not
        ``announce``: the close alone) and the close 4005; the server sees them go. How many moved."""
        return await self._drop(code, "moved" if announce else None, CLOSE_MOVED, "moved")

    async def restart(self, code: str) -> int:
        """As if room ``code``'s node were restarting: ``restarting`` and the close 1012 on its sockets."""
        return await self._drop(code, "restarting", CLOSE_RESTARTING, "restarting")

    async def _drop(self, code: str, message: str | None, close: int, reason: str) -> int:
        legs = self.of(code)
        now = asyncio.get_running_loop().time()
        for leg in legs:
            leg.moved = now
            for task in leg.relays:
                task.cancel()
        for leg in legs:
            assert leg.client is not None
            assert leg.server is not None
            with contextlib.suppress(ConnectionClosed):
                if message is not None:
                    await leg.client.send(orjson.dumps({"type": message, "v": leg.v}).decode())
                await leg.client.close(close, reason)
            await leg.server.close()
        return len(legs)

    async def _handle(self, client: ServerConnection) -> None:
        assert client.request is not None
        leg = Leg(path=client.request.path, opened=asyncio.get_running_loop().time(), client=client)
        self.legs.append(leg)
        try:
            if self.refuse > 0:
                self.refuse -= 1
                leg.refused = True
                await client.close(CLOSE_MOVED, "moved")
                return
            async with ws_connect(self.upstream + leg.path, max_size=2**22) as server:
                leg.server = server
                leg.relays = [asyncio.create_task(self._up(leg)), asyncio.create_task(self._down(leg))]
                await asyncio.wait(leg.relays, return_when=asyncio.FIRST_COMPLETED)
                if leg.moved is not None:
                    await client.wait_closed()
                    return
                for task in leg.relays:
                    task.cancel()
                # One side closed: close the other the same way.
                if server.close_code is not None and client.close_code is None:
                    code = server.close_code if server.close_code not in (1005, 1006) else 1011
                    await client.close(code, server.close_reason or "")
        finally:
            leg.done.set()

    async def _up(self, leg: Leg) -> None:
        assert leg.client is not None
        assert leg.server is not None
        with contextlib.suppress(ConnectionClosed):
            async for frame in leg.client:
                message = orjson.loads(frame)
                if leg.entry is None:
                    leg.entry = message
                leg.sent.append(str(message.get("type")))
                await leg.server.send(frame)

    async def _down(self, leg: Leg) -> None:
        assert leg.client is not None
        assert leg.server is not None
        with contextlib.suppress(ConnectionClosed):
            async for frame in leg.server:
                message = orjson.loads(frame)
                if isinstance(message.get("v"), int):
                    leg.v = message["v"]
                if message.get("type") == "welcome":
                    leg.code = message["room"]
                await leg.client.send(frame)
