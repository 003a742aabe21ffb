"""Computer players over real WebSockets: the lobby's add, remove and level; practice rooms played to the end
with hints; what a computer player is sent (its seat's view, nothing more); stand-ins that take over and
hand back; no game played on by computer players alone; rematch.

Computer players act at once here (``CRISP_BOT_PAUSE=0``) on the server's manual clock: :func:`run` moves
it to each next timer (a computer player's move waits for its draw to be allowed, as anyone's does).
"""

from __future__ import annotations

import dataclasses
import random
import re
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from string import Formatter
from typing import Any

import httpx
import orjson
import pytest

from crisp_server.bots import Bot
from crisp_server.engine import DRAW_BLOCK_MS
from crisp_server.remote.client import CrispClient, ProtocolError
from crisp_server.rooms.botseat import BOT_NAMES, BotDriver
from crisp_server.texts import CATALOGS, ENGLISH, Texts
from tests.web.bots import rig, settle
from tests.web.harness import Harness, running_server
from tests.web.test_wire_leaks import Spy, check_stream

Message = dict[str, Any]


@pytest.fixture
async def server() -> AsyncIterator[Harness]:
    # Many barriers (a ping each) in quick succession: the message rate limit is not what is tested here.
    async with running_server(bot_pause=0, rate_burst=100_000) as harness:
        yield harness


def seats(client: CrispClient) -> list[Message]:
    assert client.state is not None
    room: list[Message] = client.state["room"]["seats"]
    return room


def room_events(client: CrispClient, kind: str) -> list[Message]:
    return [e for m in client.messages if m.get("type") == "update" for e in m["events"] if e["type"] == kind]


async def ask_hint(client: CrispClient) -> Message:
    start = len(client.messages)
    await client.send({"type": "hint"})
    await client.wait_for(lambda c: any(m.get("type") in ("hint", "error") for m in c.messages[start:]), what="hint")
    answer = next(m for m in client.messages[start:] if m.get("type") in ("hint", "error"))
    assert answer["type"] == "hint", answer
    return answer


async def error_of(client: CrispClient, message: Message) -> str:
    with pytest.raises(ProtocolError) as info:
        await client.request(message)
    return info.value.code


class Person:
    """A person at the table, played by a ``Bot`` that reads this client's messages (as a person reads the
    screen); ``None`` when nothing is to be done."""

    def __init__(self, client: CrispClient, level: str = "normal", seed: int = 1) -> None:
        self.client = client
        self.bot = Bot(level, random.Random(seed))
        self._read = 0

    def decide(self) -> Message | None:
        for m in self.client.messages[self._read :]:
            if m.get("type") in ("update", "snapshot"):
                self.bot.observe(m)
        self._read = len(self.client.messages)
        due, r = self.bot.due(), self.bot.memory.round
        if due is not None and due.kind != "ready" and r is not None and due.at > r["now"]:
            return None  # not yet: the draw is still blocked
        return self.bot.decide()


async def run(
    server: Harness,
    clients: list[CrispClient],
    act: Callable[[], Any],
    until: Callable[[], bool],
    limit: int = 20_000,
) -> int:
    """Settle, let ``act`` do what the people do, and move the clock to the next timer when nobody has anything
    to do, until ``until()``; how many steps it took."""
    for step in range(limit):
        await settle(server, clients)
        if until():
            return step
        if await act():
            continue
        pending = [t for t in server.clock.pending() if t > server.clock.now()]
        assert pending, "nothing to do and nothing scheduled: the game is stuck"
        await server.advance(pending[0] - server.clock.now())
    raise AssertionError("the game did not get there")


def phase_is(client: CrispClient, *phases: str) -> Callable[[], bool]:
    return lambda: client.phase in phases


# -- the lobby -------------------------------------------------------------------------------------------


async def test_the_host_adds_removes_and_levels_computer_players(server: Harness) -> None:
    ana, ben = await server.client(), await server.client()
    code = await ana.create("Ana")
    await ben.join(code, "Ada")  # the first computer player's name is taken: the next one is used
    answer = await ana.request({"type": "add_bot", "level": "hard"})
    assert answer["events"] == [{"type": "bot_added", "seat": 2, "name": "Alan", "level": "hard"}]
    await ana.request({"type": "add_bot", "level": "easy"})
    await settle(server, [ana, ben])
    assert [(s["name"], s["bot"], s["connected"], s["stand_in"]) for s in seats(ben)] == [
        ("Ana", None, True, False),
        ("Ada", None, True, False),
        ("Alan", "hard", True, False),
        ("Grace", "easy", True, False),
    ]
    await ana.request({"type": "bot_level", "seat": 3, "level": "normal"})
    assert seats(ana)[3]["bot"] == "normal"
    assert room_events(ana, "bot_level") == [{"type": "bot_level", "seat": 3, "level": "normal"}]
    await ana.request({"type": "remove_bot", "seat": 2})
    await settle(server, [ana, ben])
    assert [s["name"] for s in seats(ben)] == ["Ana", "Ada", "Grace"]
    assert room_events(ben, "bot_removed") == [{"type": "bot_removed", "seat": 2}]

    # Refusals: someone else, a person's seat, no such seat, an unknown level, a full room, a running game.
    assert await error_of(ben, {"type": "add_bot", "level": "hard"}) == "not_host"
    assert await error_of(ben, {"type": "remove_bot", "seat": 2}) == "not_host"
    assert await error_of(ana, {"type": "remove_bot", "seat": 1}) == "not_a_bot"
    assert await error_of(ana, {"type": "bot_level", "seat": 0, "level": "hard"}) == "not_a_bot"
    assert await error_of(ana, {"type": "remove_bot", "seat": 7}) == "no_such_seat"
    assert await error_of(ana, {"type": "add_bot", "level": "genius"}) == "bad_message"
    assert await error_of(ana, {"type": "add_bot"}) == "bad_message"
    for _ in range(5):
        await ana.request({"type": "add_bot", "level": "easy"})
    assert len(seats(ana)) == 8
    names = [s["name"] for s in seats(ana)]
    assert len({n.casefold() for n in names}) == 8
    assert set(names) - {"Ana"} <= set(BOT_NAMES)
    assert await error_of(ana, {"type": "add_bot", "level": "easy"}) == "room_full"
    await ana.request({"type": "kick", "seat": 7})  # a computer player can be kicked too
    assert len(seats(ana)) == 7
    await ana.start()
    assert await error_of(ana, {"type": "add_bot", "level": "easy"}) == "game_running"
    assert await error_of(ana, {"type": "remove_bot", "seat": 2}) == "game_running"


async def test_a_lobby_left_to_computer_players_closes(server: Harness) -> None:
    ana, ben, watcher = await server.client(), await server.client(), await server.client()
    code = await ana.create("Ana")
    await ana.request({"type": "add_bot", "level": "hard"})
    await ben.join(code, "Ben")
    await ana.request({"type": "leave"})
    await settle(server, [ben])
    assert ben.you["host"], "the host passes to a person, not to the computer player before them"
    await ben.request({"type": "leave"})
    assert server.app.state.services.registry.get(code) is None
    with pytest.raises(ProtocolError) as info:
        await watcher.watch(code)
    assert info.value.code == "room_not_found"


# -- practice --------------------------------------------------------------------------------------------


@pytest.mark.interpreted  # it replaces BotDriver.send, a method of a compiled class
async def test_a_practice_game_with_hints_to_the_end_and_a_rematch(
    server: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    spy = Spy()
    spy.install(monkeypatch)
    sent: dict[int, list[Message]] = {}  # what each computer player was sent, by the seat it was told
    send = BotDriver.send

    def recording(driver: BotDriver, data: bytes) -> None:
        message = orjson.loads(data)
        seat = driver.bot.memory.me if message.get("type") != "update" else message["you"]["seat"]
        sent.setdefault(seat if seat is not None else -1, []).append(message)
        send(driver, data)

    monkeypatch.setattr(BotDriver, "send", recording)

    ana = await server.client()
    code = await ana.create("Ana", bots=3, level="hard")
    await ana.wait_for(lambda c: c.phase == "peek", what="the first deal")
    assert [(s["name"], s["bot"]) for s in seats(ana)] == [
        ("Ana", None),
        ("Ada", "hard"),
        ("Alan", "hard"),
        ("Grace", "hard"),
    ]
    assert ana.you["host"]
    assert ana.you["hints"]
    assert await error_of(ana, {"type": "hint"}) == "wrong_phase"  # in the peek
    hints: list[Message] = []
    hinted_rounds: set[int] = set()
    refused: list[str] = []

    async def act() -> bool:
        you, r = ana.you, (ana.table or {}).get("round")
        if ana.phase in ("peek", "round_over") and not seats(ana)[0]["ready"]:
            await ana.request({"type": "ready"})
            return True
        if ana.phase != "play" or r is None:
            return False
        mine = r["turn"] == 0 or ((r["window"] or {}).get("seat") == 0 and "crisp" in you["can"])
        if not mine:
            if r["turn"] != 0 and not hints:
                assert await error_of(ana, {"type": "hint"}) == "nothing_to_hint"
            return False
        if r["turn"] == 0 and r["drawn"] is None and r["may_draw_at"] > r["now"]:
            return False  # the previous player's crisp window still blocks the draw
        answer = await ask_hint(ana)
        hints.append(answer)
        hinted_rounds.add(r["index"])
        if answer["move"] is None:
            return False  # let the window pass
        start = len(ana.messages)
        await ana.send(answer["move"])
        await settle(server, [ana])
        refused.extend(m["code"] for m in ana.messages[start:] if m.get("type") == "error")
        return True

    await run(server, [ana], act, phase_is(ana, "game_over"))
    assert refused == [], "every hinted move is accepted"
    # Every player has a turn in every round (a Crisp call leaves the others their final turns): Ana was
    # hinted in each round played, however short the game (its length is the deck's).
    assert hinted_rounds == set(range(len((ana.table or {})["scores"]))), hinted_rounds
    assert all(h["text"] and h["text"].endswith(".") for h in hints)
    kinds = {h["move"]["type"] if h["move"] else None for h in hints}
    assert {"draw", "swap"} <= kinds
    table = ana.table
    assert table is not None
    assert table["game_over"]
    assert max(table["totals"]) >= 100

    # Each computer player was sent its own seat's view and nothing more.
    assert sorted(sent) == [1, 2, 3]
    for seat, messages in sent.items():
        assert all(m["you"]["seat"] == seat for m in messages if m.get("type") in ("update", "snapshot"))
        assert check_stream(messages, seat, code, spy) > 50

    # A rematch keeps the computer players and the practice.
    await ana.request({"type": "rematch"})
    await ana.wait_for(lambda c: c.phase == "peek", what="the rematch's deal")
    assert [s["bot"] for s in seats(ana)] == [None, "hard", "hard", "hard"]
    assert ana.you["hints"]


@pytest.mark.parametrize("lang", ["fr", "nl"])
async def test_a_hint_and_its_errors_come_in_the_players_language(server: Harness, lang: str) -> None:
    catalog = CATALOGS[lang]
    ana = await server.client()
    await ana.create("Ana", lang, bots=1, level="hard")
    await ana.wait_for(lambda c: c.phase == "peek", what="the first deal")
    with pytest.raises(ProtocolError) as info:
        await ana.request({"type": "hint"})
    assert (info.value.code, info.value.message["message"]) == ("wrong_phase", catalog.error("wrong_phase"))
    await ana.ready()

    def my_move() -> bool:
        r = (ana.table or {}).get("round")
        return ana.phase == "play" and r is not None and r["turn"] == 0 and r["may_draw_at"] <= r["now"]

    async def wait() -> bool:
        return False  # the computer player moves by itself: only the clock is moved

    await run(server, [ana], wait, my_move)
    answer = await ask_hint(ana)
    # The line is one of this language's, its {names} filled in, and none of English's.
    assert any(re.fullmatch(_pattern(line), answer["text"]) for line in _lines(catalog)), answer["text"]
    assert not any(re.fullmatch(_pattern(line), answer["text"]) for line in _lines(ENGLISH))


def _lines(catalog: Texts) -> list[str]:
    return [getattr(catalog.hints, f.name) for f in dataclasses.fields(catalog.hints)]


def _pattern(line: str) -> str:
    """A regular expression of the texts ``line`` gives with any values for its ``{names}``."""
    return "".join(re.escape(text) + (".+" if name is not None else "") for text, name, _, _ in Formatter().parse(line))


async def _practice_to_game_over(server: Harness, ana: CrispClient, watchers: list[CrispClient]) -> str:
    """A practice room (Ana and a computer player, to 50) played to its end, ``watchers`` watching; its code."""
    code = await ana.create("Ana")
    await ana.request({"type": "add_bot", "level": "normal"})
    await ana.set_options(score_limit=50)
    for watcher in watchers:
        await watcher.watch(code)
    await ana.start()
    person = Person(ana)

    async def act() -> bool:
        move = person.decide()
        if move is None:
            return False
        await ana.send(move)
        return True

    await run(server, [ana, *watchers], act, phase_is(ana, "game_over"))
    return code


async def test_a_practice_rematch_nobody_watches_deals_at_once(server: Harness) -> None:
    ana = await server.client()
    await _practice_to_game_over(server, ana, [])
    answer = await ana.request({"type": "rematch"})
    # Alone against the computer: no stop in the lobby, the answer is the new game's deal.
    assert answer["room"]["phase"] == "peek"
    assert answer["events"][-1]["type"] == "peek"
    assert room_events(ana, "lobby") == []
    assert answer["table"]["totals"] == [0, 0]
    assert ana.you["hints"]


async def test_a_practice_rematch_someone_watches_goes_to_the_lobby(server: Harness) -> None:
    ana, vic = await server.client(), await server.client()
    await _practice_to_game_over(server, ana, [vic])
    answer = await ana.request({"type": "rematch"})
    assert answer["room"]["phase"] == "lobby"
    assert answer["events"] == [{"type": "lobby"}]
    assert answer["table"] is None
    await settle(server, [ana, vic])
    assert vic.phase == "lobby"
    assert vic.table is None
    assert [(s["name"], s["bot"]) for s in seats(vic)] == [("Ana", None), ("Ada", "normal")]
    # The spectator sits down: no longer a practice game; the host starts it.
    await vic.sit("Vic")
    await ana.start()
    await settle(server, [ana, vic])
    assert vic.phase == "peek"
    assert vic.you["seat"] == 2
    assert not ana.you["hints"]


async def test_hints_only_in_practice(server: Harness) -> None:
    _, (ana, _ben) = await server.table(["Ana", "Ben"])
    assert not ana.you["hints"]
    assert await error_of(ana, {"type": "hint"}) == "no_hints"
    # One more seat that is a computer player's: there is still another person at the table.
    _, (cem, dan) = await server.lobby(["Cem", "Dan"])
    await cem.request({"type": "add_bot", "level": "easy"})
    await cem.start()
    await settle(server, [cem, dan])
    assert not cem.you["hints"]
    assert await error_of(dan, {"type": "hint"}) == "no_hints"
    # A spectator of a practice game: hints are for its player (docs/protocol.md: not_seated).
    eve = await server.client()
    practice = await eve.create("Eve", bots=1, level="easy")
    vic = await server.client()
    await vic.watch(practice)
    assert eve.you["hints"]
    for message in (
        {"type": "hint"},
        {"type": "add_bot", "level": "easy"},
        {"type": "bot_level", "seat": 1, "level": "hard"},
    ):
        assert await error_of(vic, message) == "not_seated"


async def test_a_practice_room_waits_while_its_player_is_away(server: Harness) -> None:
    ana = await server.client()
    code = await ana.create("Ana", bots=2, level="normal")
    await ana.request({"type": "ready"})
    await run(server, [ana], _nothing, lambda: ana.phase == "play")
    token = ana.token
    assert token is not None
    await ana.ws.close()
    rooms = server.app.state.services.registry
    room = rooms.get(code)
    assert room is not None
    await server.advance(0)
    for _ in range(50):
        await server.advance(2000)
    assert room.paused
    before = room.v
    for _ in range(50):
        await server.advance(5000)
    assert room.v == before, "nothing is played while no person is there"
    again = await server.client()
    await again.resume(code, token)
    person = Person(again)

    async def act() -> bool:
        move = person.decide()
        if move is None:
            return False
        await again.send(move)
        return True

    await run(server, [again], act, lambda: room.record is not None and len(room.record.rounds) >= 2)


async def _nothing() -> bool:
    return False


# -- stand-ins -------------------------------------------------------------------------------------------


async def test_a_stand_in_plays_for_an_absent_player_and_hands_the_seat_back(server: Harness) -> None:
    code, (ana, ben, cem) = await server.lobby(["Ana", "Ben", "Cem"])
    await ana.set_options(stand_in=30)
    assert ana.state is not None
    assert ana.state["room"]["options"]["stand_in"] == 30
    await ana.set_options(score_limit=150)  # without stand_in: it stays
    assert ana.state["room"]["options"]["stand_in"] == 30
    await ana.start()
    people = {0: Person(ana, seed=1), 2: Person(cem, seed=3)}
    ben_token = ben.token
    assert ben_token is not None
    await ben.ws.close()

    async def act() -> bool:
        for person in people.values():
            move = person.decide()
            if move is not None:
                await person.client.send(move)
                return True
        return False

    clients = [ana, cem]
    await run(server, clients, act, lambda: bool(room_events(ana, "stand_in")))
    assert room_events(ana, "stand_in") == [{"type": "stand_in", "seat": 1}]
    ben_seat = seats(ana)[1]
    assert (ben_seat["connected"], ben_seat["stand_in"], ben_seat["bot"]) == (False, True, None)
    # It came after 30 seconds away, and plays Ben's moves from then on: nobody's move times out.
    timed_out = len([e for e in _events(ana) if e["type"] == "timed_out"])
    moves_before = len([e for e in _events(ana) if e["type"] in ("swapped", "discarded") and e["seat"] == 1])

    def bens_moves() -> int:
        return len([e for e in _events(ana) if e["type"] in ("swapped", "discarded") and e["seat"] == 1])

    await run(server, clients, act, lambda: bens_moves() >= moves_before + 2)
    assert len([e for e in _events(ana) if e["type"] == "timed_out"]) == timed_out

    # Ben comes back: the seat is his again.
    ben = await server.client()
    await ben.resume(code, ben_token)
    await settle(server, [ana, ben, cem])
    assert (seats(ana)[1]["connected"], seats(ana)[1]["stand_in"]) == (True, False)
    people[1] = Person(ben, seed=2)
    await run(server, [ana, ben, cem], act, lambda: len([e for e in _events(ana) if e["type"] == "round_ended"]) >= 2)
    assert len(room_events(ana, "stand_in")) == 1

    # Cem leaves: a stand-in at once.
    del people[2]
    await cem.request({"type": "leave"})
    await settle(server, [ana, ben])
    assert room_events(ana, "stand_in")[-1] == {"type": "stand_in", "seat": 2}
    assert seats(ana)[2]["left"]
    assert seats(ana)[2]["stand_in"]
    await run(server, [ana, ben], act, lambda: len([e for e in _events(ana) if e["type"] == "round_ended"]) >= 3)
    assert not [e for e in _events(ana) if e["type"] == "timed_out" and e["seat"] == 2]


async def test_without_the_option_nobody_stands_in(server: Harness) -> None:
    _, (ana, ben) = await server.table(["Ana", "Ben"])
    await ben.ws.close()
    for _ in range(40):
        await server.advance(5000)
    await settle(server, [ana])
    assert not room_events(ana, "stand_in")
    assert not seats(ana)[1]["stand_in"]


@pytest.mark.parametrize("stand_in", [None, 30])
async def test_a_player_who_left_a_game_resumes_their_seat_and_plays(server: Harness, stand_in: int | None) -> None:
    """The web client offers a way back to a game one left: the seat's token takes it back, with or without
    a computer player standing in meanwhile."""
    code, (ana, ben, cem) = await server.lobby(["Ana", "Ben", "Cem"])
    await ana.set_options(stand_in=stand_in)
    await ana.start()
    token = ben.token
    assert token is not None
    await ben.request({"type": "leave"})
    await settle(server, [ana, cem])
    assert seats(ana)[1]["left"]
    assert seats(ana)[1]["stand_in"] is (stand_in is not None)

    back = await server.client()
    welcome = await back.resume(code, token)
    assert welcome["seat"] == 1
    assert welcome["token"] is None
    await settle(server, [ana, cem, back])
    for c in (ana, cem, back):
        assert (seats(c)[1]["left"], seats(c)[1]["stand_in"], seats(c)[1]["connected"]) == (False, False, True)
    assert back.you["seat"] == 1
    assert room_events(ana, "connected")[-1] == {"type": "connected", "seat": 1}
    people = [Person(ana, seed=1), Person(back, seed=2), Person(cem, seed=3)]
    sent: list[Message] = []

    async def act() -> bool:
        for person in people:
            move = person.decide()
            if move is not None:
                await person.client.send(move)
                if person.client is back:
                    sent.append(move)
                return True
        return False

    start = len(back.messages)
    await run(server, [ana, back, cem], act, lambda: any(e["type"] == "round_ended" for e in _events(back)))
    assert back.errors == []
    assert any(m["type"] == "draw" for m in sent), "Ben played his own moves again"
    later = [e for m in back.messages[start:] if m.get("type") == "update" for e in m["events"]]
    assert not [e for e in later if e["type"] in ("timed_out", "stand_in") and e.get("seat") == 1]


def _events(client: CrispClient) -> list[Message]:
    return [e for m in client.messages if m.get("type") in ("update", "snapshot") for e in m["events"]]


# -- a restart -------------------------------------------------------------------------------------------


async def test_computer_players_and_stand_ins_survive_a_restart(tmp_path: Path) -> None:
    settings: dict[str, Any] = {"persist": True, "data_dir": tmp_path, "bot_pause": 0, "rate_burst": 100_000}
    async with running_server(**settings) as server:
        code, (ana, ben) = await server.lobby(["Ana", "Ben"])
        await ana.set_options(score_limit=50, stand_in=60)
        await ana.request({"type": "add_bot", "level": "hard"})
        await ana.start()
        await ana.request({"type": "ready"})
        await ben.request({"type": "leave"})  # a stand-in at once
        await run(server, [ana], _nothing, lambda: ana.phase == "play")
        assert room_events(ana, "stand_in") == [{"type": "stand_in", "seat": 1}]
        token = ana.token
        assert token is not None

    async with running_server(**settings) as server:
        ana = await server.client()
        await ana.resume(code, token)
        person = Person(ana, level="hard")

        async def act() -> bool:
            move = person.decide()
            if move is None:
                return False
            await ana.send(move)
            return True

        await run(server, [ana], _nothing, lambda: seats(ana)[1]["stand_in"])
        assert [(s["name"], s["bot"], s["left"], s["stand_in"], s["connected"]) for s in seats(ana)] == [
            ("Ana", None, False, False, True),
            ("Ben", None, True, True, False),
            ("Ada", "hard", False, False, True),
        ]
        await run(server, [ana], act, phase_is(ana, "game_over"))
        async with httpx.AsyncClient(base_url=server.http) as http:
            (game,) = (await http.get(f"/api/rooms/{code}/games")).json()
            record = (
                await http.get(f"/api/games/{game['id']}/record", headers={"Authorization": f"Bearer {token}"})
            ).json()
        assert record["players"] == ["Ana", "Ben", "Ada"]  # the records name computer players like anyone
        assert game["players"] == ["Ana", "Ben", "Ada"]


# -- timing ----------------------------------------------------------------------------------------------


async def _the_bots_blocked_turn(server: Harness, monkeypatch: pytest.MonkeyPatch) -> CrispClient:
    """A practice game of Ana and one computer player, at the start of its first turn: Ana (seat 0) moved, her
    crisp window is open and the computer player's draw is blocked for two seconds."""
    rig(monkeypatch, first_dealer=1, seed=4)  # Ana starts
    ana = await server.client()
    await ana.create("Ana", bots=1, level="normal")
    await ana.wait_for(lambda c: c.phase == "peek", what="the first deal")
    await ana.ready()
    await run(server, [ana], _nothing, phase_is(ana, "play"))
    await ana.draw()
    await ana.play_drawn()
    await settle(server, [ana])
    r = ana.table["round"] if ana.table is not None else None
    assert r is not None
    assert r["turn"] == 1
    assert r["may_draw_at"] == r["now"] + DRAW_BLOCK_MS
    return ana


def bot_draws(ana: CrispClient) -> list[Message]:
    return [e for e in room_events(ana, "drew") if e["seat"] == 1]


async def test_a_crisp_call_that_lifts_the_draw_block_lets_a_computer_player_draw_at_once(
    server: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    ana = await _the_bots_blocked_turn(server, monkeypatch)
    await server.advance(500)
    await settle(server, [ana])
    assert bot_draws(ana) == [], "the block runs"
    await ana.crisp()  # the call ends the block at once (docs/rules.md)
    await settle(server, [ana])
    assert bot_draws(ana), "it draws once the block is lifted, not when it would have ended"


async def test_a_computer_player_waits_for_the_end_of_the_draw_block(
    server: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    ana = await _the_bots_blocked_turn(server, monkeypatch)
    await server.advance(DRAW_BLOCK_MS - 1)
    await settle(server, [ana])
    assert bot_draws(ana) == []
    await server.advance(1)
    await settle(server, [ana])
    assert bot_draws(ana)


async def test_hints_after_a_reconnect_know_only_what_the_page_was_sent_since(
    server: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The update that showed Ana her middle card (a Jack) went to a connection that then dropped: the page
    that comes back starts from what it is sent now, and so do its hints (docs/computer-players.md)."""
    deck = ["2C", "KH", "8D", "KD", "3S", "KC", "JS"]  # Ana left, Ada left, Ana middle, ..., then the Jack on top
    rest = [c for c in (r + s for r in "A23456789TJQK" for s in "SHDC") if c not in deck]
    rig(monkeypatch, first_dealer=1, decks=[deck + rest])  # dealer Ada: Ana is dealt first and plays first
    ana = await server.client()
    code = await ana.create("Ana", bots=1, level="hard")
    await ana.request({"type": "ready"})
    await run(server, [ana], _nothing, lambda: ana.my_turn() and "draw_deck" in ana.you["can"])
    room = server.app.state.services.registry.get(code)
    assert room is not None
    memory = room.seats[0].memory
    assert memory is not None
    assert [info.card for info in memory.mine()] == ["2C", None, "3S"], "the deal's peek"
    await ana.draw()
    assert ana.you["drawn_card"] == "JS"
    await ana.jack()
    assert [info.card for info in memory.mine()] == ["2C", "8D", "3S"]
    token = ana.token
    assert token is not None
    await ana.ws.close()  # (a page that never read that update drops the same way)
    await server.advance(0)
    again = await server.client()
    await again.resume(code, token)
    await again.request({"type": "ping"})
    memory = room.seats[0].memory
    assert memory is not None
    # Nothing moved meanwhile (the computer player waits out the draw block), yet the hints know no card:
    # the page that came back was shown none of them.
    assert [info.card for info in memory.mine()] == [None, None, None]
    assert memory.discard == ["JS"], "what the page is shown now, the hints know"
