"""A stand-in for a frozen server node (SIGSTOP) in tests that need no cluster: a TCP relay on 127.0.0.1.

A frozen process still has its listening socket: the kernel accepts new connections and takes their bytes,
but nothing ever answers, so a WebSocket handshake to it hangs. :class:`Relay` forwards every connection to
a real server until :meth:`Relay.freeze`; from then on the connections it relays go silent both ways (the
node stops answering its open sockets) and every new connection is accepted, read and never answered.
:meth:`Relay.thaw` relays new connections again, as a proxy does once it sends them to another node, but
what the freeze held stays held: a client gets back only by giving its hanging handshake up and trying
again. Without a target (``Relay(None)``) it is frozen from the start. :meth:`Relay.hold` holds only the next
few connections (a client's reconnect that a proxy sends to a node frozen meanwhile), relaying the others.

:func:`relay_in_thread` runs one in a thread of its own (for the synchronous Playwright tests).
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Iterator
from dataclasses import dataclass


@dataclass
class _Pair:
    """One relayed connection: silent once frozen (what it reads is dropped, as a stopped process reads
    nothing and answers nothing)."""

    writers: tuple[asyncio.StreamWriter, asyncio.StreamWriter]
    silent: bool = False


class Relay:
    """See the module's doc. ``port`` once started; ``held``: how many connections a freeze left unanswered."""

    def __init__(self, target: tuple[str, int] | None) -> None:
        self.target = target
        self.frozen = target is None
        self.held = 0
        self.relayed = 0
        self._hold_next = 0
        self.port = 0
        self._server: asyncio.Server | None = None
        self._pairs: list[_Pair] = []
        self._writers: set[asyncio.StreamWriter] = set()
        self._tasks: set[asyncio.Task[None]] = set()

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]

    def freeze(self) -> None:
        """Every relayed connection goes silent; new ones are held unanswered."""
        self.frozen = True
        for pair in self._pairs:
            pair.silent = True

    def hold(self, count: int = 1) -> None:
        """The next ``count`` new connections are held unanswered, without freezing anything else."""
        self._hold_next += count

    def thaw(self) -> None:
        """New connections are relayed again; the ones held or silenced stay so."""
        if self.target is None:
            raise ValueError("a relay without a target cannot thaw")
        self.frozen = False

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
        # Closing every socket ends each connection's handler (its reads end): cancelling a handler instead
        # makes asyncio's streams log an error.
        for writer in self._writers:
            writer.close()
        if self._tasks:
            await asyncio.wait(self._tasks, timeout=10)
        if self._server is not None:
            await self._server.wait_closed()

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        self._writers.add(writer)
        try:
            target = None if self.frozen else self.target
            if target is not None and self._hold_next > 0:
                self._hold_next -= 1
                target = None
            if target is None:
                self.held += 1
                while await reader.read(65536):
                    pass  # taken by the kernel, never answered
                return
            up_reader, up_writer = await asyncio.open_connection(*target)
            self._writers.add(up_writer)
            self.relayed += 1
            pair = _Pair((writer, up_writer))
            self._pairs.append(pair)
            await asyncio.gather(
                self._pump(reader, up_writer, pair), self._pump(up_reader, writer, pair), return_exceptions=True
            )
        except (OSError, asyncio.IncompleteReadError):
            pass
        finally:
            self._tasks.discard(task)
            writer.close()

    @staticmethod
    async def _pump(source: asyncio.StreamReader, sink: asyncio.StreamWriter, pair: _Pair) -> None:
        try:
            while data := await source.read(65536):
                if not pair.silent:
                    sink.write(data)
                    await sink.drain()
        finally:
            if not pair.silent:
                sink.close()


class ThreadedRelay:
    """A :class:`Relay` whose event loop runs in another thread: ``freeze``, ``thaw`` and the counts from this one."""

    def __init__(self, relay: Relay, loop: asyncio.AbstractEventLoop) -> None:
        self.relay = relay
        self.loop = loop

    @property
    def port(self) -> int:
        return self.relay.port

    @property
    def held(self) -> int:
        return self.relay.held

    @property
    def relayed(self) -> int:
        return self.relay.relayed

    def freeze(self) -> None:
        self.loop.call_soon_threadsafe(self.relay.freeze)

    def hold(self, count: int = 1) -> None:
        self.loop.call_soon_threadsafe(self.relay.hold, count)

    def thaw(self) -> None:
        self.loop.call_soon_threadsafe(self.relay.thaw)


@contextlib.contextmanager
def relay_in_thread(target: tuple[str, int] | None) -> Iterator[ThreadedRelay]:
    """A started :class:`Relay` to ``target`` on an event loop in a thread of its own, closed at the end."""
    loop = asyncio.new_event_loop()
    relay = Relay(target)
    thread = threading.Thread(target=loop.run_forever, name="frozen-relay", daemon=True)
    thread.start()
    try:
        asyncio.run_coroutine_threadsafe(relay.start(), loop).result(10)
        yield ThreadedRelay(relay, loop)
    finally:
        with contextlib.suppress(Exception):
            asyncio.run_coroutine_threadsafe(relay.close(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        loop.close()
