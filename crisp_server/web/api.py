"""The HTTP API's answers as the OpenAPI document (``/openapi.json``) describes them: one model per JSON body,
and for each route every status it can answer with its body and content type.

The routes in ``crisp_server.web.app`` declare these; ``tests/e2e/test_openapi.py`` runs schemathesis against
a started server to hold the document to what the server really answers.
"""

from __future__ import annotations

from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ApiError(_Body):
    """Every refusal of the HTTP API: a sentence saying why."""

    detail: str = Field(examples=["no room with that code"])


class NoRoom(ApiError):
    """No open room has the code looked up; ``existed`` tells a room that closed from a code never used."""

    existed: bool = Field(
        description="a room had this code and has closed (its games may still be listed); false: no room "
        "this server keeps had it"
    )


class Health(_Body):
    status: Literal["ok", "degraded", "unavailable"] = Field(
        description="`ok` (200); `degraded` (200: SQLite's WAL checkpoints fail, writes go on); or `unavailable` (503)"
    )
    version: str
    rooms: int = Field(ge=0, description="rooms in memory (lobbies and games)")
    engine: Literal["compiled", "interpreted"] = Field(
        description="whether the rules engine and the rooms run compiled with mypyc (`CRISP_NATIVE`) or interpreted"
    )
    node: str | None = Field(default=None, description="in a cluster (`CRISP_CLUSTER`): this node's name")
    reason: str | None = Field(
        default=None,
        description="with `unavailable`: why (the database cannot be written, and how many rooms wait); with "
        "`degraded`: why (the checkpoints' error, the WAL's size and limit)",
    )


class RoomInfo(_Body):
    """What a join screen needs before the player picks a name."""

    code: str = Field(description="the room code, 6 characters")
    link: str = Field(description="the join link (the QR code's content)")
    phase: Literal["lobby", "peek", "play", "round_over", "game_over"]
    players: list[str] = Field(description="the seated players' names, in seat order")
    joinable: bool = Field(description="a lobby with a free seat: `join` will be accepted")
    watchable: bool = Field(description="always true: `watch` is accepted in every phase, the lobby included")


class SeatCheck(_Body):
    """Whether a seat token still holds a seat in the room, and what the device may do there: take the seat
    back, or join the lobby again once a rematch dropped it. Nothing about any other seat."""

    held: bool = Field(
        description="the token holds a seat in this room; false: it holds none (the seat was given up, dropped "
        "by a rematch, the player was removed, or no seat of this room ever had the token)"
    )
    seat: int | None = Field(description="the seat the token holds (its index in seat order), or `null`")
    left: bool = Field(
        description="the token's player tapped Leave during a game: the seat is kept, `resume` takes it back "
        "(false when `held` is false)"
    )
    phase: Literal["lobby", "peek", "play", "round_over", "game_over"]
    joinable: bool = Field(description="a lobby with a free seat: `join` will be accepted")


class PastGame(_Body):
    """An ended game of a room: won, or abandoned (no player came back for ``CRISP_IDLE_GAME_HOURS``)."""

    id: str = Field(description="the game's id, for `/api/games/{id}/record`")
    players: list[str]
    totals: list[int] = Field(description="each seat's final total (an abandoned game's: of the rounds played)")
    winners: list[int] = Field(description="the seats with the lowest total; none for an abandoned game")
    abandoned: bool = Field(description="the game ended unfinished: no player was connected for a long time")
    finished_at: str = Field(description="ISO 8601, UTC")
    public: bool = Field(description="its replay is public by link: anyone may open `/g/{id}`")


class ReplayOptions(_Body):
    score_limit: int
    turn_seconds: int | None
    discard_draw: bool


class ReplayStep(_Body):
    """One step of a replay: what happened, the events this point of view may see, and the table after it."""

    kind: Literal["deal", "action", "clock", "resume", "end"] = Field(
        description="`deal`: a round was dealt; `action`: a record action applied (or rejected); `clock`: the "
        "clock advanced and crisp windows closed or move clocks ran out; `resume`: a server restart; `end`: the "
        "round's end with its points (and the game's after the last round)"
    )
    round: int = Field(ge=0, description="the round's index")
    at: int = Field(ge=0, description="round time in ms, as in the record")
    action: dict[str, Any] | None = Field(
        description="for `action`: the record's action without its instant (`seat`, `do` and its fields)"
    )
    rejected: str | None = Field(description="the rejection code of an action the rules refused (it changed nothing)")
    events: list[dict[str, Any]] = Field(
        description="the step's events this point of view may see, as the live protocol sends them"
    )
    table: dict[str, Any] = Field(description="the public table after the step, as the live protocol's `table`")
    drawn_card: str | None = Field(
        description="the card held by the player to move, if this point of view may see it (a seat: its own "
        "draw-pile card only)"
    )
    hands: list[list[str | None]] = Field(
        description="per seat, per slot (left, middle, right): the card face up in this point of view, or null "
        "(face down): what the seat knows at that moment; everything open and at a round's end, every card"
    )


class Replay(_Body):
    """A finished game step by step (`crisp-replay/1`, docs/replays.md) from one point of view."""

    format: Literal["crisp-replay/1"]
    game_id: str
    players: list[str]
    options: ReplayOptions
    seat: int | None = Field(description="the point of view served; null: everything open")
    public: bool = Field(description="the host made the replay public by link")
    host: int | None = Field(description="the room's host seat when the game started; null if unknown")
    you: int | None = Field(description="the asker's seat (from the bearer token); null without one")
    steps: list[ReplayStep]


class PublicReplay(_Body):
    """Whether a game's replay is public by link (anyone with `/g/{id}` may watch every point of view)."""

    public: StrictBool


class PlayerStanding(_Body):
    """One player's evening in a room, by the name they were seated under."""

    name: str
    games: int = Field(ge=0, description="the room's ended games this player was seated in (abandoned ones too)")
    wins: int = Field(ge=0, description="games won (a tie for the lowest total is a win for each of them)")
    points: int = Field(description="the sum of this player's final totals (an abandoned game's: of its rounds played)")
    best_round: int | None = Field(
        description="the fewest points this player scored in one round (the ±5 included); null if no round ended"
    )


class Standings(_Body):
    """The room's ended games since it opened, summed per player; a running game is not counted until it ends."""

    games: int = Field(ge=0, description="ended games: won, and abandoned")
    abandoned: int = Field(ge=0, description="of these, the games abandoned (played, without a winner)")
    players: list[PlayerStanding] = Field(description="most wins first, then fewest points, then by name")


def _error(description: str) -> dict[str, Any]:
    return {"model": ApiError, "description": description}


def _body(description: str, media_type: str, schema: dict[str, Any] | None = None) -> dict[str, Any]:
    """A successful answer that is not a JSON model: its description, content type and schema."""
    return {"description": description, "content": {media_type: {"schema": schema or {"type": "string"}}}}


#: The answers of a route that looks a room up by its code (rate-limited per client address).
ROOM_LOOKUP: Final[dict[int | str, dict[str, Any]]] = {
    404: {"model": NoRoom, "description": "There is no open room with that code (`existed`: there was one)."},
    429: _error("Too many room look-ups from this address (CRISP_LOOKUP_BURST at once, then CRISP_LOOKUP_PER_MINUTE)."),
}

#: A route that looks a room up by its code, and refuses a code that cannot be one before looking.
ROOM_STANDINGS: Final[dict[int | str, dict[str, Any]]] = {
    **ROOM_LOOKUP,
    422: _error("The code is not a room code: 6 characters of ACDEFGHJKMNPQRTUVWXY34679 (any case)."),
}

#: A room's seat checked with the device's token (``Authorization: Bearer``).
SEAT_CHECK: Final[dict[int | str, dict[str, Any]]] = {
    401: _error("No bearer token: send the seat token as `Authorization: Bearer <token>`."),
    **ROOM_LOOKUP,
}

QR_SVG: Final[dict[int | str, dict[str, Any]]] = {
    200: _body(
        "The QR code of the room's join link (for=join), or of its big-screen address /tv/CODE (for=tv), a"
        " standalone SVG document.",
        "image/svg+xml",
    ),
    **ROOM_LOOKUP,
    422: {
        "description": "`for` is neither `join` nor `tv` (`detail`: the list of what is wrong).",
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/HTTPValidationError"}}},
    },
}

GAME_RECORD: Final[dict[int | str, dict[str, Any]]] = {
    200: _body(
        "The game's crisp-record/1 document (docs/record-format.md), as a download.",
        "application/json",
        {"type": "object", "additionalProperties": True},
    ),
    403: _error("The bearer token is missing or is not one of the game's seats."),
    404: _error("There is no game with that id."),
    409: _error("The game is still running: its record is served once it ends."),
}

GAME_REPLAY: Final[dict[int | str, dict[str, Any]]] = {
    403: _error("The game is not public, and the bearer token is missing or is not one of the game's seats."),
    404: _error("There is no game with that id, or no such seat in it."),
    409: _error("The game is still running: its replay is served once it ends."),
}

GAME_PUBLIC: Final[dict[int | str, dict[str, Any]]] = {
    400: _error("The body is not JSON."),
    403: _error("The bearer token is missing or is not the seat of the game's host."),
    404: _error("There is no game with that id."),
}

METRICS: Final[dict[int | str, dict[str, Any]]] = {
    200: _body("Prometheus text exposition format 0.0.4.", "text/plain"),
}

JOIN_PAGE: Final[dict[int | str, dict[str, Any]]] = {
    200: _body("The web client, which opens the join screen for that room.", "text/html"),
}
TV_PAGE: Final[dict[int | str, dict[str, Any]]] = {
    200: _body("The web client, which shows that room's table on a big screen (a spectator's view).", "text/html"),
}
LEARN_PAGE: Final[dict[int | str, dict[str, Any]]] = {
    200: _body(
        "The web client, which starts the tutorial (a lesson room; ?room=CODE: its end offers that room).", "text/html"
    ),
}
REPLAY_PAGE: Final[dict[int | str, dict[str, Any]]] = {
    200: _body("The web client, which opens that finished game's replay (or says why it cannot).", "text/html"),
}
