"""The arena: computer players play each other in process, to measure the levels (``crisp-server arena``).

Each game runs on the rules engine with no sockets and no pauses. Every bot is fed exactly what its seat
would be sent (the engine's ``table`` and ``you`` views and the events that seat may see, as in an
``update``), and answers with a protocol message, which is parsed like a client's and applied by the
engine. Seats and the first dealer are drawn at random each game, so that position does not favour a level;
decks, seats and the bots' choices all come from one seeded ``random.Random``: a seed gives the same run.

An answer the engine refuses is counted as an illegal move (a bug) and the move is timed out so the game
goes on.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson

from .bots import LEVELS, Bot, Message
from .engine import FULL_DECK, Action, Event, Game, Options, Rejected, TimeOut, event_to_dict
from .engine.views import seat_update, table_view
from .protocol import ACTION_MESSAGES, BadMessage, parse_inbound, to_action

#: 95 % of a normal distribution lies within this many standard deviations of the mean.
Z95 = 1.959964

#: A round longer than this many moves means a level never lets it end (every level calls Crisp in the end).
MAX_ROUND_MOVES = 5000

#: Called with (game, seat, update) for every update a bot is fed (the tests check it against the views).
Feed = Callable[[Game, int, Mapping[str, Any]], None]


@dataclass(slots=True)
class GameResult:
    """One game, by entry of the ``seats`` list (not by table seat, which is drawn at random)."""

    win_shares: list[float]
    round_points: list[list[int]]  # per entry, its points in each round
    illegal_moves: int
    decision_ns: list[int]


@dataclass(slots=True)
class Tally:
    """Results gathered over many games."""

    levels: list[str]
    games: int = 0
    illegal_moves: int = 0
    win_shares: list[list[float]] = field(default_factory=list)
    points: list[list[tuple[int, int]]] = field(default_factory=list)  # per entry: (sum, rounds) per game
    decision_ns: list[int] = field(default_factory=list)

    def add(self, result: GameResult) -> None:
        if not self.win_shares:
            self.win_shares = [[] for _ in self.levels]
            self.points = [[] for _ in self.levels]
        self.games += 1
        self.illegal_moves += result.illegal_moves
        for i, share in enumerate(result.win_shares):
            self.win_shares[i].append(share)
            self.points[i].append((sum(result.round_points[i]), len(result.round_points[i])))
        self.decision_ns.extend(result.decision_ns)

    def summary(self) -> dict[str, Any]:
        """The figures as ``crisp-server arena --json`` prints them."""
        seats = []
        for i, level in enumerate(self.levels):
            share, low, high = _mean_ci(self.win_shares[i])
            points, p_low, p_high = _ratio_ci(self.points[i])
            seats.append(
                {
                    "level": level,
                    "win_share": round(share, 4),
                    "win_share_ci95": [round(low, 4), round(high, 4)],
                    "mean_points": round(points, 3),
                    "mean_points_ci95": [round(p_low, 3), round(p_high, 3)],
                }
            )
        times = sorted(self.decision_ns)
        return {
            "games": self.games,
            "seats": seats,
            "illegal_moves": self.illegal_moves,
            "decisions": len(times),
            "decision_ms": {"median": _quantile_ms(times, 0.5), "p99": _quantile_ms(times, 0.99)},
        }


def _mean_ci(xs: Sequence[float]) -> tuple[float, float, float]:
    n = len(xs)
    if n == 0:
        return 0.0, 0.0, 0.0
    mean = sum(xs) / n
    if n == 1:
        return mean, mean, mean
    sd = math.sqrt(sum((x - mean) ** 2 for x in xs) / (n - 1))
    half = Z95 * sd / math.sqrt(n)
    return mean, mean - half, mean + half


def _ratio_ci(per_game: Sequence[tuple[int, int]]) -> tuple[float, float, float]:
    """Points per round over all games, with a 95 % interval that treats each game as one sample (rounds
    of one game are not independent: the same players, the same totals)."""
    points = sum(p for p, _ in per_game)
    rounds = sum(r for _, r in per_game)
    if rounds == 0:
        return 0.0, 0.0, 0.0
    mean = points / rounds
    n = len(per_game)
    if n < 2:
        return mean, mean, mean
    residual = sum((p - mean * r) ** 2 for p, r in per_game) * n / (n - 1)
    half = Z95 * math.sqrt(residual) / rounds
    return mean, mean - half, mean + half


def _quantile_ms(sorted_ns: Sequence[int], q: float) -> float:
    if not sorted_ns:
        return 0.0
    i = min(len(sorted_ns) - 1, math.ceil(q * len(sorted_ns)) - 1)
    return round(sorted_ns[max(0, i)] / 1e6, 4)


def message_to_action(seat: int, message: Message) -> Action:
    """The engine action for a bot's message, parsed exactly as a client's frame is (``BadMessage`` if
    it is not a valid inbound message, or not a move)."""
    msg = parse_inbound(orjson.dumps(message))
    if not isinstance(msg, ACTION_MESSAGES):
        raise BadMessage(f"{msg.type} is not a move")
    return to_action(seat, msg)


class _Table:
    """One game in progress: the engine, the bots by table seat, and what the game has cost."""

    def __init__(self, game: Game, bots: list[Bot], on_feed: Feed | None) -> None:
        self.game = game
        self.bots = bots
        self.on_feed = on_feed
        self.illegal = 0
        self.decision_ns: list[int] = []

    def feed(self, events: Sequence[Event]) -> None:
        """Send every seat its update: the shared table, its private part, the events it may see."""
        game = self.game
        table = table_view(game)
        dicts = [event_to_dict(e) for e in events]
        for seat, bot in enumerate(self.bots):
            update = seat_update(game, seat, events, dicts, table)
            if self.on_feed is not None:
                self.on_feed(game, seat, update)
            bot.observe(update)

    def ask(self, seat: int) -> Message | None:
        start = time.perf_counter_ns()
        message = self.bots[seat].decide()
        self.decision_ns.append(time.perf_counter_ns() - start)
        return message

    def act(self, seat: int, message: Message | None) -> None:
        """Apply the bot's message; an unparsable or refused one is an illegal move, and the move times out."""
        try:
            if message is None:
                raise BadMessage("no move where one was due")
            events = self.game.apply(message_to_action(seat, message))
        except (BadMessage, Rejected):
            self.illegal += 1
            events = self.game.apply(TimeOut(seat))
        self.feed(events)


def play_game(
    levels: Sequence[str],
    rng: random.Random,
    options: Options | None = None,
    *,
    timeouts: float = 0.0,
    on_feed: Feed | None = None,
) -> GameResult:
    """Play one game between bots of ``levels`` (entry i of the list is one player, seated at random).

    ``timeouts``: the chance that the server times a move out instead of asking the bot (a player away),
    so that the tests see bots cope with it.
    """
    n = len(levels)
    order = list(range(n))
    rng.shuffle(order)  # order[seat] = the entry of ``levels`` that sits there
    bots = [Bot(levels[order[seat]], random.Random(rng.getrandbits(64))) for seat in range(n)]
    game = Game([f"{levels[order[s]]} {s}" for s in range(n)], options or Options(), rng.randrange(n))
    t = _Table(game, bots, on_feed)
    while not game.game_over:
        deck = list(FULL_DECK)
        rng.shuffle(deck)
        t.feed(game.start_round(deck))
        r = game.round
        assert r is not None
        moves = 0
        while not r.ended:
            moves += 1
            if moves > MAX_ROUND_MOVES:
                raise RuntimeError(f"a round of {', '.join(levels)} did not end after {MAX_ROUND_MOVES} moves")
            window = r.window_seat
            if window is not None and game.can_call_crisp(window):
                message = t.ask(window)
                if message is not None:
                    t.act(window, message)
            if not r.move_started:
                t.feed(game.advance(r.move_start))
            seat = r.turn
            if timeouts and rng.random() < timeouts:
                t.feed(game.apply(TimeOut(seat)))
                continue
            t.act(seat, t.ask(seat))
    shares = [0.0] * n
    for seat in game.winners:
        shares[order[seat]] += 1 / len(game.winners)
    points: list[list[int]] = [[] for _ in range(n)]
    for rnd in game.rounds:
        assert rnd.points is not None
        for seat, p in enumerate(rnd.points):
            points[order[seat]].append(p)
    return GameResult(shares, points, t.illegal, t.decision_ns)


def run_arena(levels: Sequence[str], games: int, seed: int, options: Options | None = None) -> Tally:
    """Play ``games`` games between ``levels`` from ``seed``; the tally."""
    unknown = [lv for lv in levels if lv not in LEVELS]
    if unknown:
        raise ValueError(f"unknown level {unknown[0]!r} (one of {', '.join(LEVELS)})")
    rng = random.Random(seed)
    tally = Tally(list(levels))
    for _ in range(games):
        tally.add(play_game(levels, rng, options))
    return tally


def format_summary(summary: Mapping[str, Any]) -> str:
    """The figures as lines of text for a person."""
    lines = [f"{summary['games']} games, {len(summary['seats'])} players"]
    lines.append(f"{'seat':<5}{'level':<8}{'win share (95% CI)':<28}points per round (95% CI)")
    for i, s in enumerate(summary["seats"]):
        lo, hi = s["win_share_ci95"]
        p_lo, p_hi = s["mean_points_ci95"]
        share = f"{s['win_share']:.3f} ({lo:.3f} to {hi:.3f})"
        lines.append(f"{i + 1:<5}{s['level']:<8}{share:<28}{s['mean_points']:.2f} ({p_lo:.2f} to {p_hi:.2f})")
    lines.append(f"illegal moves: {summary['illegal_moves']}")
    d = summary["decision_ms"]
    lines.append(f"decision time: median {d['median']} ms, p99 {d['p99']} ms ({summary['decisions']} decisions)")
    return "\n".join(lines)
