"""A bot's memory holds only true facts: every card it places exactly is there, and after the discard pile
is turned over it knows the draw pile's order (docs/rules.md: turned over without shuffling)."""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

import pytest

from crisp_server.arena import play_game
from crisp_server.bots import Memory
from crisp_server.engine import Game, Options

pytestmark = pytest.mark.slow


@pytest.mark.parametrize(
    ("levels", "discard_draw"),
    [
        (["hard", "normal"], False),
        (["hard", "normal", "easy", "random"], True),
        (["hard", "normal", "easy", "random", "hard", "normal", "easy"], False),
        # Easy players let rounds run long: the discard pile is turned over, its order followed.
        (["easy", "easy", "easy", "hard"], False),
    ],
)
def test_what_a_memory_knows_exactly_is_true(levels: list[str], discard_draw: bool) -> None:
    memories: dict[int, Memory] = {}
    checked = {"cards": 0, "piles": 0}

    def check(game: Game, seat: int, update: Mapping[str, Any]) -> None:
        m = memories.setdefault(seat, Memory())
        m.observe(update)
        r = game.round
        assert r is not None
        assert m.discard == r.discard
        if r.ended:
            return
        for s, hand in enumerate(m.hands):
            for slot, info in enumerate(hand):
                if info.card is not None:
                    checked["cards"] += 1
                    assert r.hands[s][slot] == info.card, (seat, s, slot)
        if m.known_pile is not None:
            checked["piles"] += 1
            assert m.known_pile == r.draw_pile
        if r.turn == seat and r.drawn is not None:
            assert m.drawn == r.drawn

    rng = random.Random(len(levels) + 10 * discard_draw)
    for _ in range(3):
        memories.clear()
        play_game(levels, rng, Options(score_limit=60, discard_draw=discard_draw), timeouts=0.02, on_feed=check)
    assert checked["cards"] > 100
    if levels[0] == "easy":
        assert checked["piles"] > 0
