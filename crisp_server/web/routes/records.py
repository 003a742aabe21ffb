"""The records API: a finished game's crisp-record/1 and its replay (crisp-replay/1, docs/replays.md), served
only to the game's own players, or to anyone once the host made the replay public by link."""

from __future__ import annotations

import asyncio
import functools
from typing import Annotated

from fastapi import APIRouter, Header, HTTPException, Query, Request
from fastapi.exception_handlers import request_validation_exception_handler
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, PlainTextResponse, Response

from crisp_server.replays import NoSuchSeat, replay_body
from crisp_server.rooms.tokens import token_index
from crisp_server.store.reads import StoredRecord
from crisp_server.web import api
from crisp_server.web.services import ServicesDep

router = APIRouter()

#: Game ids are at most this long (``games.id``): a longer one is unknown without asking the database.
MAX_GAME_ID = 32
#: Replay bodies smaller than this go out uncompressed (gzip would save little).
GZIP_FROM = 1024


def _bearer(authorization: str | None) -> str:
    return authorization[7:].strip() if authorization and authorization.lower().startswith("bearer ") else ""


def _seat_of(token: str, hashes: list[str]) -> int | None:
    """The seat whose token this is, if any."""
    return token_index(token, hashes) if token else None


async def _readable(
    services: ServicesDep, game_id: str, authorization: str | None, what: str, *, public_ok: bool
) -> tuple[StoredRecord, int | None]:
    """The stored game and the asker's seat, if the asker may read ``what`` of it: 404 for an unknown game,
    403 unless the bearer token is one of the game's seats (or ``public_ok`` and the game is public), then
    409 while it runs (after the token, so that a stranger learns nothing of it)."""
    store = services.store
    found = await store.stored_record(game_id) if store is not None and len(game_id) <= MAX_GAME_ID else None
    if found is None:
        raise HTTPException(404, "no game with that id")
    seat = _seat_of(_bearer(authorization), found.token_hashes)
    if seat is None and not (public_ok and found.public):
        raise HTTPException(403, f"only the game's players can fetch its {what}")
    if not found.finished:
        raise HTTPException(409, f"the game is still running: its {what} is served when it ends")
    return found, seat


@router.get("/api/games/{game_id}/record", response_class=JSONResponse, responses=api.GAME_RECORD)
async def game_record(
    game_id: str, services: ServicesDep, authorization: str | None = Header(default=None)
) -> JSONResponse:
    """A finished game's crisp-record/1, for its players: ``Authorization: Bearer <seat token>``."""
    found, _ = await _readable(services, game_id, authorization, "record", public_ok=False)
    return JSONResponse(found.record, headers={"Content-Disposition": f'attachment; filename="crisp-{game_id}.json"'})


@router.get("/api/games/{game_id}/replay", response_model=api.Replay, responses=api.GAME_REPLAY)
async def game_replay(
    game_id: str,
    services: ServicesDep,
    seat: Annotated[
        int | None, Query(description="the point of view: a seat of the game; omitted, everything open")
    ] = None,
    authorization: str | None = Header(default=None),
    accept_encoding: str | None = Header(default=None),
) -> Response:
    """A finished game step by step (crisp-replay/1, docs/replays.md) from ``seat``'s point of view, or with
    everything open: for its players (``Authorization: Bearer <seat token>``), or anyone if it is public."""
    found, you = await _readable(services, game_id, authorization, "replay", public_ok=True)
    if seat is not None and not 0 <= seat < len(found.token_hashes):
        raise HTTPException(404, f"no seat {seat} in this game")
    gzipped = "gzip" in (accept_encoding or "").lower()
    try:
        data = await asyncio.to_thread(
            functools.partial(
                replay_body,
                found.record,
                seat,
                game_id=game_id,
                public=found.public,
                host=found.host,
                you=you,
                gzipped=gzipped,
            )
        )
    except NoSuchSeat as exc:  # the record has fewer players than seats stored (it cannot, but never a 500)
        raise HTTPException(404, str(exc)) from None
    headers = {"Vary": "Accept-Encoding, Authorization", "Cache-Control": "private, no-cache"}
    if gzipped:
        headers["Content-Encoding"] = "gzip"
    return Response(data, media_type="application/json", headers=headers)


@router.put("/api/games/{game_id}/public", response_model=api.PublicReplay, responses=api.GAME_PUBLIC)
async def set_public(
    game_id: str, body: api.PublicReplay, services: ServicesDep, authorization: str | None = Header(default=None)
) -> api.PublicReplay:
    """Make a game's replay public by link, or private again: for the room's host when the game started
    (``Authorization: Bearer <host's seat token>``). Off by default."""
    store = services.store
    found = await store.stored_record(game_id) if store is not None and len(game_id) <= MAX_GAME_ID else None
    if store is None or found is None:
        raise HTTPException(404, "no game with that id")
    seat = _seat_of(_bearer(authorization), found.token_hashes)
    if seat is None or seat != found.host:
        raise HTTPException(403, "only the game's host can make its replay public")
    if not await store.set_public(game_id, body.public):
        raise HTTPException(404, "no game with that id")
    return api.PublicReplay(public=body.public)


@router.api_route(
    "/api/games/{game_id}/public",
    methods=["GET", "HEAD", "POST", "DELETE", "PATCH", "OPTIONS"],
    include_in_schema=False,
)
async def public_other_methods() -> Response:
    """Any other method on the switch: 405 naming the one it takes (else the client's files, mounted at ``/``,
    would answer for the path and name theirs)."""
    return PlainTextResponse("Method Not Allowed", 405, headers={"Allow": "PUT"})  # as every other route's 405


async def invalid_request(request: Request, exc: Exception) -> Response:
    """A request that does not fit its route: 400 if its body is not JSON at all (``{"detail": "why"}``), else
    FastAPI's 422 with the list of what is wrong (the OpenAPI document's ``HTTPValidationError``)."""
    assert isinstance(exc, RequestValidationError)
    if any(error.get("type") == "json_invalid" for error in exc.errors()):
        return JSONResponse({"detail": "the body is not JSON"}, 400)
    return await request_validation_exception_handler(request, exc)
