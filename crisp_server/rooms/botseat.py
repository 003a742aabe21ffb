"""A computer player at a room's seat: a ``SeatDriver`` whose updates go to a :class:`~crisp_server.bots.Bot`.

It gets exactly what a person at that seat would get (the same encoded messages, decoded here), and acts
the way a client does: it posts the inbound message its bot decided, parsed and validated like any
client's frame, after a human-like pause (``crisp_server.bots.pause_ms`` times ``CRISP_BOT_PAUSE``, 0 in
tests) on the room's own clock. The decision code in ``crisp_server.bots`` never sees the room.
"""

from __future__ import annotations

import logging
import random
from typing import Final

import orjson

from crisp_server.bots import Bot, pause_ms
from crisp_server.wire import protocol as p

from .clock import Clock, TimerHandle
from .driver import RoomHandle
from .messages import Inbound

log = logging.getLogger("crisp.room")

#: Names the room gives its computer players (the first one free in the room, case folded).
BOT_NAMES: Final = ("Ada", "Alan", "Grace", "Konrad", "Edsger", "Barbara", "Claude", "Katherine")
#: The level of a computer player standing in for a person.
STAND_IN_LEVEL: Final = "normal"
#: Refused messages in a row after which a bot waits for the table to change before it tries again (a
#: refusal is a race with a timer, which the next update settles; more would be a bug, never a loop).
MAX_REFUSALS: Final = 3


class BotDriver:
    """Drives one seat for a computer player (``level``), or stands in for its person (``stand_in``)."""

    lang = "en"

    def __init__(self, level: str, clock: Clock, pause: float, *, stand_in: bool = False, seed: int | None = None):
        self.level = level
        self.stand_in = stand_in
        self.room: RoomHandle | None = None
        self.origin: str | None = None  # no page: a computer player's seat never makes the room's link
        self.bot = Bot(level, random.Random(seed))
        self._clock = clock
        self._pause = pause
        self._rng = random.Random(None if seed is None else seed + 1)
        self._timer: TimerHandle | None = None
        self._fires_at = 0  # room clock: when the running pause ends
        self._pause_ms = 0  # the running pause's own length, after the instant the rules allow the move
        self._acted_v = 0  # the room's version when it last acted: older views do not ask again
        self._refused = 0

    # -- SeatDriver ------------------------------------------------------------------------------------

    def send(self, data: bytes) -> None:
        message = orjson.loads(data)
        kind = message.get("type")
        if kind in ("update", "snapshot"):
            self.bot.observe(message)
            if message["v"] >= self._acted_v:
                self._refused = 0
                self._plan()
        elif kind == "error":
            # A move refused: the table moved on meanwhile (a time-out, a closed window). Decide again from
            # the next view; a few refusals in a row and it waits for the next change.
            self._refused += 1
            log.debug("bot at %s: %s refused", self.room.code if self.room else "-", message.get("code"))
            self._acted_v = 0
            if self._refused < MAX_REFUSALS:
                self._plan()

    def close(self, code: int, reason: str = "") -> None:
        self._cancel()

    # -- acting ----------------------------------------------------------------------------------------

    def _plan(self) -> None:
        """Start the pause before its next decision, if one is due and none is running."""
        due = self.bot.due()
        if due is None:
            self._cancel()
            return
        r = self.bot.memory.round
        allowed = self._clock.now() + (max(0, due.at - r["now"]) if due.kind != "ready" and r is not None else 0)
        if self._timer is not None:
            # A pause is already running: the decision is made from the view it acts on. But the rules may
            # allow it sooner than when it was planned (a Crisp call ends the draw block at once): the same
            # pause then counts from the new instant, as for a person who sees the block lifted.
            if allowed + self._pause_ms < self._fires_at:
                self._timer.cancel()
                self._schedule(allowed + self._pause_ms)
            return
        self._pause_ms = round(pause_ms(due, self._rng, self.bot.memory.phase) * self._pause)
        self._schedule(allowed + self._pause_ms)

    def _schedule(self, at: int) -> None:
        self._fires_at = at
        self._timer = self._clock.call_at(at, self._act)

    def _act(self) -> None:
        self._timer = None
        room = self.room
        if room is None:
            return
        decided = self.bot.decide()
        if decided is None:
            return
        message = p.parse_inbound(orjson.dumps(decided))  # validated like any client's frame
        self._acted_v = room.v + 1
        room.post(Inbound(self, message))

    def _cancel(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None


class LessonDriver:
    """A computer player's seat in a lesson room: its moves are the lesson's (``lesson.py``), so what it is
    sent needs no answer."""

    lang = "en"

    def __init__(self) -> None:
        self.room: RoomHandle | None = None
        self.origin: str | None = None

    def send(self, data: bytes) -> None:
        pass

    def close(self, code: int, reason: str = "") -> None:
        pass
