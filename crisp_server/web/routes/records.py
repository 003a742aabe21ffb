"""The records API: a finished game's crisp-record/1, served only to the game's own players."""

from __future__ import annotations

from fastapi import APIRouter, Header, HTTPException
from fastapi.responses import JSONResponse

from crisp_server.rooms.tokens import token_matches
from crisp_server.web import api
from crisp_server.web.services import ServicesDep

router = APIRouter()


@router.get("/api/games/{game_id}/record", response_class=JSONResponse, responses=api.GAME_RECORD)
async def game_record(
    game_id: str, services: ServicesDep, authorization: str | None = Header(default=None)
) -> JSONResponse:
    """A finished game's crisp-record/1, for its players: ``Authorization: Bearer <seat token>``."""
    store = services.store
    token = authorization[7:].strip() if authorization and authorization.lower().startswith("bearer ") else ""
    found = await store.game_record(game_id) if store is not None and len(game_id) <= 32 else None
    if found is None:
        raise HTTPException(404, "no game with that id")
    record, hashes, finished = found
    if not token or not any(token_matches(token, h) for h in hashes):
        raise HTTPException(403, "only the game's players can fetch its record")
    if not finished:
        raise HTTPException(409, "the game is still running: its record is served when it ends")
    return JSONResponse(record, headers={"Content-Disposition": f'attachment; filename="crisp-{game_id}.json"'})
