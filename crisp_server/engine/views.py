"""What one seat (or a spectator) may know now: a pure function of the game.

A view has two parts. ``table`` is the same for everyone at the table: it holds only public facts
(RULES.md, "Not in the rules"), so it is built once per state and shared. ``you`` is the little that
is private to one seat: the card it has drawn from the draw pile and what it may do with it. A seat's
own face-down values are never in its view (Crisp is a memory game: they are shown once, as
``CardShown`` events addressed to that seat alone); at the round's end every hand is public.
"""

from __future__ import annotations

from typing import Any

from .actions import CallCrisp, Discard, Draw, Source, Swap, UseJack, UseKing, UseQueen
from .game import Game

#: The names of the choices listed in ``you.can``, by action type.
_CHOICE = {UseJack: "jack", UseQueen: "queen", UseKing: "king", Discard: "discard", CallCrisp: "crisp"}


def table_view(game: Game) -> dict[str, Any]:
    """The public part of the state, identical for every seat and for spectators."""
    o = game.options
    out: dict[str, Any] = {
        "players": list(game.players),
        "options": {"score_limit": o.score_limit, "turn_seconds": o.turn_seconds, "discard_draw": o.discard_draw},
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
    card = r.drawn if r.turn == seat and r.drawn_from is Source.DECK else None
    can: list[str] = []
    for action in game.legal_actions(seat):
        if isinstance(action, Draw):
            name = "draw_" + action.source.value
        elif isinstance(action, Swap):
            name = "swap"
        else:
            name = _CHOICE[type(action)]
        if name not in can:
            can.append(name)
    return {"seat": seat, "drawn_card": card, "can": can}


def seat_view(game: Game, seat: int | None) -> dict[str, Any]:
    """Everything ``seat`` may know now: ``{"table": ..., "you": ...}``."""
    return {"table": table_view(game), "you": private_view(game, seat)}
