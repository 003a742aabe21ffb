"""The FastAPI app: ``create_app(settings)`` builds the app's ``Services``, runs their start and stop (the
lifespan: migrations, restore, the retention sweep), and puts the routers, the WebSocket bridge, the
middleware and the static web client together.

Data flows one way: a frame comes in through the bridge (``bridge.py``) and is posted to its room; the routes
(``routes/``) answer HTTP. Nothing here knows a rule.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from datetime import timedelta
from typing import Final

from fastapi import FastAPI
from fastapi.exceptions import RequestValidationError

from crisp_server import __version__
from crisp_server.collector import Collector
from crisp_server.rooms.clock import Clock, LoopClock
from crisp_server.rooms.cluster import Cluster
from crisp_server.rooms.registry import Registry
from crisp_server.settings import Settings
from crisp_server.store.migrate import upgrade_if_needed
from crisp_server.store.store import Store
from crisp_server.web.assets import StaticClient
from crisp_server.web.bridge import Bridge, WebSocketAt
from crisp_server.web.head import HeadAsGet
from crisp_server.web.hosts import HostPolicy, TrustedHosts
from crisp_server.web.metrics import Metrics
from crisp_server.web.routes import operations, pages, records, rooms
from crisp_server.web.services import AddressLimiter, Services, origin_of, static_dir

#: How often idle rooms and old games are looked for.
SWEEP_SECONDS: Final = 600.0

log = logging.getLogger("crisp.web")


def build_services(settings: Settings, clock: Clock, *, persist: bool) -> Services:
    """The app's shared parts, wired together (the metrics watch the rooms and the store's commits)."""
    # In a cluster, a session left idle inside a transaction (its node stopped) is ended after 5 s.
    store = (
        Store(
            settings.resolved_database_url(),
            idle_in_transaction_ms=5000 if settings.cluster else None,
            commit_interval=settings.commit_interval_ms / 1000,
            application_name=f"crisp {settings.node_name()}" if settings.cluster else None,
            wal_limit=settings.wal_limit_mb * 2**20,
        )
        if persist
        else None
    )
    registry = Registry(settings, clock, store)
    cluster = Cluster(registry, store, settings) if settings.cluster and store is not None else None
    metrics = Metrics(lambda: [room.phase for room in registry.rooms.values()])
    registry.observe_action = metrics.action_latency.observe
    metrics.watch_outages(lambda: len(registry.suspended), registry.outage_seconds)
    if cluster is not None:
        metrics.watch_leases(lambda: (cluster.claimed, cluster.handed_over, cluster.lost))
    if store is not None:
        store.on_commit.append(metrics.on_commit)
        store.on_failure.append(metrics.on_commit_failure)
        if store.is_sqlite:
            metrics.watch_checkpoints(lambda: store.checkpoint_failures, lambda: store.wal_bytes)
    folder = static_dir(settings.static_dir)
    # Compared as browsers send an Origin: lower case, no trailing slash (a list given in code or as JSON
    # is not trimmed by the settings' validator).
    allowed = {o.strip().rstrip("/").lower() for o in settings.allowed_origins}
    if settings.public_url:
        allowed.add(origin_of(settings.public_url))
    return Services(
        settings=settings,
        clock=clock,
        registry=registry,
        store=store,
        metrics=metrics,
        collector=Collector(),
        limiter=AddressLimiter(settings.lookup_burst, settings.lookup_per_minute),
        static_dir=folder,
        client=StaticClient(folder) if folder.is_dir() else None,
        allowed_origins=allowed,
    )


async def sweep(services: Services) -> None:
    """Retention, every few minutes: idle rooms close, old finished games go, and the one full garbage
    collection of the period runs."""
    settings, registry, store = services.settings, services.registry, services.store
    idle = timedelta(hours=settings.idle_lobby_hours)
    while True:
        await asyncio.sleep(SWEEP_SECONDS)
        try:
            registry.expire_idle(int(idle.total_seconds() * 1000))
            registry.expire_abandoned(int(settings.idle_game_hours * 3_600_000))
            if registry.cluster is not None:
                await registry.cluster.sweep_abandoned()  # the games of rooms no node holds
            if store is not None:
                await store.end_stranded_games()  # a node of an older release may still close a room so
                await store.purge(idle, timedelta(days=settings.keep_finished_days))
        except Exception:
            log.exception("the retention sweep failed; it will run again")
        services.collector.full()


def create_app(settings: Settings | None = None, clock: Clock | None = None, *, persist: bool = True) -> FastAPI:
    """Build the app. ``clock`` is for tests (a ``ManualClock``); the server uses the real one.
    ``persist=False`` keeps everything in memory (tests of the protocol that do not need a database)."""
    settings = settings or Settings()
    services = build_services(settings, clock or LoopClock(), persist=persist)
    registry, store, collector = services.registry, services.store, services.collector

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        sweeper: asyncio.Task[None] | None = None
        if store is not None:
            # Migrations first (unless the schema is current), then every room comes back.
            await upgrade_if_needed(store.engine, settings.resolved_database_url(), settings.migrations_dir)
        collector.start()  # before any room exists: rooms are not frozen, their garbage is collected
        cluster = registry.cluster
        if store is not None:
            await store.start()
            # Games a room left running when it closed (before such a room waited) end abandoned, not never.
            await store.end_stranded_games()
            if cluster is not None:
                # Rooms are rebuilt where their players' sockets land (the first one claims the room).
                await cluster.start()
            else:
                await registry.restore(await store.open_rooms())
        sweeper = asyncio.get_running_loop().create_task(sweep(services))
        try:
            yield
        finally:
            sweeper.cancel()
            await registry.shutdown()
            if cluster is not None:
                await cluster.stop()
            if store is not None:
                await store.close()
            collector.stop()

    app = FastAPI(title="Crisp", version=__version__, lifespan=lifespan, docs_url=None, redoc_url=None)
    app.state.services = services
    app.state.settings = settings
    app.state.registry = registry
    app.state.clock = services.clock
    app.state.store = store
    app.state.metrics = services.metrics
    for module in (operations, rooms, records, pages):
        app.include_router(module.router)
    app.add_exception_handler(rooms.NoRoom, rooms.no_room)
    app.add_exception_handler(RequestValidationError, records.invalid_request)

    app.add_middleware(WebSocketAt, path="/ws", endpoint=Bridge(services).endpoint)
    app.add_middleware(HeadAsGet)
    # Outermost: a request for a host this server does not answer to goes no further (DNS rebinding).
    app.add_middleware(TrustedHosts, policy=HostPolicy.from_settings(settings.public_url, settings.allowed_hosts))
    if services.client is not None:
        app.mount("/", services.client, name="static")
    else:
        app.include_router(pages.missing_client_router)
    return app
