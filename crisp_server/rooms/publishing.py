"""Publishing: what each member of a room is sent. Each recipient gets its own message built from the engine's
view of its seat (``crisp_server.engine.views``) and the events it may see; the part every recipient
shares is encoded once per message (the per-frame path: no indirection per view)."""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Sequence
from typing import Any, Final

import orjson

from crisp_server.engine import Event, event_to_dict, visible_to
from crisp_server.engine.views import choices, drawn_card, table_view
from crisp_server.store.operations import ReserveVersion

from . import taps
from .actor import RoomActor
from .driver import SeatDriver
from .phase import Phase
from .seats import Seat

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


class Publishing(RoomActor):
    """What each member is sent: every message published bumps the version ``v`` and carries the shared
    part (room, table, clocks; encoded once) and the member's own part (``you``) with the events it may see."""

    @abstractmethod
    def _auto_timeout_at(self) -> int | None:
        """Round time at which the current move is timed out for a player who is away (``TableFlow``)."""

    def room_state(self) -> dict[str, Any]:
        """The lobby part of every message: public."""
        fair: dict[str, Any] | None = None
        phase = self.phase
        if self.fair:
            last = self.fair[-1]
            fair = {"round": len(self.fair) - 1, "commitment": last.commitment}
            if phase is Phase.ROUND_OVER or phase is Phase.GAME_OVER:
                fair["salt"] = last.salt
                fair["deck"] = list(last.deck)
        options = self.options
        return {
            "code": self.code,
            "link": self.link,
            "phase": phase._value_,  # (``.value`` is a descriptor in Python: this is the plain attribute)
            "host": self.host,
            "seats": [
                {
                    "name": s.name,
                    "connected": s.conn is not None and not s.standing_in,
                    "left": s.left,
                    "ready": s.ready,
                    "bot": s.bot,
                    "stand_in": s.standing_in,
                }
                for s in self.seats
            ],
            "options": {
                "score_limit": options.score_limit,
                "turn_seconds": options.turn_seconds,
                "discard_draw": options.discard_draw,
                "stand_in": self.stand_in,
            },
            "spectators": list(self.members.values()).count(None),
            "fair": fair,
        }

    def _clocks(self) -> dict[str, int | None]:
        """What runs, as milliseconds left: phones' clocks are not trusted. Nothing runs while the game
        waits for its players."""
        peek_ends_in = next_round_in = deadline_in = may_draw_in = window_closes_in = auto_timeout_in = None
        phase = self.phase
        if not self.paused:
            now = self.clock.now()
            if phase is Phase.PEEK:
                if self.peek_ends is not None:
                    peek_ends_in = max(0, self.peek_ends - now)
            elif phase is Phase.ROUND_OVER:
                if self.next_round_at is not None:
                    next_round_in = max(0, self.next_round_at - now)
            elif phase is Phase.PLAY:
                game = self.game
                r = game.round if game is not None else None
                zero = self.round_zero
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

    #: What ``room_state`` showed when it was last encoded, and that encoding (see ``_room_part``).
    _room_key: tuple[Any, ...] | None = None
    _room_json: bytes = b""

    def _room_part(self) -> bytes:
        """``room_state`` encoded, encoded again only when something it shows changed: during a game it rarely
        does (a seat's connection or readiness, the phase), while the table changes with every update. The
        key holds every value ``room_state`` reads (the options and the round's fairness are frozen)."""
        fair = self.fair
        key = (
            self.phase,
            self.host,
            [(s.name, s.conn is not None, s.standing_in, s.left, s.ready, s.bot) for s in self.seats],
            self.options,
            self.stand_in,
            list(self.members.values()).count(None),
            len(fair),
            fair[-1] if fair else None,
            self.code,
            self.link,
        )
        if key != self._room_key:
            self._room_key = key
            self._room_json = orjson.dumps(self.room_state())
        return self._room_json

    def _shared(self) -> bytes:
        """The part of a message that is the same for every recipient, encoded once (as
        ``{"room": ..., "table": ..., "clock": ...}`` without its braces)."""
        table = table_view(self.game) if self.game is not None else None
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
        index = self.seats.index(seat)
        game = self.game
        card = None
        can = b"[]"
        hints = False
        if game is not None:
            hints = bool(self.practice and seat.bot is None)
            r = game.round
            if r is not None and not r.ended:
                card = drawn_card(game, index)
                if self.phase is Phase.PLAY:
                    can = orjson.dumps(choices(game, index))
        key = (index, index == self.host, hints)
        head, head_null, tail = _YOU_PARTS.get(key) or _you_parts(key)
        if card is None:
            return b"".join((head_null, can, tail))
        return b"".join((head, orjson.dumps(card), b',"can":', can, tail))

    def _message(self, conn: SeatDriver, kind: str, events: list[Any]) -> bytes:
        seat = self.members.get(conn)
        data = self._public_part(kind) + self._private_part(seat, orjson.dumps(events))
        if seat is not None and seat.memory is not None:
            seat.memory.observe(orjson.loads(data))
        return data

    def _public_part(self, kind: str) -> bytes:
        """The start of a message: its type and version, then what every recipient sees."""
        return b'{"type":"%s","v":%d,' % (kind.encode(), self.v) + self._shared()

    def _private_part(self, seat: Seat | None, events: bytes) -> bytes:
        """The end of a message: what only this member sees, then the events (already encoded)."""
        return b"".join((b',"you":', self._you(seat), b',"events":', events, b"}"))

    def _welcome(self, index: int | None, token: str | None) -> bytes:
        return orjson.dumps(
            {
                "type": "welcome",
                "v": self.v,
                "room": self.code,
                "seat": index,
                "token": token,
                "link": self.link,
                "idle_game_hours": self.settings.idle_game_hours,
            }
        )

    def _next_version(self) -> None:
        """Bump ``v``; past the versions reserved, reserve more in the commit that carries this message."""
        self.v += 1
        if self.v > self.v_reserved:
            self.v_reserved = self.v + VERSION_BLOCK
            self._save(ReserveVersion(self.room_id, self.v_reserved))

    def _publish(self, events: Sequence[Event], room_events: list[dict[str, Any]]) -> None:
        """Version the change and send each member its own message."""
        self._next_version()
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
        you, dumps, outbox = self._you, orjson.dumps, self._outbox
        for conn, seat in self.members.items():
            encoded = public
            if private:
                index = self.seats.index(seat) if seat is not None else None
                visible = [d for e, d in zip(events, dicts, strict=True) if visible_to(e, index)] + room_events
                encoded = dumps(visible)
            data = b"".join((start, b',"you":', you(seat), b',"events":', encoded, b"}"))
            if seat is not None and seat.memory is not None:  # a practice game: hints know what was shown
                seat.memory.observe(orjson.loads(data))
            outbox.append((conn, data))  # (``_send``)
        for tap in taps.PUBLISHED:
            tap(self)
