"""Running the server: one uvicorn worker (rooms live in this process), graceful on SIGTERM."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import uvicorn
import uvloop

from crisp_server.logs import configure
from crisp_server.settings import Settings
from crisp_server.web.app import create_app
from crisp_server.web.wsprotocol import websocket_protocol

log = logging.getLogger("crisp.server")


class _Server(uvicorn.Server):
    """On SIGTERM or Ctrl-C, rooms tell their players the server restarts before the sockets close."""

    def __init__(self, config: uvicorn.Config, app: Any) -> None:
        super().__init__(config)
        self._app = app

    async def shutdown(self, sockets: list[Any] | None = None) -> None:
        await self._app.state.registry.shutdown()
        await super().shutdown(sockets)


def serve(settings: Settings) -> int:
    log_config = configure(settings.log_format, settings.log_level)
    app = create_app(settings)
    config = uvicorn.Config(
        app,
        host=settings.host,
        port=settings.port,
        workers=1,
        http="httptools",
        ws=websocket_protocol(settings.close_timeout_seconds),
        ws_ping_interval=settings.ping_seconds,
        ws_ping_timeout=settings.ping_timeout_seconds,
        ws_max_size=max(65536, settings.max_message_bytes * 4),  # larger frames: the app answers too_large
        ws_per_message_deflate=False,  # measured cost, little gain for small JSON frames (issue 7)
        proxy_headers=settings.proxy_headers,
        forwarded_allow_ips=settings.forwarded_allow_ips,
        log_level=settings.log_level,
        log_config=log_config,
        timeout_graceful_shutdown=5,
    )
    server = _Server(config, app)
    # uvloop: the event loop is a large share of the cost of a busy room server (issue 7).
    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        runner.run(server.serve())
    return 0
