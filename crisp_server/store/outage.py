"""Outage: telling a database that cannot be written at all from rows it refused, and saying why in a line."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

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
