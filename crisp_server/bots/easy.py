"""The ``easy`` level: a casual player who forgets, plays simple moves and hardly ever calls Crisp.

* Memory: it remembers a card of its own only for its next three moves after seeing it; then the card is
  as unknown as one it never saw, and an unknown card is simply "about 6" (it counts nothing).
* Draw: always from the draw pile.
* Play: a card of 6 or less goes into the slot it believes worst (a remembered card higher than the new
  one, else a slot it does not remember, chosen at random); anything higher is discarded. A Jack looks at
  the middle card (soon forgotten), a Queen is thrown away, a King is played because it must be.
* Crisp: only when it remembers all three of its cards and they add up to 5 or less, or, late, after
  15 moves in a round (it gets bored).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from .memory import Memory, value
from .moves import Decision, draw, play_options, simple, swap

if TYPE_CHECKING:
    from random import Random

#: How many of its own moves a seen card stays in mind.
REMEMBERS_FOR: Final = 3
#: What an unremembered card is taken to be worth.
UNKNOWN: Final = 6
#: The highest card it keeps.
KEEPS_UP_TO: Final = 6
CRISP_AT: Final = 5
#: After this many of its own moves in a round it calls whatever it holds.
BORED_AFTER: Final = 15


class EasyLevel:
    name = "easy"

    def recall(self, m: Memory) -> list[int | None]:
        """The values of its own cards it still has in mind (``None``: forgotten or never seen)."""
        return [
            value(i.card) if i.card is not None and m.moves - i.learned <= REMEMBERS_FOR else None for i in m.mine()
        ]

    def draw(self, m: Memory, rng: Random) -> Decision:
        return Decision(draw("deck"))

    def play(self, m: Memory, rng: Random) -> Decision:
        card = m.drawn
        assert card is not None
        can = play_options(m)
        for special in ("king", "jack"):
            if special in can:
                return Decision(simple(special))
        if "queen" in can:
            return Decision(simple("discard"))
        v = value(card)
        recall = self.recall(m)
        if "discard" in can and v > KEEPS_UP_TO:
            return Decision(simple("discard"))
        higher = [s for s in range(3) if (recall[s] or 0) > v]
        if higher:
            return Decision(swap(max(higher, key=lambda s: recall[s] or 0)))
        unknown = [s for s in range(3) if recall[s] is None and v < UNKNOWN]
        if unknown:
            return Decision(swap(rng.choice(unknown)))
        if "discard" in can:
            return Decision(simple("discard"))
        return Decision(swap(rng.randrange(3)))

    def crisp(self, m: Memory, rng: Random) -> Decision | None:
        recall = self.recall(m)
        low = all(v is not None for v in recall) and sum(v or 0 for v in recall) <= CRISP_AT
        if low or m.round_moves >= BORED_AFTER:
            return Decision(simple("crisp"))
        return None
