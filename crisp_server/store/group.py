"""The writer's side of a group commit that runs for every commit: what the rooms submitted, taken in groups,
and each submission told how its commit went. Compiled with mypyc (``crisp_server/native.py``), as the
statements a group writes are (``writes.py``); the writer itself (``store.py``) calls it.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable, Sequence

from .operations import Op
from .outage import Dropped

log = logging.getLogger("crisp.store")


class Submission:
    """One room's operations, what to call when they are written, and when to drop them. (A plain class:
    one is made for every action.)"""

    __slots__ = ("done", "fence", "ops", "skip")

    def __init__(
        self,
        ops: Sequence[Op],
        done: Callable[[BaseException | None], None],
        skip: Callable[[], bool],
        fence: tuple[str, int] | None = None,
    ) -> None:
        self.ops = ops
        self.done = done
        self.skip = skip
        #: In a cluster: the room's (code, epoch) lease, checked in the commit's own transaction.
        self.fence = fence


def skipped(item: Submission) -> bool:
    """Whether ``item`` is to be dropped; if so, its ``done`` has been told."""
    if not item.skip():
        return False
    item.done(Dropped("the room stopped after a failed commit"))
    return True


def tell(item: Submission, error: BaseException | None) -> None:
    """Tell a submission how its commit went; what its room does then must not stop the writer."""
    try:
        item.done(error)
    except Exception:
        log.exception("delivering after a commit failed")


def take(pending: deque[Submission], most: int) -> tuple[list[Submission], list[Op]]:
    """The next group: up to ``most`` submissions from the front of ``pending``, without those to be dropped
    (told so), and their operations in order."""
    taken = [pending.popleft() for _ in range(min(len(pending), most))]
    batch: list[Submission] = []
    ops: list[Op] = []
    for item in taken:
        if not skipped(item):
            batch.append(item)
            ops.extend(item.ops)
    return batch, ops


def tell_all(batch: Sequence[Submission]) -> None:
    """Each submission of a group that went through, in order."""
    for item in batch:
        tell(item, None)


def any_ops(pending: deque[Submission]) -> bool:
    """Whether any submission waiting has operations (one without only waits its turn)."""
    return any(item.ops for item in pending)


def fenced(batch: Sequence[Submission]) -> bool:
    """Whether any submission of ``batch`` carries a room lease to check."""
    return any(item.fence is not None for item in batch)
