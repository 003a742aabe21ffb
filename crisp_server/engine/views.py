"""What one seat (or a spectator) may know now: a pure function of the game.

A view has two parts. ``table`` is the same for everyone at the table: it holds only public facts
(docs/rules.md, "Not in the rules"), so it is built once per state and shared. ``you`` is the little that
is private to one seat: the card it has drawn from the draw pile and what it may do with it. A seat's
own face-down values are never in its view (Crisp is a memory game: they are shown once, as
``CardShown`` events addressed to that seat alone); at the round's end every hand is public.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .actions import Source
from .cards import FACE_RANKS, JACK, KING, QUEEN
from .events import Event, visible_to
from .game import Game

#: The choice named in ``you.can`` for a Jack, Queen or King drawn from the draw pile.
_SPECIAL = {JACK: "jack", QUEEN: "queen", KING: "king"}


def table_view(game: Game) -> dict[str, Any]:
    """The public part of the state, identical for every seat and for spectators."""
    out: dict[str, Any] = {
        "players": list(game.players),
        "options": game.options.as_dict(),
        "totals": list(game.totals),
        "scores": [list(r.points) for r in game.rounds if r.points is not None],
        "game_over": game.game_over,
        "winners": list(game.winners),
    }
    r = game.round
    if r is None:
        out["round"] = None
        return out
    drawn: dict[str, Any] | None = None
    if r.drawn is not None and r.drawn_from is not None:
        public = r.drawn_from is Source.DISCARD
        drawn = {"from": r.drawn_from.value, "card": r.drawn if public else None}
    window = None
    if r.window_seat is not None:
        window = {"seat": r.window_seat, "closes_at": r.window_closes}
    out["round"] = {
        "index": r.index,
        "dealer": r.dealer,
        "starter": r.starter,
        "now": r.now,
        "ended": r.ended,
        "turn": None if r.ended else r.turn,
        "drawn": drawn,
        "extra_moves": r.extra_moves,
        "may_draw_at": r.move_start,
        "deadline": game.deadline(),
        "window": window,
        "caller": r.caller,
        "final_turns_left": r.final_turns_left,
        "draw_pile": len(r.draw_pile),
        "discard": list(r.discard),
        "hands": [list(h) for h in r.hands] if r.ended else None,
        "sums": list(r.sums) if r.sums is not None else None,
        "points": list(r.points) if r.points is not None else None,
    }
    return out


def private_view(game: Game, seat: int | None) -> dict[str, Any]:
    """What only ``seat`` may know now (``None``: a spectator, who knows nothing private)."""
    r = game.round
    if seat is None or r is None or r.ended:
        return {"seat": seat, "drawn_card": None, "can": []}
    return {"seat": seat, "drawn_card": drawn_card(game, seat), "can": choices(game, seat)}


def drawn_card(game: Game, seat: int) -> str | None:
    """The card ``seat`` drew from the deck and holds, which only it may see (one from the discard pile is
    public: it is in the table's view)."""
    r = game.round
    if r is None or r.ended or r.turn != seat or r.drawn_from is not Source.DECK:
        return None
    return r.drawn


def choices(game: Game, seat: int) -> list[str]:
    """The kinds of ``Game.legal_actions(seat)``, in its order, without building every action (a Queen
    alone has 3 x 3 x (n - 1) targets, and this runs for every seat at every update)."""
    r = game.round
    assert r is not None
    can = ["crisp"] if game.can_call_crisp(seat) else []
    if seat != r.turn or r.now < r.move_start:
        return can
    drawn = r.drawn
    if drawn is None:
        can.append("draw_deck")
        if game.options.discard_draw and r.discard:
            can.append("draw_discard")
        return can
    rank = drawn[0]
    from_deck = r.drawn_from is Source.DECK
    if not (from_deck and rank in FACE_RANKS):
        can.append("swap")
    if from_deck and rank != KING:
        can.append("discard")
    if from_deck and rank in FACE_RANKS:
        can.append(_SPECIAL[rank])
    return can


def seat_view(game: Game, seat: int | None) -> dict[str, Any]:
    """Everything ``seat`` may know now: ``{"table": ..., "you": ...}``."""
    return {"table": table_view(game), "you": private_view(game, seat)}


def seat_update(
    game: Game, seat: int | None, events: Sequence[Event], dicts: Sequence[dict[str, Any]], table: dict[str, Any]
) -> dict[str, Any]:
    """The ``update`` a client in ``seat`` is sent after ``events`` (``dicts``: the same events as
    ``event_to_dict`` gives them; ``table``: ``table_view(game)``, built once for every seat): the shared
    table, the seat's private part and the events it may see. Computer players and replays are fed these."""
    return {
        "type": "update",
        "table": table,
        "you": private_view(game, seat),
        "events": [d for e, d in zip(events, dicts, strict=True) if visible_to(e, seat)],
    }
