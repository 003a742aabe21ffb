"""A server with few descriptors (``ulimit -n 300``) stays usable under hundreds of silent connections: from one
address, the cap per address refuses most of them and health checks, new players, resumes and commits go on; from
many addresses, the budget refuses the connections beyond it, the players already in a game keep committing (the
reserve is the database's), and the head deadline frees the silent sockets; and a flood that keeps the budget
spent all along leaves the health checks answered."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx

from crisp_server.remote.client import CrispClient
from tests.e2e.procs import server_process
from tests.flood import Flood

NOFILE = 300
SILENT = 400
HEAD_SECONDS = 3.0
SETTINGS = {"CRISP_HEAD_TIMEOUT_SECONDS": f"{HEAD_SECONDS:g}", "CRISP_LOOKUP_BURST": "1000"}


@contextlib.contextmanager
def silent(port: int, sources: list[str]) -> Iterator[list[socket.socket]]:
    """``SILENT`` connections that send nothing, from ``sources`` in turn (each connect completes in the kernel's
    backlog whether or not the server accepts it)."""
    opened: list[socket.socket] = []
    try:
        for i in range(SILENT):
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            opened.append(sock)
            sock.bind((sources[i % len(sources)], 0))
            sock.settimeout(5)
            with contextlib.suppress(OSError):  # a full backlog: the attack goes on with the others
                sock.connect(("127.0.0.1", port))
        yield opened
    finally:
        for sock in opened:
            sock.close()


def ws_url(base: str) -> str:
    return base.replace("http://", "ws://") + "/ws"


@contextlib.asynccontextmanager
async def player(base: str, source: str) -> AsyncIterator[CrispClient]:
    async with CrispClient.connect(ws_url(base), local_addr=(source, 0), open_timeout=10) as client:
        yield client


async def healthz(base: str, source: str) -> int:
    transport = httpx.AsyncHTTPTransport(local_address=source)
    async with httpx.AsyncClient(transport=transport, timeout=10) as client:
        return (await client.get(base + "/healthz")).status_code


async def options_commit(host: CrispClient, other: CrispClient, seconds: int) -> None:
    """The host changes an option (saved before anyone is told) and the other player sees it."""
    await host.set_options(turn_seconds=seconds)
    await other.wait_for(
        lambda c: c.state is not None and c.state["room"]["options"].get("turn_seconds") == seconds, what="option"
    )


def descriptor_limit(pid: int) -> int:
    """The server's soft ``RLIMIT_NOFILE``, from ``/proc`` (the test is void unless it is ``NOFILE``)."""
    line = next(line for line in Path(f"/proc/{pid}/limits").read_text().splitlines() if "open files" in line)
    return int(line.split()[3])


def test_silent_connections_from_one_address_leave_the_server_usable(tmp_path: Path) -> None:
    async def run(base: str, port: int) -> None:
        async with player(base, "127.0.0.2") as ann, player(base, "127.0.0.3") as bob:
            code = await ann.create("Ann")
            await bob.join(code, "Bob")
            token = bob.token
            assert token is not None
            with silent(port, ["127.0.0.1"]):
                await asyncio.sleep(1)
                assert await healthz(base, "127.0.0.4") == 200
                await options_commit(ann, bob, 30)
                async with player(base, "127.0.0.5") as cid:  # a new player
                    await cid.create("Cid")
                await bob.close()
                async with player(base, "127.0.0.6") as bob_again:  # a resume
                    await bob_again.resume(code, token)
                    await options_commit(ann, bob_again, 45)

    with server_process(tmp_path, env=SETTINGS, nofile=NOFILE) as (base, proc):
        assert descriptor_limit(proc.pid) == NOFILE
        asyncio.run(run(base, int(base.rsplit(":", 1)[1])))


def test_silent_connections_from_many_addresses_leave_the_players_in_a_game_committing(tmp_path: Path) -> None:
    async def run(base: str, port: int) -> None:
        async with player(base, "127.0.0.2") as ann, player(base, "127.0.0.3") as bob:
            code = await ann.create("Ann")
            await bob.join(code, "Bob")
            with silent(port, [f"127.0.1.{i}" for i in range(1, 41)]):
                await asyncio.sleep(1)
                for seconds in (30, 45, 60):
                    await options_commit(ann, bob, seconds)
                # The head deadline frees the budget: a newcomer gets in again while the sockets are still open.
                await asyncio.sleep(HEAD_SECONDS * 1.5 + 2)
                assert await healthz(base, "127.0.0.4") == 200
                async with player(base, "127.0.0.5") as cid:
                    await cid.create("Cid")

    with server_process(tmp_path, env=SETTINGS, nofile=NOFILE) as (base, proc):
        assert descriptor_limit(proc.pid) == NOFILE
        asyncio.run(run(base, int(base.rsplit(":", 1)[1])))


def test_health_checks_are_answered_all_along_a_flood_that_keeps_the_budget_spent(tmp_path: Path) -> None:
    """Silent connections from 40 addresses, 150 a second for 10 s: the budget (about 150 connections here) is
    spent all along, each address far from its cap. ``/healthz`` and ``/metrics`` from the monitor's address
    (127.0.0.1) are answered 200 within 1 s throughout, while a newcomer from elsewhere is refused (503; but
    for the moments a slot the head deadline freed is not taken yet by the flood)."""

    async def run(base: str, port: int) -> None:
        flood = Flood(port, [f"127.0.1.{i}" for i in range(1, 41)], rate=150)
        answers: list[tuple[str, int, float]] = []
        strangers: list[int] = []
        # A connection per request, as a load balancer's checks come.
        fresh = httpx.Limits(max_keepalive_connections=0)
        monitor = httpx.AsyncClient(
            transport=httpx.AsyncHTTPTransport(local_address="127.0.0.1", limits=fresh), timeout=1
        )
        stranger = httpx.AsyncClient(
            transport=httpx.AsyncHTTPTransport(local_address="127.0.0.4", limits=fresh), timeout=5
        )
        async with monitor, stranger:
            with flood.running():
                await asyncio.sleep(2)
                deadline = time.monotonic() + 8
                while time.monotonic() < deadline:
                    for path in ("/healthz", "/metrics"):
                        started = time.monotonic()
                        try:
                            status = (await monitor.get(base + path)).status_code
                        except httpx.HTTPError:
                            status = -1
                        answers.append((path, status, time.monotonic() - started))
                    strangers.append((await stranger.get(base + "/healthz")).status_code)
                    await asyncio.sleep(0.2)
        assert flood.opened > 1000
        assert flood.failed < flood.opened / 10, (flood.failed, flood.opened)
        assert len(answers) > 40
        assert [a for a in answers if a[1] != 200 or a[2] >= 1] == []
        print(f"{len(answers)} answers during the flood, the slowest in {max(a[2] for a in answers):.3f} s")
        assert strangers.count(503) > len(strangers) / 2, strangers  # the budget was spent all along

    log = tmp_path / "server.log"
    with server_process(tmp_path, env=SETTINGS, nofile=NOFILE, log=log) as (base, proc):
        assert descriptor_limit(proc.pid) == NOFILE
        asyncio.run(run(base, int(base.rsplit(":", 1)[1])))
    assert "refused a connection (503)" in log.read_text()
