"""A node whose connection budget a flood keeps spent stays in HAProxy's ring while it is healthy.

The shipped configuration takes a node out at its first failed check (``fall 1``, every second). Silent
connections from 40 addresses (a quarter of the budget each would be the per-address cap: far from it)
reach the node directly, 200 a second for 8 s: every connection beyond the budget is refused, but HAProxy's
checks come from a monitor's address (the trusted proxy's, loopback) and take the health reserve, so
``/healthz`` is answered 200 all along and the node never leaves the ring. A player through HAProxy still
gets a room from the other node meanwhile."""

from __future__ import annotations

import asyncio
import re
import resource
import time

from crisp_server.remote.client import CrispClient
from tests.cluster.conftest import MakeCluster
from tests.flood import Flood

#: Connections the flooded node may hold: its budget is its descriptor limit less what it holds at start and
#: the reserved descriptors, which the test sets to leave about this many.
BUDGET = 200


def _reserved_for(budget: int) -> int:
    """``CRISP_RESERVED_DESCRIPTORS`` that leaves a node (which raises its soft limit to the hard one it
    inherits from this process) a budget of about ``budget`` connections."""
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    limit = 1 << 20 if hard == resource.RLIM_INFINITY else hard
    return limit - budget


async def test_a_flooded_node_stays_up_in_haproxy(make_cluster: MakeCluster) -> None:
    env = {"CRISP_RESERVED_DESCRIPTORS": str(_reserved_for(BUDGET)), "CRISP_HEAD_TIMEOUT_SECONDS": "3"}
    cluster = await asyncio.to_thread(make_cluster, 2, env=env)
    flooded = 1
    name = cluster.node_name(flooded)
    port = int(cluster.node_url(flooded).rsplit(":", 1)[1])
    states: list[str] = []
    flood = Flood(port, [f"127.0.1.{i}" for i in range(1, 41)], rate=200)
    with flood.running():
        deadline = time.monotonic() + 8
        while time.monotonic() < deadline:
            states.append((await asyncio.to_thread(cluster.server_states)).get(name, "missing"))
            await asyncio.sleep(0.2)
        async with CrispClient.connect(cluster.ws_url) as player:  # through HAProxy, meanwhile
            assert len(await player.create("Ana")) == 6
    assert flood.opened > 1000
    assert flood.failed < flood.opened / 10, (flood.failed, flood.opened)
    assert len(states) > 20
    assert set(states) == {"UP"}, states
    log = cluster.logs(flooded)
    budget = re.search(r"up to (\d+) connections", log)
    assert budget is not None
    assert int(budget[1]) <= BUDGET
    assert "refused a connection (503)" in log  # the budget was spent
