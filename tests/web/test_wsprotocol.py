"""The server's WebSocket protocol writes text frames straight to the socket: every length class of the
frame header, the order kept across flow control, and uvicorn's path wherever the direct one may not go."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import itertools
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import orjson
import pytest
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
from websockets.asyncio.client import connect

from crisp_server.web.connection import Connection
from crisp_server.web.frames import text_frame_header
from crisp_server.web.handshake import plain_handshake_key
from crisp_server.web.httpprotocol import CrispHttp
from crisp_server.web.wsprotocol import CrispWebSocket

from .deaf import client_frame, upgrade_request
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


def one_socket_app(script: Callable[[Connection, CrispWebSocket, Any], Awaitable[None]]) -> Any:
    """An ASGI app whose each WebSocket is accepted and runs ``script`` with a Connection over the protocol
    under test, the protocol and the ASGI ``receive``."""

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while (await receive())["type"] != "lifespan.shutdown":
                await send({"type": "lifespan.startup.complete"})
            await send({"type": "lifespan.shutdown.complete"})
            return
        await receive()  # websocket.connect
        await send({"type": "websocket.accept"})
        conn = Connection(send, 64, "test")
        await script(conn, send.__self__, receive)
        await conn.finish()

    return app


@contextlib.asynccontextmanager
async def serving(script: Script, **config: Any) -> AsyncIterator[str]:
    """A server whose one WebSocket runs ``script`` with a Connection over the protocol under test."""

    async def run(conn: Connection, protocol: CrispWebSocket, _receive: Any) -> None:
        await script(conn, protocol)

    async with uvicorn_serving(one_socket_app(run), **config) as port:
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


# -- frames in: cut from the stream here and handed to the reader at once -----------------------------------


class Raw:
    """A WebSocket client on a bare TCP stream: the test writes bytes cut wherever it likes."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer

    @classmethod
    async def connect(cls, port: int) -> Raw:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(upgrade_request(port, "/"))
        response = await reader.readuntil(b"\r\n\r\n")
        assert response.startswith(b"HTTP/1.1 101"), response
        return cls(reader, writer)

    async def send_in_pieces(self, data: bytes, sizes: list[int]) -> None:
        pos = 0
        for i in itertools.count():
            if pos >= len(data):
                return
            size = sizes[i % len(sizes)]
            self.writer.write(data[pos : pos + size])
            await self.writer.drain()
            if pos < 2048:
                await asyncio.sleep(0.001)  # one read each on the server (then as the kernel groups them)
            pos += size

    async def frame(self) -> tuple[int, bytes]:
        """The next frame from the server (unmasked): its opcode and payload."""
        first, second = await self.reader.readexactly(2)
        n = second & 0x7F
        if n == 126:
            n = int.from_bytes(await self.reader.readexactly(2), "big")
        elif n == 127:
            n = int.from_bytes(await self.reader.readexactly(8), "big")
        return first & 0x0F, await self.reader.readexactly(n)

    async def close(self) -> None:
        self.writer.close()
        with contextlib.suppress(OSError):
            await self.writer.wait_closed()


@contextlib.asynccontextmanager
async def reading(**config: Any) -> AsyncIterator[tuple[int, list[tuple[str, Any]]]]:
    """A server whose one WebSocket reads text frames directly, echoing each as a text frame, and notes how
    everything reached the app: ("direct", text) or ("receive", ASGI message)."""
    seen: list[tuple[str, Any]] = []

    async def echo(conn: Connection, protocol: CrispWebSocket, receive: Any) -> None:
        def read(text: str) -> None:
            seen.append(("direct", text))
            conn.send(text.encode())

        while True:
            protocol.read_directly(read)
            message = await receive()
            seen.append(("receive", message))
            if message["type"] == "websocket.disconnect":
                break
            if message.get("text") is not None:
                conn.send(message["text"].encode())

    async with uvicorn_serving(one_socket_app(echo), **config) as port:
        yield port, seen


TEXTS = ["", "a", "é" * 62, "x" * 125, "y" * 126, "z" * 1000, "w" * 65535]


@pytest.mark.parametrize("sizes", [[1], [2, 3], [7], [125, 1], [4096], [1 << 20]], ids=str)
async def test_text_frames_cut_anywhere_arrive_whole_in_order_and_straight_to_the_reader(sizes: list[int]) -> None:
    stream = b"".join(client_frame(0x1, t.encode()) for t in TEXTS[:3])
    stream += client_frame(0x9, b"are you there")  # a ping among them: websockets answers it
    stream += b"".join(client_frame(0x1, t.encode()) for t in TEXTS[3:])
    async with reading() as (port, seen):
        raw = await Raw.connect(port)
        await raw.send_in_pieces(stream, sizes)
        frames = [await raw.frame() for _ in range(len(TEXTS) + 1)]
        await raw.close()
    assert (0xA, b"are you there") in frames  # the pong
    assert [payload.decode() for op, payload in frames if op == 0x1] == TEXTS
    assert seen[: len(TEXTS)] == [("direct", t) for t in TEXTS]


async def test_frames_that_are_not_plain_text_go_through_websockets_and_keep_their_place() -> None:
    stream = (
        client_frame(0x1, b"one")
        + client_frame(0x1, b"tw", fin=False)  # a fragmented message
        + client_frame(0x0, b"o")
        + client_frame(0x1, b"three")
        + client_frame(0x2, b"\x00\x01")  # binary
        + client_frame(0x1, b"four")
        + client_frame(0x1, b"v" * 70000)  # a 64-bit length: websockets reads on from here
        + client_frame(0x1, b"five")
    )
    async with reading(ws_max_size=1 << 20) as (port, seen):
        raw = await Raw.connect(port)
        await raw.send_in_pieces(stream, [1000])
        texts = [(await raw.frame())[1].decode() for _ in range(6)]
        await raw.close()
    assert texts == ["one", "two", "three", "four", "v" * 70000, "five"]
    assert seen[:3] == [("direct", "one"), ("direct", "two"), ("direct", "three")]
    # The binary frame waits in the queue for the app, and so what follows it until the app has read it.
    assert seen[3] == ("receive", {"type": "websocket.receive", "bytes": b"\x00\x01"})
    assert [m if how == "direct" else m["text"] for how, m in seen[4:7]] == ["four", "v" * 70000, "five"]


async def test_text_that_is_not_utf8_closes_with_1007() -> None:
    async with reading() as (port, seen):
        raw = await Raw.connect(port)
        await raw.send_in_pieces(client_frame(0x1, b"ok") + client_frame(0x1, b"\xff\xfe"), [1 << 20])
        assert await raw.frame() == (0x1, b"ok")
        opcode, payload = await raw.frame()
        await raw.close()
    assert opcode == 0x8
    assert int.from_bytes(payload[:2], "big") == 1007
    assert seen[0] == ("direct", "ok")


async def test_an_unmasked_client_frame_is_a_protocol_error() -> None:
    async with reading() as (port, seen):
        raw = await Raw.connect(port)
        await raw.send_in_pieces(bytes((0x81, 2)) + b"hi", [1 << 20])
        opcode, payload = await raw.frame()
        await raw.close()
    assert opcode == 0x8
    assert int.from_bytes(payload[:2], "big") == 1002
    assert all(how != "direct" for how, _ in seen)


async def test_a_close_frame_ends_the_connection_and_nothing_after_it_is_read() -> None:
    async with reading() as (port, seen):
        raw = await Raw.connect(port)
        stream = client_frame(0x1, b"last") + client_frame(0x8, (1000).to_bytes(2, "big")) + client_frame(0x1, b"x")
        await raw.send_in_pieces(stream, [1 << 20])
        assert await raw.frame() == (0x1, b"last")
        opcode, payload = await raw.frame()
        await raw.close()
    assert (opcode, int.from_bytes(payload[:2], "big")) == (0x8, 1000)
    assert [m for how, m in seen if how == "direct"] == ["last"]
    assert seen[-1][1]["type"] == "websocket.disconnect"


async def test_bytes_trickling_into_a_frame_that_never_ends_do_not_keep_the_connection_alive() -> None:
    """Only whole frames count as signs of life: the peer is pinged, cannot answer before its frame ends,
    and is closed after the ping's timeout (a slow-loris client would otherwise hold its socket for ever)."""
    async with reading(ws_ping_interval=0.3, ws_ping_timeout=0.3) as (port, seen):
        raw = await Raw.connect(port)
        frame = client_frame(0x1, b"x" * 1000)
        started = asyncio.get_running_loop().time()
        closed = False
        for i in range(40):  # 1 byte every 0.05 s: 2 s, far from the frame's end
            try:
                raw.writer.write(frame[i : i + 1])
                await raw.writer.drain()
            except OSError:
                closed = True
                break
            with contextlib.suppress(TimeoutError):
                if await asyncio.wait_for(raw.reader.read(1 << 16), 0.05) == b"":
                    closed = True
                    break
        took = asyncio.get_running_loop().time() - started
        await raw.close()
    assert closed, "the server kept a connection that sent no whole frame"
    assert took < 1.6, took
    assert all(how != "direct" for how, _ in seen)


async def test_a_frame_over_the_servers_size_limit_is_closed_with_1009() -> None:
    """websockets' limit (uvicorn's ``ws_max_size``) holds for the frames read here too."""
    async with reading(ws_max_size=1000) as (port, seen):
        raw = await Raw.connect(port)
        await raw.send_in_pieces(client_frame(0x1, b"ok") + client_frame(0x1, b"x" * 1001), [1 << 20])
        assert await raw.frame() == (0x1, b"ok")
        opcode, payload = await raw.frame()
        await raw.close()
    assert (opcode, int.from_bytes(payload[:2], "big")) == (0x8, 1009)
    assert [m for how, m in seen if how == "direct"] == ["ok"]


# -- memory: what a connection keeps once it is open ----------------------------------------------------------
@pytest.mark.parametrize(("http", "left"), [(CrispHttp, 0), ("httptools", 1)])
async def test_the_http_protocol_is_freed_at_the_upgrade(http: Any, left: int) -> None:
    """With the server's HTTP protocol, the object that read the handshake's request is gone once the WebSocket
    protocol has the connection, without the cyclic collector (the server turns it off): with uvicorn's own, it
    and its parser are a cycle, which stayed until the server's next collection (about 3 KB each; issue 19)."""
    alive: list[int] = []

    async def script(_conn: Connection, protocol: CrispWebSocket) -> None:
        alive.append(sum(1 for o in gc.get_objects() if isinstance(o, HttpToolsProtocol)))
        # The handshake's request and response are let go as well; the application reads the scope's headers.
        assert protocol.request is None
        assert protocol.response is None
        assert dict(protocol.scope["headers"])[b"host"].startswith(b"127.0.0.1:")

    gc.collect()
    gc.disable()
    try:
        async with serving(script, http=http) as url:
            assert await received(url) == []
    finally:
        gc.enable()
    assert alive == [left]


# -- the opening handshake: a plain one is answered here, every other one by websockets ------------------------

KEY = "dGhlIHNhbXBsZSBub25jZQ=="  # RFC 6455's example: its accept value is "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="
PLAIN = [
    (b"host", b"127.0.0.1:8000"),
    (b"upgrade", b"websocket"),
    (b"connection", b"keep-alive, Upgrade"),
    (b"sec-websocket-key", KEY.encode()),
    (b"sec-websocket-version", b"13"),
    (b"origin", b"http://127.0.0.1:8000"),
    (b"sec-websocket-extensions", b"permessage-deflate; client_max_window_bits"),
]


def _without(name: bytes) -> list[tuple[bytes, bytes]]:
    return [(n, v) for n, v in PLAIN if n != name]


def _with(name: bytes, value: bytes) -> list[tuple[bytes, bytes]]:
    return [*_without(name), (name, value)]


@pytest.mark.parametrize(
    ("method", "version", "target", "headers", "compression"),
    [
        ("POST", "1.1", b"/ws", PLAIN, False),
        ("GET", "1.0", b"/ws", PLAIN, False),
        ("GET", "1.1", "/wß".encode(), PLAIN, False),
        ("GET", "1.1", b"/" + b"x" * 8192, PLAIN, False),
        ("GET", "1.1", b"/ws", _without(b"sec-websocket-key"), False),
        ("GET", "1.1", b"/ws", [*PLAIN, (b"sec-websocket-key", KEY.encode())], False),
        ("GET", "1.1", b"/ws", _with(b"sec-websocket-key", b"not base64!"), False),
        ("GET", "1.1", b"/ws", _with(b"sec-websocket-key", b"c2hvcnQ="), False),  # 5 bytes
        ("GET", "1.1", b"/ws", _with(b"sec-websocket-version", b"8"), False),
        ("GET", "1.1", b"/ws", _without(b"sec-websocket-version"), False),
        ("GET", "1.1", b"/ws", _with(b"upgrade", b"websocket, h2c"), False),
        ("GET", "1.1", b"/ws", _with(b"upgrade", b"h2c"), False),
        ("GET", "1.1", b"/ws", _with(b"connection", b"keep-alive"), False),
        ("GET", "1.1", b"/ws", _with(b"connection", b"up grade"), False),
        ("GET", "1.1", b"/ws", [*PLAIN, (b"origin", b"http://evil")], False),
        ("GET", "1.1", b"/ws", [*PLAIN, (b"sec-websocket-protocol", b"chat")], False),
        ("GET", "1.1", b"/ws", PLAIN, True),  # the server offers compression, the client asks for it
        ("GET", "1.1", b"/ws", [*PLAIN, (b"x-note", b"bell\x07")], False),
        ("GET", "1.1", b"/ws", [*PLAIN, (b"x-long", b"x" * 8190)], False),
        ("GET", "1.1", b"/ws", PLAIN + [(b"x-n", b"1")] * 122, False),  # 129 headers
    ],
)
def test_only_a_plain_handshake_is_answered_here(
    method: str, version: str, target: bytes, headers: list[tuple[bytes, bytes]], compression: bool
) -> None:
    assert plain_handshake_key("GET", "1.1", b"/ws?room=ABCDEF", PLAIN, compression=False) == KEY
    assert plain_handshake_key("GET", "1.1", b"/ws", _without(b"sec-websocket-extensions"), compression=True) == KEY
    assert plain_handshake_key("GET", "1.1", b"/ws", PLAIN + [(b"x-n", b"1")] * 121, compression=False) == KEY
    assert plain_handshake_key(method, version, target, headers, compression=compression) is None


async def _handshake(port: int, request: bytes) -> bytes:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(request)
        return await reader.readuntil(b"\r\n\r\n")
    finally:
        writer.close()
        with contextlib.suppress(OSError):
            await writer.wait_closed()


async def test_a_plain_handshake_is_answered_here_with_the_scope_websockets_would_give() -> None:
    """The same request answered here and by ``websockets`` (a subprotocol offered sends it there): the same
    ``101`` and accept value, and the application sees the same scope."""
    scopes: list[tuple[bool, dict[str, Any]]] = []

    async def script(_conn: Connection, protocol: CrispWebSocket) -> None:
        scopes.append((protocol.accept_header is not None, dict(protocol.scope)))

    async with serving(script) as url:
        port = int(url.rsplit(":", 1)[1].strip("/"))
        head = (
            f"GET /ws/a%20b?room=ABCDEF&x=1 HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: WebSocket\r\n"
            f"Connection: keep-alive, Upgrade\r\nSec-WebSocket-Key: {KEY}\r\nSec-WebSocket-Version: 13\r\n"
            "Origin: http://127.0.0.1\r\nUser-Agent: test\r\n"
        )
        here = await _handshake(port, (head + "\r\n").encode())
        there = await _handshake(port, (head + "Sec-WebSocket-Protocol: chat\r\n\r\n").encode())
        for _ in range(100):
            if len(scopes) == 2:
                break
            await asyncio.sleep(0.01)
    for answer in (here, there):
        assert answer.startswith(b"HTTP/1.1 101 Switching Protocols\r\n"), answer
        lines = {line.split(b": ", 1)[0].lower(): line.split(b": ", 1)[1] for line in answer.split(b"\r\n")[1:-2]}
        assert lines[b"sec-websocket-accept"] == b"s3pPLMBiTxaQ9kYGzzhZRbK+xOo="
        assert lines[b"upgrade"].lower() == b"websocket"
        assert lines[b"connection"].lower() == b"upgrade"
        assert b"sec-websocket-protocol" not in lines
    assert [checked for checked, _ in scopes] == [True, False]
    ours, theirs = (scope for _, scope in scopes)
    theirs["headers"] = [(n, v) for n, v in theirs["headers"] if n != b"sec-websocket-protocol"]
    assert theirs.pop("subprotocols") == ["chat"]
    assert ours.pop("subprotocols") == []
    assert ours.pop("client") != theirs.pop("client")  # two connections
    assert ours == theirs
    assert ours["path"] == "/ws/a b"
    assert ours["raw_path"] == b"/ws/a%20b"
    assert ours["query_string"] == b"room=ABCDEF&x=1"


@pytest.mark.parametrize(
    ("change", "status"),
    [
        (("Sec-WebSocket-Key: " + KEY, "Sec-WebSocket-Key: c2hvcnQ="), b"400"),
        (("Sec-WebSocket-Version: 13", "Sec-WebSocket-Version: 8"), b"400"),
        (("Connection: Upgrade", "Connection: Upgrade\r\nOrigin: http://a\r\nOrigin: http://b"), b"400"),
    ],
)
async def test_a_handshake_that_is_not_plain_is_answered_by_websockets_as_before(
    change: tuple[str, str], status: bytes
) -> None:
    async def script(_conn: Connection, _protocol: CrispWebSocket) -> None:
        raise AssertionError("no WebSocket opens")

    async with serving(script) as url:
        port = int(url.rsplit(":", 1)[1].strip("/"))
        head = (
            f"GET / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            f"Sec-WebSocket-Key: {KEY}\r\nSec-WebSocket-Version: 13\r\n\r\n"
        )
        answer = await _handshake(port, head.replace(*change).encode())
    assert answer.split(b" ")[1] == status, answer
