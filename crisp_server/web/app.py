"""The FastAPI app: ``create_app(settings)``. HTTP routes, the static web client and the WebSocket bridge.

Data flows one way: a frame comes in here, is checked (origin, size, rate, shape), and is posted to its
room as a message. The room answers through the connection. Nothing here knows a rule.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import timedelta
from pathlib import Path
from typing import Any, Final
from urllib.parse import urlsplit

import segno
from fastapi import FastAPI, Header, HTTPException, Request, WebSocket
from fastapi.responses import HTMLResponse, JSONResponse, PlainTextResponse, Response
from starlette.types import ASGIApp, Receive, Scope, Send

from crisp_server import __version__
from crisp_server import protocol as p
from crisp_server.collector import Collector
from crisp_server.rooms.clock import Clock, LoopClock
from crisp_server.rooms.registry import Registry
from crisp_server.rooms.room import Detach, Inbound, Phase, TokenBucket, clean_name
from crisp_server.rooms.tokens import is_room_code, normalize_code, token_matches
from crisp_server.settings import Settings
from crisp_server.store.migrate import upgrade
from crisp_server.store.store import Store
from crisp_server.web import api
from crisp_server.web.assets import StaticClient
from crisp_server.web.connection import Connection
from crisp_server.web.head import HeadAsGet
from crisp_server.web.hosts import HostPolicy, TrustedHosts
from crisp_server.web.metrics import Metrics

#: Close code for a peer that breaks the protocol's limits (RFC 6455 "policy violation").
CLOSE_POLICY: Final = 1008
#: Close code for a binary frame: the protocol is text (RFC 6455 "unsupported data").
CLOSE_UNSUPPORTED: Final = 1003
DEFAULT_STATIC = Path(__file__).resolve().parent.parent.parent / "static"
#: How often idle rooms and old games are looked for.
SWEEP_SECONDS: Final = 600.0

log = logging.getLogger("crisp.web")


def _now_ms() -> int:
    return time.monotonic_ns() // 1_000_000


class AddressLimiter:
    """Room-code look-ups per client address, so that codes cannot be guessed by brute force."""

    def __init__(self, burst: int, per_minute: float) -> None:
        self.burst = burst
        self.per_second = per_minute / 60
        self.buckets: dict[str, TokenBucket] = {}

    def allow(self, address: str) -> bool:
        now = _now_ms()
        bucket = self.buckets.get(address)
        if bucket is None:
            if len(self.buckets) > 50_000:  # forget the oldest addresses rather than grow without end
                for key in list(self.buckets)[:10_000]:
                    del self.buckets[key]
            bucket = self.buckets[address] = TokenBucket(self.burst, self.per_second, now)
        return bucket.take(now)


def _origin_of(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}".lower()


def _static_dir(configured: Path | None) -> Path:
    if configured is not None:
        return configured
    return DEFAULT_STATIC if DEFAULT_STATIC.is_dir() else Path.cwd() / "static"


class WebSocketAt:
    """Serves one WebSocket path ahead of the routing and exception middleware, which would otherwise wrap
    every frame each player is sent (the hottest path of a busy server)."""

    def __init__(
        self, app: ASGIApp, path: str, endpoint: Callable[[WebSocket, Receive, Send], Awaitable[None]]
    ) -> None:
        self.app = app
        self.path = path
        self.endpoint = endpoint

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket":
            path, root = scope["path"], scope.get("root_path", "")
            if path.removeprefix(root) == self.path or path == self.path:
                await self.endpoint(WebSocket(scope, receive, send), receive, send)
                return
        await self.app(scope, receive, send)


def create_app(settings: Settings | None = None, clock: Clock | None = None, *, persist: bool = True) -> FastAPI:
    """Build the app. ``clock`` is for tests (a ``ManualClock``); the server uses the real one.
    ``persist=False`` keeps everything in memory (tests of the protocol that do not need a database)."""
    settings = settings or Settings()
    clock = clock or LoopClock()
    database_url = settings.resolved_database_url()
    store = Store(database_url) if persist else None
    registry = Registry(settings, clock, store)
    metrics = Metrics(lambda: [room.phase for room in registry.rooms.values()])
    registry.observe_action = metrics.action_latency.observe
    metrics.watch_outages(lambda: len(registry.suspended), registry.outage_seconds)
    if store is not None:
        store.on_commit.append(metrics.on_commit)
        store.on_failure.append(metrics.on_commit_failure)
    collector = Collector()
    limiter = AddressLimiter(settings.lookup_burst, settings.lookup_per_minute)
    static_dir = _static_dir(settings.static_dir)
    client = StaticClient(static_dir) if static_dir.is_dir() else None
    # Compared as browsers send an Origin: lower case, no trailing slash (a list given in code or as JSON
    # is not trimmed by the settings' validator).
    allowed = {o.strip().rstrip("/").lower() for o in settings.allowed_origins}
    if settings.public_url:
        allowed.add(_origin_of(settings.public_url))

    async def sweep() -> None:
        """Retention, every few minutes: idle rooms close, old finished games go, and the one full garbage
        collection of the period runs."""
        idle = timedelta(hours=settings.idle_lobby_hours)
        while True:
            await asyncio.sleep(SWEEP_SECONDS)
            try:
                registry.expire_idle(int(idle.total_seconds() * 1000))
                registry.expire_abandoned(int(settings.idle_game_hours * 3_600_000))
                if store is not None:
                    await store.purge(idle, timedelta(days=settings.keep_finished_days))
            except Exception:
                log.exception("the retention sweep failed; it will run again")
            collector.full()

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        sweeper: asyncio.Task[None] | None = None
        if store is not None:
            # Migrations first (Alembic runs its own loop: in a thread), then every room comes back.
            await asyncio.to_thread(upgrade, database_url, settings.migrations_dir)
        collector.start()  # before any room exists: rooms are not frozen, their garbage is collected
        if store is not None:
            await store.start()
            await registry.restore(await store.open_rooms())
        sweeper = asyncio.get_running_loop().create_task(sweep())
        try:
            yield
        finally:
            sweeper.cancel()
            await registry.shutdown()
            if store is not None:
                await store.close()
            collector.stop()

    app = FastAPI(title="Crisp", version=__version__, lifespan=lifespan, docs_url=None, redoc_url=None)
    app.state.settings = settings
    app.state.registry = registry
    app.state.clock = clock
    app.state.store = store
    app.state.metrics = metrics

    def base_url(scheme: str, host: str | None) -> str:
        if settings.public_url:
            return settings.public_url
        scheme = {"ws": "http", "wss": "https"}.get(scheme, scheme)
        return f"{scheme}://{host or 'localhost'}"

    def origin_ok(websocket: WebSocket) -> bool:
        origin = websocket.headers.get("origin")
        if origin is None:  # not a browser: browsers always send Origin on a WebSocket
            return True
        origin = origin.lower().rstrip("/")
        own = _origin_of(base_url(websocket.url.scheme, websocket.headers.get("host")))
        return origin == own or origin in allowed

    def missing_client() -> JSONResponse:
        return JSONResponse({"error": f"the web client is missing: no folder {static_dir}"}, status_code=500)

    def client_address(conn: Request | WebSocket) -> str:
        return conn.client.host if conn.client else "unknown"

    @app.get("/metrics", response_class=PlainTextResponse, responses=api.METRICS)
    async def metrics_route() -> Response:
        return Response(metrics.render(), media_type="text/plain; version=0.0.4; charset=utf-8")

    @app.get(
        "/healthz",
        response_model=api.Health,
        responses={503: {"model": api.Health, "description": "The database cannot be written: `reason` says why"}},
    )
    async def healthz() -> JSONResponse:
        """200 ``ok`` once started; 503 ``unavailable`` with the reason while the database cannot be written."""
        body: dict[str, Any] = {"status": "ok", "version": __version__, "rooms": len(registry.rooms)}
        problem = registry.problem()
        if problem is None:
            return JSONResponse(body)
        return JSONResponse({**body, "status": "unavailable", "reason": problem}, status_code=503)

    def find_room(request: Request, code: str) -> Any:
        if not limiter.allow(client_address(request)):
            raise HTTPException(429, "too many look-ups, try again in a minute")
        room = registry.get(normalize_code(code))
        if room is None:
            raise HTTPException(404, "no room with that code")
        return room

    @app.get("/api/rooms/{code}", response_model=api.RoomInfo, responses=api.ROOM_LOOKUP)
    async def room_info(request: Request, code: str) -> dict[str, Any]:
        room = find_room(request, code)
        full = len(room.seats) >= 8
        return {
            "code": room.code,
            "link": room.link,
            "phase": room.phase.value,
            "players": [s.name for s in room.seats],
            "joinable": room.phase is Phase.LOBBY and not full,
            "watchable": room.phase is not Phase.LOBBY or full,
        }

    @app.get("/api/rooms/{code}/qr.svg", response_class=Response, responses=api.QR_SVG)
    async def room_qr(request: Request, code: str) -> Response:
        room = find_room(request, code)
        qr = segno.make(room.link, error="m")
        out = io.BytesIO()
        # A standalone SVG document (with its namespace), so that <img src=...> can show it.
        qr.save(out, kind="svg", scale=6, dark="#111", light="#fff", border=2, xmldecl=False)
        return Response(out.getvalue(), media_type="image/svg+xml", headers={"Cache-Control": "private, max-age=3600"})

    @app.get("/api/rooms/{code}/games", response_model=list[api.PastGame], responses=api.ROOM_LOOKUP)
    async def room_games(request: Request, code: str) -> list[dict[str, Any]]:
        """The room's ended games (won or abandoned), newest first, with totals and winners; still listed
        after the room closed, as long as its games are kept."""
        try:
            room_id = find_room(request, code).room_id
        except HTTPException as missing:
            closed = await store.last_room_id(normalize_code(code)) if store is not None else None
            if missing.status_code != 404 or closed is None:
                raise
            room_id = closed
        return await store.past_games(room_id) if store is not None else []

    @app.get("/api/games/{game_id}/record", response_class=JSONResponse, responses=api.GAME_RECORD)
    async def game_record(game_id: str, authorization: str | None = Header(default=None)) -> JSONResponse:
        """A finished game's crisp-record/1, for its players: ``Authorization: Bearer <seat token>``."""
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

    @app.get("/r/{code}", response_class=HTMLResponse, responses=api.JOIN_PAGE)
    async def join_page(request: Request, code: str) -> Response:
        """The web client's page (the client reads the code from the path), revalidated on each visit."""
        if client is None or client.page is None:
            return missing_client()
        return client.response(client.page, request.headers, immutable=False)

    async def websocket_endpoint(websocket: WebSocket, receive: Receive, send: Send) -> None:
        """``/ws``. Its frames go straight to and from the ASGI server (see ``WebSocketAt``); ``websocket``
        only reads the handshake (origin, address, host)."""
        if not origin_ok(websocket):
            await send({"type": "websocket.close", "code": CLOSE_POLICY})  # before accept: the handshake gets a 403
            return
        if (await receive())["type"] != "websocket.connect":
            return
        await send({"type": "websocket.accept"})
        conn = Connection(send, settings.send_queue, client_address(websocket), metrics.sent)
        conn.start()
        metrics.connections.inc()
        try:
            await _serve(conn, websocket, receive)
        finally:
            metrics.connections.dec()
            # The room that admitted this connection, and the one it last addressed (which may have refused
            # it); usually the same room.
            for room in {r for r in (conn.room, conn.target) if r is not None}:
                room.post(Detach(conn))
            await conn.finish()

    async def _serve(conn: Connection, websocket: WebSocket, receive: Receive) -> None:
        bucket = TokenBucket(settings.rate_burst, settings.rate_per_second, _now_ms())
        # Refusals are strikes that wear off slowly: a flood is cut off, an occasional burst is forgiven.
        strikes = TokenBucket(settings.rate_burst, settings.rate_per_second / 10, _now_ms())
        limit = settings.max_message_bytes
        while not conn.closing:
            try:
                frame = await receive()
            except (OSError, RuntimeError):
                return
            if frame["type"] == "websocket.disconnect":
                return
            data: str | None = frame.get("text")
            if data is None:
                if frame.get("bytes") is not None:  # the protocol is text frames of JSON
                    log.info("closing a connection that sent a binary frame (1003)", extra={"client": conn.client})
                    metrics.refused.labels("binary").inc()
                    conn.close(CLOSE_UNSUPPORTED, "text frames only")
                    return
                continue
            metrics.received()
            v = conn.room.v if conn.room is not None else 0
            if not bucket.take(_now_ms()):
                if not strikes.take(_now_ms()):  # a flood, not a burst: hang up
                    conn.close(CLOSE_POLICY, "too many messages")
                    return
                conn.send(p.error_message(v, p.ProtocolCode.RATE_LIMITED, conn.lang))
                metrics.refused.labels("rate_limited").inc()
                continue
            size = len(data.encode())
            if size > limit:
                conn.send(p.error_message(v, p.ProtocolCode.TOO_LARGE, conn.lang, f"at most {limit} bytes"))
                metrics.refused.labels("too_large").inc()
                continue
            try:
                message = p.parse_inbound(data)
            except p.BadMessage as exc:
                conn.send(p.error_message(v, p.ProtocolCode.BAD_MESSAGE, conn.lang, str(exc)))
                metrics.refused.labels("bad_message").inc()
                continue
            dispatch(conn, websocket, message, v)

    def dispatch(conn: Connection, websocket: WebSocket, message: Any, v: int) -> None:
        if isinstance(message, p.ENTRY_MESSAGES):
            conn.lang = message.lang
            if conn.room is not None:
                conn.send(p.error_message(v, p.ProtocolCode.ALREADY_IN_ROOM, conn.lang))
                return
            if not limiter.allow(conn.client):
                conn.send(p.error_message(v, p.ProtocolCode.RATE_LIMITED, conn.lang))
                return
            if isinstance(message, p.Create):
                # Check the name before the room exists: a room whose creator is refused would stay
                # open forever, empty (nobody could ever leave it, so nothing would close it).
                if clean_name(message.name) is None:
                    conn.send(p.error_message(v, p.ProtocolCode.BAD_NAME, conn.lang))
                    return
                room = registry.create(base_url(websocket.url.scheme, websocket.headers.get("host")))
            else:
                code = normalize_code(message.room)
                found = registry.get(code) if is_room_code(code) else None
                if found is None:
                    conn.send(p.error_message(v, p.ProtocolCode.ROOM_NOT_FOUND, conn.lang))
                    return
                room = found
            conn.target = room
            room.post(Inbound(conn, message))
            return
        # The room that admitted this connection wins over the one last addressed: a second entry sent
        # before the first was answered retargets the connection at a room that then refuses it.
        addressed = conn.room if conn.room is not None else conn.target
        if addressed is None:
            if isinstance(message, p.Ping):  # a client may check its connection before it joins
                conn.send(p.pong_message(0))
            else:
                conn.send(p.error_message(v, p.ProtocolCode.NOT_IN_ROOM, conn.lang))
            return
        addressed.post(Inbound(conn, message))

    app.add_middleware(WebSocketAt, path="/ws", endpoint=websocket_endpoint)
    app.add_middleware(HeadAsGet)
    # Outermost: a request for a host this server does not answer to goes no further (DNS rebinding).
    app.add_middleware(TrustedHosts, policy=HostPolicy.from_settings(settings.public_url, settings.allowed_hosts))
    if client is not None:
        app.mount("/", client, name="static")
    else:

        @app.get("/")
        async def no_client() -> JSONResponse:
            return missing_client()

    return app
