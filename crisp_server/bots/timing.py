"""How long a computer player waits before it acts, so that it feels like a person at the table.

A policy apart from the decisions (which have no clock): the room asks it, the arena and the tests use
no pause at all.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from .bot import Due

if TYPE_CHECKING:
    from random import Random

#: A move: about 0.7 to 2 seconds, as a person reads the table and thinks. The final turns after a Crisp call
#: too: the people at the table follow them as they follow any other (the round's end hangs on them).
MOVE_MS: Final = (700, 2000)
#: Ready in the peek: a moment to look at the two cards shown (the peek lasts up to 10 seconds).
PEEK_MS: Final = (1500, 3500)
#: Ready between rounds: a moment to read the round's result (the pause lasts up to 20 seconds).
NEXT_ROUND_MS: Final = (1500, 4000)
#: A Crisp call comes quickly (the window is 3 seconds), but not inhumanly so.
CRISP_MS: Final = (350, 1200)


def pause_ms(due: Due, rng: Random, phase: str | None = None) -> int:
    """The pause before acting on ``due``, in milliseconds (counted from when the bot may act); ``phase``:
    the room's, for a ``ready``."""
    if due.kind == "ready":
        low, high = PEEK_MS if phase == "peek" else NEXT_ROUND_MS
    else:
        low, high = CRISP_MS if due.kind == "crisp" else MOVE_MS
    pause = rng.randint(low, high)
    if due.until is not None and due.kind == "crisp":
        pause = min(pause, max(0, due.until - due.at - 300))  # never let the window close on the call
    return pause
