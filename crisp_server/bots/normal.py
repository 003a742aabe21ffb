"""The ``normal`` level: a player who remembers its own cards and plays the expected value.

* Every card of its own it has seen (the peek, a Jack, a Queen, a card it put in) it remembers for the
  whole round. A card it has not seen is worth the mean of the cards it has not seen anywhere (its own
  cards, its drawn card and the discard pile left out): about 6.5 at the start.
* Draw: from the discard pile (when the host allows it) if that card beats its worst card by 2 or more,
  else from the draw pile.
* Play: a number card goes into the slot with the highest expected value if that lowers the expected sum,
  else it is discarded. A Jack looks at an unknown middle card. A Queen gives away a card worth 8 or more
  for a random card of a random other player (on average a gain). A King is always played.
* Crisp: called when its expected sum is at most 9 (with fewer players, a little higher); after 10 moves
  in a round the bar rises by one a move (the low cards are gone: waiting longer no longer pays).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from .memory import MIDDLE, Memory, SlotInfo, value
from .moves import Decision, draw, draw_options, play_options, queen, simple, swap

if TYPE_CHECKING:
    from random import Random

#: Crisp when the expected sum is at most this (four players; see :func:`crisp_threshold`).
CRISP_AT: Final = 9
#: A Queen is worth using to give away a card of at least this value.
QUEEN_FROM: Final = 8
#: After this many of its own moves in a round, the crisp bar rises by one per move.
PATIENCE: Final = 10
#: Taking the discard pile's top card must beat the worst card by at least this.
TAKE_MARGIN: Final = 2


def crisp_threshold(players: int, round_moves: int) -> int:
    """Fewer opponents: a higher sum is still likely the lowest; a long round: take what one has."""
    return CRISP_AT + max(0, 4 - players) + max(0, round_moves - PATIENCE)


def worst_slot(estimates: list[float]) -> int:
    """The slot with the highest expected value (the rightmost of equals: deterministic)."""
    return max(range(3), key=lambda s: (estimates[s], s))


class NormalLevel:
    name = "normal"

    def estimates(self, m: Memory) -> list[float]:
        mean = m.own_pool().mean()
        return [_known(info, mean) for info in m.mine()]

    def draw(self, m: Memory, rng: Random) -> Decision:
        top = m.discard_top
        if top is not None and "discard" in draw_options(m):
            est = self.estimates(m)
            if value(top) + TAKE_MARGIN <= est[worst_slot(est)]:
                return Decision(draw("discard"))
        return Decision(draw("deck"))

    def play(self, m: Memory, rng: Random) -> Decision:
        card = m.drawn
        assert card is not None
        can = play_options(m)
        est = self.estimates(m)
        worst = worst_slot(est)
        if "king" in can:
            return Decision(simple("king"))
        if "jack" in can:
            return Decision(simple("jack") if m.mine()[MIDDLE].card is None else simple("discard"))
        if "queen" in can:
            if est[worst] >= QUEEN_FROM:
                return Decision(queen(worst, rng.choice(m.opponents()), rng.randrange(3)))
            return Decision(simple("discard"))
        if "discard" not in can or value(card) < est[worst]:
            return Decision(swap(worst))
        return Decision(simple("discard"))

    def crisp(self, m: Memory, rng: Random) -> Decision | None:
        if sum(self.estimates(m)) <= crisp_threshold(m.players, m.round_moves):
            return Decision(simple("crisp"))
        return None


def _known(info: SlotInfo, unknown: float) -> float:
    return float(value(info.card)) if info.card is not None else unknown
