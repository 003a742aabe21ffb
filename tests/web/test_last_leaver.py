"""Over real sockets and HTTP: the last player to tap Leave in the middle of a game takes their seat back with
the token their device kept and plays on; left again for the abandoned-room time, the game ends abandoned and
is served (record, replay), listed with the room's games and counted in its standings, as any abandoned game."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
import pytest

from crisp_server.web import app as app_module
from tests.web.harness import running_server


async def test_the_last_leaver_takes_the_seat_back_and_the_game_is_abandoned_in_its_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(app_module, "SWEEP_SECONDS", 0.05)  # the retention sweep, every 10 minutes in earnest
    async with running_server(persist=True, data_dir=tmp_path, idle_game_hours=2) as server:
        idle_ms = 2 * 3_600_000
        registry = server.app.state.registry
        code, (ana, ben) = await server.table(["Ana", "Ben"])
        assert ana.messages[0]["type"] == "welcome"
        assert ana.messages[0]["idle_game_hours"] == 2, "the client can tell the player how long the game waits"
        tokens = {"Ana": ana.token, "Ben": ben.token}
        await ben.request({"type": "leave"})
        await ana.request({"type": "leave"})  # the last one leaves
        async with httpx.AsyncClient(base_url=server.http) as http:
            assert (await http.get(f"/api/rooms/{code}")).status_code == 200, "the room is still there"
        await server.advance(idle_ms - 60_000)
        await asyncio.sleep(0.2)  # a few sweeps: not yet

        # "Take your seat back": the device's token resumes the seat, and the game goes on.
        ana = await server.client()
        token = tokens["Ana"]
        assert token is not None
        welcome = await ana.resume(code, token)
        assert welcome["seat"] == 0
        await ana.wait_for(lambda c: c.state is not None and c.phase == "play", what="the table")
        assert ana.you["host"]
        if not ana.my_turn():  # Ben's seat, left, is played on at once
            await ana.wait_for(lambda c: c.my_turn(), what="Ana's turn")
        await ana.draw()
        move = ana.plain_play()
        await ana.request(move)

        await ana.request({"type": "leave"})  # and leaves again, for good
        await server.advance(idle_ms - 1)
        await asyncio.sleep(0.2)
        assert registry.get(code) is not None, "not before its time"
        await server.advance(1)
        for _ in range(200):
            if registry.get(code) is None:
                break
            await asyncio.sleep(0.02)
        assert registry.get(code) is None, "abandoned by the sweep"

        async with httpx.AsyncClient(base_url=server.http) as http:
            for _ in range(100):
                games = (await http.get(f"/api/rooms/{code}/games")).json()
                if games:
                    break
                await asyncio.sleep(0.02)
            assert len(games) == 1
            game = games[0]
            assert (game["players"], game["abandoned"], game["winners"]) == (["Ana", "Ben"], True, [])
            auth = {"Authorization": f"Bearer {tokens['Ben']}"}
            record = await http.get(f"/api/games/{game['id']}/record", headers=auth)
            assert record.status_code == 200, record.text
            actions = record.json()["rounds"][0]["actions"]
            assert {"seat": 0, "do": move["type"]} == {"seat": actions[-1]["seat"], "do": actions[-1]["do"]}
            replay = await http.get(f"/api/games/{game['id']}/replay", headers=auth)
            assert replay.status_code == 200, replay.text
            standings = (await http.get(f"/api/rooms/{code}/standings")).json()
            assert (standings["games"], standings["abandoned"]) == (1, 1)
            assert sorted(p["name"] for p in standings["players"]) == ["Ana", "Ben"]
