"""Room leases and the fence, on a real PostgreSQL database, with two nodes' stores in this process.

A lease is claimed only when free, expired or one's own; every claim raises the epoch; a group commit
writes a room's changes only while its node holds that epoch, in the same transaction, so a node that lost
a room can never write to it again. And one node alone (no ``CRISP_CLUSTER``) has nothing of this.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from pathlib import Path

import asyncpg
import pytest
from pydantic import ValidationError
from sqlalchemy import text

from crisp_server.settings import Settings
from crisp_server.store.leases import Fenced, Leases, Listener, asyncpg_dsn
from crisp_server.store.operations import SaveRoom
from crisp_server.store.store import Store
from crisp_server.web.app import create_app


@pytest.fixture
async def two(pg_url: str) -> AsyncIterator[tuple[Store, Store]]:
    """Two nodes' stores, ``a`` and ``b``, each with its leases (10 s)."""
    stores = []
    for node in ("a", "b"):
        store = Store(pg_url, idle_in_transaction_ms=1000)
        store.leases = Leases(store.engine, node, 10)
        await store.start()
        stores.append(store)
    yield stores[0], stores[1]
    for store in stores:
        await store.close()


def room(code: str, phase: str = "lobby") -> SaveRoom:
    return SaveRoom(f"id-{code}", code, f"http://x/r/{code}", phase, 0, {"score_limit": 50}, ())


async def commit(store: Store, ops: list[SaveRoom], fence: tuple[str, int] | None) -> BaseException | None:
    """Submit ``ops`` with ``fence``; what the store answered (``None``: written)."""
    future: asyncio.Future[BaseException | None] = asyncio.get_running_loop().create_future()
    store.submit(ops, future.set_result, fence=fence)
    return await future


async def phase_of(store: Store, code: str) -> str | None:
    async with store.engine.connect() as conn:
        found: str | None = await conn.scalar(text("SELECT phase FROM rooms WHERE code = :c"), {"c": code})
        return found


async def expire(store: Store, code: str) -> None:
    """As if the owner had not renewed for a whole lease."""
    async with store.engine.begin() as conn:
        await conn.execute(
            text("UPDATE room_owners SET expires_at = now() - interval '1 second' WHERE code = :c"), {"c": code}
        )


async def test_a_lease_is_claimed_only_when_free_expired_or_ones_own(two: tuple[Store, Store]) -> None:
    a, b = (s.leases for s in two)
    assert a is not None
    assert b is not None
    assert await a.claim("AAAAAA") == 1
    assert await b.claim("AAAAAA") is None  # live, a's
    assert await a.claim("AAAAAA") == 2  # its own: a new epoch (a restarted process claims anew)
    owner = await b.owner("AAAAAA")
    assert owner is not None
    assert (owner.node, owner.epoch, owner.live) == ("a", 2, True)
    assert 9 < owner.remaining <= 10
    await a.release("AAAAAA", 1)  # an old epoch's release does nothing
    assert await b.claim("AAAAAA") is None
    await a.release("AAAAAA", 2)
    assert await b.claim("AAAAAA") == 3  # free: b's, the epoch goes on
    await expire(two[0], "AAAAAA")
    assert await a.claim("AAAAAA") == 4  # expired: anyone's
    assert await b.renew(["AAAAAA"]) == {}  # b lost it
    assert await a.renew(["AAAAAA", "BBBBBB"]) == {"AAAAAA": 4}
    assert await b.owners() == {"AAAAAA": "a"}
    assert await b.owners_of(["AAAAAA", "CCCCCC"]) == {"AAAAAA": "a"}
    await a.release_all()
    assert await a.owners() == {}
    assert await b.claim("AAAAAA") == 5


async def test_a_commit_is_fenced_once_another_node_holds_the_room(two: tuple[Store, Store]) -> None:
    store_a, store_b = two
    a, b = store_a.leases, store_b.leases
    assert a is not None
    assert b is not None
    epoch = await a.claim("FENCED")
    other = await a.claim("KEPTAA")
    assert epoch is not None
    assert other is not None
    assert await commit(store_a, [room("FENCED")], ("FENCED", epoch)) is None
    assert await phase_of(store_a, "FENCED") == "lobby"
    # b takes the room over after a's lease ran out (a was paused, say).
    await expire(store_a, "FENCED")
    taken = await b.claim("FENCED")
    assert taken == epoch + 1
    # a's next commits of that room are refused whole; another room of a in the same group is written.
    loop = asyncio.get_running_loop()
    fenced: asyncio.Future[BaseException | None] = loop.create_future()
    kept: asyncio.Future[BaseException | None] = loop.create_future()
    store_a.submit([room("FENCED", "play")], fenced.set_result, fence=("FENCED", epoch))
    store_a.submit([room("KEPTAA", "play")], kept.set_result, fence=("KEPTAA", other))
    assert isinstance(await fenced, Fenced)
    assert await kept is None
    assert await phase_of(store_a, "FENCED") == "lobby"
    assert await phase_of(store_a, "KEPTAA") == "play"
    # b, the owner now, writes.
    assert await commit(store_b, [room("FENCED", "peek")], ("FENCED", taken)) is None
    assert await phase_of(store_b, "FENCED") == "peek"
    # An old epoch of b's own is fenced too.
    assert isinstance(await commit(store_b, [room("FENCED", "play")], ("FENCED", epoch)), Fenced)


async def test_a_claim_waits_for_a_commit_under_way_and_a_stopped_transaction_ends(
    two: tuple[Store, Store], pg_url: str
) -> None:
    """The fence's FOR SHARE holds a claim back until the commit ends; a node stopped inside a transaction
    (its session idle in it) does not hold the claim for ever: the store's sessions end after 1 s here."""
    store_a, store_b = two
    a, b = store_a.leases, store_b.leases
    assert a is not None
    assert b is not None
    await a.claim("STUCKA")
    await expire(store_a, "STUCKA")
    async with store_a.engine.connect() as conn:
        assert await conn.scalar(text("SHOW idle_in_transaction_session_timeout")) == "1s"
    conn = await store_a.engine.connect()
    try:
        await conn.execute(text("SELECT epoch FROM room_owners WHERE code = 'STUCKA' FOR SHARE"))
        started = time.monotonic()
        # The claim waits for the lock; the session idle in its transaction is ended by PostgreSQL.
        assert await asyncio.wait_for(b.claim("STUCKA"), 10) == 2
        waited = time.monotonic() - started
        assert 0.8 < waited < 5, waited
    finally:
        with contextlib.suppress(Exception):
            await conn.close()


async def test_the_listener_hears_the_requests_for_its_own_node(two: tuple[Store, Store], pg_url: str) -> None:
    heard: list[str] = []
    listener = Listener(pg_url, "a", heard.append)
    listener.start()
    try:
        await asyncio.wait_for(listener.connected.wait(), 10)
        b = two[1].leases
        assert b is not None
        await b.ask_release("b", "NOTMEA")
        await b.ask_release("a", "FORMEA")
        deadline = time.monotonic() + 5
        while not heard and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
        await asyncio.sleep(0.2)
        assert heard == ["FORMEA"]
    finally:
        await listener.stop()
    assert asyncpg_dsn("postgresql+asyncpg://u:p@h:5/d") == "postgresql://u:p@h:5/d"


async def test_one_node_alone_writes_no_lease_and_runs_no_lease_statement(pg_url: str, tmp_path: Path) -> None:
    from crisp_server.remote.client import CrispClient
    from tests.web.harness import uvicorn_serving

    app = create_app(Settings(database_url=pg_url, data_dir=tmp_path))
    assert app.state.registry.cluster is None
    async with uvicorn_serving(app, lifespan="on") as port:
        assert app.state.store.leases is None
        async with CrispClient.connect(f"ws://127.0.0.1:{port}/ws", room="ABCDEF") as ana:
            code = await ana.create("Ana")
            async with CrispClient.connect(f"ws://127.0.0.1:{port}/ws", room=code) as ben:
                await ben.join(code, "Ben")
                await ana.start()
                await ana.wait_for(lambda c: c.phase == "peek", what="the deal")
    conn = await asyncpg.connect(asyncpg_dsn(pg_url))
    try:
        assert await conn.fetchval("SELECT count(*) FROM room_owners") == 0
        assert await conn.fetchval("SELECT count(*) FROM rooms") == 1
    finally:
        await conn.close()


def test_cluster_settings_need_postgresql_and_name_the_node(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ValidationError, match="CRISP_CLUSTER needs PostgreSQL"):
        Settings(cluster=True)
    with pytest.raises(ValidationError, match="CRISP_CLUSTER needs PostgreSQL"):
        Settings(cluster=True, database_url="sqlite:///x.sqlite3")
    with pytest.raises(ValidationError, match="at most half"):
        Settings(cluster=True, database_url="postgresql://u@h/d", lease_seconds=4, lease_renew_seconds=3)
    settings = Settings(cluster=True, database_url="postgresql://u@h/d", port=8123)
    assert settings.node_name().endswith(":8123")
    monkeypatch.setenv("CRISP_NODE", "crisp2")
    monkeypatch.setenv("CRISP_CLUSTER", "true")
    monkeypatch.setenv("CRISP_DATABASE_URL", "postgresql://u@h/d")
    assert Settings().node_name() == "crisp2"
    assert Settings().lease_seconds == 10
    assert Settings().lease_renew_seconds == 2
