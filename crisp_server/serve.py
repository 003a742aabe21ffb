"""Running the server: one uvicorn worker (rooms live in this process), graceful on SIGTERM: alone, rooms tell
their players the server restarts; in a cluster, the node drains first (its rooms go to other nodes)."""

from __future__ import annotations

import asyncio
import contextlib
import faulthandler
import logging
import signal
import sys
from collections.abc import Generator
from pathlib import Path
from types import FrameType
from typing import Any, Final

import uvicorn
import uvloop

from crisp_server import native
from crisp_server.logs import configure
from crisp_server.settings import Settings
from crisp_server.store import backup
from crisp_server.web.app import create_app
from crisp_server.web.gate import Gate, raise_descriptor_limit
from crisp_server.web.httpprotocol import http_protocol
from crisp_server.web.wsprotocol import websocket_protocol

#: How long a shutdown waits for the connections to end before it cuts them (uvicorn's graceful shutdown).
SHUTDOWN_SECONDS: Final = 5

log = logging.getLogger("crisp.server")


#: The listening socket's queue of connections not yet accepted (uvicorn's default is 2,048).
LISTEN_BACKLOG: Final = 16384


class _Server(uvicorn.Server):
    """On SIGTERM or Ctrl-C, rooms tell their players the server restarts before the sockets close."""

    def __init__(self, config: uvicorn.Config, app: Any) -> None:
        super().__init__(config)
        self._app = app
        self._loop: asyncio.AbstractEventLoop | None = None
        self._drain: asyncio.Task[None] | None = None

    async def serve(self, sockets: list[Any] | None = None) -> None:
        self._loop = asyncio.get_running_loop()
        await super().serve(sockets)

    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None, None, None]:
        """uvicorn raises the signal it caught again once it has shut down, so the process dies of it (exit
        status 143 for SIGTERM): a clean stop would read as a crash (``docker ps``: "Exited (143)"). The
        shutdown was graceful, so the signals are forgotten and the server exits 0."""
        with super().capture_signals():
            try:
                yield
            finally:
                self._captured_signals.clear()

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        """In a cluster, the first SIGTERM drains the node (``/healthz`` 503, rooms handed over), then it
        stops; a second signal, or Ctrl-C, stops it at once."""
        cluster = self._app.state.registry.cluster
        if sig == signal.SIGTERM and cluster is not None and self._drain is None and self._loop is not None:
            self._loop.call_soon_threadsafe(self._start_drain)
            return
        super().handle_exit(sig, frame)

    def _start_drain(self) -> None:
        if self._drain is not None:
            return

        async def drain() -> None:
            try:
                await self._app.state.registry.cluster.drain()
            except Exception:
                log.exception("draining failed; stopping")
            self.should_exit = True

        self._drain = asyncio.get_running_loop().create_task(drain(), name="drain")

    async def shutdown(self, sockets: list[Any] | None = None) -> None:
        await self._app.state.registry.shutdown()
        await super().shutdown(sockets)


def serve(settings: Settings) -> int:
    """Run the server until it is stopped; 1 if another server (or a restore) holds its SQLite database."""
    # One server per SQLite file: a second one would rebuild the same rooms, and a restore must not swap the
    # file under a running one. The lock (``crisp.sqlite3.lock``) goes with the process, kill -9 included.
    try:
        database: Path | None = backup.sqlite_file(settings.resolved_database_url())
    except backup.Refused:
        database = None  # PostgreSQL (several nodes may share it), or in memory
    with contextlib.ExitStack() as held:
        if database is not None:
            try:
                held.enter_context(backup.holding(database))
            except backup.InUse as exc:
                print(f"crisp-server: {exc}", file=sys.stderr)
                return 1
        return _serve(settings)


def _serve(settings: Settings) -> int:
    log_config = configure(settings.log_format, settings.log_level)
    # A fatal signal ends the process without a log line otherwise: SIGBUS when SQLite's shared-memory file
    # (crisp.sqlite3-shm, mapped into memory) can no longer be written, say. Then stderr says which signal,
    # and where each thread was.
    faulthandler.enable()
    soft, hard = raise_descriptor_limit()
    app = create_app(settings)
    # Sized now, before any client: what is open already (the app, the logs) is not the clients'.
    gate = Gate(
        settings.connections_per_address,
        settings.reserved_descriptors,
        proxy_headers=settings.proxy_headers,
        forwarded_allow_ips=settings.forwarded_allow_ips,
        monitor_ips=settings.monitor_ips,
    )
    log.info("%s (the soft limit was %d, the hard one %d)", gate.describe(), soft, hard)
    config = uvicorn.Config(
        app,
        host=settings.host,
        port=settings.port,
        workers=1,
        http=http_protocol(gate, settings.head_timeout_seconds),
        ws=websocket_protocol(settings.close_timeout_seconds),
        ws_ping_interval=settings.ping_seconds,
        ws_ping_timeout=settings.ping_timeout_seconds,
        ws_max_size=max(65536, settings.max_message_bytes * 4),  # larger frames: the app answers too_large
        ws_per_message_deflate=False,  # measured cost, little gain for small JSON frames (issue 7)
        proxy_headers=settings.proxy_headers,
        forwarded_allow_ips=settings.forwarded_allow_ips,
        log_level=settings.log_level,
        log_config=log_config,
        timeout_graceful_shutdown=SHUTDOWN_SECONDS,
        # After a restart every player reconnects at once: a short accept queue drops their connections, which
        # the kernel then retries only after 1 s, 3 s... (the system's net.core.somaxconn caps it).
        backlog=LISTEN_BACKLOG,
    )
    server = _Server(config, app)
    log.info("engine and rooms: %s", native.summary())
    # uvloop: the event loop is a large share of the cost of a busy room server (issue 7).
    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        runner.run(server.serve())
    return 0
