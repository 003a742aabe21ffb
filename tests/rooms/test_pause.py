"""A game whose players are all away waits for them, in every phase: nothing times out for nobody to see."""

from __future__ import annotations

import random

import pytest

from crisp_server.engine import Resume
from tests.web.bots import OPEN_LIMITS, Bots, Style, rig
from tests.web.harness import running_server

PASSIVE = Style(crisp=0.0, passive=True)


@pytest.mark.parametrize("turn_seconds", [None, 30])
async def test_everyone_away_pauses_the_round_and_the_first_back_resumes_it(turn_seconds: int | None) -> None:
    async with running_server() as server:
        code, (ana, ben) = await server.table(["Ana", "Ben"], turn_seconds=turn_seconds)
        mover = ana if ana.my_turn() else ben
        await mover.draw()
        tokens = {c.seat: c.token for c in (ana, ben)}
        seat = mover.seat
        drawn = mover.you["drawn_card"]
        room = server.app.state.registry.get(code)
        await ana.close()
        await ben.close()
        for _ in range(200):  # the room hears both go
            if not room.members:
                break
            await server.advance(0)
        assert room.paused
        assert server.clock.pending() == [], "no timer runs while nobody is there"
        await server.advance(3_600_000)  # an hour away: nothing happens
        assert room.game.round.timeouts == []

        back = await server.client()
        assert seat is not None
        token = tokens[seat]
        assert token is not None
        await back.resume(code, token)
        await back.request({"type": "ping"})
        assert back.you["drawn_card"] == drawn, "the same move, the same card"
        assert not room.paused
        assert room.game.round.timeouts == []
        actions = room.record.rounds[-1].actions
        assert room.record.rounds[-1].resumes == [Resume(len(actions), room.game.round.now)]
        if turn_seconds:
            assert back.state is not None
            assert back.state["clock"]["deadline_in"] == turn_seconds * 1000, "a fresh full clock"
        # And the game goes on (the drawn card is random: play whatever it allows).
        can = back.you["can"]
        if "swap" in can:
            await back.swap("left")
        elif "discard" in can:
            await back.discard()
        else:
            await back.king()


HOUR = 3_600_000


async def _desert(bots: Bots) -> tuple[str, int, int]:
    """Every player drops; the phase, the number of rounds dealt and of actions logged then."""
    for p in bots.players:
        if p.client is not None:
            await bots.disconnect(p.seat)
    room = bots.server.app.state.registry.get(bots.code)
    assert room.record is not None
    return room.phase.value, len(room.record.rounds), len(room.record.rounds[-1].actions)


async def _to_phase(bots: Bots, phase: str) -> None:
    if phase in ("play", "round_over"):
        await bots.ready_all()
    if phase == "round_over":
        await bots.play_turn()
        await bots.call_crisp(0)
        await bots.play_round()
    assert bots.phase == phase


@pytest.mark.parametrize("phase", ["peek", "play", "round_over"])
async def test_a_game_nobody_is_connected_to_waits_in_every_phase(phase: str, monkeypatch: pytest.MonkeyPatch) -> None:
    rig(monkeypatch, first_dealer=2, seed=5)
    async with running_server(**OPEN_LIMITS) as server:
        # A spectator stays: spectators are not players, and it sees that nothing happens.
        bots = await Bots.start(server, 3, random.Random(5), style=PASSIVE, spectators=1)
        await _to_phase(bots, phase)
        room = server.app.state.registry.get(bots.code)
        before = await _desert(bots)
        assert room.paused
        assert server.clock.pending() == [], "no timer runs while no player is there"
        await bots.settle()
        last = [m for m in bots.spectators[0].messages if m["type"] == "update"][-1]
        assert {"type": "disconnected", "seat": 2} in last["events"]
        assert all(v is None for v in last["clock"].values()), "the update that tells it shows no clock running"
        assert all(v is None for v in (await bots.snapshot())["clock"].values()), "and no clock is shown running"
        await bots.advance(HOUR)
        after = (room.phase.value, len(room.record.rounds), len(room.record.rounds[-1].actions))
        assert after == before, "an hour with nobody there: no deal, no play, no move timed out"

        await bots.resume(1)
        assert not room.paused
        clock = (await bots.snapshot())["clock"]
        # A peek, or a pause between rounds, starts again in full from the first player back.
        full = {"peek": ("peek_ends_in", 10_000, "play"), "round_over": ("next_round_in", 20_000, "peek")}
        if phase in full:
            key, ms, then = full[phase]
            assert clock[key] == ms
            await bots.advance(ms - 1)
            assert bots.phase == phase
            await bots.advance(1)
            assert bots.phase == then
        else:
            assert server.clock.pending(), "the round runs again"
            turn = bots.round["turn"]
            await bots.play_turn()
            assert bots.round["turn"] != turn


async def test_two_drop_and_the_third_leaves_the_round_waits(monkeypatch: pytest.MonkeyPatch) -> None:
    rig(monkeypatch, first_dealer=2, seed=5)
    async with running_server(**OPEN_LIMITS) as server:
        bots = await Bots.start(server, 3, random.Random(5), style=PASSIVE, spectators=1)
        await bots.ready_all()
        room = server.app.state.registry.get(bots.code)
        await bots.disconnect(0)
        await bots.disconnect(1)
        await bots.leave(2)  # if it was their move, it is played on at once: they are not coming back
        assert room.paused
        await bots.settle()
        last = [m for m in bots.spectators[0].messages if m["type"] == "update"][-1]
        assert any(e["type"] == "left" for e in last["events"])
        assert all(v is None for v in last["clock"].values()), "the update that tells it shows no clock running"
        assert server.clock.pending() == []
        actions = len(room.record.rounds[-1].actions)
        await bots.advance(HOUR)
        assert len(room.record.rounds[-1].actions) == actions, "no move timed out for nobody"
        await bots.resume(0)
        assert not room.paused
        turn = bots.round["turn"]
        await bots.play_turn()
        assert bots.round["turn"] != turn, "the round goes on"
