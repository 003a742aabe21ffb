"""Time for rooms: a monotonic clock in milliseconds that can schedule a callback.

Rooms never read the wall clock themselves: the server gives them a :class:`LoopClock`; tests give a
:class:`ManualClock` and move time by hand, so that a crisp window's 1999th and 2000th millisecond can
be tested over real sockets without sleeping.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import time
from collections.abc import Callable
from typing import Protocol


class TimerHandle(Protocol):
    def cancel(self) -> None: ...


class Clock(Protocol):
    def now(self) -> int:
        """Milliseconds on a monotonic scale (the origin means nothing)."""
        ...

    def call_at(self, when: int, callback: Callable[[], None]) -> TimerHandle:
        """Call ``callback`` (in the event loop) once ``now() >= when``."""
        ...


class LoopClock:
    """The real monotonic clock, with timers on the running asyncio loop."""

    def now(self) -> int:
        return time.monotonic_ns() // 1_000_000

    def call_at(self, when: int, callback: Callable[[], None]) -> TimerHandle:
        delay = max(0, when - self.now()) / 1000
        # +1 ms so that the callback never runs a hair before ``when`` on the millisecond scale.
        return asyncio.get_running_loop().call_later(delay + 0.001, callback)


class _ManualTimer:
    __slots__ = ("callback", "cancelled")

    def __init__(self, callback: Callable[[], None]) -> None:
        self.callback = callback
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True


class ManualClock:
    """A clock that only moves when told to (tests)."""

    def __init__(self, start: int = 1_000_000) -> None:
        self._now = start
        self._timers: list[tuple[int, int, _ManualTimer]] = []
        self._seq = itertools.count()

    def now(self) -> int:
        return self._now

    def call_at(self, when: int, callback: Callable[[], None]) -> TimerHandle:
        timer = _ManualTimer(callback)
        heapq.heappush(self._timers, (when, next(self._seq), timer))
        return timer

    def advance(self, ms: int) -> None:
        """Move time forward by ``ms`` and run every timer that falls due, in time order."""
        if ms < 0:
            raise ValueError("time cannot go back")
        target = self._now + ms
        while self._timers and self._timers[0][0] <= target:
            when, _, timer = heapq.heappop(self._timers)
            self._now = max(self._now, when)
            if not timer.cancelled:
                timer.callback()
        self._now = target

    def pending(self) -> list[int]:
        """When the live timers are due (tests use it to check what a room has scheduled)."""
        return sorted(when for when, _, t in self._timers if not t.cancelled)
