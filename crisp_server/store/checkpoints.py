"""The checkpointer (SQLite): copies the WAL into the database file every second, off the event loop, so
that the WAL starts over instead of growing. The bulk of each pass runs in a process of its own at idle
priority; the short second pass, which holds commits back, in a thread. A pass that meets a storage fault
(``outage.storage_fault``) closes its connection: the next one opens the files afresh.

Checkpoints that fail (the database file immutable or read-only, a full disk) leave every commit in the WAL,
which then grows. The store says so (``checkpoint_trouble``: ``/healthz`` answers "degraded", the metrics
count the failures and show the WAL's size), tries again every second, and once the WAL is larger than its
limit (``CRISP_WAL_LIMIT_MB``) while it cannot be wholly copied, refuses every write (``wal_full``): the
rooms are suspended as in any outage, and come back once a checkpoint has copied the whole WAL.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sqlite3
import sys
import time
from typing import Final, cast

from crisp_server import tasks
from crisp_server.store import sqlite_fast
from crisp_server.store.outage import Outage, describe, storage_fault

log = logging.getLogger("crisp.store")

#: How often the WAL is copied into the SQLite database file (when something was written).
CHECKPOINT_SECONDS = 1.0
#: How long a checkpoint's second pass may hold commits back. Its fsyncs usually take a few milliseconds,
#: but a busy disk can take hundreds: then commits go on and the WAL starts over at a later checkpoint.
CHECKPOINT_HOLD_SECONDS = 0.015
#: While checkpoints fail, a line says so at most this often (each second's failure would fill the log).
TROUBLE_LOG_SECONDS: Final = 60.0
#: The WAL is cut back to at most this part of its limit when it starts over (``journal_size_limit``; at most
#: ``sqlite_fast.WAL_SIZE_LIMIT``), so that its file's size says how much it holds once it grows past that.
WAL_CUT_BACK_PART: Final = 4


#: One checkpoint pass: copies the frames the WAL holds as it begins, without waiting for anyone.
_PASSIVE = "PRAGMA wal_checkpoint(PASSIVE)"
#: The program of the checkpoint process (see ``_Copier``): one pass per line read, answered with SQLite's
#: three numbers, or with ``E`` and the error in a line. After an error its connection is closed and the next
#: pass opens a fresh one: a connection that opened the WAL while it could not be written stays read-only.
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
db = None
for _ in sys.stdin:
    try:
        if db is None:
            db = sqlite3.connect(sys.argv[1], timeout=float(sys.argv[2]))
        answer = db.execute("{_PASSIVE}").fetchone()
    except sqlite3.Error as exc:
        if db is not None:
            db.close()
            db = None
        print("E", " ".join(str(exc).split()), flush=True)
    else:
        print(*answer, flush=True)
"""


class WalOverLimit(sqlite3.OperationalError):
    """A write refused: the WAL is over its limit and cannot be wholly copied into the database file."""


def _megabytes(size: int) -> str:
    return f"{size / 2**20:.1f} MB"


class CopyFailed(sqlite3.OperationalError):
    """The checkpoint process's pass failed (a file that cannot be written, a full disk): SQLite's error, as
    it told it."""


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
                str(sqlite_fast.BUSY_SECONDS),
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
        if line.startswith(b"E "):
            raise CopyFailed(line[2:].decode(errors="replace").strip())
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
            async with asyncio.timeout(sqlite_fast.BUSY_SECONDS):
                await process.wait()
        except TimeoutError:
            process.kill()
            await process.wait()


class Checkpoints:
    """The store's checkpoint part (``Store`` inherits it): the periodic loop and ``checkpoint()``, started and
    stopped with the store (``_start_checkpoints`` sets ``_checkpoint_path``, the database file, ``None``: no
    checkpoints, and ``_copier``). The store counts commits since the last checkpoint in ``_since_checkpoint``;
    ``_writing`` is the lock every write transaction holds.
    ``_checkpointer`` is the second pass's ``sqlite3`` connection, opened by the first pass that needs it."""

    _checkpoint_path: str | None
    _checkpointer: sqlite3.Connection | None
    _copier: _Copier | None
    _checkpoints: asyncio.Task[None] | None
    _since_checkpoint: int
    _writing: asyncio.Lock
    _checkpointing: asyncio.Lock
    #: The WAL's limit in bytes (0: none): past it, while it cannot be wholly copied, writes are refused.
    wal_limit: int
    #: Set while checkpoints fail: since when (monotonic) and the last error (``/healthz``: "degraded").
    checkpoint_trouble: Outage | None
    #: Checkpoints that failed since the start (metrics).
    checkpoint_failures: int
    #: The WAL file's size when last looked at (after each checkpoint; metrics).
    wal_bytes: int
    #: Set (why) while writes are refused because the WAL is over its limit and cannot be wholly copied.
    wal_full: str | None
    _trouble_logged: float

    def _init_checkpoints(self, wal_limit: int) -> None:
        self.wal_limit = wal_limit
        self.checkpoint_trouble = None
        self.checkpoint_failures = 0
        self.wal_bytes = 0
        self.wal_full = None
        self._trouble_logged = float("-inf")

    async def _start_checkpoints(self, path: str) -> None:
        """Checkpoints of the SQLite file ``path`` from now on: its checkpoint process and the periodic loop."""
        self._checkpoint_path = path
        self.wal_bytes = self._wal_size()
        self._copier = _Copier(path)
        try:
            await self._copier.start()
        except OSError:
            log.exception("the checkpoint process did not start; checkpoints will copy in a thread")
        self._checkpoints = asyncio.get_running_loop().create_task(self._checkpoint_loop(), name="store checkpoints")

    async def _stop_checkpoints(self) -> None:
        """The loop stopped, a last checkpoint, and the connection and process of the checkpoints closed."""
        if self._checkpoints is not None:
            await tasks.stop(self._checkpoints)
            self._checkpoints = None
        if self._checkpoint_path is not None:
            try:
                await self.checkpoint()
            except sqlite3.Error as exc:  # the files cannot be written: what the WAL holds is safe in it
                log.warning("the last WAL checkpoint failed (%s)", describe(exc))
            self._checkpoint_path = None
        if self._checkpointer is not None:
            self._checkpointer.close()
            self._checkpointer = None
        if self._copier is not None:
            await self._copier.close()
            self._copier = None

    def wal_cut_back(self) -> int:
        """The size (bytes) the WAL file is cut back to when it starts over: SQLite's ``journal_size_limit``."""
        if not self.wal_limit:
            return sqlite_fast.WAL_SIZE_LIMIT
        return min(sqlite_fast.WAL_SIZE_LIMIT, self.wal_limit // WAL_CUT_BACK_PART)

    def checkpoint_problem(self) -> str | None:
        """Why the store is degraded (``/healthz`` "degraded", still 200): checkpoints fail, and for how long;
        ``None`` while they work."""
        trouble = self.checkpoint_trouble
        if trouble is None:
            return None
        seconds = time.monotonic() - trouble.since
        limit = f"at {_megabytes(self.wal_limit)} writes wait for them" if self.wal_limit else "it has no limit"
        return (
            f"WAL checkpoints fail ({trouble.reason}) for {seconds:.0f} s: the WAL grows, "
            f"{_megabytes(self.wal_bytes)} now; {limit}"
        )

    async def _checkpoint_loop(self) -> None:
        while True:
            await asyncio.sleep(CHECKPOINT_SECONDS)
            # While checkpoints fail (or the WAL is over its limit) each second tries again, written to or not:
            # nothing else would notice that the files can be written again.
            if self._since_checkpoint or self.checkpoint_trouble is not None or self.wal_full is not None:
                try:
                    await self.checkpoint()
                except sqlite3.Error:  # a full disk, a read-only file, a lock held too long: no bug of ours
                    pass
                except Exception:
                    log.exception("a WAL checkpoint failed; the next one will try again")

    def _wal_size(self) -> int:
        assert self._checkpoint_path is not None
        try:
            return os.stat(self._checkpoint_path + "-wal").st_size
        except OSError:
            return 0

    def _checkpoint_failed(self, exc: BaseException) -> None:
        """A checkpoint failed: the store is degraded, and refuses writes once the WAL is over its limit."""
        reason = describe(exc)
        now = time.monotonic()
        self.checkpoint_failures += 1
        self.wal_bytes = self._wal_size()
        trouble = self.checkpoint_trouble
        if trouble is None:
            trouble = self.checkpoint_trouble = Outage(reason, now)
            self._trouble_logged = now
            log.warning(
                "a WAL checkpoint failed (%s); the WAL grows until one works (%s now), tried again every second",
                reason,
                _megabytes(self.wal_bytes),
            )
        else:
            trouble.reason = reason
            if now - self._trouble_logged >= TROUBLE_LOG_SECONDS:
                self._trouble_logged = now
                log.warning(
                    "WAL checkpoints still fail after %.0f s (%s); the WAL holds %s",
                    now - trouble.since,
                    reason,
                    _megabytes(self.wal_bytes),
                )
        self._limit_wal(copied_all=False)

    def _checkpoint_done(self, answer: tuple[int, int, int]) -> None:
        """A checkpoint went through: SQLite's (busy, frames in the WAL, frames copied)."""
        _busy, frames, copied = answer
        self.wal_bytes = self._wal_size()
        trouble, self.checkpoint_trouble = self.checkpoint_trouble, None
        if trouble is not None:
            log.warning(
                "WAL checkpoints work again after %.1f s (%d failed)",
                time.monotonic() - trouble.since,
                self.checkpoint_failures,
            )
        self._limit_wal(copied_all=copied >= frames)

    def _limit_wal(self, *, copied_all: bool) -> None:
        """Refuse writes while the WAL is over its limit and not wholly copied; take them again once it is."""
        if copied_all:
            if self.wal_full is not None:
                self.wal_full = None
                log.warning("the WAL is copied into the database file again; writes go on")
            return
        if self.wal_full is None and self.wal_limit and self.wal_bytes > self.wal_limit:
            trouble = self.checkpoint_trouble
            why = f"checkpoints fail: {trouble.reason}" if trouble is not None else "a reader holds it"
            self.wal_full = (
                f"the WAL holds {_megabytes(self.wal_bytes)}, over its limit of {_megabytes(self.wal_limit)} "
                f"(CRISP_WAL_LIMIT_MB), and cannot be copied into the database file ({why})"
            )
            log.error("writes wait: %s", self.wal_full)

    def _committed_in_trouble(self) -> None:
        """A commit went through while checkpoints fail: it grew the WAL, which is measured now (a second of
        commits until the next checkpoint could take it far past its limit)."""
        if self.checkpoint_trouble is not None and self._checkpoint_path is not None:
            self.wal_bytes = self._wal_size()
            self._limit_wal(copied_all=False)

    def _refuse_when_full(self) -> None:
        """Raise ``WalOverLimit`` while the WAL is over its limit (before any write)."""
        if self.wal_full is not None:
            raise WalOverLimit(self.wal_full)

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
        if self._checkpoint_path is None:
            return (0, 0, 0)
        # One checkpoint at a time: the checkpoint process answers one question at a time on its pipe (two
        # callers at once read each other's answer: both failed, and the process was killed).
        async with self._checkpointing:
            self._since_checkpoint = 0
            try:
                await self._bulk_pass()
                async with self._writing:
                    rest = asyncio.ensure_future(asyncio.to_thread(self._checkpoint_pass))
                    await asyncio.wait({rest}, timeout=CHECKPOINT_HOLD_SECONDS)
                answer = await rest
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                self._checkpoint_failed(exc)
                raise
            self._checkpoint_done(answer)
            return answer

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
        """One pass on the checkpointer's own connection (in a thread: one at a time, see ``checkpoint``)."""
        assert self._checkpoint_path is not None
        db = self._checkpointer
        if db is None:
            db = self._checkpointer = sqlite3.connect(
                self._checkpoint_path, timeout=sqlite_fast.BUSY_SECONDS, check_same_thread=False
            )
        try:
            return cast(tuple[int, int, int], db.execute(_PASSIVE).fetchone())
        except sqlite3.Error as exc:
            if storage_fault(exc):
                self._checkpointer = None
                db.close()
            raise
