"""Publishing: what each member of a room is sent. Each recipient gets its own message built from the engine's
view of its seat (``crisp_server.engine.views``) and the events it may see; the part every recipient
shares is encoded once per message (the per-frame path: no indirection per view)."""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Sequence
from typing import Any, Final

import orjson

from crisp_server.engine import Event, event_to_dict, visible_to
from crisp_server.engine.views import private_view, table_view
from crisp_server.store.operations import ReserveVersion

from .actor import RoomActor
from .driver import SeatDriver
from .phase import Phase
from .seats import Seat

#: Room versions are reserved in the database this many at a time (one small write per block of messages):
#: a room rebuilt after a restart goes on above every version it may have published.
VERSION_BLOCK: Final = 1000


class Publishing(RoomActor):
    """What each member is sent: every message published bumps the version ``v`` and carries the shared
    part (room, table, clocks; encoded once) and the member's own part (``you``) with the events it may see."""

    @abstractmethod
    def _auto_timeout_at(self) -> int | None:
        """Round time at which the current move is timed out for a player who is away (``TableFlow``)."""

    def room_state(self) -> dict[str, Any]:
        """The lobby part of every message: public."""
        fair: dict[str, Any] | None = None
        if self.fair:
            last = self.fair[-1]
            fair = {"round": len(self.fair) - 1, "commitment": last.commitment}
            if self.phase in (Phase.ROUND_OVER, Phase.GAME_OVER):
                fair["salt"] = last.salt
                fair["deck"] = list(last.deck)
        return {
            "code": self.code,
            "link": self.link,
            "phase": self.phase.value,
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
            "options": self.room_options(),
            "spectators": sum(1 for s in self.members.values() if s is None),
            "fair": fair,
        }

    def room_options(self) -> dict[str, Any]:
        """The host's options: the game's, and when a computer player stands in for a person who is away."""
        return {**self.options.as_dict(), "stand_in": self.stand_in}

    def _clocks(self) -> dict[str, int | None]:
        """What runs, as milliseconds left: phones' clocks are not trusted. Nothing runs while the game
        waits for its players."""
        now = self.clock.now()

        def left(at: int | None) -> int | None:
            return None if at is None or self.paused else max(0, at - now)

        out: dict[str, int | None] = {
            "peek_ends_in": left(self.peek_ends) if self.phase is Phase.PEEK else None,
            "next_round_in": left(self.next_round_at) if self.phase is Phase.ROUND_OVER else None,
            "deadline_in": None,
            "may_draw_in": None,
            "window_closes_in": None,
            "auto_timeout_in": None,
        }
        game = self.game
        r = game.round if game is not None else None
        if self.phase is Phase.PLAY and game is not None and r is not None and self.round_zero is not None:
            zero = self.round_zero
            deadline = game.deadline()
            out["deadline_in"] = left(zero + deadline) if deadline is not None else None
            out["may_draw_in"] = left(zero + r.move_start)
            out["window_closes_in"] = left(zero + r.window_closes) if r.window_seat is not None else None
            auto = self._auto_timeout_at()
            out["auto_timeout_in"] = left(zero + auto) if auto is not None else None
        return out

    def _shared(self) -> bytes:
        """The part of a message that is the same for every recipient, encoded once."""
        table = table_view(self.game) if self.game is not None else None
        return orjson.dumps({"room": self.room_state(), "table": table, "clock": self._clocks()})[1:-1]

    def _you(self, seat: Seat | None) -> dict[str, Any]:
        if seat is None or self.game is None:
            index = self.seats.index(seat) if seat is not None else None
            you: dict[str, Any] = {"seat": index, "drawn_card": None, "can": []}
        else:
            index = self.seats.index(seat)
            you = private_view(self.game, index)
            if self.phase is not Phase.PLAY:
                you["can"] = []
        you["spectator"] = seat is None
        you["host"] = seat is not None and index == self.host
        you["hints"] = self.practice and seat is not None and seat.bot is None and self.game is not None
        return you

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
        return b',"you":' + orjson.dumps(self._you(seat)) + b',"events":' + events + b"}"

    def _welcome(self, index: int | None, token: str | None) -> bytes:
        return orjson.dumps(
            {"type": "welcome", "v": self.v, "room": self.code, "seat": index, "token": token, "link": self.link}
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
        private = any(e.to is not None for e in events)
        public = b""
        if not private:
            public = orjson.dumps(dicts + room_events)
        for conn, seat in self.members.items():
            encoded = public
            if private:
                index = self.seats.index(seat) if seat is not None else None
                visible = [d for e, d in zip(events, dicts, strict=True) if visible_to(e, index)] + room_events
                encoded = orjson.dumps(visible)
            data = start + self._private_part(seat, encoded)
            if seat is not None and seat.memory is not None:  # a practice game: hints know what was shown
                seat.memory.observe(orjson.loads(data))
            self._send(conn, data)
