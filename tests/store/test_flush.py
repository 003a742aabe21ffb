"""SQLite group commits from a callback of the loop (``Store._flush``, issue 19): on the fast path the writer's task
takes no step per commit; what cannot take that path (the write lock held by a transaction going on, a resume, a
failure) goes to the task, and every submission is still done in the order it came, once."""

from __future__ import annotations

import asyncio
from pathlib import Path

from crisp_server.store.operations import Op, SaveRoom, StartRound
from crisp_server.store.store import Store
from tests.store.test_sqlite_fast import OPTIONS, _seats, _started


def _room(i: int, phase: str = "lobby") -> SaveRoom:
    return SaveRoom(f"r{i}", f"C{i:05d}", "l", phase, 0, OPTIONS, _seats("Ana", "Ben"))


def _bad_round() -> StartRound:
    """A round of a game that does not exist: refused by its foreign key (not an outage)."""
    return StartRound("no-such-game", 0, tuple("x" for _ in range(52)), "00")


async def _idle_writer(store: Store) -> asyncio.Future[None]:
    """The future the writer's task waits on once it is idle."""
    for _ in range(10):
        await asyncio.sleep(0)
        if store._wakeup is not None:
            return store._wakeup
    raise AssertionError("the writer's task never waited")


def _submit(store: Store, ops: list[Op], name: str, told: list[tuple[str, str | None]]) -> None:
    store.submit(ops, lambda error: told.append((name, None if error is None else type(error).__name__)))


async def _until(condition: object, what: str) -> None:
    for _ in range(500):
        if callable(condition) and condition():
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"waited 5 s for {what}")


async def test_group_commits_on_sqlite_take_no_step_of_the_writer_task(tmp_path: Path) -> None:
    store = await _started(tmp_path / "flush.db")
    try:
        waiting = await _idle_writer(store)
        await store.commit([_room(1)])
        await asyncio.gather(*(store.commit([_room(i, "play")]) for i in range(1, 5)))
        assert store.timing.commits == 2, "the first room, then the four together"
        assert store._wakeup is waiting, "the task was woken"
        assert not waiting.done(), "the task was woken"
        assert not store._task_busy
        stored = await store.load_room("r4")
        assert stored is not None
        assert stored.phase == "play"
    finally:
        await store.close()


async def test_what_waits_for_the_write_lock_goes_to_the_task_and_keeps_its_order(tmp_path: Path) -> None:
    store = await _started(tmp_path / "flush.db")
    told: list[tuple[str, str | None]] = []
    try:
        waiting = await _idle_writer(store)
        release = asyncio.Event()

        async def purge() -> None:  # a write transaction of the store's own, as the retention purge's
            async with store._writing:
                await release.wait()

        holder = asyncio.create_task(purge())
        await asyncio.sleep(0)
        _submit(store, [_room(1)], "a", told)
        await asyncio.sleep(0.05)
        assert waiting.done(), "the task was not given what the callback could not write"
        assert store._task_busy
        _submit(store, [_room(1, "play")], "b", told)  # behind a: the task takes it, not a callback
        _submit(store, [], "c", told)  # nothing to write: it waits its turn all the same
        _submit(store, [_room(2)], "d", told)
        await asyncio.sleep(0.05)
        assert told == [], "written while the lock was held"
        release.set()
        await holder
        await _until(lambda: len(told) == 4, "every submission to be told")
        assert told == [("a", None), ("b", None), ("c", None), ("d", None)]
        stored = await store.load_room("r1")
        assert stored is not None
        assert stored.phase == "play"

        # The task, idle again, hands the next commits back to the callbacks.
        waiting = await _idle_writer(store)
        assert not store._task_busy
        await store.commit([_room(3)])
        assert store._wakeup is waiting
        assert not waiting.done()
    finally:
        await store.close()


async def test_a_group_refused_by_the_database_is_written_part_by_part_in_order(tmp_path: Path) -> None:
    store = await _started(tmp_path / "flush.db")
    told: list[tuple[str, str | None]] = []
    try:
        waiting = await _idle_writer(store)
        _submit(store, [_room(1)], "a", told)
        _submit(store, [_room(2), _bad_round()], "b", told)
        _submit(store, [_room(3)], "c", told)
        await _until(lambda: len(told) == 3, "every submission to be told")
        assert told == [("a", None), ("b", "IntegrityError"), ("c", None)]
        assert store._wakeup is waiting, "the failure was handed to the task"
        assert not waiting.done(), "the failure was handed to the task"
        assert await store.load_room("r1") is not None
        assert await store.load_room("r2") is None, "its part was rolled back whole"
        assert await store.load_room("r3") is not None
        assert store.outage is not None, "a failed group commit starts an outage, as the task's does"
        await store.commit([_room(4)])
        assert store.outage is None, "and the next commit that goes through ends it"
    finally:
        await store.close()


async def test_a_store_closed_with_a_commit_waiting_for_its_interval_writes_it_first(tmp_path: Path) -> None:
    store = await _started(tmp_path / "flush.db")
    store.commit_interval = 0.2
    try:
        await store.commit([_room(1)])
        pending = asyncio.ensure_future(store.commit([_room(2)]))  # waits for the interval
        await asyncio.sleep(0.01)
        assert not pending.done()
    finally:
        await store.close()
    assert pending.done()
    assert pending.exception() is None
    reopened = await _started(tmp_path / "flush.db")
    try:
        assert await reopened.load_room("r2") is not None
    finally:
        await reopened.close()
