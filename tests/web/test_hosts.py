"""Trusted hosts (issue 15): a request for a host the server does not answer to is refused with 400 before
any route or WebSocket, which defeats DNS rebinding; loopback always passes (health checks)."""

from __future__ import annotations

import asyncio
import base64
import os
import socket

import httpx
import pytest

from crisp_server.settings import Settings
from crisp_server.web.hosts import HostPolicy, split_host
from tests.web.harness import running_server

HOSTNAME = socket.gethostname().lower()


async def handshake_status(port: int, host: str, origin: str | None = None) -> int:
    """The HTTP status a WebSocket handshake on ``/ws`` gets with this ``Host`` (and ``Origin``)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    key = base64.b64encode(os.urandom(16)).decode()
    origin_line = f"Origin: {origin}\r\n" if origin else ""
    writer.write(
        (
            f"GET /ws HTTP/1.1\r\nHost: {host}\r\n{origin_line}Upgrade: websocket\r\nConnection: Upgrade\r\n"
            f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
        ).encode()
    )
    status_line = await asyncio.wait_for(reader.readline(), 5)
    writer.close()
    return int(status_line.split()[1])


async def http_status(port: int, host: str, path: str = "/healthz") -> int:
    async with httpx.AsyncClient() as client:
        return (await client.get(f"http://127.0.0.1:{port}{path}", headers={"Host": host})).status_code


async def test_a_dns_rebinding_page_gets_no_websocket_and_no_page() -> None:
    """The page at evil.example:PORT, its name resolving to this server, sends its own Host and Origin:
    the origin check alone accepted that handshake."""
    async with running_server() as server:
        evil = f"evil.example:{server.port}"
        assert await handshake_status(server.port, evil, f"http://{evil}") == 400
        assert await http_status(server.port, evil, "/") == 400
        assert await http_status(server.port, evil, "/api/rooms/ABCDEF") == 400
        # The server's own names still open sockets.
        for host in (f"127.0.0.1:{server.port}", f"localhost:{server.port}"):
            assert await handshake_status(server.port, host, f"http://{host}") == 101


async def test_with_a_public_url_only_its_host_the_allowed_ones_and_loopback_pass() -> None:
    allowed = ["crisp.lan:8000", "*.friends.example"]
    async with running_server(public_url="https://crisp.example.org", allowed_hosts=allowed) as server:
        for host in ("crisp.example.org", "Crisp.Example.Org:443", "crisp.lan:8000", "a.friends.example", "localhost"):
            assert await http_status(server.port, host) == 200, host
        # The Docker image's health check: /healthz on loopback, whatever the public URL.
        assert await http_status(server.port, f"127.0.0.1:{server.port}") == 200
        for host in ("evil.example", "crisp.lan:8001", "friends.example", "crisp.example.org.evil.example", HOSTNAME):
            assert await http_status(server.port, host) == 400, host
        origin = "https://crisp.example.org"
        assert await handshake_status(server.port, "evil.example", origin) == 400
        assert await handshake_status(server.port, "crisp.example.org", origin) == 101


async def test_without_a_public_url_the_machine_names_and_addresses_pass() -> None:
    async with running_server() as server:
        for host in (HOSTNAME, f"{HOSTNAME.split('.')[0]}.local:{server.port}", "192.168.1.20:8000", "[::1]:8000"):
            assert await http_status(server.port, host) == 200, host
        assert await http_status(server.port, "crisp.example.org") == 400


async def test_a_star_allows_every_host() -> None:
    async with running_server(allowed_hosts=["*"]) as server:
        assert await http_status(server.port, "anything.example") == 200


@pytest.mark.parametrize(
    ("host", "expected"),
    [
        ("Example.ORG", ("example.org", None)),
        ("example.org.:8000", ("example.org", 8000)),
        ("[::1]:8000", ("::1", 8000)),
        ("[::1]", ("::1", None)),
        ("::1", ("::1", None)),
        ("10.0.0.5:80", ("10.0.0.5", 80)),
        ("host:port", ("host:port", None)),
    ],
)
def test_host_values_are_split_into_name_and_port(host: str, expected: tuple[str, int | None]) -> None:
    assert split_host(host) == expected


def test_allow_list_entries() -> None:
    policy = HostPolicy.from_settings("https://crisp.example.org", ["*.lan.example", "box:8000", "[fd00::5]:8000"])
    assert policy.allows("a.lan.example")
    assert policy.allows("b.a.lan.example:9000")
    assert not policy.allows("lan.example")
    assert not policy.allows("evil-lan.example")
    assert policy.allows("box:8000")
    assert not policy.allows("box")
    assert not policy.allows("box:8001")
    assert policy.allows("[fd00::5]:8000")
    assert not policy.allows("[fd00::6]:8000")
    assert policy.allows("127.0.0.2")
    assert policy.allows("app.localhost:8000")
    assert not policy.allows("localhost.evil.example")


def test_allowed_hosts_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CRISP_ALLOWED_HOSTS", "crisp.lan, *.example.org,")
    assert Settings().allowed_hosts == ["crisp.lan", "*.example.org"]
