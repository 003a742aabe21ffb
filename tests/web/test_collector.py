"""The server's use of the cyclic garbage collector: no automatic passes while it runs, cyclic garbage
freed by the sweep's full collection, the process's collector given back at the end."""

from __future__ import annotations

import gc
import weakref

from crisp_server.collector import Collector


class Node:
    def __init__(self) -> None:
        self.other: Node | None = None


def _cycle() -> weakref.ref[Node]:
    """Cyclic garbage that only the cyclic collector can free; a weak reference to watch it."""
    a, b = Node(), Node()
    a.other, b.other = b, a
    return weakref.ref(a)


def test_no_automatic_passes_until_the_sweep_runs_one() -> None:
    assert gc.isenabled()
    collector = Collector()
    collector.start()
    try:
        assert not gc.isenabled()
        assert gc.get_freeze_count() > 0  # what existed at start-up
        watched = _cycle()
        kept = [Node() for _ in range(50_000)]  # far past the young generation's threshold
        assert watched() is not None
        del kept
        assert collector.full() >= 2
        assert watched() is None
    finally:
        collector.stop()
    assert gc.isenabled()
    assert gc.get_freeze_count() == 0


def test_stop_leaves_a_collector_that_was_off_off() -> None:
    gc.disable()
    try:
        collector = Collector()
        collector.start()
        collector.stop()
        assert not gc.isenabled()
    finally:
        gc.enable()
