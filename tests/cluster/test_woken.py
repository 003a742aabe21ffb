"""A node frozen (SIGSTOP) in the middle of a PostgreSQL transaction, past its leases, is woken (SIGCONT) after
PostgreSQL ended that transaction and another node took its rooms over.

On waking, everything the node had pending runs at once: its commit fails on a dead connection, the rooms'
timers fire (a crisp window closes), the lease renewal starts. None of it may reach the players' old
sockets: the node cannot know whether it still holds a room, so each old socket of its rooms receives
exactly one frame after the freeze, ``moved``, and is closed with 4005 (no ``unavailable``, no ``update``).
The rooms play on at the other node with nothing lost, and the woken node is healthy again by itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import signal
import time
from collections import Counter

import asyncpg
import httpx
from sqlalchemy.engine import make_url

from crisp_server.remote.client import CLOSE_MOVED, CrispClient
from tests.cluster.conftest import MakeCluster
from tests.cluster.games import Table, open_tables
from tests.cluster.harness import Cluster
from tests.cluster.test_fencing import resume_through
from tests.e2e.continuity import essentials, next_move

TABLES = 8


def _beyond(mark: int, stop: asyncio.Event, c: CrispClient) -> bool:
    return len(c.messages) > mark or stop.is_set()


async def keep_moving(c: CrispClient, stop: asyncio.Event) -> None:
    """Play the seat as fast as the rules let it, until ``stop``: the node commits all the time."""
    while not stop.is_set():
        mark = len(c.messages)
        move = next_move(c)
        if move is not None:
            await c.send(move)
        with contextlib.suppress(TimeoutError):
            await c.wait_for(functools.partial(_beyond, mark, stop), timeout=0.3)


async def freeze_in_a_transaction(cluster: Cluster, i: int, db: asyncpg.Connection) -> tuple[int, str]:
    """SIGSTOP node ``i`` at a moment one of its sessions is inside a group commit of its rooms: stopped, then
    looked at (``application_name`` names the node), and woken to try again if it was not. The backend's pid
    and its last statement."""
    name = f"crisp {cluster.node_name(i)}"
    for _ in range(2000):
        os.kill(cluster.pid(i), signal.SIGSTOP)
        await asyncio.sleep(0.02)  # a statement under way when it stopped ends: idle in the transaction
        rows = await db.fetch(
            "SELECT pid, query FROM pg_stat_activity WHERE application_name = $1 AND state = 'idle in transaction'",
            name,
        )
        for row in rows:
            query = str(row["query"])
            # A group commit: past its fence (the lease rows locked FOR SHARE), or writing the rooms' rows
            # (not a lease statement, a read, or a transaction only begun).
            written = query.lstrip().upper().startswith(("INSERT", "UPDATE", "DELETE")) and "room_owners" not in query
            if "FOR SHARE" in query or written:
                return int(row["pid"]), query
        os.kill(cluster.pid(i), signal.SIGCONT)
        await asyncio.sleep(0.003 * (len(rows) + 1))
    raise AssertionError(f"node{i} was never caught inside a transaction")


async def test_a_node_woken_after_losing_its_leases_sends_only_moved(make_cluster: MakeCluster) -> None:
    cluster = await asyncio.to_thread(make_cluster, 2)
    url = make_url(cluster.database_url)
    db = await asyncpg.connect(
        user=url.username, password=url.password, host=url.host, port=url.port or 5432, database=url.database
    )
    async with contextlib.AsyncExitStack() as stack:
        stack.push_async_callback(db.close)
        tables = await stack.enter_async_context(open_tables(cluster.ws_url, TABLES))
        for table in tables:
            await table.into_play()
        owners = await asyncio.to_thread(cluster.owners)
        frozen_name, _ = Counter(owners[t.code] for t in tables).most_common(1)[0]
        frozen = cluster.index_of(frozen_name)
        mine: list[Table] = [t for t in tables if owners[t.code] == frozen_name]
        old = [seat.client for t in mine for seat in t.seats]

        stop = asyncio.Event()
        movers = [asyncio.ensure_future(keep_moving(c, stop)) for c in old]
        await asyncio.sleep(1)
        backend, statement = await freeze_in_a_transaction(cluster, frozen, db)
        stop.set()
        await asyncio.gather(*movers)
        await asyncio.sleep(0.5)  # what the node sent before it stopped reaches its clients
        marks = [len(c.messages) for c in old]
        before = [essentials(c.state) for c in old if c.state is not None]
        assert len(before) == len(old)

        # Past the lease (3 s), PostgreSQL ends the transaction (as idle_in_transaction_session_timeout does).
        await asyncio.sleep(3.5)
        assert await db.fetchval("SELECT pg_terminate_backend($1)", backend), statement
        fresh = [await resume_through(cluster.ws_url, t.code, seat.token, stack) for t in mine for seat in t.seats]
        assert [essentials(c.state) for c in fresh if c.state is not None] == before
        owners = await asyncio.to_thread(cluster.owners)
        assert all(owners.get(t.code) not in (None, frozen_name) for t in mine), owners

        logged_before = len(cluster.logs(frozen))
        await asyncio.to_thread(cluster.cont, frozen)
        for c in old:
            await c.wait_for(lambda c: c.closed is not None, timeout=15, what="the woken node to send its players away")
        seen = [[m["type"] for m in c.messages[mark:]] for c, mark in zip(old, marks, strict=True)]
        assert seen == [["moved"]] * len(old), (statement, seen)
        assert [c.close_code for c in old] == [CLOSE_MOVED] * len(old)

        # The woken node is healthy again by itself (nothing of it waits for the database).
        async with httpx.AsyncClient(base_url=cluster.node_url(frozen), timeout=2) as http:
            deadline = time.monotonic() + 10
            while (status := (await http.get("/healthz")).status_code) != 200 and time.monotonic() < deadline:
                await asyncio.sleep(0.2)
            assert status == 200
        assert "waits for the database" not in cluster.logs(frozen)
        # Waking is expected: what it finds (a connection PostgreSQL ended, an operation cut off) is said at
        # WARNING at most, never as an ERROR that an operator would have to look into.
        woken = cluster.logs(frozen)[logged_before:]
        errors = [line for line in woken.splitlines() if " ERROR " in line or "Traceback" in line]
        assert not errors, "\n".join(errors)

        # The rooms play on at the other node, from what their players last saw.
        never = asyncio.Event()
        owners = await asyncio.to_thread(cluster.owners)
        assert all(owners.get(t.code) not in (None, frozen_name) for t in mine), owners
        for k in range(0, len(fresh), 2):
            pair = fresh[k : k + 2]
            assert all(c.closed is None for c in pair)
            mover = next((c for c in pair if next_move(c) is not None), None)
            if mover is None:  # (the draw block of a fresh move): the clock lets someone move soon
                await asyncio.sleep(2)
                mover = next(c for c in pair if next_move(c) is not None)
            move = next_move(mover)
            assert move is not None
            mark = len(pair[1 - pair.index(mover)].messages)
            await mover.send(move)
            other = pair[1 - pair.index(mover)]
            await other.wait_for(functools.partial(_beyond, mark, never), what="the move")
