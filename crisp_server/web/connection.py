"""One WebSocket as a room member: frames go out at once when the socket can take them, else through a
bounded queue drained by a relay task.

A room calls :meth:`Connection.send` from its own task and never waits. While nothing is queued, the
frame goes out on the spot: written straight to the socket when the server's protocol offers that
(:class:`crisp_server.web.wsprotocol.CrispWebSocket`), else handed to the ASGI ``send``, which with
uvicorn completes without suspending unless the socket's write buffer is full (flow control). If it does
suspend, the relay task takes over that frame and everything queued after it, in order (the task, its queue
and its event are made when first needed: most connections never wait, and each of those costs about 2 KB
that thousands of connections would hold for nothing; issue 19). A phone that
stops reading is dropped when its queue is full (it resumes with its token and a snapshot) instead of
slowing its table down: its socket closes at once, and is aborted if it does not finish closing soon.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import types
from collections import deque
from collections.abc import Awaitable, Callable, Coroutine, Generator
from typing import Any, Final

from crisp_server.rooms.driver import RoomHandle

log = logging.getLogger("crisp.web")

#: The peer reads too slowly: its queue overflowed (RFC 6455 "try again later").
CLOSE_TOO_SLOW: Final = 1013

Send = Callable[[dict[str, Any]], Awaitable[None]]
#: What the ASGI server raises when the peer is gone (uvicorn: ClientDisconnected, an OSError).
GONE = (OSError, RuntimeError)


@types.coroutine
def _resume(coro: Coroutine[Any, Any, None], yielded: Any) -> Generator[Any, Any, None]:
    """Go on with a coroutine that was started by hand and suspended on ``yielded``, inside a task."""
    while True:
        try:
            sent = yield yielded
        except BaseException as exc:  # cancellation included: pass it in
            try:
                yielded = coro.throw(exc)
            except StopIteration:
                return
        else:
            try:
                yielded = coro.send(sent)
            except StopIteration:
                return


class Connection:
    """Implements ``crisp_server.rooms.driver.SeatDriver`` over an ASGI WebSocket ``send``."""

    def __init__(self, send: Send, max_queue: int, client: str, on_send: Callable[[], None] | None = None) -> None:
        self._asgi_send = send
        # The server protocol's direct text path, if the ASGI send is a method of one that has it.
        protocol = getattr(send, "__self__", None)
        self._send_text_now: Callable[[bytes], bool] | None = getattr(protocol, "send_text_now", None)
        # And its way to close at once, though its buffer is full (the ASGI send would wait for it to drain).
        self._close_now: Callable[[int, str], None] | None = getattr(protocol, "close_now", None)
        self._on_send = on_send
        self.client = client
        self.lang = "en"
        #: The address the page was opened at (``Services.base_url``): the room's link is made of its host's.
        self.origin: str | None = None
        self.room: RoomHandle | None = None  # set by the room when it admits this connection
        self.target: RoomHandle | None = None  # the room this connection last addressed
        self._queue: deque[bytes | tuple[int, str]] | None = None  # made by the first frame that must wait
        self._max = max_queue
        self._stalled: tuple[Coroutine[Any, Any, None], Any] | None = None  # a send that suspended
        self._closing = False
        self._gone = False
        # The relay and what wakes it: started by the first send that has to wait, or by a close.
        self._wake: asyncio.Event | None = None
        self.relay_task: asyncio.Task[None] | None = None

    def _kick(self) -> None:
        """Wake the relay task, starting it if this is the first time it is needed."""
        wake = self._wake
        if wake is None:
            wake = self._wake = asyncio.Event()
            self.relay_task = asyncio.get_running_loop().create_task(self._relay())
        wake.set()

    def _waiting(self) -> deque[bytes | tuple[int, str]]:
        queue = self._queue
        if queue is None:
            queue = self._queue = deque()
        return queue

    @property
    def closing(self) -> bool:
        return self._closing

    def send(self, data: bytes) -> None:
        if self._closing or self._gone:
            return
        if not self._queue and self._stalled is None:
            self._send_now(data)
            return
        queue = self._waiting()
        if len(queue) >= self._max:
            log.info("dropping a connection that does not keep up (1013)", extra={"client": self.client})
            queue.clear()
            if self._close_now is not None:
                # Not behind the frame that waits for the full socket: the peer may never read again.
                self._closing = True
                self._close_now(CLOSE_TOO_SLOW, "too slow")
            else:
                self.close(CLOSE_TOO_SLOW, "too slow")
            return
        queue.append(data)
        self._kick()

    def _send_now(self, data: bytes) -> None:
        """Write the frame straight to the socket if the protocol can; else run the ASGI send by hand, and
        if that has to wait for the socket, the relay task finishes it."""
        if self._send_text_now is not None and self._send_text_now(data):
            if self._on_send is not None:
                self._on_send()
            return
        coro = self._frame(data)
        try:
            yielded = coro.send(None)
        except StopIteration:
            return
        self._stalled = (coro, yielded)
        self._kick()

    async def _frame(self, data: bytes) -> None:
        try:
            await self._asgi_send({"type": "websocket.send", "text": data.decode()})
        except GONE:
            self._gone = True  # the receive loop notices and detaches
            return
        if self._on_send is not None:
            self._on_send()

    def close(self, code: int, reason: str = "") -> None:
        if self._closing:
            return
        self._closing = True
        self._waiting().append((code, reason))
        self._kick()

    async def _relay(self) -> None:
        wake = self._wake
        assert wake is not None
        while not self._gone:
            await wake.wait()
            wake.clear()
            if self._stalled is not None:
                await _resume(*self._stalled)
                self._stalled = None
            queue = self._waiting()
            while queue and not self._gone:
                item = queue.popleft()
                if isinstance(item, tuple):
                    with contextlib.suppress(*GONE):
                        await self._asgi_send({"type": "websocket.close", "code": item[0], "reason": item[1]})
                    return
                await self._frame(item)

    async def finish(self, timeout: float = 2.0) -> None:
        """Close (1000) unless closing already, wait briefly for the queued frames and the close to go out,
        then stop the relay."""
        if not self._gone:
            self.close(1000)  # (nothing if closing already)
        task = self.relay_task
        if task is None:
            return
        if not task.done():
            await asyncio.wait({task}, timeout=timeout)  # (neither its end nor the time up raises here)
        if not task.done():
            task.cancel()
        elif not task.cancelled() and (error := task.exception()) is not None:
            raise error  # a fault of the relay's own, told where the connection ends
