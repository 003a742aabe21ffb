"""A seat at the table: who sits there (name, token hash, driver), its reaction allowance, and the rules of a
name."""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from datetime import datetime
from typing import Final

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
        self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.per_ms)
        self.stamp = now
        if self.tokens >= 1:
            self.tokens -= 1
            return True
        return False


@dataclass(eq=False)
class Seat:
    name: str
    token_hash: str
    reactions: TokenBucket
    conn: SeatDriver | None = None
    left: bool = False
    ready: bool = False
    connected_at: datetime | None = None


def clean_name(raw: str) -> str | None:
    """The name as shown (trimmed, NFC), or ``None`` if it is empty, too long or has control characters."""
    name = unicodedata.normalize("NFC", raw.strip())
    if not 1 <= len(name) <= MAX_NAME:
        return None
    if any(unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp") for ch in name):
        return None
    return name
