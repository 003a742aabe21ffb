"""The evening's standings of a room: its ended games summed up per player name (games, wins, points, best round).

A game's share of the standings (``GameTally``) is read from its result row and, for the points of each round,
replayed from its stored record once: an ended game never changes, so its tally is kept in a bounded cache and
a later call only reads the list of the room's ended games. Only ended games (a result row) are counted: a
running game's rounds stay out until it ends.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

from crisp_server.engine import Record, replay_game

#: Ended games whose tallies are kept (a few hundred bytes each): an evening's rooms, many times over.
CACHED_GAMES: Final = 4096


@dataclass(frozen=True, slots=True)
class GameTally:
    """One ended game as the standings count it."""

    players: tuple[str, ...]
    totals: tuple[int, ...]
    winners: tuple[int, ...]
    abandoned: bool
    #: Each seat's fewest points in one ended round (the ±5 included); ``None`` where no round ended.
    best_rounds: tuple[int | None, ...]


@dataclass(slots=True)
class PlayerStanding:
    name: str
    games: int = 0
    wins: int = 0
    points: int = 0
    best_round: int | None = None


@dataclass(frozen=True, slots=True)
class Standings:
    games: int
    abandoned: int
    players: list[PlayerStanding]


def best_rounds(record: Record) -> tuple[int | None, ...]:
    """Each seat's fewest points in one ended round of the recorded game (replayed by the engine)."""
    game, _ = replay_game(record)
    best: list[int | None] = [None] * len(record.players)
    for r in game.rounds:
        if r.points is None:
            continue
        for seat, points in enumerate(r.points):
            low = best[seat]
            best[seat] = points if low is None else min(low, points)
    return tuple(best)


def standings(tallies: Iterable[GameTally]) -> Standings:
    """The games summed per player name: an abandoned game counts as played, with its points, and no winner.
    Sorted by wins (most first), then points (fewest first), then name."""
    by_name: dict[str, PlayerStanding] = {}
    games = abandoned = 0
    for tally in tallies:
        games += 1
        abandoned += tally.abandoned
        for seat, name in enumerate(tally.players):
            player = by_name.setdefault(name, PlayerStanding(name))
            player.games += 1
            player.points += tally.totals[seat] if seat < len(tally.totals) else 0
            if seat in tally.winners and not tally.abandoned:
                player.wins += 1
            best = tally.best_rounds[seat] if seat < len(tally.best_rounds) else None
            if best is not None and (player.best_round is None or best < player.best_round):
                player.best_round = best
    ranked = sorted(by_name.values(), key=lambda p: (-p.wins, p.points, p.name.casefold(), p.name))
    return Standings(games, abandoned, ranked)


class TallyCache:
    """Ended games' tallies by game id, the least recently used forgotten past ``capacity``."""

    def __init__(self, capacity: int = CACHED_GAMES) -> None:
        self.capacity = capacity
        self._tallies: OrderedDict[str, GameTally] = OrderedDict()

    def __len__(self) -> int:
        return len(self._tallies)

    def get(self, game_id: str) -> GameTally | None:
        tally = self._tallies.get(game_id)
        if tally is not None:
            self._tallies.move_to_end(game_id)
        return tally

    def put(self, game_id: str, tally: GameTally) -> None:
        self._tallies[game_id] = tally
        self._tallies.move_to_end(game_id)
        while len(self._tallies) > self.capacity:
            self._tallies.popitem(last=False)
