"""The events an update carries (``events``: what happened), as pydantic models for the protocol's JSON Schema
(:mod:`crisp_server.wire.schema`), and the field types every outbound model shares.

A field that is sometimes absent (not ``null``) is declared with :func:`absent`.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from crisp_server.engine import Code as RuleCode
from crisp_server.wire.protocol import REACTIONS, BotLevel, ProtocolCode

Card = Annotated[str, Field(pattern="^[A2-9TJQK][SHDC]$", description="rank A 2-9 T J Q K, then suit S H D C")]
Slot = Literal["left", "middle", "right"]
SeatIndex = Annotated[int, Field(ge=0, le=7, description="a seat, 0 is the first")]
Version = Annotated[int, Field(ge=0, description="the room version: +1 with every update")]
RoundTime = Annotated[int, Field(ge=0, description="round time: milliseconds since play started")]
MsLeft = Annotated[int, Field(ge=0, description="milliseconds left when the server sent the message")]
Seats = Annotated[list[int], Field(description="one number per seat, in seat order")]
Phase = Literal["lobby", "peek", "play", "round_over", "game_over"]
Move = Literal["draw_deck", "draw_discard", "swap", "discard", "jack", "queen", "king", "crisp"]
ErrorCodeName = Literal[tuple(c.value for c in (*ProtocolCode, *RuleCode))]  # type: ignore[valid-type]


def _no_default(schema: dict[str, Any]) -> None:
    schema.pop("default", None)


def absent(**kwargs: Any) -> Any:
    """A field that is left out (never ``null``) when it does not apply."""
    return Field(default=None, json_schema_extra=_no_default, **kwargs)


class Out(BaseModel):
    """Outbound: exactly these fields, of exactly these JSON types."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


# -- events: what happened, in an update's ``events`` -------------------------------------------------


class RoundStartedEvent(Out):
    """A round was dealt (3 cards to each seat)."""

    type: Literal["round_started"]
    round: int = Field(ge=0, description="the round's index, 0 first")
    dealer: SeatIndex
    starter: SeatIndex = Field(description="the seat that moves first")
    draw_pile: int = Field(ge=0, description="cards left in the draw pile")


class CardShownEvent(Out):
    """A card shown to one seat alone (only that seat receives this event)."""

    type: Literal["card_shown"]
    seat: SeatIndex
    card: Card
    slot: Slot | None = Field(description="where the card lies; null for a card just drawn")
    why: Literal["deal", "jack", "queen", "draw"]


class TurnStartedEvent(Out):
    type: Literal["turn_started"]
    seat: SeatIndex
    at: RoundTime
    may_draw_at: RoundTime = Field(description="the seat may draw from then on (the previous crisp window)")
    final_turn: bool = Field(description="a final turn after a Crisp call")


class MoveStartedEvent(Out):
    type: Literal["move_started"]
    seat: SeatIndex
    at: RoundTime
    deadline: RoundTime | None = Field(description="when the move times out; null without a turn timer")
    extra_moves: int = Field(ge=0, description="a King's extra moves left after this one")


class DrewEvent(Out):
    type: Literal["drew"]
    seat: SeatIndex
    source: Literal["deck", "discard"]
    card: Card | None = Field(description="the card if it came from the (public) discard pile, else null")


class PileTurnedEvent(Out):
    """The discard pile was turned over, unshuffled, to become the draw pile."""

    type: Literal["pile_turned"]
    cards: int = Field(ge=0, description="the new draw pile's size")


class SwappedEvent(Out):
    type: Literal["swapped"]
    seat: SeatIndex
    slot: Slot
    discarded: Card = Field(description="the card that came out, now on the discard pile")
    card: Card | None = Field(description="the card put in if everyone saw it (from the discard pile), else null")


class DiscardedEvent(Out):
    type: Literal["discarded"]
    seat: SeatIndex
    card: Card


class JackUsedEvent(Out):
    type: Literal["jack_used"]
    seat: SeatIndex
    card: Card


class QueenUsedEvent(Out):
    """``seat``'s ``slot`` and ``target``'s ``target_slot`` were exchanged, unseen."""

    type: Literal["queen_used"]
    seat: SeatIndex
    card: Card
    slot: Slot
    target: SeatIndex
    target_slot: Slot


class KingUsedEvent(Out):
    type: Literal["king_used"]
    seat: SeatIndex
    card: Card
    extra_moves: int = Field(ge=0, description="extra moves left after this one")


class TimedOutEvent(Out):
    type: Literal["timed_out"]
    seat: SeatIndex
    at: RoundTime
    discarded: Card = Field(description="the drawn card, put on the discard pile unused")
    drew_for_player: bool = Field(description="the server drew it for the player first")


class WindowOpenedEvent(Out):
    type: Literal["window_opened"]
    seat: SeatIndex
    at: RoundTime
    closes_at: RoundTime = Field(description="the seat may call Crisp until then (exclusive)")


class WindowClosedEvent(Out):
    type: Literal["window_closed"]
    seat: SeatIndex
    at: RoundTime


class CrispCalledEvent(Out):
    type: Literal["crisp_called"]
    seat: SeatIndex
    at: RoundTime
    final_turns: int = Field(ge=0, description="turns still to come, the one under way included")


class RoundEndedEvent(Out):
    type: Literal["round_ended"]
    round: int = Field(ge=0)
    at: RoundTime
    caller: SeatIndex = Field(description="who called Crisp (a round ends only after a call)")
    hands: list[Annotated[list[Card], Field(min_length=3, max_length=3)]] = Field(
        description="every seat's cards, left, middle, right"
    )
    sums: Seats
    points: Seats
    totals: Seats


class GameEndedEvent(Out):
    type: Literal["game_ended"]
    totals: Seats
    winners: list[SeatIndex] = Field(description="the seats with the lowest total")


class JoinedEvent(Out):
    type: Literal["joined"]
    seat: SeatIndex
    name: str


class LeftEvent(Out):
    type: Literal["left"]
    seat: SeatIndex = Field(description="in the lobby the seats after it move up")
    host: SeatIndex = Field(description="the host now")


class KickedEvent(Out):
    type: Literal["kicked"]
    seat: SeatIndex = Field(description="the seats after it move up")


class ConnectedEvent(Out):
    type: Literal["connected"]
    seat: SeatIndex


class DisconnectedEvent(Out):
    type: Literal["disconnected"]
    seat: SeatIndex


class SpectatorJoinedEvent(Out):
    type: Literal["spectator_joined"]


class SpectatorLeftEvent(Out):
    type: Literal["spectator_left"]


class OptionsChangedEvent(Out):
    type: Literal["options_changed"]


class PeekEvent(Out):
    """A round was dealt: the peek phase begins."""

    type: Literal["peek"]
    commitment: str = Field(pattern="^[0-9a-f]{64}$", description="hex SHA-256 of salt + deck")


class PlayEvent(Out):
    type: Literal["play"]


class ReadyEvent(Out):
    type: Literal["ready"]
    seat: SeatIndex


class DeckRevealedEvent(Out):
    type: Literal["deck_revealed"]
    salt: str = Field(pattern="^[0-9a-f]{32}$")
    deck: list[Card] = Field(min_length=52, max_length=52, description="the round's deck in deal order")


class ReactionEvent(Out):
    type: Literal["reaction"]
    seat: SeatIndex
    emoji: Literal[REACTIONS]  # type: ignore[valid-type]


class LobbyEvent(Out):
    """A rematch: the room is back in the lobby with the same seats (those who left are dropped)."""

    type: Literal["lobby"]


class BotAddedEvent(Out):
    """The host seated a computer player (at the end of the seats)."""

    type: Literal["bot_added"]
    seat: SeatIndex
    name: str
    level: BotLevel


class BotRemovedEvent(Out):
    type: Literal["bot_removed"]
    seat: SeatIndex = Field(description="the seats after it move up")


class BotLevelEvent(Out):
    type: Literal["bot_level"]
    seat: SeatIndex
    level: BotLevel


class StandInEvent(Out):
    """A computer player (level normal) now plays for this seat's player, who left or is away."""

    type: Literal["stand_in"]
    seat: SeatIndex


class AvailableEvent(Out):
    """The room is back after the database could not be written: the update carries the saved state."""

    type: Literal["available"]


class LessonStepEvent(Out):
    """A lesson room: the step shown to its learner changed (``you.lesson`` has it)."""

    type: Literal["lesson_step"]
    index: int = Field(ge=0, description="the step shown now, 0 first")


Event = Annotated[
    RoundStartedEvent
    | CardShownEvent
    | TurnStartedEvent
    | MoveStartedEvent
    | DrewEvent
    | PileTurnedEvent
    | SwappedEvent
    | DiscardedEvent
    | JackUsedEvent
    | QueenUsedEvent
    | KingUsedEvent
    | TimedOutEvent
    | WindowOpenedEvent
    | WindowClosedEvent
    | CrispCalledEvent
    | RoundEndedEvent
    | GameEndedEvent
    | JoinedEvent
    | LeftEvent
    | KickedEvent
    | ConnectedEvent
    | DisconnectedEvent
    | SpectatorJoinedEvent
    | SpectatorLeftEvent
    | OptionsChangedEvent
    | PeekEvent
    | PlayEvent
    | ReadyEvent
    | DeckRevealedEvent
    | ReactionEvent
    | LobbyEvent
    | BotAddedEvent
    | BotRemovedEvent
    | BotLevelEvent
    | StandInEvent
    | AvailableEvent
    | LessonStepEvent,
    Field(discriminator="type"),
]
