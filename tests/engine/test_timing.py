"""Every timing boundary of ``docs/rules.md`` at its exact instant: the crisp window, the two-second draw block,
the turn clock, King chains under a clock, time-outs and their chains, the pile flip, ``next_deadline``.

Unless a test says otherwise the table is three players, dealer 0, so the turn order is seat 1, seat 2,
seat 0. The deal gives deck[0..2] to the left slots of seats 1, 2, 0, deck[3..5] to their middles and
deck[6..8] to their rights; deck[9] is the top of the draw pile. Cards not placed by a test follow
``FULL_DECK`` order (A, 2, 3, ... rank by rank), so the first cards drawn are plain low cards.

Most tests start from "seat 1 drew at 0 and discarded at ``T`` = 100": its turn ended normally at T, so
its crisp window is open for ``T <= t < T + 3000`` and seat 2 may draw from ``T + 2000`` on.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from crisp_server.engine import (
    Action,
    CallCrisp,
    Code,
    Discard,
    Draw,
    Event,
    Game,
    Options,
    Round,
    Slot,
    Source,
    Swap,
    TimeOut,
    UseKing,
    event_to_dict,
    redone_by_resume,
)
from crisp_server.engine.game import ROUND_STATE
from tests.engine.helpers import PLAYERS, deck_with, new_game, run

NAMES = ("Ana", "Ben", "Cem", "Dana", "Eli", "Fay", "Gus", "Hal")
T = 100  # when seat 1's first turn ends in the tests that start from seat1_turn_ended()
TEN_S = 10  # the turn clock, in seconds, where a test needs one
LIMIT = TEN_S * 1000

Setup = Callable[[], Game]


def refusal(game: Game, action: Action, at: int) -> Code | None:
    """The code ``action`` at ``at`` is refused with, or ``None`` if it is applied."""
    _, rejected = game.act(action, at)
    return None if rejected is None else rejected.code


def kinds(events: list[Event]) -> list[str]:
    return [e.kind for e in events]


def seat1_turn_ended(turn_seconds: int | None = None) -> Game:
    """Seat 1 drew at 0 and discarded at T: window until T+3000, seat 2 may draw from T+2000."""
    return run(new_game(turn_seconds=turn_seconds), [(0, Draw(1)), (T, Discard(1))])


def play_move(game: Game, seat: int, at: int) -> None:
    """One whole move at ``at``: draw from the draw pile (if not drawn yet) and discard the card."""
    r = game.round
    assert r is not None
    steps: list[tuple[int, Action]] = [] if r.drawn is not None else [(at, Draw(seat))]
    run(game, [*steps, (at, Discard(seat))])


# -- the draw block and the crisp window --------------------------------------------------------------


@pytest.mark.parametrize("turn_seconds", [None, 30], ids=["no clock", "30 s clock"])
@pytest.mark.parametrize(
    ("offset", "code"),
    [
        pytest.param(0, Code.TOO_EARLY, id="T+0"),
        pytest.param(1, Code.TOO_EARLY, id="T+1"),
        pytest.param(1999, Code.TOO_EARLY, id="T+1999"),
        pytest.param(2000, None, id="T+2000"),
        pytest.param(2001, None, id="T+2001"),
        pytest.param(2999, None, id="T+2999"),
        pytest.param(3000, None, id="T+3000"),
    ],
)
def test_next_player_may_draw_from_T_plus_2000(offset: int, code: Code | None, turn_seconds: int | None) -> None:
    game = seat1_turn_ended(turn_seconds)
    assert refusal(game, Draw(2), T + offset) is code
    r = game.round
    assert r is not None
    assert (r.drawn is not None) is (code is None)


def test_a_refused_early_draw_does_not_delay_the_block() -> None:
    game = seat1_turn_ended()
    assert refusal(game, Draw(2), T + 1999) is Code.TOO_EARLY
    assert refusal(game, Draw(2), T + 2000) is None


@pytest.mark.parametrize(
    ("offset", "code"),
    [
        pytest.param(0, None, id="T+0"),
        pytest.param(1999, None, id="T+1999 (in the block)"),
        pytest.param(2000, None, id="T+2000 (next move started)"),
        pytest.param(2999, None, id="T+2999"),
        pytest.param(3000, Code.CRISP_NOT_ALLOWED, id="T+3000"),
        pytest.param(3001, Code.CRISP_NOT_ALLOWED, id="T+3001"),
        pytest.param(60_000, Code.CRISP_NOT_ALLOWED, id="a minute later"),
    ],
)
def test_crisp_window_is_T_to_T_plus_3000_exclusive(offset: int, code: Code | None) -> None:
    game = seat1_turn_ended()
    assert refusal(game, CallCrisp(1), T + offset) is code
    r = game.round
    assert r is not None
    if code is None:
        assert r.caller == 1
        assert r.final_turns_left == 2
    else:
        assert r.caller is None
        assert r.final_turns_left is None


def test_window_events_give_the_exact_instants() -> None:
    game = new_game()
    run(game, [(0, Draw(1))])
    events = game.apply(Discard(1))  # at 0
    opened = [event_to_dict(e) for e in events if e.kind in ("window_opened", "turn_started")]
    assert opened == [
        {"type": "window_opened", "seat": 1, "at": 0, "closes_at": 3000},
        {"type": "turn_started", "seat": 2, "at": 0, "may_draw_at": 2000, "final_turn": False},
    ]
    assert kinds(game.advance(1999)) == []
    assert kinds(game.advance(2000)) == ["move_started"]
    assert kinds(game.advance(2999)) == []
    assert kinds(game.advance(3000)) == ["window_closed"]


@pytest.mark.parametrize("call_offset", [0, 1, 500, 1999], ids=lambda o: f"call at T+{o}")
def test_call_during_the_block_lets_the_next_player_draw_at_once(call_offset: int) -> None:
    game = seat1_turn_ended(TEN_S)
    call = T + call_offset
    events, rejected = game.act(CallCrisp(1), call)
    assert rejected is None
    r = game.round
    assert r is not None
    assert "move_started" in kinds(events)
    assert r.move_started
    assert r.move_start == call
    assert r.window_seat is None
    assert game.deadline() == call + LIMIT
    assert game.next_deadline() == call + LIMIT
    assert refusal(game, Draw(2), call) is None


@pytest.mark.parametrize(
    ("after", "timed_out"),
    [pytest.param(LIMIT - 1, False, id="call+limit-1"), pytest.param(LIMIT, True, id="call+limit")],
)
def test_after_a_call_in_the_block_the_move_clock_runs_from_the_call(after: int, timed_out: bool) -> None:
    game = seat1_turn_ended(TEN_S)
    call = T + 700
    run(game, [(call, CallCrisp(1)), (call + 100, Draw(2))])
    r = game.round
    assert r is not None
    code = refusal(game, Discard(2), call + after)
    assert (code is not None) is timed_out
    assert r.timeouts == ([(2, call + after)] if timed_out else [])


@pytest.mark.parametrize("n", [2, 3, 4, 8])
@pytest.mark.parametrize("when", ["in the block", "next move started", "next player has drawn"])
def test_the_turn_right_after_the_caller_is_the_first_final_turn(n: int, when: str) -> None:
    game = new_game(players=NAMES[:n])
    run(game, [(0, Draw(1)), (T, Discard(1))])
    nxt = 2 % n
    call = T + 1000 if when == "in the block" else T + 2500
    if when == "next player has drawn":
        run(game, [(T + 2000, Draw(nxt))])
    run(game, [(call, CallCrisp(1))])
    r = game.round
    assert r is not None
    assert (r.caller, r.turn, r.final_turns_left) == (1, nxt, n - 1)
    # Play every final turn out: exactly the n-1 other seats, clockwise, each starting at once.
    now = call
    played: list[int] = []
    while not r.ended:
        assert r.final_turns_left == n - 1 - len(played)
        assert r.window_seat is None
        assert r.move_started
        played.append(r.turn)
        now += 10
        play_move(game, r.turn, now)
    assert played == [(1 + k) % n for k in range(1, n)]
    assert r.end_at == now


def test_call_after_the_next_player_drew_keeps_that_players_drawn_card() -> None:
    game = seat1_turn_ended()
    run(game, [(T + 2000, Draw(2)), (T + 2999, CallCrisp(1))])
    r = game.round
    assert r is not None
    assert r.drawn is not None  # the started move goes on: it is the first final turn
    assert refusal(game, Discard(2), T + 3500) is None
    assert (r.turn, r.final_turns_left, r.move_start) == (0, 1, T + 3500)


def test_a_call_during_the_next_players_king_chain_makes_the_whole_turn_the_first_final_turn() -> None:
    # Seat 2's King's extra moves do not end its turn, so seat 1's window stays open until T+3000.
    game = new_game({10: "KS"})
    r = game.round
    assert r is not None
    run(game, [(0, Draw(1)), (T, Discard(1)), (T + 2000, Draw(2)), (T + 2100, UseKing(2))])
    assert (r.turn, r.extra_moves, r.window_seat) == (2, 1, 1)
    run(game, [(T + 2999, CallCrisp(1))])
    assert (r.turn, r.final_turns_left) == (2, 2)
    play_move(game, 2, T + 3100)
    assert (r.turn, r.final_turns_left) == (2, 2)  # still seat 2: its second extra move
    play_move(game, 2, T + 3200)
    assert (r.turn, r.final_turns_left, r.move_start) == (0, 1, T + 3200)


def test_the_window_closes_by_time_during_the_next_players_king_chain() -> None:
    game = new_game({10: "KS"})
    r = game.round
    assert r is not None
    run(game, [(0, Draw(1)), (T, Discard(1)), (T + 2000, Draw(2)), (T + 2100, UseKing(2))])
    assert refusal(game, CallCrisp(1), T + 3000) is Code.CRISP_NOT_ALLOWED
    assert (r.turn, r.extra_moves, r.window_seat) == (2, 1, None)


# -- the window closes early, and where there is none --------------------------------------------------


def test_window_closes_when_the_next_turn_ends_and_a_new_one_opens() -> None:
    game = seat1_turn_ended()
    run(game, [(T + 2000, Draw(2))])
    events = game.apply(Discard(2))  # at T+2000, before seat 1's window would close at T+3000
    assert kinds(events)[:3] == ["discarded", "window_closed", "window_opened"]
    r = game.round
    assert r is not None
    assert (r.window_seat, r.window_closes, r.move_start, r.move_started) == (2, T + 5000, T + 4000, False)
    assert refusal(game, CallCrisp(1), T + 2001) is Code.CRISP_NOT_ALLOWED
    assert refusal(game, CallCrisp(2), T + 2001) is None
    assert r.caller == 2


def test_window_closes_when_the_next_turn_ends_by_a_time_out() -> None:
    game = seat1_turn_ended()
    run(game, [(T + 500, TimeOut(2))])  # seat 2 is timed out inside the block
    r = game.round
    assert r is not None
    assert r.window_seat is None
    assert (r.turn, r.move_start, r.move_started) == (0, T + 500, True)
    assert refusal(game, CallCrisp(1), T + 500) is Code.CRISP_NOT_ALLOWED
    assert refusal(game, CallCrisp(2), T + 500) is Code.CRISP_NOT_ALLOWED
    assert refusal(game, Draw(0), T + 500) is None


def _after_timeout_action() -> Game:
    return run(new_game(), [(500, TimeOut(1))])


def _after_clock_timeout() -> Game:
    game = new_game(turn_seconds=5)
    game.advance(5000)
    return game


def _after_a_final_turn() -> Game:
    return run(seat1_turn_ended(), [(T + 500, CallCrisp(1)), (T + 600, Draw(2)), (T + 700, Discard(2))])


def _after_the_last_final_turn() -> Game:
    game = _after_a_final_turn()
    return run(game, [(T + 800, Draw(0)), (T + 900, Discard(0))])


@pytest.mark.parametrize(
    ("setup", "finisher", "now", "next_start", "code"),
    [
        pytest.param(_after_timeout_action, 1, 500, 500, Code.CRISP_NOT_ALLOWED, id="after a timeout action"),
        pytest.param(_after_clock_timeout, 1, 5000, 5000, Code.CRISP_NOT_ALLOWED, id="after the clock ran out"),
        pytest.param(_after_a_final_turn, 2, T + 700, T + 700, Code.CRISP_NOT_ALLOWED, id="after a final turn"),
        pytest.param(_after_the_last_final_turn, 0, T + 900, None, Code.ROUND_OVER, id="after the last final turn"),
    ],
)
def test_no_window(setup: Setup, finisher: int, now: int, next_start: int | None, code: Code) -> None:
    game = setup()
    r = game.round
    assert r is not None
    assert r.window_seat is None
    assert not game.can_call_crisp(finisher)
    if next_start is None:
        assert r.ended
    else:  # the next turn starts at once: its move is under way, and its draw is allowed now
        assert (r.move_start, r.move_started) == (next_start, True)
        assert refusal(game, Draw(r.turn), now) is None
    assert refusal(game, CallCrisp(finisher), now) is code


# -- the move clock ----------------------------------------------------------------------------------------


def _first_move() -> Game:
    return new_game(turn_seconds=TEN_S)


def _first_move_drawn_late() -> Game:
    # The clock runs from the move's start, not from the draw.
    return run(new_game(turn_seconds=TEN_S), [(4000, Draw(1))])


def _after_a_window() -> Game:
    return seat1_turn_ended(TEN_S)


def _after_a_call_in_the_block() -> Game:
    return run(seat1_turn_ended(TEN_S), [(T + 500, CallCrisp(1))])


def _after_a_time_out() -> Game:
    game = new_game(turn_seconds=TEN_S)
    game.advance(LIMIT)
    return game


def _extra_move() -> Game:
    return run(new_game({9: "KS"}, turn_seconds=TEN_S), [(1000, Draw(1)), (3000, UseKing(1))])


def _last_final_turn() -> Game:
    return run(seat1_turn_ended(TEN_S), [(T + 500, CallCrisp(1)), (T + 600, Draw(2)), (T + 800, Discard(2))])


CLOCKS = [
    pytest.param(_first_move, 1, LIMIT, id="first move of the round starts at 0"),
    pytest.param(_first_move_drawn_late, 1, LIMIT, id="first move, card drawn late"),
    pytest.param(_after_a_window, 2, T + 2000 + LIMIT, id="after a crisp window: starts at T+2000"),
    pytest.param(_after_a_call_in_the_block, 2, T + 500 + LIMIT, id="after a call in the block: starts at the call"),
    pytest.param(_after_a_time_out, 2, 2 * LIMIT, id="after a time-out: starts at the time-out"),
    pytest.param(_extra_move, 1, 3000 + LIMIT, id="extra move: starts when the King was used"),
    pytest.param(_last_final_turn, 0, T + 800 + LIMIT, id="final turn: starts when the previous turn ended"),
]


def _next_action(game: Game, seat: int) -> Action:
    r = game.round
    assert r is not None
    return Draw(seat) if r.drawn is None else Discard(seat)


@pytest.mark.parametrize(("setup", "seat", "deadline"), CLOCKS)
def test_an_action_at_deadline_minus_1_is_in_time(setup: Setup, seat: int, deadline: int) -> None:
    game = setup()
    r = game.round
    assert r is not None
    assert game.deadline() == deadline
    timeouts = list(r.timeouts)
    assert refusal(game, _next_action(game, seat), deadline - 1) is None
    assert r.timeouts == timeouts


@pytest.mark.parametrize(("setup", "seat", "deadline"), CLOCKS)
def test_at_the_deadline_the_move_is_lost(setup: Setup, seat: int, deadline: int) -> None:
    game = setup()
    r = game.round
    assert r is not None
    action = _next_action(game, seat)
    timeouts = list(r.timeouts)
    assert refusal(game, action, deadline) is not None
    assert r.timeouts == [*timeouts, (seat, deadline)]
    assert r.drawn is None or r.turn != seat


def test_a_final_turn_lost_to_the_clock_ends_the_round_at_the_deadline() -> None:
    game = _last_final_turn()  # seat 0 plays the last final turn from T+800
    r = game.round
    assert r is not None
    events = game.advance(T + 800 + LIMIT)
    assert kinds(events)[-1] == "round_ended"
    assert (r.ended, r.end_at, r.timeouts) == (True, T + 800 + LIMIT, [(0, T + 800 + LIMIT)])
    assert game.next_deadline() is None


# -- King chains under a clock -----------------------------------------------------------------------------


def test_each_extra_move_gets_a_full_clock_from_the_end_of_the_previous_move() -> None:
    game = new_game({9: "KS"}, turn_seconds=TEN_S)
    r = game.round
    assert r is not None
    run(game, [(1000, Draw(1)), (3000, UseKing(1))])
    assert (r.turn, r.extra_moves, r.move_start, game.deadline()) == (1, 1, 3000, 3000 + LIMIT)
    # The first extra move uses its clock to the last millisecond but one.
    end1 = 3000 + LIMIT - 1
    run(game, [(end1, Draw(1)), (end1, Discard(1))])
    assert (r.turn, r.extra_moves, r.move_start, game.deadline()) == (1, 0, end1, end1 + LIMIT)
    end2 = end1 + LIMIT - 1
    run(game, [(end2, Draw(1)), (end2, Discard(1))])
    assert r.timeouts == []
    assert (r.turn, r.window_seat, r.window_closes, r.move_start) == (2, 1, end2 + 3000, end2 + 2000)


@pytest.mark.parametrize(
    ("second_king_at", "moves_after_it"),
    [
        pytest.param(10, 3, id="King in the first extra move: 3 more moves"),
        pytest.param(11, 2, id="King in the last extra move: 2 more moves"),
    ],
)
def test_a_king_in_an_extra_move_adds_two_more(second_king_at: int, moves_after_it: int) -> None:
    # deck[9] is the first King; the second King is drawn in the first or the second extra move.
    game = new_game({9: "KS", second_king_at: "KH"}, turn_seconds=TEN_S)
    r = game.round
    assert r is not None
    now = 0
    run(game, [(now, Draw(1)), (now, UseKing(1))])
    if second_king_at == 11:
        now += 100
        play_move(game, 1, now)
    now += 100
    run(game, [(now, Draw(1))])
    assert r.drawn == "KH"
    run(game, [(now, UseKing(1))])
    assert r.extra_moves == moves_after_it - 1  # extra moves left after the one now under way
    for _ in range(moves_after_it):
        assert r.turn == 1
        assert r.move_start == now  # each extra move's clock starts when the previous move ended
        now += 100
        play_move(game, 1, now)
    assert r.turn == 2
    assert r.window_seat == 1
    assert r.timeouts == []


def test_a_time_out_drops_the_remaining_extra_moves() -> None:
    game = new_game({9: "KS"}, turn_seconds=TEN_S)
    r = game.round
    assert r is not None
    run(game, [(0, Draw(1)), (500, UseKing(1))])
    assert r.extra_moves == 1
    events = game.advance(500 + LIMIT)
    assert r.timeouts == [(1, 500 + LIMIT)]
    assert (r.turn, r.extra_moves, r.window_seat, r.move_start, r.move_started) == (2, 0, None, 500 + LIMIT, True)
    assert "window_opened" not in kinds(events)


def test_a_king_drawn_but_not_played_at_the_time_out_gives_no_extra_moves() -> None:
    game = new_game({9: "KS"}, turn_seconds=TEN_S)
    r = game.round
    assert r is not None
    run(game, [(0, Draw(1))])
    game.advance(LIMIT)
    assert r.discard == ["KS"]
    assert (r.turn, r.extra_moves, r.drawn, r.timeouts) == (2, 0, None, [(1, LIMIT)])


def test_a_king_drawn_in_an_extra_move_is_lost_at_the_time_out_with_the_rest() -> None:
    game = new_game({9: "KS", 10: "KH"}, turn_seconds=TEN_S)
    r = game.round
    assert r is not None
    run(game, [(0, Draw(1)), (0, UseKing(1)), (100, Draw(1))])
    game.advance(LIMIT)
    assert r.discard == ["KS", "KH"]
    assert (r.turn, r.extra_moves, r.timeouts) == (2, 0, [(1, LIMIT)])


# -- the time-out procedure --------------------------------------------------------------------------------


@pytest.mark.parametrize("how", ["clock", "timeout action"])
@pytest.mark.parametrize(
    ("card", "drawn"),
    [
        pytest.param("JS", False, id="not drawn: the top card (a Jack) is drawn and discarded"),
        pytest.param("5H", True, id="a plain card drawn"),
        pytest.param("JS", True, id="a Jack drawn"),
        pytest.param("QS", True, id="a Queen drawn"),
        pytest.param("KS", True, id="a King drawn"),
    ],
)
def test_a_time_out_discards_the_card_unused(card: str, drawn: bool, how: str) -> None:
    game = new_game({9: card, 10: "4H"}, turn_seconds=TEN_S)
    r = game.round
    assert r is not None
    if drawn:
        run(game, [(1000, Draw(1))])
    hands = [list(h) for h in r.hands]
    reveals = [list(v) for v in r.reveals]
    at = 2000 if how == "timeout action" else LIMIT
    if how == "timeout action":
        run(game, [(at, TimeOut(1))])
    else:
        game.advance(at)
    assert r.discard == [card]
    assert r.draw_pile[-1] == "4H"  # exactly one card came off the draw pile
    assert len(r.draw_pile) == 52 - 9 - 1
    assert r.hands == hands  # without effect: no swap, no Queen exchange
    assert r.reveals == reveals  # no Jack look either
    assert (r.turn, r.drawn, r.extra_moves, r.window_seat) == (2, None, 0, None)
    assert r.timeouts == [(1, at)]


def test_a_time_out_returns_a_card_taken_from_the_discard_pile() -> None:
    game = new_game({0: "QS", 9: "5H"}, turn_seconds=TEN_S, discard_draw=True)
    r = game.round
    assert r is not None
    run(game, [(0, Draw(1)), (0, Swap(1, Slot.LEFT)), (2000, Draw(2, Source.DISCARD))])
    assert (r.drawn, r.discard) == ("QS", [])
    game.advance(2000 + LIMIT)
    assert r.discard == ["QS"]
    assert r.timeouts == [(2, 2000 + LIMIT)]
    assert r.hands[2] == [deck_with({0: "QS", 9: "5H"})[i] for i in (1, 4, 7)]


# -- chains of time-outs -------------------------------------------------------------------------------------


def test_a_long_gap_times_out_player_after_player_from_the_start() -> None:
    game = new_game(turn_seconds=5)
    r = game.round
    assert r is not None
    deck = deck_with({})
    events = game.advance(17_000)
    assert r.timeouts == [(1, 5000), (2, 10_000), (0, 15_000)]
    assert r.discard == list(deck[9:12])  # each drew the top card for itself, in turn
    assert (r.turn, r.move_start, game.next_deadline()) == (1, 15_000, 20_000)
    assert "window_opened" not in kinds(events)


def test_a_long_gap_after_a_normal_turn_closes_the_window_then_times_out_in_order() -> None:
    game = seat1_turn_ended(turn_seconds=5)
    r = game.round
    assert r is not None
    events = game.advance(20_000)
    assert r.timeouts == [(2, T + 2000 + 5000), (0, T + 12_000), (1, T + 17_000)]
    timed = [(e.kind, getattr(e, "at", None)) for e in events if e.kind in ("window_closed", "timed_out")]
    assert timed == [
        ("window_closed", T + 3000),
        ("timed_out", T + 7000),
        ("timed_out", T + 12_000),
        ("timed_out", T + 17_000),
    ]
    assert (r.turn, r.move_start) == (2, T + 17_000)


@pytest.mark.parametrize("step", [1, 7, 999, 1000, 5000])
def test_one_long_advance_equals_many_short_ones(step: int) -> None:
    whole = seat1_turn_ended(turn_seconds=5)
    parts = seat1_turn_ended(turn_seconds=5)
    whole_events = whole.advance(40_000)
    part_events: list[Event] = []
    for now in range(T, 40_000, step):
        part_events.extend(parts.advance(now))
    part_events.extend(parts.advance(40_000))
    assert whole.round is not None
    assert parts.round is not None
    assert parts.round.snapshot() == whole.round.snapshot()
    assert part_events == whole_events


# -- the pile flip -----------------------------------------------------------------------------------------

# Two players, dealer 0: seat 1 starts. The deal takes deck[0..5]; the draw pile is deck[6..51] (46 cards).
FLIP_DECK = deck_with({6: "7D", 7: "8D", 51: "9D"})


def _draw_pile_emptied_by_time_outs() -> Game:
    """A 1 s clock and a 46 s gap: 46 time-outs each discard the top card, the draw pile is empty."""
    game = Game(("Ana", "Ben"), Options(100, 1, False), first_dealer=0)
    game.start_round(FLIP_DECK)
    game.advance(46_000)
    r = game.round
    assert r is not None
    assert r.draw_pile == []
    assert r.discard == list(FLIP_DECK[6:])  # discarded first: 7D at the bottom; last: 9D at the top
    assert [t for _, t in r.timeouts] == [k * 1000 for k in range(1, 47)]
    assert (r.turn, r.move_start) == (1, 46_000)
    return game


def test_a_draw_from_an_empty_draw_pile_turns_the_discard_pile_over_unshuffled() -> None:
    game = _draw_pile_emptied_by_time_outs()
    r = game.round
    assert r is not None
    events, rejected = game.act(Draw(1), 46_000)
    assert rejected is None
    assert [event_to_dict(e) for e in events if e.kind == "pile_turned"] == [{"type": "pile_turned", "cards": 46}]
    assert r.drawn == "7D"  # the card discarded first is the new top
    assert r.discard == []
    assert r.draw_pile[::-1] == list(FLIP_DECK[7:])  # the rest keeps its order: 8D next, 9D at the bottom


def test_a_time_out_on_an_empty_draw_pile_turns_the_discard_pile_over_unshuffled() -> None:
    game = _draw_pile_emptied_by_time_outs()
    r = game.round
    assert r is not None
    events = game.advance(47_000)
    assert kinds(events)[:2] == ["pile_turned", "timed_out"]
    assert r.discard == ["7D"]
    assert r.draw_pile[::-1] == list(FLIP_DECK[7:])
    assert r.timeouts[-1] == (1, 47_000)


# -- next_deadline -----------------------------------------------------------------------------------------


def _all_but_the_clock(r: Round) -> tuple[object, ...]:
    clock = ROUND_STATE.index("now")
    return tuple(v for i, v in enumerate(r.snapshot()) if i != clock)


def _no_round() -> Game:
    return Game(PLAYERS, Options(), 0)


def _advanced(game: Game, now: int) -> Game:
    game.advance(now)
    return game


def _round_over() -> Game:
    return _after_the_last_final_turn()


DEADLINES = [
    pytest.param(_no_round, None, id="no round dealt yet"),
    pytest.param(new_game, None, id="no clock: the first move"),
    pytest.param(lambda: new_game(turn_seconds=TEN_S), LIMIT, id="clock: the first move"),
    pytest.param(lambda: _advanced(seat1_turn_ended(), T + 1000), T + 2000, id="no clock: in the block"),
    pytest.param(lambda: _advanced(seat1_turn_ended(TEN_S), T + 1000), T + 2000, id="clock: in the block"),
    pytest.param(lambda: _advanced(seat1_turn_ended(), T + 2000), T + 3000, id="no clock: window after the block"),
    pytest.param(lambda: _advanced(seat1_turn_ended(TEN_S), T + 2000), T + 3000, id="clock: window after the block"),
    pytest.param(lambda: _advanced(seat1_turn_ended(1), T + 2000), T + 3000, id="1 s clock ends with the window"),
    pytest.param(lambda: _advanced(seat1_turn_ended(), T + 3000), None, id="no clock: window closed"),
    pytest.param(lambda: _advanced(seat1_turn_ended(TEN_S), T + 3000), T + 2000 + LIMIT, id="clock: window closed"),
    pytest.param(_after_a_call_in_the_block, T + 500 + LIMIT, id="clock: after a call in the block"),
    pytest.param(lambda: run(seat1_turn_ended(), [(T + 500, CallCrisp(1))]), None, id="no clock: after a call"),
    pytest.param(_after_a_time_out, 2 * LIMIT, id="clock: after a time-out"),
    pytest.param(_extra_move, 3000 + LIMIT, id="clock: in an extra move"),
    pytest.param(_last_final_turn, T + 800 + LIMIT, id="clock: in a final turn"),
    pytest.param(
        lambda: run(seat1_turn_ended(TEN_S), [(T + 2000, Draw(2)), (T + 2500, Discard(2))]),
        T + 4500,
        id="clock: new window after the next turn ended early",
    ),
    pytest.param(_round_over, None, id="round over"),
]


@pytest.mark.parametrize(("setup", "expected"), DEADLINES)
def test_next_deadline(setup: Setup, expected: int | None) -> None:
    game = setup()
    assert game.next_deadline() == expected
    if expected is None:
        return
    r = game.round
    assert r is not None
    # Nothing happens before the instant (only the clock moves); something does at it.
    before = _all_but_the_clock(r)
    assert game.advance(expected - 1) == []
    assert _all_but_the_clock(r) == before
    assert game.advance(expected) != []
    assert _all_but_the_clock(r) != before


def test_only_a_window_closing_and_a_move_starting_are_redone_by_a_resume() -> None:
    """What the timers bring about that ``Game.resume`` does again: the rooms need not write its instant."""
    game = seat1_turn_ended(turn_seconds=TEN_S)
    assert redone_by_resume([])
    started = game.advance(T + 2000)
    assert kinds(started) == ["move_started"]
    assert redone_by_resume(started)
    closed = game.advance(T + 3000)
    assert kinds(closed) == ["window_closed"]
    assert redone_by_resume(closed)
    assert not redone_by_resume(game.apply(Draw(2)))
    timed_out = game.advance(T + 2000 + LIMIT)
    assert "timed_out" in kinds(timed_out)
    assert not redone_by_resume(timed_out)
