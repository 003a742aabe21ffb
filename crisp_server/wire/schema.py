"""The wire protocol as a JSON Schema: every message a client sends and every message the server sends.

Inbound messages are the pydantic models the server parses with (``crisp_server.wire.protocol``). Outbound
messages are built as plain dicts and encoded with orjson on the hot path (``crisp_server.rooms.publishing``,
``crisp_server.engine.events`` and ``views``); the models here describe them exactly, field by field, for
the document (``docs/protocol.schema.json``, written by ``python -m crisp_server schema``) and for the
tests, which validate every frame their clients receive against them (``validate_outbound``). Nothing on
the server's sending path uses them.

The events an update carries, and the field types every model shares, are in
:mod:`crisp_server.wire.schema_events`.
"""

from __future__ import annotations

from typing import Annotated, Any, Final, Literal

from pydantic import BaseModel, Field, RootModel
from pydantic.json_schema import models_json_schema

from crisp_server.wire.protocol import BotLevel, Inbound
from crisp_server.wire.schema_events import (
    Card,
    ErrorCodeName,
    Event,
    Move,
    MsLeft,
    Out,
    Phase,
    RoundTime,
    SeatIndex,
    Seats,
    Version,
    absent,
)

#: The JSON Schema dialect of the document.
DIALECT: Final = "https://json-schema.org/draft/2020-12/schema"

# -- the state in every update and snapshot ----------------------------------------------------------


class GameOptions(Out):
    score_limit: Literal[50, 100, 150]
    turn_seconds: Literal[30, 45, 60] | None = Field(description="null: no turn timer")
    discard_draw: bool = Field(description="drawing from the discard pile is allowed")


class RoomOptions(GameOptions):
    stand_in: Literal[30, 60] | None = Field(
        description="a computer player plays for a player who left, or is away this many seconds; null: never"
    )
    big_screen: bool = Field(description="a big screen shows the table (/tv/CODE): the phones show a compact one")


class SeatState(Out):
    name: str
    connected: bool = Field(description="has a connection now (a computer player's seat always)")
    left: bool = Field(description="left the game (its moves are played on, or a computer player stands in)")
    ready: bool
    bot: BotLevel | None = Field(description="a computer player's seat: its level; null: a player's")
    stand_in: bool = Field(description="a computer player plays for this seat's player now")


class Fairness(Out):
    """The last round's deck commitment; its salt and deck once the round is over."""

    round: int = Field(ge=0)
    commitment: str = Field(pattern="^[0-9a-f]{64}$")
    salt: str = absent(pattern="^[0-9a-f]{32}$", description="only in round_over and game_over")
    deck: list[Card] = absent(min_length=52, max_length=52, description="only in round_over and game_over")


class RoomState(Out):
    code: str
    link: str = Field(description="the join link")
    phase: Phase
    host: SeatIndex
    seats: list[SeatState]
    options: RoomOptions
    spectators: int = Field(ge=0)
    fair: Fairness | None = Field(description="null in the lobby")


class Drawn(Out):
    source: Literal["deck", "discard"] = Field(alias="from")
    card: Card | None = Field(description="the card if it came from the discard pile; null from the deck")


class Window(Out):
    """An open crisp window."""

    seat: SeatIndex
    closes_at: RoundTime


class RoundState(Out):
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


class TableState(Out):
    players: list[str]
    options: GameOptions
    totals: Seats
    scores: list[Seats] = Field(description="each finished round's points")
    game_over: bool
    winners: list[SeatIndex]
    round: RoundState | None = Field(description="null before the first deal")


class Clocks(Out):
    """What runs, as milliseconds left; null when it does not run."""

    peek_ends_in: MsLeft | None
    next_round_in: MsLeft | None
    deadline_in: MsLeft | None
    may_draw_in: MsLeft | None
    window_closes_in: MsLeft | None
    auto_timeout_in: MsLeft | None = Field(description="when an away player's move will be played on")


class Lesson(Out):
    """A lesson room's step, as its learner reads it (``docs/protocol.md``: lessons)."""

    step: str = Field(description="the id of the step shown")
    index: int = Field(ge=0, description="the step shown, 0 first")
    current: int = Field(ge=0, description="the step the lesson is at (above index while an earlier one is reread)")
    count: int = Field(ge=1, description="how many steps the lesson has")
    wait: Literal["next", "move", "computers"] = Field(
        description="what the step shown waits for: lesson_next, the move in move, or the computer players"
    )
    move: Inbound | None = Field(description="the message the step waits for, as a client sends it; else null")
    back: bool = Field(description="there is an earlier step to read again (lesson_back)")


class You(Out):
    seat: SeatIndex | None = Field(description="null for a spectator")
    drawn_card: Card | None = Field(description="the card you drew from the draw pile (only you see it)")
    can: list[Move] = Field(description="the moves you may make now")
    spectator: bool
    host: bool
    hints: bool = Field(description="you may ask for a hint (a practice game: every other seat a computer player)")
    lesson: Lesson = absent(description="only in a lesson room, to its learner")


# -- messages ----------------------------------------------------------------------------------------


class WelcomeMessage(Out):
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


class _State(Out):
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


class ErrorMessage(Out):
    """A request that was refused (nothing changed)."""

    type: Literal["error"]
    v: Version
    code: ErrorCodeName  # type: ignore[valid-type]
    message: str = Field(description="for people, in the connection's language")
    detail: str = absent(description="what was wrong with a bad_message or too_large frame")


class HintMessage(Out):
    """The answer to ``hint``: what the hard level would do with what you were shown, and why."""

    type: Literal["hint"]
    v: Version
    move: Inbound | None = Field(description="the message to send, as a client would; null: let the window pass")
    text: str = Field(description="why, in one line, in the connection's language")


class PongMessage(Out):
    type: Literal["pong"]
    v: Version


class ReplacedMessage(Out):
    """Another connection resumed this seat; closed with 4001."""

    type: Literal["replaced"]
    v: Version


class KickedMessage(Out):
    """The host removed this seat; closed with 4003."""

    type: Literal["kicked"]
    v: Version


class LeftMessage(Out):
    """The answer to leave; closed with 1000."""

    type: Literal["left"]
    v: Version


class RoomClosedMessage(Out):
    """The last player left (sent to spectators); closed with 1000."""

    type: Literal["room_closed"]
    v: Version


class RestartingMessage(Out):
    """The server stops: closed with 1012; reconnect with a back-off and ``resume``."""

    type: Literal["restarting"]
    v: Version


class MovedMessage(Out):
    """The room now lives on another server node: closed with 4005; reconnect at once (``/ws?room=CODE``)
    and ``resume`` (or ``watch`` again)."""

    type: Literal["moved"]
    v: Version


class UnavailableMessage(Out):
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
