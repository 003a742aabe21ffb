"""Every rejection code of ``docs/record-format.md``, and which code wins where several apply.

Each case plays legal actions up to a known state, then tries one action the rules forbid there. The
action must raise :class:`Rejected` with the expected code (a ``ValueError`` whose message is the code)
and change nothing at all: not the round, not the totals.

The table is three players, dealer 0, so the turn order is seat 1 (Ben), seat 2 (Cem), seat 0 (Ana).
The deal gives deck[0..2] to the left slots of seats 1, 2, 0, deck[3..5] to their middles and deck[6..8]
to their rights; deck[9] is the top of the draw pile. Unless a case places a card, the deck is
``FULL_DECK`` (A, 2, 3, ... rank by rank), so the first cards drawn are plain low cards.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from crisp_server.engine import (
    FULL_DECK,
    Action,
    CallCrisp,
    Code,
    Discard,
    Draw,
    Game,
    Rejected,
    Slot,
    Source,
    Swap,
    TimeOut,
    UseJack,
    UseKing,
    UseQueen,
)
from tests.engine.helpers import new_game, run

DECK = Source.DECK
PILE = Source.DISCARD  # the discard pile, as a draw source
L, M, R = Slot.LEFT, Slot.MIDDLE, Slot.RIGHT

Setup = Callable[[], Game]


# -- the states the cases start from -------------------------------------------------------------------


def fresh(discard_draw: bool = False) -> Game:
    """t=0: seat 1 may draw; the discard pile is empty."""
    return new_game(discard_draw=discard_draw)


def seat1_drew(card: str, discard_draw: bool = False) -> Game:
    """Seat 1 has drawn ``card`` from the draw pile and not played it yet."""
    return run(new_game({9: card}, discard_draw=discard_draw), [(0, Draw(1, DECK))])


def seat2_took(card: str) -> Game:
    """Discard draw on: seat 1 swaps its dealt left card ``card`` out, seat 2 takes it from the pile."""
    game = new_game({0: card, 9: "5H"}, discard_draw=True)
    return run(game, [(0, Draw(1, DECK)), (100, Swap(1, L)), (2100, Draw(2, PILE))])


def seat1_finished(now: int, discard_draw: bool = False) -> Game:
    """Seat 1 drew and discarded, its turn ended at 100 (window until 3100, seat 2 may draw at 2100)."""
    game = run(new_game(discard_draw=discard_draw), [(0, Draw(1, DECK)), (100, Discard(1))])
    game.advance(now)
    return game


def in_block(discard_draw: bool = False) -> Game:
    """t=1000: inside the two-second block after seat 1's turn; the discard pile is not empty."""
    return seat1_finished(1000, discard_draw)


def next_turn_ended() -> Game:
    """Seat 2 played a whole turn before seat 1's window ran out, which closes it; t=2300."""
    game = seat1_finished(2100)
    run(game, [(2100, Draw(2, DECK)), (2200, Discard(2))])
    game.advance(2300)
    return game


def crisp_called() -> Game:
    """Seat 1 called Crisp at 1000, inside the block: seat 2 plays the first final turn now."""
    return run(seat1_finished(1000), [(1000, CallCrisp(1))])


def final_turn_done() -> Game:
    """After the call, seat 2's final turn ended at 1100; seat 0 plays the last final turn; t=1200."""
    game = run(crisp_called(), [(1000, Draw(2, DECK)), (1100, Discard(2))])
    game.advance(1200)
    return game


def round_over(discard_draw: bool = False) -> Game:
    """Seat 1 called at 1000, seats 2 and 0 played their final turns: the round ended at 1300.

    Seat 0, who played the last final turn, is still the round's ``turn``.
    """
    game = run(
        seat1_finished(1000, discard_draw),
        [(1000, CallCrisp(1)), (1000, Draw(2, DECK)), (1100, Discard(2)), (1200, Draw(0, DECK)), (1300, Discard(0))],
    )
    r = game.round
    assert r is not None
    assert r.ended
    return game


def second_round_start() -> Game:
    """Discard draw on; the first round ended with a non-empty discard pile; round 2 has just been dealt.

    Round 2's dealer is seat 1, so seat 2 starts.
    """
    game = round_over(discard_draw=True)
    game.start_round(FULL_DECK)
    return game


def timed_out_by_action() -> Game:
    """The server timed seat 1's move out at 500; seat 2's turn began then, without a window; t=600."""
    game = run(new_game(), [(500, TimeOut(1))])
    game.advance(600)
    return game


def timed_out_by_clock() -> Game:
    """A 5 s turn clock ran out on seat 1 at 5000; t=5000."""
    game = new_game(turn_seconds=5)
    game.advance(5000)
    return game


def in_extra_move() -> Game:
    """Seat 1 used a King: it is in its first extra move, nothing drawn yet."""
    return run(new_game({9: "KS"}), [(0, Draw(1, DECK)), (100, UseKing(1))])


def took_king_back() -> Game:
    """Discard draw on: seat 1 used a King, then in its extra move took that King back from the pile.

    The discard pile is empty again, and seat 1 holds a King that counts as a plain 10.
    """
    game = new_game({9: "KS"}, discard_draw=True)
    return run(game, [(0, Draw(1, DECK)), (100, UseKing(1)), (200, Draw(1, PILE))])


# -- the table -----------------------------------------------------------------------------------------


Case = tuple[Setup, Action, Code, str]


def case(setup: Setup, action: Action, code: Code, name: str) -> Case:
    return (setup, action, code, f"{code.value}: {name}")


CASES: list[Case] = [
    # round_over beats everything: even the seat that held the last turn, even a time-out or a call.
    case(round_over, Draw(0, DECK), Code.ROUND_OVER, "draw by the seat that played the last final turn"),
    case(round_over, Draw(1, DECK), Code.ROUND_OVER, "draw by the caller"),
    case(round_over, Swap(2, L), Code.ROUND_OVER, "swap with nothing drawn by another seat"),
    case(round_over, UseQueen(0, L, 0, L), Code.ROUND_OVER, "queen at oneself with nothing drawn"),
    case(round_over, TimeOut(0), Code.ROUND_OVER, "timeout by the seat that played the last final turn"),
    case(round_over, TimeOut(1), Code.ROUND_OVER, "timeout by another seat"),
    case(round_over, CallCrisp(0), Code.ROUND_OVER, "crisp by the seat that played the last final turn"),
    case(round_over, CallCrisp(1), Code.ROUND_OVER, "crisp again by the caller"),
    # not_your_turn: for every move action and timeout, and before every later code that also applies.
    case(fresh, Draw(0, DECK), Code.NOT_YOUR_TURN, "draw by the dealer at the start"),
    case(fresh, Draw(2, DECK), Code.NOT_YOUR_TURN, "draw by the second seat at the start"),
    case(fresh, Draw(0, PILE), Code.NOT_YOUR_TURN, "discard-pile draw, option off, pile empty, wrong seat"),
    case(lambda: fresh(True), Draw(0, PILE), Code.NOT_YOUR_TURN, "discard-pile draw from an empty pile, wrong seat"),
    case(in_block, Draw(0, DECK), Code.NOT_YOUR_TURN, "draw by a wrong seat during the block"),
    case(in_block, Draw(1, DECK), Code.NOT_YOUR_TURN, "draw during the block by the seat that just finished"),
    case(in_block, Draw(0, PILE), Code.NOT_YOUR_TURN, "discard-pile draw, option off, wrong seat, in the block"),
    case(lambda: seat1_drew("5H"), Draw(2, DECK), Code.NOT_YOUR_TURN, "draw while another seat holds a card"),
    case(fresh, Swap(2, L), Code.NOT_YOUR_TURN, "swap by a wrong seat, nothing drawn"),
    case(lambda: seat1_drew("5H"), Swap(2, L), Code.NOT_YOUR_TURN, "swap of another seat's drawn card"),
    case(lambda: seat1_drew("KS"), Swap(0, R), Code.NOT_YOUR_TURN, "swap of another seat's drawn King"),
    case(lambda: seat1_drew("5H"), Discard(2), Code.NOT_YOUR_TURN, "discard of another seat's drawn card"),
    case(lambda: seat1_drew("KS"), Discard(0), Code.NOT_YOUR_TURN, "discard of another seat's drawn King"),
    case(lambda: seat2_took("9S"), Discard(1), Code.NOT_YOUR_TURN, "discard of a card another seat took from the pile"),
    case(lambda: seat1_drew("JS"), UseJack(2), Code.NOT_YOUR_TURN, "jack by a wrong seat"),
    case(lambda: seat1_drew("5H"), UseJack(0), Code.NOT_YOUR_TURN, "jack by a wrong seat, drawn card not a Jack"),
    case(lambda: seat1_drew("QS"), UseQueen(2, L, 0, L), Code.NOT_YOUR_TURN, "queen by a wrong seat"),
    case(lambda: seat1_drew("QS"), UseQueen(2, L, 2, R), Code.NOT_YOUR_TURN, "queen by a wrong seat at itself"),
    case(lambda: seat1_drew("KS"), UseKing(0), Code.NOT_YOUR_TURN, "king by a wrong seat"),
    case(fresh, UseKing(2), Code.NOT_YOUR_TURN, "king by a wrong seat, nothing drawn"),
    case(fresh, TimeOut(0), Code.NOT_YOUR_TURN, "timeout of the dealer at the start"),
    case(lambda: seat1_drew("5H"), TimeOut(2), Code.NOT_YOUR_TURN, "timeout of a seat not to move"),
    case(in_block, TimeOut(1), Code.NOT_YOUR_TURN, "timeout of the seat that just finished, in the block"),
    case(in_extra_move, Draw(2, DECK), Code.NOT_YOUR_TURN, "draw by the next seat during a King's extra move"),
    case(crisp_called, Draw(1, DECK), Code.NOT_YOUR_TURN, "draw by the caller during the final turns"),
    # too_early: only a draw during the block, and before the discard-pile codes.
    case(in_block, Draw(2, DECK), Code.TOO_EARLY, "draw from the draw pile during the block"),
    case(in_block, Draw(2, PILE), Code.TOO_EARLY, "discard-pile draw, option off, during the block"),
    case(lambda: in_block(True), Draw(2, PILE), Code.TOO_EARLY, "discard-pile draw, option on, during the block"),
    # already_drawn: before the discard-pile codes.
    case(lambda: seat1_drew("5H"), Draw(1, DECK), Code.ALREADY_DRAWN, "second draw from the draw pile"),
    case(lambda: seat1_drew("5H"), Draw(1, PILE), Code.ALREADY_DRAWN, "discard-pile draw, option off, empty"),
    case(lambda: seat1_drew("5H", True), Draw(1, PILE), Code.ALREADY_DRAWN, "discard-pile draw from an empty pile"),
    case(lambda: seat1_drew("KS"), Draw(1, DECK), Code.ALREADY_DRAWN, "draw instead of playing a King"),
    case(lambda: seat2_took("9S"), Draw(2, DECK), Code.ALREADY_DRAWN, "draw after taking from the discard pile"),
    case(took_king_back, Draw(1, PILE), Code.ALREADY_DRAWN, "discard-pile draw, pile emptied by one's own draw"),
    # nothing_drawn: every play before the draw, before the card-specific codes.
    case(fresh, Swap(1, L), Code.NOTHING_DRAWN, "swap"),
    case(fresh, Discard(1), Code.NOTHING_DRAWN, "discard"),
    case(fresh, UseJack(1), Code.NOTHING_DRAWN, "jack"),
    case(fresh, UseQueen(1, L, 2, L), Code.NOTHING_DRAWN, "queen"),
    case(fresh, UseQueen(1, L, 1, R), Code.NOTHING_DRAWN, "queen at oneself"),
    case(fresh, UseKing(1), Code.NOTHING_DRAWN, "king"),
    case(in_block, Swap(2, M), Code.NOTHING_DRAWN, "swap by the right seat during the block"),
    case(in_block, UseQueen(2, M, 3, M), Code.NOTHING_DRAWN, "queen at no seat by the right seat in the block"),
    case(lambda: seat1_finished(2100), Discard(2), Code.NOTHING_DRAWN, "discard once the move has started"),
    case(in_extra_move, Swap(1, R), Code.NOTHING_DRAWN, "swap at the start of a King's extra move"),
    # discard_draw_disabled: before discard_empty.
    case(lambda: seat1_finished(2100), Draw(2, PILE), Code.DISCARD_DRAW_DISABLED, "pile not empty"),
    case(fresh, Draw(1, PILE), Code.DISCARD_DRAW_DISABLED, "pile empty too"),
    # discard_empty
    case(lambda: fresh(True), Draw(1, PILE), Code.DISCARD_EMPTY, "option on, first draw of the round"),
    case(second_round_start, Draw(2, PILE), Code.DISCARD_EMPTY, "first draw of round 2: the pile starts empty"),
    # face_card_from_deck: J, Q, K from the draw pile into any slot.
    case(lambda: seat1_drew("JS"), Swap(1, L), Code.FACE_CARD_FROM_DECK, "Jack into the left slot"),
    case(lambda: seat1_drew("QH"), Swap(1, M), Code.FACE_CARD_FROM_DECK, "Queen into the middle slot"),
    case(lambda: seat1_drew("KD"), Swap(1, R), Code.FACE_CARD_FROM_DECK, "King into the right slot"),
    # must_swap: before king_must_be_played for a King taken from the discard pile.
    case(lambda: seat2_took("9S"), Discard(2), Code.MUST_SWAP, "plain card taken from the pile"),
    case(lambda: seat2_took("JS"), Discard(2), Code.MUST_SWAP, "Jack taken from the pile"),
    case(lambda: seat2_took("KS"), Discard(2), Code.MUST_SWAP, "King taken from the pile"),
    case(took_king_back, Discard(1), Code.MUST_SWAP, "King taken back from the pile in an extra move"),
    # king_must_be_played
    case(lambda: seat1_drew("KS"), Discard(1), Code.KING_MUST_BE_PLAYED, "King drawn from the draw pile"),
    # wrong_card: wrong rank, or a J/Q/K taken from the discard pile; before bad_target.
    case(lambda: seat1_drew("5H"), UseJack(1), Code.WRONG_CARD, "jack with a 5"),
    case(lambda: seat1_drew("QS"), UseJack(1), Code.WRONG_CARD, "jack with a Queen"),
    case(lambda: seat1_drew("KS"), UseJack(1), Code.WRONG_CARD, "jack with a King"),
    case(lambda: seat1_drew("5H"), UseQueen(1, L, 2, L), Code.WRONG_CARD, "queen with a 5"),
    case(lambda: seat1_drew("JS"), UseQueen(1, L, 2, L), Code.WRONG_CARD, "queen with a Jack"),
    case(lambda: seat1_drew("KS"), UseQueen(1, L, 2, L), Code.WRONG_CARD, "queen with a King"),
    case(lambda: seat1_drew("5H"), UseQueen(1, L, 1, R), Code.WRONG_CARD, "queen at oneself with a 5"),
    case(lambda: seat1_drew("TS"), UseKing(1), Code.WRONG_CARD, "king with a 10"),
    case(lambda: seat1_drew("JS"), UseKing(1), Code.WRONG_CARD, "king with a Jack"),
    case(lambda: seat1_drew("QS"), UseKing(1), Code.WRONG_CARD, "king with a Queen"),
    case(lambda: seat2_took("JS"), UseJack(2), Code.WRONG_CARD, "jack with a Jack from the discard pile"),
    case(lambda: seat2_took("QS"), UseQueen(2, L, 0, L), Code.WRONG_CARD, "queen with a Queen from the pile"),
    case(lambda: seat2_took("QS"), UseQueen(2, L, 2, L), Code.WRONG_CARD, "queen at oneself, Queen from the pile"),
    case(lambda: seat2_took("KS"), UseKing(2), Code.WRONG_CARD, "king with a King from the discard pile"),
    case(took_king_back, UseKing(1), Code.WRONG_CARD, "king with a King taken back from the pile"),
    # bad_target: oneself or no seat (the table has seats 0 to 2).
    case(lambda: seat1_drew("QS"), UseQueen(1, L, 1, R), Code.BAD_TARGET, "own seat"),
    case(lambda: seat1_drew("QS"), UseQueen(1, M, -1, M), Code.BAD_TARGET, "seat -1"),
    case(lambda: seat1_drew("QS"), UseQueen(1, R, 3, L), Code.BAD_TARGET, "seat n"),
    case(lambda: seat1_drew("QS"), UseQueen(1, R, 8, L), Code.BAD_TARGET, "seat 8"),
    # crisp_not_allowed: anyone without an open window of their own.
    case(fresh, CallCrisp(1), Code.CRISP_NOT_ALLOWED, "before anyone finished a turn, by the seat to move"),
    case(fresh, CallCrisp(0), Code.CRISP_NOT_ALLOWED, "before anyone finished a turn, by the dealer"),
    case(lambda: seat1_drew("5H"), CallCrisp(1), Code.CRISP_NOT_ALLOWED, "in the middle of one's own turn"),
    case(in_extra_move, CallCrisp(1), Code.CRISP_NOT_ALLOWED, "between a King's extra moves"),
    case(in_block, CallCrisp(0), Code.CRISP_NOT_ALLOWED, "not their window (a third seat)"),
    case(in_block, CallCrisp(2), Code.CRISP_NOT_ALLOWED, "by the next player during the block"),
    case(lambda: seat1_finished(2100), CallCrisp(2), Code.CRISP_NOT_ALLOWED, "by the next player after the block"),
    case(lambda: seat1_finished(3100), CallCrisp(1), Code.CRISP_NOT_ALLOWED, "window closed by time (T+3000)"),
    case(next_turn_ended, CallCrisp(1), Code.CRISP_NOT_ALLOWED, "window closed: the next player's turn ended"),
    case(crisp_called, CallCrisp(1), Code.CRISP_NOT_ALLOWED, "crisp already called, by the caller"),
    case(crisp_called, CallCrisp(2), Code.CRISP_NOT_ALLOWED, "crisp already called, by the next player"),
    case(final_turn_done, CallCrisp(2), Code.CRISP_NOT_ALLOWED, "during the final turns, after one's final turn"),
    case(final_turn_done, CallCrisp(0), Code.CRISP_NOT_ALLOWED, "during the final turns, by the seat to move"),
    case(timed_out_by_action, CallCrisp(1), Code.CRISP_NOT_ALLOWED, "after a timeout action"),
    case(timed_out_by_clock, CallCrisp(1), Code.CRISP_NOT_ALLOWED, "after the turn clock ran out"),
]


PARAMS = [pytest.param(setup, action, code, id=name) for setup, action, code, name in CASES]


def _state(game: Game) -> tuple[object, ...]:
    """Everything a rejected action must leave as it was."""
    r = game.round
    assert r is not None
    return (len(game.rounds), r.snapshot(), list(game.totals), game.game_over, game.winners)


@pytest.mark.parametrize(("setup", "action", "code"), PARAMS)
def test_rejected_with_the_first_applicable_code_and_nothing_changes(setup: Setup, action: Action, code: Code) -> None:
    game = setup()
    before = _state(game)
    with pytest.raises(Rejected) as caught:
        game.apply(action)
    rejected = caught.value
    assert isinstance(rejected, ValueError), "generic callers catch a rejection as a ValueError"
    assert rejected.code is code
    assert str(rejected) == code.value, "a rejection says its code (its texts for players are crisp_server.texts')"
    assert _state(game) == before


@pytest.mark.parametrize(("setup", "action", "code"), PARAMS)
def test_act_reports_the_same_rejection_without_events(setup: Setup, action: Action, code: Code) -> None:
    game = setup()
    r = game.round
    assert r is not None
    before = _state(game)
    events, rejected = game.act(action, r.now)  # nothing falls due at the current instant
    assert events == []
    assert rejected is not None
    assert rejected.code is code
    assert _state(game) == before


@pytest.mark.parametrize(("setup", "action", "code"), PARAMS)
def test_a_rejected_action_is_not_offered_as_legal(setup: Setup, action: Action, code: Code) -> None:
    game = setup()
    # TimeOut is the server's action and never listed; everything else must agree with apply().
    if not isinstance(action, TimeOut):
        assert action not in game.legal_actions(action.seat)


def test_the_table_covers_every_code() -> None:
    covered = {code for _, _, code, _ in CASES}
    assert covered == set(Code)


def test_codes_are_listed_in_the_precedence_of_the_record_format() -> None:
    # docs/record-format.md: "Where several codes apply, the first in this list wins".
    assert [c.value for c in Code] == [
        "round_over",
        "not_your_turn",
        "too_early",
        "already_drawn",
        "nothing_drawn",
        "discard_draw_disabled",
        "discard_empty",
        "face_card_from_deck",
        "must_swap",
        "king_must_be_played",
        "wrong_card",
        "bad_target",
        "crisp_not_allowed",
    ]


# -- a time-out by the seat to move is never refused -----------------------------------------------------

TIMEOUT_CASES = [
    pytest.param(fresh, 1, id="at the start, nothing drawn"),
    pytest.param(lambda: seat1_drew("5H"), 1, id="a plain card drawn"),
    pytest.param(lambda: seat1_drew("KS"), 1, id="a King drawn, not played"),
    pytest.param(in_block, 2, id="during the two-second block"),
    pytest.param(lambda: seat1_finished(2100), 2, id="after the block, inside the window"),
    pytest.param(lambda: seat2_took("QS"), 2, id="holding a Queen from the discard pile"),
    pytest.param(in_extra_move, 1, id="in a King's extra move"),
    pytest.param(crisp_called, 2, id="in the first final turn"),
    pytest.param(final_turn_done, 0, id="in the last final turn"),
    pytest.param(timed_out_by_clock, 2, id="right after another time-out"),
]


@pytest.mark.parametrize(("setup", "seat"), TIMEOUT_CASES)
def test_timeout_by_the_seat_to_move_is_accepted(setup: Setup, seat: int) -> None:
    game = setup()
    r = game.round
    assert r is not None
    assert r.turn == seat
    now = r.now
    count = len(r.timeouts)
    game.apply(TimeOut(seat))  # must not raise
    assert r.timeouts[count:] == [(seat, now)]
