"""The WebSocket bridge (``/ws``): a frame comes in, is checked (origin, size, rate, shape), and is posted to
its room as a message; the room answers through the connection. Nothing here knows a rule.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any, Final

from fastapi import WebSocket
from starlette.types import ASGIApp, Receive, Scope, Send

from crisp_server.rooms.cluster import Busy, Draining
from crisp_server.rooms.driver import CLOSE_MOVED
from crisp_server.rooms.messages import Detach, Expire, Inbound
from crisp_server.rooms.room import Room
from crisp_server.rooms.seats import TokenBucket, clean_name
from crisp_server.rooms.tokens import is_room_code, normalize_code
from crisp_server.texts import preferred
from crisp_server.web.connection import Connection
from crisp_server.web.services import Services, client_address, now_ms
from crisp_server.web.wsprotocol import CrispWebSocket
from crisp_server.wire import protocol as p

#: Close code for a peer that breaks the protocol's limits (RFC 6455 "policy violation").
CLOSE_POLICY: Final = 1008
#: Close code for a bug met while handling a message (RFC 6455 "internal error"), as uvicorn closes with.
CLOSE_INTERNAL: Final = 1011
#: Close code for a binary frame: the protocol is text (RFC 6455 "unsupported data").
CLOSE_UNSUPPORTED: Final = 1003
#: Close code when a cluster node could not get a room in time: try again later (RFC 6455).
CLOSE_TRY_LATER: Final = 1013
#: Close code for a WebSocket that did not enter a room (create, join, resume, watch) in time: a socket that
#: is no member holds a descriptor for nothing (pings do not count).
CLOSE_NO_ROOM: Final = 4008
#: A draining node waits this long before it sends a newcomer away, so that the load balancer has noticed.
DRAINING_PAUSE_SECONDS: Final = 0.5

log = logging.getLogger("crisp.web")


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


class Bridge:
    """One per app: ``endpoint`` serves each WebSocket from its handshake to its close."""

    def __init__(self, services: Services) -> None:
        self.services = services

    async def endpoint(self, websocket: WebSocket, receive: Receive, send: Send) -> None:
        """``/ws``. Its frames go straight to and from the ASGI server (see ``WebSocketAt``); ``websocket``
        only reads the handshake (origin, address, host)."""
        services = self.services
        if not services.origin_ok(websocket):
            await send({"type": "websocket.close", "code": CLOSE_POLICY})  # before accept: the handshake gets a 403
            return
        if (await receive())["type"] != "websocket.connect":
            return
        await send({"type": "websocket.accept"})
        metrics = services.metrics
        conn = Connection(send, services.settings.send_queue, client_address(websocket), metrics.sent)
        conn.origin = services.base_url(websocket.url.scheme, websocket.headers.get("host"))
        # Until an entry message names its language, the browser's preferred one (else English).
        conn.lang = preferred(websocket.headers.get("accept-language")) or conn.lang
        metrics.connections.inc()
        try:
            await self.serve(conn, websocket, receive)
        finally:
            metrics.connections.dec()
            # The room that admitted this connection, and the one it last addressed (which may have refused
            # it); usually the same room.
            for room in {r for r in (conn.room, conn.target) if r is not None}:
                room.post(Detach(conn))
            await conn.finish()

    async def serve(self, conn: Connection, websocket: WebSocket, receive: Receive) -> None:
        """Reads the connection's frames until it closes, and posts each valid message. With the server's own
        protocol (:class:`CrispWebSocket`) text frames are read in the callback that receives them
        (:meth:`Reader.direct`); this loop then waits for the rest: the disconnect, a binary frame, an entry
        that needs the cluster (the frames after it wait in the queue meanwhile) or a hang-up."""
        protocol = getattr(receive, "__self__", None)
        direct = protocol if isinstance(protocol, CrispWebSocket) else None
        reader = Reader(self, conn, websocket, direct)
        deadline = asyncio.get_running_loop().call_later(
            self.services.settings.enter_timeout_seconds, self.enter_late, conn, direct
        )
        try:
            while not conn.closing:
                if direct is not None:
                    direct.read_directly(reader.direct)
                try:
                    frame = await receive()
                except (OSError, RuntimeError):
                    return
                if frame["type"] == "websocket.disconnect":
                    return
                entry = reader.deferred
                if entry is not None:
                    reader.deferred = None
                    await self.enter_cluster(conn, websocket, *entry)
                data: str | None = frame.get("text")
                if data is None:
                    if frame.get("bytes") is not None:  # the protocol is text frames of JSON
                        log.info("closing a connection that sent a binary frame (1003)", extra={"client": conn.client})
                        self.services.metrics.refused.labels("binary").inc()
                        conn.close(CLOSE_UNSUPPORTED, "text frames only")
                        return
                    continue
                entry = reader.text(data)
                if entry is not None:
                    await self.enter_cluster(conn, websocket, *entry)
        finally:
            deadline.cancel()
            if direct is not None:
                direct.read_directly(None)

    def enter_late(self, conn: Connection, direct: CrispWebSocket | None) -> None:
        """The enter deadline: a connection that is in no room is closed with 4008 (one that pings, or whose
        entries were all refused, too). Once in a room it has passed for good: a member is watched by the
        keepalive, and a room it leaves closes it."""
        if conn.room is not None or conn.closing:
            return
        log.info("closing a connection that entered no room in time (%d)", CLOSE_NO_ROOM, extra={"client": conn.client})
        self.services.metrics.refused.labels("no_room").inc()
        conn.close(CLOSE_NO_ROOM, "no room entered in time")
        if direct is not None:  # the bridge's loop waits in ``receive``: it sees the close and ends
            direct.read_directly(None)
            direct.wake_app()

    def _may_enter(self, conn: Connection, message: Any, v: int) -> bool:
        """The checks of an entry message before its room is looked for; answered here if it fails them."""
        conn.lang = message.lang
        if conn.room is not None:
            conn.send(p.error_message(v, p.ProtocolCode.ALREADY_IN_ROOM, conn.lang))
            return False
        limiter = self.services.limiter
        # A room created counts at once; a look-up counts only if it finds no room (``_not_found``).
        if not (limiter.allow(conn.client) if isinstance(message, p.Create) else limiter.allows(conn.client)):
            conn.send(p.error_message(v, p.ProtocolCode.RATE_LIMITED, conn.lang))
            return False
        # Check the name before the room exists: a room whose creator is refused would stay open forever,
        # empty (nobody could ever leave it, so nothing would close it).
        if isinstance(message, p.Create) and clean_name(message.name) is None:
            conn.send(p.error_message(v, p.ProtocolCode.BAD_NAME, conn.lang))
            return False
        return True

    async def enter_cluster(self, conn: Connection, websocket: WebSocket, message: Any, v: int) -> None:
        """An entry message on a node of a cluster: the room is claimed here first (rebuilt from the database,
        its owner asked to let go), or made with a code no node uses."""
        services = self.services
        cluster = services.registry.cluster
        assert cluster is not None
        if not self._may_enter(conn, message, v):
            return
        room: Room | None
        try:
            if isinstance(message, p.Create):
                room = await cluster.create(services.base_url(websocket.url.scheme, websocket.headers.get("host")))
            else:
                code = normalize_code(message.room)
                room = await cluster.acquire(code) if is_room_code(code) else None
        except Draining:
            await asyncio.sleep(DRAINING_PAUSE_SECONDS)
            conn.send(p.moved_message(0))
            conn.close(CLOSE_MOVED, "moved")
            return
        except Busy:
            log.warning("a room's owner did not let it go in time", extra={"client": conn.client})
            conn.send(p.error_message(v, p.ProtocolCode.UNAVAILABLE, conn.lang))
            conn.close(CLOSE_TRY_LATER, "try again later")
            return
        except Exception:
            log.exception("a room could not be claimed")
            conn.send(p.error_message(v, p.ProtocolCode.UNAVAILABLE, conn.lang))
            conn.close(CLOSE_TRY_LATER, "try again later")
            return
        if room is None:
            self._not_found(conn, v)
            return
        conn.target = room
        room.post(Inbound(conn, message))
        if isinstance(message, p.Create) and not room.members:
            room.post(Expire())  # its creator was refused meanwhile: nobody will ever come

    def _not_found(self, conn: Connection, v: int) -> None:
        """No room has the code the entry named: a look-up in vain, counted against the address."""
        self.services.limiter.missed(conn.client)
        conn.send(p.error_message(v, p.ProtocolCode.ROOM_NOT_FOUND, conn.lang))

    def dispatch(self, conn: Connection, websocket: WebSocket, message: Any, v: int) -> None:
        """Posts ``message`` to the room it is for: a new room for ``create``, the room named by ``join`` or
        ``resume``, else the connection's room."""
        services = self.services
        if isinstance(message, p.ENTRY_MESSAGES):
            if not self._may_enter(conn, message, v):
                return
            if isinstance(message, p.Create):
                room = services.registry.create(services.base_url(websocket.url.scheme, websocket.headers.get("host")))
            else:
                code = normalize_code(message.room)
                found = services.registry.get(code) if is_room_code(code) else None
                if found is None:
                    self._not_found(conn, v)
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


class Reader:
    """One connection's inbound text frames: each is checked (rate, size, shape) and its message posted to its
    room, in the protocol's callback that read it (:meth:`direct`) or from the bridge's loop (:meth:`text`)."""

    def __init__(self, bridge: Bridge, conn: Connection, websocket: WebSocket, protocol: CrispWebSocket | None) -> None:
        settings = bridge.services.settings
        self.bridge = bridge
        self.conn = conn
        self.websocket = websocket
        self.metrics = bridge.services.metrics
        self.cluster = bridge.services.registry.cluster is not None
        self.bucket = TokenBucket(settings.rate_burst, settings.rate_per_second, now_ms())
        # Refusals are strikes that wear off slowly: a flood is cut off, an occasional burst is forgiven.
        self.strikes = TokenBucket(settings.rate_burst, settings.rate_per_second / 10, now_ms())
        self.limit = settings.max_message_bytes
        #: The protocol that calls :meth:`direct`, if it does.
        self.protocol = protocol
        #: An entry read by :meth:`direct` that needs the cluster, for the bridge's loop: (message, v).
        self.deferred: tuple[Any, int] | None = None

    def text(self, data: str) -> tuple[Any, int] | None:
        """Checks one text frame and posts its message; an entry that must first be claimed in the cluster is
        returned instead, for the caller to await ``Bridge.enter_cluster`` with."""
        conn, metrics = self.conn, self.metrics
        metrics.received()
        v = conn.room.v if conn.room is not None else 0
        if not self.bucket.take(now_ms()):
            if not self.strikes.take(now_ms()):  # a flood, not a burst: hang up
                conn.close(CLOSE_POLICY, "too many messages")
                return None
            conn.send(p.error_message(v, p.ProtocolCode.RATE_LIMITED, conn.lang))
            metrics.refused.labels("rate_limited").inc()
            return None
        limit = self.limit
        # A character is at most four bytes of UTF-8: most messages need no encoding to be measured.
        if len(data) * 4 > limit and len(data.encode()) > limit:
            conn.send(p.error_message(v, p.ProtocolCode.TOO_LARGE, conn.lang, f"at most {limit} bytes"))
            metrics.refused.labels("too_large").inc()
            return None
        try:
            message = p.parse_inbound(data)
        except p.BadMessage as exc:
            conn.send(p.error_message(v, p.ProtocolCode.BAD_MESSAGE, conn.lang, str(exc)))
            metrics.refused.labels("bad_message").inc()
            return None
        if self.cluster and isinstance(message, p.ENTRY_MESSAGES):
            return message, v
        self.bridge.dispatch(conn, self.websocket, message, v)
        return None

    def direct(self, data: str) -> None:
        """:meth:`text`, called by the protocol with each text frame as it arrives. The bridge's loop is woken
        for an entry that needs the cluster (the frames after it wait in the protocol's queue) and when the
        connection hangs up; a bug closes this connection (1011), as uvicorn would, and nothing else."""
        conn, protocol = self.conn, self.protocol
        assert protocol is not None
        if conn.closing:
            return
        try:
            entry = self.text(data)
        except Exception:
            log.exception("a message could not be handled", extra={"client": conn.client})
            conn.close(CLOSE_INTERNAL, "internal error")
            entry = None
        if entry is not None:
            self.deferred = entry
            protocol.read_directly(None)
            protocol.wake_app()
        elif conn.closing:
            protocol.read_directly(None)
            protocol.wake_app()
