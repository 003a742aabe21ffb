"""The HTTP protocol the server runs: uvicorn's ``httptools`` one, which lets go of a connection it hands over
to :class:`~crisp_server.web.wsprotocol.CrispWebSocket` (answering a plain handshake itself:
:mod:`crisp_server.web.handshake`), and which makes each connection pass the server's
:class:`~crisp_server.web.gate.Gate` and send its request's head in time."""

from __future__ import annotations

import asyncio
import logging
import random
from typing import Any, Final

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from crisp_server.web.gate import MONITORED_PATHS, Gate, Ticket
from crisp_server.web.handshake import plain_handshake_key
from crisp_server.web.wsprotocol import CrispWebSocket

log = logging.getLogger("crisp.web")


class CrispHttp(HttpToolsProtocol):
    """uvicorn's ``httptools`` HTTP protocol, with two changes.

    1. It lets go of its request parser once it has handed a connection over to the WebSocket protocol. The
       parser refers back to the protocol object (it holds its callbacks): a cycle, which only the
       cyclic collector frees, and the server runs that once per retention sweep (``crisp_server/collector.py``).
       So the handed-over object, its parser, the request's headers and scope and an empty pipeline stayed,
       about 3 KB per WebSocket opened since the last sweep. Without the parser, reference counting frees them
       at the upgrade.
    2. Connections cannot hold the server's descriptors for nothing. A request's head (its line and headers)
       must be whole within ``head_seconds`` (up to half as much again, see :meth:`_arm_head`) of the
       connection's opening, or of its first byte after a response: else the connection is answered 408 and
       closed (uvicorn waited for ever on a connection that sent nothing, or half a head, or trickled one
       byte at a time). And each accepted connection passes the :class:`~crisp_server.web.gate.Gate`: beyond
       the connection budget it is answered 503, beyond its address's cap 429, and closed (see :meth:`refuse`);
       but a monitor's, beyond the budget, takes the health reserve and gets its health check or metrics.
    """

    #: The server's gate (``None``: every connection is taken, as in tests that run uvicorn directly).
    gate: Gate | None = None
    #: How long a request's head may take to arrive (see :func:`http_protocol`).
    head_seconds: float = 10.0

    ticket: Ticket | None = None
    head_timer: asyncio.TimerHandle | None = None
    #: A refused connection that reads on until its client has read the answer: when it is aborted anyway.
    linger_timer: asyncio.TimerHandle | None = None
    #: The connection was refused: what it sends is dropped until it closes or is aborted.
    refused: bool = False
    #: The request whose head was just read comes (through a trusted proxy) from an address at its cap.
    over_cap: bool = False
    #: The request whose head was just read came on a place of the health reserve and is not a health check.
    over_budget: bool = False

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        gate = self.gate
        if gate is not None:
            peer = self.client[0] if self.client else None
            ticket = gate.enter(peer)
            if ticket is None:
                self.refuse(503, AT_LIMIT, linger=False)
                return
            self.ticket = ticket
            # A trusted proxy's connections count by the address each request is forwarded for (at its head);
            # one of the health reserve counts there alone.
            if peer is not None and not ticket.reserve and not gate.forwards(peer) and not gate.admit(ticket, peer):
                self.refuse(429, TOO_MANY, linger=gate.may_linger())
                return
        self._arm_head()

    def _arm_head(self) -> None:
        """Start the head's clock: ``head_seconds``, and up to half as much again at random, so that the
        connections opened together (an attack of thousands) are not closed in one burst that holds every
        table up (measured: 10,000 at once stalled the loop for 120 ms; spread, a ping's p99 stays low)."""
        if self.head_timer is None:
            delay = self.head_seconds * random.uniform(1.0, 1.5)
            self.head_timer = self.loop.call_later(delay, self._head_late)

    def _disarm_head(self) -> None:
        if self.head_timer is not None:
            self.head_timer.cancel()
            self.head_timer = None

    def _head_late(self) -> None:
        """The request's head did not arrive in time: answered 408 and closed (what was read of it is dropped)."""
        self.head_timer = None
        if self.transport.is_closing():
            return
        if self.gate is not None:
            self.gate.note("head", self.client[0] if self.client else None)
        else:
            log.info("closing a connection whose request head did not arrive in time (408)")
        self.refused = True
        self.transport.write(_response(408, b"The request did not arrive in time.\n"))
        self.transport.close()

    def refuse(self, status: int, body: bytes, *, linger: bool) -> None:
        """Answer ``status`` with ``body`` at once, whatever the client sends, and close. ``linger``: the
        connection half-closes after the answer and reads on (dropping what it reads) for up to
        ``REFUSED_LINGER`` seconds, so that the client reads the answer: a socket closed with a request
        unread would be reset, and the reset destroys the answer in the client's kernel. Without it (the
        budget is spent, or too many refused connections linger already) the socket is closed at once."""
        self.refused = True
        self._disarm_head()
        transport = self.transport
        transport.write(_response(status, body))
        if not linger or not transport.can_write_eof():
            transport.close()
            return
        transport.write_eof()
        if self.gate is not None:
            self.gate.lingering += 1
        self.linger_timer = self.loop.call_later(REFUSED_LINGER, transport.abort)

    def data_received(self, data: bytes) -> None:
        if self.refused:
            return
        # Between requests (the first, or after a response) the next byte starts the clock of a new head.
        if self.head_timer is None and (self.cycle is None or self.cycle.response_complete):
            self._arm_head()
        super().data_received(data)

    def on_headers_complete(self) -> None:
        self._disarm_head()
        self.over_cap = False
        gate, ticket = self.gate, self.ticket
        peer = self.client[0] if self.client else None
        if ticket is not None and ticket.reserve:
            # The health reserve: a health check or a metrics scrape is answered, anything else refused; the
            # connection closes after the answer (a place of the reserve is one request's).
            upgrade = self.parser.should_upgrade()
            self.over_budget = upgrade or not self._monitoring()
            if self.over_budget and not upgrade:
                self._headers_complete_with(_over_budget)
            else:
                super().on_headers_complete()
            if self.cycle is not None:
                self.cycle.keep_alive = False
            return
        if gate is not None and ticket is not None and gate.forwards(peer):
            forwarded = b", ".join(value for name, value in self.headers if name == b"x-forwarded-for")
            address = gate.forwarded_address(peer, forwarded.decode("latin-1") if forwarded else None) or peer
            if address is not None and not gate.admit(ticket, address):
                self.over_cap = True
        if self.over_cap and not self.parser.should_upgrade():
            self._headers_complete_with(_too_many)
            return
        super().on_headers_complete()

    def _headers_complete_with(self, app: Any) -> None:
        """uvicorn's ``on_headers_complete``, with ``app`` answering this request (uvicorn runs the app it finds
        on the protocol)."""
        own, self.app = self.app, app
        try:
            super().on_headers_complete()
        finally:
            self.app = own

    def _monitoring(self) -> bool:
        """Whether the request whose head was just read is a health check or a metrics scrape."""
        path = self.url.split(b"?", 1)[0]
        return self.parser.get_method() in (b"GET", b"HEAD") and path in MONITORED_PATHS

    def on_response_complete(self) -> None:
        super().on_response_complete()
        gate, ticket = self.gate, self.ticket
        if gate is not None and ticket is not None and gate.forwards(self.client[0] if self.client else None):
            gate.release(ticket)  # a proxy's connection counts toward the client of each request while it runs

    def handle_websocket_upgrade(self) -> None:
        if self.over_cap:
            self.refuse(429, TOO_MANY, linger=False)  # the whole request is read: nothing unread to reset
            return
        if self.over_budget:
            self.refuse(503, AT_LIMIT, linger=False)
            return
        self._disarm_head()
        ws: Any = self.ws_protocol_class
        key = None
        if isinstance(ws, type) and issubclass(ws, CrispWebSocket):
            scope = self.scope
            key = plain_handshake_key(
                scope["method"],
                scope["http_version"],
                self.url,
                self.headers,
                compression=self.config.ws_per_message_deflate,
            )
        if key is None:
            super().handle_websocket_upgrade()
        else:
            # uvicorn's upgrade without writing the request out again for ``websockets`` to parse: checked here.
            self.connections.discard(self)
            checked: CrispWebSocket = ws(config=self.config, server_state=self.server_state, app_state=self.app_state)
            checked.connection_handed_over(self.transport, self)
            self.transport.set_protocol(checked)
            checked.open_checked(self.url, self.headers, key)
        # The connection (its place in the gate with it) is the WebSocket protocol's now.
        protocol = self.transport.get_protocol()
        if isinstance(protocol, CrispWebSocket):
            protocol.gate, protocol.ticket = self.gate, self.ticket
            self.ticket = None
        # Nothing of uvicorn's reads these after the upgrade: the WebSocket protocol has the transport, and this
        # object left the server's connections (its ``connection_lost`` and ``shutdown`` are never called).
        self.parser = None  # type: ignore[assignment]
        self.pipeline = None  # type: ignore[assignment]
        self.headers = []
        self.scope = None  # type: ignore[assignment]

    def connection_lost(self, exc: Exception | None) -> None:
        super().connection_lost(exc)
        self._disarm_head()
        gate = self.gate
        if self.linger_timer is not None:
            self.linger_timer.cancel()
            self.linger_timer = None
            if gate is not None:
                gate.lingering -= 1
        if gate is not None and self.ticket is not None:
            gate.leave(self.ticket)
            self.ticket = None


#: The body of a 429 refusal.
TOO_MANY: Final = b"Too many connections from your address: close some, then try again.\n"
#: The body of a 503 refusal: the connection budget is spent.
AT_LIMIT: Final = b"The server is at its connection limit: try again in a moment.\n"
#: How long a refused connection reads on (and drops what it reads) so that its client reads the answer.
REFUSED_LINGER: Final = 1.0
_REASONS: Final = {408: b"Request Timeout", 429: b"Too Many Requests", 503: b"Service Unavailable"}


def _response(status: int, body: bytes) -> bytes:
    """A whole HTTP/1.1 answer that closes the connection."""
    return (
        b"HTTP/1.1 %d %s\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: %d\r\n"
        b"connection: close\r\nretry-after: 5\r\n\r\n%s" % (status, _REASONS[status], len(body), body)
    )


async def _refusal(status: int, body: bytes, send: Any) -> None:
    headers = [
        (b"content-type", b"text/plain; charset=utf-8"),
        (b"content-length", str(len(body)).encode()),
        (b"connection", b"close"),
        (b"retry-after", b"5"),
    ]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def _too_many(scope: Any, receive: Any, send: Any) -> None:
    """The answer to a request forwarded for an address at its cap (the proxy's connection closes after it)."""
    await _refusal(429, TOO_MANY, send)


async def _over_budget(scope: Any, receive: Any, send: Any) -> None:
    """The answer to a request other than a health check on a place of the health reserve (it closes after)."""
    await _refusal(503, AT_LIMIT, send)


def http_protocol(gate: Gate | None, head_seconds: float) -> type[CrispHttp]:
    """The protocol class for uvicorn's ``http`` option, with the server's gate and head deadline."""
    return type("CrispHttp", (CrispHttp,), {"gate": gate, "head_seconds": head_seconds})
