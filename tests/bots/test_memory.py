"""A bot's memory holds only true facts: every card it places exactly is there, and after the discard pile
is turned over it knows the draw pile's order (docs/rules.md: turned over without shuffling). Also after a
reconnect: a snapshot, or an update after a gap in ``v``, shows where the game is but not how it got there."""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

import pytest

from crisp_server.bots import Memory
from crisp_server.bots.memory import LEFT, RIGHT, SlotInfo
from crisp_server.engine import (
    DRAW_BLOCK_MS,
    FULL_DECK,
    Discard,
    Draw,
    Event,
    Game,
    Options,
    Slot,
    UseQueen,
    event_to_dict,
    visible_to,
)
from crisp_server.engine.views import private_view, table_view
from crisp_server.tools.arena import play_game
from tests.web.bots import stacked_deck


def check_true(m: Memory, game: Game, seat: int, checked: dict[str, int]) -> None:
    """Every card ``m`` (``seat``'s memory) places exactly is there; a draw pile it knows is the pile."""
    r = game.round
    assert r is not None
    assert m.discard == r.discard
    if r.ended:
        return
    for s, hand in enumerate(m.hands):
        for slot, info in enumerate(hand):
            if info.card is not None:
                checked["cards"] += 1
                assert r.hands[s][slot] == info.card, (seat, s, slot)
    if m.known_pile is not None:
        checked["piles"] += 1
        assert m.known_pile == r.draw_pile
    if r.turn == seat and r.drawn is not None:
        assert m.drawn == r.drawn


@pytest.mark.slow
@pytest.mark.parametrize(
    ("levels", "discard_draw"),
    [
        (["hard", "normal"], False),
        (["hard", "normal", "easy", "random"], True),
        (["hard", "normal", "easy", "random", "hard", "normal", "easy"], False),
        # Easy players let rounds run long: the discard pile is turned over, its order followed.
        (["easy", "easy", "easy", "hard"], False),
    ],
)
def test_what_a_memory_knows_exactly_is_true(levels: list[str], discard_draw: bool) -> None:
    memories: dict[int, Memory] = {}
    checked = {"cards": 0, "piles": 0}

    def check(game: Game, seat: int, update: Mapping[str, Any]) -> None:
        m = memories.setdefault(seat, Memory())
        m.observe(update)
        check_true(m, game, seat, checked)

    rng = random.Random(len(levels) + 10 * discard_draw)
    for _ in range(3):
        memories.clear()
        play_game(levels, rng, Options(score_limit=60, discard_draw=discard_draw), timeouts=0.02, on_feed=check)
    assert checked["cards"] > 100
    if levels[0] == "easy":
        assert checked["piles"] > 0


@pytest.mark.slow
@pytest.mark.parametrize("discard_draw", [False, True])
def test_what_a_memory_knows_after_gaps_is_true(discard_draw: bool) -> None:
    """Each seat's memory misses stretches of updates (a connection lost), then gets a snapshot or the next
    update after the gap, as a reconnect does: what it knows exactly is still true."""
    memories: dict[int, Memory] = {}
    versions: dict[int, int] = {}
    away: dict[int, bool] = {}
    checked = {"cards": 0, "piles": 0, "gaps": 0}
    rng = random.Random(77 + discard_draw)

    def check(game: Game, seat: int, update: Mapping[str, Any]) -> None:
        m = memories.setdefault(seat, Memory())
        v = versions[seat] = versions.get(seat, 0) + 1
        if away.get(seat):
            if rng.random() < 0.3:
                return  # still away
            away[seat] = False
            checked["gaps"] += 1
            if rng.random() < 0.5:  # the update after the gap, then the snapshot its client asks for
                m.observe({**update, "v": v})
            m.observe({"type": "snapshot", "v": v, "table": update["table"], "you": update["you"], "events": []})
        elif rng.random() < 0.05:
            away[seat] = True  # this update is lost
            return
        else:
            m.observe({**update, "v": v})
        check_true(m, game, seat, checked)

    for _ in range(3):
        memories.clear()
        versions.clear()
        away.clear()
        play_game(
            ["hard", "normal", "easy", "hard"], rng, Options(score_limit=60, discard_draw=discard_draw), on_feed=check
        )
    assert checked["gaps"] > 50
    assert checked["cards"] > 100


# -- a reconnect, step by step ---------------------------------------------------------------------------

#: Three players, seat 0 starts (seat 2 deals): seat 0 draws the 5 of hearts and throws it away, seat 1 draws
#: the Queen of spades and exchanges its left card with seat 0's left card (the 9 of hearts).
HANDS = [["9H", "5S", "8D"], ["3C", "4C", "6C"], ["2D", "7S", "TD"]]
PILE = ["5H", "QS", "4H"]


class Seat0:
    """Seat 0's memory, fed (or not) the updates of the game above, numbered as a room numbers them."""

    def __init__(self) -> None:
        self.game = Game(["Ana", "Ben", "Cleo"], first_dealer=2)
        self.memory = Memory()
        self.v = 0

    def step(self, events: list[Event], *, seen: bool = True) -> None:
        self.v += 1
        if seen:
            self.memory.observe(self.update("update", events))

    def update(self, kind: str, events: list[Event]) -> dict[str, Any]:
        return {
            "type": kind,
            "v": self.v,
            "table": table_view(self.game),
            "you": private_view(self.game, 0),
            "events": [event_to_dict(e) for e in events if visible_to(e, 0)],
        }

    def to_seat_1s_turn(self) -> None:
        g = self.game
        self.step(g.start_round(stacked_deck(2, HANDS, PILE)))
        assert self.memory.hands[0][LEFT].card == "9H"
        self.step(g.apply(Draw(0)))
        self.step(g.apply(Discard(0)))
        self.step(g.advance(DRAW_BLOCK_MS))

    def queen(self, *, seen: bool) -> None:
        g = self.game
        self.step(g.apply(Draw(1)), seen=seen)
        self.step(g.apply(UseQueen(1, Slot.LEFT, 0, Slot.LEFT)), seen=seen)


@pytest.mark.parametrize("resync", ["snapshot", "update"])
def test_a_card_moved_by_a_queen_in_a_gap_is_forgotten(resync: str) -> None:
    seat0 = Seat0()
    seat0.to_seat_1s_turn()
    seat0.queen(seen=False)  # the connection is lost meanwhile
    m = seat0.memory
    assert m.hands[0][LEFT].card == "9H", "it cannot know yet"
    r = seat0.game.round
    assert r is not None
    if resync == "update":  # the first update after the gap: the next player's draw block ends
        seat0.step(seat0.game.advance(r.now + DRAW_BLOCK_MS))
    else:
        m.observe(seat0.update("snapshot", []))
    assert r.hands[0][LEFT] == "3C"
    assert m.hands[0][LEFT].card is None, "its left card moved: it must not act on the 9 it saw"
    assert m.hands[0][RIGHT].card is None, "nor on any card placed before the gap (any could have moved)"
    assert m.hands[1][LEFT].card is None
    assert m.discard == ["5H", "QS"], "what the view shows is kept"


def test_a_snapshot_after_a_gap_in_which_nothing_moved_keeps_what_it_knew() -> None:
    seat0 = Seat0()
    seat0.to_seat_1s_turn()
    seat0.step([], seen=False)  # a reaction, say: nothing moved
    seat0.memory.observe(seat0.update("snapshot", []))
    assert seat0.memory.hands[0][LEFT].card == "9H"
    assert seat0.memory.hands[0][RIGHT].card == "8D"


def test_updates_in_sequence_keep_what_it_knew() -> None:
    seat0 = Seat0()
    seat0.to_seat_1s_turn()
    seat0.queen(seen=True)
    m = seat0.memory
    assert m.hands[1][LEFT].card == "9H", "it followed the Queen: its 9 went to seat 1"
    assert m.hands[0][RIGHT].card == "8D"


def test_a_gap_over_a_rematch_is_another_deal() -> None:
    """The same round index in the next game (the rematch was missed): the room's commitment to the deck tells
    the deals apart, and nothing of the old one is kept."""
    seat0 = Seat0()
    seat0.to_seat_1s_turn()
    m = seat0.memory
    m.observe({**seat0.update("update", []), "v": seat0.v + 1, "room": {"phase": "play", "fair": {"commitment": "a"}}})
    assert m.hands[0][LEFT].card == "9H"
    rematch = Seat0()  # the next game's first deal, at the same instant of the same round index: its own deck
    rematch.game.start_round(stacked_deck(2, HANDS[::-1], PILE))
    rematch.game.apply(Draw(0))
    rematch.game.apply(Discard(0))
    view = rematch.update("snapshot", [])
    m.observe({**view, "v": seat0.v + 9, "room": {"phase": "play", "fair": {"commitment": "b"}}})
    assert [info.card for info in m.hands[0]] == [None, None, None]


def _placed(
    hands: list[list[str | None]],
    unlocated: list[str],
    *,
    plain: tuple[tuple[int, int], ...] = (),
    pile: int = 0,
    holding: bool = False,
) -> Memory:
    """Seat 0's memory in a two-player round: ``hands`` as it knows them (``plain``: slots known to hold a card
    kept from the draw pile), ``pile`` cards of a draw pile whose order it does not know, another seat
    ``holding`` a card it drew unseen; every card not in ``unlocated`` or a hand lies face up on the discard pile."""
    m = Memory()
    m.me, m.players = 0, 2
    m.hands = [[SlotInfo(card) for card in hand] for hand in hands]
    for s, i in plain:
        m.hands[s][i].plain = True
    known = {c for hand in hands for c in hand if c is not None}
    m.discard = [c for c in FULL_DECK if c not in known and c not in unlocated]
    m.known_pile = None if pile else []
    drawn = {"from": "deck", "card": None} if holding else None
    m.table = {"players": ["Ana", "Ben"], "round": {"ended": False, "turn": 1, "drawn": drawn, "draw_pile": pile}}
    return m


def test_a_card_that_follows_by_elimination_is_named() -> None:
    """docs/replays.md: a card is named where it is the only card that can lie there (every other card of the
    deck located; a slot kept from the draw pile holds no J, Q or K); never where two cards could."""
    mine: list[str | None] = ["2C", "3C", "4C"]
    # One card unlocated, one place unknown: it is there.
    m = _placed([mine, ["5C", None, "6C"]], ["7C"])
    assert m.deduced() == ([mine, ["5C", "7C", "6C"]], None)
    # Two cards, two slots: either could be in either.
    m = _placed([mine, ["5C", None, None]], ["7C", "KS"])
    assert m.deduced() == ([mine, ["5C", None, None]], None)
    # ... unless one slot holds a card kept from the draw pile: the King is in the other.
    m = _placed([mine, ["5C", None, None]], ["7C", "KS"], plain=((1, 2),))
    assert m.deduced() == ([mine, ["5C", "KS", "7C"]], None)
    # Two plain cards for two plain slots: unknown.
    m = _placed([mine, ["5C", None, None]], ["7C", "8C"], plain=((1, 1), (1, 2)))
    assert m.deduced() == ([mine, ["5C", None, None]], None)
    # The card another player drew, unseen, when it is the only card unlocated.
    m = _placed([mine, ["5C", "6C", "8C"]], ["QS"], holding=True)
    assert m.deduced() == ([mine, ["5C", "6C", "8C"]], "QS")
    # A draw pile whose order is unknown is a place too: the King may be there or in the slot.
    m = _placed([mine, ["5C", "6C", None]], ["7C", "KS"], pile=1)
    assert m.deduced() == ([mine, ["5C", "6C", None]], None)
    # ... but a plain slot beside it holds the 7 all the same.
    m = _placed([mine, ["5C", "6C", None]], ["7C", "KS"], plain=((1, 2),), pile=1)
    assert m.deduced() == ([mine, ["5C", "6C", "7C"]], None)
