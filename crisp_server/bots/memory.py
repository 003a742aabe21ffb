"""What one seat has seen, rebuilt from the updates it was sent: the knowledge every level decides from.

A :class:`Memory` is fed the same ``update`` (or ``snapshot``) objects a client gets (``docs/protocol.md``:
``table``, ``you`` and the ``events`` this seat may see) and keeps, per round:

* for every seat and slot a :class:`SlotInfo`: the exact card when this seat knows it (its own peeks, a
  card taken from the public discard pile, a card it gave away with a Queen, a card drawn from a draw pile
  whose order it knows), else an upper bound on the value inferred from what the owner kept and threw away;
* the discard pile, in order, so that when it is turned over (unshuffled, docs/rules.md) the new draw pile's
  order is known: every later draw from it is a known card;
* its own drawn card, the caller, the totals.

A ``snapshot``, or an ``update`` after a gap in ``v`` (a reconnect: the updates in between were never seen),
shows the state but not how it got there: what the memory placed in the hands may have moved meanwhile (a
Queen swaps any two cards, a swap replaces one). Unless the view proves that no move ended in the gap (the
discard pile and the draw pile unchanged), it forgets every card it placed in a hand and every inference,
and keeps what the view shows (the discard pile, its drawn card, the totals).

It records facts and honest inferences only; which of them a level uses (or forgets) is the level's
choice. Nothing here reads the game: a memory cannot know more than the updates it was given.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from crisp_server.engine.cards import FACE_RANKS, FULL_DECK, VALUES

SLOTS: Final = ("left", "middle", "right")
LEFT, MIDDLE, RIGHT = 0, 1, 2
#: The slots whose card the owner looks at when it lands there (deal, Queen).
LOOKED_AT: Final = frozenset((LEFT, RIGHT))
SLOT_INDEX: Final = {name: i for i, name in enumerate(SLOTS)}
#: Highest card value (T, J, Q and K count 10 in a hand).
TOP: Final = 10
#: A player who puts a draw-pile card into a slot it does not know does so, if sensible, with a card below
#: the mean of a hand card (6.5): this is the bound the memory assumes for such a kept card.
BLIND_KEEP_BOUND: Final = 6
#: A player who gives a card it knows away with a Queen gives, if sensible, a high one: at least this.
QUEEN_GIVE_FLOOR: Final = 7


def value(card: str) -> int:
    """A card's value in a hand."""
    return VALUES[card]


class SlotInfo:
    """What this seat knows about one card position: ``card`` if known exactly, else ``floor`` and ``bound``:
    the card's value is believed to lie between them. ``owner_knows``: the slot's owner has seen the card there.
    ``learned``: this seat's own move count when it last learned the card (forgetful levels use it).
    ``plain``: the card is surely not a J, Q or K (it was kept from the draw pile, where the rules let no
    face card be swapped in): a fact, not an inference."""

    __slots__ = ("bound", "card", "floor", "learned", "owner_knows", "plain")

    def __init__(
        self,
        card: str | None = None,
        bound: int = TOP,
        owner_knows: bool = False,
        learned: int = 0,
        *,
        plain: bool = False,
    ) -> None:
        self.card = card
        self.bound = bound
        self.floor = 1
        self.owner_knows = owner_knows
        self.learned = learned
        self.plain = plain

    def __repr__(self) -> str:
        return f"SlotInfo({self.card!r}, bound={self.bound}, owner_knows={self.owner_knows})"


@dataclass(frozen=True, slots=True)
class Pool:
    """The values of the cards whose place a seat does not know (the unseen cards), as counts per value."""

    counts: tuple[int, ...]  # index 1..10; index 0 unused

    @classmethod
    def of(cls, unseen: Iterable[str]) -> Pool:
        counts = [0] * (TOP + 1)
        for card in unseen:
            counts[VALUES[card]] += 1
        return cls(tuple(counts))

    @property
    def size(self) -> int:
        return sum(self.counts)

    @staticmethod
    def _range(bound: int, floor: int) -> range:
        high = max(1, min(bound, TOP))
        return range(floor if floor <= high else 1, high + 1)  # a floor above the bound is a wrong guess

    def mean(self, bound: int = TOP, floor: int = 1) -> float:
        """The expected value of an unseen card whose value lies between ``floor`` and ``bound``."""
        n = s = 0
        values = self._range(bound, floor)
        for v in values:
            c = self.counts[v]
            n += c
            s += c * v
        if n == 0:  # nothing unseen fits: the range's middle is the honest guess
            return (values.start + values.stop - 1) / 2
        return s / n

    def variance(self, bound: int = TOP, floor: int = 1) -> float:
        m = self.mean(bound, floor)
        n = 0
        s = 0.0
        for v in self._range(bound, floor):
            c = self.counts[v]
            n += c
            s += c * (v - m) ** 2
        return s / n if n else 0.0


class Memory:
    """One seat's knowledge of the current round, updated by :meth:`observe`."""

    def __init__(self) -> None:
        self.me: int | None = None
        self.players = 0
        self.round_index = -1
        self.table: Mapping[str, Any] = {}
        self.you: Mapping[str, Any] = {}
        self.phase: str | None = None  # the room's phase when the update has a ``room`` part (not the arena's)
        self.ready = False  # this seat has said ``ready`` in the room's peek or pause between rounds
        self.hands: list[list[SlotInfo]] = []
        self.discard: list[str] = []  # bottom first, as in the view
        self.known_pile: list[str] | None = None  # the draw pile's order after a turn-over, top last
        self.drawn: str | None = None  # the card this seat holds, drawn from either pile
        self.v: int | None = None  # the room version of the last update or snapshot (none in the arena)
        self.deal: str | None = None  # the room's commitment to the deck of the round dealt last (``room.fair``)
        self.moves = 0  # this seat's own moves this game (forgetful levels measure time in them)
        self.round_moves = 0  # its own moves this round (a round that drags on makes every level call)
        self._pending: str | None = None  # the card the acting seat drew, when this seat knows it

    # -- reading -------------------------------------------------------------------------------------

    @property
    def round(self) -> Mapping[str, Any] | None:
        r: Mapping[str, Any] | None = self.table.get("round") if self.table else None
        return r

    @property
    def can(self) -> Sequence[str]:
        can: Sequence[str] = self.you.get("can", ())
        return can

    @property
    def discard_draw(self) -> bool:
        return bool(self.table.get("options", {}).get("discard_draw", False))

    @property
    def caller(self) -> int | None:
        r = self.round
        return None if r is None else r.get("caller")

    @property
    def final_turns(self) -> bool:
        r = self.round
        return r is not None and r.get("final_turns_left") is not None

    @property
    def totals(self) -> Sequence[int]:
        totals: Sequence[int] = self.table.get("totals", ())
        return totals

    @property
    def discard_top(self) -> str | None:
        return self.discard[-1] if self.discard else None

    def mine(self) -> list[SlotInfo]:
        assert self.me is not None
        return self.hands[self.me]

    def opponents(self) -> list[int]:
        """The other seats."""
        return [s for s in range(self.players) if s != self.me]

    def located(self) -> set[str]:
        """Every card whose place this seat knows: hands, the discard pile, a known draw pile, its drawn card."""
        out = {info.card for hand in self.hands for info in hand if info.card is not None}
        out.update(self.discard)
        if self.known_pile:
            out.update(self.known_pile)
        if self.drawn is not None:
            out.add(self.drawn)
        return out

    def pool(self, located: set[str] | None = None) -> Pool:
        """The unseen cards' values (``located``: what to count as seen; default: everything this seat knows)."""
        seen = self.located() if located is None else located
        return Pool.of(c for c in FULL_DECK if c not in seen)

    def own_pool(self) -> Pool:
        """The cards this seat has not seen among its own cards, its drawn card and the discard pile."""
        seen = {info.card for info in self.mine() if info.card is not None}
        seen.update(self.discard)
        if self.drawn is not None:
            seen.add(self.drawn)
        return self.pool(seen)

    def held(self) -> str | None:
        """The card the player to move holds, when this seat knows it: its own, one taken from the discard
        pile, one drawn from a draw pile whose order it knows."""
        if self.drawn is not None:
            return self.drawn
        if self._pending is not None:
            return self._pending
        r = self.round
        drawn = r.get("drawn") if r is not None else None
        card: str | None = drawn.get("card") if drawn is not None else None
        return card

    def deduced(self) -> tuple[list[list[str | None]], str | None]:
        """Per seat and slot the card this seat can name, and the card the player to move holds if it can name
        it: what it knows (:attr:`hands`, :meth:`held`), and what follows from it by elimination.

        Every card of the deck is somewhere: a card this seat has not located lies in one of the places whose
        card it does not know (a slot, the held card, a card of a draw pile whose order it does not know).
        Some slots surely hold no face card (``plain``); every other place may hold any. A place's card is
        determined when one card alone can lie there in every way of putting the unlocated cards in those
        places: a plain slot when one unlocated card is not a face card and the face cards fill the other
        places exactly; another place when it is the only such place and one face card is unlocated, or
        when it is the only place left and so is the card."""
        hands: list[list[str | None]] = [[info.card for info in hand] for hand in self.hands]
        held = self.held()
        r = self.round
        if r is None or r.get("ended"):
            return hands, held
        located = self.located()
        if held is not None:
            located.add(held)
        unseen = [c for c in FULL_DECK if c not in located]
        faces = [c for c in unseen if c[0] in FACE_RANKS]
        others = [c for c in unseen if c[0] not in FACE_RANKS]
        unknown = [(s, i, x.plain) for s, hand in enumerate(self.hands) for i, x in enumerate(hand) if x.card is None]
        plain = [(s, i) for s, i, kept in unknown if kept]
        other = [(s, i) for s, i, kept in unknown if not kept]
        holding = r.get("drawn") is not None and held is None  # a card held that this seat does not know
        pile = 0 if self.known_pile is not None else int(r["draw_pile"])
        anywhere = len(other) + holding + pile  # the places that may hold a face card
        if anywhere + len(plain) != len(unseen):
            return hands, held  # not a view this memory followed from its deal: nothing to deduce
        if len(plain) == 1 and len(others) == 1 and anywhere == len(faces):
            s, i = plain[0]
            hands[s][i] = others[0]
        if anywhere == 1 and (len(faces) == 1 or (not faces and not plain)):
            card = faces[0] if faces else others[0]
            if other:
                s, i = other[0]
                hands[s][i] = card
            elif holding:
                held = card
        return hands, held

    def next_draw(self) -> str | None:
        """The top of the draw pile when this seat knows it (after a turn-over), else ``None``."""
        if self.known_pile:
            return self.known_pile[-1]
        return None

    # -- feeding -------------------------------------------------------------------------------------

    def observe(self, update: Mapping[str, Any]) -> None:
        """Take in one update or snapshot this seat was sent."""
        table = update.get("table")
        you = update.get("you") or {}
        room = update.get("room")
        v = update.get("v")
        # Updates raise ``v`` by exactly 1: anything else (or a snapshot) means this seat missed some.
        gap = update.get("type") == "snapshot" or (isinstance(v, int) and self.v is not None and v != self.v + 1)
        if isinstance(v, int):
            self.v = v
        before = self.round
        deal = self.deal
        if room is not None and room.get("fair"):
            self.deal = room["fair"].get("commitment")
        # The same round index in another game (a rematch missed in a gap) is another deal.
        dealt_again = deal is not None and self.deal != deal
        if room is not None:
            self.phase = room.get("phase")
        if you:
            self.you = you
            self.me = you.get("seat")
        if room is not None and self.me is not None and self.me < len(room.get("seats", ())):
            self.ready = bool(room["seats"][self.me].get("ready"))
        if table is None:
            return
        self.table = table
        self.players = len(table["players"])
        r = table.get("round")
        if r is None:
            return
        events = update.get("events", ())
        started = any(e.get("type") == "round_started" for e in events)
        if (r["index"] != self.round_index or (gap and dealt_again)) and not started:
            self._new_round(r["index"])  # a snapshot in a round this memory did not see begin
        elif gap and not started and not _nothing_moved(before, r):
            self._forget_hands()
        for event in events:
            handler = _HANDLERS.get(event.get("type", ""))
            if handler is not None:
                handler(self, event)
        # The view is the authority on public facts: a snapshot (events empty) resynchronises here.
        if self.discard != r["discard"]:
            self.discard = list(r["discard"])
            self.known_pile = None  # its order can no longer be followed
        if self.known_pile is not None and len(self.known_pile) != r["draw_pile"]:
            self.known_pile = None
        # Its own drawn card: from the draw pile in ``you``, from the discard pile in ``table`` (public).
        drawn = r.get("drawn")
        self.drawn = you.get("drawn_card") or (drawn["card"] if drawn is not None and r["turn"] == self.me else None)

    def _round_started(self, e: Mapping[str, Any]) -> None:
        self._new_round(e["round"])

    def _new_round(self, index: int) -> None:
        self.round_index = index
        self.hands = [
            [SlotInfo(owner_knows=slot in LOOKED_AT) for slot in range(3)] for _ in range(max(self.players, 1))
        ]
        self.discard = []
        self.known_pile = None
        self.drawn = None
        self.round_moves = 0
        self._pending = None

    def _forget_hands(self) -> None:
        """After a gap in which cards may have moved: nothing placed in a hand is sure any more. Every slot
        is as unknown as at a deal seen from outside (the owner presumably knows its left and right cards)."""
        self.hands = [
            [SlotInfo(owner_knows=slot in LOOKED_AT, learned=self.moves) for slot in range(3)]
            for _ in range(max(self.players, 1))
        ]
        self.known_pile = None
        self._pending = None

    def _slot(self, seat: int, slot: str) -> SlotInfo:
        return self.hands[seat][SLOT_INDEX[slot]]

    def _take_from_pile(self) -> str | None:
        if self.known_pile:
            return self.known_pile.pop()
        return None

    def _card_shown(self, e: Mapping[str, Any]) -> None:
        card = e["card"]
        if e["slot"] is None:
            self.drawn = card
            return
        info = self._slot(e["seat"], e["slot"])
        info.card = card
        info.bound = value(card)
        info.owner_knows = True
        info.learned = self.moves

    def _drew(self, e: Mapping[str, Any]) -> None:
        if e["source"] == "discard":
            card = e["card"]
            if self.discard and self.discard[-1] == card:
                self.discard.pop()
            self._pending = card
        else:
            self._pending = self._take_from_pile()
        if e["seat"] == self.me:
            self.moves += 1
            self.round_moves += 1
            if self._pending is not None:
                self.drawn = self._pending

    def _swapped(self, e: Mapping[str, Any]) -> None:
        seat = e["seat"]
        slot = SLOT_INDEX[e["slot"]]
        old = self.hands[seat][slot]
        discarded = e["discarded"]
        self.discard.append(discarded)
        card = e["card"] or (self.drawn if seat == self.me else None) or self._pending
        if card is not None:
            new = SlotInfo(card, value(card), True, self.moves)
        else:
            # A draw-pile card kept: a sensible player keeps it only if it beats what the slot held.
            bound = max(1, value(discarded) - 1) if old.owner_knows else BLIND_KEEP_BOUND
            new = SlotInfo(None, bound, True, self.moves, plain=True)  # kept from the draw pile: no face card
        self.hands[seat][slot] = new
        self._end_move(seat)

    def _discarded(self, e: Mapping[str, Any]) -> None:
        seat = e["seat"]
        card = e["card"]
        self.discard.append(card)
        if seat != self.me and card[0] not in "JQK":
            # Throwing a v away says: every card the player knows is worth at most v (if it plays sensibly).
            v = value(card)
            for info in self.hands[seat]:
                if info.owner_knows and info.card is None and info.bound > v:
                    info.bound = v
        self._end_move(seat)

    def _special(self, e: Mapping[str, Any]) -> None:
        self.discard.append(e["card"])
        self._end_move(e["seat"])

    def _jack(self, e: Mapping[str, Any]) -> None:
        self.hands[e["seat"]][MIDDLE].owner_knows = True
        self._special(e)

    def _queen(self, e: Mapping[str, Any]) -> None:
        seat, target = e["seat"], e["target"]
        a, b = SLOT_INDEX[e["slot"]], SLOT_INDEX[e["target_slot"]]
        mine, theirs = self.hands[seat][a], self.hands[target][b]
        if seat != self.me and mine.card is None and mine.owner_knows:
            mine.floor = max(mine.floor, QUEEN_GIVE_FLOOR)
        # What this seat knew about each card moves with the card; each new owner sees it in left/right.
        self.hands[seat][a], self.hands[target][b] = theirs, mine
        theirs.owner_knows = a in LOOKED_AT
        mine.owner_knows = b in LOOKED_AT
        self._special(e)

    def _timed_out(self, e: Mapping[str, Any]) -> None:
        if e["drew_for_player"]:
            self._take_from_pile()
        self.discard.append(e["discarded"])
        self._end_move(e["seat"])

    def _pile_turned(self, e: Mapping[str, Any]) -> None:
        # docs/rules.md: turned over without shuffling, the card discarded first becomes the top.
        self.known_pile = self.discard[::-1] if len(self.discard) == e["cards"] else None
        self.discard = []

    def _end_move(self, seat: int) -> None:
        self._pending = None
        if seat == self.me:
            self.drawn = None


def _nothing_moved(before: Mapping[str, Any] | None, now: Mapping[str, Any]) -> bool:
    """No move ended between two views of the same round: every move that ends puts a card on the discard pile
    (a pile turned over empties it), and a draw takes one from a pile, so both are as they were."""
    return (
        before is not None
        and before["index"] == now["index"]
        and before["discard"] == now["discard"]
        and before["draw_pile"] == now["draw_pile"]
    )


_HANDLERS: Final = {
    "round_started": Memory._round_started,
    "card_shown": Memory._card_shown,
    "drew": Memory._drew,
    "swapped": Memory._swapped,
    "discarded": Memory._discarded,
    "jack_used": Memory._jack,
    "queen_used": Memory._queen,
    "king_used": Memory._special,
    "timed_out": Memory._timed_out,
    "pile_turned": Memory._pile_turned,
}
