"""``crisp-server loadtest``: rooms of bots playing real games over real WebSockets against a running server.

Every bot is one WebSocket. A room's bots create and join a room, start, get ready, and play random legal
moves (from ``you.can``) at the chosen pace, call Crisp now and then, play games to the end and start
rematches. The run stops by itself after ``--duration`` seconds and prints what it measured:

- actions/s and messages/s (frames the bots received);
- action-to-last-view latency: from sending an action to the moment the last player of the room has
  received the update that shows it (p50, p95, p99, max);
- errors (refusals the bots did not expect) and disconnects;
- the server's resident memory before and after (from its ``/metrics``), and per connection.

It only talks to this machine unless ``--allow-remote`` is given. The bots are lean on purpose: the load
generator must not be the bottleneck.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import random
import socket
import statistics
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import httpx
import orjson
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

#: What each action shows in the update that publishes it (matched with the acting seat).
EVENT_OF = {
    "draw": "drew",
    "swap": "swapped",
    "discard": "discarded",
    "jack": "jack_used",
    "queen": "queen_used",
    "king": "king_used",
    "crisp": "crisp_called",
}


#: Refusals that only mean a bot raced the clock (a Crisp call as its window closed): not errors.
RACES = frozenset(("crisp_not_allowed", "too_early"))


@dataclass
class Stats:
    actions: int = 0
    messages: int = 0
    errors: int = 0
    races: int = 0
    disconnects: int = 0
    games: int = 0
    rounds: int = 0
    rooms_playing: int = 0
    warm: bool = False  # every room is playing: latencies count from then on (not during the joins)
    latencies: list[float] = field(default_factory=list)
    error_codes: dict[str, int] = field(default_factory=dict)


class Bot:
    """One player: a socket, the last state it was sent, and a reader that feeds the room's tracker."""

    def __init__(self, ws: ClientConnection, room: RoomBots) -> None:
        self.ws = ws
        self.room = room
        self.state: dict[str, Any] | None = None
        self.readied: tuple[str, int] | None = None  # the (phase, round) it last said ready in
        self.welcome: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.reader = asyncio.get_running_loop().create_task(self._read())

    async def _read(self) -> None:
        stats = self.room.stats
        try:
            async for frame in self.ws:
                stats.messages += 1
                message = orjson.loads(frame)
                kind = message.get("type")
                if kind in ("update", "snapshot"):
                    self.state = message
                    self.room.seen(self, message.get("events", ()))
                elif kind == "welcome" and not self.welcome.done():
                    self.welcome.set_result(message)
                elif kind == "error":
                    code = str(message.get("code"))
                    if not self.welcome.done():
                        self.welcome.set_exception(RuntimeError(code))
                    if code in RACES:
                        stats.races += 1
                    else:
                        stats.errors += 1
                        stats.error_codes[code] = stats.error_codes.get(code, 0) + 1
        except ConnectionClosed:
            pass
        if not self.room.stopping:
            stats.disconnects += 1

    async def send(self, message: dict[str, Any]) -> None:
        await self.ws.send(orjson.dumps(message).decode())

    @property
    def you(self) -> dict[str, Any]:
        return self.state["you"] if self.state else {}

    @property
    def phase(self) -> str | None:
        return self.state["room"]["phase"] if self.state else None


class RoomBots:
    """The bots of one room, and the action whose publication they are waiting for."""

    def __init__(self, stats: Stats, rng: random.Random, crisp: float) -> None:
        self.stats = stats
        self.rng = rng
        self.crisp = crisp
        self.bots: list[Bot] = []
        self.stopping = False
        self.pending: tuple[str, int, float, set[Bot]] | None = None  # event, seat, sent at, who has seen it
        self.done = asyncio.Event()

    def seen(self, bot: Bot, events: Any) -> None:
        pending = self.pending
        for e in events:
            kind = e.get("type")
            if kind == "game_ended" and bot is self.bots[0]:
                self.stats.games += 1
            elif kind == "round_ended" and bot is self.bots[0]:
                self.stats.rounds += 1
            if pending is not None and kind == pending[0] and e.get("seat") == pending[1]:
                pending[3].add(bot)
                if len(pending[3]) == len(self.bots):
                    if self.stats.warm:
                        self.stats.latencies.append(time.perf_counter() - pending[2])
                    self.pending = None
                    self.done.set()

    def choose(self, bot: Bot) -> dict[str, Any] | None:
        can: list[str] = bot.you.get("can", [])
        if not can:
            return None
        if "crisp" in can and self.rng.random() < self.crisp:
            return {"type": "crisp"}
        moves = [c for c in can if c != "crisp"]
        if not moves:
            return None
        move = self.rng.choice(moves)
        if move.startswith("draw_"):
            return {"type": "draw", "from": move[5:]}
        if move in ("swap", "queen"):
            slot = self.rng.choice(("left", "middle", "right"))
            if move == "swap":
                return {"type": "swap", "slot": slot}
            seat = bot.you["seat"]
            others = [i for i in range(len(self.bots)) if i != seat]
            target_slot = self.rng.choice(("left", "middle", "right"))
            return {"type": "queen", "slot": slot, "target": self.rng.choice(others), "target_slot": target_slot}
        return {"type": move}

    async def step(self) -> None:
        """One beat of the room: get ready, start a rematch, or play one action and wait for everyone to see it."""
        host = self.bots[0]
        phase = host.phase
        if phase in ("peek", "round_over"):
            for bot in self.bots:
                fair = bot.state["room"]["fair"] if bot.state else None
                key = (phase, fair["round"] if fair else -1)
                if bot.readied != key:  # once per peek and per pause, not on every beat
                    bot.readied = key
                    await bot.send({"type": "ready"})
            return
        if phase == "game_over":
            if host.you.get("host"):
                await host.send({"type": "rematch"})
            return
        if phase != "play":
            return
        for bot in self.rng.sample(self.bots, len(self.bots)):
            action = self.choose(bot)
            if action is None:
                continue
            self.done.clear()
            self.pending = (EVENT_OF[action["type"]], bot.you["seat"], time.perf_counter(), set())
            await bot.send(action)
            self.stats.actions += 1
            try:
                await asyncio.wait_for(self.done.wait(), 10)
            except TimeoutError:
                self.pending = None  # refused or lost: counted among the errors by the reader
            return


def _loopback(host: str) -> bool:
    try:
        return all(ipaddress.ip_address(info[4][0]).is_loopback for info in socket.getaddrinfo(host, None))
    except (OSError, ValueError):
        return False


async def _rss(base: str) -> float | None:
    try:
        async with httpx.AsyncClient(timeout=10) as http:
            text = (await http.get(base + "/metrics")).text
    except httpx.HTTPError:
        return None
    for line in text.splitlines():
        if line.startswith("process_resident_memory_bytes "):
            return float(line.split()[1])
    return None


@dataclass(frozen=True)
class Plan:
    ws_url: str
    players: int
    interval: float  # seconds between a room's beats
    rooms: int
    crisp: float  # how often a bot calls Crisp when it may


async def _room(plan: Plan, stats: Stats, rng: random.Random, stop: asyncio.Event) -> None:
    room = RoomBots(stats, rng, plan.crisp)
    players, interval, ws_url = plan.players, plan.interval, plan.ws_url
    async with contextlib.AsyncExitStack() as stack:
        for _ in range(players):
            ws = await stack.enter_async_context(connect(ws_url, max_size=2**22, compression=None, open_timeout=30))
            room.bots.append(Bot(ws, room))
        host = room.bots[0]
        await host.send({"type": "create", "name": "Bot 1"})
        code = (await asyncio.wait_for(host.welcome, 30))["room"]
        for k, bot in enumerate(room.bots[1:], start=2):
            await bot.send({"type": "join", "room": code, "name": f"Bot {k}"})
            await asyncio.wait_for(bot.welcome, 30)
        await host.send({"type": "options", "score_limit": 50, "turn_seconds": None, "discard_draw": True})
        await host.send({"type": "start"})
        stats.rooms_playing += 1
        if stats.rooms_playing == plan.rooms:
            stats.warm = True
        # Spread the rooms' beats over the interval, so the server sees a steady stream.
        await asyncio.sleep(rng.random() * interval)
        while not stop.is_set():
            beat = time.perf_counter()
            await room.step()
            await asyncio.sleep(max(0.0, interval - (time.perf_counter() - beat)))
        room.stopping = True
        for bot in room.bots:
            bot.reader.cancel()


async def run(
    url: str,
    rooms: int,
    players: int,
    *,
    pace: float = 1.0,
    duration: float = 30.0,
    crisp: float = 0.3,
    allow_remote: bool = False,
    seed: int = 1,
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
    rss_before = await _rss(base)
    plan = Plan(ws_url, players, 1.0 / pace if pace > 0 else 0.0, rooms, crisp)
    print(f"load test: {rooms} rooms x {players} players against {base}, {pace:g} action(s)/room/s, {duration:g} s")
    start = time.perf_counter()
    tasks = [asyncio.create_task(_room(plan, stats, random.Random(rng.random()), stop)) for _ in range(rooms)]
    await asyncio.sleep(duration)
    stop.set()
    results = await asyncio.gather(*tasks, return_exceptions=True)
    elapsed = time.perf_counter() - start
    failures = [r for r in results if isinstance(r, BaseException)]
    rss_after = await _rss(base)
    lat = sorted(stats.latencies)

    def pct(q: float) -> str:
        return f"{lat[min(len(lat) - 1, int(len(lat) * q))] * 1000:.1f}" if lat else "-"

    print(f"  actions: {stats.actions} ({stats.actions / elapsed:,.0f}/s); messages received: {stats.messages:,}")
    print(f"    ({stats.messages / elapsed:,.0f}/s); rounds finished: {stats.rounds}, games finished: {stats.games}")
    print(
        f"  action-to-last-view latency (ms): p50 {pct(0.5)}, p95 {pct(0.95)}, p99 {pct(0.99)}, "
        f"max {lat[-1] * 1000 if lat else 0:.1f}, mean {statistics.fmean(lat) * 1000 if lat else 0:.1f} "
        f"over {len(lat)} actions once all rooms were playing"
    )
    print(
        f"  errors: {stats.errors} {stats.error_codes or ''}; clock races (e.g. Crisp as the window closed): "
        f"{stats.races}; disconnects: {stats.disconnects}; rooms failed: {len(failures)}"
    )
    for failure in failures[:3]:
        print(f"    {type(failure).__name__}: {failure}")
    if rss_before is not None and rss_after is not None:
        connections = rooms * players
        print(
            f"  server RSS: {rss_before / 2**20:.1f} MiB before, {rss_after / 2**20:.1f} MiB after: "
            f"{(rss_after - rss_before) / 1024 / connections:.1f} KB per connection, "
            f"{(rss_after - rss_before) / 1024 / rooms:.1f} KB per room"
        )
    ok = not failures and stats.errors == 0 and stats.disconnects == 0
    return 0 if ok else 1
