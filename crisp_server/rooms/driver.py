"""What drives a seat: the ``SeatDriver`` protocol a room sends its updates to, and the close codes it uses."""

from __future__ import annotations

from typing import Any, Final, Protocol

#: WebSocket close codes the room uses.
CLOSE_KICKED: Final = 4003
CLOSE_REPLACED: Final = 4001
CLOSE_LEFT: Final = 1000
CLOSE_RESTART: Final = 1012
#: After ``moved``: the room now lives on another node of the cluster; reconnect at once (``?room=CODE``).
CLOSE_MOVED: Final = 4005


class RoomHandle(Protocol):
    """What a driver knows of the room that admitted it: its code and version, and :meth:`post`, the only way
    in (``Room`` is one; a driver never reaches further into it)."""

    @property
    def code(self) -> str: ...

    @property
    def v(self) -> int: ...

    def post(self, message: Any, /) -> None:
        """Hand the room a ``RoomMessage`` (``messages.py``): handled at once, or right after the current one."""
        ...


class SeatDriver(Protocol):
    """Whatever drives a seat, or watches the table from none: something that receives the room's updates
    and posts messages to it. Today a WebSocket connection (``crisp_server.web.connection.Connection``);
    a computer player or a remote node later, without touching the room.

    The room calls ``send`` with each message for this member, encoded once as JSON text (the same bytes a
    client gets: ``docs/protocol.md``), and ``close`` when it sends the member away; it sets ``room``
    when it admits the driver and clears it when the driver leaves. The driver posts what it does as
    ``room.post(Inbound(driver, message))``, ``message`` a parsed inbound model (``protocol.parse_inbound``),
    and ``room.post(Detach(driver))`` when it goes; ``lang`` is the language of the texts it is sent;
    ``origin`` the address its page was opened at (``CRISP_PUBLIC_URL`` if set, else ``scheme://host``), which
    a room's link is made of, ``None`` for a computer player."""

    lang: str
    room: RoomHandle | None
    origin: str | None

    def send(self, data: bytes) -> None:
        """Queue a text frame; never blocks (a connection that falls too far behind is dropped)."""
        ...

    def close(self, code: int, reason: str = "") -> None:
        """Close after the frames already queued."""
        ...
