"""The SQLite fast path: a group's statements straight on the ``sqlite3`` connection (compiled once per
statement by SQLAlchemy), and the pragmas every SQLite connection of the store gets.
"""

from __future__ import annotations

import operator
import sqlite3
from collections.abc import Callable, Sequence
from typing import Any, cast

from sqlalchemy.engine import Dialect
from sqlalchemy.sql.compiler import SQLCompiler
from sqlalchemy.sql.expression import ClauseElement, Executable

#: The size (bytes) the WAL file is cut back to when it starts over.
WAL_SIZE_LIMIT = 64 * 2**20
#: How long a SQLite connection waits for another one's write lock.
BUSY_SECONDS = 30.0

_Plan = tuple[str, Callable[[dict[str, Any]], Sequence[Any]]]
_Steps = list[tuple[int, Callable[[Any], Any]]]
#: A statement's SQL, where each of its positions is in a row (``None``: in the same order), its conversions.
_TuplePlan = tuple[str, list[int] | None, _Steps]


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
        self._tuple_plans: dict[tuple[Executable, tuple[str, ...]], _TuplePlan] = {}

    def many(self, statement: Executable, rows: list[dict[str, Any]]) -> None:
        key = (statement, tuple(rows[0]))
        plan = self._plans.get(key)
        if plan is None:
            plan = self._plans[key] = self._plan(statement, key[1])
        sql, convert = plan
        self.dbapi.executemany(sql, [convert(row) for row in rows])

    def tuples(self, statement: Executable, keys: tuple[str, ...], rows: list[tuple[Any, ...]]) -> None:
        """As ``many``, each row the values of ``keys`` in their order: no dict per row, and rows whose values
        go to SQLite as they are (in the statement's order, no column to convert) go without a copy."""
        plan = self._tuple_plans.get((statement, keys))
        if plan is None:
            plan = self._tuple_plans[(statement, keys)] = self._tuple_plan(statement, keys)
        sql, order, steps = plan
        if order is None and not steps:
            self.dbapi.executemany(sql, rows)
            return
        out: list[list[Any]] = []
        for row in rows:
            values = list(row) if order is None else [row[i] for i in order]
            for i, process in steps:
                values[i] = process(values[i])
            out.append(values)
        self.dbapi.executemany(sql, out)

    def _tuple_plan(self, statement: Executable, keys: tuple[str, ...]) -> _TuplePlan:
        sql, names, steps = self._compile(statement, keys)
        order = None if tuple(names) == keys else [keys.index(name) for name in names]
        return sql, order, steps

    def _compile(self, statement: Executable, keys: tuple[str, ...]) -> tuple[str, list[str], _Steps]:
        """The statement's SQL for rows of ``keys``, the names it binds in their order, and the conversion of
        each position that has one (its type's bind processor)."""
        compiled = cast(
            SQLCompiler, cast(ClauseElement, statement).compile(dialect=self.dialect, column_keys=list(keys))
        )
        names = list(compiled.positiontup or [])
        if set(names) != set(keys):
            raise ValueError(f"rows give {sorted(keys)}, the statement binds {sorted(names)}: {compiled.string}")
        # The dialect's own form of each type (SQLite's DATETIME, say), as SQLAlchemy itself would bind it.
        types = [self.dialect.type_descriptor(compiled.binds[name].type) for name in names]
        processors = [type_.bind_processor(self.dialect) for type_ in types]
        steps: _Steps = [(i, cast(Callable[[Any], Any], p)) for i, p in enumerate(processors) if p is not None]
        return compiled.string, names, steps

    def _plan(self, statement: Executable, keys: tuple[str, ...]) -> _Plan:
        sql, names, steps = self._compile(statement, keys)
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

        return sql, convert


def sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA foreign_keys=ON")  # SQLite ignores foreign keys unless told, per connection
    cursor.execute("PRAGMA journal_mode=WAL")  # readers do not block the writer
    # A committed action survives a crash of the server (kill -9 included); after a power cut the last
    # moments of play may be lost. FULL would fsync every group commit (~0.3 ms here, blocking the loop).
    cursor.execute("PRAGMA synchronous=NORMAL")
    # When the WAL starts over, a file grown past this (while joins kept the checkpoints behind) is cut back.
    cursor.execute(f"PRAGMA journal_size_limit={WAL_SIZE_LIMIT}")
    cursor.close()
