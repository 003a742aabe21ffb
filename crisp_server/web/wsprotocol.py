"""The WebSocket protocol the server runs: uvicorn's ``websockets-sansio``, with these changes.

1. Keepalive pings are spread out. uvicorn pings a connection one interval after it opened, then one
   interval after each pong, so the connections opened together (every phone coming back after a
   restart; a load test's joins) were pinged together for as long as they lasted: at 2,000 rooms, 8,000
   pings within about two seconds, every 20 seconds, each time holding every table up by up to 170 ms.
   Here each connection's first ping comes at a random point between half and one and a half intervals.
   And a connection is pinged only after a whole interval without a message from it (issue 19): a
   message is as good a sign of life as a pong, and a player in a game sends one every turn. uvicorn
   pinged every connection every interval however busy it was: at 2,000 rooms, 400 pings and pongs a
   second (two timers, a write and a parsed frame each) that the work did not need; now the cost
   follows the idle connections. A peer that falls silent is still closed within an interval and a
   timeout of its last message.
2. A text frame can be written at once, without the ASGI round trip (:meth:`CrispWebSocket.send_text_now`):
   no message dictionary, no coroutines, no decoding of the encoded JSON to text and back, no frame object.
   Each player is sent every change of the table, so this is the hottest path of a busy server.
   Everything else (closing, flow control, pings, the handshake) stays with uvicorn and ``websockets``.
3. A text frame that is not UTF-8 is closed with 1007 as uvicorn does, but logged at INFO: it is the
   client's mistake, not an error of the server (issue 15).
4. A connection that is closed is gone for real (issue 15). uvicorn closes the transport, which waits for
   its buffer to drain: a phone that stopped reading kept its descriptor, or (closed by the keepalive)
   left an orphan socket in FIN-WAIT-1 holding up to megabytes of unsent data in the kernel. Here a
   failed keepalive aborts the socket at once, and a close that the peer has not completed within
   ``close_seconds`` aborts it then; aborting resets the connection (``SO_LINGER`` 0), so the kernel
   frees the socket and its buffers. The kernel's send buffer of each WebSocket is bounded
   (``SEND_BUFFER``) instead of growing by itself to megabytes, and :meth:`CrispWebSocket.close_now`
   closes a connection whose queue overflowed without waiting for its full buffer.
5. Frames in are read here and handed to the application's reader at once (:meth:`CrispWebSocket.read_directly`,
   issue 19): the WebSocket parser, the ASGI message and queue, pausing and resuming the socket's reads and
   waking the connection's task for each frame cost about as much as all of a room's rules. The stream is cut
   into whole frames here; a whole unfragmented masked text frame of less than 64 KiB (every message of the
   protocol) is unmasked, decoded and handed over on the spot; every other frame (control frames, binary,
   fragments, anything malformed) is given whole to ``websockets``, which answers it as before. Frames that
   arrive while the application's queue holds something wait behind it, so that the order is kept.
6. A plain opening handshake is answered here (:meth:`CrispHttp.handle_websocket_upgrade`,
   :meth:`CrispWebSocket.open_checked`): uvicorn writes the request that its HTTP parser has read back out as
   bytes for ``websockets`` to parse again, and ``websockets`` builds its answer with a header object and a
   formatted date, about three quarters of the server's work for a player who reconnects (measured with
   ``bench/restart.py``: 8,000 players back at once). A request that asks for nothing beyond RFC 6455's
   handshake (GET over HTTP/1.1, one ``Upgrade: websocket``, ``Connection: Upgrade``, one valid 16-byte key,
   version 13, at most one ``Origin``, no subprotocol, and no compression asked for where the server offers
   it: the server runs without) is checked here from the headers already read, the application gets the same
   scope, and the ``101`` is written from bytes when it accepts. Every other request (a malformed key, a
   header over ``websockets``' limits...) goes to ``websockets`` as before, which answers it as it always did.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import contextlib
import logging
import random
import re
import socket
import struct
from collections.abc import Callable
from typing import Any, Final
from urllib.parse import unquote

from uvicorn._types import ASGIReceiveEvent, ASGISendEvent
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
from uvicorn.protocols.utils import ClientDisconnected, get_client_addr, get_path_with_query_string
from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
from websockets.frames import Frame
from websockets.http11 import MAX_LINE_LENGTH, MAX_NUM_HEADERS
from websockets.protocol import OPEN
from websockets.utils import accept_key

from crisp_server.web.gate import MONITORED_PATHS, Gate, Ticket

try:  # websockets' C unmasking, as its own parser uses; its pure Python one where the C one is not built
    from websockets.speedups import apply_mask
except ImportError:  # pragma: no cover
    from websockets.utils import apply_mask

#: FIN + text (RFC 6455, section 5.2): a whole message in one frame.
_TEXT: Final = 0x81
#: A text frame that is not UTF-8 (RFC 6455 "invalid frame payload data").
CLOSE_NOT_UTF8: Final = 1007
#: What uvicorn closes with when a keepalive ping goes unanswered (the socket is reset right after).
CLOSE_KEEPALIVE_LOST: Final = 1011
#: The kernel's send buffer of a WebSocket (Linux doubles it for its own bookkeeping). Untouched, it grows
#: to megabytes for a peer that stops reading; this is dozens of updates, plenty for a phone far away.
SEND_BUFFER: Final = 64 * 1024
#: Above this the transport's own buffer pauses writing (uvicorn's flow control: frames then wait in the
#: connection's bounded queue); uvloop's default, set here so that asyncio's loop bounds it alike.
WRITE_BUFFER_HIGH: Final = 64 * 1024
#: A 7-bit payload length that means a 16-bit (126) or 64-bit (127) one follows (RFC 6455, section 5.2).
_LENGTH_16: Final = 126
_LENGTH_64: Final = 127
#: The largest payload a 16-bit length gives.
_MOST_16: Final = 0xFFFF
#: The mask bit of a frame's second byte: every client frame has it (RFC 6455, section 5.3).
_MASKED: Final = 0x80
#: What a reader does with one text frame.
TextReader = Callable[[str], None]
#: ``SO_LINGER`` on, zero seconds: closing the socket resets the connection and drops what it holds.
_RESET: Final = struct.pack("ii", 1, 0)

log = logging.getLogger("crisp.web")


#: The start of a ``101`` answer, up to the value of its ``Sec-WebSocket-Accept`` (RFC 6455, section 4.2.2).
_SWITCHING: Final = (
    b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: "
)


def text_frame_header(length: int) -> bytes:
    """The header of an unmasked text frame (a server's) holding ``length`` bytes."""
    if length < 126:
        return bytes((_TEXT, length))
    if length < 1 << 16:
        return bytes((_TEXT, 126)) + length.to_bytes(2, "big")
    return bytes((_TEXT, 127)) + length.to_bytes(8, "big")


#: The header names and values ``websockets`` accepts in a handshake (its own parser's rules, RFC 9110).
_TOKEN: Final = re.compile(rb"[-!#$%&'*+.^_`|~0-9a-zA-Z]+")
_VALUE: Final = re.compile(rb"[\x09\x20-\x7e\x80-\xff]*")
#: The handshake headers that :func:`plain_handshake_key` reads (names as uvicorn's parser gives them: lower case).
_KEY, _VERSION, _UPGRADE, _CONNECTION = b"sec-websocket-key", b"sec-websocket-version", b"upgrade", b"connection"
_ORIGIN, _PROTOCOL, _EXTENSIONS = b"origin", b"sec-websocket-protocol", b"sec-websocket-extensions"


def plain_handshake_key(
    method: str, http_version: str, target: bytes, headers: list[tuple[bytes, bytes]], *, compression: bool
) -> str | None:
    """The ``Sec-WebSocket-Key`` of an opening handshake that ``websockets`` would accept as it is and that asks
    for nothing else (no subprotocol; no compression when the server offers it), checked from the request
    uvicorn's HTTP parser read; ``None`` for any other request, which then goes to ``websockets`` (its answer,
    an error included, is then exactly what it always was). The rules are ``websockets``': GET over HTTP/1.1, an
    ASCII target, at most ``MAX_NUM_HEADERS`` headers of at most ``MAX_LINE_LENGTH`` bytes with valid names and
    values, ``Connection`` listing ``upgrade``, a single ``Upgrade: websocket``, one key that is 16 bytes in
    base64, one ``Sec-WebSocket-Version: 13``, at most one ``Origin``."""
    if (
        method != "GET"
        or http_version != "1.1"
        or not target.isascii()
        or len(target) + 14 > MAX_LINE_LENGTH  # "GET " + target + " HTTP/1.1"
        or len(headers) > MAX_NUM_HEADERS
    ):
        return None
    key: bytes | None = None
    version = upgrade = None
    upgrade_asked = origins = 0
    for name, value in headers:
        if len(name) + len(value) + 2 > MAX_LINE_LENGTH or not _TOKEN.fullmatch(name) or not _VALUE.fullmatch(value):
            return None
        if name == _KEY:
            if key is not None:
                return None
            key = value
        elif name == _VERSION:
            if version is not None:
                return None
            version = value
        elif name == _UPGRADE:
            if upgrade is not None:
                return None
            upgrade = value
        elif name == _CONNECTION:
            tokens = [t.strip(b" \t") for t in value.split(b",")]
            if not all(_TOKEN.fullmatch(t) for t in tokens):
                return None
            upgrade_asked += any(t.lower() == b"upgrade" for t in tokens)
        elif name == _ORIGIN:
            origins += 1
        elif name == _PROTOCOL or (compression and name == _EXTENSIONS):
            return None
    if not upgrade_asked or origins > 1 or version != b"13" or upgrade is None or upgrade.lower() != b"websocket":
        return None
    if key is None:
        return None
    try:
        if len(base64.b64decode(key, validate=True)) != 16:
            return None
    except binascii.Error:
        return None
    return key.decode("ascii")


class CrispWebSocket(WebSocketsSansIOProtocol):
    """uvicorn's ``websockets-sansio`` protocol with spread keepalive pings, a direct text path, quiet
    refusals and closes that free the socket."""

    #: How long a closing connection may take to complete the closing handshake before its socket is
    #: aborted (uvicorn waits 10 s, then closes without aborting). See :func:`websocket_protocol`.
    close_seconds: float = 5.0

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)
        self._bound_buffers()

    def connection_handed_over(self, transport: asyncio.Transport, http: HttpToolsProtocol) -> None:
        """``connection_made`` for a connection upgraded by :class:`CrispHttp`: the addresses are the ones the
        HTTP protocol read from the socket already (uvicorn's asks the socket again)."""
        self.connections.add(self)
        self.transport = transport
        self.server, self.client = http.server, http.client
        self.scheme = "wss" if http.scheme == "https" else "ws"
        self._bound_buffers()

    def _bound_buffers(self) -> None:
        self.transport.set_write_buffer_limits(high=WRITE_BUFFER_HIGH)
        self._socket_option(socket.SO_SNDBUF, SEND_BUFFER)

    def _socket_option(self, option: int, value: int | bytes) -> None:
        sock = self.transport.get_extra_info("socket")
        if sock is not None:
            with contextlib.suppress(OSError):  # not a TCP socket (a test's pipe), or already closed
                sock.setsockopt(socket.SOL_SOCKET, option, value)

    def abort(self) -> None:
        """Drop the connection now: a reset, so that the kernel frees the socket and the data it still holds
        at once (a plain close keeps them until a peer that does not read takes them, or for ever)."""
        if self.disconnected:
            return
        self._socket_option(socket.SO_LINGER, _RESET)
        self.transport.abort()

    def abort_later(self) -> None:
        """The connection is closing: abort it unless it is gone within ``close_seconds``. (uvicorn's close
        timer, if it runs, is replaced: it would only close, and wait for the buffer to drain.)"""
        if self.close_timer is not None:
            self.close_timer.cancel()
        self.close_timer = self.loop.call_later(self.close_seconds, self.abort)

    def close_now(self, code: int, reason: str) -> None:
        """Close now, even though the socket's buffer is full (uvicorn's ``send`` would wait for it to
        drain): the close frame goes after what is buffered, and the socket is aborted unless the peer
        completes the close within ``close_seconds``. The application is told the connection ended."""
        if self.close_sent or self.disconnected or self.transport.is_closing():
            return
        self.queue.put_nowait({"type": "websocket.disconnect", "code": code, "reason": reason})
        self.conn.send_close(code, reason)
        self.transport.write(b"".join(self.conn.data_to_send()))
        self.close_sent = True
        if self.read_paused:  # read on: the peer's close reply ends the connection early
            self.read_paused = False
            self.transport.resume_reading()
        self.abort_later()

    #: The ``Sec-WebSocket-Accept`` of a handshake checked by :class:`CrispHttp` (``None``: ``websockets`` has it).
    accept_header: bytes | None = None

    def open_checked(self, target: bytes, headers: list[tuple[bytes, bytes]], key: str) -> None:
        """Start the application on a handshake :func:`plain_handshake_key` accepted: the scope uvicorn would
        build (the same headers, path and query), and frames read from now on (``websockets`` would have read
        the request and then frames). The ``101`` goes out when the application accepts (:meth:`send`)."""
        conn = self.conn
        conn.state = OPEN
        conn.parser = conn.parse()
        next(conn.parser)
        self.accept_header = accept_key(key).encode("ascii")
        self.handshake_initiated = True
        self.request = None  # type: ignore[assignment]
        self.response = None  # type: ignore[assignment]
        raw_path, _, query = target.partition(b"?")
        root = self.root_path
        self.scope = {
            "type": "websocket",
            "asgi": {"version": self.asgi_version, "spec_version": "2.4"},
            "http_version": "1.1",
            "scheme": self.scheme,
            "server": self.server,
            "client": self.client,
            "root_path": root,
            "path": root + unquote(raw_path.decode("ascii")),
            "raw_path": root.encode("ascii") + raw_path,
            "query_string": query,
            "headers": headers,
            "subprotocols": [],
            "state": self.app_state.copy(),
            "extensions": {"websocket.http.response": {}},
        }
        self.queue.put_nowait({"type": "websocket.connect"})
        task = self.loop.create_task(self.run_asgi())
        task.add_done_callback(self.on_task_complete)
        self.tasks.add(task)

    def _accept_checked(self, message: ASGISendEvent) -> None:
        """The ``101`` of a checked handshake, with what uvicorn adds (its default headers, the application's)."""
        if self.logger.isEnabledFor(logging.INFO):  # the path is decoded only for a line that is written
            self.logger.info(
                '%s - "WebSocket %s" [accepted]', get_client_addr(self.scope), get_path_with_query_string(self.scope)
            )
        assert self.accept_header is not None
        out = [_SWITCHING, self.accept_header, b"\r\n"]
        extra: list[tuple[bytes, bytes]] = list(message.get("headers", ()))  # type: ignore[call-overload]
        for name, value in self.default_headers + extra:
            out += [name, b": ", value, b"\r\n"]
        subprotocol: str | None = message.get("subprotocol")  # type: ignore[assignment]
        if subprotocol:
            out += [b"Sec-WebSocket-Protocol: ", subprotocol.encode(), b"\r\n"]
        out.append(b"\r\n")
        if not self.transport.is_closing():
            self.handshake_complete = True
            self.transport.write(b"".join(out))
            self.start_keepalive()

    #: The gate and the connection's place in it, handed over by :class:`CrispHttp` at the upgrade.
    gate: Gate | None = None
    ticket: Ticket | None = None

    def connection_lost(self, exc: Exception | None) -> None:
        super().connection_lost(exc)
        if self.gate is not None and self.ticket is not None:
            self.gate.leave(self.ticket)
            self.ticket = None

    def keepalive_timeout(self) -> None:
        """The peer did not answer a ping in time: uvicorn sends 1011 and closes, which waits for a buffer
        that will not drain; the socket is aborted instead (the close frame is only a courtesy)."""
        super().keepalive_timeout()
        log.info(
            "closing a connection whose keepalive ping went unanswered (%d)",
            CLOSE_KEEPALIVE_LOST,
            extra={"client": self.peer},
        )
        self.abort()

    async def send(self, message: ASGISendEvent) -> None:
        if (
            message["type"] == "websocket.accept"
            and self.accept_header is not None
            and not self.handshake_complete
            and self.initial_response is None
        ):
            await self.writable.wait()
            if self.disconnected:
                raise ClientDisconnected()
            self._accept_checked(message)
            return
        await super().send(message)
        kind = message["type"]
        if kind == "websocket.close" and self.close_timer is not None:
            self.abort_later()
        elif kind == "websocket.accept" and self.handshake_complete:
            # The handshake's request and response (their headers: about 2 KB) are only read until the
            # handshake is answered; uvicorn keeps them for the whole connection (issue 19). The application
            # reads the request's headers from its scope.
            self.request = None  # type: ignore[assignment]
            self.response = None  # type: ignore[assignment]

    def handle_close(self, event: Frame) -> None:
        super().handle_close(event)
        self._closing_without_timer()

    def handle_parser_exception(self) -> None:
        super().handle_parser_exception()
        self._closing_without_timer()

    async def run_asgi(self) -> None:
        await super().run_asgi()
        self._closing_without_timer()

    def _closing_without_timer(self) -> None:
        """uvicorn closed the transport, which waits for its buffer to drain: abort it if it has not."""
        if self.close_timer is None and self.transport.is_closing() and not self.disconnected:
            self.abort_later()

    #: When the peer last sent a message (the loop's clock); pings wait for an interval of silence.
    heard_at: float = float("-inf")

    def start_keepalive(self) -> None:
        interval = self.ping_interval
        if interval is not None and interval > 0:
            self.ping_timer = self.loop.call_later(interval * random.uniform(0.5, 1.5), self.send_keepalive_ping)

    def send_keepalive_ping(self) -> None:
        """Ping only a peer silent for a whole interval; one heard from since waits until the interval after
        its last message is over (no pong is pending then: a ping's pong timer schedules the next ping)."""
        interval = self.ping_interval
        closing = self.close_sent or self.transport.is_closing()
        if interval is not None and self.pending_ping_payload is None and not closing:
            quiet_at = self.heard_at + interval
            if quiet_at > self.loop.time():
                self.ping_timer = self.loop.call_at(quiet_at, self.send_keepalive_ping)
                return
        super().send_keepalive_ping()

    #: The application's reader of text frames (:meth:`read_directly`), or ``None``: the ASGI ``receive``.
    on_text: TextReader | None = None
    #: Whether this protocol cuts the stream into frames itself (:meth:`data_received`).
    _framing: bool = False
    _framing_decided: bool = False
    #: Whether frame bytes reached ``websockets`` before framing was decided: only a parser left between
    #: frames can be bypassed. (uvicorn hands this protocol the handshake's request alone, rebuilt from what
    #: its HTTP parser read.)
    _frames_seen: bool = False
    #: The start of a frame whose end has not arrived yet.
    _partial: bytes = b""
    #: The largest payload read here (see :meth:`read_directly`).
    _most: int = 0

    def read_directly(self, reader: TextReader | None) -> None:
        """Hand each text frame from now on to ``reader`` as it arrives, in the event loop's callback that
        read it, instead of through the ASGI ``receive``; while that queue holds something (a frame that came
        before, a binary frame, a wake-up) frames wait behind it there, in order. ``reader`` must not raise.
        ``None`` sends frames through ``receive`` again. Whatever else happens (a disconnect, a close, a binary
        frame) still comes through ``receive``."""
        self.on_text = reader
        if not self._framing_decided:
            self._framing_decided = True
            self._framing = not self._frames_seen and not self.conn.reader.buffer
            # websockets' limit on a message (``max_message_size`` since 15, ``max_size`` before): a larger
            # frame is left to it, which closes with 1009.
            limit = getattr(self.conn, "max_message_size", getattr(self.conn, "max_size", None))
            self._most = _MOST_16 if limit is None else min(_MOST_16, limit)

    def wake_app(self) -> None:
        """Make the application's ``receive`` return (a message of type ``crisp.wake``), behind what it holds."""
        wake: Any = {"type": "crisp.wake"}  # not an ASGI event: only the bridge's loop reads this queue
        self.queue.put_nowait(wake)

    def data_received(self, data: bytes) -> None:
        if self._framing:
            self._frames_received(data)
            return
        if self.handshake_initiated:
            self._frames_seen = True
        super().data_received(data)

    def _frames_received(self, data: bytes) -> None:
        """Cut ``data`` (after what was left of the last piece) into frames: each whole text frame goes to the
        reader, every other frame whole to ``websockets``; an incomplete frame waits for the rest."""
        if self._partial:
            data = self._partial + data
            self._partial = b""
        end = len(data)
        pos = 0
        while end - pos >= 2:
            second = data[pos + 1]
            size = second & 0x7F
            head = pos + 2
            if size == _LENGTH_16:
                if end - pos < 4:
                    break
                size = int.from_bytes(data[pos + 2 : pos + 4], "big")
                head = pos + 4
            elif size == _LENGTH_64:
                size = _MOST_16 + 1  # 64 KiB or more
            if size > self._most:  # 64 KiB or more, or over websockets' limit: it reads on from here
                self._framing = False
                super().data_received(data[pos:])
                return
            if second & _MASKED:
                head += 4
            stop = head + size
            if stop > end:
                break
            conn = self.conn
            if (
                data[pos] == _TEXT
                and second & _MASKED
                and conn.state is OPEN
                and not conn.expect_continuation_frame
                and not self.close_sent
            ):
                try:
                    text = apply_mask(data[head:stop], data[head - 4 : head]).decode()
                except UnicodeDecodeError:
                    self._not_utf8()
                    return
                self._text_received(text)
            else:
                super().data_received(data[pos:stop])
            pos = stop
        if pos:
            # A whole frame is a sign of life (bytes trickling into one that never ends are not: the peer is
            # pinged, and its pong cannot come before that frame's end).
            self.heard_at = self.loop.time()
        if pos < end:
            self._partial = data[pos:]

    def _text_received(self, text: str) -> None:
        reader = self.on_text
        if reader is not None and self.queue.empty():
            reader(text)
            return
        self._to_app({"type": "websocket.receive", "text": text})

    def _to_app(self, message: ASGIReceiveEvent) -> None:
        """Queue ``message`` for the application's ``receive``; reading pauses until it is read (uvicorn's
        flow control)."""
        self.queue.put_nowait(message)
        if not self.read_paused:
            self.read_paused = True
            self.transport.pause_reading()

    def _not_utf8(self) -> None:
        log.info("closing a connection that sent text that is not UTF-8 (1007)", extra={"client": self.peer})
        self.conn.send_close(CLOSE_NOT_UTF8, "text frames must be UTF-8")
        self.handle_parser_exception()

    def send_receive_event_to_app(self) -> None:
        """uvicorn's, except that a text frame that is not UTF-8 is a client's mistake, logged at INFO: uvicorn
        logs it as an ERROR with a traceback, so that any client could fill the logs with errors. And the
        time is noted: the peer is alive (see :meth:`send_keepalive_ping`)."""
        data = self.frames[0] if len(self.frames) == 1 else b"".join(self.frames)
        self.frames = []
        self.heard_at = self.loop.time()
        if self.close_sent:  # past `websocket.close`: read on until the peer's close reply arrives
            return
        if self.curr_msg_data_type == "text":
            try:
                text = data.decode()
            except UnicodeDecodeError:
                self._not_utf8()
                return
            self._text_received(text)
            return
        self._to_app({"type": "websocket.receive", "bytes": data})

    @property
    def peer(self) -> str:
        return self.client[0] if self.client else "unknown"

    def send_text_now(self, data: bytes) -> bool:
        """Write ``data`` (UTF-8 text) as one frame now, if the connection is open, the socket takes data and
        no extension (compression) applies; else return ``False``: the caller goes through the ASGI
        ``send``, which waits, compresses or raises as it must."""
        conn = self.conn
        if (
            self.disconnected
            or self.close_sent
            or not self.handshake_complete
            or self.initial_response is not None
            or not self.writable.is_set()
            or conn.state is not OPEN
            or conn.expect_continuation_frame
            or conn.extensions
            or self.transport.is_closing()
        ):
            return False
        self.transport.write(text_frame_header(len(data)) + data)
        return True


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


def websocket_protocol(close_seconds: float) -> type[CrispWebSocket]:
    """The protocol class for uvicorn's ``ws`` option, with the server's settings (its gate comes with each
    connection from :class:`CrispHttp`)."""
    return type("CrispWebSocket", (CrispWebSocket,), {"close_seconds": close_seconds})
