"""The store's writer: what the rooms hand it is committed in groups, on SQLite's fast path from a callback of
the event loop, else by the writer's task; a failed commit starts an outage that lasts until a commit or a probe
goes through. A SQLite connection that met a storage fault (``outage.storage_fault``: a file that could not be
opened or written) is closed, and the next try opens a fresh one.

Rooms describe what changed as operations (``operations.py``: ``SaveRoom``, ``AppendAction``, ...) and await
:meth:`Store.commit` (or ``submit`` with a callback) before they publish anything: a player is never told of a
move the database does not have. The writer takes every operation waiting at that moment, from every room,
into one transaction (group commit), so a busy server pays one commit for many actions. Operations of one
room keep their order. Taking a group and telling its rooms is ``group.py``; what a group writes is
``writes.py``; the engines and the writer's own SQLite connection ``connect.py``; SQLite's direct path
``sqlite_fast.py``; the WAL checkpoints ``checkpoints.py``; the outage ``outage.py``; the reads and retention
``reads.py``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sqlite3
import time
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any, Final

from sqlalchemy import Engine
from sqlalchemy.ext.asyncio import AsyncEngine, async_sessionmaker
from sqlalchemy.pool import PoolProxiedConnection

from crisp_server import tasks

from .checkpoints import Checkpoints, _Copier
from .connect import open_engines, open_writer
from .group import Submission, any_ops, fenced, skipped, take, tell, tell_all
from .leases import Fenced, Leases
from .operations import Op, Written
from .outage import Outage, Pauses, answered, describe, failing, storage_fault, unreachable
from .reads import Reads
from .sqlite_fast import _Sqlite
from .standings import TallyCache
from .writes import _apply_all, _Core

log = logging.getLogger("crisp.store")


def _never() -> bool:
    return False


class Timing:
    """How much the writer has done."""

    commits: int = 0
    ops: int = 0


#: The most submissions one group commit takes.
BATCH: Final = 1000


class Store(Checkpoints, Reads):
    """The writer: takes what the rooms submit, writes it in groups (through the SQLite fast path, SQLAlchemy or
    asyncpg), and tells each submission how its commit went, in order. A group that SQLite's fast path can
    write at once is written by a callback of the loop (``_flush``); everything else by the writer's task
    (``_write_loop``), which then takes what comes after it too. It inherits the checkpoints
    (``checkpoints.py``) and the reads (``reads.py``)."""

    def __init__(
        self,
        url: str,
        *,
        idle_in_transaction_ms: int | None = None,
        commit_interval: float = 0.0,
        application_name: str | None = None,
        wal_limit: int = 0,
    ) -> None:
        self.url = url
        # SQLite: the WAL's limit in bytes (0: none), past which writes wait while checkpoints fail.
        self._init_checkpoints(wal_limit)
        #: Seconds from the start of one group commit to the earliest start of the next (see ``_write_loop``).
        self.commit_interval = commit_interval
        self._last_commit = float("-inf")  # the loop's clock when the last group commit started
        engines = open_engines(url, idle_in_transaction_ms=idle_in_transaction_ms, application_name=application_name)
        self.is_sqlite = engines.is_sqlite
        # The SQLite file, if the database is one (not in memory).
        self._sqlite_path = engines.sqlite_path
        self.engine: AsyncEngine = engines.engine
        self.sessions = async_sessionmaker(self.engine, expire_on_commit=False)
        # Writes to SQLite go through the plain sqlite3 driver, on the event loop: a group commit to a WAL
        # with synchronous=NORMAL takes tens of microseconds. (aiosqlite hops to its thread for every
        # statement, and under load every hop waited for the GIL: commits took 5-20 ms.)
        self._sync_engine: Engine | None = engines.sync_engine
        self._fast_path = False  # whether SQLite's fast path is on (from start() to close())
        # The fast path's connection, held by the writer; closed after a storage fault (``_discard_fast``),
        # and opened again by the next write or probe (``_fast_connection``).
        self._raw: PoolProxiedConnection | None = None
        self._fast: _Sqlite | None = None
        # Checkpoints (copying the WAL into the database file, with an fsync) take milliseconds to tens of
        # milliseconds: the writer's connection never runs them; the checkpoint process and a thread do
        # (see checkpoint()).
        self._checkpoint_path: str | None = None
        self._checkpointer: sqlite3.Connection | None = None
        self._copier: _Copier | None = None  # the first pass, in a process of its own
        self._checkpoints: asyncio.Task[None] | None = None
        self._since_checkpoint = 0
        # What the rooms submitted and the writer has not taken yet, and the writer's wait for more.
        self._pending: deque[Submission] = deque()
        self._wakeup: asyncio.Future[None] | None = None
        # On SQLite, a group commit that can take the fast path runs from a plain callback of the loop
        # (``_flush``), without a step of the writer's task (issue 19); the task takes over whatever cannot:
        # a resume, a fence, the write lock held, a failure. ``_flush_at`` is that callback when scheduled,
        # ``_task_busy`` whether the task has work in hand (then it, not a callback, takes what comes next,
        # so that every submission is still done in the order it came).
        self._flush_at: asyncio.Handle | None = None
        self._task_busy = False
        # Held by every write transaction. SQLite's group commits run on the event loop: one that met the
        # write lock of a transaction going on through aiosqlite (the retention purge) would wait with
        # the loop stopped, and that transaction could never finish.
        self._writing = asyncio.Lock()
        self._tallies = TallyCache()
        self._checkpointing = asyncio.Lock()  # held by each checkpoint (see ``checkpoint``)
        self._writer: asyncio.Task[None] | None = None
        self.timing = Timing()
        self._written: Written = {}  # per room, as last committed
        self.on_commit: list[Any] = []  # callbacks(seconds, ops) for metrics
        self.on_failure: list[Callable[[str], None]] = []  # callbacks(reason) for metrics, per failed commit
        #: Set while commits fail: since when and why (``/healthz``).
        self.outage: Outage | None = None
        #: In a cluster: this node's leases; every group commit checks the fences of its rooms.
        self.leases: Leases | None = None
        #: Whether the process was paused a moment ago (what a failed commit's log line says depends on it).
        self._pauses = Pauses()

    async def start(self) -> None:
        if self._sync_engine is not None and not self._fast_path:
            self._fast_connection()
            self._fast_path = True
            if self._sqlite_path is not None:
                await self._start_checkpoints(self._sqlite_path)
        if self._writer is None:
            self._writer = asyncio.get_running_loop().create_task(self._write_loop(), name="store writer")
        self._pauses.start()

    async def close(self) -> None:
        self._pauses.stop()
        if self._writer is not None:
            # Let what is queued be written first.
            while self._pending:
                await asyncio.sleep(0.01)
            await tasks.stop(self._writer)
            self._writer = None
        if self._flush_at is not None:
            self._flush_at.cancel()
            self._flush_at = None
        await self._stop_checkpoints()
        self._fast_path = False
        if self._raw is not None:
            self._raw.close()
            self._raw = self._fast = None
        await self.engine.dispose()
        if self._sync_engine is not None:
            self._sync_engine.dispose()

    def submit(
        self,
        ops: Sequence[Op],
        done: Callable[[BaseException | None], None],
        skip: Callable[[], bool] = _never,
        fence: tuple[str, int] | None = None,
    ) -> None:
        """Write ``ops`` in order, grouped with other rooms' writes, then call ``done`` with ``None`` or what
        went wrong. Submissions are done in the order they came (one with no ops just waits its turn);
        one whose ``skip()`` is true by then is dropped (its room stopped after a failed commit). With a
        ``fence`` (a cluster's room lease), the ops are written only if this node still holds that lease;
        else ``done`` gets ``Fenced`` and nothing of them is written."""
        self._pending.append(Submission(ops, done, skip, fence))
        if self._fast_path and not self._task_busy:
            if self._flush_at is None:
                self._flush_at = asyncio.get_running_loop().call_soon(self._ripen)
            return
        self._wake_task()

    def _wake_task(self) -> None:
        wakeup = self._wakeup
        if wakeup is not None and not wakeup.done():
            wakeup.set_result(None)

    def _ripen(self) -> None:
        """Let the loop run what is ready once more before the commit, as the task does (``_write_loop``)."""
        self._flush_at = asyncio.get_running_loop().call_soon(self._flush, False)

    def _flush(self, waited: bool) -> None:
        """A group commit on SQLite's fast path, from a callback of the loop: what ``_write_loop`` does for
        one batch when nothing is in the way, without its task's steps. Anything else goes to the task."""
        self._flush_at = None
        pending = self._pending
        if not pending or not self._fast_path or self._task_busy:
            return
        loop = asyncio.get_running_loop()
        # Like the task, on a busy server: what comes until ``commit_interval`` after the last commit started.
        wait = 0.0 if waited else self._wait_before_commit(loop.time())
        if wait > 0 and any_ops(pending):
            self._flush_at = loop.call_later(wait, self._flush, True)
            return
        batch, ops = take(pending, BATCH)
        if ops and not self._sync_now(batch):
            pending.extendleft(reversed(batch))  # first in line again, for the task
            self._hand_to_task()
            return
        if ops:
            self._last_commit = loop.time()
            start = time.perf_counter()
            try:
                self._write_fast(ops, self._written)
            except Exception as exc:
                if self._group_failed(batch, exc):
                    self._parts_alone(batch)
                batch = []  # each room has been told
            else:
                self._committed(time.perf_counter() - start, len(ops))
        tell_all(batch)
        if pending and self._flush_at is None and not self._task_busy:
            self._flush_at = loop.call_soon(self._ripen)

    def _group_failed(self, batch: Sequence[Submission], exc: Exception) -> bool:
        """A group commit failed (and was rolled back): the outage starts. Whether its parts are to be written
        one by one: not if the database is down, full or locked (every part would fail the same way, each one
        perhaps after a timeout): then every room is told now, suspended, and back when it answers."""
        self._written.clear()  # what it believed written may have been rolled back
        self._failed(exc)
        if unreachable(exc):
            for item in batch:
                tell(item, exc)
            return False
        log.warning("a group commit failed (%s); writing its parts one by one", describe(exc))
        return True

    def _parts_alone(self, batch: Sequence[Submission]) -> None:
        """``_flush``'s failed group, each part in its own transaction on the same fast path (no lock or fence
        is in the way: ``_sync_now``), as ``_write_loop`` writes them."""
        for item in batch:
            if skipped(item):
                continue  # its room stopped at an earlier part's failure
            try:
                if item.ops:
                    self._write_fast(item.ops, {})
            except Exception as part_exc:
                tell(item, part_exc)
            else:
                tell(item, None)

    def _hand_to_task(self) -> None:
        self._task_busy = True
        self._wake_task()

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
        loop = asyncio.get_running_loop()
        pending = self._pending
        while True:
            if not pending:
                self._task_busy = False
                self._wakeup = loop.create_future()
                await self._wakeup
                self._wakeup = None
            self._task_busy = True
            # Let the loop run what is ready once more: the rooms handling messages that arrived with this
            # one submit too, and are written in the same commit (a commit costs more than its rows).
            await asyncio.sleep(0)
            # And on a busy server, what comes until ``commit_interval`` after the last commit started: each
            # commit costs tens of microseconds whatever it holds (a transaction begun and ended, its locks,
            # the write loop's round), so fewer, larger commits leave more of the core to the tables (issue
            # 19). A store that was idle for that long commits at once: nobody waits on a quiet server.
            wait = self._wait_before_commit(loop.time())
            if wait > 0 and any_ops(pending):
                await asyncio.sleep(wait)
            batch, ops = take(pending, BATCH)
            if ops:
                self._last_commit = loop.time()
            start = time.perf_counter()
            refused: list[Submission] = []
            try:
                if ops:
                    if self._sync_now(batch):
                        # SQLite with nothing in the way: written here, without a coroutine per step.
                        self._write_fast(ops, self._written)
                    else:
                        refused = await self._commit_batch(batch, self._written)
            except Exception as exc:
                if not self._group_failed(batch, exc):
                    continue
                for item in batch:
                    if skipped(item):
                        continue  # its room stopped at an earlier part's failure
                    try:
                        lost = await self._commit_batch([item], {}) if item.ops else []
                    except Exception as part_exc:
                        tell(item, part_exc)
                    else:
                        tell(item, Fenced("this node no longer holds the room") if lost else None)
                continue
            if ops:
                self._committed(time.perf_counter() - start, len(ops))
            out = {id(item) for item in refused}
            for item in batch:
                tell(item, Fenced("this node no longer holds the room") if id(item) in out else None)

    def _committed(self, seconds: float, ops: int) -> None:
        """A group commit of ``ops`` operations went through in ``seconds``."""
        self.timing.commits += 1
        self.timing.ops += ops
        for callback in self.on_commit:
            callback(seconds, ops)
        self._answered()

    def _wait_before_commit(self, now: float) -> float:
        """Seconds to wait before the next group commit starts (0: at once), at the loop's time ``now``."""
        return max(0.0, self._last_commit + self.commit_interval - now)

    def _failed(self, exc: BaseException) -> None:
        """A commit failed: the store is in an outage until one succeeds (``outage`` says since when and why).
        It is an ERROR, unless the process has just been paused (SIGSTOP, a suspended VM) and the error is
        its connection's: PostgreSQL may have ended the session meanwhile, and the next try reconnects. That
        is a WARNING, and becomes the ERROR if the next try fails too."""
        reason = describe(exc)
        self.outage = failing(self.outage, reason, exc, self._pauses)
        for callback in self.on_failure:
            callback(reason)

    def _answered(self) -> None:
        """A commit (or a probe) went through: the outage, if any, is over."""
        answered(self.outage)
        self.outage = None

    async def probe(self) -> None:
        """An empty write transaction (SQLite: its write lock is taken; PostgreSQL: a connection from the pool,
        checked): raises if the database does not answer. Ends the outage if it does. (It writes nothing: a
        full disk is only seen by the next commit.)"""
        try:
            async with self._writing:
                if self._fast_path:
                    self._refuse_when_full()
                    fast = self._fast_connection()
                    try:
                        fast.dbapi.execute("BEGIN IMMEDIATE")
                        fast.dbapi.rollback()
                    except BaseException as exc:
                        self._fast_failed(fast, exc)
                        raise
                else:
                    await self._write([], {})
        except Exception as exc:
            self._failed(exc)
            raise
        self._answered()

    async def _commit_batch(self, batch: Sequence[Submission], written: Written) -> list[Submission]:
        """Write the ops of ``batch`` in one transaction. In a cluster, first check the leases of their rooms
        in the same transaction (``Leases.fence``): the ops of a room this node no longer holds are left out,
        and those submissions are returned (refused)."""
        leases = self.leases
        held = {item.fence for item in batch if item.fence is not None and item.ops}
        if leases is None or not held:
            await self._transaction([op for item in batch for op in item.ops], written)
            return []

        def run(conn: Any) -> list[Submission]:
            still = leases.fence(conn, held)
            refused = [item for item in batch if item.fence is not None and item.ops and item.fence not in still]
            out = {id(item) for item in refused}
            kept = [op for item in batch if id(item) not in out for op in item.ops]
            if kept:
                _apply_all(_Core(conn), kept, written)
            for item in refused:
                for op in item.ops:
                    written.pop(getattr(op, "room_id", ""), None)
            return refused

        async with self._writing, self.engine.begin() as aconn:
            return await aconn.run_sync(run)

    async def _transaction(self, ops: Sequence[Op], written: Written) -> None:
        """Apply ``ops`` in one transaction: SQLite synchronously, PostgreSQL through asyncpg."""
        async with self._writing:
            await self._write(ops, written)

    def _sync_now(self, batch: Sequence[Submission]) -> bool:
        """Whether ``batch`` can be written at once, synchronously: the fast path, with no transaction going on
        (a checkpoint's second pass, a purge) and no lease to check."""
        if self._writing.locked() or (self.leases is not None and fenced(batch)):
            return False
        return self._fast_path

    def _write_fast(self, ops: Sequence[Op], written: Written) -> None:
        """Write ``ops`` in one transaction on SQLite's fast path (the caller checked that it may); refused
        (``WalOverLimit``, an outage) while the WAL is over its limit and cannot be copied."""
        self._refuse_when_full()
        fast = self._fast_connection()
        try:
            _apply_all(fast, ops, written)
            fast.dbapi.commit()
            self._since_checkpoint += 1
            if self.checkpoint_trouble is not None:
                self._committed_in_trouble()
        except BaseException as exc:
            self._fast_failed(fast, exc)
            raise

    def _fast_connection(self) -> _Sqlite:
        """The fast path's connection: the one the writer holds, or a fresh one if a storage fault closed it
        (opening one can fail too: the caller's write fails then, as a commit would)."""
        fast = self._fast
        if fast is not None:
            return fast
        assert self._sync_engine is not None
        raw, fast = open_writer(self._sync_engine, self._sqlite_path, self.wal_cut_back)
        self._raw, self._fast = raw, fast
        return fast

    def _fast_failed(self, fast: _Sqlite, exc: BaseException) -> None:
        """A statement on the fast path's connection failed: its transaction is rolled back, and after a storage
        fault the connection is closed (``_discard_on_storage_fault`` says why; an in-memory database is
        never closed: it would be gone)."""
        if self._sqlite_path is None or not storage_fault(exc) or fast is not self._fast:
            fast.dbapi.rollback()
            return
        raw, self._raw, self._fast = self._raw, None, None
        log.info("closing the SQLite connection that failed (%s); the next try opens a fresh one", describe(exc))
        with contextlib.suppress(sqlite3.Error):
            fast.dbapi.rollback()
        if raw is not None:
            with contextlib.suppress(Exception):  # it is gone either way
                raw.invalidate(exc)

    async def _write(self, ops: Sequence[Op], written: Written) -> None:
        if self._fast_path:
            self._write_fast(ops, written)
        elif self._sync_engine is not None:
            with self._sync_engine.begin() as conn:
                _apply_all(_Core(conn), ops, written)
        else:
            async with self.engine.begin() as aconn:
                await aconn.run_sync(lambda conn: _apply_all(_Core(conn), ops, written))
