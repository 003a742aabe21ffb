"""The levels are ordered: seeded arena runs, smaller than the README's 4,000 games, with thresholds set
below the measured shares by about twice the 95 % interval's half-width (so a seed change does not fail
them) and above what a level one step weaker reaches (so a broken strategy does)."""

from __future__ import annotations

import pytest

from crisp_server.arena import run_arena

pytestmark = pytest.mark.slow


@pytest.mark.parametrize(
    ("seats", "games", "at_least"),
    [
        # Measured: about 0.73; three random players share the rest. Fair share 0.25, goal 0.5.
        ("hard,random,random,random", 300, 0.55),
        ("normal,random,random,random", 300, 0.55),
        # Measured: about 0.6; the goal is 0.5.
        ("easy,random,random,random", 300, 0.45),
        # Measured: about 0.54 (goal 0.375); a normal among normals gets 0.25.
        ("normal,easy,easy,easy", 300, 0.4),
        # Measured: about 0.36 (goal 0.325); a normal in its place gets 0.25 (+- 0.042 over 400 games).
        ("hard,normal,normal,normal", 400, 0.3),
    ],
)
def test_a_level_beats_weaker_ones(seats: str, games: int, at_least: float) -> None:
    summary = run_arena(seats.split(","), games, seed=2026).summary()
    assert summary["illegal_moves"] == 0
    assert summary["seats"][0]["win_share"] >= at_least, summary["seats"]
