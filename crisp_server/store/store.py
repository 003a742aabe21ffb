"""Persistence: one writer task commits what the rooms hand it, in groups; reads for restarts and history.

Rooms describe what changed as small operations (``SaveRoom``, ``AppendAction``, ...) and await
:meth:`Store.commit` before they publish anything: a player is never told of a move the database does
not have. The writer takes every operation waiting at that moment, from every room, into one
transaction (group commit), so a busy server pays one commit for many actions. Operations of one room
keep their order.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import operator
import sqlite3
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Protocol, cast

import orjson
from sqlalchemy import Connection, Engine, Table, bindparam, create_engine, delete, event, insert, select, update
from sqlalchemy.dialects.postgresql import insert as postgresql_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.engine import Dialect, make_url
from sqlalchemy.exc import DBAPIError, InterfaceError, OperationalError
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker, create_async_engine
from sqlalchemy.pool import PoolProxiedConnection
from sqlalchemy.sql.compiler import SQLCompiler
from sqlalchemy.sql.expression import ClauseElement, Executable

from crisp_server.engine import Record, Timed, parse_record
from crisp_server.engine.record import action_to_dict

from .models import ActionRow, GameRow, ResultRow, RoomRow, RoundRow, SeatRow

log = logging.getLogger("crisp.store")
_ACTIONS = cast(Table, ActionRow.__table__)
_ROUNDS = cast(Table, RoundRow.__table__)
_ROOMS = cast(Table, RoomRow.__table__)
_SEATS = cast(Table, SeatRow.__table__)
_GAMES = cast(Table, GameRow.__table__)
_RESULTS = cast(Table, ResultRow.__table__)


#: How often the WAL is copied into the SQLite database file (when something was written).
CHECKPOINT_SECONDS = 1.0
#: How long a checkpoint's second pass may hold commits back. Its fsyncs usually take a few milliseconds,
#: but a busy disk can take hundreds: then commits go on and the WAL starts over at a later checkpoint.
CHECKPOINT_HOLD_SECONDS = 0.015
#: The size (bytes) the WAL file is cut back to when it starts over.
WAL_SIZE_LIMIT = 64 * 2**20
#: How long a SQLite connection waits for another one's write lock.
BUSY_SECONDS = 30.0
#: How long opening a PostgreSQL connection may take before the database counts as unreachable.
CONNECT_SECONDS = 5.0


def _now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True, slots=True)
class SeatData:
    name: str
    token_hash: str
    left: bool
    connected_at: datetime | None


@dataclass(frozen=True, slots=True)
class SaveRoom:
    """The lobby as it is now: phase, host, options and every seat."""

    room_id: str
    code: str
    link: str
    phase: str
    host: int
    options: dict[str, Any]
    seats: tuple[SeatData, ...]


@dataclass(frozen=True, slots=True)
class CloseRoom:
    room_id: str


@dataclass(frozen=True, slots=True)
class ReserveVersion:
    """The room may publish versions up to ``v``: rebuilt after a restart, it goes on above it."""

    room_id: str
    v: int


@dataclass(frozen=True, slots=True)
class StartGame:
    game_id: str
    room_id: str
    players: tuple[str, ...]
    token_hashes: tuple[str, ...]
    options: dict[str, Any]
    first_dealer: int

    def row(self) -> dict[str, Any]:
        return {
            "id": self.game_id,
            "room_id": self.room_id,
            "players": list(self.players),
            "token_hashes": list(self.token_hashes),
            "options": self.options,
            "first_dealer": self.first_dealer,
            "started_at": _now(),
            "finished_at": None,
        }


@dataclass(frozen=True, slots=True)
class StartRound:
    game_id: str
    index: int
    deck: tuple[str, ...]
    salt: str

    def row(self) -> dict[str, Any]:
        return {
            "game_id": self.game_id,
            "index": self.index,
            "deck": list(self.deck),
            "salt": self.salt,
            "resumes": [],
            "end_at": None,
            "ended": False,
        }


@dataclass(frozen=True, slots=True)
class AppendAction:
    """An accepted action; reading the round back, its clock (``end_at``) stands at least at this instant."""

    game_id: str
    round_index: int
    seq: int
    timed: Timed

    def row(self) -> dict[str, Any]:
        data = action_to_dict(self.timed)
        extra = {k: v for k, v in data.items() if k not in ("at", "seat", "do")}
        return {
            "game_id": self.game_id,
            "round_index": self.round_index,
            "seq": self.seq,
            "at": data["at"],
            "seat": data["seat"],
            "do": data["do"],
            "data": extra,
        }


#: Each room as last committed in this process (what it believed written is forgotten when a commit fails).
Written = dict[str, "SaveRoom"]


class _Run:
    """Operations that can be written together, gathered until an operation that cannot comes along:
    the last state of each room, its seats where they changed, its version reserve, new games and rounds,
    the actions, each round's last clock, finished games. They are written in that order, one statement for
    each kind: what a row refers to is written before it, and updates come after the inserts they may touch."""

    def __init__(self) -> None:
        self.clear()

    def clear(self) -> None:
        self.rooms: dict[str, SaveRoom] = {}
        self.versions: dict[str, int] = {}
        self.games: list[StartGame] = []
        self.rounds: list[StartRound] = []
        self.actions: list[AppendAction] = []
        self.clocks: dict[tuple[str, int], tuple[int, bool]] = {}
        self.finished: list[FinishGame] = []

    def take(self, op: Op) -> bool:
        """Gather ``op`` if it can be written with the others (``CloseRoom`` and ``AddResume`` cannot)."""
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
        else:
            return False
        return True

    def write(self, sink: Sink, written: Written) -> None:
        if self.rooms:
            _upsert_rooms(sink, list(self.rooms.values()), written)
        if self.versions:
            sink.many(_ROOM_VERSION, [{"i": room_id, "n": v} for room_id, v in self.versions.items()])
        if self.games:
            sink.many(_GAME_INSERT, [g.row() for g in self.games])
        if self.rounds:
            sink.many(_ROUND_INSERT, [r.row() for r in self.rounds])
        if self.actions:
            sink.many(_ACTION_INSERT, [a.row() for a in self.actions])
        if self.clocks:
            sink.many(
                _CLOCK_UPDATE,
                [{"g": g, "i": i, "e": at, "x": ended} for (g, i), (at, ended) in self.clocks.items()],
            )
        if self.finished:
            now = _now()
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
def _room_upsert(dialect: str) -> Any:
    """Insert a room, or update its phase, host and options: built once per dialect (building it costs more
    than running it)."""
    ins = postgresql_insert if dialect == "postgresql" else sqlite_insert
    stmt = ins(_ROOMS)
    return stmt.on_conflict_do_update(
        index_elements=["id"],
        set_={
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
_CLOCK_UPDATE = (
    update(_ROUNDS)
    .where(_ROUNDS.c.game_id == bindparam("g"), _ROUNDS.c["index"] == bindparam("i"))
    .values(end_at=bindparam("e"), ended=bindparam("x"))
)


def _upsert_rooms(sink: Sink, rooms: list[SaveRoom], written: Written) -> None:
    """Insert or update rooms. A room written before with the same options only has its phase, host and
    time updated; its seats are rewritten only when they changed (far less often than phases)."""
    now = _now()
    fresh: list[SaveRoom] = []
    known: list[SaveRoom] = []
    for r in rooms:
        before = written.get(r.room_id)
        (known if before is not None and before.options == r.options else fresh).append(r)
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
        sink.many(_ROOM_UPDATE, [{"i": r.room_id, "p": r.phase, "h": r.host, "t": now} for r in known])
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
            for r in changed
            for i, seat in enumerate(r.seats)
        ]
        if seat_rows:
            sink.many(_SEAT_INSERT, seat_rows)
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
        if isinstance(op, CloseRoom):
            sink.many(_ROOM_CLOSE, [{"i": op.room_id, "t": _now()}])
            cache.pop(op.room_id, None)  # a closed room is not written again: forget it
        else:
            assert isinstance(op, AddResume)
            assert isinstance(sink, _Core), "a resume reads its round: it is written through SQLAlchemy"
            op.apply(sink.conn)
    run.write(sink, cache)


class Sink(Protocol):
    """Where a group's statements go: always one of the prebuilt statements above, with a list of rows."""

    @property
    def dialect(self) -> Dialect: ...

    def many(self, statement: Executable, rows: list[dict[str, Any]]) -> None: ...


class _Core:
    """Statements through a SQLAlchemy connection (PostgreSQL, and SQLite when a resume is written)."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn
        self.dialect = conn.dialect

    def many(self, statement: Executable, rows: list[dict[str, Any]]) -> None:
        self.conn.execute(statement, rows)


_Plan = tuple[str, Callable[[dict[str, Any]], Sequence[Any]]]


class _Sqlite:
    """Statements straight on a ``sqlite3`` connection: each prebuilt statement is compiled by SQLAlchemy
    once, and its rows converted with the column types' own bind processors, so what is stored is exactly
    what SQLAlchemy would store. Per group commit this costs tens of microseconds, against hundreds
    through ``Connection.execute`` (issue 7). The caller begins and commits: ``sqlite3`` opens a transaction
    before the first statement."""

    def __init__(self, dbapi: sqlite3.Connection, dialect: Dialect) -> None:
        self.dbapi = dbapi
        self.dialect = dialect
        self._plans: dict[tuple[Executable, tuple[str, ...]], _Plan] = {}

    def many(self, statement: Executable, rows: list[dict[str, Any]]) -> None:
        key = (statement, tuple(rows[0]))
        plan = self._plans.get(key)
        if plan is None:
            plan = self._plans[key] = self._plan(statement, key[1])
        sql, convert = plan
        self.dbapi.executemany(sql, [convert(row) for row in rows])

    def _plan(self, statement: Executable, keys: tuple[str, ...]) -> _Plan:
        compiled = cast(
            SQLCompiler, cast(ClauseElement, statement).compile(dialect=self.dialect, column_keys=list(keys))
        )
        names = compiled.positiontup or []
        if set(names) != set(keys):
            raise ValueError(f"rows give {sorted(keys)}, the statement binds {sorted(names)}: {compiled.string}")
        # The dialect's own form of each type (SQLite's DATETIME, say), as SQLAlchemy itself would bind it.
        types = [self.dialect.type_descriptor(compiled.binds[name].type) for name in names]
        processors = [type_.bind_processor(self.dialect) for type_ in types]
        steps = [(i, process) for i, process in enumerate(processors) if process is not None]
        get = operator.itemgetter(*names)

        def convert(row: dict[str, Any]) -> Sequence[Any]:
            values = get(row)
            if len(names) == 1:
                values = (values,)
            if not steps:
                return cast(tuple[Any, ...], values)
            out = list(values)
            for i, process in steps:
                out[i] = process(out[i])
            return out

        return compiled.string, convert


@dataclass(frozen=True, slots=True)
class SetClock:
    """The round's clock reached ``end_at`` (a timer fired); ``ended`` when the round is over."""

    game_id: str
    round_index: int
    end_at: int
    ended: bool = False


@dataclass(frozen=True, slots=True)
class AddResume:
    """The server restarted: the round went on at ``at`` after ``after`` actions (``Game.resume``)."""

    game_id: str
    round_index: int
    after: int
    at: int

    def apply(self, conn: Connection) -> None:
        where = (_ROUNDS.c.game_id == self.game_id, _ROUNDS.c["index"] == self.round_index)
        row = conn.execute(select(_ROUNDS.c.resumes, _ROUNDS.c.end_at).where(*where)).one_or_none()
        if row is not None:
            resumes = [*row.resumes, {"after": self.after, "at": self.at}]
            conn.execute(update(_ROUNDS).where(*where).values(resumes=resumes, end_at=max(row.end_at or 0, self.at)))


@dataclass(frozen=True, slots=True)
class FinishGame:
    """The game ended: won, or ``abandoned`` (no player came back; ``totals`` of the rounds played, no winner)."""

    game_id: str
    totals: tuple[int, ...]
    winners: tuple[int, ...]
    abandoned: bool = False


#: What a room hands the store to write.
Op = SaveRoom | ReserveVersion | CloseRoom | StartGame | StartRound | AppendAction | SetClock | AddResume | FinishGame


# -- reading ---------------------------------------------------------------------------------------------


@dataclass(slots=True)
class StoredGame:
    id: str
    record: Record
    token_hashes: list[str]
    salts: list[str]
    ended: list[bool]


@dataclass(slots=True)
class StoredRoom:
    id: str
    code: str
    link: str
    phase: str
    host: int
    options: dict[str, Any]
    seats: list[SeatData]
    game: StoredGame | None = None
    updated_at: datetime | None = None
    #: No version the room published is above this (``ReserveVersion``).
    v: int = 0


def _never() -> bool:
    return False


@dataclass(frozen=True, slots=True)
class _Submission:
    ops: Sequence[Op]
    done: Callable[[BaseException | None], None]
    skip: Callable[[], bool]


class Dropped(RuntimeError):
    """A submission was not written: its room stopped after an earlier commit of its failed."""


def _skipped(item: _Submission) -> bool:
    """Whether ``item`` is to be dropped; if so, its ``done`` has been told."""
    if not item.skip():
        return False
    item.done(Dropped("the room stopped after a failed commit"))
    return True


def _tell(item: _Submission, error: BaseException | None) -> None:
    """Tell a submission how its commit went; what its room does then must not stop the writer."""
    try:
        item.done(error)
    except Exception:
        log.exception("delivering after a commit failed")


@dataclass(slots=True)
class Outage:
    """Commits fail: since when (monotonic seconds) and the last error, as an operator reads it."""

    reason: str
    since: float


def describe(exc: BaseException) -> str:
    """An error in one line (SQLAlchemy's texts add the statement and parameters: too long, and rows)."""
    original = getattr(exc, "orig", None)
    shown = original if isinstance(original, BaseException) else exc
    text = str(shown).strip().splitlines()[0] if str(shown).strip() else ""
    return f"{type(shown).__name__}: {text}"[:200] if text else type(shown).__name__


def unreachable(exc: BaseException) -> bool:
    """Whether ``exc`` says the database cannot be written at all (down, unreachable, full, locked, read-only),
    rather than that these rows were refused (a constraint: a bug in one room's writes)."""
    if isinstance(exc, DBAPIError):
        if exc.connection_invalidated or isinstance(exc, OperationalError | InterfaceError):
            return True
        exc = exc.orig if isinstance(exc.orig, BaseException) else exc
    return isinstance(exc, OSError | TimeoutError | sqlite3.OperationalError | sqlite3.InterfaceError)


@dataclass(slots=True)
class Timing:
    """How much the writer has done."""

    commits: int = 0
    ops: int = 0


#: One checkpoint pass: copies the frames the WAL holds as it begins, without waiting for anyone.
_PASSIVE = "PRAGMA wal_checkpoint(PASSIVE)"
#: The program of the checkpoint process (see ``_Copier``): one pass per line read.
_COPIER = f"""
import os, signal, sqlite3, sys
# Ctrl-C and a service manager's SIGTERM to the whole group are for the server, which ends this by closing
# stdin after a last checkpoint.
signal.signal(signal.SIGINT, signal.SIG_IGN)
signal.signal(signal.SIGTERM, signal.SIG_IGN)
if hasattr(os, "sched_setscheduler") and hasattr(os, "SCHED_IDLE"):
    try:
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
    except OSError:
        pass
db = sqlite3.connect(sys.argv[1], timeout=float(sys.argv[2]))
for _ in sys.stdin:
    print(*db.execute("{_PASSIVE}").fetchone(), flush=True)
"""


class _Copier:
    """The bulk of each checkpoint, copied by a process of its own that runs at idle priority (Linux
    ``SCHED_IDLE``): it takes only the CPU time the event loop leaves, and shares no GIL with it.

    In a thread of the server, that pass took 10 to 50 ms of the one core every second at 2,000 rooms, and
    the actions in flight meanwhile made up much of the p99. A thread must not be put at idle priority
    instead: whenever it held the GIL while anything else on the core was runnable, it would not be
    scheduled and the event loop would wait for it (priority inversion). The store starts the process;
    a copy starts it again if it ended."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.process: asyncio.subprocess.Process | None = None
        self._killed: asyncio.subprocess.Process | None = None  # ended by a cancelled copy, not yet reaped

    async def start(self) -> asyncio.subprocess.Process:
        """Start the process unless it runs (the store starts it before rooms load the server: starting one
        forks the server, which takes tens of milliseconds once the server holds thousands of players)."""
        await self._reap()
        process = self.process
        if process is None or process.returncode is not None:
            process = self.process = await asyncio.create_subprocess_exec(
                sys.executable,
                "-c",
                _COPIER,
                self.path,
                str(BUSY_SECONDS),
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
            )
        return process

    async def copy(self) -> tuple[int, int, int]:
        process = await self.start()
        assert process.stdin is not None
        assert process.stdout is not None
        try:
            process.stdin.write(b"\n")
            await process.stdin.drain()
            line = await process.stdout.readline()
        except BaseException:
            # Cancelled (or the pipe broke) with an answer perhaps still to come: a later question must not
            # read it as its own. The next copy starts a new process, even if this one's end is not noted
            # yet (a shutdown cancels the periodic checkpoint, then runs a last one at once).
            if process.returncode is None:
                process.kill()
            self.process, self._killed = None, process
            raise
        if not line:
            raise RuntimeError(f"the checkpoint process ended (exit code {await process.wait()})")
        busy, frames, copied = (int(word) for word in line.split())
        return busy, frames, copied

    async def _reap(self) -> None:
        killed, self._killed = self._killed, None
        if killed is not None:
            await killed.wait()

    async def close(self) -> None:
        await self._reap()
        process, self.process = self.process, None
        if process is None or process.returncode is not None:
            return
        assert process.stdin is not None
        process.stdin.close()
        try:
            await asyncio.wait_for(process.wait(), BUSY_SECONDS)
        except TimeoutError:
            process.kill()
            await process.wait()


class Store:
    def __init__(self, url: str) -> None:
        self.url = url
        parsed = make_url(url)
        self.is_sqlite = parsed.get_backend_name() == "sqlite"
        # orjson for the JSON columns (options, decks, action data): the standard json module is slower.
        kwargs: dict[str, Any] = {"json_serializer": _json_text, "json_deserializer": orjson.loads}
        # The SQLite file, if the database is one (not in memory).
        self._sqlite_path = (
            parsed.database if self.is_sqlite and parsed.database not in (None, "", ":memory:") else None
        )
        if self.is_sqlite:
            if self._sqlite_path is not None:
                Path(self._sqlite_path).parent.mkdir(parents=True, exist_ok=True)
            kwargs["connect_args"] = {"timeout": BUSY_SECONDS}
        else:
            # A connection the server dropped (a restart) is noticed when taken from the pool, not by a commit.
            kwargs["pool_pre_ping"] = True
            # A server that does not answer at all (a host down) is an outage after seconds, not a minute.
            kwargs["connect_args"] = {"timeout": CONNECT_SECONDS}
        self.engine: AsyncEngine = create_async_engine(url, **kwargs)
        self.sessions = async_sessionmaker(self.engine, expire_on_commit=False)
        # Writes to SQLite go through the plain sqlite3 driver, on the event loop: a group commit to a WAL
        # with synchronous=NORMAL takes tens of microseconds. (aiosqlite hops to its thread for every
        # statement, and under load every hop waited for the GIL: commits took 5-20 ms.)
        self._sync_engine: Engine | None = None
        self._raw: PoolProxiedConnection | None = None  # held by the writer from start() to close()
        self._fast: _Sqlite | None = None
        # Checkpoints (copying the WAL into the database file, with an fsync) take milliseconds to tens of
        # milliseconds: the writer's connection never runs them; the checkpoint process and a thread do
        # (see checkpoint()).
        self._checkpointer: sqlite3.Connection | None = None
        self._copier: _Copier | None = None  # the first pass, in a process of its own
        self._checkpoints: asyncio.Task[None] | None = None
        self._since_checkpoint = 0
        if self.is_sqlite:
            event.listen(self.engine.sync_engine, "connect", _sqlite_pragmas)
            self._sync_engine = create_engine(parsed.set(drivername="sqlite"), **kwargs)
            event.listen(self._sync_engine, "connect", _sqlite_pragmas)
        self._queue: asyncio.Queue[_Submission] = asyncio.Queue()
        # Held by every write transaction. SQLite's group commits run on the event loop: one that met the
        # write lock of a transaction going on through aiosqlite (the retention purge) would wait with
        # the loop stopped, and that transaction could never finish.
        self._writing = asyncio.Lock()
        self._writer: asyncio.Task[None] | None = None
        self.timing = Timing()
        self._written: Written = {}  # per room, as last committed
        self.on_commit: list[Any] = []  # callbacks(seconds, ops) for metrics
        self.on_failure: list[Callable[[str], None]] = []  # callbacks(reason) for metrics, per failed commit
        #: Set while commits fail: since when and why (``/healthz``).
        self.outage: Outage | None = None

    async def start(self) -> None:
        if self._sync_engine is not None and self._raw is None:
            self._raw = self._sync_engine.raw_connection()
            self._fast = _Sqlite(cast(sqlite3.Connection, self._raw.driver_connection), self._sync_engine.dialect)
            if self._sqlite_path is not None:
                self._fast.dbapi.execute("PRAGMA wal_autocheckpoint=0")
                self._checkpointer = sqlite3.connect(self._sqlite_path, timeout=BUSY_SECONDS, check_same_thread=False)
                self._copier = _Copier(self._sqlite_path)
                try:
                    await self._copier.start()
                except OSError:
                    log.exception("the checkpoint process did not start; checkpoints will copy in a thread")
                self._checkpoints = asyncio.get_running_loop().create_task(
                    self._checkpoint_loop(), name="store checkpoints"
                )
        if self._writer is None:
            self._writer = asyncio.get_running_loop().create_task(self._write_loop(), name="store writer")

    async def close(self) -> None:
        if self._writer is not None:
            # Let what is queued be written first.
            while not self._queue.empty():
                await asyncio.sleep(0.01)
            self._writer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._writer
            self._writer = None
        if self._checkpoints is not None:
            self._checkpoints.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._checkpoints
            self._checkpoints = None
        if self._checkpointer is not None:
            await self.checkpoint()
            self._checkpointer.close()
            self._checkpointer = None
        if self._copier is not None:
            await self._copier.close()
            self._copier = None
        if self._raw is not None:
            self._raw.close()
            self._raw = self._fast = None
        await self.engine.dispose()
        if self._sync_engine is not None:
            self._sync_engine.dispose()

    def submit(
        self, ops: Sequence[Op], done: Callable[[BaseException | None], None], skip: Callable[[], bool] = _never
    ) -> None:
        """Write ``ops`` in order, grouped with other rooms' writes, then call ``done`` with ``None`` or what
        went wrong. Submissions are done in the order they came (one with no ops just waits its turn);
        one whose ``skip()`` is true by then is dropped (its room stopped after a failed commit)."""
        self._queue.put_nowait(_Submission(ops, done, skip))

    async def commit(self, ops: Sequence[Op]) -> None:
        """Write ``ops`` durably, in order (grouped with other rooms' writes); raise if that failed."""
        if not ops:
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()

        def done(error: BaseException | None) -> None:
            if not future.done():
                future.set_result(None) if error is None else future.set_exception(error)

        self.submit(ops, done)
        await future

    async def _write_loop(self) -> None:
        while True:
            batch = [await self._queue.get()]
            # Let the loop run what is ready once more: the rooms handling messages that arrived with this
            # one submit too, and are written in the same commit (a commit costs more than its rows).
            await asyncio.sleep(0)
            while not self._queue.empty() and len(batch) < 1000:
                batch.append(self._queue.get_nowait())
            batch = [item for item in batch if not _skipped(item)]
            ops = [op for item in batch for op in item.ops]
            start = time.perf_counter()
            try:
                if ops:
                    await self._transaction(ops, self._written)
            except Exception as exc:
                self._written.clear()  # what it believed written may have been rolled back
                self._failed(exc)
                if unreachable(exc):
                    # The database is down, full or locked: every part would fail the same way (each one
                    # perhaps after a timeout). Their rooms are suspended and come back when it answers.
                    for item in batch:
                        _tell(item, exc)
                    continue
                log.warning("a group commit failed (%s); writing its parts one by one", describe(exc))
                for item in batch:
                    if _skipped(item):
                        continue  # its room stopped at an earlier part's failure
                    try:
                        if item.ops:
                            await self._transaction(item.ops, {})
                    except Exception as part_exc:
                        _tell(item, part_exc)
                    else:
                        _tell(item, None)
                continue
            if ops:
                seconds = time.perf_counter() - start
                self.timing.commits += 1
                self.timing.ops += len(ops)
                for callback in self.on_commit:
                    callback(seconds, len(ops))
                self._answered()
            for item in batch:
                _tell(item, None)

    def _failed(self, exc: BaseException) -> None:
        """A commit failed: the store is in an outage until one succeeds (``outage`` says since when and why)."""
        reason = describe(exc)
        if self.outage is None:
            self.outage = Outage(reason, time.monotonic())
            log.error("the database cannot be written: %s; rooms wait until it answers", reason)
        else:
            self.outage.reason = reason
        for callback in self.on_failure:
            callback(reason)

    def _answered(self) -> None:
        """A commit (or a probe) went through: the outage, if any, is over."""
        outage, self.outage = self.outage, None
        if outage is not None:
            log.warning("the database answers again after %.1f s", time.monotonic() - outage.since)

    async def probe(self) -> None:
        """An empty write transaction (SQLite: its write lock is taken; PostgreSQL: a connection from the pool,
        checked): raises if the database does not answer. Ends the outage if it does. (It writes nothing: a
        full disk is only seen by the next commit.)"""
        try:
            async with self._writing:
                fast = self._fast
                if fast is not None:
                    try:
                        fast.dbapi.execute("BEGIN IMMEDIATE")
                    finally:
                        fast.dbapi.rollback()
                else:
                    await self._write([], {})
        except Exception as exc:
            self._failed(exc)
            raise
        self._answered()

    async def _checkpoint_loop(self) -> None:
        while True:
            await asyncio.sleep(CHECKPOINT_SECONDS)
            if self._since_checkpoint:
                try:
                    await self.checkpoint()
                except sqlite3.OperationalError as exc:  # a full disk, a lock held too long: no bug of ours
                    log.warning("a WAL checkpoint failed (%s); the next one will try again", describe(exc))
                except Exception:
                    log.exception("a WAL checkpoint failed; the next one will try again")

    async def checkpoint(self) -> tuple[int, int, int]:
        """Copy the WAL into the database file, off the event loop, and leave it wholly copied, so that the next
        commit starts the WAL over from its beginning. Returns SQLite's answer to the last pass: (busy,
        frames in the WAL, frames copied).

        A ``PASSIVE`` checkpoint copies the frames that were there when it began. On a busy server commits
        land during every pass, the WAL is never wholly copied and so never starts over: it grew by 13 MB
        a second, and every page read searched its index (issue 7). So a first pass copies the bulk while
        commits go on, and a second one holds commits back (not the event loop: they wait their turn)
        while it copies what they added meanwhile, usually a few milliseconds' worth, but never longer than
        ``CHECKPOINT_HOLD_SECONDS``: a pass ends with an fsync, which a busy disk can stretch to hundreds of
        milliseconds, and every table would wait. Commits then go on while that pass finishes, and the WAL
        starts over after a later checkpoint instead."""
        if self._checkpointer is None:
            return (0, 0, 0)
        self._since_checkpoint = 0
        await self._bulk_pass()
        async with self._writing:
            rest = asyncio.ensure_future(asyncio.to_thread(self._checkpoint_pass))
            await asyncio.wait({rest}, timeout=CHECKPOINT_HOLD_SECONDS)
        return await rest

    async def _bulk_pass(self) -> tuple[int, int, int]:
        """The first pass: by the checkpoint process (see ``_Copier``), else in a thread."""
        if self._copier is not None:
            try:
                return await self._copier.copy()
            except (OSError, RuntimeError, ValueError) as exc:
                # It ended (killed, out of memory): the next copy starts another. No traceback: the cause is
                # outside this code.
                log.warning("the checkpoint process failed (%s); copying in a thread this time", exc)
        return await asyncio.to_thread(self._checkpoint_pass)

    def _checkpoint_pass(self) -> tuple[int, int, int]:
        assert self._checkpointer is not None
        return cast(tuple[int, int, int], self._checkpointer.execute(_PASSIVE).fetchone())

    async def _transaction(self, ops: Sequence[Op], written: Written) -> None:
        """Apply ``ops`` in one transaction: SQLite synchronously, PostgreSQL through asyncpg."""
        async with self._writing:
            await self._write(ops, written)

    async def _write(self, ops: Sequence[Op], written: Written) -> None:
        fast = self._fast
        if fast is not None and not any(isinstance(op, AddResume) for op in ops):  # a resume reads its round
            try:
                _apply_all(fast, ops, written)
                fast.dbapi.commit()
                self._since_checkpoint += 1
            except BaseException:
                fast.dbapi.rollback()
                raise
        elif self._sync_engine is not None:
            with self._sync_engine.begin() as conn:
                _apply_all(_Core(conn), ops, written)
        else:
            async with self.engine.begin() as aconn:
                await aconn.run_sync(lambda conn: _apply_all(_Core(conn), ops, written))

    # -- reads -------------------------------------------------------------------------------------------

    async def open_rooms(self) -> list[StoredRoom]:
        """Every room that was not closed, with its running game rebuilt as a record."""
        async with self.sessions() as session:
            rooms = (await session.scalars(select(RoomRow).where(RoomRow.closed_at.is_(None)))).all()
            return [await self._stored_room(session, room) for room in rooms]

    async def load_room(self, room_id: str) -> StoredRoom | None:
        """One room as the database has it (after its commit failed), or ``None`` if it was never written
        or is closed."""
        async with self.sessions() as session:
            room = await session.get(RoomRow, room_id)
            if room is None or room.closed_at is not None:
                return None
            return await self._stored_room(session, room)

    async def _stored_room(self, session: AsyncSession, room: RoomRow) -> StoredRoom:
        seats = (
            await session.scalars(select(SeatRow).where(SeatRow.room_id == room.id).order_by(SeatRow.position))
        ).all()
        stored = StoredRoom(
            room.id,
            room.code,
            room.link,
            room.phase,
            room.host,
            dict(room.options),
            [SeatData(s.name, s.token_hash, s.left, s.connected_at) for s in seats],
            updated_at=room.updated_at,
            v=room.v,
        )
        # The latest game: running, or just finished (a room at its game's end shows the result).
        game = await session.scalar(
            select(GameRow).where(GameRow.room_id == room.id).order_by(GameRow.started_at.desc()).limit(1)
        )
        if game is not None:
            stored.game = await self._stored_game(session, game)
        return stored

    async def _stored_game(self, session: AsyncSession, game: GameRow) -> StoredGame:
        document, rounds = await _game_document(session, game)
        return StoredGame(
            game.id,
            parse_record(document),
            list(game.token_hashes),
            [r.salt for r in rounds],
            [r.ended for r in rounds],
        )

    async def game_record(self, game_id: str) -> tuple[dict[str, Any], list[str], bool] | None:
        """The game's ``crisp-record/1``, its players' token hashes, and whether it has finished."""
        async with self.sessions() as session:
            game = await session.get(GameRow, game_id)
            if game is None:
                return None
            document, _ = await _game_document(session, game)
            return document, list(game.token_hashes), game.finished_at is not None

    async def last_room_id(self, code: str) -> str | None:
        """The id of the newest room with this code, closed or not (a code is unique among open rooms only)."""
        async with self.sessions() as session:
            found: str | None = await session.scalar(
                select(RoomRow.id).where(RoomRow.code == code).order_by(RoomRow.created_at.desc()).limit(1)
            )
            return found

    async def past_games(self, room_id: str) -> list[dict[str, Any]]:
        """The room's ended games, newest first: players, totals, winners, and whether it was abandoned."""
        async with self.sessions() as session:
            rows = (
                await session.execute(
                    select(GameRow, ResultRow)
                    .join(ResultRow, ResultRow.game_id == GameRow.id)
                    .where(GameRow.room_id == room_id)
                    .order_by(ResultRow.finished_at.desc())
                )
            ).all()
            return [
                {
                    "id": game.id,
                    "players": game.players,
                    "totals": result.totals,
                    "winners": result.winners,
                    "abandoned": game.abandoned,
                    "finished_at": result.finished_at.isoformat(),
                }
                for game, result in rows
            ]

    async def purge(self, idle_lobby: timedelta, keep_finished: timedelta) -> tuple[int, int]:
        """Retention: close lobbies idle for ``idle_lobby``; delete games finished before ``keep_finished``,
        and closed rooms with no game left. The number of lobbies closed and games deleted."""
        now = _now()
        async with self._writing, self.sessions.begin() as session:
            closed = await session.execute(
                update(RoomRow)
                .where(RoomRow.closed_at.is_(None), RoomRow.phase == "lobby", RoomRow.updated_at < now - idle_lobby)
                .values(closed_at=now)
            )
            old = (await session.scalars(select(GameRow.id).where(GameRow.finished_at < now - keep_finished))).all()
            if old:
                await session.execute(delete(ActionRow).where(ActionRow.game_id.in_(old)))
                await session.execute(delete(RoundRow).where(RoundRow.game_id.in_(old)))
                await session.execute(delete(ResultRow).where(ResultRow.game_id.in_(old)))
                await session.execute(delete(GameRow).where(GameRow.id.in_(old)))
            gone = select(GameRow.id).where(GameRow.room_id == RoomRow.id).exists()
            await session.execute(
                delete(RoomRow).where(RoomRow.closed_at.is_not(None), RoomRow.closed_at < now - idle_lobby, ~gone)
            )
            return closed.rowcount or 0, len(old)  # type: ignore[attr-defined]


async def _game_document(session: AsyncSession, game: GameRow) -> tuple[dict[str, Any], Sequence[RoundRow]]:
    """A stored game as its ``crisp-record/1`` document, with its round rows."""
    rounds = (await session.scalars(select(RoundRow).where(RoundRow.game_id == game.id).order_by(RoundRow.index))).all()
    actions = (
        await session.scalars(
            select(ActionRow).where(ActionRow.game_id == game.id).order_by(ActionRow.round_index, ActionRow.seq)
        )
    ).all()
    by_round: dict[int, list[dict[str, Any]]] = {}
    for a in actions:
        by_round.setdefault(a.round_index, []).append({"at": a.at, "seat": a.seat, "do": a.do, **a.data})
    return record_document(game, rounds, by_round), rounds


def record_document(
    game: GameRow, rounds: Sequence[RoundRow], actions: dict[int, list[dict[str, Any]]]
) -> dict[str, Any]:
    """A stored game as a ``crisp-record/1`` document."""
    out_rounds: list[dict[str, Any]] = []
    for r in rounds:
        done = actions.get(r.index, [])
        item: dict[str, Any] = {"deck": list(r.deck), "actions": done}
        # The clock stands at the last action, or later where a timer fired or the server resumed since.
        clocks = [t for t in (r.end_at, done[-1]["at"] if done else None) if t is not None]
        if clocks:
            item["end_at"] = max(clocks)
        if r.resumes:
            item["resumes"] = list(r.resumes)
        out_rounds.append(item)
    return {
        "format": "crisp-record/1",
        "options": dict(game.options),
        "players": list(game.players),
        "first_dealer": game.first_dealer,
        "rounds": out_rounds,
    }


def _json_text(value: Any) -> str:
    return orjson.dumps(value).decode()


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA foreign_keys=ON")  # SQLite ignores foreign keys unless told, per connection
    cursor.execute("PRAGMA journal_mode=WAL")  # readers do not block the writer
    # A committed action survives a crash of the server (kill -9 included); after a power cut the last
    # moments of play may be lost. FULL would fsync every group commit (~0.3 ms here, blocking the loop).
    cursor.execute("PRAGMA synchronous=NORMAL")
    # When the WAL starts over, a file grown past this (while joins kept the checkpoints behind) is cut back.
    cursor.execute(f"PRAGMA journal_size_limit={WAL_SIZE_LIMIT}")
    cursor.close()
