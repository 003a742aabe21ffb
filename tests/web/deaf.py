"""Players over raw sockets, for the tests of phones that stop reading: a socket that opens the WebSocket,
joins a room and reads nothing more until the test says so; and hosts that flood their rooms."""

from __future__ import annotations

import asyncio
import base64
import os
import socket
import time
from collections.abc import Callable

import orjson

from crisp_server.remote.client import CrispClient


def deaf_player(port: int, room: str, name: str) -> socket.socket:
    """A raw socket that opens the WebSocket, joins ``room`` and reads nothing more (until the test does)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.connect(("127.0.0.1", port))
    sock.sendall(upgrade_request(port, "/ws"))
    answer = b""
    while b"\r\n\r\n" not in answer:
        answer += sock.recv(1)  # byte by byte: not a byte of the frames after the handshake is read
    assert answer.startswith(b"HTTP/1.1 101"), answer
    sock.sendall(client_frame(0x1, orjson.dumps({"type": "join", "room": room, "name": name})))
    return sock


def upgrade_request(port: int, path: str) -> bytes:
    """A client's opening handshake (RFC 6455, section 4.1) for ``path`` on this machine's ``port``."""
    key = base64.b64encode(os.urandom(16)).decode()
    return (
        f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
    ).encode()


def client_frame(opcode: int, payload: bytes, *, fin: bool = True) -> bytes:
    """One frame as a client sends it: masked (RFC 6455, section 5.3), in its length class."""
    first = (0x80 if fin else 0) | opcode
    n = len(payload)
    if n < 126:
        head = bytes((first, 0x80 | n))
    elif n < 1 << 16:
        head = bytes((first, 0x80 | 126)) + n.to_bytes(2, "big")
    else:
        head = bytes((first, 0x80 | 127)) + n.to_bytes(8, "big")
    mask = os.urandom(4)
    return head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))


def read_close_code(sock: socket.socket) -> int:
    """Read the server's frames until its close frame; its code."""

    def exactly(n: int) -> bytes:
        data = b""
        while len(data) < n:
            chunk = sock.recv(n - len(data))
            if not chunk:
                raise ConnectionError("the server hung up without a close frame")
            data += chunk
        return data

    while True:
        first, length = exactly(2)
        if length == 126:
            length = int.from_bytes(exactly(2), "big")
        elif length == 127:
            length = int.from_bytes(exactly(8), "big")
        payload = exactly(length)
        if first & 0x0F == 0x8:
            return int.from_bytes(payload[:2], "big")


def seated(client: CrispClient) -> int:
    return len(client.state["room"]["seats"]) if client.state is not None else 0


async def flood(
    hosts: list[CrispClient], seconds: float, until: Callable[[], bool] = lambda: False, changes: int | None = None
) -> None:
    """The hosts change their room's options over and over, each waiting for its own update before the next
    (the hosts read, and must keep up): every member is sent each change. For ``seconds``, or less if
    ``until`` comes true or each host made ``changes``."""

    async def host_flood(host: CrispClient) -> None:
        deadline = time.monotonic() + seconds
        k = 0
        while time.monotonic() < deadline and k != changes and not (k % 50 == 49 and until()):
            options = {"score_limit": (50, 100, 150)[k % 3], "turn_seconds": None, "discard_draw": False}
            await host.request({"type": "options", **options})
            k += 1

    await asyncio.gather(*(host_flood(host) for host in hosts))
