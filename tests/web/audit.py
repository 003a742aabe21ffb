"""Check what one member of a room was sent against the rules, card by card.

Each round's deck is revealed at its end (``deck_revealed``), and its commitment was sent at the deal. With
the deck, the public events say where every card went: the deal (docs/rules.md: three passes, left of the dealer
first), the draw pile in deck order, the discard pile, swaps and Queen exchanges, the pile turned over
unshuffled. The audit follows them and checks every message against that: the table's piles, the drawn
card's origin, ``you.drawn_card``, the private ``card_shown`` events, the revealed hands, sums, points,
totals and winners. It is an oracle kept apart from the engine on purpose: it reads only the wire.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from crisp_server.engine import FULL_DECK
from tests.web.bots import SLOTS, dealt_hands

Message = dict[str, Any]

SLOT: Final = {name: i for i, name in enumerate(SLOTS)}
SALT: Final = re.compile(r"[0-9a-f]{32}")
CRISP_BONUS: Final = 5


def card_value(code: str) -> int:
    rank = code[0]
    return 1 if rank == "A" else 10 if rank in "TJQK" else int(rank)


def commitment(salt: str, deck: Sequence[str]) -> str:
    """docs/protocol.md, "The fair shuffle": hex SHA-256 of the salt followed by the deck's codes."""
    return hashlib.sha256((salt + "".join(deck)).encode()).hexdigest()


@dataclass
class Report:
    """What an audit saw: rounds followed from deal to end, and the results of each game."""

    rounds: int = 0
    games: list[Message] = field(default_factory=list)  # the game_ended events
    callers: list[int | None] = field(default_factory=list)
    timeouts: int = 0
    pile_turned: int = 0


class RoundSim:
    """One round as the public events tell it, from its revealed deck."""

    def __init__(self, deck: Sequence[str], n: int, dealer: int, viewer: int | None) -> None:
        self.n = n
        self.viewer = viewer
        self.hands = dealt_hands(deck, n, dealer)
        self.pile: list[str] = list(deck[3 * n :])  # top first
        self.discard: list[str] = []  # bottom first
        self.holding: str | None = None
        self.source: str | None = None
        self.turn = dealer  # the deal's turn_started moves it on to the starter
        self.caller: int | None = None
        self.final_left: int | None = None
        self.ended = False

    def _take(self) -> str:
        assert self.pile, "a card was drawn from an empty draw pile without turning the discard pile over"
        return self.pile.pop(0)

    def _played(self, card: str) -> None:
        assert self.holding is not None, "a card was played without being drawn"
        assert card == self.holding, f"played {card}, but {self.holding} was drawn"
        self.discard.append(card)
        self.holding = None
        self.source = None

    def _turn_ended(self) -> None:
        if self.final_left is not None:
            self.final_left -= 1

    def apply(self, e: Message, report: Report) -> None:
        kind = e["type"]
        hands = self.hands
        if kind == "card_shown":
            assert self.viewer is not None, f"a spectator was sent a card_shown: {e}"
            assert e["seat"] == self.viewer, f"someone else's card_shown: {e}"
            if e["why"] == "draw":
                assert e["slot"] is None
                assert self.source == "deck"
                assert e["card"] == self.holding, f"{e}, drawn {self.holding}"
            else:
                allowed = {"deal": ("left", "right"), "jack": ("middle",), "queen": ("left", "right")}[e["why"]]
                assert e["slot"] in allowed, e
                assert hands[self.viewer][SLOT[e["slot"]]] == e["card"], f"{e}, hand {hands[self.viewer]}"
        elif kind == "turn_started":
            assert e["seat"] == (self.turn + 1) % self.n, f"{e} after seat {self.turn}"
            assert e["seat"] != self.caller, "the caller took another turn"
            self._turn_ended()
            self.turn = e["seat"]
            assert e["final_turn"] == (self.final_left is not None)
        elif kind == "drew":
            assert e["seat"] == self.turn
            assert self.holding is None
            if e["source"] == "deck":
                assert e["card"] is None, f"a card from the draw pile shown to all: {e}"
                self.holding = self._take()
            else:
                assert self.discard, "a draw from the empty discard pile"
                assert self.discard[-1] == e["card"], f"{e}, discard pile {self.discard}"
                self.holding = self.discard.pop()
            self.source = e["source"]
        elif kind == "pile_turned":
            assert not self.pile
            assert e["cards"] == len(self.discard) > 0
            self.pile, self.discard = list(self.discard), []  # the first discarded becomes the top
            report.pile_turned += 1
        elif kind == "swapped":
            seat, slot = e["seat"], SLOT[e["slot"]]
            assert seat == self.turn
            assert self.holding is not None
            assert hands[seat][slot] == e["discarded"], f"{e}, hand {hands[seat]}"
            assert e["card"] == (self.holding if self.source == "discard" else None), e
            if self.source == "deck":
                assert self.holding[0] not in "JQK", f"a face card from the draw pile went into a hand: {e}"
            hands[seat][slot] = self.holding
            self.discard.append(e["discarded"])
            self.holding = self.source = None
        elif kind == "discarded":
            assert self.source == "deck", f"a card from the discard pile was discarded: {e}"
            self._played(e["card"])
        elif kind in ("jack_used", "king_used", "queen_used"):
            assert self.source == "deck", e
            assert e["card"][0] == kind[0].upper(), e
            if kind == "queen_used":
                a, b = (e["seat"], SLOT[e["slot"]]), (e["target"], SLOT[e["target_slot"]])
                assert a[0] != b[0]
                hands[a[0]][a[1]], hands[b[0]][b[1]] = hands[b[0]][b[1]], hands[a[0]][a[1]]
            self._played(e["card"])
        elif kind == "timed_out":
            assert e["seat"] == self.turn
            report.timeouts += 1
            if e["drew_for_player"]:
                assert self.holding is None
                self.holding = self._take()
            self._played(e["discarded"])
        elif kind == "crisp_called":
            assert self.caller is None, "a second call in one round"
            assert e["final_turns"] == self.n - 1
            self.caller = e["seat"]
            self.final_left = self.n - 1
            # The call is from the player whose turn just ended; the turn under way (maybe not started yet)
            # is the first final turn.
            assert e["seat"] == (self.turn - 1) % self.n, f"{e} during seat {self.turn}'s turn"
        elif kind == "round_ended":
            self._turn_ended()
            assert self.final_left == 0, f"the round ended with {self.final_left} final turns to go"
            assert self.holding is None
            assert e["caller"] == self.caller
            assert e["hands"] == hands, f"revealed {e['hands']}, the deck and the moves give {hands}"
            sums = [sum(card_value(c) for c in h) for h in hands]
            assert e["sums"] == sums
            points = list(sums)
            if self.caller is not None:
                alone = all(sums[self.caller] < s for i, s in enumerate(sums) if i != self.caller)
                points[self.caller] += -CRISP_BONUS if alone else CRISP_BONUS
            assert e["points"] == points
            self.ended = True

    def check_table(self, message: Message) -> None:
        """The state a message shows agrees with the round as followed so far."""
        r = message["table"]["round"]
        you = message["you"]
        assert r["discard"] == self.discard, f"table discard {r['discard']}, expected {self.discard}"
        if self.ended:
            assert r["ended"]
            assert r["hands"] == self.hands
            assert you["drawn_card"] is None
            return
        assert not r["ended"]
        assert r["hands"] is None
        assert r["sums"] is None
        assert r["draw_pile"] == len(self.pile)
        assert r["turn"] == self.turn
        assert r["caller"] == self.caller
        if self.holding is None:
            assert r["drawn"] is None
        else:
            card = self.holding if self.source == "discard" else None
            assert r["drawn"] == {"from": self.source, "card": card}, r["drawn"]
        mine = self.viewer is not None and self.viewer == self.turn and self.source == "deck"
        assert you["drawn_card"] == (self.holding if mine else None), you


def audit(messages: Sequence[Message], viewer: int | None, score_limit: int) -> Report:
    """Check every message a member (``viewer``; ``None``: a spectator) was sent, in order. Rounds whose
    deal the member did not see, or during which it missed messages, are only checked for fairness."""
    report = Report()
    decks: dict[str, list[str]] = {}
    for m in messages:
        for e in m.get("events", ()):
            if e["type"] == "deck_revealed":
                assert SALT.fullmatch(e["salt"]), e["salt"]
                assert sorted(e["deck"]) == sorted(FULL_DECK), "the revealed deck is not the 52 cards"
                decks[commitment(e["salt"], e["deck"])] = e["deck"]
    sim: RoundSim | None = None
    totals: list[int] | None = None
    announced: str | None = None  # the commitment sent while the round ran
    v = 0
    for m in messages:
        kind = m.get("type")
        if kind not in ("update", "snapshot"):
            continue
        if kind == "update" and v and m["v"] != v + 1:
            sim, totals, announced = None, None, None  # missed messages: follow again from the next deal
        v = m["v"]
        table, fair = m["table"], m["room"]["fair"]
        n = len(m["room"]["seats"])
        by_type = {e["type"]: e for e in m["events"]}
        if "round_started" in by_type:
            announced = None
        if fair is not None and "salt" not in fair:
            assert announced in (None, fair["commitment"]), "the commitment changed while the round ran"
            announced = fair["commitment"]
        for e in m["events"]:
            if e["type"] == "round_started":
                peek = by_type["peek"]
                assert fair == {"round": e["round"], "commitment": peek["commitment"]}
                assert e["starter"] == (e["dealer"] + 1) % n
                assert e["draw_pile"] == 52 - 3 * n
                deck = decks.get(peek["commitment"])
                sim = RoundSim(deck, n, e["dealer"], viewer) if deck is not None else None
                if e["round"] == 0:
                    totals = [0] * n
                # A member who came in later, or missed messages, takes the totals so far from the table.
                assert totals in (None, table["totals"]), f"totals {table['totals']}, expected {totals}"
                totals = list(table["totals"])
            elif e["type"] == "deck_revealed":
                # The fair shuffle: the deck and salt shown now hash to what was sent before the first card.
                assert announced is not None, "a deck revealed for a round whose commitment was never sent"
                assert commitment(e["salt"], e["deck"]) == announced
                assert fair["salt"] == e["salt"]
                assert fair["deck"] == e["deck"]
            elif e["type"] == "round_ended" and sim is not None:
                sim.apply(e, report)
                assert totals is not None
                totals = [t + p for t, p in zip(totals, e["points"], strict=True)]
                assert e["totals"] == totals
                assert "deck_revealed" in by_type
                game_over = max(totals) >= score_limit
                ended = by_type.get("game_ended")
                assert (ended is not None) == game_over, f"totals {totals}, limit {score_limit}: {ended}"
                if ended is not None:
                    low = min(totals)
                    assert ended["totals"] == totals
                    assert ended["winners"] == [s for s, t in enumerate(totals) if t == low]
                    report.games.append(ended)
                report.rounds += 1
                report.callers.append(sim.caller)
            elif e["type"] == "round_ended":
                totals = None  # a round not followed: the next deal's table has the totals
            elif sim is not None:
                sim.apply(e, report)
        if sim is not None and table is not None and table["round"] is not None:
            sim.check_table(m)
            if sim.ended:
                assert table["totals"] == totals
    return report
