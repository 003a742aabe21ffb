"""Rooms come back from the database when the app starts again: lobbies with their seats and options, and
their version ``v`` above every one they sent before."""

from __future__ import annotations

import io
from pathlib import Path

import httpx
import pytest
import segno

from crisp_server.remote.client import CrispClient, ProtocolError
from crisp_server.rooms import publishing as room_module
from tests.openapi import assert_documented
from tests.web.harness import running_server


async def test_a_lobby_comes_back_with_its_seats_host_and_options(tmp_path: Path) -> None:
    async with running_server(persist=True, data_dir=tmp_path) as server:
        code, (ana, ben) = await server.lobby(["Ana", "Ben"])
        await ana.set_options(score_limit=150, turn_seconds=45, discard_draw=True, stand_in=60, big_screen=True)
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
        assert room["options"] == {
            "score_limit": 150,
            "turn_seconds": 45,
            "discard_draw": True,
            "stand_in": 60,
            "big_screen": True,
        }
        assert ana.you["host"]
        # A stranger's token finds nothing, and the names are still taken.
        stranger = await server.client()
        with pytest.raises(ProtocolError) as refused:
            await stranger.join(code, "ana")
        assert refused.value.code == "name_taken"
        await ana.start()
        await ana.wait_for(lambda c: c.phase == "peek", what="the game starts")


async def test_a_big_screen_turned_on_during_a_game_is_on_after_a_restart(tmp_path: Path) -> None:
    async with running_server(persist=True, data_dir=tmp_path) as server:
        code, (ana, ben) = await server.table(["Ana", "Ben"])
        await ana.request({"type": "options", "big_screen": True})
        tokens = (ana.token, ben.token)

    async with running_server(persist=True, data_dir=tmp_path) as server:
        ana = await server.client()
        assert tokens[0] is not None
        await ana.resume(code, tokens[0])
        room = ana.state["room"] if ana.state else {}
        assert room["phase"] != "lobby"
        assert room["options"]["big_screen"] is True
        await ana.request({"type": "options", "big_screen": False})
        assert ana.state is not None
        assert ana.state["room"]["options"]["big_screen"] is False


async def test_a_seat_taken_by_a_spectator_comes_back_as_a_joined_one(tmp_path: Path) -> None:
    async with running_server(persist=True, data_dir=tmp_path) as server:
        code, (ana,) = await server.lobby(["Ana"])
        dee = await server.client()
        await dee.watch(code)
        await dee.sit("Dee")
        token = dee.token
        await ana.request({"type": "ping"})

    async with running_server(persist=True, data_dir=tmp_path) as server:
        assert token is not None
        dee = await server.client()
        welcome = await dee.resume(code, token)
        assert welcome["seat"] == 1
        room = dee.state["room"] if dee.state else {}
        assert [s["name"] for s in room["seats"]] == ["Ana", "Dee"]
        assert room["spectators"] == 0


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


@pytest.mark.interpreted  # a smaller VERSION_BLOCK: compiled rooms read their own constant
@pytest.mark.parametrize("block", [room_module.VERSION_BLOCK, 3])
async def test_the_room_version_never_goes_back_across_restarts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, block: int
) -> None:
    # A small block: the versions reserved run out many times before the restart (one write per block).
    monkeypatch.setattr(room_module, "VERSION_BLOCK", block)
    seen: list[int] = []
    async with running_server(persist=True, data_dir=tmp_path) as server:
        code, (ana, ben) = await server.lobby(["Ana", "Ben"])
        for limit in (50, 100, 150, 50, 100, 150, 50):
            await ana.set_options(score_limit=limit, turn_seconds=None, discard_draw=False)
        await ana.start()
        await ana.wait_for(lambda c: c.phase == "peek", what="the deal")
        await ben.request({"type": "ping"})
        seen = [m["v"] for c in (ana, ben) for m in c.messages if "v" in m]
        tokens = (ana.token, ben.token)

    for _ in range(2):  # twice: a room rebuilt and left alone must not fall back to what it restored from
        async with running_server(persist=True, data_dir=tmp_path) as server:
            ana = await server.client()
            assert tokens[0] is not None
            welcome = await ana.resume(code, tokens[0])
            await ana.request({"type": "ping"})
            after = [m["v"] for m in ana.messages if "v" in m]
            assert min(after) > max(seen), f"v went back: {max(seen)} before the restart, {min(after)} after"
            assert welcome["v"] == min(after)
            seen += after


async def test_a_restored_room_links_to_the_servers_current_address(tmp_path: Path) -> None:
    """A backup served at another address (CRISP_PUBLIC_URL): the lobby's link and its QR code name the new one,
    and so does the database (for the nodes that read a room from it)."""
    async with running_server(persist=True, data_dir=tmp_path, public_url="http://old.example") as server:
        code, (ana,) = await server.lobby(["Ana"])
        assert ana.state is not None
        assert ana.state["room"]["link"] == f"http://old.example/r/{code}"
        token = ana.token
        await ana.request({"type": "ping"})

    new_link = f"https://crisp.example.org/r/{code}"
    async with running_server(persist=True, data_dir=tmp_path, public_url="https://crisp.example.org/") as server:
        assert token is not None
        ana = await server.client()
        welcome = await ana.resume(code, token)
        assert welcome["link"] == new_link
        assert ana.state is not None
        assert ana.state["room"]["link"] == new_link
        async with httpx.AsyncClient(base_url=server.http) as http:
            assert (await http.get(f"/api/rooms/{code}")).json()["link"] == new_link
            qr = await http.get(f"/api/rooms/{code}/qr.svg")
            tv = await http.get(f"/api/rooms/{code}/qr.svg", params={"for": "tv"})
        assert qr.status_code == 200
        assert qr.content == (await http_qr(new_link))
        assert tv.content == (await http_qr(f"https://crisp.example.org/tv/{code}"))  # on the same base
        store = server.app.state.services.store
        assert store is not None
        summary = await store.room_summary(code)
        assert summary is not None
        assert summary.link == new_link


async def http_qr(link: str) -> bytes:
    """The QR code's SVG the server makes for ``link`` (the same call as the route)."""
    out = io.BytesIO()
    segno.make(link, error="m").save(out, kind="svg", scale=6, dark="#111", light="#fff", border=2, xmldecl=False)
    return out.getvalue()


async def test_without_a_public_url_a_restored_rooms_link_takes_its_hosts_new_address(tmp_path: Path) -> None:
    """No CRISP_PUBLIC_URL: the link is made of the address the host's page uses. After a restore (here: the
    same database served again, opened by another name and port) a returning guest changes nothing; the host's
    page coming back gives the room the address it uses now, and every member is told."""
    async with running_server(persist=True, data_dir=tmp_path) as server:
        ws = f"ws://localhost:{server.port}/ws"
        ana = await server.stack.enter_async_context(CrispClient.connect(ws))
        code = await ana.create("Ana")
        ben = await server.stack.enter_async_context(CrispClient.connect(ws))
        await ben.join(code, "Ben")
        old_link = f"http://localhost:{server.port}/r/{code}"
        assert ana.state is not None
        assert ana.state["room"]["link"] == old_link
        tokens = (ana.token, ben.token)
        await ana.request({"type": "ping"})

    async with running_server(persist=True, data_dir=tmp_path) as server:
        assert tokens[0] is not None
        assert tokens[1] is not None
        new_link = f"{server.http}/r/{code}"  # 127.0.0.1 and this server's port
        ben = await server.client()
        await ben.resume(code, tokens[1])
        assert ben.state is not None
        assert ben.state["room"]["link"] == old_link  # a guest's address is not the room's
        ana = await server.client()
        welcome = await ana.resume(code, tokens[0])
        assert welcome["link"] == new_link
        await ben.wait_for(lambda c: c.state is not None and c.state["room"]["link"] == new_link, what="the link")
        async with httpx.AsyncClient(base_url=server.http) as http:
            assert (await http.get(f"/api/rooms/{code}")).json()["link"] == new_link
        await ana.request({"type": "ping"})

    async with running_server(persist=True, data_dir=tmp_path) as server:  # it was saved
        store = server.app.state.services.store
        assert store is not None
        summary = await store.room_summary(code)
        assert summary is not None
        assert summary.link == new_link
