"""Phones that stop reading are dropped for real (issue 15): the real server, raw sockets that complete the
WebSocket handshake, join a room and never read again while the room keeps sending. Whether the server
hangs up because the connection's queue stays full or because its keepalive fails, it aborts the socket:
its descriptor, its kernel socket (no orphan in FIN-WAIT-1 holding unsent data) and its memory go, and
the server is back to its baseline."""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from crisp_server.remote.client import CrispClient
from tests.e2e.procs import server_process
from tests.web.deaf import deaf_player, flood, seated

ROOMS = 3
#: Each room: one player who reads (and keeps changing the options) and seven who never read.
DEAF_PER_ROOM = 7
WARM_UP_SECONDS = 2.0
#: The test's server: look-ups and messages limited loosely enough for the test to flood the rooms.
LOOSE = {
    "CRISP_LOOKUP_BURST": "1000",
    "CRISP_RATE_BURST": "100000",
    "CRISP_RATE_PER_SECOND": "100000",
    "CRISP_CLOSE_TIMEOUT_SECONDS": "1",
}
#: TCP states (/proc/net/tcp, include/net/tcp_states.h) by number.
STATES = {1: "ESTABLISHED", 4: "FIN_WAIT1", 5: "FIN_WAIT2", 6: "TIME_WAIT", 8: "CLOSE_WAIT", 9: "LAST_ACK"}
TIME_WAIT = 6
LISTEN = 10


@dataclass(frozen=True)
class ServerSocket:
    state: str
    peer_port: int
    send_queue: int


@dataclass(frozen=True)
class Resources:
    fds: int
    socket_fds: int  # of ``fds``: the sockets (the rest are files, pipes, the database)
    rss_kb: int
    sockets: list[ServerSocket]

    def held_for(self, peer_ports: set[int]) -> list[ServerSocket]:
        """The server's sockets toward these client ports, orphans included (TIME_WAIT holds no buffer)."""
        return [s for s in self.sockets if s.peer_port in peer_ports and s.state != "TIME_WAIT"]


def server_sockets(port: int) -> list[ServerSocket]:
    """The server's side of every TCP connection on ``port`` (not the listener), from /proc/net/tcp."""
    found = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table) as f:
            next(f)
            for line in f:
                fields = line.split()
                local, remote, state = fields[1], fields[2], int(fields[3], 16)
                if int(local.rsplit(":", 1)[1], 16) != port or state == LISTEN:
                    continue
                tx_queue = int(fields[4].split(":")[0], 16)
                found.append(ServerSocket(STATES.get(state, str(state)), int(remote.rsplit(":", 1)[1], 16), tx_queue))
    return found


def resources(pid: int, port: int) -> Resources:
    with open(f"/proc/{pid}/status") as f:
        rss = next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))
    targets = []
    for fd in os.listdir(f"/proc/{pid}/fd"):
        with contextlib.suppress(OSError):  # closed meanwhile
            targets.append(os.readlink(f"/proc/{pid}/fd/{fd}"))
    sockets = sum(t.startswith("socket:") for t in targets)
    return Resources(len(targets), sockets, rss, server_sockets(port))


@contextlib.contextmanager
def deaf_players(port: int, rooms: list[str]) -> Iterator[list[socket.socket]]:
    socks: list[socket.socket] = []
    try:
        for room in rooms:
            socks.extend(deaf_player(port, room, f"Deaf {k}") for k in range(DEAF_PER_ROOM))
        yield socks
    finally:
        for sock in socks:
            sock.close()


async def sample(pid: int, port: int, into: list[Resources]) -> None:
    while True:
        into.append(resources(pid, port))
        await asyncio.sleep(0.1)


async def wait_until_freed(pid: int, port: int, deaf_ports: set[int], timeout: float) -> tuple[float, Resources]:
    """Seconds until the server holds no socket toward the deaf players any more, and what it holds then."""
    begun = time.monotonic()
    while True:
        now = resources(pid, port)
        if not now.held_for(deaf_ports) or time.monotonic() - begun > timeout:
            return time.monotonic() - begun, now
        await asyncio.sleep(0.25)


async def run_deaf_players(
    tmp_path: Path, env: dict[str, str], flood_seconds: float, *, until_freed: bool = False, changes: int | None = None
) -> None:
    """Deaf players join the rooms while the hosts flood them for ``flood_seconds`` (or, ``until_freed``,
    until the server dropped them all; or until each host made ``changes``); then the server must be
    back to its baseline within a minute."""
    with server_process(tmp_path, env={**LOOSE, **env}) as (base, proc):
        port = int(base.rsplit(":", 1)[1])
        url = base.replace("http", "ws") + "/ws"
        async with contextlib.AsyncExitStack() as stack:
            hosts = [await stack.enter_async_context(CrispClient.connect(url)) for _ in range(ROOMS)]
            rooms = [await host.create(f"Host {k}") for k, host in enumerate(hosts)]
            await flood(hosts, WARM_UP_SECONDS)  # the server's memory as a flood leaves it
            await asyncio.sleep(1)
            baseline = resources(proc.pid, port)
            with deaf_players(port, rooms) as socks:
                deaf_ports = {s.getsockname()[1] for s in socks}
                for host in hosts:  # everyone is seated
                    await host.wait_for(lambda c: seated(c) == 1 + DEAF_PER_ROOM, what="everyone seated")
                peak: list[Resources] = []
                sampler = asyncio.create_task(sample(proc.pid, port, peak))
                freed = (lambda: not resources(proc.pid, port).held_for(deaf_ports)) if until_freed else (lambda: False)
                flooded = time.monotonic()
                await flood(hosts, flood_seconds, freed, changes)
                flooded = time.monotonic() - flooded
                sampler.cancel()
                stuck = max(peak, key=lambda r: sum(s.send_queue for s in r.sockets))
                took, after = await wait_until_freed(proc.pid, port, deaf_ports, 60)
                report(baseline, stuck, after, f"{flooded:.1f} s of flood, then {took:.1f} s")
                assert not after.held_for(deaf_ports), after.held_for(deaf_ports)
            # The hosts were never held up and still play.
            for host in hosts:
                assert (await host.request({"type": "ping"}))["type"] == "pong"
            # Every socket the deaf players held is gone; other descriptors may have been opened meanwhile by
            # the server's own work (a database connection of the pool, the checkpoint process's pipe).
            assert after.socket_fds <= baseline.socket_fds
            assert after.fds <= baseline.fds + 2
            assert after.rss_kb < baseline.rss_kb + 8 * 1024
        output = stop(proc)
        assert "Traceback" not in output, output


def report(baseline: Resources, stuck: Resources, after: Resources, took: str) -> None:
    def line(name: str, r: Resources) -> str:
        queued = sum(s.send_queue for s in r.sockets)
        states = sorted({s.state for s in r.sockets})
        return f"{name}: {r.fds} fds, RSS {r.rss_kb // 1024} MB, {len(r.sockets)} sockets {states}, Send-Q {queued}"

    print(line("baseline", baseline), line("most held", stuck), line(f"after {took}", after), sep="\n")


def stop(proc: subprocess.Popen[bytes]) -> str:
    proc.terminate()
    proc.wait(15)
    return proc.stdout.read().decode() if proc.stdout else ""


async def test_a_connection_whose_queue_stays_full_is_aborted_and_its_resources_freed(tmp_path: Path) -> None:
    # No keepalive ping in the test's time: the queue's overflow alone hangs up, during the flood.
    env = {"CRISP_SEND_QUEUE": "8", "CRISP_PING_SECONDS": "600"}
    await run_deaf_players(tmp_path, env, flood_seconds=40, until_freed=True)


async def test_a_connection_whose_keepalive_fails_is_aborted_and_its_resources_freed(tmp_path: Path) -> None:
    # Fewer changes than the queue holds: the missing pongs alone hang up. The kernel still holds some.
    env = {"CRISP_PING_SECONDS": "1", "CRISP_PING_TIMEOUT_SECONDS": "1"}
    await run_deaf_players(tmp_path, env, flood_seconds=10, changes=200)
