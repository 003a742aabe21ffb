"""The routes for whoever runs the server: ``/metrics`` (Prometheus) and ``/healthz``."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from fastapi.responses import JSONResponse, PlainTextResponse, Response

from crisp_server import __version__, native
from crisp_server.web import api
from crisp_server.web.services import ServicesDep

router = APIRouter()


@router.get("/metrics", response_class=PlainTextResponse, responses=api.METRICS)
async def metrics_route(services: ServicesDep) -> Response:
    return Response(services.metrics.render(), media_type="text/plain; version=0.0.4; charset=utf-8")


@router.get(
    "/healthz",
    response_model=api.Health,
    responses={
        503: {
            "model": api.Health,
            "description": "The database cannot be written, or (cluster) the node is draining: `reason` says why",
        }
    },
)
async def healthz(services: ServicesDep) -> JSONResponse:
    """200 ``ok`` once started; 200 ``degraded`` with the reason while SQLite's WAL checkpoints fail (every
    write goes through; the WAL grows); 503 ``unavailable`` with the reason while the database cannot be
    written (the WAL over its limit included) or, in a cluster, while the node drains (a load balancer then
    sends it no new sockets)."""
    registry = services.registry
    body: dict[str, Any] = {
        "status": "ok",
        "version": __version__,
        "rooms": len(registry.rooms),
        "engine": native.mode(),
    }
    if registry.cluster is not None:
        body["node"] = registry.cluster.node
    problem = registry.problem()
    if problem is not None:
        return JSONResponse({**body, "status": "unavailable", "reason": problem}, status_code=503)
    store = services.store
    trouble = store.checkpoint_problem() if store is not None else None
    if trouble is not None:  # every write still goes through: the node stays in a load balancer's rotation
        return JSONResponse({**body, "status": "degraded", "reason": trouble})
    return JSONResponse(body)
