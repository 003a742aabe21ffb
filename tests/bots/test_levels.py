"""The levels reach their goals (docs/computer-players.md) at every score limit: seeded arena runs, smaller than
the 4,000 games of the documented table, judged by their 95 % confidence interval.

A cell passes when its goal lies within or below the interval (a level that truly reaches its goal fails a
given seed with a chance of at most 2.5 %; one that falls short by more than the interval's half-width, about
0.05 at 300 games, fails) and when the interval lies above the fair share 0.25 (it beats the weaker level, not
only by luck). The goals are the arena's own (``PAIRINGS``), not thresholds lowered for the test.
"""

from __future__ import annotations

import pytest

from crisp_server.engine import Options
from crisp_server.tools.arena import PAIRINGS, TABLE_LIMITS, run_arena

pytestmark = pytest.mark.slow

#: Games per cell: the interval's half-width is about 0.05 for a share near 0.35.
GAMES = 300
FAIR = 0.25
#: Against three random players every level wins at least half the games.
OVER_RANDOM = 0.5


def check(levels: list[str], goal: float, options: Options) -> None:
    summary = run_arena(levels, GAMES, seed=2026, options=options).summary()
    assert summary["illegal_moves"] == 0
    first = summary["seats"][0]
    low, high = first["win_share_ci95"]
    assert high >= goal, f"{levels[0]} misses its goal {goal}: {first}"
    assert low > FAIR, f"{levels[0]} is not clearly better than {levels[1]}: {first}"


@pytest.mark.parametrize("limit", TABLE_LIMITS)
@pytest.mark.parametrize(
    ("level", "against", "goal"), [(lv, ag, goal) for lv, ag, goal in PAIRINGS if goal is not None]
)
def test_a_level_reaches_its_goal_against_the_level_below(level: str, against: str, goal: float, limit: int) -> None:
    check([level, against, against, against], goal, Options(score_limit=limit))


@pytest.mark.parametrize("level", ["easy", "normal", "hard"])
def test_every_level_beats_random_players(level: str) -> None:
    check([level, "random", "random", "random"], OVER_RANDOM, Options())
