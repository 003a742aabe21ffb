"""The WebSocket protocol the server runs: uvicorn's ``websockets-sansio``, with two changes (issue 7).

1. Keepalive pings are spread out. uvicorn pings a connection one interval after it opened, then one
   interval after each pong, so the connections opened together (every phone coming back after a
   restart; a load test's joins) were pinged together for as long as they lasted: at 2,000 rooms, 8,000
   pings within about two seconds, every 20 seconds, each time holding every table up by up to 170 ms.
   Here each connection's first ping comes at a random point between half and one and a half intervals.
2. A text frame can be written at once, without the ASGI round trip (:meth:`CrispWebSocket.send_text_now`):
   no message dictionary, no coroutines, no decoding of the encoded JSON to text and back, no frame object.
   Each player is sent every change of the table, so this is the hottest path of a busy server.
   Everything else (closing, flow control, pings, the handshake) stays with uvicorn and ``websockets``.
"""

from __future__ import annotations

import random
from typing import Final

from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
from websockets.protocol import OPEN

#: FIN + text (RFC 6455, section 5.2): a whole message in one frame.
_TEXT: Final = 0x81


def text_frame_header(length: int) -> bytes:
    """The header of an unmasked text frame (a server's) holding ``length`` bytes."""
    if length < 126:
        return bytes((_TEXT, length))
    if length < 1 << 16:
        return bytes((_TEXT, 126)) + length.to_bytes(2, "big")
    return bytes((_TEXT, 127)) + length.to_bytes(8, "big")


class CrispWebSocket(WebSocketsSansIOProtocol):
    """uvicorn's ``websockets-sansio`` protocol with spread keepalive pings and a direct text path."""

    def start_keepalive(self) -> None:
        interval = self.ping_interval
        if interval is not None and interval > 0:
            self.ping_timer = self.loop.call_later(interval * random.uniform(0.5, 1.5), self.send_keepalive_ping)

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
