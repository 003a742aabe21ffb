"""What happened, in order, and who may see it.

Every transition of :class:`crisp_server.engine.game.Game` returns a list of events. An event is
public unless its ``to`` names a seat: then only that seat may see it (a card shown privately). Public
events never carry a card that somebody at the table may not see.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any, ClassVar

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
    kind: ClassVar[str] = "round_started"
    round: int
    dealer: int
    starter: int
    draw_pile: int


@dataclass(frozen=True, slots=True)
class CardShown:
    """A card shown to ``seat`` alone: ``slot`` is where it lies (``None`` for a drawn card)."""

    kind: ClassVar[str] = "card_shown"
    seat: int
    card: str
    slot: Slot | None
    why: Why

    @property
    def to(self) -> int | None:
        return self.seat


@dataclass(frozen=True, slots=True)
class TurnStarted(_Public):
    """``seat``'s turn begins; it may draw from ``may_draw_at`` on."""

    kind: ClassVar[str] = "turn_started"
    seat: int
    at: int
    may_draw_at: int
    final_turn: bool


@dataclass(frozen=True, slots=True)
class MoveStarted(_Public):
    """A move's clock starts; ``deadline`` is ``None`` without a turn timer."""

    kind: ClassVar[str] = "move_started"
    seat: int
    at: int
    deadline: int | None
    extra_moves: int


@dataclass(frozen=True, slots=True)
class Drew(_Public):
    """``seat`` drew; ``card`` is set only for the public discard pile."""

    kind: ClassVar[str] = "drew"
    seat: int
    source: Source
    card: str | None


@dataclass(frozen=True, slots=True)
class PileTurned(_Public):
    """The discard pile was turned over, unshuffled, to become the draw pile."""

    kind: ClassVar[str] = "pile_turned"
    cards: int


@dataclass(frozen=True, slots=True)
class Swapped(_Public):
    """The drawn card went into ``slot``; ``discarded`` came out face up. ``card`` is the card put in
    when everyone saw it (taken from the discard pile), else ``None``."""

    kind: ClassVar[str] = "swapped"
    seat: int
    slot: Slot
    discarded: str
    card: str | None


@dataclass(frozen=True, slots=True)
class Discarded(_Public):
    kind: ClassVar[str] = "discarded"
    seat: int
    card: str


@dataclass(frozen=True, slots=True)
class JackUsed(_Public):
    kind: ClassVar[str] = "jack_used"
    seat: int
    card: str


@dataclass(frozen=True, slots=True)
class QueenUsed(_Public):
    kind: ClassVar[str] = "queen_used"
    seat: int
    card: str
    slot: Slot
    target: int
    target_slot: Slot


@dataclass(frozen=True, slots=True)
class KingUsed(_Public):
    """``extra_moves`` is how many extra moves are left after this one."""

    kind: ClassVar[str] = "king_used"
    seat: int
    card: str
    extra_moves: int


@dataclass(frozen=True, slots=True)
class TimedOut(_Public):
    """``seat``'s move ran out of time at ``at``; ``discarded`` went face up unused (drawn for the player
    first if ``drew_for_player``)."""

    kind: ClassVar[str] = "timed_out"
    seat: int
    at: int
    discarded: str
    drew_for_player: bool


@dataclass(frozen=True, slots=True)
class WindowOpened(_Public):
    """``seat`` may call Crisp until ``closes_at`` (exclusive)."""

    kind: ClassVar[str] = "window_opened"
    seat: int
    at: int
    closes_at: int


@dataclass(frozen=True, slots=True)
class WindowClosed(_Public):
    kind: ClassVar[str] = "window_closed"
    seat: int
    at: int


@dataclass(frozen=True, slots=True)
class CrispCalled(_Public):
    """``seat`` called Crisp; ``final_turns`` other turns follow (the one under way included)."""

    kind: ClassVar[str] = "crisp_called"
    seat: int
    at: int
    final_turns: int


@dataclass(frozen=True, slots=True)
class RoundEnded(_Public):
    kind: ClassVar[str] = "round_ended"
    round: int
    at: int
    caller: int | None
    hands: tuple[tuple[str, str, str], ...]
    sums: tuple[int, ...]
    points: tuple[int, ...]
    totals: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class GameEnded(_Public):
    kind: ClassVar[str] = "game_ended"
    totals: tuple[int, ...]
    winners: tuple[int, ...]


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
    for name in event.__slots__:  # dataclass(slots=True) lists exactly the fields
        value = getattr(event, name)
        kind = type(value)
        # Most fields are plain already (seats, instants, cards): only enums and tuples need ``_plain``.
        out[name] = value if kind is int or kind is str or value is None or kind is bool else _plain(value)
    return out


def visible_to(event: Event, seat: int | None) -> bool:
    """Whether ``seat`` (``None``: a spectator) may see ``event``."""
    to = event.to
    return to is None or to == seat
