"""The plain opening handshake of a WebSocket, checked and answered from the headers uvicorn's HTTP parser read.

A plain opening handshake is answered by the server itself (``httpprotocol.py``'s
:meth:`CrispHttp.handle_websocket_upgrade` with this module's checks, then ``wsprotocol.py``'s
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

import base64
import binascii
import re
from collections.abc import Iterable
from typing import Final

from websockets.http11 import MAX_LINE_LENGTH, MAX_NUM_HEADERS

#: The start of a ``101`` answer, up to the value of its ``Sec-WebSocket-Accept`` (RFC 6455, section 4.2.2).
_SWITCHING: Final = (
    b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: "
)

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


def switching_protocols(accept: bytes, headers: Iterable[tuple[bytes, bytes]], subprotocol: str | None) -> bytes:
    """The ``101`` answer to a checked handshake: its ``Sec-WebSocket-Accept`` ``accept``, then ``headers`` and
    the ``subprotocol`` chosen, if any."""
    out = [_SWITCHING, accept, b"\r\n"]
    for name, value in headers:
        out += [name, b": ", value, b"\r\n"]
    if subprotocol:
        out += [b"Sec-WebSocket-Protocol: ", subprotocol.encode(), b"\r\n"]
    out.append(b"\r\n")
    return b"".join(out)
