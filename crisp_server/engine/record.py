"""Game records, ``crisp-record/1`` (``docs/record-format.md``): read, write and replay.

A record holds everything needed to replay a game exactly: options, seats, each round's deck and
every action with its instant. :func:`parse_record` checks a document and turns it into typed values,
or raises :class:`MalformedRecord` with the place of the first problem; :func:`replay` plays it
through :class:`~crisp_server.engine.game.Game` and returns the result object of the format.
A rule break in a record is not malformed: it is listed as rejected, and the replay goes on.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from .actions import (
    ACTION_NAMES,
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
    action_fields,
)
from .cards import Slot, deck_problem
from .events import Event, GameEnded, MoveStarted, RoundEnded
from .game import MAX_PLAYERS, MIN_PLAYERS, Game, Options, Round
from .rejections import Rejected

FORMAT: Final = "crisp-record/1"


class MalformedRecord(ValueError):
    """The document is not a valid record; the message names the problem and its place."""


@dataclass(frozen=True, slots=True)
class Timed:
    """An action and the instant it was done (ms since the round's first move could start)."""

    at: int
    action: Action


@dataclass(frozen=True, slots=True)
class Resume:
    """The server restarted after ``after`` actions of the round, at round instant ``at`` (an extension of
    the format: see ``Game.resume``)."""

    after: int
    at: int


@dataclass(slots=True)
class RecordRound:
    deck: tuple[str, ...]
    actions: list[Timed] = field(default_factory=list)
    end_at: int | None = None
    resumes: list[Resume] = field(default_factory=list)


@dataclass(slots=True)
class Record:
    options: Options
    players: tuple[str, ...]
    first_dealer: int
    rounds: list[RecordRound] = field(default_factory=list)


# -- reading -------------------------------------------------------------------------------------------


def _is_int(value: object) -> bool:
    return type(value) is int  # JSON true/false are bools, which Python would also call ints


def _need(obj: Mapping[str, Any], key: str, where: str) -> Any:
    if key not in obj:
        raise MalformedRecord(f"{where}: missing field '{key}'")
    return obj[key]


def _need_int(obj: Mapping[str, Any], key: str, where: str, minimum: int | None = None) -> int:
    value = _need(obj, key, where)
    if not _is_int(value) or (minimum is not None and value < minimum):
        bound = "" if minimum is None else f" >= {minimum}"
        raise MalformedRecord(f"{where}.{key}: must be an integer{bound}, not {json.dumps(value)}")
    return int(value)


def _need_slot(obj: Mapping[str, Any], key: str, where: str) -> Slot:
    value = _need(obj, key, where)
    try:
        if not isinstance(value, str):  # (compiled, Slot.parse would refuse it with a TypeError)
            raise ValueError(value)
        return Slot.parse(value)
    except ValueError:
        raise MalformedRecord(f"{where}.{key}: unknown slot {json.dumps(value)} (left, middle or right)") from None


def _parse_action(obj: object, where: str) -> Timed:
    if not isinstance(obj, dict):
        raise MalformedRecord(f"{where}: an action must be an object")
    at = _need_int(obj, "at", where, minimum=0)
    seat = _need_int(obj, "seat", where)
    do = _need(obj, "do", where)
    action: Action
    if do == "draw":
        source = _need(obj, "from", where)
        if source not in ("deck", "discard"):
            raise MalformedRecord(f'{where}.from: must be "deck" or "discard", not {json.dumps(source)}')
        action = Draw(seat, Source(source))
    elif do == "swap":
        action = Swap(seat, _need_slot(obj, "slot", where))
    elif do == "discard":
        action = Discard(seat)
    elif do == "jack":
        action = UseJack(seat)
    elif do == "queen":
        action = UseQueen(
            seat,
            _need_slot(obj, "slot", where),
            _need_int(obj, "target", where),
            _need_slot(obj, "target_slot", where),
        )
    elif do == "king":
        action = UseKing(seat)
    elif do == "crisp":
        action = CallCrisp(seat)
    elif do == "timeout":
        action = TimeOut(seat)
    else:
        known = ", ".join(ACTION_NAMES.values())
        raise MalformedRecord(f"{where}.do: unknown action {json.dumps(do)} (one of {known})")
    return Timed(at, action)


def _parse_round(obj: object, where: str) -> RecordRound:
    if not isinstance(obj, dict):
        raise MalformedRecord(f"{where}: a round must be an object")
    deck = _need(obj, "deck", where)
    if not isinstance(deck, list):
        raise MalformedRecord(f"{where}.deck: must be a list of 52 card codes")
    problem = deck_problem(deck)
    if problem is not None:
        raise MalformedRecord(f"{where}.deck: {problem}")
    actions_data = _need(obj, "actions", where)
    if not isinstance(actions_data, list):
        raise MalformedRecord(f"{where}.actions: must be a list")
    actions: list[Timed] = []
    last = 0
    for i, item in enumerate(actions_data):
        timed = _parse_action(item, f"{where}.actions[{i}]")
        if timed.at < last:
            raise MalformedRecord(f"{where}.actions[{i}].at: {timed.at} is before the previous action's {last}")
        last = timed.at
        actions.append(timed)
    end_at: int | None = None
    if obj.get("end_at") is not None:
        end_at = _need_int(obj, "end_at", where, minimum=0)
        if end_at < last:
            raise MalformedRecord(f"{where}.end_at: {end_at} is before the last action's {last}")
    return RecordRound(tuple(deck), actions, end_at, _parse_resumes(obj.get("resumes"), actions, end_at, where))


def _parse_resumes(data: object, actions: list[Timed], end_at: int | None, where: str) -> list[Resume]:
    if data is None:
        return []
    if not isinstance(data, list):
        raise MalformedRecord(f"{where}.resumes: must be a list")
    out: list[Resume] = []
    for i, item in enumerate(data):
        place = f"{where}.resumes[{i}]"
        if not isinstance(item, dict):
            raise MalformedRecord(f"{place}: must be an object")
        after = _need_int(item, "after", place, minimum=0)
        at = _need_int(item, "at", place, minimum=0)
        if after > len(actions):
            raise MalformedRecord(f"{place}.after: {after} is past the round's {len(actions)} actions")
        if out and after < out[-1].after:
            raise MalformedRecord(f"{place}.after: {after} is before the previous resume's {out[-1].after}")
        if out and at < out[-1].at:
            raise MalformedRecord(f"{place}.at: {at} is before the previous resume's {out[-1].at}")
        if (after > 0 and at < actions[after - 1].at) or (after < len(actions) and at > actions[after].at):
            raise MalformedRecord(f"{place}.at: {at} is not between the actions around it")
        if after == len(actions) and end_at is not None and at > end_at:  # applied before the round's end
            raise MalformedRecord(f"{place}.at: {at} is after the round's end_at {end_at}")
        out.append(Resume(after, at))
    return out


def parse_record(data: object) -> Record:
    """Check a decoded JSON document and return it as a :class:`Record`."""
    if not isinstance(data, dict):
        raise MalformedRecord("record: must be a JSON object")
    fmt = _need(data, "format", "record")
    if fmt != FORMAT:
        raise MalformedRecord(f'record.format: must be "{FORMAT}", not {json.dumps(fmt)}')
    opts = _need(data, "options", "record")
    if not isinstance(opts, dict):
        raise MalformedRecord("record.options: must be an object")
    limit = _need_int(opts, "score_limit", "record.options", minimum=1)
    seconds = _need(opts, "turn_seconds", "record.options")
    if seconds is not None and (not _is_int(seconds) or seconds < 1):
        raise MalformedRecord(
            f"record.options.turn_seconds: must be a positive integer or null, not {json.dumps(seconds)}"
        )
    discard_draw = _need(opts, "discard_draw", "record.options")
    if type(discard_draw) is not bool:
        raise MalformedRecord(f"record.options.discard_draw: must be true or false, not {json.dumps(discard_draw)}")
    players = _need(data, "players", "record")
    if not isinstance(players, list) or not all(isinstance(p, str) for p in players):
        raise MalformedRecord("record.players: must be a list of names")
    if not MIN_PLAYERS <= len(players) <= MAX_PLAYERS:
        raise MalformedRecord(f"record.players: {MIN_PLAYERS} to {MAX_PLAYERS} players, not {len(players)}")
    first_dealer = _need_int(data, "first_dealer", "record", minimum=0)
    if first_dealer >= len(players):
        raise MalformedRecord(f"record.first_dealer: no seat {first_dealer} among {len(players)} players")
    rounds = _need(data, "rounds", "record")
    if not isinstance(rounds, list):
        raise MalformedRecord("record.rounds: must be a list")
    return Record(
        Options(limit, seconds, discard_draw),
        tuple(players),
        first_dealer,
        [_parse_round(r, f"rounds[{k}]") for k, r in enumerate(rounds)],
    )


def _no_constants(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def loads_record(text: str | bytes) -> Record:
    """Parse a record from JSON text."""
    try:
        data = json.loads(text, parse_constant=_no_constants)
    except (ValueError, RecursionError) as exc:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        raise MalformedRecord(f"not JSON: {exc}") from None
    return parse_record(data)


# -- writing -------------------------------------------------------------------------------------------


def action_to_dict(timed: Timed) -> dict[str, Any]:
    """One action in record form: ``{"at", "seat", "do", ...}``."""
    a = timed.action
    return {"at": timed.at, "seat": a.seat, "do": ACTION_NAMES[type(a)], **action_fields(a)}


def record_to_dict(record: Record) -> dict[str, Any]:
    """The record as a ``crisp-record/1`` document."""
    rounds: list[dict[str, Any]] = []
    for r in record.rounds:
        item: dict[str, Any] = {"deck": list(r.deck), "actions": [action_to_dict(t) for t in r.actions]}
        if r.end_at is not None:
            item["end_at"] = r.end_at
        if r.resumes:
            item["resumes"] = [{"after": x.after, "at": x.at} for x in r.resumes]
        rounds.append(item)
    return {
        "format": FORMAT,
        "options": record.options.as_dict(),
        "players": list(record.players),
        "first_dealer": record.first_dealer,
        "rounds": rounds,
    }


def dumps_record(record: Record) -> str:
    return json.dumps(record_to_dict(record), separators=(",", ":"))


# -- replaying -----------------------------------------------------------------------------------------


def _round_result(game: Game, r: Round, totals: Sequence[int] | None) -> dict[str, Any]:
    out: dict[str, Any] = {
        "dealer": r.dealer,
        "starter": r.starter,
        "ended": r.ended,
        "caller": r.caller,
        "hands": [list(h) for h in r.hands],
        "reveals": [[{"card": v.card, "slot": v.slot.label, "why": v.why.value} for v in seat] for seat in r.reveals],
        "timeouts": [{"seat": seat, "at": at} for seat, at in r.timeouts],
    }
    if r.ended:
        assert r.sums is not None
        assert r.points is not None
        assert totals is not None
        out["sums"] = list(r.sums)
        out["points"] = list(r.points)
        out["totals"] = list(totals)
    else:
        out["state"] = {
            "turn": r.turn,
            "drawn": r.drawn is not None,
            "extra_moves": r.extra_moves,
            "draw_pile": len(r.draw_pile),
            "discard": list(r.discard),
            "caller": r.caller,
            "final_turns_left": r.final_turns_left,
        }
    return out


@dataclass(slots=True)
class Step:
    """One step of a replay (:func:`replay_steps`): what happened and the events it caused; ``game`` is the
    game as it stands after the step (the same object throughout: read it before taking the next step).

    ``kind``: ``deal`` (a round was dealt), ``action`` (``action``, the record's ``index``-th of the round,
    applied or ``rejected`` with that code), ``clock`` (the clock advanced to ``at`` and crisp windows closed
    or move clocks ran out on the way), ``resume`` (a server restart, ``Game.resume``) or ``end`` (the round
    ended at ``at``: its ``RoundEnded`` event, and ``GameEnded`` after the last round). Not frozen: one is
    made for every action of every game a room rebuilds, and a frozen dataclass sets each field the slow way."""

    kind: str
    round: int
    at: int
    events: list[Event]
    game: Game
    action: Timed | None = None
    index: int = -1
    rejected: str | None = None


def replay_steps(record: Record, game: Game | None = None) -> Iterator[Step]:
    """Play ``record`` step by step (into ``game``, a new game of the record's seats, or one made here).

    The events are the engine's own, in order, each in exactly one step. Advancing the clock to the next
    instant of the record gives a ``clock`` step when something shows (a window closing, a time-out); a
    move's clock starting (the end of the draw block) alone goes with the next step instead. The step whose
    transition ended the round is followed by the ``end`` step, which carries ``RoundEnded`` (and ``GameEnded``)."""
    if game is None:
        game = Game(record.players, record.options, record.first_dealer)
    for k, rr in enumerate(record.rounds):
        if game.game_over:
            raise MalformedRecord(f"rounds[{k}]: the game ended after round {k - 1}")
        if game.rounds and not game.rounds[-1].ended:
            raise MalformedRecord(f"rounds[{k}]: round {k - 1} did not end")
        yield Step("deal", k, 0, game.start_round(rr.deck), game)
        r = game.rounds[k]
        carry: list[Event] = []  # events of the clock still to show (a move's clock starting)
        resumes = rr.resumes
        next_resume = 0
        actions = rr.actions
        for i in range(len(actions) + 1):
            while next_resume < len(resumes) and resumes[next_resume].after == i:
                at = resumes[next_resume].at
                next_resume += 1
                was_over = r.ended
                carry = _joined(carry, game.advance(at))
                if _shows(carry):
                    yield from _ending(Step("clock", k, at, carry, game), r, was_over)
                    carry = []
                was_over = r.ended
                yield from _ending(Step("resume", k, at, _joined(carry, game.resume()), game), r, was_over)
                carry = []
            if i == len(actions):
                break
            timed = actions[i]
            was_over = r.ended
            carry = _joined(carry, game.advance(timed.at))
            if _shows(carry):
                yield from _ending(Step("clock", k, timed.at, carry, game), r, was_over)
                carry = []
            was_over = r.ended
            try:
                events = game.apply(timed.action)
            except Rejected as rejected:
                yield Step("action", k, timed.at, carry, game, timed, i, rejected.code.value)
            else:
                yield from _ending(Step("action", k, timed.at, _joined(carry, events), game, timed, i), r, was_over)
            carry = []
        if rr.end_at is not None:
            was_over = r.ended
            carry = _joined(carry, game.advance(rr.end_at))
            if _shows(carry):
                yield from _ending(Step("clock", k, rr.end_at, carry, game), r, was_over)
                carry = []
        if carry:  # a round cut short (a game still running): its last move's clock started
            yield Step("clock", k, r.now, carry, game)


def _joined(first: list[Event], then: list[Event]) -> list[Event]:
    """Both lists' events in order (one of them as it is when the other is empty: the usual case)."""
    return first + then if first and then else first or then


def _shows(events: list[Event]) -> bool:
    """Whether ``events`` make a step of their own: anything but a move's clock starting."""
    for e in events:  # noqa: SIM110 (a loop, not ``any``: no generator for each action replayed)
        if not isinstance(e, MoveStarted):
            return True
    return False


def _ending(step: Step, r: Round, was_over: bool) -> list[Step]:
    """``step``; if its transition ended the round ``r``, the round's end events moved to an ``end`` step
    after it."""
    if was_over or not r.ended:
        return [step]
    rest: list[Event] = []
    end: list[Event] = []
    for e in step.events:
        (end if isinstance(e, RoundEnded | GameEnded) else rest).append(e)
    step.events = rest
    assert r.end_at is not None
    return [step, Step("end", step.round, r.end_at, end, step.game)]


def replay_game(record: Record) -> tuple[Game, list[dict[str, Any]]]:
    """Play the record through a new :class:`Game`; the game and the rejections ``{round, index, code}``."""
    game = Game(record.players, record.options, record.first_dealer)
    rejected: list[dict[str, Any]] = []
    for step in replay_steps(record, game):
        if step.rejected is not None:
            rejected.append({"round": step.round, "index": step.index, "code": step.rejected})
    return game, rejected


def replay(record: Record) -> dict[str, Any]:
    """The result object of ``docs/record-format.md`` for ``record``."""
    game, rejected = replay_game(record)
    rounds: list[dict[str, Any]] = []
    running = [0] * game.seats
    for r in game.rounds:
        totals: list[int] | None = None
        if r.ended and r.points is not None:
            running = [t + p for t, p in zip(running, r.points, strict=True)]
            totals = running
        rounds.append(_round_result(game, r, totals))
    return {
        "rounds": rounds,
        "rejected": rejected,
        "game_over": game.game_over,
        "winners": list(game.winners),
    }


def replay_text(text: str | bytes) -> dict[str, Any]:
    """Parse and replay a record given as JSON text."""
    return replay(loads_record(text))
