"""Two-player games through HAProxy whose seats reconnect as the web client does: at once after ``moved``
(4005), after a short back-off after any other drop, to ``/ws?room=CODE``, and resume.

Each seat keeps what it saw just before each cut (``before``: ``essentials`` of its last state) and what it
found when it came back (``after``), with the instants, and whether the cut was a ``moved``. While a seat of
a table is away, the table's other seat makes no move (``Table.away``): so a seat comes back to exactly what
it last saw unless a move was under way at the cut (committed, its views lost with the node): then the
record must show the room went on from it (``continuity.went_on_from``).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import httpx
from websockets.exceptions import ConnectionClosed, InvalidHandshake

from crisp_server.engine import parse_record, replay_game
from crisp_server.remote.client import CrispClient, ProtocolError
from tests.e2e.continuity import essentials, next_move, went_on_from


@dataclass
class Cut:
    at: float
    moved: bool
    before: dict[str, Any]
    back_at: float | None = None
    after: dict[str, Any] | None = None
    #: How the socket ended, as websockets tells it (the close frames received and sent, or none).
    how: str = ""


@dataclass
class Seat:
    table: Table
    name: str
    client: CrispClient
    token: str
    cuts: list[Cut] = field(default_factory=list)
    #: Moves sent after the last comeback (the game went on there).
    moves_since_back: int = 0
    stack: contextlib.AsyncExitStack = field(default_factory=contextlib.AsyncExitStack)


class Table:
    """A two-player room (Ana hosts, Ben joins), started with ``score_limit`` and no turn timer."""

    def __init__(self, ws: str) -> None:
        self.ws = ws
        self.code = ""
        self.seats: list[Seat] = []
        self.away = 0

    async def open(self, score_limit: int = 150) -> None:
        stack = contextlib.AsyncExitStack()
        ana = await stack.enter_async_context(CrispClient.connect(self.ws, open_timeout=20))
        self.code = await ana.create("Ana")
        # The room may move once, to the node its code hashes to, when Ben's socket reaches that node.
        ben_stack = contextlib.AsyncExitStack()
        ben = await ben_stack.enter_async_context(CrispClient.connect(self.ws, room=self.code, open_timeout=20))
        await ben.join(self.code, "Ben")
        assert ana.token is not None
        assert ben.token is not None
        self.seats = [
            Seat(self, "Ana", ana, ana.token, stack=stack),
            Seat(self, "Ben", ben, ben.token, stack=ben_stack),
        ]
        host = self.seats[0]
        if ana.closed is not None or await _closed_soon(ana):
            await reconnect(host, note=False)
        await host.client.set_options(score_limit=score_limit, turn_seconds=None, discard_draw=False)
        await host.client.start()

    async def into_play(self) -> None:
        """Both seats ready after the deal: the round is being played (nobody moves until told)."""
        for seat in self.seats:
            await seat.client.wait_for(lambda c: c.phase in ("peek", "play"), what="the deal")
        for seat in self.seats:
            if seat.client.phase == "peek":  # (the peek may have run out already)
                await seat.client.send({"type": "ready"})
        for seat in self.seats:
            await seat.client.wait_for(lambda c: c.phase == "play", what="play")

    async def close(self) -> None:
        for seat in self.seats:
            await seat.stack.aclose()


@contextlib.asynccontextmanager
async def open_tables(ws: str, n: int, score_limit: int = 150) -> AsyncIterator[list[Table]]:
    """``n`` tables opened one after the other (their games started), closed at the end."""
    tables = [Table(ws) for _ in range(n)]
    try:
        for table in tables:
            await table.open(score_limit=score_limit)
        yield tables
    finally:
        for table in tables:
            await table.close()


def play_all(tables: list[Table]) -> list[asyncio.Future[None]]:
    """Every seat of ``tables`` played to its game's end, as tasks."""
    return [asyncio.ensure_future(play(seat)) for table in tables for seat in table.seats]


async def _closed_soon(c: CrispClient) -> bool:
    with contextlib.suppress(TimeoutError, ConnectionError):
        await c.wait_for(lambda c: c.closed is not None, timeout=0.3)
    return c.closed is not None


def _beyond(mark: int, c: CrispClient) -> bool:
    return len(c.messages) > mark


async def reconnect(seat: Seat, *, note: bool = True, give_up: float = 60.0) -> None:
    """A new socket for the seat's room through HAProxy, and ``resume``: at once after a move, else after a
    short back-off, again until it works (a node may be down, or the room's lease not yet free)."""
    old = seat.client
    moved = old.moved
    cut = Cut(time.monotonic(), moved, essentials(old.state) if note and old.state is not None else {})
    cut.how = str(old.closed) if old.closed is not None else "still open"
    if note:
        seat.cuts.append(cut)
        seat.table.away += 1
    await seat.stack.aclose()
    seat.stack = contextlib.AsyncExitStack()
    delay = 0.0 if moved else 0.25
    deadline = time.monotonic() + give_up
    while True:
        await asyncio.sleep(delay)
        try:
            client = await seat.stack.enter_async_context(
                CrispClient.connect(seat.table.ws, room=seat.table.code, open_timeout=10)
            )
            await client.resume(seat.table.code, seat.token)
        # InvalidHandshake: HAProxy's 503 while it still sends the room's sockets to a node just gone.
        except (OSError, TimeoutError, ConnectionError, ConnectionClosed, InvalidHandshake, ProtocolError) as exc:
            await seat.stack.aclose()
            seat.stack = contextlib.AsyncExitStack()
            if time.monotonic() > deadline:
                what = f"{seat.table.code}/{seat.name}: could not resume for {give_up} s"
                raise AssertionError(f"{what}: {exc!r}") from exc
            delay = 0.25
            continue
        seat.client = client
        if note:
            assert client.state is not None
            cut.back_at = time.monotonic()
            cut.after = essentials(client.state)
            seat.moves_since_back = 0
            seat.table.away -= 1
        return


async def play(seat: Seat, hold: asyncio.Event | None = None) -> None:
    """Play the seat to the game's end, following every cut. ``hold``: while set, no seat moves."""
    while True:
        c = seat.client
        try:
            while c.phase != "game_over":
                mark = len(c.messages)
                held = seat.table.away > 0 or (hold is not None and hold.is_set())
                move = None if held else next_move(c)
                if move is not None:
                    await c.send(move)
                    seat.moves_since_back += 1
                with contextlib.suppress(TimeoutError):
                    await c.wait_for(functools.partial(_beyond, mark), timeout=0.3 if move is None else 30)
            return
        except (ConnectionError, ConnectionClosed):
            await reconnect(seat)


async def check_records(base: str, tables: list[Table], most: int = 10) -> dict[str, int]:
    """Every table's game ended; its record replays with nothing refused to the totals its players saw;
    every seat came back to what it saw, or to a few actions later as the record shows (a move under way
    at the cut). How many comebacks were each."""
    same = further = 0
    async with httpx.AsyncClient(base_url=base, timeout=30) as http:
        for table in tables:
            finished = (await http.get(f"/api/rooms/{table.code}/games")).json()
            assert len(finished) == 1, (table.code, finished)
            response = await http.get(
                f"/api/games/{finished[0]['id']}/record", headers={"Authorization": f"Bearer {table.seats[0].token}"}
            )
            assert response.status_code == 200, response.text
            document = response.json()
            game, rejected = replay_game(parse_record(document))
            assert rejected == []
            assert game.game_over
            for seat in table.seats:
                table_state = seat.client.table
                assert table_state is not None
                assert list(game.totals) == table_state["totals"]
                for cut in seat.cuts:
                    assert cut.after is not None
                    if cut.after == cut.before:
                        same += 1
                    else:
                        further += 1
                        went_on_from(cut.before, cut.after, document, most)
    return {"same": same, "further": further}
