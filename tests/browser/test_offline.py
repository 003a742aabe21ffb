"""The installed app's service worker in Chromium: it takes over the page, keeps the client's files, shows the
offline page (in the language the app would speak) for a room link while the server is down, lets the app load
again once it is back, and never stands between the page and the socket or the API."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from playwright.sync_api import Browser, Page, Response, expect

from tests.browser.test_loading import open_room
from tests.e2e.procs import free_port, server_process

TIMEOUT = 15_000  # ms: a shared 2-core machine

CACHED_URLS = """
async () => {
  const urls = [];
  for (const name of await caches.keys()) {
    const cache = await caches.open(name);
    for (const request of await cache.keys()) urls.push(new URL(request.url).pathname);
  }
  return urls;
}
"""

#: Whether the worker's one cache holds ``n`` files (the install has finished).
ONE_CACHE_HOLDING = """
async (n) => {
  const names = await caches.keys();
  return names.length === 1 && (await (await caches.open(names[0])).keys()).length === n;
}
"""


#: The offline page's first line in each language of the app.
UNREACHABLE = {
    "en": "The Crisp server cannot be reached right now.",
    "de": "Der Crisp-Server ist gerade nicht erreichbar.",
    "fr": "Le serveur de Crisp est injoignable pour le moment.",
    "es": "No se puede acceder al servidor de Crisp en este momento.",
    "it": "Il server di Crisp non è raggiungibile in questo momento.",
    "nl": "De Crisp-server is op dit moment niet bereikbaar.",
}
#: The browser's preferred languages, as the page will find them (``%`` a JSON list).
LANGUAGES_SCRIPT = "Object.defineProperty(navigator, 'languages', { configurable: true, get: () => %s })"
#: The browser's preferred languages, as the page will find them (``%`` a JSON list).
LANGUAGES_SCRIPT = "Object.defineProperty(navigator, 'languages', { configurable: true, get: () => %s })"
#: The languages of the offline page's sections on show.
SHOWN = "() => [...document.querySelectorAll('section[lang]')].filter((s) => !s.hidden).map((s) => s.lang)"


def shell_of(script: str) -> dict[str, Any]:
    """The ``const SHELL = {...};`` the server writes before the worker."""
    found = re.match(r"const SHELL = (\{.*?\});\n", script, re.S)
    assert found is not None
    shell: dict[str, Any] = json.loads(found.group(1))
    return shell


def controlled(page: Page) -> None:
    page.wait_for_function("navigator.serviceWorker.controller !== null", timeout=TIMEOUT)


def test_the_worker_keeps_the_shell_and_shows_the_offline_page(browser: Browser, tmp_path: Path, shots: Path) -> None:
    port = free_port()
    context = browser.new_context(viewport={"width": 360, "height": 640}, locale="en-US")
    page = context.new_page()
    api: list[Response] = []
    page.on("response", lambda r: api.append(r) if "/api/" in r.url else None)
    sockets: list[str] = []
    page.on("websocket", lambda ws: sockets.append(ws.url))
    with server_process(tmp_path, port=port) as (base, _proc):
        code = open_room(base)
        page.goto(f"{base}/r/{code}")
        page.get_by_text("Players (1/8): Ana").wait_for(timeout=TIMEOUT)
        controlled(page)  # the first visit installs the worker, which claims the page
        shell = shell_of(page.request.get(base + "/sw.js").text())
        page.wait_for_function(ONE_CACHE_HOLDING, arg=len(shell["files"]), timeout=TIMEOUT)  # installed
        assert sorted(page.evaluate(CACHED_URLS)) == shell["files"]

        # Controlled now: the room's details and the socket still go to the server, not to the worker.
        api.clear()
        page.reload()
        page.get_by_text("Players (1/8): Ana").wait_for(timeout=TIMEOUT)
        page.fill("#name", "Ben")
        page.click('[data-key="join"]')
        expect(page.locator(".lobby")).to_be_visible(timeout=TIMEOUT)
        expect(page.locator(".seats li")).to_have_count(2)
        assert [url for url in sockets if url.startswith(base.replace("http", "ws") + "/ws")], sockets
        page.wait_for_function("document.querySelector('img.qr')?.naturalWidth > 0", timeout=TIMEOUT)
        looked_up = [r for r in api if re.search(rf"/api/rooms/{code}(/|$)", r.url)]
        assert looked_up, [r.url for r in api]
        assert not [r.url for r in looked_up if r.from_service_worker], "the API answered from the worker"
        assert not [url for url in page.evaluate(CACHED_URLS) if url.startswith(("/api", "/ws"))]

    # The server is down. The shell's files come from the worker's cache; a room link gets the offline page.
    main_js = next(path for path in shell["files"] if re.fullmatch(r"/js/main\.[0-9a-f]{10}\.js", path))
    assert page.evaluate("url => fetch(url).then(r => r.status)", main_js) == 200
    page.goto(f"{base}/r/{code}")
    expect(page.get_by_role("heading", name="Crisp is offline")).to_be_visible()
    expect(page.get_by_text("The Crisp server cannot be reached right now.")).to_be_visible()
    expect(page.get_by_text("A game in progress is kept on the server")).to_be_visible()
    expect(page.get_by_text("Der Crisp-Server ist gerade nicht erreichbar.")).to_be_hidden()
    assert page.url == f"{base}/r/{code}"
    page.screenshot(path=str(shots / "offline-light.png"))
    page.emulate_media(color_scheme="dark")
    page.screenshot(path=str(shots / "offline-dark.png"))
    page.evaluate("localStorage.setItem('crisp.lang', 'de')")  # the player's language, as the app keeps it
    page.reload()
    expect(page.get_by_text("Der Crisp-Server ist gerade nicht erreichbar.")).to_be_visible()
    expect(page.get_by_text("The Crisp server cannot be reached right now.")).to_be_hidden()
    page.screenshot(path=str(shots / "offline-dark-de.png"))
    # Every language of the app: the player's choice ...
    for lang, line in UNREACHABLE.items():
        page.evaluate("lang => localStorage.setItem('crisp.lang', lang)", lang)
        page.reload()
        expect(page.get_by_text(line)).to_be_visible()
        assert page.evaluate(SHOWN) == [lang], lang
        assert page.evaluate("document.documentElement.lang") == lang
        page.screenshot(path=str(shots / f"offline-dark-{lang}.png"))
    # ... else the first of the browser's preferred languages the app speaks, the region ignored; else English.
    page.evaluate("localStorage.setItem('crisp.lang', 'xx')")  # no language of the app: as none chosen
    for preferred, lang in [(["pt-BR", "nl-BE", "fr-FR"], "nl"), (["es-MX"], "es"), (["pt-BR", "ja"], "en")]:
        page.add_init_script(LANGUAGES_SCRIPT % json.dumps(preferred))
        page.reload()
        assert page.evaluate(SHOWN) == [lang], preferred
        expect(page.get_by_text(UNREACHABLE[lang])).to_be_visible()
    page.evaluate("localStorage.setItem('crisp.lang', 'de')")
    page.reload()

    # Back again (the same port and data): "Try again" loads the app, and the room is still there.
    with server_process(tmp_path, port=port) as (again, _proc):
        assert again == base
        page.get_by_role("button", name="Erneut versuchen").click()
        expect(page.locator(".lobby, #join-code").first).to_be_visible(timeout=TIMEOUT)
        assert page.evaluate("navigator.serviceWorker.controller !== null")
    context.close()
