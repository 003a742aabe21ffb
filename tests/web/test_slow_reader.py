"""A phone that stops reading for a while is dropped with 1013 once its queue overflows, and, reading again,
finds that close code after the frames it missed (then resumes with its token, as after any drop)."""

from __future__ import annotations

import asyncio

from crisp_server.remote.client import CrispClient
from crisp_server.web.connection import CLOSE_TOO_SLOW
from tests.web.deaf import deaf_player, flood, read_close_code, seated
from tests.web.harness import running_server


def deaf_seat_dropped(host: CrispClient) -> bool:
    return host.state is not None and not host.state["room"]["seats"][1]["connected"]


async def test_a_phone_that_stops_reading_is_closed_with_1013_and_reads_it_when_it_reads_again() -> None:
    # Limits loose enough for the host to flood its room.
    async with running_server(send_queue=8, rate_burst=100_000, rate_per_second=100_000.0) as server:
        host = await server.client()
        room = await host.create("Host")
        sock = await asyncio.to_thread(deaf_player, server.port, room, "Deaf")
        try:
            await host.wait_for(lambda c: seated(c) == 2, what="the deaf player seated")
            await flood([host], 30, until=lambda: deaf_seat_dropped(host))
            assert deaf_seat_dropped(host)
            # The close went out behind what the socket still held, without waiting for it to drain.
            assert await asyncio.wait_for(asyncio.to_thread(read_close_code, sock), 5) == CLOSE_TOO_SLOW
        finally:
            sock.close()
