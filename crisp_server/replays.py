"""Replays (``crisp-replay/1``, docs/replays.md): a finished game step by step, from one point of view.

"Everything open" (``seat`` ``None``) shows every card and every event. A seat's point of view shows what
that player knew at each step, and nothing else: its events are the ones the live protocol sent it, and the
cards face up in ``hands`` (and the held card in ``drawn_card``) are the ones a
:class:`~crisp_server.bots.memory.Memory` fed, step by step, the very updates a client in that seat got can
name, at the position it knows (:meth:`~crisp_server.bots.memory.Memory.deduced`: what it saw, and what
follows from it by elimination; a second implementation of knowledge would be a second chance to leak). At a
round's end every hand is public.
"""

from __future__ import annotations

import gzip
from collections.abc import Mapping
from typing import Any, Final

import orjson

from crisp_server.bots.memory import Memory
from crisp_server.engine import Game, Record, Timed, event_to_dict, parse_record, replay_steps
from crisp_server.engine.record import action_to_dict
from crisp_server.engine.views import seat_update, table_view

FORMAT: Final = "crisp-replay/1"


class NoSuchSeat(ValueError):
    """The point of view asked for is not a seat of the game."""


def build_replay(
    record: Record,
    seat: int | None,
    *,
    game_id: str,
    public: bool = False,
    host: int | None = None,
    you: int | None = None,
) -> dict[str, Any]:
    """The ``crisp-replay/1`` body of ``record`` from ``seat``'s point of view (``None``: everything open).

    ``public``, ``host`` and ``you`` (the asker's seat) are stored facts the body repeats for its reader."""
    if seat is not None and not 0 <= seat < len(record.players):
        raise NoSuchSeat(f"no seat {seat} in this game")
    memory = Memory() if seat is not None else None
    steps: list[dict[str, Any]] = []
    for step in replay_steps(record):
        game = step.game
        table = table_view(game)
        dicts = [event_to_dict(e) for e in step.events]
        if memory is None:
            events = dicts
        else:
            update = seat_update(game, seat, step.events, dicts, table)
            memory.observe(update)
            events = update["events"]
        hands, held = _seen(game, memory)
        steps.append(
            {
                "kind": step.kind,
                "round": step.round,
                "at": step.at,
                "action": _action(step.action) if step.action is not None else None,
                "rejected": step.rejected,
                "events": events,
                "table": table,
                "drawn_card": held,
                "hands": hands,
            }
        )
    return {
        "format": FORMAT,
        "game_id": game_id,
        "players": list(record.players),
        "options": record.options.as_dict(),
        "seat": seat,
        "public": public,
        "host": host,
        "you": you,
        "steps": steps,
    }


def replay_body(
    document: Mapping[str, Any],
    seat: int | None,
    *,
    game_id: str,
    public: bool = False,
    host: int | None = None,
    you: int | None = None,
    gzipped: bool = False,
) -> bytes:
    """A stored game's ``crisp-record/1`` ``document`` as the replay's HTTP body: built, encoded and, if
    ``gzipped``, compressed (all of it CPU work: the server runs it off the event loop)."""
    body = build_replay(parse_record(document), seat, game_id=game_id, public=public, host=host, you=you)
    data = orjson.dumps(body)
    return gzip.compress(data, compresslevel=5, mtime=0) if gzipped else data


def _action(timed: Timed) -> dict[str, Any]:
    """The record's action without its instant (the step's ``at``)."""
    out = action_to_dict(timed)
    del out["at"]
    return out


def _seen(game: Game, memory: Memory | None) -> tuple[list[list[str | None]], str | None]:
    """Per seat and slot the card face up in this point of view, and the card the player to move holds if this
    point of view may see it: the truth when everything is open (the held card until the round ends; at its
    end the hands are public to all), else what the seat's memory can name where it lies."""
    r = game.round
    assert r is not None
    if memory is None or r.ended:
        held = r.drawn if memory is None and not r.ended else None
        return [list(h) for h in r.hands], held
    return memory.deduced()
