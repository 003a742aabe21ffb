"""The server's WebSocket protocol writes text frames straight to the socket: every length class of the
frame header, the order kept across flow control, and uvicorn's path wherever the direct one may not go."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import orjson
import pytest
from websockets.asyncio.client import connect

from crisp_server.web.connection import Connection
from crisp_server.web.wsprotocol import CrispWebSocket, text_frame_header

from .harness import uvicorn_serving

Script = Callable[[Connection, CrispWebSocket], Awaitable[None]]


@pytest.mark.parametrize(
    ("length", "header"),
    [
        (0, b"\x81\x00"),
        (125, b"\x81\x7d"),
        (126, b"\x81\x7e\x00\x7e"),
        (65535, b"\x81\x7e\xff\xff"),
        (65536, b"\x81\x7f\x00\x00\x00\x00\x00\x01\x00\x00"),
    ],
)
def test_the_frame_header_of_each_length_class(length: int, header: bytes) -> None:
    assert text_frame_header(length) == header


@contextlib.asynccontextmanager
async def serving(script: Script, **config: Any) -> AsyncIterator[str]:
    """A server whose one WebSocket runs ``script`` with a Connection over the protocol under test."""

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while (await receive())["type"] != "lifespan.shutdown":
                await send({"type": "lifespan.startup.complete"})
            await send({"type": "lifespan.shutdown.complete"})
            return
        await receive()  # websocket.connect
        await send({"type": "websocket.accept"})
        conn = Connection(send, 64, "test")
        conn.start()
        await script(conn, send.__self__)
        await conn.finish()

    async with uvicorn_serving(app, **config) as port:
        yield f"ws://127.0.0.1:{port}/"


async def received(url: str, **options: Any) -> list[Any]:
    async with connect(url, max_size=2**20, **options) as ws:
        return [orjson.loads(m) async for m in ws]


async def test_frames_of_every_length_class_arrive_whole_and_in_order(monkeypatch: pytest.MonkeyPatch) -> None:
    direct: list[int] = []
    real = CrispWebSocket.send_text_now

    def counted(self: CrispWebSocket, data: bytes) -> bool:
        sent = real(self, data)
        direct.append(sent)
        return sent

    monkeypatch.setattr(CrispWebSocket, "send_text_now", counted)
    # Lengths of the encoded frame around each header boundary; "é" is two bytes of UTF-8.
    texts = ["é" * 3 + "x" * (n - 8) for n in (8, 125, 126, 127, 65535, 65536, 70000)]

    async def script(conn: Connection, _: CrispWebSocket) -> None:
        for text in texts:
            conn.send(orjson.dumps(text))

    async with serving(script) as url:
        assert await received(url) == texts
    assert direct == [True] * len(texts)


async def test_while_the_socket_is_full_frames_wait_in_order_and_then_go_straight_again() -> None:
    async def script(conn: Connection, protocol: CrispWebSocket) -> None:
        protocol.pause_writing()  # what asyncio does when the socket's buffer is full
        conn.send(b'"one"')
        conn.send(b'"two"')
        assert protocol.send_text_now(b'"never"') is False
        await asyncio.sleep(0.05)
        protocol.resume_writing()
        for _ in range(20):
            await asyncio.sleep(0)
        conn.send(b'"three"')

    async with serving(script) as url:
        assert await received(url) == ["one", "two", "three"]


async def test_with_compression_agreed_frames_go_through_uvicorn() -> None:
    direct: list[bool] = []

    async def script(conn: Connection, protocol: CrispWebSocket) -> None:
        direct.append(protocol.send_text_now(b'"straight"'))
        conn.send(orjson.dumps("x" * 1000))

    async with serving(script, ws_per_message_deflate=True) as url:
        assert await received(url, compression="deflate") == ["x" * 1000]
    assert direct == [False]
