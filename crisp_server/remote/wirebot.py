"""A computer player over the wire (``crisp-server bot``): it takes a seat in a real server's room through the
documented protocol only, and plays it with the same decision code as the rooms' own computer players.

It joins with ``join`` and keeps the token; when the connection drops it reconnects with a back-off and
``resume``s (``CrispClient`` asks ``sync`` on a gap in ``v``, as every client must); a socket that does not
open within :data:`crisp_server.remote.client.OPEN_TIMEOUT_S` (a frozen node) is given up and tried again the same
way. Every socket names the room in its URL (``/ws?room=CODE``: with several server nodes the proxy routes on
it); when the room moves to another node (``moved``, close 4005) it reconnects and resumes at once, and backs
off as usual only if that fails. Every update and snapshot goes to a :class:`crisp_server.bots.Bot`; what
the bot has to decide (``Bot.due``: a move, its crisp window, a ``ready``) is sent after the human-like pause
of :func:`crisp_server.bots.pause_ms`, scaled by ``pause`` (0: as soon as the rules allow). It waits in the
lobby for the host to start, plays until ``games`` games are over (after a rematch it waits in the lobby again
for the host's start, while games remain) and leaves.

A request the server refuses (a race with a timer, say) is logged; the bot asks for a snapshot and decides
again from it after a back-off that doubles up to 5 s, so that it never spins, and never waits for an answer
that will not come: it only acts on the state it was last sent.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import signal
import sys
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from enum import Enum
from typing import Any, Final
from urllib.parse import urlsplit, urlunsplit

from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidURI

from crisp_server.bots import LEVELS, Bot, Due, decision_key, pause_ms

from .client import CrispClient, ProtocolError

#: Exit statuses of ``crisp-server bot``.
EXIT_OK: Final = 0
EXIT_FAILED: Final = 1
EXIT_USAGE: Final = 2
EXIT_STOPPED: Final = 130  # SIGINT or SIGTERM: it left the room (as a shell reports a Ctrl-C)

#: Reconnecting after a drop: the first wait, doubled after each failed attempt up to the last.
RECONNECT_FIRST_S: Final = 0.25
RECONNECT_MAX_S: Final = 5.0
#: A server that cannot be reached again for this long is given up (the seat stays, as a player away).
RECONNECT_GIVE_UP_S: Final = 120.0
#: After a refused request: the wait before deciding again, doubled after each refusal in a row up to the last.
RETRY_FIRST_S: Final = 0.25
RETRY_MAX_S: Final = 5.0
#: The bot pings when the line has been quiet this long, and gives the connection up after this long without
#: an answer (a socket that died without closing is noticed, and resumed, within their sum).
PING_INTERVAL_S: Final = 5.0
PING_TIMEOUT_S: Final = 10.0
#: How long it waits for the server's ``left`` after sending ``leave``.
LEAVE_TIMEOUT_S: Final = 5.0
#: Names tried when none is given, numbered from the second on when the first is taken.
DEFAULT_NAMES: Final = 8

Say = Callable[[str], None]


def say_on_stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


@dataclass(frozen=True, slots=True)
class BotOptions:
    """What ``crisp-server bot`` was asked to do (see the module's doc)."""

    url: str
    room: str
    level: str
    name: str | None = None
    games: int = 1
    seed: int | None = None
    pause: float = 1.0
    lang: str = "en"


class Stop(Exception):
    """The bot cannot go on (refused, kicked, the room is gone): the message says why; exit 1."""


class End(Enum):
    """How play on one connection ended."""

    DONE = "done"  # the games asked for are over
    ORPHANED = "orphaned"  # every other player left: nobody will start another game
    LOST = "lost"  # the connection dropped: resume


def ws_url(url: str) -> str:
    """The WebSocket address for ``--url``: ``ws://`` or ``wss://``; ``http(s)://`` is taken to mean the
    server's ``/ws`` (a server's address is what people share). ``ValueError`` with a clear message else."""
    parts = urlsplit(url.strip())
    scheme = {"ws": "ws", "wss": "wss", "http": "ws", "https": "wss"}.get(parts.scheme.lower())
    try:
        parts.port  # noqa: B018 (it raises for a port that is not a number from 0 to 65535)
    except ValueError:
        scheme = None
    if scheme is None or not parts.hostname:
        raise ValueError(f"--url {url!r} is not a server address like ws://127.0.0.1:8000/ws")
    path = "/ws" if parts.path in ("", "/") else parts.path
    return urlunsplit((scheme, parts.netloc, path, parts.query, ""))


def default_names(level: str) -> list[str]:
    """The names a bot tries when it was given none: "Hard bot", "Hard bot 2", ..."""
    first = f"{level.capitalize()} bot"
    return [first] + [f"{first} {k}" for k in range(2, DEFAULT_NAMES + 1)]


@dataclass(slots=True)
class _Plan:
    """When to act on what the bot has to decide: ``key`` names the decision (see ``SeatPlayer._key``);
    ``earliest``: the loop time from which the rules allow it; ``pause``: the human-like pause after that."""

    key: Hashable
    earliest: float
    pause: float


class SeatPlayer:
    """One seat played by a :class:`Bot` over the wire, across the connections of the session."""

    def __init__(self, bot: Bot, rng: random.Random, *, pause: float, games: int, say: Say) -> None:
        self.bot = bot
        self.rng = rng  # the pauses' (the bot has its own, so that a pause factor changes no decision)
        self.pause = pause
        self.games = games
        self.say = say
        self.games_done = 0
        self.in_game = False  # a game is under way (told once when it starts)
        self.rounds_told = 0
        self.plan: _Plan | None = None
        self.acted: Hashable | None = None  # the decision last acted on: not again until the state changes
        self.refusals = 0  # in a row, for the same decision
        self.not_before = 0.0  # after a refusal: no new attempt before this loop time
        self.suspended = False  # the room cannot save changes: wait for its update
        self.names: list[str] = []
        self.entered = False  # this connection's welcome has been read
        self.syncing = False  # a ``sync`` was sent after a refusal: its snapshot has not come yet

    # -- one connection ------------------------------------------------------------------------------------

    def new_connection(self) -> None:
        """Before playing on another connection: a move sent just before the drop may be lost (decide again
        from the new state), and the new connection's first messages precede its welcome."""
        self.plan = None
        self.acted = None
        self.entered = self.syncing = False

    async def play(self, client: CrispClient) -> End:
        """Play on ``client`` (in the room) until the games are over, nobody is left to play with, or the
        connection drops. ``Stop`` if the seat is lost for good."""
        loop = asyncio.get_running_loop()
        while True:
            now = loop.time()
            deadline = self._deadline()
            if deadline is not None and deadline <= now:
                # A send that finds the connection closed ends nothing yet: what the server said before the
                # close (a ``moved``, say) is still read, then ``receive`` tells the connection is lost.
                with contextlib.suppress(ConnectionClosed):
                    await self._act(client)
                continue
            try:
                message = await client.receive(None if deadline is None else deadline - now)
            except ConnectionError:
                return End.LOST
            if message is None:
                continue
            with contextlib.suppress(ConnectionClosed):
                end = await self._take(client, message, loop.time())
                if end is not None:
                    return end

    def _deadline(self) -> float | None:
        if self.plan is None or self.plan.key == self.acted or self.suspended:
            return None
        return max(self.plan.earliest + self.plan.pause, self.not_before)

    async def _act(self, client: CrispClient) -> None:
        assert self.plan is not None
        self.acted = self.plan.key
        message = self.bot.decide()
        if message is None:
            return  # the crisp window may pass
        if message["type"] == "crisp":
            self.say("calls Crisp")
        await client.send(message)

    # -- what the server says ------------------------------------------------------------------------------

    async def _take(self, client: CrispClient, message: dict[str, Any], now: float) -> End | None:
        kind = message.get("type")
        if not self.entered:  # the refusals of entries tried before (a name taken) are no concern now
            self.entered = kind == "welcome"
            return None
        if kind in ("update", "snapshot"):
            if kind == "update":
                self.suspended = False
            else:
                self.syncing = False
            if any(e.get("type") == "available" for e in message.get("events", ())):
                self.acted = None  # the room came back from the database: ready flags were cleared
            self.bot.observe(message)
            self._tell(message)
            end = self._ending(message)
            if end is None:
                self._replan(now)
            return end
        if kind == "error":
            await self._refused(client, message, now)
        elif kind == "unavailable":
            self.suspended = True
            self.say(f"the room is unavailable: {message.get('message')}")
        elif kind == "restarting":
            self.say("the server is restarting")
        elif kind == "moved":
            self.say("the room moved to another server node")
        elif kind == "kicked":
            raise Stop("kicked by the host")
        elif kind == "replaced":
            raise Stop("another connection resumed this seat")
        elif kind == "room_closed":
            raise Stop("the room closed")
        return None

    async def _refused(self, client: CrispClient, error: dict[str, Any], now: float) -> None:
        """A request was refused: log it, ask for the current state, decide again from it after a back-off."""
        code = error.get("code")
        self.say(f"refused: {code} ({error.get('message')})")
        self.refusals += 1
        self.not_before = now + min(RETRY_FIRST_S * 2 ** min(self.refusals - 1, 20), RETRY_MAX_S)
        self.acted = None
        if self.plan is not None:
            self.plan.pause = 0.0  # it has thought already: only the back-off
        # Not after ``rate_limited`` (the state is fine: it was too fast), nor while the room is suspended (a
        # ``sync`` is refused then too; its update comes), nor twice before the snapshot comes.
        if code not in ("rate_limited", "unavailable") and not self.syncing:
            self.syncing = True
            await client.send({"type": "sync"})

    def _ending(self, state: dict[str, Any]) -> End | None:
        room, table, you = state["room"], state["table"], state["you"]
        if room["phase"] == "game_over" and self.in_game:
            self.in_game = False
            self.games_done += 1
            self.say(f"game {self.games_done} over: {_by_seat(self.names, table['totals'])}; {_winners(table)}")
            if self.games_done >= self.games:
                return End.DONE
        # The room's own computer players (``bot`` in their seat) never start a game or ask for a rematch.
        others = [s for i, s in enumerate(room["seats"]) if i != you["seat"] and not s["left"] and not s.get("bot")]
        went = any(e.get("type") in ("left", "kicked", "lobby") for e in state.get("events", ()))
        if not others and (room["phase"] == "game_over" or (room["phase"] == "lobby" and went)):
            # Nobody is left to start a game with (a lobby the host opened and nobody joined yet is not that).
            self.say("every other player left")
            return End.ORPHANED
        return None

    def _tell(self, state: dict[str, Any]) -> None:
        """One line for each notable thing the state shows: a game starts, a round's result, going back to the
        lobby (the game's end is told by ``_ending``)."""
        room, table = state["room"], state["table"]
        if table is not None:
            self.names = list(table["players"])
        if room["phase"] in ("peek", "play", "round_over") and not self.in_game:
            self.in_game = True
            self.rounds_told = len(table["scores"])
            self.say(f"game {self.games_done + 1} started: {', '.join(self.names)}")
        if table is not None:
            scores = table["scores"]
            self.rounds_told = min(self.rounds_told, len(scores))  # a rematch starts the list again
            for index in range(self.rounds_told, len(scores)):
                self.say(f"round {index + 1}: {_by_seat(self.names, scores[index])}")
            self.rounds_told = len(scores)
        if any(e.get("type") == "lobby" for e in state.get("events", ())):
            self.say("back in the lobby: waiting for the host to start")

    # -- when to act ---------------------------------------------------------------------------------------

    def _key(self, due: Due) -> Hashable:
        """What identifies a decision across the updates that do not change it (a reaction, someone's
        connection): the same key keeps its pause; a new one is planned afresh (in this session's game)."""
        return (self.games_done, decision_key(self.bot.memory, due))

    def _replan(self, now: float) -> None:
        due = self.bot.due()
        if due is None:
            self.plan = None
            return
        key = self._key(due)
        r = self.bot.memory.round
        # ``at`` is round time: how far it lies after the instant this state was made.
        allowed = now + (max(0, due.at - r["now"]) / 1000 if due.kind != "ready" and r is not None else 0.0)
        if self.plan is not None and self.plan.key == key:
            # A later state of the same decision (the draw block's end, say): the rules may allow it sooner.
            self.plan.earliest = min(self.plan.earliest, allowed)
            return
        pause = pause_ms(due, self.rng, self.bot.memory.phase) * self.pause / 1000
        if due.kind == "crisp" and due.until is not None and r is not None:
            pause = min(pause, max(0, due.until - r["now"] - 300) / 1000)  # never let the window close on it
        self.plan = _Plan(key, allowed, pause)
        self.refusals = 0
        self.not_before = 0.0


def _by_seat(names: list[str], values: list[int]) -> str:
    return ", ".join(f"{name} {value}" for name, value in zip(names, values, strict=False))


def _winners(table: dict[str, Any]) -> str:
    winners = [table["players"][s] for s in table["winners"]]
    return ("winner " if len(winners) == 1 else "shared win: ") + ", ".join(winners)


# -- the session -----------------------------------------------------------------------------------------------


async def run_bot(options: BotOptions, say: Say = say_on_stderr) -> int:
    """Play as ``options`` says; the exit status (see ``EXIT_*``). Cancelling it (the command does on
    SIGINT and SIGTERM) leaves the room first."""
    problem = _check(options)
    if problem is not None:
        say(problem)
        return EXIT_USAGE
    url = ws_url(options.url)
    room = options.room.strip().upper()
    rng = random.Random(options.seed)
    player = SeatPlayer(
        Bot(options.level, random.Random(rng.getrandbits(64))),
        random.Random(rng.getrandbits(64)),
        pause=options.pause,
        games=options.games,
        say=say,
    )
    token: str | None = None
    lost_since: float | None = None
    delay = RECONNECT_FIRST_S
    moving = False  # reconnecting at once after a move: if that fails, back off as usual
    loop = asyncio.get_running_loop()
    try:
        while True:
            try:
                # A socket that has not opened within OPEN_TIMEOUT_S (a frozen node takes the connection and
                # never answers) is given up and tried again after the back-off, like a refused one.
                async with CrispClient.connect(
                    url, room=room, ping_interval=PING_INTERVAL_S, ping_timeout=PING_TIMEOUT_S
                ) as client:
                    try:
                        try:
                            if token is None:
                                name = await _join(client, room, options)
                                token = client.token
                                say(f"joined room {room} as seat {client.seat} ({name}, level {options.level})")
                                if client.phase == "lobby":
                                    say("waiting for the host to start")
                            else:
                                await client.resume(room, token, options.lang)
                                say(f"resumed seat {client.seat}")
                        except (ConnectionError, ConnectionClosed):
                            if not client.moved or moving:
                                raise
                            # The room moved before the entry was answered in full: again at once, there (a
                            # seat the welcome gave is resumed).
                            token = token or client.token
                            moving = True
                            again = "joining again" if token is None else "resuming"
                            say(f"connection lost ({_close_reason(client)}); {again} at once")
                            continue
                        lost_since, delay, moving = None, RECONNECT_FIRST_S, False
                        player.new_connection()
                        end = await player.play(client)
                        if end is not End.LOST:
                            await _leave(client)
                            say(f"left room {room} after {player.games_done} game(s)")
                            return EXIT_OK
                        if client.moved:  # to another server node: follow it at once
                            moving = True
                            say(f"connection lost ({_close_reason(client)}); resuming at once")
                            continue
                        reason = f"connection lost ({_close_reason(client)})"
                    except asyncio.CancelledError:
                        with contextlib.suppress(Exception):
                            await _leave(client)
                        say("stopped: left the room")
                        return EXIT_STOPPED
            except ProtocolError as exc:
                if token is None or exc.code not in ("rate_limited", "unavailable"):
                    what = "join room" if token is None else "resume the seat in room"
                    raise Stop(f"cannot {what} {room}: {exc.message.get('message')} ({exc.code})") from None
                reason = f"resume refused for now: {exc.code}"
            except (OSError, InvalidHandshake, InvalidURI, TimeoutError, ConnectionError, ConnectionClosed) as exc:
                if token is None:
                    raise Stop(f"cannot connect to {url}: {_describe(exc)}") from None
                reason = f"cannot reconnect: {_describe(exc)}"
            now = loop.time()
            lost_since = now if lost_since is None else lost_since
            if now - lost_since > RECONNECT_GIVE_UP_S:
                raise Stop(f"gave up: the server could not be reached for {RECONNECT_GIVE_UP_S:.0f} s")
            say(f"{reason}; resuming in {delay:g} s")
            await asyncio.sleep(delay)
            delay = min(delay * 2, RECONNECT_MAX_S)
    except Stop as exc:
        say(str(exc))
        return EXIT_FAILED
    except asyncio.CancelledError:
        say("stopped")
        return EXIT_STOPPED


def _check(options: BotOptions) -> str | None:
    if options.level not in LEVELS:
        return f"--level: unknown level {options.level!r} (one of {', '.join(LEVELS)})"
    if options.games < 1:
        return "--games must be at least 1"
    if options.pause < 0:
        return "--pause must be 0 or more"
    if not options.room.strip():
        return "--room: a room code is needed"
    try:
        ws_url(options.url)
    except ValueError as exc:
        return str(exc)
    return None


async def _join(client: CrispClient, room: str, options: BotOptions) -> str:
    """Take a seat; the name it got. Without ``--name`` the next default name is tried when one is taken."""
    names = [options.name] if options.name is not None else default_names(options.level)
    for name in names:
        try:
            await client.join(room, name, options.lang)
        except ProtocolError as exc:
            if exc.code == "name_taken" and options.name is None:
                continue
            raise
        return name
    raise Stop(f"cannot join room {room}: every default name is taken (give one with --name)")


async def _leave(client: CrispClient) -> None:
    """Leave the room and wait for the server's ``left`` (or the close), a few seconds at most."""
    with contextlib.suppress(ConnectionClosed, ConnectionError, TimeoutError):
        await client.send({"type": "leave"})
        async with asyncio.timeout(LEAVE_TIMEOUT_S):
            while (message := await client.receive()) is not None and message.get("type") != "left":
                pass


def _close_reason(client: CrispClient) -> str:
    closed = client.closed
    if closed is None:
        return "no answer"
    frame = closed.rcvd or closed.sent
    return f"code {frame.code}" if frame is not None else "no close frame"


def _describe(exc: BaseException) -> str:
    return str(exc) or type(exc).__name__


def main(options: BotOptions) -> int:
    """``crisp-server bot``: run the session; SIGINT and SIGTERM make it leave the room and exit 130."""

    async def _main() -> int:
        task = asyncio.current_task()
        assert task is not None
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, task.cancel)
        return await run_bot(options)

    try:
        return asyncio.run(_main())
    except (asyncio.CancelledError, KeyboardInterrupt):  # a second signal while it was leaving
        return EXIT_STOPPED
