"""The installable app's server side: /sw.js and the shell it precaches (the asset table's hashed paths the
page loads, nothing of the API or the socket), the offline page, and the maskable icons of the manifest."""

from __future__ import annotations

import json
import re
import struct
import zlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from crisp_server.settings import Settings
from crisp_server.web.app import create_app
from crisp_server.web.assets import IMMUTABLE, StaticClient
from crisp_server.web.services import DEFAULT_STATIC

NETWORK_ONLY = ("/api/", "/ws", "/healthz", "/metrics")


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    app = create_app(Settings(static_dir=DEFAULT_STATIC), persist=False)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://localhost") as client:
        yield client


def shell_of(script: str) -> dict[str, Any]:
    """The ``const SHELL = {...};`` the server writes before the worker."""
    found = re.match(r"const SHELL = (\{.*?\});\n", script, re.S)
    assert found is not None, "sw.js does not start with its shell"
    shell: dict[str, Any] = json.loads(found.group(1))
    return shell


def loaded_by_page(page: str) -> set[str]:
    """The hashed paths the page names: its links and scripts, and its import map's modules."""
    named = set(re.findall(r'\b(?:src|href)="(/[^"]*)"', page))
    found = re.search(r'<script type="importmap">(.*?)</script>', page, re.S)
    assert found is not None
    return named | set(json.loads(found.group(1))["imports"].values())


async def test_the_worker_is_served_at_the_root_and_always_revalidated(http: httpx.AsyncClient) -> None:
    response = await http.get("/sw.js")
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/javascript; charset=utf-8"
    assert response.headers["cache-control"] == "no-cache"
    assert response.text.endswith((DEFAULT_STATIC / "sw.js").read_text())
    again = await http.get("/sw.js", headers={"If-None-Match": response.headers["etag"]})
    assert again.status_code == 304
    # Not a module of the page: no hashed copy, not in the import map.
    page = (await http.get("/")).text
    assert "/sw." not in page
    assert not [path for path in StaticClient(DEFAULT_STATIC).routes if path.startswith("/sw.") and path != "/sw.js"]


async def test_the_shell_is_what_the_page_loads_and_the_offline_page(http: httpx.AsyncClient) -> None:
    shell = shell_of((await http.get("/sw.js")).text)
    page = (await http.get("/")).text
    offline = shell["offline"]
    assert re.fullmatch(r"/offline\.[0-9a-f]{10}\.html", offline)
    assert set(shell["files"]) == loaded_by_page(page) | {offline}
    assert len(shell["files"]) == len(set(shell["files"]))
    for path in shell["files"]:
        assert not path.startswith(NETWORK_ONLY), path
        response = await http.get(path)
        assert response.status_code == 200, path
        assert response.headers["cache-control"] == IMMUTABLE, path
    assert re.fullmatch(r"[0-9a-f]{10}", shell["version"])


async def test_the_offline_page_stands_alone_in_both_languages(http: httpx.AsyncClient) -> None:
    offline = shell_of((await http.get("/sw.js")).text)["offline"]
    response = await http.get(offline)
    assert response.headers["content-type"] == "text/html; charset=utf-8"
    html = response.text
    assert html == (DEFAULT_STATIC / "offline.html").read_text()
    assert not re.findall(r'\b(?:src|href)="', html), "the offline page loads something: offline, it cannot"
    assert "@import" not in html
    assert "url(" not in html
    for words in ("cannot be reached", "kept on the server", "Try again", "nicht erreichbar", "Erneut versuchen"):
        assert words in html


def write(folder: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)


def test_the_version_changes_with_any_file_of_the_shell_and_with_the_worker(tmp_path: Path) -> None:
    """A deploy that changes a file changes the worker's bytes: browsers install it, with a new cache."""
    page = '<html><head><link rel="stylesheet" href="/a.css" /><script type="module" src="/m.js"></script></head>'
    write(tmp_path, {"index.html": page, "a.css": "a{}", "m.js": "", "other.txt": "x", "sw.js": "// w\n"})

    def version() -> str:
        worker = StaticClient(tmp_path).worker
        assert worker is not None
        return str(shell_of(worker.plain.body.decode())["version"])

    first = version()
    assert version() == first
    write(tmp_path, {"other.txt": "y"})  # not loaded by the page: not in the shell
    assert version() == first
    write(tmp_path, {"a.css": "b{}"})
    second = version()
    assert second != first
    write(tmp_path, {"sw.js": "// w, changed\n"})
    assert version() != second
    write(tmp_path, {"offline.html": "<p>offline</p>"})
    client = StaticClient(tmp_path)
    assert client.shell == sorted([client.hashed["/a.css"], client.hashed["/m.js"], client.hashed["/offline.html"]])


def png_pixels(data: bytes) -> tuple[int, int, list[bytes]]:
    """Width, height and rows of RGBA bytes of an 8-bit RGB or RGBA, non-interlaced PNG (what Chromium saves:
    RGB when every pixel is opaque)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    at, idat, header = 8, b"", b""
    while at < len(data):
        (length,) = struct.unpack(">I", data[at : at + 4])
        kind, body = data[at + 4 : at + 8], data[at + 8 : at + 8 + length]
        header = body if kind == b"IHDR" else header
        idat += body if kind == b"IDAT" else b""
        at += 12 + length
    width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", header)
    assert (depth, interlace) == (8, 0)
    assert colour in (2, 6)
    size = 4 if colour == 6 else 3
    raw, stride, rows = zlib.decompress(idat), width * size, []
    previous = bytearray(stride)
    for y in range(height):
        kind, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1 : (y + 1) * (stride + 1)])
        for x in range(stride):
            left = line[x - size] if x >= size else 0
            up, corner = previous[x], previous[x - size] if x >= size else 0
            if kind == 1:
                line[x] = (line[x] + left) & 255
            elif kind == 2:
                line[x] = (line[x] + up) & 255
            elif kind == 3:
                line[x] = (line[x] + (left + up) // 2) & 255
            elif kind == 4:
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                line[x] = (line[x] + (left if pa <= pb and pa <= pc else up if pb <= pc else corner)) & 255
        rows.append(bytes(line) if size == 4 else b"".join(line[x : x + 3] + b"\xff" for x in range(0, stride, 3)))
        previous = line
    return width, height, rows


async def test_the_manifest_has_maskable_icons_with_the_art_in_the_safe_zone(http: httpx.AsyncClient) -> None:
    page = (await http.get("/")).text
    found = re.search(r'<link rel="manifest" href="([^"]+)"', page)
    assert found is not None
    manifest = (await http.get(found.group(1))).json()
    maskable = [icon for icon in manifest["icons"] if "maskable" in icon.get("purpose", "any").split()]
    assert {icon["sizes"] for icon in maskable} >= {"512x512"}
    assert [icon for icon in manifest["icons"] if icon.get("purpose", "any") == "any"], "the any icons are kept"
    for icon in maskable:
        response = await http.get(icon["src"])
        assert response.status_code == 200
        assert response.headers["content-type"] == icon["type"] == "image/png"
        width, height, rows = png_pixels(response.content)
        assert f"{width}x{height}" == icon["sizes"]
        # Full bleed: every pixel outside the safe zone (the centred circle of 80% of the width) is the
        # opaque background, so any launcher's mask cuts nothing but background.
        background = rows[0][:4]
        assert background[3] == 255
        radius, centre = 0.4 * width, (width - 1) / 2
        outside = [
            (x, y)
            for y in range(height)
            for x in range(width)
            if (x - centre) ** 2 + (y - centre) ** 2 > radius**2 and rows[y][x * 4 : x * 4 + 4] != background
        ]
        assert not outside, f"{icon['src']}: art outside the safe zone at {outside[:5]}"
