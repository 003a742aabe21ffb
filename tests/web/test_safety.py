"""What a hostile or broken client can send, over real sockets: malformed and oversized frames, floods,
foreign origins, guessed room codes and forged fields. Each is refused, and the room plays on."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path
from typing import Any, Final

import httpx
import orjson
import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from crisp_server.remote.client import CrispClient, ProtocolError
from crisp_server.settings import Settings
from crisp_server.texts import CATALOGS, ENGLISH, LANGUAGES
from crisp_server.web.bridge import Bridge
from crisp_server.wire import protocol as p
from tests.web.harness import Harness, running_server


async def close_code(client: CrispClient) -> int | None:
    """The code the server closed the socket with (read from the socket itself)."""
    await asyncio.wait_for(client.ws.wait_closed(), 5)
    return client.ws.close_code


async def answer_to_raw(client: CrispClient, frame: str) -> dict[str, Any]:
    """Send one frame as it is and return the next error, update, snapshot, pong or welcome."""
    start = len(client.messages)
    await client.ws.send(frame)
    answers = ("error", "update", "snapshot", "pong", "welcome")
    await client.wait_for(lambda c: any(m["type"] in answers for m in c.messages[start:]), what="an answer")
    return next(m for m in client.messages[start:] if m["type"] in answers)


async def refused(client: CrispClient, message: dict[str, Any]) -> str:
    """Send ``message`` and return the code of the error it is answered with (an update that was already on
    its way is not the answer; a message wrongly accepted fails the test by timing out)."""
    start = len(client.messages)
    await client.send(message)
    await client.wait_for(
        lambda c: any(m["type"] == "error" for m in c.messages[start:]), what=f"the refusal of {message}"
    )
    return str(next(m for m in client.messages[start:] if m["type"] == "error")["code"])


def kinds(client: CrispClient) -> list[str]:
    return [str(m.get("type")) for m in client.messages]


def is_open(client: CrispClient) -> bool:
    return client.closed is None and client.ws.close_code is None


BAD_FRAMES: list[str] = [
    "not json",
    "{",
    "",
    '{"type": "ping"',
    "[1, 2]",
    '[{"type": "ping"}]',
    '"ping"',
    "null",
    "42",
    "{}",
    '{"type": "nope"}',
    '{"type": 5}',
    '{"type": null}',
    '{"Type": "ping"}',
    '{"type": "swap"}',  # missing slot
    '{"type": "swap", "slot": "top"}',
    '{"type": "swap", "slot": 0}',
    '{"type": "draw", "from": "hand"}',
    '{"type": "kick", "seat": "1"}',
    '{"type": "kick", "seat": true}',
    '{"type": "kick", "seat": 1.5}',
    '{"type": "kick"}',
    '{"type": "queen", "slot": "left", "target": "1", "target_slot": "left"}',
    '{"type": "queen", "slot": "left", "target": false, "target_slot": "left"}',
    '{"type": "options", "score_limit": 100, "turn_seconds": null, "discard_draw": 1}',
    '{"type": "options", "score_limit": true, "turn_seconds": null, "discard_draw": false}',
    '{"type": "react", "emoji": ["👍"]}',
    '{"type": "join", "room": 123456, "name": "Eve"}',
    '{"type": "create", "name": {"first": "Eve"}}',
    '{"type": "create", "name": "Eve", "lang": "pt"}',  # a language the server does not have
    '{"type": "resume", "room": "ACDEFG"}',
    '{"type": "ping", "n": NaN}',
    '{"type": "ping", "n": 1e999999}',
    "[" * 2000 + "]" * 2000,  # deeper than any parser should follow
]


# These tests send more frames than the message rate allows; a wide limit keeps them about the frames' shape.
WIDE_RATE: Final[dict[str, Any]] = {"rate_burst": 1000}


async def test_bad_frames_are_refused_and_the_game_goes_on() -> None:
    async with running_server(**WIDE_RATE) as server:
        _, (ana, ben) = await server.table(["Ana", "Ben"])
        mover, other = (ana, ben) if ana.my_turn() else (ben, ana)
        for frame in BAD_FRAMES:
            for sender in (mover, other):
                answer = await answer_to_raw(sender, frame)
                assert answer["type"] == "error", frame
                assert answer["code"] == "bad_message", frame
                assert answer["v"] == sender.v, frame
                assert isinstance(answer["message"], str)
                assert answer["message"]
                assert is_open(sender), frame
            # The room goes on, unharmed: a valid message right after is answered as usual.
            assert (await mover.request({"type": "ping"}))["type"] == "pong"
        # Nothing was published by all that.
        v = mover.v
        assert other.v == v
        drawn = await mover.draw()
        assert drawn["v"] == v + 1
        assert isinstance(drawn["you"]["drawn_card"], str)
        await other.wait_for(lambda c: c.v == v + 1, what="the draw")
        assert other.gaps == mover.gaps == 0


async def test_bad_frames_before_joining() -> None:
    async with running_server(**WIDE_RATE) as server:
        c = await server.client()
        for frame in BAD_FRAMES:
            answer = await answer_to_raw(c, frame)
            assert answer["code"] == "bad_message", frame
            assert answer["v"] == 0
        assert is_open(c)
        assert len(await c.create("Ana")) == 6


async def test_bad_message_detail_names_the_field_and_does_not_echo_it(server: Harness) -> None:
    c = await server.client()
    secret = "s3cr3t-value-that-must-not-come-back"
    answer = await answer_to_raw(c, orjson.dumps({"type": "kick", "seat": secret}).decode())
    assert answer["code"] == "bad_message"
    assert "seat" in answer["detail"]
    assert secret not in orjson.dumps(answer).decode()


async def test_bad_message_details_say_what_docs_protocol_md_says(server: Harness) -> None:
    c = await server.client()
    for frame, detail in (
        ("{", "not valid JSON"),
        ("[1]", "a message is a JSON object with a 'type'"),
        ('{"x": 1}', "a message is a JSON object with a 'type'"),
        ('{"type": 3}', "a message is a JSON object with a 'type'"),
        ('{"type": "swap", "slot": "top"}', "swap.slot: Input should be 'left', 'middle' or 'right'"),
    ):
        answer = await answer_to_raw(c, frame)
        assert (answer["code"], answer["detail"]) == ("bad_message", detail), frame


#: The same refusal as a player of each language reads it.
NOT_HOST: Final = {
    "en": "Only the host can do that.",
    "de": "Das darf nur der Gastgeber.",
    "fr": "Seul l'hôte peut faire ça.",
    "es": "Solo el anfitrión puede hacer eso.",
    "it": "Solo l'host può farlo.",
    "nl": "Alleen de host kan dat doen.",
}


@pytest.mark.parametrize("lang", LANGUAGES)
async def test_errors_come_in_the_language_each_player_joined_with(server: Harness, lang: str) -> None:
    catalog = CATALOGS[lang]
    stranger = await server.client()
    with pytest.raises(ProtocolError) as info:
        await stranger.join("ACDEFG", "Eve", lang=lang)
    assert info.value.code == "room_not_found"
    assert info.value.message["message"] == catalog.error("room_not_found")
    # Ana plays in English, Ben in his language: each reads the room's and the rules' refusals in their own.
    ana, ben = await server.client(), await server.client()
    code = await ana.create("Ana")
    await ben.join(code, "Ben", lang=lang)
    await ben.wait_for(lambda c: c.state is not None and len(c.state["room"]["seats"]) == 2, what="both seated")
    with pytest.raises(ProtocolError) as info:
        await ben.request({"type": "start"})
    assert (info.value.code, info.value.message["message"]) == ("not_host", NOT_HOST[lang])
    await ana.start()
    for c in (ana, ben):
        await c.wait_for(lambda c: c.phase == "peek", what="peek")
        await c.ready()
    for c in (ana, ben):
        await c.wait_for(lambda c: c.phase == "play", what="play")
    # Each tries a move the rules refuse: the one who is not to move draws, the mover swaps before drawing.
    for c, texts in ((ana, ENGLISH), (ben, catalog)):
        mover = c.my_turn()
        rule = "nothing_drawn" if mover else "not_your_turn"
        move = {"type": "swap", "slot": "left"} if mover else {"type": "draw", "from": "deck"}
        start = len(c.messages)
        assert await refused(c, move) == rule
        error = next(m for m in c.messages[start:] if m["type"] == "error")
        assert error["message"] == texts.rule(rule)
        if c is ben and lang != "en":
            assert error["message"] != ENGLISH.rule(rule)


async def test_before_its_entry_a_connection_speaks_the_browsers_language(server: Harness) -> None:
    """The handshake's Accept-Language chooses the texts until an entry message names its ``lang``."""
    for header, text in (
        ("nl-BE,nl;q=0.9,en;q=0.5", "De server begreep dat bericht niet."),
        ("pt-BR,pt;q=0.9", "The server did not understand that message."),  # none the server has
    ):
        async with connect(server.url, additional_headers={"Accept-Language": header}) as ws:
            await ws.send('{"type": "nonsense"}')
            answer = orjson.loads(await asyncio.wait_for(ws.recv(), 5))
            assert (answer["code"], answer["message"]) == ("bad_message", text)
            await ws.send('{"type": "join", "room": "ACDEFG", "name": "Eve", "lang": "es"}')
            answer = orjson.loads(await asyncio.wait_for(ws.recv(), 5))
            assert (answer["code"], answer["message"]) == ("room_not_found", "No hay ninguna sala con ese código.")


async def test_a_member_who_picks_another_language_gets_the_texts_in_it(server: Harness) -> None:
    stranger = await server.client()
    assert await refused(stranger, {"type": "lang", "lang": "fr"}) == "not_in_room"  # the entry says it
    _, (ana, ben) = await server.lobby(["Ana", "Ben"])
    await ben.send({"type": "lang", "lang": "it"})  # nothing is answered: the next refusal says it
    with pytest.raises(ProtocolError) as info:
        await ben.request({"type": "start"})
    assert info.value.message["message"] == "Solo l'host può farlo."
    # A language the server does not have is refused, and the language stays.
    answer = await answer_to_raw(ben, '{"type": "lang", "lang": "pt"}')
    assert (answer["code"], answer["message"]) == ("bad_message", "Il server non ha capito questo messaggio.")
    # Nobody else's changes: Ana still reads English.
    with pytest.raises(ProtocolError) as info:
        await ana.request({"type": "kick", "seat": 5})
    assert info.value.message["message"] == "There is no such seat."


# -- size ----------------------------------------------------------------------------------------------


def ping_of_size(size: int, char: str = "x") -> str:
    """A valid ping frame of exactly ``size`` bytes (an ignored field pads it)."""
    head = '{"type": "ping", "pad": "'
    tail = '"}'
    room = size - len(head.encode()) - len(tail.encode())
    per = len(char.encode())
    assert room % per == 0
    frame = head + char * (room // per) + tail
    assert len(frame.encode()) == size
    return frame


async def test_frame_size_limit(server: Harness) -> None:
    _, (ana, ben) = await server.lobby(["Ana", "Ben"])
    assert (await answer_to_raw(ana, ping_of_size(4096)))["type"] == "pong"
    for frame in (ping_of_size(4097), ping_of_size(4099, "é"), ping_of_size(60_000)):
        answer = await answer_to_raw(ana, frame)
        assert answer["type"] == "error"
        assert answer["code"] == "too_large"
        assert answer["v"] == ana.v
        assert is_open(ana)
    # Bytes count, not characters: this frame has about 2060 characters, 4099 bytes.
    assert (await answer_to_raw(ana, ping_of_size(4099, "é")))["code"] == "too_large"
    too_big_reaction = orjson.dumps({"type": "react", "emoji": "👍" * 1100}).decode()  # 4 bytes each
    assert (await answer_to_raw(ana, too_big_reaction))["code"] == "too_large"
    # Still in the room, still heard.
    await ana.react("👍")
    await ben.wait_for(lambda c: c.v == ana.v, what="the reaction")


# -- rate --------------------------------------------------------------------------------------------


async def test_a_flood_is_cut_off_and_the_room_goes_on(server: Harness) -> None:
    burst = Settings().rate_burst
    _, (ana, ben, cara) = await server.table(["Ana", "Ben", "Cara"])
    for _ in range(10 * burst):
        with contextlib.suppress(ConnectionClosed):  # the server may hang up before the last one
            await ben.send({"type": "ping"})
    assert await close_code(ben) == 1008
    errors = [m for m in ben.messages if m["type"] == "error"]
    pongs = [m for m in ben.messages if m["type"] == "pong"]
    # A burst gets through, the excess is refused for a while, then the socket is closed. (The answers to
    # the burst may be lost: the room answers after the web layer has already decided to hang up.)
    assert {e["code"] for e in errors} == {"rate_limited"}
    assert len(errors) == burst
    assert len(pongs) <= burst

    # The others play on: Ben's seat is kept, shown as away.
    await ana.wait_for(lambda c: c.state is not None and not c.state["room"]["seats"][1]["connected"], what="Ben away")
    for c in (ana, cara):
        snapshot = await c.sync()
        assert snapshot["room"]["seats"][1]["connected"] is False
        assert c.errors == []
        assert c.gaps == 0
    await ana.react("👍")
    await cara.wait_for(lambda c: c.v == ana.v, what="the reaction")


async def test_a_burst_within_the_limit_is_served(server: Harness) -> None:
    burst = Settings().rate_burst
    _, (ana,) = await server.lobby(["Ana"])
    for _ in range(burst - 1):  # the create took one
        await ana.send({"type": "ping"})
    await ana.wait_for(lambda c: sum(m["type"] == "pong" for m in c.messages) == burst - 1, what="all pongs")
    assert ana.errors == []
    assert is_open(ana)


async def test_rate_limit_refills_and_a_short_excess_does_not_close() -> None:
    # The message limit runs on real time (it guards the server, not the game): a token every 50 ms here.
    async with running_server(rate_burst=5, rate_per_second=20) as server:
        _, (ana, ben) = await server.lobby(["Ana", "Ben"])
        await asyncio.sleep(0.06)  # give back the token the create took
        for _ in range(8):
            await ana.send({"type": "ping"})
        await ana.wait_for(lambda c: len(c.errors) + kinds(c).count("pong") == 8, what="eight answers")
        # Three refused, unless the server took more than 50 ms over the eight and a token came back.
        assert 2 <= len(ana.errors) <= 3
        assert {e["code"] for e in ana.errors} == {"rate_limited"}
        assert all(e["v"] == ana.v for e in ana.errors)
        assert is_open(ana)
        await asyncio.sleep(0.11)  # two tokens: a ping and a reaction
        assert (await ana.request({"type": "ping"}))["type"] == "pong"
        await ana.react("👍")
        await ben.wait_for(lambda c: c.v == ana.v, what="the reaction")


# -- origin --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "origin",
    [
        "https://evil.example",
        "null",
        "http://127.0.0.1:1",  # the right host, another port: another origin
        "https://127.0.0.1:{port}",  # another scheme
        "http://127.0.0.1:{port}.evil.example",
        "http://evil.example/http://127.0.0.1:{port}",
    ],
)
async def test_foreign_origin_is_refused(server: Harness, origin: str) -> None:
    with pytest.raises(InvalidStatus) as info:
        async with CrispClient.connect(server.url, origin=origin.format(port=server.port)):
            pass
    assert info.value.response.status_code == 403


async def test_own_origin_and_no_origin_are_accepted(server: Harness) -> None:
    own = await server.client(origin=f"http://127.0.0.1:{server.port}")
    code = await own.create("Ana")
    tool = await server.client()  # no Origin: not a browser
    await tool.join(code, "Bot")
    shouty = await server.client(origin=f"HTTP://127.0.0.1:{server.port}")
    await shouty.join(code, "Cara")


async def test_allowed_origins() -> None:
    # As the settings may hold them: any case, with a trailing slash.
    async with running_server(allowed_origins=["https://friends.example", "https://Crisp.Example.org:8443/"]) as server:
        for origin in (
            "https://friends.example",
            "https://FRIENDS.example",
            "https://crisp.example.org:8443",
            f"http://127.0.0.1:{server.port}",
        ):
            c = await server.client(origin=origin)
            assert len(await c.create("Ana")) == 6, origin
        for origin in (
            "http://friends.example",
            "https://friends.example.evil.example",
            "https://evil.friends.example",
            "https://crisp.example.org",
            "https://friends.example:444",
        ):
            with pytest.raises(InvalidStatus) as info:
                async with CrispClient.connect(server.url, origin=origin):
                    pass
            assert info.value.response.status_code == 403, origin


async def test_public_url_is_the_own_origin() -> None:
    async with running_server(public_url="https://crisp.example.org/") as server:
        c = await server.client(origin="https://crisp.example.org")
        code = await c.create("Ana")
        assert c.welcome is not None
        assert c.welcome["link"] == f"https://crisp.example.org/r/{code}"
        with pytest.raises(InvalidStatus):
            async with CrispClient.connect(server.url, origin="https://evil.example"):
                pass


def test_allowed_origins_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CRISP_ALLOWED_ORIGINS", "https://a.example, https://b.example/")
    assert Settings().allowed_origins == ["https://a.example", "https://b.example"]


# -- room-code look-ups --------------------------------------------------------------------------------


async def test_room_code_lookups_are_limited_per_address() -> None:
    async with running_server(lookup_burst=3, lookup_per_minute=0.01) as server:
        guesser = await server.client()
        for guess in ("ACDEFG", "ACDEFH", "nope"):
            with pytest.raises(ProtocolError) as info:
                await guesser.join(guess, "Eve")
            assert info.value.code == "room_not_found"
        for entry in (
            {"type": "join", "room": "ACDEFJ", "name": "Eve"},
            {"type": "watch", "room": "ACDEFJ"},
            {"type": "resume", "room": "ACDEFJ", "token": "x"},
            {"type": "create", "name": "Eve"},
        ):
            assert await refused(guesser, entry) == "rate_limited", entry
            assert is_open(guesser)
        # Per address, not per connection: a new socket from the same address is limited too, and so is HTTP.
        again = await server.client()
        with pytest.raises(ProtocolError) as info:
            await again.join("ACDEFK", "Eve")
        assert info.value.code == "rate_limited"
        async with httpx.AsyncClient(base_url=server.http) as http:
            assert (await http.get("/api/rooms/ACDEFK")).status_code == 429
            assert (await http.get("/api/rooms/ACDEFK/qr.svg")).status_code == 429
            # The health check and the page are not look-ups.
            assert (await http.get("/healthz")).status_code == 200
            assert (await http.get("/r/ACDEFK")).status_code == 200
            assert (await http.get("/tv/ACDEFK")).status_code == 200

        # Another address has its own allowance (the whole of 127/8 is loopback).
        other = await server.stack.enter_async_context(CrispClient.connect(server.url, local_addr=("127.0.0.2", 0)))
        code = await other.create("Olga")
        transport = httpx.AsyncHTTPTransport(local_address="127.0.0.3")
        async with httpx.AsyncClient(base_url=server.http, transport=transport) as http:
            assert (await http.get(f"/api/rooms/{code}")).status_code == 200


async def test_friends_behind_one_address_all_get_in_and_only_misses_count() -> None:
    """Eight phones on one home Wi-Fi (one address) open the link, look the room up, join, watch: a look-up
    that finds its room costs nothing. Codes that find no room use the allowance up, and then every look-up
    from that address is refused, found or not."""
    async with running_server(lookup_burst=3, lookup_per_minute=0.01) as server:
        host = await server.client()
        code = await host.create("Host")  # a room created counts: 2 left
        async with httpx.AsyncClient(base_url=server.http) as http:
            for i in range(7):
                for route in ("", "/qr.svg", "/games", "/standings"):
                    assert (await http.get(f"/api/rooms/{code}{route}")).status_code == 200, route
                friend = await server.client()
                await friend.join(code, f"Friend {i + 1}")
            viewer = await server.client()
            await viewer.watch(code)
            assert (await http.get("/api/rooms/ACDEFG")).status_code == 404  # 1 left
            with pytest.raises(ProtocolError) as info:
                await viewer.join("ACDEFH", "Eve")  # refused before any look-up: not counted
            assert info.value.code == "already_in_room"
            guesser = await server.client()
            with pytest.raises(ProtocolError) as info:
                await guesser.join("ACDEFH", "Eve")  # 0 left
            assert info.value.code == "room_not_found"
            assert (await http.get("/api/rooms/ACDEFJ")).status_code == 429
            assert (await http.get(f"/api/rooms/{code}")).status_code == 429, "used up: found or not"
            with pytest.raises(ProtocolError) as info:
                await guesser.watch(code)
            assert info.value.code == "rate_limited"


async def test_an_old_links_page_counts_once_its_closed_rooms_games_are_found(tmp_path: Path) -> None:
    """The page of an old link looks the room up (it closed: a look-up in vain, counted), then reads the closed
    room's games and standings: those find what they ask for and count for nothing, as an open room's do. So
    the page costs one look-up each time it is opened, not three; a code no room had still counts."""
    async with running_server(persist=True, data_dir=tmp_path, lookup_burst=3, lookup_per_minute=0.01) as server:
        host = await server.client()
        code = await host.create("Host")  # a room created counts: 2 left
        await host.request({"type": "leave"})  # its only player left: the room closed
        async with httpx.AsyncClient(base_url=server.http) as http:
            closed = await http.get(f"/api/rooms/{code}")  # 1 left
            assert (closed.status_code, closed.json()["existed"]) == (404, True)
            for _ in range(4):
                assert (await http.get(f"/api/rooms/{code}/games")).json() == []
                standings = await http.get(f"/api/rooms/{code}/standings")
                assert standings.json() == {"games": 0, "abandoned": 0, "players": []}
            assert (await http.get(f"/api/rooms/{code}")).status_code == 404  # 0 left
            assert (await http.get(f"/api/rooms/{code}/games")).status_code == 429, "used up: found or not"
            assert (await http.get(f"/api/rooms/{code}/standings")).status_code == 429


async def test_the_games_of_a_code_no_room_had_count_as_a_look_up() -> None:
    async with (
        running_server(lookup_burst=2, lookup_per_minute=0.01) as server,
        httpx.AsyncClient(base_url=server.http) as http,
    ):
        statuses = [
            (await http.get(f"/api/rooms/ACDEFG/{route}")).status_code for route in ("games", "standings", "games")
        ]
        assert statuses == [404, 404, 429]


async def test_http_room_lookups_are_limited() -> None:
    async with running_server(lookup_burst=3, lookup_per_minute=0.01) as server:
        async with httpx.AsyncClient(base_url=server.http) as http:
            statuses = [(await http.get("/api/rooms/XXXXXX")).status_code for _ in range(6)]
            assert statuses == [404, 404, 404, 429, 429, 429]
            assert "detail" in (await http.get("/api/rooms/XXXXXX")).json()
        c = await server.client()
        with pytest.raises(ProtocolError) as info:
            await c.create("Ana")
        assert info.value.code == "rate_limited"


async def test_default_lookup_limit_allows_a_full_table(server: Harness) -> None:
    code, clients = await server.lobby([f"P{i}" for i in range(8)])
    viewer = await server.client()
    await viewer.watch(code)
    async with httpx.AsyncClient(base_url=server.http) as http:
        assert (await http.get(f"/api/rooms/{code}")).status_code == 200
    assert all(c.errors == [] for c in clients)


# -- forged fields -------------------------------------------------------------------------------------


async def test_nothing_a_client_claims_is_trusted(server: Harness) -> None:
    _, (ana, ben) = await server.table(["Ana", "Ben"])
    mover, other = (ana, ben) if ana.my_turn() else (ben, ana)
    assert mover.seat is not None
    # Claiming the mover's seat, the turn or a version changes nothing: the server knows who is asking.
    forged = {"type": "draw", "from": "deck", "seat": mover.seat, "turn": other.seat, "v": 999, "host": True}
    assert await refused(other, forged) == "not_your_turn"
    assert ben.you["host"] is False
    for message in (
        {"type": "start", "host": True, "seat": 0},
        {"type": "options", "score_limit": 50, "turn_seconds": None, "discard_draw": True, "host": True},
        {"type": "kick", "seat": 0, "host": True},
    ):
        assert await refused(ben, message) == "not_host", message
    # The mover's own forged message acts for the mover's seat, whatever it claims.
    answer = await mover.request({"type": "draw", "from": "deck", "seat": other.seat})
    assert answer["table"]["round"]["turn"] == mover.seat
    assert isinstance(answer["you"]["drawn_card"], str)


async def test_two_entries_at_once(server: Harness) -> None:
    """A second entry sent before the first is answered: the connection stays with the room that seated it."""
    ana = await server.client()
    # Back to back, before the server can answer the first.
    await ana.send({"type": "create", "name": "Ana"})
    await ana.send({"type": "create", "name": "Ana"})
    await ana.wait_for(lambda c: len(c.errors) == 1 and c.welcome is not None, what="both answers")
    assert ana.errors[0]["code"] == "already_in_room"
    assert ana.room is not None
    # Later messages reach the room that seated Ana.
    snapshot = await ana.sync()
    assert snapshot["room"]["code"] == ana.room
    assert snapshot["you"]["seat"] == 0
    ben = await server.client()
    await ben.join(ana.room, "Ben")
    await ana.set_options(50)
    # And when Ana's socket closes, that room learns of it.
    await ana.close()
    await ben.wait_for(lambda c: c.state is not None and not c.state["room"]["seats"][0]["connected"], what="Ana away")


async def test_a_refused_create_leaves_no_room_behind(server: Harness) -> None:
    ana = await server.client()
    await ana.send({"type": "create", "name": "Ana"})
    await ana.send({"type": "create", "name": "Ana"})
    await ana.wait_for(lambda c: len(c.errors) == 1 and c.welcome is not None, what="both answers")
    assert ana.errors[0]["code"] == "already_in_room"
    async with httpx.AsyncClient(base_url=server.http) as http:
        assert (await http.get("/healthz")).json()["rooms"] == 1


async def test_a_bug_met_handling_a_message_closes_only_its_connection(
    server: Harness, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A message is handled in the protocol's callback that read it: a bug there must not reach the event
    loop (which would drop the socket without a word) nor any other player. Its connection is closed with
    1011, as uvicorn closes for a failing app, and the error is logged."""
    _, (ana, ben) = await server.lobby(["Ana", "Ben"])
    real = Bridge.dispatch

    def buggy(self: Bridge, conn: Any, websocket: Any, message: Any, v: int) -> None:
        if isinstance(message, p.Ping) and conn.room is not None and conn.room.members[conn].name == "Ana":
            raise RuntimeError("a bug")
        real(self, conn, websocket, message, v)

    monkeypatch.setattr(Bridge, "dispatch", buggy)
    await ana.send({"type": "ping"})
    await ana.wait_for(lambda c: c.closed is not None, what="Ana's close")
    assert ana.close_code == 1011
    assert "a message could not be handled" in caplog.text
    assert (await ben.request({"type": "ping"}))["type"] == "pong"
    await ben.wait_for(lambda c: c.state is not None and not c.state["room"]["seats"][0]["connected"], what="Ana away")
