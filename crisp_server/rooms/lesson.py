"""The lesson, a part of a room: "Learn to play", one round against two computer players on the lesson's deal,
step by step (``lesson_script.py``).

The rules engine plays the lesson as any game: the learner's moves and the computer players' scripted moves go
through the table (``Table.action``) and the engine accepts or refuses them. What the lesson adds: the learner's
step, moved on by the step's move (any other move, legal or not, is refused with ``lesson_other_move`` before the
engine sees it, and changes nothing) or by ``lesson_next``; ``lesson_back`` to read an earlier step again; the
computer players' moves, played at a pace a person can follow; and the engine's clock, which only the lesson
moves (``Table.round_now``): it stands still while the lesson waits for its learner, so that no prompt is read
against a crisp window or a draw block running out. It moves on to the instant a move may start (the 2 seconds
of a crisp window's draw block) before a computer player's move and before the learner's turn.

It reads and changes the room's ``RoomState`` (``lesson_*``; saved with the room's options, so that a lesson
rebuilt after a restart goes on at its step); ``act`` is the table's ``action``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final, Protocol

import orjson

from crisp_server.engine import Event
from crisp_server.store.operations import SetClock
from crisp_server.wire import protocol as p

from .driver import SeatDriver
from .lesson_script import LEARNER, STEPS, Step
from .messages import RoomError
from .phase import Phase
from .seats import Seat
from .state import RoomState

#: A computer player's move in a lesson comes this long after the one before (times ``CRISP_BOT_PAUSE``).
PACE_MS: Final = 1400

#: The table's ``action``: a seat's move message, played through the engine.
Act = Callable[[SeatDriver, Seat, Any], None]


class Flow(Protocol):
    """What the lesson asks of the table (``Table``)."""

    def advance(self) -> list[Event]: ...

    def after_play(self, events: list[Event], room_events: list[dict[str, Any]]) -> None: ...


def message_of(msg: Any) -> dict[str, Any]:
    """An inbound model as the client sends it (``draw``'s ``from`` under that name)."""
    data: dict[str, Any] = msg.model_dump(by_alias=True, exclude={"lang"})
    return data


class Lesson:
    """The learner's step, the computer players' scripted moves and the lesson's clock."""

    def __init__(
        self, state: RoomState, flow: Flow, publish: Callable[[list[Event], list[dict[str, Any]]], None], act: Act
    ) -> None:
        self.state = state
        self._flow = flow
        self._publish = publish
        self._act = act

    # -- reading -------------------------------------------------------------------------------------------

    @property
    def active(self) -> bool:
        return self.state.lesson_step is not None

    def step(self) -> Step:
        st = self.state
        assert st.lesson_step is not None
        return STEPS[st.lesson_step]

    def view(self) -> dict[str, Any] | None:
        """``you.lesson`` for the learner: the step shown and what it waits for (``docs/protocol.md``)."""
        st = self.state
        if st.lesson_step is None:
            return None
        shown = STEPS[st.lesson_shown]
        current = st.lesson_shown == st.lesson_step
        wait = shown.wait if current else "next"
        return {
            "step": shown.id,
            "index": st.lesson_shown,
            "current": st.lesson_step,
            "count": len(STEPS),
            "wait": wait,
            "move": shown.move if current and wait == "move" else None,
            "back": self._earlier(st.lesson_shown) is not None,
        }

    def _earlier(self, index: int) -> int | None:
        """The step that is read before ``index``, if any."""
        return next((i for i in range(index - 1, -1, -1) if STEPS[i].wait == "next"), None)

    # -- the learner ---------------------------------------------------------------------------------------

    def check(self, msg: Any) -> None:
        """Refuse a move of the learner that is not the step's (``ready`` and the moves): nothing changes."""
        st = self.state
        step = self.step()
        if st.lesson_shown != st.lesson_step or step.wait != "move" or message_of(msg) != step.move:
            raise RoomError(p.ProtocolCode.LESSON_OTHER_MOVE)

    def moved(self) -> None:
        """The step's move was accepted: on to the next step."""
        self._go(self._current() + 1)

    def next(self) -> None:
        """``lesson_next``: on from a step that is read (or through the steps read again)."""
        st = self.state
        current = self._current()
        if st.lesson_shown < current:
            later = next((i for i in range(st.lesson_shown + 1, current) if STEPS[i].wait == "next"), current)
            self._show(later)
            return
        step = STEPS[current]
        if step.wait == "move":
            raise RoomError(p.ProtocolCode.LESSON_OTHER_MOVE)
        if current + 1 >= len(STEPS):
            raise RoomError(p.ProtocolCode.LESSON_NO_STEP)  # the last step: the client offers a game from there
        while step.wait == "computers" and st.lesson_done < len(step.computers):
            self._play_one()  # the learner does not want to wait: the computer players' moves at once
        self._go(current + 1)

    def back(self) -> None:
        """``lesson_back``: show the step read before the one shown; the game stays where it is."""
        earlier = self._earlier(self.state.lesson_shown)
        if earlier is None:
            raise RoomError(p.ProtocolCode.LESSON_NO_STEP)
        self._show(earlier)

    # -- the computer players and the clock ----------------------------------------------------------------

    def wake_at(self, when: int | None) -> int | None:
        """``when``, or earlier if a computer player's move is due before."""
        st = self.state
        if st.lesson_step is None or st.paused or st.suspended or STEPS[st.lesson_step].wait != "computers":
            return when
        due = st.lesson_due if st.lesson_due is not None else st.clock.now()
        return due if when is None else min(when, due)

    def tick(self) -> None:
        """The computer players' next move, if due; after the last one, the next step."""
        st = self.state
        at = self.wake_at(None)
        if at is None or at > st.clock.now():
            return
        step = self.step()
        if st.lesson_done < len(step.computers):
            self._play_one()
            st.lesson_due = st.clock.now() + self._pace()
            st.save_room()
        else:
            self._go(self._current() + 1)

    def _play_one(self) -> None:
        st = self.state
        step = self.step()
        seat_index, message = step.computers[st.lesson_done]
        seat = st.seats[seat_index]
        assert seat.conn is not None
        r = st.game.round if st.game is not None else None
        if r is not None and r.drawn is None:
            st.lesson_now = max(st.lesson_now, r.move_start)  # when its move may start (``Table.action`` advances)
        st.lesson_done += 1
        self._act(seat.conn, seat, p.parse_inbound(orjson.dumps(message)))  # validated like any client's

    def _catch_up(self) -> list[Event]:
        """Move the lesson's clock, and the engine's, to the instant the move under way may start (a crisp
        window's draw block); the record keeps the instant, so that a replay does the same. The events."""
        st = self.state
        game = st.game
        r = game.round if game is not None else None
        if st.phase is not Phase.PLAY or r is None or r.ended or r.drawn is not None or st.lesson_now >= r.move_start:
            return []
        st.lesson_now = r.move_start
        events = self._flow.advance()
        assert st.game_id is not None
        st.save(SetClock(st.game_id, r.index, r.now))
        return events

    def _pace(self) -> int:
        return int(PACE_MS * self.state.settings.bot_pause)

    # -- steps ---------------------------------------------------------------------------------------------

    def _current(self) -> int:
        st = self.state
        assert st.lesson_step is not None
        return st.lesson_step

    def _go(self, index: int) -> None:
        """Make ``index`` the current step, and show it."""
        st = self.state
        st.lesson_step = index
        st.lesson_done = 0
        st.lesson_due = None
        step = STEPS[index]
        events: list[Event] = []
        if step.wait == "computers":
            st.lesson_due = st.clock.now() + self._pace()
        elif step.move is not None and step.move["type"] != "crisp":
            events = self._catch_up()  # the learner may move at once (a crisp call needs the window left open)
        self._show(index, events)

    def _show(self, index: int, events: list[Event] | None = None) -> None:
        st = self.state
        st.lesson_shown = index
        st.save_room()
        if events:
            self._flow.after_play(events, [{"type": "lesson_step", "index": index}])
        else:
            self._publish([], [{"type": "lesson_step", "index": index}])

    def learner(self, seat: Seat) -> bool:
        """Whether ``seat`` is the lesson's learner."""
        return self.state.seats.index(seat) == LEARNER
