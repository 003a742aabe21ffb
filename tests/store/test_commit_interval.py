"""Group commits at most once per ``commit_interval`` (``CRISP_COMMIT_INTERVAL_MS``, issue 19): on a busy
server what comes within the interval after a commit started is written by the next one, together; a store
that was idle for that long commits at once."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Coroutine
from typing import Any

import pytest

from crisp_server.rooms.clock import LoopClock
from crisp_server.settings import Settings
from crisp_server.store.migrate import upgrade
from crisp_server.store.operations import SaveRoom
from crisp_server.store.store import Store
from crisp_server.web.app import build_services

OPTIONS = {"score_limit": 50, "turn_seconds": None, "discard_draw": True}

Opened = Callable[[float], Coroutine[Any, Any, Store]]


def _room(n: int) -> SaveRoom:
    return SaveRoom(f"room{n}", f"C{n:05d}", f"http://x/r/C{n:05d}", "lobby", 0, OPTIONS, ())


@pytest.fixture
async def open_store(database_url: str) -> AsyncIterator[Opened]:
    await asyncio.to_thread(upgrade, database_url)
    opened: list[Store] = []

    async def make(interval: float) -> Store:
        store = Store(database_url, commit_interval=interval)
        await store.start()
        opened.append(store)
        return store

    yield make
    for store in opened:
        await store.close()


async def _two_commits_apart(store: Store, apart: float) -> tuple[int, float]:
    """Commit one room; then two more, ``apart`` seconds after each other. Returns how many group commits
    the two took and how long after the first commit started the last one started (loop clock)."""
    await store.commit([_room(0)])
    first, before = store._last_commit, store.timing.commits

    async def later() -> None:
        await asyncio.sleep(apart)
        await store.commit([_room(2)])

    await asyncio.gather(store.commit([_room(1)]), later())
    return store.timing.commits - before, store._last_commit - first


async def test_what_comes_within_the_interval_is_written_by_one_commit(open_store: Opened) -> None:
    store = await open_store(0.4)
    commits, after = await _two_commits_apart(store, 0.05)
    assert commits == 1
    assert after >= 0.4 - 0.01


async def test_without_an_interval_each_commit_goes_at_once(open_store: Opened) -> None:
    store = await open_store(0.0)
    commits, _ = await _two_commits_apart(store, 0.05)
    assert commits == 2


async def test_an_idle_store_does_not_wait(open_store: Opened) -> None:
    store = await open_store(0.25)
    assert store._wait_before_commit(0.0) == 0  # never committed
    await store.commit([_room(0)])
    last = store._last_commit
    assert store._wait_before_commit(last) == pytest.approx(0.25)
    assert store._wait_before_commit(last + 0.2) == pytest.approx(0.05)
    assert store._wait_before_commit(last + 0.25) == 0
    assert store._wait_before_commit(last + 60) == 0
    await asyncio.sleep(0.3)
    loop = asyncio.get_running_loop()
    submitted = loop.time()
    await store.commit([_room(1)])
    assert store._last_commit - submitted < 0.1  # started at once: the interval since the last one was over


async def test_a_submission_with_nothing_to_write_does_not_wait_for_the_interval(open_store: Opened) -> None:
    store = await open_store(5.0)
    await store.commit([_room(0)])
    done: asyncio.Future[BaseException | None] = asyncio.get_running_loop().create_future()
    store.submit([], done.set_result)
    assert await asyncio.wait_for(done, 2) is None  # not 5 s later


def test_the_server_setting_reaches_its_store(tmp_path: Any) -> None:
    settings = Settings(data_dir=tmp_path, commit_interval_ms=7)
    store = build_services(settings, LoopClock(), persist=True).store
    assert store is not None
    assert store.commit_interval == pytest.approx(0.007)
    assert Settings(data_dir=tmp_path).commit_interval_ms == 4
