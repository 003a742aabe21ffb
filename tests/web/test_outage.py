"""A database that cannot be written suspends the rooms whose commits failed, and they come back by themselves.

A real app with a SQLite store, real WebSockets, and a store whose writes fail while the test says so (as a
full disk makes them fail: ``sqlite3.OperationalError``; reads still work, as on a full disk). The players
keep their connections and are told ``unavailable``; nothing that was not saved is shown; moves are refused
with the code ``unavailable``; no clock runs out; ``/healthz`` says 503 with the reason and ``/metrics``
counts the failures and the time. When writes work again the room goes on from what the database has.
The real outages (PostgreSQL stopped, a full disk) are in tests/e2e/test_outage.py.
"""

from __future__ import annotations

import asyncio
import sqlite3
import time
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import httpx
import pytest

from crisp_server.remote.client import CrispClient
from crisp_server.store.operations import Op, SaveRoom, Written
from crisp_server.store.store import Store
from crisp_server.texts import CATALOGS
from tests.web.harness import Harness, running_server
from tests.web.test_metrics import _scrape


class Breakable:
    """Makes a store's writes fail while ``broken`` (its reads go on working), and notes when each was tried."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.broken = False
        self.tries: list[float] = []  # monotonic instants of the writes tried while broken
        # A commit on SQLite's fast path (at once, or after waiting its turn), or another through SQLAlchemy.
        self._write_fast = store._write_fast
        self._write = store._write
        store._write_fast = self.write_fast  # type: ignore[method-assign]
        store._write = self.write  # type: ignore[method-assign]

    def _try(self) -> None:
        if self.broken:
            self.tries.append(time.monotonic())
            raise sqlite3.OperationalError("database or disk is full")

    def write_fast(self, ops: Sequence[Op], written: Written) -> None:
        self._try()
        self._write_fast(ops, written)

    async def write(self, ops: Sequence[Op], written: Written) -> None:
        self._try()
        await self._write(ops, written)


@pytest.fixture
async def server(tmp_path: Path) -> AsyncIterator[Harness]:
    async with running_server(persist=True, data_dir=tmp_path) as harness:
        registry = harness.app.state.registry
        registry.retry_first, registry.retry_cap = 0.02, 0.16  # quick tries: the test waits for them
        yield harness


async def health(server: Harness) -> httpx.Response:
    async with httpx.AsyncClient(base_url=server.http) as http:
        return await http.get("/healthz")


def kinds_since(client: CrispClient, start: int) -> list[str]:
    return [m["type"] for m in client.messages[start:]]


def seen(state: dict[str, Any]) -> dict[str, Any]:
    """What a seat sees, without the clocks (a comeback gives the current move a fresh one)."""
    return {"table": state["table"], "you": state["you"], "phase": state["room"]["phase"]}


async def test_a_failed_commit_suspends_the_room_until_the_database_answers(server: Harness) -> None:
    breaker = Breakable(server.app.state.store)
    code, (ana, ben) = await server.table(["Ana", "Ben"], turn_seconds=30)
    mover, other = (ana, ben) if ana.my_turn() else (ben, ana)
    await mover.draw()
    drawn = mover.you["drawn_card"]
    await other.request({"type": "ping"})
    saved = {c: seen(c.state or {}) for c in (ana, ben)}
    assert (await health(server)).status_code == 200
    before = await _scrape(server.http)

    breaker.broken = True
    marks = {c: len(c.messages) for c in (ana, ben)}
    move = mover.plain_play()
    await mover.send(move)
    for c in (ana, ben):
        await c.wait_for(lambda c: "unavailable" in kinds_since(c, marks[c]), what="unavailable")
    await mover.wait_for(lambda c: any(e["code"] == "unavailable" for e in c.errors), what="the move refused")
    # Nothing that was not saved was shown to anyone; the connections are open.
    assert kinds_since(other, marks[other]) == ["unavailable"]
    assert kinds_since(mover, marks[mover]) == ["unavailable", "error"]
    assert {c: seen(c.state or {}) for c in (ana, ben)} == saved
    assert ana.closed is None
    assert ben.closed is None

    # While suspended: /healthz says why, the room is still there, moves are refused, no clock runs out.
    response = await health(server)
    assert response.status_code == 503
    assert response.json()["status"] == "unavailable"
    assert "database or disk is full" in response.json()["reason"]
    async with httpx.AsyncClient(base_url=server.http) as http:
        assert (await http.get(f"/api/rooms/{code}")).status_code == 200
    with pytest.raises(Exception, match="unavailable"):
        await mover.request(move)
    await server.advance(120_000)  # four turn clocks: nobody is timed out while the database is down
    await other.send({"type": "lang", "lang": "fr"})  # taken meanwhile: it changes nothing to save
    await other.send({"type": "sync"})  # answered with what holds: the room is unavailable
    assert (await other.next_message("unavailable"))["message"] == CATALOGS["fr"].unavailable
    assert "update" not in kinds_since(other, marks[other])

    # A player who comes back meanwhile (a reload) gets their seat, and is told the room is unavailable.
    token = other.token
    assert token is not None
    again = await server.client()
    await again.send({"type": "resume", "room": code, "token": token})
    await again.wait_for(lambda c: kinds_since(c, 0) == ["welcome", "unavailable"], what="welcome, unavailable")
    assert again.welcome is not None
    assert again.welcome["seat"] == other.seat
    await other.wait_for(lambda c: c.closed is not None, what="the older connection closed")
    assert other.messages[-1]["type"] == "replaced"

    tries = len(breaker.tries)
    await asyncio.sleep(0.5)
    assert len(breaker.tries) > tries, "the database is tried again"
    breaker.broken = False
    for c in (mover, again):
        await c.wait_for(
            lambda c: c.state is not None and {"type": "available"} in c.state["events"], what="the comeback"
        )
    assert (await health(server)).status_code == 200
    # The room goes on where the database's record ends: the drawn card is still in hand, with a fresh clock.
    assert mover.you["drawn_card"] == drawn
    assert seen(mover.state or {}) == {**saved[mover], "you": mover.you}
    assert mover.you == saved[mover]["you"]
    assert again.state is not None
    assert again.state["table"] == saved[other]["table"]
    assert mover.state is not None
    assert mover.state["clock"]["deadline_in"] > 25_000
    assert again.gaps == 0
    assert mover.gaps == 0
    await mover.request(move)

    after = await _scrape(server.http)
    failures = after["crisp_db_commit_failures_total"] - before.get("crisp_db_commit_failures_total", 0)
    assert failures == len(breaker.tries) >= 2
    assert after["crisp_db_suspended_seconds_total"] >= 0.5
    assert after["crisp_rooms_suspended"] == 0


async def test_a_database_another_process_locks_suspends_the_room_and_the_server_goes_on(server: Harness) -> None:
    """Another process holds SQLite's write lock (an operator's ``sqlite3`` shell in a transaction): the move's
    commit waits for it only briefly (``WRITER_BUSY_MS``: commits run on the event loop), then the room is
    suspended as in any outage. Meanwhile every other request is answered at once: a ``ping``, /healthz
    (503, "database is locked"), a new connection. Once the lock goes, the room comes back by itself."""
    store = server.app.state.store
    assert store._sqlite_path is not None
    code, (ana, ben) = await server.table(["Ana", "Ben"])
    mover, other = (ana, ben) if ana.my_turn() else (ben, ana)
    lock = sqlite3.connect(store._sqlite_path, isolation_level=None)
    try:
        lock.execute("BEGIN IMMEDIATE")
        marks = {c: len(c.messages) for c in (ana, ben)}
        await mover.send({"type": "draw"})
        for c in (ana, ben):
            await c.wait_for(lambda c: "unavailable" in kinds_since(c, marks[c]), what="unavailable")
        await mover.wait_for(lambda c: any(e["code"] == "unavailable" for e in c.errors), what="the draw refused")
        # The server is not held up by the lock: each try waits 0.1 s, not the 30 s a connection may wait.
        started = time.monotonic()
        for _ in range(5):
            assert await other.request({"type": "ping"}) == {"type": "pong", "v": other.v}
        response = await health(server)
        assert response.status_code == 503
        assert "database is locked" in response.json()["reason"]
        newcomer = await server.client()
        assert await newcomer.request({"type": "ping"}) == {"type": "pong", "v": 0}
        assert time.monotonic() - started < 5, "requests waited for the lock"
        assert mover.you["drawn_card"] is None, "nothing that was not saved is shown"
    finally:
        lock.execute("ROLLBACK")
        lock.close()
    for c in (ana, ben):
        await c.wait_for(
            lambda c: c.state is not None and {"type": "available"} in c.state["events"], what="the comeback"
        )
    assert (await health(server)).status_code == 200
    await mover.draw()
    assert mover.you["drawn_card"] is not None
    assert code


async def test_retries_back_off_up_to_the_cap(server: Harness) -> None:
    breaker = Breakable(server.app.state.store)
    _, (ana, ben) = await server.table(["Ana", "Ben"])
    mover = ana if ana.my_turn() else ben
    breaker.broken = True
    await mover.send({"type": "draw"})
    await mover.next_message("unavailable")
    await asyncio.sleep(1.2)
    breaker.broken = False
    await mover.wait_for(
        lambda c: c.state is not None and {"type": "available"} in c.state["events"], what="the comeback"
    )
    assert [m["type"] for m in mover.messages].count("unavailable") == 1, "told once, not at every try"
    gaps = [b - a for a, b in zip(breaker.tries, breaker.tries[1:], strict=False)]
    first, cap = 0.02, 0.16
    # Each wait is at least the back-off's (a sleep never ends early), and never much more than the cap.
    assert len(gaps) >= 3, gaps
    for i, gap in enumerate(gaps):
        assert gap >= min(first * 2**i, cap) * 0.9, gaps
    assert max(gaps) < cap + 0.3, gaps
    assert len(breaker.tries) <= 12, "back-off: a few tries a second, not a busy loop"


async def test_a_sit_that_was_not_saved_leaves_its_connection_in_no_room(server: Harness) -> None:
    breaker = Breakable(server.app.state.store)
    code, (ana,) = await server.lobby(["Ana"])
    viewer = await server.client()
    await viewer.watch(code)
    await ana.wait_for(lambda c: c.state is not None and c.state["room"]["spectators"] == 1, what="a spectator")
    breaker.broken = True
    mark = len(viewer.messages)
    await viewer.send({"type": "sit", "name": "Vic"})
    await viewer.wait_for(lambda c: "unavailable" in kinds_since(c, mark), what="unavailable")
    assert "welcome" not in kinds_since(viewer, mark)  # nobody hears of a seat the database lacks
    breaker.broken = False
    await ana.wait_for(
        lambda c: c.state is not None and {"type": "available"} in c.state["events"], what="the comeback"
    )
    await viewer.wait_for(lambda c: any(e["code"] == "unavailable" for e in c.errors), what="the sit refused")
    assert ana.state is not None
    assert [s["name"] for s in ana.state["room"]["seats"]] == ["Ana"]
    assert ana.state["room"]["spectators"] == 0
    # In no room now: it watches again, and sits again.
    assert await viewer.request({"type": "ping"}) == {"type": "pong", "v": 0}
    await viewer.watch(code)
    welcome = await viewer.sit("Vic")
    assert welcome["seat"] == 1


async def test_an_outage_no_room_waits_for_ends_when_the_database_answers(server: Harness) -> None:
    """A failed commit that suspended no room (in a cluster: its room was sent away as its lease may have run
    out) still starts the tries: nothing else would commit on a server its load balancer took out on 503."""
    store = server.app.state.store
    breaker = Breakable(store)
    breaker.broken = True
    with pytest.raises(sqlite3.OperationalError):
        await store.commit([SaveRoom("id-x", "XXXXXX", "http://x/r/XXXXXX", "lobby", 0, {}, ())])
    assert store.outage is not None
    assert not server.app.state.registry.suspended
    breaker.broken = False
    deadline = time.monotonic() + 3
    while (response := await health(server)).status_code != 200 and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    assert response.status_code == 200, response.text
