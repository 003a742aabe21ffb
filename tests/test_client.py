"""The Python client (``crisp_server.remote.client``): the room in the socket's URL, and how it records a room that
moved to another server node (``moved``, close 4005), against a tiny scripted server."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import cast

import orjson
import pytest
from websockets.asyncio.client import ClientConnection
from websockets.asyncio.server import ServerConnection, serve

from crisp_server.remote.client import CLOSE_MOVED, OPEN_TIMEOUT_S, CrispClient, room_url
from tests.frozen import Relay


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
        for room in (None, "k7qmxt"):
            async with CrispClient.connect(url + "?lang=de", room=room) as client:
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


class QueuedSocket:
    """Stands for the client's socket: the frames put in ``frames`` arrive, in order."""

    def __init__(self) -> None:
        self.frames: asyncio.Queue[str] = asyncio.Queue()

    def __aiter__(self) -> QueuedSocket:
        return self

    async def __anext__(self) -> str:
        return await self.frames.get()


@pytest.mark.parametrize("ticks", range(8))
async def test_a_cancelled_receive_ends_cancelled_even_when_a_message_came_at_that_moment(ticks: int) -> None:
    """The bot's stop (its task cancelled) must not be lost when a message arrives in the same instant: on
    Python 3.11 ``asyncio.wait_for`` then returned the message and dropped the cancellation, and the bot
    played on (a CI run hung on it). The message is not lost either: the next ``receive`` hands it out."""
    socket = QueuedSocket()
    client = CrispClient(cast(ClientConnection, socket))
    try:
        receiving = asyncio.create_task(client.receive(5))
        for _ in range(2):
            await asyncio.sleep(0)
        socket.frames.put_nowait('{"type": "pong", "v": 0}')
        for _ in range(ticks):
            await asyncio.sleep(0)
        if receiving.done():  # handed out before the cancel came: nothing to drop
            message = receiving.result()
        else:
            assert receiving.cancel()
            with pytest.raises(asyncio.CancelledError):
                await receiving
            message = await client.receive(1)
        assert message is not None
        assert message["type"] == "pong"
    finally:
        client._reader.cancel()


@pytest.mark.parametrize("ticks", range(8))
async def test_a_cancelled_wait_for_ends_cancelled_even_when_its_condition_came_true_at_that_moment(
    ticks: int,
) -> None:
    socket = QueuedSocket()
    client = CrispClient(cast(ClientConnection, socket))
    try:
        waiting = asyncio.create_task(client.wait_for(lambda c: bool(c.messages), 5, "a message"))
        for _ in range(2):
            await asyncio.sleep(0)
        socket.frames.put_nowait('{"type": "pong", "v": 0}')
        for _ in range(ticks):
            await asyncio.sleep(0)
        if not waiting.done():
            assert waiting.cancel()
            with pytest.raises(asyncio.CancelledError):
                await waiting
    finally:
        client._reader.cancel()


async def hold_open(connecting: contextlib.AbstractAsyncContextManager[CrispClient]) -> None:
    async with connecting:
        pass


async def test_connect_gives_up_a_socket_that_does_not_open_within_its_open_timeout() -> None:
    # A frozen node: the connection is accepted, the handshake never answered. Without a limit of its own the
    # client would wait for websockets' 10 s (or, behind a proxy, the proxy's timeout).
    relay = Relay(None)
    await relay.start()
    try:
        url = f"ws://127.0.0.1:{relay.port}/ws"
        started = time.monotonic()
        with pytest.raises(TimeoutError):
            await hold_open(CrispClient.connect(url, room="K7QMXT"))  # the default
        took = time.monotonic() - started
        assert OPEN_TIMEOUT_S - 0.1 <= took < OPEN_TIMEOUT_S + 2.5, took
        started = time.monotonic()
        with pytest.raises(TimeoutError):
            await hold_open(CrispClient.connect(url, room="K7QMXT", open_timeout=1.0))
        took = time.monotonic() - started
        assert 0.9 <= took < 3.5, took
        assert relay.held == 2
    finally:
        await relay.close()


@pytest.mark.parametrize(
    ("can", "played"),
    [
        (["swap", "discard"], {"type": "discard"}),
        (["discard", "queen"], {"type": "discard"}),
        (["king"], {"type": "king"}),  # a King from the draw pile must be used
        (["swap"], {"type": "swap", "slot": "left"}),  # a card from the discard pile must go into the hand
    ],
)
async def test_play_drawn_plays_the_card_in_hand_the_plainest_legal_way(
    can: list[str], played: dict[str, str], schema_violations: list[str]
) -> None:
    """Only the seat's ``can`` matters here: the scripted frames carry nothing else (not whole messages)."""
    sent: list[object] = []

    async def script(ws: ServerConnection) -> None:
        you = {"seat": 0, "drawn_card": "K", "can": can}
        await ws.send(orjson.dumps({"type": "snapshot", "v": 1, "you": you, "table": {}, "room": {}}).decode())
        sent.append(orjson.loads(await ws.recv()))
        await ws.send(orjson.dumps({"type": "update", "v": 2, "you": you, "table": {}, "events": []}).decode())
        await ws.wait_closed()

    async with scripted(script, []) as url, CrispClient.connect(url) as client:
        await client.wait_for(lambda c: c.state is not None, what="the snapshot")
        answer = await client.play_drawn()
    assert answer["type"] == "update"
    assert sent == [played]
    schema_violations.clear()
