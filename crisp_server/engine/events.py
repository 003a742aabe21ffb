"""What happened, in order, and who may see it.

Every transition of :class:`crisp_server.engine.game.Game` returns a list of events. An event is
public unless its ``to`` names a seat: then only that seat may see it (a card shown privately). Public
events never carry a card that somebody at the table may not see.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any

from .actions import Source
from .cards import Slot


class Why(Enum):
    """Why a card is shown privately to its owner."""

    DEAL = "deal"
    """The peek at the left and right card after the deal."""
    JACK = "jack"
    """A Jack's look at the own middle card."""
    QUEEN = "queen"
    """A card received through a Queen in the left or right slot."""
    DRAW = "draw"
    """The card just drawn from the draw pile (only the drawer sees it)."""


class _Public:
    """An event everyone may see."""

    __slots__ = ()

    @property
    def to(self) -> int | None:
        """The only seat that may see this event, or ``None`` for everyone."""
        return None


@dataclass(frozen=True, slots=True)
class RoundStarted(_Public):
    round: int
    dealer: int
    starter: int
    draw_pile: int

    @property
    def kind(self) -> str:
        return "round_started"


@dataclass(frozen=True, slots=True)
class CardShown:
    """A card shown to ``seat`` alone: ``slot`` is where it lies (``None`` for a drawn card)."""

    seat: int
    card: str
    slot: Slot | None
    why: Why

    @property
    def to(self) -> int | None:
        return self.seat

    @property
    def kind(self) -> str:
        return "card_shown"


@dataclass(frozen=True, slots=True)
class TurnStarted(_Public):
    """``seat``'s turn begins; it may draw from ``may_draw_at`` on."""

    seat: int
    at: int
    may_draw_at: int
    final_turn: bool

    @property
    def kind(self) -> str:
        return "turn_started"


@dataclass(frozen=True, slots=True)
class MoveStarted(_Public):
    """A move's clock starts; ``deadline`` is ``None`` without a turn timer."""

    seat: int
    at: int
    deadline: int | None
    extra_moves: int

    @property
    def kind(self) -> str:
        return "move_started"


@dataclass(frozen=True, slots=True)
class Drew(_Public):
    """``seat`` drew; ``card`` is set only for the public discard pile."""

    seat: int
    source: Source
    card: str | None

    @property
    def kind(self) -> str:
        return "drew"


@dataclass(frozen=True, slots=True)
class PileTurned(_Public):
    """The discard pile was turned over, unshuffled, to become the draw pile."""

    cards: int

    @property
    def kind(self) -> str:
        return "pile_turned"


@dataclass(frozen=True, slots=True)
class Swapped(_Public):
    """The drawn card went into ``slot``; ``discarded`` came out face up. ``card`` is the card put in
    when everyone saw it (taken from the discard pile), else ``None``."""

    seat: int
    slot: Slot
    discarded: str
    card: str | None

    @property
    def kind(self) -> str:
        return "swapped"


@dataclass(frozen=True, slots=True)
class Discarded(_Public):
    seat: int
    card: str

    @property
    def kind(self) -> str:
        return "discarded"


@dataclass(frozen=True, slots=True)
class JackUsed(_Public):
    seat: int
    card: str

    @property
    def kind(self) -> str:
        return "jack_used"


@dataclass(frozen=True, slots=True)
class QueenUsed(_Public):
    seat: int
    card: str
    slot: Slot
    target: int
    target_slot: Slot

    @property
    def kind(self) -> str:
        return "queen_used"


@dataclass(frozen=True, slots=True)
class KingUsed(_Public):
    """``extra_moves`` is how many extra moves are left after this one."""

    seat: int
    card: str
    extra_moves: int

    @property
    def kind(self) -> str:
        return "king_used"


@dataclass(frozen=True, slots=True)
class TimedOut(_Public):
    """``seat``'s move ran out of time at ``at``; ``discarded`` went face up unused (drawn for the player
    first if ``drew_for_player``)."""

    seat: int
    at: int
    discarded: str
    drew_for_player: bool

    @property
    def kind(self) -> str:
        return "timed_out"


@dataclass(frozen=True, slots=True)
class WindowOpened(_Public):
    """``seat`` may call Crisp until ``closes_at`` (exclusive)."""

    seat: int
    at: int
    closes_at: int

    @property
    def kind(self) -> str:
        return "window_opened"


@dataclass(frozen=True, slots=True)
class WindowClosed(_Public):
    seat: int
    at: int

    @property
    def kind(self) -> str:
        return "window_closed"


@dataclass(frozen=True, slots=True)
class CrispCalled(_Public):
    """``seat`` called Crisp; ``final_turns`` other turns follow (the one under way included)."""

    seat: int
    at: int
    final_turns: int

    @property
    def kind(self) -> str:
        return "crisp_called"


@dataclass(frozen=True, slots=True)
class RoundEnded(_Public):
    round: int
    at: int
    caller: int | None
    hands: tuple[tuple[str, str, str], ...]
    sums: tuple[int, ...]
    points: tuple[int, ...]
    totals: tuple[int, ...]

    @property
    def kind(self) -> str:
        return "round_ended"


@dataclass(frozen=True, slots=True)
class GameEnded(_Public):
    totals: tuple[int, ...]
    winners: tuple[int, ...]

    @property
    def kind(self) -> str:
        return "game_ended"


Event = (
    RoundStarted
    | CardShown
    | TurnStarted
    | MoveStarted
    | Drew
    | PileTurned
    | Swapped
    | Discarded
    | JackUsed
    | QueenUsed
    | KingUsed
    | TimedOut
    | WindowOpened
    | WindowClosed
    | CrispCalled
    | RoundEnded
    | GameEnded
)


def _plain(value: Any) -> Any:
    if isinstance(value, Slot):
        return value.label
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    return value


def event_to_dict(event: Event) -> dict[str, Any]:
    """The event as plain JSON-ready data, with its ``type``."""
    out: dict[str, Any] = {"type": event.kind}
    for name in event.__match_args__:  # a dataclass lists exactly its fields there, compiled or not
        value = getattr(event, name)
        kind = type(value)
        # Most fields are plain already (seats, instants, cards): only enums and tuples need ``_plain``.
        out[name] = value if kind is int or kind is str or value is None or kind is bool else _plain(value)
    return out


def redone_by_resume(events: list[Event]) -> bool:
    """Whether a resume (``Game.resume``) would bring about every one of ``events`` again: a crisp window
    closing and a move's clock starting are all it does. Such events need no record of their instant: if
    play is interrupted before the next action, the resume closes the window and starts the move anyway."""
    return all(isinstance(event, WindowClosed | MoveStarted) for event in events)


def visible_to(event: Event, seat: int | None) -> bool:
    """Whether ``seat`` (``None``: a spectator) may see ``event``."""
    to = event.to
    return to is None or to == seat
