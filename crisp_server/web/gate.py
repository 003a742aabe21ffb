"""Which TCP connections the server takes: a cap on the connections open from one client address, and a budget
of connections sized from the process's descriptor limit, so that a few clients cannot use up the descriptors
that the database, its WAL checkpoint and everybody else's connections need.

Every accepted connection is one descriptor. At start the server raises its soft ``RLIMIT_NOFILE`` to the
hard one, counts the descriptors it holds already, and keeps ``CRISP_RESERVED_DESCRIPTORS`` of what is left
for everything that is not a client connection (the database's files and sockets, the checkpointer's pipes,
logs); the rest is the connection budget. A connection accepted beyond the budget is answered 503 and closed
at once; one beyond ``CRISP_CONNECTIONS_PER_ADDRESS`` from its address is answered 429 and closed. The cap per
address is at most a quarter of the budget, so that one address can never take the whole budget on a machine
with a low limit. Behind a reverse proxy whose forwarded headers are trusted (``CRISP_PROXY_HEADERS``) the
address is the forwarded one, known once a request's head is read: the proxy's own connections count toward
the budget only; an address it does not trust cannot have its ``X-Forwarded-For`` believed.

Health checks and metrics scrapes are answered even when the budget is spent: a connection from a monitor's
address (``CRISP_MONITOR_IPS``, and the trusted proxies, whose health checks come from their own address)
takes a place of the health reserve, a few descriptors of the reserved ones, and is answered if it asks
for ``/healthz`` or ``/metrics`` (503 for anything else), then closed. The reserve is small and per
connection, so that not even a flood of health checks can use up the process's descriptors; and a flood
from other addresses never reaches it.
"""

from __future__ import annotations

import logging
import os
import resource
import time
from dataclasses import dataclass
from typing import Final

from uvicorn.middleware.proxy_headers import _TrustedHosts

log = logging.getLogger("crisp.web")

#: A hard limit of "unlimited" is raised to no more than this: the kernel's usual ``nr_open``.
_MOST_DESCRIPTORS: Final = 1 << 20
#: Refusals of one kind are logged at most once per this many seconds (an attack would fill the logs).
_LOG_EVERY_SECONDS: Final = 10.0
#: The health reserve: connections from monitors taken beyond the budget (at most a quarter of the reserved
#: descriptors, which are at least 16).
HEALTH_CONNECTIONS: Final = 8
#: The paths answered on a connection of the health reserve (GET or HEAD).
MONITORED_PATHS: Final = frozenset((b"/healthz", b"/metrics"))


def raise_descriptor_limit() -> tuple[int, int]:
    """Raise the soft ``RLIMIT_NOFILE`` to the hard limit (a process may do that by itself); the limits
    before, as (soft, hard). Nothing here uses ``select``, which would break above 1024 descriptors."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = _MOST_DESCRIPTORS if hard == resource.RLIM_INFINITY else hard
    if soft != resource.RLIM_INFINITY and soft < target:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        except (ValueError, OSError):  # a sandbox that refuses: keep the soft limit, sized from below
            log.warning("could not raise the descriptor limit from %d to %d", soft, target)
    return soft, hard


def descriptor_limit() -> int:
    """The soft ``RLIMIT_NOFILE`` now (an unlimited one counts as ``_MOST_DESCRIPTORS``)."""
    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    return _MOST_DESCRIPTORS if soft == resource.RLIM_INFINITY else soft


def descriptors_open() -> int:
    """How many descriptors this process holds (Linux ``/proc``, else ``/dev/fd``; 0 if neither lists them)."""
    for folder in ("/proc/self/fd", "/dev/fd"):
        try:
            return max(0, len(os.listdir(folder)) - 1)  # less the listing's own
        except OSError:
            continue
    return 0


@dataclass(eq=False)
class Ticket:
    """One accepted connection's place in the gate: it counts toward the budget while ``open``, and toward its
    address's cap while ``address`` is set. It moves from the HTTP protocol to the WebSocket one at an upgrade."""

    open: bool = True
    address: str | None = None
    #: A place of the health reserve (beyond the budget): only ``/healthz`` and ``/metrics`` are answered.
    reserve: bool = False


class Gate:
    """Counts the open connections, in all and per client address, and says which ones are refused."""

    def __init__(
        self,
        per_address: int,
        reserved: int,
        *,
        limit: int | None = None,
        in_use: int | None = None,
        proxy_headers: bool = False,
        forwarded_allow_ips: str = "127.0.0.1",
        monitor_ips: str = "127.0.0.1,::1",
    ) -> None:
        self.limit = descriptor_limit() if limit is None else limit
        self.in_use = descriptors_open() if in_use is None else in_use
        self.reserved = reserved
        #: How many connections may be open at once (each is a descriptor).
        self.budget = max(1, self.limit - self.in_use - reserved)
        #: The cap per client address (0: none), at most a quarter of the budget.
        self.per_address = min(per_address, max(1, self.budget // 4)) if per_address > 0 else 0
        self.open = 0
        #: Refused connections that read on until their clients have read the answer (each a descriptor).
        self.lingering = 0
        self.by_address: dict[str, int] = {}
        self._trusted = _TrustedHosts(forwarded_allow_ips) if proxy_headers else None
        #: The health reserve: how many connections from monitors it takes beyond the budget, and how many it holds.
        self.health = min(HEALTH_CONNECTIONS, max(1, reserved // 4))
        self.health_open = 0
        self._monitors = _TrustedHosts(monitor_ips)
        self._logged_at: dict[str, float] = {}
        self._unlogged: dict[str, int] = {}

    def describe(self) -> str:
        cap = str(self.per_address) if self.per_address else "no cap"
        return (
            f"descriptors: limit {self.limit}, {self.in_use} in use at start, {self.reserved} reserved for the "
            f"database and files; up to {self.budget} connections, {cap} per client address, and "
            f"{self.health} more for health checks and metrics"
        )

    def forwards(self, peer: str | None) -> bool:
        """Whether ``peer`` is a proxy whose forwarded address stands for the client (counted per request)."""
        return self._trusted is not None and peer in self._trusted

    def forwarded_address(self, peer: str | None, forwarded_for: str | None) -> str | None:
        """The client's address as the proxy ``peer`` forwards it, as uvicorn reads it; ``None`` without one."""
        if self._trusted is None or forwarded_for is None or peer not in self._trusted:
            return None
        host, _ = self._trusted.get_trusted_client_address(forwarded_for)
        return host or None

    def monitors(self, peer: str | None) -> bool:
        """Whether ``peer`` is a health checker's or a metrics scraper's address (``CRISP_MONITOR_IPS``, or a
        trusted proxy): its connections may take the health reserve when the budget is spent."""
        return peer is not None and (peer in self._monitors or self.forwards(peer))

    def may_linger(self) -> bool:
        """Whether a refused connection may read on for a moment so that its client reads the answer: not
        when many do already (an address that opens connections as fast as it can would hold that many)."""
        return self.lingering < max(16, self.budget // 16)

    def enter(self, peer: str | None = None) -> Ticket | None:
        """A connection from ``peer`` was accepted: its ticket; when the budget is spent, one of the health
        reserve for a monitor's address while a place is free; else ``None`` (the caller refuses it; it counts
        nothing)."""
        if self.open < self.budget:
            self.open += 1
            return Ticket()
        if self.health_open < self.health and self.monitors(peer):
            self.health_open += 1
            return Ticket(reserve=True)
        self.note("budget", None)
        return None

    def admit(self, ticket: Ticket, address: str) -> bool:
        """Count ``ticket`` toward ``address``'s cap; ``False`` (nothing counted) if the address is at its cap."""
        if ticket.address is not None:
            if ticket.address == address:
                return True
            self.release(ticket)
        held = self.by_address.get(address, 0)
        if self.per_address and held >= self.per_address:
            self.note("per_address", address)
            return False
        self.by_address[address] = held + 1
        ticket.address = address
        return True

    def release(self, ticket: Ticket) -> None:
        """The ticket no longer counts toward its address (its request was answered; it closed)."""
        address = ticket.address
        if address is None:
            return
        ticket.address = None
        held = self.by_address.get(address, 0) - 1
        if held > 0:
            self.by_address[address] = held
        else:
            self.by_address.pop(address, None)

    def leave(self, ticket: Ticket) -> None:
        """The connection closed (called once or more: only the first counts)."""
        self.release(ticket)
        if ticket.open:
            ticket.open = False
            if ticket.reserve:
                self.health_open -= 1
            else:
                self.open -= 1

    def note(self, reason: str, address: str | None) -> None:
        """Log a refusal, at most once per ``_LOG_EVERY_SECONDS`` per reason, with how many were not logged."""
        now = time.monotonic()
        if now - self._logged_at.get(reason, float("-inf")) < _LOG_EVERY_SECONDS:
            self._unlogged[reason] = self._unlogged.get(reason, 0) + 1
            return
        self._logged_at[reason] = now
        also = self._unlogged.pop(reason, 0)
        if reason == "head":
            log.info(
                "closed a connection whose request head did not arrive in time (408; %d more since the last such line)",
                also,
                extra={"client": address},
            )
        elif reason == "budget":
            log.warning(
                "refused a connection (503): %d connections are open, the budget left by the descriptor limit "
                "(%d more refused since the last such line)",
                self.open,
                also,
            )
        else:
            log.warning(
                "refused a connection (429): its address has %d open, the cap (%d more refused since the last "
                "such line)",
                self.per_address,
                also,
                extra={"client": address},
            )
