"""The writer when the database cannot be written: SQLite locked beyond the busy timeout by another process's
transaction (one of the outages of issue 15), on the direct sqlite3 path the group commits take; and storage
faults that come and go (an immutable WAL or database file, a full disk, permissions that deny the server's
user its writes), after which the store writes again without a restart.

Every submission of the failed group is told the error at once (no part is tried again on its own: each
would wait out the busy timeout too, with the event loop stopped); the store is in an outage, with the
reason, until a commit or a probe goes through; what was rolled back is not believed written. A connection
that met a storage fault is closed: one opened while the files could not be written (SQLAlchemy's pool
opens one for a resume, say) opened them read-only, and would refuse every write after the fault."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import pwd
import shutil
import sqlite3
import tempfile
import time
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path

import asyncpg
import pytest
from sqlalchemy.exc import IntegrityError, InternalError, OperationalError

from crisp_server.engine import Timed
from crisp_server.engine.actions import Draw
from crisp_server.store.checkpoints import WalOverLimit
from crisp_server.store.migrate import upgrade
from crisp_server.store.operations import AddResume, AppendAction, Op, SaveRoom, StartGame, StartRound, Written
from crisp_server.store.outage import connection_broke, describe, storage_fault, unreachable
from crisp_server.store.store import Store
from tests import storage_faults as faults
from tests.conftest import IN_CI
from tests.store.test_sqlite_fast import OPTIONS, _seats, _started


def _room(i: int, phase: str = "lobby") -> SaveRoom:
    return SaveRoom(f"r{i}", f"C{i:05d}", "l", phase, 0, OPTIONS, _seats("Ana", "Ben"))


async def test_a_locked_database_fails_the_whole_group_once_and_the_store_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("crisp_server.store.sqlite_fast.BUSY_SECONDS", 0.2)
    path = tmp_path / "locked.db"
    store = await _started(path)
    writes: list[int] = []
    real = store._write_fast  # every SQLite commit goes through it, at once or after waiting for the lock

    def counted(ops: Sequence[Op], written: Written) -> None:
        writes.append(len(ops))
        real(ops, written)

    store._write_fast = counted  # type: ignore[method-assign]
    reasons: list[str] = []
    store.on_failure.append(reasons.append)
    other = sqlite3.connect(path, isolation_level=None)
    try:
        await store.commit([_room(1)])
        assert store.outage is None

        other.execute("BEGIN IMMEDIATE")  # another process holds the write lock
        writes.clear()
        results = await asyncio.gather(*(store.commit([_room(i, "play")]) for i in range(1, 4)), return_exceptions=True)
        assert all(isinstance(r, sqlite3.OperationalError) for r in results), results
        assert writes == [3], "one try for the group, no part tried again alone"
        assert reasons == ["OperationalError: database is locked"]
        assert store.outage is not None
        assert store.outage.reason == "OperationalError: database is locked"
        with pytest.raises(sqlite3.OperationalError):
            await store.probe()
        assert store.outage is not None

        other.execute("ROLLBACK")
        await store.probe()
        assert store.outage is None
        # What the failed group held was rolled back: the room is written again in full, not as "known".
        await store.commit([_room(1, "play")])
        stored = await store.load_room("r1")
        assert stored is not None
        assert stored.phase == "play"
        assert [s.name for s in stored.seats] == ["Ana", "Ben"]
        assert await store.load_room("r2") is None, "never written: nothing to come back to"
    finally:
        other.close()
        await store.close()


def test_unreachable_tells_an_outage_from_rows_refused() -> None:
    assert unreachable(sqlite3.OperationalError("database or disk is full"))
    assert unreachable(ConnectionRefusedError(111, "Connection refused"))
    assert unreachable(OperationalError("COMMIT", {}, sqlite3.OperationalError("disk I/O error")))
    assert not unreachable(IntegrityError("INSERT", {}, sqlite3.IntegrityError("UNIQUE constraint failed")))
    assert not unreachable(ValueError("a bug"))
    locked = OperationalError("INSERT ... (long)", {"a": 1}, sqlite3.OperationalError("database is locked"))
    assert describe(locked) == "OperationalError: database is locked"


def _interrupted() -> InternalError:
    """What a commit of a node woken after SIGSTOP meets: asyncpg's connection was cut off mid-operation."""
    cut = asyncpg.InternalClientError("cannot switch to state 12; another operation (2) is in progress")
    return InternalError("COMMIT", {}, cut)


def test_a_broken_connection_is_told_from_a_refusal() -> None:
    assert connection_broke(_interrupted())
    assert connection_broke(OperationalError("SELECT 1", {}, ConnectionResetError(104, "reset")))
    assert connection_broke(asyncpg.ConnectionDoesNotExistError("connection was closed in the middle of operation"))
    assert not connection_broke(sqlite3.OperationalError("database or disk is full"))
    assert not connection_broke(IntegrityError("INSERT", {}, sqlite3.IntegrityError("UNIQUE constraint failed")))


async def test_a_connection_interrupted_by_a_pause_is_a_warning_and_an_error_only_if_it_goes_on(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A process paused (SIGSTOP; here its loop blocked for longer than a pause) finds its connection cut off
    when it runs again: expected, a WARNING that says so. If the next try fails too, it is the ERROR."""
    store = await _started(tmp_path / "paused.db")
    caplog.set_level(logging.INFO, "crisp.store")
    try:
        store._failed(_interrupted())  # not after a pause: an error
        assert [r.levelname for r in caplog.records] == ["ERROR"]
        store._answered()
        caplog.clear()

        await asyncio.sleep(0.3)
        time.sleep(1.6)  # the process does not run
        store._failed(_interrupted())
        assert [(r.levelname, r.getMessage()) for r in caplog.records] == [
            (
                "WARNING",
                "the database connection was interrupted while this process was paused (InternalClientError: "
                "cannot switch to state 12; another operation (2) is in progress); reconnecting, rooms wait "
                "meanwhile",
            )
        ]
        assert store.outage is not None
        await asyncio.sleep(0.5)
        store._failed(OperationalError("SELECT 1", {}, ConnectionRefusedError(111, "Connection refused")))
        assert [r.levelname for r in caplog.records] == ["WARNING", "ERROR"]
        assert "the database cannot be written" in caplog.records[-1].getMessage()
        store._answered()
        caplog.clear()

        time.sleep(1.6)  # paused again, but what fails is not the connection: an error as ever
        store._failed(OperationalError("COMMIT", {}, sqlite3.OperationalError("database or disk is full")))
        assert [r.levelname for r in caplog.records] == ["ERROR"]
    finally:
        store._answered()
        await store.close()


def test_storage_faults_are_told_by_their_sqlite_codes() -> None:
    readonly = sqlite3.OperationalError("attempt to write a readonly database")
    readonly.sqlite_errorcode = 8
    moved = sqlite3.OperationalError("attempt to write a readonly database")
    moved.sqlite_errorcode = 8 | (4 << 8)  # SQLITE_READONLY_DBMOVED
    write = sqlite3.OperationalError("disk I/O error")
    write.sqlite_errorcode = 10 | (3 << 8)  # SQLITE_IOERR_WRITE
    locked = sqlite3.OperationalError("database is locked")
    locked.sqlite_errorcode = 5
    assert storage_fault(readonly)
    assert storage_fault(moved)
    assert storage_fault(write)
    assert storage_fault(OperationalError("COMMIT", {}, write)), "as SQLAlchemy wraps it"
    assert not storage_fault(locked), "another connection's lock: this one is fine"
    assert not storage_fault(sqlite3.OperationalError("no code"))
    assert not storage_fault(ValueError("a bug"))


# -- storage faults that come and go ---------------------------------------------------------------------------

FAULTS = ("immutable WAL", "immutable database", "full disk", "permissions deny a non-root user")
#: The faults that stop a file from being opened (or its mode changed) but leave an open connection writing.
OPENING_ONLY = ("immutable database", "permissions deny a non-root user")


def _cannot(fault: str) -> str | None:
    """Why this process cannot make ``fault``, if it cannot."""
    if fault.startswith("immutable") and not faults.can_chattr():
        return "chattr +i needs root and chattr"
    if fault == "full disk" and not faults.can_mount():
        return "mounting a small tmpfs needs root"
    if fault.startswith("permissions") and not faults.can_be_non_root():
        return f"running as the user {faults.NON_ROOT} needs root and that user"
    return None


@contextlib.asynccontextmanager
async def _faulty(fault: str, tmp_path: Path) -> AsyncIterator[tuple[Path, Callable[[], None], Callable[[], None]]]:
    """A folder for the database, and what makes ``fault`` on its files and what ends it."""
    folder = tmp_path / "data"
    stack = contextlib.ExitStack()
    with stack:
        if fault.startswith("immutable"):
            folder.mkdir()
            target = folder / ("db.sqlite3-wal" if fault == "immutable WAL" else "db.sqlite3")
            stack.callback(lambda: faults.chattr(target, False) if target.exists() else None)
            yield folder, lambda: faults.chattr(target, True), lambda: faults.chattr(target, False)
        elif fault == "full disk":
            # 2 MB: the migrated database and its WAL take a few hundred KB.
            assert faults.mount_tmpfs(folder, "2m")
            stack.callback(faults.unmount, folder)
            fillers: list[Path] = []
            yield folder, lambda: fillers.append(faults.fill(folder)), lambda: fillers.pop().unlink()
        else:
            # The non-root user must reach the folder: pytest's tmp_path is root's alone (mode 0700).
            folder = Path(tempfile.mkdtemp(prefix="crisp-perm-"))
            stack.callback(shutil.rmtree, folder, True)
            user = pwd.getpwnam(faults.NON_ROOT)
            os.chown(folder, user.pw_uid, user.pw_gid)
            stack.enter_context(faults.as_non_root())  # the store, its threads and its process: that user

            def deny() -> None:
                for path in folder.iterdir():
                    path.chmod(0o444)
                folder.chmod(0o555)

            def allow() -> None:
                folder.chmod(0o755)
                for path in folder.iterdir():
                    path.chmod(0o644)

            stack.callback(allow)
            yield folder, deny, allow


DECK = tuple(f"{r}{s}" for s in "SHDC" for r in "A23456789TJQK")


def _action(seq: int) -> AppendAction:
    return AppendAction("g1", 0, seq, Timed(100 * seq, Draw(seq % 2)))


@pytest.mark.parametrize("fault", FAULTS)
async def test_the_store_writes_again_once_a_storage_fault_is_over(
    tmp_path: Path, fault: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """While the fault lasts, the store is used as the server uses it: actions and resumes (on the fast path's
    connection, which is opened again after a storage fault closed it, and opens the files as they are then),
    a read (through SQLAlchemy's pool), a checkpoint. A fault that hits writing (an immutable WAL, a full disk)
    fails commits; one that only stops a file from being opened (an immutable database file, permissions
    taken away) does not reach the connection the store holds: its commits go on. Once it is over, the next
    tries write again, the checkpoints copy the WAL, and everything whose commit was acknowledged is in the
    database."""
    reason = _cannot(fault)
    if reason is not None and not IN_CI:
        pytest.skip(reason)
    monkeypatch.setattr("crisp_server.store.sqlite_fast.BUSY_SECONDS", 0.2)
    monkeypatch.setattr("crisp_server.store.checkpoints.CHECKPOINT_SECONDS", 3600.0)  # the test's own only
    async with _faulty(fault, tmp_path) as (folder, fail, heal):
        path = folder / "db.sqlite3"
        store = await _started(path)
        reasons: list[str] = []
        store.on_failure.append(reasons.append)
        acted = resumed = 0  # acknowledged: actions (fast path), resumes (SQLAlchemy's pool)

        async def act() -> bool:
            nonlocal acted
            try:
                await store.commit([_action(acted)])
            except Exception:
                return False
            acted += 1
            return True

        async def resume() -> bool:
            nonlocal resumed
            try:
                await store.commit([AddResume("g1", 0, acted, 100 * acted - 50)])  # between two actions
            except Exception:
                return False
            resumed += 1
            return True

        # A reader keeps its snapshot through the fault (as a long backup would): every commit must grow the
        # WAL then (else, on a full disk, commits reuse the WAL's space whenever a checkpoint let it start over).
        reader = sqlite3.connect(path, isolation_level=None)
        try:
            room = SaveRoom("r1", "C00001", "l", "play", 0, OPTIONS, _seats("Ana", "Ben"))
            game = StartGame("g1", "r1", ("Ana", "Ben"), ("a" * 64, "b" * 64), OPTIONS, 0)
            await store.commit([room, game, StartRound("g1", 0, DECK, "ab" * 16)])
            assert await act()
            # No resume yet: SQLAlchemy's pool opens its first connection for the one during the fault, as a
            # server's first resume after an outage did. No checkpoint yet: the reader's snapshot keeps the
            # WAL from starting over.
            reader.execute("BEGIN")
            reader.execute("SELECT count(*) FROM actions").fetchone()

            fail()
            try:
                for _ in range(3):
                    await act()
                    await resume()
                    await store.load_room("r1")
                    with contextlib.suppress(sqlite3.Error):
                        await store.checkpoint()
                if fault in OPENING_ONLY:
                    assert not reasons, "the open connection kept writing"
                    assert (acted, resumed) == (4, 3)
                else:
                    assert reasons, "the fault never showed"
            finally:
                heal()
            reader.execute("COMMIT")

            # The registry tries again with back-off; each try now writes (no restart, no connection that
            # was opened read-only during the fault).
            tries = 0
            while not (await act() and await resume()):
                tries += 1
                assert tries < 5, f"{fault}: still failing after the fault ended: {reasons[-1]}"
                await asyncio.sleep(0.05)
            assert tries <= 1, reasons
            await store.probe()
            assert store.outage is None
            busy, frames, copied = await store.checkpoint()
            assert (busy, frames) == (0, copied)
            assert await act()
            assert await resume()
        finally:
            reader.close()
            await store.close()

        # Nothing acknowledged was lost: the database as a restarted server reads it.
        db = sqlite3.connect(path)
        try:
            assert db.execute("SELECT count(*) FROM actions").fetchone() == (acted,)
            resumes = db.execute("SELECT resumes FROM rounds").fetchone()[0]
        finally:
            db.close()
        assert len(json.loads(resumes)) == resumed


@pytest.mark.skipif(not faults.can_chattr() and not IN_CI, reason="chattr +i needs root and chattr")
async def test_failing_checkpoints_degrade_the_store_and_past_the_wal_limit_writes_wait(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The database file immutable: commits still land in the WAL, every checkpoint fails. The store says so
    (``checkpoint_problem``, the count of failures, the WAL's size), and once the WAL is over its limit it
    refuses writes (an outage, as a full disk is) instead of growing without end. When the file is writable
    again, a checkpoint copies the whole WAL and writes go on; the WAL file is cut back at the next commit."""
    monkeypatch.setattr("crisp_server.store.checkpoints.CHECKPOINT_SECONDS", 3600.0)  # the test's own only
    limit = 256 * 1024
    path = tmp_path / "db.sqlite3"
    url = f"sqlite+aiosqlite:///{path}"
    await asyncio.to_thread(upgrade, url)
    store = Store(url, wal_limit=limit)
    await store.start()
    reasons: list[str] = []
    store.on_failure.append(reasons.append)
    acted = 0
    try:
        room = SaveRoom("r1", "C00001", "l", "play", 0, OPTIONS, _seats("Ana", "Ben"))
        game = StartGame("g1", "r1", ("Ana", "Ben"), ("a" * 64, "b" * 64), OPTIONS, 0)
        await store.commit([room, game, StartRound("g1", 0, DECK, "ab" * 16)])
        await store.checkpoint()
        assert store.checkpoint_problem() is None
        assert store.wal_cut_back() == limit // 4

        faults.chattr(path, True)
        try:
            await store.commit([_action(acted)])  # into the WAL: the database file is not written
            acted += 1
            with pytest.raises(sqlite3.Error):
                await store.checkpoint()
            problem = store.checkpoint_problem()
            assert problem is not None
            assert problem.startswith("WAL checkpoints fail (")
            assert "at 0.2 MB writes wait for them" in problem
            assert store.checkpoint_failures == 1
            assert store.wal_full is None

            # Commits go on, each one's frames appended to the WAL (it cannot start over), until it is full.
            refused: BaseException | None = None
            for _ in range(2000):
                try:
                    await store.commit([_action(acted)])
                except sqlite3.OperationalError as exc:
                    refused = exc
                    break
                acted += 1
                with contextlib.suppress(sqlite3.Error):
                    await store.checkpoint()
            assert isinstance(refused, WalOverLimit), refused
            assert acted > 10
            assert store.wal_full is not None
            assert "over its limit of 0.2 MB (CRISP_WAL_LIMIT_MB)" in store.wal_full
            assert store.outage is not None
            assert store.outage.reason.startswith("WalOverLimit: the WAL holds")
            assert reasons[-1] == store.outage.reason
            full = os.stat(f"{path}-wal").st_size
            assert limit < full < limit + 64 * 1024  # bounded: one commit's frames past the limit at most
            for _ in range(3):  # every write waits, probes too; the WAL grows no more
                with pytest.raises(WalOverLimit):
                    await store.commit([_action(acted)])
                with pytest.raises(WalOverLimit):
                    await store.probe()
                with contextlib.suppress(sqlite3.Error):
                    await store.checkpoint()
            assert os.stat(f"{path}-wal").st_size == full
            assert store.checkpoint_failures >= acted
        finally:
            faults.chattr(path, False)

        busy, frames, copied = await store.checkpoint()
        assert (busy, frames) == (0, copied)
        assert store.checkpoint_problem() is None
        assert store.wal_full is None
        await store.probe()
        assert store.outage is None
        await store.commit([_action(acted)])
        acted += 1
        assert os.stat(f"{path}-wal").st_size <= limit // 4 + 16 * 1024  # started over, cut back
    finally:
        faults.chattr(path, False)
        await store.close()
    db = sqlite3.connect(path)
    try:
        assert db.execute("SELECT count(*) FROM actions").fetchone() == (acted,)
    finally:
        db.close()
