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
from dataclasses import asdict, dataclass, field
from typing import Any
from urllib.parse import urlsplit

import httpx
import orjson
from picows import WSCloseCode, WSError, WSFrame, WSListener, WSMsgType, WSTransport, ws_connect

from .client import CLOSE_MOVED, CLOSE_RESTARTING, OPEN_TIMEOUT_S, room_url

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
#: The same for a bot's last message of this type: a "ready" that arrived as the peek ended.
RACES_AFTER = {"wrong_phase": "ready"}

#: Rooms of the first wave joining at the same time (see ``run``).
JOINS_AT_ONCE = 200

#: The clocks in a state (milliseconds left) that say when a waiting room may go on.
CLOCKS = ("may_draw_in", "window_closes_in", "peek_ends_in", "next_round_in")

#: A bot whose room moved or whose server restarts reconnects at once; when that fails, it tries again after
#: this long, doubled each time up to the most, and gives up (a disconnect) after the last.
RECONNECT_FIRST_S = 0.25
RECONNECT_MAX_S = 5.0
RECONNECT_GIVE_UP_S = 60.0


@dataclass
class Stats:
    actions: int = 0
    messages: int = 0
    errors: int = 0
    races: int = 0
    disconnects: int = 0
    moved: int = 0  # reconnects after the room moved to another node (4005)
    restarted: int = 0  # reconnects after the server restarted (1012)
    games: int = 0
    rounds: int = 0
    rooms_ready: int = 0
    rooms_failed: int = 0  # first rooms that could not join (failed_rooms in the result)
    churn_ready: int = 0  # --churn rooms playing
    warm: bool = False  # latencies count while true: from every first room playing to the window closing
    churning: bool = False  # from the first --churn room's connection until all of them play
    latencies: list[float] = field(default_factory=list)
    churn_latencies: list[float] = field(default_factory=list)
    error_codes: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class Plan:
    ws_url: str
    rooms: int
    players: int
    interval: float  # least seconds between a room's actions (0: as fast as the rules allow)
    crisp: float  # how often a bot calls Crisp when it may
    lobby: bool  # stay in the lobby: idle connections


class Bot(WSListener):
    """One player: a socket (a new one after its room moved or its server restarted), the last state it was
    sent, and the frames it feeds to its room."""

    def __init__(self, room: RoomBots) -> None:
        self.room = room
        self.transport: WSTransport | None = None
        self.state: dict[str, Any] | None = None
        self.received = 0.0  # when the state arrived (its clocks count from then)
        self.readied: tuple[str, int] | None = None  # the (phase, round) it last said ready in
        self.last_sent = ""  # the type of the last message it sent
        self.welcome: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.code: str | None = None  # the room's, from the welcome
        self.token: str | None = None  # the seat's, from the first welcome
        self.told = ""  # the socket was told "moved" or "restarting": its close follows
        self.close_code: int | None = None  # the code of the server's close on this socket
        self.reconnecting: asyncio.Task[None] | None = None
        self.fresh = asyncio.Event()  # set by every state: a resumed bot acts only on the state sent after it
        self._parts: list[bytes] = []

    def on_ws_connected(self, transport: WSTransport) -> None:
        self.transport = transport

    def on_ws_frame(self, transport: WSTransport, frame: WSFrame) -> None:
        kind = frame.msg_type
        if kind == WSMsgType.CLOSE:
            self.close_code = int(frame.get_close_code().value)
            transport.send_close(frame.get_close_code())
            transport.disconnect()
            return
        if kind not in (WSMsgType.TEXT, WSMsgType.CONTINUATION):
            return
        if not frame.fin:
            self._parts.append(frame.get_payload_as_bytes())
            return
        if self._parts:
            payload: bytes | memoryview = b"".join([*self._parts, frame.get_payload_as_bytes()])
            self._parts = []
        else:
            payload = frame.get_payload_as_memoryview()
        self.on_message(orjson.loads(payload))

    def on_message(self, message: dict[str, Any]) -> None:
        stats = self.room.stats
        stats.messages += 1
        kind = message.get("type")
        if kind in ("update", "snapshot"):
            self.state = message
            self.received = time.perf_counter()
            self.fresh.set()
            self.room.seen(self, message.get("events", ()))
        elif kind == "welcome" and not self.welcome.done():
            self.code = message.get("room") or self.code
            self.token = message.get("token") or self.token
            self.welcome.set_result(message)
        elif kind in ("moved", "restarting"):
            self.told = str(kind)
        elif kind == "error":
            code = str(message.get("code"))
            if not self.welcome.done():
                self.welcome.set_exception(RuntimeError(code))
                if self.reconnecting is not None:
                    return  # a resume refused (unavailable, say): tried again, and counted if it never works
            if code in RACES or RACES_AFTER.get(code, "") == self.last_sent:
                stats.races += 1
            else:
                stats.errors += 1
                stats.error_codes[code] = stats.error_codes.get(code, 0) + 1

    def on_ws_disconnected(self, transport: WSTransport) -> None:
        if transport is not self.transport:
            return
        self.transport = None
        if not self.welcome.done():
            self.welcome.set_exception(ConnectionError(f"disconnected before the welcome ({self._why()})"))
            self.welcome.exception()  # retrieved: only the bots a room waits for raise it
        if self.room.stopping or self.reconnecting is not None:
            return  # a reconnect under way sees its own socket fail
        moved = self.close_code == CLOSE_MOVED or self.told == "moved"
        restarted = self.close_code == CLOSE_RESTARTING or self.told == "restarting"
        if (moved or restarted) and self.token is not None and self.code is not None:
            self.room.forget_pending()  # what was under way may be lost with the socket: not measured
            self.reconnecting = asyncio.get_running_loop().create_task(self._reconnect(moved))
        else:
            self.room.stats.disconnects += 1

    def _why(self) -> str:
        return f"close {self.close_code}" if self.close_code is not None else "no close frame"

    async def _reconnect(self, moved: bool) -> None:
        """Reconnect to the room's URL at once and resume; if that fails, again after a back-off, until it
        works (the bot plays on: counted as moved or restarted) or it gives up (a disconnect)."""
        stats = self.room.stats
        assert self.code is not None
        url = room_url(self.room.ws_url, self.code)
        loop = asyncio.get_running_loop()
        started, delay = loop.time(), RECONNECT_FIRST_S
        try:
            while not self.room.stopping:
                self.welcome = loop.create_future()
                self.told, self.close_code, self._parts = "", None, []
                self.fresh.clear()  # a new socket is sent nothing before its welcome: the next state is its own
                try:
                    # The whole opening (the TCP connect too, which picows' own limit leaves out) within
                    # OPEN_TIMEOUT_S: a frozen node takes the connection and never answers; the next try, after
                    # the back-off, reaches a live one once the proxy has taken the frozen one out.
                    async with asyncio.timeout(OPEN_TIMEOUT_S):
                        await ws_connect(
                            lambda: self, url, websocket_handshake_timeout=OPEN_TIMEOUT_S, max_frame_size=2**22
                        )
                    self.send({"type": "resume", "room": self.code, "token": self.token})
                    async with asyncio.timeout(10):
                        await self.welcome
                    async with asyncio.timeout(10):
                        await self.fresh.wait()
                    if self.transport is None:
                        raise ConnectionError("disconnected after the welcome")
                except (OSError, WSError, ConnectionError, RuntimeError, TimeoutError):
                    if self.transport is not None:  # it opened, but no welcome came
                        self.hang_up()
                        self.transport = None
                    if loop.time() - started > RECONNECT_GIVE_UP_S:
                        stats.disconnects += 1
                        return
                    await asyncio.sleep(delay)
                    delay = min(delay * 2, RECONNECT_MAX_S)
                    continue
                self.readied = None  # the server asks for ready again after it rebuilt the room
                if moved:
                    stats.moved += 1
                else:
                    stats.restarted += 1
                return
        finally:
            self.reconnecting = None
            if self.transport is not None and self.room.stopping:
                self.hang_up()

    def send(self, message: dict[str, Any]) -> None:
        if self.transport is not None:
            self.last_sent = message["type"]
            self.transport.send(WSMsgType.TEXT, orjson.dumps(message))

    def hang_up(self) -> None:
        if self.transport is not None:
            self.transport.send_close(WSCloseCode.OK)
            self.transport.disconnect()

    @property
    def you(self) -> dict[str, Any]:
        return self.state["you"] if self.state else {}

    @property
    def phase(self) -> str | None:
        return self.state["room"]["phase"] if self.state else None


class RoomBots:
    """The bots of one room, and the action whose publication they are waiting for."""

    def __init__(self, stats: Stats, rng: random.Random, crisp: float, ws_url: str) -> None:
        self.stats = stats
        self.ws_url = ws_url  # the server's /ws: a room's sockets add ?room=CODE once it is known
        self.rng = rng
        self.crisp = crisp
        self.bots: list[Bot] = []
        self.stopping = False
        self.pending: tuple[str, int, float, set[Bot]] | None = None  # event, seat, sent at, who has seen it
        self.done: asyncio.Future[None] | None = None
        self.rematched = -1  # the state version the host asked for a rematch in

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
                    self._published(time.perf_counter() - pending[2])

    def forget_pending(self) -> None:
        """A bot's socket went while an action was under way: the room goes on without measuring it."""
        self.pending = None
        if self.done is not None and not self.done.done():
            self.done.set_result(None)

    def _published(self, latency: float) -> None:
        stats = self.stats
        if stats.warm:
            stats.latencies.append(latency)
            if stats.churning:
                stats.churn_latencies.append(latency)
        self.pending = None
        if self.done is not None and not self.done.done():
            self.done.set_result(None)

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

    async def step(self) -> bool:
        """One beat of the room: get ready, start a rematch, or play one action and wait for everyone to
        see it. Whether it played an action."""
        if any(bot.reconnecting is not None for bot in self.bots):
            return False  # a bot is coming back (its room moved, its server restarted): wait for it
        host = self.bots[0]
        phase = host.phase
        if phase in ("peek", "round_over"):
            for bot in self.bots:
                fair = bot.state["room"]["fair"] if bot.state else None
                key = (phase, fair["round"] if fair else -1)
                if bot.readied != key:  # once per peek and per pause, not on every beat
                    bot.readied = key
                    bot.send({"type": "ready"})
            return False
        if phase == "game_over":
            v = host.state["v"] if host.state else -1
            if host.you.get("host") and self.rematched != v:  # once per game, not on every beat
                self.rematched = v
                host.send({"type": "rematch"})  # back to the lobby, where nobody else is waited for:
                host.send({"type": "start"})  # the room handles a connection's messages in order
            return False
        if phase != "play":
            return False
        for bot in self.rng.sample(self.bots, len(self.bots)):
            action = self.choose(bot)
            if action is None:
                continue
            self.done = asyncio.get_running_loop().create_future()
            self.pending = (EVENT_OF[action["type"]], bot.you["seat"], time.perf_counter(), set())
            bot.send(action)
            self.stats.actions += 1
            try:
                async with asyncio.timeout(10):
                    await self.done
            except TimeoutError:
                self.pending = None  # refused or lost: counted among the errors by the reader
            return True
        return False

    def idle_wait(self) -> float:
        """Seconds until the room may go on, as its clocks say (a draw blocked by the crisp window, the
        peek, the pause between rounds), or a short poll when they say nothing."""
        host = self.bots[0]
        clock = host.state.get("clock") if host.state else None
        if not clock:
            return 0.1
        since = time.perf_counter() - host.received
        waits = [ms / 1000 - since for key in CLOCKS if (ms := clock.get(key))]
        ahead = [w for w in waits if w > 0]
        return min(1.0, max(0.01, min(ahead))) if ahead else 0.05


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
