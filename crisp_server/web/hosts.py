"""Trusted hosts: requests whose ``Host`` the server does not answer to are refused before any routing, HTTP
and WebSocket alike. This defeats DNS rebinding: a page at ``http://evil.example:8000`` whose name is made
to resolve to a server on the visitor's home network sends ``Host: evil.example:8000`` (and that same
origin, so the WebSocket origin check alone would pass it).

Which hosts pass:

- always: loopback names and addresses (``localhost``, ``*.localhost``, ``127.0.0.0/8``, ``::1``): a
  health check on the machine, a browser on it; a rebound name never arrives as one of these;
- with ``CRISP_PUBLIC_URL``: its host, on any port;
- without it: the machine's host name (and ``<name>.local``, as mDNS offers it on a LAN) and any IP
  address. A page reached by an address has that address as its origin, so it cannot rebind; and a server
  in a container or behind NAT cannot know the address its players type;
- and whatever ``CRISP_ALLOWED_HOSTS`` lists: ``name``, ``name:port``, ``*.example.org`` (its
  subdomains), ``[::1]:8000``, or ``*`` for any host.

A request without a ``Host`` (not a browser: HTTP/1.0 probes) passes.
"""

from __future__ import annotations

import ipaddress
import logging
import socket
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Final
from urllib.parse import urlsplit

from starlette.types import ASGIApp, Receive, Scope, Send

log = logging.getLogger("crisp.web")

_REFUSAL: Final = (
    b"This server does not answer to that host name. Its operator can add it to CRISP_ALLOWED_HOSTS "
    b"(or set CRISP_PUBLIC_URL).\n"
)
#: Refused hosts are logged once each, up to this many (a scan could send endless names).
_LOGGED_LIMIT: Final = 100


def split_host(value: str) -> tuple[str, int | None]:
    """``Host`` header (or allow-list entry) -> (lower-case name without a final dot, port or None).
    IPv6 addresses come in brackets (``[::1]:8000``) and leave without them."""
    value = value.strip().lower()
    port: int | None = None
    if value.startswith("["):
        name, _, rest = value[1:].partition("]")
        if rest.startswith(":") and rest[1:].isdigit():
            port = int(rest[1:])
    else:
        name, sep, tail = value.rpartition(":")
        if sep and tail.isdigit() and ":" not in name:
            port = int(tail)
        else:
            name = value
    return name.rstrip("."), port


def _is_ip(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


def is_loopback(name: str) -> bool:
    if name == "localhost" or name.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def machine_names() -> set[str]:
    """This machine's host name as LAN peers may type it."""
    hostname = socket.gethostname().lower().rstrip(".")
    if not hostname:
        return set()
    short = hostname.split(".")[0]
    return {hostname, short, f"{short}.local"}


@dataclass
class HostPolicy:
    """Which ``Host`` values the server answers to (see the module's description)."""

    public_host: str | None
    #: (name, port or None for any); a name starting with ``*.`` stands for its subdomains.
    allowed: list[tuple[str, int | None]]
    any_host: bool = False
    names: set[str] = field(default_factory=set)  # the machine's, when no public URL names the server

    @classmethod
    def from_settings(cls, public_url: str | None, allowed_hosts: Iterable[str]) -> HostPolicy:
        entries = [entry.strip() for entry in allowed_hosts if entry.strip()]
        public_host = (urlsplit(public_url).hostname or "").rstrip(".") or None if public_url else None
        return cls(
            public_host=public_host,
            allowed=[split_host(entry) for entry in entries if entry != "*"],
            any_host="*" in entries,
            names=set() if public_host else machine_names(),
        )

    def allows(self, host: str) -> bool:
        if self.any_host:
            return True
        name, port = split_host(host)
        if is_loopback(name):
            return True
        if self.public_host is not None:
            if name == self.public_host:
                return True
        elif name in self.names or _is_ip(name):
            return True
        return any(self._matches(name, port, entry) for entry in self.allowed)

    @staticmethod
    def _matches(name: str, port: int | None, entry: tuple[str, int | None]) -> bool:
        pattern, wanted_port = entry
        if wanted_port is not None and port != wanted_port:
            return False
        if pattern.startswith("*."):
            return name.endswith(pattern[1:]) and len(name) > len(pattern) - 1
        return name == pattern


class TrustedHosts:
    """ASGI middleware: refuses a request whose ``Host`` the policy does not allow, with HTTP 400 (for a
    WebSocket handshake too: no socket is opened)."""

    def __init__(self, app: ASGIApp, policy: HostPolicy) -> None:
        self.app = app
        self.policy = policy
        self._logged: set[str] = set()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        host = next((value for key, value in scope["headers"] if key == b"host"), None)
        if host is None or self.policy.allows(host.decode("latin-1")):
            await self.app(scope, receive, send)
            return
        self._log(host.decode("latin-1"))
        await self._refuse(scope, send)

    def _log(self, host: str) -> None:
        if host in self._logged or len(self._logged) >= _LOGGED_LIMIT:
            return
        self._logged.add(host)
        log.warning(
            "refused a request for an unknown host; list it in CRISP_ALLOWED_HOSTS if it is this server's",
            extra={"host": host[:100]},
        )

    @staticmethod
    async def _refuse(scope: Scope, send: Send) -> None:
        headers = [(b"content-type", b"text/plain; charset=utf-8"), (b"content-length", str(len(_REFUSAL)).encode())]
        if scope["type"] == "http":
            await send({"type": "http.response.start", "status": 400, "headers": headers})
            await send({"type": "http.response.body", "body": _REFUSAL})
        elif "websocket.http.response" in scope.get("extensions", {}):
            await send({"type": "websocket.http.response.start", "status": 400, "headers": headers})
            await send({"type": "websocket.http.response.body", "body": _REFUSAL})
        else:  # a server without the extension: the handshake is refused (403)
            await send({"type": "websocket.close", "code": 1008})
