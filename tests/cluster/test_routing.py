"""Routing through HAProxy: every socket of a room reaches its owner node, and rooms spread over the nodes.

Which node holds a socket is read from each node's ``crisp_connections`` gauge; which node owns a room
from the lease table.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import Counter

import httpx

from crisp_server.remote.client import CrispClient
from tests.cluster.conftest import MakeCluster
from tests.cluster.harness import Cluster, wait_for


def gauge(text: str, name: str) -> float:
    return next(float(line.split()[1]) for line in text.splitlines() if line.startswith(name + " "))


def connections(cluster: Cluster) -> dict[str, float]:
    return {
        cluster.node_name(i): gauge(httpx.get(cluster.node_url(i) + "/metrics", timeout=5).text, "crisp_connections")
        for i in cluster.nodes
    }


async def test_four_players_of_a_room_reach_one_node_and_rooms_spread(make_cluster: MakeCluster) -> None:
    cluster = await asyncio.to_thread(make_cluster, 3)
    async with contextlib.AsyncExitStack() as stack:
        host = await stack.enter_async_context(CrispClient.connect(cluster.ws_url))
        code = await host.create("Ana")
        guests = []
        for name in ("Ben", "Cleo", "Dan"):
            guest = await stack.enter_async_context(CrispClient.connect(cluster.ws_url, room=code))
            await guest.join(code, name)
            guests.append(guest)
        if host.closed is not None or not await _stays(host):  # the room moved where its code hashes: follow it
            assert host.moved
            token = host.token or ""
            host = await stack.enter_async_context(CrispClient.connect(cluster.ws_url, room=code))
            await host.resume(code, token)
        owner = (await asyncio.to_thread(cluster.owners))[code]
        await asyncio.to_thread(
            wait_for,
            lambda: connections(cluster) == {n: 4.0 if n == owner else 0.0 for n in connections(cluster)},
            5,
            "the four sockets on the owner",
        )
        for guest in guests:
            assert guest.closed is None
        await host.start()
        for c in (host, *guests):
            await c.wait_for(lambda c: c.phase == "peek", what="the deal")

    # 30 rooms of two: each room's sockets on its owner, and the owners spread over the three nodes.
    async with contextlib.AsyncExitStack() as stack:
        codes = []
        for n in range(30):
            ana = await stack.enter_async_context(CrispClient.connect(cluster.ws_url))
            code = await ana.create(f"Ana{n}")
            ben = await stack.enter_async_context(CrispClient.connect(cluster.ws_url, room=code))
            await ben.join(code, "Ben")
            if ana.closed is not None or not await _stays(ana):
                token = ana.token or ""
                ana = await stack.enter_async_context(CrispClient.connect(cluster.ws_url, room=code))
                await ana.resume(code, token)
            codes.append(code)
        owners = await asyncio.to_thread(cluster.owners)
        spread = Counter(owners[code] for code in codes)
        assert len(spread) == 3, spread
        assert min(spread.values()) >= 4, spread
        expected = {cluster.node_name(i): 2.0 * spread[cluster.node_name(i)] for i in cluster.nodes}
        await asyncio.to_thread(
            wait_for, lambda: connections(cluster) == expected, 5, "each room's sockets on its owner"
        )


async def _stays(c: CrispClient) -> bool:
    """Whether the connection is still open a moment later (a room that moves closes its creator's)."""
    with contextlib.suppress(TimeoutError, ConnectionError):
        await c.wait_for(lambda c: c.closed is not None, timeout=0.3)
    return c.closed is None
