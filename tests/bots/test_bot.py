"""A bot says when it has something to decide, and the pause policy stays human and inside the rules."""

from __future__ import annotations

import random

import pytest

from crisp_server.bots import Bot, Due, pause_ms
from crisp_server.bots.timing import MOVE_MS
from crisp_server.engine import CallCrisp, Discard, Draw, Event, Game, Options, event_to_dict, visible_to
from crisp_server.engine.views import private_view, table_view
from crisp_server.tools.arena import message_to_action
from crisp_server.tools.simulate import shuffled_deck


def _feed(game: Game, bots: list[Bot], events: list[Event]) -> None:
    table = table_view(game)
    for seat, bot in enumerate(bots):
        visible = [event_to_dict(e) for e in events if visible_to(e, seat)]
        bot.observe({"type": "update", "table": table, "you": private_view(game, seat), "events": visible})


def test_due_follows_the_turn_the_draw_block_and_the_crisp_window() -> None:
    game = Game(["A", "B"], Options(), first_dealer=1)
    bots = [Bot("normal", random.Random(1)), Bot("normal", random.Random(2))]
    assert bots[0].due() is None  # before the first deal
    deck = shuffled_deck(random.Random(3))
    deck.remove("5C")
    deck.insert(6, "5C")  # the first card drawn: a number card, so the turn ends with its play
    _feed(game, bots, list(game.start_round(deck)))
    assert bots[0].due() == Due("move", 0, None)
    assert bots[1].due() is None
    assert bots[1].decide() is None
    _feed(game, bots, list(game.apply(Draw(0))))
    message = bots[0].decide()
    assert message is not None
    assert message["type"] in ("swap", "discard")
    _feed(game, bots, list(game.apply(message_to_action(0, message))))
    assert bots[0].due() == Due("crisp", 0, 3000)
    # The next player's draw is blocked for two seconds: it is told from when it may act.
    assert bots[1].due() == Due("move", 2000, None)
    assert bots[1].decide() == {"type": "draw", "from": "deck"}


def test_an_unknown_level_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown level 'genius'"):
        Bot("genius", random.Random(1))


@pytest.mark.parametrize(
    ("due", "low", "high"),
    [
        (Due("move", 0, None), 700, 2000),
        (Due("crisp", 0, 3000), 350, 1200),
    ],
)
def test_pauses_are_human(due: Due, low: int, high: int) -> None:
    rng = random.Random(4)
    pauses = [pause_ms(due, rng) for _ in range(500)]
    assert min(pauses) >= low
    assert max(pauses) <= high
    assert max(pauses) - min(pauses) > (high - low) / 2  # they vary


def test_final_turns_are_played_at_the_pace_of_any_move() -> None:
    # People at the table follow the final turns as they follow any other: no hurry after a Crisp call.
    game = Game(["A", "B"], Options(), first_dealer=1)
    bots = [Bot("normal", random.Random(1)), Bot("normal", random.Random(2))]
    deck = shuffled_deck(random.Random(3))
    deck.remove("5C")
    deck.insert(6, "5C")  # the first card drawn: a number card, so the turn ends with its play
    _feed(game, bots, list(game.start_round(deck)))
    _feed(game, bots, list(game.apply(Draw(0))))
    _feed(game, bots, list(game.apply(Discard(0))))
    _feed(game, bots, list(game.apply(CallCrisp(0))))
    due = bots[1].due()
    assert due is not None
    assert due.kind == "move"
    assert bots[1].memory.final_turns
    rng = random.Random(6)
    pauses = [pause_ms(due, rng) for _ in range(500)]
    assert min(pauses) >= MOVE_MS[0]
    assert max(pauses) <= MOVE_MS[1]
    assert max(pauses) - min(pauses) > (MOVE_MS[1] - MOVE_MS[0]) / 2


def test_a_crisp_pause_never_outlasts_the_window() -> None:
    late = Due("crisp", 2500, 3000)  # the bot learned of its window late
    assert all(pause_ms(late, random.Random(s)) <= 200 for s in range(100))


def test_nothing_is_due_while_the_room_is_not_in_play() -> None:
    game = Game(["A", "B"], Options(), first_dealer=1)
    bot = Bot("hard", random.Random(1))
    events = game.start_round(shuffled_deck(random.Random(3)))
    update = {
        "table": table_view(game),
        "you": private_view(game, 0),
        "events": [event_to_dict(e) for e in events if visible_to(e, 0)],
    }
    seats = [{"name": n, "connected": True, "left": False, "ready": True} for n in "AB"]
    bot.observe({**update, "room": {"phase": "peek", "seats": seats}})
    assert bot.due() is None  # it said ready: no move is due before play
    bot.observe({**update, "events": [], "room": {"phase": "play"}})
    assert bot.due() == Due("move", 0, None)


def _room_update(phase: str, ready: list[bool], me: int) -> dict[str, object]:
    seats = [{"name": f"P{i}", "connected": True, "left": False, "ready": r} for i, r in enumerate(ready)]
    return {"type": "update", "room": {"phase": phase, "seats": seats}, "table": None, "you": {"seat": me, "can": []}}


@pytest.mark.parametrize("phase", ["peek", "round_over"])
def test_a_bot_says_ready_once_in_the_peek_and_between_rounds(phase: str) -> None:
    bot = Bot("easy", random.Random(1))
    bot.observe(_room_update(phase, [False, False], 1))
    assert bot.due() == Due("ready", 0, None)
    assert bot.decide() == {"type": "ready"}
    bot.observe(_room_update(phase, [False, True], 1))  # its ready went through: nothing more to say
    assert bot.due() is None
    assert bot.decide() is None


@pytest.mark.parametrize("phase", ["lobby", "play", "game_over"])
def test_a_bot_is_never_ready_outside_a_peek_or_a_pause(phase: str) -> None:
    bot = Bot("hard", random.Random(1))
    bot.observe(_room_update(phase, [False, False], 0))
    assert bot.due() is None


@pytest.mark.parametrize(("phase", "low", "high"), [("peek", 1500, 3500), ("round_over", 1500, 4000)])
def test_ready_pauses_leave_time_to_look(phase: str, low: int, high: int) -> None:
    rng = random.Random(5)
    pauses = [pause_ms(Due("ready", 0, None), rng, phase) for _ in range(300)]
    assert low <= min(pauses)
    assert max(pauses) <= high
    assert max(pauses) - min(pauses) > (high - low) // 2
