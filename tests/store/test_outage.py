"""The writer when the database cannot be written: SQLite locked beyond the busy timeout by another process's
transaction (one of the outages of issue 15), on the direct sqlite3 path the group commits take.

Every submission of the failed group is told the error at once (no part is tried again on its own: each
would wait out the busy timeout too, with the event loop stopped); the store is in an outage, with the
reason, until a commit or a probe goes through; what was rolled back is not believed written."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Sequence
from pathlib import Path

import pytest
from sqlalchemy.exc import IntegrityError, OperationalError

from crisp_server.store.operations import Op, SaveRoom, Written
from crisp_server.store.outage import describe, unreachable
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
