"""Rooms come back from the database when the app starts again: lobbies with their seats and options."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from crisp_server.client import ProtocolError
from tests.openapi import assert_documented
from tests.web.harness import running_server


async def test_a_lobby_comes_back_with_its_seats_host_and_options(tmp_path: Path) -> None:
    async with running_server(persist=True, data_dir=tmp_path) as server:
        code, (ana, ben) = await server.lobby(["Ana", "Ben"])
        await ana.set_options(score_limit=150, turn_seconds=45, discard_draw=True)
        tokens = (ana.token, ben.token)
        await ana.request({"type": "ping"})

    async with running_server(persist=True, data_dir=tmp_path) as server:
        ana = await server.client()
        ben = await server.client()
        assert tokens[0] is not None
        assert tokens[1] is not None
        await ben.resume(code, tokens[1])
        await ana.resume(code, tokens[0])
        await ana.request({"type": "ping"})
        room = ana.state["room"] if ana.state else {}
        assert [s["name"] for s in room["seats"]] == ["Ana", "Ben"]
        assert room["host"] == 0
        assert room["phase"] == "lobby"
        assert room["options"] == {"score_limit": 150, "turn_seconds": 45, "discard_draw": True}
        assert ana.you["host"]
        # A stranger's token finds nothing, and the names are still taken.
        stranger = await server.client()
        with pytest.raises(ProtocolError) as refused:
            await stranger.join(code, "ana")
        assert refused.value.code == "name_taken"
        await ana.start()
        await ana.wait_for(lambda c: c.phase == "peek", what="the game starts")


async def test_history_is_empty_for_a_new_room(tmp_path: Path) -> None:
    async with running_server(persist=True, data_dir=tmp_path) as server:
        code, _ = await server.lobby(["Ana", "Ben"])
        async with httpx.AsyncClient(base_url=server.http) as http:
            assert (await http.get(f"/api/rooms/{code}/games")).json() == []
            assert (await http.get("/api/games/nope/record")).status_code == 404


async def test_a_running_games_record_is_not_served(tmp_path: Path) -> None:
    async with running_server(persist=True, data_dir=tmp_path) as server:
        code, (ana, _ben) = await server.table(["Ana", "Ben"])
        room = server.app.state.registry.get(code)
        async with httpx.AsyncClient(base_url=server.http) as http:
            response = await http.get(
                f"/api/games/{room.game_id}/record", headers={"Authorization": f"Bearer {ana.token}"}
            )
        assert response.status_code == 409
        assert_documented(server.app, "/api/games/{game_id}/record", response, game_id=room.game_id)
