"""The WebSocket protocol the server runs: uvicorn's ``websockets-sansio``, with these changes.

1. Keepalive pings are spread out. uvicorn pings a connection one interval after it opened, then one
   interval after each pong, so the connections opened together (every phone coming back after a
   restart; a load test's joins) were pinged together for as long as they lasted: at 2,000 rooms, 8,000
   pings within about two seconds, every 20 seconds, each time holding every table up by up to 170 ms.
   Here each connection's first ping comes at a random point between half and one and a half intervals.
2. A text frame can be written at once, without the ASGI round trip (:meth:`CrispWebSocket.send_text_now`):
   no message dictionary, no coroutines, no decoding of the encoded JSON to text and back, no frame object.
   Each player is sent every change of the table, so this is the hottest path of a busy server.
   Everything else (closing, flow control, pings, the handshake) stays with uvicorn and ``websockets``.
3. A text frame that is not UTF-8 is closed with 1007 as uvicorn does, but logged at INFO: it is the
   client's mistake, not an error of the server (issue 15).
"""

from __future__ import annotations

import logging
import random
from typing import Final

from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
from websockets.protocol import OPEN

#: FIN + text (RFC 6455, section 5.2): a whole message in one frame.
_TEXT: Final = 0x81
#: A text frame that is not UTF-8 (RFC 6455 "invalid frame payload data").
CLOSE_NOT_UTF8: Final = 1007

log = logging.getLogger("crisp.web")


def text_frame_header(length: int) -> bytes:
    """The header of an unmasked text frame (a server's) holding ``length`` bytes."""
    if length < 126:
        return bytes((_TEXT, length))
    if length < 1 << 16:
        return bytes((_TEXT, 126)) + length.to_bytes(2, "big")
    return bytes((_TEXT, 127)) + length.to_bytes(8, "big")


class CrispWebSocket(WebSocketsSansIOProtocol):
    """uvicorn's ``websockets-sansio`` protocol with spread keepalive pings, a direct text path and quiet
    refusals."""

    def start_keepalive(self) -> None:
        interval = self.ping_interval
        if interval is not None and interval > 0:
            self.ping_timer = self.loop.call_later(interval * random.uniform(0.5, 1.5), self.send_keepalive_ping)

    def send_receive_event_to_app(self) -> None:
        """uvicorn's, except that a text frame that is not UTF-8 is a client's mistake, logged at INFO: uvicorn
        logs it as an ERROR with a traceback, so that any client could fill the logs with errors."""
        data = self.frames[0] if len(self.frames) == 1 else b"".join(self.frames)
        self.frames = []
        if self.close_sent:  # past `websocket.close`: read on until the peer's close reply arrives
            return
        if self.curr_msg_data_type == "text":
            try:
                self.queue.put_nowait({"type": "websocket.receive", "text": data.decode()})
            except UnicodeDecodeError:
                log.info("closing a connection that sent text that is not UTF-8 (1007)", extra={"client": self.peer})
                self.conn.send_close(CLOSE_NOT_UTF8, "text frames must be UTF-8")
                self.handle_parser_exception()
                return
        else:
            self.queue.put_nowait({"type": "websocket.receive", "bytes": data})
        if not self.read_paused:
            self.read_paused = True
            self.transport.pause_reading()

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
