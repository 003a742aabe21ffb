"""A Hypothesis state machine over whole games: random options, decks, gaps and actions, legal or not.

After every step: the 52 cards are each in one place, nobody is shown a card they may not know (see
``knowledge.py``), clocks and totals only move the way the rules say, and ``next_deadline`` lies ahead.
A rejected action must change nothing and carry the code docs/record-format.md's precedence table gives.
"""

from __future__ import annotations

import pytest
from hypothesis import event, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from crisp_server.engine import (
    FULL_DECK,
    Action,
    CallCrisp,
    Code,
    Discard,
    Draw,
    Event,
    Game,
    Options,
    Rejected,
    Round,
    Slot,
    Source,
    Swap,
    TimeOut,
    UseJack,
    UseKing,
    UseQueen,
    hand_sum,
)

from .knowledge import Knowledge, check_cards_conserved, dealt_hands

NAMES = ("Ana", "Ben", "Cem", "Dia", "Eli", "Fay", "Gus", "Hal")  # never card codes
#: Gaps around the crisp window (block ends at 2000, window closes at 3000) and a few more.
BOUNDARY_GAPS = (0, 1, 999, 1000, 1999, 2000, 2001, 2999, 3000, 3001)
GAPS = st.one_of(
    st.sampled_from(BOUNDARY_GAPS),
    st.integers(min_value=0, max_value=5_000),
    st.integers(min_value=0, max_value=65_000),
)
ACTION_KINDS = (Draw, Swap, Discard, UseJack, UseQueen, UseKing, CallCrisp, TimeOut)
FACE_RANKS = frozenset("JQK")


def face_cards_on_top(deck: list[str], players: int) -> list[str]:
    """The same deal, with the draw pile's J, Q and K moved to its top (in their order), so that Jacks,
    Queens and Kings are drawn early and often rather than in one round of several."""
    dealt, pile = deck[: 3 * players], deck[3 * players :]
    return dealt + sorted(pile, key=lambda card: card[0] not in FACE_RANKS)


def expected_rejection(game: Game, action: Action) -> Code | None:
    """The code docs/record-format.md gives for ``action`` now (the first rule it breaks), or ``None``.

    Written from the format's table, not from the engine: only the state (whose move, what is drawn,
    the clock) is read from the game.
    """
    r = game.round
    if r is None or r.ended:
        return Code.ROUND_OVER
    seat = action.seat
    if isinstance(action, CallCrisp):
        window_open = r.caller is None and r.window_seat == seat and r.now < r.window_closes
        return None if window_open else Code.CRISP_NOT_ALLOWED
    if seat != r.turn:
        return Code.NOT_YOUR_TURN
    if isinstance(action, TimeOut):
        return None
    drawn, from_deck = r.drawn, r.drawn_from is Source.DECK
    if isinstance(action, Draw):
        if r.now < r.move_start:
            return Code.TOO_EARLY
        if drawn is not None:
            return Code.ALREADY_DRAWN
        if action.source is Source.DISCARD and not game.options.discard_draw:
            return Code.DISCARD_DRAW_DISABLED
        if action.source is Source.DISCARD and not r.discard:
            return Code.DISCARD_EMPTY
        return None
    if drawn is None:
        return Code.NOTHING_DRAWN
    rank = drawn[0]
    if isinstance(action, Swap):
        return Code.FACE_CARD_FROM_DECK if from_deck and rank in FACE_RANKS else None
    if isinstance(action, Discard):
        if not from_deck:
            return Code.MUST_SWAP
        return Code.KING_MUST_BE_PLAYED if rank == "K" else None
    needed = {UseJack: "J", UseQueen: "Q", UseKing: "K"}[type(action)]
    if not from_deck or rank != needed:
        return Code.WRONG_CARD
    if isinstance(action, UseQueen) and not (action.target != seat and 0 <= action.target < game.seats):
        return Code.BAD_TARGET
    return None


def expected_points(r: Round) -> list[int]:
    """docs/rules.md, Score: hand sums, and the caller's -5 when alone lowest, +5 otherwise."""
    sums = [hand_sum(hand) for hand in r.hands]
    points = list(sums)
    if r.caller is not None:
        alone = all(sums[r.caller] < s for seat, s in enumerate(sums) if seat != r.caller)
        points[r.caller] += -5 if alone else 5
    return points


class CrispGame(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self._game: Game | None = None
        self._knowledge: Knowledge | None = None
        self.last_now = 0
        self.last_round = -1

    @property
    def game(self) -> Game:
        assert self._game is not None
        return self._game

    @property
    def knowledge(self) -> Knowledge:
        assert self._knowledge is not None
        return self._knowledge

    @property
    def current(self) -> Round:
        r = self.game.round
        assert r is not None
        return r

    # -- the deal --------------------------------------------------------------------------------------

    @initialize(
        players=st.integers(min_value=2, max_value=8),
        score_limit=st.integers(min_value=20, max_value=60),
        turn_seconds=st.none() | st.integers(min_value=1, max_value=60),
        discard_draw=st.booleans(),
        first_dealer=st.integers(min_value=0, max_value=7),
        deck=st.permutations(FULL_DECK),
        stack_faces=st.booleans(),
    )
    def start_game(
        self,
        *,
        players: int,
        score_limit: int,
        turn_seconds: int | None,
        discard_draw: bool,
        first_dealer: int,
        deck: list[str],
        stack_faces: bool,
    ) -> None:
        options = Options(score_limit, turn_seconds, discard_draw)
        self._game = Game(NAMES[:players], options, first_dealer % players)
        self._knowledge = Knowledge(self.game)
        self._deal(deck, stack_faces)

    # No rule has a precondition: together with Hypothesis' swarm testing (some rules switched off per run)
    # a disabled rule made it give up on a run in ten ("unable to satisfy").
    @rule(data=st.data())
    def start_next_round(self, data: st.DataObject) -> None:
        game = self.game
        if not self.current.ended:
            with pytest.raises(ValueError, match="has not ended"):
                game.start_round(FULL_DECK)
        elif game.game_over:
            with pytest.raises(ValueError, match="game is over"):
                game.start_round(FULL_DECK)
        else:
            # Drawn only when dealt: a 52-card permutation is the costliest thing to generate here.
            deck = data.draw(st.permutations(FULL_DECK), label="deck")
            self._deal(deck, data.draw(st.booleans(), label="stack_faces"))

    def _deal(self, deck: list[str], stack_faces: bool) -> None:
        game = self.game
        if stack_faces:
            deck = face_cards_on_top(deck, game.seats)
        before = list(game.totals)
        events = game.start_round(deck)
        r = self.current
        assert [tuple(h) for h in r.hands] == dealt_hands(deck, game.seats, r.dealer)
        assert r.dealer == (game.first_dealer + r.index) % game.seats
        assert r.turn == r.starter == (r.dealer + 1) % game.seats
        assert game.totals == before
        self.knowledge.refresh(game)
        self.knowledge.check_events(events)

    # -- the clock -------------------------------------------------------------------------------------

    @rule(gap=GAPS)
    def wait(self, gap: int) -> None:
        self._advance(self.current.now + gap)

    @rule(
        instant=st.sampled_from(("next_deadline", "move_deadline", "window_closes", "may_draw")),
        offset=st.sampled_from((-1, 0, 1)),
    )
    def wait_until_near(self, instant: str, offset: int) -> None:
        """Step to just before, at or just after an instant the rules care about."""
        game, r = self.game, self.current
        if r.ended:
            return
        target = {
            "next_deadline": game.next_deadline(),
            "move_deadline": game.deadline(),
            "window_closes": r.window_closes if r.window_seat is not None else None,
            "may_draw": r.move_start,
        }[instant]
        self._advance(max(r.now, (target if target is not None else r.now) + offset))

    def _advance(self, now: int) -> None:
        game = self.game
        before = list(game.totals)
        was_running = not self.current.ended
        events = game.advance(now)
        if was_running:
            assert self.current.now == now
        self._after_transition(before, was_running, events)
        self.knowledge.refresh(game)
        self.knowledge.check_events(events)

    # -- actions ---------------------------------------------------------------------------------------

    @rule(picks=st.lists(st.tuples(st.integers(0, 7), st.integers(0, 100)), min_size=1, max_size=3))
    def play_legal(self, picks: list[tuple[int, int]]) -> None:
        """Play up to three legal actions in a row (each is checked like any other transition)."""
        game = self.game
        for kind, choice in picks:
            r = self.current
            if r.ended:
                assert not any(game.legal_actions(seat) for seat in range(game.seats))
                return
            legal = [a for seat in range(game.seats) for a in game.legal_actions(seat)]
            # While a round runs someone can act: the player whose move it is, or, during the two-second
            # block, the previous player in the crisp window.
            assert legal
            # Call Crisp for one kind in eight only, else rounds end before Queens and turned piles are seen.
            crisp = [a for a in legal if isinstance(a, CallCrisp)]
            others = [a for a in legal if not isinstance(a, CallCrisp)]
            if crisp and (kind == 0 or not others):
                if kind == 0:
                    self._apply(crisp[0])
                else:
                    self._advance(r.move_start)  # wait for the block to end instead
                continue
            # Pick the kind first, or a drawn Queen's many targets would crowd out its Discard.
            kinds = sorted({type(a) for a in others}, key=ACTION_KINDS.index)
            of_kind = [a for a in others if type(a) is kinds[kind % len(kinds)]]
            self._apply(of_kind[choice % len(of_kind)])

    @rule(data=st.data())
    def play_anything(self, data: st.DataObject) -> None:
        n = self.game.seats
        seat = data.draw(st.integers(min_value=-1, max_value=n), label="seat")
        kind = data.draw(st.sampled_from(ACTION_KINDS), label="kind")
        action: Action
        if kind is Draw:
            action = Draw(seat, data.draw(st.sampled_from(Source), label="source"))
        elif kind is Swap:
            action = Swap(seat, data.draw(st.sampled_from(Slot), label="slot"))
        elif kind is UseQueen:
            action = UseQueen(
                seat,
                data.draw(st.sampled_from(Slot), label="slot"),
                data.draw(st.integers(min_value=-1, max_value=n), label="target"),
                data.draw(st.sampled_from(Slot), label="target_slot"),
            )
        else:
            assert kind in (Discard, UseJack, UseKing, CallCrisp, TimeOut)
            action = kind(seat)
        self._apply(action)

    @rule()
    def time_out_current_move(self) -> None:
        self._apply(TimeOut(self.current.turn))  # rejected (round_over) once the round has ended

    def _apply(self, action: Action) -> None:
        game, r = self.game, self.current
        expected = expected_rejection(game, action)
        legal = action in game.legal_actions(action.seat)
        snapshot, totals, now, result = r.snapshot(), list(game.totals), r.now, (game.game_over, game.winners)
        was_running = not r.ended
        try:
            events = game.apply(action)
        except Rejected as exc:
            rejected: Rejected | None = exc
        else:
            rejected = None
        if rejected is not None:
            assert r.snapshot() == snapshot, f"rejected {action} changed the round"
            assert game.totals == totals, f"rejected {action} changed the totals"
            assert (game.game_over, game.winners) == result
            assert rejected.code is expected, f"{action}: code {rejected.code.value}, expected {expected}"
            assert not legal, f"{action} is listed as legal but was rejected"
            event(f"rejected: {rejected.code.value}")
            self.knowledge.learn(game, action, accepted=False)
            return
        assert expected is None, f"{action} was accepted, expected {expected}"
        # legal_actions lists every accepted action but the server's TimeOut.
        assert legal or isinstance(action, TimeOut), f"{action} was accepted but is not in legal_actions"
        assert r.now == now, "an action does not move the clock"
        if isinstance(action, CallCrisp):
            # docs/rules.md: the call ends the window, and the next player may draw at once.
            assert r.caller == action.seat
            assert not game.can_call_crisp(action.seat)
            assert r.drawn is not None or any(isinstance(a, Draw) for a in game.legal_actions(r.turn))
        self._after_transition(totals, was_running, events)
        self.knowledge.learn(game, action, accepted=True)
        self.knowledge.check_events(events)
        self.knowledge.check_views(game)

    def _after_transition(self, totals_before: list[int], was_running: bool, events: list[Event]) -> None:
        """Totals change only when a round ends, and then by the round's points as docs/rules.md scores them."""
        game, r = self.game, self.current
        for e in events:  # coverage notes for --hypothesis-show-statistics
            event(e.kind)
        ended_now = was_running and r.ended
        assert any(e.kind == "round_ended" for e in events) == ended_now
        if not ended_now:
            assert game.totals == totals_before
            return
        assert r.points is not None
        assert list(r.points) == expected_points(r)
        assert game.totals == [t + p for t, p in zip(totals_before, r.points, strict=True)]
        assert game.game_over == (max(game.totals) >= game.options.score_limit)

    # -- invariants ------------------------------------------------------------------------------------

    @invariant()
    def cards_are_conserved(self) -> None:
        if self._game is not None:
            check_cards_conserved(self.current)

    @invariant()
    def nobody_sees_what_they_may_not_know(self) -> None:
        if self._game is not None:
            self.knowledge.check_views(self.game)

    @invariant()
    def clocks_only_go_forward(self) -> None:
        if self._game is None:
            return
        r = self.current
        if r.index == self.last_round:
            assert r.now >= self.last_now
        else:
            assert r.index == self.last_round + 1
            assert r.now >= 0
        self.last_round, self.last_now = r.index, r.now

    @invariant()
    def totals_are_the_points_summed(self) -> None:
        if self._game is None:
            return
        game = self.game
        summed = [0] * game.seats
        for r in game.rounds:
            if r.points is not None:
                summed = [t + p for t, p in zip(summed, r.points, strict=True)]
        assert game.totals == summed
        assert all(r.ended for r in game.rounds[:-1])
        if game.game_over:
            lowest = min(game.totals)
            assert list(game.winners) == [s for s, t in enumerate(game.totals) if t == lowest]
        else:
            assert game.winners == ()

    @invariant()
    def the_caller_takes_no_more_turns(self) -> None:
        if self._game is None:
            return
        r = self.current
        if r.caller is not None and not r.ended:
            assert r.turn != r.caller
            assert r.final_turns_left is not None
            assert 1 <= r.final_turns_left <= self.game.seats - 1
            assert not any(self.game.can_call_crisp(seat) for seat in range(self.game.seats))

    @invariant()
    def next_deadline_lies_ahead(self) -> None:
        if self._game is None:
            return
        deadline = self.game.next_deadline()
        assert deadline is None or deadline > self.current.now
        if self.current.ended:
            assert deadline is None


CrispGame.TestCase.settings = settings(settings.default, stateful_step_count=100)
TestCrispGame = CrispGame.TestCase
