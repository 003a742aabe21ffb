"""Replays (docs/replays.md): a seat's point of view never shows a card that seat did not know.

Random games (2-8 players, every option, with time-outs, rejected actions and server restarts) are replayed
from every point of view, and every step is checked against the engine's true state and against
:class:`Sight`, a small model of who knows which card where, kept here from the engine's true events alone
(separately from ``crisp_server.bots.memory``, which the replays use): a card shown to a seat, what a swap,
a Queen or a draw from the discard pile moved, the draw pile's order once the discard pile was turned
over, and what follows by elimination (:meth:`Sight.named`). A card is face up in a seat's view exactly when
the model says that seat can name it there.
"""

from __future__ import annotations

import itertools
import random
from collections import Counter
from typing import Any

import orjson
import pytest

from crisp_server.engine import (
    FULL_DECK,
    Event,
    Game,
    Options,
    Record,
    RecordRound,
    Resume,
    Round,
    Source,
    Timed,
    event_to_dict,
    parse_record,
    record_to_dict,
    replay_game,
    replay_steps,
)
from crisp_server.engine.events import (
    CardShown,
    Discarded,
    Drew,
    JackUsed,
    KingUsed,
    PileTurned,
    QueenUsed,
    RoundStarted,
    Swapped,
    TimedOut,
)
from crisp_server.replays import NoSuchSeat, build_replay
from crisp_server.tools.simulate import Style, next_action, shuffled_deck
from tests.engine.knowledge import card_codes

#: Players who call Crisp rarely play long rounds: the draw pile runs out and is turned over.
PATIENT = Style(crisp=0.02, mistake=0.05, slow=0.03, forced_timeout=0.01)
HASTY = Style(crisp=0.2, mistake=0.08, slow=0.05, forced_timeout=0.02)
OPTIONS = [
    Options(limit, seconds, discard_draw)
    for limit, seconds, discard_draw in itertools.product((50, 100, 150), (None, 30), (False, True))
]


def random_record(
    players: int, options: Options, rng: random.Random, style: Style, played: list[Event] | None = None
) -> tuple[Game, Record]:
    """A whole game of random players, with the odd server restart (``Game.resume``) between two actions;
    every event of the game as it was played goes to ``played``."""
    events: list[Event] = [] if played is None else played
    names = tuple(f"P{i}" for i in range(players))
    first_dealer = rng.randrange(players)
    game = Game(names, options, first_dealer)
    record = Record(options, names, first_dealer, [])
    while not game.game_over:
        deck = shuffled_deck(rng)
        events += game.start_round(deck)
        rr = RecordRound(tuple(deck))
        record.rounds.append(rr)
        r = game.round
        assert r is not None
        now = 0
        while not r.ended:
            assert len(rr.actions) < 5000
            if rng.random() < 0.015:
                now += rng.choice((0, 10, 2500, 40_000))
                events += game.advance(now)
                events += game.resume()
                rr.resumes.append(Resume(len(rr.actions), now))
                continue
            at, action = next_action(game, now, rng, style)
            events += game.act(action, at)[0]
            rr.actions.append(Timed(at, action))
            now = at
        assert r.end_at is not None
        rr.end_at = max(r.end_at, now)
    return game, parse_record(orjson.loads(orjson.dumps(record_to_dict(record))))  # a valid record


class Sight:
    """Which card each seat knows where, from the true events (all of them, each applied for every seat
    that sees it). ``at[v][s][i]``: the card seat ``v`` knows in seat ``s``'s slot ``i``, or ``None``;
    ``held[v]``: the card the player to move holds, if ``v`` knows it; ``seen[v]``: every card ``v`` has
    seen this round (shown to it, or public)."""

    def __init__(self, players: int) -> None:
        self.n = players
        self.new_round()

    def new_round(self) -> None:
        n = self.n
        self.at: list[list[list[str | None]]] = [[[None] * 3 for _ in range(n)] for _ in range(n)]
        self.held: list[str | None] = [None] * n
        self.seen: list[set[str]] = [set() for _ in range(n)]
        self.discard: list[str] = []
        self.pile: list[str] | None = None  # the draw pile, top last, once it is the turned-over discard pile
        # A slot whose card was kept from the draw pile holds no J, Q or K (they may not be swapped in): public.
        self.plain: list[list[bool]] = [[False] * 3 for _ in range(n)]
        self.source: Source | None = None  # where the card held was drawn from

    def public(self, *cards: str) -> None:
        for seen in self.seen:
            seen.update(cards)

    def take(self, event: Event) -> None:
        everyone = range(self.n)
        if isinstance(event, RoundStarted):
            self.new_round()
        elif isinstance(event, CardShown):
            v = event.seat
            self.seen[v].add(event.card)
            if event.slot is None:
                self.held[v] = event.card
            else:
                self.at[v][v][event.slot] = event.card
        elif isinstance(event, Drew):
            self.source = event.source
            card = event.card if event.source is Source.DISCARD else self.pile.pop() if self.pile else None
            if event.source is Source.DISCARD:
                assert self.discard.pop() == card
            for v in everyone:
                self.held[v] = card
        elif isinstance(event, PileTurned):
            self.pile = self.discard[::-1]  # docs/rules.md: unshuffled, the card discarded first on top
            self.discard = []
        elif isinstance(event, Swapped):
            self.public(event.discarded)
            self.discard.append(event.discarded)
            for v in everyone:
                self.at[v][event.seat][event.slot] = event.card or self.held[v]
            self.plain[event.seat][event.slot] = self.source is Source.DECK
            self.held = [None] * self.n
        elif isinstance(event, Discarded | JackUsed | KingUsed):
            self.public(event.card)
            self.discard.append(event.card)
            self.held = [None] * self.n
        elif isinstance(event, QueenUsed):
            self.public(event.card)
            self.discard.append(event.card)
            a, b = (event.seat, event.slot), (event.target, event.target_slot)
            for hands in self.at:
                hands[a[0]][a[1]], hands[b[0]][b[1]] = hands[b[0]][b[1]], hands[a[0]][a[1]]
            plain = self.plain
            plain[a[0]][a[1]], plain[b[0]][b[1]] = plain[b[0]][b[1]], plain[a[0]][a[1]]
            self.held = [None] * self.n
        elif isinstance(event, TimedOut):
            if event.drew_for_player and self.pile:
                self.pile.pop()
            self.public(event.discarded)
            self.discard.append(event.discarded)
            self.held = [None] * self.n

    def named(self, v: int, r: Round) -> tuple[list[list[str | None]], str | None]:
        """What seat ``v`` can name at this moment of round ``r`` (used for its shape only: the draw pile's
        size, whether a card is held): the cards it knows where they lie, and each card that is the only one
        that can lie in its place, trying every unlocated card in every place whose card ``v`` does not know.
        A card fits a place if the others can still be placed: no J, Q or K in a plain slot, so the face
        cards left over must not outnumber the places left that may hold one."""
        hands = [list(h) for h in self.at[v]]
        held = self.held[v]
        located = {c for h in hands for c in h if c is not None} | set(self.discard) | set(self.pile or ())
        if held is not None:
            located.add(held)
        unplaced = [c for c in FULL_DECK if c not in located]
        places: list[tuple[str, int, int, bool]] = [
            ("slot", s, i, self.plain[s][i]) for s in range(self.n) for i in range(3) if hands[s][i] is None
        ]
        if r.drawn is not None and held is None:
            places.append(("held", 0, 0, False))
        if self.pile is None:
            places += [("pile", k, 0, False) for k in range(len(r.draw_pile))]
        assert len(places) == len(unplaced), "every card is somewhere"
        faces = sum(c[0] in "JQK" for c in unplaced)
        open_places = sum(not plain for *_, plain in places)
        for kind, s, i, plain in places:
            fits = [
                c
                for c in unplaced
                if not (plain and c[0] in "JQK") and faces - (c[0] in "JQK") <= open_places - (not plain)
            ]
            if len(fits) == 1 and kind == "slot":
                hands[s][i] = fits[0]
            elif len(fits) == 1 and kind == "held":
                held = fits[0]
        return hands, held


def check_game(record: Record, final: Game | None, tally: Counter[str], played: list[Event] | None = None) -> None:
    """Every step of every point of view of ``record`` (``final``: the game as played, to compare the end;
    ``played``: its events, each of which must be in exactly one step, in order)."""
    replayed: list[Event] = []
    n = len(record.players)
    views: dict[int | None, dict[str, Any]] = {
        seat: build_replay(record, seat, game_id="g", host=0) for seat in [None, *range(n)]
    }
    sight = Sight(n)
    truth = Game(record.players, record.options, record.first_dealer)
    for index, step in enumerate(replay_steps(record, truth)):
        r = truth.round
        assert r is not None
        replayed += step.events
        for e in step.events:
            sight.take(e)
            tally[e.kind] += 1
        tally[step.kind] += 1
        tally["rejected"] += step.rejected is not None
        true_hands = [list(h) for h in r.hands]
        if sight.pile is not None:  # the model's pile is the true one
            assert sight.pile == r.draw_pile
        assert sight.discard == r.discard
        open_step = views[None]["steps"][index]
        assert (open_step["kind"], open_step["round"], open_step["at"]) == (step.kind, step.round, step.at)
        assert open_step["events"] == [event_to_dict(e) for e in step.events]
        assert open_step["hands"] == true_hands
        assert open_step["drawn_card"] == (None if r.ended else r.drawn)
        for v in range(n):
            mine = views[v]["steps"][index]
            assert (mine["kind"], mine["round"], mine["at"], mine["action"], mine["rejected"], mine["table"]) == (
                open_step["kind"],
                open_step["round"],
                open_step["at"],
                open_step["action"],
                open_step["rejected"],
                open_step["table"],
            )
            # Its events: all but the cards shown to somebody else.
            assert mine["events"] == [e for e in open_step["events"] if e["type"] != "card_shown" or e["seat"] == v], (
                index,
                v,
            )
            if r.ended:
                assert mine["hands"] == true_hands
            named: set[str] = set()
            if r.ended:
                assert mine["hands"] == true_hands
                assert mine["drawn_card"] is None
            else:
                hands, held = sight.named(v, r)
                assert (mine["hands"], mine["drawn_card"]) == (hands, held), (index, v, step.kind)
                for s, i in itertools.product(range(n), range(3)):
                    card = mine["hands"][s][i]
                    if card is not None:
                        assert card == true_hands[s][i]
                        if card not in sight.seen[v]:
                            named.add(card)
                            tally["by_elimination"] += 1
                        tally["known_other" if s != v else "known_own"] += 1
                # The card held, whoever holds it, if this seat can name it (its own, or drawn from a pile
                # whose order it saw, or one that lay face up on the discard pile, or by elimination).
                if held is not None:
                    assert held == r.drawn
                    if held not in sight.seen[v]:
                        named.add(held)
                        tally["held_by_elimination"] += 1
                    if r.turn != v and r.drawn_from is Source.DECK:
                        tally["held_of_another"] += 1
            # No card anywhere in the step that this seat had not seen (or that was not public by then), but for
            # the ones it can name by elimination.
            allowed = sight.seen[v] | named | ({c for h in true_hands for c in h} if r.ended else set())
            assert card_codes(mine) <= allowed, (index, v, card_codes(mine) - allowed)
    assert len(views[None]["steps"]) == index + 1
    if played is not None:
        assert replayed == played
    if final is not None:
        assert truth.totals == final.totals
        assert replay_game(record)[0].totals == final.totals


@pytest.mark.parametrize("players", range(2, 9))
def test_every_step_of_every_point_of_view_shows_only_what_the_seat_knew(players: int) -> None:
    tally: Counter[str] = Counter()
    for k, options in enumerate(OPTIONS):
        rng = random.Random(f"replay {players} {k}")
        played: list[Event] = []
        final, record = random_record(players, options, rng, PATIENT if k % 2 else HASTY, played)
        check_game(record, final, tally, played)
    # The games went through everything a replay must show.
    for kind in ("deal", "action", "clock", "resume", "end", "rejected", "known_own", "known_other", "held_of_another"):
        assert tally[kind] > 0, kind
    for kind in ("pile_turned", "queen_used", "jack_used", "king_used", "timed_out", "window_closed", "drew"):
        assert tally[kind] > 0, kind
    # Cards named by what follows from the rest (a turned-over pile, every other card located).
    assert tally["by_elimination"] > 0


@pytest.mark.parametrize("seed", range(6))
def test_a_game_that_ended_unfinished_replays_up_to_where_it_stopped(seed: int) -> None:
    """An abandoned game: its last round stops in the middle of a move, with no ``end_at``."""
    rng = random.Random(f"abandoned {seed}")
    _, record = random_record(rng.randrange(2, 9), OPTIONS[seed], rng, PATIENT)
    last = record.rounds[rng.randrange(len(record.rounds))]
    record.rounds = record.rounds[: record.rounds.index(last) + 1]
    cut = rng.randrange(len(last.actions))
    last.actions = last.actions[:cut]
    last.resumes = [x for x in last.resumes if x.after <= cut]
    last.end_at = None
    tally: Counter[str] = Counter()
    check_game(record, None, tally)
    steps = build_replay(record, None, game_id="g")["steps"]
    assert steps[-1]["kind"] != "end"
    assert not steps[-1]["table"]["round"]["ended"]


def test_a_seat_out_of_range_is_refused() -> None:
    _, record = random_record(2, Options(50), random.Random(1), HASTY)
    for seat in (-1, 2, 9):
        with pytest.raises(NoSuchSeat, match=f"no seat {seat} in this game"):
            build_replay(record, seat, game_id="g")
