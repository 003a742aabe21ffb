"""The server answers over real sockets: health, a room, a first move."""

from __future__ import annotations

import httpx

from tests.web.harness import Harness


async def test_health(server: Harness) -> None:
    async with httpx.AsyncClient() as http:
        response = await http.get(server.http + "/healthz")
    assert response.status_code == 200
    assert response.json()["status"] == "ok"


async def test_two_players_reach_the_first_move(server: Harness) -> None:
    _, (ana, ben) = await server.table(["Ana", "Ben"])
    mover = ana if ana.my_turn() else ben
    other = ben if mover is ana else ana
    answer = await mover.draw()
    assert answer["you"]["drawn_card"] is not None
    await other.wait_for(lambda c: c.table is not None and c.table["round"]["drawn"] is not None)
    assert other.you["drawn_card"] is None
