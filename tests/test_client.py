"""The Python client (``crisp_server.client``): the room in the socket's URL, and how it records a room that
moved to another server node (``moved``, close 4005), against a tiny scripted server."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable

import orjson
import pytest
from websockets.asyncio.server import ServerConnection, serve

from crisp_server.client import CLOSE_MOVED, CrispClient, room_url


def test_the_room_goes_into_the_url_as_the_server_reads_the_code() -> None:
    assert room_url("ws://127.0.0.1:8000/ws", "K7QMXT") == "ws://127.0.0.1:8000/ws?room=K7QMXT"
    assert room_url("wss://crisp.example.org/ws", " k7qmxt ") == "wss://crisp.example.org/ws?room=K7QMXT"
    # Other parameters are kept, in their order; a room already there is replaced, not repeated.
    assert room_url("ws://h/ws?a=1&b=&room=AAAAAA&c=x+y", "K7QMXT") == "ws://h/ws?a=1&b=&c=x+y&room=K7QMXT"
    # Whatever a code holds is encoded (a typo must not break the URL).
    assert room_url("ws://h/ws", "a&b c") == "ws://h/ws?room=A%26B+C"


Script = Callable[[ServerConnection], Awaitable[None]]


@contextlib.asynccontextmanager
async def scripted(script: Script, paths: list[str]) -> AsyncIterator[str]:
    """A server on a free loopback port that notes each socket's path and runs ``script`` on it."""

    async def handle(ws: ServerConnection) -> None:
        assert ws.request is not None
        paths.append(ws.request.path)
        await script(ws)

    async with serve(handle, "127.0.0.1", 0) as server:
        port = next(iter(server.sockets)).getsockname()[1]
        yield f"ws://127.0.0.1:{port}/ws"


async def say_and_close(ws: ServerConnection, frames: list[str], code: int, reason: str) -> None:
    await ws.recv()  # the client's first message
    for frame in frames:
        await ws.send(frame)
    await ws.close(code, reason)


async def test_connect_puts_the_room_in_the_url_and_keeps_the_query() -> None:
    paths: list[str] = []

    async def pong(ws: ServerConnection) -> None:
        await say_and_close(ws, ['{"type": "pong", "v": 0}'], 1000, "")

    async with scripted(pong, paths) as url:
        for kwargs in ({}, {"room": "k7qmxt"}):
            async with CrispClient.connect(url + "?lang=de", **kwargs) as client:
                await client.send({"type": "ping"})
                await client.next_message("pong")
    assert paths == ["/ws?lang=de", "/ws?lang=de&room=K7QMXT"]


@pytest.mark.parametrize(
    ("frames", "code", "moved"),
    [
        (['{"type": "moved", "v": 7}'], CLOSE_MOVED, True),
        ([], CLOSE_MOVED, True),  # the close alone
        (['{"type": "moved", "v": 7}'], 1011, True),  # told: whatever the close says after it
        (['{"type": "restarting", "v": 7}'], 1012, False),
        ([], 1000, False),
    ],
)
async def test_a_move_is_recorded_like_any_close(frames: list[str], code: int, moved: bool) -> None:
    async def script(ws: ServerConnection) -> None:
        await say_and_close(ws, frames, code, "moved" if code == CLOSE_MOVED else "")

    async with scripted(script, []) as url, CrispClient.connect(url, room="K7QMXT") as client:
        assert not client.moved
        assert client.close_code is None
        await client.send({"type": "ping"})
        await client.wait_for(lambda c: c.closed is not None, what="the close")
    assert client.close_code == code
    assert client.moved is moved
    assert client.messages == [orjson.loads(f) for f in frames]
