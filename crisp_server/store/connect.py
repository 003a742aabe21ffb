"""The store's connections to its database: the SQLAlchemy engines a URL asks for (on SQLite, with the plain
``sqlite3`` driver's too, for the writer's fast path), and the writer's own SQLite connection."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, cast

import orjson
from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import ExceptionContext, make_url
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine
from sqlalchemy.pool import PoolProxiedConnection

from crisp_server.store import sqlite_fast

from .outage import storage_fault
from .sqlite_fast import _Sqlite, sqlite_pragmas

#: How long opening a PostgreSQL connection may take before the database counts as unreachable.
CONNECT_SECONDS = 5.0
#: The page cache of the store's writing connection on SQLite, in KiB.
WRITER_CACHE_KIB: Final = 16 * 1024
#: How long the writer's SQLite connection waits for a write lock another process holds (an operator's
#: ``sqlite3`` shell in a transaction, say). Its commits run on the event loop: waiting longer would stop
#: every room (pings, handshakes, /healthz). Past it the commit fails as a locked database: an outage
#: (``unavailable``), tried again with the usual back-off. The server's own checkpoints and purges never
#: make it wait: they take the writer's turn instead.
WRITER_BUSY_MS: Final = 100


def _json_text(value: Any) -> str:
    return orjson.dumps(value).decode()


def _discard_on_storage_fault(context: ExceptionContext) -> None:
    """SQLAlchemy's connection to a SQLite file that met a storage fault is invalidated as if it were lost, and
    with it every connection its pool opened before: any of them may have opened the files read-only while
    the fault lasted, and would stay so. The next checkout opens a fresh one."""
    if storage_fault(context.original_exception):
        context.is_disconnect = True


@dataclass(frozen=True, slots=True)
class Engines:
    """The engines of one database URL."""

    engine: AsyncEngine
    is_sqlite: bool
    #: The SQLite file, if the database is one (not in memory).
    sqlite_path: str | None
    #: SQLite: the plain ``sqlite3`` driver's engine, for the writer's fast path (``None`` on PostgreSQL).
    sync_engine: Engine | None


def open_engines(url: str, *, idle_in_transaction_ms: int | None, application_name: str | None) -> Engines:
    """The engines for ``url``: SQLite's with its pragmas (and its folder made), PostgreSQL's with its timeouts."""
    parsed = make_url(url)
    is_sqlite = parsed.get_backend_name() == "sqlite"
    # orjson for the JSON columns (options, decks, action data): the standard json module is slower.
    kwargs: dict[str, Any] = {"json_serializer": _json_text, "json_deserializer": orjson.loads}
    # The SQLite file, if the database is one (not in memory).
    sqlite_path = parsed.database if is_sqlite and parsed.database not in (None, "", ":memory:") else None
    if is_sqlite:
        if sqlite_path is not None:
            Path(sqlite_path).parent.mkdir(parents=True, exist_ok=True)
        kwargs["connect_args"] = {"timeout": sqlite_fast.BUSY_SECONDS}
    else:
        # A connection the server dropped (a restart) is noticed when taken from the pool, not by a commit.
        kwargs["pool_pre_ping"] = True
        # A server that does not answer at all (a host down) is an outage after seconds, not a minute.
        kwargs["connect_args"] = {"timeout": CONNECT_SECONDS}
        server_settings: dict[str, str] = {}
        if idle_in_transaction_ms is not None:
            # A node stopped between two statements of a transaction (SIGSTOP, a long pause) must not
            # keep its lease rows locked: PostgreSQL ends such a session (the fence then refuses it).
            server_settings["idle_in_transaction_session_timeout"] = str(idle_in_transaction_ms)
        if application_name is not None:
            # ``pg_stat_activity`` then tells which node a session (and a lock it holds) belongs to.
            server_settings["application_name"] = application_name[:63]
        if server_settings:
            kwargs["connect_args"]["server_settings"] = server_settings
    engine = create_async_engine(url, **kwargs)
    sync_engine: Engine | None = None
    if is_sqlite:
        event.listen(engine.sync_engine, "connect", sqlite_pragmas)
        sync_engine = create_engine(parsed.set(drivername="sqlite"), **kwargs)
        event.listen(sync_engine, "connect", sqlite_pragmas)
        if sqlite_path is not None:
            for each in (engine.sync_engine, sync_engine):
                event.listen(each, "handle_error", _discard_on_storage_fault)
    return Engines(engine, is_sqlite, sqlite_path, sync_engine)


def open_writer(
    sync_engine: Engine, sqlite_path: str | None, wal_cut_back: Callable[[], int]
) -> tuple[PoolProxiedConnection, _Sqlite]:
    """A connection for the writer's fast path, with its pragmas (``wal_cut_back``: the size the WAL starts
    over at); opening one can fail, as a commit would."""
    raw = sync_engine.raw_connection()
    try:
        fast = _Sqlite(cast(sqlite3.Connection, raw.driver_connection), sync_engine.dialect)
        # The writer's page cache holds the pages thousands of playing rooms write to (the actions'
        # index, their rounds and rooms: spread over the files by random ids): with SQLite's 2 MiB, each
        # commit read some of them back from the files again (issue 19).
        fast.dbapi.execute(f"PRAGMA cache_size=-{WRITER_CACHE_KIB}")
        fast.dbapi.execute(f"PRAGMA busy_timeout={WRITER_BUSY_MS}")
        if sqlite_path is not None:
            fast.dbapi.execute("PRAGMA wal_autocheckpoint=0")  # the checkpointer copies the WAL
            # It starts the WAL over: cut back to a part of its limit, so that a WAL grown past that
            # while checkpoints fail is measured by its file's size.
            fast.dbapi.execute(f"PRAGMA journal_size_limit={wal_cut_back()}")
    except BaseException:
        raw.invalidate()
        raise
    return raw, fast
