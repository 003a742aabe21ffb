"""The short path for text frames: what a standard client receives is exactly what was sent, for every
length class of the frame header, around pings, under flow control and at close."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import pytest
import uvicorn
from websockets.asyncio.client import connect
from websockets.frames import Frame, Opcode

from crisp_server.web import wsproto
from crisp_server.web.wsproto import FastTextProtocol, text_frame_header

TEXTS = ["", "é", "x" * 125, "y" * 126, "z" * 65535, "ü" * 40000, "w" * 70000]


@pytest.mark.parametrize("length", [0, 1, 125, 126, 65535, 65536, 1 << 20])
def test_headers_follow_rfc_6455(length: int) -> None:
    header = text_frame_header(length)
    # websockets' own serialisation of the same unmasked text frame starts with the same header.
    expected = Frame(Opcode.TEXT, b"a" * length).serialize(mask=False, extensions=[])[: len(header)]
    assert header == expected


async def echo_app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """Sends TEXTS, then echoes each text it gets back twice (once per path: text, then bytes)."""
    assert scope["type"] == "websocket"
    assert (await receive())["type"] == "websocket.connect"
    await send({"type": "websocket.accept"})
    for text in TEXTS:
        await send({"type": "websocket.send", "text": text})
    while True:
        message = await receive()
        if message["type"] == "websocket.disconnect":
            return
        if message.get("text") == "close":
            await send({"type": "websocket.close", "code": 4001, "reason": "asked"})
            return
        await send({"type": "websocket.send", "text": message["text"]})
        await send({"type": "websocket.send", "bytes": message["text"].encode()})


@contextlib.asynccontextmanager
async def server() -> AsyncIterator[str]:
    config = uvicorn.Config(echo_app, host="127.0.0.1", port=0, ws=FastTextProtocol, log_level="warning")
    srv = uvicorn.Server(config)
    task = asyncio.create_task(srv.serve())
    while not srv.started:
        await asyncio.sleep(0.01)
    port = srv.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"ws://127.0.0.1:{port}/"
    finally:
        srv.should_exit = True
        await task


async def test_a_standard_client_reads_every_frame_exactly(monkeypatch: pytest.MonkeyPatch) -> None:
    headers: list[int] = []

    def counted(length: int) -> bytes:
        headers.append(length)
        return text_frame_header(length)

    monkeypatch.setattr(wsproto, "text_frame_header", counted)
    async with server() as url, connect(url, max_size=None, compression=None) as ws:
        for text in TEXTS:
            assert await ws.recv() == text
        await ws.ping()
        await ws.send("après")
        assert await ws.recv() == "après"
        assert await ws.recv() == "après".encode()  # a binary frame: the generic path, in order
        await ws.send("close")
        with contextlib.suppress(Exception):
            await ws.recv()
        assert ws.close_code == 4001
        assert ws.close_reason == "asked"
    # The text frames took the short path; the binary one and the close did not.
    assert headers == [len(t.encode()) for t in TEXTS] + [len("après".encode())]


async def test_a_client_that_reads_late_gets_everything_in_order() -> None:
    # The server writes far more than the socket buffers hold: flow control pauses the sends.
    async with server() as url, connect(url, max_size=None, compression=None, max_queue=1) as ws:
        await asyncio.sleep(0.5)
        for text in TEXTS:
            assert await ws.recv() == text
        big = "q" * 200_000
        for k in range(20):
            await ws.send(f"{k}:{big}")
        for k in range(20):
            assert await ws.recv() == f"{k}:{big}"
            assert await ws.recv() == f"{k}:{big}".encode()
