"""Outage: telling a database that cannot be written at all from rows it refused, saying why in a line, and
telling which SQLite errors leave a connection that must not be used again."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import Final

from sqlalchemy.exc import DBAPIError, InterfaceError, OperationalError


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


#: SQLite's primary result codes that may leave a connection unable to write for good. A connection opens
#: the database's files (the WAL at its first read) read-write, and read-only if the file system refuses
#: that (an immutable file, a permission change, a read-only mount): such a connection stays read-only
#: after the files are writable again (every write: SQLITE_READONLY). A failed write or a full disk may
#: leave its pager in an error state. Extended codes (SQLITE_READONLY_DBMOVED, SQLITE_IOERR_WRITE, ...)
#: carry the primary code in their low byte.
STORAGE_FAULTS: Final = frozenset(
    {sqlite3.SQLITE_READONLY, sqlite3.SQLITE_IOERR, sqlite3.SQLITE_FULL, sqlite3.SQLITE_CANTOPEN}
)


def storage_fault(exc: BaseException) -> bool:
    """Whether ``exc`` (a ``sqlite3`` error, or SQLAlchemy's wrapping one) says the database's files could not
    be opened or written: the connection that raised it is to be discarded, and a fresh one opened for the
    next try (when the fault is over, it opens the files read-write again)."""
    original = getattr(exc, "orig", None)
    for error in (exc, original):
        code = getattr(error, "sqlite_errorcode", None)
        if isinstance(code, int) and code & 0xFF in STORAGE_FAULTS:
            return True
    return False


class Dropped(RuntimeError):
    """A submission was not written: its room stopped after an earlier commit of its failed."""
