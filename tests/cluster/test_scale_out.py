"""Adding a fourth node: HAProxy is reloaded with it, and every player's socket comes back through the new
configuration (as they do when the old HAProxy process closes its sockets after a reload). Only the rooms
the consistent ring gives to the new node move, each once (one hand-over by its old owner, one claim by
the new one); every other room stays where it was.
"""

from __future__ import annotations

import asyncio

import httpx

from tests.cluster.conftest import MakeCluster
from tests.cluster.games import open_tables, reconnect
from tests.cluster.harness import Cluster

ROOMS = 40


def counters(cluster: Cluster, name: str) -> dict[str, float]:
    found = {}
    for i in cluster.nodes:
        text = httpx.get(cluster.node_url(i) + "/metrics", timeout=5).text
        found[cluster.node_name(i)] = next(float(x.split()[1]) for x in text.splitlines() if x.startswith(name + " "))
    return found


async def test_a_fourth_node_takes_only_its_share_and_each_room_moves_once(make_cluster: MakeCluster) -> None:
    cluster = await asyncio.to_thread(make_cluster, 3)
    async with open_tables(cluster.ws_url, ROOMS) as tables:
        for table in tables:
            await table.into_play()  # no timer runs now: nobody moves, the state stays as it is
        before = await asyncio.to_thread(cluster.owners)
        handed_before = await asyncio.to_thread(counters, cluster, "crisp_rooms_handed_over_total")

        fourth = await asyncio.to_thread(cluster.add_node)
        new = cluster.node_name(fourth)
        for table in tables:
            for seat in table.seats:
                await reconnect(seat)
        after = await asyncio.to_thread(cluster.owners)
        moved = {t.code for t in tables if after[t.code] != before[t.code]}
        assert moved, "the new node took no room"
        assert all(after[code] == new for code in moved), {c: (before[c], after[c]) for c in moved}
        stayed = [t for t in tables if t.code not in moved]
        assert stayed, "every room moved"
        # Each moved room was handed over once and claimed once; the others were not handed over.
        handed = await asyncio.to_thread(counters, cluster, "crisp_rooms_handed_over_total")
        claimed = await asyncio.to_thread(counters, cluster, "crisp_rooms_claimed_total")
        assert sum(handed.values()) - sum(handed_before.values()) == len(moved), (handed_before, handed)
        assert claimed[new] == len(moved)
        # Every seat came back to what it had seen, on the room's owner.
        for table in tables:
            for seat in table.seats:
                assert len(seat.cuts) == 1
                assert seat.cuts[0].after == seat.cuts[0].before
        print(f"\n{len(moved)} of {ROOMS} rooms moved to the fourth node, each once")
