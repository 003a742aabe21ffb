"""A Python client of the Crisp protocol (``docs/protocol.md``), for tests, bots and the load test.

    async with CrispClient.connect("ws://127.0.0.1:8000/ws") as ana:
        await ana.create("Ana")
        ...
        await ana.draw()

    async with CrispClient.connect("ws://127.0.0.1:8000/ws", room="K7QMXT") as ben:  # /ws?room=K7QMXT
        await ben.join("K7QMXT", "Ben")

The client keeps the latest state it was sent (``state``), every message in order (``messages``), the
errors (``errors``), and notices gaps in the room version (it asks for a snapshot, as a client must).
The tests set ``CrispClient.inspect`` to check every frame a client receives against the protocol's JSON
Schema (``crisp_server.wire.schema``).

With several server nodes (``docs/protocol.md``, "Several servers") a socket names its room in its URL
(``room=``: :func:`room_url`) whenever the room is known, and a room that went to another node closes its
sockets with ``moved`` and 4005 (:attr:`CrispClient.moved`): reconnect at once to the same URL and resume.
A socket that has not opened within a few seconds is given up (:data:`OPEN_TIMEOUT_S`): a frozen node
accepts connections and never answers them; try again after a back-off.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from typing import Any, ClassVar, Final
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import orjson
from websockets.asyncio.client import ClientConnection
from websockets.asyncio.client import connect as ws_connect
from websockets.exceptions import ConnectionClosed

#: ``receive`` drops the messages it has handed out from ``messages`` once there are this many.
_RECEIVED_KEPT = 256

#: The close after ``moved`` (or alone): the room now lives on another server node.
CLOSE_MOVED: Final = 4005
#: The close after ``restarting`` (or alone): the server is stopping.
CLOSE_RESTARTING: Final = 1012
#: :meth:`CrispClient.connect` gives a socket up (``TimeoutError``) when it has not opened within this many
#: seconds: connected and its handshake answered. A frozen server node still accepts connections (its kernel
#: does) but never answers them; a client that gives up and tries again reaches another node once the proxy
#: has taken the frozen one out, where waiting would hang until the proxy's own timeout.
OPEN_TIMEOUT_S: Final = 5.0


def room_url(url: str, room: str) -> str:
    """``url`` with the room code as its ``room`` query parameter (``/ws?room=K7QMXT``), which a proxy in front
    of several server nodes routes on: the code as the server reads it (upper case, no surrounding blanks),
    in place of any ``room`` the URL had, after the other parameters, which are kept."""
    parts = urlsplit(url)
    query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k != "room"]
    query.append(("room", room.strip().upper()))
    return urlunsplit(parts._replace(query=urlencode(query)))


class ProtocolError(Exception):
    """The server answered a request with an error message."""

    def __init__(self, message: dict[str, Any]) -> None:
        super().__init__(f"{message.get('code')}: {message.get('message')}")
        self.code: str = message.get("code", "")
        self.message = message


class CrispClient:
    #: Called with every frame received, before it is decoded (the tests validate it; see the module's doc).
    inspect: ClassVar[Callable[[str | bytes], None] | None] = None

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self.messages: list[dict[str, Any]] = []
        self.errors: list[dict[str, Any]] = []
        self.state: dict[str, Any] | None = None  # the last update or snapshot
        self.welcome: dict[str, Any] | None = None
        self.token: str | None = None
        self.room: str | None = None
        self.v = 0
        self.gaps = 0
        self.closed: ConnectionClosed | None = None
        self.told_moved = False  # a ``moved`` came: the close that follows is the room's move
        self._changed = asyncio.Condition()
        self._received = 0  # how many of ``messages`` ``receive`` has handed out
        self._reader = asyncio.get_running_loop().create_task(self._read())

    @classmethod
    @contextlib.asynccontextmanager
    async def connect(
        cls,
        url: str,
        origin: str | None = None,
        *,
        room: str | None = None,
        open_timeout: float | None = OPEN_TIMEOUT_S,
        **kwargs: Any,
    ) -> AsyncIterator[CrispClient]:
        """A client on a new socket to ``url``; with ``room``, at ``room_url(url, room)``. ``TimeoutError`` if
        the socket has not opened within ``open_timeout`` seconds (:data:`OPEN_TIMEOUT_S`; ``None``: no limit).
        ``kwargs`` go to ``websockets``' ``connect``."""
        headers = {"Origin": origin} if origin else None
        if room is not None:
            url = room_url(url, room)
        async with ws_connect(
            url, additional_headers=headers, max_size=2**22, open_timeout=open_timeout, **kwargs
        ) as ws:
            client = cls(ws)
            try:
                yield client
            finally:
                client._reader.cancel()

    # -- reading ---------------------------------------------------------------------------------------

    async def _read(self) -> None:
        try:
            async for frame in self.ws:
                if CrispClient.inspect is not None:
                    CrispClient.inspect(frame)
                message = orjson.loads(frame)
                await self._take(message)
        except ConnectionClosed as exc:
            self.closed = exc
        else:
            # A normal close (1000, 1001) ends the iteration without an exception.
            self.closed = self.ws.close_exc
        async with self._changed:
            self._changed.notify_all()

    async def _take(self, message: dict[str, Any]) -> None:
        kind = message.get("type")
        v = message.get("v")
        if kind == "update" and isinstance(v, int):
            if self.v and v != self.v + 1:
                self.gaps += 1
                await self.send({"type": "sync"})
            self.v = max(self.v, v)
            self.state = message
        elif kind == "snapshot" and isinstance(v, int):
            self.v = max(self.v, v)
            self.state = message
        elif kind == "welcome":
            self.welcome = message
            self.room = message.get("room")
            self.v = message.get("v", 0)
            if message.get("token"):
                self.token = message["token"]
        elif kind == "error":
            self.errors.append(message)
        elif kind == "moved":
            self.told_moved = True
        self.messages.append(message)
        async with self._changed:
            self._changed.notify_all()

    async def wait_for(
        self, predicate: Callable[[CrispClient], bool], timeout: float = 5.0, what: str = "a condition"
    ) -> None:
        """Wait until ``predicate(self)`` holds (checked after every message)."""
        # asyncio.timeout, not wait_for: on Python 3.11 wait_for drops a cancellation that comes as its
        # condition comes true, and the cancelled task goes on (tests/test_client.py).
        try:
            async with asyncio.timeout(timeout), self._changed:
                while not predicate(self):
                    if self.closed is not None:
                        raise ConnectionError(f"connection closed while waiting for {what}: {self.closed}")
                    await self._changed.wait()
        except TimeoutError:
            raise TimeoutError(f"timed out waiting for {what}") from None

    async def receive(self, timeout: float | None = None) -> dict[str, Any] | None:
        """The oldest message ``receive`` has not handed out yet, in order from the first; ``None`` if none
        comes within ``timeout`` seconds (``None``: wait as long as it takes). Raises ``ConnectionError``
        once the connection is closed and every message has been handed out.

        For a client that handles every message in turn (a bot over the wire), and reads only this way once
        it is in a room: so that a long session does not keep every message, what has been handed out is
        dropped from ``messages`` every few hundred messages."""

        try:
            async with asyncio.timeout(timeout), self._changed:  # (not wait_for: see ``wait_for``)
                await self._changed.wait_for(lambda: len(self.messages) > self._received or self.closed is not None)
        except TimeoutError:
            return None
        if len(self.messages) <= self._received:
            raise ConnectionError(f"connection closed: {self.closed}")
        message = self.messages[self._received]
        self._received += 1
        if self._received >= _RECEIVED_KEPT:
            del self.messages[: self._received]
            self._received = 0
        return message

    async def next_message(self, kind: str, timeout: float = 5.0) -> dict[str, Any]:
        """The next message of type ``kind`` that arrives from now on."""
        start = len(self.messages)
        await self.wait_for(lambda c: any(m.get("type") == kind for m in c.messages[start:]), timeout, kind)
        return next(m for m in self.messages[start:] if m.get("type") == kind)

    # -- the connection --------------------------------------------------------------------------------

    @property
    def close_code(self) -> int | None:
        """The code of the close the server sent, once the connection is closed (``None`` before, or when
        it dropped without one)."""
        received = self.closed.rcvd if self.closed is not None else None
        return received.code if received is not None else None

    @property
    def moved(self) -> bool:
        """The room went to another server node (``moved``, or the close 4005 alone): reconnect at once with
        the room in the URL and resume (or watch again), as after a restart but without waiting."""
        return self.told_moved or self.close_code == CLOSE_MOVED

    # -- the state -------------------------------------------------------------------------------------

    @property
    def seat(self) -> int | None:
        """The seat as the room last said: a rematch that drops players who left moves the seats after them."""
        if self.state is not None:
            seat: int | None = self.state["you"]["seat"]
            return seat
        return self.welcome.get("seat") if self.welcome else None

    @property
    def phase(self) -> str | None:
        return self.state["room"]["phase"] if self.state else None

    @property
    def table(self) -> dict[str, Any] | None:
        return self.state["table"] if self.state else None

    @property
    def you(self) -> dict[str, Any]:
        return self.state["you"] if self.state else {}

    def my_turn(self) -> bool:
        table = self.table
        rnd = table.get("round") if table else None
        return bool(self.phase == "play" and rnd and rnd.get("turn") == self.seat)

    # -- requests --------------------------------------------------------------------------------------

    async def send(self, message: dict[str, Any]) -> None:
        await self.ws.send(orjson.dumps(message).decode())

    async def request(self, message: dict[str, Any], timeout: float = 5.0) -> dict[str, Any]:
        """Send and wait for the answer: the next update, snapshot or welcome, or raise the error.

        The next update is not always the answer: a change published just before the request was handled
        (another player's move, a timer) comes first, and a refusal after it is then only in ``errors``.
        Where that matters, wait until the connection has caught up first (``ping`` is answered in order).
        """
        start = len(self.messages)
        await self.send(message)
        answers = ("update", "snapshot", "welcome", "error", "pong", "left")
        await self.wait_for(
            lambda c: any(m.get("type") in answers for m in c.messages[start:]), timeout, f"an answer to {message}"
        )
        answer = next(m for m in self.messages[start:] if m.get("type") in answers)
        if answer["type"] == "error":
            raise ProtocolError(answer)
        return answer

    async def _enter(self, message: dict[str, Any], timeout: float = 5.0) -> dict[str, Any]:
        start = len(self.messages)
        await self.send(message)
        await self.wait_for(
            lambda c: any(m.get("type") in ("welcome", "error") for m in c.messages[start:]), timeout, "welcome"
        )
        answer = next(m for m in self.messages[start:] if m.get("type") in ("welcome", "error"))
        if answer["type"] == "error":
            raise ProtocolError(answer)
        await self.wait_for(lambda c: c.state is not None and c.state["room"]["code"] == c.room, timeout, "state")
        return answer

    async def create(self, name: str, lang: str = "en", *, bots: int = 0, level: str = "normal") -> str:
        """Make a room; with ``bots``, a practice room with that many computer players, started at once."""
        message: dict[str, Any] = {"type": "create", "name": name, "lang": lang}
        if bots:
            message.update(bots=bots, level=level)
        await self._enter(message)
        assert self.room is not None
        return self.room

    async def join(self, room: str, name: str, lang: str = "en") -> dict[str, Any]:
        return await self._enter({"type": "join", "room": room, "name": name, "lang": lang})

    async def resume(self, room: str, token: str, lang: str = "en") -> dict[str, Any]:
        return await self._enter({"type": "resume", "room": room, "token": token, "lang": lang})

    async def watch(self, room: str) -> dict[str, Any]:
        return await self._enter({"type": "watch", "room": room})

    async def sit(self, name: str, timeout: float = 5.0) -> dict[str, Any]:
        """Take a free seat in the lobby as the spectator this connection is; the welcome (seat, token), once
        the update that shows the seat has come too. Raises ``ProtocolError`` if refused."""
        start = len(self.messages)
        await self.send({"type": "sit", "name": name})
        await self.wait_for(
            lambda c: any(m.get("type") in ("welcome", "error") for m in c.messages[start:]), timeout, "welcome"
        )
        answer = next(m for m in self.messages[start:] if m.get("type") in ("welcome", "error"))
        if answer["type"] == "error":
            raise ProtocolError(answer)
        await self.wait_for(lambda c: c.you.get("seat") == answer["seat"], timeout, "the seat in the state")
        return answer

    async def set_options(
        self,
        score_limit: int = 100,
        turn_seconds: int | None = None,
        discard_draw: bool = False,
        **more: int | None,
    ) -> None:
        """The host's options; ``more``: the room's other options (``stand_in``, ``big_screen``), left as they
        are if absent."""
        await self.request(
            {
                "type": "options",
                "score_limit": score_limit,
                "turn_seconds": turn_seconds,
                "discard_draw": discard_draw,
                **more,
            }
        )

    async def start(self) -> None:
        await self.request({"type": "start"})

    async def ready(self) -> None:
        await self.request({"type": "ready"})

    async def draw(self, source: str = "deck") -> dict[str, Any]:
        return await self.request({"type": "draw", "from": source})

    async def swap(self, slot: str) -> dict[str, Any]:
        return await self.request({"type": "swap", "slot": slot})

    async def discard(self) -> dict[str, Any]:
        return await self.request({"type": "discard"})

    def plain_play(self) -> dict[str, Any]:
        """The plainest legal play of the card in hand, as a message: discard it; a King drawn from the draw
        pile, which must be used, is used; a card taken from the discard pile, which must go into the hand,
        replaces the left card."""
        can = self.you.get("can", ())
        if "discard" in can:
            return {"type": "discard"}
        if "king" in can:
            return {"type": "king"}
        return {"type": "swap", "slot": "left"}

    async def play_drawn(self) -> dict[str, Any]:
        """Play the card in hand the plainest legal way (``plain_play``) and wait for the answer."""
        return await self.request(self.plain_play())

    async def jack(self) -> dict[str, Any]:
        return await self.request({"type": "jack"})

    async def queen(self, slot: str, target: int, target_slot: str) -> dict[str, Any]:
        return await self.request({"type": "queen", "slot": slot, "target": target, "target_slot": target_slot})

    async def king(self) -> dict[str, Any]:
        return await self.request({"type": "king"})

    async def crisp(self) -> dict[str, Any]:
        return await self.request({"type": "crisp"})

    async def react(self, emoji: str) -> dict[str, Any]:
        return await self.request({"type": "react", "emoji": emoji})

    async def sync(self) -> dict[str, Any]:
        return await self.request({"type": "sync"})

    async def close(self) -> None:
        await self.ws.close()
