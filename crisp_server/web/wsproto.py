"""uvicorn's ``websockets-sansio`` WebSocket protocol with a short path for the frames this server sends
most: whole text messages.

uvicorn hands every text frame to the ``websockets`` library, which builds a frame object, serialises it
and queues the bytes before they are written. A server's frames are never masked, never fragmented here,
and permessage-deflate is off (``serve.py``), so a text frame is a 2- to 10-byte header and the UTF-8
payload: written directly, that costs a fraction of the generic path, and sending updates is a large
share of a busy server's time (issue 7). Everything else (the handshake, pings, close, flow control,
disconnects) is uvicorn's own code; frames take the generic path whenever the connection is not plainly
open.
"""

from __future__ import annotations

import struct
from typing import Any

from uvicorn.protocols.utils import ClientDisconnected
from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
from websockets.protocol import State

_TEXT_FIN = 0x81  # FIN + opcode 1 (text)


def text_frame_header(length: int) -> bytes:
    """RFC 6455 section 5.2: the header of an unmasked, unfragmented text frame of ``length`` bytes."""
    if length < 126:
        return struct.pack("!BB", _TEXT_FIN, length)
    if length < 1 << 16:
        return struct.pack("!BBH", _TEXT_FIN, 126, length)
    return struct.pack("!BBQ", _TEXT_FIN, 127, length)


class FastTextProtocol(WebSocketsSansIOProtocol):
    async def send(self, message: Any) -> None:
        text = message.get("text") if message["type"] == "websocket.send" else None
        if (
            text is None
            or not self.handshake_complete
            or self.close_sent
            or self.initial_response is not None
            or self.conn.state is not State.OPEN
            or self.conn.extensions  # a negotiated extension (compression) must see every frame
        ):
            await super().send(message)
            return
        if not self.writable.is_set():
            await self.writable.wait()  # flow control: the socket's buffer is full
        if self.disconnected or self.transport.is_closing():
            raise ClientDisconnected()
        payload = text.encode()
        self.transport.write(text_frame_header(len(payload)) + payload)
