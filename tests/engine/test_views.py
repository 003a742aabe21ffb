"""Per-seat views: what each seat, and a spectator, is told about a round (docs/rules.md, "Not in the rules").

Scenario tests on stacked decks, plus a brute-force check that ``you.can`` lists exactly what ``apply``
accepts. ``knowledge.card_codes`` (the leak detector the property tests use) is tested here too.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Sequence
from typing import Any

import pytest

from crisp_server.engine import (
    FULL_DECK,
    Action,
    CallCrisp,
    Discard,
    Draw,
    Event,
    Game,
    Options,
    Rejected,
    Slot,
    Source,
    Swap,
    Timed,
    TimeOut,
    UseJack,
    UseKing,
    UseQueen,
    event_to_dict,
    visible_to,
)
from crisp_server.engine.views import choices, seat_view, table_view
from crisp_server.tools.simulate import play_random_game

from .knowledge import card_codes

# Three players, dealer 0: seat 1 starts. Each hand is (left, middle, right).
HANDS = (("2C", "3C", "4C"), ("5C", "6C", "7C"), ("8C", "9C", "TC"))
ALL_HAND_CARDS = {card for hand in HANDS for card in hand}


def stacked_deck(hands: Sequence[Sequence[str]], dealer: int, pile: Sequence[str]) -> list[str]:
    """A deck that deals ``hands`` (per seat) from ``dealer`` and puts ``pile`` on top of the draw pile,
    first drawn first; the other cards follow in the usual order."""
    n = len(hands)
    head = [hands[(dealer + k) % n][slot] for slot in range(3) for k in range(1, n + 1)] + list(pile)
    return head + [card for card in FULL_DECK if card not in head]


def new_game(pile: Sequence[str], discard_draw: bool = False) -> tuple[Game, list[Event]]:
    game = Game(("Ana", "Ben", "Cem"), Options(discard_draw=discard_draw), first_dealer=0)
    events = game.start_round(stacked_deck(HANDS, 0, pile))
    r = game.round
    assert r is not None
    assert [tuple(h) for h in r.hands] == list(HANDS)
    return game, events


def view(game: Game, seat: int | None) -> dict[str, Any]:
    return seat_view(game, seat)


def you(game: Game, seat: int | None) -> dict[str, Any]:
    out: dict[str, Any] = seat_view(game, seat)["you"]
    return out


def can(game: Game, seat: int) -> list[str]:
    out: list[str] = you(game, seat)["can"]
    return out


def viewers(game: Game) -> list[int | None]:
    return [None, *range(game.seats)]


def face_down_cards_shown(game: Game, seat: int | None) -> set[str]:
    """The cards now in some hand that ``seat``'s view shows."""
    r = game.round
    assert r is not None
    return card_codes(view(game, seat)) & {card for hand in r.hands for card in hand}


# -- the leak detector itself ----------------------------------------------------------------------------


def test_card_codes_finds_every_code_at_any_depth_and_nothing_else() -> None:
    message = {"a": [{"b": list(FULL_DECK[:26])}], "c": ("x", {"d": list(FULL_DECK[26:])}), "QH": 1}
    assert card_codes(message) == set(FULL_DECK)
    assert card_codes({"players": ["Ana", "AS2", "as", "S", "10H", "1S"], "n": 7}) == set()


# -- face-down cards ------------------------------------------------------------------------------------


def test_own_face_down_values_never_appear_in_any_view_during_the_round() -> None:
    game, events = new_game(pile=("5H", "AD", "2D"))
    # Each seat is shown its left and right once, by an event addressed to it alone...
    for owner, (left, _middle, right) in enumerate(HANDS):
        peeks = [e for e in events if e.to == owner]
        assert [event_to_dict(e)["card"] for e in peeks] == [left, right]
        assert all(not visible_to(e, other) for e in peeks for other in viewers(game) if other != owner)
    # ...but never again in its state.
    for seat in viewers(game):
        assert face_down_cards_shown(game, seat) == set()

    game.apply(Draw(1))
    game.apply(Swap(1, Slot.LEFT))  # 5H goes in face down, 5C comes out face up
    game.advance(2000)
    game.apply(Draw(2))
    game.apply(Discard(2))  # AD, unused
    for seat in viewers(game):
        shown = card_codes(view(game, seat))
        assert shown == {"5C", "AD"}, f"seat {seat} sees {shown}"
        assert face_down_cards_shown(game, seat) == set()


def test_the_drawer_alone_sees_a_card_drawn_from_the_deck() -> None:
    game, _ = new_game(pile=("5H",))
    events = game.apply(Draw(1))
    assert you(game, 1)["drawn_card"] == "5H"
    table = table_view(game)
    assert table["round"]["drawn"] == {"from": "deck", "card": None}
    for seat in (None, 0, 2):
        assert view(game, seat)["table"] == table
        assert you(game, seat)["drawn_card"] is None
        assert "5H" not in card_codes(view(game, seat))
        assert all("5H" not in card_codes(event_to_dict(e)) for e in events if visible_to(e, seat))
    # The drawer learns it from an event addressed to it alone.
    assert [event_to_dict(e)["card"] for e in events if e.to == 1] == ["5H"]


def test_a_card_drawn_from_the_discard_pile_is_shown_to_everyone() -> None:
    game, _ = new_game(pile=("5H",), discard_draw=True)
    game.apply(Draw(1))
    game.apply(Discard(1))
    game.advance(2000)
    events = game.apply(Draw(2, Source.DISCARD))
    drew = [event_to_dict(e) for e in events if e.kind == "drew"]
    assert drew == [{"type": "drew", "seat": 2, "source": "discard", "card": "5H"}]
    assert all(e.to is None for e in events)
    for seat in viewers(game):
        assert view(game, seat)["table"]["round"]["drawn"] == {"from": "discard", "card": "5H"}
        assert you(game, seat)["drawn_card"] is None  # it is on the table for all, not private
    events = game.apply(Swap(2, Slot.MIDDLE))
    swapped = [event_to_dict(e) for e in events if e.kind == "swapped"]
    assert swapped == [{"type": "swapped", "seat": 2, "slot": "middle", "discarded": "9C", "card": "5H"}]
    # Once in the hand it is face down like any other card: the view does not repeat it.
    for seat in viewers(game):
        assert "5H" not in card_codes(view(game, seat))


def test_every_hand_is_on_the_table_at_the_round_end() -> None:
    game, _ = new_game(pile=("5H", "AD", "2D"))
    game.apply(Draw(1))
    game.apply(Discard(1))
    game.advance(100)
    game.apply(CallCrisp(1))  # the call ends the two-second block: seat 2 may draw at once
    game.apply(Draw(2))
    game.apply(Discard(2))
    game.apply(Draw(0))
    events = game.apply(Discard(0))
    r = game.round
    assert r is not None
    assert r.ended
    table = table_view(game)
    assert table["round"]["hands"] == [list(h) for h in HANDS]
    assert table["round"]["sums"] == [9, 18, 27]
    assert table["round"]["points"] == [9, 23, 27]  # the caller was not lowest: +5
    assert table["round"]["turn"] is None
    ended = [event_to_dict(e) for e in events if e.kind == "round_ended"]
    assert ended[0]["hands"] == [list(h) for h in HANDS]
    assert card_codes(table) >= ALL_HAND_CARDS
    for seat in viewers(game):
        assert view(game, seat) == {"table": table, "you": {"seat": seat, "drawn_card": None, "can": []}}


def test_a_spectator_gets_the_table_and_nothing_private() -> None:
    game, events = new_game(pile=("5H", "QD"))
    assert all(not visible_to(e, None) for e in events if e.kind == "card_shown")
    for step in (None, Draw(1), Discard(1)):  # after the deal, a private draw, a public discard
        if step is not None:
            events = game.apply(step)
            assert all(not visible_to(e, None) for e in events if e.kind == "card_shown")
        spectator = view(game, None)
        assert spectator["you"] == {"seat": None, "drawn_card": None, "can": []}
        assert spectator["table"] == table_view(game) == view(game, 0)["table"]
        r = game.round
        assert r is not None
        assert card_codes(spectator) == set(r.discard)


# -- you.can --------------------------------------------------------------------------------------------


def test_after_drawing_a_king_the_drawer_can_only_play_it() -> None:
    game, _ = new_game(pile=("KS",))
    game.apply(Draw(1))  # the round's first move: nobody has a crisp window
    assert can(game, 1) == ["king"]
    assert can(game, 0) == can(game, 2) == []


def test_after_drawing_a_king_in_the_window_the_window_seat_may_still_call() -> None:
    game, _ = new_game(pile=("5H", "KS"))
    game.apply(Draw(1))
    game.apply(Discard(1))  # seat 1's window: 0 <= t < 3000; seat 2 may draw from 2000
    game.advance(1000)
    assert can(game, 1) == ["crisp"]
    assert can(game, 2) == []  # the two-second block
    game.advance(2000)
    game.apply(Draw(2))
    assert can(game, 2) == ["king"]
    assert can(game, 1) == ["crisp"]
    game.advance(2999)
    assert can(game, 1) == ["crisp"]
    game.advance(3000)
    assert can(game, 1) == []
    assert can(game, 2) == ["king"]


@pytest.mark.parametrize(
    ("drawn", "source", "expected"),
    [
        ("5H", Source.DECK, {"swap", "discard"}),
        ("JD", Source.DECK, {"discard", "jack"}),
        ("QH", Source.DECK, {"discard", "queen"}),
        ("KS", Source.DECK, {"king"}),
        ("5H", Source.DISCARD, {"swap"}),
        ("JD", Source.DISCARD, {"swap"}),  # a plain 10 from the discard pile
        ("KS", Source.DISCARD, {"swap"}),
    ],
)
def test_can_lists_what_the_drawn_card_allows(drawn: str, source: Source, expected: set[str]) -> None:
    if source is Source.DECK:
        game, _ = new_game(pile=(drawn,))
    else:  # seat 1 draws it and is timed out, which discards it unused; seat 2 may then draw at once
        game, _ = new_game(pile=(drawn,), discard_draw=True)
        game.apply(Draw(1))
        game.apply(TimeOut(1))
    r = game.round
    assert r is not None
    seat = r.turn
    assert set(can(game, seat)) == ({"draw_deck", "draw_discard"} if source is Source.DISCARD else {"draw_deck"})
    game.apply(Draw(seat, source))
    choices = can(game, seat)
    assert len(choices) == len(set(choices))
    assert set(choices) == expected


def _candidates(game: Game, seat: int) -> list[tuple[str, Action]]:
    """Every action ``seat`` could send (bar the server's TimeOut), with the name ``you.can`` gives it."""
    out: list[tuple[str, Action]] = [
        ("draw_deck", Draw(seat, Source.DECK)),
        ("draw_discard", Draw(seat, Source.DISCARD)),
    ]
    out += [("swap", Swap(seat, slot)) for slot in Slot]
    out += [("discard", Discard(seat)), ("jack", UseJack(seat)), ("king", UseKing(seat)), ("crisp", CallCrisp(seat))]
    out += [
        ("queen", UseQueen(seat, mine, target, theirs))
        for mine in Slot
        for target in range(-1, game.seats + 1)
        for theirs in Slot
    ]
    return out


def _accepted_choices(game: Game, seat: int) -> set[str]:
    """The names of the actions ``apply`` accepts from ``seat`` now, tried on copies of the game."""
    accepted: set[str] = set()
    trial = copy.deepcopy(game)
    for name, action in _candidates(game, seat):
        if name in accepted:
            continue
        try:
            trial.apply(action)
        except Rejected:
            continue  # a rejection changes nothing (the state machine checks it): the copy can be reused
        accepted.add(name)
        trial = copy.deepcopy(game)
    return accepted


@pytest.mark.interpreted  # copies the game with copy.deepcopy, which compiled classes do not support
@pytest.mark.parametrize(("players", "seed"), [(2, 1), (3, 2), (5, 3)])
def test_can_is_exactly_what_apply_accepts(players: int, seed: int) -> None:
    checked = 0

    def check(game: Game, _timed: Timed, _events: list[Event], _rejected: Rejected | None) -> None:
        nonlocal checked
        r = game.round
        assert r is not None
        if r.ended:
            return
        for seat in range(game.seats):
            choices = can(game, seat)
            assert len(choices) == len(set(choices))
            assert set(choices) == _accepted_choices(game, seat), f"seat {seat} at {r.now}"
            checked += 1
        assert you(game, None)["can"] == []

    options = Options(score_limit=40, turn_seconds=30, discard_draw=True)
    play_random_game(players, options, random.Random(seed), on_step=check)
    assert checked > 0


def _kinds(game: Game, seat: int) -> list[str]:
    """The choice names of ``legal_actions``, in order, the slow way."""
    names: list[str] = []
    for action in game.legal_actions(seat):
        if isinstance(action, Draw):
            name = "draw_" + action.source.value
        else:
            name = {
                Swap: "swap",
                Discard: "discard",
                UseJack: "jack",
                UseQueen: "queen",
                UseKing: "king",
                CallCrisp: "crisp",
            }[type(action)]
        if name not in names:
            names.append(name)
    return names


@pytest.mark.parametrize("seed", range(6))
def test_choices_are_the_kinds_of_the_legal_actions(seed: int) -> None:
    checked = 0

    def check(game: Game, _timed: Timed, _events: list[Event], _rejected: Rejected | None) -> None:
        nonlocal checked
        if game.round is not None and not game.round.ended:
            for seat in range(game.seats):
                assert choices(game, seat) == _kinds(game, seat)
                checked += 1

    play_random_game(2 + seed, Options(50, 30, seed % 2 == 0), random.Random(seed), on_step=check)
    assert checked > 50
