"""Whether a game went on from where its players left it: the state a seat saw, compared with the one it
finds when it comes back (after a database outage, a restart, a node's death or a room's move), and a
simple player that plays any seat as fast as the rules let it (two-player tables).

``went_on_from`` is for a room that came back a few actions further than a seat had seen (a commit whose
answer was lost): both states must be in the stored record's history, in that order, none lost.
"""

from __future__ import annotations

from typing import Any

from crisp_server.engine import parse_record, replay_game
from crisp_server.engine.views import table_view
from crisp_server.remote.client import CrispClient
from tests.e2e.test_restart import essentials as _essentials


def essentials(state: dict[str, Any]) -> dict[str, Any]:
    """What a seat sees that the log decides (``you.can`` also follows the clock: a comeback closes an
    open Crisp window, as a restart does)."""
    out = _essentials(state)
    del out["you"]["can"]
    return out


def suspended(c: CrispClient) -> bool:
    """The last word from the room was ``unavailable`` (an ``update`` says it is over)."""
    for m in reversed(c.messages):
        if m["type"] == "unavailable":
            return True
        if m["type"] == "update":
            return False
    return False


def next_move(c: CrispClient) -> dict[str, Any] | None:
    """What this seat does now, if anything: get ready, call Crisp once the discard pile has grown a little,
    draw when the clock lets it, play a drawn card."""
    state = c.state
    if state is None or suspended(c):
        return None
    seat = c.seat
    room, you = state["room"], state["you"]
    if room["phase"] in ("peek", "round_over"):
        return None if seat is None or room["seats"][seat]["ready"] else {"type": "ready"}
    if room["phase"] != "play":
        return None
    can: list[str] = you["can"]
    if "crisp" in can and len(state["table"]["round"]["discard"]) >= 4:  # in one's window, after a move
        return {"type": "crisp"}
    if not c.my_turn():
        return None
    if you["drawn_card"] is not None:
        kind = next(k for k in ("discard", "king", "jack", "queen", "swap") if k in can)
        if kind == "queen":
            return {"type": "queen", "slot": "left", "target": 1 - seat, "target_slot": "left"}  # type: ignore[operator]
        return {"type": "swap", "slot": "left"} if kind == "swap" else {"type": kind}
    if "draw_deck" in can and not state["clock"]["may_draw_in"]:
        return {"type": "draw"}
    return None


def _summary(seen: dict[str, Any]) -> tuple[Any, ...]:
    """The public state a seat saw (``essentials``), as the record's replay can tell it."""
    r = seen["round"]
    return (r["index"], r["turn"], r["draw_pile"], tuple(r["discard"]), tuple(seen["totals"]))


def went_on_from(before: dict[str, Any], after: dict[str, Any], document: dict[str, Any], most: int = 5) -> None:
    """A room came back further than its players had seen: both states must be in the record's history,
    ``after`` later than ``before`` by the few actions of one group commit, none of them lost."""
    history: list[tuple[Any, ...]] = []
    rounds = document["rounds"]
    for r, rnd in enumerate(rounds):
        for k in range(len(rnd["actions"]) + 1):
            part: dict[str, Any] = {"deck": rnd["deck"], "actions": rnd["actions"][:k]}
            resumes = [x for x in rnd.get("resumes", []) if x["after"] <= k]
            if resumes:
                part["resumes"] = resumes
            game, _ = replay_game(parse_record({**document, "rounds": [*rounds[:r], part]}))
            history.append(_summary(table_view(game)))
    start, end = _summary(before), _summary(after)
    assert start in history, (before, "what the seat saw is not in the record")
    assert end in history, (after, "what the room came back to is not in the record")
    assert 0 < history.index(end) - history.index(start) <= most, (before, after)
