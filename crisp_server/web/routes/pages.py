"""The web client's pages: the join page ``/r/{code}``, and ``/`` when the static folder is missing (the
static files themselves are mounted by ``create_app``)."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, JSONResponse, Response

from crisp_server.web import api
from crisp_server.web.services import ServicesDep

router = APIRouter()


@router.get("/r/{code}", response_class=HTMLResponse, responses=api.JOIN_PAGE)
async def join_page(request: Request, code: str, services: ServicesDep) -> Response:
    """The web client's page (the client reads the code from the path), revalidated on each visit."""
    client = services.client
    if client is None or client.page is None:
        return services.missing_client()
    return client.response(client.page, request.headers, immutable=False)


#: Served at ``/`` only when the static folder is missing (otherwise the folder is mounted there).
missing_client_router = APIRouter()


@missing_client_router.get("/")
async def no_client(services: ServicesDep) -> JSONResponse:
    return services.missing_client()
