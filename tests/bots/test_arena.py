"""The arena: bots fed exactly their seat's views, zero illegal moves in every setting, the JSON figures."""

from __future__ import annotations

import json
import random
from collections.abc import Mapping
from typing import Any

import pytest

from crisp_server.__main__ import main
from crisp_server.arena import message_to_action, play_game, run_arena
from crisp_server.bots import LEVELS
from crisp_server.engine import Game, Options
from crisp_server.engine.views import seat_view
from crisp_server.protocol import BadMessage

pytestmark = pytest.mark.slow

ALL_OPTIONS = [
    Options(score_limit=limit, turn_seconds=seconds, discard_draw=discard)
    for limit in (50,)
    for seconds in (None, 30)
    for discard in (False, True)
]


@pytest.mark.parametrize("options", ALL_OPTIONS, ids=lambda o: f"timer={o.turn_seconds}-discard_draw={o.discard_draw}")
@pytest.mark.parametrize("players", range(2, 9))
def test_no_level_makes_an_illegal_move(players: int, options: Options) -> None:
    rng = random.Random(players * 100 + (options.turn_seconds or 0) + options.discard_draw)
    levels = list(LEVELS)
    for game in range(6):
        seats = [levels[(game + i) % len(levels)] for i in range(players)]
        # Now and then the server times a move out (a player away): the bots must follow that too.
        result = play_game(seats, rng, options, timeouts=0.03 if game % 2 else 0.0)
        assert result.illegal_moves == 0, seats


def test_a_bot_is_fed_exactly_its_seats_view_and_events() -> None:
    fed = 0

    def check(game: Game, seat: int, update: Mapping[str, Any]) -> None:
        nonlocal fed
        fed += 1
        view = seat_view(game, seat)
        assert update["table"] == view["table"]
        assert update["you"] == view["you"]
        assert set(update) == {"type", "table", "you", "events"}
        for event in update["events"]:
            # A private event is always this seat's own (its peeks, its drawn card).
            if event["type"] == "card_shown":
                assert event["seat"] == seat

    play_game(["hard", "normal", "easy", "random"], random.Random(5), Options(discard_draw=True), on_feed=check)
    assert fed > 100


def test_the_events_a_bot_gets_are_the_engines_events_it_may_see() -> None:
    seen: list[list[dict[str, Any]]] = [[], []]

    def record(game: Game, seat: int, update: Mapping[str, Any]) -> None:
        seen[seat].extend(update["events"])

    play_game(["hard", "hard"], random.Random(9), Options(score_limit=30), on_feed=record)
    mine = [e for e in seen[0] if e["type"] == "card_shown"]
    theirs = [e for e in seen[1] if e["type"] == "card_shown"]
    assert mine
    assert theirs
    assert all(e["seat"] == 0 for e in mine)
    assert all(e["seat"] == 1 for e in theirs)
    public0 = [e for e in seen[0] if e["type"] != "card_shown"]
    public1 = [e for e in seen[1] if e["type"] != "card_shown"]
    assert public0 == public1


def test_a_message_is_parsed_like_a_clients() -> None:
    assert message_to_action(2, {"type": "queen", "slot": "left", "target": 0, "target_slot": "middle"}).seat == 2
    with pytest.raises(BadMessage):
        message_to_action(0, {"type": "swap", "slot": "top"})
    with pytest.raises(BadMessage):
        message_to_action(0, {"type": "ready"})


def test_an_illegal_move_is_counted() -> None:
    class Blunder:
        """A level that always tries to swap, also a Jack from the draw pile (the engine refuses it)."""

        name = "blunder"

        def draw(self, m: Any, rng: random.Random) -> Any:
            return LEVELS["normal"]().draw(m, rng)

        def play(self, m: Any, rng: random.Random) -> Any:
            from crisp_server.bots.moves import Decision, swap

            return Decision(swap(0))

        def crisp(self, m: Any, rng: random.Random) -> None:
            return None

    LEVELS["blunder"] = Blunder
    try:
        result = play_game(["blunder", "normal"], random.Random(3), Options(score_limit=30))
    finally:
        del LEVELS["blunder"]
    assert result.illegal_moves > 0


def test_the_same_seed_gives_the_same_run() -> None:
    a = run_arena(["hard", "random"], 5, seed=11).summary()
    b = run_arena(["hard", "random"], 5, seed=11).summary()
    assert a["seats"] == b["seats"]


def test_arena_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["arena", "--games", "4", "--seats", "hard,normal,easy", "--seed", "2", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["games"] == 4
    assert out["illegal_moves"] == 0
    assert [s["level"] for s in out["seats"]] == ["hard", "normal", "easy"]
    for s in out["seats"]:
        low, high = s["win_share_ci95"]
        assert 0 <= s["win_share"] <= 1
        assert low <= s["win_share"] <= high
        assert s["mean_points"] > 0
    assert abs(sum(s["win_share"] for s in out["seats"]) - 1) < 1e-3
    assert 0 < out["decision_ms"]["median"] <= out["decision_ms"]["p99"]


def test_arena_text(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["arena", "--games", "2", "--seats", "normal,random"]) == 0
    out = capsys.readouterr().out
    assert "win share" in out
    assert "illegal moves: 0" in out
    assert "decision time: median" in out


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--seats", "hard"], "2 to 8 levels"),
        (["--seats", "hard,genius"], "unknown level 'genius'"),
        (["--games", "0"], "--games must be at least 1"),
        (["--score-limit", "0"], "score_limit"),
    ],
)
def test_arena_refuses_bad_arguments(args: list[str], says: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["arena", *args]) == 2
    assert says in capsys.readouterr().err
