"""A rolling restart: the three nodes are restarted one after the other (SIGTERM: each drains, exits, and
starts again) while 50 games play through HAProxy.

No game is lost: every game is played to its end and its record replays with nothing refused; each seat
sent to another node comes back there within 3 s to what it last saw (what a node committed before the
hand-over reached every seat before ``moved``); no seat is ever cut without ``moved``.
"""

from __future__ import annotations

import asyncio
import time

from tests.cluster.conftest import MakeCluster
from tests.cluster.games import check_records, open_tables, play_all

GAMES = 50


async def test_a_rolling_restart_of_three_nodes_during_50_games(make_cluster: MakeCluster) -> None:
    cluster = await asyncio.to_thread(make_cluster, 3)
    async with open_tables(cluster.ws_url, GAMES) as tables:
        players = play_all(tables)
        await asyncio.sleep(3)
        exits = []
        started = time.monotonic()
        for i in sorted(cluster.nodes):
            exits.append(await asyncio.to_thread(cluster.terminate, i))
            await asyncio.to_thread(cluster.start, i)
            await asyncio.to_thread(cluster.wait_state, i, "UP", 10)
        restarted = time.monotonic() - started
        assert exits == [0, 0, 0]
        assert not all(p.done() for p in players), "every game ended during the restarts: make them longer"
        try:
            await asyncio.wait_for(asyncio.gather(*players), 300)
        except TimeoutError:
            stuck = [(t.code, s.name, s.client.phase) for t in tables for s in t.seats if s.client.phase != "game_over"]
            raise AssertionError(f"games did not end: {stuck}") from None

        pauses = []
        for table in tables:
            for seat in table.seats:
                for cut in seat.cuts:
                    assert cut.moved, (table.code, seat.name, "cut without moved")
                    assert cut.back_at is not None
                    pauses.append(cut.back_at - cut.at)
        assert pauses, "no room was handed over"
        assert max(pauses) < 3, sorted(pauses)[-10:]
        comebacks = await check_records(cluster.url, tables)
        assert comebacks["further"] == 0, comebacks
        pauses.sort()
        print(
            f"\nrestarted 3 nodes in {restarted:.1f} s; {len(pauses)} seats moved; pause p50 "
            f"{pauses[len(pauses) // 2]:.2f} s, max {pauses[-1]:.2f} s"
        )
