"""A game no player comes back to ends: after ``idle_game_hours`` with nobody connected it is closed
unfinished, its record is kept (listed, served to its players, replayable) and it is not rebuilt again."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import update

from crisp_server.remote.client import CrispClient, ProtocolError
from crisp_server.store.models import RoomRow
from crisp_server.web import app as app_module
from tests.web.harness import Harness, running_server

HOUR = 3_600_000
IDLE_MS = 24 * HOUR


async def _gone(server: Harness, *clients: CrispClient) -> None:
    """The players drop; return once the room has heard them all go (it waits for them then)."""
    room = server.app.state.registry.get(clients[0].room)
    for c in clients:
        await c.close()
    for _ in range(500):
        if room.paused:
            return
        await asyncio.sleep(0.01)
    raise AssertionError("the room did not notice that every player went")


async def _ended_game(server: Harness, code: str, token: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The room's listing of its one game, and that game's record as its player downloads it."""
    async with httpx.AsyncClient(base_url=server.http) as http:
        games = (await http.get(f"/api/rooms/{code}/games")).json()
        assert len(games) == 1, games
        response = await http.get(f"/api/games/{games[0]['id']}/record", headers={"Authorization": f"Bearer {token}"})
        assert response.status_code == 200, response.text
        record: dict[str, Any] = response.json()
        return games[0], record


def _replayed(record: dict[str, Any], tmp_path: Path) -> dict[str, Any]:
    path = tmp_path / "abandoned.json"
    path.write_text(json.dumps(record))
    run = subprocess.run(
        [sys.executable, "-m", "crisp_server", "replay", str(path)], capture_output=True, text=True, check=True
    )
    result: dict[str, Any] = json.loads(run.stdout)
    return result


async def test_an_abandoned_game_closes_keeps_its_record_and_is_not_rebuilt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(app_module, "SWEEP_SECONDS", 0.05)  # the retention sweep, every 10 minutes in earnest
    async with running_server(persist=True, data_dir=tmp_path) as server:
        code, (ana, ben) = await server.table(["Ana", "Ben"])
        mover = ana if ana.my_turn() else ben
        await mover.draw()
        move = mover.plain_play()  # a King from the draw pile must be played (1 deal in 13 drew one)
        await mover.request(move)
        played = move["type"]
        tokens = (ana.token, ben.token)
        assert tokens[0] is not None
        assert tokens[1] is not None
        registry = server.app.state.registry
        room = registry.get(code)
        await _gone(server, ana, ben)
        await server.advance(IDLE_MS - 1)
        await asyncio.sleep(0.2)  # a few sweeps
        assert registry.get(code) is not None, "not yet"
        await server.advance(1)
        for _ in range(200):
            if registry.get(code) is None:
                break
            await asyncio.sleep(0.02)
        assert registry.get(code) is None, "the sweep closed the abandoned game's room"
        await room.flush()  # its end is written

        listed, record = await _ended_game(server, code, tokens[1])
        assert listed["abandoned"] is True
        assert listed["winners"] == []
        assert listed["totals"] == [0, 0], "no round was over"
        assert [a["do"] for a in record["rounds"][0]["actions"]] == ["draw", played]
        latecomer = await server.client()
        with pytest.raises(ProtocolError) as refused:
            await latecomer.resume(code, tokens[0])
        assert refused.value.code == "room_not_found"

    result = _replayed(record, tmp_path)
    assert result["rejected"] == []
    assert result["game_over"] is False

    async with running_server(persist=True, data_dir=tmp_path) as server:
        assert server.app.state.registry.get(code) is None, "not rebuilt at the next start"
        again, _ = await _ended_game(server, code, tokens[0])
        assert again == listed


async def test_a_game_abandoned_while_the_server_was_down_ends_at_the_next_start(tmp_path: Path) -> None:
    async with running_server(persist=True, data_dir=tmp_path) as server:
        code, (ana, ben) = await server.table(["Ana", "Ben"])
        token = ana.token
        assert token is not None
        room = server.app.state.registry.get(code)
        await _gone(server, ana, ben)
        await room.flush()  # what the room saved as its players went is written
        store = server.app.state.store
        # The server stays down for a day and a bit.
        async with store.sessions.begin() as session:
            await session.execute(
                update(RoomRow)
                .where(RoomRow.id == room.room_id)
                .values(updated_at=datetime.now(UTC) - timedelta(hours=24, minutes=1))
            )

    async with running_server(persist=True, data_dir=tmp_path) as server:
        assert server.app.state.registry.get(code) is None
        listed, record = await _ended_game(server, code, token)
        assert listed["abandoned"] is True
        assert record["players"] == ["Ana", "Ben"]


async def test_a_game_with_a_player_connected_or_back_recently_is_not_abandoned(tmp_path: Path) -> None:
    async with running_server(persist=True, data_dir=tmp_path) as server:
        registry = server.app.state.registry
        code, (ana, ben) = await server.table(["Ana", "Ben"])
        token = ben.token
        assert token is not None
        await ben.close()
        await server.advance(IDLE_MS + HOUR)  # Ana stays: Ben's moves time out, the game waits for Ana's
        assert registry.expire_abandoned(IDLE_MS) == 0
        assert registry.get(code) is not None

        await _gone(server, ana)
        await server.advance(IDLE_MS - HOUR)
        back = await server.client()
        await back.resume(code, token)  # Ben looks in for a moment, an hour before the day is up
        await _gone(server, back)
        await server.advance(IDLE_MS - 1)
        assert registry.expire_abandoned(IDLE_MS) == 0, "a day since Ben went: not yet"
        assert registry.get(code) is not None
        await server.advance(1)
        assert registry.expire_abandoned(IDLE_MS) == 1
        assert registry.get(code) is None
