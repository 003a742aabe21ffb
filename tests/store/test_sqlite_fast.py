"""SQLite's write path without ``Connection.execute`` (issue 7) stores exactly what SQLAlchemy stores."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import signal
import sqlite3
import sys
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import create_engine

from crisp_server.engine import Timed
from crisp_server.engine.actions import CallCrisp, Discard, Draw, Source, Swap
from crisp_server.engine.cards import Slot
from crisp_server.store.checkpoints import _Copier
from crisp_server.store.connect import WRITER_CACHE_KIB
from crisp_server.store.migrate import upgrade
from crisp_server.store.operations import (
    AddResume,
    AppendAction,
    CloseRoom,
    FinishGame,
    Op,
    SaveRoom,
    SeatData,
    SetClock,
    StartGame,
    StartRound,
    Written,
)
from crisp_server.store.sqlite_fast import _Sqlite
from crisp_server.store.store import Store
from crisp_server.store.writes import _ROUND_INSERT, _apply_all, _Core

TABLES = ("rooms", "seats", "games", "rounds", "actions", "results")
OPTIONS = {"score_limit": 50, "turn_seconds": 30, "discard_draw": True}


def _seats(*names: str, left: int | None = None) -> tuple[SeatData, ...]:
    when = datetime(2026, 11, 30, 5, 30, 1, 250000, tzinfo=UTC)
    return tuple(SeatData(n, f"{i:064x}", i == left, when if i else None) for i, n in enumerate(names))


def _groups() -> list[list[Op]]:
    """Every statement of a group commit: new and known rooms, changed seats and options, games, rounds,
    actions of each shape, clocks, resumes, a finished game and a closed room."""
    room = SaveRoom("r1", "ABCDEF", "http://x/r/ABCDEF", "lobby", 0, OPTIONS, _seats("Ana", "Ben"))
    game = StartGame("g1", "r1", ("Ana", "Ben"), ("a" * 64, "b" * 64), OPTIONS, 1)
    deck = tuple(f"{r}{s}" for s in "SHDC" for r in "A23456789TJQK")
    actions = [
        Timed(10, Draw(0)),
        Timed(2500, Discard(0)),
        Timed(2600, Draw(1, Source.DISCARD)),
        Timed(2700, Swap(1, Slot.RIGHT)),
        Timed(4100, CallCrisp(0)),
    ]
    return [
        [room, SaveRoom("r2", "GHJKLM", "http://x/r/GHJKLM", "lobby", 1, OPTIONS, _seats("Cem"))],
        [
            SaveRoom("r1", "ABCDEF", "http://x/r/ABCDEF", "play", 1, OPTIONS, _seats("Ana", "Ben")),
            game,
            StartRound("g1", 0, deck, "ab" * 16),
            *(AppendAction("g1", 0, i, t) for i, t in enumerate(actions[:3])),
        ],
        [
            *(AppendAction("g1", 0, i + 3, t) for i, t in enumerate(actions[3:])),
            SetClock("g1", 0, 5000),
            AddResume("g1", 0, 5, 5200),  # a restart: the round went on at 5200
            AddResume("g1", 0, 5, 5100),  # one more (its clock stands at the later instant)
            SetClock("g1", 0, 6000, ended=True),
            SaveRoom("r1", "ABCDEF", "http://x/r/ABCDEF", "result", 1, OPTIONS, _seats("Ana", "Ben", left=1)),
            FinishGame("g1", (12, 30), (0,)),
        ],
        [
            SaveRoom(
                "r2",
                "GHJKLM",
                "http://x/r/GHJKLM",
                "lobby",
                0,
                {**OPTIONS, "score_limit": 100, "stand_in": 30},
                (*_seats("Cem"), SeatData("Ada", "f" * 64, False, None, "hard")),  # a computer player's seat
            ),
            CloseRoom("r2"),
            SaveRoom("r1", "ABCDEF", "http://x/r/ABCDEF", "lobby", 1, OPTIONS, _seats("Ana", "Ben", left=1)),
        ],
    ]


def _database(path: Path) -> str:
    """A migrated database; the URL of its plain (pysqlite) driver, as the store's writer uses."""
    upgrade(f"sqlite+aiosqlite:///{path}")
    return f"sqlite:///{path}"


def _rows(url: str) -> dict[str, list[tuple[Any, ...]]]:
    """Every table's rows, the clock-dependent times masked (both paths write their own 'now')."""
    path = url.removeprefix("sqlite:///")
    with sqlite3.connect(path) as db:
        out: dict[str, list[tuple[Any, ...]]] = {}
        for table in TABLES:
            cursor = db.execute(f"SELECT * FROM {table} ORDER BY 1, 2")
            names = [d[0] for d in cursor.description]
            masked = {"created_at", "updated_at", "started_at", "finished_at", "closed_at"}
            out[table] = [
                tuple(
                    (value is not None) if name in masked and table != "seats" else value
                    for name, value in zip(names, row, strict=True)
                )
                for row in cursor.fetchall()
            ]
        return out


def test_the_fast_path_stores_what_sqlalchemy_stores(tmp_path: Path) -> None:
    core_url, fast_url = _database(tmp_path / "core.db"), _database(tmp_path / "fast.db")
    core_engine, fast_engine = create_engine(core_url), create_engine(fast_url)
    core_written: Written = {}
    fast_written: Written = {}
    raw = fast_engine.raw_connection()
    try:
        fast = _Sqlite(raw.driver_connection, fast_engine.dialect)  # type: ignore[arg-type]
        for group in _groups():
            with core_engine.begin() as conn:
                _apply_all(_Core(conn), group, core_written)
            _apply_all(fast, group, fast_written)
            fast.dbapi.commit()
    finally:
        raw.close()
        core_engine.dispose()
        fast_engine.dispose()
    core, fast_rows = _rows(core_url), _rows(fast_url)
    assert fast_rows == core
    # The groups reached every table, and seats carry their times in SQLAlchemy's own text form.
    assert all(core[table] for table in TABLES)
    assert "2026-11-30 05:30:01.250000" in {row[5] for row in core["seats"]}  # connected_at
    with sqlite3.connect(fast_url.removeprefix("sqlite:///")) as db:
        resumes, end_at = db.execute("SELECT resumes, end_at FROM rounds").fetchone()
    assert json.loads(resumes) == [{"after": 5, "at": 5200}, {"after": 5, "at": 5100}]
    assert end_at == 6000
    assert core_written == fast_written


async def _started(path: Path) -> Store:
    """A started store on a migrated SQLite file at ``path`` (the test closes it)."""
    url = f"sqlite+aiosqlite:///{path}"
    await asyncio.to_thread(upgrade, url)
    store = Store(url)
    await store.start()
    return store


def test_rows_must_give_the_columns_sqlalchemy_would_fill_from_defaults(tmp_path: Path) -> None:
    """``rounds.resumes`` and ``rounds.ended`` have Python-side defaults that only ``Connection.execute``
    fills in: the fast path refuses rows without them rather than store NULLs."""
    engine = create_engine(_database(tmp_path / "x.db"))
    raw = engine.raw_connection()
    try:
        fast = _Sqlite(raw.driver_connection, engine.dialect)  # type: ignore[arg-type]
        with pytest.raises(ValueError, match="the statement binds"):
            fast.many(_ROUND_INSERT, [{"game_id": "g", "index": 0, "deck": [], "salt": ""}])
    finally:
        raw.close()
        engine.dispose()


async def test_the_wal_is_checkpointed_by_the_store_not_by_the_writer(tmp_path: Path) -> None:
    store = await _started(tmp_path / "w.db")
    try:
        await store.commit(_groups()[0])
        # Far past SQLite's own checkpoint at 1,000 pages: the writer never stops to copy the WAL.
        names = tuple(f"{'x' * 70}{i}" for i in range(8))
        for i in range(400):
            seats = _seats(*names, left=i % 8)
            await store.commit([SaveRoom("r1", "ABCDEF", "http://x/r/ABCDEF", "lobby", i % 2, OPTIONS, seats)])
        wal = tmp_path / "w.db-wal"
        assert wal.stat().st_size > 1000 * 4096
        busy, frames, copied = await store.checkpoint()
        assert busy == 0
        assert frames == copied > 1000
    finally:
        await store.close()


async def test_a_checkpoint_leaves_the_wal_wholly_copied_so_that_it_starts_over(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A pass that cannot copy the whole WAL (as when commits land while it copies: here a reader holds on
    to an older snapshot): the checkpoint must still leave it wholly copied, or the WAL never starts over
    from its beginning and grows for as long as the server is busy."""
    path = tmp_path / "g.db"
    store = await _started(path)
    names = tuple(f"{'x' * 70}{i}" for i in range(8))

    def save(i: int) -> list[Op]:
        return [SaveRoom("r1", "ABCDEF", "http://x/r/ABCDEF", "lobby", i % 2, OPTIONS, _seats(*names, left=i % 8))]

    def wal_frames() -> int:  # (a checkpoint of its own: its answer counts the frames before it copies)
        with contextlib.closing(sqlite3.connect(path)) as other:
            row = other.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
        return int(row[1])

    passes: list[tuple[int, int, int]] = []
    real_pass = store._bulk_pass
    reader = sqlite3.connect(path, isolation_level=None, check_same_thread=False)

    async def reader_leaves_after_the_first() -> tuple[int, int, int]:
        result = await real_pass()
        passes.append(result)
        if len(passes) == 1:
            reader.execute("COMMIT")  # the snapshot that held the first pass back is gone
        return result

    try:
        await store.commit(_groups()[0])
        for i in range(200):
            await store.commit(save(i))
        reader.execute("BEGIN")
        reader.execute("SELECT count(*) FROM rooms").fetchall()
        for i in range(200):
            await store.commit(save(i))
        monkeypatch.setattr(store, "_bulk_pass", reader_leaves_after_the_first)
        busy, frames, copied = await store.checkpoint()
        (first,) = passes[:1]
        assert first[2] < first[1]  # the first pass could not copy it all
        assert busy == 0
        assert frames == copied > first[2]
        await store.commit(save(1))
        assert wal_frames() < 20  # the commit after the checkpoint started the WAL over
    finally:
        reader.close()
        await store.close()


async def test_a_slow_second_pass_holds_commits_back_only_briefly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The second pass ends with an fsync, which a busy disk can stretch to hundreds of milliseconds: commits
    wait for it only ``CHECKPOINT_HOLD_SECONDS``, then go on while it finishes."""
    monkeypatch.setattr("crisp_server.store.checkpoints.CHECKPOINT_HOLD_SECONDS", 0.05)
    store = await _started(tmp_path / "s.db")
    passes = 0
    second_started, disk_done = threading.Event(), threading.Event()
    real_pass = store._checkpoint_pass

    def slow_second() -> tuple[int, int, int]:
        nonlocal passes
        passes += 1
        if passes == 1:  # (the first pass is the checkpoint process's)
            second_started.set()
            disk_done.wait(10)  # a disk that takes its time
        return real_pass()

    try:
        await store.commit(_groups()[0])
        monkeypatch.setattr(store, "_checkpoint_pass", slow_second)
        checkpoint = asyncio.create_task(store.checkpoint())
        assert await asyncio.to_thread(second_started.wait, 5)
        begun = time.monotonic()
        seats = _seats("Ana")
        await asyncio.wait_for(store.commit([SaveRoom("r2", "CDEFGH", "l", "lobby", 0, OPTIONS, seats)]), 2)
        assert time.monotonic() - begun < 1  # it went through while the pass still waited on the disk
        assert not checkpoint.done()
        disk_done.set()
        busy, _, _ = await asyncio.wait_for(checkpoint, 5)
        assert busy == 0
    finally:
        disk_done.set()
        await store.close()


async def test_the_bulk_of_a_checkpoint_is_copied_by_a_process_at_idle_priority_restarted_if_it_ends(
    tmp_path: Path,
) -> None:
    store = await _started(tmp_path / "c.db")
    try:
        await store.commit(_groups()[0])
        busy, frames, copied = await store.checkpoint()
        assert busy == 0
        assert frames == copied > 0
        copier = store._copier
        assert copier is not None
        assert copier.process is not None
        first = copier.process.pid
        assert first != os.getpid()
        if hasattr(os, "SCHED_IDLE"):
            assert os.sched_getscheduler(first) == os.SCHED_IDLE
            assert os.sched_getscheduler(0) == os.SCHED_OTHER  # the server itself is untouched
        copier.process.kill()
        await copier.process.wait()
        await store.commit(_groups()[1])
        busy, frames, copied = await store.checkpoint()
        assert busy == 0
        assert frames == copied > 0
        assert copier.process.pid != first
    finally:
        await store.close()
    assert copier.process is None  # closing the store ended it


async def _copying(store: Store) -> tuple[_Copier, int]:
    """A first commit and checkpoint, so that the checkpoint process runs: the copier and its pid."""
    await store.commit(_groups()[0])
    await store.checkpoint()
    copier = store._copier
    assert copier is not None
    assert copier.process is not None
    return copier, copier.process.pid


async def test_a_checkpoint_cancelled_mid_copy_leaves_the_next_a_working_process_and_no_error(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A shutdown cancels the periodic checkpoint while the process copies, then runs a last checkpoint:
    that one used to find the process it had just killed and log an ERROR "exit code -9" (issue 15). And
    a SIGTERM sent to the whole group does not end the process."""
    store = await _started(tmp_path / "k.db")
    try:
        copier, first = await _copying(store)
        # A service manager's SIGTERM to the server's whole group leaves the process to the server.
        os.kill(first, signal.SIGTERM)
        await asyncio.sleep(0.2)
        assert copier.process is not None
        assert copier.process.returncode is None
        await store.commit(_groups()[1])
        cancelled = asyncio.create_task(store.checkpoint())
        await asyncio.sleep(0)  # the question is written; the answer not read yet
        cancelled.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await cancelled
        busy, frames, copied = await store.checkpoint()
        assert busy == 0
        assert frames == copied
        assert copier.process is not None
        assert copier.process.pid != first
    finally:
        await store.close()
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING], caplog.text


async def test_checkpoints_asked_for_at_once_take_turns_with_one_process(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Two at once used to read each other's answer from the process's pipe: both failed ("readuntil()
    called while another coroutine is already waiting"), and the process was killed."""
    store = await _started(tmp_path / "t.db")
    try:
        copier, first = await _copying(store)
        await store.commit(_groups()[1])
        answers = await asyncio.gather(*(store.checkpoint() for _ in range(3)))
        assert all(busy == 0 and frames == copied for busy, frames, copied in answers), answers
        assert copier.process is not None
        assert copier.process.pid == first
    finally:
        await store.close()
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING], caplog.text


async def test_a_wal_file_grown_large_is_cut_back_when_the_wal_starts_over(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("crisp_server.store.sqlite_fast.WAL_SIZE_LIMIT", 100_000)
    store = await _started(tmp_path / "l.db")
    wal = tmp_path / "l.db-wal"
    names = tuple(f"{'x' * 70}{i}" for i in range(8))
    try:
        await store.commit(_groups()[0])
        for i in range(200):
            seats = _seats(*names, left=i % 8)
            await store.commit([SaveRoom("r1", "ABCDEF", "http://x/r/ABCDEF", "lobby", i % 2, OPTIONS, seats)])
        assert wal.stat().st_size > 1_000_000
        await store.checkpoint()
        await store.commit(_groups()[1])  # starts the WAL over
        assert wal.stat().st_size <= 100_000
    finally:
        await store.close()


async def test_without_the_checkpoint_process_a_thread_copies(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(sys, "executable", str(tmp_path / "no-such-python"))
    store = await _started(tmp_path / "t.db")
    try:
        await store.commit(_groups()[0])
        busy, frames, copied = await store.checkpoint()
        assert busy == 0
        assert frames == copied > 0
        assert "the checkpoint process failed" in caplog.text
    finally:
        await store.close()


async def test_the_retention_purge_and_group_commits_take_turns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The purge writes through aiosqlite while group commits run on the event loop: a commit that met the
    purge's write lock would wait with the loop stopped, and the purge could never finish (until SQLite's
    busy timeout failed the commit)."""
    monkeypatch.setattr("crisp_server.store.sqlite_fast.BUSY_SECONDS", 0.5)
    store = await _started(tmp_path / "p.db")
    stop = asyncio.Event()

    async def play(room: int) -> int:
        commits = 0
        while not stop.is_set():
            phase = ("lobby", "play")[commits % 2]
            await store.commit([SaveRoom(f"r{room}", f"C{room:05d}", "l", phase, 0, OPTIONS, _seats("Ana"))])
            commits += 1
        return commits

    try:
        players = [asyncio.create_task(play(i)) for i in range(20)]
        for _ in range(20):
            await asyncio.wait_for(store.purge(timedelta(hours=24), timedelta(days=30)), 5)
        stop.set()
        assert min(await asyncio.wait_for(asyncio.gather(*players), 5)) > 0
    finally:
        await store.close()


async def test_the_writer_keeps_the_pages_of_thousands_of_rooms_in_its_cache(tmp_path: Path) -> None:
    """SQLite's default page cache (2 MiB) is too small for the pages thousands of playing rooms write to:
    the store's writing connection gets WRITER_CACHE_KIB (issue 19); the readers keep the default."""
    store = await _started(tmp_path / "c.db")
    try:
        assert store._fast is not None
        assert store._fast.dbapi.execute("PRAGMA cache_size").fetchone() == (-WRITER_CACHE_KIB,)
        assert WRITER_CACHE_KIB >= 8 * 1024
    finally:
        await store.close()
