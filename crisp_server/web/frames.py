"""The bytes of a WebSocket frame (RFC 6455, section 5.2) as :class:`~crisp_server.web.wsprotocol.CrispWebSocket`
reads and writes them on its direct paths: the header of a text frame out, the fields of a client's frame in."""

from __future__ import annotations

from typing import Final

try:  # websockets' C unmasking, as its own parser uses; its pure Python one where the C one is not built
    from websockets.speedups import apply_mask
except ImportError:  # pragma: no cover
    from websockets.utils import apply_mask

__all__ = ["LENGTH_16", "LENGTH_64", "MASKED", "MOST_16", "TEXT", "apply_mask", "text_frame_header"]

#: FIN + text (RFC 6455, section 5.2): a whole message in one frame.
TEXT: Final = 0x81
#: A 7-bit payload length that means a 16-bit (126) or 64-bit (127) one follows (RFC 6455, section 5.2).
LENGTH_16: Final = 126
LENGTH_64: Final = 127
#: The largest payload a 16-bit length gives.
MOST_16: Final = 0xFFFF
#: The mask bit of a frame's second byte: every client frame has it (RFC 6455, section 5.3).
MASKED: Final = 0x80


def text_frame_header(length: int) -> bytes:
    """The header of an unmasked text frame (a server's) holding ``length`` bytes."""
    if length < 126:
        return bytes((TEXT, length))
    if length < 1 << 16:
        return bytes((TEXT, 126)) + length.to_bytes(2, "big")
    return bytes((TEXT, 127)) + length.to_bytes(8, "big")
