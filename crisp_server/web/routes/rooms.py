"""The rooms API: a room's public facts by its code, its invitation (and big-screen) QR code, its ended games
and standings."""

from __future__ import annotations

import io
from dataclasses import asdict
from typing import Annotated, Any, Final, Literal

import segno
from fastapi import APIRouter, Header, HTTPException, Path, Query, Request
from fastapi.responses import JSONResponse, Response

from crisp_server.rooms.phase import Phase
from crisp_server.rooms.seats import MAX_SEATS
from crisp_server.rooms.tokens import (
    CODE_ALPHABET,
    CODE_LENGTH,
    is_room_code,
    normalize_code,
    token_index,
    tv_link,
)
from crisp_server.store.reads import RoomSummary
from crisp_server.web import api
from crisp_server.web.services import Services, ServicesDep, client_address

router = APIRouter()


class NoRoom(HTTPException):
    """No open room has the code: a 404 whose body also says whether a room had it (``api.NoRoom``)."""

    def __init__(self, existed: bool) -> None:
        super().__init__(404, "no room with that code")
        self.existed = existed


async def no_room(_request: Request, exc: Exception) -> JSONResponse:
    """The answer to ``NoRoom`` (the app registers it)."""
    assert isinstance(exc, NoRoom)
    return JSONResponse({"detail": exc.detail, "existed": exc.existed}, status_code=404)


def _check_allowance(services: Services, address: str) -> None:
    """429 once ``address`` has used up its look-ups in vain (every look-up is refused until it refills)."""
    if not services.limiter.allows(address):
        raise HTTPException(429, "too many look-ups, try again in a minute")


async def _open_room(services: Services, code: str) -> RoomSummary | None:
    """The open room with ``code`` (normalized), or ``None``. In a cluster, a room another node runs is read
    from the database (as of its last commit)."""
    room = services.registry.get(code)
    if room is not None:
        return RoomSummary(room.room_id, room.code, room.link, room.phase.value, [s.name for s in room.seats])
    store = services.store
    if services.registry.cluster is not None and store is not None and is_room_code(code):
        return await store.room_summary(code)
    return None


async def find_room(services: Services, request: Request, code: str) -> RoomSummary:
    """The open room with ``code`` (429 once the caller's look-ups in vain are used up, ``NoRoom``, counted as
    one, if none)."""
    address = client_address(request)
    _check_allowance(services, address)
    code = normalize_code(code)
    room = await _open_room(services, code)
    if room is not None:
        return room
    # A page opened from an old link says the room closed; one for a mistyped code, that there is none.
    store = services.store
    existed = store is not None and is_room_code(code) and await store.last_room_id(code) is not None
    services.limiter.missed(address)
    raise NoRoom(existed)


@router.get("/api/rooms/{code}", response_model=api.RoomInfo, responses=api.ROOM_LOOKUP)
async def room_info(request: Request, code: str, services: ServicesDep) -> dict[str, Any]:
    room = await find_room(services, request, code)
    full = len(room.players) >= MAX_SEATS
    lobby = room.phase == Phase.LOBBY.value
    return {
        "code": room.code,
        "link": room.link,
        "phase": room.phase,
        "players": room.players,
        "joinable": lobby and not full,
        "watchable": True,  # in every phase: a spectator follows the lobby too, and may sit down there
    }


async def _seat_holders(services: Services, room: RoomSummary) -> list[tuple[str, bool]]:
    """``room``'s seats in order, each one's token hash and whether its player left during a game: from the
    room itself where this node runs it, else as the database last has them (a room of another node)."""
    live = services.registry.get(room.code)
    if live is not None and live.room_id == room.room_id:
        return [(seat.token_hash, seat.left) for seat in live.seats]
    store = services.store
    return await store.room_seats(room.room_id) if store is not None else []


@router.get("/api/rooms/{code}/seat", response_model=api.SeatCheck, responses=api.SEAT_CHECK)
async def room_seat(
    request: Request, code: str, services: ServicesDep, authorization: str | None = Header(default=None)
) -> dict[str, Any]:
    """Whether the device's seat token (``Authorization: Bearer <token>``) still holds a seat in the room, and
    whether its lobby may be joined: what the home screen's "Your rooms" offers for each seat it keeps."""
    token = authorization[7:].strip() if authorization and authorization.lower().startswith("bearer ") else ""
    if not token:
        raise HTTPException(
            401, "no seat token: send it as Authorization: Bearer <token>", headers={"WWW-Authenticate": "Bearer"}
        )
    room = await find_room(services, request, code)
    holders = await _seat_holders(services, room)
    index = token_index(token, (token_hash for token_hash, _ in holders))
    joinable = room.phase == Phase.LOBBY.value and len(room.players) < MAX_SEATS
    return {
        "held": index is not None,
        "seat": index,
        "left": index is not None and holders[index][1],
        "phase": room.phase,
        "joinable": joinable,
    }


@router.get("/api/rooms/{code}/qr.svg", response_class=Response, responses=api.QR_SVG)
async def room_qr(
    request: Request,
    code: str,
    services: ServicesDep,
    for_: Annotated[
        Literal["join", "tv"],
        Query(alias="for", description="join: the room's join link (/r/CODE); tv: its big-screen address (/tv/CODE)"),
    ] = "join",
) -> Response:
    """The QR code of the room's join link, or of its big-screen address (``for=tv``)."""
    room = await find_room(services, request, code)
    qr = segno.make(tv_link(room.link) if for_ == "tv" else room.link, error="m")
    out = io.BytesIO()
    # A standalone SVG document (with its namespace), so that <img src=...> can show it.
    qr.save(out, kind="svg", scale=6, dark="#111", light="#fff", border=2, xmldecl=False)
    return Response(out.getvalue(), media_type="image/svg+xml", headers={"Cache-Control": "private, max-age=3600"})


async def ended_games_room(services: Services, request: Request, code: str) -> str:
    """The id of the room whose ended games to read: the open room with ``code``, or else the newest one that
    had it and closed (its games are kept as long as finished games are). Either is a look-up that finds its
    room and counts for nothing (an old link's page reads its closed room's games after the room itself, which
    counted); a code no room had counts (``NoRoom``), as ``find_room``."""
    address = client_address(request)
    _check_allowance(services, address)
    code = normalize_code(code)
    room = await _open_room(services, code)
    if room is not None:
        return room.room_id
    store = services.store
    closed = await store.last_room_id(code) if store is not None and is_room_code(code) else None
    if closed is not None:
        return closed
    services.limiter.missed(address)
    raise NoRoom(False)


@router.get("/api/rooms/{code}/games", response_model=list[api.PastGame], responses=api.ROOM_LOOKUP)
async def room_games(request: Request, code: str, services: ServicesDep) -> list[dict[str, Any]]:
    """The room's ended games (won or abandoned), newest first, with totals and winners; still listed
    after the room closed, as long as its games are kept."""
    room_id = await ended_games_room(services, request, code)
    store = services.store
    return await store.past_games(room_id) if store is not None else []


#: What a room code may look like as typed (``normalize_code``: any case, blanks around): in the OpenAPI
#: document only, so that a code outside it gets this route's own 422 (its sentence) rather than FastAPI's.
_TYPED: Final = CODE_ALPHABET + "".join(c.lower() for c in CODE_ALPHABET if c.isalpha())
CODE_AS_TYPED: Final = rf"^\s*[{_TYPED}]{{{CODE_LENGTH}}}\s*$"


@router.get("/api/rooms/{code}/standings", response_model=api.Standings, responses=api.ROOM_STANDINGS)
async def room_standings(
    request: Request,
    code: Annotated[str, Path(description="the room code", json_schema_extra={"pattern": CODE_AS_TYPED})],
    services: ServicesDep,
) -> dict[str, Any]:
    """The room's ended games since it opened, summed per player name: games, wins, points, best round.
    Read from the database (each ended game replayed once, then cached), so a restart loses nothing."""
    if not is_room_code(normalize_code(code)):
        raise HTTPException(
            422, f"not a room code: a room code is {CODE_LENGTH} characters of {CODE_ALPHABET} (any case)"
        )
    room_id = await ended_games_room(services, request, code)
    store = services.store
    if store is None:  # in memory (persist=False): nothing is kept, so no game has ended that could count
        return {"games": 0, "abandoned": 0, "players": []}
    found = await store.room_standings(room_id)
    return {"games": found.games, "abandoned": found.abandoned, "players": [asdict(p) for p in found.players]}
