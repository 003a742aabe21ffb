"""A flood of silent connections for the tests: from several loopback addresses in turn, at a steady rate, each
held open without a byte sent (as an attacker who fills a server's connection budget does), from a thread of
its own so that the test's event loop stays free to measure."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections import deque
from collections.abc import Iterator


class Flood:
    """Opens ``rate`` connections a second to ``port`` on 127.0.0.1, from ``sources`` in turn, and closes each
    after ``hold`` seconds (the server may close it sooner: its head deadline)."""

    def __init__(self, port: int, sources: list[str], rate: float = 100, hold: float = 5) -> None:
        self.port = port
        self.sources = sources
        self.rate = rate
        self.hold = hold
        #: Connections tried, and those that failed (no descriptor, a full backlog).
        self.opened = 0
        self.failed = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="flood", daemon=True)

    def _run(self) -> None:
        held: deque[tuple[float, socket.socket]] = deque()
        start = time.monotonic()
        try:
            while not self._stop.is_set():
                now = time.monotonic()
                while held and now - held[0][0] > self.hold:
                    held.popleft()[1].close()
                due = int((now - start) * self.rate) - self.opened
                for _ in range(max(0, due)):
                    self.opened += 1
                    try:
                        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                    except OSError:  # this process's descriptors are used up: the next round, after closes
                        self.failed += 1
                        break
                    sock.settimeout(1)
                    try:
                        sock.bind((self.sources[self.opened % len(self.sources)], 0))
                        sock.connect(("127.0.0.1", self.port))
                    except OSError:  # a full backlog: the flood goes on with the next
                        self.failed += 1
                        sock.close()
                    else:
                        held.append((now, sock))
                self._stop.wait(0.01)
        finally:
            for _, sock in held:
                sock.close()

    @contextlib.contextmanager
    def running(self) -> Iterator[Flood]:
        self._thread.start()
        try:
            yield self
        finally:
            self._stop.set()
            self._thread.join(10)
