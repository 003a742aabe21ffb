"""The web client's files, served from memory: compressed once, revalidated cheaply, cached for a year when
their name says which content they are.

There is no build step, so the server does a build's work when it starts. It reads every file under the
static folder and serves each one twice:

- under its own path (``/js/main.js``), revalidated on each use (``Cache-Control: no-cache`` with an ETag
  and Last-Modified, so that a browser that has it gets a 304 with no body);
- under a path that names its content (``/js/main.3f2a9c1b7e.js``, the first hex digits of its SHA-256),
  cached for a year as ``immutable``: new content gets a new name, so the old one never needs asking about.

``index.html`` (served at ``/``, ``/index.html``, ``/r/CODE`` and ``/g/GAME``) is the one entry point and is always
revalidated. It is rewritten to name the hashed paths, and given an import map from each ES module's own
path to its hashed one: the modules import each other with relative paths (``./cards.js``), which resolve
against the importing module's URL to ``/js/cards.js`` and are mapped from there, so a module's content
need not change when another one does. Each module is also named in a ``modulepreload`` link, so that the
browser fetches them all at once instead of one level of imports after the other; of the language catalogs
(``js/lang/``) only English's, which every page imports: the page imports the player's own when it starts.
A browser without import maps (before Safari 16.4) imports the modules by their own paths, which are served
too: the client works there, revalidating its modules instead of keeping them.

``sw.js`` (served at ``/sw.js``, so that its scope is the whole site, and always revalidated, so that a
deploy is found) is the service worker. It is served with its shell before it: ``const SHELL = {...};``,
the hashed paths the page loads (every file index.html names, every module of its import map) and the
offline page's, with a version drawn from their names and the worker's own bytes. The worker precaches
these and names its cache after the version, so the list is the asset table's and cannot drift, and a
deploy that changes a file changes the worker's bytes, which installs a new one with a new cache.

Text files are gzip-compressed once, at level 9, when that makes them at least a tenth smaller, and sent
compressed to a browser that asks for gzip (``Accept-Encoding``), with ``Vary: Accept-Encoding``. Brotli
was measured and left out: it makes the client's text 22.5 KB against gzip's 26.0 KB (84.7 KB raw), 3.5 KB
that do not pay for a compiled dependency.

Changes to the static folder are seen when the server starts again.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import mimetypes
import re
from dataclasses import dataclass
from email.utils import formatdate, parsedate_to_datetime
from pathlib import Path
from typing import Final

from starlette.datastructures import Headers
from starlette.responses import PlainTextResponse, Response
from starlette.types import Receive, Scope, Send

#: For the paths that name their content.
IMMUTABLE: Final = "public, max-age=31536000, immutable"
#: For the paths that do not: the browser keeps the file but asks (cheaply, with its ETag) before each use.
REVALIDATE: Final = "no-cache"
ENTRY: Final = "index.html"
#: The service worker: served at its own path only, rendered with the shell it precaches.
WORKER: Final = "sw.js"
#: The client's texts, one ES module per language: all in the import map and the shell (cached for offline
#: play), only English's preloaded (see ``entry_page``).
CATALOGS: Final = "/js/lang/"
#: The page the service worker shows for a navigation when the server cannot be reached.
OFFLINE: Final = "offline.html"
HASH_DIGITS: Final = 10
#: Compressed copies smaller than this share of the original are kept; others are not worth a Vary.
GZIP_WORTH: Final = 0.9
TEXT_TYPES: Final = frozenset(
    {"application/javascript", "application/json", "application/manifest+json", "image/svg+xml", "text/javascript"}
)
MEDIA_TYPES: Final = {".js": "text/javascript", ".mjs": "text/javascript", ".webmanifest": "application/manifest+json"}
#: ``src="/..."`` and ``href="/..."`` in index.html: the local files it names (a path from the site's root:
#: the page is also served at /r/CODE and /g/GAME, where a relative path would point elsewhere).
LOCAL_REFERENCE: Final = re.compile(r'\b(src|href)="(/[^"?#]*)"')


def media_type(path: str) -> str:
    suffix = Path(path).suffix.lower()
    kind = MEDIA_TYPES.get(suffix) or mimetypes.guess_type(path)[0] or "application/octet-stream"
    return f"{kind}; charset=utf-8" if kind.startswith("text/") or kind in TEXT_TYPES else kind


def _other_catalog(path: str) -> bool:
    """A language's catalog but English's: the page imports the one it needs when it starts."""
    return path.startswith(CATALOGS) and path != CATALOGS + "en.js"


def hashed_path(path: str, digest: str) -> str:
    """``/js/main.js`` -> ``/js/main.<digest>.js`` (the suffix stays last: it gives the media type)."""
    folder, _, name = path.rpartition("/")
    stem, dot, suffix = name.rpartition(".")
    return f"{folder}/{stem}.{digest}.{suffix}" if dot and stem else f"{folder}/{name}.{digest}"


@dataclass(frozen=True)
class Encoded:
    """One representation of a file: its bytes as sent and its ETag (which differs per content coding)."""

    body: bytes
    etag: str


@dataclass(frozen=True)
class Asset:
    media_type: str
    plain: Encoded
    gzipped: Encoded | None
    last_modified: str  # an HTTP date
    modified: float  # the same, as a timestamp (whole seconds)
    digest: str

    @classmethod
    def of(cls, path: str, body: bytes, modified: float) -> Asset:
        full = hashlib.sha256(body).hexdigest()
        kind = media_type(path)
        gzipped = None
        if kind.startswith("text/") or kind.split(";")[0] in TEXT_TYPES:
            packed = gzip.compress(body, compresslevel=9, mtime=0)
            if len(packed) <= len(body) * GZIP_WORTH:
                gzipped = Encoded(packed, f'"{full[:20]}-gzip"')
        whole = int(modified)
        return cls(kind, Encoded(body, f'"{full[:20]}"'), gzipped, formatdate(whole, usegmt=True), whole, full)

    def encoded_for(self, accept_encoding: str) -> Encoded:
        return self.gzipped if self.gzipped is not None and accepts_gzip(accept_encoding) else self.plain


def accepts_gzip(accept_encoding: str) -> bool:
    """Whether ``Accept-Encoding`` allows gzip: named (or ``*``) with a weight above zero (RFC 9110, 12.5.3)."""
    weights: dict[str, float] = {}
    for part in accept_encoding.lower().split(","):
        coding, _, params = part.partition(";")
        weight = 1.0
        for param in params.split(";"):
            key, _, value = param.strip().partition("=")
            if key == "q":
                try:
                    weight = float(value)
                except ValueError:
                    weight = 0.0
        weights[coding.strip()] = weight
    chosen = weights.get("gzip", weights.get("x-gzip", weights.get("*", 0.0)))
    return chosen > 0


def etag_matches(if_none_match: str, etag: str) -> bool:
    """Weak comparison (RFC 9110, 13.1.2): ``W/"x"`` matches ``"x"``; ``*`` matches any."""
    if if_none_match.strip() == "*":
        return True
    return any(tag.strip().removeprefix("W/") == etag for tag in if_none_match.split(","))


def not_modified_since(if_modified_since: str, modified: float) -> bool:
    try:
        since = parsedate_to_datetime(if_modified_since)
    except (TypeError, ValueError, IndexError):
        return False  # not a date: ignored, as RFC 9110 says
    return since.tzinfo is not None and modified <= since.timestamp()


class StaticClient:
    """The static folder as an ASGI app (GET only: HEAD comes in as GET through ``HeadAsGet``)."""

    def __init__(self, directory: Path) -> None:
        files = sorted(p for p in directory.rglob("*") if p.is_file() and not p.name.startswith("."))
        assets = {
            "/" + p.relative_to(directory).as_posix(): Asset.of(p.name, p.read_bytes(), p.stat().st_mtime)
            for p in files
        }
        #: Path -> (asset, whether the path names its content).
        self.routes: dict[str, tuple[Asset, bool]] = {}
        self.hashed: dict[str, str] = {}  # own path -> hashed path
        for path, asset in assets.items():
            if path in ("/" + ENTRY, "/" + WORKER):
                continue
            self.hashed[path] = hashed_path(path, asset.digest[:HASH_DIGITS])
            self.routes[path] = (asset, False)
        for path, hashed in self.hashed.items():
            if hashed in self.routes:  # a real file with a hash-like name: never hide it
                raise ValueError(f"the static file {hashed} has the name of {path}'s hashed copy")
            self.routes[hashed] = (assets[path], True)
        source = directory / ENTRY
        self.page: Asset | None = None
        #: The hashed paths the service worker precaches: what the page loads, and the offline page.
        self.shell: list[str] = []
        self.worker: Asset | None = None
        if source.is_file():
            # The page names every file: it changes when one does, or when one comes or goes (its folder's time).
            # So does the worker, whose shell names them too.
            newest = max(p.stat().st_mtime for p in [directory, *directory.rglob("*")])
            html = source.read_text(encoding="utf-8")
            self.page = Asset.of(ENTRY, self.entry_page(html).encode(), newest)
            self.routes["/"] = self.routes["/" + ENTRY] = (self.page, False)
            worker = directory / WORKER
            if worker.is_file():
                self.shell = self.shell_of(html)
                self.worker = Asset.of(WORKER, self.worker_script(worker.read_bytes()), newest)
                self.routes["/" + WORKER] = (self.worker, False)

    def entry_page(self, html: str) -> str:
        """index.html naming the hashed paths, with the import map and module preloads before its scripts."""

        def hashed(match: re.Match[str]) -> str:
            attribute, path = match.groups()
            return f'{attribute}="{self.hashed.get(path, path)}"'

        html = LOCAL_REFERENCE.sub(hashed, html)
        modules = {path: self.hashed[path] for path in self.hashed if path.endswith((".js", ".mjs"))}
        if not modules:
            return html
        imports = ",".join(f"\n      {json.dumps(path)}: {json.dumps(hashed)}" for path, hashed in modules.items())
        entries = set(re.findall(r'<script type="module" src="([^"]+)"', html))
        preloads = "".join(
            f'\n    <link rel="modulepreload" href="{url}" />'
            for path, url in modules.items()
            if url not in entries and not _other_catalog(path)
        )
        head = f'<script type="importmap">\n    {{ "imports": {{{imports}\n    }} }}\n    </script>{preloads}\n    '
        at = html.find("<script")
        at = at if at >= 0 else html.find("</head>")
        return html[:at] + head + html[at:] if at >= 0 else html

    def shell_of(self, html: str) -> list[str]:
        """The hashed paths of the files index.html names and of its modules (as ``entry_page`` writes them
        into the page), and the offline page's."""
        named = [path for _, path in LOCAL_REFERENCE.findall(html) if path in self.hashed]
        modules = [path for path in self.hashed if path.endswith((".js", ".mjs"))]
        offline = ["/" + OFFLINE] if "/" + OFFLINE in self.hashed else []
        return sorted({self.hashed[path] for path in [*named, *modules, *offline]})

    def worker_script(self, source: bytes) -> bytes:
        """The worker with its shell before it. The version changes with any file of the shell (each one's
        name holds its hash) and with the worker itself."""
        files = json.dumps(self.shell)
        version = hashlib.sha256(files.encode() + hashlib.sha256(source).digest()).hexdigest()[:HASH_DIGITS]
        offline = self.hashed.get("/" + OFFLINE)
        shell = json.dumps({"version": version, "files": self.shell, "offline": offline}, indent=2)
        return f"const SHELL = {shell};\n\n".encode() + source

    def response(self, asset: Asset, headers: Headers, immutable: bool) -> Response:
        """200 with the representation the browser accepts, or 304 if it holds that one already."""
        chosen = asset.encoded_for(headers.get("accept-encoding", ""))
        out = {
            "Cache-Control": IMMUTABLE if immutable else REVALIDATE,
            "ETag": chosen.etag,
            "Last-Modified": asset.last_modified,
        }
        if asset.gzipped is not None:
            out["Vary"] = "Accept-Encoding"
        if_none_match = headers.get("if-none-match")
        if if_none_match is not None:
            fresh = etag_matches(if_none_match, chosen.etag)
        else:  # If-Modified-Since counts only without If-None-Match (RFC 9110, 13.1.3)
            fresh = not_modified_since(headers.get("if-modified-since", ""), asset.modified)
        if fresh:
            return Response(status_code=304, headers=out)
        if chosen is asset.gzipped:
            out["Content-Encoding"] = "gzip"
        return Response(chosen.body, media_type=asset.media_type, headers=out)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path, root = scope["path"], scope.get("root_path", "")
        found = self.routes.get(path[len(root) :] if root and path.startswith(root) else path)
        response: Response
        if scope["method"] != "GET":
            response = PlainTextResponse("Method Not Allowed", 405, headers={"Allow": "GET, HEAD"})
        elif found is None:
            response = PlainTextResponse("Not Found", 404)
        else:
            response = self.response(found[0], Headers(scope=scope), found[1])
        await response(scope, receive, send)
