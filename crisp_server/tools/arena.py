"""The arena: computer players play each other in process, to measure the levels (``crisp-server arena``).

Each game runs on the rules engine with no sockets, on a simulated clock (the round's milliseconds, nobody
waits). Every bot is fed exactly what its seat would be sent (the engine's ``table`` and ``you`` views and
the events that seat may see, as in an ``update``), and answers with a protocol message, which is parsed
like a client's and applied by the engine at the instant the bot acts.

The clock runs as at a table: a bot acts after its think time (:func:`crisp_server.bots.pause_ms`), counted
from the view that gave it the decision, as a person reads the table and reaches for the pile; the engine's
timers run meanwhile (a crisp window closes, the draw block ends, a turn timer runs out and times the move
out). A draw tried during the two seconds in which the previous player may still call Crisp is refused
``too_early``, counted, and tried again as soon as the block ends (or the call lifts it).

Seats and the first dealer are drawn at random each game, so that position does not favour a level; decks,
seats, think times and the bots' choices all come from one seeded ``random.Random``: a seed gives the same run.
Any other answer the engine refuses is counted as an illegal move (a bug) and the move is timed out so the
game goes on.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

import orjson

from crisp_server.bots import LEVELS, Bot, Message, decision_key, pause_ms
from crisp_server.engine import FULL_DECK, Action, Code, Event, Game, Options, Rejected, TimeOut, event_to_dict
from crisp_server.engine.views import seat_update, table_view
from crisp_server.wire.protocol import ACTION_MESSAGES, BadMessage, parse_inbound, to_action

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
    too_early: int = 0  # draws refused during the draw block (then tried again)
    timed_out: int = 0  # moves timed out (the turn timer ran out, or the player was away)


@dataclass(slots=True)
class Tally:
    """Results gathered over many games."""

    levels: list[str]
    options: Options = field(default_factory=Options)
    games: int = 0
    illegal_moves: int = 0
    too_early: int = 0
    timed_out: int = 0
    win_shares: list[list[float]] = field(default_factory=list)
    points: list[list[tuple[int, int]]] = field(default_factory=list)  # per entry: (sum, rounds) per game
    decision_ns: list[int] = field(default_factory=list)

    def add(self, result: GameResult) -> None:
        if not self.win_shares:
            self.win_shares = [[] for _ in self.levels]
            self.points = [[] for _ in self.levels]
        self.games += 1
        self.illegal_moves += result.illegal_moves
        self.too_early += result.too_early
        self.timed_out += result.timed_out
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
            "options": self.options.as_dict(),
            "seats": seats,
            "illegal_moves": self.illegal_moves,
            "too_early": self.too_early,
            "timed_out": self.timed_out,
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


@dataclass(slots=True)
class _Plan:
    """When a seat acts next: ``key`` names its decision (``decision_key``), ``at`` is round time; ``away``:
    the server times the move out instead (the player is away)."""

    key: tuple[object, ...]
    at: int
    away: bool = False


class _Table:
    """One game in progress on its clock: the engine, the bots by table seat, their plans, and what the game
    has cost."""

    def __init__(self, game: Game, bots: list[Bot], rng: random.Random, timeouts: float, on_feed: Feed | None) -> None:
        self.game = game
        self.bots = bots
        self.rng = rng  # think times and absences (the bots decide with their own)
        self.timeouts = timeouts
        self.on_feed = on_feed
        self.plans: list[_Plan | None] = [None] * len(bots)
        self.acted: list[tuple[object, ...] | None] = [None] * len(bots)  # not asked again until the key changes
        self.illegal = 0
        self.too_early = 0
        self.timed_out = 0
        self.decision_ns: list[int] = []

    def feed(self, events: Sequence[Event]) -> None:
        """Send every seat its update: the shared table, its private part, the events it may see; then each
        seat plans what its new view asks of it."""
        game = self.game
        table = table_view(game)
        dicts = [event_to_dict(e) for e in events]
        self.timed_out += sum(1 for d in dicts if d["type"] == "timed_out")
        for seat, bot in enumerate(self.bots):
            update = seat_update(game, seat, events, dicts, table)
            if self.on_feed is not None:
                self.on_feed(game, seat, update)
            bot.observe(update)
            self._plan(seat)

    def _plan(self, seat: int) -> None:
        """Keep ``seat``'s plan while its decision stays the same; plan afresh when it changes."""
        bot = self.bots[seat]
        due = bot.due()
        if due is None:
            self.plans[seat] = self.acted[seat] = None
            return
        key = decision_key(bot.memory, due)
        plan = self.plans[seat]
        if key == self.acted[seat] or (plan is not None and plan.key == key):
            return
        r = bot.memory.round
        now = r["now"] if r is not None else 0
        pause = pause_ms(due, self.rng, bot.memory.phase)
        if due.kind == "crisp" and due.until is not None:
            pause = min(pause, max(0, due.until - now - 300))  # counted from now: the window must not close on it
        away = due.kind == "move" and self.timeouts > 0 and self.rng.random() < self.timeouts
        self.plans[seat] = _Plan(key, now + pause, away)

    def next_plan(self) -> tuple[int, _Plan] | None:
        """The seat that acts first, and its plan (the lower seat on a tie)."""
        best: tuple[int, _Plan] | None = None
        for seat, plan in enumerate(self.plans):
            if plan is not None and (best is None or plan.at < best[1].at):
                best = (seat, plan)
        return best

    def ask(self, seat: int) -> Message | None:
        start = time.perf_counter_ns()
        message = self.bots[seat].decide()
        self.decision_ns.append(time.perf_counter_ns() - start)
        return message

    def act(self, seat: int, plan: _Plan) -> None:
        """``seat`` acts on ``plan`` now: the bot's message applied, or the server's time-out for a player away.
        A draw during the draw block is refused ``too_early`` and tried again when the block ends; any other
        refusal (or an unparsable answer) is an illegal move, and the move times out."""
        game = self.game
        self.plans[seat] = None
        if plan.away:
            self.acted[seat] = plan.key
            self.feed(game.apply(TimeOut(seat)))
            return
        message = self.ask(seat)
        if message is None:
            self.acted[seat] = plan.key  # the crisp window may pass: not asked again in it
            return
        try:
            events = game.apply(message_to_action(seat, message))
        except BadMessage:
            events = self._illegal(seat)
        except Rejected as rejected:
            r = game.round
            if rejected.code is not Code.TOO_EARLY or r is None:
                events = self._illegal(seat)
            else:
                self.too_early += 1
                self.plans[seat] = _Plan(plan.key, r.move_start)  # again once the block has ended
                return
        self.acted[seat] = plan.key
        self.feed(events)

    def _illegal(self, seat: int) -> list[Event]:
        self.illegal += 1
        return self.game.apply(TimeOut(seat))

    def play_round(self, deck: Sequence[str], levels: Sequence[str]) -> None:
        """Deal ``deck`` and play the round on its clock, from instant 0 to its end."""
        game = self.game
        self.plans = [None] * len(self.bots)
        self.acted = [None] * len(self.bots)
        self.feed(game.start_round(deck))
        r = game.round
        assert r is not None
        actions = 0
        while not r.ended:
            nxt = self.next_plan()
            timer = game.next_deadline()
            if nxt is None and timer is None:
                raise RuntimeError(f"a round of {', '.join(levels)} stopped: nobody has anything to do")
            at = min(t for t in (timer, nxt[1].at if nxt is not None else None) if t is not None)
            # The engine's timers first: what falls due by then happens (a time-out, the block's end).
            events = game.advance(max(at, r.now))
            if events:
                self.feed(events)
                continue  # the views changed: the plans may have too
            assert nxt is not None
            actions += 1
            if actions > MAX_ROUND_MOVES:
                raise RuntimeError(f"a round of {', '.join(levels)} did not end after {MAX_ROUND_MOVES} moves")
            self.act(*nxt)


def play_game(
    levels: Sequence[str],
    rng: random.Random,
    options: Options | None = None,
    *,
    timeouts: float = 0.0,
    on_feed: Feed | None = None,
) -> GameResult:
    """Play one game between bots of ``levels`` (entry i of the list is one player, seated at random).

    ``timeouts``: the chance that a player is away for a move and the server times it out instead of asking
    the bot, so that the tests see bots cope with it.
    """
    n = len(levels)
    order = list(range(n))
    rng.shuffle(order)  # order[seat] = the entry of ``levels`` that sits there
    bots = [Bot(levels[order[seat]], random.Random(rng.getrandbits(64))) for seat in range(n)]
    game = Game([f"{levels[order[s]]} {s}" for s in range(n)], options or Options(), rng.randrange(n))
    t = _Table(game, bots, random.Random(rng.getrandbits(64)), timeouts, on_feed)
    while not game.game_over:
        deck = list(FULL_DECK)
        rng.shuffle(deck)
        t.play_round(deck, levels)
    shares = [0.0] * n
    for seat in game.winners:
        shares[order[seat]] += 1 / len(game.winners)
    points: list[list[int]] = [[] for _ in range(n)]
    for rnd in game.rounds:
        assert rnd.points is not None
        for seat, p in enumerate(rnd.points):
            points[order[seat]].append(p)
    return GameResult(shares, points, t.illegal, t.decision_ns, t.too_early, t.timed_out)


def run_arena(levels: Sequence[str], games: int, seed: int, options: Options | None = None) -> Tally:
    """Play ``games`` games between ``levels`` from ``seed``; the tally."""
    unknown = [lv for lv in levels if lv not in LEVELS]
    if unknown:
        raise ValueError(f"unknown level {unknown[0]!r} (one of {', '.join(LEVELS)})")
    rng = random.Random(seed)
    tally = Tally(list(levels), options or Options())
    for _ in range(games):
        tally.add(play_game(levels, rng, options))
    return tally


#: The pairings of ``crisp-server arena --table``: one player of the first level against three of the second,
#: and the win share each level must reach there (the fair share is 0.25; ``None``: no goal).
PAIRINGS: Final[tuple[tuple[str, str, float | None], ...]] = (
    ("normal", "easy", 0.375),  # 1.5 x the fair share
    ("hard", "normal", 0.325),  # 1.3 x
    ("hard", "easy", None),
)
#: The score limits the table shows, unless told others.
TABLE_LIMITS: Final = (50, 100, 150)


def run_table(games: int, seed: int, limits: Sequence[int], options: Options) -> dict[str, Any]:
    """Every pairing of :data:`PAIRINGS` at every limit in ``limits`` (``options`` gives the rest), each from
    ``seed``: the figures as ``crisp-server arena --table --json`` prints them."""
    rows = []
    for level, against, goal in PAIRINGS:
        for limit in limits:
            cell = Options(limit, options.turn_seconds, options.discard_draw)
            summary = run_arena([level, against, against, against], games, seed, cell).summary()
            first = summary["seats"][0]
            rows.append(
                {
                    "level": level,
                    "against": against,
                    "score_limit": limit,
                    "goal": goal,
                    "win_share": first["win_share"],
                    "win_share_ci95": first["win_share_ci95"],
                    "illegal_moves": summary["illegal_moves"],
                    "too_early": summary["too_early"],
                    "timed_out": summary["timed_out"],
                }
            )
    return {
        "games": games,
        "seed": seed,
        "turn_seconds": options.turn_seconds,
        "discard_draw": options.discard_draw,
        "rows": rows,
    }


def format_table(table: Mapping[str, Any]) -> str:
    """``run_table``'s figures as a table for a person: a line per pairing, a column per score limit."""
    limits = sorted({row["score_limit"] for row in table["rows"]})
    timer = f"{table['turn_seconds']} s turn timer" if table["turn_seconds"] else "no turn timer"
    draw = ", drawing from the discard pile" if table["discard_draw"] else ""
    lines = [
        f"win share of one player against three (95% CI), {table['games']} games per cell, seed {table['seed']}, "
        f"{timer}{draw}",
        (f"{'pairing':<20}{'goal':<7}" + "".join(f"{'limit ' + str(limit):<23}" for limit in limits)).rstrip(),
    ]
    pairs = list(dict.fromkeys((row["level"], row["against"]) for row in table["rows"]))
    for level, against in pairs:
        cells = {r["score_limit"]: r for r in table["rows"] if (r["level"], r["against"]) == (level, against)}
        goal = cells[limits[0]]["goal"]
        line = f"{level + ' vs 3 ' + against:<20}{'-' if goal is None else f'{goal:.3f}':<7}"
        for limit in limits:
            c = cells[limit]
            low, high = c["win_share_ci95"]
            line += f"{c['win_share']:.3f} ({low:.3f}-{high:.3f})".ljust(23)
        lines.append(line.rstrip())
    illegal = sum(r["illegal_moves"] for r in table["rows"])
    early = sum(r["too_early"] for r in table["rows"])
    timed = sum(r["timed_out"] for r in table["rows"])
    lines.append(f"illegal moves: {illegal}; draws refused as too early: {early}; moves timed out: {timed}")
    return "\n".join(lines)


def format_summary(summary: Mapping[str, Any]) -> str:
    """The figures as lines of text for a person."""
    o = summary["options"]
    timer = f"{o['turn_seconds']} s turn timer" if o["turn_seconds"] else "no turn timer"
    draw = ", drawing from the discard pile" if o["discard_draw"] else ""
    players = len(summary["seats"])
    lines = [f"{summary['games']} games, {players} players, score limit {o['score_limit']}, {timer}{draw}"]
    lines.append(f"{'seat':<5}{'level':<8}{'win share (95% CI)':<28}points per round (95% CI)")
    for i, s in enumerate(summary["seats"]):
        lo, hi = s["win_share_ci95"]
        p_lo, p_hi = s["mean_points_ci95"]
        share = f"{s['win_share']:.3f} ({lo:.3f} to {hi:.3f})"
        lines.append(f"{i + 1:<5}{s['level']:<8}{share:<28}{s['mean_points']:.2f} ({p_lo:.2f} to {p_hi:.2f})")
    lines.append(f"illegal moves: {summary['illegal_moves']}")
    lines.append(f"draws refused as too early (then tried again): {summary['too_early']}")
    lines.append(f"moves timed out: {summary['timed_out']}")
    d = summary["decision_ms"]
    lines.append(f"decision time: median {d['median']} ms, p99 {d['p99']} ms ({summary['decisions']} decisions)")
    return "\n".join(lines)
