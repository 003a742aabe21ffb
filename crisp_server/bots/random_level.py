"""The ``random`` level: a uniformly random legal move at every decision, a yardstick for the others.

At a draw it picks a pile the view allows; with a drawn card it picks one of every legal message (each
slot to swap into, each Queen exchange with every other seat's every slot, discard, Jack, King) with
equal chance; in its crisp window it calls or lets the window pass, one chance in two. It remembers
nothing and never explains itself.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .memory import Memory
from .moves import Decision, all_plays, draw, draw_options, simple

if TYPE_CHECKING:
    from random import Random


class RandomLevel:
    name = "random"

    def draw(self, m: Memory, rng: Random) -> Decision:
        return Decision(draw(rng.choice(draw_options(m))))

    def play(self, m: Memory, rng: Random) -> Decision:
        return Decision(rng.choice(all_plays(m)))

    def crisp(self, m: Memory, rng: Random) -> Decision | None:
        return Decision(simple("crisp")) if rng.random() < 0.5 else None
