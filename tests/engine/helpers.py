"""Building games for table tests: a deck with chosen cards at chosen places, and scripted setups."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from crisp_server.engine import FULL_DECK, Action, Game, Options

PLAYERS = ("Ana", "Ben", "Cem")


def deck_with(placed: Mapping[int, str]) -> list[str]:
    """A 52-card deck with ``placed`` cards at their indices and the others in ``FULL_DECK`` order."""
    assert len(set(placed.values())) == len(placed), "a card can be placed once"
    rest = iter(c for c in FULL_DECK if c not in placed.values())
    return [placed[i] if i in placed else next(rest) for i in range(len(FULL_DECK))]


def new_game(
    placed: Mapping[int, str] | None = None,
    *,
    turn_seconds: int | None = None,
    players: Sequence[str] = PLAYERS,
    discard_draw: bool = False,
) -> Game:
    """A game of ``players`` (seat 0 deals, so seat 1 starts) dealt from ``deck_with(placed)``."""
    game = Game(players, Options(100, turn_seconds, discard_draw), first_dealer=0)
    game.start_round(deck_with(placed or {}))
    return game


def run(game: Game, steps: list[tuple[int, Action]]) -> Game:
    """Play ``(at, action)`` steps that the rules allow; a refusal here means the setup is wrong."""
    for at, action in steps:
        _, rejected = game.act(action, at)
        assert rejected is None, f"setup step {action} at {at} was refused: {rejected.code}"
    return game
