"""The web client's files: gzip when asked, revalidation with 304, a year of caching on hashed paths, and an
index.html whose every reference and module import lands on a hashed path that the server serves."""

from __future__ import annotations

import gzip
import json
import re
from collections.abc import AsyncIterator
from email.utils import formatdate
from pathlib import Path

import httpx
import pytest

from crisp_server.settings import Settings
from crisp_server.web.app import create_app
from crisp_server.web.assets import IMMUTABLE, StaticClient
from crisp_server.web.services import DEFAULT_STATIC

Headers = dict[str, str]
GZIP = {"Accept-Encoding": "gzip"}
IDENTITY = {"Accept-Encoding": "identity"}


def client_for(static: Path) -> httpx.AsyncClient:
    app = create_app(Settings(static_dir=static), persist=False)
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://localhost")


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    async with client_for(DEFAULT_STATIC) as client:
        yield client


async def raw(http: httpx.AsyncClient, method: str, path: str, headers: Headers) -> tuple[httpx.Response, bytes]:
    """The response and its body as sent (httpx would undo the gzip)."""
    async with http.stream(method, path, headers=headers) as response:
        body = b"".join([chunk async for chunk in response.aiter_raw()])
    return response, body


def local_references(page: str) -> list[str]:
    return re.findall(r'\b(?:src|href)="(/[^"]*)"', page)


def import_map(page: str) -> dict[str, str]:
    found = re.search(r'<script type="importmap">(.*?)</script>', page, re.S)
    assert found is not None, "index.html has no import map"
    imports: dict[str, str] = json.loads(found.group(1))["imports"]
    return imports


async def test_gzip_is_sent_when_asked_with_its_own_length() -> None:
    async with client_for(DEFAULT_STATIC) as http:
        source = (DEFAULT_STATIC / "js/main.js").read_bytes()
        response, body = await raw(http, "GET", "/js/main.js", GZIP)
        assert response.headers["content-encoding"] == "gzip"
        assert response.headers["vary"] == "Accept-Encoding"
        assert int(response.headers["content-length"]) == len(body) < len(source) / 2
        assert gzip.decompress(body) == source


@pytest.mark.parametrize("accept", [None, "identity", "gzip;q=0", "br", "deflate, gzip;q=0.0"])
async def test_no_gzip_unless_asked(http: httpx.AsyncClient, accept: str | None) -> None:
    source = (DEFAULT_STATIC / "css/app.css").read_bytes()
    response, body = await raw(http, "GET", "/css/app.css", {"Accept-Encoding": accept or ""})
    assert "content-encoding" not in response.headers
    assert response.headers["vary"] == "Accept-Encoding"  # a cache must not hand this to a gzip client
    assert body == source
    assert int(response.headers["content-length"]) == len(source)


@pytest.mark.parametrize("accept", ["gzip, deflate, br, zstd", "*", "br;q=1, gzip;q=0.5"])
async def test_gzip_for_every_way_of_asking(http: httpx.AsyncClient, accept: str) -> None:
    response, _ = await raw(http, "GET", "/", {"Accept-Encoding": accept})
    assert response.headers.get("content-encoding") == "gzip"


async def test_images_are_not_compressed_again(http: httpx.AsyncClient) -> None:
    response, body = await raw(http, "GET", "/icons/icon-512.png", GZIP)
    assert "content-encoding" not in response.headers
    assert "vary" not in response.headers
    assert body == (DEFAULT_STATIC / "icons/icon-512.png").read_bytes()


@pytest.mark.parametrize("path", ["/", "/js/i18n.js", "/r/ABCDEF", "/g/abc123", "/icons/icon-192.png"])
@pytest.mark.parametrize("headers", [GZIP, IDENTITY])
async def test_a_browser_that_has_the_file_gets_304(
    http: httpx.AsyncClient, path: str, headers: dict[str, str]
) -> None:
    first = await http.get(path, headers=headers)
    etag, modified = first.headers["etag"], first.headers["last-modified"]
    again = await http.get(path, headers={**headers, "If-None-Match": etag})
    assert again.status_code == 304
    assert again.content == b""
    assert again.headers["etag"] == etag
    assert again.headers["cache-control"] == first.headers["cache-control"]
    assert again.headers.get("vary") == first.headers.get("vary")
    weak = await http.get(path, headers={**headers, "If-None-Match": f'"other", W/{etag}'})
    assert weak.status_code == 304
    since = await http.get(path, headers={**headers, "If-Modified-Since": modified})
    assert since.status_code == 304
    # Changed (another ETag, an older date): the whole file again.
    assert (await http.get(path, headers={**headers, "If-None-Match": '"other"'})).status_code == 200
    older = formatdate(0, usegmt=True)
    assert (await http.get(path, headers={**headers, "If-Modified-Since": older})).status_code == 200
    # If-None-Match wins over If-Modified-Since (RFC 9110, 13.1.3).
    both = {**headers, "If-None-Match": '"other"', "If-Modified-Since": modified}
    assert (await http.get(path, headers=both)).status_code == 200


async def test_the_gzip_and_the_plain_file_have_different_etags(http: httpx.AsyncClient) -> None:
    """A cache that holds one must not be told by a 304 that it holds the other."""
    packed = await http.get("/js/main.js", headers=GZIP)
    plain = await http.get("/js/main.js", headers=IDENTITY)
    assert packed.headers["etag"] != plain.headers["etag"]
    assert (
        await http.get("/js/main.js", headers={**IDENTITY, "If-None-Match": packed.headers["etag"]})
    ).status_code == 200


async def test_the_page_is_revalidated_and_the_hashed_files_kept_a_year(http: httpx.AsyncClient) -> None:
    page = (await http.get("/")).text
    for path in ["/", "/index.html", "/r/ABCDEF", "/g/abc123", "/js/main.js", "/css/app.css", "/manifest.webmanifest"]:
        assert (await http.get(path)).headers["cache-control"] == "no-cache", path
    references = local_references(page)
    assert references
    for path in references:
        response = await http.get(path)
        assert response.status_code == 200, path
        assert response.headers["cache-control"] == IMMUTABLE, path


async def test_the_page_names_only_hashed_paths_of_the_files_it_uses(http: httpx.AsyncClient) -> None:
    page = (await http.get("/r/ABCDEF")).text
    assert page == (await http.get("/")).text
    named = {re.sub(r"\.[0-9a-f]{10}(?=\.)", "", path): path for path in local_references(page)}
    source = (DEFAULT_STATIC / "index.html").read_text()
    # Every file the source page names is there, under its hashed path, with the file's bytes.
    for path in local_references(source):
        assert path in named, f"index.html's {path} is not rewritten"
        assert named[path] != path
        assert (await http.get(named[path])).content == (DEFAULT_STATIC / path.lstrip("/")).read_bytes()


async def test_the_import_map_covers_every_module_and_every_import(http: httpx.AsyncClient) -> None:
    page = (await http.get("/")).text
    imports = import_map(page)
    modules = {"/" + p.relative_to(DEFAULT_STATIC).as_posix() for p in DEFAULT_STATIC.rglob("*.js")}
    assert set(imports) == modules - {"/sw.js"}  # the service worker is no module of the page
    preloaded = set(re.findall(r'<link rel="modulepreload" href="([^"]+)"', page))
    entry = set(re.findall(r'<script type="module" src="([^"]+)"', page))
    # Every module is preloaded but the language catalogs other than English's (the page imports its own).
    catalogs = {imports[path] for path in imports if path.startswith("/js/lang/") and path != "/js/lang/en.js"}
    assert catalogs, "no language catalogs"
    assert preloaded | entry == set(imports.values()) - catalogs
    for own, hashed in imports.items():
        response = await http.get(hashed)
        assert response.headers["cache-control"] == IMMUTABLE
        assert response.content == (DEFAULT_STATIC / own.lstrip("/")).read_bytes()
        # Each relative import, resolved against the module's own folder, is in the map.
        folder = own.rsplit("/", 1)[0]
        for target in re.findall(r'(?:from|import)\s*\(?\s*"(\.{1,2}/[^"]+)"', response.text):
            resolved = str(Path(folder, target).resolve().relative_to(Path("/").resolve()))
            assert "/" + resolved in imports, f"{own} imports {target}, which the import map misses"


async def test_the_manifest_and_its_icons_are_served(http: httpx.AsyncClient) -> None:
    page = (await http.get("/")).text
    found = re.search(r'<link rel="manifest" href="([^"]+)"', page)
    assert found is not None
    manifest = await http.get(found.group(1))
    assert manifest.headers["content-type"].startswith("application/manifest+json")
    icons = [icon["src"] for icon in manifest.json()["icons"]]
    assert icons
    for src in icons:
        icon = await http.get(src)
        assert icon.status_code == 200, src
        assert icon.headers["content-type"].startswith("image/"), src


async def test_head_on_hashed_and_compressed_files(http: httpx.AsyncClient) -> None:
    page = (await http.get("/")).text
    paths = [*local_references(page), *import_map(page).values(), "/", "/r/ABCDEF", "/g/abc123", "/js/net.js"]
    for path in paths:
        for headers in (GZIP, IDENTITY):
            got, got_body = await raw(http, "GET", path, headers)
            head, head_body = await raw(http, "HEAD", path, headers)
            assert head.status_code == got.status_code == 200, path
            assert head_body == b"", path
            assert int(got.headers["content-length"]) == len(got_body), path
            for name in ("content-length", "content-type", "content-encoding", "etag", "cache-control", "vary"):
                assert head.headers.get(name) == got.headers.get(name), (path, name)


async def test_unknown_paths_and_methods(http: httpx.AsyncClient) -> None:
    assert (await http.get("/js/nothing.js")).status_code == 404
    assert (await http.get("/js/main.0000000000.js")).status_code == 404
    assert (await http.get("/../pyproject.toml")).status_code == 404
    refused = await http.post("/js/main.js")
    assert refused.status_code == 405
    assert refused.headers["allow"] == "GET, HEAD"


def write(folder: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)


def test_a_changed_module_changes_its_own_path_only(tmp_path: Path) -> None:
    """The import map is what lets a module keep its name when a module it imports changes."""
    page = '<html><head><script type="module" src="/js/main.js"></script></head><body></body></html>'
    write(
        tmp_path, {"index.html": page, "js/main.js": 'import { x } from "./x.js";\n', "js/x.js": "export const x = 1;"}
    )
    before = StaticClient(tmp_path).hashed
    write(tmp_path, {"js/x.js": "export const x = 2;"})
    after = StaticClient(tmp_path).hashed
    assert after["/js/main.js"] == before["/js/main.js"]
    assert after["/js/x.js"] != before["/js/x.js"]
    rewritten = StaticClient(tmp_path).page
    assert rewritten is not None
    assert import_map(rewritten.plain.body.decode())["/js/x.js"] == after["/js/x.js"]


def test_a_file_named_like_a_hashed_copy_is_refused(tmp_path: Path) -> None:
    write(tmp_path, {"index.html": "<html></html>", "a.txt": "a"})
    hashed = StaticClient(tmp_path).hashed["/a.txt"]
    write(tmp_path, {hashed.lstrip("/"): "b"})
    with pytest.raises(ValueError, match="hashed copy"):
        StaticClient(tmp_path)


def _without_comments_and_strings(css: str) -> str:
    css = re.sub(r"/\*.*?\*/", "", css, flags=re.S)
    return re.sub(r'"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])*\'', '""', css)


@pytest.mark.parametrize("name", sorted(p.name for p in (DEFAULT_STATIC / "css").glob("*.css")))
def test_every_rule_of_the_style_sheets_is_closed(name: str) -> None:
    """A rule left open swallows every rule after it (they then apply nowhere), and no browser complains."""
    depth = 0
    for number, line in enumerate(
        _without_comments_and_strings((DEFAULT_STATIC / "css" / name).read_text()).splitlines(), 1
    ):
        for char in line:
            depth += {"{": 1, "}": -1}.get(char, 0)
            assert depth >= 0, f"{name}:{number}: a }} closes nothing"
    assert depth == 0, f"{name}: {depth} rule(s) left open"


def test_the_style_sheet_check_finds_a_rule_left_open() -> None:
    css = _without_comments_and_strings('/* { */ .a { content: "}"; }\n.b {\n  color: red;\n\n.c { color: blue; }')
    assert css.count("{") - css.count("}") == 1
