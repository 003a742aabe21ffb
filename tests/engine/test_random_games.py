"""Random full games for 2 to 8 players under every option the lobby offers.

Each game is played to its end by the simulator's random players (legal moves, pauses around the window and
clock boundaries, the odd illegal action and forced time-out). Every step is checked for leaks and lost
cards, the result is checked against the scoring rules, and the game's record must replay to the very same
states.
"""

from __future__ import annotations

import itertools
import json
import random
from dataclasses import dataclass, field

import pytest

from crisp_server.engine import (
    Event,
    Game,
    Options,
    Rejected,
    Timed,
    hand_sum,
    loads_record,
    record_to_dict,
    replay,
    replay_game,
)
from crisp_server.tools.simulate import Style, play_random_game

from .knowledge import Knowledge, check_cards_conserved

pytestmark = pytest.mark.slow

PLAYERS = (2, 3, 5, 8)
SCORE_LIMITS = (50, 100, 150)
TURN_SECONDS = (None, 30, 45, 60)
DISCARD_DRAW = (False, True)
#: Players who rarely call Crisp (long rounds, so the discard pile is turned over) and who err, dawdle and
#: get timed out far more often than the default ones.
CHAOTIC = Style(crisp=0.02, mistake=0.2, slow=0.1, forced_timeout=0.05)


def _id(players: int, score_limit: int, turn_seconds: int | None, discard_draw: bool) -> str:
    clock = f"{turn_seconds}s" if turn_seconds is not None else "untimed"
    return f"{players}p-{score_limit}-{clock}-{'dd' if discard_draw else 'nodd'}"


COMBINATIONS = [
    pytest.param(*combination, id=_id(*combination))
    for combination in itertools.product(PLAYERS, SCORE_LIMITS, TURN_SECONDS, DISCARD_DRAW)
]


@dataclass
class Watcher:
    """The ``on_step`` callback: checks every step and remembers the rejections, as replay lists them."""

    knowledge: Knowledge | None = None
    rejected: list[dict[str, object]] = field(default_factory=list)
    steps: int = 0
    _actions_in_round: int = 0
    _round_index: int = -1

    def __call__(self, game: Game, timed: Timed, events: list[Event], rejected: Rejected | None) -> None:
        r = game.round
        assert r is not None
        if self.knowledge is None:
            self.knowledge = Knowledge(game)
        if r.index != self._round_index:
            self._round_index, self._actions_in_round = r.index, 0
        if rejected is not None:
            self.rejected.append({"round": r.index, "index": self._actions_in_round, "code": rejected.code.value})
        self._actions_in_round += 1
        self.steps += 1
        assert r.now == timed.at
        check_cards_conserved(r)
        self.knowledge.learn(game, timed.action, accepted=rejected is None)
        self.knowledge.check_events(events)
        self.knowledge.check_views(game)


def _play_and_check(players: int, options: Options, seed: str, style: Style | None = None) -> None:
    watcher = Watcher()
    game, record = play_random_game(players, options, random.Random(seed), style=style, on_step=watcher)
    assert watcher.steps > 0

    # The game ran to its end, and the result follows the scoring rules.
    assert game.game_over
    assert all(r.ended for r in game.rounds)
    running = [0] * players
    for r in game.rounds:
        assert r.sums is not None
        assert r.points is not None
        assert list(r.sums) == [hand_sum(hand) for hand in r.hands]
        running = [t + p for t, p in zip(running, r.points, strict=True)]
    assert game.totals == running
    assert max(game.totals) >= options.score_limit
    # Only the last round reached the limit: the game would have ended earlier otherwise.
    last_points = game.rounds[-1].points
    assert last_points is not None
    assert max(t - p for t, p in zip(game.totals, last_points, strict=True)) < options.score_limit
    lowest = min(game.totals)
    assert list(game.winners) == [s for s, total in enumerate(game.totals) if total == lowest]

    # The record survives JSON and replays to the same game.
    loaded = loads_record(json.dumps(record_to_dict(record)))
    assert loaded == record
    result = replay(loaded)
    assert result["game_over"] is True
    assert result["winners"] == list(game.winners)
    assert result["rejected"] == watcher.rejected
    assert result["rounds"][-1]["totals"] == game.totals
    assert [rr["hands"] for rr in result["rounds"]] == [[list(h) for h in r.hands] for r in game.rounds]
    assert [rr["points"] for rr in result["rounds"]] == [list(r.points or ()) for r in game.rounds]
    replayed, rejected = replay_game(loaded)
    assert rejected == watcher.rejected
    assert [r.snapshot() for r in replayed.rounds] == [r.snapshot() for r in game.rounds]
    assert replayed.totals == game.totals
    assert replayed.winners == game.winners


@pytest.mark.parametrize(("players", "score_limit", "turn_seconds", "discard_draw"), COMBINATIONS)
def test_random_game(players: int, score_limit: int, turn_seconds: int | None, discard_draw: bool) -> None:
    options = Options(score_limit, turn_seconds, discard_draw)
    _play_and_check(players, options, seed=_id(players, score_limit, turn_seconds, discard_draw))


@pytest.mark.parametrize(("players", "score_limit", "turn_seconds", "discard_draw"), COMBINATIONS[::5])
def test_random_game_with_chaotic_players(
    players: int, score_limit: int, turn_seconds: int | None, discard_draw: bool
) -> None:
    options = Options(score_limit, turn_seconds, discard_draw)
    seed = "chaotic-" + _id(players, score_limit, turn_seconds, discard_draw)
    _play_and_check(players, options, seed=seed, style=CHAOTIC)
