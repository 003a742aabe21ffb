"""The last person to leave a game that is under way does not end it: the room waits, paused, as when everyone
is away, for anyone who held a seat to take it back; after ``idle_game_hours`` the game is abandoned as any
other. A practice game (one person against computer players) too. Games a room left running when it closed
(before rooms waited so) end abandoned when the server starts, and in the retention sweep."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest
from sqlalchemy import select, update

from crisp_server.remote.client import CrispClient
from crisp_server.store.models import GameRow, RoomRow
from crisp_server.web import app as app_module
from tests.databases import BACKENDS, database
from tests.web.harness import Harness, running_server

HOUR = 3_600_000
IDLE_MS = 24 * HOUR


async def _settled(server: Harness, code: str) -> None:
    """Everything the room has to say is committed and out."""
    room = server.app.state.registry.get(code)
    if room is not None:
        await room.flush()
    await asyncio.sleep(0.05)


@pytest.mark.parametrize("stand_in", [None, 30])
async def test_the_last_to_leave_mid_game_leaves_it_waiting_for_anyone_to_take_a_seat_back(
    stand_in: int | None,
) -> None:
    async with running_server() as server:
        registry = server.app.state.registry
        code, (ana, ben) = await server.table(["Ana", "Ben"], stand_in=stand_in)
        mover, other = (ana, ben) if ana.my_turn() else (ben, ana)
        await mover.draw()
        drawn = mover.you["drawn_card"]
        mover_seat, other_seat = mover.seat, other.seat
        assert mover_seat is not None
        assert other_seat is not None
        tokens = {c.seat: c.token for c in (ana, ben)}
        room = registry.get(code)
        await other.request({"type": "leave"})  # Ana or Ben, still at the table: the game goes on
        assert not room.paused
        actions = len(room.record.rounds[-1].actions)

        await mover.request({"type": "leave"})  # the last person leaves, in the middle of their move
        assert registry.get(code) is room, "the room stays"
        assert not room.closed
        assert room.paused, "the game waits, as when everyone is away"
        assert server.clock.pending() == [], "nothing times out, no computer stands in, for nobody"
        await server.advance(IDLE_MS - 1)
        assert len(room.record.rounds[-1].actions) == actions, "no move was played for those who left"
        assert room.game.round.timeouts == []
        assert registry.expire_abandoned(IDLE_MS) == 0, "not abandoned before its time"

        # Anyone who held a seat takes it back: the first who left, here.
        back = await server.client()
        token = tokens[other_seat]
        assert token is not None
        await back.resume(code, token)
        await back.request({"type": "ping"})
        assert not room.paused
        assert back.you["host"], "nobody else is at the table: the first one back hosts"
        seats = back.state["room"]["seats"] if back.state else []
        assert seats[other_seat]["left"] is False
        assert seats[mover_seat]["left"] is True
        # The other seat is played on as any seat that left: a computer stands in, or its move times out.
        for _ in range(100):
            if stand_in is not None and room.seats[mover_seat].standing_in:
                break
            if stand_in is None and room.game.round.timeouts:
                break
            await server.advance(0)
            await asyncio.sleep(0.01)
        if stand_in is not None:
            assert room.seats[mover_seat].standing_in
        else:
            assert [seat for seat, _ in room.game.round.timeouts] == [mover_seat]

        # And the last leaver may come back too.
        again = await server.client()
        token = tokens[mover_seat]
        assert token is not None
        await again.resume(code, token)
        await again.request({"type": "ping"})
        assert again.seat == mover_seat
        assert again.state is not None
        assert again.state["room"]["seats"][mover_seat]["left"] is False
        if stand_in is not None and room.game.round.turn == mover_seat and room.game.round.timeouts == []:
            assert again.you["drawn_card"] == drawn, "nobody played their move meanwhile"


async def test_a_practice_game_left_waits_and_is_abandoned_after_the_idle_time(tmp_path: Path) -> None:
    async with running_server(persist=True, data_dir=tmp_path) as server:
        registry = server.app.state.registry
        ana = await server.client()
        code = await ana.create("Ana", bots=2)
        await ana.wait_for(lambda c: c.phase == "peek", what="the first deal")
        token = ana.token
        assert token is not None
        room = registry.get(code)
        await ana.request({"type": "leave"})
        assert registry.get(code) is room, "a practice game waits for its player too"
        assert room.paused
        await server.advance(IDLE_MS - HOUR)
        assert registry.expire_abandoned(IDLE_MS) == 0

        back = await server.client()
        await back.resume(code, token)
        await back.request({"type": "ping"})
        assert not room.paused
        assert back.phase == "peek", "the peek starts again in full"
        assert back.state is not None
        assert back.state["room"]["seats"][0]["ready"] is False, "back in the peek: the player may say ready again"
        assert back.you["hints"], "still a practice game"

        await back.request({"type": "leave"})
        assert room.paused
        await server.advance(IDLE_MS - 1)
        assert registry.expire_abandoned(IDLE_MS) == 0, "counted from the last leave"
        await server.advance(1)
        assert registry.expire_abandoned(IDLE_MS) == 1
        await _settled(server, code)
        assert registry.get(code) is None
        async with httpx.AsyncClient(base_url=server.http) as http:
            games = (await http.get(f"/api/rooms/{code}/games")).json()
        assert [(g["players"][0], g["abandoned"], g["winners"]) for g in games] == [("Ana", True, [])]


async def _strand(server: Harness, code: str, clients: list[CrispClient], closed: datetime) -> None:
    """The room as a release before this one left it: its players left and it closed, its game running."""
    room = server.app.state.registry.get(code)
    for c in clients:
        await c.close()
    for _ in range(200):
        if room.paused:
            break
        await asyncio.sleep(0.01)
    await room.flush()
    store = server.app.state.store
    async with store.sessions.begin() as session:
        await session.execute(update(RoomRow).where(RoomRow.id == room.room_id).values(closed_at=closed))


@pytest.mark.parametrize("kind", BACKENDS)
async def test_a_game_left_running_in_a_closed_room_ends_abandoned_at_the_next_start(kind: str, tmp_path: Path) -> None:
    with database(kind, tmp_path) as url:
        await _stranded_at_start(url)


async def _stranded_at_start(url: str) -> None:
    closed = datetime.now(UTC) - timedelta(hours=2)
    async with running_server(persist=True, database_url=url) as server:
        code, (ana, ben) = await server.table(["Ana", "Ben"])
        mover = ana if ana.my_turn() else ben
        await mover.draw()
        await mover.request(mover.plain_play())
        token = ana.token
        assert token is not None
        await _strand(server, code, [ana, ben], closed)

    async with running_server(persist=True, database_url=url) as server:
        assert server.app.state.registry.get(code) is None, "a closed room is not rebuilt"
        async with server.app.state.store.sessions() as session:
            game = (await session.scalars(select(GameRow))).one()
        assert game.abandoned
        assert game.finished_at is not None
        finished = game.finished_at if game.finished_at.tzinfo else game.finished_at.replace(tzinfo=UTC)
        assert abs(finished - closed) < timedelta(seconds=1), "as of its room's close"
        async with httpx.AsyncClient(base_url=server.http) as http:
            games = (await http.get(f"/api/rooms/{code}/games")).json()
            assert [(g["id"], g["abandoned"], g["totals"], g["winners"]) for g in games] == [
                (game.id, True, [0, 0], [])
            ]
            auth = {"Authorization": f"Bearer {token}"}
            record = await http.get(f"/api/games/{game.id}/record", headers=auth)
            assert record.status_code == 200, record.text
            assert len(record.json()["rounds"][0]["actions"]) == 2
            assert (await http.get(f"/api/games/{game.id}/replay", headers=auth)).status_code == 200
            standings = (await http.get(f"/api/rooms/{code}/standings")).json()
            assert (standings["games"], standings["abandoned"]) == (1, 1)
        assert await server.app.state.store.end_stranded_games() == 0, "ended once"


async def test_the_retention_sweep_ends_a_stranded_game_and_purges_it_in_its_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(app_module, "SWEEP_SECONDS", 0.05)  # the retention sweep, every 10 minutes in earnest
    async with running_server(persist=True, data_dir=tmp_path) as server:
        store = server.app.state.store
        code, clients = await server.table(["Ana", "Ben"])
        # Closed (by a node of an older release) 31 days ago: past the 30 days finished games are kept.
        await _strand(server, code, clients, datetime.now(UTC) - timedelta(days=31))
        for _ in range(200):
            async with store.sessions() as session:
                if (await session.scalars(select(GameRow))).first() is None:
                    break
            await asyncio.sleep(0.02)
        async with store.sessions() as session:
            assert (await session.scalars(select(GameRow))).first() is None, "ended, then purged with its names"
