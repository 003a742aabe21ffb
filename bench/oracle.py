"""How much each decision is worth to a player who sees every card: a ceiling for any honest level.

A computer player here must not see more than its seat (``crisp_server/bots``): this bench breaks that rule on
purpose, to tell where a stronger level has something to win. The ``oracle`` plays hard's game, except in the
decisions named by ``--parts``, where it reads the engine's state through the arena's feed:

* ``draw``: from the discard pile when its card beats both its own highest card and the next card of the
  draw pile (with the host option; off by default);
* ``swap``: a drawn number card replaces its highest card (it knows its middle card) if lower; a Jack is
  discarded (it needs no peek);
* ``queen``: its highest card for the lowest card at the table, preferring the caller and the leader;
* ``crisp``: when its sum is at least ``--margin`` below every other sum after their final turns, each of them
  taking the next card of the draw pile into its highest slot if that card is lower.

Against three ``hard`` bots, as ``crisp-server arena`` plays them (same seats, clock and think times):

    python bench/oracle.py --games 1000 --parts queen --score-limit 100
    python bench/oracle.py --games 1000 --parts draw,swap,queen,crisp --score-limit 50,100,150
"""

from __future__ import annotations

import argparse
import random
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from crisp_server.bots import LEVELS
from crisp_server.bots.hard import HardLevel
from crisp_server.bots.memory import Memory, value
from crisp_server.bots.moves import Decision, draw, queen, simple, swap
from crisp_server.engine import Options
from crisp_server.engine.game import Game
from crisp_server.tools.arena import Tally, format_summary, play_game

if TYPE_CHECKING:
    from random import Random

PARTS = ("draw", "swap", "queen", "crisp")


def values(hand: list[str]) -> list[int]:
    return [value(card) for card in hand]


class Oracle(HardLevel):
    """Hard, but with every card in view in the decisions of ``parts`` (``game`` is set by the arena's feed)."""

    name = "oracle"
    parts: frozenset[str] = frozenset(PARTS)
    margin = 1
    game: Game | None = None

    def _seen(self) -> Game:
        assert self.game is not None
        assert self.game.round is not None
        return self.game

    def draw(self, m: Memory, rng: Random) -> Decision:
        if "draw" not in self.parts or not m.discard_draw or not m.discard:
            return super().draw(m, rng)
        r = self._seen().round
        assert r is not None
        assert m.me is not None
        worst = max(values(r.hands[m.me]))
        top = r.discard[-1]
        following = r.draw_pile[-1] if r.draw_pile else None
        from_pile = worst - value(following) if following is not None and following[0] not in "JQK" else 0
        if worst - value(top) > max(0, from_pile):
            return Decision(draw("discard"))
        return Decision(draw("deck"))

    def play(self, m: Memory, rng: Random) -> Decision:
        can = m.can
        kind = "queen" if "queen" in can else "swap"
        if "king" in can or kind not in self.parts:
            return super().play(m, rng)
        game = self._seen()
        r = game.round
        assert r is not None
        assert m.me is not None
        assert m.drawn is not None
        mine = values(r.hands[m.me])
        worst = max(range(3), key=lambda s: (mine[s], s))
        if kind == "queen":
            leader = min(game.totals[s] for s in m.opponents())
            best: tuple[float, int, int] | None = None
            for seat in m.opponents():
                theirs = values(r.hands[seat])
                slot = min(range(3), key=lambda s: theirs[s])
                gain = mine[worst] - theirs[slot]
                score = gain + (0.5 if r.caller == seat else 0.0) + (0.3 if game.totals[seat] == leader else 0.0)
                if gain > 0 and (best is None or score > best[0]):
                    best = (score, seat, slot)
            if best is None:
                return Decision(simple("discard"))
            return Decision(queen(worst, best[1], best[2]))
        if "jack" in can:
            return Decision(simple("discard"))
        if "discard" not in can or value(m.drawn) < mine[worst]:
            return Decision(swap(worst))
        return Decision(simple("discard"))

    def crisp(self, m: Memory, rng: Random) -> Decision | None:
        if "crisp" not in self.parts:
            return super().crisp(m, rng)
        r = self._seen().round
        assert r is not None
        assert m.me is not None
        n = len(r.hands)
        after = [sum(values(hand)) for hand in r.hands]
        pile = list(r.draw_pile)
        for k in range(1, n):
            seat = (m.me + k) % n
            if not pile:
                break
            card = pile.pop()
            highest = max(values(r.hands[seat]))
            if card[0] not in "JQK" and value(card) < highest:
                after[seat] += value(card) - highest
        if after[m.me] + self.margin <= min(after[s] for s in range(n) if s != m.me):
            return Decision(simple("crisp"))
        return None


def run(games: int, seed: int, options: Options, opponents: str) -> Tally:
    seats = ["oracle", opponents, opponents, opponents]
    tally = Tally(seats, options)
    rng = random.Random(seed)

    def feed(game: Game, seat: int, update: Mapping[str, Any]) -> None:
        Oracle.game = game

    for _ in range(games):
        tally.add(play_game(seats, rng, options, on_feed=feed))
    return tally


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--score-limit", default="100", help="one or more, comma-separated")
    parser.add_argument("--parts", default=",".join(PARTS), help=f"of {', '.join(PARTS)}, comma-separated")
    parser.add_argument("--margin", type=int, default=1, help="the Crisp call's lead over every other sum")
    parser.add_argument("--discard-draw", action="store_true")
    parser.add_argument("--against", default="hard", choices=[name for name in LEVELS if name != "oracle"])
    args = parser.parse_args()
    parts = frozenset(p for p in args.parts.split(",") if p)
    if not parts <= set(PARTS):
        parser.error(f"--parts: unknown {', '.join(sorted(parts - set(PARTS)))} (of {', '.join(PARTS)})")
    Oracle.parts, Oracle.margin = parts, args.margin
    LEVELS["oracle"] = Oracle
    for limit in (int(x) for x in args.score_limit.split(",")):
        options = Options(score_limit=limit, discard_draw=args.discard_draw)
        print(f"oracle sees every card in: {', '.join(sorted(parts)) or 'nothing (hard itself: the control)'}")
        print(format_summary(run(args.games, args.seed, options, args.against).summary()))


if __name__ == "__main__":
    main()
