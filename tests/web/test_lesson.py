"""The lesson ("Learn to play") over real WebSockets: its script walked through a real room, each step's claims read
against the engine's state; moves that are not the step's refused and losing nothing; Back and Next; the
computer players' paced moves; resuming after a dropped connection and after a restart; bad combinations.

The computer players' moves come at the lesson's pace (``CRISP_BOT_PAUSE=1``) on the server's manual clock, which
the tests move."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from crisp_server.engine import Slot
from crisp_server.remote.client import CrispClient, ProtocolError
from crisp_server.rooms.lesson import PACE_MS
from crisp_server.rooms.lesson_script import DECK, LEARNER, STEPS, Step
from crisp_server.rooms.room import Room
from tests.web.bots import settle
from tests.web.harness import Harness, running_server

Message = dict[str, Any]


@pytest.fixture
async def server() -> AsyncIterator[Harness]:
    async with running_server(bot_pause=1, rate_burst=100_000) as harness:
        yield harness


async def start(server: Harness, name: str = "Ana") -> tuple[CrispClient, Room]:
    client = await server.client()
    await client._enter({"type": "create", "name": name, "lesson": True})
    await settle(server, [client])
    assert client.room is not None
    room = server.app.state.registry.get(client.room)
    assert room is not None
    return client, room


def lesson(client: CrispClient) -> Message:
    view: Message = client.you["lesson"]
    return view


async def send(server: Harness, client: CrispClient, message: Message) -> str | None:
    """Send and settle; the error code, or ``None`` if accepted."""
    start = len(client.messages)
    await client.send(message)
    await settle(server, [client])
    errors = [m for m in client.messages[start:] if m.get("type") == "error"]
    return errors[0]["code"] if errors else None


def check_engine(room: Room, step: Step) -> None:
    """The step's declared expectations, read against the engine's state."""
    expect = step.expect
    assert room.phase.value == expect.phase, step.id
    game = room.game
    assert game is not None
    r = game.round
    assert r is not None
    if expect.turn is not None:
        assert r.turn == expect.turn, step.id
    if expect.drawn is not None:
        assert (r.turn, r.drawn) == (LEARNER, expect.drawn), step.id
    for slot, card in expect.hand.items():
        assert r.hands[LEARNER][Slot.parse(slot)] == card, (step.id, slot)
    for seat, slot, card in expect.theirs:
        assert r.hands[seat][Slot.parse(slot)] == card, (step.id, seat, slot)
    if expect.window is not None:
        assert game.can_call_crisp(expect.window), step.id
    if expect.extra_moves is not None:
        assert r.extra_moves == expect.extra_moves, step.id
    if expect.caller is not None:
        assert r.caller == expect.caller, step.id
    if expect.sums is not None:
        assert (r.sums, r.points) == (expect.sums, expect.points), step.id


def check_view(client: CrispClient, index: int) -> None:
    """What the learner is told of the step: the step, and the move it waits for is one the learner may make."""
    step = STEPS[index]
    view = lesson(client)
    assert (view["step"], view["index"], view["current"], view["count"]) == (step.id, index, index, len(STEPS))
    assert view["wait"] == step.wait
    assert view["move"] == step.move
    if step.move is not None and step.move["type"] != "ready":
        move = step.move["type"]
        name = f"draw_{step.move['from']}" if move == "draw" else move
        assert name in client.you["can"], step.id
    if step.wait == "move" and step.move == {"type": "ready"}:
        assert client.phase == "peek"


async def walk(server: Harness, client: CrispClient, room: Room, until: int = len(STEPS) - 1) -> None:
    """From the current step to ``until``, doing what each step waits for, checking each on the way."""
    while (index := lesson(client)["current"]) < until:
        step = STEPS[index]
        check_engine(room, step)
        check_view(client, index)
        if step.wait == "next":
            assert await send(server, client, {"type": "lesson_next"}) is None
        elif step.wait == "move":
            assert step.move is not None
            assert await send(server, client, step.move) is None, step.id
        else:
            # The computer players' moves, one by one at the lesson's pace, then the next step.
            for _ in range(len(step.computers) + 1):
                await server.advance(PACE_MS)
                await settle(server, [client])
        assert lesson(client)["current"] == index + 1, step.id


async def test_the_script_walks_through_a_real_room_and_every_step_matches_the_engine(server: Harness) -> None:
    client, room = await start(server)
    assert client.state is not None
    seats = client.state["room"]["seats"]
    assert [s["name"] for s in seats] == ["Ana", "Ada", "Alan"]
    assert [s["bot"] for s in seats] == [None, "normal", "normal"]
    assert room.fair[0].deck == DECK
    assert client.you["hints"] is False
    await walk(server, client, room)
    last = STEPS[-1]
    check_engine(room, last)
    check_view(client, len(STEPS) - 1)
    # The last step ends the lesson: nothing after it, and no next round is dealt.
    assert await send(server, client, {"type": "lesson_next"}) == "lesson_no_step"
    assert await send(server, client, {"type": "ready"}) == "lesson_other_move"
    await server.advance(60_000)
    assert client.phase == "round_over"
    # Nothing ran on a clock the learner could not follow: every clock was null in every message.
    for m in client.messages:
        if m.get("type") in ("update", "snapshot"):
            assert set(m["clock"].values()) == {None}


async def test_a_move_that_is_not_the_steps_is_refused_and_loses_nothing(server: Harness) -> None:
    client, room = await start(server)
    assert await send(server, client, {"type": "ready"}) == "lesson_other_move"  # the welcome is read first
    assert lesson(client)["index"] == 0
    await walk(server, client, room, until=3)  # "keep": the 2 drawn, to be kept on the left
    before = (room.v, room.game.round.snapshot()) if room.game and room.game.round else None
    for wrong in (
        {"type": "swap", "slot": "right"},  # legal in the engine, not the lesson's move
        {"type": "discard"},
        {"type": "lesson_next"},
        {"type": "crisp"},  # not even legal now
    ):
        assert await send(server, client, wrong) == "lesson_other_move", wrong
    assert room.game is not None
    assert room.game.round is not None
    assert (room.v, room.game.round.snapshot()) == before
    assert lesson(client)["current"] == 3
    assert await send(server, client, {"type": "swap", "slot": "left"}) is None
    assert lesson(client)["current"] == 4


async def test_the_crisp_window_waits_for_the_learner(server: Harness) -> None:
    client, room = await start(server)
    crisp = next(i for i, s in enumerate(STEPS) if s.id == "crisp")
    await walk(server, client, room, until=crisp)
    await server.advance(10 * 60_000)  # a long read: the lesson's clock stands still
    assert "crisp" in client.you["can"]
    assert await send(server, client, {"type": "crisp"}) is None
    assert room.game is not None
    assert room.game.round is not None
    assert room.game.round.caller == LEARNER


async def test_back_shows_an_earlier_step_and_next_comes_back(server: Harness) -> None:
    client, room = await start(server)
    assert lesson(client)["back"] is False
    assert await send(server, client, {"type": "lesson_back"}) == "lesson_no_step"
    await walk(server, client, room, until=2)
    assert lesson(client)["back"] is True
    assert await send(server, client, {"type": "lesson_back"}) is None
    view = lesson(client)
    assert (view["step"], view["index"], view["current"], view["wait"], view["move"]) == ("welcome", 0, 2, "next", None)
    # While an earlier step is read, the current step's move waits.
    assert await send(server, client, {"type": "draw", "from": "deck"}) == "lesson_other_move"
    assert await send(server, client, {"type": "lesson_next"}) is None
    view = lesson(client)
    assert (view["index"], view["current"], view["wait"]) == (2, 2, "move")
    assert await send(server, client, {"type": "draw", "from": "deck"}) is None


async def test_the_computer_players_move_at_a_pace_a_person_can_follow(server: Harness) -> None:
    client, room = await start(server)
    await walk(server, client, room, until=4)  # "others": Ada and Alan play their turns
    assert room.game is not None
    assert room.game.round is not None
    r = room.game.round
    assert r.turn == 1
    assert r.drawn is None
    await server.advance(1000)
    await settle(server, [client])
    assert r.drawn is None  # not yet
    await server.advance(400)
    await settle(server, [client])
    assert r.drawn == "TD"  # Ada drew, 1.4 s after the step began
    # Next plays the rest at once and goes on.
    assert await send(server, client, {"type": "lesson_next"}) is None
    assert lesson(client)["current"] == 5
    assert r.turn == LEARNER
    assert "draw_deck" in client.you["can"]


async def test_a_dropped_connection_resumes_the_lesson_at_its_step(server: Harness) -> None:
    client, room = await start(server)
    token = client.token
    assert token is not None
    crisp = next(i for i, s in enumerate(STEPS) if s.id == "crisp")
    await walk(server, client, room, until=crisp)
    await client.close()
    await server.advance(5_000)
    again = await server.client()
    await again.resume(room.code, token)
    await settle(server, [again])
    assert lesson(again)["current"] == crisp
    assert "crisp" in again.you["can"]  # the crisp window waited too
    await walk(server, again, room)
    assert again.phase == "round_over"


async def test_a_lesson_goes_on_at_its_step_after_a_restart(tmp_path: Path) -> None:
    async with running_server(persist=True, data_dir=str(tmp_path), bot_pause=1, rate_burst=100_000) as server:
        client, room = await start(server)
        code, token = room.code, client.token
        assert token is not None
        draw = next(i for i, s in enumerate(STEPS) if s.id == "draw_again")
        await walk(server, client, room, until=draw)
        await room.flush()
    async with running_server(persist=True, data_dir=str(tmp_path), bot_pause=1, rate_burst=100_000) as server:
        again = await server.client()
        await again.resume(code, token)
        await settle(server, [again])
        assert lesson(again)["current"] == draw
        assert "draw_deck" in again.you["can"]
        restored = server.app.state.registry.get(code)
        assert restored is not None
        await walk(server, again, restored)
        assert again.phase == "round_over"


async def test_a_lesson_brings_its_own_computer_players(server: Harness) -> None:
    client = await server.client()
    for wrong in (
        {"type": "create", "name": "Ana", "lesson": True, "bots": 2},
        {"type": "create", "name": "Ana", "lesson": True, "level": "hard"},
        {"type": "create", "name": "Ana", "lesson": "yes"},
    ):
        with pytest.raises(ProtocolError) as info:
            await client._enter(wrong)
        assert info.value.code == "bad_message"
        assert "lesson" in info.value.message["detail"]


async def test_lesson_messages_outside_a_lesson_are_refused(server: Harness) -> None:
    client = await server.client()
    await client.create("Ana", bots=2)
    for message in ({"type": "lesson_next"}, {"type": "lesson_back"}):
        with pytest.raises(ProtocolError) as info:
            await client.request(message)
        assert info.value.code == "not_a_lesson"
    assert "lesson" not in client.you


async def test_leaving_a_lesson_closes_its_room(server: Harness) -> None:
    client, room = await start(server)
    await walk(server, client, room, until=3)
    await client.send({"type": "leave"})
    await client.wait_for(lambda c: c.close_code is not None, what="closed")
    await server.advance(0)
    assert room.closed
    assert server.app.state.registry.get(room.code) is None


async def test_the_tutorial_page_is_the_web_client(server: Harness) -> None:
    async with httpx.AsyncClient(base_url=server.http) as http:
        home = await http.get("/")
        for path in ("/learn", "/learn?room=K7QMXT"):
            page = await http.get(path)
            assert page.status_code == 200
            assert page.headers["content-type"].startswith("text/html")
            assert page.text == home.text
            head = await http.head(path)
            assert head.status_code == 200
            assert head.content == b""


CATALOGS = sorted((Path(__file__).resolve().parents[2] / "static" / "js" / "lang").glob("*.js"))


@pytest.mark.parametrize("catalog", CATALOGS, ids=lambda p: p.stem)
def test_every_catalog_has_a_text_for_every_step(catalog: Path) -> None:
    """The client's prompt for a step is its catalog's ``lesson.steps[id]``: one for each step of the script."""
    text = catalog.read_text(encoding="utf-8")
    section = re.search(r"\n  lesson: \{\n(.*?)\n  \},\n", text, flags=re.DOTALL)
    assert section is not None, f"{catalog.name} has no lesson section"
    steps = re.search(r"\n    steps: \{\n(.*?)\n    \},", section.group(1), flags=re.DOTALL)
    assert steps is not None, f"{catalog.name} has no lesson.steps"
    ids = re.findall(r"^      (\w+): ", steps.group(1), flags=re.MULTILINE)
    assert ids == [s.id for s in STEPS]
