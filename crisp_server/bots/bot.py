"""A computer player: fed every update its seat receives, it answers with the message a client would send.

:class:`Bot` knows nothing but what it was given (:meth:`Bot.observe`). It says when it has something to
decide (:meth:`Bot.due`: a move of its own turn, or its crisp window) and, asked (:meth:`Bot.decide`),
returns an inbound message of ``docs/protocol.md`` or ``None`` (let the crisp window pass). It has no
clock: how long to wait before acting is :func:`crisp_server.bots.timing.pause_ms`, the caller's business.
The same object can be driven by a room, by the arena, or over a WebSocket.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Literal

from .easy import EasyLevel
from .hard import HardLevel
from .memory import Memory
from .moves import Decision, Level, Message
from .normal import NormalLevel
from .random_level import RandomLevel

if TYPE_CHECKING:
    from random import Random

#: The levels by name, weakest first.
LEVELS: Final[dict[str, type[Level]]] = {
    "random": RandomLevel,
    "easy": EasyLevel,
    "normal": NormalLevel,
    "hard": HardLevel,
}


@dataclass(frozen=True, slots=True)
class Due:
    """Something the bot has to decide: ``move`` (draw or play, from round instant ``at`` on), ``crisp``
    (its window is open until ``until``) or ``ready`` (the room waits in a peek or between rounds for its
    players to say so; ``at`` is 0 then)."""

    kind: Literal["move", "crisp", "ready"]
    at: int
    until: int | None


def due(m: Memory) -> Due | None:
    """What ``m``'s seat has to decide according to its last view, if anything."""
    if m.phase in ("peek", "round_over") and m.me is not None and not m.ready:
        return Due("ready", 0, None)
    r = m.round
    if r is None or r["ended"] or m.me is None or m.phase not in (None, "play"):
        return None  # no round, or a room still in its peek (moves there are refused as too early)
    window = r["window"]
    if window is not None and window["seat"] == m.me and r["caller"] is None:
        return Due("crisp", r["now"], window["closes_at"])
    if r["turn"] == m.me:
        at = r["now"] if r["drawn"] is not None else max(r["now"], r["may_draw_at"])
        return Due("move", at, r["deadline"])
    return None


def decision_key(m: Memory, now: Due) -> tuple[object, ...]:
    """What identifies the decision ``now`` across the views that do not change it (a reaction, another seat's
    connection, the draw block's end): a caller that keeps a pause while the key stays the same, and plans
    afresh when it changes, asks again only when the table moved."""
    r = m.round
    where = (m.phase, r["index"] if r is not None else None)
    if now.kind == "ready" or r is None:
        return (now.kind, where)
    return (now.kind, where, r["turn"], r["drawn"] is not None, r["extra_moves"], now.until)


class Bot:
    """One seat's computer player of a given level."""

    def __init__(self, level: str, rng: Random) -> None:
        if level not in LEVELS:
            raise ValueError(f"unknown level {level!r} (one of {', '.join(LEVELS)})")
        self.level: Level = LEVELS[level]()
        self.rng = rng
        self.memory = Memory()

    def observe(self, update: Mapping[str, Any]) -> None:
        """Take in an ``update`` or ``snapshot`` the seat was sent."""
        self.memory.observe(update)

    def due(self) -> Due | None:
        return due(self.memory)

    def decide(self) -> Message | None:
        """The message to send now, or ``None`` when there is nothing to do (or the crisp window may pass)."""
        decision = decide(self.level, self.memory, self.rng)
        return decision.message if decision is not None else None


def decide(level: Level, m: Memory, rng: Random) -> Decision | None:
    """``level``'s decision for the seat whose knowledge is ``m``, at the moment its view shows."""
    now = due(m)
    if now is None:
        return None
    if now.kind == "ready":
        return Decision({"type": "ready"})
    if now.kind == "crisp":
        if "crisp" not in m.can:
            return None
        return level.crisp(m, rng)
    r = m.round
    assert r is not None
    if r["drawn"] is None:
        return level.draw(m, rng)
    return level.play(m, rng)
