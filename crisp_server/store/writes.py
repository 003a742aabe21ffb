"""What a group of operations writes: the prebuilt statements, in a fixed order, one per kind, through a
``Sink`` (a SQLAlchemy connection here; the direct ``sqlite3`` path is ``sqlite_fast.py``).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any, Protocol, cast

from sqlalchemy import JSON, Connection, Table, bindparam, delete, func, insert, literal_column, update
from sqlalchemy import cast as sql_cast
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.dialects.postgresql import insert as postgresql_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.engine import Dialect
from sqlalchemy.sql.expression import Executable

from crisp_server.engine.actions import ACTION_NAMES, action_fields

from .models import ActionRow, GameRow, ResultRow, RoomRow, RoundRow, SeatRow
from .operations import (
    AddResume,
    AppendAction,
    CloseRoom,
    FinishGame,
    Op,
    ReserveVersion,
    SaveRoom,
    SetClock,
    StartGame,
    StartRound,
    Written,
    utc_now,
)

_ACTIONS = cast(Table, ActionRow.__table__)
_ROUNDS = cast(Table, RoundRow.__table__)
_ROOMS = cast(Table, RoomRow.__table__)
_SEATS = cast(Table, SeatRow.__table__)
_GAMES = cast(Table, GameRow.__table__)
_RESULTS = cast(Table, ResultRow.__table__)


class _Run:
    """Operations that can be written together, gathered until an operation that cannot comes along:
    the last state of each room, its seats where they changed, its version reserve, new games and rounds,
    the actions, each round's last clock, the rounds' resumes, finished games. They are written in that order,
    one statement for each kind: what a row refers to is written before it, and updates come after the inserts
    they may touch."""

    def __init__(self) -> None:
        self.clear()

    def clear(self) -> None:
        self.rooms: dict[str, SaveRoom] = {}
        self.versions: dict[str, int] = {}
        self.games: list[StartGame] = []
        self.rounds: list[StartRound] = []
        self.actions: list[AppendAction] = []
        self.clocks: dict[tuple[str, int], tuple[int, bool]] = {}
        self.resumes: list[AddResume] = []
        self.finished: list[FinishGame] = []

    def take(self, op: Op) -> bool:
        """Gather ``op`` if it can be written with the others (``CloseRoom`` cannot)."""
        if isinstance(op, SaveRoom):
            self.rooms[op.room_id] = op
        elif isinstance(op, ReserveVersion):
            self.versions[op.room_id] = max(op.v, self.versions.get(op.room_id, 0))
        elif isinstance(op, StartGame):
            self.games.append(op)
        elif isinstance(op, StartRound):
            self.rounds.append(op)
        elif isinstance(op, FinishGame):
            self.finished.append(op)
        elif isinstance(op, AppendAction):
            self.actions.append(op)  # the round's clock is read as its last action's time (record_document)
        elif isinstance(op, SetClock):
            key = (op.game_id, op.round_index)
            self.clocks[key] = (op.end_at, op.ended or self.clocks.get(key, (0, False))[1])
        elif isinstance(op, AddResume):
            self.resumes.append(op)
        else:
            return False
        return True

    def write(self, sink: Sink, written: Written) -> None:
        if self.rooms:
            _upsert_rooms(sink, list(self.rooms.values()), written)
        if self.versions:
            sink.tuples(_ROOM_VERSION, _VERSION_KEYS, list(self.versions.items()))
        if self.games:
            rows = [g.row() for g in self.games]
            for known in (True, False):  # one statement per set of columns (a game's host may be unknown)
                same = [row for row in rows if ("host" in row) is known]
                if same:
                    sink.many(_GAME_INSERT, same)
        if self.rounds:
            sink.many(_ROUND_INSERT, [r.row() for r in self.rounds])
        if self.actions:
            sink.tuples(_ACTION_INSERT, _ACTION_KEYS, [_action_values(a) for a in self.actions])
        if self.clocks:
            sink.tuples(_CLOCK_UPDATE, _CLOCK_KEYS, [(g, i, at, x) for (g, i), (at, x) in self.clocks.items()])
        if self.resumes:  # after the clocks: a round's clock only moves forward, and a resume keeps the later
            resumes = [(r.game_id, r.round_index, {"after": r.after, "at": r.at}, r.at) for r in self.resumes]
            sink.tuples(_resume_append(sink.dialect.name), _RESUME_KEYS, resumes)
        if self.finished:
            now = utc_now()
            sink.many(_GAME_FINISH, [{"g": f.game_id, "t": now, "a": f.abandoned} for f in self.finished])
            sink.many(
                _RESULT_INSERT,
                [
                    {"game_id": f.game_id, "totals": list(f.totals), "winners": list(f.winners), "finished_at": now}
                    for f in self.finished
                ],
            )
        self.clear()


@functools.cache
def _resume_append(dialect: str) -> Any:
    """Append the resume ``r`` to its round's list and move the round's clock to at least ``e``, in the
    database: one statement for all of a group's resumes, with no read before it (a round trip per room on
    PostgreSQL when thousands of rooms come back after a restart)."""
    entry = bindparam("r", type_=JSON)
    # Written into the SQL, not bound: the rows bind only g, i, r and e.
    zero: Any = literal_column("0")
    last: Any = literal_column("'$[#]'")
    if dialect == "postgresql":
        resumes: Any = sql_cast(sql_cast(_ROUNDS.c.resumes, JSONB).op("||")(sql_cast(entry, JSONB)), JSON)
        end_at: Any = func.greatest(func.coalesce(_ROUNDS.c.end_at, zero), bindparam("e"))
    else:
        resumes = func.json_insert(_ROUNDS.c.resumes, last, func.json(entry))
        end_at = func.max(func.coalesce(_ROUNDS.c.end_at, zero), bindparam("e"))
    return update(_ROUNDS).where(*_ROUND_KEY).values(resumes=resumes, end_at=end_at)


@functools.cache
def _room_upsert(dialect: str) -> Any:
    """Insert a room, or update its link, phase, host and options: built once per dialect (building it costs
    more than running it)."""
    ins = postgresql_insert if dialect == "postgresql" else sqlite_insert
    stmt = ins(_ROOMS)
    return stmt.on_conflict_do_update(
        index_elements=["id"],
        set_={
            "link": stmt.excluded.link,
            "phase": stmt.excluded.phase,
            "host": stmt.excluded.host,
            "options": stmt.excluded.options,
            "updated_at": stmt.excluded.updated_at,
        },
    )


_SEAT_INSERT = insert(_SEATS)
_ACTION_INSERT = insert(_ACTIONS)
_GAME_INSERT = insert(_GAMES)
_ROUND_INSERT = insert(_ROUNDS)
_RESULT_INSERT = insert(_RESULTS)
_ROOM_UPDATE = (
    update(_ROOMS)
    .where(_ROOMS.c.id == bindparam("i"))
    .values(phase=bindparam("p"), host=bindparam("h"), updated_at=bindparam("t"))
)
_ROOM_VERSION = update(_ROOMS).where(_ROOMS.c.id == bindparam("i")).values(v=bindparam("n"))
_ROOM_CLOSE = update(_ROOMS).where(_ROOMS.c.id == bindparam("i")).values(closed_at=bindparam("t"))
_SEATS_DELETE = delete(_SEATS).where(_SEATS.c.room_id == bindparam("r"))
_GAME_FINISH = (
    update(_GAMES).where(_GAMES.c.id == bindparam("g")).values(finished_at=bindparam("t"), abandoned=bindparam("a"))
)
#: One round's row: its game ``g`` and index ``i``.
_ROUND_KEY = (_ROUNDS.c.game_id == bindparam("g"), _ROUNDS.c["index"] == bindparam("i"))
_CLOCK_UPDATE = update(_ROUNDS).where(*_ROUND_KEY).values(end_at=bindparam("e"), ended=bindparam("x"))

# The rows of the statements written most often (every action, clock and phase) go as tuples in this order of
# their bound names, not as a dict per row (``Sink.tuples``).
_ACTION_KEYS = ("game_id", "round_index", "seq", "at", "seat", "do", "data")
_VERSION_KEYS = ("i", "n")
_CLOCK_KEYS = ("g", "i", "e", "x")
_RESUME_KEYS = ("g", "i", "r", "e")
_ROOM_UPDATE_KEYS = ("i", "p", "h", "t")


def _action_values(op: AppendAction) -> tuple[Any, ...]:
    """``op``'s row of ``actions`` in the order of ``_ACTION_KEYS``: ``data`` is its record form without the
    columns of its own (``at``, ``seat``, ``do``)."""
    timed = op.timed
    a = timed.action
    return (op.game_id, op.round_index, op.seq, timed.at, a.seat, ACTION_NAMES[type(a)], action_fields(a))


def _upsert_rooms(sink: Sink, rooms: list[SaveRoom], written: Written) -> None:
    """Insert or update rooms. A room written before with the same options and link only has its phase, host
    and time updated; its seats are rewritten only when they changed (far less often than phases)."""
    now = utc_now()
    fresh: list[SaveRoom] = []
    known: list[SaveRoom] = []
    for r in rooms:
        before = written.get(r.room_id)
        same = before is not None and before.options == r.options and before.link == r.link
        (known if same else fresh).append(r)
    if fresh:
        rows = [
            {
                "id": r.room_id,
                "code": r.code,
                "link": r.link,
                "phase": r.phase,
                "host": r.host,
                "options": r.options,
                "created_at": now,
                "updated_at": now,
                "closed_at": None,
            }
            for r in fresh
        ]
        sink.many(_room_upsert(sink.dialect.name), rows)
    if known:
        sink.tuples(_ROOM_UPDATE, _ROOM_UPDATE_KEYS, [(r.room_id, r.phase, r.host, now) for r in known])
    changed = [r for r in rooms if (before := written.get(r.room_id)) is None or before.seats != r.seats]
    if changed:
        sink.many(_SEATS_DELETE, [{"r": r.room_id} for r in changed])
        seat_rows = [
            {
                "room_id": r.room_id,
                "position": i,
                "name": seat.name,
                "token_hash": seat.token_hash,
                "left": seat.left,
                "connected_at": seat.connected_at,
            }
            | ({"bot": seat.bot} if seat.bot is not None else {})
            for r in changed
            for i, seat in enumerate(r.seats)
        ]
        # A person's seat leaves ``bot`` to its default (NULL): the same rows as before computer players.
        people = [row for row in seat_rows if "bot" not in row]
        if people:
            sink.many(_SEAT_INSERT, people)
        if len(people) < len(seat_rows):
            sink.many(_SEAT_INSERT, [row for row in seat_rows if "bot" in row])
    for r in rooms:
        written[r.room_id] = r


def _apply_all(sink: Sink, ops: Sequence[Op], written: Written | None = None) -> None:
    """Apply ``ops`` in their order; what can be written together is (see ``_Run``)."""
    cache: Written = {} if written is None else written
    run = _Run()
    for op in ops:
        if run.take(op):
            continue
        run.write(sink, cache)
        assert isinstance(op, CloseRoom)
        sink.many(_ROOM_CLOSE, [{"i": op.room_id, "t": utc_now()}])
        cache.pop(op.room_id, None)  # a closed room is not written again: forget it
    run.write(sink, cache)


class Sink(Protocol):
    """Where a group's statements go: always one of the prebuilt statements above, with a list of rows."""

    @property
    def dialect(self) -> Dialect: ...

    def many(self, statement: Executable, rows: list[dict[str, Any]]) -> None: ...

    def tuples(self, statement: Executable, keys: tuple[str, ...], rows: list[tuple[Any, ...]]) -> None:
        """As ``many``, each row the values of ``keys`` in their order."""
        ...


class _Core:
    """Statements through a SQLAlchemy connection (PostgreSQL, and SQLite while the fast path is off)."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn
        self.dialect = conn.dialect

    def many(self, statement: Executable, rows: list[dict[str, Any]]) -> None:
        self.conn.execute(statement, rows)

    def tuples(self, statement: Executable, keys: tuple[str, ...], rows: list[tuple[Any, ...]]) -> None:
        self.conn.execute(statement, [dict(zip(keys, row, strict=True)) for row in rows])
