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

6. A plain opening handshake is answered without ``websockets`` (:mod:`crisp_server.web.handshake`).

The HTTP protocol that hands connections over is :mod:`crisp_server.web.httpprotocol`; the plain handshake
it checks, :mod:`crisp_server.web.handshake`; the bytes of a frame, :mod:`crisp_server.web.frames`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
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
from websockets.protocol import OPEN
from websockets.utils import accept_key

from crisp_server.web.frames import LENGTH_16, LENGTH_64, MASKED, MOST_16, TEXT, apply_mask, text_frame_header
from crisp_server.web.gate import Gate, Ticket
from crisp_server.web.handshake import switching_protocols

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
#: What a reader does with one text frame.
TextReader = Callable[[str], None]
#: ``SO_LINGER`` on, zero seconds: closing the socket resets the connection and drops what it holds.
_RESET: Final = struct.pack("ii", 1, 0)

log = logging.getLogger("crisp.web")


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
        extra: list[tuple[bytes, bytes]] = list(message.get("headers", ()))  # type: ignore[call-overload]
        subprotocol: str | None = message.get("subprotocol")  # type: ignore[assignment]
        answer = switching_protocols(self.accept_header, self.default_headers + extra, subprotocol)
        if not self.transport.is_closing():
            self.handshake_complete = True
            self.transport.write(answer)
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
            self._most = MOST_16 if limit is None else min(MOST_16, limit)

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
            if size == LENGTH_16:
                if end - pos < 4:
                    break
                size = int.from_bytes(data[pos + 2 : pos + 4], "big")
                head = pos + 4
            elif size == LENGTH_64:
                size = MOST_16 + 1  # 64 KiB or more
            if size > self._most:  # 64 KiB or more, or over websockets' limit: it reads on from here
                self._framing = False
                super().data_received(data[pos:])
                return
            if second & MASKED:
                head += 4
            stop = head + size
            if stop > end:
                break
            conn = self.conn
            if (
                data[pos] == TEXT
                and second & MASKED
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


def websocket_protocol(close_seconds: float) -> type[CrispWebSocket]:
    """The protocol class for uvicorn's ``ws`` option, with the server's settings (its gate comes with each
    connection from :class:`CrispHttp`)."""
    return type("CrispWebSocket", (CrispWebSocket,), {"close_seconds": close_seconds})
