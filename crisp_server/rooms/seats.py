"""A seat at the table: who sits there (name, token hash, driver), its reaction allowance, and the rules of a
name."""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from datetime import datetime
from typing import Final

from crisp_server.bots import Memory

from .driver import SeatDriver

MAX_SEATS: Final = 8
MAX_NAME: Final = 20


class TokenBucket:
    """``burst`` at once, then one per ``1/rate`` seconds; time is given in milliseconds."""

    __slots__ = ("burst", "per_ms", "stamp", "tokens")

    def __init__(self, burst: int, per_second: float, now: int) -> None:
        self.burst = float(burst)
        self.per_ms = per_second / 1000
        self.tokens = float(burst)
        self.stamp = now

    def take(self, now: int) -> bool:
        if self.has(now):
            self.tokens -= 1
            return True
        return False

    def has(self, now: int) -> bool:
        """Whether one could be taken now (none is)."""
        self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.per_ms)
        self.stamp = now
        return self.tokens >= 1


@dataclass(eq=False)
class Seat:
    name: str
    token_hash: str
    reactions: TokenBucket
    conn: SeatDriver | None = None
    left: bool = False
    ready: bool = False
    connected_at: datetime | None = None
    #: A computer player's seat: its level (its driver is a ``BotDriver``); ``None``: a person's seat.
    bot: str | None = None
    #: A computer player plays for this seat's person, who left or is away (``conn`` is its ``BotDriver``).
    standing_in: bool = False
    #: Since when (room clock) this seat's person is away during a game: a stand-in comes after a while.
    away_since: int | None = None
    #: What this seat's person was shown, for hints in a practice game (``None`` elsewhere).
    memory: Memory | None = None

    @property
    def person_here(self) -> bool:
        """A person is connected to this seat (not a computer player, not one standing in)."""
        return self.conn is not None and self.bot is None and not self.standing_in


def clean_name(raw: str) -> str | None:
    """The name as shown (trimmed, NFC), or ``None`` if it is empty, too long or has control characters."""
    name = unicodedata.normalize("NFC", raw.strip())
    if not 1 <= len(name) <= MAX_NAME:
        return None
    if any(unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp") for ch in name):
        return None
    return name
