"""The wire protocol as a JSON Schema: every message a client sends and every message the server sends.

Inbound messages are the pydantic models the server parses with (``crisp_server.wire.protocol``). Outbound
messages are built as plain dicts and encoded with orjson on the hot path (``crisp_server.rooms.publishing``,
``crisp_server.engine.events`` and ``views``); the models here describe them exactly, field by field, for
the document (``docs/protocol.schema.json``, written by ``python -m crisp_server schema``) and for the
tests, which validate every frame their clients receive against them (``validate_outbound``). Nothing on
the server's sending path uses them.

A field that is sometimes absent (not ``null``) is declared with :func:`_absent`.
"""

from __future__ import annotations

from typing import Annotated, Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, RootModel
from pydantic.json_schema import models_json_schema

from crisp_server.engine import Code as RuleCode
from crisp_server.wire.protocol import REACTIONS, BotLevel, Inbound, ProtocolCode

#: The JSON Schema dialect of the document.
DIALECT: Final = "https://json-schema.org/draft/2020-12/schema"

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


def _absent(**kwargs: Any) -> Any:
    """A field that is left out (never ``null``) when it does not apply."""
    return Field(default=None, json_schema_extra=_no_default, **kwargs)


class _Out(BaseModel):
    """Outbound: exactly these fields, of exactly these JSON types."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


# -- events: what happened, in an update's ``events`` -------------------------------------------------


class RoundStartedEvent(_Out):
    """A round was dealt (3 cards to each seat)."""

    type: Literal["round_started"]
    round: int = Field(ge=0, description="the round's index, 0 first")
    dealer: SeatIndex
    starter: SeatIndex = Field(description="the seat that moves first")
    draw_pile: int = Field(ge=0, description="cards left in the draw pile")


class CardShownEvent(_Out):
    """A card shown to one seat alone (only that seat receives this event)."""

    type: Literal["card_shown"]
    seat: SeatIndex
    card: Card
    slot: Slot | None = Field(description="where the card lies; null for a card just drawn")
    why: Literal["deal", "jack", "queen", "draw"]


class TurnStartedEvent(_Out):
    type: Literal["turn_started"]
    seat: SeatIndex
    at: RoundTime
    may_draw_at: RoundTime = Field(description="the seat may draw from then on (the previous crisp window)")
    final_turn: bool = Field(description="a final turn after a Crisp call")


class MoveStartedEvent(_Out):
    type: Literal["move_started"]
    seat: SeatIndex
    at: RoundTime
    deadline: RoundTime | None = Field(description="when the move times out; null without a turn timer")
    extra_moves: int = Field(ge=0, description="a King's extra moves left after this one")


class DrewEvent(_Out):
    type: Literal["drew"]
    seat: SeatIndex
    source: Literal["deck", "discard"]
    card: Card | None = Field(description="the card if it came from the (public) discard pile, else null")


class PileTurnedEvent(_Out):
    """The discard pile was turned over, unshuffled, to become the draw pile."""

    type: Literal["pile_turned"]
    cards: int = Field(ge=0, description="the new draw pile's size")


class SwappedEvent(_Out):
    type: Literal["swapped"]
    seat: SeatIndex
    slot: Slot
    discarded: Card = Field(description="the card that came out, now on the discard pile")
    card: Card | None = Field(description="the card put in if everyone saw it (from the discard pile), else null")


class DiscardedEvent(_Out):
    type: Literal["discarded"]
    seat: SeatIndex
    card: Card


class JackUsedEvent(_Out):
    type: Literal["jack_used"]
    seat: SeatIndex
    card: Card


class QueenUsedEvent(_Out):
    """``seat``'s ``slot`` and ``target``'s ``target_slot`` were exchanged, unseen."""

    type: Literal["queen_used"]
    seat: SeatIndex
    card: Card
    slot: Slot
    target: SeatIndex
    target_slot: Slot


class KingUsedEvent(_Out):
    type: Literal["king_used"]
    seat: SeatIndex
    card: Card
    extra_moves: int = Field(ge=0, description="extra moves left after this one")


class TimedOutEvent(_Out):
    type: Literal["timed_out"]
    seat: SeatIndex
    at: RoundTime
    discarded: Card = Field(description="the drawn card, put on the discard pile unused")
    drew_for_player: bool = Field(description="the server drew it for the player first")


class WindowOpenedEvent(_Out):
    type: Literal["window_opened"]
    seat: SeatIndex
    at: RoundTime
    closes_at: RoundTime = Field(description="the seat may call Crisp until then (exclusive)")


class WindowClosedEvent(_Out):
    type: Literal["window_closed"]
    seat: SeatIndex
    at: RoundTime


class CrispCalledEvent(_Out):
    type: Literal["crisp_called"]
    seat: SeatIndex
    at: RoundTime
    final_turns: int = Field(ge=0, description="turns still to come, the one under way included")


class RoundEndedEvent(_Out):
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


class GameEndedEvent(_Out):
    type: Literal["game_ended"]
    totals: Seats
    winners: list[SeatIndex] = Field(description="the seats with the lowest total")


class JoinedEvent(_Out):
    type: Literal["joined"]
    seat: SeatIndex
    name: str


class LeftEvent(_Out):
    type: Literal["left"]
    seat: SeatIndex = Field(description="in the lobby the seats after it move up")
    host: SeatIndex = Field(description="the host now")


class KickedEvent(_Out):
    type: Literal["kicked"]
    seat: SeatIndex = Field(description="the seats after it move up")


class ConnectedEvent(_Out):
    type: Literal["connected"]
    seat: SeatIndex


class DisconnectedEvent(_Out):
    type: Literal["disconnected"]
    seat: SeatIndex


class SpectatorJoinedEvent(_Out):
    type: Literal["spectator_joined"]


class SpectatorLeftEvent(_Out):
    type: Literal["spectator_left"]


class OptionsChangedEvent(_Out):
    type: Literal["options_changed"]


class PeekEvent(_Out):
    """A round was dealt: the peek phase begins."""

    type: Literal["peek"]
    commitment: str = Field(pattern="^[0-9a-f]{64}$", description="hex SHA-256 of salt + deck")


class PlayEvent(_Out):
    type: Literal["play"]


class ReadyEvent(_Out):
    type: Literal["ready"]
    seat: SeatIndex


class DeckRevealedEvent(_Out):
    type: Literal["deck_revealed"]
    salt: str = Field(pattern="^[0-9a-f]{32}$")
    deck: list[Card] = Field(min_length=52, max_length=52, description="the round's deck in deal order")


class ReactionEvent(_Out):
    type: Literal["reaction"]
    seat: SeatIndex
    emoji: Literal[REACTIONS]  # type: ignore[valid-type]


class LobbyEvent(_Out):
    """A rematch: the room is back in the lobby with the same seats (those who left are dropped)."""

    type: Literal["lobby"]


class BotAddedEvent(_Out):
    """The host seated a computer player (at the end of the seats)."""

    type: Literal["bot_added"]
    seat: SeatIndex
    name: str
    level: BotLevel


class BotRemovedEvent(_Out):
    type: Literal["bot_removed"]
    seat: SeatIndex = Field(description="the seats after it move up")


class BotLevelEvent(_Out):
    type: Literal["bot_level"]
    seat: SeatIndex
    level: BotLevel


class StandInEvent(_Out):
    """A computer player (level normal) now plays for this seat's player, who left or is away."""

    type: Literal["stand_in"]
    seat: SeatIndex


class AvailableEvent(_Out):
    """The room is back after the database could not be written: the update carries the saved state."""

    type: Literal["available"]


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
    | AvailableEvent,
    Field(discriminator="type"),
]

# -- the state in every update and snapshot ----------------------------------------------------------


class GameOptions(_Out):
    score_limit: Literal[50, 100, 150]
    turn_seconds: Literal[30, 45, 60] | None = Field(description="null: no turn timer")
    discard_draw: bool = Field(description="drawing from the discard pile is allowed")


class RoomOptions(GameOptions):
    stand_in: Literal[30, 60] | None = Field(
        description="a computer player plays for a player who left, or is away this many seconds; null: never"
    )


class SeatState(_Out):
    name: str
    connected: bool = Field(description="has a connection now (a computer player's seat always)")
    left: bool = Field(description="left the game (its moves are played on, or a computer player stands in)")
    ready: bool
    bot: BotLevel | None = Field(description="a computer player's seat: its level; null: a player's")
    stand_in: bool = Field(description="a computer player plays for this seat's player now")


class Fairness(_Out):
    """The last round's deck commitment; its salt and deck once the round is over."""

    round: int = Field(ge=0)
    commitment: str = Field(pattern="^[0-9a-f]{64}$")
    salt: str = _absent(pattern="^[0-9a-f]{32}$", description="only in round_over and game_over")
    deck: list[Card] = _absent(min_length=52, max_length=52, description="only in round_over and game_over")


class RoomState(_Out):
    code: str
    link: str = Field(description="the join link")
    phase: Phase
    host: SeatIndex
    seats: list[SeatState]
    options: RoomOptions
    spectators: int = Field(ge=0)
    fair: Fairness | None = Field(description="null in the lobby")


class Drawn(_Out):
    source: Literal["deck", "discard"] = Field(alias="from")
    card: Card | None = Field(description="the card if it came from the discard pile; null from the deck")


class Window(_Out):
    """An open crisp window."""

    seat: SeatIndex
    closes_at: RoundTime


class RoundState(_Out):
    index: int = Field(ge=0)
    dealer: SeatIndex
    starter: SeatIndex
    now: RoundTime
    ended: bool
    turn: SeatIndex | None = Field(description="whose move it is; null once the round has ended")
    drawn: Drawn | None = Field(description="the card drawn in the move under way; null if none")
    extra_moves: int = Field(ge=0)
    may_draw_at: RoundTime
    deadline: RoundTime | None = Field(description="when the move times out; null without a turn timer")
    window: Window | None = Field(description="null when no crisp window is open")
    caller: SeatIndex | None
    final_turns_left: int | None = Field(ge=0, description="null until Crisp is called")
    draw_pile: int = Field(ge=0)
    discard: list[Card] = Field(description="the discard pile, bottom first")
    hands: list[Annotated[list[Card], Field(min_length=3, max_length=3)]] | None = Field(
        description="every hand, once the round has ended; else null"
    )
    sums: Seats | None
    points: Seats | None


class TableState(_Out):
    players: list[str]
    options: GameOptions
    totals: Seats
    scores: list[Seats] = Field(description="each finished round's points")
    game_over: bool
    winners: list[SeatIndex]
    round: RoundState | None = Field(description="null before the first deal")


class Clocks(_Out):
    """What runs, as milliseconds left; null when it does not run."""

    peek_ends_in: MsLeft | None
    next_round_in: MsLeft | None
    deadline_in: MsLeft | None
    may_draw_in: MsLeft | None
    window_closes_in: MsLeft | None
    auto_timeout_in: MsLeft | None = Field(description="when an away player's move will be played on")


class You(_Out):
    seat: SeatIndex | None = Field(description="null for a spectator")
    drawn_card: Card | None = Field(description="the card you drew from the draw pile (only you see it)")
    can: list[Move] = Field(description="the moves you may make now")
    spectator: bool
    host: bool
    hints: bool = Field(description="you may ask for a hint (a practice game: every other seat a computer player)")


# -- messages ----------------------------------------------------------------------------------------


class WelcomeMessage(_Out):
    """The answer to create, join, resume and watch; an update follows."""

    type: Literal["welcome"]
    v: Version
    room: str = Field(description="the room code")
    seat: SeatIndex | None = Field(description="null for a spectator")
    token: str | None = Field(description="the seat's secret, on create and join only; else null")
    link: str
    idle_game_hours: float = Field(
        gt=0, description="a game no player is connected to waits this long for one, then ends abandoned"
    )


class _State(_Out):
    v: Version
    room: RoomState
    table: TableState | None = Field(description="null in the lobby (before the first game, after a rematch)")
    clock: Clocks
    you: You
    events: list[Event]


class UpdateMessage(_State):
    """A change of the room: every member gets its own."""

    type: Literal["update"]


class SnapshotMessage(_State):
    """The answer to sync: the state now, ``events`` empty."""

    type: Literal["snapshot"]


class ErrorMessage(_Out):
    """A request that was refused (nothing changed)."""

    type: Literal["error"]
    v: Version
    code: ErrorCodeName  # type: ignore[valid-type]
    message: str = Field(description="for people, in the connection's language")
    detail: str = _absent(description="what was wrong with a bad_message or too_large frame")


class HintMessage(_Out):
    """The answer to ``hint``: what the hard level would do with what you were shown, and why."""

    type: Literal["hint"]
    v: Version
    move: Inbound | None = Field(description="the message to send, as a client would; null: let the window pass")
    text: str = Field(description="why, in one line, in the connection's language")


class PongMessage(_Out):
    type: Literal["pong"]
    v: Version


class ReplacedMessage(_Out):
    """Another connection resumed this seat; closed with 4001."""

    type: Literal["replaced"]
    v: Version


class KickedMessage(_Out):
    """The host removed this seat; closed with 4003."""

    type: Literal["kicked"]
    v: Version


class LeftMessage(_Out):
    """The answer to leave; closed with 1000."""

    type: Literal["left"]
    v: Version


class RoomClosedMessage(_Out):
    """The last player left (sent to spectators); closed with 1000."""

    type: Literal["room_closed"]
    v: Version


class RestartingMessage(_Out):
    """The server stops: closed with 1012; reconnect with a back-off and ``resume``."""

    type: Literal["restarting"]
    v: Version


class MovedMessage(_Out):
    """The room now lives on another server node: closed with 4005; reconnect at once (``/ws?room=CODE``)
    and ``resume`` (or ``watch`` again)."""

    type: Literal["moved"]
    v: Version


class UnavailableMessage(_Out):
    """The room cannot save changes (the database is down, full or locked): it stays as last saved, refuses
    changes with the error ``unavailable`` and goes on by itself (an update with the event ``available``)."""

    type: Literal["unavailable"]
    v: Version
    reason: Literal["database"]
    message: str = Field(description="for display, in the member's language")


Outbound = Annotated[
    WelcomeMessage
    | UpdateMessage
    | SnapshotMessage
    | ErrorMessage
    | PongMessage
    | HintMessage
    | ReplacedMessage
    | KickedMessage
    | LeftMessage
    | RoomClosedMessage
    | RestartingMessage
    | MovedMessage
    | UnavailableMessage,
    Field(discriminator="type"),
]


class InboundMessage(RootModel[Inbound]):
    """A message a client sends. Fields not listed are ignored."""


class OutboundMessage(RootModel[Outbound]):
    """A message the server sends. It has exactly the fields listed."""


def validate_outbound(frame: str | bytes) -> BaseModel:
    """Parse one frame the server sent; ``pydantic.ValidationError`` if the schema does not allow it."""
    message: BaseModel = OutboundMessage.model_validate_json(frame).root
    return message


def json_schema() -> dict[str, Any]:
    """The JSON Schema document of the protocol (``docs/protocol.schema.json``)."""
    _, top = models_json_schema([(InboundMessage, "validation"), (OutboundMessage, "validation")])
    return {
        "$schema": DIALECT,
        "title": "The Crisp WebSocket protocol",
        "description": (
            "JSON text frames on /ws (docs/protocol.md). #/$defs/InboundMessage is what a client sends (fields "
            "not listed are ignored); #/$defs/OutboundMessage is what the server sends (exactly the fields "
            "listed)."
        ),
        "anyOf": [{"$ref": "#/$defs/InboundMessage"}, {"$ref": "#/$defs/OutboundMessage"}],
        **top,
    }
