"""Rooms over real sockets: create, join, names, options, kick, host, start, spectators, reactions,
versions, resume, and the room's HTTP routes. Several clients talk to one server in every test."""

from __future__ import annotations

import asyncio
import io
from collections.abc import Callable
from typing import Any

import httpx
import orjson
import pytest
import segno

from crisp_server.remote.client import CrispClient, ProtocolError
from crisp_server.rooms.tokens import CODE_ALPHABET, CODE_LENGTH, tv_link
from crisp_server.wire.protocol import REACTIONS
from tests.openapi import assert_documented
from tests.web.harness import Harness

# -- helpers -------------------------------------------------------------------------------------------


def room_of(client: CrispClient) -> dict[str, Any]:
    assert client.state is not None, "no state received yet"
    room: dict[str, Any] = client.state["room"]
    return room


def names(client: CrispClient) -> list[str]:
    return [s["name"] for s in room_of(client)["seats"]]


def connected(client: CrispClient) -> list[bool]:
    return [s["connected"] for s in room_of(client)["seats"]]


async def until(clients: list[CrispClient], predicate: Callable[[CrispClient], bool], what: str) -> None:
    """Wait until every client's latest state satisfies ``predicate``."""
    for c in clients:
        await c.wait_for(lambda c: c.state is not None and predicate(c), what=what)


async def refused(client: CrispClient, message: dict[str, Any]) -> dict[str, Any]:
    """Send ``message`` and return the error it is answered with.

    Waits for the error itself: an update published just before (another player's change still on its way)
    is not the answer. A message wrongly accepted fails the test by timing out.
    """
    start = len(client.messages)
    await client.send(message)
    await client.wait_for(
        lambda c: any(m["type"] == "error" for m in c.messages[start:]), what=f"the refusal of {message}"
    )
    return next(m for m in client.messages[start:] if m["type"] == "error")


async def error_code(client: CrispClient, message: dict[str, Any]) -> str:
    return str((await refused(client, message))["code"])


async def close_code(client: CrispClient) -> int | None:
    """The code the server closed the socket with, read from the socket itself."""
    await asyncio.wait_for(client.ws.wait_closed(), 5)
    return client.ws.close_code


def kinds(client: CrispClient) -> list[str]:
    return [str(m.get("type")) for m in client.messages]


def events_of(client: CrispClient, kind: str) -> list[dict[str, Any]]:
    return [e for m in client.messages if m.get("type") == "update" for e in m["events"] if e["type"] == kind]


def assert_versions(client: CrispClient) -> None:
    """Every message has a ``v``; from the welcome on, each update is exactly one more than the one before."""
    assert all(isinstance(m.get("v"), int) for m in client.messages), client.messages
    assert client.gaps == 0
    welcomes = [i for i, m in enumerate(client.messages) if m["type"] == "welcome"]
    assert welcomes, "no welcome"
    v = client.messages[welcomes[0]]["v"]
    for m in client.messages[welcomes[0] + 1 :]:
        if m["type"] == "update":
            assert m["v"] == v + 1, f"update v={m['v']} after v={v}"
            v = m["v"]
        else:  # errors, snapshots and pongs carry the current version, they do not bump it
            assert m["v"] == v, f"{m['type']} carries v={m['v']}, current is {v}"


OPTIONS = {"type": "options", "score_limit": 100, "turn_seconds": None, "discard_draw": False}


# -- create, join, seats -------------------------------------------------------------------------------


async def test_players_see_the_seats_the_host_and_who_is_connected(server: Harness) -> None:
    clients = [await server.client() for _ in range(3)]
    ana, ben, cara = clients
    code = await ana.create("Ana")
    await ben.join(code, "Ben")
    await cara.join(code, "Cara")
    await until(clients, lambda c: names(c) == ["Ana", "Ben", "Cara"], "three seats")

    for seat, c in enumerate(clients):
        assert c.welcome is not None
        assert c.welcome["seat"] == seat
        assert isinstance(c.welcome["token"], str)
        assert len(c.welcome["token"]) >= 16
        room = room_of(c)
        assert room["code"] == code
        assert room["phase"] == "lobby"
        assert room["host"] == 0
        assert connected(c) == [True, True, True]
        assert c.you["seat"] == seat
        assert c.you["host"] is (seat == 0)
        assert c.you["spectator"] is False
    tokens = {c.welcome["token"] for c in clients if c.welcome is not None}
    assert len(tokens) == 3

    await cara.close()
    await until([ana, ben], lambda c: connected(c) == [True, True, False], "Cara's dot goes grey")
    assert names(ana) == ["Ana", "Ben", "Cara"]  # a lost connection keeps its seat


async def test_room_code_is_six_unambiguous_characters_and_the_link_points_to_it(server: Harness) -> None:
    codes = set()
    for _ in range(5):
        c = await server.client()
        code = await c.create("Ana")
        assert len(code) == CODE_LENGTH == 6
        assert set(code) <= set(CODE_ALPHABET)
        assert c.welcome is not None
        assert c.welcome["link"] == f"{server.http}/r/{code}"
        assert room_of(c)["link"] == c.welcome["link"]
        codes.add(code)
    assert len(codes) == 5
    # No look-alikes in the alphabet itself.
    assert not set(CODE_ALPHABET) & set("0O1IL2Z5S8B")


async def test_join_with_a_lowercase_code_and_blanks(server: Harness) -> None:
    _, (ana,) = await server.lobby(["Ana"])
    code = room_of(ana)["code"]
    ben = await server.client()
    welcome = await ben.join(f"  {code.lower()} ", "Ben")
    assert welcome["room"] == code
    assert welcome["seat"] == 1
    await until([ana, ben], lambda c: names(c) == ["Ana", "Ben"], "Ben seated")


async def test_unknown_room(server: Harness) -> None:
    c = await server.client()
    for room in ("ACDEFG", "nope", "", "ACDEFGH"):
        with pytest.raises(ProtocolError) as info:
            await c.join(room, "Ana")
        assert info.value.code == "room_not_found", room
    with pytest.raises(ProtocolError) as info:
        await c.watch("ACDEFG")
    assert info.value.code == "room_not_found"
    with pytest.raises(ProtocolError) as info:
        await c.resume("ACDEFG", "some-token")
    assert info.value.code == "room_not_found"
    # The connection is still usable: a room can be created on it.
    assert len(await c.create("Ana")) == 6


async def test_commands_before_joining_a_room(server: Harness) -> None:
    c = await server.client()
    for message in ({"type": "start"}, {"type": "sync"}, {"type": "draw"}, {"type": "react", "emoji": "👍"}):
        assert await error_code(c, message) == "not_in_room", message
    # A ping is answered at any time: a client may check its connection before joining.
    assert await c.request({"type": "ping"}) == {"type": "pong", "v": 0}


async def test_a_refused_join_is_answered_without_the_rooms_version(server: Harness) -> None:
    code, (ana,) = await server.lobby(["Ana"])
    await ana.set_options(score_limit=50)
    c = await server.client()
    with pytest.raises(ProtocolError) as refused:
        await c.join(code, "ANA")  # the name is taken: c addressed the room but is not in it
    assert refused.value.message["v"] == 0  # nothing of the room for a connection that is not in it
    assert await c.request({"type": "ping"}) == {"type": "pong", "v": 0}
    assert (await ana.request({"type": "ping"}))["v"] > 0


async def test_already_in_a_room(server: Harness) -> None:
    code, (ana, ben) = await server.lobby(["Ana", "Ben"])
    other = await server.client()
    other_code = await other.create("Olga")
    for message in (
        {"type": "create", "name": "Ana2"},
        {"type": "join", "room": other_code, "name": "Ana2"},
        {"type": "join", "room": code, "name": "Ana2"},
        {"type": "watch", "room": other_code},
    ):
        assert await error_code(ana, message) == "already_in_room", message
    await until([ana, ben], lambda c: names(c) == ["Ana", "Ben"], "nothing changed")
    assert names(other) == ["Olga"]


# -- names ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "code"),
    [
        ("", "bad_name"),
        ("   ", "bad_name"),
        ("x" * 21, "bad_name"),
        (" " + "x" * 21 + " ", "bad_name"),
        ("Be\x07n", "bad_name"),
        ("Ben\n2", "bad_name"),
        ("Be\u200bn", "bad_name"),  # a zero-width space: a format character, invisible on screen
        ("\x00", "bad_name"),
        ("ANA", "name_taken"),
        ("ana", "name_taken"),
        ("  aNa ", "name_taken"),
    ],
)
async def test_names_refused(server: Harness, raw: str, code: str) -> None:
    _, (ana,) = await server.lobby(["Ana"])
    ben = await server.client()
    with pytest.raises(ProtocolError) as info:
        await ben.join(room_of(ana)["code"], raw)
    assert info.value.code == code
    # A refused join seats nobody, and the same connection may try again.
    assert names(ana) == ["Ana"]
    await ben.join(room_of(ana)["code"], "Ben")
    await until([ana, ben], lambda c: names(c) == ["Ana", "Ben"], "Ben seated")


async def test_names_trimmed_and_counted_in_characters(server: Harness) -> None:
    _, (ana,) = await server.lobby(["Ana"])
    code = room_of(ana)["code"]
    ben, long, zoe, zoe2 = [await server.client() for _ in range(4)]
    await ben.join(code, "  Ben\t ")
    await long.join(code, "é" * 20)  # 20 characters, 40 bytes: allowed
    await zoe.join(code, "Zoe\u0308")  # "Zoë" typed with a combining diaeresis
    with pytest.raises(ProtocolError) as info:
        await zoe2.join(code, "Zo\u00eb")  # the same name, precomposed
    assert info.value.code == "name_taken"
    await until([ana], lambda c: len(names(c)) == 4, "four seats")
    assert names(ana) == ["Ana", "Ben", "é" * 20, "Zo\u00eb"]


async def test_create_needs_a_valid_name_too(server: Harness) -> None:
    c = await server.client()
    with pytest.raises(ProtocolError) as info:
        await c.create(" ")
    assert info.value.code == "bad_name"
    async with httpx.AsyncClient() as http:
        health = (await http.get(server.http + "/healthz")).json()
    assert health["rooms"] == 0, "a refused create must not leave an empty room behind"
    assert len(await c.create("Ana")) == 6


# -- room size -----------------------------------------------------------------------------------------


async def test_room_full_at_nine(server: Harness) -> None:
    players = [f"P{i}" for i in range(8)]
    code, clients = await server.lobby(players)
    ninth = await server.client()
    with pytest.raises(ProtocolError) as info:
        await ninth.join(code, "Nina")
    assert info.value.code == "room_full"
    await until(clients, lambda c: names(c) == players, "still eight")
    # A full lobby may be watched, but not sat in.
    await ninth.watch(code)
    await until(clients, lambda c: room_of(c)["spectators"] == 1, "one spectator")
    assert await error_code(ninth, {"type": "sit", "name": "Nina"}) == "room_full"


# -- options -------------------------------------------------------------------------------------------


async def test_host_sets_every_accepted_option(server: Harness) -> None:
    _, (ana, ben) = await server.lobby(["Ana", "Ben"])
    for score_limit in (50, 100, 150):
        for turn_seconds in (30, 45, 60, None):
            for discard_draw in (True, False):
                options = {"score_limit": score_limit, "turn_seconds": turn_seconds, "discard_draw": discard_draw}
                answer = await ana.request({"type": "options", **options})
                assert answer["type"] == "update"
                assert answer["room"]["options"] == {**options, "stand_in": None, "big_screen": False}
                await ben.wait_for(lambda c: c.v == ana.v, what="the options")
                assert room_of(ben)["options"] == {**options, "stand_in": None, "big_screen": False}


async def test_options_refused(server: Harness) -> None:
    _, (ana, ben) = await server.lobby(["Ana", "Ben"])
    await ana.set_options(150, 45, True)
    assert await error_code(ben, {**OPTIONS, "score_limit": 50}) == "not_host"
    for bad in (
        {"score_limit": 75},
        {"score_limit": 0},
        {"score_limit": "100"},
        {"turn_seconds": 20},
        {"turn_seconds": 0},
        {"turn_seconds": "30"},
        {"turn_seconds": True},
        {"discard_draw": "yes"},
        {"discard_draw": 1},
        {"discard_draw": None},
    ):
        assert await error_code(ana, {**OPTIONS, **bad}) == "bad_message", bad
    missing = dict(OPTIONS)
    del missing["turn_seconds"]
    assert await error_code(ana, missing) == "bad_message"
    expected = {"score_limit": 150, "turn_seconds": 45, "discard_draw": True, "stand_in": None, "big_screen": False}
    assert room_of(ana)["options"] == expected
    assert (await ben.sync())["room"]["options"] == expected

    await ana.start()
    assert await error_code(ana, OPTIONS) == "game_running"
    assert await error_code(ben, OPTIONS) == "not_host"
    snapshot = await ana.sync()
    assert snapshot["room"]["options"] == expected
    assert snapshot["table"]["options"] == {k: v for k, v in expected.items() if k not in ("stand_in", "big_screen")}


async def test_the_host_turns_the_big_screen_on_and_off_in_the_lobby_and_during_the_game(server: Harness) -> None:
    _, (ana, ben) = await server.lobby(["Ana", "Ben"])
    await ana.set_options(150, 45, True, stand_in=30)
    rules = {"score_limit": 150, "turn_seconds": 45, "discard_draw": True, "stand_in": 30}
    # Alone, it changes nothing else; with the rule options, it is set with them.
    answer = await ana.request({"type": "options", "big_screen": True})
    assert answer["room"]["options"] == {**rules, "big_screen": True}
    assert [e["type"] for e in answer["events"]] == ["options_changed"]
    await ben.wait_for(lambda c: room_of(c)["options"]["big_screen"] is True, what="the big screen on")
    await ana.set_options(150, 45, True)  # (absent: it stays as it is)
    assert room_of(ana)["options"] == {**rules, "big_screen": True}
    await ana.request({**OPTIONS, "big_screen": False})
    expected = {"score_limit": 100, "turn_seconds": None, "discard_draw": False, "stand_in": 30, "big_screen": False}
    assert room_of(ana)["options"] == expected
    for bad in (1, "true", None, [True]):
        detail = (await refused(ana, {"type": "options", "big_screen": bad}))["detail"]
        assert detail == "options.big_screen: Input should be a valid boolean", bad
    assert await error_code(ben, {"type": "options", "big_screen": True}) == "not_host"

    await ana.start()
    answer = await ana.request({"type": "options", "big_screen": True})
    assert answer["room"]["options"]["big_screen"] is True
    assert answer["room"]["phase"] == "peek"
    await ben.wait_for(lambda c: room_of(c)["options"]["big_screen"] is True, what="the big screen on mid-game")
    # The rules and the stand-ins stay the lobby's, with the big screen or without it.
    assert await error_code(ana, {**OPTIONS, "big_screen": False}) == "game_running"
    assert await error_code(ana, {"type": "options", "stand_in": 60, "big_screen": False}) == "game_running"
    assert await error_code(ben, {"type": "options", "big_screen": False}) == "not_host"
    snapshot = await ben.sync()
    assert snapshot["room"]["options"]["big_screen"] is True
    assert snapshot["room"]["options"]["stand_in"] == 30
    assert snapshot["table"]["options"] == {"score_limit": 100, "turn_seconds": None, "discard_draw": False}


async def test_options_must_say_what_to_set_and_the_rule_options_go_together(server: Harness) -> None:
    _, (ana, _ben) = await server.lobby(["Ana", "Ben"])
    nothing = await refused(ana, {"type": "options"})
    assert (nothing["code"], nothing["detail"]) == (
        "bad_message",
        "options: Value error, nothing to set: send the rule options, stand_in or big_screen",
    )
    half = await refused(ana, {"type": "options", "score_limit": 50, "big_screen": True})
    assert (half["code"], half["detail"]) == (
        "bad_message",
        "options: Value error, score_limit, turn_seconds and discard_draw go together:"
        " turn_seconds, discard_draw missing",
    )
    assert room_of(ana)["options"]["score_limit"] == 100
    assert room_of(ana)["options"]["big_screen"] is False


# -- kick ----------------------------------------------------------------------------------------------


async def test_kick(server: Harness) -> None:
    code, clients = await server.lobby(["Ana", "Ben", "Cara", "Dan"])
    ana, ben, cara, dan = clients
    assert ben.token is not None
    ben_token = ben.token
    assert await error_code(ben, {"type": "kick", "seat": 2}) == "not_host"
    assert await error_code(ana, {"type": "kick", "seat": 0}) == "no_such_seat"  # not oneself
    assert await error_code(ana, {"type": "kick", "seat": 4}) == "no_such_seat"
    assert await error_code(ana, {"type": "kick", "seat": -1}) == "no_such_seat"
    assert names(ana) == ["Ana", "Ben", "Cara", "Dan"]

    await ana.request({"type": "kick", "seat": 1})
    await ben.wait_for(lambda c: "kicked" in kinds(c), what="the kick notice")
    assert await close_code(ben) == 4003
    await until([ana, cara, dan], lambda c: names(c) == ["Ana", "Cara", "Dan"], "Ben gone")
    # The seats below move up; the host stays.
    assert [c.you["seat"] for c in (ana, cara, dan)] == [0, 1, 2]
    assert [c.you["host"] for c in (ana, cara, dan)] == [True, False, False]
    assert room_of(cara)["host"] == 0
    assert events_of(cara, "kicked") == [{"type": "kicked", "seat": 1}]

    # The kicked player's token no longer opens a seat; joining again is allowed (the host can kick again).
    again = await server.client()
    with pytest.raises(ProtocolError) as info:
        await again.resume(code, ben_token)
    assert info.value.code == "bad_token"
    await again.join(code, "Ben")
    await until([ana], lambda c: names(c) == ["Ana", "Cara", "Dan", "Ben"], "Ben back")

    # A kicked seat that is disconnected is still removed.
    await dan.close()
    await until([ana], lambda c: connected(c) == [True, True, False, True], "Dan away")
    await ana.request({"type": "kick", "seat": 2})
    await until([ana, cara, again], lambda c: names(c) == ["Ana", "Cara", "Ben"], "Dan gone")
    assert again.you["seat"] == 2

    await ana.start()
    assert await error_code(ana, {"type": "kick", "seat": 1}) == "game_running"


# -- host ----------------------------------------------------------------------------------------------


async def test_host_leaves_the_lobby(server: Harness) -> None:
    _, clients = await server.lobby(["Ana", "Ben", "Cara"])
    ana, ben, cara = clients
    answer = await ana.request({"type": "leave"})
    assert answer["type"] == "left"
    assert await close_code(ana) == 1000
    await until([ben, cara], lambda c: names(c) == ["Ben", "Cara"], "Ana gone")
    assert room_of(ben)["host"] == 0
    assert ben.you["host"] is True
    assert cara.you["host"] is False
    assert ben.you["seat"] == 0
    assert cara.you["seat"] == 1
    # The new host has the host's powers.
    await ben.set_options(50)
    assert await error_code(cara, {"type": "start"}) == "not_host"

    await ben.request({"type": "leave"})
    await until([cara], lambda c: names(c) == ["Cara"] and c.you["host"], "Cara is host")
    assert await error_code(cara, {"type": "start"}) == "not_enough_players"

    # When the last player leaves the lobby, the room closes.
    code = room_of(cara)["code"]
    await cara.request({"type": "leave"})
    async with httpx.AsyncClient(base_url=server.http) as http:
        assert (await http.get(f"/api/rooms/{code}")).status_code == 404
        assert (await http.get("/healthz")).json()["rooms"] == 0


async def test_host_leaves_during_the_game(server: Harness) -> None:
    code, clients = await server.table(["Ana", "Ben", "Cara"])
    ana, ben, cara = clients
    assert ana.token is not None
    ana_token = ana.token
    await ana.request({"type": "leave"})
    await until([ben, cara], lambda c: room_of(c)["host"] == 1, "Ben is host")
    assert ben.you["host"] is True
    assert cara.you["host"] is False
    seats = room_of(cara)["seats"]
    assert [s["left"] for s in seats] == [True, False, False]
    assert names(cara) == ["Ana", "Ben", "Cara"]  # in a game the seat stays, marked as left

    # Ana comes back; the host stays with Ben. Then the host passes on, wrapping round the table.
    back = await server.client()
    await back.resume(code, ana_token)
    await until([back, ben, cara], lambda c: not room_of(c)["seats"][0]["left"], "Ana back")
    assert room_of(back)["host"] == 1
    await ben.request({"type": "leave"})
    await until([back, cara], lambda c: room_of(c)["host"] == 2, "Cara is host")
    await cara.request({"type": "leave"})
    await until([back], lambda c: room_of(c)["host"] == 0 and c.you["host"], "Ana is host again")


# -- start ---------------------------------------------------------------------------------------------


async def test_start_rules(server: Harness) -> None:
    code, (ana,) = await server.lobby(["Ana"])
    assert await error_code(ana, {"type": "start"}) == "not_enough_players"
    assert await error_code(ana, {"type": "ready"}) == "wrong_phase"
    assert await error_code(ana, {"type": "draw"}) == "wrong_phase"
    ben = await server.client()
    await ben.join(code, "Ben")
    assert await error_code(ben, {"type": "start"}) == "not_host"
    await until([ana, ben], lambda c: room_of(c)["phase"] == "lobby", "still in the lobby")

    await ana.start()
    await until([ana, ben], lambda c: room_of(c)["phase"] == "peek", "the deal")
    assert await error_code(ana, {"type": "start"}) == "game_running"
    late = await server.client()
    with pytest.raises(ProtocolError) as info:
        await late.join(code, "Late")
    assert info.value.code == "game_running"
    assert names(ana) == ["Ana", "Ben"]


# -- spectators ----------------------------------------------------------------------------------------


async def test_a_spectator_follows_the_lobby_from_its_start(server: Harness) -> None:
    """A link page watches the room live: it sees the seats fill and the game start, and no dealt card."""
    code, (ana,) = await server.lobby(["Ana"])
    viewer = await server.client()
    welcome = await viewer.watch(code)
    assert welcome["seat"] is None
    assert welcome["token"] is None
    assert room_of(viewer)["phase"] == "lobby"
    assert viewer.table is None
    await until([ana, viewer], lambda c: room_of(c)["spectators"] == 1, "one spectator")
    ben = await server.client()
    await ben.join(code, "Ben")
    await until([viewer], lambda c: names(c) == ["Ana", "Ben"], "Ben seen joining")
    assert {"type": "joined", "seat": 1, "name": "Ben"} in events_of(viewer, "joined")
    await ana.start()
    await until([viewer], lambda c: room_of(c)["phase"] == "peek", "the deal seen")
    assert events_of(viewer, "card_shown") == []
    assert viewer.you["spectator"] is True
    assert_versions(viewer)


async def test_a_spectator_sits_in_the_lobby_as_a_joined_player(server: Harness) -> None:
    code, (ana, ben) = await server.lobby(["Ana", "Ben"])
    dee = await server.client()
    await dee.watch(code)
    await until([ana, ben, dee], lambda c: room_of(c)["spectators"] == 1, "one spectator")
    start = len(ana.messages)
    welcome = await dee.sit("  Dee ")
    assert welcome["seat"] == 2
    assert welcome["room"] == code
    assert isinstance(welcome["token"], str)
    assert dee.token == welcome["token"]
    # Answered as a join: the welcome, then the update with ``joined`` (its v the welcome's plus one).
    answer = next(m for m in dee.messages if m["type"] == "update" and m["v"] == welcome["v"] + 1)
    assert answer["events"] == [{"type": "joined", "seat": 2, "name": "Dee"}]
    assert answer["you"]["seat"] == 2
    assert answer["you"]["spectator"] is False
    await until([ana, ben, dee], lambda c: names(c) == ["Ana", "Ben", "Dee"], "Dee seated")
    for c in (ana, ben, dee):
        assert room_of(c)["spectators"] == 0
        assert connected(c) == [True, True, True]
    assert events_of(ana, "spectator_left") == []  # one spectator fewer is in ``joined``'s update
    assert next(m for m in ana.messages[start:] if m["type"] == "update")["events"] == answer["events"]
    assert_versions(dee)
    # A seat like any other: its token resumes it, and it plays.
    again = await server.client()
    await again.resume(code, welcome["token"])
    assert again.you["seat"] == 2
    await ana.start()
    await until([ana, ben, again], lambda c: c.phase == "peek", "the deal")
    shown = events_of(again, "card_shown")
    assert sorted(e["slot"] for e in shown) == ["left", "right"]
    assert all(e["seat"] == 2 for e in shown)
    await again.ready()
    assert room_of(again)["seats"][2]["ready"] is True


async def test_sit_is_refused_with_a_reason(server: Harness) -> None:
    code, (ana, ben) = await server.lobby(["Ana", "Ben"])
    nobody = await server.client()
    assert await error_code(nobody, {"type": "sit", "name": "Dee"}) == "not_in_room"
    assert await error_code(ana, {"type": "sit", "name": "Dee"}) == "already_seated"
    viewer = await server.client()
    await viewer.watch(code)
    assert await error_code(viewer, {"type": "sit", "name": " \u200b "}) == "bad_name"
    assert await error_code(viewer, {"type": "sit", "name": "x" * 21}) == "bad_name"
    assert await error_code(viewer, {"type": "sit", "name": "BEN"}) == "name_taken"
    assert await error_code(viewer, {"type": "sit"}) == "bad_message"
    # Refused, it still watches, and may sit under another name.
    await until([ana, viewer], lambda c: room_of(c)["spectators"] == 1, "still one spectator")
    assert names(ana) == ["Ana", "Ben"]
    await viewer.sit("Vic")
    assert await error_code(viewer, {"type": "sit", "name": "Vic2"}) == "already_seated"
    await until([ana, ben], lambda c: names(c) == ["Ana", "Ben", "Vic"], "Vic seated once")


async def test_sit_while_the_game_runs(server: Harness) -> None:
    code, (ana, ben) = await server.table(["Ana", "Ben"])
    viewer = await server.client()
    await viewer.watch(code)
    assert await error_code(viewer, {"type": "sit", "name": "Dee"}) == "game_running"
    await until([ana, ben, viewer], lambda c: room_of(c)["spectators"] == 1, "still a spectator")
    assert names(ana) == ["Ana", "Ben"]


async def test_spectator_in_a_running_game(server: Harness) -> None:
    code, (ana, ben) = await server.table(["Ana", "Ben"])
    viewer = await server.client()
    welcome = await viewer.watch(code.lower())
    assert welcome["seat"] is None
    assert welcome["token"] is None
    await until([ana, ben, viewer], lambda c: room_of(c)["spectators"] == 1, "one spectator")
    assert viewer.you["seat"] is None
    assert viewer.you["spectator"] is True
    assert viewer.you["host"] is False
    assert viewer.you["drawn_card"] is None
    assert viewer.you["can"] == []

    for message in (
        {"type": "draw"},
        {"type": "discard"},
        {"type": "crisp"},
        {"type": "ready"},
        {"type": "react", "emoji": "👍"},
        {"type": "start"},
        {"type": "kick", "seat": 1},
        OPTIONS,
        {"type": "rematch"},
    ):
        assert await error_code(viewer, message) == "not_seated", message

    mover, other = (ana, ben) if ana.my_turn() else (ben, ana)
    answer = await mover.draw()
    drawn = answer["you"]["drawn_card"]
    assert isinstance(drawn, str)
    await until([viewer, other], lambda c: c.table is not None and c.table["round"]["drawn"] is not None, "the draw")
    for c in (viewer, other):
        assert c.you["drawn_card"] is None
        assert c.table is not None
        assert c.table["round"]["drawn"] == {"from": "deck", "card": None}
        assert [e["card"] for e in events_of(c, "drew")] == [None]
        # The first card drawn in a round cannot be anywhere public yet: it must not be anywhere at all.
        assert f'"{drawn}"'.encode() not in orjson.dumps(c.messages), "the drawn card leaked"
    assert events_of(viewer, "card_shown") == []

    snapshot = await viewer.sync()
    assert snapshot["you"]["seat"] is None
    assert snapshot["you"]["drawn_card"] is None

    await viewer.request({"type": "leave"})
    await until([ana, ben], lambda c: room_of(c)["spectators"] == 0, "spectator gone")
    # A spectator who just closes the page is counted out too.
    again = await server.client()
    await again.watch(code)
    await until([ana, ben], lambda c: room_of(c)["spectators"] == 1, "spectator back")
    await again.close()
    await until([ana, ben], lambda c: room_of(c)["spectators"] == 0, "spectator gone")


async def test_spectators_are_let_go_when_the_room_closes(server: Harness) -> None:
    code, (ana, ben) = await server.table(["Ana", "Ben"])
    viewer = await server.client()
    await viewer.watch(code)
    for c in (ana, ben):
        await c.request({"type": "leave"})
    # Everyone left mid-game: the game waits for them for the abandoned-room time, watched still.
    room = server.app.state.registry.get(code)
    assert room is not None
    assert room.paused
    assert viewer.closed is None
    idle_ms = int(server.app.state.settings.idle_game_hours * 3_600_000)
    await server.advance(idle_ms)
    assert server.app.state.registry.expire_abandoned(idle_ms) == 1
    await room.flush()
    async with httpx.AsyncClient(base_url=server.http) as http:
        assert (await http.get(f"/api/rooms/{code}")).status_code == 404
    # The spectator is told and let go: nothing would ever answer it again.
    await viewer.wait_for(lambda c: c.closed is not None, timeout=2, what="the close")
    assert viewer.messages[-1]["type"] == "room_closed"


async def test_spectator_of_a_full_room_sees_no_dealt_card(server: Harness) -> None:
    players = [f"P{i}" for i in range(8)]
    code, clients = await server.lobby(players)
    viewer = await server.client()
    await viewer.watch(code)
    await until(clients, lambda c: room_of(c)["spectators"] == 1, "one spectator")
    await clients[0].start()
    await until([*clients, viewer], lambda c: room_of(c)["phase"] == "peek", "the deal")
    assert events_of(viewer, "card_shown") == []
    assert viewer.you["seat"] is None
    for seat, c in enumerate(clients):
        shown = events_of(c, "card_shown")
        assert sorted(e["slot"] for e in shown) == ["left", "right"], shown
        assert all(e["seat"] == seat for e in shown)


# -- reactions -----------------------------------------------------------------------------------------


async def test_reactions(server: Harness) -> None:
    _, (ana, ben) = await server.lobby(["Ana", "Ben"])
    answer = await ana.react("👍")
    assert {"type": "reaction", "seat": 0, "emoji": "👍"} in answer["events"]
    await ben.wait_for(lambda c: events_of(c, "reaction") != [], what="the reaction")
    assert events_of(ben, "reaction") == [{"type": "reaction", "seat": 0, "emoji": "👍"}]

    for emoji in ("💩", "", "👍👍", "thumbs up", "👍\x00"):
        assert await error_code(ana, {"type": "react", "emoji": emoji}) == "bad_reaction", emoji
    assert await error_code(ana, {"type": "react", "emoji": 1}) == "bad_message"

    # A burst of three (the first was above), then one every two seconds of server time.
    await ana.react(REACTIONS[1])
    await ana.react(REACTIONS[2])
    assert await error_code(ana, {"type": "react", "emoji": "🔥"}) == "rate_limited"
    await ben.react("🍀")  # each player has their own allowance
    await server.advance(1999)
    assert await error_code(ana, {"type": "react", "emoji": "🔥"}) == "rate_limited"
    await server.advance(1)
    await ana.react("🔥")
    assert await error_code(ana, {"type": "react", "emoji": "🔥"}) == "rate_limited"
    await server.advance(6000)
    for emoji in REACTIONS[:3]:
        await ana.react(emoji)
    assert await error_code(ana, {"type": "react", "emoji": "🔥"}) == "rate_limited"

    await ben.wait_for(lambda c: len(events_of(c, "reaction")) == 8, what="all reactions")
    assert [e for e in events_of(ben, "reaction") if e["seat"] == 1] == [{"type": "reaction", "seat": 1, "emoji": "🍀"}]
    assert [e["emoji"] for e in events_of(ben, "reaction") if e["seat"] == 0] == [
        "👍",
        REACTIONS[1],
        REACTIONS[2],
        "🔥",
        *REACTIONS[:3],
    ]


# -- versions ------------------------------------------------------------------------------------------


async def test_versions_grow_by_one_and_errors_carry_the_current_one(server: Harness) -> None:
    code, clients = await server.lobby(["Ana", "Ben", "Cara"])
    ana, ben, cara = clients
    await ana.set_options(50, 30, True)
    await ben.react("👏")
    assert await error_code(ben, {"type": "start"}) == "not_host"
    assert await error_code(cara, {"type": "react", "emoji": "nope"}) == "bad_reaction"
    assert await error_code(cara, {"type": "nope"}) == "bad_message"  # refused by the web layer
    assert await error_code(cara, {"type": "kick", "seat": "1"}) == "bad_message"
    await ana.request({"type": "kick", "seat": 2})
    dan = await server.client()
    await dan.join(code, "Dan")
    pong = await dan.request({"type": "ping"})
    assert pong["type"] == "pong"
    await ana.start()
    await until([ana, ben, dan], lambda c: room_of(c)["phase"] == "peek", "the deal")
    for c in (ana, ben, dan):
        await c.ready()
    await until([ana, ben, dan], lambda c: room_of(c)["phase"] == "play", "play")
    final = ana.v
    await until([ben, dan], lambda c: c.v == final, "the last update")

    for c in (ana, ben, cara, dan):
        assert_versions(c)
    # Errors carry the version current when they were sent.
    for c in (ana, ben, dan):
        error = await refused(c, {"type": "start"})
        assert error["v"] == final
        assert error["code"] in ("game_running", "not_host")
        assert c.state is not None
        last = c.state
        snapshot = await c.sync()
        assert snapshot["type"] == "snapshot"
        assert snapshot["v"] == final
        assert snapshot["events"] == []
        # The same state as the last update (the clock aside: it counts down between the two).
        assert {k: snapshot[k] for k in ("room", "table", "you")} == {k: last[k] for k in ("room", "table", "you")}
    # Everyone saw every update published since they came in, each with the same number.
    everything = [m["v"] for m in ana.messages if m["type"] == "update"]
    assert everything == list(range(1, final + 1))
    for c in (ben, cara, dan):
        assert c.welcome is not None
        seen = [m["v"] for m in c.messages if m["type"] == "update"]
        assert seen == [v for v in everything if v > c.welcome["v"]][: len(seen)]
    assert cara.v < final  # kicked: she saw nothing after that


# -- resume --------------------------------------------------------------------------------------------


async def test_resume_keeps_the_seat(server: Harness) -> None:
    code, (ana, ben, cara) = await server.lobby(["Ana", "Ben", "Cara"])
    assert ben.token is not None
    token = ben.token
    await ben.close()
    await until([ana, cara], lambda c: connected(c) == [True, False, True], "Ben away")

    back = await server.client()
    welcome = await back.resume(code.lower(), token)
    assert welcome["seat"] == 1
    assert welcome["token"] is None  # the token is only ever sent once
    await until([ana, back, cara], lambda c: connected(c) == [True, True, True], "Ben back")
    assert back.you["seat"] == 1
    assert back.you["host"] is False
    assert_versions(back)

    # During the game too, and the resumed player can play their seat.
    await ana.start()
    await until([ana, back, cara], lambda c: room_of(c)["phase"] == "peek", "the deal")
    await back.close()
    await until([ana], lambda c: connected(c) == [True, False, True], "Ben away")
    again = await server.client()
    await again.resume(code, token)
    await until([ana, again], lambda c: connected(c) == [True, True, True], "Ben back")
    assert again.you["seat"] == 1
    await again.ready()


async def test_a_second_connection_with_the_same_token_replaces_the_first(server: Harness) -> None:
    code, (ana, ben) = await server.lobby(["Ana", "Ben"])
    assert ben.token is not None
    second = await server.client()
    welcome = await second.resume(code, ben.token)
    assert welcome["seat"] == 1
    await ben.wait_for(lambda c: "replaced" in kinds(c), what="the replaced notice")
    assert await close_code(ben) == 4001
    assert kinds(ben)[-1] == "replaced"
    await until([ana, second], lambda c: connected(c) == [True, True], "Ben connected")
    # The old socket's end must not mark the seat as disconnected.
    await ana.react("👍")
    await until([ana, second], lambda c: events_of(c, "reaction") != [], "the reaction")
    assert connected(ana) == [True, True]
    assert (await ana.sync())["room"]["seats"][1]["connected"] is True
    await second.react("👏")
    assert_versions(second)


async def test_resume_with_a_bad_token(server: Harness) -> None:
    code, (ana,) = await server.lobby(["Ana"])
    other_code, (olga,) = await server.lobby(["Olga"])
    assert olga.token is not None
    c = await server.client()
    for token in ("", "x" * 22, olga.token):  # Olga's token belongs to another room
        with pytest.raises(ProtocolError) as info:
            await c.resume(code, token)
        assert info.value.code == "bad_token", token
    assert ana.token is not None
    with pytest.raises(ProtocolError) as info:
        await olga.resume(code, ana.token)
    assert info.value.code == "already_in_room"
    assert other_code != code


# -- HTTP ----------------------------------------------------------------------------------------------


async def test_room_info(server: Harness) -> None:
    code, _ = await server.lobby(["Ana", "Ben"])
    async with httpx.AsyncClient(base_url=server.http) as http:
        info = await http.get(f"/api/rooms/{code}")
        assert info.status_code == 200
        assert info.json() == {
            "code": code,
            "link": f"{server.http}/r/{code}",
            "phase": "lobby",
            "players": ["Ana", "Ben"],
            "joinable": True,
            "watchable": True,
        }
        assert (await http.get(f"/api/rooms/{code.lower()}")).json()["code"] == code
        assert (await http.get("/api/rooms/ACDEFG")).status_code == 404
        assert (await http.get("/api/rooms/nope")).status_code == 404


async def test_room_info_of_a_running_game(server: Harness) -> None:
    code, _ = await server.table(["Ana", "Ben"])
    async with httpx.AsyncClient(base_url=server.http) as http:
        info = (await http.get(f"/api/rooms/{code}")).json()
    assert info["phase"] == "play"
    assert info["joinable"] is False
    assert info["watchable"] is True


async def test_qr_code(server: Harness) -> None:
    code, _ = await server.lobby(["Ana"])
    async with httpx.AsyncClient(base_url=server.http) as http:
        qr = await http.get(f"/api/rooms/{code}/qr.svg")
        assert qr.status_code == 200
        assert qr.headers["content-type"].startswith("image/svg+xml")
        assert "<svg" in qr.text
        assert qr.text.rstrip().endswith("</svg>")
        assert (await http.get("/api/rooms/ACDEFG/qr.svg")).status_code == 404
        assert (await http.get("/api/rooms/ACDEFG/qr.svg", params={"for": "tv"})).status_code == 404


async def test_the_tv_qr_code_encodes_the_big_screen_address_of_the_join_links_base(server: Harness) -> None:
    code, (ana,) = await server.lobby(["Ana"])
    link = room_of(ana)["link"]
    async with httpx.AsyncClient(base_url=server.http) as http:
        join = await http.get(f"/api/rooms/{code}/qr.svg")
        default = await http.get(f"/api/rooms/{code}/qr.svg", params={"for": "join"})
        tv = await http.get(f"/api/rooms/{code.lower()}/qr.svg", params={"for": "tv"})
        bad = [await http.get(f"/api/rooms/{code}/qr.svg", params={"for": v}) for v in ("TV", "", "r")]
    assert join.content == default.content == svg_of(link)
    assert tv.status_code == 200
    assert tv.headers["content-type"].startswith("image/svg+xml")
    assert tv.content == svg_of(f"{server.http}/tv/{code}") == svg_of(tv_link(link))
    assert tv.content != join.content
    app = server.app
    for response in (join, tv, *bad):
        assert_documented(app, "/api/rooms/{code}/qr.svg", response, code=code)
    for response in bad:
        assert response.status_code == 422
        [problem] = response.json()["detail"]
        assert (problem["loc"], problem["msg"]) == (["query", "for"], "Input should be 'join' or 'tv'")


def svg_of(text: str) -> bytes:
    """The SVG the QR route makes of ``text`` (segno, with the route's own settings)."""
    out = io.BytesIO()
    segno.make(text, error="m").save(out, kind="svg", scale=6, dark="#111", light="#fff", border=2, xmldecl=False)
    return out.getvalue()


def test_the_tv_link_is_the_join_link_with_tv_in_place_of_r() -> None:
    assert tv_link("https://crisp.example.org/r/K7QMXT") == "https://crisp.example.org/tv/K7QMXT"
    assert tv_link("https://example.org/games/crisp/r/K7QMXT") == "https://example.org/games/crisp/tv/K7QMXT"
    assert tv_link("http://127.0.0.1:8000/r/K7QMXT") == "http://127.0.0.1:8000/tv/K7QMXT"
    for bad in ("https://crisp.example.org/g/K7QMXT", "https://crisp.example.org/r/", "https://x/r/K7/extra"):
        with pytest.raises(ValueError, match="not a room's join link"):
            tv_link(bad)


async def test_join_page_and_health(server: Harness) -> None:
    code, _ = await server.lobby(["Ana"])
    async with httpx.AsyncClient(base_url=server.http) as http:
        page = await http.get(f"/r/{code}")
        assert page.status_code == 200
        assert page.headers["content-type"].startswith("text/html")
        assert "<html" in page.text.lower()
        # The big screen's page is the same client (it reads the room from its path, /tv/CODE).
        tv = await http.get(f"/tv/{code}")
        assert tv.status_code == 200
        assert tv.headers["content-type"].startswith("text/html")
        assert tv.text == page.text
        health = await http.get("/healthz")
        assert health.status_code == 200
        assert health.json()["status"] == "ok"
        assert health.json()["rooms"] == 1
