"""The web client's pages: the join page ``/r/{code}``, a room's big-screen view ``/tv/{code}``, a finished
game's replay ``/g/{game_id}``, the tutorial ``/learn``, and ``/``
when the static folder is missing (the static files themselves are mounted by ``create_app``)."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, JSONResponse, Response

from crisp_server.web import api
from crisp_server.web.services import ServicesDep

router = APIRouter()


def app_shell(request: Request, services: ServicesDep) -> Response:
    """The web client's one page (it reads what to show from its path), revalidated on each visit."""
    client = services.client
    if client is None or client.page is None:
        return services.missing_client()
    return client.response(client.page, request.headers, immutable=False)


@router.get("/r/{code}", response_class=HTMLResponse, responses=api.JOIN_PAGE)
async def join_page(request: Request, code: str, services: ServicesDep) -> Response:
    """The web client's page, which opens the join screen for the room ``code``."""
    return app_shell(request, services)


@router.get("/tv/{code}", response_class=HTMLResponse, responses=api.TV_PAGE)
async def big_screen_page(request: Request, code: str, services: ServicesDep) -> Response:
    """The web client's page, which shows the room ``code`` on a big screen: the table as a spectator sees it,
    landscape and large, following the room by itself (docs/playing.md, "On a big screen")."""
    return app_shell(request, services)


@router.get("/learn", response_class=HTMLResponse, responses=api.LEARN_PAGE)
async def learn_page(request: Request, services: ServicesDep) -> Response:
    """The web client's page, which starts the tutorial ("Learn to play": a lesson room, ``docs/protocol.md``);
    with ``?room=CODE``, its last screen offers to join that room."""
    return app_shell(request, services)


@router.get("/g/{game_id}", response_class=HTMLResponse, responses=api.REPLAY_PAGE)
async def replay_page(request: Request, game_id: str, services: ServicesDep) -> Response:
    """The web client's page, which opens the replay of the finished game ``game_id`` (the page asks
    ``/api/games/{game_id}/replay`` with the seat token this device holds, and says what went wrong)."""
    return app_shell(request, services)


#: Served at ``/`` only when the static folder is missing (otherwise the folder is mounted there).
missing_client_router = APIRouter()


@missing_client_router.get("/")
async def no_client(services: ServicesDep) -> JSONResponse:
    return services.missing_client()
