"""Keepalive pings are spread out: connections opened together are not pinged together (issue 7)."""

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
