"""The ``hard`` level: counts every card, models every hand, and calls Crisp by probability.

* Counting: the cards whose place it knows (its own, the discard pile, cards it saw go into someone's hand,
  the draw pile's order after the discard pile was turned over) are out of the pool; an unknown card is
  worth the mean of the pool, so a table full of discarded tens makes the unknown cards cheaper.
* Opponents: each opponent card carries what their play gave away. A card taken from the discard pile is
  known; a card they knew and gave away with a Queen is probably high. A draw-pile card someone kept is
  below the card they threw out for it (below the mean if they did not know the slot). A number card
  someone threw away caps every card they know at its value. Queen exchanges move this knowledge between
  hands.
* Draw: from the discard pile (when allowed) when its card beats its worst card by more than a draw from
  the pile is expected to (or than the pile's top, when the order is known).
* Play: a number card replaces the card with the highest expected value if lower. A Jack looks at an
  unknown middle card. A Queen gives away its worst card for the opponent card with the lowest expected
  value, if that gains; it prefers to push a bad card into the opponent's middle (they will not see it),
  onto the opponent with the lowest total (what the leader gains is what it has to beat) and, in the
  final turns, onto the caller. A King is played, and its extra moves are played the same way, each with
  what the previous one revealed.
* Crisp: it estimates every opponent's sum (mean and spread of each card, less what one more draw from the
  unseen cards is expected to take off their highest card) and calls when the chance that its own sum is
  lowest alone is at least 0.75. In a round that drags on (the low cards are in hands, the draw pile only
  cycles) the bar comes down move by move.

Every decision comes with a :class:`~crisp_server.bots.moves.Reason`, so it can explain itself (hints).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Final

from .memory import LOOKED_AT, MIDDLE, Memory, Pool, SlotInfo, value
from .moves import Decision, Reason, draw, draw_options, play_options, queen, simple, swap

if TYPE_CHECKING:
    from random import Random

#: Call Crisp when the chance of being lowest alone is at least this.
CRISP_CHANCE: Final = 0.75
#: After this many own moves in a round, the chance needed drops by ``PATIENCE_STEP`` per move.
PATIENCE: Final = 10
PATIENCE_STEP: Final = 0.05
#: A Queen exchange must gain at least this (expected points) to be worth it.
QUEEN_GAIN: Final = 0.5
#: Worth of pushing a card into an opponent's middle, where they do not see it (they will not fix it).
BLIND_GIFT: Final = 1.0
#: Worth of receiving into a slot where one sees the card.
SEEN_GIFT: Final = 0.3
#: Share of a Queen's gain added when the card goes to the opponent with the lowest total (the one to beat).
LEADER_GIFT: Final = 0.5


class HardLevel:
    name = "hard"

    # -- what it believes ----------------------------------------------------------------------------

    @staticmethod
    def estimate(info: SlotInfo, pool: Pool) -> float:
        return float(value(info.card)) if info.card is not None else pool.mean(info.bound, info.floor)

    def own(self, m: Memory, pool: Pool) -> list[float]:
        return [self.estimate(info, pool) for info in m.mine()]

    def chance_lowest_alone(self, m: Memory, pool: Pool) -> tuple[float, float]:
        """Its expected sum and the chance that it is below every other sum after the final turns."""
        mine = m.mine()
        total = sum(self.estimate(i, pool) for i in mine)
        spread = sum(pool.variance(i.bound, i.floor) for i in mine if i.card is None)
        chance = 1.0
        for seat in m.opponents():
            hand = m.hands[seat]
            est = [self.estimate(i, pool) for i in hand]
            # Before the final turns, each opponent has one more draw to lower its highest card.
            mean = sum(est) - (0.0 if m.final_turns else _expected_gain(pool, max(est)))
            var = spread + sum(pool.variance(i.bound, i.floor) for i in hand if i.card is None) + 1.0
            # P(their sum > ours): sums are integers, so "more than" is "at least ours + 1" (half-way: +0.5).
            z = (mean - total - 0.5) / math.sqrt(var)
            chance *= 0.5 * (1.0 + math.erf(z / math.sqrt(2.0)))
        return total, chance

    # -- the decisions -------------------------------------------------------------------------------

    def draw(self, m: Memory, rng: Random) -> Decision:
        top = m.discard_top
        known = m.next_draw()
        if top is None or "discard" not in draw_options(m):
            return Decision(draw("deck"), Reason("draw_known", (known,)) if known else Reason("draw_only"))
        pool = m.pool()
        est = self.own(m, pool)
        worst = _worst(est)
        take = est[worst] - value(top)
        if known is not None:
            from_pile = est[worst] - value(known) if known[0] not in "JQK" else 0.0
        else:
            from_pile = _expected_gain(pool, est[worst])
        if take > 0 and take >= from_pile:
            info = m.mine()[worst]
            if info.card is not None:
                return Decision(draw("discard"), Reason("take_known", (top, worst, info.card)))
            return Decision(draw("discard"), Reason("take", (top, worst, round(est[worst]))))
        return Decision(draw("deck"), Reason("draw_known", (known,)) if known else Reason("draw"))

    def play(self, m: Memory, rng: Random) -> Decision:
        card = m.drawn
        assert card is not None
        can = play_options(m)
        pool = m.pool()
        est = self.own(m, pool)
        worst = _worst(est)
        if "king" in can:
            return Decision(simple("king"), Reason("king"))
        if "jack" in can:
            if m.mine()[MIDDLE].card is None:
                return Decision(simple("jack"), Reason("jack"))
            return Decision(simple("discard"), Reason("jack_known"))
        if "queen" in can:
            return self._queen(m, pool, est)
        v = value(card)
        if "discard" not in can:
            return Decision(swap(worst), Reason("must_swap", (card, worst)))
        if v < est[worst]:
            info = m.mine()[worst]
            if info.card is not None:
                return Decision(swap(worst), Reason("swap_known", (worst, info.card, card)))
            return Decision(swap(worst), Reason("swap", (worst, card)))
        return Decision(simple("discard"), Reason("discard", (card,)))

    def _queen(self, m: Memory, pool: Pool, est: list[float]) -> Decision:
        best: tuple[float, int, int, int, float, float] | None = None
        caller = m.caller
        low_total = min(m.totals[s] for s in m.opponents()) if m.totals else 0
        for seat in m.opponents():
            hand = m.hands[seat]
            for b in range(3):
                theirs = self.estimate(hand[b], pool)
                for a in range(3):
                    gain = est[a] - theirs
                    if gain <= 0:
                        continue
                    blind = BLIND_GIFT if b == MIDDLE and hand[b].card is None else 0.0  # they will not see it
                    score = gain + blind
                    if a in LOOKED_AT:
                        score += SEEN_GIFT
                    if caller == seat:
                        score += gain * 0.5  # the caller's low sum is the one to spoil
                    if m.totals and m.totals[seat] == low_total:
                        score += gain * LEADER_GIFT  # what the leader gains is what one must beat
                    if best is None or score > best[0]:
                        best = (score, a, seat, b, theirs, gain + blind)
        if best is None or best[5] < QUEEN_GAIN:
            return Decision(simple("discard"), Reason("queen_none"))
        _, a, seat, b, theirs, _worth = best
        name = m.table["players"][seat]
        return Decision(queen(a, seat, b), Reason("queen", (a, name, b, round(theirs))))

    def crisp(self, m: Memory, rng: Random) -> Decision | None:
        total, chance = self.chance_lowest_alone(m, m.pool())
        if chance >= CRISP_CHANCE - PATIENCE_STEP * max(0, m.round_moves - PATIENCE):
            return Decision(simple("crisp"), Reason("crisp", (round(total), round(chance * 100))))
        return None


def _worst(est: list[float]) -> int:
    return max(range(3), key=lambda s: (est[s], s))


def _expected_gain(pool: Pool, worst: float) -> float:
    """How much a number card drawn from the pile is expected to lower the worst card (0 if it does not)."""
    n = pool.size
    if n == 0:
        return 0.0
    return sum(c * (worst - v) for v, c in enumerate(pool.counts) if v and v < worst) / n
