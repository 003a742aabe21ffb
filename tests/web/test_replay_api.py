"""The replay API (docs/replays.md): who may read a game's replay, every refusal, the public switch, gzip,
on SQLite and PostgreSQL. What a point of view shows is tests/test_replays.py's business."""

from __future__ import annotations

import asyncio
import gzip
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import orjson
import pytest

from tests.databases import BACKENDS, database
from tests.openapi import assert_documented
from tests.store.games import OPTIONS, store_played
from tests.web.harness import Harness, running_server

REPLAY = "/api/games/{game_id}/replay"


@pytest.fixture(params=BACKENDS)
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    with database(request.param, tmp_path) as url:
        yield url


@pytest.fixture
async def server(database_url: str) -> AsyncIterator[Harness]:
    async with running_server(persist=True, database_url=database_url) as harness:
        yield harness


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def test_every_refusal_is_clear_and_documented(server: Harness) -> None:
    store = server.app.state.services.store
    done = await store_played(store, 1, 3, OPTIONS, finish=True, host=0)
    running = await store_played(store, 2, 2, OPTIONS, finish=False, host=1)
    other = await store_played(store, 3, 2, OPTIONS, finish=True, host=0)
    cases: list[tuple[str, dict[str, str], dict[str, str], int, str]] = [
        ("nope", {}, bearer(done.tokens[0]), 404, "no game with that id"),
        ("x" * 33, {}, bearer(done.tokens[0]), 404, "no game with that id"),
        (done.id, {}, {}, 403, "only the game's players can fetch its replay"),
        (done.id, {}, bearer("wrong"), 403, "only the game's players can fetch its replay"),
        (done.id, {}, bearer(other.tokens[0]), 403, "only the game's players can fetch its replay"),
        (done.id, {}, {"Authorization": done.tokens[0]}, 403, "only the game's players can fetch its replay"),
        (running.id, {}, {}, 403, "only the game's players can fetch its replay"),
        (running.id, {}, bearer(running.tokens[1]), 409, "the game is still running"),
        (done.id, {"seat": "3"}, bearer(done.tokens[0]), 404, "no seat 3 in this game"),
        (done.id, {"seat": "-1"}, bearer(done.tokens[0]), 404, "no seat -1 in this game"),
    ]
    async with httpx.AsyncClient(base_url=server.http) as http:
        for game_id, params, headers, status, detail in cases:
            response = await http.get(f"/api/games/{game_id}/replay", params=params, headers=headers)
            assert response.status_code == status, (game_id, params, headers, response.text)
            assert response.json()["detail"].startswith(detail)
            assert_documented(server.app, REPLAY, response, game_id=game_id)
        for bad in ("one", "1.5", ""):
            response = await http.get(
                f"/api/games/{done.id}/replay", params={"seat": bad}, headers=bearer(done.tokens[0])
            )
            assert response.status_code == 422, bad
        # A refusal serves nothing of the game: no card code anywhere in it.
        refused = await http.get(f"/api/games/{running.id}/replay", headers=bearer(running.tokens[0]))
        assert refused.json() == {"detail": "the game is still running: its replay is served when it ends"}


async def test_each_player_reads_every_point_of_view_gzipped(server: Harness) -> None:
    store = server.app.state.services.store
    done = await store_played(store, 4, 3, OPTIONS, finish=True, host=2)
    async with httpx.AsyncClient(base_url=server.http) as http:
        for seat, token in enumerate(done.tokens):
            for view in (None, 0, 1, 2):
                params = {} if view is None else {"seat": str(view)}
                raw = await http.get(
                    f"/api/games/{done.id}/replay",
                    params=params,
                    headers={**bearer(token), "Accept-Encoding": "gzip"},
                )
                assert raw.status_code == 200
                assert raw.headers["content-encoding"] == "gzip"
                assert_documented(server.app, REPLAY, raw, game_id=done.id)
                body = orjson.loads(raw.content)  # httpx decompressed it
                assert body["format"] == "crisp-replay/1"
                assert (body["seat"], body["you"], body["host"], body["public"]) == (view, seat, 2, False)
                assert body["steps"][0]["kind"] == "deal"
                assert body["steps"][-1]["kind"] == "end"
        plain = await http.get(
            f"/api/games/{done.id}/replay", headers={**bearer(done.tokens[0]), "Accept-Encoding": "identity"}
        )
        assert "content-encoding" not in plain.headers
        zipped = await http.get(
            f"/api/games/{done.id}/replay", headers={**bearer(done.tokens[0]), "Accept-Encoding": "gzip"}
        )
    # The same body, several times smaller on the wire.
    assert orjson.loads(plain.content) == orjson.loads(zipped.content)
    wire = int(zipped.headers["content-length"])
    assert wire < len(plain.content) / 4
    assert len(gzip.compress(plain.content)) <= wire * 2


async def test_the_host_alone_makes_a_replay_public_and_then_no_token_is_needed(server: Harness) -> None:
    store = server.app.state.services.store
    done = await store_played(store, 5, 3, OPTIONS, finish=True, host=1)
    url = f"/api/games/{done.id}/public"
    async with httpx.AsyncClient(base_url=server.http) as http:
        assert (await http.get(f"/api/games/{done.id}/replay")).status_code == 403
        for headers in ({}, bearer("wrong"), bearer(done.tokens[0]), bearer(done.tokens[2])):
            refused = await http.put(url, json={"public": True}, headers=headers)
            assert refused.status_code == 403
            assert refused.json() == {"detail": "only the game's host can make its replay public"}
        assert (await http.put("/api/games/nope/public", json={"public": True}, headers=bearer("x"))).status_code == 404
        bad: object
        for bad in ({}, {"public": "yes"}, {"public": 1}, {"public": True, "more": 1}, []):
            answer = await http.put(url, json=bad, headers=bearer(done.tokens[1]))
            assert answer.status_code == 422, bad
        for body in (b"{", b"public", b"\xff"):
            answer = await http.put(
                url, content=body, headers={**bearer(done.tokens[1]), "content-type": "application/json"}
            )
            assert answer.status_code == 400, body
            assert isinstance(answer.json()["detail"], str), body  # (not UTF-8: FastAPI's own words)
        for method in ("GET", "POST", "DELETE"):
            answer = await http.request(method, url, headers=bearer(done.tokens[1]))
            assert (answer.status_code, answer.text) == (405, "Method Not Allowed"), method
            assert answer.headers["allow"] == "PUT"
        assert (await http.get(f"/api/games/{done.id}/replay")).status_code == 403  # nothing changed

        made = await http.put(url, json={"public": True}, headers=bearer(done.tokens[1]))
        assert (made.status_code, made.json()) == (200, {"public": True})
        for view in (None, 0, 2):
            params = {} if view is None else {"seat": str(view)}
            anyone = await http.get(f"/api/games/{done.id}/replay", params=params)
            assert anyone.status_code == 200
            body = anyone.json()
            assert (body["public"], body["you"], body["seat"]) == (True, None, view)
        # A player still reads as a player; a wrong token is nobody, not a refusal, once public.
        assert (await http.get(f"/api/games/{done.id}/replay", headers=bearer(done.tokens[2]))).json()["you"] == 2
        assert (await http.get(f"/api/games/{done.id}/replay", headers=bearer("wrong"))).json()["you"] is None
        # The record download stays the players' own.
        assert (await http.get(f"/api/games/{done.id}/record")).status_code == 403

        for method in ("GET", "POST", "OPTIONS", "DELETE"):
            other = await http.request(method, url, headers=bearer(done.tokens[1]))
            assert (other.status_code, other.headers["allow"]) == (405, "PUT")
        garbage = await http.put(
            url, content=b"=\x0c\xff", headers={**bearer(done.tokens[1]), "content-type": "application/json"}
        )
        assert garbage.status_code in (400, 422)

        back = await http.put(url, json={"public": False}, headers=bearer(done.tokens[1]))
        assert (back.status_code, back.json()) == (200, {"public": False})
        assert (await http.get(f"/api/games/{done.id}/replay")).status_code == 403


async def test_a_game_stored_without_a_host_cannot_be_made_public(server: Harness) -> None:
    store = server.app.state.services.store
    done = await store_played(store, 6, 2, OPTIONS, finish=True, host=None)
    async with httpx.AsyncClient(base_url=server.http) as http:
        for token in done.tokens:
            answer = await http.put(f"/api/games/{done.id}/public", json={"public": True}, headers=bearer(token))
            assert answer.status_code == 403
        body = (await http.get(f"/api/games/{done.id}/replay", headers=bearer(done.tokens[0]))).json()
    assert body["host"] is None


async def test_a_room_stores_its_host_with_the_game_it_starts(server: Harness) -> None:
    code, (ana, ben) = await server.table(["Ana", "Ben"])
    room = server.app.state.registry.get(code)
    store = server.app.state.services.store
    for _ in range(100):  # the group commit lands within milliseconds
        found = await store.stored_record(room.game_id)
        if found is not None:
            break
        await asyncio.sleep(0.05)
    assert found is not None
    assert (found.host, found.public, found.finished) == (0, False, False)
    async with httpx.AsyncClient(base_url=server.http) as http:
        url = f"/api/games/{room.game_id}/public"
        assert (await http.put(url, json={"public": True}, headers=bearer(ben.token or ""))).status_code == 403
        assert (await http.put(url, json={"public": True}, headers=bearer(ana.token or ""))).json() == {"public": True}
        # Public, still running: a stranger learns that much and no more.
        running = await http.get(f"/api/games/{room.game_id}/replay")
        assert running.status_code == 409
