"""A node dies (kill -9) in the middle of 50 games played through HAProxy by three nodes.

Its rooms' leases run out (3 s here); each room's first socket to come back reaches the next node on the
ring, which claims the room and rebuilds it from its record. Then:

* every game of the dead node goes on within 15 s, each seat back to the cards, turn and totals it last
  saw (or, for a move under way at the kill, the record shows the room went on from what it saw);
* no room of the other nodes was cut;
* every game is played to its end, and every record replays with nothing refused to the totals its players
  saw.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter

from tests.cluster.conftest import MakeCluster
from tests.cluster.games import check_records, open_tables, play_all

GAMES = 50


async def test_kill_9_of_a_node_during_50_games(make_cluster: MakeCluster) -> None:
    cluster = await asyncio.to_thread(make_cluster, 3)
    async with open_tables(cluster.ws_url, GAMES) as tables:
        players = play_all(tables)
        await asyncio.sleep(5)  # every table into its first rounds
        assert not any(p.done() for p in players), "a game ended before the kill: make them longer"
        owners = await asyncio.to_thread(cluster.owners)
        on = Counter(owners[t.code] for t in tables)
        assert len(on) == 3, on  # the rooms spread over the three nodes
        victim = on.most_common(1)[0][0]
        doomed = {t.code for t in tables if owners[t.code] == victim}
        killed_at = time.monotonic()
        await asyncio.to_thread(cluster.kill, cluster.index_of(victim))
        try:
            await asyncio.wait_for(asyncio.gather(*players), 300)
        except TimeoutError:
            stuck = [(t.code, s.name, s.client.phase, s.client.messages[-2:]) for t in tables for s in t.seats]
            raise AssertionError(f"games did not end: {[x for x in stuck if x[2] != 'game_over']}") from None

        back: list[float] = []
        for table in tables:
            for seat in table.seats:
                if table.code not in doomed:
                    cuts = [(round(c.at - killed_at, 2), c.moved, c.how) for c in seat.cuts]
                    assert cuts == [], f"{table.code}/{seat.name} was on a live node, yet cut (s after the kill)"
                    continue
                assert len(seat.cuts) == 1, (table.code, seat.name, seat.cuts)
                cut = seat.cuts[0]
                assert cut.back_at is not None
                back.append(cut.back_at - killed_at)
        assert max(back) < 15, sorted(back)
        owners = await asyncio.to_thread(cluster.owners)
        assert victim not in owners.values()
        comebacks = await check_records(cluster.url, tables)
        print(
            f"\n{len(doomed)} of {GAMES} rooms on the killed node; seats back after "
            f"{min(back):.2f}-{max(back):.2f} s; comebacks {comebacks}"
        )
