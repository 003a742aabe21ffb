"""Random players over the wire, and the helpers that keep a test in step with a server it drives by hand.

Everything here talks to the server through the protocol only; the one exception is :class:`StackedSecrets`,
which stands in for the ``secrets`` module of ``crisp_server.rooms.table`` so that a test can deal the decks
it needs (the room shuffles with ``secrets``, and has no other way to be given a deck).

Time only moves when a test moves the server's ``ManualClock``; messages still travel over real sockets.
:func:`settle` is the barrier a test waits on before it reads any state: a room handles its inbox in
order, timer ticks included, and answers ``ping`` in that order too, so a client's ``pong`` comes after
everything the room had sent it.
"""

from __future__ import annotations

import asyncio
import random
import secrets
from collections import deque
from collections.abc import Iterable, MutableSequence, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

import pytest

from crisp_server.engine import FULL_DECK
from crisp_server.remote.client import CrispClient
from crisp_server.rooms import luck
from tests.web.harness import Harness

SLOTS: Final = ("left", "middle", "right")
CARD_CODES: Final = frozenset(FULL_DECK)
#: Bots send far more messages than people, and the limits run on the real clock while the game runs on a
#: manual one: the tests that drive games lift them (the limits have their own tests).
OPEN_LIMITS: Final[dict[str, Any]] = {
    "rate_burst": 1_000_000,
    "rate_per_second": 1_000_000.0,
    "lookup_burst": 1_000_000,
    "lookup_per_minute": 1_000_000.0,
    "send_queue": 4096,
}

Message = dict[str, Any]


def card_codes(message: object) -> set[str]:
    """Every card code anywhere in a JSON-like value (keys and values, at any depth)."""
    found: set[str] = set()
    stack: list[object] = [message]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if item in CARD_CODES:
                found.add(item)
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list | tuple):
            stack.extend(item)
    return found


# -- decks -----------------------------------------------------------------------------------------------


def dealt_hands(deck: Sequence[str], players: int, dealer: int) -> list[list[str]]:
    """The hands docs/rules.md deals: three passes (left, middle, right), each from the seat left of the dealer."""
    hands: list[list[str]] = [[] for _ in range(players)]
    i = 0
    for _slot in SLOTS:
        for k in range(1, players + 1):
            hands[(dealer + k) % players].append(deck[i])
            i += 1
    return hands


def stacked_deck(dealer: int, hands: Sequence[Sequence[str]], pile: Sequence[str] = ()) -> list[str]:
    """A deck that deals ``hands`` (by seat) and whose draw pile starts with ``pile`` (top first)."""
    n = len(hands)
    deck: list[str] = [""] * (3 * n)
    for k in range(1, n + 1):
        seat = (dealer + k) % n
        for slot in range(3):
            deck[slot * n + k - 1] = hands[seat][slot]
    used = set(deck) | set(pile)
    deck.extend(pile)
    deck.extend(c for c in FULL_DECK if c not in used)
    assert sorted(deck) == sorted(FULL_DECK), "a stacked deck must hold each card once"
    return deck


class StackedSecrets:
    """Stands in for ``secrets`` and ``shuffle`` in the room module: the decks given (then seeded shuffles),
    a fixed first dealer (or a seeded one), and real salts so that the commitments stay honest."""

    def __init__(
        self, first_dealer: int | None = None, decks: Iterable[Sequence[str]] = (), seed: int | str = 0
    ) -> None:
        self.first_dealer = first_dealer
        self.decks: deque[list[str]] = deque(list(d) for d in decks)
        self.rng = random.Random(seed)

    def shuffle(self, deck: MutableSequence[str]) -> None:
        if self.decks:
            deck[:] = self.decks.popleft()
        else:
            self.rng.shuffle(deck)

    def randbelow(self, n: int) -> int:
        return self.first_dealer % n if self.first_dealer is not None else self.rng.randrange(n)

    def token_hex(self, nbytes: int | None = None) -> str:
        return secrets.token_hex(nbytes)


def rig(
    monkeypatch: pytest.MonkeyPatch,
    first_dealer: int | None = None,
    decks: Iterable[Sequence[str]] = (),
    seed: int | str = 0,
) -> StackedSecrets:
    """Deal ``decks`` (then seeded shuffles) in every room this test creates."""
    fake = StackedSecrets(first_dealer, decks, seed)
    monkeypatch.setattr(luck, "LUCK", fake)
    return fake


# -- keeping in step -------------------------------------------------------------------------------------


async def barrier(clients: Iterable[CrispClient]) -> None:
    """Return once every client (each a member of a room) holds all the messages its room had sent it."""

    async def one(client: CrispClient) -> None:
        start = len(client.messages)
        await client.send({"type": "ping"})
        await client.wait_for(lambda c: any(m.get("type") == "pong" for m in c.messages[start:]), what="pong")

    await asyncio.gather(*(one(c) for c in clients))


async def settle(server: Harness, clients: Iterable[CrispClient]) -> None:
    """:func:`barrier`, then the same again while a room's timer is due (one set for an instant already
    reached only fires when the manual clock is next moved)."""
    members = list(clients)
    await barrier(members)
    while any(when <= server.clock.now() for when in server.clock.pending()):
        server.clock.advance(0)
        await barrier(members)


def events(client: CrispClient, kind: str | None = None) -> list[Message]:
    """The events a client was sent (of type ``kind`` if given), in order."""
    out: list[Message] = []
    for message in client.messages:
        if message.get("type") in ("update", "snapshot"):
            out.extend(e for e in message["events"] if kind is None or e["type"] == kind)
    return out


# -- players ---------------------------------------------------------------------------------------------


@dataclass(eq=False)
class Player:
    """A seat and its connections: ``client`` is ``None`` while the player is away."""

    seat: int
    name: str
    token: str
    client: CrispClient | None
    connections: list[CrispClient] = field(default_factory=list)
    left: bool = False


@dataclass(frozen=True)
class Style:
    """How the bots play (probabilities per chance)."""

    crisp: float = 0.1
    """Call Crisp, each time the window is open and a bot looks."""
    patient: bool = False
    """Never call Crisp before the round's draw pile has been turned over (long rounds)."""
    idle: float = 0.0
    """Let the move time out (rooms with a turn timer)."""
    ready: float = 0.7
    """End the peek or the pause between rounds by everyone sending ``ready`` (else wait for the clock)."""
    away: float = 0.0
    """A connected player disconnects (never the last one connected)."""
    back: float = 0.0
    """A player who is away resumes."""
    leave: float = 0.0
    """A connected player leaves for good (as long as three players stay)."""
    passive: bool = False
    """Never change a hand: draw from the draw pile and discard (a King is used: it must be)."""


class Bots:
    """Seated bots and spectators of one room, played one step at a time by the test."""

    def __init__(
        self,
        server: Harness,
        code: str,
        players: list[Player],
        *,
        spectators: list[CrispClient],
        rng: random.Random,
        style: Style,
    ) -> None:
        self.server = server
        self.code = code
        self.players = players
        self.spectators = spectators
        self.rng = rng
        self.style = style
        self._seen_at: dict[int, int] = {}  # room version -> clock instant at which it was sent

    @classmethod
    async def start(
        cls,
        server: Harness,
        n: int,
        rng: random.Random,
        *,
        style: Style | None = None,
        options: dict[str, Any] | None = None,
        spectators: int = 0,
    ) -> Bots:
        """A room with ``n`` bots whose game has just been dealt (the peek phase), watched by ``spectators``."""
        code, clients = await server.lobby([f"P{i}" for i in range(n)])
        players = []
        for i, c in enumerate(clients):
            assert c.token is not None
            assert c.seat == i
            players.append(Player(i, f"P{i}", c.token, c, [c]))
        bots = cls(server, code, players, spectators=[], rng=rng, style=style or Style())
        host = clients[0]
        if options is not None:
            assert await bots.send(host, {"type": "options", **options}) is None
        assert await bots.send(host, {"type": "start"}) is None
        for _ in range(spectators):
            watcher = await server.client()
            await watcher.watch(code)
            bots.spectators.append(watcher)
        await bots.settle()
        assert bots.phase == "peek"
        return bots

    # -- reading ---------------------------------------------------------------------------------------

    def members(self) -> list[CrispClient]:
        return [p.client for p in self.players if p.client is not None] + self.spectators

    @property
    def reader(self) -> CrispClient:
        """A member with the latest state (after :meth:`settle` every member has it)."""
        members = self.members()
        assert members, "nobody is connected to read the room"
        return members[-1]

    @property
    def state(self) -> Message:
        state = self.reader.state
        assert state is not None
        return state

    @property
    def phase(self) -> str:
        phase: str = self.state["room"]["phase"]
        return phase

    @property
    def round(self) -> Message:
        table = self.state["table"]
        assert table is not None
        assert table["round"] is not None
        r: Message = table["round"]
        return r

    def left_ms(self, key: str) -> int | None:
        """``clock[key]`` as it stands now: the message says what was left when it was sent."""
        state = self.state
        value: int | None = state["clock"][key]
        if value is None:
            return None
        elapsed = self.server.clock.now() - self._seen_at[state["v"]]
        return max(0, value - elapsed)

    async def snapshot(self) -> Message:
        """A fresh ``snapshot`` (its ``clock`` is measured now, not when the last change was published)."""
        reader = self.reader
        start = len(reader.messages)
        await reader.send({"type": "sync"})
        await self.settle()
        snapshot: Message = next(m for m in reader.messages[start:] if m["type"] == "snapshot")
        return snapshot

    def connected(self, seat: int) -> CrispClient | None:
        return self.players[seat].client

    # -- acting ----------------------------------------------------------------------------------------

    async def settle(self) -> None:
        await settle(self.server, self.members())
        self._seen_at.setdefault(self.state["v"], self.server.clock.now())

    async def advance(self, ms: int) -> None:
        await self.server.advance(ms)
        await self.settle()

    async def send(self, client: CrispClient, message: Message) -> str | None:
        """Send and settle; the error code, or ``None`` if accepted."""
        start = len(client.messages)
        await client.send(message)
        await self.settle()
        errors = [m for m in client.messages[start:] if m.get("type") == "error"]
        assert len(errors) <= 1, errors
        return errors[0]["code"] if errors else None

    async def do(self, seat: int, message: Message) -> None:
        """Send what the server must accept (a move the bot's ``you.can`` listed, a ready, a call)."""
        client = self.connected(seat)
        assert client is not None
        error = await self.send(client, message)
        assert error is None, f"seat {seat}: {message} refused with {error}"

    async def disconnect(self, seat: int) -> None:
        player = self.players[seat]
        client = player.client
        assert client is not None
        player.client = None
        await client.close()
        watcher = self.reader
        await watcher.wait_for(
            lambda c: c.state is not None and not c.state["room"]["seats"][seat]["connected"], what="disconnected"
        )
        await self.settle()

    async def resume(self, seat: int) -> CrispClient:
        player = self.players[seat]
        assert player.client is None
        client = await self.server.client()
        await client.resume(self.code, player.token)
        assert client.seat == seat
        player.client = client
        player.connections.append(client)
        await self.settle()
        return client

    async def leave(self, seat: int) -> None:
        player = self.players[seat]
        client = player.client
        assert client is not None
        await client.send({"type": "leave"})
        await client.next_message("left")
        player.client = None
        player.left = True
        await self.settle()

    # -- playing ---------------------------------------------------------------------------------------

    async def ready_all(self) -> None:
        """Every connected player sends ``ready`` (the peek, or the pause between rounds, ends)."""
        phase = self.phase
        for p in self.players:
            if p.client is not None and self.phase == phase:
                await self.do(p.seat, {"type": "ready"})
        assert self.phase != phase, f"still {phase} with everyone ready"

    async def play_turn(self) -> None:
        """Step until the turn under way has ended (the next turn began, or the round ended)."""
        start = (self.round["index"], self.round["turn"])
        for _ in range(100):
            if self.phase != "play" or (self.round["index"], self.round["turn"]) != start:
                return
            await self.step()
        raise AssertionError("the turn did not end")

    async def call_crisp(self, seat: int) -> None:
        await self.do(seat, {"type": "crisp"})

    async def play_game(self, max_steps: int = 20_000) -> None:
        """Step until the game is over."""
        for _ in range(max_steps):
            if not await self.step():
                return
        raise AssertionError(f"the game did not end within {max_steps} steps")

    async def play_round(self, max_steps: int = 5_000) -> None:
        """Step until the current round has ended (the phase is ``round_over`` or ``game_over``)."""
        for _ in range(max_steps):
            if self.phase in ("round_over", "game_over"):
                return
            await self.step()
        raise AssertionError(f"the round did not end within {max_steps} steps")

    async def step(self) -> bool:
        """One thing happens: a move, a call, a ready, a disconnect or a tick of the clock. ``False``: the
        game is over."""
        rng, style = self.rng, self.style
        phase = self.phase
        if phase == "game_over":
            return False
        if style.away and rng.random() < style.away:
            connected = [p for p in self.players if p.client is not None]
            if len(connected) > 1:
                await self.disconnect(rng.choice(connected).seat)
                return True
        if style.leave and rng.random() < style.leave:
            staying = [p for p in self.players if not p.left]
            connected = [p for p in staying if p.client is not None]
            if len(staying) > 3 and len(connected) > 1:
                await self.leave(rng.choice(connected).seat)
                return True
        if style.back and rng.random() < style.back:
            away = [p for p in self.players if p.client is None and not p.left]
            if away:
                await self.resume(rng.choice(away).seat)
                return True
        if phase in ("peek", "round_over"):
            await self._between(phase)
        elif phase == "play":
            await self._play()
        else:
            raise AssertionError(f"unexpected phase {phase}")
        return True

    async def _between(self, phase: str) -> None:
        waiting = [p for p in self.players if p.client is not None and not p.left]
        key = "peek_ends_in" if phase == "peek" else "next_round_in"
        if waiting and self.rng.random() < self.style.ready:
            for p in waiting:
                assert p.client is not None
                if not self.state["room"]["seats"][p.seat]["ready"]:
                    await self.do(p.seat, {"type": "ready"})
                if self.phase != phase:
                    return
            raise AssertionError(f"every connected player is ready, and still {phase}")
        wait = self.left_ms(key)
        assert wait is not None, f"no {key} in the {phase} phase"
        await self.advance(wait)
        assert self.phase != phase, f"still {phase} after {key}"

    async def _play(self) -> None:
        rng, style = self.rng, self.style
        r = self.round
        window = r["window"]
        if window is not None and not style.passive and (not style.patient or self._turned_over()):
            caller = self.connected(window["seat"])
            if caller is not None and "crisp" in caller.you["can"] and rng.random() < style.crisp:
                await self.do(window["seat"], {"type": "crisp"})
                return
        turn: int = r["turn"]
        mover = self.connected(turn)
        if mover is None:  # away or gone: the room plays on when the auto time-out or the clock says
            await self._wait_for_clock(("auto_timeout_in", "deadline_in", "may_draw_in"))
            return
        moves = [m for m in mover.you["can"] if m != "crisp"]
        if not moves:  # the two-second block of the previous player's window
            await self._wait_for_clock(("may_draw_in",))
            return
        if style.idle and self.left_ms("deadline_in") is not None and rng.random() < style.idle:
            await self._wait_for_clock(("deadline_in",))
            return
        await self.do(turn, self._choose(turn, moves))

    def _turned_over(self) -> bool:
        """Whether the reader has seen the current round's draw pile turned over."""
        for message in reversed(self.reader.messages):
            for e in message.get("events", ()):
                if e["type"] == "pile_turned":
                    return True
                if e["type"] == "round_started":
                    return False
        return False

    async def _wait_for_clock(self, keys: Sequence[str]) -> None:
        # A clock at 0 has run out already (a block that has ended); the one to wait for is still running.
        waits = [w for w in (self.left_ms(k) for k in keys) if w]
        assert waits, f"nothing to wait for: {keys} in {self.state['clock']}"
        wait = min(waits)
        v = self.state["v"]
        await self.advance(wait)
        assert self.state["v"] > v, f"nothing happened after {wait} ms ({keys})"

    def _choose(self, seat: int, moves: list[str]) -> Message:
        rng = self.rng
        if self.style.passive:
            order = ("draw_deck", "discard", "king")
            move = next(m for m in order if m in moves)
        else:
            move = rng.choice(moves)
        if move.startswith("draw_"):
            return {"type": "draw", "from": move.removeprefix("draw_")}
        if move == "swap":
            return {"type": "swap", "slot": rng.choice(SLOTS)}
        if move == "queen":
            others = [s for s in range(len(self.players)) if s != seat]
            target = rng.choice(others)
            return {"type": "queen", "slot": rng.choice(SLOTS), "target": target, "target_slot": rng.choice(SLOTS)}
        return {"type": move}
