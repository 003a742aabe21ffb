"""Connections cannot hold the server's descriptors for nothing: a request head must arrive in time (a silent
socket, half a head, a trickle), a WebSocket must enter a room in time, one address has a cap on its open
connections (the forwarded address behind a trusted proxy), and the connection budget left by the descriptor
limit answers 503 beyond it."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest
from websockets.asyncio.client import connect as ws_connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from crisp_server.settings import Settings
from crisp_server.web.app import create_app
from crisp_server.web.bridge import CLOSE_NO_ROOM
from crisp_server.web.gate import Gate
from crisp_server.web.httpprotocol import http_protocol

from .harness import running_server, uvicorn_serving

HEAD_SECONDS = 0.5
ENTER_SECONDS = 1.0


@contextlib.asynccontextmanager
async def serving(gate: Gate | None, *, head: float = 10.0, **config: Any) -> AsyncIterator[int]:
    """The app (in memory) behind the server's HTTP protocol with ``gate`` and a head deadline of ``head``."""
    app = create_app(Settings(), persist=False)
    async with uvicorn_serving(app, http=http_protocol(gate, head), lifespan="on", **config) as port:
        yield port


def gate(per_address: int, budget: int = 1000, **options: Any) -> Gate:
    """A gate whose budget does not depend on this process's descriptors."""
    return Gate(per_address, 16, limit=budget + 16, in_use=0, **options)


@contextlib.contextmanager
def raw_sockets() -> Iterator[list[socket.socket]]:
    opened: list[socket.socket] = []
    try:
        yield opened
    finally:
        for sock in opened:
            sock.close()


async def open_raw(port: int, opened: list[socket.socket], source: str = "127.0.0.1") -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setblocking(False)
    opened.append(sock)
    sock.bind((source, 0))
    await asyncio.get_running_loop().sock_connect(sock, ("127.0.0.1", port))
    return sock


async def read_to_end(sock: socket.socket, timeout: float = 10.0) -> bytes:
    """What the server sends until it closes (a reset ends it too)."""
    loop = asyncio.get_running_loop()
    data = b""
    async with asyncio.timeout(timeout):
        while True:
            try:
                chunk = await loop.sock_recv(sock, 65536)
            except ConnectionResetError:
                return data
            if not chunk:
                return data
            data += chunk


async def get(port: int, path: str, source: str = "127.0.0.1", **headers: str) -> httpx.Response:
    transport = httpx.AsyncHTTPTransport(local_address=source)
    async with httpx.AsyncClient(transport=transport) as client:
        return await client.get(f"http://127.0.0.1:{port}{path}", headers=headers)


# The head deadline.


async def test_a_silent_connection_is_answered_408_and_closed_after_the_head_deadline() -> None:
    async with serving(None, head=HEAD_SECONDS) as port:
        with raw_sockets() as opened:
            start = time.monotonic()
            sock = await open_raw(port, opened)
            answer = await read_to_end(sock)
            took = time.monotonic() - start
    assert answer.startswith(b"HTTP/1.1 408 ")
    assert b"connection: close" in answer
    assert HEAD_SECONDS * 0.8 <= took < HEAD_SECONDS * 1.5 + 3


async def test_half_a_head_is_closed_after_the_deadline() -> None:
    async with serving(None, head=HEAD_SECONDS) as port:
        with raw_sockets() as opened:
            sock = await open_raw(port, opened)
            start = time.monotonic()
            await asyncio.get_running_loop().sock_sendall(sock, b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            answer = await read_to_end(sock)
            took = time.monotonic() - start
    assert answer.startswith(b"HTTP/1.1 408 ")
    assert took < HEAD_SECONDS * 1.5 + 3


async def test_a_head_that_trickles_in_is_closed_after_the_deadline() -> None:
    """Bytes that keep coming do not reset the clock: the whole head must be there in time."""
    async with serving(None, head=HEAD_SECONDS) as port:
        with raw_sockets() as opened:
            sock = await open_raw(port, opened)
            loop = asyncio.get_running_loop()
            start = time.monotonic()
            await loop.sock_sendall(sock, b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            closed_after: float | None = None
            with contextlib.suppress(OSError):
                while time.monotonic() - start < HEAD_SECONDS * 1.5 + 5:
                    await loop.sock_sendall(sock, b"X-a: b\r\n")
                    await asyncio.sleep(0.05)
            closed_after = time.monotonic() - start
    assert closed_after < HEAD_SECONDS * 1.5 + 3


async def test_a_whole_request_in_time_is_answered_and_the_next_one_gets_its_own_deadline() -> None:
    async with serving(None, head=HEAD_SECONDS) as port:
        with raw_sockets() as opened:
            sock = await open_raw(port, opened)
            loop = asyncio.get_running_loop()
            await asyncio.sleep(HEAD_SECONDS * 0.5)
            await loop.sock_sendall(sock, b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            first = await loop.sock_recv(sock, 65536)
            assert first.startswith(b"HTTP/1.1 200 ")
            # Half of a second request: its deadline runs from its first byte.
            await loop.sock_sendall(sock, b"GET /healthz HTTP/1.1\r\n")
            rest = await read_to_end(sock)
    assert rest.startswith(b"HTTP/1.1 408 ")


# The enter deadline.


async def ping_for(ws: Any, seconds: float) -> None:
    """Send ``ping`` every 0.1 s for ``seconds`` (raises once the server has closed the socket)."""
    start = time.monotonic()
    while time.monotonic() - start < seconds:
        await ws.send('{"type": "ping"}')
        await asyncio.sleep(0.1)


async def test_a_websocket_that_enters_no_room_is_closed_with_4008_though_it_pings() -> None:
    async with running_server(enter_timeout_seconds=ENTER_SECONDS) as server:
        client = await server.client()
        start = time.monotonic()
        with pytest.raises(ConnectionClosed) as closed:
            await ping_for(client.ws, ENTER_SECONDS + 5)
        took = time.monotonic() - start
    assert closed.value.rcvd is not None
    assert closed.value.rcvd.code == CLOSE_NO_ROOM == 4008
    assert ENTER_SECONDS * 0.8 <= took < ENTER_SECONDS + 3


async def test_a_websocket_in_a_room_outlives_the_enter_deadline() -> None:
    async with running_server(enter_timeout_seconds=ENTER_SECONDS) as server:
        client = await server.client()
        await client.create("Ann")
        await asyncio.sleep(ENTER_SECONDS + 0.5)
        await client.ws.send('{"type": "ping"}')
        await client.wait_for(lambda c: any(m.get("type") == "pong" for m in c.messages), what="pong")


# The cap per address.


async def test_the_cap_refuses_the_connection_beyond_it_and_takes_one_again_after_one_closed() -> None:
    async with serving(gate(3)) as port:
        with raw_sockets() as opened:
            held = [await open_raw(port, opened) for _ in range(3)]
            await asyncio.sleep(0.1)
            beyond = await open_raw(port, opened)
            answer = await read_to_end(beyond, timeout=5)
            assert answer.startswith(b"HTTP/1.1 429 ")
            # Another address is not counted with this one.
            assert (await get(port, "/healthz", source="127.0.0.2")).status_code == 200
            with pytest.raises(InvalidStatus) as refused:
                async with ws_connect(f"ws://127.0.0.1:{port}/ws"):
                    pass
            assert refused.value.response.status_code == 429
            held[0].close()
            await asyncio.sleep(0.2)
            assert (await get(port, "/healthz")).status_code == 200


async def test_websockets_count_toward_the_cap_until_they_close() -> None:
    async with serving(gate(2)) as port:
        url = f"ws://127.0.0.1:{port}/ws"
        async with ws_connect(url), ws_connect(url):
            assert (await get(port, "/healthz")).status_code == 429
        await asyncio.sleep(0.2)
        assert (await get(port, "/healthz")).status_code == 200


async def test_behind_a_trusted_proxy_the_cap_counts_the_forwarded_address() -> None:
    proxied = gate(2, proxy_headers=True, forwarded_allow_ips="127.0.0.1")
    async with serving(proxied, proxy_headers=True, forwarded_allow_ips="127.0.0.1") as port:
        url = f"ws://127.0.0.1:{port}/ws"
        one = {"X-Forwarded-For": "203.0.113.1"}
        async with ws_connect(url, additional_headers=one), ws_connect(url, additional_headers=one):
            with pytest.raises(InvalidStatus) as refused:
                async with ws_connect(url, additional_headers=one):
                    pass
            assert refused.value.response.status_code == 429
            assert (await get(port, "/healthz", **one)).status_code == 429
            # Another client behind the same proxy (the same peer address) is not refused.
            other = {"X-Forwarded-For": "203.0.113.2"}
            async with ws_connect(url, additional_headers=other):
                assert (await get(port, "/healthz", **other)).status_code == 200
        await asyncio.sleep(0.2)
        assert (await get(port, "/healthz", **one)).status_code == 200


# The connection budget.


async def test_beyond_the_budget_a_connection_is_answered_503() -> None:
    async with serving(gate(0, budget=4)) as port:
        with raw_sockets() as opened:
            for i in range(4):
                await open_raw(port, opened, source=f"127.0.0.{i + 1}")
            await asyncio.sleep(0.1)
            beyond = await open_raw(port, opened, source="127.0.0.9")
            answer = await read_to_end(beyond, timeout=5)
            assert answer.startswith(b"HTTP/1.1 503 ")
            opened[0].close()
            await asyncio.sleep(0.2)
            assert (await get(port, "/healthz", source="127.0.0.9")).status_code == 200


def test_the_cap_is_at_most_a_quarter_of_the_budget() -> None:
    assert gate(256, budget=100).per_address == 25
    assert gate(256, budget=100_000).per_address == 256
    assert gate(0, budget=100).per_address == 0
    assert "up to 100 connections, 25 per client address" in gate(256, budget=100).describe()


async def _spend(port: int, opened: list[socket.socket], count: int) -> None:
    """Silent connections from addresses that are no monitor's, until ``count`` are open."""
    for i in range(count):
        await open_raw(port, opened, source=f"127.0.1.{i + 1}")
    await asyncio.sleep(0.1)


async def test_beyond_the_budget_a_monitor_still_gets_its_health_checks_and_metrics() -> None:
    spent = gate(0, budget=4)
    assert spent.health == 4  # a quarter of the 16 reserved descriptors
    async with serving(spent) as port:
        with raw_sockets() as opened:
            await _spend(port, opened, 4)
            stranger = await open_raw(port, opened, source="127.0.0.9")
            assert (await read_to_end(stranger, timeout=5)).startswith(b"HTTP/1.1 503 ")
            # From a monitor's address (127.0.0.1 by default): the health check and the metrics are answered.
            started = time.monotonic()
            health = await get(port, "/healthz")
            assert health.status_code == 200
            assert health.json()["status"] == "ok"
            assert time.monotonic() - started < 1
            assert (await get(port, "/metrics")).status_code == 200
            assert (await get(port, "/healthz?check=1")).status_code == 200
            # Anything else is refused on the reserve, a WebSocket too.
            page = await get(port, "/api/rooms/ABCDEF")
            assert page.status_code == 503
            assert page.headers["retry-after"] == "5"
            with pytest.raises(InvalidStatus) as refused:
                async with ws_connect(f"ws://127.0.0.1:{port}/ws"):
                    pass
            assert refused.value.response.status_code == 503
            # A place of the reserve is one request's: the connection closes after the answer.
            check = await open_raw(port, opened)
            await asyncio.get_running_loop().sock_sendall(check, b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n")
            answer = await read_to_end(check, timeout=5)
            assert answer.startswith(b"HTTP/1.1 200 ")
            assert b"connection: close" in answer.lower()
            assert spent.health_open == 0
            # The reserve is bounded: silent connections from a monitor's address take it all, then 503.
            for _ in range(4):
                await open_raw(port, opened)
            await asyncio.sleep(0.1)
            assert spent.health_open == 4
            beyond = await open_raw(port, opened)
            assert (await read_to_end(beyond, timeout=5)).startswith(b"HTTP/1.1 503 ")
            for sock in opened[-5:-1]:
                sock.close()
            await asyncio.sleep(0.2)
            assert spent.health_open == 0
            assert (await get(port, "/healthz")).status_code == 200
        await asyncio.sleep(0.2)
        assert spent.open == 0


async def test_the_monitors_are_the_configured_addresses_and_the_trusted_proxies() -> None:
    watched = gate(0, budget=2, proxy_headers=True, forwarded_allow_ips="127.0.0.7", monitor_ips="127.0.0.5")
    assert [watched.monitors(a) for a in ("127.0.0.5", "127.0.0.7", "127.0.0.1", None)] == [True, True, False, False]
    async with serving(watched, proxy_headers=True, forwarded_allow_ips="127.0.0.7") as port:
        with raw_sockets() as opened:
            await _spend(port, opened, 2)
            assert (await get(port, "/healthz", source="127.0.0.5")).status_code == 200
            assert (await get(port, "/healthz", source="127.0.0.7")).status_code == 200  # the proxy's own check
            loopback = await open_raw(port, opened)  # not listed: no place of the reserve
            assert (await read_to_end(loopback, timeout=5)).startswith(b"HTTP/1.1 503 ")


async def test_a_forwarded_address_from_an_untrusted_peer_is_not_believed() -> None:
    """A client that is no trusted proxy cannot escape its cap by sending ``X-Forwarded-For``."""
    proxied = gate(2, proxy_headers=True, forwarded_allow_ips="127.0.0.1")
    async with serving(proxied, proxy_headers=True, forwarded_allow_ips="127.0.0.1") as port:
        with raw_sockets() as opened:
            for i in range(2):
                sock = await open_raw(port, opened, source="127.0.0.2")
                await asyncio.get_running_loop().sock_sendall(
                    sock, f"GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-Forwarded-For: 203.0.113.{i}\r\n\r\n".encode()
                )
            await asyncio.sleep(0.2)
            assert proxied.by_address == {"127.0.0.2": 2}
            assert (
                await get(port, "/healthz", source="127.0.0.2", **{"X-Forwarded-For": "203.0.113.9"})
            ).status_code == 429
