"""Who may know which card: a model the tests keep beside the engine to catch leaks.

The model is built from the rules (docs/rules.md, "Not in the rules") and the engine's ground truth (hands,
piles, the drawn card) after each transition; it never reads ``views.py`` or the events' contents, so a
card that an event or a view shows but the model does not allow is a leak. A seat may know:

* its own left and right card from the deal;
* a card it drew from the draw pile (remembered after it is played);
* its own middle card after a Jack;
* a card it received in its left or right slot through a Queen (either side of the exchange);
* every public card: whatever lay face up on the discard pile (also once taken from it or turned over
  into the draw pile) and, at the round's end, every hand.

A spectator (seat ``None``) knows the public cards only. Knowledge is per round: the next deal reuses the
codes in new places.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from typing import Any, Final

from crisp_server.engine import (
    FULL_DECK,
    Action,
    Draw,
    Event,
    Game,
    Round,
    Slot,
    Source,
    UseJack,
    UseQueen,
    event_to_dict,
    visible_to,
)
from crisp_server.engine.views import seat_view, table_view

_QUOTED_CODE: Final = re.compile(r'"([A2-9TJQK][SHDC])"')
#: The slots whose card a player looks at when it lands there (docs/rules.md: deal and Queen).
LOOKED_AT: Final = (Slot.LEFT, Slot.RIGHT)


def card_codes(message: object) -> set[str]:
    """Every card code anywhere in a JSON message (keys and values, at any depth).

    Messages go out as JSON, so the JSON text is what to search: a code is a whole two-letter string.
    """
    return set(_QUOTED_CODE.findall(json.dumps(message)))


def dealt_hands(deck: Sequence[str], players: int, dealer: int) -> list[tuple[str, str, str]]:
    """The hands docs/rules.md deals from ``deck``: three passes (left, middle, right), left of the dealer first."""
    hands: list[list[str]] = [[] for _ in range(players)]
    i = 0
    for _slot in Slot:
        for k in range(1, players + 1):
            hands[(dealer + k) % players].append(deck[i])
            i += 1
    return [(h[0], h[1], h[2]) for h in hands]


def cards_in_hands(r: Round) -> set[str]:
    return {card for hand in r.hands for card in hand}


class Knowledge:
    """The cards each seat, and a spectator, may know in the current round."""

    def __init__(self, game: Game) -> None:
        self.players = game.seats
        self.round_index = -1
        self.public: set[str] = set()
        self.private: list[set[str]] = [set() for _ in range(self.players)]
        self._dealt_pile: list[str] = []  # the draw pile as dealt, top last
        self._pile_draws = 0  # cards taken from the draw pile this round
        self._timeouts_seen = 0
        self._had_drawn = False  # whether the current move had drawn at the last look

    # -- keeping up with the game ----------------------------------------------------------------------

    def sync_round(self, game: Game) -> None:
        """Start over from the deal when ``game`` is in a round this model has not seen yet."""
        r = game.round
        assert r is not None
        if r.index == self.round_index:
            return
        self.round_index = r.index
        self.public = set()
        self.private = [{left, right} for left, _middle, right in dealt_hands(r.deck, self.players, r.dealer)]
        self._dealt_pile = list(reversed(r.deck[3 * self.players :]))
        self._pile_draws = 0
        self._timeouts_seen = 0
        self._had_drawn = False

    def learn(self, game: Game, action: Action, accepted: bool) -> None:
        """Update after ``game.apply(action)`` or ``game.act(action, at)`` (``accepted``: not rejected)."""
        self.sync_round(game)
        r = game.round
        assert r is not None
        seat = action.seat
        deck_draw = accepted and isinstance(action, Draw) and action.source is Source.DECK
        if deck_draw:
            # A draw never ends the move, so the card is still the drawn one.
            assert r.drawn is not None
            self.private[seat].add(r.drawn)
        elif accepted and isinstance(action, UseJack):
            self.private[seat].add(r.hands[seat][Slot.MIDDLE])
        elif accepted and isinstance(action, UseQueen):
            for who, slot in ((seat, action.slot), (action.target, action.target_slot)):
                if slot in LOOKED_AT:
                    self.private[who].add(r.hands[who][slot])
        self._observe(game, 1 if deck_draw else 0)

    def refresh(self, game: Game) -> None:
        """Update after a transition that is not an action: the deal, or ``game.advance``."""
        self.sync_round(game)
        self._observe(game, 0)

    def _observe(self, game: Game, deck_draws: int) -> None:
        """Add what is public now. ``deck_draws``: cards the action itself drew from the draw pile."""
        r = game.round
        assert r is not None
        self.public.update(r.discard)
        if r.drawn is not None and r.drawn_from is Source.DISCARD:
            self.public.add(r.drawn)  # it may have been discarded earlier in the same transition
        # Count the cards taken from the draw pile to know whether it has been turned over: the state alone
        # cannot tell, since a pile discarded in draw order and turned over looks exactly as dealt. Every
        # time-out draws a card, except the first of a transition when the timed-out move had drawn already.
        timeouts = len(r.timeouts) - self._timeouts_seen
        self._pile_draws += deck_draws + timeouts - (1 if timeouts and self._had_drawn else 0)
        self._timeouts_seen = len(r.timeouts)
        self._had_drawn = r.drawn is not None
        untouched = len(self._dealt_pile) - self._pile_draws
        if untouched >= 0:
            assert r.draw_pile == self._dealt_pile[:untouched], "the draw pile is not what is left of the deal"
        else:
            # Turned over (docs/rules.md: only once empty): every card in it lay face up on the discard pile,
            # perhaps only in the middle of a chain of time-outs, between two looks of this model.
            self.public.update(r.draw_pile)
        if r.ended:
            self.public.update(cards_in_hands(r))

    def knows(self, seat: int | None) -> set[str]:
        """The codes ``seat`` (``None``: a spectator) may see in any message now."""
        if seat is None:
            return set(self.public)
        return self.public | self.private[seat]

    # -- the checks ------------------------------------------------------------------------------------

    def viewers(self) -> Iterable[int | None]:
        yield None
        yield from range(self.players)

    def check_events(self, events: Sequence[Event]) -> None:
        """No event addressed to a viewer carries a card that viewer may not know."""
        for event in events:
            message = event_to_dict(event)
            assert event.to is None or 0 <= event.to < self.players, f"addressed to no seat: {message}"
            for viewer in self.viewers():
                visible = visible_to(event, viewer)
                assert visible == (event.to is None or event.to == viewer), f"visible_to disagrees with to: {message}"
                if not visible:
                    continue
                leaked = card_codes(message) - self.knows(viewer)
                assert not leaked, f"seat {viewer} was sent {sorted(leaked)} it may not know: {message}"

    def check_views(self, game: Game) -> None:
        """Every seat's view and a spectator's: nothing unknown, no face-down value, one shared table."""
        r = game.round
        assert r is not None
        table = table_view(game)
        private_drawn = r.drawn if r.drawn is not None and r.drawn_from is Source.DECK else None
        running = not r.ended
        hidden = cards_in_hands(r) if running else set()
        if private_drawn is not None:
            hidden.add(private_drawn)
        table_cards = card_codes(table)
        assert table_cards <= self.public, f"the table shows non-public {sorted(table_cards - self.public)}"
        assert not table_cards & hidden, f"the table shows face-down {sorted(table_cards & hidden)}"
        for viewer in self.viewers():
            view = seat_view(game, viewer)
            assert view["table"] == table, f"seat {viewer} gets another table than everyone else"
            you: dict[str, Any] = view["you"]
            assert you["seat"] == viewer
            drawer = viewer is not None and viewer == r.turn and running
            assert you["drawn_card"] == (private_drawn if drawer else None), f"seat {viewer}: drawn_card {you}"
            if viewer is None:
                assert you == {"seat": None, "drawn_card": None, "can": []}
            shown = table_cards | card_codes(you)  # the table is the same for all, searched once
            leaked = shown - self.knows(viewer)
            assert not leaked, f"seat {viewer}'s view shows {sorted(leaked)} it may not know"
            # Face-down values stay out of every view while the round runs, the owner's included; the one
            # exception is the drawer's own deck-drawn card, in you.drawn_card only.
            face_down = (shown & hidden) - ({you["drawn_card"]} if drawer else set())
            assert not face_down, f"seat {viewer}'s view shows face-down {sorted(face_down)}"


def check_cards_conserved(r: Round) -> None:
    """The 52 cards are each in exactly one place: draw pile, discard pile, a hand slot or the drawn card."""
    places = [*r.draw_pile, *r.discard, *(card for hand in r.hands for card in hand)]
    if r.drawn is not None:
        places.append(r.drawn)
    assert sorted(places) == sorted(FULL_DECK), "cards lost or duplicated"
    assert all(len(hand) == 3 for hand in r.hands)
    assert (r.drawn is None) == (r.drawn_from is None)
