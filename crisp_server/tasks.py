"""Stopping a task of our own without swallowing a cancellation of the task that stops it."""

from __future__ import annotations

import asyncio
from typing import Any


async def stop(task: asyncio.Task[Any]) -> None:
    """Cancel ``task`` and wait for it to end. Its own ``CancelledError`` ends here; if the caller itself is
    cancelled meanwhile, that cancellation goes on (``contextlib.suppress(CancelledError)`` around the wait
    would drop it, and the caller would carry on as if it had not been asked to stop)."""
    task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        current = asyncio.current_task()
        if current is not None and current.cancelling():
            raise
