"""Random games: players who pick among the legal actions, with human-like pauses and the odd mistake.

Used by the tests (random full games, fuzzing), the engine benchmark and the load-test bots. The
randomness comes from the ``random.Random`` the caller passes (seeded in tests), never the global one;
real decks for real games are shuffled with ``secrets`` by the rooms, not here.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

from crisp_server.engine import (
    FULL_DECK,
    Action,
    CallCrisp,
    Discard,
    Draw,
    Event,
    Game,
    Options,
    Record,
    RecordRound,
    Rejected,
    Slot,
    Source,
    Swap,
    Timed,
    TimeOut,
    UseJack,
    UseKing,
    UseQueen,
)


@dataclass(frozen=True, slots=True)
class Style:
    """How the simulated players behave (probabilities per decision)."""

    crisp: float = 0.2  # call Crisp when one's window is open
    mistake: float = 0.05  # try an action the rules may refuse
    slow: float = 0.03  # take a long pause (time-outs when the room has a timer)
    forced_timeout: float = 0.01  # the server times the current move out (a player who left)


def shuffled_deck(rng: random.Random) -> list[str]:
    deck = list(FULL_DECK)
    rng.shuffle(deck)
    return deck


def random_action(game: Game, rng: random.Random) -> Action:
    """Any action by any seat, legal or not: the moves a confused or malicious client might send."""
    n = game.seats
    seat = rng.randrange(-1, n + 1) if rng.random() < 0.05 else rng.randrange(n)
    slot = rng.choice(list(Slot))
    kind = rng.randrange(8)
    if kind == 0:
        return Draw(seat, rng.choice(list(Source)))
    if kind == 1:
        return Swap(seat, slot)
    if kind == 2:
        return Discard(seat)
    if kind == 3:
        return UseJack(seat)
    if kind == 4:
        return UseQueen(seat, slot, rng.randrange(-1, n + 1), rng.choice(list(Slot)))
    if kind == 5:
        return UseKing(seat)
    if kind == 6:
        return CallCrisp(seat)
    return TimeOut(seat)


def _pause(game: Game, rng: random.Random, style: Style) -> int:
    limit = game.move_limit_ms
    if rng.random() < style.slow:
        return rng.randrange(3000, max(limit or 60_000, 1000) + 4000)
    return rng.choice((0, 50, 300, 900, 1999, 2000, 2500, 2999, 3000)) if rng.random() < 0.3 else rng.randrange(1500)


def next_action(game: Game, now: int, rng: random.Random, style: Style) -> tuple[int, Action]:
    """The next instant and action of a random player at ``game`` (whose clock is at ``now``)."""
    r = game.round
    assert r is not None
    assert not r.ended
    at = now + _pause(game, rng, style)
    if rng.random() < style.mistake:
        return at, random_action(game, rng)
    if rng.random() < style.forced_timeout:
        return at, TimeOut(r.turn)
    if r.window_seat is not None and at < r.window_closes and rng.random() < style.crisp:
        return at, CallCrisp(r.window_seat)
    at = max(at, r.move_start)  # a careful player waits for the block to end
    probe = game.legal_actions(r.turn)
    # The clock may have moved between now and ``at``: choose from what will be legal by then.
    if r.drawn is None:
        drawable = [a for a in probe if isinstance(a, Draw)] or [Draw(r.turn, Source.DECK)]
        return at, rng.choice(drawable)
    moves = [a for a in probe if not isinstance(a, CallCrisp)]
    return at, rng.choice(moves) if moves else Draw(r.turn)


def play_random_game(
    players: int,
    options: Options,
    rng: random.Random,
    *,
    style: Style | None = None,
    max_actions: int = 20_000,
    on_step: Callable[[Game, Timed, list[Event], Rejected | None], None] | None = None,
) -> tuple[Game, Record]:
    """Play a whole game at random; the final game and its record. ``on_step`` sees every action."""
    style = style or Style()
    names = tuple(f"P{i}" for i in range(players))
    first_dealer = rng.randrange(players)
    game = Game(names, options, first_dealer)
    record = Record(options, names, first_dealer, [])
    actions = 0
    while not game.game_over and actions < max_actions:
        deck = shuffled_deck(rng)
        game.start_round(deck)
        rr = RecordRound(tuple(deck))
        record.rounds.append(rr)
        r = game.round
        assert r is not None
        now = 0
        while not r.ended and actions < max_actions:
            at, action = next_action(game, now, rng, style)
            events, rejected = game.act(action, at)
            timed = Timed(at, action)
            rr.actions.append(timed)
            actions += 1
            now = at
            if on_step is not None:
                on_step(game, timed, events, rejected)
    return game, record
