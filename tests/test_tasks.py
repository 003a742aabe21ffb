"""``crisp_server.tasks.stop``: a task of ours is stopped, and a stop of the stopping task goes through."""

from __future__ import annotations

import asyncio

import pytest

from crisp_server import tasks


async def test_stop_cancels_the_task_and_waits_for_its_end() -> None:
    cleaned: list[str] = []

    async def worker() -> None:
        try:
            await asyncio.Event().wait()
        finally:
            cleaned.append("worker")

    task = asyncio.create_task(worker())
    await asyncio.sleep(0)
    await tasks.stop(task)
    assert task.cancelled()
    assert cleaned == ["worker"]


async def test_a_stop_of_the_stopping_task_is_not_swallowed() -> None:
    """The caller is cancelled while it waits for the task it stops (a shutdown under a time limit, say): it
    ends cancelled, and does not go on past ``stop`` as if it had not been asked to."""

    async def slow_to_end() -> None:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            await asyncio.sleep(0.05)  # its own cleanup
            raise

    went_on: list[bool] = []

    async def closer(task: asyncio.Task[None]) -> None:
        await tasks.stop(task)
        went_on.append(True)

    worker = asyncio.create_task(slow_to_end())
    await asyncio.sleep(0)
    closing = asyncio.create_task(closer(worker))
    await asyncio.sleep(0.01)  # the closer waits for the worker's cleanup
    assert closing.cancel()
    with pytest.raises(asyncio.CancelledError):
        await closing
    assert went_on == []
    assert worker.done()


async def test_a_failure_of_the_task_is_raised() -> None:
    async def failing() -> None:
        try:
            await asyncio.Event().wait()
        finally:
            raise ValueError("its cleanup failed")

    task = asyncio.create_task(failing())
    await asyncio.sleep(0)
    with pytest.raises(ValueError, match="its cleanup failed"):
        await tasks.stop(task)
