"""The rules of Crisp as one state and its transitions (see ``docs/rules.md``).

:class:`Game` holds a whole game: options, seats, the rounds played so far and the totals. Time is an
input: every instant is in milliseconds since the current round's first move could start (the peek
phase is not counted), and the deck of each round is given by the caller. Two transitions change a
game, and both return the ordered events they caused:

* :meth:`Game.advance` moves the clock forward: crisp windows close, the next player's two-second
  block ends, and move clocks run out (a chain of time-outs goes on while the gap lasts);
* :meth:`Game.apply` applies an action at the current instant, or raises :class:`Rejected` and
  changes nothing.

The state is mutable for speed (a room replays thousands of actions a second), but nothing outside
this module writes it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final

from .actions import (
    Action,
    CallCrisp,
    Discard,
    Draw,
    Source,
    Swap,
    TimeOut,
    UseJack,
    UseKing,
    UseQueen,
)
from .cards import FACE_RANKS, JACK, KING, QUEEN, SEEN_SLOTS, VALUES, Slot, deck_problem
from .events import (
    CardShown,
    CrispCalled,
    Discarded,
    Drew,
    Event,
    GameEnded,
    JackUsed,
    KingUsed,
    MoveStarted,
    PileTurned,
    QueenUsed,
    RoundEnded,
    RoundStarted,
    Swapped,
    TimedOut,
    TurnStarted,
    Why,
    WindowClosed,
    WindowOpened,
)
from .rejections import Code, Rejected

MIN_PLAYERS: Final = 2
MAX_PLAYERS: Final = 8
#: The player who just finished a turn may call Crisp for this long.
CRISP_WINDOW_MS: Final = 3000
#: The next player may not draw before this much of the window has passed (unless Crisp is called).
DRAW_BLOCK_MS: Final = 2000
#: Crisp: the caller's score changes by this much when alone lowest, and by minus this otherwise.
CRISP_BONUS: Final = 5
#: Extra moves a King gives.
KING_EXTRA_MOVES: Final = 2


@dataclass(frozen=True, slots=True)
class Options:
    """The host's choices. The lobby offers 50/100/150 and 30/45/60/none; any positive value is valid."""

    score_limit: int = 100
    turn_seconds: int | None = None
    discard_draw: bool = False

    def __post_init__(self) -> None:
        if type(self.score_limit) is not int or self.score_limit <= 0:
            raise ValueError(f"score_limit must be a positive integer, not {self.score_limit!r}")
        if self.turn_seconds is not None and (type(self.turn_seconds) is not int or self.turn_seconds <= 0):
            raise ValueError(f"turn_seconds must be a positive integer or None, not {self.turn_seconds!r}")
        if type(self.discard_draw) is not bool:
            raise ValueError(f"discard_draw must be true or false, not {self.discard_draw!r}")

    def as_dict(self) -> dict[str, int | bool | None]:
        """The options as records, views and the database spell them."""
        return {"score_limit": self.score_limit, "turn_seconds": self.turn_seconds, "discard_draw": self.discard_draw}


@dataclass(frozen=True, slots=True)
class Reveal:
    """A card shown privately to a player (``docs/record-format.md``: ``reveals``)."""

    card: str
    slot: Slot
    why: Why


ROUND_STATE: Final = (
    "index",
    "dealer",
    "starter",
    "deck",
    "hands",
    "draw_pile",
    "discard",
    "now",
    "turn",
    "drawn",
    "drawn_from",
    "extra_moves",
    "move_start",
    "move_started",
    "window_seat",
    "window_closes",
    "caller",
    "final_turns_left",
    "ended",
    "end_at",
    "sums",
    "points",
    "reveals",
    "timeouts",
)
"""Every field of a :class:`Round`, in order (a compiled class lists no ``__slots__`` to read back)."""


class Round:
    """One deal and its play. Read it freely; only :class:`Game` changes it."""

    __slots__ = ROUND_STATE

    def __init__(self, index: int, n: int, dealer: int, deck: Sequence[str]) -> None:
        self.index = index
        self.dealer = dealer
        self.starter = (dealer + 1) % n
        self.deck: tuple[str, ...] = tuple(deck)
        hands = [["", "", ""] for _ in range(n)]
        i = 0
        for slot in Slot:
            for k in range(1, n + 1):  # from the seat left of the dealer round to the dealer
                hands[(dealer + k) % n][slot] = deck[i]
                i += 1
        self.hands: list[list[str]] = hands
        # The top of the draw pile is the end of the list: deck[3n] is drawn first.
        self.draw_pile: list[str] = list(reversed(deck[i:]))
        self.discard: list[str] = []  # bottom first, top last
        self.now = 0
        self.turn = self.starter
        self.drawn: str | None = None
        self.drawn_from: Source | None = None
        self.extra_moves = 0  # extra moves left after the current one
        self.move_start = 0  # when the current move may draw; its clock starts then
        self.move_started = True
        self.window_seat: int | None = None  # whose crisp window is open
        self.window_closes = 0
        self.caller: int | None = None
        self.final_turns_left: int | None = None  # the current final turn included
        self.ended = False
        self.end_at: int | None = None
        self.sums: tuple[int, ...] | None = None
        self.points: tuple[int, ...] | None = None
        self.reveals: list[list[Reveal]] = [
            [Reveal(h[Slot.LEFT], Slot.LEFT, Why.DEAL), Reveal(h[Slot.RIGHT], Slot.RIGHT, Why.DEAL)] for h in hands
        ]
        self.timeouts: list[tuple[int, int]] = []  # (seat, at)

    @property
    def final_turns(self) -> bool:
        """Whether Crisp has been called and the final turns are being played."""
        return self.final_turns_left is not None

    def snapshot(self) -> tuple[object, ...]:
        """Every field as a comparable value (tests use it to see that nothing changed)."""
        return tuple(
            tuple(map(tuple, v)) if name in ("hands", "reveals") else tuple(v) if isinstance(v, list) else v
            for name in ROUND_STATE
            for v in (getattr(self, name),)
        )


class Game:
    """A game of Crisp: seats, options, rounds, totals, and the two transitions."""

    __slots__ = ("_limit", "_round", "first_dealer", "game_over", "options", "players", "rounds", "totals", "winners")

    def __init__(self, players: Sequence[str], options: Options | None = None, first_dealer: int = 0) -> None:
        if not MIN_PLAYERS <= len(players) <= MAX_PLAYERS:
            raise ValueError(f"a game has {MIN_PLAYERS} to {MAX_PLAYERS} players, not {len(players)}")
        if type(first_dealer) is not int or not 0 <= first_dealer < len(players):
            raise ValueError(f"first_dealer must be a seat from 0 to {len(players) - 1}")
        self.players: tuple[str, ...] = tuple(players)
        self.options = options if options is not None else Options()
        self.first_dealer = first_dealer
        self.rounds: list[Round] = []
        self._round: Round | None = None
        self.totals: list[int] = [0] * len(players)
        self.game_over = False
        self.winners: tuple[int, ...] = ()
        seconds = self.options.turn_seconds
        self._limit: int | None = seconds * 1000 if seconds is not None else None

    # -- reading ---------------------------------------------------------------------------------------

    @property
    def seats(self) -> int:
        """How many players sit at the table."""
        return len(self.players)

    @property
    def round(self) -> Round | None:
        """The current (or last) round, ``None`` before the first deal."""
        return self._round

    @property
    def move_limit_ms(self) -> int | None:
        """How long a move may take, or ``None`` without a turn timer."""
        return self._limit

    def deadline(self) -> int | None:
        """When the current move times out, or ``None`` (no timer, or no move under way)."""
        r = self._round
        if r is None or r.ended or self._limit is None:
            return None
        return r.move_start + self._limit

    def next_deadline(self) -> int | None:
        """The earliest instant at which :meth:`advance` would change something, or ``None``."""
        r = self._round
        if r is None or r.ended:
            return None
        times = [r.window_closes] if r.window_seat is not None else []
        if not r.move_started:
            times.append(r.move_start)
        elif self._limit is not None:
            times.append(r.move_start + self._limit)
        return min(times) if times else None

    def can_call_crisp(self, seat: int) -> bool:
        """Whether ``seat`` has an open crisp window now."""
        r = self._round
        return r is not None and not r.ended and r.window_seat == seat and r.now < r.window_closes

    def legal_actions(self, seat: int) -> list[Action]:
        """Every action ``seat`` may do now that the rules allow (``TimeOut`` is the server's, not listed)."""
        r = self._round
        if r is None or r.ended:
            return []
        out: list[Action] = []
        if self.can_call_crisp(seat):
            out.append(CallCrisp(seat))
        if seat != r.turn or r.now < r.move_start:
            return out
        card = r.drawn
        if card is None:
            out.append(Draw(seat, Source.DECK))
            if self.options.discard_draw and r.discard:
                out.append(Draw(seat, Source.DISCARD))
            return out
        rank = card[0]
        from_deck = r.drawn_from is Source.DECK
        if not (from_deck and rank in FACE_RANKS):
            out.extend(Swap(seat, slot) for slot in Slot)
        if from_deck and rank != KING:
            out.append(Discard(seat))
        if from_deck and rank == JACK:
            out.append(UseJack(seat))
        elif from_deck and rank == QUEEN:
            out.extend(
                UseQueen(seat, mine, other, theirs)
                for mine in Slot
                for other in range(self.seats)
                if other != seat
                for theirs in Slot
            )
        elif from_deck and rank == KING:
            out.append(UseKing(seat))
        return out

    # -- the deal --------------------------------------------------------------------------------------

    def start_round(self, deck: Sequence[str]) -> list[Event]:
        """Deal the next round from ``deck`` (52 codes, index 0 dealt first); its clock starts at 0."""
        if self.game_over:
            raise ValueError("the game is over")
        if self.rounds and not self.rounds[-1].ended:
            raise ValueError("the current round has not ended")
        problem = deck_problem(deck)
        if problem is not None:
            raise ValueError(problem)
        n = self.seats
        index = len(self.rounds)
        r = Round(index, n, (self.first_dealer + index) % n, deck)
        self.rounds.append(r)
        self._round = r
        events: list[Event] = [RoundStarted(index, r.dealer, r.starter, len(r.draw_pile))]
        for seat, hand in enumerate(r.hands):
            events.append(CardShown(seat, hand[Slot.LEFT], Slot.LEFT, Why.DEAL))
            events.append(CardShown(seat, hand[Slot.RIGHT], Slot.RIGHT, Why.DEAL))
        events.append(TurnStarted(r.starter, 0, 0, False))
        self._start_move(r, 0, events)
        return events

    # -- the clock -------------------------------------------------------------------------------------

    def advance(self, now: int) -> list[Event]:
        """Move the round's clock to ``now``: what falls due by then happens, in time order."""
        r = self._round
        events: list[Event] = []
        if r is None or r.ended:
            return events
        if now < r.now:
            raise ValueError(f"time cannot go back (from {r.now} to {now})")
        limit = self._limit
        while not r.ended:
            # Pending instants; on a tie the window closes first, then the block ends, then the clock.
            t = now + 1
            which = 0
            if r.window_seat is not None and r.window_closes < t:
                t, which = r.window_closes, 1
            if not r.move_started and r.move_start < t:
                t, which = r.move_start, 2
            elif r.move_started and limit is not None and r.move_start + limit < t:
                t, which = r.move_start + limit, 3
            if which == 0:
                break
            r.now = t
            if which == 1:
                assert r.window_seat is not None
                events.append(WindowClosed(r.window_seat, t))
                r.window_seat = None
            elif which == 2:
                r.move_started = True
                events.append(MoveStarted(r.turn, t, t + limit if limit is not None else None, r.extra_moves))
            else:
                self._time_out(r, t, events)
        r.now = now
        return events

    # -- actions ---------------------------------------------------------------------------------------

    def apply(self, action: Action) -> list[Event]:
        """Apply ``action`` at the round's current instant; raise :class:`Rejected` if a rule forbids it."""
        r = self._round
        if r is None or r.ended:
            raise Rejected(Code.ROUND_OVER)
        return _HANDLERS[type(action)](self, r, action)

    def resume(self) -> list[Event]:
        """After the server was down, at the round's current instant: play goes on fairly.

        The downtime counts against nobody (the caller continues the round clock from the last stored
        instant), an open crisp window closes (the turn it followed ended before the interruption), and
        the current move gets a fresh full clock from now, its draw block lifted. Records keep the instant
        (``resumes``) so that a replay does the same.
        """
        r = self._round
        events: list[Event] = []
        if r is None or r.ended:
            return events
        if r.window_seat is not None:
            events.append(WindowClosed(r.window_seat, r.now))
            r.window_seat = None
        self._start_move(r, r.now, events)
        return events

    def act(self, action: Action, now: int) -> tuple[list[Event], Rejected | None]:
        """:meth:`advance` to ``now``, then :meth:`apply`; the events of both, and the rejection if any."""
        events = self.advance(now)
        try:
            events.extend(self.apply(action))
        except Rejected as rejected:
            return events, rejected
        return events, None

    def _draw(self, r: Round, a: Draw) -> list[Event]:
        seat = a.seat
        if seat != r.turn:
            raise Rejected(Code.NOT_YOUR_TURN)
        if r.now < r.move_start:
            raise Rejected(Code.TOO_EARLY)
        if r.drawn is not None:
            raise Rejected(Code.ALREADY_DRAWN)
        events: list[Event] = []
        if a.source is Source.DISCARD:
            if not self.options.discard_draw:
                raise Rejected(Code.DISCARD_DRAW_DISABLED)
            if not r.discard:
                raise Rejected(Code.DISCARD_EMPTY)
            card = r.discard.pop()
            events.append(Drew(seat, Source.DISCARD, card))
        else:
            card = _take_from_pile(r, events)
            events.append(Drew(seat, Source.DECK, None))
            events.append(CardShown(seat, card, None, Why.DRAW))
        r.drawn = card
        r.drawn_from = a.source
        return events

    def _drawn_card(self, r: Round, seat: int) -> str:
        """The card the acting seat holds, after the checks every play of a drawn card shares."""
        if seat != r.turn:
            raise Rejected(Code.NOT_YOUR_TURN)
        if r.drawn is None:
            raise Rejected(Code.NOTHING_DRAWN)
        return r.drawn

    def _special_card(self, r: Round, seat: int, rank: str) -> str:
        card = self._drawn_card(r, seat)
        if r.drawn_from is not Source.DECK or card[0] != rank:
            raise Rejected(Code.WRONG_CARD)
        return card

    def _swap(self, r: Round, a: Swap) -> list[Event]:
        card = self._drawn_card(r, a.seat)
        public = r.drawn_from is Source.DISCARD
        if not public and card[0] in FACE_RANKS:
            raise Rejected(Code.FACE_CARD_FROM_DECK)
        hand = r.hands[a.seat]
        out = hand[a.slot]
        hand[a.slot] = card
        r.discard.append(out)
        events: list[Event] = [Swapped(a.seat, a.slot, out, card if public else None)]
        self._end_move(r, events)
        return events

    def _discard(self, r: Round, a: Discard) -> list[Event]:
        card = self._drawn_card(r, a.seat)
        if r.drawn_from is Source.DISCARD:
            raise Rejected(Code.MUST_SWAP)
        if card[0] == KING:
            raise Rejected(Code.KING_MUST_BE_PLAYED)
        r.discard.append(card)
        events: list[Event] = [Discarded(a.seat, card)]
        self._end_move(r, events)
        return events

    def _jack(self, r: Round, a: UseJack) -> list[Event]:
        card = self._special_card(r, a.seat, JACK)
        r.discard.append(card)
        middle = r.hands[a.seat][Slot.MIDDLE]
        r.reveals[a.seat].append(Reveal(middle, Slot.MIDDLE, Why.JACK))
        events: list[Event] = [JackUsed(a.seat, card), CardShown(a.seat, middle, Slot.MIDDLE, Why.JACK)]
        self._end_move(r, events)
        return events

    def _queen(self, r: Round, a: UseQueen) -> list[Event]:
        card = self._special_card(r, a.seat, QUEEN)
        target = a.target
        if type(target) is not int or target == a.seat or not 0 <= target < self.seats:
            raise Rejected(Code.BAD_TARGET)
        mine, theirs = r.hands[a.seat], r.hands[target]
        mine[a.slot], theirs[a.target_slot] = theirs[a.target_slot], mine[a.slot]
        r.discard.append(card)
        events: list[Event] = [QueenUsed(a.seat, card, a.slot, target, a.target_slot)]
        for seat, slot, hand in ((a.seat, a.slot, mine), (target, a.target_slot, theirs)):
            if slot in SEEN_SLOTS:
                r.reveals[seat].append(Reveal(hand[slot], slot, Why.QUEEN))
                events.append(CardShown(seat, hand[slot], slot, Why.QUEEN))
        self._end_move(r, events)
        return events

    def _king(self, r: Round, a: UseKing) -> list[Event]:
        card = self._special_card(r, a.seat, KING)
        r.discard.append(card)
        r.extra_moves += KING_EXTRA_MOVES
        events: list[Event] = [KingUsed(a.seat, card, r.extra_moves)]
        self._end_move(r, events)
        return events

    def _crisp(self, r: Round, a: CallCrisp) -> list[Event]:
        if not self.can_call_crisp(a.seat):
            raise Rejected(Code.CRISP_NOT_ALLOWED)
        r.window_seat = None
        r.caller = a.seat
        r.final_turns_left = self.seats - 1  # the turn after the caller's (maybe under way) included
        events: list[Event] = [CrispCalled(a.seat, r.now, r.final_turns_left)]
        if not r.move_started:  # the call ends the two-second block at once
            self._start_move(r, r.now, events)
        return events

    def _timeout(self, r: Round, a: TimeOut) -> list[Event]:
        if a.seat != r.turn:
            raise Rejected(Code.NOT_YOUR_TURN)
        events: list[Event] = []
        self._time_out(r, r.now, events)
        return events

    # -- the flow of a turn ----------------------------------------------------------------------------

    def _start_move(self, r: Round, at: int, events: list[Event]) -> None:
        r.move_start = at
        r.move_started = True
        limit = self._limit
        events.append(MoveStarted(r.turn, at, at + limit if limit is not None else None, r.extra_moves))

    def _end_move(self, r: Round, events: list[Event]) -> None:
        r.drawn = None
        r.drawn_from = None
        if r.extra_moves > 0:
            r.extra_moves -= 1
            self._start_move(r, r.now, events)
        else:
            self._end_turn(r, r.now, events, timed_out=False)

    def _time_out(self, r: Round, at: int, events: list[Event]) -> None:
        seat = r.turn
        card = r.drawn
        drew = card is None
        if card is None:
            card = _take_from_pile(r, events)
        r.drawn = None
        r.drawn_from = None
        r.discard.append(card)
        r.extra_moves = 0
        r.timeouts.append((seat, at))
        events.append(TimedOut(seat, at, card, drew))
        self._end_turn(r, at, events, timed_out=True)

    def _end_turn(self, r: Round, at: int, events: list[Event], timed_out: bool) -> None:
        seat = r.turn
        if r.window_seat is not None:  # the previous player's window closes when this turn ends
            events.append(WindowClosed(r.window_seat, at))
            r.window_seat = None
        if r.final_turns_left is not None:
            r.final_turns_left -= 1
            if r.final_turns_left == 0:
                self._end_round(r, at, events)
                return
        nxt = (seat + 1) % self.seats
        r.turn = nxt
        r.extra_moves = 0
        if timed_out or r.final_turns_left is not None:
            events.append(TurnStarted(nxt, at, at, r.final_turns_left is not None))
            self._start_move(r, at, events)
            return
        r.window_seat = seat
        r.window_closes = at + CRISP_WINDOW_MS
        r.move_start = at + DRAW_BLOCK_MS
        r.move_started = False
        events.append(WindowOpened(seat, at, r.window_closes))
        events.append(TurnStarted(nxt, at, r.move_start, False))

    def _end_round(self, r: Round, at: int, events: list[Event]) -> None:
        r.ended = True
        r.end_at = at
        sums = tuple(VALUES[a] + VALUES[b] + VALUES[c] for a, b, c in r.hands)
        points = list(sums)
        caller = r.caller
        if caller is not None:
            alone = all(sums[caller] < s for seat, s in enumerate(sums) if seat != caller)
            points[caller] += -CRISP_BONUS if alone else CRISP_BONUS
        r.sums = sums
        r.points = tuple(points)
        totals = self.totals
        for seat, p in enumerate(points):
            totals[seat] += p
        events.append(
            RoundEnded(
                r.index,
                at,
                caller,
                tuple((a, b, c) for a, b, c in r.hands),
                sums,
                r.points,
                tuple(totals),
            )
        )
        if max(totals) >= self.options.score_limit:
            low = min(totals)
            self.game_over = True
            self.winners = tuple(seat for seat, t in enumerate(totals) if t == low)
            events.append(GameEnded(tuple(totals), self.winners))


def _take_from_pile(r: Round, events: list[Event]) -> str:
    """The top card of the draw pile, turning the discard pile over (unshuffled) first if it is empty."""
    if not r.draw_pile:
        # The card discarded first becomes the top: the list's end is the top.
        r.draw_pile = r.discard[::-1]
        r.discard = []
        events.append(PileTurned(len(r.draw_pile)))
    return r.draw_pile.pop()


_HANDLERS: Final[dict[type, Callable[[Game, Round, Action], list[Event]]]] = {
    Draw: Game._draw,  # type: ignore[dict-item]
    Swap: Game._swap,  # type: ignore[dict-item]
    Discard: Game._discard,  # type: ignore[dict-item]
    UseJack: Game._jack,  # type: ignore[dict-item]
    UseQueen: Game._queen,  # type: ignore[dict-item]
    UseKing: Game._king,  # type: ignore[dict-item]
    CallCrisp: Game._crisp,  # type: ignore[dict-item]
    TimeOut: Game._timeout,  # type: ignore[dict-item]
}
