"""The server answers over real sockets: health, a room, a first move."""

from __future__ import annotations

import re

import httpx

from crisp_server import native
from tests.web.harness import Harness


async def test_health(server: Harness) -> None:
    async with httpx.AsyncClient() as http:
        response = await http.get(server.http + "/healthz")
    assert response.status_code == 200
    assert response.json()["status"] == "ok"
    assert response.json()["engine"] == native.mode()


async def test_two_players_reach_the_first_move(server: Harness) -> None:
    _, (ana, ben) = await server.table(["Ana", "Ben"])
    mover = ana if ana.my_turn() else ben
    other = ben if mover is ana else ana
    answer = await mover.draw()
    assert answer["you"]["drawn_card"] is not None
    await other.wait_for(lambda c: c.table is not None and c.table["round"]["drawn"] is not None)
    assert other.you["drawn_card"] is None


async def test_head_answers_wherever_get_does(server: Harness) -> None:
    """Uptime monitors check with HEAD: the same status and headers as GET, and no body."""
    code, _clients = await server.table(["Ana", "Ben"])
    paths = [
        "/healthz",
        "/metrics",
        "/",
        "/index.html",
        "/js/net.js",
        f"/r/{code}",
        f"/api/rooms/{code}",
        f"/api/rooms/{code}/qr.svg",
        f"/api/rooms/{code}/games",
        f"/api/rooms/{code}/standings",
        "/api/rooms/ZZZZZ",  # a refusal is the same too
    ]
    async with httpx.AsyncClient() as http:
        page = (await http.get(server.http + "/")).text
        paths += re.findall(r'(?:src|href)="(/[^"]+)"', page)  # the content-hashed paths, a year in caches
        assert len(paths) > 12
        for path in paths:
            got = await http.get(server.http + path)
            head = await http.head(server.http + path)
            assert head.status_code == got.status_code, path
            assert head.content == b"", path
            for name in ("content-type", "content-encoding", "etag", "cache-control"):
                assert head.headers.get(name) == got.headers.get(name), (path, name)
            if path not in ("/metrics", f"/api/rooms/{code}"):  # these change between two requests
                assert head.headers.get("content-length") == got.headers.get("content-length"), path
