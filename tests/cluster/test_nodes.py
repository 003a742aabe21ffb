"""Two nodes of a cluster in this process (two apps on one PostgreSQL database, each on its own port),
reached directly by real WebSocket clients: a room is claimed by the node a socket for it reaches, handed
over when another node asks for it (after everything it committed has been sent), lost at once when its
lease goes to another node, and drained on SIGTERM; the lobby's reads answer on any node.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
from fastapi import FastAPI
from sqlalchemy import text
from websockets.asyncio.client import connect

from crisp_server.remote.client import CLOSE_MOVED, CrispClient
from crisp_server.rooms import cluster as cluster_module
from crisp_server.rooms.cluster import Cluster
from crisp_server.rooms.messages import Inbound
from crisp_server.settings import Settings
from crisp_server.web.app import create_app
from tests.e2e.test_restart import essentials, into_play
from tests.web.harness import uvicorn_serving


class Node:
    def __init__(self, app: FastAPI, port: int) -> None:
        self.app = app
        self.port = port
        self.ws = f"ws://127.0.0.1:{port}/ws"
        self.http = f"http://127.0.0.1:{port}"

    @property
    def cluster(self) -> Cluster:
        found: Cluster = self.app.state.registry.cluster
        return found

    @property
    def rooms(self) -> dict[str, Any]:
        found: dict[str, Any] = self.app.state.registry.rooms
        return found


@contextlib.asynccontextmanager
async def node(pg_url: str, tmp_path: Path, name: str, **settings: Any) -> AsyncIterator[Node]:
    options: dict[str, Any] = {
        "cluster": True,
        "node": name,
        "database_url": pg_url,
        "data_dir": tmp_path / name,
        "lease_seconds": 3,
        "lease_renew_seconds": 0.5,
        "lookup_burst": 100_000,
        "lookup_per_minute": 100_000,
        **settings,
    }
    app = create_app(Settings(**options))
    async with uvicorn_serving(app, lifespan="on") as port:
        node = Node(app, port)
        await asyncio.wait_for(node.cluster.listener.connected.wait(), 10)
        yield node


@pytest.fixture
async def nodes(pg_url: str, tmp_path: Path) -> AsyncIterator[tuple[Node, Node]]:
    async with node(pg_url, tmp_path, "a") as a, node(pg_url, tmp_path, "b") as b:
        yield a, b


def state(client: CrispClient) -> dict[str, Any]:
    assert client.state is not None
    return client.state


async def get(url: str) -> httpx.Response:
    async with httpx.AsyncClient() as client:
        return await client.get(url)


async def owner(n: Node, code: str) -> str | None:
    return (await n.cluster.leases.owners_of([code])).get(code)


async def test_a_room_goes_to_the_node_its_next_socket_reaches_and_play_goes_on(nodes: tuple[Node, Node]) -> None:
    a, b = nodes
    async with CrispClient.connect(a.ws) as ana:
        code = await ana.create("Ana")
        assert await owner(a, code) == "a"
        # The room's facts answer on b too (from the database).
        info = (await get(f"{b.http}/api/rooms/{code}")).json()
        assert info["players"] == ["Ana"]
        assert info["joinable"] is True
        assert (await get(f"{b.http}/api/rooms/{code}/qr.svg")).status_code == 200
        assert (await get(f"{b.http}/api/rooms/ZZZZZZ")).status_code == 404
        # So does a device's question about its seat (the seats' token hashes as last committed).
        async with httpx.AsyncClient(base_url=b.http) as http:
            for token, held in ((ana.token, True), ("not-a-token", False)):
                answer = await http.get(f"/api/rooms/{code}/seat", headers={"Authorization": f"Bearer {token}"})
                lobby = {"left": False, "phase": "lobby", "joinable": True}
                assert answer.json() == {"held": held, "seat": 0 if held else None, **lobby}
        started = time.monotonic()
        async with CrispClient.connect(b.ws, room=code) as ben:
            await ben.join(code, "Ben")
            took = time.monotonic() - started
            assert took < 2, took
            # a handed the room over: Ana is told to reconnect, and finds it on b.
            await ana.wait_for(lambda c: c.closed is not None, what="the move")
            assert ana.moved
            assert ana.close_code == CLOSE_MOVED
            assert ana.messages[-1]["type"] == "moved"
            assert code not in a.rooms
            assert code in b.rooms
            assert await owner(a, code) == "b"
            async with CrispClient.connect(b.ws, room=code) as ana2:
                await ana2.resume(code, ana.token or "")
                assert [s["name"] for s in state(ana2)["room"]["seats"]] == ["Ana", "Ben"]
                await ana2.start()
                await into_play(ana2, ben)
                assert a.cluster.handed_over == 1
                assert b.cluster.claimed == 1
                metrics = (await get(f"{b.http}/metrics")).text
                assert "crisp_rooms_claimed_total 1.0" in metrics


async def test_what_was_committed_before_a_hand_over_reaches_every_seat_before_moved(
    nodes: tuple[Node, Node],
) -> None:
    """A move whose commit is under way when the room is asked for goes out to every seat first: the state
    each one last saw is the one the new node rebuilds."""
    a, b = nodes
    async with CrispClient.connect(a.ws) as ana, CrispClient.connect(a.ws) as ben:
        code = await ana.create("Ana")
        await ben.join(code, "Ben")
        await ana.start()
        await into_play(ana, ben)
        turn = state(ana)["table"]["round"]["turn"]
        mover = next(c for c in (ana, ben) if state(c)["you"]["seat"] == turn)
        room = a.rooms[code]
        posted = room.post
        in_flight: list[int] = []

        def post_then_ask(message: Any) -> None:
            # The room is asked for right after it took the draw, while the draw's commit is under way.
            posted(message)
            if isinstance(message, Inbound) and message.message.type == "draw":
                in_flight.append(room._in_flight)
                a.cluster._asked(code)

        room.post = post_then_ask
        r = state(mover)["table"]["round"]
        await asyncio.sleep(max(0, r["may_draw_at"] - r["now"]) / 1000 + 0.1)
        await mover.send({"type": "draw", "source": "deck"})
        for c in (ana, ben):
            await c.wait_for(lambda c: c.closed is not None, what="the move")
            assert c.moved
            updates = [m for m in c.messages if m["type"] == "update"]
            drawn = updates[-1]["table"]["round"]["drawn"]
            assert drawn is not None, (mover.errors, [m["type"] for m in c.messages][-6:])  # shown before moved
        assert in_flight == [1]
        last = {c: essentials(state(c)) for c in (ana, ben)}
        async with CrispClient.connect(b.ws, room=code) as ana2, CrispClient.connect(b.ws, room=code) as ben2:
            await ana2.resume(code, ana.token or "")
            await ben2.resume(code, ben.token or "")
            for before, after in ((ana, ana2), (ben, ben2)):
                now = essentials(state(after))
                assert now == last[before]


async def test_a_node_that_lost_a_lease_stops_the_room_at_once(nodes: tuple[Node, Node]) -> None:
    """Another node took the room (its lease ran out while this node was cut off): the renewal finds it
    gone, the room stops here and its players are sent to reconnect; nothing more is written by this node."""
    a, b = nodes
    async with CrispClient.connect(a.ws) as ana:
        code = await ana.create("Ana")
        async with a.app.state.store.engine.begin() as conn:
            await conn.execute(text("UPDATE room_owners SET expires_at = now() - interval '1 second'"))
        assert await b.cluster.leases.claim(code) == 2
        await ana.wait_for(lambda c: c.closed is not None, timeout=3, what="the renewal to find the lease gone")
        assert ana.moved
        assert code not in a.rooms
        assert a.cluster.lost == 1
        metrics = (await get(f"{a.http}/metrics")).text
        assert "crisp_rooms_lost_total 1.0" in metrics


async def test_draining_hands_every_room_over_and_sends_newcomers_away(nodes: tuple[Node, Node]) -> None:
    a, b = nodes
    async with contextlib.AsyncExitStack() as stack:
        hosts = [await stack.enter_async_context(CrispClient.connect(a.ws)) for _ in range(3)]
        codes = [await h.create(f"Host{i}") for i, h in enumerate(hosts)]
        elsewhere = await stack.enter_async_context(CrispClient.connect(b.ws))
        other = await elsewhere.create("Bea")
        drain = asyncio.get_running_loop().create_task(a.cluster.drain())
        await asyncio.sleep(0.2)
        health = await get(f"{a.http}/healthz")
        assert health.status_code == 503
        assert "draining" in health.json()["reason"]
        assert (await get(f"{b.http}/healthz")).status_code == 200
        # A newcomer reaching the draining node for a room it does not have is sent away (to come back
        # through the balancer), and the draining node does not take that room from b.
        async with CrispClient.connect(a.ws, room=other) as late:
            await late.send({"type": "watch", "room": other})
            await late.wait_for(lambda c: c.closed is not None, timeout=3, what="moved")
            assert late.moved
        for h in hosts:
            await h.wait_for(lambda c: c.closed is not None, timeout=10, what="the hand-over")
            assert h.moved
        # Each host finds its room on b.
        for h, code in zip(hosts, codes, strict=True):
            async with CrispClient.connect(b.ws, room=code) as back:
                await back.resume(code, h.token or "")
                assert state(back)["room"]["code"] == code
        await asyncio.wait_for(drain, 15)
        assert a.rooms == {}
        assert sorted(await b.cluster.leases.owners()) == sorted([*codes, other])


async def test_a_room_whose_owner_died_is_claimed_when_its_lease_runs_out(nodes: tuple[Node, Node]) -> None:
    a, b = nodes
    async with CrispClient.connect(a.ws) as ana:
        code = await ana.create("Ana")
    await asyncio.sleep(0.3)
    # The room stays open (its creator may come back); its lease now belongs to a node that died.
    async with a.app.state.store.engine.begin() as conn:
        await conn.execute(text("UPDATE room_owners SET node = 'dead', expires_at = now() + interval '1.5 seconds'"))
    a.rooms.clear()
    started = time.monotonic()
    async with CrispClient.connect(b.ws, room=code) as ana2:
        await ana2.resume(
            code,
            ana.token or "",
        )
        waited = time.monotonic() - started
    assert 1.0 < waited < 4, waited
    assert await owner(b, code) == "b"


async def test_a_new_room_never_takes_the_code_of_an_open_room_of_another_node(
    nodes: tuple[Node, Node], monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b = nodes
    codes = iter(["SAMEAA", "SAMEAA", "OTHERB"])
    monkeypatch.setattr(cluster_module, "new_room_code", lambda: next(codes))
    async with CrispClient.connect(a.ws) as ana, CrispClient.connect(b.ws) as ben:
        assert await ana.create("Ana") == "SAMEAA"
        assert await ben.create("Ben") == "OTHERB"


async def test_a_commit_after_the_lease_went_elsewhere_is_fenced(nodes: tuple[Node, Node]) -> None:
    """The node does not know yet (its renewal has not run): its next commit of the room is refused in its
    own transaction; the change is neither written nor shown, and the players are sent to the new owner."""
    a, b = nodes
    renewer = a.cluster._renewer
    assert renewer is not None
    renewer.cancel()
    async with CrispClient.connect(a.ws) as ana:
        code = await ana.create("Ana")
        await ana.set_options(score_limit=100, turn_seconds=None, discard_draw=False)
        async with a.app.state.store.engine.begin() as conn:
            await conn.execute(text("UPDATE room_owners SET expires_at = now() - interval '1 second'"))
        assert await b.cluster.leases.claim(code) == 2
        seen = len(ana.messages)
        await ana.send({"type": "options", "score_limit": 150, "turn_seconds": 60, "discard_draw": True})
        await ana.wait_for(lambda c: c.closed is not None, timeout=3, what="the fence")
        assert ana.moved
        assert [m["type"] for m in ana.messages[seen:]] == ["moved"]
        assert a.cluster.lost == 1
        async with a.app.state.store.engine.connect() as conn:
            options = await conn.scalar(text("SELECT options FROM rooms WHERE code = :c"), {"c": code})
        assert options["score_limit"] == 100
        assert options["turn_seconds"] is None
        # b rebuilds the room from what was committed.
        async with CrispClient.connect(b.ws, room=code) as back:
            await back.resume(code, ana.token or "")
            assert state(back)["room"]["options"]["score_limit"] == 100


async def test_a_game_no_node_holds_is_abandoned_by_the_sweep(nodes: tuple[Node, Node]) -> None:
    """Its node died and its players never came back: after ``idle_game_hours`` the retention sweep of any
    node claims the room and ends the game abandoned (its record kept), as a restart does on one node."""
    a, b = nodes
    async with CrispClient.connect(a.ws) as ana, CrispClient.connect(a.ws) as ben:
        code = await ana.create("Ana")
        await ben.join(code, "Ben")
        await ana.start()
        await ana.wait_for(lambda c: c.phase == "peek", what="the deal")
    await asyncio.sleep(0.3)
    a.rooms.clear()  # as if a had died
    async with b.app.state.store.engine.begin() as conn:
        await conn.execute(text("UPDATE room_owners SET node = 'dead', expires_at = now() - interval '1 second'"))
        await conn.execute(text("UPDATE rooms SET updated_at = now() - interval '25 hours'"))
    assert await b.cluster.sweep_abandoned() == 1
    deadline = time.monotonic() + 5
    async with b.app.state.store.engine.connect() as conn:
        while time.monotonic() < deadline:
            closed = await conn.scalar(text("SELECT closed_at FROM rooms WHERE code = :c"), {"c": code})
            if closed is not None:
                break
            await conn.rollback()
            await asyncio.sleep(0.1)
        assert closed is not None
        assert await conn.scalar(text("SELECT abandoned FROM games")) is True
    # The lease goes after the room's last commit (a CI run under load took longer than 0.3 s).
    deadline = time.monotonic() + 5
    while (owners := await b.cluster.leases.owners()) and time.monotonic() < deadline:
        await asyncio.sleep(0.1)
    assert owners == {}
    assert await b.cluster.sweep_abandoned() == 0


async def test_what_a_client_sends_right_behind_an_entry_waits_for_it(nodes: tuple[Node, Node]) -> None:
    """An entry on a node of a cluster is claimed first (the room handed over by its owner, rebuilt from the
    database): the frames that follow it on the socket, with it or while it is claimed, are read after it."""
    a, b = nodes
    pings = 20
    async with CrispClient.connect(a.ws) as ana:
        code = await ana.create("Ana")
        async with connect(f"{b.ws}?room={code}") as ws:
            await ws.send(orjson.dumps({"type": "join", "room": code, "name": "Ben"}).decode())
            for _ in range(pings):
                await asyncio.sleep(0.002)  # the join read alone, then pings while its room is handed over
                await ws.send('{"type": "ping"}')
            got: list[dict[str, Any]] = []
            while sum(m["type"] == "pong" for m in got) < pings:
                got.append(orjson.loads(await asyncio.wait_for(ws.recv(), 10)))
    assert got[0]["type"] != "pong", [m["type"] for m in got]
    # Answered by the room Ben had joined (its version), not by the bridge before any room (version 0).
    assert all(m["v"] > 0 for m in got if m["type"] == "pong")
