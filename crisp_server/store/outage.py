"""Outage: telling a database that cannot be written at all from rows it refused, saying why in a line, and
telling which SQLite errors leave a connection that must not be used again."""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import time
from dataclasses import dataclass
from typing import Final

import asyncpg
from sqlalchemy.exc import DBAPIError, InterfaceError, OperationalError

#: The store's logger: what an outage says comes from the store.
log = logging.getLogger("crisp.store")


@dataclass(slots=True)
class Outage:
    """Commits fail: since when (monotonic seconds) and the last error, as an operator reads it; ``told``:
    whether the ERROR line was logged (an interruption expected after a pause is logged as a WARNING first,
    and as the ERROR only if it goes on)."""

    reason: str
    since: float
    told: bool = True


#: The pause watch ticks this often; a tick this much later than due means the process did not run.
PAUSE_TICK_SECONDS: Final = 0.25
PAUSE_SECONDS: Final = 1.0
#: A failure this soon after the process ran again counts as caused by the pause.
AFTER_PAUSE_SECONDS: Final = 3.0


class Pauses:
    """Notices that the process did not run for a while (SIGSTOP and SIGCONT, a suspended VM or container, a
    loop blocked for seconds): a tick on the event loop every ``PAUSE_TICK_SECONDS`` that comes more than
    ``PAUSE_SECONDS`` late. The monotonic clock goes on while a process is stopped."""

    def __init__(self) -> None:
        self._ticked = time.monotonic()
        self._woke = float("-inf")
        self._handle: asyncio.TimerHandle | None = None

    def start(self) -> None:
        if self._handle is None:
            self._ticked = time.monotonic()
            self._handle = asyncio.get_running_loop().call_later(PAUSE_TICK_SECONDS, self._tick)

    def stop(self) -> None:
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None

    def _tick(self) -> None:
        now = time.monotonic()
        if now - self._ticked > PAUSE_TICK_SECONDS + PAUSE_SECONDS:
            self._woke = now
        self._ticked = now
        self._handle = asyncio.get_running_loop().call_later(PAUSE_TICK_SECONDS, self._tick)

    def paused_lately(self, now: float) -> bool:
        """Whether the process was paused just now (its tick is overdue: what runs now is the first thing after
        waking) or ran again within ``AFTER_PAUSE_SECONDS``."""
        if self._handle is None:
            return False
        return now - self._ticked > PAUSE_TICK_SECONDS + PAUSE_SECONDS or now - self._woke < AFTER_PAUSE_SECONDS


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


#: What a connection that broke raises: SQLAlchemy's and asyncpg's interface errors (closed, cut off: asyncpg's
#: "another operation is in progress" is its internal client error), a reset socket, a session ended.
_BROKEN: Final = (
    InterfaceError,
    OSError,
    asyncpg.InterfaceError,
    asyncpg.InternalClientError,
    asyncpg.PostgresConnectionError,
)


def connection_broke(exc: BaseException) -> bool:
    """Whether ``exc`` says the connection to the database broke or was left in a state it cannot go on from
    (reset, closed, invalidated; asyncpg's "another operation is in progress" after an operation was cut off),
    rather than that the database refused the statement: the next try opens a fresh connection."""
    if isinstance(exc, DBAPIError) and exc.connection_invalidated:
        return True
    seen: BaseException | None = exc
    for _ in range(8):  # SQLAlchemy's error, the driver adapter's, asyncpg's: a short chain
        if seen is None:
            return False
        if isinstance(seen, _BROKEN):
            return True
        original = getattr(seen, "orig", None)
        seen = original if isinstance(original, BaseException) and original is not seen else seen.__cause__
    return False


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


def failing(outage: Outage | None, reason: str, exc: BaseException, pauses: Pauses) -> Outage:
    """A commit failed (``reason``, from ``exc``): the outage it starts, or ``outage`` going on. The first
    failure is an ERROR, unless the process has just been paused (SIGSTOP, a suspended VM) and the error is
    its connection's: PostgreSQL may have ended the session meanwhile, and the next try reconnects. That is
    a WARNING, and becomes the ERROR if the next try fails too."""
    if outage is None:
        now = time.monotonic()
        outage = Outage(reason, now)
        if pauses.paused_lately(now) and connection_broke(exc):
            outage.told = False
            log.warning(
                "the database connection was interrupted while this process was paused (%s); reconnecting, "
                "rooms wait meanwhile",
                reason,
            )
        else:
            log.error("the database cannot be written: %s; rooms wait until it answers", reason)
    else:
        outage.reason = reason
        if not outage.told:
            outage.told = True
            log.error("the database cannot be written: %s; rooms wait until it answers", reason)
    return outage


def answered(outage: Outage | None) -> None:
    """A commit (or a probe) went through: ``outage``, if any, is over (the store holds none from now)."""
    if outage is not None:
        log.warning("the database answers again after %.1f s", time.monotonic() - outage.since)
