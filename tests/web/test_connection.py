"""The outbound side of a connection: frames go out at once, in order, and a peer that stops reading is
dropped once its queue is full, without the room ever waiting."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from crisp_server.web.connection import CLOSE_TOO_SLOW, Connection


class FakeSocket:
    """An ASGI ``send`` whose socket can be made to block (flow control) and to vanish."""

    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []
        self.writable = asyncio.Event()
        self.writable.set()
        self.gone = False
        self.calls = 0

    async def send(self, message: dict[str, Any]) -> None:
        self.calls += 1
        await self.writable.wait()
        if self.gone:
            raise ConnectionResetError("peer gone")
        self.sent.append(message)

    def texts(self) -> list[str]:
        return [m["text"] for m in self.sent if m["type"] == "websocket.send"]


async def test_frames_go_out_at_once_while_the_socket_takes_them() -> None:
    sock = FakeSocket()
    counted: list[int] = []
    conn = Connection(sock.send, 8, "test", lambda: counted.append(1))
    conn.send(b"one")
    conn.send(b"two")
    # No task switch happened: the frames were handed over synchronously.
    assert sock.texts() == ["one", "two"]
    assert len(counted) == 2
    # Nothing had to wait: no relay task (nor its queue) was made.
    assert conn.relay_task is None
    await conn.finish()  # the close goes out all the same
    assert sock.sent[-1] == {"type": "websocket.close", "code": 1000, "reason": ""}


async def test_a_blocked_socket_keeps_the_order_and_the_relay_finishes_it() -> None:
    sock = FakeSocket()
    conn = Connection(sock.send, 8, "test")
    sock.writable.clear()
    for k in range(5):
        conn.send(f"frame {k}".encode())  # the first suspends; the rest wait in the queue
    assert sock.texts() == []
    sock.writable.set()
    for _ in range(10):
        await asyncio.sleep(0)
    assert sock.texts() == [f"frame {k}" for k in range(5)]
    conn.send(b"after")  # the queue is empty again: straight out
    assert sock.texts()[-1] == "after"
    await conn.finish()


async def test_a_peer_that_stops_reading_is_dropped_when_its_queue_is_full() -> None:
    sock = FakeSocket()
    conn = Connection(sock.send, 3, "test")
    sock.writable.clear()
    for k in range(5):  # one in flight, three queued, the fifth overflows
        conn.send(f"frame {k}".encode())
    assert conn.closing
    sock.writable.set()
    for _ in range(10):
        await asyncio.sleep(0)
    # What was queued is dropped: only the frame in flight and the close go out.
    assert sock.texts() == ["frame 0"]
    assert sock.sent[-1]["type"] == "websocket.close"
    assert sock.sent[-1]["code"] == CLOSE_TOO_SLOW
    conn.send(b"ignored")
    assert sock.texts() == ["frame 0"]
    await conn.finish()


async def test_a_vanished_peer_stops_the_sends_without_an_error() -> None:
    sock = FakeSocket()
    conn = Connection(sock.send, 8, "test")
    sock.gone = True
    conn.send(b"lost")  # raises inside the ASGI send; the connection notes the peer is gone
    calls = sock.calls
    conn.send(b"not tried")
    assert sock.calls == calls
    await conn.finish()
    assert sock.sent == []


class ProtocolSocket(FakeSocket):
    """A socket whose protocol can close at once, ahead of a frame that waits for its full buffer (as
    ``CrispWebSocket.close_now``)."""

    def __init__(self) -> None:
        super().__init__()
        self.closed_now: list[tuple[int, str]] = []

    def close_now(self, code: int, reason: str) -> None:
        self.closed_now.append((code, reason))


async def test_an_overflowing_queue_closes_at_once_not_behind_the_blocked_frame() -> None:
    sock = ProtocolSocket()
    conn = Connection(sock.send, 3, "test")
    sock.writable.clear()  # the peer stopped reading, for good
    for k in range(5):
        conn.send(f"frame {k}".encode())
    # Closed on the spot, though the socket never takes another byte.
    assert sock.closed_now == [(CLOSE_TOO_SLOW, "too slow")]
    assert conn.closing
    conn.send(b"ignored")
    assert sock.calls == 1  # only the frame that blocked was tried
    await conn.finish(timeout=0.1)
    assert sock.sent == []


class BrokenSocket(FakeSocket):
    """A socket whose send fails with a fault of the server's own (not a peer that left) once it unblocks."""

    async def send(self, message: dict[str, Any]) -> None:
        await self.writable.wait()
        raise ValueError("a bug in the send path")


async def test_a_fault_of_the_relay_is_raised_where_the_connection_ends() -> None:
    sock = BrokenSocket()
    conn = Connection(sock.send, 8, "test")
    sock.writable.clear()
    conn.send(b"frame")  # suspends: the relay takes it over
    sock.writable.set()
    with pytest.raises(ValueError, match="a bug in the send path"):
        await conn.finish()


async def test_finish_cancelled_while_it_waits_for_the_relay_ends_cancelled() -> None:
    """The connection's own task is cancelled while ``finish`` waits for the blocked relay: the cancellation
    goes through (it was once swallowed there), and the relay is left to its own end."""
    sock = FakeSocket()
    conn = Connection(sock.send, 8, "test")
    sock.writable.clear()
    conn.send(b"frame")
    finishing = asyncio.create_task(conn.finish(timeout=30))
    for _ in range(3):
        await asyncio.sleep(0)
    assert finishing.cancel()
    with pytest.raises(asyncio.CancelledError):
        await finishing
    relay = conn.relay_task
    assert relay is not None
    assert not relay.done()
    relay.cancel()
