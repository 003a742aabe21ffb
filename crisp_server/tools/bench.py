"""``python -m crisp_server bench engine``: figures for the rules engine (not a test; the machine is noisy).

1. Replay speed: random full games are recorded first (2 to 8 players, every option combination), then
   replayed from their records through ``Game.advance`` + ``Game.apply``, as a room rebuilds a game.
2. View cost: at every action of 8-player games, every seat's view is built and encoded to JSON with
   orjson, the public part once and spliced with each seat's private part, as the server sends them.
"""

from __future__ import annotations

import gc
import itertools
import random
import statistics
import time

import orjson

from crisp_server.engine import Game, Options, Record, replay_game
from crisp_server.engine.views import private_view, table_view

from .simulate import Style, play_random_game

_OPTIONS = [
    Options(limit, seconds, dd)
    for limit, seconds, dd in itertools.product((50, 100, 150), (None, 30, 45, 60), (False, True))
]


def encode_views(game: Game) -> list[bytes]:
    """Every seat's view as JSON bytes: the shared table part is encoded once."""
    table = orjson.dumps(table_view(game))
    head = b'{"table":' + table + b',"you":'
    return [head + orjson.dumps(private_view(game, seat)) + b"}" for seat in range(game.seats)]


def _records(games: int, seed: int, players: list[int]) -> list[Record]:
    rng = random.Random(seed)
    style = Style(crisp=0.08)  # fewer calls: longer rounds, like real play
    return [play_random_game(rng.choice(players), rng.choice(_OPTIONS), rng, style=style)[1] for _ in range(games)]


def bench_engine(games: int = 300, seed: int = 1) -> int:
    records = _records(games, seed, [2, 3, 4, 5, 6, 7, 8])
    actions = sum(len(rr.actions) for rec in records for rr in rec.rounds)
    print(f"engine replay: {games} random games (2-8 players, all options), {actions} actions")
    gc.collect()
    rates = []
    for _ in range(5):
        start = time.perf_counter()
        for rec in records:
            replay_game(rec)
        rates.append(actions / (time.perf_counter() - start))
    print(f"  replay: best {max(rates):,.0f} actions/s, median {statistics.median(rates):,.0f} actions/s (5 runs)")

    eight = _records(max(games // 10, 10), seed + 1, [8])
    per_action: list[float] = []
    sizes: list[int] = []
    for rec in eight:
        game = Game(rec.players, rec.options, rec.first_dealer)
        for rr in rec.rounds:
            game.start_round(rr.deck)
            for timed in rr.actions:
                game.act(timed.action, timed.at)
                start = time.perf_counter()
                views = encode_views(game)
                per_action.append(time.perf_counter() - start)
                sizes.append(len(views[0]))
    per_action.sort()
    us = [x * 1e6 for x in per_action]
    print(f"8-player views: {len(us)} actions, all 8 seats built and encoded (orjson) per action")
    print(
        f"  per action: median {statistics.median(us):.1f} us, p95 {us[int(len(us) * 0.95)]:.1f} us, "
        f"p99 {us[int(len(us) * 0.99)]:.1f} us; view size median {statistics.median(sizes):.0f} bytes"
    )
    game_for_stdlib = Game(eight[0].players, eight[0].options, eight[0].first_dealer)
    game_for_stdlib.start_round(eight[0].rounds[0].deck)
    one = time.perf_counter()
    for _ in range(2000):
        table_view(game_for_stdlib)
    build = (time.perf_counter() - one) / 2000 * 1e6
    print(f"  building the table part alone: {build:.1f} us")
    return 0
