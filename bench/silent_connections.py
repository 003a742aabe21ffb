"""What silent connections cost the server, and whether a player in another room notices: a real server (default
settings, a fresh SQLite database) gets 10,000 TCP connections that never send a byte, first from one address
(127.0.0.1), then from 1,000 addresses (127.0.1.0 and up, ten each); meanwhile five players from other
addresses, each alone in a room, ping their rooms (each 8 times a second, within the message rate limit).
Prints per attack: how the server answered the connections (refused at once with 429 or 503, closed with 408
at the head deadline) and when, the server's memory (RSS), descriptors and CPU time, and the pings' round
trip (p50, p99, max, and when the slowest came). Loopback only, bounded in count and time (about a minute).

    python bench/silent_connections.py [--connections 10000] [--addresses 1000]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import resource
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from crisp_server.remote.client import CrispClient

ROOT = Path(__file__).resolve().parent.parent
#: Connects in flight at once (the server's listen backlog is 2048; beyond, SYNs are retried after a second).
IN_FLIGHT = 500
#: Players pinging, each alone in a room of its own, each every ``PING_EVERY`` (within the message rate limit).
PINGERS = 5
PING_EVERY = 0.12
#: How long an attack waits for the server to close every connection (its head deadline is 10 to 15 s).
HOLD_SECONDS = 25.0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextlib.contextmanager
def server() -> Iterator[tuple[int, int]]:
    """A server with its default settings on a free port; its port and pid."""
    port = free_port()
    with tempfile.TemporaryDirectory(prefix="crisp-silent-") as data:
        env = {**os.environ, "CRISP_PORT": str(port), "CRISP_DATA_DIR": data, "CRISP_LOG_LEVEL": "warning"}
        command = [sys.executable, "-m", "crisp_server", "serve"]
        proc = subprocess.Popen(command, env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 60
            while True:
                with contextlib.suppress(httpx.HTTPError):
                    if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                        break
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("the server did not start")
                time.sleep(0.1)
            yield port, proc.pid
        finally:
            proc.terminate()
            proc.wait(30)


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def open_descriptors(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


@dataclass
class Attack:
    """One attack's outcome: each connection's answer (its status line's code, ``reset``, ``open`` or
    ``failed`` to connect) and when it came (seconds since the attack began)."""

    answers: Counter[str] = field(default_factory=Counter)
    times: dict[str, list[float]] = field(default_factory=dict)
    pings: list[float] = field(default_factory=list)
    #: (seconds since the attack began, round trip in ms) of each ping.
    timeline: list[tuple[float, float]] = field(default_factory=list)
    began: float = 0.0
    rss_before: float = 0.0
    rss_peak: float = 0.0
    rss_after: float = 0.0
    fds_peak: int = 0
    cpu: float = 0.0
    opened_in: float = 0.0


async def silent(port: int, source: str, began: float, attack: Attack, gate: asyncio.Semaphore) -> None:
    """One connection that sends nothing and reads what the server says until it closes."""
    loop = asyncio.get_running_loop()
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setblocking(False)
    try:
        sock.bind((source, 0))
        async with gate:
            try:
                async with asyncio.timeout(10):
                    await loop.sock_connect(sock, ("127.0.0.1", port))
            except (OSError, TimeoutError):
                attack.answers["failed"] += 1
                return
            finally:
                attack.opened_in = time.monotonic() - began  # the last one's: when all were connected
        answer = b""
        kind = "open"
        try:
            async with asyncio.timeout(HOLD_SECONDS):
                while True:
                    chunk = await loop.sock_recv(sock, 4096)
                    if not chunk:
                        break
                    answer += chunk
            kind = answer[9:12].decode() if answer.startswith(b"HTTP/1.1 ") else "closed"
        except ConnectionResetError:
            kind = answer[9:12].decode() if answer.startswith(b"HTTP/1.1 ") else "reset"
        except TimeoutError:
            kind = "open"
        attack.answers[kind] += 1
        attack.times.setdefault(kind, []).append(time.monotonic() - began)
    finally:
        sock.close()


async def pinger(port: int, source: str, stop: asyncio.Event, attack: Attack) -> None:
    """A player alone in a room of its own, from ``source``, pings it every ``PING_EVERY`` until ``stop``."""
    async with CrispClient.connect(f"ws://127.0.0.1:{port}/ws", local_addr=(source, 0)) as player:
        await player.create("Pinger")
        while not stop.is_set():
            start = time.perf_counter()
            await player.request({"type": "ping"})
            took = (time.perf_counter() - start) * 1000
            attack.pings.append(took)
            attack.timeline.append((time.monotonic() - attack.began, took))
            del player.messages[:]
            await asyncio.sleep(PING_EVERY)


async def pinging(port: int, seconds: float) -> None:
    """``--ping``: the pingers alone in this process (the attack's thousands of sockets would delay their loop
    in the same one), for ``seconds``; prints the timeline as JSON."""
    attack = Attack(began=0.0)  # times on the machine's monotonic clock, which the parent process shares
    stop = asyncio.Event()
    tasks = [asyncio.create_task(pinger(port, f"127.0.0.{250 - i}", stop, attack)) for i in range(PINGERS)]
    await asyncio.sleep(seconds)
    stop.set()
    await asyncio.gather(*tasks)
    print(json.dumps(attack.timeline))


async def watch(pid: int, stop: asyncio.Event, attack: Attack) -> None:
    while not stop.is_set():
        attack.rss_peak = max(attack.rss_peak, rss_mb(pid))
        attack.fds_peak = max(attack.fds_peak, open_descriptors(pid))
        await asyncio.sleep(0.2)


async def attack(port: int, pid: int, sources: list[str], count: int) -> Attack:
    result = Attack(rss_before=rss_mb(pid))
    cpu_before = cpu_seconds(pid)
    stop = asyncio.Event()
    side = [asyncio.create_task(watch(pid, stop, result))]
    seconds = HOLD_SECONDS + 2
    pings = await asyncio.create_subprocess_exec(
        sys.executable, __file__, "--ping", str(port), str(seconds), stdout=asyncio.subprocess.PIPE
    )
    await asyncio.sleep(2)  # the pingers' rooms exist
    began = result.began = time.monotonic()
    gate = asyncio.Semaphore(IN_FLIGHT)
    tasks = [asyncio.create_task(silent(port, sources[i % len(sources)], began, result, gate)) for i in range(count)]
    await asyncio.gather(*tasks)
    result.cpu = cpu_seconds(pid) - cpu_before
    stop.set()
    await asyncio.gather(*side)
    out, _ = await pings.communicate()
    # The pingers' times are on the same monotonic clock: kept, from the attack's start, those during it.
    timeline = [(at - began, ms) for at, ms in json.loads(out)]
    result.timeline = [(at, ms) for at, ms in timeline if 0 <= at <= time.monotonic() - began]
    result.pings = [ms for _, ms in result.timeline]
    await asyncio.sleep(1)
    result.rss_after = rss_mb(pid)
    return result


def quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def report(title: str, result: Attack) -> None:
    print(f"{title} (all connected within {result.opened_in:.1f} s)")
    for kind, n in sorted(result.answers.items()):
        times = result.times.get(kind, [])
        when = f", after {min(times):.2f} to {max(times):.2f} s" if times else ""
        print(f"  {kind:>6}: {n}{when}")
    print(
        f"  server: RSS {result.rss_before:.0f} MB before, {result.rss_peak:.0f} MB at most, "
        f"{result.rss_after:.0f} MB after; at most {result.fds_peak} descriptors open; "
        f"{result.cpu:.2f} s of CPU for the attack"
    )
    pings = result.pings
    print(
        f"  ping from another room ({len(pings)} during the attack): p50 {quantile(pings, 0.5):.1f} ms, "
        f"p99 {quantile(pings, 0.99):.1f} ms, max {max(pings, default=float('nan')):.1f} ms"
    )
    slowest = sorted(result.timeline, key=lambda p: -p[1])[:3]
    print("  slowest pings: " + ", ".join(f"{ms:.0f} ms at {at:.2f} s" for at, ms in slowest))


async def main(connections: int, addresses: int) -> None:
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    if hard < connections + 100:
        raise SystemExit(f"this process may open {hard} descriptors: fewer than {connections} connections need")
    many = [f"127.0.{1 + i // 256}.{i % 256}" for i in range(addresses)]
    with server() as (port, pid):
        report(f"{connections} silent connections from 127.0.0.1", await attack(port, pid, ["127.0.0.1"], connections))
    with server() as (port, pid):
        title = f"{connections} silent connections from {addresses} addresses ({many[0]} to {many[-1]})"
        report(title, await attack(port, pid, many, connections))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--connections", type=int, default=10_000, help="silent connections per attack (10000)")
    parser.add_argument("--addresses", type=int, default=1_000, help="addresses of the second attack (1000)")
    parser.add_argument("--ping", nargs=2, metavar=("PORT", "SECONDS"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.ping:
        asyncio.run(pinging(int(args.ping[0]), float(args.ping[1])))
    else:
        asyncio.run(main(args.connections, args.addresses))
