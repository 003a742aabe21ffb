"""The rooms API: a room's public facts by its code, its invitation QR code, and its ended games."""

from __future__ import annotations

import io
from typing import Any

import segno
from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import Response

from crisp_server.rooms.phase import Phase
from crisp_server.rooms.room import Room
from crisp_server.rooms.tokens import normalize_code
from crisp_server.web import api
from crisp_server.web.services import Services, ServicesDep, client_address

router = APIRouter()


def find_room(services: Services, request: Request, code: str) -> Room:
    """The room with ``code``, counted against the caller's look-ups (429 past them, 404 if none)."""
    if not services.limiter.allow(client_address(request)):
        raise HTTPException(429, "too many look-ups, try again in a minute")
    room = services.registry.get(normalize_code(code))
    if room is None:
        raise HTTPException(404, "no room with that code")
    return room


@router.get("/api/rooms/{code}", response_model=api.RoomInfo, responses=api.ROOM_LOOKUP)
async def room_info(request: Request, code: str, services: ServicesDep) -> dict[str, Any]:
    room = find_room(services, request, code)
    full = len(room.seats) >= 8
    return {
        "code": room.code,
        "link": room.link,
        "phase": room.phase.value,
        "players": [s.name for s in room.seats],
        "joinable": room.phase is Phase.LOBBY and not full,
        "watchable": room.phase is not Phase.LOBBY or full,
    }


@router.get("/api/rooms/{code}/qr.svg", response_class=Response, responses=api.QR_SVG)
async def room_qr(request: Request, code: str, services: ServicesDep) -> Response:
    room = find_room(services, request, code)
    qr = segno.make(room.link, error="m")
    out = io.BytesIO()
    # A standalone SVG document (with its namespace), so that <img src=...> can show it.
    qr.save(out, kind="svg", scale=6, dark="#111", light="#fff", border=2, xmldecl=False)
    return Response(out.getvalue(), media_type="image/svg+xml", headers={"Cache-Control": "private, max-age=3600"})


@router.get("/api/rooms/{code}/games", response_model=list[api.PastGame], responses=api.ROOM_LOOKUP)
async def room_games(request: Request, code: str, services: ServicesDep) -> list[dict[str, Any]]:
    """The room's ended games (won or abandoned), newest first, with totals and winners; still listed
    after the room closed, as long as its games are kept."""
    store = services.store
    try:
        room_id = find_room(services, request, code).room_id
    except HTTPException as missing:
        closed = await store.last_room_id(normalize_code(code)) if store is not None else None
        if missing.status_code != 404 or closed is None:
            raise
        room_id = closed
    return await store.past_games(room_id) if store is not None else []
