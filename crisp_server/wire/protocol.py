"""The wire protocol: JSON text frames with a ``type`` key (documented in ``docs/protocol.md``).

Inbound messages are validated as one pydantic discriminated union; anything else is answered with
``{"type": "error", "code": "bad_message", ...}`` and the connection stays open. Outbound messages are
built by the rooms from the engine's views (``crisp_server.rooms.publishing``); this module only names
their error codes and gives their texts in the connection's language (from ``crisp_server.texts``).
``crisp_server.wire.schema`` describes both directions as a JSON Schema.
"""

from __future__ import annotations

from enum import Enum
from typing import Annotated, Any, Final, Literal, cast

import orjson
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictInt,
    StrictStr,
    TypeAdapter,
    ValidationError,
    model_validator,
)

from crisp_server.engine import Action, CallCrisp, Discard, Draw, Slot, Source, Swap, UseJack, UseKing, UseQueen
from crisp_server.engine import Code as RuleCode
from crisp_server.texts import Lang, texts

SlotName = Literal["left", "middle", "right"]
#: The computer players' levels a room offers (the arena also has ``random``).
BotLevel = Literal["easy", "normal", "hard"]
#: How long a player may be away before a computer player stands in (seconds; ``None``: never).
StandIn = Literal[30, 60] | None

#: The reactions a player can send to the table.
REACTIONS: Final = ("👍", "👏", "😂", "😮", "😬", "🤔", "🔥", "🍀")


class _In(BaseModel):
    # Fields a message does not define are ignored (docs/protocol.md); ``draw``'s ``from`` has no other name.
    model_config = ConfigDict(extra="ignore", frozen=True)


class Create(_In):
    """Create a private room and take its first seat (as host)."""

    type: Literal["create"]
    name: StrictStr
    lang: Lang = "en"
    #: A practice room: this many computer players of ``level`` sit down with the host, and the game starts.
    bots: Annotated[StrictInt, Field(ge=0, le=7)] = 0
    level: BotLevel = "normal"
    #: A lesson room ("Learn to play"): the host and two computer players, on the lesson's deal and script.
    lesson: StrictBool = False

    @model_validator(mode="after")
    def _lesson_alone(self) -> Create:
        if self.lesson and (self.bots or "level" in self.model_fields_set):
            raise ValueError("a lesson brings its own computer players: no bots or level with it")
        return self


class Join(_In):
    type: Literal["join"]
    room: StrictStr
    name: StrictStr
    lang: Lang = "en"


class Resume(_In):
    """Come back to one's seat with the token given at the first join."""

    type: Literal["resume"]
    room: StrictStr
    token: StrictStr
    lang: Lang = "en"


class Watch(_In):
    type: Literal["watch"]
    room: StrictStr
    lang: Lang = "en"


class Sit(_In):
    """A spectator takes a free seat in the lobby (a ``join`` on the connection that watches)."""

    type: Literal["sit"]
    name: StrictStr


class Leave(_In):
    type: Literal["leave"]


class Kick(_In):
    type: Literal["kick"]
    seat: StrictInt


#: The game's rule options of ``options``: the three together, or none of them.
RULE_OPTIONS: Final = ("score_limit", "turn_seconds", "discard_draw")


class SetOptions(_In):
    """The host's options. A field absent leaves that option as it is (see ``model_fields_set``; the defaults
    below are never used): the rule options go together, all three or none; outside the lobby only
    ``big_screen`` may be sent (it changes no rule)."""

    type: Literal["options"]
    score_limit: Literal[50, 100, 150] = 100
    turn_seconds: Literal[30, 45, 60] | None = None
    discard_draw: StrictBool = False
    stand_in: StandIn = None
    #: A big screen shows the table (``/tv/CODE``): the phones show a compact one.
    big_screen: StrictBool = False

    @model_validator(mode="after")
    def _together(self) -> SetOptions:
        given = self.model_fields_set
        rules = [name for name in RULE_OPTIONS if name in given]
        if rules and len(rules) < len(RULE_OPTIONS):
            missing = ", ".join(name for name in RULE_OPTIONS if name not in given)
            raise ValueError(f"score_limit, turn_seconds and discard_draw go together: {missing} missing")
        if not given - {"type"}:
            raise ValueError("nothing to set: send the rule options, stand_in or big_screen")
        return self


class AddBot(_In):
    type: Literal["add_bot"]
    level: BotLevel


class RemoveBot(_In):
    type: Literal["remove_bot"]
    seat: StrictInt


class SetBotLevel(_In):
    type: Literal["bot_level"]
    seat: StrictInt
    level: BotLevel


class HintMsg(_In):
    """Ask what the hard level would do (practice games only)."""

    type: Literal["hint"]


class Start(_In):
    type: Literal["start"]


class Ready(_In):
    """Done looking at the cards (peek), or ready for the next round."""

    type: Literal["ready"]


class DrawMsg(_In):
    type: Literal["draw"]
    source: Literal["deck", "discard"] = Field(default="deck", alias="from")


class SwapMsg(_In):
    type: Literal["swap"]
    slot: SlotName


class DiscardMsg(_In):
    type: Literal["discard"]


class JackMsg(_In):
    type: Literal["jack"]


class QueenMsg(_In):
    type: Literal["queen"]
    slot: SlotName
    target: StrictInt
    target_slot: SlotName


class KingMsg(_In):
    type: Literal["king"]


class CrispMsg(_In):
    type: Literal["crisp"]


class React(_In):
    type: Literal["react"]
    emoji: StrictStr


class Rematch(_In):
    type: Literal["rematch"]


class LessonNext(_In):
    """A lesson: on to the next step (a step that is read, not one that waits for a move)."""

    type: Literal["lesson_next"]


class LessonBack(_In):
    """A lesson: back to the previous step that is read, to read it again (the game stays where it is)."""

    type: Literal["lesson_back"]


class Sync(_In):
    """Ask for a snapshot (after a gap in ``v``, or on coming back to the page)."""

    type: Literal["sync"]


class Ping(_In):
    type: Literal["ping"]


class SetLang(_In):
    """A member's texts from now on in ``lang`` (the player picked another language); no answer."""

    type: Literal["lang"]
    lang: Lang


Inbound = Annotated[
    Create
    | Join
    | Resume
    | Watch
    | Sit
    | Leave
    | Kick
    | SetOptions
    | Start
    | Ready
    | DrawMsg
    | SwapMsg
    | DiscardMsg
    | JackMsg
    | QueenMsg
    | KingMsg
    | CrispMsg
    | React
    | Rematch
    | Sync
    | Ping
    | SetLang
    | AddBot
    | RemoveBot
    | SetBotLevel
    | HintMsg
    | LessonNext
    | LessonBack,
    Field(discriminator="type"),
]
ENTRY_MESSAGES: Final = (Create, Join, Resume, Watch)
ACTION_MESSAGES: Final = (DrawMsg, SwapMsg, DiscardMsg, JackMsg, QueenMsg, KingMsg, CrispMsg)

ActionMessage = DrawMsg | SwapMsg | DiscardMsg | JackMsg | QueenMsg | KingMsg | CrispMsg


def to_action(seat: int, msg: ActionMessage) -> Action:
    """The engine's action for a move message of ``seat`` (the rooms and the arena share it)."""
    if isinstance(msg, DrawMsg):
        return Draw(seat, Source(msg.source))
    if isinstance(msg, SwapMsg):
        return Swap(seat, Slot.parse(msg.slot))
    if isinstance(msg, DiscardMsg):
        return Discard(seat)
    if isinstance(msg, JackMsg):
        return UseJack(seat)
    if isinstance(msg, QueenMsg):
        return UseQueen(seat, Slot.parse(msg.slot), msg.target, Slot.parse(msg.target_slot))
    if isinstance(msg, KingMsg):
        return UseKing(seat)
    return CallCrisp(seat)


# Through Any: mypy's incremental cache sometimes loses that the annotated union is a type (a false arg-type).
_ADAPTER: Final[TypeAdapter[Inbound]] = TypeAdapter(cast(Any, Inbound))


class ProtocolCode(Enum):
    """Errors of the protocol and the rooms (the engine's rule codes are used as they are)."""

    BAD_MESSAGE = "bad_message"
    TOO_LARGE = "too_large"
    RATE_LIMITED = "rate_limited"
    ROOM_NOT_FOUND = "room_not_found"
    ROOM_FULL = "room_full"
    NAME_TAKEN = "name_taken"
    BAD_NAME = "bad_name"
    BAD_TOKEN = "bad_token"
    NOT_HOST = "not_host"
    GAME_RUNNING = "game_running"
    NOT_IN_ROOM = "not_in_room"
    ALREADY_IN_ROOM = "already_in_room"
    NOT_SEATED = "not_seated"
    WRONG_PHASE = "wrong_phase"
    NOT_ENOUGH_PLAYERS = "not_enough_players"
    NO_SUCH_SEAT = "no_such_seat"
    ALREADY_SEATED = "already_seated"
    BAD_REACTION = "bad_reaction"
    UNAVAILABLE = "unavailable"
    NOT_A_BOT = "not_a_bot"
    NO_HINTS = "no_hints"
    NOTHING_TO_HINT = "nothing_to_hint"
    NOT_A_LESSON = "not_a_lesson"
    LESSON_OTHER_MOVE = "lesson_other_move"
    LESSON_NO_STEP = "lesson_no_step"


ErrorCode = ProtocolCode | RuleCode


def error_text(code: ErrorCode, lang: str = "en") -> str:
    """The text of ``code`` in ``lang`` (English for a language the server does not have)."""
    catalog = texts(lang)
    return catalog.rule(code.value) if isinstance(code, RuleCode) else catalog.error(code.value)


def error_message(v: int, code: ErrorCode, lang: str = "en", detail: str | None = None) -> bytes:
    """``{"type": "error", "v", "code", "message"}``; ``detail`` says what was wrong with a bad message."""
    body: dict[str, object] = {"type": "error", "v": v, "code": code.value, "message": error_text(code, lang)}
    if detail:
        body["detail"] = detail
    return orjson.dumps(body)


def pong_message(v: int) -> bytes:
    """The answer to ``ping``: any time, also before joining (``v`` is then 0)."""
    return orjson.dumps({"type": "pong", "v": v})


def moved_message(v: int) -> bytes:
    """``{"type": "moved", "v"}``, then close 4005: the room lives on another node now (a cluster); reconnect
    at once with ``/ws?room=CODE`` and resume."""
    return orjson.dumps({"type": "moved", "v": v})


class Unavailable(BaseModel):
    """Outbound: the room's changes cannot be saved (the database is down, full or locked). The room stays
    as it was last saved, refuses what would change it (error ``unavailable``) and goes on by itself when
    the database answers: an ``update`` with the room event ``{"type": "available"}`` carries the state."""

    type: Literal["unavailable"] = "unavailable"
    v: int
    reason: Literal["database"] = "database"
    message: str


def unavailable_message(v: int, lang: str = "en") -> bytes:
    """``{"type": "unavailable", "v", "reason": "database", "message"}`` (see ``Unavailable``)."""
    return orjson.dumps(Unavailable(v=v, message=texts(lang).unavailable).model_dump())


class BadMessage(ValueError):
    """An inbound frame that is not a valid message; the text says why (it never echoes secrets)."""


def parse_inbound(data: str | bytes) -> Inbound:
    """Decode and validate one inbound frame."""
    try:
        raw = orjson.loads(data)
    except orjson.JSONDecodeError:
        raise BadMessage("not valid JSON") from None
    if not isinstance(raw, dict) or not isinstance(raw.get("type"), str):
        raise BadMessage("a message is a JSON object with a 'type'")
    try:
        return _ADAPTER.validate_python(raw)
    except ValidationError as exc:
        first = exc.errors(include_url=False, include_input=False)[0]
        where = ".".join(str(p) for p in first["loc"]) or "message"
        raise BadMessage(f"{where}: {first['msg']}") from None
