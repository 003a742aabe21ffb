"""Keepalive pings are spread out: connections opened together are not pinged together (issue 7); and only a
connection silent for an interval is pinged (issue 19)."""

from __future__ import annotations

import asyncio
import time
from typing import cast

from picows import WSFrame, WSListener, WSMsgType, WSTransport, ws_connect

from .harness import running_server

INTERVAL = 1.0
CONNECTIONS = 30


class Pinged(WSListener):
    """Answers pings by hand and notes when the first one came."""

    def __init__(self) -> None:
        self.opened = time.monotonic()
        self.first_ping: float | None = None
        self.pings = 0

    def on_ws_frame(self, transport: WSTransport, frame: WSFrame) -> None:
        if frame.msg_type == WSMsgType.PING:
            self.pings += 1
            if self.first_ping is None:
                self.first_ping = time.monotonic() - self.opened
            transport.send(WSMsgType.PONG, frame.get_payload_as_bytes())


async def test_connections_opened_together_get_their_first_pings_spread_over_an_interval() -> None:
    async with running_server(ping_interval=INTERVAL) as server:
        connected = await asyncio.gather(
            *(ws_connect(Pinged, server.url, enable_auto_pong=False) for _ in range(CONNECTIONS))
        )
        try:
            listeners = [cast(Pinged, listener) for _, listener in connected]
            deadline = time.monotonic() + 5 * INTERVAL
            while any(p.pings < 2 for p in listeners) and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
            firsts = sorted(p.first_ping for p in listeners if p.first_ping is not None)
            assert len(firsts) == CONNECTIONS
            # Between half and one and a half intervals after opening; uvicorn alone pings all at one interval.
            assert firsts[0] >= 0.45 * INTERVAL
            assert firsts[-1] <= 1.6 * INTERVAL
            assert firsts[-1] - firsts[0] > 0.4 * INTERVAL
            # The pongs were taken: pinging went on, and nobody was hung up for a missing pong.
            assert all(p.pings >= 2 for p in listeners)
            assert not any(transport.is_disconnected for transport, _ in connected)
        finally:
            for transport, _ in connected:
                transport.disconnect()


async def test_only_a_connection_silent_for_an_interval_is_pinged() -> None:
    async with running_server(ping_interval=INTERVAL) as server:
        (quiet_transport, quiet), (chatty_transport, chatty) = [
            (transport, cast(Pinged, listener))
            for transport, listener in await asyncio.gather(
                *(ws_connect(Pinged, server.url, enable_auto_pong=False) for _ in range(2))
            )
        ]
        try:
            # One talks (a game's moves; here the protocol's own ping) four times an interval, for three.
            talked_until = time.monotonic() + 3 * INTERVAL
            while time.monotonic() < talked_until:
                chatty_transport.send(WSMsgType.TEXT, b'{"type": "ping"}')
                await asyncio.sleep(INTERVAL / 4)
            assert quiet.pings >= 2
            assert chatty.pings == 0  # its messages were signs of life enough
            # Once it falls silent, it is pinged within an interval of its last message.
            deadline = time.monotonic() + 2 * INTERVAL
            while chatty.pings == 0 and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
            assert chatty.first_ping is not None
            assert time.monotonic() - talked_until <= 1.5 * INTERVAL
            assert not quiet_transport.is_disconnected
            assert not chatty_transport.is_disconnected
        finally:
            quiet_transport.disconnect()
            chatty_transport.disconnect()
