"""Computer players: decision code that sees only what one seat is sent, and answers like a client.

Pure like the engine (no asyncio, no I/O, no clock, no global randomness: a seeded ``random.Random`` is
passed in), and blind like a player: it imports nothing of the rooms, the web layer, the store or the
engine's game state, and decides only from the ``update`` objects its seat receives.

* :class:`Bot` (a seat's player), :data:`LEVELS` (``random``, ``easy``, ``normal``, ``hard``);
* :func:`pause_ms`: the human-like pause before a bot acts (the room's, not the decision's);
* :func:`hint`: the hard level's move for a seat's own knowledge, with a one-line reason in English or German.
"""

from .bot import LEVELS, Bot, Due, decide, decision_key, due
from .hints import Hint, hint
from .memory import Memory
from .moves import Decision, Message, Reason
from .timing import pause_ms

__all__ = [
    "LEVELS",
    "Bot",
    "Decision",
    "Due",
    "Hint",
    "Memory",
    "Message",
    "Reason",
    "decide",
    "decision_key",
    "due",
    "hint",
    "pause_ms",
]
