"""A round whose players are all away waits for them: no move times out for nobody to see."""

from __future__ import annotations

import pytest

from crisp_server.engine import Resume
from tests.web.harness import running_server


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
