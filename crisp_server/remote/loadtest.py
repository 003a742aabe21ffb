"""``crisp-server loadtest``: rooms of bots playing real games over real WebSockets against a running server.

Every bot is one WebSocket. A room's bots create and join a room, start, get ready, and play random legal
moves (from ``you.can``) at the chosen pace, call Crisp now and then, play games to the end and start
rematches (the host's ``rematch`` takes the room back to the lobby, its ``start`` right after deals). The
run stops by itself after ``--duration`` seconds and prints what it measured once every room was playing
(the wave of joins is left out):

- actions/s and messages/s (frames the bots received);
- action-to-last-view latency: from sending an action to the moment the last player of the room has
  received the update that shows it (p50, p95, p99, max);
- errors (refusals the bots did not expect) and disconnects; reconnects after a move or a restart;
- the server's CPU time and resident memory (from its ``/metrics``, or ``/proc`` with ``--server-pid``):
  views sent per server CPU-second, KB per connection and per room.

``--lobby`` leaves the rooms in their lobbies (idle connections: memory), ``--churn R`` opens R more rooms
while the first ones play (joins under load). Every socket names its room in its URL once the code is known
(``/ws?room=CODE``: with several server nodes, the proxy routes on it); a bot whose room moved to another
node (close 4005) or whose server restarts (1012) reconnects and resumes at once, backs off if that fails
(a socket that has not opened within a few seconds, as to a frozen node, is a failure too), and plays on:
those are counted (``moved``, ``restarted``), not as disconnects. It only talks to this machine unless
``--allow-remote`` is given. The bots are built on picows, which costs about half the CPU per received frame
of a client built on ``websockets``: the load generator must not be the bottleneck.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import os
import random
import socket
import statistics
import time
from dataclasses import asdict, dataclass
from urllib.parse import urlsplit

import httpx
import orjson
from picows import ws_connect

from .client import room_url
from .loadplayers import Bot, RoomBots, Stats

#: Rooms of the first wave joining at the same time (see ``run``).
JOINS_AT_ONCE = 200


@dataclass(frozen=True)
class Plan:
    ws_url: str
    rooms: int
    players: int
    interval: float  # least seconds between a room's actions (0: as fast as the rules allow)
    crisp: float  # how often a bot calls Crisp when it may
    lobby: bool  # stay in the lobby: idle connections


def _loopback(host: str) -> bool:
    try:
        return all(ipaddress.ip_address(info[4][0]).is_loopback for info in socket.getaddrinfo(host, None))
    except (OSError, ValueError):
        return False


class Probe:
    """The server's CPU seconds and resident memory: from ``/proc`` given its pid, else its ``/metrics``.

    One HTTP client for the whole run, made before any bot plays: making one stops the event loop for tens
    of milliseconds (it loads the trusted certificates), which the bots would count as server latency."""

    def __init__(self, base: str, pid: int | None) -> None:
        self.base = base
        self.pid = pid
        #: Of the CPU seconds the last sample read from ``/proc``, those spent in the kernel (system time);
        #: ``None`` from ``/metrics``, which has only the total.
        self.system_s: float | None = None
        self.http = httpx.AsyncClient(timeout=10) if pid is None else None

    async def sample(self) -> tuple[float | None, float | None]:
        if self.http is None:
            return self._proc()
        try:
            text = (await self.http.get(self.base + "/metrics")).text
        except httpx.HTTPError:
            return None, None
        values: dict[str, float] = {}
        for line in text.splitlines():
            name, _, value = line.partition(" ")
            if name in ("process_cpu_seconds_total", "process_resident_memory_bytes"):
                values[name] = float(value)
        return values.get("process_cpu_seconds_total"), values.get("process_resident_memory_bytes")

    async def close(self) -> None:
        if self.http is not None:
            await self.http.aclose()

    def _proc(self) -> tuple[float | None, float | None]:
        """CPU seconds of the server and of the processes it started (the WAL checkpoint process), and the
        server's resident memory."""
        pid = self.pid
        assert pid is not None
        try:
            with open(f"/proc/{pid}/status") as f:
                rss = next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmRSS:"))
            user, system = _cpu_ticks(pid)
        except (OSError, StopIteration, IndexError, ValueError):
            return None, None
        try:
            with open(f"/proc/{pid}/task/{pid}/children") as f:
                children = [int(word) for word in f.read().split()]
        except OSError:
            children = []
        for child in children:
            with contextlib.suppress(OSError, IndexError, ValueError):
                child_user, child_system = _cpu_ticks(child)
                user, system = user + child_user, system + child_system
        tick = os.sysconf("SC_CLK_TCK")
        self.system_s = system / tick
        return (user + system) / tick, float(rss)


def _spent(before: float | None, after: float | None) -> float | None:
    """CPU seconds between two samples. Rounded to the nanosecond: the samples are whole clock ticks divided
    into seconds, and without it the kernel's part of a run could come out a rounding error above the whole
    (0.04 - 0.03 > 0.11 - 0.10 in floating point)."""
    return None if before is None or after is None else round(after - before, 9)


def _cpu_ticks(pid: int) -> tuple[int, int]:
    """User and system CPU time of ``pid`` so far, in clock ticks."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]), int(fields[12])


async def _connect(room: RoomBots, code: str | None) -> Bot:
    """A new bot of ``room`` on a socket of its own: at ``/ws?room=CODE`` once the room has a code."""
    bot = Bot(room)
    url = room.ws_url if code is None else room_url(room.ws_url, code)
    await ws_connect(lambda: bot, url, websocket_handshake_timeout=60, max_frame_size=2**22)
    room.bots.append(bot)
    return bot


async def _join(plan: Plan, room: RoomBots) -> None:
    """Connect the room's bots, create and fill the room, and start it (unless it stays a lobby). The host's
    socket is plain ``/ws`` (the room has no code yet); the others name the room the host's welcome told."""
    host = await _connect(room, None)
    host.send({"type": "create", "name": "Bot 1"})
    async with asyncio.timeout(60):
        code = (await host.welcome)["room"]
    for k in range(2, plan.players + 1):
        bot = await _connect(room, code)
        bot.send({"type": "join", "room": code, "name": f"Bot {k}"})
        async with asyncio.timeout(60):
            await bot.welcome
    if not plan.lobby:
        host.send({"type": "options", "score_limit": 50, "turn_seconds": None, "discard_draw": True})
        host.send({"type": "start"})


async def _room(
    plan: Plan,
    stats: Stats,
    rng: random.Random,
    stop: asyncio.Event,
    *,
    first: bool,
    joining: asyncio.Semaphore | None = None,
) -> None:
    room = RoomBots(stats, rng, plan.crisp, plan.ws_url)
    try:
        try:
            if joining is None:
                await _join(plan, room)
            else:
                async with joining:
                    await _join(plan, room)
        except BaseException:
            if first:  # counted as failed; the others play on, measured (a wait for it would never end)
                stats.rooms_failed += 1
                stats.warm = stats.rooms_ready + stats.rooms_failed == plan.rooms
            raise
        if first:
            stats.rooms_ready += 1
            if stats.rooms_ready + stats.rooms_failed == plan.rooms:
                stats.warm = True
        else:
            stats.churn_ready += 1
        if plan.lobby:
            await stop.wait()
            return
        # Spread the rooms' beats, so the server sees a steady stream.
        await asyncio.sleep(rng.random() * max(plan.interval, 1.0))
        while not stop.is_set():
            beat = time.perf_counter()
            acted = await room.step()
            # Each beat drawn around the interval (as players' are): beats of a fixed length would let one
            # stall of the server line thousands of rooms up, to act in the same instant from then on.
            interval = plan.interval * rng.uniform(0.5, 1.5)
            wait = interval - (time.perf_counter() - beat) if acted else room.idle_wait()
            if wait > 0:
                await asyncio.sleep(wait)
    finally:
        room.stopping = True
        for bot in room.bots:
            if bot.reconnecting is not None:
                bot.reconnecting.cancel()
            bot.hang_up()


@dataclass
class Result:
    """What a run measured, over the time every first room was playing (``window`` seconds)."""

    rooms: int
    players: int
    window: float
    actions_per_s: float
    messages_per_s: float
    p50_ms: float | None
    p95_ms: float | None
    p99_ms: float | None
    max_ms: float | None
    churn_p99_ms: float | None
    errors: int
    disconnects: int
    moved: int
    restarted: int
    failed_rooms: int
    games: int
    server_cpu_s: float | None
    #: The part of ``server_cpu_s`` spent in the kernel (system calls: sockets, files), with ``--server-pid``.
    server_system_s: float | None
    views_per_cpu_s: float | None
    rss_before: float | None
    rss_after: float | None


def _pct(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))] * 1000


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


async def run(
    url: str,
    rooms: int,
    players: int,
    *,
    pace: float = 1.0,
    duration: float = 30.0,
    crisp: float = 0.1,
    allow_remote: bool = False,
    seed: int = 1,
    lobby: bool = False,
    churn: int = 0,
    churn_seconds: float = 10.0,
    server_pid: int | None = None,
    json_out: bool = False,
) -> int:
    parts = urlsplit(url)
    host = parts.hostname or ""
    if not allow_remote and not _loopback(host):
        print(f"refusing to load {host!r}: not this machine (give --allow-remote to load another server)")
        return 2
    base = f"{parts.scheme}://{parts.netloc}"
    ws_url = base.replace("http", "ws", 1) + "/ws"
    rng = random.Random(seed)
    stats = Stats()
    stop = asyncio.Event()
    probe = Probe(base, server_pid)
    _, rss_before = await probe.sample()
    plan = Plan(ws_url, rooms, players, 1.0 / pace if pace > 0 else 0.0, crisp, lobby)
    what = "in their lobbies" if lobby else f"{pace:g} action(s)/room/s" if pace > 0 else "as fast as the rules allow"
    print(f"load test: {rooms} rooms x {players} players against {base}, {what}, {duration:g} s")

    # The first wave joins a few hundred rooms at a time: all at once, thousands of handshakes queue up
    # and, on a busy machine, time out (the run then measures fewer rooms than asked). The churn's rooms
    # come one by one anyway.
    joining = asyncio.Semaphore(JOINS_AT_ONCE)

    def start(first: bool) -> asyncio.Task[None]:
        return asyncio.create_task(
            _room(plan, stats, random.Random(rng.random()), stop, first=first, joining=joining if first else None)
        )

    tasks = [start(True) for _ in range(rooms)]
    while not stats.warm and not all(t.done() for t in tasks):
        await asyncio.sleep(0.05)
    if lobby:
        await asyncio.sleep(2)  # let the server settle before it is measured
    cpu_0, _ = await probe.sample()
    system_0 = probe.system_s
    opened, actions_0, messages_0 = time.perf_counter(), stats.actions, stats.messages
    if churn:
        stats.churning = True
        for _ in range(churn):
            tasks.append(start(False))
            await asyncio.sleep(churn_seconds / churn)
        while stats.churn_ready < churn and not all(t.done() for t in tasks[rooms:]):
            await asyncio.sleep(0.05)
        stats.churning = False
    await asyncio.sleep(max(0.0, duration - (time.perf_counter() - opened)))
    window = time.perf_counter() - opened
    stats.warm = False  # what is published while the bots hang up is not measured
    actions, messages = stats.actions - actions_0, stats.messages - messages_0
    cpu_1, rss_after = await probe.sample()
    system_1 = probe.system_s
    stop.set()
    results = await asyncio.gather(*tasks, return_exceptions=True)
    await probe.close()
    failures = [r for r in results if isinstance(r, BaseException)]
    lat = stats.latencies
    cpu = _spent(cpu_0, cpu_1)
    result = Result(
        rooms=rooms,
        players=players,
        window=window,
        actions_per_s=actions / window,
        messages_per_s=messages / window,
        p50_ms=_pct(lat, 0.5),
        p95_ms=_pct(lat, 0.95),
        p99_ms=_pct(lat, 0.99),
        max_ms=max(lat) * 1000 if lat else None,
        churn_p99_ms=_pct(stats.churn_latencies, 0.99),
        errors=stats.errors,
        disconnects=stats.disconnects,
        moved=stats.moved,
        restarted=stats.restarted,
        failed_rooms=len(failures),
        games=stats.games,
        server_cpu_s=cpu,
        server_system_s=_spent(system_0, system_1),
        views_per_cpu_s=messages / cpu if cpu else None,
        rss_before=rss_before,
        rss_after=rss_after,
    )
    print(f"  measured over {window:.1f} s once every room was {'in its lobby' if lobby else 'playing'}:")
    print(f"  actions: {actions} ({result.actions_per_s:,.0f}/s); messages received: {messages:,}")
    print(f"    ({result.messages_per_s:,.0f}/s); rounds finished: {stats.rounds}, games finished: {stats.games}")
    if not lobby:
        print(
            f"  action-to-last-view latency (ms): p50 {_ms(result.p50_ms)}, p95 {_ms(result.p95_ms)}, "
            f"p99 {_ms(result.p99_ms)}, max {_ms(result.max_ms)}, "
            f"mean {statistics.fmean(lat) * 1000 if lat else 0:.1f} over {len(lat)} actions"
        )
    if churn:
        print(
            f"  while {churn} more rooms ({churn * players} players) joined (over {churn_seconds:g} s) and began: "
            f"p99 {_ms(result.churn_p99_ms)} ms over {len(stats.churn_latencies)} actions"
        )
    print(
        f"  errors: {stats.errors} {stats.error_codes or ''}; clock races (e.g. Crisp as the window closed): "
        f"{stats.races}; disconnects: {stats.disconnects}; rooms failed: {len(failures)}"
    )
    print(
        f"  reconnected and resumed: {stats.moved} after their room moved to another node (4005), "
        f"{stats.restarted} after a server restart (1012)"
    )
    for failure in failures[:3]:
        print(f"    {type(failure).__name__}: {failure}")
    if cpu is not None:
        per_cpu = f"{result.views_per_cpu_s:,.0f}" if result.views_per_cpu_s else "-"
        kernel = result.server_system_s
        system = "" if kernel is None else f", {100 * kernel / window:.0f}% in the kernel"
        print(
            f"  server CPU: {cpu:.1f} s ({100 * cpu / window:.0f}% of one core{system}); views per server CPU-second: "
            f"{per_cpu}"
        )
    if rss_before is not None and rss_after is not None:
        connections = (rooms + churn) * players
        print(
            f"  server RSS: {rss_before / 2**20:.1f} MiB before, {rss_after / 2**20:.1f} MiB with everyone "
            f"connected: {(rss_after - rss_before) / 1024 / connections:.1f} KB per connection, "
            f"{(rss_after - rss_before) / 1024 / (rooms + churn):.1f} KB per room"
        )
    if json_out:
        print(orjson.dumps(asdict(result)).decode())
    ok = not failures and stats.errors == 0 and stats.disconnects == 0
    return 0 if ok else 1
