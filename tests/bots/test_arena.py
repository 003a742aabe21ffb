"""The arena: bots fed exactly their seat's views, zero illegal moves in every setting, on a clock (think times,
too-early draws tried again, turn timers), the JSON figures and the table of pairings."""

from __future__ import annotations

import json
import random
from collections.abc import Mapping
from typing import Any

import pytest

from crisp_server.__main__ import main
from crisp_server.bots import LEVELS
from crisp_server.bots.timing import CRISP_MS, MOVE_MS
from crisp_server.engine import DRAW_BLOCK_MS, Game, Options
from crisp_server.engine.views import seat_view
from crisp_server.tools.arena import message_to_action, play_game, run_arena
from crisp_server.wire.protocol import BadMessage

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
        (["--score-limit", "50,0"], "score_limit"),
        (["--score-limit", "50;100"], "--score-limit takes whole numbers"),
        (["--table", "--score-limit", "x"], "--score-limit takes whole numbers"),
    ],
)
def test_arena_refuses_bad_arguments(args: list[str], says: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["arena", *args]) == 2
    assert says in capsys.readouterr().err


# -- the clock ---------------------------------------------------------------------------------------------


def test_bots_take_their_think_time_and_draws_in_the_block_are_tried_again() -> None:
    """Every draw comes at least a think time after its turn began, every call a moment after its window
    opened; a draw tried while the previous player may still call is refused, counted, and tried again."""
    checked = {"draws": 0, "calls": 0, "in_block": 0}
    turn_at: dict[int, int] = {}
    window_at: dict[int, int] = {}

    def watch(game: Game, seat: int, update: Mapping[str, Any]) -> None:
        if seat != 0:
            return  # the public events once
        r = game.round
        assert r is not None
        for e in update["events"]:
            if e["type"] == "turn_started":
                turn_at[e["seat"]] = e["at"]
            elif e["type"] == "window_opened":
                window_at[e["seat"]] = e["at"]
            elif e["type"] == "drew":
                checked["draws"] += 1
                started = turn_at[e["seat"]]
                assert r.now - started >= MOVE_MS[0], "a draw before any think time"
                if r.now == started + DRAW_BLOCK_MS:
                    checked["in_block"] += 1  # tried during the block, drawn the instant it ended
            elif e["type"] == "crisp_called":
                checked["calls"] += 1
                assert r.now - window_at[e["seat"]] >= CRISP_MS[0]
            elif e["type"] == "round_started":
                turn_at.clear()
                window_at.clear()

    result = play_game(["hard", "normal", "easy", "hard"], random.Random(21), Options(score_limit=60), on_feed=watch)
    assert result.illegal_moves == 0
    assert result.timed_out == 0, "no turn timer, nobody away: nothing times out"
    assert result.too_early > 0
    assert checked["in_block"] > 0
    assert checked["draws"] > 50
    assert checked["calls"] > 0


def test_a_turn_timer_times_slow_moves_out() -> None:
    """With a two-second turn timer, a draw and a play of 0.7 to 2 seconds each after a time-out (the next
    turn has no draw block) often run out: the move is timed out as in a room, and the bots go on from there."""
    timed: list[dict[str, Any]] = []

    def watch(game: Game, seat: int, update: Mapping[str, Any]) -> None:
        if seat == 0:
            timed.extend(e for e in update["events"] if e["type"] == "timed_out")

    result = play_game(
        ["hard", "normal", "easy"], random.Random(8), Options(score_limit=40, turn_seconds=2), on_feed=watch
    )
    assert result.illegal_moves == 0
    assert result.timed_out == len(timed) > 0
    summary = run_arena(["hard", "normal"], 3, seed=4, options=Options(score_limit=40, turn_seconds=2)).summary()
    assert summary["timed_out"] > 0
    assert summary["options"] == {"score_limit": 40, "turn_seconds": 2, "discard_draw": False}


def test_arena_score_limits(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["arena", "--games", "3", "--seats", "hard,easy", "--score-limit", "30,60", "--discard-draw", "--json"]
    assert main(args) == 0
    out = json.loads(capsys.readouterr().out)
    assert [run["options"] for run in out] == [
        {"score_limit": 30, "turn_seconds": None, "discard_draw": True},
        {"score_limit": 60, "turn_seconds": None, "discard_draw": True},
    ]
    assert all(run["too_early"] > 0 for run in out)
    # The same seed at each limit: the first cell is the run of that limit alone.
    alone = run_arena(["hard", "easy"], 3, seed=1, options=Options(score_limit=30, discard_draw=True)).summary()
    assert out[0]["seats"] == json.loads(json.dumps(alone["seats"]))  # decision times aside (wall clock)


def test_arena_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["arena", "--table", "--games", "4", "--score-limit", "30,40", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    cells = [(r["level"], r["against"], r["score_limit"]) for r in out["rows"]]
    assert cells == [
        ("normal", "easy", 30),
        ("normal", "easy", 40),
        ("hard", "normal", 30),
        ("hard", "normal", 40),
        ("hard", "easy", 30),
        ("hard", "easy", 40),
    ]
    assert [r["goal"] for r in out["rows"][::2]] == [0.375, 0.325, None]
    for row in out["rows"]:
        low, high = row["win_share_ci95"]
        assert low <= row["win_share"] <= high
        assert row["illegal_moves"] == 0
    first = run_arena(["normal", "easy", "easy", "easy"], 4, seed=1, options=Options(score_limit=30)).summary()
    assert out["rows"][0]["win_share"] == first["seats"][0]["win_share"]

    assert main(["arena", "--table", "--games", "2", "--score-limit", "30"]) == 0
    text = capsys.readouterr().out
    assert "hard vs 3 normal    0.325" in text
    assert "limit 30" in text
    assert "illegal moves: 0" in text
