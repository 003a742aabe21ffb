"""What the routes and the WebSocket bridge share: one ``Services`` per app, reached through ``Depends``.

``create_app`` builds it from the settings and keeps it on ``app.state.services``; a route asks for it with
a ``ServicesDep`` parameter instead of closing over ``create_app``'s locals, so each route reads alone.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Final
from urllib.parse import urlsplit

from fastapi import Depends, Request, WebSocket
from fastapi.responses import JSONResponse

from crisp_server.collector import Collector
from crisp_server.rooms.clock import Clock
from crisp_server.rooms.registry import Registry
from crisp_server.rooms.seats import TokenBucket
from crisp_server.settings import Settings
from crisp_server.store.store import Store
from crisp_server.web.assets import StaticClient
from crisp_server.web.metrics import Metrics

DEFAULT_STATIC: Final = Path(__file__).resolve().parent.parent.parent / "static"


def now_ms() -> int:
    return time.monotonic_ns() // 1_000_000


class AddressLimiter:
    """Room codes looked up in vain, and rooms created, per client address, so that codes cannot be guessed
    by brute force (nor rooms made without end). A look-up that finds its room costs nothing: friends who
    share one address (a home's Wi-Fi) all open the link and join, however many they are."""

    def __init__(self, burst: int, per_minute: float) -> None:
        self.burst = burst
        self.per_second = per_minute / 60
        self.buckets: dict[str, TokenBucket] = {}

    def _bucket(self, address: str, now: int) -> TokenBucket:
        bucket = self.buckets.get(address)
        if bucket is None:
            if len(self.buckets) > 50_000:  # forget the oldest addresses rather than grow without end
                for key in list(self.buckets)[:10_000]:
                    del self.buckets[key]
            bucket = self.buckets[address] = TokenBucket(self.burst, self.per_second, now)
        return bucket

    def allows(self, address: str) -> bool:
        """Whether ``address`` may look a room code up now (it has not used up its allowance)."""
        now = now_ms()
        return self._bucket(address, now).has(now)

    def allow(self, address: str) -> bool:
        """``allows``, and counts the look-up (a room created: it is counted whatever comes of it)."""
        now = now_ms()
        return self._bucket(address, now).take(now)

    def missed(self, address: str) -> None:
        """A look-up of ``address`` found no room: it counts."""
        self.allow(address)


def origin_of(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}".lower()


def static_dir(configured: Path | None) -> Path:
    if configured is not None:
        return configured
    return DEFAULT_STATIC if DEFAULT_STATIC.is_dir() else Path.cwd() / "static"


def client_address(conn: Request | WebSocket) -> str:
    return conn.client.host if conn.client else "unknown"


@dataclass
class Services:
    """The app's shared parts: its settings, the rooms, the store (``None`` in memory), the metrics, the
    look-up limiter and the static web client (``None`` when its folder is missing)."""

    settings: Settings
    clock: Clock
    registry: Registry
    store: Store | None
    metrics: Metrics
    collector: Collector
    limiter: AddressLimiter
    static_dir: Path
    client: StaticClient | None
    #: Origins allowed besides the server's own, as browsers send them: lower case, no trailing slash.
    allowed_origins: set[str] = field(default_factory=set)

    def base_url(self, scheme: str, host: str | None) -> str:
        if self.settings.public_url:
            return self.settings.public_url
        scheme = {"ws": "http", "wss": "https"}.get(scheme, scheme)
        return f"{scheme}://{host or 'localhost'}"

    def origin_ok(self, websocket: WebSocket) -> bool:
        origin = websocket.headers.get("origin")
        if origin is None:  # not a browser: browsers always send Origin on a WebSocket
            return True
        origin = origin.lower().rstrip("/")
        own = origin_of(self.base_url(websocket.url.scheme, websocket.headers.get("host")))
        return origin == own or origin in self.allowed_origins

    def missing_client(self) -> JSONResponse:
        return JSONResponse({"error": f"the web client is missing: no folder {self.static_dir}"}, status_code=500)


def services(request: Request) -> Services:
    """The dependency every route uses to reach the app's ``Services``."""
    found: Services = request.app.state.services
    return found


ServicesDep = Annotated[Services, Depends(services)]
