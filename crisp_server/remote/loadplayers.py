"""The players of ``crisp-server loadtest`` (:mod:`crisp_server.remote.loadtest`): each bot one WebSocket
(picows) that plays random legal moves, and each room's bots, which pace their room's actions, time each
action until the last player has seen it, and count what they were sent.
"""

from __future__ import annotations

import asyncio
import random
import time
from dataclasses import dataclass, field
from typing import Any

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
