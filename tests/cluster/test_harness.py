"""The cluster harness and the shipped HAProxy configuration: three nodes behind HAProxy, a room's requests
always on one node, rooms spread over the nodes, a dead or frozen node out of the ring within seconds, a node
added with a reload taking over only its share of the ring.

Which node answered is the ``node`` of ``/healthz`` (``/healthz?room=X`` is hashed as ``/ws?room=X``), or
HAProxy's ``X-Served-By`` where the server does not say it."""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import subprocess
import time
from pathlib import Path

import httpx

from crisp_server.remote.client import CrispClient
from crisp_server.rooms.tokens import CODE_ALPHABET, CODE_LENGTH
from tests.cluster.harness import HAPROXY_CFG, ROOT, Cluster, haproxy_binary, notable, require, wait_for

#: Room codes as the server makes them (a fixed draw: the same test every run).
CODES = ["".join(random.Random(n).choices(CODE_ALPHABET, k=CODE_LENGTH)) for n in range(150)]


def routes(cluster: Cluster, codes: list[str] = CODES, timeout: float = 5) -> dict[str, str | None]:
    return {code: cluster.served_by(code, timeout=timeout) for code in codes}


def test_shipped_config_is_valid(tmp_path: Path) -> None:
    """deploy/haproxy.cfg as compose.scale.yaml runs it (no variables: the defaults) and as the tests do."""
    binary = haproxy_binary()
    require(binary is not None, "no haproxy (apt-get install haproxy)")
    assert binary is not None
    bare = {"PATH": os.environ.get("PATH", "")}
    done = subprocess.run(
        [binary, "-c", "-f", str(HAPROXY_CFG)], env=bare, capture_output=True, text=True, timeout=30, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    unknown = "could not resolve address"  # crisp1..3 exist in compose's network only: started down, resolved later
    assert all(unknown in line for line in done.stderr.splitlines() if "[WARNING]" in line), done.stderr
    # Four nodes: the fourth server line is there once its address is set.
    with contextlib.closing(Cluster(tmp_path / "c", "postgresql+asyncpg://unused@127.0.0.1/unused", 4)) as four:
        assert "Configuration file is valid" in four.check_haproxy_config()
    # compose.scale.yaml runs this file, with the names and addresses of its defaults.
    compose = (ROOT / "compose.scale.yaml").read_text()
    assert "./deploy/haproxy.cfg:/usr/local/etc/haproxy/haproxy.cfg:ro" in compose
    config = HAPROXY_CFG.read_text()
    for n in (1, 2, 3):
        assert f"CRISP_NODE: crisp{n}\n" in compose
        assert f'"${{CRISP_NODE{n}_NAME-crisp{n}}}" "${{CRISP_NODE{n}_ADDR-crisp{n}:8000}}" id {n}\n' in config
    assert "CRISP_NODE4_ADDR: crisp4:8000\n" in compose


def test_a_room_stays_on_its_node_and_rooms_spread(cluster: Cluster) -> None:
    names = {cluster.node_name(i) for i in cluster.nodes}
    answer = httpx.get(cluster.url + "/healthz", timeout=5)
    assert answer.status_code == 200, answer.text
    assert answer.headers["x-served-by"] in names
    assert int(cluster.haproxy_pidfile.read_text().split()[0]) == cluster.haproxy_pid

    first = routes(cluster)
    assert set(first.values()) <= names, first
    # The same room, the same node: again on the kept-alive connection (HAProxy balances every request on its
    # own, not the connection), and on new connections.
    assert routes(cluster) == first
    for code in CODES[:20]:
        response = httpx.get(cluster.url + "/healthz", params={"room": code}, timeout=5)
        assert response.headers["x-served-by"] == first[code], code
    # Spread: each of the three nodes has a fair share of 150 rooms (a third each would be 50).
    shares = {name: sum(node == name for node in first.values()) for name in names}
    assert all(share >= 25 for share in shares.values()), shares
    # No room: round robin over all of them.
    assert {cluster.served_by(None) for _ in range(9)} == names

    started = time.monotonic()
    fourth = cluster.add_node()
    added = time.monotonic() - started
    new = cluster.node_name(fourth)
    after = routes(cluster)
    moved = {code for code in CODES if after[code] != first[code]}
    # Only rooms moving to the new node move; about a quarter of them.
    assert all(after[code] == new for code in moved), {code: (first[code], after[code]) for code in moved}
    assert 15 <= len(moved) <= 60, len(moved)
    print(f"shares {shares}; add_node (start, reload, up) {added:.1f} s; {len(moved)} of {len(CODES)} rooms moved")


def test_a_dead_or_frozen_node_leaves_the_ring(cluster: Cluster) -> None:
    first = routes(cluster)
    theirs = [code for code in CODES if first[code] == "node2"]
    others = [code for code in CODES if first[code] != "node2"]
    assert theirs
    assert others

    # SIGKILL: the next health check (every second) fails, its rooms go to the other nodes, no other room moves.
    cluster.kill(2)
    killed = time.monotonic()
    wait_for(lambda: cluster.served_by(theirs[0], timeout=1) not in (None, "node2"), 5, "rerouted")
    rerouted = time.monotonic() - killed
    assert rerouted < 3, rerouted
    assert cluster.server_states()["node2"] == "DOWN"
    assert all(node not in (None, "node2") for node in routes(cluster, theirs).values())
    assert routes(cluster, others) == {code: first[code] for code in others}

    # Back (same name and port): once HAProxy saw it up twice, its rooms are its own again.
    cluster.start(2)
    back = cluster.wait_state(2, "UP", 10)
    assert routes(cluster) == first

    # SIGSTOP: a frozen node accepts connections but never answers; the check's 3 s timeout takes it out.
    # (A request sent to it meanwhile waits: its rooms are asked for only once it is out.)
    victims = [code for code in CODES if first[code] == "node3"]
    cluster.stop(3)
    frozen = cluster.wait_state(3, "DOWN", 10)
    assert frozen < 5, frozen
    assert all(node not in (None, "node3") for node in routes(cluster, victims).values())
    cluster.cont(3)
    cluster.wait_state(3, "UP", 10)
    assert routes(cluster) == first

    # SIGTERM: the node drains and exits; HAProxy stops sending it anything.
    assert cluster.terminate(1) == 0
    assert not cluster.running(1)
    cluster.wait_state(1, "DOWN", 5)
    assert all(node not in (None, "node1") for node in routes(cluster).values())
    assert "harness: starting node1" in cluster.logs(1)
    print(f"killed: rerouted in {rerouted:.1f} s; restarted: up in HAProxy {back:.1f} s; frozen: out in {frozen:.1f} s")


async def test_a_room_through_haproxy_lives_on_the_node_its_code_hashes_to(cluster: Cluster) -> None:
    """A room made on a plain /ws, then reached at /ws?room=CODE as the protocol says: its owner (room_owners)
    becomes the node HAProxy hashes its code to, and both players play there. The room is made on node1
    until its code hashes to another node: the owner changes on the way."""
    for _ in range(20):
        async with CrispClient.connect(cluster.node_url(1).replace("http", "ws") + "/ws") as ana:
            code = await ana.create("Ana")
            token = ana.token
        hashed = cluster.served_by(code)
        if hashed != "node1":
            break
    assert token is not None
    assert hashed not in (None, "node1")
    assert cluster.owners()[code] == "node1"
    async with (
        CrispClient.connect(cluster.ws_url, room=code) as ana,
        CrispClient.connect(cluster.ws_url, room=code) as ben,
    ):
        await ana.resume(code, token)
        await ben.join(code, "Ben")
        deadline = time.monotonic() + 10
        while cluster.owners().get(code) != hashed:
            assert time.monotonic() < deadline, f"{code}: owners {cluster.owners()}, hashed to {hashed}"
            await asyncio.sleep(0.1)
        await ana.start()
        await ben.wait_for(lambda c: c.phase not in (None, "lobby"), 5, "the deal")


def test_a_failed_tests_report_shows_how_connections_ended_at_any_time(tmp_path: Path) -> None:
    log = tmp_path / "node.log"
    log.write_text(
        "INFO crisp.cluster: room claimed room=QDWR9R\n"
        + 'INFO uvicorn.access: "GET /healthz HTTP/1.1" 200\n' * 500
        + "INFO crisp.web: dropping a connection that does not keep up (1013)\n"
        + "WARNING crisp.rooms: room AB: another node holds it now\n"
    )
    assert notable(log).splitlines() == [
        "INFO crisp.cluster: room claimed room=QDWR9R",
        "INFO crisp.web: dropping a connection that does not keep up (1013)",
        "WARNING crisp.rooms: room AB: another node holds it now",
    ]
    assert notable(log, most=1).splitlines() == ["WARNING crisp.rooms: room AB: another node holds it now"]
    assert notable(tmp_path / "missing.log").startswith("(")
