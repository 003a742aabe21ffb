"""Loading the page on a phone: nothing moves once shown (Lighthouse's CLS), and the browser really takes
every script and style sheet from its content-hashed path (the import map works), from this server only."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page

from crisp_server.remote.client import CrispClient
from tests.e2e.procs import server_process

#: Layout shifts summed over the load (PerformanceObserver, as Lighthouse counts them: none after input).
WATCH_SHIFTS = """
window.__shifts = [];
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) if (!entry.hadRecentInput) window.__shifts.push(entry.value);
}).observe({ type: "layout-shift", buffered: true });
// Each screen is drawn anew (new nodes are not "shifted"), so CLS misses a line that arrives late and pushes
// the form down: the link's Join button (on /, the name field) is followed on every frame instead.
window.__tops = [];
const follow = () => {
  const field = document.querySelector('[data-key="join"]') ?? document.getElementById("name");
  const top = field && Math.round(field.getBoundingClientRect().top + window.scrollY);
  if (field && window.__tops.at(-1) !== top) window.__tops.push(top);
  requestAnimationFrame(follow);
};
requestAnimationFrame(follow);
"""
HASHED = re.compile(r"/(js|css)/([\w-]+/)*[\w-]+\.[0-9a-f]{10}\.(js|css)$")


@pytest.fixture
def base(tmp_path: Path) -> Iterator[str]:
    with server_process(tmp_path) as (url, _proc):
        yield url


def open_room(base: str) -> str:
    """A room with Ana in it (in a thread: sync Playwright's loop runs in this one)."""

    async def create() -> str:
        async with CrispClient.connect(base.replace("http", "ws") + "/ws") as ana:
            return await ana.create("Ana")

    with ThreadPoolExecutor(1) as thread:
        return thread.submit(asyncio.run, create()).result()


def slow_phone(page: Page, latency_ms: int) -> None:
    """Every request takes ``latency_ms`` more, as on a phone's network: the room's details arrive late."""
    cdp = page.context.new_cdp_session(page)
    cdp.send("Network.enable")
    conditions = {"offline": False, "latency": latency_ms, "downloadThroughput": -1, "uploadThroughput": -1}
    cdp.send("Network.emulateNetworkConditions", conditions)


@pytest.mark.parametrize("path", ["/", "/r/{code}"])
def test_nothing_moves_while_the_page_loads(browser: Browser, base: str, path: str) -> None:
    code = open_room(base)
    context = browser.new_context(viewport={"width": 412, "height": 915}, locale="en-US")
    page = context.new_page()
    page.add_init_script(WATCH_SHIFTS)
    slow_phone(page, 300)
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    page.goto(base + path.format(code=code))
    if "{code}" in path:
        page.get_by_text("Players (1/8): Ana").wait_for()  # the room's details have arrived
    page.get_by_role("heading", name="Crisp").wait_for()
    page.wait_for_timeout(800)  # anything still to come (fonts, late renders) has come
    shifts: list[float] = page.evaluate("window.__shifts")
    tops: list[int] = page.evaluate("window.__tops")
    context.close()
    assert sum(shifts) < 0.01, f"layout shifts while loading {path}: {shifts}"
    assert len(tops) == 1, f"the room code's field moved while {path} loaded: top at {tops} px"
    assert all(url.startswith(base) for url in requests), [u for u in requests if not u.startswith(base)]
    scripts_and_styles = [url for url in requests if re.search(r"\.(js|css)$", url)]
    assert len(scripts_and_styles) >= 2
    unhashed = [url for url in scripts_and_styles if not HASHED.search(url)]
    assert not unhashed, f"fetched by their own paths, not their hashed ones: {unhashed}"
    assert len(set(scripts_and_styles)) == len(scripts_and_styles), "a file fetched twice"


def test_a_second_visit_takes_the_hashed_files_from_the_cache(browser: Browser, base: str) -> None:
    """The year-long Cache-Control at work: on a second visit only the page goes to the server."""
    context = browser.new_context(viewport={"width": 412, "height": 915})
    first = context.new_page()
    first.goto(base + "/")
    first.get_by_role("heading", name="Crisp").wait_for()
    first.close()
    page = context.new_page()
    cdp = context.new_cdp_session(page)
    cdp.send("Network.enable")
    urls: dict[str, str] = {}
    cached: set[str] = set()
    cdp.on("Network.requestWillBeSent", lambda event: urls.__setitem__(event["requestId"], event["request"]["url"]))

    def received(event: dict[str, Any]) -> None:
        response = event["response"]
        if response.get("fromDiskCache") or response.get("fromMemoryCache"):
            cached.add(event["requestId"])

    cdp.on("Network.responseReceived", received)
    page.goto(base + "/")
    page.get_by_role("heading", name="Crisp").wait_for()
    page.wait_for_timeout(300)
    context.close()
    hashed = {rid: url for rid, url in urls.items() if HASHED.search(url)}
    assert len(hashed) >= 2, urls
    assert set(hashed) <= cached, f"asked the server again: {[u for r, u in hashed.items() if r not in cached]}"
