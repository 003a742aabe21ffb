"""A reconnect that reaches a frozen node (SIGSTOP) through HAProxy never hangs.

A frozen node's kernel still accepts connections, so until HAProxy's check marks the node down its rooms'
new sockets are sent there and their handshakes are never answered. The shipped configuration answers such
a handshake with 504 after its ``timeout server`` (5 s), and ``CrispClient.connect`` gives it up after
``OPEN_TIMEOUT_S`` by itself; the player tries again after a back-off and resumes on the node that takes the
room once the frozen one is out of the ring and its lease has run out.
"""

from __future__ import annotations

import asyncio
import contextlib
import time

from websockets.asyncio.client import connect as ws_connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidStatus

from crisp_server.remote.client import OPEN_TIMEOUT_S, CrispClient, ProtocolError, room_url
from tests.cluster.conftest import MakeCluster

#: The shipped configuration's ``timeout server``: how long HAProxy waits for a node's answer to a handshake.
HAPROXY_SERVER_TIMEOUT_S = 5.0
#: How much later than its limit a given-up handshake may end on this busy machine.
SLACK_S = 2.0


async def test_a_reconnect_to_a_frozen_node_gives_its_handshake_up_and_resumes_elsewhere(
    make_cluster: MakeCluster,
) -> None:
    cluster = await asyncio.to_thread(make_cluster, 3)
    async with contextlib.AsyncExitStack() as stack:
        ana = await stack.enter_async_context(CrispClient.connect(cluster.ws_url, open_timeout=20))
        code = await ana.create("Ana")
        token = ana.token
        assert token is not None
        # The room goes to the node its code hashes to once a socket names it there.
        ben = await stack.enter_async_context(CrispClient.connect(cluster.ws_url, room=code, open_timeout=20))
        await ben.join(code, "Ben")
        owner = (await asyncio.to_thread(cluster.owners))[code]
        assert await asyncio.to_thread(cluster.served_by, code) == owner
        frozen = cluster.index_of(owner)

        await asyncio.to_thread(cluster.stop, frozen)
        frozen_at = time.monotonic()
        assert (await asyncio.to_thread(cluster.server_states))[owner] == "UP"  # its check has not failed yet

        async def bare() -> tuple[float, BaseException]:
            """A client with no limit of its own: HAProxy's answers it."""
            started = time.monotonic()
            try:
                async with asyncio.timeout(30):
                    async with ws_connect(room_url(cluster.ws_url, code), open_timeout=None):
                        pass
            except (InvalidHandshake, TimeoutError) as exc:
                return time.monotonic() - started, exc
            raise AssertionError("a frozen node's handshake was answered")

        async def player() -> tuple[list[tuple[float, str]], CrispClient]:
            """Ana comes back as a player does: the client's own limit, a back-off between tries."""
            tries: list[tuple[float, str]] = []
            delay = 0.25
            while True:
                inner = contextlib.AsyncExitStack()
                started = time.monotonic()
                try:
                    client = await inner.enter_async_context(CrispClient.connect(cluster.ws_url, room=code))
                    await client.resume(code, token)
                except (OSError, TimeoutError, ConnectionError, ConnectionClosed, InvalidHandshake, ProtocolError) as e:
                    await inner.aclose()
                    tries.append((time.monotonic() - started, repr(e)))
                    assert time.monotonic() - frozen_at < 40, f"not resumed: {tries}"
                    await asyncio.sleep(delay)
                    delay = min(delay * 2, 2.0)
                    continue
                stack.push_async_callback(inner.aclose)
                return tries, client

        (bare_took, bare_error), (tries, again) = await asyncio.gather(bare(), player())
        back = time.monotonic() - frozen_at

        # The bare client got HAProxy's 504 after its 5 s, not its 75 s of old.
        assert isinstance(bare_error, InvalidStatus), repr(bare_error)
        assert bare_error.response.status_code == 504
        assert bare_took < HAPROXY_SERVER_TIMEOUT_S + SLACK_S, bare_took
        # The player's first try reached the frozen node and was given up within the limit; no try hung.
        assert tries, "the first try cannot have been answered by a frozen node"
        first_took, _ = tries[0]
        assert first_took >= min(OPEN_TIMEOUT_S, HAPROXY_SERVER_TIMEOUT_S) - 0.5, tries
        assert all(took < OPEN_TIMEOUT_S + SLACK_S for took, _ in tries), tries
        # Resumed on another node: the frozen one out of the ring (about 4 s), its lease (3 s) run out.
        assert again.state is not None
        assert again.seat == 0
        new_owner = (await asyncio.to_thread(cluster.owners))[code]
        assert new_owner != owner
        assert (await asyncio.to_thread(cluster.server_states))[owner].startswith("DOWN")
        assert back < 20, (back, tries)
        print(
            f"\nfrozen {owner}: bare handshake answered {bare_error.response.status_code} after {bare_took:.1f} s; "
            f"the player's tries {[round(t, 1) for t, _ in tries]} s; resumed on {new_owner} after {back:.1f} s"
        )
        await asyncio.to_thread(cluster.cont, frozen)
