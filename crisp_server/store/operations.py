"""Operations: what a room asks the store to write, as small frozen values (``SaveRoom``, ``AppendAction``, ...).

A room builds them as things change and hands them to the writer (``store.py``) in order; ``writes.py`` turns
a group of them into statements.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from crisp_server.engine import Timed


def utc_now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True, slots=True)
class SeatData:
    name: str
    token_hash: str
    left: bool
    connected_at: datetime | None
    bot: str | None = None  # a computer player's level; ``None``: a person's seat


@dataclass(frozen=True, slots=True)
class SaveRoom:
    """The lobby as it is now: phase, host, options and every seat."""

    room_id: str
    code: str
    link: str
    phase: str
    host: int
    options: dict[str, Any]
    seats: tuple[SeatData, ...]


@dataclass(frozen=True, slots=True)
class CloseRoom:
    room_id: str


@dataclass(frozen=True, slots=True)
class ReserveVersion:
    """The room may publish versions up to ``v``: rebuilt after a restart, it goes on above it."""

    room_id: str
    v: int


@dataclass(frozen=True, slots=True)
class StartGame:
    game_id: str
    room_id: str
    players: tuple[str, ...]
    token_hashes: tuple[str, ...]
    options: dict[str, Any]
    first_dealer: int
    host: int | None = None  # the room's host seat at the start: who may make the replay public

    def row(self) -> dict[str, Any]:
        return {
            "id": self.game_id,
            "room_id": self.room_id,
            "players": list(self.players),
            "token_hashes": list(self.token_hashes),
            "options": self.options,
            "first_dealer": self.first_dealer,
            "started_at": utc_now(),
            "finished_at": None,
            # Written only when known: the column's default is the same, and a writer that has no host to
            # give writes what every release before the column wrote.
            **({"host": self.host} if self.host is not None else {}),
        }


@dataclass(frozen=True, slots=True)
class StartRound:
    game_id: str
    index: int
    deck: tuple[str, ...]
    salt: str

    def row(self) -> dict[str, Any]:
        return {
            "game_id": self.game_id,
            "index": self.index,
            "deck": list(self.deck),
            "salt": self.salt,
            "resumes": [],
            "end_at": None,
            "ended": False,
        }


@dataclass(frozen=True, slots=True)
class AppendAction:
    """An accepted action; reading the round back, its clock (``end_at``) stands at least at this instant."""

    game_id: str
    round_index: int
    seq: int
    timed: Timed


#: Each room as last committed in this process (what it believed written is forgotten when a commit fails).
Written = dict[str, "SaveRoom"]


@dataclass(frozen=True, slots=True)
class SetClock:
    """The round's clock reached ``end_at`` (a timer fired); ``ended`` when the round is over."""

    game_id: str
    round_index: int
    end_at: int
    ended: bool = False


@dataclass(frozen=True, slots=True)
class AddResume:
    """The server restarted: the round went on at ``at`` after ``after`` actions (``Game.resume``)."""

    game_id: str
    round_index: int
    after: int
    at: int


@dataclass(frozen=True, slots=True)
class FinishGame:
    """The game ended: won, or ``abandoned`` (no player came back; ``totals`` of the rounds played, no winner)."""

    game_id: str
    totals: tuple[int, ...]
    winners: tuple[int, ...]
    abandoned: bool = False


#: What a room hands the store to write.
Op = SaveRoom | ReserveVersion | CloseRoom | StartGame | StartRound | AppendAction | SetClock | AddResume | FinishGame


# -- reading ---------------------------------------------------------------------------------------------
