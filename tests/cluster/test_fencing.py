"""A room's owner is frozen (SIGSTOP) until its lease runs out, another node takes the room, and the frozen
node comes back (SIGCONT) holding a move it had been sent meanwhile.

Its next commit of that room is refused (the fence: the epoch it holds is not the room's any more), or its
lease renewal finds the room gone first; either way the room stops there: nothing it accepted after the
other node took over is in the database or was shown to anyone, and its players' old sockets are told
``moved`` (4005). The players, back through HAProxy on the new owner, play on.
"""

from __future__ import annotations

import asyncio
import contextlib
import time

from websockets.exceptions import ConnectionClosed, InvalidHandshake

from crisp_server.remote.client import CLOSE_MOVED, CrispClient, ProtocolError
from tests.cluster.conftest import MakeCluster
from tests.cluster.games import Table
from tests.e2e.continuity import essentials, next_move


async def resume_through(ws: str, code: str, token: str, stack: contextlib.AsyncExitStack) -> CrispClient:
    """Resume the seat through HAProxy, again until a node takes it (the frozen one is out of the ring once
    its health checks time out; the other waits for the lease to run out)."""
    deadline = time.monotonic() + 30
    while True:
        inner = contextlib.AsyncExitStack()
        try:
            client = await inner.enter_async_context(CrispClient.connect(ws, room=code, open_timeout=2))
            await client.resume(code, token)
        except (OSError, TimeoutError, ConnectionError, ConnectionClosed, InvalidHandshake, ProtocolError):
            await inner.aclose()
            assert time.monotonic() < deadline, "the seat could not be resumed on another node"
            await asyncio.sleep(0.25)
            continue
        stack.push_async_callback(inner.aclose)
        return client


async def test_a_frozen_owner_is_fenced_after_another_node_took_its_room(make_cluster: MakeCluster) -> None:
    cluster = await asyncio.to_thread(make_cluster, 3)
    table = Table(cluster.ws_url)
    async with contextlib.AsyncExitStack() as stack:
        stack.push_async_callback(table.close)
        await table.open(score_limit=150)
        await table.into_play()
        clients = [seat.client for seat in table.seats]
        state = clients[0].state
        assert state is not None
        turn = state["table"]["round"]["turn"]
        mover = next(i for i, c in enumerate(clients) if c.seat == turn)
        r = state["table"]["round"]
        await asyncio.sleep(max(0, r["may_draw_at"] - r["now"]) / 1000 + 0.2)  # the draw block is over
        owner = (await asyncio.to_thread(cluster.owners))[table.code]
        frozen = cluster.index_of(owner)
        game_id = (await asyncio.to_thread(cluster.query, "SELECT id FROM games"))[0]["id"]

        await asyncio.to_thread(cluster.stop, frozen)
        marks = [len(c.messages) for c in clients]
        before = [essentials(c.state) for c in clients if c.state is not None]
        # The old socket's draw waits for the frozen node, which would accept it: it is its player's turn there.
        await clients[mover].send({"type": "draw", "from": "deck"})
        # The players give their silent sockets up and come back through HAProxy: another node takes the room
        # once the lease (3 s) has run out.
        fresh = [await resume_through(cluster.ws_url, table.code, seat.token, stack) for seat in table.seats]
        assert [essentials(c.state) for c in fresh if c.state is not None] == before
        new_owner = (await asyncio.to_thread(cluster.owners))[table.code]
        assert new_owner != owner
        # Play goes on there: the same draw, made for real.
        await fresh[mover].draw()
        drawn = fresh[mover].you.get("drawn_card")
        assert drawn is not None
        count = await asyncio.to_thread(cluster.query, "SELECT count(*) AS n FROM actions WHERE game_id = $1", game_id)

        await asyncio.to_thread(cluster.cont, frozen)
        for c in clients:
            await c.wait_for(lambda c: c.closed is not None, timeout=15, what="the old node to send its players away")
            assert c.close_code == CLOSE_MOVED
        for c, mark in zip(clients, marks, strict=True):
            # Nothing it accepted after the fence was shown: the old sockets got `moved`, and no update.
            assert [m["type"] for m in c.messages[mark:]] == ["moved"], c.messages[mark:]
        await asyncio.sleep(1)
        # ... nor written: the game's actions are the new owner's.
        again = await asyncio.to_thread(cluster.query, "SELECT count(*) AS n FROM actions WHERE game_id = $1", game_id)
        assert again == count
        assert (await asyncio.to_thread(cluster.owners))[table.code] == new_owner
        logs = cluster.logs(frozen)
        assert "another node holds it now" in logs
        # The players on the new owner saw nothing of it, and play on.
        for c in fresh:
            assert c.closed is None
        play_it = next_move(fresh[mover])
        assert play_it is not None
        await fresh[mover].request(play_it)
        assert fresh[1 - mover].state is not None
