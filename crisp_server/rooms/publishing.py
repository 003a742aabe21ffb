"""The publisher, a part of a room: what each member is sent. Each recipient gets its own message built from the
engine's view of its seat (``crisp_server.engine.views``) and the events it may see; the part every recipient
shares is encoded once per message (the per-frame path: no indirection per view).

It reads the room's ``RoomState`` and queues each frame in its outbox (``Room`` sends them once what they
follow is committed); what it needs of the table (when an away player's move times out) comes as a callable."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Final

import orjson

from crisp_server.engine import Event, event_to_dict, visible_to
from crisp_server.engine.views import choices, drawn_card, table_view
from crisp_server.store.operations import ReserveVersion

from . import taps
from .driver import SeatDriver
from .phase import Phase
from .seats import Seat
from .state import RoomState

#: Room versions are reserved in the database this many at a time (one small write per block of messages):
#: a room rebuilt after a restart goes on above every version it may have published.
VERSION_BLOCK: Final = 1000

#: A spectator's ``you``, encoded.
_SPECTATOR_YOU: Final = orjson.dumps(
    {"seat": None, "drawn_card": None, "can": [], "spectator": True, "host": False, "hints": False}
)
#: A seat's ``you`` around its drawn card and choices, by (seat, host, hints): the start up to the drawn
#: card, the start with no drawn card up to the choices, and the end after the choices (as
#: ``orjson.dumps`` encodes the whole, keys in the same order).
_YOU_PARTS: dict[tuple[int, bool, bool], tuple[bytes, bytes, bytes]] = {}


def _you_parts(key: tuple[int, bool, bool]) -> tuple[bytes, bytes, bytes]:
    index, host, hints = key
    head = b'{"seat":%d,"drawn_card":' % index
    tail = b',"spectator":false,"host":%s,"hints":%s}' % (orjson.dumps(host), orjson.dumps(hints))
    parts = _YOU_PARTS[key] = (head, head + b'null,"can":', tail)
    return parts


class Publisher:
    """What each member is sent: every message published bumps the version ``v`` and carries the shared
    part (room, table, clocks; encoded once) and the member's own part (``you``) with the events it may see.

    ``auto_timeout_at``: the round time at which the current move is timed out for a player who is away, if
    any (``Table.auto_timeout_at``); ``subject``: what the taps (``taps.PUBLISHED``) are called with (the room);
    ``lesson``: a lesson room's ``you.lesson`` for its learner (``Lesson.view``).
    """

    def __init__(
        self,
        state: RoomState,
        auto_timeout_at: Callable[[], int | None],
        subject: object,
        lesson: Callable[[], dict[str, Any] | None] = lambda: None,  # (no lesson: a part tested alone)
    ) -> None:
        self.state = state
        self._auto_timeout_at = auto_timeout_at
        self._lesson = lesson
        self._subject = subject
        #: What ``room_state`` showed when it was last encoded, and that encoding (see ``_room_part``).
        self._room_key: tuple[Any, ...] | None = None
        self._room_json = b""

    def room_state(self) -> dict[str, Any]:
        """The lobby part of every message: public."""
        st = self.state
        fair: dict[str, Any] | None = None
        phase = st.phase
        if st.fair:
            last = st.fair[-1]
            fair = {"round": len(st.fair) - 1, "commitment": last.commitment}
            if phase is Phase.ROUND_OVER or phase is Phase.GAME_OVER:
                fair["salt"] = last.salt
                fair["deck"] = list(last.deck)
        options = st.options
        return {
            "code": st.code,
            "link": st.link,
            "phase": phase._value_,  # (``.value`` is a descriptor in Python: this is the plain attribute)
            "host": st.host,
            "seats": [
                {
                    "name": s.name,
                    "connected": s.conn is not None and not s.standing_in,
                    "left": s.left,
                    "ready": s.ready,
                    "bot": s.bot,
                    "stand_in": s.standing_in,
                }
                for s in st.seats
            ],
            "options": {
                "score_limit": options.score_limit,
                "turn_seconds": options.turn_seconds,
                "discard_draw": options.discard_draw,
                "stand_in": st.stand_in,
                "big_screen": st.big_screen,
            },
            "spectators": list(st.members.values()).count(None),
            "fair": fair,
        }

    def _clocks(self) -> dict[str, int | None]:
        """What runs, as milliseconds left: phones' clocks are not trusted. Nothing runs while the game
        waits for its players."""
        peek_ends_in = next_round_in = deadline_in = may_draw_in = window_closes_in = auto_timeout_in = None
        st = self.state
        phase = st.phase
        if not st.paused and st.lesson_step is None:  # (a lesson's clock stands still while it waits)
            now = st.clock.now()
            if phase is Phase.PEEK:
                if st.peek_ends is not None:
                    peek_ends_in = max(0, st.peek_ends - now)
            elif phase is Phase.ROUND_OVER:
                if st.next_round_at is not None:
                    next_round_in = max(0, st.next_round_at - now)
            elif phase is Phase.PLAY:
                game = st.game
                r = game.round if game is not None else None
                zero = st.round_zero
                if game is not None and r is not None and zero is not None:
                    deadline = game.deadline()
                    if deadline is not None:
                        deadline_in = max(0, zero + deadline - now)
                    may_draw_in = max(0, zero + r.move_start - now)
                    if r.window_seat is not None:
                        window_closes_in = max(0, zero + r.window_closes - now)
                    auto = self._auto_timeout_at()
                    if auto is not None:
                        auto_timeout_in = max(0, zero + auto - now)
        return {
            "peek_ends_in": peek_ends_in,
            "next_round_in": next_round_in,
            "deadline_in": deadline_in,
            "may_draw_in": may_draw_in,
            "window_closes_in": window_closes_in,
            "auto_timeout_in": auto_timeout_in,
        }

    def _room_part(self) -> bytes:
        """``room_state`` encoded, encoded again only when something it shows changed: during a game it rarely
        does (a seat's connection or readiness, the phase), while the table changes with every update. The
        key holds every value ``room_state`` reads (the options and the round's fairness are frozen)."""
        st = self.state
        fair = st.fair
        key = (
            st.phase,
            st.host,
            [(s.name, s.conn is not None, s.standing_in, s.left, s.ready, s.bot) for s in st.seats],
            st.options,
            st.stand_in,
            st.big_screen,
            list(st.members.values()).count(None),
            len(fair),
            fair[-1] if fair else None,
            st.code,
            st.link,
        )
        if key != self._room_key:
            self._room_key = key
            self._room_json = orjson.dumps(self.room_state())
        return self._room_json

    def _shared(self) -> bytes:
        """The part of a message that is the same for every recipient, encoded once (as
        ``{"room": ..., "table": ..., "clock": ...}`` without its braces)."""
        game = self.state.game
        table = table_view(game) if game is not None else None
        return b"".join(
            (
                b'"room":',
                self._room_part(),
                b',"table":',
                orjson.dumps(table),
                b',"clock":',
                orjson.dumps(self._clocks()),
            )
        )

    def _you(self, seat: Seat | None) -> bytes:
        """This member's ``you``, encoded: ``{"seat", "drawn_card", "can", "spectator", "host", "hints"}``
        (the engine's ``private_view`` and the room's flags) from a template per seat, only the drawn card
        and the choices encoded each time."""
        if seat is None:
            return _SPECTATOR_YOU
        st = self.state
        index = st.seats.index(seat)
        game = st.game
        card = None
        can = b"[]"
        hints = False
        if game is not None:
            hints = bool(st.practice and seat.bot is None and st.lesson_step is None)
            r = game.round
            if r is not None and not r.ended:
                card = drawn_card(game, index)
                if st.phase is Phase.PLAY:
                    can = orjson.dumps(choices(game, index))
        key = (index, index == st.host, hints)
        head, head_null, tail = _YOU_PARTS.get(key) or _you_parts(key)
        if st.lesson_step is not None and seat.bot is None:
            tail = b"".join((tail[:-1], b',"lesson":', orjson.dumps(self._lesson()), b"}"))
        if card is None:
            return b"".join((head_null, can, tail))
        return b"".join((head, orjson.dumps(card), b',"can":', can, tail))

    def message(self, conn: SeatDriver, kind: str, events: list[Any]) -> bytes:
        """``conn``'s message of ``kind`` (a ``snapshot``) at the current version, with ``events``."""
        seat = self.state.members.get(conn)
        data = self._public_part(kind) + self._private_part(seat, orjson.dumps(events))
        if seat is not None and seat.memory is not None:
            seat.memory.observe(orjson.loads(data))
        return data

    def _public_part(self, kind: str) -> bytes:
        """The start of a message: its type and version, then what every recipient sees."""
        return b'{"type":"%s","v":%d,' % (kind.encode(), self.state.v) + self._shared()

    def _private_part(self, seat: Seat | None, events: bytes) -> bytes:
        """The end of a message: what only this member sees, then the events (already encoded)."""
        return b"".join((b',"you":', self._you(seat), b',"events":', events, b"}"))

    def welcome(self, index: int | None, token: str | None) -> bytes:
        """The ``welcome`` frame of a seat (``index``) or a spectator (``None``)."""
        st = self.state
        return orjson.dumps(
            {
                "type": "welcome",
                "v": st.v,
                "room": st.code,
                "seat": index,
                "token": token,
                "link": st.link,
                "idle_game_hours": st.settings.idle_game_hours,
            }
        )

    def greet(self, conn: SeatDriver, index: int | None, token: str | None, again: bool) -> None:
        """Send ``welcome``; ``again``: if what it follows is not saved, it is sent again with ``unavailable``
        (the player's seat is the database's), else ``unavailable`` alone (``Actor._suspend``)."""
        data = self.welcome(index, token)
        self.state.greeting[conn] = (data, again)
        self.state.send(conn, data)

    def next_version(self) -> None:
        """Bump ``v``; past the versions reserved, reserve more in the commit that carries this message."""
        st = self.state
        st.v += 1
        if st.v > st.v_reserved:
            st.v_reserved = st.v + VERSION_BLOCK
            st.save(ReserveVersion(st.room_id, st.v_reserved))

    def publish(self, events: Sequence[Event], room_events: list[dict[str, Any]]) -> None:
        """Version the change and send each member its own message."""
        self.next_version()
        st = self.state
        # Encoded once: the head and the public part; the events too unless some are addressed to a seat.
        start = self._public_part("update")
        dicts = [event_to_dict(e) for e in events]
        private = False
        for e in events:
            if e.to is not None:
                private = True
                break
        public = b""
        if not private:
            public = orjson.dumps(dicts + room_events)
        you, dumps, outbox = self._you, orjson.dumps, st.outbox
        for conn, seat in st.members.items():
            encoded = public
            if private:
                index = st.seats.index(seat) if seat is not None else None
                visible = [d for e, d in zip(events, dicts, strict=True) if visible_to(e, index)] + room_events
                encoded = dumps(visible)
            data = b"".join((start, b',"you":', you(seat), b',"events":', encoded, b"}"))
            if seat is not None and seat.memory is not None:  # a practice game: hints know what was shown
                seat.memory.observe(orjson.loads(data))
            outbox.append((conn, data))  # (``RoomState.send``)
        for tap in taps.PUBLISHED:
            tap(self._subject)
